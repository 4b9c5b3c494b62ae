"""What the retry loop asks the reports package, and when (docs/reports.md, #18).

Before an attempt: the judge's last rejection and the self-report request join the prompt.
After it: how it ended, the completion judge's judgement of checked work, the attempt's
report and, when the risk floor says so, the ``needs_review`` figures. The loop emits the
events; these steps only answer, and a failing classifier never fails the attempt.
"""

from __future__ import annotations

import logging
from pathlib import Path

from reflexkit._text import fence
from reflexkit.events import EventData
from reflexkit.orchestrator.subagents import Subagent, SubagentResult
from reflexkit.orchestrator.verify import VerificationResult
from reflexkit.reports.audit import AttemptAudit, AuditedAttempt, judge_summary
from reflexkit.reports.ending import AttemptEnding, Ending, classify_ending
from reflexkit.reports.judge import Judgement
from reflexkit.reports.report import ReportIds, Verification

__all__ = [
    "NOT_CLASSIFIED",
    "agent_name",
    "audit_finish",
    "audit_start",
    "ending_of",
    "judge",
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


def judge(  # noqa: PLR0913 -- the judge's inputs
    audit: AttemptAudit | None,
    audited: AuditedAttempt | None,
    subtask: str,
    last_message: str,
    *,
    checked: bool,
    budget_s: float | None,
) -> Judgement | None:
    """The judge's judgement of checked work, within the time left in the run's budget."""
    if audit is None or audited is None:
        return None
    return audit.judge(
        audited,
        subtask=subtask,
        last_message=last_message,
        checks_passed=True if checked else None,
        budget_s=budget_s,
    )


def audit_finish(  # noqa: PLR0913 -- the report's facts
    audit: AttemptAudit | None,
    audited: AuditedAttempt | None,
    ids: tuple[str, str, str, int],
    *,
    agent: str,
    checks: VerificationResult,
    ending: AttemptEnding,
    judgement: Judgement | None = None,
) -> EventData | None:
    """After an attempt: write its report; the ``needs_review`` figures when the floor says so.

    *ids* are the run, task and subtask ids and the attempt number.
    """
    if audit is None or audited is None:
        return None
    run_id, task_id, subtask_id, attempt = ids
    nobody_checked = checks.passed and checks.command == "" and checks.exit_code is None
    report = audit.finish(
        audited,
        ReportIds(run_id=run_id, subtask_id=subtask_id, attempt=attempt, task_id=task_id),
        agent=agent,
        verification=Verification(
            passed=None if nobody_checked else checks.passed,
            command=checks.command or None,
            exit_code=checks.exit_code,
            judge=judge_summary(judgement),
            ending=ending.kind.value,
        ),
    )
    risk = report.get("risk") if report is not None else None
    if not isinstance(risk, dict) or risk.get("needsReview") is not True:
        return None
    return {
        "surface": str(risk.get("surface")),
        "score": float(risk.get("score") or 0.0),
        "reason": str(risk.get("reason")),
    }


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
