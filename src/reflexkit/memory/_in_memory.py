"""A store that lives in the process: the same behaviour as the JSONL store, for tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from reflexkit.memory._protocols import MemoryStats
from reflexkit.models import Reflection
from reflexkit.redaction._gate import stored

__all__ = ["InMemoryMemory"]


class InMemoryMemory:
    """Episodic memory in a list, safe to share between threads; gone with the process.

    Args:
        records: Reflections to start with, in append order.
    """

    def __init__(
        self, records: Iterator[Reflection] | list[Reflection] | tuple[Reflection, ...] = ()
    ) -> None:
        self._lock = threading.Lock()
        self._records: list[Reflection] = []
        self._by_subtask: dict[str, list[Reflection]] = {}
        self._by_pair: dict[tuple[str, str], list[Reflection]] = {}
        for record in records:
            self.append(record)

    def __repr__(self) -> str:
        return f"InMemoryMemory(<{len(self._records)} records>)"

    def __len__(self) -> int:
        return len(self._records)

    def append(self, reflection: Reflection, /) -> None:
        """Store one reflection (through the outbound gate)."""
        reflection = stored(reflection)
        with self._lock:
            self._records.append(reflection)
            self._index(reflection)

    def append_once(self, reflection: Reflection, /) -> bool:
        """Append *reflection* unless one with its id is stored; ``True`` when appended."""
        reflection = stored(reflection)
        with self._lock:
            pair = self._by_pair.get((reflection.task_id, reflection.subtask_id), ())
            if any(r.id == reflection.id for r in pair):
                return False
            self._records.append(reflection)
            self._index(reflection)
        return True

    def _index(self, r: Reflection) -> None:
        self._by_subtask.setdefault(r.subtask_id, []).append(r)
        self._by_pair.setdefault((r.task_id, r.subtask_id), []).append(r)

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        """Return the *limit* most recently appended reflections of a subtask, oldest first.

        Raises:
            ValueError: *limit* is below 1.
        """
        if limit < 1:
            msg = f"limit must be >= 1, got {limit}"
            raise ValueError(msg)
        with self._lock:
            if task_id is None:
                return self._by_subtask.get(subtask_id, [])[-limit:]
            return self._by_pair.get((task_id, subtask_id), [])[-limit:]

    def prune(self, *, older_than: datetime) -> int:
        """Remove the reflections created before *older_than*; return how many went."""
        if older_than.tzinfo is None:
            msg = "older_than must be timezone-aware"
            raise ValueError(msg)
        with self._lock:
            kept = [r for r in self._records if r.created_at >= older_than]
            removed = len(self._records) - len(kept)
            self._records = kept
            self._by_subtask = {}
            self._by_pair = {}
            for r in kept:
                self._index(r)
        return removed

    def stats(self) -> MemoryStats:
        """Count the records, subtasks, categories, failure types and sources."""
        with self._lock:
            records = list(self._records)
        return MemoryStats(
            records=len(records),
            subtasks=len({r.subtask_id for r in records}),
            by_category=dict(Counter(r.category.value for r in records)),
            by_failure_type=dict(Counter(r.failure_type.value for r in records)),
            by_source=dict(Counter(r.source.value for r in records)),
        )

    def __iter__(self) -> Iterator[Reflection]:
        """Yield every record in append order (a snapshot: appends meanwhile aren't seen)."""
        with self._lock:
            records = list(self._records)
        return iter(records)
