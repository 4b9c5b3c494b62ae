"""Append-only JSONL files of insights: whole lines from many processes, bad lines skipped.

One ``os.write`` of the whole line on an ``O_APPEND`` descriptor under an exclusive
``flock``, like the run log and episodic memory: lines from several processes never
interleave, and a torn last line left by a crash gets a newline before the next record.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import cattrs
import orjson

from reflexkit import _serde
from reflexkit.exceptions import StoreError

__all__ = ["append_records", "read_records"]

log = logging.getLogger("reflexkit.insights")

T = TypeVar("T")


def append_records(path: Path, records: list[object]) -> None:
    """Append *records* as camelCase JSON lines, each with one ``os.write``.

    Raises:
        StoreError: The file can't be written.
    """
    if not records:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as err:
        msg = f"{path}: cannot open for appending: {err.strerror or err}"
        raise StoreError(msg) from err
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        for index, record in enumerate(records):
            line = orjson.dumps(_serde.unstructure(record)) + b"\n"
            os.write(fd, (b"\n" + line) if torn and index == 0 else line)
    except OSError as err:
        msg = f"{path}: cannot append: {err.strerror or err}"
        raise StoreError(msg) from err
    finally:
        os.close(fd)  # closing releases the lock


def read_records(path: Path, cls: type[T]) -> Iterator[T | None]:
    """Yield each line of *path* as a *cls*, or ``None`` for a line that can't be read.

    A bad line is logged and yielded as ``None``, so callers can count it; a missing file
    yields nothing.

    Raises:
        StoreError: The file exists but can't be read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as err:
        msg = f"{path}: cannot read: {err.strerror or err}"
        raise StoreError(msg) from err
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield _serde.converter.structure(orjson.loads(line), cls)
        except (orjson.JSONDecodeError, cattrs.BaseValidationError, ValueError, TypeError):
            log.warning("%s:%d: skipped a record that can't be read", path, number)
            yield None
