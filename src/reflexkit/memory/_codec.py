"""The JSONL line of a reflection: the converter's camelCase JSON, written fast.

``append`` is the hot path of every store, and going through ``converter.unstructure`` costs
more than the write itself. :func:`encode_line` builds the same dict by hand and lets orjson
write datetimes (with ``Z``), enums (by value) and tuples itself; the bytes are identical to
``orjson.dumps(converter.unstructure(reflection))`` (a test holds them to that). Anything the
shortcut can't write the same way (a time outside UTC) goes through the converter.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from datetime import UTC

import attrs
import orjson

from reflexkit import _serde
from reflexkit.models import Reflection

__all__ = ["MAX_LINE", "TOO_LONG", "decode_line", "encode_line", "read_lines", "string_field"]

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE

MAX_LINE = 16 << 20
"""The longest line a store keeps: a record is a few KiB; what is longer is damage (a blob
appended by another program, a run of zeros a crash left), skipped without being read whole."""
TOO_LONG = f"a line longer than {MAX_LINE >> 20} MiB (not a record; skipped unread)"
_CHUNK = 4 << 20


def read_lines(fd: int, start: int, end: int) -> Iterator[tuple[int, int, bytes | None]]:
    """Yield ``(offset, end, line)`` for the whole lines of *fd* in ``[start, end)``.

    *line* is the line without its newline and *end* where the next one starts; a line longer
    than :data:`MAX_LINE` is ``None`` and is never held in memory, so a damaged file costs
    its size in reads, not in memory (or in time squared). What follows the last newline
    before *end* (a torn tail, or lines still being appended) is not yielded.
    """
    buf = b""
    at = pos = start  # at: where buf starts in the file; pos: the next byte to read
    skipping = -1  # where the too-long line being skipped starts
    while True:
        if skipping >= 0 and (nl := buf.find(b"\n")) >= 0:
            yield skipping, at + nl + 1, None
            at, buf, skipping = at + nl + 1, buf[nl + 1 :], -1
        if skipping < 0:
            done = yield from _split(buf, at)
            at, buf = at + done, buf[done:]
        if pos >= end:
            return
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            return
        pos += len(chunk)
        if skipping >= 0:
            at, buf = pos - len(chunk), chunk
        elif len(buf) + len(chunk) > MAX_LINE and b"\n" not in chunk:
            skipping, at, buf = at, pos, b""  # too long: don't even join the pieces
        else:
            buf = buf + chunk if buf else chunk


def _split(buf: bytes, at: int) -> Generator[tuple[int, int, bytes | None], None, int]:
    """Yield the whole lines of *buf* (at offset *at*); return how many bytes they took."""
    i = 0
    find = buf.find
    while (nl := find(b"\n", i)) >= 0:
        yield at + i, at + nl + 1, buf[i:nl]
        i = nl + 1
    return i


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
