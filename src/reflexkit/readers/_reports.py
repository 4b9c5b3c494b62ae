"""Standard machine-readable reports, read as data: SARIF, JUnit XML, CTRF, cargo's JSON.

A check may print a report instead of text (``ruff --output-format=sarif``, ``cargo build
--message-format=json``), or write one to a file it names (a JUnit XML, a CTRF JSON).
:func:`report_as_text` reads such a report as data and writes it back as the lines readers
read: a diagnostic as ``file:line:col: level: message [rule]``, a failing test as ``FAIL:
name (suite)`` with its message and location under it and a closing ``N tests, N failures``
count, cargo's messages as the text rustc renders. :func:`read_report_files` reads the files
a failure names through the safe file layer (regular files only, no symbolic links, bounded).

JUnit XML is parsed with ``defusedxml``: a report is input from the project, and the
standard library's parser expands entities a hostile file can declare.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from reflexkit._files import read_regular
from reflexkit.readers._findings import clip

__all__ = ["MAX_REPORT_BYTES", "read_report_files", "report_as_text"]

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
    compile``) are kept where they are.
    """
    head = data[:256].lstrip()  # the whole text is copied only for what may be a report
    if head.startswith("<"):
        return _junit(data.lstrip())
    if '"reason":"compiler-message"' in data or '"reason": "compiler-message"' in data:
        return _cargo(data)
    if not head.startswith("{"):
        return None
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
