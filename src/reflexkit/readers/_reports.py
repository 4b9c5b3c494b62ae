"""Standard machine-readable reports, read as data: SARIF, JUnit XML, CTRF, cargo's JSON, TAP.

A check may print a report instead of text (``ruff --output-format=sarif``, ``cargo build
--message-format=json``), or write one to a file it names (a JUnit XML, a CTRF JSON).
:func:`report_as_text` reads such a report as data and writes it back as the lines readers
read: a diagnostic as ``file:line:col: level: message [rule]``, a failing test as ``FAIL:
name (suite)`` with its message and location under it and a closing ``N tests, N failures``
count, cargo's messages as the text rustc renders. :func:`read_report_files` reads the files
a failure names through the safe file layer (regular files only, no symbolic links, bounded).

TAP (the Test Anything Protocol: tape, node-tap, busted ``-o TAP``, prove, bats) is printed
as the run goes: :func:`parse_tap` reads its ``not ok`` lines with the YAML block or the
``#`` diagnostics under each, line by line, and keeps them verbatim (a TAP library would
hand back descriptions and values re-spelt, and the quotes must be as printed).

JUnit XML is parsed with ``defusedxml``: a report is input from the project, and the
standard library's parser expands entities a hostile file can declare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from reflexkit._files import read_regular
from reflexkit._pattern import Pattern
from reflexkit.models import FailureType
from reflexkit.readers._blocks import find_locations, is_library_path, location_path
from reflexkit.readers._findings import Findings, clip, dedupe, plural

__all__ = ["MAX_REPORT_BYTES", "parse_tap", "read_report_files", "report_as_text"]

MAX_REPORT_BYTES = 2 * 1024 * 1024
"""The most read of one report file."""
MAX_REPORTS = 4
"""The most report files read for one failure."""
MAX_REPORT_TEXT = 12_000
"""The most characters of text all reports of one failure become."""
_MAX_TESTS = 40
_MESSAGE_LINES = 4


def report_as_text(data: str) -> str | None:
    """Return a SARIF, JUnit XML, CTRF or cargo JSON report as text; ``None`` if it is none.

    Lines that are no part of a JSON-lines report (cargo's own ``error: could not
    compile``) are kept where they are. A TAP stream with failures is kept less its passing
    tests, so a long run's failures in the middle survive the cut to head and tail.
    """
    if "not ok " in data and _TAP_PROOF.search(data):
        return _tap_failures(data)
    head = data[:256].lstrip()  # the whole text is copied only for what may be a report
    if head.startswith("<"):
        return _junit(data.lstrip())
    if '"reason":"compiler-message"' in data or '"reason": "compiler-message"' in data:
        return _cargo(data)
    return _json_report(data) if head.startswith("{") else None


def _json_report(data: str) -> str | None:
    """A SARIF or CTRF report printed as the output, as text; ``None`` if it is neither."""
    try:
        report: object = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        return None
    if not isinstance(report, dict):
        return None
    return _sarif(report) or _ctrf(report)


def read_report_files(paths: Sequence[str], *, root: Path | None = None) -> str:
    """Read the report files a failure names and return them as text, bounded.

    Args:
        paths: The files, relative to *root* (the current folder by default).
        root: Where relative paths start, and the folder every report must lie in: a path
            out of it (absolute, ``..``, through a link) is named and not read.

    Returns:
        One section per report that could be read (``report junit.xml:`` and its text);
        a file that is missing, no regular file, a link or no report is named and skipped.
    """
    sections: list[str] = []
    folder = Path.cwd() if root is None else root
    for name in paths[:MAX_REPORTS]:
        try:
            raw = read_regular(name, limit=MAX_REPORT_BYTES, within=folder)
            data = raw.decode("utf-8", "replace")
        except OSError as error:
            sections.append(f"report {name}: not read ({error.strerror or error})")
            continue
        text = report_as_text(data)
        if text is None:
            sections.append(f"report {name}: not a report reflexkit reads")
            continue
        sections.append(f"report {name}:\n{text}")
    joined = "\n".join(sections)
    return joined if len(joined) <= MAX_REPORT_TEXT else joined[:MAX_REPORT_TEXT] + "\n…"


def _sarif(report: dict[str, Any]) -> str | None:
    """SARIF 2.1: each result as a linter's line, ``file:line:col: RULE message``."""
    runs = report.get("runs")
    if not isinstance(runs, list) or ("version" not in report and "$schema" not in report):
        return None
    out: list[str] = []
    for run in runs:
        results = run.get("results") if isinstance(run, dict) else None
        found = results if isinstance(results, list) else []
        out.extend(_sarif_result(result) for result in found if isinstance(result, dict))
    if not out:
        return None
    out.append(f"Found {len(out)} error{'' if len(out) == 1 else 's'}.")
    return "\n".join(out) + "\n"


