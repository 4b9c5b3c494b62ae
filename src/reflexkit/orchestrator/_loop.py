"""The retry loop that learns: attempt, verify, reflect, retry with the lessons in the prompt.

Each subtask, in ``dependsOn`` order, is attempted until it passes, its attempts run out, it
is stuck, the budget is spent, the set-up fails or the run is interrupted; every step is an
event handed to the subscribers (:mod:`reflexkit.events`). With ``orchestrator.jobs`` above 1
independent subtasks run at once (:mod:`~reflexkit.orchestrator._schedule`). How a subtask
ends and what each retry's prompt carries is described in docs/orchestrator.md.
"""

from __future__ import annotations

import functools
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from reflexkit._deadline import deadline_in
from reflexkit._text import show_name, strip_control
from reflexkit.events import Event, EventData, EventKind
from reflexkit.exceptions import RunInterrupted, SetupError
from reflexkit.models import FailureContext, FailureType, Reflection, utcnow
from reflexkit.orchestrator import _process, _report_steps as reports
from reflexkit.orchestrator._attempt_log import (
    agent_figures,
    agent_fingerprint,
    attempt_output,
    change_figures,
    credit_redactions,
    fingerprint_of,
    reflection_details,
    run_counts,
    subagent_error,
    subagent_failure,
)
from reflexkit.orchestrator._insight_steps import (
    LoopInsights,
    Snapshot,
    changed_files,
    insight_events,
    snapshot,
)
from reflexkit.orchestrator._kept_prompts import keep_prompt
from reflexkit.orchestrator._outcomes import (
    Outcome,
    RunSummary,
    SubtaskOutcome,
    build_prompt,
    ordered as in_order,
)
from reflexkit.orchestrator._own_state import (
    linked_own_folder,
    no_space,
)
from reflexkit.orchestrator._schedule import Schedule
from reflexkit.orchestrator._subagents import Subagent, SubagentRequest, SubagentResult
from reflexkit.orchestrator._verify import (
    AttemptId,
    VerificationResult,
    Verifier,
    failure_context,
)
from reflexkit.orchestrator._watch import AttemptWatch, check_inputs, modified
from reflexkit.tasks._config import OrchestratorConfig
from reflexkit.tasks._task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.insights._analysis import AnalysisOutcome
    from reflexkit.insights._models import Finding
    from reflexkit.reflection._protocols import ReflectionService
    from reflexkit.reports._audit import AttemptAudit, AuditedAttempt
    from reflexkit.reports._ending import AttemptEnding
    from reflexkit.reports._judge import Judgement

__all__ = ["Orchestrator"]

log = logging.getLogger("reflexkit.orchestrator")

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
_INTERRUPTED = "the run was interrupted"


@attrs.define(kw_only=True)
class _Progress:
    """What the attempts at one subtask share: where they run, and what they learnt so far."""

    task: Task
    subtask: Subtask
    workdir: Path
    run_id: str
    deadline: float | None
    details: EventData  # what the subtask's ending event adds
    started: float
    base_prompt: str
    verifier: Verifier
    attempt: int = 0
    remaining: float | None = None  # the run's budget left when the attempt started
    fingerprints: list[str] = attrs.Factory(list)
    used: set[str] = attrs.Factory(set)  # the reflections the prompts carried
    judged: Judgement | None = None  # the judge's rejection of the previous attempt
    nudge: str = ""  # the insight rules' note for the next prompt
    last: tuple[FailureContext, str] | None = None  # the latest failure and its fingerprint

    @property
    def attempt_id(self) -> AttemptId:
        """The current attempt, as its failure names it."""
        return AttemptId(
            task=self.task.id,
            subtask=self.subtask.id,
            attempt=self.attempt,
            session_id=self.run_id,
            description=self.subtask.description,
        )


_NOT_RUN = SubagentResult(ok=False, output="", duration_ms=0, error="the subagent did not run")


@attrs.define(kw_only=True)
class _Attempt:
    """One attempt as it goes: what it was given, what it did, what was said of it."""

    prompt: str
    audited: AuditedAttempt | None
    before: Snapshot | None
    timeout_s: float
    result: SubagentResult = _NOT_RUN
    ending: AttemptEnding = reports.NOT_CLASSIFIED
    changed: tuple[str, ...] | None = None
    ran: VerificationResult | None = None  # the checks' result; None: the agent failed
    checks_changed: EventData = attrs.Factory(dict)
    judgement: Judgement | None = None

    @property
    def output(self) -> str:
        return self.result.output


