"""The retry loop that learns: attempt, verify, reflect, retry with the lessons in the prompt.

For each subtask, in ``dependsOn`` order: attempt 1 gets the subtask's prompt; a failed
attempt becomes a :class:`~reflexkit.models.FailureContext`, the reflection service writes and
stores a reflection on it, and every retry gets the prompt plus the lessons of this run's
earlier attempts at the same task and subtask (lessons of earlier runs stay out: the code has
changed since, and they come back only through a deliberate, labelled path). A subtask stops
when it passes, when its attempts run out, when it is stuck (the same failure fingerprint
``stuckAfter`` times in a row), when the run's time budget is spent (verification included),
when the subagent raises :class:`~reflexkit.exceptions.SetupError` (no reflection is stored:
it is no lesson about the code, and no later subtask starts), or when the run is interrupted.
Every ending writes one event (see :mod:`reflexkit.events`).

An interrupt (``KeyboardInterrupt``, :class:`~reflexkit.exceptions.RunInterrupted`) kills
every process the runner has started, writes ``interrupted`` for each running subtask and
``run_interrupted``, and goes on to the caller.

With ``orchestrator.jobs`` above 1, independent subtasks run at once (see :meth:`Orchestrator.run`).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Literal

import attrs

from reflexkit import _serde
from reflexkit._deadline import deadline_in
from reflexkit._text import fence, show_name, strip_control
from reflexkit.events import Event, EventData, EventKind
from reflexkit.exceptions import RunInterrupted, SetupError
from reflexkit.insights.models import Finding, SubjectType
from reflexkit.models import FailureContext, FailureType, Reflection, utcnow
from reflexkit.orchestrator import _process
from reflexkit.orchestrator._attempt_log import attempt_output, credit_redactions
from reflexkit.orchestrator.insight_steps import LoopInsights, Snapshot, changed_files, snapshot
from reflexkit.orchestrator.own_state import OwnState, capture, settle
from reflexkit.orchestrator.subagents import Subagent, SubagentRequest, SubagentResult
from reflexkit.orchestrator.verify import (
    CheckInputs,
    VerificationResult,
    Verifier,
    cut_middle,
    failure_context,
    modified_files,
)
from reflexkit.redaction import redact_text
from reflexkit.reflection.fingerprint import fingerprint
from reflexkit.reflection.protocols import ReflectionService
from reflexkit.reports.audit import AttemptAudit, AuditedAttempt, judge_summary
from reflexkit.reports.ending import AttemptEnding, Ending, classify_ending
from reflexkit.reports.judge import Judgement
from reflexkit.reports.report import ReportIds, Verification
from reflexkit.tasks.config import OrchestratorConfig
from reflexkit.tasks.task import Subtask, Task

__all__ = [
    "Orchestrator",
    "Outcome",
    "RunSummary",
    "SubtaskOutcome",
    "build_prompt",
    "run_order",
]

log = logging.getLogger("reflexkit.orchestrator")

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

_ENDING_EVENT: dict[str, EventKind] = {
    "passed": EventKind.PASSED,
    "exhausted": EventKind.EXHAUSTED,
    "stuck": EventKind.STUCK,
    "budget": EventKind.BUDGET_SPENT,
    "skipped": EventKind.SKIPPED,
    "setup_error": EventKind.SETUP_FAILED,
    "interrupted": EventKind.INTERRUPTED,
    "needs_input": EventKind.NEEDS_INPUT,
    "paused": EventKind.PAUSED,
}
_BUDGET_SPENT = "the run's time budget ran out"

_MAX_SUBAGENT_ERROR_CHARS = _process.DEFAULT_MAX_OUTPUT_BYTES
"""Bounds a subagent's own output (the runner's capture already fits: no second, smaller cut)."""


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
            question to the user and no check passed: a retry would only ask again).
            ``interrupted`` (a signal stopped the run); ``paused`` (the insight rules paused
            it: no attempt).
        attempts: How many attempts were made.
        duration_ms: Wall-clock time of all its attempts.
        reflections_used: How many distinct reflections its retry prompts carried.
        reason: One line on why it did not pass (``None`` when it passed).
    """

    subtask_id: str
    outcome: Outcome
    attempts: int
    duration_ms: int
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


def _ordered(task: Task) -> list[Subtask]:
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
    return tuple(s.id for s in _ordered(task))


