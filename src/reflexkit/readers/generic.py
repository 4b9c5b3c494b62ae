"""The generic reader: error-looking lines of output that no format's reader recognised."""

from __future__ import annotations

import re

from reflexkit.models import FailureType
from reflexkit.readers.findings import Findings, clip, dedupe

__all__ = ["parse_generic"]

_ERRORISH = re.compile(
    r"(?i)\b(?:error|fatal|failed|failure|exception|panic|cannot|can't|could not|not found|"
    r"denied|refused|invalid|missing|undefined)\b"
)


_GENERIC_WINDOW = 12_000


def parse_generic(text: str, exit_code: int | None) -> Findings:
    """Quote the error-looking lines of output no parser recognised (low confidence)."""
    window = (
        text
        if len(text) <= _GENERIC_WINDOW
        else text[: _GENERIC_WINDOW // 2] + "\n" + text[-_GENERIC_WINDOW // 2 :]
    )
    lines = [line.strip() for line in window.splitlines() if line.strip()]
    errorish = dedupe(line for line in lines if _ERRORISH.search(line))
    findings = Findings(tool="command", failure_type=FailureType.UNKNOWN)
    if errorish:
        findings.facts = [clip(line, 180) for line in errorish[:4]]
        findings.confidence = 0.35
    elif lines:
        findings.facts = [clip(line, 180) for line in lines[-2:]]
        findings.confidence = 0.2
    else:
        findings.confidence = 0.1
    code = f" with exit code {exit_code}" if exit_code is not None else ""
    findings.headline = f"The command failed{code}; its output is in no format reflexkit knows."
    findings.advice = (
        "Read the quoted lines and reproduce the failure with the same command before changing "
        "code; if the output is empty, re-run it with verbose output to see what failed."
    )
    return findings
