"""The default store: one JSON reflection a line, shared safely by many processes.

The file is the whole history in append order, readable with ``jq``, ``grep`` and
``tail -f``. Beside it sit two side files:

``<name>.lock``
    The store's *generation* (a counter a prune bumps when it swaps the file) and the lock
    that serialises prunes. Writers map it into memory and check the counter under their
    lock, which costs a memory read instead of a ``stat`` per append. Don't delete it while
    processes use the store.
``<name>.index/``
    The per-subtask offset index (:mod:`reflexkit.memory._index`), rebuilt when missing or
    stale.

How an append stays whole (see docs/memory.md): the line is written with one ``os.write``
on an ``O_APPEND`` descriptor while holding an exclusive ``flock`` on the file, so lines from
several processes never interleave. Under that lock the writer checks the generation: when a
prune has swapped the file, it reopens the path and writes to the new file, never into the
old, unlinked one. When the file does not end with a newline (a torn line from a crash), the
writer puts one before its record.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import mmap
import os
import re
import struct
import threading
import warnings
import weakref
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory._codec import decode_line, encode_line, string_field
from reflexkit.memory._index import OffsetIndex
from reflexkit.memory.protocols import MemoryStats
from reflexkit.models import Reflection
from reflexkit.tasks.config import Durability

__all__ = ["JsonlMemory"]

log = logging.getLogger("reflexkit.memory")

_GEN = struct.Struct("<Q")
_GEN_AT = 8  # the first 8 bytes are free for a future magic
_LOCK_SIZE = mmap.PAGESIZE
_CHUNK = 4 << 20
_GEN_SLICE = slice(_GEN_AT, _GEN_AT + 8)
_NO_MAP = mmap.mmap(-1, _GEN_AT + 8)  # stands in until the lock file is mapped: gen 0 != b""

_OPEN: weakref.WeakSet[JsonlMemory] = weakref.WeakSet()

# append() is the hot path: module-level names save the attribute lookups of each call.
_flock, _EX, _UN = fcntl.flock, fcntl.LOCK_EX, fcntl.LOCK_UN
_lseek, _END, _write, _pread = os.lseek, os.SEEK_END, os.write, os.pread


def _forget_after_fork() -> None:
    # Checking os.getpid() on every append would cost more than the append's own lseek.
    for store in list(_OPEN):
        store._after_fork()  # noqa: SLF001 -- the module's own class


os.register_at_fork(after_in_child=_forget_after_fork)


class JsonlMemory:
    """Episodic memory in a JSONL file (see the module docstring for the guarantees).

    Args:
        path: The JSONL file; created (mode 0600, with its folders) on the first append.
        durability: ``"none"``: a record is in the OS page cache when ``append`` returns,
            safe if the process dies. ``"fsync"``: it is on the disk, safe if the machine
            loses power (``fdatasync`` per append, about a fifth of a millisecond).

    Instances are safe to share between threads. Each process (also after ``fork``) opens
    its own descriptors.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, durability: Durability | str = "none"
    ) -> None:
        self._path = Path(path)
        self._durability = Durability(durability)
        self._index = OffsetIndex(self._path.with_name(self._path.name + ".index"))
        self._lock_path = self._path.with_name(self._path.name + ".lock")
        self._mutex = threading.Lock()
        self._pid = -1
        self._fd = -1
        self._map = _NO_MAP
        self._generation = b""
        self._end = -1  # where our last write ended; the tail is known good there
        self._warned_index = False
        _OPEN.add(self)

    def __repr__(self) -> str:
        return f"JsonlMemory({str(self._path)!r}, durability={self._durability.value!r})"

    @property
    def path(self) -> Path:
        """The JSONL file."""
        return self._path

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the descriptors (a later call opens them again)."""
        with self._mutex:
            self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if self._pid == os.getpid():
            self._close()

    def _close(self) -> None:
        if self._pid == os.getpid():
            if self._fd >= 0:
                os.close(self._fd)
            if self._map is not _NO_MAP:
                self._map.close()
        self._fd = -1
        self._map = _NO_MAP
        self._pid = -1
        self._end = -1

    def _after_fork(self) -> None:
        """In a forked child: drop the parent's descriptors (and its locks) without closing."""
        self._mutex = threading.Lock()
        self._fd = -1
        self._map = _NO_MAP
        self._pid = -1
        self._end = -1

    def _open_lock(self) -> tuple[int, mmap.mmap]:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < _LOCK_SIZE:
                os.ftruncate(fd, _LOCK_SIZE)  # racing creators truncate to the same size
            return fd, mmap.mmap(fd, _LOCK_SIZE)
        except BaseException:
            os.close(fd)
            raise

    def _open(self) -> int:
        """(Re)open the file for appending; the generation is read before the file is."""
        self._close()
        lock_fd, mapped = self._open_lock()
        os.close(lock_fd)  # the mapping stays valid
        self._map = mapped
        self._generation = mapped[_GEN_SLICE]
        created = not self._path.exists()
        self._fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._pid = os.getpid()
        if created and self._durability is Durability.FSYNC:
            _fsync_dir(self._path.parent)
        return self._fd

    # --- writing -------------------------------------------------------------------------

    def append(self, reflection: Reflection, /) -> None:
        """Append one reflection; when this returns it is in the file for every process.

        Raises:
            StoreError: The file can't be written (the message says why).
        """
        line = encode_line(reflection)
        with self._mutex:
            try:
                fd = self._fd if self._fd >= 0 else self._open()
                _flock(fd, _EX)
                try:
                    while self._map[_GEN_SLICE] != self._generation:
                        # A prune swapped the file: write to the new one, not the unlinked old.
                        _flock(fd, _UN)
                        fd = self._open()
                        _flock(fd, _EX)
                    end = _lseek(fd, 0, _END)
                    if end != self._end and end and _pread(fd, 1, end - 1) != b"\n":
                        log.warning("%s ended in a torn line; it is skipped on read", self._path)
                        line = b"\n" + line
                    written = _write(fd, line)
                finally:
                    _flock(fd, _UN)
                if written != len(line):
                    self._end = -1
                    msg = f"short write to {self._path}: {written} of {len(line)} bytes"
                    raise StoreError(msg)
                self._end = end + written
                if self._durability is Durability.FSYNC:
                    os.fdatasync(fd)
            except OSError as err:
                self._end = -1
                msg = f"can't append to {self._path}: {err.strerror or err}"
                raise StoreError(msg) from err

    # --- reading -------------------------------------------------------------------------

    def _read_generation(self) -> int:
        try:
            fd = os.open(self._lock_path, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            raw = os.pread(fd, 8, _GEN_AT)
        finally:
            os.close(fd)
        return _GEN.unpack(raw)[0] if len(raw) == 8 else 0  # noqa: PLR2004

    def _open_for_reading(self) -> int | None:
        try:
            return os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as err:
            msg = f"can't read {self._path}: {err.strerror or err}"
            raise StoreError(msg) from err

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        """Return the *limit* most recently appended reflections of a subtask, oldest first.

        Reads only those records (through the offset index), not the whole history.

        Raises:
            ValueError: *limit* is below 1.
            StoreError: The store can't be read.
        """
        if limit < 1:
            msg = f"limit must be >= 1, got {limit}"
            raise ValueError(msg)
        generation = self._read_generation()
        fd = self._open_for_reading()
        if fd is None:
            return []
        try:
            try:
                with self._index.reading(fd, generation) as index:
                    candidates = ((o, os.pread(fd, n, o)) for o, n in index.candidates(subtask_id))
                    found = self._pick(candidates, subtask_id, task_id, limit)
            except OSError as err:
                # No index can be kept beside the file (a read-only mount, a backup owned by
                # someone else): read backwards from the end instead, which costs more the
                # rarer the subtask is.
                if not self._warned_index:
                    self._warned_index = True
                    log.warning("%s: no index (%s); reading from the end", self._path, err)
                found = self._pick(_lines_backwards(fd), subtask_id, task_id, limit)
        except OSError as err:
            msg = f"can't read {self._path}: {err.strerror or err}"
            raise StoreError(msg) from err
        finally:
            os.close(fd)
        found.reverse()
        return found

    def _pick(
        self,
        lines: Iterator[tuple[int, bytes]],
        subtask_id: str,
        task_id: str | None,
        limit: int,
    ) -> list[Reflection]:
        """Return up to *limit* valid records of a subtask (of a task) from *lines*, in order."""
        found: list[Reflection] = []
        for offset, line in lines:
            try:
                record = decode_line(line)
            except ValueError as err:
                self._warn_corrupt(offset, err)
                continue
            if record.subtask_id == subtask_id and task_id in {None, record.task_id}:
                found.append(record)
                if len(found) == limit:
                    break
        return found

    def _warn_corrupt(self, offset: int, err: Exception) -> None:
        warnings.warn(
            f"{self._path}: skipped the record at byte {offset}: {err}",
            CorruptRecordWarning,
            stacklevel=3,
        )

    def _lines(self) -> Iterator[tuple[int, bytes, bool]]:
        """Yield ``(offset, line, complete)`` for every line of the file, in order."""
        fd = self._open_for_reading()
        if fd is None:
            return
        try:
            pos = 0
            rest = b""
            while chunk := os.pread(fd, _CHUNK, pos):
                buf = rest + chunk
                base = pos - len(rest)
                pos += len(chunk)
                start = 0
                while (nl := buf.find(b"\n", start)) >= 0:
                    yield base + start, buf[start:nl], True
                    start = nl + 1
                rest = buf[start:]
            if rest:
                yield pos - len(rest), rest, False
        finally:
            os.close(fd)

    def _records(self) -> Iterator[Reflection | None]:
        """Yield every record in order, None for each line that can't be read (warned)."""
        for offset, line, complete in self._lines():
            if not line.strip():
                continue
            if not complete:
                self._warn_corrupt(offset, ValueError("a torn last line (no newline)"))
                yield None
                continue
            try:
                yield decode_line(line)
            except ValueError as err:
                self._warn_corrupt(offset, err)
                yield None

    def __iter__(self) -> Iterator[Reflection]:
        """Yield every valid record in append order; bad lines are skipped with a warning."""
        return (r for r in self._records() if r is not None)

    def stats(self) -> MemoryStats:
        """Count the records, subtasks, categories, failure types, sources and bad lines."""
        records = corrupt = 0
        subtasks: set[str] = set()
        categories: Counter[str] = Counter()
        types: Counter[str] = Counter()
        sources: Counter[str] = Counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorruptRecordWarning)
            for r in self._records():
                if r is None:
                    corrupt += 1
                    continue
                records += 1
                subtasks.add(r.subtask_id)
                categories[r.category.value] += 1
                types[r.failure_type.value] += 1
                sources[r.source.value] += 1
        try:
            size = self._path.stat().st_size
        except FileNotFoundError:
            size = 0
        return MemoryStats(
            records=records,
            subtasks=len(subtasks),
            by_category=dict(categories),
            by_failure_type=dict(types),
            by_source=dict(sources),
            corrupt=corrupt,
            size_bytes=size,
        )

    # --- pruning -------------------------------------------------------------------------

    def prune(self, *, older_than: datetime) -> int:
        """Remove the records created before *older_than*; return how many went.

        The kept records are copied to a new file that replaces the old one. Writers are
        held off only while the records appended during the copy are carried over, and they
        write to the new file afterwards, so nothing appended meanwhile is lost. Lines that
        can't be read are kept as they are (they may be worth repairing by hand).

        Raises:
            StoreError: The store can't be rewritten.
        """
        if older_than.tzinfo is None:
            msg = "older_than must be timezone-aware"
            raise ValueError(msg)
        if not self._path.exists():
            return 0
        try:
            return self._prune(older_than)
        except OSError as err:
            msg = f"can't prune {self._path}: {err.strerror or err}"
            raise StoreError(msg) from err

    def _prune(self, older_than: datetime) -> int:
        lock_fd, mapped = self._open_lock()
        tmp = self._path.with_name(self._path.name + ".prune")
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)  # one prune at a time
            old = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            try:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()  # left by a prune that crashed
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                try:
                    sieve = _Sieve(older_than, out)
                    # The bulk of the copy runs while writers go on appending to the old file.
                    copied = sieve.run(old, 0, os.fstat(old).st_size)
                    fcntl.flock(old, fcntl.LOCK_EX)
                    # Writers wait from here: carry over what they appended, swap, move on.
                    sieve.run(old, copied, os.fstat(old).st_size, final=True)
                    if sieve.removed:
                        os.fsync(out)
                finally:
                    os.close(out)
                if not sieve.removed:
                    return 0  # nothing to remove: the file stays as it is
                tmp.replace(self._path)
                _fsync_dir(self._path.parent)
                (generation,) = _GEN.unpack_from(mapped, _GEN_AT)
                _GEN.pack_into(mapped, _GEN_AT, generation + 1)
            finally:
                fcntl.flock(old, fcntl.LOCK_UN)  # writers go on, and see the new generation
                # Closing the last descriptor of the replaced file frees its blocks, which
                # takes as long as a good part of the copy on some file systems: nothing waits
                # for it, so it happens beside the caller.
                threading.Thread(target=os.close, args=(old,), name="reflexkit-prune").start()
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            mapped.close()
            os.close(lock_fd)
        log.info("pruned %d records older than %s from %s", sieve.removed, older_than, self._path)
        return sieve.removed