def _sarif_result(result: dict[str, Any]) -> str:
    message = result.get("message")
    text = str(message.get("text", "")) if isinstance(message, dict) else ""
    level = str(result.get("level") or "warning")
    where = ""
    locations = result.get("locations")
    if isinstance(locations, list) and locations and isinstance(locations[0], dict):
        physical = locations[0].get("physicalLocation") or {}
        uri = str((physical.get("artifactLocation") or {}).get("uri", ""))
        region = physical.get("region") or {}
        where = uri.removeprefix("file://")
        if isinstance(region, dict) and region.get("startLine"):
            where += f":{region['startLine']}"
            if region.get("startColumn"):
                where += f":{region['startColumn']}"
    first = (text.splitlines() or [""])[0]
    rule = str(result.get("ruleId") or level)
    return f"{where}: {rule} {first}" if where else f"{rule} {first}"


def _ctrf(report: dict[str, Any]) -> str | None:
    """CTRF (``{"results": {"tool", "summary", "tests"}}``): failing tests and the count."""
    results = report.get("results")
    if not isinstance(results, dict) or not isinstance(results.get("tests"), list):
        return None
    out: list[str] = []
    tests = [t for t in results["tests"] if isinstance(t, dict)]
    failing = [t for t in tests if t.get("status") == "failed"]
    for test in failing[:_MAX_TESTS]:
        suite = test.get("suite")
        suite_text = " > ".join(suite) if isinstance(suite, list) else str(suite or "")
        name = str(test.get("name", ""))
        out.append(f"FAIL: {name}" + (f" ({suite_text})" if suite_text else ""))
        out.extend(_indented(test.get("message"), test.get("trace")))
        if test.get("filePath"):
            line = f":{test['line']}" if test.get("line") else ""
            out.append(f"  at {test['filePath']}{line}")
    summary = results.get("summary") if isinstance(results.get("summary"), dict) else {}
    total = summary.get("tests", len(tests)) if isinstance(summary, dict) else len(tests)
    out.append(f"{total} tests, {len(failing)} failures")
    return "\n".join(out) + "\n"


def _junit(xml: str) -> str | None:
    """JUnit XML: each failed or errored testcase, its message, and the closing count."""
    from defusedxml import ElementTree  # noqa: PLC0415 -- only a report pays for the import
    from defusedxml.common import DefusedXmlException  # noqa: PLC0415

    try:
        root = ElementTree.fromstring(xml)
    except (DefusedXmlException, SyntaxError, ValueError):
        return None
    if root.tag not in {"testsuites", "testsuite"}:
        return None
    out: list[str] = []
    total = failed = 0
    for case in root.iter("testcase"):
        total += 1
        problem = next((c for c in case if c.tag in {"failure", "error"}), None)
        if problem is None:
            continue
        failed += 1
        if failed > _MAX_TESTS:
            continue
        name, suite = case.get("name", ""), case.get("classname", "")
        verdict = "FAIL" if problem.tag == "failure" else "ERROR"
        out.append(f"{verdict}: {name}" + (f" ({suite})" if suite else ""))
        out.extend(_indented(problem.get("message"), problem.text))
        if case.get("file"):
            line = f":{case.get('line')}" if case.get("line") else ""
            out.append(f"  at {case.get('file')}{line}")
    if not total:
        return None
    out.append(f"{total} tests, {failed} failures")
    return "\n".join(out) + "\n"


def _indented(*texts: object) -> Iterable[str]:
    """The first lines of a message and its trace, indented under their test."""
    shown: list[str] = []
    for text in texts:
        if not isinstance(text, str):
            continue
        for line in text.strip().splitlines():
            if line.strip() and line.strip() not in shown:
                shown.append(line.strip())
    return [f"  {clip(line, 200)}" for line in shown[:_MESSAGE_LINES]]


