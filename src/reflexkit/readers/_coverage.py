"""Coverage gates: every test passed, but the coverage a run requires was not reached.

pytest-cov (``FAIL Required test coverage of 90% not reached``, coverage.py's ``Coverage
failure: total of 38 is less than fail-under=90``), jest (``Jest: "global" coverage threshold
for lines (90%) not met: 20%``) and vitest or nyc (``ERROR: Coverage for lines (20%) does not
meet global threshold (90%)``) fail a run whose tests all pass. The lesson is the tests that
are missing, not code to fix: the gate's lines are quoted with the least covered files of the
coverage table.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip, dedupe

__all__ = ["parse_coverage_gate"]

M = re.MULTILINE

_GATE = Pattern(
    r"^(?P<line>(?:FAIL |ERROR: )?(?:Required test coverage of [\d.]+% not reached.*"
    r"|Coverage failure: total of .*"
    r"|Jest: \".*?\" coverage threshold for .* not met.*"
    r"|Coverage for \w+ \([\d.]+%\) does not meet .*threshold.*))$",
    M,
)
_FAILING = Pattern(
    r"\b\d+ failed\b|^FAILED \(|^Tests:.*\b\d+ failed|\b\d+ errors? in |^not ok |✕|✖ fail", M
)
"""A test failed: the test runner's reader reads the output, not this one."""
_PY_ROW = Pattern(
    r"^(?P<row>(?P<file>\S+\.\w+)\s+\d+\s+\d+(?:\s+\d+\s+\d+)?\s+(?P<pct>\d+(?:\.\d+)?)%"
    r"(?:[ \t]+\S.*)?)$",
    M,
)
_JS_ROW = Pattern(
    r"^(?P<row>\s*(?P<file>[^\s|][^|]*?)\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|"
    r"\s*(?P<pct>[\d.]+)\s*\|.*)$",
    M,
)
_SUMMARY = Pattern(
    r"^[=\s]*(?P<sum>\d+ passed[^=\n]*?|Tests:\s+\d+ passed.*?|\s*Tests\s+\d+ passed.*?)[=\s]*$", M
)


def parse_coverage_gate(text: str) -> Findings | None:
    """Recognise a run that failed only its coverage threshold; None for anything else."""
    gates = dedupe(m["line"].strip() for m in _GATE.finditer(text))
    if not gates or _FAILING.search(text):
        return None
    rows = [
        (float(m["pct"]), clip(m["row"].strip(), 120), m["file"].strip())
        for pattern in (_PY_ROW, _JS_ROW)
        for m in pattern.finditer(text)
        if m["file"].strip() not in {"TOTAL", "All files", "Name", "File"}
    ]
    rows = [row for row in rows if row[0] < 100]  # noqa: PLR2004 -- fully covered files say nothing
    rows.sort(key=lambda row: row[0])
    tool = "jest" if "Jest: " in text else "pytest" if "test coverage" in text else "coverage"
    findings = Findings(
        tool=tool, failure_type=FailureType.TEST_FAILURE, category=ReflectionCategory.TEST_GAP
    )
    findings.headline = "Every test passed, but the run's coverage threshold was not reached."
    findings.facts = [*gates[:4], *(row for _, row, _ in rows[:3])]
    summary = _SUMMARY.search(text)
    findings.summary = summary["sum"].strip() if summary else ""
    least = [file for _, _, file in rows[:3]]
    findings.advice = (
        "Write tests for the uncovered lines (the coverage table lists them) of the files "
        "least covered; do not lower the threshold or exclude the files."
    )
    if least:
        findings.steps.append(f"Add tests that run the uncovered lines of {', '.join(least)}.")
    findings.steps.append("Re-run the same command with coverage to see the total rise.")
    findings.confidence = 0.8
    return findings
