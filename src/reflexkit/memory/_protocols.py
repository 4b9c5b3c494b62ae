"""The port every episodic-memory backend fits: an append-only store of reflections."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from reflexkit.models import Reflection

__all__ = ["ONCE_WINDOW", "EpisodicMemory", "IdempotentMemory", "MemoryStats"]


@attrs.frozen(kw_only=True)
class MemoryStats:
    """What a store holds.

    Attributes:
        records: Valid records.
        subtasks: Distinct subtask ids among them.
        by_category: Record count per reflection category (by value).
        by_failure_type: Record count per failure type (by value).
        by_source: Record count per source (llm, heuristic, fixture).
        corrupt: Stored records that could not be read and were skipped.
        size_bytes: Size of the store on disk, when it has one.
    """

    records: int
    subtasks: int
    by_category: dict[str, int] = attrs.field(factory=dict)
    by_failure_type: dict[str, int] = attrs.field(factory=dict)
    by_source: dict[str, int] = attrs.field(factory=dict)
    corrupt: int = 0
    size_bytes: int | None = None


@runtime_checkable
class EpisodicMemory(Protocol):
    """**Protocol**: an append-only store of reflections, shared by the attempts of a project."""

    def append(self, reflection: Reflection, /) -> None:
        """Store one reflection; when this returns, every reader sees it.

        Raises:
            StoreError: The store can't be written.
        """
        ...

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        """Return the *limit* most recently appended reflections of a subtask, oldest first.

        Args:
            subtask_id: The subtask.
            limit: The most to return (at least 1).
            task_id: When given, only reflections of this task: subtask ids are unique within
                a task, not across tasks, so a retry asks for ``(task_id, subtask_id)``.

        Raises:
            StoreError: The store can't be read.
        """
        ...

    def prune(self, *, older_than: datetime) -> int:
        """Remove the reflections created before *older_than*; return how many went.

        Raises:
            StoreError: The store can't be rewritten.
        """
        ...

    def stats(self) -> MemoryStats:
        """Count what the store holds."""
        ...

    def __iter__(self) -> Iterator[Reflection]:
        """Yield every valid reflection in append order."""
        ...


ONCE_WINDOW = 64
"""How many of a subtask's most recent records ``append_once`` looks through for the id."""


@runtime_checkable
class IdempotentMemory(Protocol):
    """**Protocol**: a store that can append a record only when its id is not stored yet.

    Optional beside :class:`EpisodicMemory`: the reflection service uses it when the store
    has it (every shipped backend does), and checks :meth:`EpisodicMemory.recent` itself
    otherwise.
    """

    def append_once(self, reflection: Reflection, /) -> bool:
        """Append *reflection* unless one with its id is stored (with other processes too).

        Returns:
            ``True`` when appended, ``False`` when it was there already.

        Raises:
            StoreError: The store can't be read or written.
        """
        ...
