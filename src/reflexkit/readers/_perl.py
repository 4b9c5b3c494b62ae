"""Perl's tests: Test::More's diagnostics and prove's (Test::Harness's) summary.

A Test::More test that fails prints, on stderr, ``#   Failed test 'name'`` and ``#   at
t/x.t line 47.`` (or ``#   Failed test at t/x.t line 47.`` when it has no name), then the
values under it (``#          got: '1'`` / ``#     expected: '2'``, or ``Structures begin
differing at:`` and the two paths). prove prints a row per file (``Dubious, test returned
6``), then ``Test Summary Report`` with each failing file, its ``Failed tests:  19-24``, and
``Files=N, Tests=M, …`` and ``Result: FAIL``. A file whose code does not compile dies before
any test: perl's ``syntax error at lib/X.pm line 9, near …`` and ``Compilation failed in
require at t/x.t line 6.`` say where.
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["parse_prove"]

M = re.MULTILINE
_FAILED_TEST = Pattern(
    r"^#\s+(?P<head>Failed (?:\(TODO\) )?test(?: '(?P<name>[^\n]*)'\n#\s+| )"
    r"(?P<at>at \S+ line \d+\.))$",
    M,
)
_DIAG = Pattern(r"^#\s{2,}(?P<line>\S[^\n]*)$")
_VALUE_WORDS = ("got:", "expected:", "$got", "$expected", "Structures begin", "doesn't match")
_FAILED_FILE = Pattern(r"^(?P<file>\S+) +\(Wstat: [^\n]*\)$", M)
_FAILED_LIST = Pattern(r"^ +(?P<line>(?:Failed tests|Parse errors|Non-zero exit status): [^\n]*)$")
_FILES = Pattern(r"^(?P<line>Files=\d+, Tests=\d+(?:, +\d+ wallclock secs)?)", M)
_RESULT = Pattern(r"^Result: FAIL$", M)
_LOOKS_LIKE = Pattern(r"^(?P<line># Looks like you failed \d+ tests? of \d+\.)$", M)
_PERL_ERROR = Pattern(
    r"^(?P<line>(?!#)\S[^\n]*? at (?P<file>\S+) line \d+(?:, (?:near|at) [^\n]*|\.))$", M
)
_DIED_IN = Pattern(
    r"^(?P<line>(?:Compilation failed in require|BEGIN failed--compilation "
    r"aborted) at \S+ line \d+\.)$",
    M,
)
_NOT_OK = Pattern(r"^ *(?P<line>not ok \d+ (?:- )?(?P<name>[^\n#]*?)) *$", M)
_TESTS = 6
_VALUES = 3


def parse_prove(text: str) -> Findings | None:
    """Recognise prove's summary or Test::More's own diagnostics of failing tests."""
    result = _RESULT.search(text)
    looks = _LOOKS_LIKE.search(text)
    failed = list(_FAILED_TEST.finditer(text))
    died = _DIED_IN.search(text)
    deaths = dedupe(m["line"] for m in _DIED_IN.finditer(text) if m["line"].startswith("Comp"))
    if result is None and looks is None:
        return None
    if not failed and died is None and "Test Summary Report" not in text:
        return None
    findings = Findings(tool="prove", failure_type=FailureType.TEST_FAILURE)
    not_ok = {m["name"]: m["line"] for m in _NOT_OK.finditer(text)}  # prove -v prints the TAP
    findings.facts = dedupe(_failed_fact(text, match, not_ok) for match in failed)[:_TESTS]
    if died is not None:
        findings.facts.append(_died_fact(text, died))
        findings.facts.extend(deaths[1:3])
    files = [m["file"] for m in _FAILED_FILE.finditer(text)]
    findings.tests = files or dedupe(m["at"].split()[1] for m in failed)
    findings.details = _summary_rows(text)
    counted = _FILES.search(text)
    findings.summary = counted["line"] if counted is not None else (looks["line"] if looks else "")
    findings.evidence = findings.summary or (result.group(0) if result else "")
    count = len(failed)
    findings.headline = (
        f"The Perl test run reported {plural(count, 'failing test')}"
        + (f" in {', '.join(findings.tests[:3])}." if findings.tests else ".")
        if count
        else "A Perl test file died before its tests ran."
    )
    findings.advice = (
        "Each failing test is quoted with its line and the values Test::More compared: fix the "
        "code under test so it holds; change the test only if it is wrong."
        if count
        else "The code a test file loads does not compile: fix the first error perl names "
        "(the later ones follow from it), then re-run the file."
    )
    if findings.tests:
        findings.steps.append(f"Run the file alone: `perl -Ilib {findings.tests[0]}`.")
    findings.confidence = 0.85
    return findings


def _failed_fact(text: str, match: re.Match[str], not_ok: dict[str, str]) -> str:
    """``Failed test 'name' at t/x.t line 4.`` with the values printed under it.

    Under ``prove -v`` the test's own TAP line (``not ok 2 - name``) leads it.
    """
    head = f"Failed test '{match['name']}' {match['at']}" if match["name"] else match["head"]
    if match["name"] in not_ok:
        head = f"{not_ok[match['name']]}: {head}"
    values: list[str] = []
    for line in text[match.end() + 1 :].splitlines()[:8]:
        diag = _DIAG.match(line)
        if diag is None or diag["line"].startswith(("Failed ", "Looks like")):
            break
        if any(word in diag["line"] for word in _VALUE_WORDS) and len(values) < _VALUES:
            values.append(clip(diag["line"], 160))
    return head + (f" ({'; '.join(values)})" if values else "")


def _died_fact(text: str, died: re.Match[str]) -> str:
    """The first error perl printed before a test file died, with where it was required."""
    first = _PERL_ERROR.search(text)
    said = clip(first["line"], 200) if first is not None and first.start() < died.start() else ""
    return f"{said}; {died['line']}" if said and said != died["line"] else died["line"]


def _summary_rows(text: str) -> list[str]:
    """Each failing file's row of the summary report with its failed tests."""
    rows: list[str] = []
    start = text.find("Test Summary Report")
    if start < 0:
        return rows
    for line in text[start:].splitlines()[2:]:
        listed = _FAILED_LIST.match(line)
        if listed is not None:
            rows.append(clip(listed["line"], 160))
        elif line.startswith("Files="):
            break
        elif line.strip():
            rows.append(clip(line.strip(), 160))
    return rows[:8]
