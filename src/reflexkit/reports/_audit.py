"""What the retry loop does around each attempt for reports and the completion judge (#18).

:class:`AttemptAudit` bundles the reporter and the judge behind :meth:`~AttemptAudit.start`,
:meth:`~AttemptAudit.judge` and :meth:`~AttemptAudit.finish`; none raises, and a failed judge
is taken as no objection.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from reflexkit.reports._judge import CompletionJudge, JudgeInput, Judgement, read_instructions
from reflexkit.reports._report import (
    AttemptReporter,
    ReportIds,
    Verification,
    diff_text,
    head_commit,
    safe_id,
)
from reflexkit.tasks._config import LoadedProject

__all__ = ["AttemptAudit", "AuditedAttempt"]

log = logging.getLogger("reflexkit.orchestrator")

_GIT_TIMEOUT_S = 20.0


@attrs.frozen(kw_only=True)
class AuditedAttempt:
    """One attempt as the audit sees it.

    Attributes:
        workdir: The working tree the agent changes.
        base: The commit the attempt started from (``None`` outside a git repository).
        prompt_section: What the attempt's prompt gets to ask for a self-report (``""``
            when reports are off).
    """

    workdir: Path
    base: str | None
    prompt_section: str
    reporter: AttemptReporter = attrs.field(repr=False)


class AttemptAudit:
    """Reports and the completion judge around each attempt of the retry loop; never raises.

    Args:
        project: The validated project; its ``reports``, ``risk`` and instructions
            (``AGENTS.md`` / ``CLAUDE.md`` in its root) are used.
        judge: The completion judge, or ``None`` when ``verification.judge`` is ``off``.
        agent: The agent's name in the reports (``claude-code``, ``command`` ...).
    """

    def __init__(
        self,
        project: LoadedProject,
        *,
        judge: CompletionJudge | None = None,
        agent: str = "unknown",
    ) -> None:
        self.project = project
        self.judge_ = judge
        self.agent = str(agent)
        self._unwritten: set[str] = set()  # why reports were not written: each said once

    def __repr__(self) -> str:
        return f"AttemptAudit(reports={self.project.config.reports.enabled}, judge={self.judge_!r})"

    def start(self, workdir: Path, *, own_self_report: str | None = None) -> AuditedAttempt:
        """Before an attempt: note its starting commit and clear a stale self-report.

        Args:
            workdir: The working tree the agent changes.
            own_self_report: A subtask id when subtasks run in parallel in one folder: the
                agent is then asked for ``<selfReportPath stem>-<id>.json`` instead, so two
                running subtasks never take (or delete) each other's self-report.
        """
        project = self.project
        if own_self_report is not None:
            reports = project.config.reports
            path = PurePosixPath(reports.self_report_path)
            own = path.with_name(f"{path.stem}-{safe_id(own_self_report)}{path.suffix}")
            project = attrs.evolve(
                project,
                config=attrs.evolve(
                    project.config, reports=attrs.evolve(reports, self_report_path=str(own))
                ),
            )
        reporter = AttemptReporter(project, workdir=workdir, said=self._unwritten)
        base: str | None = None
        try:
            base = reporter.start()
            if base is None and self.judge_ is not None:
                base = head_commit(workdir)  # the judge needs the diff even with reports off
            section = reporter.prompt_section()
        except Exception:
            log.warning("preparing the attempt report failed; going on", exc_info=True)
            section = ""
        return AuditedAttempt(workdir=workdir, base=base, prompt_section=section, reporter=reporter)

    def judge(
        self,
        audited: AuditedAttempt,
        *,
        subtask: str,
        last_message: str,
        checks_passed: bool | None,
        budget_s: float | None = None,
    ) -> Judgement | None:
        """Ask the completion judge about an attempt whose checks passed (or had none).

        Args:
            audited: The attempt, from :meth:`start`.
            subtask: The subtask's prompt.
            last_message: The agent's last message.
            checks_passed: ``True`` when checks ran and passed, ``None`` when there were none.
            budget_s: The time left in the run's budget (``None``: no run budget); the diff
                and the judge share it.

        Returns:
            The judgement, or ``None`` when there is no judge (or it broke its promise never
            to raise, which is logged).
        """
        if self.judge_ is None:
            return None
        deadline = time.monotonic() + budget_s if budget_s is not None else None
        try:
            diff = diff_text(
                audited.workdir,
                base=audited.base or "HEAD",
                timeout_s=min(_GIT_TIMEOUT_S, max(budget_s, 0.1)) if budget_s is not None else None,
            )
            judgement = self.judge_.judge(
                JudgeInput(
                    subtask=subtask,
                    diff=diff,
                    last_message=last_message,
                    instructions=read_instructions(self.project.root),
                    checks_passed=checks_passed,
                    budget_s=deadline - time.monotonic() if deadline is not None else None,
                )
            )
        except Exception:
            log.exception("the completion judge raised; the attempt is judged by its checks")
            return None
        if judgement.error is not None:
            log.warning(
                "the completion judge (%s) gave no verdict (%s): %s; the attempt is judged by "
                "its checks",
                judgement.source,
                judgement.error,
                judgement.detail,
            )
        return judgement

    def finish(
        self,
        audited: AuditedAttempt,
        ids: ReportIds,
        verification: Verification,
        *,
        agent: str | None = None,
    ) -> dict[str, Any] | None:
        """After an attempt, passed or not: write its report (``None`` when reports are off).

        Args:
            audited: The attempt, from :meth:`start`.
            ids: Run, task, subtask and attempt.
            verification: How the checks, the judge and the ending went.
            agent: The subagent that ran the attempt (the loop knows it: ``reflexkit run
                --subagent`` may differ from the configured one); this audit's ``agent``
                when ``None``.
        """
        try:
            return audited.reporter.finish(
                attrs.evolve(ids, agent=agent or self.agent),
                base=audited.base,
                verification=verification,
            )
        except Exception:
            log.warning("the attempt report was not written", exc_info=True)
            return None
