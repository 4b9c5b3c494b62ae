"""Append-only JSONL files of insights: whole lines from many processes, bad lines skipped.

Appends go through the shared :class:`~reflexkit._lines.LineWriter`, like the run log and
the fixture recorder: one ``os.write`` of the whole line on an ``O_APPEND`` descriptor, so
lines from several processes never interleave; a line that lands glued to a torn one (a
crash, a full disk, another program's fragment) is written again on a line of its own; a
symbolic link, a folder or a FIFO at the path is refused. Reads go through
:func:`~reflexkit._lines.scan`: a bad line is skipped and counted, never fatal, and a line
too long to be a record is skipped without being held.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import cattrs
import orjson

from reflexkit import _serde
from reflexkit._lines import LineWriter, open_lines, scan
from reflexkit.exceptions import StoreError
from reflexkit.redaction._gate import outbound_data

__all__ = ["SayOnce", "append_records", "read_records"]

log = logging.getLogger("reflexkit.insights")

T = TypeVar("T")


def append_records(path: Path, records: list[object], *, sink: str = "insights") -> None:
    """Append *records* as camelCase JSON lines, each with one ``os.write``.

    Raises:
        StoreError: The file can't be written (the records before the failing one are in
            the file; the failing one and those after it are not).
    """
    if not records:
        return
    lines = [orjson.dumps(outbound_data(_serde.unstructure(r), sink)) for r in records]
    try:
        with LineWriter(path, mode=0o600) as writer:
            for line in lines:
                writer.append(line)
    except OSError as err:
        msg = f"{path}: cannot append: {err.strerror or err}"
        raise StoreError(msg) from err


def read_records(path: Path, cls: type[T]) -> Iterator[T | None]:
    """Yield each line of *path* as a *cls*, or ``None`` for a line that can't be read.

    A bad line is logged and yielded as ``None``, so callers can count it; a missing file
    yields nothing.

    Raises:
        StoreError: The file exists but can't be read (or is a link, a folder or a FIFO).
    """
    try:
        fd = open_lines(path)
    except FileNotFoundError:
        return
    except OSError as err:
        msg = f"{path}: cannot read: {err.strerror or err}"
        raise StoreError(msg) from err
    try:
        for offset, _end, line in scan(fd):
            if line is not None and not line.strip():
                continue
            try:
                if line is None:
                    raise ValueError  # noqa: TRY301 -- a line too long is a bad line too
                yield _serde.converter.structure(orjson.loads(line), cls)
            except (orjson.JSONDecodeError, cattrs.BaseValidationError, ValueError, TypeError):
                log.warning("%s: skipped a record that can't be read at byte %d", path, offset)
                yield None
    except OSError as err:
        msg = f"{path}: cannot read: {err.strerror or err}"
        raise StoreError(msg) from err
    finally:
        os.close(fd)


class SayOnce:
    """Logs each distinct :class:`StoreError` once: a full disk is news once, not per attempt.

    The rules and the analysis keep acting on what they found when it can't be logged; this
    is how they say so without a warning (or a traceback) after every attempt of the run.
    """

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, err: StoreError) -> None:
        """Log *err* at warning level unless it was logged before."""
        message = str(err)
        with self._lock:
            if message in self._said:
                return
            self._said.add(message)
        log.warning("%s; the run goes on, the finding holds for it (said once)", message)
