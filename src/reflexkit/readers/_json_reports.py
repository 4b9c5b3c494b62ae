"""JSON reports of checkers, read as the lines the same tool prints in its text format.

``pyright --outputjson``, ``ruff check --output-format=json``, ``eslint -f json`` and
``mypy -O json`` print their diagnostics as JSON. :func:`from_json_report` turns such a
report back into the tool's own one-line format (pyright's ``  file:line:col - error: message
(rule)``, ruff's concise ``file:row:col: CODE message``, eslint's ``unix`` format, mypy's
``file:line: error: message  [code]``), so the reader of that format reads it; output that is
no such report is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["from_json_report"]

MAX_JSON_CHARS = 400_000
"""A longer report is not parsed whole (its head and tail are read as text instead)."""


def from_json_report(text: str) -> str | None:
    """Return a checker's JSON report as its text format, or None when *text* is no report.

    Lines before the JSON (a launcher's warnings) are kept as they are.
    """
    start = _json_start(text)
    if start < 0 or len(text) - start > MAX_JSON_CHARS:
        return None
    import json  # noqa: PLC0415 -- only output that starts like JSON pays for the import

    body = text[start:]
    try:
        report: object = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        lines = _json_lines(body, json.loads, _MYPY_KEYS)
        converted = _mypy(lines) if lines else None
    else:
        converted = _pyright(report) or _ruff(report) or _eslint(report)
        if converted is None and isinstance(report, dict):  # one line of JSON lines
            converted = _mypy([report])
    if converted is None:
        return None
    return text[:start] + converted


def _json_start(text: str) -> int:
    """Return where a JSON document starts: at the start or at a line's start, else -1."""
    stripped = text.lstrip()
    if stripped[:1] in {"{", "["}:
        return len(text) - len(stripped)
    for opener in ("\n{", "\n["):
        found = text.find(opener)
        if found >= 0:
            return found + 1
    return -1


_MYPY_KEYS = frozenset({"file", "line", "message", "severity"})


def _json_lines(
    body: str, loads: Callable[[str], object], keys: frozenset[str]
) -> list[dict[str, Any]]:
    """Return the objects of a JSON-lines report, or [] when a line is something else.

    Each object must have *keys*: another tool's JSON lines (``go test -json``) are given up
    at their first line, not parsed whole.
    """
    objects: list[dict[str, Any]] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        try:
            value = loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            return []
        if not isinstance(value, dict) or not keys <= value.keys():
            return []
        objects.append(value)
    return objects


def _pyright(report: object) -> str | None:
    """Return pyright's ``{"generalDiagnostics": [...], "summary": {...}}`` as its text."""
    if not isinstance(report, dict) or not isinstance(report.get("generalDiagnostics"), list):
        return None
    out: list[str] = []
    for diagnostic in report["generalDiagnostics"]:
        if not isinstance(diagnostic, dict):
            continue
        start = (diagnostic.get("range") or {}).get("start") or {}
        where = f"{diagnostic.get('file', '')}:{_int(start.get('line')) + 1}"
        where += f":{_int(start.get('character')) + 1}"
        lines = str(diagnostic.get("message", "")).splitlines() or [""]
        if diagnostic.get("rule"):
            lines[-1] += f" ({diagnostic['rule']})"
        out.append(f"  {where} - {diagnostic.get('severity', 'error')}: {lines[0]}")
        out.extend(f"    {line.strip()}" for line in lines[1:])
    summary = report.get("summary")
    if isinstance(summary, dict):
        out.append(
            f"{_int(summary.get('errorCount'))} errors, {_int(summary.get('warningCount'))} "
            f"warnings, {_int(summary.get('informationCount'))} informations "
        )
    return "\n".join(out) + "\n"


def _ruff(report: object) -> str | None:
    """Return ruff's ``[{"code", "message", "filename", "location"}]`` as its concise lines."""
    items = _objects(report, ("code", "message", "filename", "location"))
    if items is None:
        return None
    out: list[str] = []
    for item in items:
        location = item.get("location") or {}
        fix = item.get("fix")
        mark = "[*] " if isinstance(fix, dict) and fix.get("applicability") == "safe" else ""
        out.append(
            f"{item['filename']}:{_int(location.get('row'))}:{_int(location.get('column'))}: "
            f"{item['code'] or 'E999'} {mark}{item['message']}"
        )
    out.append(f"Found {len(items)} error{'' if len(items) == 1 else 's'}.")
    return "\n".join(out) + "\n"


def _eslint(report: object) -> str | None:
    """Return eslint's ``[{"filePath", "messages": [...]}]`` as its ``unix`` format."""
    results = _objects(report, ("filePath", "messages"))
    if results is None:
        return None
    out: list[str] = []
    for result in results:
        for message in result["messages"] if isinstance(result["messages"], list) else []:
            if not isinstance(message, dict):
                continue
            level = "Error" if message.get("severity") == 2 else "Warning"  # noqa: PLR2004
            rule = f"/{message['ruleId']}" if message.get("ruleId") else ""
            out.append(
                f"{result['filePath']}:{_int(message.get('line'))}:"
                f"{_int(message.get('column'))}: {message.get('message', '')} [{level}{rule}]"
            )
    if not out:
        return None
    out.extend(["", f"{len(out)} problem{'' if len(out) == 1 else 's'}"])
    return "\n".join(out) + "\n"


def _mypy(lines: list[dict[str, Any]]) -> str | None:
    """Return mypy's JSON lines (``{"file", "line", "message", "code", ...}``) as its text."""
    if not all(line.keys() >= _MYPY_KEYS for line in lines):
        return None
    out: list[str] = []
    for line in lines:
        where = f"{line['file']}:{_int(line['line'])}"
        code = f"  [{line['code']}]" if line.get("code") else ""
        out.append(f"{where}: {line['severity']}: {line['message']}{code}")
        if line.get("hint"):
            out.extend(f"{where}: note: {hint}" for hint in str(line["hint"]).splitlines())
    return "\n".join(out) + "\n"


def _objects(report: object, keys: tuple[str, ...]) -> list[dict[str, Any]] | None:
    """Return *report* when it is a non-empty list of objects that all have *keys*."""
    if not isinstance(report, list) or not report:
        return None
    items = [item for item in report if isinstance(item, dict) and all(k in item for k in keys)]
    return items if len(items) == len(report) else None


def _int(value: object) -> int:
    """Return *value* as an int (0 when it is none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
