"""The rule tier: patterns in the run history that cost no LLM call.

:class:`HistoryRules` reads the run logs incrementally and the paused-subtasks file, and
answers the loop at the run's start (subtasks to skip as ``paused``) and after each failure
(findings, and a nudge when the attempt changed nothing and failed as before). Findings are
logged once in ``.reflexkit/insights.jsonl``; the rules never raise into the loop.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from reflexkit.events import Event
from reflexkit.exceptions import StoreError
from reflexkit.insights._history import AttemptRecord, RunHistory, RunLogReader, SubtaskRun
from reflexkit.insights._jsonl import SayOnce
from reflexkit.insights._models import (
    Finding,
    PausedEntry,
    Rule,
    Severity,
    SubjectType,
    description_hash,
)
from reflexkit.insights._store import FindingLog, PausedSubtasks
from reflexkit.models import FailureContext, utcnow
from reflexkit.tasks._config import InsightsConfig
from reflexkit.tasks._task import Subtask, Task

__all__ = [
    "AttemptCheck",
    "FixedRules",
    "HistoryRules",
    "InsightRules",
    "RunStartCheck",
    "evaluate",
    "nudge_text",
]

log = logging.getLogger("reflexkit.insights")

NUDGE_HEADING = "## Note: your last attempt changed nothing"


@attrs.frozen(kw_only=True)
class RunStartCheck:
    """What the rules say before a run.

    Attributes:
        paused: The subtasks to skip, each with the reason (``outcome="paused"``, no attempt).
        findings: What holds for the task's subtasks now (the loop emits each as an event).
    """

    paused: dict[str, str] = attrs.field(factory=dict)
    findings: tuple[Finding, ...] = ()


@attrs.frozen(kw_only=True)
class AttemptCheck:
    """What the rules say after a failed attempt.

    Attributes:
        findings: The findings about it (the loop emits each as an event).
        nudge: Text for the next attempt's prompt; ``""`` for none.
    """

    findings: tuple[Finding, ...] = ()
    nudge: str = ""


@runtime_checkable
class InsightRules(Protocol):
    """**Protocol**: the rule tier the loop asks at run start and after each failed attempt.

    A rule tier that also has ``observe(event)`` gets every event of the loop first, in-process
    (:class:`HistoryRules` builds the running run's history from them).
    """

    def at_run_start(self, task: Task, /) -> RunStartCheck:
        """Return the subtasks of *task* to skip as paused, and the findings that hold."""
        ...

    def after_failure(
        self,
        failure: FailureContext,
        /,
        *,
        fingerprint: str = "",
        files_changed: Sequence[str] | None = None,
        output_chars: int | None = None,
    ) -> AttemptCheck:
        """Return the findings about a failed attempt and the nudge for the next prompt."""
        ...


def nudge_text(fingerprint: str) -> str:
    """Return the prompt section for an attempt that changed nothing and failed as before."""
    return (
        f"{NUDGE_HEADING}\n"
        "Your previous attempt changed no files and failed exactly as the attempt before it "
        f"(failure fingerprint {fingerprint}). Doing the same again will fail the same way: "
        "make a concrete change to the code this time, or a different one than before."
    )


# --- the rules as pure functions over attempt records ------------------------------------------


def _subtask_finding(
    rule: Rule, task_id: str, subtask_id: str, detail: str, *, now: datetime
) -> Finding:
    """A warning about one subtask (a rule that acts on it evolves it: ``actionTaken``)."""
    return Finding(
        rule=rule,
        severity=Severity.WARNING,
        subject_type=SubjectType.SUBTASK,
        subject_id=subtask_id,
        task_id=task_id,
        detail=detail,
        created_at=now,
    )


def _where(record: AttemptRecord) -> str:
    return f"run {record.run_id} attempt {record.attempt}"


def timeout_finding(
    attempts: Sequence[AttemptRecord], config: InsightsConfig, *, now: datetime
) -> Finding | None:
    """The last ``timeoutLimit`` attempts of one subtask all timed out."""
    failed = [a for a in attempts if a.failed or a.passed]
    last = failed[-config.timeout_limit :]
    if len(last) < config.timeout_limit or not all(a.timed_out for a in last):
        return None
    head = last[-1]
    return _subtask_finding(
        Rule.TIMEOUT_PATTERN,
        head.task_id,
        head.subtask_id,
        f"{config.timeout_limit} attempts in a row timed out (last: {_where(head)}): "
        "raise orchestrator.attemptTimeoutS or split the subtask",
        now=now,
    )


def stale_finding(
    attempts: Sequence[AttemptRecord], config: InsightsConfig, *, now: datetime
) -> Finding | None:
    """The agent's output was under ``minResultLength`` in the last N attempts of a subtask."""
    known = [a for a in attempts if a.output_chars is not None]
    last = known[-config.consecutive_failure_limit :]
    if len(last) < config.consecutive_failure_limit:
        return None
    if not all((a.output_chars or 0) < config.min_result_length for a in last):
        return None
    head = last[-1]
    return _subtask_finding(
        Rule.STALE_OUTPUT,
        head.task_id,
        head.subtask_id,
        f"the agent's output was under {config.min_result_length} characters in the last "
        f"{len(last)} attempts (last: {_where(head)}): check the agent command and its prompt",
        now=now,
    )


def no_change_findings(attempts: Sequence[AttemptRecord], *, now: datetime) -> list[Finding]:
    """Attempts that changed no files and failed with the previous failure's fingerprint."""
    found: list[Finding] = []
    previous: AttemptRecord | None = None
    for record in attempts:
        if not record.failed:
            previous = None if record.passed else previous
            continue
        if (
            previous is not None
            and record.files_modified == ()
            and record.fingerprint
            and record.fingerprint == previous.fingerprint
        ):
            found.append(
                _subtask_finding(
                    Rule.NO_CHANGE_REPEAT,
                    record.task_id,
                    record.subtask_id,
                    f"{_where(record)} changed no files and failed as the attempt before "
                    f"(fingerprint {record.fingerprint}); the next prompt says so",
                    now=now,
                )
            )
        previous = record
    return found


def file_findings(
    attempts: Sequence[AttemptRecord],
    config: InsightsConfig,
    *,
    now: datetime,
    only: Sequence[str] | None = None,
) -> list[Finding]:
    """Files modified in ``consecutiveFailureLimit`` or more failed attempts in the lookback.

    The lookback is ``lookbackHours`` either side of *now*: a failure stamped further in the
    future (a clock that ran ahead) is not held against a file until then.
    """
    # The window reaches as far ahead of now as behind it: a stamp from a clock that ran
    # ahead (or a now that jumped back) counts while it is that close, never forever.
    window = timedelta(hours=config.lookback_hours)
    by_file: dict[str, list[AttemptRecord]] = defaultdict(list)
    for record in attempts:
        if not record.failed or not record.files_modified:
            continue
        if record.at is not None and not now - window <= record.at <= now + window:
            continue
        for path in dict.fromkeys(record.files_modified):
            by_file[path].append(record)
    wanted = set(only) if only is not None else None
    found = []
    for path, records in sorted(by_file.items()):
        if wanted is not None and path not in wanted:
            continue
        if len(records) < config.consecutive_failure_limit:
            continue
        subtasks = sorted({r.subtask_id for r in records})
        found.append(
            Finding(
                rule=Rule.FILE_FAILURE_CORRELATION,
                severity=Severity.WARNING,
                subject_type=SubjectType.FILE,
                subject_id=path,
                detail=(
                    f"modified in {config.consecutive_failure_limit} or more failed attempts "
                    f"within {config.lookback_hours} h (subtasks: {', '.join(subtasks)}): "
                    "look at this file first"
                ),
                created_at=now,
            )
        )
    return found


def pause_finding(
    runs_failed: int, task_id: str, subtask_id: str, config: InsightsConfig, *, now: datetime
) -> Finding | None:
    """A subtask stuck or exhausted in its last ``consecutiveFailureLimit`` runs."""
    if runs_failed < config.consecutive_failure_limit:
        return None
    found = _subtask_finding(
        Rule.CONSECUTIVE_FAILURES,
        task_id,
        subtask_id,
        f"stuck or exhausted in its last {config.consecutive_failure_limit} runs: paused "
        f"until `reflexkit resume {subtask_id}` or its description changes",
        now=now,
    )
    return attrs.evolve(found, severity=Severity.ACTION_TAKEN, action_taken="paused")


def _failed_streak(
    history: RunHistory, task_id: str, subtask_id: str, entry: PausedEntry | None
) -> int:
    """The subtask's failed runs in a row, counting only the runs after *entry*'s position."""
    counted = _after(history, entry)
    streak = 0
    for run in history.of(task_id, subtask_id):
        if run.outcome not in {"passed", "stuck", "exhausted"} or not counted(run):
            continue
        streak = streak + 1 if run.failed else 0
    return streak


def _after(history: RunHistory, entry: PausedEntry | None) -> Callable[[SubtaskRun], bool]:
    """Which runs come after a pause or resume: by position in the history (#29)."""
    if entry is None:
        return lambda _run: True
    if entry.after_run is not None:
        later = history.after(entry.after_run)
        return lambda run: run.run_id in later
    since = entry.since  # an entry written before positions were kept
    return lambda run: run.started_at is not None and run.started_at > since


def _streak_findings(
    attempts: Sequence[AttemptRecord], config: InsightsConfig, *, now: datetime
) -> list[Finding]:
    """The findings on a subtask's last attempts: time-outs and stale output in a row."""
    found = (timeout_finding(attempts, config, now=now), stale_finding(attempts, config, now=now))
    return [f for f in found if f is not None]


def _task_file_findings(
    task: Task, history: RunHistory, config: InsightsConfig, *, now: datetime
) -> list[Finding]:
    """The file findings on the files the task's failed attempts modified."""
    ids = {s.id for s in task.subtasks}
    touched = [a for a in history.attempts() if a.task_id == task.id and a.subtask_id in ids]
    files = {p for a in touched if a.failed for p in a.files_modified or ()}
    return file_findings(list(history.attempts()), config, now=now, only=sorted(files))


def evaluate(history: RunHistory, config: InsightsConfig, *, now: datetime) -> list[Finding]:
    """Every finding the history supports, without pausing anything (for reports, benchmarks).

    The per-attempt rules (time-outs, stale output, no change) are replayed after every
    attempt, as the loop asks them; the pause rule looks at the last runs, as at a run start.

    Returns:
        The findings of every rule, the consecutive-failure rule with ``actionTaken="paused"``
        as it would be applied.
    """
    found: list[Finding] = []
    by_subtask: dict[tuple[str, str], list[AttemptRecord]] = defaultdict(list)
    for record in history.attempts():
        by_subtask[record.task_id, record.subtask_id].append(record)
    for (task_id, subtask_id), attempts in by_subtask.items():
        streak = _failed_streak(history, task_id, subtask_id, None)
        pause = pause_finding(streak, task_id, subtask_id, config, now=now)
        found += [pause] if pause is not None else []
        # Replay the per-attempt rules as the loop would have asked them after each attempt.
        for end in range(1, len(attempts) + 1):
            found += _streak_findings(attempts[:end], config, now=now)
        found += no_change_findings(attempts, now=now)
    found += file_findings(list(history.attempts()), config, now=now)
    return found


# --- the live rules -----------------------------------------------------------------------------


class HistoryRules:
    """The rule tier over a project's run logs, its paused subtasks and its findings log.

    Args:
        runs: The run-log folder (``.reflexkit/runs``).
        findings: Where findings are logged (``.reflexkit/insights.jsonl``).
        paused: The paused subtasks (``.reflexkit/paused.jsonl``).
        config: The ``insights`` section.
        clock: The current time.
    """

    def __init__(
        self,
        *,
        runs: Path,
        findings: FindingLog,
        paused: PausedSubtasks,
        config: InsightsConfig | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.config = config or InsightsConfig()
        self.reader = RunLogReader(runs)
        self.findings = findings
        self.paused = paused
        self.clock = clock
        self._say_once = SayOnce()

    def _keep(self, write: Callable[..., object], /, *args: object, **kwargs: object) -> None:
        """Log or apply a finding; one that can't be written still holds for this run."""
        try:
            write(*args, **kwargs)
        except StoreError as err:
            self._say_once(err)

    def observe(self, event: Event, /, *, run_id: str | None = None) -> None:
        """Follow a run of this process as it goes (the loop subscribes this to its events).

        So the rules see the run's attempts whether or not a run log is written, and before
        a deterministic run writes them. *run_id* is the event's run (loops sharing these
        rules pass it); ``None``: the run that started last.
        """
        self.reader.observe(event, run_id=run_id)

    def at_run_start(self, task: Task, /) -> RunStartCheck:
        """Pause what failed in its last N runs, resume what changed; return what holds.

        Never raises: on an error it logs and pauses nothing.
        """
        if not self.config.enabled:
            return RunStartCheck()
        try:
            return self._at_run_start(task)
        except Exception:
            log.exception("the insight rules failed at run start; pausing nothing")
            return RunStartCheck()

    def _at_run_start(self, task: Task) -> RunStartCheck:
        now = self.clock()
        history = self.reader.history()
        entries = self.paused.entries()
        paused: dict[str, str] = {}
        found: list[Finding] = []
        for subtask in task.subtasks:
            why = self._paused_now(task.id, subtask, entries.get((task.id, subtask.id)), history)
            if isinstance(why, Finding):
                found.append(why)
                why = why.detail
            if why is not None:
                paused[subtask.id] = why
                continue
            attempts = [a for r in history.of(task.id, subtask.id) for a in r.attempts]
            found += _streak_findings(attempts, self.config, now=now)
        found += _task_file_findings(task, history, self.config, now=now)
        self._keep(self.findings.add, found)
        return RunStartCheck(paused=paused, findings=tuple(found))

    def _paused_now(
        self, task_id: str, subtask: Subtask, entry: PausedEntry | None, history: RunHistory
    ) -> str | Finding | None:
        """Why *subtask* stays paused (a reason), is paused now (the finding), or ``None``.

        A paused subtask whose description changed is resumed; the runs up to the last one
        of *history* then no longer count.
        """
        if entry is not None and entry.paused:
            if entry.description_hash in {"", description_hash(subtask.description)}:
                return entry.reason or "paused"
            self._keep(
                self.paused.resume,
                subtask.id,
                task_id=task_id,
                reason="its description changed",
                after_run=history.latest(),
            )
            entry = attrs.evolve(entry, paused=False, after_run=history.latest())
        streak = _failed_streak(history, task_id, subtask.id, entry)
        finding = pause_finding(streak, task_id, subtask.id, self.config, now=self.clock())
        if finding is None:
            return None
        self._keep(
            self.paused.pause,
            task_id,
            subtask.id,
            description=subtask.description,
            reason=finding.detail,
            after_run=history.latest(),
        )
        return finding

    def sweep(self) -> list[Finding]:
        """Run every rule over the whole history, as a standing trigger does between runs.

        A subtask stuck or exhausted in its last ``consecutiveFailureLimit`` runs (after its
        last pause or resume) is paused, as at a run start; time-outs, stale output, repeats
        and files in failed attempts are findings. Never raises: on an error it logs and
        finds nothing.

        Returns:
            The findings not logged before (the ones that are news).
        """
        if not self.config.enabled:
            return []
        try:
            return self._sweep()
        except Exception:
            log.exception("the insight rules failed on the run history; going on")
            return []

    def _sweep(self) -> list[Finding]:
        now = self.clock()
        history = self.reader.history()
        entries = self.paused.entries()
        by_subtask: dict[tuple[str, str], list[AttemptRecord]] = defaultdict(list)
        for record in history.attempts():
            by_subtask[record.task_id, record.subtask_id].append(record)
        found: list[Finding] = []
        for (task_id, subtask_id), attempts in by_subtask.items():
            entry = entries.get((task_id, subtask_id))
            if entry is not None and entry.paused:
                continue
            streak = _failed_streak(history, task_id, subtask_id, entry)
            pause = pause_finding(streak, task_id, subtask_id, self.config, now=now)
            if pause is not None:
                self._keep(
                    self.paused.pause,
                    task_id,
                    subtask_id,
                    description="",
                    reason=pause.detail,
                    after_run=history.latest(),
                )
                found.append(pause)
                continue
            found += _streak_findings(attempts, self.config, now=now)
            found += no_change_findings(attempts, now=now)
        found += file_findings(list(history.attempts()), self.config, now=now)
        try:
            return self.findings.add(found)
        except StoreError as err:
            self._say_once(err)
            return found

    def after_failure(
        self,
        failure: FailureContext,
        /,
        *,
        fingerprint: str = "",
        files_changed: Sequence[str] | None = None,
        output_chars: int | None = None,
    ) -> AttemptCheck:
        """Return the findings about a failed attempt and the nudge for the next prompt.

        Args:
            failure: The failed attempt (its ``sessionId`` is the run id).
            fingerprint: Its fingerprint (the reflection's, or the loop's own).
            files_changed: The files this attempt changed; ``failure.filesModified`` when
                not given.
            output_chars: The length of the agent's output, when known.

        Never raises: on an error it logs and finds nothing.
        """
        if not self.config.enabled:
            return AttemptCheck()
        try:
            return self._after_failure(failure, fingerprint, files_changed, output_chars)
        except Exception:
            log.exception("the insight rules failed after %s; going on", failure.subtask_id)
            return AttemptCheck()

    def _after_failure(
        self,
        failure: FailureContext,
        fingerprint: str,
        files_changed: Sequence[str] | None,
        output_chars: int | None,
    ) -> AttemptCheck:
        now = self.clock()
        history = self.reader.history()
        attempts = [
            a
            for r in history.of(failure.task_id, failure.subtask_id)
            for a in r.attempts
            if not (a.run_id == failure.session_id and a.attempt >= failure.attempt_number)
        ]
        files = tuple(files_changed) if files_changed is not None else failure.files_modified
        current = AttemptRecord.of_failure(  # at the run's clock, as its events carry
            failure, at=now, fingerprint=fingerprint, files=files, output_chars=output_chars
        )
        attempts.append(current)
        found = _streak_findings(attempts, self.config, now=now)
        repeat = no_change_findings(attempts[-2:], now=now)
        found += repeat
        mine = (failure.task_id, failure.subtask_id)
        others = [a for a in history.attempts() if (a.task_id, a.subtask_id) != mine]
        found += file_findings([*others, *attempts], self.config, now=now, only=files)
        self._keep(self.findings.add, found)
        return AttemptCheck(findings=tuple(found), nudge=nudge_text(fingerprint) if repeat else "")


@attrs.define
class FixedRules:
    """An :class:`InsightRules` that answers what it was given and records what it was asked.

    For tests of code that calls the rules (the loop): no files, no history.

    Attributes:
        paused: Subtask id -> reason, returned by every :meth:`at_run_start`.
        nudges: Subtask id -> nudge, returned after each failure of that subtask.
        findings: Returned by both.
        asked: ``("start", task_id)`` and ``("failure", subtask_id)`` in call order.
        seen: The loop's events, as :meth:`observe` got them.
    """

    paused: dict[str, str] = attrs.Factory(dict)
    nudges: dict[str, str] = attrs.Factory(dict)
    findings: tuple[Finding, ...] = ()
    asked: list[tuple[str, str]] = attrs.Factory(list)
    seen: list[Event] = attrs.Factory(list)

    def observe(self, event: Event, /) -> None:
        """Record an event of the loop."""
        self.seen.append(event)

    def at_run_start(self, task: Task, /) -> RunStartCheck:
        """Return the fixed paused subtasks of *task* and the fixed findings."""
        self.asked.append(("start", task.id))
        ids = {s.id for s in task.subtasks}
        return RunStartCheck(
            paused={k: v for k, v in self.paused.items() if k in ids}, findings=self.findings
        )

    def after_failure(
        self,
        failure: FailureContext,
        /,
        *,
        fingerprint: str = "",  # noqa: ARG002 -- the port's signature
        files_changed: Sequence[str] | None = None,  # noqa: ARG002
        output_chars: int | None = None,  # noqa: ARG002
    ) -> AttemptCheck:
        """Return the fixed findings and the fixed nudge of the failure's subtask."""
        self.asked.append(("failure", failure.subtask_id))
        return AttemptCheck(findings=self.findings, nudge=self.nudges.get(failure.subtask_id, ""))