class Orchestrator:
    """Runs a task's subtasks with a subagent, verifying, reflecting and retrying.

    Args:
        service: The reflection service (``app.reflection.service()`` of the container).
        subagent: Does the work of each attempt.
        verifier_for: Returns the verifier of a subtask (its own ``verify`` commands, or the
            project's).
        config: The ``orchestrator`` section of project.json.
        on_event: One more subscriber, after *subscribers* (``print``, for one).
        subscribers: Called with every event, in order (a :class:`~reflexkit.events.RunLog`,
            a live view, your own): the loop's events in-process, like structlog's
            processors. The insight rules see each event first. An error a subscriber raises
            is logged and ignored, and the others still get the event. Calls are serialised
            with a lock, so none need be thread-safe even when subtasks run in parallel.
        clock: Monotonic seconds, for durations and the run's time budget.
        stamp: The run's clock: every event's ``at`` (a deterministic run passes its
            :class:`~reflexkit.models.LogicalClock`; the insight rules take the same one).
        reflect: Reflect on failures and put the lessons in retry prompts (``False`` when
            ``reflexion.enabled`` is off: plain retries; stuck detection still works).
        audit: Attempt reports and the completion judge (#18; see
            :class:`~reflexkit.reports.audit.AttemptAudit`); ``None``: neither.
        insights: The insight steps (paused subtasks, findings, nudges, lessons from other
            subtasks, analysis; docs/insights.md); ``None`` or disabled: none.
    """

    def __init__(  # noqa: PLR0913 -- constructor injection: one argument per collaborator
        self,
        *,
        service: ReflectionService,
        subagent: Subagent,
        verifier_for: Callable[[Subtask], Verifier],
        config: OrchestratorConfig | None = None,
        on_event: Callable[[Event], None] | None = None,
        subscribers: Sequence[Callable[[Event], None]] = (),
        clock: Callable[[], float] = time.monotonic,
        stamp: Callable[[], datetime] = utcnow,
        reflect: bool = True,
        audit: AttemptAudit | None = None,
        insights: LoopInsights | None = None,
    ) -> None:
        self.audit = audit
        self.reflect = reflect
        self.insights = insights if insights is not None and insights.enabled else None
        self._paused: dict[str, str] = {}  # subtask id -> why the insight rules paused it
        # With parallel subtasks, what a run learns is kept at its end: a lesson shared mid-run
        # would reach a sibling's prompt or not depending on which subtask finished first.
        self._learn_at_end: list[str] = []
        self.service = service
        self.subagent = subagent
        self.verifier_for = verifier_for
        self.config = config or OrchestratorConfig()
        self.on_event = on_event
        self.subscribers = list(subscribers)
        self.clock = clock
        self.stamp = stamp
        self._emit_lock = threading.Lock()
        self._running: dict[str, int] = {}  # subtask id -> attempt, while it runs
        self._at_interrupt: dict[str, int] | None = None  # what ran when the signal came
        self._ended: set[str] = set()  # subtasks whose ending event is written
        self._halt = threading.Event()  # a setup error or an interrupt: start nothing new
        self._stop = threading.Event()  # an interrupt: running subtasks end too
        self._asked = True  # the caller of run() asks for reflection (#16)
        # The reflections this run saved, by (task, subtask), in order: a retry prompt
        # carries these, not whatever memory holds under the run's id by then.
        self._written: dict[tuple[str, str], list[Reflection]] = {}
        self._report_seen: str | None = None  # the self-report path _report_names is of
        self._report_names: tuple[str, str, str, str] | None = None

    # --- the run ----------------------------------------------------------------------------

    def run(
        self, task: Task, *, workdir: Path, run_id: str | None = None, reflect: bool = True
    ) -> RunSummary:
        """Run every subtask of *task* in *workdir*.

        With ``config.jobs == 1`` the subtasks run one after another in ``dependsOn`` order.
        With ``config.jobs > 1`` up to ``jobs`` subtasks run at once, each in its own thread:
        a subtask starts as soon as every subtask it depends on has finished (and is
        ``skipped`` if one of them did not pass). All of them share the run's time budget,
        the reflection service and its memory, and the same *workdir*: subagents and
        verification of parallel subtasks must touch different files, and their verification
        commands should not depend on files another subtask is still editing. Events then
        interleave between subtasks; :attr:`RunSummary.outcomes` keeps the sequential order.

        Args:
            task: The task.
            workdir: The project folder the subagent edits and verification runs in.
            run_id: The run's id (the ``sessionId`` of its failures); a fresh one by default.
            reflect: The caller asks for reflection in this run. Reflection runs only when
                the project enables it (the constructor's *reflect*) *and* the caller asks
                *and* the subtask does not say ``reflect: false``; otherwise retries are plain.

        Returns:
            Each subtask's outcome; :attr:`RunSummary.passed` is true only when all passed.

        Raises:
            SetupError: ``.reflexkit`` in *workdir*, or something in it, is a symbolic link
                (raised before anything is written: a repository could point the run log,
                memory or reports at any file of the user's).
        """
        run_id = run_id or uuid.uuid4().hex
        linked = _linked_own_folder(workdir)
        if linked is not None:  # before any event: the run log itself may be the link
            raise SetupError(linked)
        self._asked = reflect
        started = self.clock()
        deadline = (
            started + self.config.run_timeout_s if self.config.run_timeout_s is not None else None
        )
        self._running.clear()
        self._ended.clear()
        self._written.clear()
        self._at_interrupt = None
        self._halt.clear()
        self._stop.clear()
        self._emit(
            EventKind.RUN_STARTED,
            data={"runId": run_id, "taskId": task.id, "subtasks": len(task.subtasks)},
        )
        self._paused = self._insights_at_start(task)
        ordered = _ordered(task)
        try:
            setup_error = self._unverified(task) or self._preflight()
            if setup_error is not None:
                outcomes = {
                    s.id: SubtaskOutcome(
                        subtask_id=s.id,
                        outcome="setup_error",
                        attempts=0,
                        duration_ms=0,
                        reason=setup_error,
                    )
                    for s in ordered
                }
            elif self.config.jobs > 1:
                outcomes = self._run_parallel(
                    task, ordered, workdir=workdir, run_id=run_id, deadline=deadline
                )
            else:
                outcomes = self._run_sequential(
                    task, ordered, workdir=workdir, run_id=run_id, deadline=deadline
                )
        except (KeyboardInterrupt, RunInterrupted) as interrupt:
            self._interrupted(interrupt, run_id=run_id, started=started)
            raise
        except BaseException:  # a bug in the loop itself: still leave nothing running
            self._halt.set()
            self._stop.set()
            _process.kill_all()
            raise
        summary = RunSummary(
            run_id=run_id,
            task_id=task.id,
            outcomes=tuple(outcomes[i] for i in dict.fromkeys(s.id for s in ordered)),
            duration_ms=self._ms_since(started),
        )
        counts: EventData = {"runId": run_id, "allPassed": summary.passed}
        for outcome in summary.outcomes:
            key = outcome.outcome
            previous = counts.get(key, 0)
            counts[key] = (previous if isinstance(previous, int) else 0) + 1
        counts["durationMs"] = summary.duration_ms
        if self.insights is not None and self._learn_at_end:
            self.insights.learn(self._learn_at_end)
            self._learn_at_end.clear()
        self._emit(EventKind.RUN_FINISHED, data=counts)
        return summary

    def _unverified(self, task: Task) -> str | None:
        """The setup error of a task that requires verification when a subtask has none."""
        if not task.require_verification:
            return None
        missing = [s.id for s in task.subtasks if not self.verifier_for(s).commands]
        if not missing:
            return None
        message = (
            f"task {task.id} requires verification, but nothing checks "
            + ", ".join(missing)
            + " (give them verify commands, or set verification.commands)"
        )
        self._emit(EventKind.SETUP_FAILED, data={"reason": message, "stage": "verification"})
        return message

    def _preflight(self) -> str | None:
        """Call the subagent's optional ``preflight()``; the setup error's message, if any."""
        preflight = getattr(self.subagent, "preflight", None)
        if not callable(preflight):
            return None
        try:
            preflight()
        except SetupError as err:
            message = strip_control(str(err))
            self._emit(EventKind.SETUP_FAILED, data={"reason": message, "stage": "preflight"})
            return message
        except Exception:
            log.exception("the subagent's preflight raised; going on")
        return None

    def _interrupted(
        self,
        interrupt: KeyboardInterrupt | RunInterrupted,
        *,
        run_id: str,
        started: float,
    ) -> None:
        """Stop what runs and write the events of an interrupted run (then the caller raises)."""
        self._halt.set()
        self._stop.set()
        _process.kill_all()
        if isinstance(interrupt, RunInterrupted):
            name = signal.Signals(interrupt.signum).name
        else:
            name = "SIGINT"
        running = self._at_interrupt if self._at_interrupt is not None else dict(self._running)
        for subtask_id, attempt in sorted(running.items()):
            if subtask_id not in self._ended:
                self._emit(EventKind.INTERRUPTED, subtask_id, attempt, {"signal": name})
        self._emit(
            EventKind.RUN_INTERRUPTED,
            data={
                "runId": run_id,
                "signal": name,
                "running": ",".join(
                    f"{subtask_id}#{attempt}" for subtask_id, attempt in sorted(running.items())
                ),
                "durationMs": self._ms_since(started),
            },
        )

    @staticmethod
    def _blocked(subtask: Subtask, outcomes: dict[str, SubtaskOutcome]) -> list[str]:
        """The dependencies of *subtask* that have not passed (or not finished)."""
        return [
            d for d in subtask.depends_on if d not in outcomes or outcomes[d].outcome != "passed"
        ]

    def _skip(self, subtask: Subtask, blocked: list[str]) -> SubtaskOutcome:
        reason = (
            "dependency did not pass: " + ", ".join(blocked)
            if blocked
            else "the run stopped: the subagent can't work as set up"
        )
        self._emit(EventKind.SKIPPED, subtask.id, 0, {"reason": reason})
        return SubtaskOutcome(
            subtask_id=subtask.id, outcome="skipped", attempts=0, duration_ms=0, reason=reason
        )

    def _run_sequential(
        self,
        task: Task,
        ordered: list[Subtask],
        *,
        workdir: Path,
        run_id: str,
        deadline: float | None,
    ) -> dict[str, SubtaskOutcome]:
        outcomes: dict[str, SubtaskOutcome] = {}
        for subtask in ordered:
            blocked = self._blocked(subtask, outcomes)
            if blocked or self._halt.is_set():
                outcomes[subtask.id] = self._skip(subtask, blocked)
                continue
            outcomes[subtask.id] = self._run_subtask(
                task, subtask, workdir=workdir, run_id=run_id, deadline=deadline
            )
        return outcomes

    def _run_parallel(
        self,
        task: Task,
        ordered: list[Subtask],
        *,
        workdir: Path,
        run_id: str,
        deadline: float | None,
    ) -> dict[str, SubtaskOutcome]:
        """Run up to ``jobs`` subtasks at once, each as soon as its dependencies finished."""
        outcomes: dict[str, SubtaskOutcome] = {}
        pending = list(ordered)
        running: dict[Future[SubtaskOutcome], str] = {}

        def start(subtask: Subtask) -> None:
            future = pool.submit(
                self._run_subtask, task, subtask, workdir=workdir, run_id=run_id, deadline=deadline
            )
            running[future] = subtask.id

        with ThreadPoolExecutor(
            max_workers=self.config.jobs, thread_name_prefix="reflexkit-subtask"
        ) as pool:
            try:
                while pending or running:
                    self._start_ready(pending, running, outcomes, start)
                    if not running:
                        # nothing runs and nothing can start: a cycle or an unknown dependency
                        for subtask in pending:
                            outcomes[subtask.id] = self._skip(
                                subtask, self._blocked(subtask, outcomes)
                            )
                        pending.clear()
                        break
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        outcomes[running.pop(future)] = future.result()
            except BaseException:
                # Before the pool waits for its threads: stop their processes, start nothing.
                with self._emit_lock:
                    self._at_interrupt = dict(self._running)
                self._halt.set()
                self._stop.set()
                _process.kill_all()
                raise
        return outcomes

    def _start_ready(
        self,
        pending: list[Subtask],
        running: dict[Future[SubtaskOutcome], str],
        outcomes: dict[str, SubtaskOutcome],
        start: Callable[[Subtask], None],
    ) -> None:
        """Skip or start every pending subtask whose dependencies have all ended."""
        progressed = True
        while progressed:  # skips can unblock (and skip) further subtasks
            progressed = False
            for subtask in list(pending):
                if not all(d in outcomes for d in subtask.depends_on):
                    continue
                blocked = self._blocked(subtask, outcomes)
                if blocked or self._halt.is_set():
                    outcomes[subtask.id] = self._skip(subtask, blocked)
                    pending.remove(subtask)
                    progressed = True
                elif len(running) < self.config.jobs:
                    start(subtask)
                    pending.remove(subtask)

    def _run_subtask(
        self,
        task: Task,
        subtask: Subtask,
        *,
        workdir: Path,
        run_id: str,
        deadline: float | None,
    ) -> SubtaskOutcome:
        """Run one subtask to its end; the ending's event is written here, once."""
        if subtask.id in self._paused:  # by the insight rules: no attempt spent
            self._emit(EventKind.PAUSED, subtask.id, 0, {"reason": self._paused[subtask.id]})
            return SubtaskOutcome(
                subtask_id=subtask.id,
                outcome="paused",
                attempts=0,
                duration_ms=0,
                reason=self._paused[subtask.id],
            )
        details: EventData = {}
        # On an interrupt the subtask stays in _running: run() reports it as interrupted.
        ended = self._attempts(
            task, subtask, workdir=workdir, run_id=run_id, deadline=deadline, details=details
        )
        with self._emit_lock:
            self._running.pop(subtask.id, None)
            self._ended.add(subtask.id)
        data: EventData = {
            "durationMs": ended.duration_ms,
            "attempts": ended.attempts,
            "reflectionsUsed": ended.reflections_used,
            **details,
        }
        if ended.reason is not None:
            data["reason"] = ended.reason
        if ended.outcome != "passed":  # passed was written with its figures by _attempts
            self._emit(_ENDING_EVENT[ended.outcome], subtask.id, ended.attempts, data)
        return ended

    def _attempts(  # noqa: C901, PLR0911, PLR0912, PLR0913, PLR0915 -- the stop conditions
        self,
        task: Task,
        subtask: Subtask,
        *,
        workdir: Path,
        run_id: str,
        deadline: float | None,
        details: EventData,
    ) -> SubtaskOutcome:
        """The attempts at one subtask; *details* gets what its ending event should add."""
        started = self.clock()
        max_attempts = subtask.max_attempts or self.config.max_attempts
        base_prompt = build_prompt(task, subtask)
        verifier = self.verifier_for(subtask)
        fingerprints: list[str] = []
        used: set[str] = set()
        attempt = 0
        judged: Judgement | None = None  # the judge's rejection of the previous attempt
        nudge = ""  # the insight rules' note for the next prompt
        last: tuple[FailureContext, str] | None = None  # the latest failure and its fingerprint

        def outcome(kind: Outcome, reason: str | None = None) -> SubtaskOutcome:
            return SubtaskOutcome(
                subtask_id=subtask.id,
                outcome=kind,
                attempts=attempt,
                duration_ms=self._ms_since(started),
                reflections_used=len(used),
                reason=reason,
            )

        def left() -> float | None:
            return deadline - self.clock() if deadline is not None else None

        while True:
            if self._stop.is_set():
                return outcome("interrupted", "the run was interrupted")
            remaining = left()
            if remaining is not None and remaining <= 0:
                return outcome("budget", _BUDGET_SPENT)
            full = _no_space(workdir)
            if full is not None:  # nothing the run writes would be kept: stop, say why
                self._halt.set()
                return outcome("setup_error", full)
            attempt += 1
            with self._emit_lock:
                self._running[subtask.id] = attempt
            prompt = base_prompt
            if attempt > 1 and self._reflects(subtask):
                prompt, ids = self._retry_prompt(base_prompt, task.id, subtask.id, run_id, attempt)
                used.update(ids)
            prompt = self._insight_sections(prompt, len(base_prompt), last, nudge)
            before = self._snapshot(workdir)
            audited, prompt = self._audit_start(workdir, prompt, judged, subtask.id)
            timeout_s = float(self.config.attempt_timeout_s)
            if remaining is not None:
                timeout_s = max(min(timeout_s, remaining), 0.001)
            self._emit(
                EventKind.ATTEMPT_STARTED,
                subtask.id,
                attempt,
                {"promptChars": len(prompt), "timeoutS": timeout_s},
            )
            own = self._own_capture(workdir)
            inputs = _check_inputs(verifier, workdir)
            try:
                result = self._run_subagent(
                    SubagentRequest(
                        subtask_id=subtask.id,
                        attempt=attempt,
                        prompt=prompt,
                        workdir=workdir,
                        timeout_s=timeout_s,
                    )
                )
            except SetupError as err:
                self._halt.set()  # no later subtask can work either
                return outcome("setup_error", strip_control(str(err)))
            if self._stop.is_set():
                return outcome("interrupted", "the run was interrupted")
            ending = self._ending(result)
            judgement = judged = None
            changed = self._changed(before, workdir)
            ran = self._verify(verifier, workdir, left()) if result.ok else None
            # Before anything is written or read again: what the attempt (or its checks) did
            # to reflexkit's own folder is repaired where it can be, and reported.
            self._own_settle(own, workdir, subtask.id, attempt)
            checks_changed = self._checks_changed(inputs, workdir, changed, subtask.id, attempt)
            full = _no_space(workdir, after=attempt)
            if full is not None:  # the attempt filled the disk: no lesson, no retry
                self._halt.set()
                return outcome("setup_error", full)
            if ran is not None:
                verification = checks = ran
                checked = bool(getattr(verifier, "commands", True))
                if ending.kind is Ending.WAITING_FOR_USER and not (verification.passed and checked):
                    self._audit_finish(audited, (task, subtask, attempt, run_id), checks, ending)
                    details["cue"] = ending.reason
                    return outcome("needs_input", "the agent is waiting for the user")
                if verification.passed and not self._stop.is_set():
                    judgement = self._judge(
                        audited, base_prompt, result.output, checked=checked, budget_s=left()
                    )
                    judged = judgement if judgement is not None and judgement.rejects else None
                if verification.passed and judged is None:
                    self._audit_finish(
                        audited, (task, subtask, attempt, run_id), checks, ending, judgement
                    )
                    self._emit(
                        EventKind.PASSED,
                        subtask.id,
                        attempt,
                        {
                            "durationMs": self._ms_since(started),
                            "attempts": attempt,
                            "reflectionsUsed": len(used),
                            # The reflections whose lessons the passing attempt had: what
                            # `reflexkit stats` counts as having led to success.
                            "ledToSuccess": ",".join(sorted(used)),
                            **_agent_figures(result),
                            **_judge_figures(judgement),
                            **_change_figures(result, changed),
                            **checks_changed,
                        },
                    )
                    self._insights_passed(subtask.id, attempt, used)
                    return outcome("passed")
                if self._stop.is_set():
                    return outcome("interrupted", "the run was interrupted")
                if judged is not None:  # the checks passed; the judge found work missing
                    verification = _judge_rejection(judged, verification)
                failure = failure_context(
                    verification,
                    task=task.id,
                    subtask=subtask.id,
                    attempt=attempt,
                    session_id=run_id,
                    files_modified=self._modified(workdir),
                    description=subtask.description,
                )
                if judged is not None:
                    failure = attrs.evolve(failure, failure_type=FailureType.JUDGE_REJECTED)
            else:
                failure = self._subagent_failure(
                    result, task=task, subtask=subtask, attempt=attempt, run_id=run_id
                )
                checks = VerificationResult(
                    passed=False, command="subagent", exit_code=None, output="", duration_ms=0
                )
            self._emit(
                EventKind.VERIFICATION_FAILED,
                subtask.id,
                attempt,
                {
                    "command": failure.command,
                    "exitCode": failure.exit_code,
                    "timedOut": failure.failure_type == FailureType.TIMEOUT,
                    "subagentOk": result.ok,
                    "subagentError": redact_text(result.error) if result.error else None,
                    **_agent_figures(result),
                    "fingerprint": _fingerprint_of(failure),
                    **_change_figures(result, changed),
                    **attempt_output(failure, result),  # failureType, the outputs (#19)
                },
            )
            self._audit_finish(audited, (task, subtask, attempt, run_id), checks, ending, judgement)
            spent = left()
            if spent is not None and spent <= 0:
                # Cut short by the run's budget: no lesson in that, and no time to write one.
                return outcome("budget", _BUDGET_SPENT)
            if self._reflects(subtask):
                with deadline_in(left()):  # a Claude reflection gets no more than the run has
                    reflection = self._reflect(failure)
                print_ = reflection.fingerprint if reflection is not None else ""
                if reflection is not None and self.insights is not None:
                    self.insights.remember(reflection, failure.command)
            else:  # reflexion.enabled is false: plain retries, stuck detection still works
                print_ = _fingerprint_of(failure)
            last = (failure, print_)
            nudge = self._insights_failed(failure, result, changed)
            fingerprints.append(print_)
            recent = fingerprints[-self.config.stuck_after :]
            if (
                print_
                and len(recent) == self.config.stuck_after
                and all(p == print_ for p in recent)
            ):
                details.update(fingerprint=print_, times=self.config.stuck_after)
                return outcome(
                    "stuck",
                    f"the same failure {self.config.stuck_after} times in a row "
                    f"(fingerprint {print_})",
                )
            if attempt >= max_attempts:
                details["maxAttempts"] = max_attempts
                return outcome("exhausted", f"failed all {max_attempts} attempts")
            spent = left()
            if spent is not None and spent <= 0:
                return outcome("budget", _BUDGET_SPENT)
            self._emit(EventKind.RETRY, subtask.id, attempt, {"nextAttempt": attempt + 1})

    # --- steps, each guarded so that nothing but a bug in the loop itself stops the run ------

    def _audit_start(
        self, workdir: Path, prompt: str, judged: Judgement | None, subtask_id: str
    ) -> tuple[AuditedAttempt | None, str]:
        """Before an attempt (#18): the judge's last rejection and the self-report request."""
        if judged is not None:
            feedback = fence(judged.retry_feedback())
            prompt = f"{prompt}\n\n## The completion judge on the previous attempt\n\n{feedback}"
        if self.audit is None:
            return None, prompt
        # Parallel subtasks share the folder: each gets a self-report file of its own.
        audited = self.audit.start(
            workdir, own_self_report=subtask_id if self.config.jobs > 1 else None
        )
        if audited.prompt_section:
            prompt = f"{prompt}\n\n{audited.prompt_section}"
        return audited, prompt

    @staticmethod
    def _ending(result: SubagentResult) -> AttemptEnding:
        try:
            return classify_ending(result.output, is_error=not result.ok)
        except Exception:
            log.warning("classifying how the attempt ended failed", exc_info=True)
            return AttemptEnding(kind=Ending.COMPLETED, reason="not classified")

    def _judge(
        self,
        audited: AuditedAttempt | None,
        subtask: str,
        last_message: str,
        *,
        checked: bool,
        budget_s: float | None,
    ) -> Judgement | None:
        """The judge's judgement, within the time left in the run's budget (#18)."""
        if self.audit is None or audited is None:
            return None
        return self.audit.judge(
            audited,
            subtask=subtask,
            last_message=last_message,
            checks_passed=True if checked else None,
            budget_s=budget_s,
        )

    def _audit_finish(
        self,
        audited: AuditedAttempt | None,
        where: tuple[Task, Subtask, int, str],
        checks: VerificationResult,
        ending: AttemptEnding,
        judgement: Judgement | None = None,
    ) -> None:
        """After an attempt (#18): its report, and ``needs_review`` when the risk floor says so."""
        if self.audit is None or audited is None:
            return
        task, subtask, attempt, run_id = where
        nobody_checked = checks.passed and checks.command == "" and checks.exit_code is None
        report = self.audit.finish(
            audited,
            ReportIds(run_id=run_id, subtask_id=subtask.id, attempt=attempt, task_id=task.id),
            agent=_agent_name(self.subagent),
            verification=Verification(
                passed=None if nobody_checked else checks.passed,
                command=checks.command or None,
                exit_code=checks.exit_code,
                judge=judge_summary(judgement),
                ending=ending.kind.value,
            ),
        )
        risk = report.get("risk") if report is not None else None
        if isinstance(risk, dict) and risk.get("needsReview") is True:
            self._emit(
                EventKind.NEEDS_REVIEW,
                subtask.id,
                attempt,
                {
                    "surface": str(risk.get("surface")),
                    "score": float(risk.get("score") or 0.0),
                    "reason": str(risk.get("reason")),
                },
            )

    def _reflects(self, subtask: Subtask) -> bool:
        """The gate (#16): the project enables reflection, the caller asks, the subtask too."""
        return self.reflect and self._asked and subtask.reflect

    def _retry_prompt(
        self, base: str, task_id: str, subtask_id: str, run_id: str, attempt: int
    ) -> tuple[str, list[str]]:
        """The prompt plus the lessons of this run's earlier attempts at this task+subtask."""
        try:
            stored = [
                r
                for r in self.service.get_recent(subtask_id, task_id=task_id)
                if r.session_id == run_id
            ]
        except Exception:
            log.exception("reading reflections for %s failed; retrying without them", subtask_id)
            stored = []
        with self._emit_lock:
            own = list(self._written.get((task_id, subtask_id), ()))
        mine = {r.id: r for r in own}
        untrusted = [r.id for r in stored if mine.get(r.id) != r]
        if untrusted:  # in memory under this run's id, but not as this run wrote it
            self._emit(
                EventKind.OWN_STATE_CHANGED,
                subtask_id,
                attempt,
                {"untrusted": ", ".join(show_name(i, max_chars=64) for i in untrusted[:20])},
            )
        limit = getattr(self.service, "max_reflections_per_retry", None)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            reflections = own[-limit:]
        else:  # a service of one's own: what memory returned, as this run wrote it
            reflections = [r for r in stored if mine.get(r.id) == r]
        try:
            section = self.service.format_for_prompt(reflections)
        except Exception:
            log.exception("formatting reflections for %s failed; retrying without them", subtask_id)
            return base, []
        if not section.strip():
            return base, []
        return f"{base}\n\n{section}", [r.id for r in reflections]

    # --- the insight steps (#17, docs/insights.md); no-ops when insights are off -------------

    def _insights_at_start(self, task: Task) -> dict[str, str]:
        """Ask the rules at run start: emit their findings, return the paused subtasks."""
        if self.insights is None:
            return {}
        check = self.insights.start(task)
        self._emit_findings(check.findings)
        ids = {s.id for s in task.subtasks}
        return {k: v for k, v in check.paused.items() if k in ids}

    def _insight_sections(
        self, prompt: str, base_chars: int, last: tuple[FailureContext, str] | None, nudge: str
    ) -> str:
        """A retry prompt plus the lessons from other subtasks and the rules' nudge."""
        if self.insights is None or last is None:
            return prompt
        if self.reflect:
            failure, print_ = last
            used = max(len(prompt) - base_chars - 2, 0)  # the reflections section
            lessons = self.insights.lessons_section(failure, fingerprint=print_, used=used)
            prompt = f"{prompt}\n\n{lessons}" if lessons else prompt
        return f"{prompt}\n\n{nudge}" if nudge else prompt

    def _snapshot(self, workdir: Path) -> Snapshot | None:
        # Parallel subtasks share the folder: a snapshot diff would credit one attempt with a
        # sibling's edits (and make run logs depend on timing), so their changes are unknown.
        if self.insights is None or self.config.jobs > 1:
            return None
        try:
            return snapshot(workdir)
        except Exception:  # noqa: BLE001 -- the change is a hint, never worth failing for
            log.warning("could not snapshot %s; the attempt's changes are unknown", workdir)
            return None

    def _changed(self, before: Snapshot | None, workdir: Path) -> tuple[str, ...] | None:
        """The files this attempt changed (``None``: unknown, or insights are off)."""
        return changed_files(before, self._snapshot(workdir)) if before is not None else None

    def _insights_failed(
        self, failure: FailureContext, result: SubagentResult, changed: tuple[str, ...] | None
    ) -> str:
        """Ask the rules about a failed attempt; emit findings; return the next nudge."""
        if self.insights is None:
            return ""
        check = self.insights.after_failure(
            failure,
            fingerprint=_fingerprint_of(failure),
            files_changed=changed,
            output_chars=len(result.output),
        )
        self._emit_findings(check.findings, failure.subtask_id, failure.attempt_number)
        self._emit_findings(self.insights.completed(), failure.subtask_id, failure.attempt_number)
        return check.nudge

    def _insights_passed(self, subtask_id: str, attempt: int, used: set[str]) -> None:
        """Learn the lessons of the reflections the passing prompt carried; count it."""
        if self.insights is None:
            return
        if self.config.jobs > 1:
            with self._emit_lock:
                self._learn_at_end.extend(used)
        else:
            self.insights.learn(used)
        self._emit_findings(self.insights.completed(), subtask_id, attempt)

    def _emit_findings(
        self, findings: Iterable[Finding], subtask_id: str = "", attempt: int = 0
    ) -> None:
        for finding in findings:
            # The finding's time is the run's: a deterministic run's log stays byte-identical.
            data = _serde.unstructure(attrs.evolve(finding, created_at=self.stamp()))
            on = finding.subject_id if finding.subject_type is SubjectType.SUBTASK else subtask_id
            self._emit(
                EventKind.FINDING,
                on,
                attempt if on == subtask_id else 0,
                {k: v for k, v in data.items() if isinstance(v, str | int | float | bool)},
            )

    def _run_subagent(self, request: SubagentRequest) -> SubagentResult:
        started = self.clock()
        try:
            return self.subagent.run(request)
        except SetupError:
            raise
        except Exception as err:
            log.exception("the subagent raised on %s", request.subtask_id)
            return SubagentResult(
                ok=False,
                output="",
                duration_ms=self._ms_since(started),
                error=f"the subagent raised {type(err).__name__}: {err}",
            )

    def _verify(
        self, verifier: Verifier, workdir: Path, budget_s: float | None
    ) -> VerificationResult:
        try:
            if budget_s is None or not isinstance(verifier, Verifier):
                # A verifier of one's own (duck-typed, run(workdir) only) gets no budget: the
                # loop checks the budget after it instead.
                return verifier.run(workdir)
            return verifier.run(workdir, budget_s=max(budget_s, 0.0))
        except Exception as err:
            log.exception("verification raised")
            return VerificationResult(
                passed=False,
                command="",
                exit_code=None,
                output=f"verification could not run: {type(err).__name__}: {err}",
                duration_ms=0,
            )

    def _own_capture(self, workdir: Path) -> OwnState | None:
        try:
            return capture(workdir)
        except Exception:
            log.warning("could not note %s/.reflexkit before the attempt", workdir, exc_info=True)
            return None

    def _own_settle(
        self, before: OwnState | None, workdir: Path, subtask_id: str, attempt: int
    ) -> None:
        """Repair and report what the attempt did to ``.reflexkit`` (docs: "The own folder")."""
        if before is None:
            return
        try:
            with self._emit_lock:  # no event is written while a run log may be put back
                found = settle(
                    workdir,
                    before,
                    revert=self.config.jobs == 1,
                    allowed=self._self_report,
                    shared=_shared_own_path,
                )
        except Exception:
            log.warning("could not check %s/.reflexkit after the attempt", workdir, exc_info=True)
            return
        if found:
            data: EventData = {**found.as_data()}
            self._emit(EventKind.OWN_STATE_CHANGED, subtask_id, attempt, data)

    def _checks_changed(
        self,
        inputs: CheckInputs | None,
        workdir: Path,
        changed: tuple[str, ...] | None,
        subtask_id: str,
        attempt: int,
    ) -> EventData:
        """Report an attempt that changed its own checks; the ``passed`` event's addition."""
        if inputs is None:
            return {}
        try:
            programs, files = inputs.changed_by(workdir, changed)
        except Exception:
            log.warning("could not compare the checks' files", exc_info=True)
            return {}
        if not programs and not files:
            return {}
        shown = {
            "files": ", ".join(show_name(f) for f in files[:50]),
            "programs": ", ".join(show_name(p) for p in programs),
        }
        self._emit(EventKind.CHECKS_CHANGED, subtask_id, attempt, {**shown})
        return {"checksChanged": ", ".join(x for x in shown.values() if x)}

    def _self_report(self, relative: str) -> bool:
        """The agent's self-report (the configured path, or a parallel subtask's own one)."""
        if self.audit is None:
            return False
        configured = self.audit.project.config.reports.self_report_path
        if configured != self._report_seen:  # worked out once, not once per file
            self._report_seen = configured
            path = PurePosixPath(configured)
            self._report_names = None
            if path.parts[:1] == (_OWN_FOLDER,) and len(path.parts) > 1:
                folder = "/".join(path.parts[1:-1])
                self._report_names = (
                    f"{folder}/" if folder else "",
                    path.name,
                    f"{path.stem}-",
                    path.suffix,
                )
        if self._report_names is None:
            return False
        folder, name, stem, suffix = self._report_names
        if not relative.startswith(folder):
            return False
        rest = relative[len(folder) :]
        return rest == name or ("/" not in rest and rest.startswith(stem) and rest.endswith(suffix))

    @staticmethod
    def _modified(workdir: Path) -> tuple[str, ...]:
        try:
            return modified_files(workdir)
        except Exception:  # noqa: BLE001 -- the list is a hint, never worth failing for
            return ()

    def _subagent_failure(
        self, result: SubagentResult, *, task: Task, subtask: Subtask, attempt: int, run_id: str
    ) -> FailureContext:
        error = result.error or "the subagent did not finish"
        timed_out = result.timed_out or "timed out" in error or "did not finish within" in error
        output = cut_middle(
            f"{error}\n{result.output}".strip() if result.output else error,
            _MAX_SUBAGENT_ERROR_CHARS,
        )
        verification = VerificationResult(
            passed=False,
            command="subagent",
            exit_code=None,
            output=output,
            duration_ms=result.duration_ms,
            timed_out=timed_out,
        )
        failure = failure_context(
            verification,
            task=task.id,
            subtask=subtask.id,
            attempt=attempt,
            session_id=run_id,
            description=subtask.description,
        )
        if failure.failure_type is None:
            failure = attrs.evolve(failure, failure_type=FailureType.TOOL_ERROR)
        return failure

    def _reflect(self, failure: FailureContext) -> Reflection | None:
        try:
            reflection = self.service.generate(failure)
        except Exception:
            log.exception("reflection failed on %s; going on without one", failure.subtask_id)
            return None
        reflection = credit_redactions(reflection, failure)  # counts lost to verify (#19)
        try:
            saved = self.service.save(reflection)
        except Exception:
            log.exception("saving the reflection failed; going on")
            saved = False
        if saved:
            with self._emit_lock:
                key = (failure.task_id, failure.subtask_id)
                self._written.setdefault(key, []).append(reflection)
        self._emit(
            EventKind.REFLECTION_GENERATED,
            failure.subtask_id,
            failure.attempt_number,
            {
                "reflectionId": reflection.id,
                "source": reflection.source.value,
                "category": reflection.category.value,
                "reason": reflection.fallback_reason,
                "fingerprint": reflection.fingerprint,
                "saved": saved,
                **_reflection_details(self.service, reflection),
            },
        )
        return reflection

    def _emit(
        self,
        kind: EventKind,
        subtask_id: str = "",
        attempt: int = 0,
        data: EventData | None = None,
    ) -> None:
        """Hand one event to every subscriber, in order; one that raises costs only itself."""
        try:
            clean = {
                key: strip_control(value) if isinstance(value, str) else value
                for key, value in (data or {}).items()
            }
            event = Event(
                kind=kind, subtask_id=subtask_id, attempt=attempt, at=self.stamp(), data=clean
            )
        except Exception:
            log.exception("building the %s event failed", kind.value)
            return
        with self._emit_lock:
            for subscriber in self._subscribed():
                try:
                    subscriber(event)
                except Exception:
                    log.exception("an event subscriber failed on %s", kind.value)

    def _subscribed(self) -> list[Callable[[Event], None]]:
        """The insight rules first (they steer the loop), then the subscribers, *on_event*."""
        found: list[Callable[[Event], None]] = []
        if self.insights is not None:
            found.append(self.insights.observe)
        found += self.subscribers
        if self.on_event is not None:
            found.append(self.on_event)
        return found

    def _ms_since(self, started: float) -> int:
        return max(int((self.clock() - started) * 1000), 0)


