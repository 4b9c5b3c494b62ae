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
        "_audit": ("AttemptAudit",),
        "_calibration": ("Calibration", "calibrate", "calibrate_pairs", "read_labels"),
        "_ending": ("AttemptEnding", "Ending", "classify_ending"),
        "_history": ("git_history",),
        "_judge": (
            "ClaudeJudge",
            "CompletionJudge",
            "FixtureJudge",
            "HeuristicJudge",
            "JudgeInput",
            "Judgement",
            "Verdict",
        ),
        "_outcomes": ("detectability",),
        "_report": (
            "AttemptReporter",
            "build_report",
            "git_changes",
            "read_reports",
            "report_schema",
            "self_report_instructions",
            "take_self_report",
            "write_report",
        ),
        "_risk": ("RiskVerdict", "evaluate_risk"),
    },
)