_CREATED_AT = b'"createdAt":"'
_STAMP = len("2026-01-31T12:00:00")
_STAMPS = re.compile(rb'"createdAt":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)[.Z]')
_BLOCK = 1 << 20


class _Sieve:
    """Copies the lines of a store that are not older than a cut-off to *out*.

    The file is mapped, not read: kept runs of lines are written straight from the mapping.
    A line's age is read where reflexkit writes it (``"createdAt":"2026-01-31T12:00:00``,
    UTC with ``Z``), compared as text to the second; only a tie, or a line written some other
    way, goes through a real parser.
    """

    def __init__(self, older_than: datetime, out: int) -> None:
        self.removed = 0
        self._out = out
        self._cutoff = older_than
        utc = older_than.astimezone(UTC)
        self._prefix = utc.strftime("%Y-%m-%dT%H:%M:%S").encode()

    def run(self, fd: int, start: int, end: int, *, final: bool = False) -> int:
        """Sieve the lines in ``[start, end)``; return where the last whole line ended.

        With *final*, a last line without a newline (a torn tail) is copied as it is.
        """
        if end <= start:
            return start
        with mmap.mmap(fd, end, prot=mmap.PROT_READ) as mapped, memoryview(mapped) as view:
            last = mapped.rfind(b"\n", start, end)
            done = start if last < 0 else last + 1
            self._sieve(mapped, view, start, done)
            if final and done < end:
                _write_all(self._out, view[done:end])
                done = end
        return done

    def _sieve(self, buf: mmap.mmap, view: memoryview, start: int, stop: int) -> None:
        """Sieve whole lines in ``[start, stop)``, a block at a time.

        Most blocks are wholly older or wholly newer than the cut-off (records are appended
        in about the order they are created): one regular-expression pass over the block
        finds every timestamp, and when there is one per line, in reflexkit's layout, the
        block is dropped or copied whole. Only blocks that straddle the cut-off, or hold a
        line of another layout, are sieved a line at a time.
        """
        while start < stop:
            end = buf.find(b"\n", min(start + _BLOCK, stop) - 1, stop) + 1 or stop
            block = buf[start:end]
            stamps = _STAMPS.findall(block)
            if stamps and len(stamps) == block.count(b"\n"):
                if max(stamps) < self._prefix:
                    self.removed += len(stamps)
                    start = end
                    continue
                if min(stamps) > self._prefix:
                    _write_all(self._out, block)
                    start = end
                    continue
            self._lines(buf, view, start, end)
            start = end

    def _lines(self, buf: mmap.mmap, view: memoryview, start: int, stop: int) -> None:
        keep_from = start
        find = buf.find
        key, prefix, width = _CREATED_AT, self._prefix, _STAMP
        while start < stop:
            end = find(b"\n", start, stop)
            at = find(key, start, end)
            if at >= 0:
                at += len(key)
                stamp = buf[at : at + width]
                tail = buf[at + width : at + width + 1]
                if stamp[10:11] == b"T" and tail in {b"Z", b"."}:
                    old = stamp < prefix or (stamp == prefix and self._is_old(buf[start:end]))
                else:
                    old = self._is_old(buf[start:end])
            else:
                old = self._is_old(buf[start:end])
            if old:
                if keep_from < start:
                    _write_all(self._out, view[keep_from:start])
                self.removed += 1
                keep_from = end + 1
            start = end + 1
        if keep_from < stop:
            _write_all(self._out, view[keep_from:stop])

    def _is_old(self, line: bytes) -> bool:
        text = string_field(line, "createdAt")
        if text is None:
            return False
        try:
            created = datetime.fromisoformat(text)
        except ValueError:
            return False
        if created.tzinfo is None:  # the converter reads a time without a zone as UTC
            created = created.replace(tzinfo=UTC)
        return created < self._cutoff


def _lines_backwards(fd: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, line)`` for the lines of a file, last first, reading blocks."""
    hi = os.fstat(fd).st_size
    want = _CHUNK
    while hi > 0:
        lo = max(0, hi - want)
        buf = os.pread(fd, hi - lo, lo)
        base = lo
        if lo > 0:
            first = buf.find(b"\n")
            if first < 0:  # one line longer than the block: read a bigger one
                want *= 2
                continue
            base = lo + first + 1
            buf = buf[first + 1 :]
        parts = buf.split(b"\n")
        offsets = []
        at = base
        for part in parts:
            offsets.append(at)
            at += len(part) + 1
        for offset, part in zip(reversed(offsets), reversed(parts), strict=True):
            if part.strip():
                yield offset, part
        hi = base
        want = _CHUNK


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