_OWN_FOLDER = ".reflexkit"
_MAX_OWN_ENTRIES = 100_000
"""How many entries of ``.reflexkit`` are looked at for links, at most (a run's worth is few)."""


def _linked_own_folder(workdir: Path) -> str | None:
    """Why ``.reflexkit`` in *workdir* can't be written to: a symlink at or under it; or None."""
    top = workdir / _OWN_FOLDER
    found: str | None = None
    if top.is_symlink():
        found = _OWN_FOLDER
    elif top.is_dir():
        seen = 0
        for folder, dirs, files in os.walk(top):  # links to folders are listed, not entered
            for name in (*dirs, *files):
                seen += 1
                if os.path.islink(os.path.join(folder, name)):  # noqa: PTH118, PTH114 -- os.walk's strings
                    found = os.path.relpath(os.path.join(folder, name), workdir)  # noqa: PTH118
                    break
            if found is not None or seen > _MAX_OWN_ENTRIES:
                break
    if found is None:
        return None
    try:
        target = str((workdir / found).readlink())
    except OSError:
        target = "?"
    return (
        f"{show_name(found)} in {show_name(str(workdir))} is a symbolic link (to "
        f"{show_name(target, max_chars=200)}): reflexkit writes run logs, memory and reports "
        "only inside the project's own .reflexkit folder; replace the link with a real folder "
        "or file"
    )


