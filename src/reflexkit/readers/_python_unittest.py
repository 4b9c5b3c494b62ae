"""unittest's output: FAIL and ERROR blocks, their tracebacks and the ``FAILED (...)`` summary."""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers._findings import (
    MAX_BLOCKS,
    Findings,
    clip,
)
from reflexkit.readers._python_traceback import MISSING_HINT_CLASSES, Traceback, find_traceback

__all__ = ["parse_unittest"]

M = re.MULTILINE


_UT_HEADER = Pattern(r"^(?P<kind>FAIL|ERROR): (?P<name>\S+) \((?P<where>[^)]*)\)(?P<rest>.*)$", M)
_UT_SEP = Pattern(r"^-{40,}$", M)
_UT_SUMMARY = Pattern(r"^(?P<sum>FAILED \([^)]*\))$", M)
_UT_RAN = Pattern(r"^Ran \d+ tests? in ", M)
_UT_BLOCK_END = Pattern(r"^={40,}$", M)
_UT_NONE_RAN = Pattern(r"^Ran 0 tests in [\d.]+s\n+NO TESTS RAN$", M)
"""unittest's verdict (Python 3.12 and later, exit code 5) when it found no test."""
_FIRST_FRAME = Pattern(r'^\s*(?P<frame>File "(?P<file>[^"\n]+)", line \d+, in \S+)$', M)
"""unittest's traceback starts at the test method's own frame."""
_CHAINED = Pattern(
    r"^(?:The above exception was the direct cause of the following exception|"
    r"During handling of the above exception, another exception occurred):$",
    M,
)
_TEST_FRAME = Pattern(r", in test")
"""A test method's frame (not the loader's, for a module that failed to import)."""
_IMPORT_CLASSES = frozenset({"ModuleNotFoundError", "ImportError"})
_NOT_A_TEST = "unittest.loader._FailedTest."
_NO_MODULE_NAMED = Pattern(r"No module named '(?P<mod>[^']+)'")
_NO_TEST_MODULE = "unittest.NoSuchTestModule"
"""The class the advice reads for a test module named on the command line that is not there."""
"""The id unittest gives a test module that failed to import (not a runnable test)."""
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
    if not headers and _UT_NONE_RAN.search(text):
        return _no_tests_findings()
    if not headers or not (_UT_RAN.search(text) or _UT_SUMMARY.search(text)):
        return None
    findings = Findings(tool="unittest", failure_type=FailureType.TEST_FAILURE)
    classes: list[str] = []
    seen: set[str] = set()
    for index, head in enumerate(headers[:MAX_BLOCKS]):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        cls = _read_block(head, _block_text(text[head.end() : end]), findings, seen)
        classes.extend([cls] if cls else [])
    summary = _UT_SUMMARY.search(text)
    findings.summary = summary["sum"] if summary else ""
    findings.category, findings.advice = _ADVICE[_advice_kind(classes)]
    _conclude(findings, len(headers), ran_unittest=not command or "unittest" in command)
    return findings


def _no_tests_findings() -> Findings:
    """Findings for a unittest run that found no test: nothing was checked."""
    return Findings(
        tool="unittest",
        failure_type=FailureType.TEST_FAILURE,
        category=ReflectionCategory.TOOL_MISUSE,
        headline="unittest ran no test: what it was given holds none it could find.",
        facts=["Ran 0 tests", "NO TESTS RAN"],
        advice="Nothing was checked: discovery looks for test*.py files in packages (folders "
        "with __init__.py) under the start folder; name the tests folder (`python -m unittest "
        "discover -s tests`) or a test module's dotted name, and check the -p pattern.",
        steps=["Run `python -m unittest discover -s <tests folder> -v` to see what it finds."],
        confidence=0.7,
    )


def _conclude(findings: Findings, count: int, *, ran_unittest: bool) -> None:
    """Set the headline and the steps: re-run the first test that can be run alone."""
    findings.headline = (
        f"{'unittest' if ran_unittest else 'The test run'} reported {count} failing "
        f"test{'s' if count != 1 else ''}."
    )
    runnable = [t for t in findings.tests if "(" not in t and not t.startswith(_NOT_A_TEST)]
    if runnable:
        findings.steps.append(
            f"Run one failing test alone: `python -m unittest {runnable[0]}`."
            if ran_unittest
            else f"Run one failing test alone with the same runner: `{runnable[0]}`."
        )
    findings.steps.append("Re-run the whole test module to confirm every FAIL and ERROR is gone.")
    findings.confidence = 0.85


def _block_text(block: str) -> str:
    """Return one FAIL/ERROR block's traceback: between its dashes and the next separator."""
    sep = _UT_SEP.search(block)
    block = block[sep.end() :] if sep else block
    stop = _UT_SEP.search(block) or _UT_BLOCK_END.search(block)
    return block[: stop.start()] if stop else block