def _config_or_default(config: OrchestratorConfig | None) -> OrchestratorConfig:
    return config or OrchestratorConfig()


def _if_enabled(insights: LoopInsights | None) -> LoopInsights | None:
    return insights if insights is not None and insights.enabled else None


@attrs.define(eq=False, kw_only=True, slots=False)
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
            :class:`~reflexkit.reports._audit.AttemptAudit`); ``None``: neither.
        insights: The insight steps (paused subtasks, findings, nudges, lessons from other
            subtasks, analysis; docs/insights.md); ``None`` or disabled: none.
        keep_prompts: Keep each attempt's prompt under ``.reflexkit/runs/<run id>/prompts/``
            and name it on ``attempt_started`` (``promptPath``), as ``reflexkit run`` does.
    """

    service: ReflectionService
    subagent: Subagent
    verifier_for: Callable[[Subtask], Verifier]
    config: OrchestratorConfig = attrs.field(default=None, converter=_config_or_default)
    on_event: Callable[[Event], None] | None = None
    subscribers: Sequence[Callable[[Event], None]] = ()
    clock: Callable[[], float] = time.monotonic
    stamp: Callable[[], datetime] = utcnow
    reflect: bool = True
    audit: AttemptAudit | None = None
    insights: LoopInsights | None = attrs.field(default=None, converter=_if_enabled)
    keep_prompts: bool = False

    def __attrs_post_init__(self) -> None:
        self._paused: dict[str, str] = {}  # subtask id -> why the insight rules paused it
        # With parallel subtasks, what a run learns is kept at its end: a lesson shared mid-run
        # would reach a sibling's prompt or not depending on which subtask finished first.
        self._learn_at_end: list[str] = []
        self._emit_lock = threading.RLock()  # a subscriber may emit (reports: needs_review)
        self._running: dict[str, int] = {}  # subtask id -> attempt, while it runs
        self._at_interrupt: dict[str, int] | None = None  # what ran when the signal came
        self._ended: set[str] = set()  # subtasks whose ending event is written
        self._halt = threading.Event()  # a setup error or an interrupt: start nothing new
        self._stop = threading.Event()  # an interrupt: running subtasks end too
        self._asked = True  # the caller of run() asks for reflection (#16)
        # The reflections this run saved, by (task, subtask), in order: a retry prompt
        # carries these, not whatever memory holds under the run's id by then.
        self._written: dict[tuple[str, str], list[Reflection]] = {}
        self._reports = (
            reports.AttemptReports(
                self.audit, agent=reports.agent_name(self.subagent), emit=self._emit
            )
            if self.audit is not None
            else None
        )
        self.watch = AttemptWatch(
            self._emit,
            self._emit_lock,
            alone=lambda: self.config.jobs == 1,
            report_path=self._report_path,
        )

    # --- the run ----------------------------------------------------------------------------

    def run(
        self, task: Task, *, workdir: Path, run_id: str | None = None, reflect: bool = True
    ) -> RunSummary:
        """Run every subtask of *task* in *workdir*.

        In ``dependsOn`` order, one after another, or with ``config.jobs > 1`` up to ``jobs``
        at once in one *workdir* (docs/orchestrator.md); :attr:`RunSummary.outcomes` keeps
        the sequential order.

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
        linked = linked_own_folder(workdir)
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
        ordered = in_order(task)
        try:
            outcomes = self._run_all(
                task, ordered, workdir=workdir, run_id=run_id, deadline=deadline
            )
        except (KeyboardInterrupt, RunInterrupted) as interrupt:
            self._interrupted(interrupt, run_id=run_id, started=started)
            raise
        except BaseException:  # a bug in the loop itself: still leave nothing running
            self._stop_all()
            raise
        summary = RunSummary(
            run_id=run_id,
            task_id=task.id,
            outcomes=tuple(outcomes[i] for i in dict.fromkeys(s.id for s in ordered)),
            duration_ms=self._ms_since(started),
        )
        if self.insights is not None and self._learn_at_end:
            self.insights.learn(self._learn_at_end)
            self._learn_at_end.clear()
        self._emit(EventKind.RUN_FINISHED, data=run_counts(summary))
        return summary

    def _run_all(
        self,
        task: Task,
        ordered: list[Subtask],
        *,
        workdir: Path,
        run_id: str,
        deadline: float | None,
    ) -> dict[str, SubtaskOutcome]:
        """Every subtask's outcome: a setup error for all, or a run one by one or in parallel."""
        setup_error = self._unverified(task) or self._preflight()
        if setup_error is not None:
            return {
                s.id: SubtaskOutcome(subtask_id=s.id, outcome="setup_error", reason=setup_error)
                for s in ordered
            }
        schedule = Schedule(
            jobs=self.config.jobs,
            run_one=functools.partial(
                self._run_subtask, task, workdir=workdir, run_id=run_id, deadline=deadline
            ),
            skipped=self._skipped,
            halted=self._halt,
            abort=self._abort,
        )
        return schedule.run(ordered)

    def _skipped(self, subtask: Subtask, reason: str) -> None:
        self._emit(EventKind.SKIPPED, subtask.id, 0, {"reason": reason})

    def _abort(self) -> None:
        """A parallel run cut short: note what ran, stop every process, start nothing."""
        with self._emit_lock:
            self._at_interrupt = dict(self._running)
        self._stop_all()

    def _stop_all(self) -> None:
        """Start nothing new, end what runs, and kill every process started."""
        self._halt.set()
        self._stop.set()
        _process.kill_all()

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
        self._stop_all()
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
                subtask_id=subtask.id, outcome="paused", reason=self._paused[subtask.id]
            )
        at = _Progress(
            task=task,
            subtask=subtask,
            workdir=workdir,
            run_id=run_id,
            deadline=deadline,
            details={},
            started=self.clock(),
            base_prompt=build_prompt(task, subtask),
            verifier=self.verifier_for(subtask),
        )
        # On an interrupt the subtask stays in _running: run() reports it as interrupted.
        ended = self._attempts(at)
        with self._emit_lock:
            self._running.pop(subtask.id, None)
            self._ended.add(subtask.id)
        data: EventData = {
            "durationMs": ended.duration_ms,
            "attempts": ended.attempts,
            "reflectionsUsed": ended.reflections_used,
            **at.details,
        }
        if ended.reason is not None:
            data["reason"] = ended.reason
        if ended.outcome != "passed":  # passed was written with its figures by _attempts
            self._emit(_ENDING_EVENT[ended.outcome], subtask.id, ended.attempts, data)
        return ended

    def _attempts(self, at: _Progress) -> SubtaskOutcome:
        """The attempts at one subtask; ``at.details`` gets what its ending event should add.

        Each attempt is a sequence of steps; a step returns the subtask's outcome when the
        subtask ends there, else ``None`` and the next step runs.
        """
        while True:
            ended = self._may_start(at) or self._attempt(at)
            if ended is not None:
                return ended
            self._emit(EventKind.RETRY, at.subtask.id, at.attempt, {"nextAttempt": at.attempt + 1})

    def _attempt(self, at: _Progress) -> SubtaskOutcome | None:
        """One attempt: prompt, work, check, and on a failure: log, learn, stop or go on."""
        attempt = self._start_attempt(at)
        ended = self._work(at, attempt) or self._check(at, attempt)
        if ended is not None:
            return ended
        failure, checks = self._failure(at, attempt)
        self._log_failure(at, attempt, failure, checks)
        spent = self._budget_spent(at)  # cut short by the budget: no lesson, no time to write one
        if spent is not None:
            return spent
        self._learn(at, attempt, failure)
        return self._stop_or_retry(at)

    # --- the steps of an attempt --------------------------------------------------------------

    def _outcome(self, at: _Progress, kind: Outcome, reason: str | None = None) -> SubtaskOutcome:
        return SubtaskOutcome(
            subtask_id=at.subtask.id,
            outcome=kind,
            attempts=at.attempt,
            duration_ms=self._ms_since(at.started),
            reflections_used=len(at.used),
            reason=reason,
        )

    def _left(self, at: _Progress) -> float | None:
        """The seconds left in the run's budget; ``None`` when it has none."""
        return at.deadline - self.clock() if at.deadline is not None else None

    def _budget_spent(self, at: _Progress) -> SubtaskOutcome | None:
        left = self._left(at)
        return (
            self._outcome(at, "budget", _BUDGET_SPENT) if left is not None and left <= 0 else None
        )

    def _may_start(self, at: _Progress) -> SubtaskOutcome | None:
        """Before an attempt: an interrupt, a spent budget or a full disk ends the subtask."""
        if self._stop.is_set():
            return self._outcome(at, "interrupted", _INTERRUPTED)
        at.remaining = self._left(at)
        if at.remaining is not None and at.remaining <= 0:
            return self._outcome(at, "budget", _BUDGET_SPENT)
        full = no_space(at.workdir)
        if full is not None:  # nothing the run writes would be kept: stop, say why
            self._halt.set()
            return self._outcome(at, "setup_error", full)
        return None

    def _start_attempt(self, at: _Progress) -> _Attempt:
        """The attempt's prompt: lessons, insight sections, the judge's last word, the audit."""
        at.attempt += 1
        with self._emit_lock:
            self._running[at.subtask.id] = at.attempt
        prompt = at.base_prompt
        if at.attempt > 1 and self._reflects(at.subtask):
            prompt, ids = self._retry_prompt(
                at.base_prompt, at.task.id, at.subtask.id, at.run_id, at.attempt
            )
            at.used.update(ids)
        prompt = self._insight_sections(prompt, len(at.base_prompt), at.last, at.nudge)
        before = self._snapshot(at.workdir)
        # Parallel subtasks share the folder: each gets a self-report file of its own.
        audited, prompt = reports.audit_start(
            self.audit,
            at.workdir,
            prompt,
            at.judged,
            own_self_report=at.subtask.id if self.config.jobs > 1 else None,
        )
        if self._reports is not None:
            self._reports.started(at.subtask.id, at.attempt, audited)
        timeout_s = float(self.config.attempt_timeout_s)
        if at.remaining is not None:
            timeout_s = max(min(timeout_s, at.remaining), 0.001)
        started: EventData = {"promptChars": len(prompt), "timeoutS": timeout_s}
        if self.keep_prompts:  # beside the run log, so `reflexkit run` asks for it
            kept = keep_prompt(at.workdir, at.run_id, at.subtask.id, at.attempt, prompt)
            started = {"promptChars": len(prompt), "promptPath": kept, "timeoutS": timeout_s}
        self._emit(EventKind.ATTEMPT_STARTED, at.subtask.id, at.attempt, started)
        return _Attempt(prompt=prompt, audited=audited, before=before, timeout_s=timeout_s)

    def _work(self, at: _Progress, attempt: _Attempt) -> SubtaskOutcome | None:
        """The subagent's turn, then what it changed and what the checks say of it."""
        own = self.watch.capture(at.workdir)
        inputs = check_inputs(at.verifier, at.workdir)
        request = SubagentRequest(
            subtask_id=at.subtask.id,
            attempt=at.attempt,
            prompt=attempt.prompt,
            workdir=at.workdir,
            timeout_s=attempt.timeout_s,
            run_id=at.run_id,
            task_id=at.task.id,
        )
        try:
            attempt.result = result = self._run_subagent(request)
        except SetupError as err:
            self._halt.set()  # no later subtask can work either
            return self._outcome(at, "setup_error", strip_control(str(err)))
        if self._stop.is_set():
            return self._outcome(at, "interrupted", _INTERRUPTED)
        attempt.ending = reports.ending_of(result)
        at.judged = None
        attempt.changed = self._changed(attempt.before, at.workdir)
        if result.ok:
            attempt.ran = self._verify(at.verifier, at.workdir, self._left(at))
        # Before anything is written or read again: what the attempt (or its checks) did
        # to reflexkit's own folder is repaired where it can be, and reported.
        self.watch.settle(own, at.workdir, at.subtask.id, at.attempt)
        attempt.checks_changed = self.watch.checks_changed(
            inputs, at.workdir, attempt.changed, at.subtask.id, at.attempt
        )
        full = no_space(at.workdir, after=at.attempt)
        if full is not None:  # the attempt filled the disk: no lesson, no retry
            self._halt.set()
            return self._outcome(at, "setup_error", full)
        if attempt.ran is not None and attempt.ran.cannot_run is not None:
            self._halt.set()  # the check never ran: no lesson, no retry, no next subtask
            return self._outcome(at, "setup_error", _check_cannot_run(attempt.ran))
        return None

    def _check(self, at: _Progress, attempt: _Attempt) -> SubtaskOutcome | None:
        """Checked work: waiting for the user, passed (and not rejected by the judge), or on."""
        ran = attempt.ran
        if ran is None:  # the agent itself failed: nothing was checked
            return None
        checked = bool(getattr(at.verifier, "commands", True))
        if reports.waits_for_user(attempt.ending) and not (ran.passed and checked):
            at.details["cue"] = attempt.ending.reason
            at.details.update(reports.attempt_facts(ran, attempt.ending))
            return self._outcome(at, "needs_input", "the agent is waiting for the user")
        if ran.passed and not self._stop.is_set():
            attempt.judgement = judgement = self._judge(at, attempt, checked=checked)
            at.judged = judgement if judgement is not None and judgement.rejects else None
        if ran.passed and at.judged is None:
            return self._passed(at, attempt, ran)
        if self._stop.is_set():
            return self._outcome(at, "interrupted", _INTERRUPTED)
        return None

    def _judge(self, at: _Progress, attempt: _Attempt, *, checked: bool) -> Judgement | None:
        """The completion judge on checked work, within the time left in the run's budget."""
        if self.audit is None or attempt.audited is None:
            return None
        return self.audit.judge(
            attempt.audited,
            subtask=at.base_prompt,
            last_message=attempt.output,
            checks_passed=True if checked else None,
            budget_s=self._left(at),
        )

    def _passed(
        self, at: _Progress, attempt: _Attempt, checks: VerificationResult
    ) -> SubtaskOutcome:
        self._emit(
            EventKind.PASSED,
            at.subtask.id,
            at.attempt,
            {
                "durationMs": self._ms_since(at.started),
                "attempts": at.attempt,
                "reflectionsUsed": len(at.used),
                # The reflections whose lessons the passing attempt had: what
                # `reflexkit stats` counts as having led to success.
                "ledToSuccess": ",".join(sorted(at.used)),
                **agent_figures(attempt.result),
                **reports.judge_figures(attempt.judgement),
                **change_figures(attempt.result, attempt.changed),
                **attempt.checks_changed,
                **reports.attempt_facts(checks, attempt.ending),
            },
        )
        self._insights_passed(at.subtask.id, at.attempt, at.used)
        return self._outcome(at, "passed")

    def _failure(
        self, at: _Progress, attempt: _Attempt
    ) -> tuple[FailureContext, VerificationResult]:
        """The failure to reflect on, and the checks its report names."""
        if attempt.ran is None:
            failure = subagent_failure(attempt.result, at.attempt_id)
            checks = VerificationResult(
                passed=False, command="subagent", exit_code=None, output="", duration_ms=0
            )
            return failure, checks
        verification = attempt.ran
        if at.judged is not None:  # the checks passed; the judge found work missing
            verification = reports.judge_rejection(at.judged, verification)
        failure = failure_context(verification, at.attempt_id, files_modified=modified(at.workdir))
        if at.judged is not None:
            failure = attrs.evolve(failure, failure_type=FailureType.JUDGE_REJECTED)
        return failure, attempt.ran

    def _log_failure(
        self,
        at: _Progress,
        attempt: _Attempt,
        failure: FailureContext,
        checks: VerificationResult,
    ) -> None:
        result = attempt.result
        self._emit(
            EventKind.VERIFICATION_FAILED,
            at.subtask.id,
            at.attempt,
            {
                "command": failure.command,
                "exitCode": failure.exit_code,
                "timedOut": failure.failure_type == FailureType.TIMEOUT,
                "subagentOk": result.ok,
                "subagentError": subagent_error(result),
                **agent_figures(result),
                "fingerprint": fingerprint_of(failure),
                **change_figures(result, attempt.changed),
                **attempt_output(failure, result),  # failureType, the outputs (#19)
                **reports.attempt_facts(checks, attempt.ending),
                **reports.judge_figures(attempt.judgement),
            },
        )

    def _learn(self, at: _Progress, attempt: _Attempt, failure: FailureContext) -> None:
        """Reflect on the failure (or only fingerprint it), and ask the rules for a nudge."""
        if self._reflects(at.subtask):
            with deadline_in(self._left(at)):  # a Claude reflection gets no more than the run has
                reflection = self._reflect(failure)
            print_ = reflection.fingerprint if reflection is not None else ""
            if reflection is not None and self.insights is not None:
                self.insights.remember(reflection, failure.command)
        else:  # reflexion.enabled is false: plain retries, stuck detection still works
            print_ = fingerprint_of(failure)
        at.last = (failure, print_)
        at.nudge = self._insights_failed(failure, attempt.result, attempt.changed)
        # Stuck or exhausted, one rule for every agent: an agent that did not finish is the
        # same failure as before when it ended the same way, whatever it printed.
        at.fingerprints.append(agent_fingerprint(attempt.result) if attempt.ran is None else print_)

    def _stop_or_retry(self, at: _Progress) -> SubtaskOutcome | None:
        """After a failure: stuck, out of attempts, out of budget; else ``None``: retry."""
        print_ = at.fingerprints[-1]
        recent = at.fingerprints[-self.config.stuck_after :]
        if print_ and len(recent) == self.config.stuck_after and all(p == print_ for p in recent):
            at.details.update(fingerprint=print_, times=self.config.stuck_after)
            return self._outcome(
                at,
                "stuck",
                f"the same failure {self.config.stuck_after} times in a row (fingerprint {print_})",
            )
        max_attempts = at.subtask.max_attempts or self.config.max_attempts
        if at.attempt >= max_attempts:
            at.details["maxAttempts"] = max_attempts
            return self._outcome(at, "exhausted", f"failed all {max_attempts} attempts")
        return self._budget_spent(at)

    # --- steps, each guarded so that nothing but a bug in the loop itself stops the run ------

    def _reflects(self, subtask: Subtask) -> bool:
        """The gate (#16): the project enables reflection, the caller asks, the subtask too."""
        return self.reflect and self._asked and subtask.reflect

    def _retry_prompt(
        self, base: str, task_id: str, subtask_id: str, run_id: str, attempt: int
    ) -> tuple[str, list[str]]:
        """The prompt plus the lessons of this run's earlier attempts at this task+subtask."""
        reflections = self._lessons_of_run(task_id, subtask_id, run_id, attempt)
        try:
            section = self.service.format_for_prompt(reflections)
        except Exception:
            log.exception("formatting reflections for %s failed; retrying without them", subtask_id)
            return base, []
        if not section.strip():
            return base, []
        return f"{base}\n\n{section}", [r.id for r in reflections]

    def _lessons_of_run(
        self, task_id: str, subtask_id: str, run_id: str, attempt: int
    ) -> list[Reflection]:
        """The reflections this run wrote on the subtask, as it wrote them (memory may lie)."""
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
            return own[-limit:]
        # A service of one's own: what memory returned, as this run wrote it.
        return [r for r in stored if mine.get(r.id) == r]

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
            fingerprint=fingerprint_of(failure),
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
        self, found: Iterable[Finding | AnalysisOutcome], subtask_id: str = "", attempt: int = 0
    ) -> None:
        for kind, on, data in insight_events(found, subtask_id, at=self.stamp()):
            self._emit(kind, on, attempt if on and on == subtask_id else 0, data)

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

    def _report_path(self) -> str | None:
        return None if self.audit is None else self.audit.project.config.reports.self_report_path

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
                **reflection_details(self.service, reflection),
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
        # The reports first and outside the lock: parallel subtasks write theirs at once, and
        # the needs_review a report emits comes right before the event that ends its attempt.
        if self._reports is not None:
            _deliver(self._reports, event)
        with self._emit_lock:
            for subscriber in self._subscribed():
                _deliver(subscriber, event)

    def _subscribed(self) -> list[Callable[[Event], None]]:
        """The insight rules (they steer the loop), the subscribers, *on_event*."""
        first = [self.insights.observe] if self.insights is not None else []
        last = [self.on_event] if self.on_event is not None else []
        return [*first, *self.subscribers, *last]

    def _ms_since(self, started: float) -> int:
        return max(int((self.clock() - started) * 1000), 0)


def _deliver(subscriber: Callable[[Event], None], event: Event) -> None:
    """Hand *event* to one subscriber; an error it raises is logged and costs only itself."""
    try:
        subscriber(event)
    except Exception:
        log.exception("an event subscriber failed on %s", event.kind.value)


def _check_cannot_run(checks: VerificationResult) -> str:
    """The setup ending of a check that never ran: the command and the line that shows why."""
    line = strip_control(checks.cannot_run or "")
    return f"the check `{strip_control(checks.command)}` could not run: {line}"