_SHARED_OWN = ("runs/", "memory/", "reports/", "fixtures/", "prompts/")
_SHARED_OWN_FILES = frozenset({"insights.jsonl", "lessons.jsonl", "paused.jsonl"})


def _shared_own_path(relative: str) -> bool:
    """A path of ``.reflexkit`` the loop writes to while other subtasks' attempts run."""
    return relative.startswith(_SHARED_OWN) or relative in _SHARED_OWN_FILES


_MIN_FREE_BYTES = 64 * 1024
"""Less free space than this where ``.reflexkit`` lives, and the run stops (a reflection,
its events and a prompt file are a few KiB; a run that can't keep them only burns attempts)."""


def _no_space(workdir: Path, *, after: int = 0) -> str | None:
    """Why the run can't go on when the file system of ``.reflexkit`` is full; else None."""
    own = workdir / _OWN_FOLDER
    try:
        fs = os.statvfs(own if own.is_dir() else workdir)
    except OSError:
        return None
    free = fs.f_bavail * fs.f_frsize
    if free >= _MIN_FREE_BYTES or fs.f_blocks == 0:  # 0 blocks: a pseudo file system
        return None
    when = f"after attempt {after}" if after else "before the attempt"
    return (
        f"no space left on the device of {show_name(str(own))} {when} ({free} bytes free): "
        "the run can't keep its reflections, run log or prompts; free some space (did the "
        "agent fill the disk?) and run again"
    )


