"""unittest's output: FAIL and ERROR blocks, their tracebacks and the ``FAILED (...)`` summary."""

from __future__ import annotations

import re

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    clip,
)
from reflexkit.readers._pattern import Pattern
from reflexkit.readers._python_traceback import MISSING_HINT_CLASSES, find_traceback

__all__ = ["parse_unittest"]

M = re.MULTILINE


_UT_HEADER = Pattern(r"^(?P<kind>FAIL|ERROR): (?P<name>\S+) \((?P<where>[^)]*)\)(?P<rest>.*)$", M)
_UT_SEP = Pattern(r"^-{40,}$", M)
_UT_SUMMARY = Pattern(r"^(?P<sum>FAILED \([^)]*\))$", M)
_UT_RAN = Pattern(r"^Ran \d+ tests? in ", M)
_FACT_ROOM = 350
"""A fact's length the heuristic quotes whole (its limit is 300 characters)."""
_MIN_EXCEPTION = 60


def parse_unittest(text: str, *, command: str = "") -> Findings | None:
    """Recognise unittest's output: FAIL/ERROR blocks with their traceback and summary.

    Args:
        text: The cleaned output.
        command: The command line. Other runners print unittest's format (nose2, Django's
            ``manage.py test``, green): unittest is named, and its command advised, only
            when the command line runs it (or says nothing).
    """
    headers = list(_UT_HEADER.finditer(text))
    if not headers or not (_UT_RAN.search(text) or _UT_SUMMARY.search(text)):
        return None
    findings = Findings(tool="unittest", failure_type=FailureType.TEST_FAILURE)
    classes: list[str] = []
    seen: set[str] = set()
    for index, head in enumerate(headers):
        if index >= MAX_BLOCKS:
            break
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        block = text[head.end() : end]
        sep = _UT_SEP.search(block)
        block = block[sep.end() :] if sep else block
        stop = _UT_SEP.search(block) or re.search(r"^={40,}$", block, M)
        block = block[: stop.start()] if stop else block
        tb = find_traceback(block)
        header = head.group(0).strip()
        where = head["where"]
        test_id = where if where.endswith("." + head["name"]) else f"{where}.{head['name']}"
        findings.tests.append(test_id if head["name"] != "setUpClass" else header)
        if tb:
            classes.append(tb.cls)
            where = f" (at {tb.frame})" if tb.frame else ""
            head_text = clip(header, 130)
            # A long assertion message (assertDictEqual's diff) is clipped, never the frame.
            room = max(_MIN_EXCEPTION, min(240, _FACT_ROOM - len(head_text) - len(where) - 2))
            said = clip(tb.exception, room)
            if said in seen:  # one message failing many tests: quoted once, named for each
                said = f"the same {tb.cls.rsplit('.', 1)[-1]} as above"
            seen.add(clip(tb.exception, room))
            findings.facts.append(f"{head_text}: {said}{where}")
        else:
            findings.facts.append(clip(header, 130))
    summary = _UT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    ran_unittest = not command or "unittest" in command
    findings.headline = (
        f"{'unittest' if ran_unittest else 'The test run'} reported {len(headers)} failing "
        f"test{'s' if len(headers) != 1 else ''}."
    )
    if any(c.rsplit(".", 1)[-1] in MISSING_HINT_CLASSES for c in classes):
        findings.category = ReflectionCategory.MISSING_CONTEXT
        findings.advice = (
            "A test needs a file or module that is not there when the tests run: create the "
            "fixture file or build its path from the test module's location "
            "(`Path(__file__).parent / ...`) instead of the current directory."
        )
    else:
        findings.advice = (
            "For each FAIL, the AssertionError shows the value the code produced against the "
            "expected one; for each ERROR, the exception names the broken call. Fix the code "
            "under test at the frames named, then run the tests again."
        )
    first = findings.tests[0] if findings.tests and "(" not in findings.tests[0] else ""
    if first and ran_unittest:
        findings.steps.append(f"Run one failing test alone: `python -m unittest {first}`.")
    elif first:
        findings.steps.append(f"Run one failing test alone with the same runner: `{first}`.")
    findings.steps.append("Re-run the whole test module to confirm every FAIL and ERROR is gone.")
    findings.confidence = 0.85
    return findings
