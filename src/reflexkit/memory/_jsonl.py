"""The default store: one JSON reflection a line, shared safely by many processes.

The file is the whole history in append order, readable with ``jq``, ``grep`` and
``tail -f``. Beside it sit two side files:

``<name>.lock``
    The lock that serialises prunes, a *generation* counter a prune bumps before it starts
    and after it swaps the file (for tools that watch the store), and the flag a prune sets
    while it waits for the writers.
``<name>.index/``
    The offset index (:mod:`reflexkit.memory._index`), verified on every use and rebuilt
    when missing or damaged.

Appends go through :class:`reflexkit.memory._writer.Appender` (one whole line a record,
under a shared ``flock``, never into a file the path no longer names: see there); a prune
(below, and :mod:`reflexkit.memory._sieve` for its copy) takes the lock exclusively.

No file is ever mapped into memory (a mapping of a file that shrinks or can't be backed on a
full ``tmpfs`` kills the process with ``SIGBUS``), and no path is followed through a symlink
(``O_NOFOLLOW``): ``reflect`` must not append to whatever a planted link points at.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import warnings
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from reflexkit._log import get_logger
from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory._codec import (
    MAX_LINE,
    TOO_LONG,
    decode_line,
    read_lines,
)
from reflexkit.memory._index import IndexDoubtError, OffsetIndex, pair_key, subtask_key
from reflexkit.memory._protocols import ONCE_WINDOW, MemoryStats
from reflexkit.memory._writer import (
    NO_LOCK_FILE,
    NOFOLLOW,
    Appender,
    bump,
    flag_waiting,
    fsync_dir,
    lock_within,
    regular,
    why,
)
from reflexkit.models import Reflection
from reflexkit.tasks._config import Durability

__all__ = ["JsonlMemory"]

log = get_logger("reflexkit.memory")

_CHUNK = 4 << 20


class JsonlMemory:
    """Episodic memory in a JSONL file (see the module docstring for the guarantees).

    Args:
        path: The JSONL file; created (mode 0600, with its folders) on the first append.
            It, its ``.lock`` and its ``.index`` must not be symlinks.
        durability: ``"none"``: a record is in the OS page cache when ``append`` returns,
            safe if the process dies. ``"fsync"``: it is on the disk, safe if the machine
            loses power (``fdatasync`` per append, about a fifth of a millisecond).

    Instances are safe to share between threads. Each process (also after ``fork``) opens
    its own descriptors.

    Raises:
        StoreError: *path* is empty.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, durability: Durability | str = "none"
    ) -> None:
        if not os.fspath(path).strip():
            msg = "the memory path is empty; give the JSONL file to keep reflections in"
            raise StoreError(msg)
        self._path = Path(path)
        self._durability = Durability(durability)
        self._index = OffsetIndex(self._path.with_name(self._path.name + ".index"))
        self._lock_path = self._path.with_name(self._path.name + ".lock")
        self._appender = Appender(self._path, self._durability)
        self._warned_index = False

    def __repr__(self) -> str:
        return f"JsonlMemory({str(self._path)!r}, durability={self._durability.value!r})"

    @property
    def path(self) -> Path:
        """The JSONL file."""
        return self._path

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the descriptors (a later call opens them again)."""
        self._appender.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------

    def append(self, reflection: Reflection, /) -> None:
        """Append one reflection; when this returns it is in the file for every process.

        Raises:
            StoreError: The file can't be written (the message says why); nothing of the
                record is left in it (at most a blank line).
        """
        self._appender.append(reflection)

    def append_once(self, reflection: Reflection, /) -> bool:
        """Append *reflection* unless a record with its id is stored; ``True`` when appended.

        The id is looked for among the :data:`~reflexkit.memory._protocols.ONCE_WINDOW` most
        recent records of its task and subtask, under an exclusive lock on the lock file, so
        two processes saving one attempt at the same moment store it once.

        Raises:
            StoreError: The store can't be read or written.
        """
        try:
            lock_fd = self._appender.open_lock()
        except OSError as err:
            if err.errno not in NO_LOCK_FILE:
                msg = f"can't lock {self._lock_path}: {why(err)}"
                raise StoreError(msg) from err
            lock_fd = -1  # a folder we may not write: no prune can run here either
        try:
            if lock_fd >= 0:
                try:
                    lock_within(lock_fd, fcntl.LOCK_EX)
                except OSError as err:
                    # Held all that time (a prune stopped with Ctrl-Z): go on unlocked. Two
                    # processes saving one attempt at that moment may both store it; recent()
                    # returns one copy.
                    log.warning("%s: %s; checking for the record without it", self._lock_path, err)
            known = self.recent(
                reflection.subtask_id, limit=ONCE_WINDOW, task_id=reflection.task_id
            )
            if any(r.id == reflection.id for r in known):
                return False
            self.append(reflection)
            return True
        finally:
            if lock_fd >= 0:
                os.close(lock_fd)

    def replaced(self) -> None:
        """Say that the file was replaced (as a prune does): appenders reopen the path.

        For whoever swaps the file outside :meth:`prune` (the PostgreSQL spool's replay).

        Raises:
            OSError: The lock file can't be written.
        """
        lock_fd = self._appender.open_lock()
        try:
            bump(lock_fd)
        finally:
            os.close(lock_fd)

    # --- reading -------------------------------------------------------------------------

    def _open_for_reading(self) -> int | None:
        try:
            # Non-blocking: a FIFO swapped in for the file is refused, not waited on.
            fd = os.open(self._path, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as err:
            msg = f"can't read {self._path}: {why(err)}"
            raise StoreError(msg) from err
        regular(fd, self._path)
        return fd

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        """Return the *limit* most recently appended reflections of a subtask, oldest first.

        Reads only those records (through the offset index), not the whole history; with
        *task_id*, only that task's records of the subtask, however many other tasks have.

        Raises:
            ValueError: *limit* is below 1.
            StoreError: The store can't be read, or its index is a symlink.
        """
        if limit < 1:
            msg = f"limit must be >= 1, got {limit}"
            raise ValueError(msg)
        fd = self._open_for_reading()
        if fd is None:
            return []
        key = subtask_key(subtask_id) if task_id is None else pair_key(task_id, subtask_id)
        try:
            found = self._recent(fd, key, subtask_id, task_id, limit)
        except OSError as err:
            msg = f"can't read {self._path}: {why(err)}"
            raise StoreError(msg) from err
        finally:
            os.close(fd)
        found.reverse()
        return found

    def _recent(
        self, fd: int, key: bytes, subtask_id: str, task_id: str | None, limit: int
    ) -> list[Reflection]:
        try:
            for repair in (True, False):
                try:
                    with self._index.reading(fd) as index:
                        return self._pick(index.lines(key), subtask_id, task_id, limit)
                except IndexDoubtError as doubt:
                    log.warning("%s: %s; rebuilding it", self._path, doubt)
                    # First the shard, then (if that didn't settle it) the whole index; a
                    # line edited in place may now belong under any shard: all of it.
                    whole = doubt.line_changed or not repair
                    self._index.repair(fd, None if whole else doubt.shard)
            with self._index.reading(fd) as index:
                return self._pick(index.lines(key), subtask_id, task_id, limit)
        except (OSError, IndexDoubtError) as err:
            # No index can be kept beside the file (a read-only mount, a full disk, a backup
            # owned by someone else): read backwards from the end instead, which costs more
            # the rarer the subtask is.
            if not self._warned_index:
                self._warned_index = True
                log.warning("%s: no index (%s); reading from the end", self._path, err)
            return self._pick(_lines_backwards(fd), subtask_id, task_id, limit)

    def _pick(
        self,
        lines: Iterator[tuple[int, bytes | None]],
        subtask_id: str,
        task_id: str | None,
        limit: int,
    ) -> list[Reflection]:
        """Return up to *limit* valid records of a subtask (of a task) from *lines*, in order.

        *lines* come newest first; a record whose id was already taken (a line pasted twice
        by hand, a backup appended to the store) is a copy: skipped and reported, so a prompt
        never carries one lesson twice.
        """
        found: list[Reflection] = []
        ids: set[str] = set()
        for offset, line in lines:
            if line is None:
                self._warn_corrupt(offset, ValueError(TOO_LONG))
                continue
            try:
                record = decode_line(line)
            except ValueError as err:
                self._warn_corrupt(offset, err)
                continue
            if record.subtask_id == subtask_id and task_id in {None, record.task_id}:
                if record.id in ids:
                    self._warn_corrupt(offset, ValueError(f"a copy of record {record.id}"))
                    continue
                ids.add(record.id)
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

    def _lines(self) -> Iterator[tuple[int, bytes | None, bool]]:
        """Yield ``(offset, line, complete)`` for every line of the file, in order.

        *line* is None for a line too long to be a record (never read whole); *complete* is
        false for a torn tail (no newline).
        """
        fd = self._open_for_reading()
        if fd is None:
            return
        try:
            end = os.fstat(fd).st_size
            upto = 0
            for offset, upto, line in read_lines(fd, 0, end):  # noqa: B007 -- upto: the last
                yield offset, line, True
            if upto < end:
                yield upto, None if end - upto > MAX_LINE else os.pread(fd, end - upto, upto), False
        finally:
            os.close(fd)

    def _records(self) -> Iterator[Reflection | None]:
        """Yield every record in order, None for each line that can't be read (warned)."""
        for offset, line, complete in self._lines():
            if line is None:
                self._warn_corrupt(offset, ValueError(TOO_LONG))
                yield None
                continue
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
        if not os.path.lexists(self._path):
            return 0
        try:
            return self._prune(older_than)
        except OSError as err:
            msg = f"can't prune {self._path}: {why(err)}"
            raise StoreError(msg) from err

    def _prune(self, older_than: datetime) -> int:
        from reflexkit.memory._sieve import Sieve  # noqa: PLC0415 -- not on recent's start-up

        lock_fd = self._appender.open_lock()
        tmp = self._path.with_name(self._path.name + ".prune")
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)  # one prune at a time
            bump(lock_fd)  # before: a prune has started
            old = self._open_locked_original()
            try:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()  # left by a prune that was killed
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
                sieve = Sieve(older_than, out)
                try:
                    # The bulk of the copy runs while writers go on appending to the old file.
                    copied = sieve.run(old, 0, os.fstat(old).st_size)
                    # Writers hold the file shared; the flag makes them take turns with us.
                    flag_waiting(lock_fd, os.getpid())
                    lock_within(old, fcntl.LOCK_EX)  # a writer stopped holding it: StoreError
                    if not self._names(old):
                        msg = f"{self._path} was replaced while it was pruned; prune again"
                        raise StoreError(msg)
                    # Writers wait from here: carry over what they appended, swap, move on.
                    sieve.run(old, copied, os.fstat(old).st_size, final=True)
                    sieve.finish()
                    if sieve.removed:
                        os.fsync(out)
                finally:
                    sieve.stop()  # before the close: its thread must not write to a reused fd
                    os.close(out)
                if not sieve.removed:
                    return 0  # nothing to remove: the file stays as it is
                with self._index.swapping(old, sieve.runs) as swap:
                    tmp.replace(self._path)
                    fsync_dir(self._path.parent)
                    bump(lock_fd)  # after: the file is swapped
                    flag_waiting(lock_fd, 0)
                    fcntl.flock(old, fcntl.LOCK_UN)  # writers go on; they see the new inode
                    swap.carry_over(self._path)
            finally:
                flag_waiting(lock_fd, 0)
                fcntl.flock(old, fcntl.LOCK_UN)
                # Closing the last descriptor of the replaced file frees its blocks, which
                # takes as long as a good part of the copy on some file systems: nothing waits
                # for it, so it happens beside the caller.
                threading.Thread(target=os.close, args=(old,), name="reflexkit-prune").start()
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            os.close(lock_fd)
        log.info("pruned %d records older than %s from %s", sieve.removed, older_than, self._path)
        return sieve.removed

    def _open_locked_original(self) -> int:
        fd = os.open(self._path, os.O_RDWR | os.O_APPEND | NOFOLLOW)
        regular(fd, self._path)
        return fd

    def _names(self, fd: int) -> bool:
        """Whether the path still names the file *fd* holds."""
        st = os.fstat(fd)
        try:
            now = self._path.lstat()
        except FileNotFoundError:
            return False
        return (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev)


def _lines_backwards(fd: int) -> Iterator[tuple[int, bytes | None]]:
    """Yield ``(offset, line)`` for the lines of a file, last first, reading blocks.

    *line* is None for a line longer than :data:`MAX_LINE`, which is never read whole.
    """
    hi = os.fstat(fd).st_size
    want = _CHUNK
    while hi > 0:
        lo = max(0, hi - want)
        buf = os.pread(fd, hi - lo, lo)
        base = lo
        if lo > 0:
            # A newline that starts a line in the block (not the one ending it at hi - 1).
            first = buf.find(b"\n", 0, len(buf) - 1)
            if first < 0 and want >= MAX_LINE:  # too long for a record: find where it starts
                hi = _start_of_line(fd, lo)
                yield hi, None
                want = _CHUNK
                continue
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
                yield offset, part if len(part) <= MAX_LINE else None
        hi = base
        want = _CHUNK


def _start_of_line(fd: int, at: int) -> int:
    """Return where the line holding byte *at* starts, reading back a block at a time."""
    while at > 0:
        lo = max(0, at - _CHUNK)
        nl = os.pread(fd, at - lo, lo).rfind(b"\n")
        if nl >= 0:
            return lo + nl + 1
        at = lo
    return 0
