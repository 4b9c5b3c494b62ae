"""Lessons in today's loop, without changing it: a reflection service that adds them.

:class:`LessonAwareService` wraps any :class:`~reflexkit.reflection.protocols.ReflectionService`.
It passes every call through, and

* after the reflections section of a retry prompt, adds the labelled section of lessons from
  *other* subtasks that failed the same way (:func:`~reflexkit.insights.lessons.format_lessons`),
  within what is left of the prompt budget;
* given the run's events (pass :meth:`LessonAwareService.on_event` on to the loop's
  ``on_event``), learns the lesson of every reflection a passing attempt had in its prompt.

A loop that calls the lessons itself (docs/insights.md, "Where the loop calls each part")
does not need it. Nothing here raises into the loop: an error is logged and the prompt goes
out without lessons.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

from reflexkit.insights.lessons import LessonBook, format_lessons, tool_of
from reflexkit.models import FailureContext, Reflection
from reflexkit.reflection.protocols import ReflectionService

__all__ = ["LessonAwareService"]

log = logging.getLogger("reflexkit.insights")

_KEEP = 10_000
"""The most failures and reflections remembered; a long-running loop forgets the oldest."""


class LessonAwareService:
    """A :class:`ReflectionService` whose retry prompts carry lessons from other subtasks.

    Args:
        service: The service to wrap (``app.reflection.service()``).
        lessons: Where lessons are looked up and learnt (``app.insights.lessons()``).
        max_lessons: The most lessons in one prompt (``insights.maxLessons``).
        max_prompt_chars: The budget of the reflections and the lessons together
            (``reflexion.maxPromptChars``).
    """

    def __init__(
        self,
        service: ReflectionService,
        *,
        lessons: LessonBook,
        max_lessons: int = 2,
        max_prompt_chars: int = 4_000,
    ) -> None:
        self.service = service
        self.lessons = lessons
        self.max_lessons = max_lessons
        self.max_prompt_chars = max_prompt_chars
        self._lock = threading.Lock()
        self._local = threading.local()
        self._failures: dict[str, FailureContext] = {}
        self._commands: dict[tuple[str, str, int], str] = {}
        self._reflections: dict[str, Reflection] = {}

    # --- the service, passed through ---------------------------------------------------------

    def generate(self, failure: FailureContext, /) -> Reflection:
        """Reflect on *failure* (and remember it for the lesson lookup of its next prompt)."""
        with self._lock:
            self._failures[failure.subtask_id] = failure
            self._commands[failure.session_id, failure.subtask_id, failure.attempt_number] = (
                failure.command
            )
            _trim(self._commands)
        reflection = self.service.generate(failure)
        self._remember([reflection])
        return reflection

    def save(self, reflection: Reflection, /) -> bool:
        """Append *reflection* to memory."""
        return self.service.save(reflection)

    def get_recent(
        self, subtask_id: str, *, limit: int | None = None, task_id: str | None = None
    ) -> list[Reflection]:
        """Return a subtask's recent reflections; the next prompt section is for this subtask."""
        self._local.subtask_id = subtask_id
        recent = self.service.get_recent(subtask_id, limit=limit, task_id=task_id)
        self._remember(recent)
        return recent

    def format_for_prompt(self, reflections: Sequence[Reflection], /) -> str:
        """The reflections section, then the lessons from other subtasks, within the budget."""
        section = self.service.format_for_prompt(reflections)
        try:
            extra = self._lessons_section(reflections, len(section))
        except Exception:
            log.exception("looking up lessons failed; the prompt goes without them")
            extra = ""
        if not extra:
            return section
        return f"{section}\n\n{extra}" if section.strip() else extra

    def prune(self, *, older_than: datetime | None = None) -> int:
        """Remove old reflections."""
        return self.service.prune(older_than=older_than)

    # --- lessons -------------------------------------------------------------------------------

    def on_event(self, event: object) -> None:
        """Learn from a ``passed`` event's ``ledToSuccess`` reflections (give it every event).

        Any object with ``kind`` and ``data`` attributes will do (the orchestrator's
        ``Event``); other kinds are ignored. Never raises.
        """
        try:
            if str(getattr(event, "kind", "")) != "passed":
                return
            data = getattr(event, "data", None)
            ids = data.get("ledToSuccess") if isinstance(data, dict) else None
            if not isinstance(ids, str):
                return
            for reflection_id in filter(None, ids.split(",")):
                with self._lock:
                    reflection = self._reflections.get(reflection_id)
                if reflection is None:
                    continue
                command = self._commands.get(
                    (reflection.session_id, reflection.subtask_id, reflection.attempt_number), ""
                )
                self.lessons.learn(reflection, tool=tool_of(command))
        except Exception:
            log.exception("learning a lesson failed; going on")

    def _remember(self, reflections: Sequence[Reflection]) -> None:
        with self._lock:
            for reflection in reflections:
                self._reflections[reflection.id] = reflection
            _trim(self._reflections)

    def _lessons_section(self, reflections: Sequence[Reflection], used: int) -> str:
        if self.max_lessons < 1:
            return ""
        subtask_id = reflections[-1].subtask_id if reflections else None
        subtask_id = subtask_id or getattr(self._local, "subtask_id", None)
        with self._lock:
            failure = self._failures.get(subtask_id) if subtask_id else None
        if failure is None:
            return ""
        latest = [r for r in reflections if r.subtask_id == failure.subtask_id]
        found = self.lessons.lessons_for(
            failure,
            fingerprint=latest[-1].fingerprint if latest else "",
            limit=self.max_lessons,
        )
        budget = self.max_prompt_chars - used - 2
        return format_lessons(found, max_chars=budget) if found else ""


K = TypeVar("K")
V = TypeVar("V")


def _trim(table: dict[K, V]) -> None:
    """Forget the oldest entries beyond :data:`_KEEP` (dicts keep insertion order)."""
    while len(table) > _KEEP:
        del table[next(iter(table))]