def _cargo(data: str) -> str | None:
    """Cargo's ``--message-format=json``: each message's rendered text, other lines kept."""
    out: list[str] = []
    found = False
    for line in data.splitlines():
        if not line.startswith("{"):
            out.append(line)
            continue
        try:
            value: object = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            out.append(line)
            continue
        if not isinstance(value, dict):
            continue
        message = value.get("message")
        if value.get("reason") == "compiler-message" and isinstance(message, dict):
            found = True
            out.append(str(message.get("rendered") or message.get("message") or "").rstrip())
    return "\n".join(out) + "\n" if found else None


# --- TAP -------------------------------------------------------------------------------------

M = re.MULTILINE
_TAP_NOT_OK = Pattern(r"^(?P<indent>[ \t]*)(?P<line>not ok \d+\b.*?)[ \t]*$", M)
_TAP_PROOF = Pattern(r"^[ \t]*(?:TAP version \d+|1\.\.\d+|# (?:tests|fail|failed)\b)", M)
"""What says the stream is TAP: a version line, a plan, or a producer's closing count."""
_TAP_COUNT = Pattern(r"^# (?:tests|pass|fail|failed|skip|todo)\b[^\n]*$", M)
_TAP_OK = Pattern(r"ok \d+\b")
_TAP_NEXT = Pattern(r"^[ \t]*(?:(?:not )?ok \d+|1\.\.\d+|# (?:Subtest|tests|pass|fail)\b)")
_YAML_FIELD = Pattern(r"^(?P<key>[A-Za-z_][\w -]*):(?P<value>.*)$")
_QUOTED_FIELDS = ("message", "error", "expected", "actual", "wanted", "found", "got", "diff")
_BLOCK_SCALAR = frozenset({"", "|", "|-", "|+", ">", ">-", ">+"})
_CRASH_LINE = Pattern(r"^(?:[\w.$]*(?:Error|Exception)\b[^\n]*|Bail out!.*)$", M)
_TAP_BODY_LINES = 40
_TAP_TESTS = 6
_TAP_PARTS = 5
"""The first lines under a failing test that say what failed: message, values, diagnostics."""


def parse_tap(text: str) -> Findings | None:
    """Recognise a TAP stream with failing tests: each ``not ok`` line with what is under it.

    Under a failing test, a YAML block (``message``, ``expected``/``actual`` or
    ``wanted``/``found``, ``at``, ``stack``) or ``#`` diagnostics (busted's ``Failure
    message:``, prove's ``got:``/``expected:``); an error printed after the stream (the
    producer crashed) is kept beside them.
    """
    if "not ok " not in text or _TAP_PROOF.search(text) is None:
        return None
    failing = list(_TAP_NOT_OK.finditer(text))
    if not failing:
        return None
    lines = text.splitlines()
    starts = {m.start(): m for m in failing}
    offset = 0
    facts: list[str] = []
    tests: list[str] = []
    for index, line in enumerate(lines):  # one pass: each not-ok line's body is read once
        match = starts.get(offset)
        offset += len(line) + 1
        if match is None or len(facts) >= _TAP_TESTS:
            continue
        tests.append(match["line"])
        facts.append(_tap_fact(match["line"], lines[index + 1 : index + 1 + _TAP_BODY_LINES]))
    findings = Findings(tool="TAP", failure_type=FailureType.TEST_FAILURE)
    findings.tests = dedupe(tests)
    findings.facts = facts
    findings.summary = "; ".join(" ".join(m.group(0).split()) for m in _TAP_COUNT.finditer(text))
    findings.evidence = findings.summary or failing[0]["line"]
    crash = _after_the_stream(text, failing[-1].end())
    if crash:
        findings.details.append(crash)
    findings.headline = f"The TAP stream reported {plural(len(failing), 'failing test')}."
    findings.advice = (
        "Each failing test is quoted with what it expected and what it got (or the error it "
        "met): fix the code under test so each holds; change a test only if it is wrong."
    )
    findings.steps.append(f"Start with `{clip(tests[0], 100)}`, then re-run the suite.")
    findings.confidence = 0.8
    return findings


