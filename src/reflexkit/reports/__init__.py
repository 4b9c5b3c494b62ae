"""What is said about an attempt: its report, risk floor, completion judge, ending, calibration.

The retry loop and the hooks both use these (docs/reports.md); they sit beside
:mod:`reflexkit.insights`, below :mod:`reflexkit.orchestrator`. The public names load on
first use, so the judge's Claude client is not imported with the report writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.reports.audit import AttemptAudit
    from reflexkit.reports.calibration import Calibration, calibrate
    from reflexkit.reports.ending import AttemptEnding, Ending, classify_ending
    from reflexkit.reports.judge import (
        ClaudeJudge,
        CompletionJudge,
        FixtureJudge,
        HeuristicJudge,
        Judgement,
        Verdict,
    )
    from reflexkit.reports.report import AttemptReporter, read_reports
    from reflexkit.reports.risk import RiskVerdict, evaluate_risk

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
    "Judgement",
    "RiskVerdict",
    "Verdict",
    "calibrate",
    "classify_ending",
    "evaluate_risk",
    "read_reports",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AttemptAudit": "audit",
        "Calibration": "calibration",
        "calibrate": "calibration",
        "AttemptEnding": "ending",
        "Ending": "ending",
        "classify_ending": "ending",
        "ClaudeJudge": "judge",
        "CompletionJudge": "judge",
        "FixtureJudge": "judge",
        "HeuristicJudge": "judge",
        "Judgement": "judge",
        "Verdict": "judge",
        "AttemptReporter": "report",
        "read_reports": "report",
        "RiskVerdict": "risk",
        "evaluate_risk": "risk",
    },
)
