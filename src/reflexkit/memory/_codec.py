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

__all__ = [
    "MAX_LINE",
    "TOO_LONG",
    "decode_line",
    "encode_line",
    "read_lines",
    "string_field",
    "top_level_key",
]

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE

_BOM = b"\xef\xbb\xbf"

TOO_LONG = f"a line longer than {MAX_LINE >> 20} MiB (not a record; skipped unread)"


def top_level_key(line: bytes | bytearray, key: bytes, start: int = 0, end: int = -1) -> int:
    """Return where the value of the top-level *key* starts in ``line[start:end]``, or -1.

    *key* is the quoted key with its colon and opening quote (``b'"createdAt":"'``). Found
    only where reflexkit's compact layout makes it certain: the key follows ``{`` or ``,``
    (so it is a key, not text in a string: a quote in a string is escaped), no ``{`` comes
    before it on the line (so it is not nested in another object), and the line names it
    once. Anything else is -1, and the caller parses the line.
    """
    if end < 0:
        end = len(line)
    if line.startswith(_BOM, start):  # a file saved by a Windows editor
        start += len(_BOM)
    at = line.find(key, start, end)
    if (
        at <= start
        or line[start] != _OPEN_BRACE
        or line[at - 1] not in _BEFORE_KEY
        or line.find(b"{", start + 1, at) >= 0
        or line.count(key[:-2], start, end) != 1
    ):
        return -1
    return at + len(key)


_BEFORE_KEY = frozenset(b"{,")
_OPEN_BRACE = ord("{")


def string_field(line: bytes, name: str, /) -> str | None:
    """Return the top-level string field *name* of a JSONL line, or None.

    Reads what reflexkit writes (``"name":"value"`` with no escapes, see
    :func:`top_level_key`) without parsing the line; anything else (spaces, escapes, a key
    also nested in another field, a line written by another tool) goes through a real
    parser, so a valid record is never missed and a nested key is never taken for its own.
    """
    quoted = b'"%s"' % name.encode()
    start = top_level_key(line, quoted + b':"')
    if start >= 0:
        end = line.find(b'"', start)
        if end >= 0 and b"\\" not in line[start:end]:
            return line[start:end].decode("utf-8", "replace")
    elif quoted not in line and b"\\" not in line:
        return None  # not named, not even with an escape in it (``"s\\u0075btaskId"``)
    try:
        data = orjson.loads(line.removeprefix(_BOM))
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