def _tap_failures(data: str) -> str:
    """A TAP stream less its passing tests and the titles over only passing tests."""
    kept: list[str] = []
    titles: list[str] = []  # comment lines waiting to see whether a failure follows
    failing = False
    for line in data.splitlines():
        bare = line.lstrip()
        if _TAP_OK.match(bare):
            titles.clear()
            failing = False
        elif bare.startswith("not ok "):
            kept.extend(titles)
            titles.clear()
            kept.append(line)
            failing = True
        elif bare.startswith("#") and not failing and not _TAP_COUNT.match(bare):
            titles.append(line)
        else:
            if not bare.startswith("#"):
                failing = failing and bool(bare)
            kept.extend(titles)
            titles.clear()
            kept.append(line)
    return "\n".join([*kept, *titles]) + "\n"


def _tap_fact(head: str, body: list[str]) -> str:
    """A failing test's line with its message, values and location from the lines under it."""
    parts: list[str] = []
    location = raised = ""
    depth = len(head) - len(head.lstrip())
    joined = -1
    for index, raw in enumerate(body):
        line = raw.strip()
        if line == "..." or (_TAP_NEXT.match(raw) and len(raw) - len(raw.lstrip()) <= depth):
            break  # the YAML block's end: comments after it title the next test
        if line.startswith("#") and index != joined:  # a producer's diagnostics: busted, prove
            line, joined = _diagnostic(line, body, index)
            if line and len(parts) < _TAP_PARTS:
                parts.append(clip(line, 120))
            continue
        field = _YAML_FIELD.match(line)
        if field is None:
            continue
        key, value = field["key"].strip(), field["value"].strip()
        if key == "stack":
            raised = _own_frame(body[index : index + 12], skip=location)
        elif key in {"at", "location", "file"} and not location:
            location = _own(value)
        elif key in _QUOTED_FIELDS and len(parts) < _TAP_PARTS:
            part = _quoted_field(line, key, value, body[index + 1 : index + 1 + _TAP_BODY_LINES])
            parts.extend([part] if part else [])
    fact = head + (f" ({'; '.join(dedupe(parts))})" if parts else "")
    fact += f" at {location}" if location else ""
    return fact + (f", raised at {raised}" if raised and raised != location else "")


def _quoted_field(line: str, key: str, value: str, below: list[str]) -> str:
    """A field's line as printed (a block scalar's first line below it; a diff's changes)."""
    if key == "diff" and value in _BLOCK_SCALAR:
        changed = _changed_lines(below)
        return clip(f"diff: {'; '.join(changed)}", 160) if changed else ""
    if value in _BLOCK_SCALAR and below:
        line = f"{key}: {below[0].strip()}"
    return clip(line, 120)


def _changed_lines(block: list[str]) -> list[str]:
    """A diff block's first removed and first added line (``-  "a": 1``), not its headers."""
    removed = added = ""
    for raw in block:
        line = raw.strip()
        if line == "..." or _YAML_FIELD.match(line):
            break
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-") and not removed:
            removed = line
        elif line.startswith("+") and not added:
            added = line
    return [change for change in (removed, added) if change]


def _own_frame(stack: list[str], *, skip: str) -> str:
    """The first frame of a stack in the project's own files, as printed (``f (a.js:3:9)``)."""
    for raw in stack:
        location = _own(raw, skip=skip)
        if location:
            frame = raw.strip()
            return frame.removeprefix("stack: |").strip() or location
    return ""


def _diagnostic(line: str, body: list[str], index: int) -> tuple[str, int]:
    """A ``#`` line's text, joined to its value below when it ends in ``:``; the line joined."""
    line = line.lstrip("#").strip()
    if line.endswith(":") and index + 1 < len(body):  # `Expected:` and its value below
        return f"{line} {body[index + 1].strip().lstrip('#').strip()}", index + 1
    return line, -1


def _own(text: str, *, skip: str = "") -> str:
    """The first location in *text* in the project's own files (not *skip*), or ``""``."""
    return next(
        (
            loc
            for loc in find_locations(text)
            if not is_library_path(location_path(loc)) and loc != skip
        ),
        "",
    )


def _after_the_stream(text: str, end: int) -> str:
    """An error printed after the TAP stream (the producer crashed), with its own frame."""
    crash = _CRASH_LINE.search(text, end)
    if crash is None:
        return ""
    where = _own(text[crash.end() : crash.end() + 2000])
    return clip(crash.group(0), 160) + (f" at {where}" if where else "")
