"""What is said about an attempt: its report, risk floor, completion judge, ending, calibration.

The retry loop and the hooks both use these (docs/reports.md); they sit beside
:mod:`reflexkit.insights`, below :mod:`reflexkit.orchestrator`. The public names load on
first use, so the judge's Claude client is not imported with the report writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.reports._audit import AttemptAudit
    from reflexkit.reports._calibration import Calibration, calibrate, calibrate_pairs, read_labels
    from reflexkit.reports._ending import AttemptEnding, Ending, classify_ending
    from reflexkit.reports._history import git_history
    from reflexkit.reports._judge import (
        ClaudeJudge,
        CompletionJudge,
        FixtureJudge,
        HeuristicJudge,
        JudgeInput,
        Judgement,
        Verdict,
    )
    from reflexkit.reports._outcomes import detectability
    from reflexkit.reports._report import (
        AttemptReporter,
        build_report,
        git_changes,
        read_reports,
        report_schema,
        self_report_instructions,
        take_self_report,
        write_report,
    )
    from reflexkit.reports._risk import RiskVerdict, evaluate_risk

__all__ = [
    "AttemptAudit",
    "AttemptEnding",
    "AttemptReporter",
    "Calibration",
    "ClaudeJudge",
    "CompletionJudge",
    "Ending",
    "FixtureJudge",
    "HeuristicJudge",
    "JudgeInput",
    "Judgement",
    "RiskVerdict",
    "Verdict",
    "build_report",
    "calibrate",
    "calibrate_pairs",
    "classify_ending",
    "detectability",
    "evaluate_risk",
    "git_changes",
    "git_history",
    "read_labels",
    "read_reports",
    "report_schema",
    "self_report_instructions",
    "take_self_report",
    "write_report",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AttemptAudit": "_audit",
        "Calibration": "_calibration",
        "calibrate": "_calibration",
        "calibrate_pairs": "_calibration",
        "read_labels": "_calibration",
        "AttemptEnding": "_ending",
        "Ending": "_ending",
        "classify_ending": "_ending",
        "git_history": "_history",
        "ClaudeJudge": "_judge",
        "CompletionJudge": "_judge",
        "FixtureJudge": "_judge",
        "HeuristicJudge": "_judge",
        "JudgeInput": "_judge",
        "Judgement": "_judge",
        "Verdict": "_judge",
        "detectability": "_outcomes",
        "AttemptReporter": "_report",
        "build_report": "_report",
        "git_changes": "_report",
        "read_reports": "_report",
        "report_schema": "_report",
        "self_report_instructions": "_report",
        "take_self_report": "_report",
        "write_report": "_report",
        "RiskVerdict": "_risk",
        "evaluate_risk": "_risk",
    },
)