def _read_block(head: re.Match[str], block: str, findings: Findings, seen: set[str]) -> str:
    """Add one failing test and its fact; return its exception's class (``""`` if none)."""
    header = head.group(0).strip()
    where = head["where"]
    test_id = where if where.endswith("." + head["name"]) else f"{where}.{head['name']}"
    findings.tests.append(test_id if head["name"] != "setUpClass" else header)
    tb = find_traceback(block)
    head_text = clip(header, 130)
    if tb is None:
        findings.facts.append(head_text)
        return ""
    at = _where(block, tb, failed=head["kind"] == "FAIL", room=_FACT_ROOM - len(head_text))
    # A long assertion message (assertDictEqual's diff) is clipped, never the frame.
    room = max(_MIN_EXCEPTION, min(240, _FACT_ROOM - len(head_text) - len(at) - 2))
    said = clip(tb.exception, room)
    if said in seen:  # one message failing many tests: quoted once, named for each
        said = f"the same {tb.cls.rsplit('.', 1)[-1]} as above"
    seen.add(clip(tb.exception, room))
    findings.facts.append(f"{head_text}: {said}{at}")
    return _NO_TEST_MODULE if _names_no_module(head, tb.exception) else tb.cls


def _names_no_module(head: re.Match[str], exception: str) -> bool:
    """Return whether unittest was given a test module that does not exist (a typo, a path).

    The module it could not import is the one named on the command line: the failed test's
    own name is that module's last part (``No module named 'tests.test_calcs'``).
    """
    missing = _NO_MODULE_NAMED.search(exception)
    return (
        head["where"].startswith(_NOT_A_TEST)
        and missing is not None
        and missing["mod"].rsplit(".", 1)[-1] == head["name"]
    )


def _advice_kind(classes: list[str]) -> str:
    """Return which advice fits: ``misnamed``, ``import``, ``mixed``, ``missing`` or ``code``."""
    if _NO_TEST_MODULE in classes:
        return "misnamed"
    names = {c.rsplit(".", 1)[-1] for c in classes}
    if names & _IMPORT_CLASSES:
        return "import" if names <= _IMPORT_CLASSES else "mixed"
    return "missing" if names & MISSING_HINT_CLASSES else "code"


_ADVICE: dict[str, tuple[ReflectionCategory, str]] = {
    "misnamed": (
        ReflectionCategory.TOOL_MISUSE,
        (
            "unittest was given a test module that does not exist: check the dotted name "
            "against the files (a typo, a file path instead of a module, a folder without "
            "__init__.py), or run `python -m unittest discover -s <tests folder>`; no test ran."
        ),
    ),
    "import": (
        ReflectionCategory.MISSING_CONTEXT,
        (
            "A test module imports a package that is not installed where the tests ran: install "
            "the project's test dependencies (its requirements or `[test]` extra) in that "
            "environment, or run the tests where the project's package is importable; the code "
            "under test is not the problem."
        ),
    ),
    "mixed": (
        ReflectionCategory.ROOT_CAUSE,
        (
            "Two problems: a test module imports a package not installed where the tests ran "
            "(install the project's test dependencies there), and the other tests fail on the "
            "code: for each FAIL the AssertionError shows the value produced against the one "
            "expected; fix the code under test at the lines named."
        ),
    ),
    "missing": (
        ReflectionCategory.MISSING_CONTEXT,
        (
            "A test needs a file or module that is not there when the tests run: create the "
            "fixture file or build its path from the test module's location "
            "(`Path(__file__).parent / ...`) instead of the current directory."
        ),
    ),
    "code": (
        ReflectionCategory.ROOT_CAUSE,
        (
            "For each FAIL, the AssertionError shows the value the code produced against the "
            "expected one; for each ERROR, the exception names the broken call. Fix the code "
            "under test at the frames named, then run the tests again."
        ),
    ),
}


def _where(block: str, tb: Traceback, *, failed: bool, room: int) -> str:
    """Return `` (at frame)`` for one FAIL or ERROR block.

    A FAIL is located in the test's own file, at its innermost line there (the assertion it
    made, even when a helper of another module raised it); an ERROR where the code raised,
    with the test method's line when that is elsewhere and the exception still fits whole.
    """
    chained = list(_CHAINED.finditer(block))  # a chained error: its last section ended the test
    frames = list(_FIRST_FRAME.finditer(block, chained[-1].end() if chained else 0))
    first = frames[0] if frames and _TEST_FRAME.search(frames[0]["frame"]) else None
    if first is None:
        return f" (at {tb.frame})" if tb.frame else ""
    if failed:
        own = [f["frame"] for f in frames if f["file"] == first["file"]]
        return f" (at {own[-1]})"
    both = f" (at {tb.frame}; the test's line: {first['frame']})"
    if tb.frame and first["frame"] != tb.frame and len(both) + len(tb.exception) + 2 <= room:
        return both
    return f" (at {tb.frame})" if tb.frame else ""
