"""The JSONL line of a reflection: the converter's camelCase JSON, written fast.

``append`` is the hot path of every store, and going through ``converter.unstructure`` costs
more than the write itself. :func:`encode_line` builds the same dict by hand and lets orjson
write datetimes (with ``Z``), enums (by value) and tuples itself; the bytes are identical to
``orjson.dumps(converter.unstructure(reflection))`` (a test holds them to that). Anything the
shortcut can't write the same way (a time outside UTC) goes through the converter.
"""

from __future__ import annotations

from datetime import UTC

import attrs
import orjson

from reflexkit import _serde
from reflexkit._lines import MAX_LINE, read_lines  # the one bounded line reader (#19)
from reflexkit.models import Reflection

__all__ = ["MAX_LINE", "TOO_LONG", "decode_line", "encode_line", "read_lines", "string_field"]

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE

TOO_LONG = f"a line longer than {MAX_LINE >> 20} MiB (not a record; skipped unread)"


def string_field(line: bytes, name: str, /) -> str | None:
    """Return the top-level string field *name* of a JSONL line, or None.

    Reads what reflexkit writes (``"name":"value"`` with no escapes) without parsing the
    line; anything else (spaces, escapes, a line written by another tool) goes through a
    real parser, so a valid record is never missed.
    """
    start = line.find(b'"%s":"' % name.encode())  # JSON escapes '"' in strings: only the key
    if start >= 0:
        start += len(name) + 4
        end = line.find(b'"', start)
        if end >= 0 and b"\\" not in line[start:end]:
            return line[start:end].decode("utf-8", "replace")
    elif b'"%s"' % name.encode() not in line:
        return None
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def encode_line(r: Reflection, /) -> bytes:
    """Return the JSONL line of a reflection, newline included."""
    if r.created_at.tzinfo is not UTC:
        return orjson.dumps(_serde.unstructure(r), option=_OPTIONS)
    return orjson.dumps(
        {
            "id": r.id,
            "taskId": r.task_id,
            "subtaskId": r.subtask_id,
            "attemptNumber": r.attempt_number,
            "category": r.category,
            "failureType": r.failure_type,
            "analysis": r.analysis,
            "suggestion": r.suggestion,
            "actionItems": r.action_items,
            "confidence": r.confidence,
            "source": r.source,
            "sessionId": r.session_id,
            "createdAt": r.created_at,
            "fingerprint": r.fingerprint,
            "fallbackReason": r.fallback_reason,
            "model": r.model,
            "inputTokens": r.input_tokens,
            "outputTokens": r.output_tokens,
            "latencyMs": r.latency_ms,
            "redactions": r.redactions,
        },
        option=_OPTIONS,
    )


_BOM = b"\xef\xbb\xbf"

_KNOWN_KEYS = frozenset(_serde.camel(field.name) for field in attrs.fields(Reflection))


def decode_line(line: bytes, /) -> Reflection:
    """Read one JSONL line back.

    Keys this version doesn't know are left out: they are the fields of a newer reflexkit
    (hosts sharing memory upgrade one at a time), not damage. Everything else is as strict
    as the converter: a known field with a bad value, or a missing one, makes the line bad.

    Raises:
        ValueError: The line is not JSON, or not a valid reflection (the message says why).
    """
    try:
        data = orjson.loads(line.removeprefix(_BOM))  # a file saved by a Windows editor
    except orjson.JSONDecodeError as err:
        msg = f"not JSON ({err.msg})"
        raise ValueError(msg) from None
    if not isinstance(data, dict):
        msg = "not a JSON object"
        raise ValueError(msg)  # noqa: TRY004 -- callers catch ValueError for every bad line
    if not _KNOWN_KEYS.issuperset(data):
        data = {key: value for key, value in data.items() if key in _KNOWN_KEYS}
    try:
        return _serde.structure_raw(data, Reflection)  # without cattrs when valid (#19)
    except Exception as err:  # noqa: BLE001 -- any converter failure makes the record unreadable
        from reflexkit._serde import format_errors  # noqa: PLC0415 -- only on the error path

        raise ValueError("; ".join(format_errors(err)) or str(err)) from None