def _check_inputs(verifier: Verifier, workdir: Path) -> CheckInputs | None:
    """What the subtask's checks run and name inside the project (``None``: unknown)."""
    commands = getattr(verifier, "commands", None)
    if not isinstance(commands, tuple | list) or not commands:
        return None
    try:
        return CheckInputs.of([str(c) for c in commands], workdir)
    except Exception:
        log.warning("could not note what the checks run", exc_info=True)
        return None


def _agent_name(subagent: Subagent) -> str:
    """The subagent's ``name`` (``command``, ``claude-code`` ...), else its class name."""
    name = getattr(subagent, "name", None)
    return name if isinstance(name, str) and name else type(subagent).__name__


def _fingerprint_of(failure: FailureContext) -> str:
    try:
        return fingerprint(failure)
    except Exception:
        log.exception("fingerprinting failed")
        return ""


def _judge_rejection(judgement: Judgement, checks: VerificationResult) -> VerificationResult:
    """A passed verification turned into the failure the judge's rejection is."""
    return VerificationResult(
        passed=False,
        command="completion judge",
        exit_code=None,
        output=judgement.retry_feedback(),
        duration_ms=checks.duration_ms + judgement.latency_ms,
    )


def _judge_figures(judgement: Judgement | None) -> EventData:
    """What the judge said of a passing attempt, for the run log (nothing when none ran)."""
    if judgement is None:
        return {}
    verdict = judgement.verdict
    return {
        "judge": judgement.source,
        "judgeSeverity": verdict.severity.value if verdict is not None else None,
        "judgeError": judgement.error,
        "judgeMs": judgement.latency_ms,
    }


def _reflection_details(service: ReflectionService, reflection: Reflection) -> EventData:
    """The fixture key, latency, length and reason the service noted on a reflection (#16)."""
    details = getattr(service, "details", None)
    if not callable(details):
        return {}
    try:
        noted = details(reflection.id)
        figures: EventData = {
            "fixtureKey": noted.fixture_key,
            "latencyMs": noted.latency_ms,
            "length": noted.length,
            "reason": noted.reason,
        }
    except Exception:
        log.exception("reading the reflection's details failed")
        return {}
    return figures


def _change_figures(result: SubagentResult, changed: tuple[str, ...] | None) -> EventData:
    """What the insight rules read of an attempt: its output's length, the files it changed."""
    figures: EventData = {"outputChars": len(result.output)}
    if changed is not None:  # unknown (or insights off): no key, not "no files"
        figures["filesModified"] = ",".join(changed)
    return figures


def _agent_figures(result: SubagentResult) -> EventData:
    """What the attempt's subagent cost, for the run log (cost and turns when it reports them)."""
    return {
        "subagentMs": result.duration_ms,
        "subagentCostUsd": result.cost_usd,
        "subagentTurns": result.turns,
    }
