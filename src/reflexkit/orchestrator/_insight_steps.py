"""What the retry loop asks the insights subsystem, and when (docs/insights.md, #17).

:class:`LoopInsights` bundles the rule tier, the lessons and the analysis with what one run
remembers between calls; every method is guarded (an error is logged, the loop goes on as if
insights were off). Each attempt's own file changes are measured here too (:func:`snapshot`,
:func:`changed_files`), since ``git status`` is cumulative.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from reflexkit.events import Event, EventKind
from reflexkit.exceptions import StoreError
from reflexkit.insights._analysis import AnalysisCycle, AnalysisOutcome
from reflexkit.insights._events import InsightEvent, analysis_data, finding_event, insight_events
from reflexkit.insights._history import AttemptRecord
from reflexkit.insights._jsonl import SayOnce
from reflexkit.insights._lessons import LessonBook, format_lessons, tool_of
from reflexkit.insights._models import ActiveTask, Finding, Lesson
from reflexkit.insights._rules import AttemptCheck, HistoryRules, InsightRules, RunStartCheck
from reflexkit.models import FailureContext, Reflection
from reflexkit.orchestrator._verify import modified_files
from reflexkit.tasks._config import InsightsConfig
from reflexkit.tasks._task import Task

__all__ = [
    "InsightEvent",
    "LoopInsights",
    "Snapshot",
    "analysis_data",
    "changed_files",
    "finding_event",
    "insight_events",
    "snapshot",
]

log = logging.getLogger("reflexkit.orchestrator")

Snapshot = dict[str, tuple[int, int] | None]
"""Path (relative) -> ``(mtime_ns, size)``, ``None`` for a path git lists that is gone."""

_SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".reflexkit",  # the run log is written during every attempt
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
_MAX_WALKED_FILES = 20_000
"""A folder outside git with more files than this is not snapshotted (the change is unknown)."""

_KEEP = 10_000
"""The most reflections, findings and failures one run remembers."""


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def _skipped(relative: str) -> bool:
    return any(part in _SKIPPED_DIRS for part in relative.split("/")[:-1])


def snapshot(workdir: Path) -> Snapshot | None:
    """Return the state of the files an attempt may change, or ``None`` when unknown.

    In a git repository: the files ``git status`` lists (paths from the repository root),
    each with its modification time and size, so a second change to a file already dirty
    shows. Elsewhere: every file under *workdir* (caches, virtual environments and
    ``.reflexkit`` left out), ``None`` when there are more than 20,000.
    """
    here = workdir.resolve()
    root = next((f for f in (here, *here.parents) if (f / ".git").exists()), None)
    if root is not None:
        return {p: _stat(root / p) for p in modified_files(here) if not _skipped(p)}
    return _walk(str(here))


def _walk(top: str) -> Snapshot | None:
    """Every file under *top* by ``os.scandir`` (no pathlib: this runs twice per attempt)."""
    found: Snapshot = {}
    stack = [("", top)]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED_DIRS:
                        stack.append((f"{prefix}{entry.name}/", entry.path))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                found[prefix + entry.name] = None
                continue
            found[prefix + entry.name] = (info.st_mtime_ns, info.st_size)
        if len(found) > _MAX_WALKED_FILES:
            return None
    return found


def changed_files(before: Snapshot | None, after: Snapshot | None) -> tuple[str, ...] | None:
    """Return the paths whose state differs between two snapshots; ``None`` when unknown."""
    if before is None or after is None:
        return None
    return tuple(sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)))


class LoopInsights:
    """The insight steps of one loop: rules, lessons and analysis, each call guarded.

    The container builds one per :class:`~reflexkit.orchestrator._loop.Orchestrator`;
    :meth:`start` begins a run and forgets the previous one's state.

    Args:
        rules: The rule tier (``app.insights.rules()``).
        lessons: The project's lessons (``app.insights.lessons()``).
        analysis: The analysis cycle (``app.insights.analysis()``); ``None``: no analysis.
        config: The ``insights`` section; with ``enabled`` false the loop does not call this.
        max_prompt_chars: The budget of the reflections and lessons sections together
            (``reflexion.maxPromptChars``).
    """

    def __init__(
        self,
        *,
        rules: InsightRules,
        lessons: LessonBook,
        analysis: AnalysisCycle | None = None,
        config: InsightsConfig | None = None,
        max_prompt_chars: int = 4_000,
    ) -> None:
        self.rules = rules
        self.lessons = lessons
        self.analysis = analysis
        self.config = config or InsightsConfig()
        self.max_prompt_chars = max_prompt_chars
        self._lock = threading.Lock()
        self._findings: list[Finding] = []
        self._failures: list[AttemptRecord] = []
        self._reflections: dict[str, tuple[Reflection, str]] = {}
        self._completed = 0
        self._tasks: list[ActiveTask] = []
        self._say_once = SayOnce()
        self._run_id: str | None = None  # the run this loop runs, for the rules

    @property
    def enabled(self) -> bool:
        """``insights.enabled``: the loop calls nothing here when it is false."""
        return self.config.enabled

    # --- every event of the loop --------------------------------------------------------------

    def observe(self, event: Event) -> None:
        """Hand a loop event to the rules that follow runs in-process (``observe``), if any."""
        observe = getattr(self.rules, "observe", None)
        if not callable(observe):
            return
        if event.kind is EventKind.RUN_STARTED:
            run_id = event.data.get("runId")
            self._run_id = run_id if isinstance(run_id, str) else None
        try:
            if isinstance(self.rules, HistoryRules):  # shared by the loops of a process
                self.rules.observe(event, run_id=self._run_id)
            else:
                observe(event)
        except Exception:
            log.exception("the insight rules failed on a %s event; going on", event.kind.value)

    # --- run start ---------------------------------------------------------------------------

    def start(self, task: Task) -> RunStartCheck:
        """Begin a run: return the subtasks to skip as paused and the findings that hold."""
        with self._lock:
            self._findings.clear()
            self._failures.clear()
            self._reflections.clear()
            self._completed = 0
        try:
            check = self.rules.at_run_start(task)
        except Exception:
            log.exception("the insight rules failed at run start; pausing nothing")
            return RunStartCheck()
        self._keep(check.findings)
        with self._lock:  # what the analysis is told is active: this run's subtasks
            self._tasks = [
                ActiveTask(
                    task_id=task.id,
                    subtask_id=s.id,
                    status="paused" if s.id in check.paused else "active",
                )
                for s in task.subtasks
            ]
        return check

    # --- after a failed attempt --------------------------------------------------------------

    def after_failure(
        self,
        failure: FailureContext,
        *,
        fingerprint: str,
        files_changed: Sequence[str] | None,
        output_chars: int | None,
    ) -> AttemptCheck:
        """Ask the rules about a failed attempt; the findings and the next prompt's nudge."""
        with self._lock:
            self._failures.append(
                AttemptRecord.of_failure(
                    failure,
                    at=failure.created_at,
                    fingerprint=fingerprint,
                    files=files_changed,
                    output_chars=output_chars,
                )
            )
            del self._failures[:-_KEEP]
        try:
            check = self.rules.after_failure(
                failure,
                fingerprint=fingerprint,
                files_changed=files_changed,
                output_chars=output_chars,
            )
        except Exception:
            log.exception("the insight rules failed after %s; going on", failure.subtask_id)
            return AttemptCheck()
        self._keep(check.findings)
        return check

    def remember(self, reflection: Reflection, command: str) -> None:
        """Keep a reflection of this run and its failed command, to learn from it on a pass."""
        with self._lock:
            self._reflections[reflection.id] = (reflection, command)
            while len(self._reflections) > _KEEP:
                del self._reflections[next(iter(self._reflections))]

    # --- the retry prompt --------------------------------------------------------------------

    def lessons_section(self, failure: FailureContext, *, fingerprint: str, used: int) -> str:
        """The lessons from other subtasks for *failure*, in what *used* left of the budget."""
        if self.config.max_lessons < 1:
            return ""
        try:
            found = self.lessons.lessons_for(
                failure,
                fingerprint=fingerprint,
                exclude=(failure.task_id, failure.subtask_id),
                limit=self.config.max_lessons,
            )
            if not found:
                return ""
            return format_lessons(found, max_chars=self.max_prompt_chars - used - 2)
        except StoreError as err:  # a FIFO, an I/O error: news once, not per attempt
            self._say_once(err)
            return ""
        except Exception:
            log.exception("looking up lessons failed; the prompt goes without them")
            return ""

    # --- on a pass ---------------------------------------------------------------------------

    def learn(self, reflection_ids: Iterable[str]) -> list[Lesson]:
        """Learn the lesson of each reflection the passing prompt carried."""
        learnt: list[Lesson] = []
        for reflection_id in sorted(reflection_ids):
            with self._lock:
                kept = self._reflections.get(reflection_id)
            if kept is None:
                continue
            reflection, command = kept
            try:
                lesson = self.lessons.learn(reflection, tool=tool_of(command))
            except StoreError as err:  # a full disk: news once, not per pass
                self._say_once(err)
                continue
            except Exception:
                log.exception("learning a lesson failed; going on")
                continue
            learnt += [lesson] if lesson is not None else []
        return learnt

    # --- every completed attempt -------------------------------------------------------------

    def completed(self) -> tuple[AnalysisOutcome, ...]:
        """Count a completed attempt; every ``batchThreshold``-th runs the analysis.

        Returns:
            The analysis's outcome (its prose and actions logged; see
            :func:`insight_events`), or nothing when it did not run or had no findings (then
            it makes no LLM call).
        """
        with self._lock:
            self._completed += 1
            due = self._completed % self.config.batch_threshold == 0
            findings, failures = list(self._findings), list(self._failures)
            tasks = list(self._tasks)
        if not due or self.analysis is None:
            return ()
        try:
            outcome = self.analysis.run(findings, failures, tasks=tasks)
        except Exception:
            log.exception("the insight analysis failed; going on")
            return ()
        return (outcome,) if outcome.called else ()

    def _keep(self, findings: Iterable[Finding]) -> None:
        with self._lock:
            self._findings.extend(findings)
            del self._findings[:-_KEEP]
