"""The ports of the reflection subsystem: generators and the service around them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from reflexkit.models import FailureContext, Reflection

__all__ = ["ReflectionGenerator", "ReflectionService"]


@runtime_checkable
class ReflectionGenerator(Protocol):
    """**Protocol**: turns one failure into one reflection."""

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Write a reflection on *failure*.

        Args:
            failure: The (already redacted) failure; ``failure_type`` may be ``None``, in
                which case the generator classifies it.
            previous: Earlier reflections of the same subtask, oldest first, so the new one
                does not repeat them.

        Raises:
            GenerationError: The generator could not write one (the service falls back).
        """
        ...


@runtime_checkable
class ReflectionService(Protocol):
    """**Protocol**: what an orchestrator asks of reflexkit. It never raises into its caller."""

    def generate(self, failure: FailureContext, /) -> Reflection:
        """Redact, classify and reflect on *failure*, falling back to the heuristic on errors."""
        ...

    def save(self, reflection: Reflection, /) -> bool:
        """Append *reflection* to memory; return ``False`` (and log why) when it could not."""
        ...

    def get_recent(
        self,
        subtask_id: str,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[Reflection]:
        """Return the most recent reflections of a subtask, oldest first; ``[]`` on errors.

        A retry passes its *task_id* and its run's *session_id*: subtask ids repeat across
        tasks, and other runs' attempts are not this run's.
        """
        ...

    def format_for_prompt(self, reflections: Sequence[Reflection], /) -> str:
        """Render the "## Learning from Previous Failures" section; ``""`` when empty."""
        ...

    def prune(self, *, older_than: datetime | None = None) -> int:
        """Remove old reflections (``retentionDays`` by default); return how many went."""
        ...
