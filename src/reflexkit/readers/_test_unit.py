"""Ruby's test-unit: each ``Failure:``/``Error:`` block between rules and the closing count.

test-unit prints a failing test between two rules of ``=``: ``Failure: test_x(TestCase)``,
the test's place (``/app/test/x.rb:326:in `test_x'``), the source around it (``  => 326:
…``), then the message (``<[1]> expected but was`` and the actual value on the next line,
then ``diff:``); an error is ``Error: test_x(TestCase): Class: message`` with its backtrace.
The run closes with ``520 tests, 4030 assertions, 1 failures, 0 errors, 0 pendings, …``.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["parse_test_unit"]

M = re.MULTILINE
_COUNT = Pattern(
    r"^(?P<line>\d+ tests, \d+ assertions, (?P<f>\d+) failures, (?P<e>\d+) errors, "
    r"\d+ pendings, \d+ omissions, \d+ notifications)$",
    M,
)
_BLOCK = Pattern(
    r"^(?P<kind>Failure|Error): (?P<test>\w[^\s(]*\([\w:]+\))(?::? ?(?P<error>[^\n]*))?\n"
    r"(?P<body>(?:(?!=====)[^\n]*\n){0,40})",
    M,
)
_PLACE = Pattern(r"^(?P<loc>\S+:\d+):in ")
_EXCERPT = Pattern(r"^ *(?:=> )?\d+:")
_TESTS = 6
_MESSAGE_LINES = 2
"""A failure's message: ``<expected> expected but was`` and the actual value below it."""


def parse_test_unit(text: str) -> Findings | None:
    """Recognise test-unit's failure and error blocks with its closing count."""
    count = _COUNT.search(text)
    if count is None or count["f"] == count["e"] == "0":
        return None
    blocks = list(_BLOCK.finditer(text))
    if not blocks:
        return None
    findings = Findings(tool="test-unit", failure_type=FailureType.TEST_FAILURE)
    findings.facts = [_block_fact(block) for block in blocks[:_TESTS]]
    findings.tests = dedupe(block["test"] for block in blocks)
    findings.summary = count["line"]
    findings.evidence = count["line"]
    findings.headline = f"The Ruby test run reported {plural(len(findings.tests), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with its message (the expected value, then the actual "
        "one) and its place: fix the code under test so it holds; change the test only if "
        "it is wrong."
    )
    name = findings.tests[0].split("(", 1)[0]
    findings.steps.append(f"Run that test alone: add `--name={name}` to the same command.")
    findings.confidence = 0.85
    return findings


def _block_fact(block: re.Match[str]) -> str:
    """``test_x(TestCase)``: its message (or error) and the first place under it."""
    lines = block["body"].splitlines()
    place = next((m["loc"] for m in map(_PLACE.match, lines) if m is not None), "")
    said: list[str] = [clip(block["error"], 200)] if block["error"] else []
    if block["kind"] == "Error" and not said:  # the message on the line below the test's
        said = [clip(ln.strip(), 200) for ln in lines[:1] if ln.strip() and not _PLACE.match(ln)]
    if block["kind"] == "Failure":
        for line in lines:
            if not line.strip() or _PLACE.match(line) or _EXCERPT.match(line):
                continue
            if line.startswith("diff:") or len(said) >= _MESSAGE_LINES:
                break
            said.append(clip(line.strip(), 160))
    fact = block["test"] + (f": {'; '.join(said)}" if said else "")
    return fact + (f" at {place}" if place else "")
