"""Ruby's minitest: its numbered ``Failure:`` and ``Error:`` blocks and the closing count.

minitest prints ``  1) Failure:``, then ``Class#test_name [test/x_test.rb:37]:`` (the test and
its place in brackets), then the message: ``Expected: …`` / ``  Actual: …``, or a diff
(``--- expected`` / ``+++ actual`` with ``-``/``+`` lines). An error is ``  1) Error:``,
``Class#test_name:``, ``Class: message`` and the backtrace, innermost first. The run closes
with ``26 runs, 55 assertions, 1 failures, 0 errors, 0 skips``.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["parse_minitest"]

M = re.MULTILINE
_COUNT = Pattern(
    r"^(?P<line>\d+ runs, \d+ assertions, (?P<f>\d+) failures, (?P<e>\d+) errors, \d+ skips)$", M
)
_BLOCK = Pattern(
    r"^ *\d+\) (?P<kind>Failure|Error):\n(?P<head>\S[^\n]*?):\n"
    r"(?P<body>(?:(?! *\d+\) )[^\n]*\n){0,40})",
    M,
)
_TEST = Pattern(r"^(?P<test>\S+#\S.*?)(?: \[(?P<place>[^\]\n]+)\])?$")
_FRAME = Pattern(r"^ +(?P<loc>\S+:\d+):in ")
_TEST_PATH = Pattern(r"(?:^|/)(?:test|spec)/|_test\.rb:|test_\w+\.rb:")
_LIBRARY = Pattern(r"/gems/|/lib/ruby/|<internal:")
_VALUES = 2
_TESTS = 6


def parse_minitest(text: str) -> Findings | None:
    """Recognise minitest's failure and error blocks with its closing count."""
    count = _COUNT.search(text)
    if count is None or count["f"] == count["e"] == "0":
        return None
    blocks = list(_BLOCK.finditer(text))
    if not blocks:
        return None
    findings = Findings(tool="minitest", failure_type=FailureType.TEST_FAILURE)
    findings.facts = [_block_fact(block) for block in blocks[:_TESTS]]
    findings.tests = dedupe(_test_of(block["head"]) for block in blocks)
    findings.summary = count["line"]
    findings.evidence = count["line"]
    findings.headline = f"The Ruby test run reported {plural(len(findings.tests), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with its expected and actual values (or its error) and "
        "its place: fix the code under test so it holds; change the test only if it is wrong."
    )
    name = findings.tests[0].split("#", 1)[-1]
    findings.steps.append(f"Run that test alone: add `-n {name}` to the same command.")
    findings.confidence = 0.85
    return findings


def _test_of(head: str) -> str:
    found = _TEST.match(head)
    return found["test"] if found is not None else head


def _block_fact(block: re.Match[str]) -> str:
    """The test as printed (with its bracketed place) and its values, diff or error."""
    lines = [line for line in block["body"].splitlines() if line.strip()]
    if block["kind"] == "Failure":
        said = _failure_message(lines)
        return block["head"] + (f": {'; '.join(said)}" if said else "")
    error = clip(lines[0].strip(), 200) if lines else ""
    frames = [f["loc"] for f in map(_FRAME.match, lines) if f is not None]
    own = [loc for loc in frames if not _LIBRARY.search(loc)]
    in_test = [loc for loc in own if _TEST_PATH.search(loc)]
    where = dedupe([*own[:1], *in_test[-1:]])
    return f"{block['head']}: {error}" + (f" at {', '.join(where)}" if where else "")


def _failure_message(lines: list[str]) -> list[str]:
    """``Expected:``/``Actual:`` lines, else a diff's first removed and added lines."""
    values = [ln.strip() for ln in lines if ln.strip().startswith(("Expected", "Actual"))]
    if values:
        return [clip(v, 200) for v in values[:_VALUES]]
    changed: list[str] = []
    for sign in "-+":
        first = next(
            (ln for ln in lines if ln.startswith(sign) and not ln.startswith(("---", "+++"))), ""
        )
        changed.extend([clip(first.rstrip(), 160)] if first else [])
    return changed or [clip(lines[0].strip(), 200)] if lines else []
