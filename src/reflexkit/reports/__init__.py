"""What is said about an attempt: its report, risk floor, completion judge, ending, calibration.

The retry loop and the hooks both use these (docs/reports.md); they sit beside
:mod:`reflexkit.insights`, below :mod:`reflexkit.orchestrator`. The public names load on
first use, so the judge's Claude client is not imported with the report writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.reports._audit import AttemptAudit as AttemptAudit
    from reflexkit.reports._calibration import (
        Calibration as Calibration,
        calibrate as calibrate,
        calibrate_pairs as calibrate_pairs,
        read_labels as read_labels,
    )
    from reflexkit.reports._ending import (
        AttemptEnding as AttemptEnding,
        Ending as Ending,
        classify_ending as classify_ending,
    )
    from reflexkit.reports._history import git_history as git_history
    from reflexkit.reports._judge import (
        ClaudeJudge as ClaudeJudge,
        CompletionJudge as CompletionJudge,
        FixtureJudge as FixtureJudge,
        HeuristicJudge as HeuristicJudge,
        JudgeInput as JudgeInput,
        Judgement as Judgement,
        Verdict as Verdict,
    )
    from reflexkit.reports._outcomes import detectability as detectability
    from reflexkit.reports._report import (
        AttemptReporter as AttemptReporter,
        build_report as build_report,
        git_changes as git_changes,
        read_reports as read_reports,
        report_schema as report_schema,
        self_report_instructions as self_report_instructions,
        take_self_report as take_self_report,
        write_report as write_report,
    )
    from reflexkit.reports._risk import RiskVerdict as RiskVerdict, evaluate_risk as evaluate_risk

__getattr__, __dir__, __all__ = lazy_exports(
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
