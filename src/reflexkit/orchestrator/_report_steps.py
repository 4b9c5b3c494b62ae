"""The reports package around the retry loop (docs/reports.md, #18): two steps, one subscriber.

The steps change the attempt: the judge's last rejection and the self-report request join the
prompt (:func:`audit_start`), and the judge's rejection of checked work fails it. The
subscriber, :class:`AttemptReports`, changes nothing: it writes each attempt's report from the
event that ends it and emits ``needs_review`` when the risk floor says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from reflexkit._text import fence
from reflexkit.events import Event, EventData, EventKind
from reflexkit.orchestrator._subagents import Subagent, SubagentResult
from reflexkit.orchestrator._verify import VerificationResult
from reflexkit.reports._audit import AttemptAudit, AuditedAttempt
from reflexkit.reports._ending import AttemptEnding, Ending, classify_ending
from reflexkit.reports._judge import Judgement
from reflexkit.reports._report import JudgeSummary, ReportIds, Verification

__all__ = [
    "NOT_CLASSIFIED",
    "AttemptReports",
    "agent_name",
    "attempt_facts",
    "audit_start",
    "ending_of",
    "judge_figures",
    "judge_rejection",
    "waits_for_user",
]

log = logging.getLogger("reflexkit.orchestrator")

NOT_CLASSIFIED = AttemptEnding(kind=Ending.COMPLETED, reason="not classified")


def ending_of(result: SubagentResult) -> AttemptEnding:
    """How the agent ended its attempt (completed, waiting for the user, an error)."""
    try:
        return classify_ending(result.output, is_error=not result.ok)
    except Exception:
        log.warning("classifying how the attempt ended failed", exc_info=True)
        return NOT_CLASSIFIED


def waits_for_user(ending: AttemptEnding) -> bool:
    """The agent ended on a question to the user."""
    return ending.kind is Ending.WAITING_FOR_USER


def audit_start(
    audit: AttemptAudit | None,
    workdir: Path,
    prompt: str,
    judged: Judgement | None,
    *,
    own_self_report: str | None,
) -> tuple[AuditedAttempt | None, str]:
    """Before an attempt: the judge's last rejection and the self-report request."""
    if judged is not None:
        feedback = fence(judged.retry_feedback())
        prompt = f"{prompt}\n\n## The completion judge on the previous attempt\n\n{feedback}"
    if audit is None:
        return None, prompt
    audited = audit.start(workdir, own_self_report=own_self_report)
    if audited.prompt_section:
        prompt = f"{prompt}\n\n{audited.prompt_section}"
    return audited, prompt


def attempt_facts(checks: VerificationResult, ending: AttemptEnding) -> EventData:
    """What the event that ends an attempt says of it: how the agent ended, what checks said.

    ``checksPassed`` is ``None`` when nothing checked (no commands: every finished attempt
    passes); ``checksCommand`` is ``subagent`` when the agent itself failed.
    """
    nobody_checked = checks.passed and checks.command == "" and checks.exit_code is None
    return {
        "ending": ending.kind.value,
        "checksPassed": None if nobody_checked else checks.passed,
        "checksCommand": checks.command or None,
        "checksExitCode": checks.exit_code,
    }


_ATTEMPT_ENDS = frozenset({EventKind.PASSED, EventKind.VERIFICATION_FAILED, EventKind.NEEDS_INPUT})

Emit = Callable[[EventKind, str, int, EventData], None]


class AttemptReports:
    """Writes each attempt's report when the event that ends the attempt comes by.

    The loop hands it every event before its subscribers and outside their lock: parallel
    subtasks write their reports at once, and the ``needs_review`` it emits reaches every
    subscriber right before the event that ends its attempt. The loop's
    step :func:`audit_start` hands each attempt over (:meth:`started`); the run's and task's
    ids come from ``run_started``.

    Args:
        audit: Writes the reports.
        agent: The subagent's name in the reports.
        emit: Writes one event (kind, subtask id, attempt, data): ``needs_review``.
    """

    def __init__(self, audit: AttemptAudit, *, agent: str, emit: Emit) -> None:
        self._audit = audit
        self._agent = agent
        self._emit = emit
        self._run = ("", "")  # the run's and the task's ids
        self._open: dict[tuple[str, int], AuditedAttempt] = {}

    def started(self, subtask_id: str, attempt: int, audited: AuditedAttempt | None) -> None:
        """The attempt's audit record, from :func:`audit_start`."""
        if audited is not None:
            self._open[subtask_id, attempt] = audited

    def __call__(self, event: Event) -> None:
        """Write the report of the attempt *event* ends (other events: only the run's ids)."""
        if event.kind is EventKind.RUN_STARTED:
            self._run = (str(event.data.get("runId", "")), str(event.data.get("taskId", "")))
            self._open.clear()
            return
        if event.kind not in _ATTEMPT_ENDS:
            return
        audited = self._open.pop((event.subtask_id, event.attempt), None)
        if audited is None:
            return
        run_id, task_id = self._run
        report = self._audit.finish(
            audited,
            ReportIds(
                run_id=run_id, subtask_id=event.subtask_id, attempt=event.attempt, task_id=task_id
            ),
            agent=self._agent,
            verification=_verification(event),
        )
        risk = report.get("risk") if report is not None else None
        if isinstance(risk, dict) and risk.get("needsReview") is True:
            review: EventData = {
                "surface": str(risk.get("surface")),
                "score": float(risk.get("score") or 0.0),
                "reason": str(risk.get("reason")),
            }
            self._emit(EventKind.NEEDS_REVIEW, event.subtask_id, event.attempt, review)


def _verification(event: Event) -> Verification:
    """A report's verification, from the facts of the event that ended the attempt."""
    data = event.data
    passed, command = data.get("checksPassed"), data.get("checksCommand")
    code = data.get("checksExitCode")
    severity, source = data.get("judgeSeverity"), data.get("judge")
    return Verification(
        passed=passed if isinstance(passed, bool) else None,
        command=command if isinstance(command, str) else None,
        exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
        # A verdict in a passed event said complete (else it rejected: a failure).
        judge=JudgeSummary(
            complete=event.kind is EventKind.PASSED, severity=str(severity), source=str(source)
        )
        if severity is not None
        else None,
        ending=str(data.get("ending", NOT_CLASSIFIED.kind.value)),
    )


def agent_name(subagent: Subagent) -> str:
    """The subagent's ``name`` (``command``, ``claude-code`` ...), else its class name."""
    name = getattr(subagent, "name", None)
    return name if isinstance(name, str) and name else type(subagent).__name__


def judge_rejection(judgement: Judgement, checks: VerificationResult) -> VerificationResult:
    """A passed verification turned into the failure the judge's rejection is."""
    return VerificationResult(
        passed=False,
        command="completion judge",
        exit_code=None,
        output=judgement.retry_feedback(),
        duration_ms=checks.duration_ms + judgement.latency_ms,
    )


def judge_figures(judgement: Judgement | None) -> EventData:
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
