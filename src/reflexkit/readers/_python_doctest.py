"""The standard library's doctest runner: ``python -m doctest`` and ``doctest.testmod()``.

Each failure is a block between rows of asterisks: ``File "x.py", line N, in name``, the
failed example, then ``Expected:``/``Got:`` or ``Exception raised:`` with a traceback; the run
ends with ``***Test Failed*** N failures.``
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import MAX_BLOCKS, Findings, clip, plural
from reflexkit.readers._python_traceback import find_traceback

__all__ = ["parse_doctest"]

M = re.MULTILINE

_RULE = Pattern(r"^\*{20,}$", M)
_WHERE = Pattern(r'^File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)$', M)
_SECTION = Pattern(
    r"^Failed example:\n(?P<example>(?:[ \t]+.*\n)+?)"
    r"(?:Expected:\n(?P<expected>(?:[ \t]+.*\n)+?)|Expected nothing\n)?"
    r"(?P<how>Got:\n(?P<got>(?:[ \t]+.*\n?)+)|Got nothing|"
    r"Exception raised:\n(?P<exc>(?:[ \t]+.*\n?)+))",
    M,
)
_SUMMARY = Pattern(r"^\*\*\*Test Failed\*\*\* \d+ failures?\.$", M)


def _one_line(block: str | None) -> str:
    return " ".join((block or "").split())


def parse_doctest(text: str) -> Findings | None:
    """Recognise doctest's failure blocks and its ``***Test Failed***`` summary."""
    facts: list[str] = []
    names: list[str] = []
    for block in _RULE.split(text):
        where = _WHERE.search(block)
        section = _SECTION.search(block)
        if where is None or section is None:
            continue
        example = _one_line(section["example"])
        if section["exc"] is not None:
            tb = find_traceback(section["exc"].replace("\n    ", "\n"))
            outcome = f"raised {tb.exception}" if tb else _one_line(section["exc"])
        elif section["got"] is not None:
            outcome = (
                f"Expected: {_one_line(section['expected'])}, Got: {_one_line(section['got'])}"
            )
        else:
            outcome = f"Expected: {_one_line(section['expected'])}, Got nothing"
        names.append(where["name"])
        facts.append(clip(f"{where.group(0)}: {example}: {outcome}", 260))
        if len(facts) == MAX_BLOCKS:
            break
    if not facts:
        return None
    findings = Findings(
        tool="doctest",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.ROOT_CAUSE,
    )
    findings.facts = facts
    summary = _SUMMARY.search(text)
    findings.summary = summary.group(0) if summary else ""
    findings.headline = f"doctest reported {plural(len(facts), 'failing example')}."
    findings.advice = (
        "A docstring example no longer shows what the code returns: fix the function so it "
        "returns what the example expects, or update the example only if the documented "
        "behaviour was meant to change."
    )
    findings.steps.append(f"Re-run the examples of {names[0]} after the fix.")
    findings.confidence = 0.85
    return findings
