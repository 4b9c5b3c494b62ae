"""What a run of the retry loop returns, and the order its subtasks run in.

Value types (frozen attrs) and pure functions: :class:`RunSummary` of :class:`SubtaskOutcome`
values, the first attempt's prompt (:func:`build_prompt`) and the sequential run's order
(:func:`run_order`). The loop and the ``run`` command import them from here.
"""

from __future__ import annotations

from typing import Literal

import attrs

from reflexkit._text import strip_control
from reflexkit.tasks._task import Subtask, Task

__all__ = ["Outcome", "RunSummary", "SubtaskOutcome", "build_prompt", "ordered", "run_order"]

Outcome = Literal[
    "passed",
    "exhausted",
    "stuck",
    "budget",
    "skipped",
    "setup_error",
    "interrupted",
    "needs_input",
    "paused",
]
"""How a subtask ended."""


@attrs.frozen(kw_only=True)
class SubtaskOutcome:
    """How one subtask ended.

    Attributes:
        subtask_id: The subtask.
        outcome: ``passed``; ``exhausted`` (attempts ran out); ``stuck`` (the same failure
            ``stuckAfter`` times in a row); ``budget`` (the run's time budget ran out);
            ``skipped`` (a dependency did not pass, or an earlier setup error stopped the
            run); ``setup_error`` (the run can't work as set up: see ``reason``);
            ``interrupted`` (a signal stopped the run); ``needs_input`` (the agent ended on a
            question to the user and no check passed: a retry would only ask again);
            ``paused`` (the insight rules paused it: no attempt).
        attempts: How many attempts were made (0 for one that ended before any).
        duration_ms: Wall-clock time of all its attempts.
        reflections_used: How many distinct reflections its retry prompts carried.
        reason: One line on why it did not pass (``None`` when it passed).
    """

    subtask_id: str
    outcome: Outcome
    attempts: int = 0
    duration_ms: int = 0
    reflections_used: int = 0
    reason: str | None = None


@attrs.frozen(kw_only=True)
class RunSummary:
    """The result of a run.

    Attributes:
        run_id: Unique per run; the ``sessionId`` of its failures and reflections.
        task_id: The task.
        outcomes: One per subtask, in the order they were run (or skipped).
        duration_ms: Wall-clock time of the whole run.
    """

    run_id: str
    task_id: str
    outcomes: tuple[SubtaskOutcome, ...]
    duration_ms: int

    @property
    def passed(self) -> bool:
        """Every subtask passed."""
        return all(o.outcome == "passed" for o in self.outcomes)

    @property
    def setup_error(self) -> str | None:
        """Why the run can't work as set up, when a subtask ended so; else ``None``."""
        for outcome in self.outcomes:
            if outcome.outcome == "setup_error":
                return outcome.reason
        return None

    def outcome(self, subtask_id: str) -> SubtaskOutcome:
        """Return the outcome of one subtask.

        Raises:
            KeyError: The run has no such subtask.
        """
        for outcome in self.outcomes:
            if outcome.subtask_id == subtask_id:
                return outcome
        raise KeyError(subtask_id)


def build_prompt(task: Task, subtask: Subtask) -> str:
    """Return the prompt of a subtask's first attempt: the task's goal, then the subtask.

    The descriptions are stripped of control sequences, and characters that reorder or hide
    text are shown (:func:`~reflexkit._text.strip_control`): a task file from elsewhere can't
    hide instructions from the person who reads it.
    """
    description = strip_control(subtask.description)
    if not task.description.strip():
        return description
    return (
        f"# Task: {task.id}\n{strip_control(task.description).strip()}\n\n"
        f"# Subtask: {subtask.id}\n{description.strip()}"
    )


def ordered(task: Task) -> list[Subtask]:
    """The subtasks in dependency order, file order among those that are ready."""
    done: set[str] = set()
    pending = list(task.subtasks)
    ordered: list[Subtask] = []
    while pending:
        ready = [s for s in pending if all(d in done for d in s.depends_on)]
        if not ready:  # a cycle (load_task rejects them): keep file order for the rest
            ordered += pending
            break
        subtask = ready[0]
        ordered.append(subtask)
        done.add(subtask.id)
        pending.remove(subtask)
    return ordered


def run_order(task: Task) -> tuple[str, ...]:
    """The subtask ids in the order a sequential run takes them (for :class:`StagedEvents`)."""
    return tuple(s.id for s in ordered(task))
