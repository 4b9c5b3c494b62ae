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

How an append stays whole (see docs/memory.md): the line is written with one ``os.write``
on an ``O_APPEND`` descriptor, which the kernel never interleaves with another such write,
while holding a *shared* ``flock`` on the file: writers don't wait for each other, only a
prune (which takes the lock exclusively) waits for them and they for it. Under that lock the
writer reads the lock file's prune flag (one ``pread``) and checks that the file's name in
its folder still names the file it holds (one ``fstatat`` on the folder's descriptor:
device and inode, without following a symlink and without walking the whole path): when a
prune waits for the writers, or a prune or another program swapped, moved or removed the
file, the slow path reopens the path and writes to that file, never into the old, unlinked
one. After the write
it checks the byte before its record (unless its own last record ended there): when that is
not a newline (a torn line: a crash, a write cut short, a
program that appends without the lock), the record was glued to it, so the writer writes the
record again and blanks the glued copy (spaces, keeping its newline; readers skip a blank
line), leaving the fragment a line of its own. A write cut short (a full disk) is cut back off
the file when nothing was written after it, and blanked when something was; the append fails.

A prune that wants the lock exclusively sets a flag in the lock file first; a writer that sees
it takes its turn exclusively too, so a stream of writers can't keep the prune waiting.

No file is ever mapped into memory (a mapping of a file that shrinks or can't be backed on a
full ``tmpfs`` kills the process with ``SIGBUS``), and no path is followed through a symlink
(``O_NOFOLLOW``): ``reflect`` must not append to whatever a planted link points at.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import operator
import os
import stat
import struct
import termios
import threading
import warnings
import weakref
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import NoReturn, Self

from reflexkit._files import make_dirs
from reflexkit._lines import blank, unglue
from reflexkit._log import get_logger
from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory._codec import (
    MAX_LINE,
    TOO_LONG,
    decode_line,
    encode_line,
    read_lines,
)
from reflexkit.memory._index import IndexDoubtError, OffsetIndex, pair_key, subtask_key
from reflexkit.memory.protocols import ONCE_WINDOW, MemoryStats
from reflexkit.models import Reflection
from reflexkit.tasks.config import Durability

__all__ = ["JsonlMemory"]

log = get_logger("reflexkit.memory")

_GEN = struct.Struct("<Q")
_GEN_AT = 8  # the first 8 bytes are free for a future magic
_WAITING_AT = 16  # 8 bytes, the pid of a prune waiting for the writers' lock, or zeros
_NOBODY = bytes(8)
# Errors that mean the lock file can't be made here (a folder we may not write), not damage.
_NO_LOCK_FILE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_CHUNK = 4 << 20
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC

_OPEN: weakref.WeakSet[JsonlMemory] = weakref.WeakSet()

# append() is the hot path: module-level names save the attribute lookups of each call.
_flock, _EX, _SH, _UN = fcntl.flock, fcntl.LOCK_EX, fcntl.LOCK_SH, fcntl.LOCK_UN
_lseek, _CUR, _write, _pread, _stat = os.lseek, os.SEEK_CUR, os.write, os.pread, os.stat
_inode = operator.attrgetter("st_ino", "st_dev")
_NL = b"\n"
_ioctl, _FIONREAD, _NONE_QUEUED = fcntl.ioctl, termios.FIONREAD, b"\0\0\0\0"


def _forget_after_fork() -> None:
    # Checking os.getpid() on every append would cost more than the append's own lseek.
    for store in list(_OPEN):
        store._after_fork()  # noqa: SLF001 -- the module's own class


os.register_at_fork(after_in_child=_forget_after_fork)


def _why(err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "it is a symlink, and reflexkit does not follow one there"
    return err.strerror or str(err)


def _regular(fd: int, path: Path) -> os.stat_result:
    """Return the fstat of *fd*; a StoreError (closing *fd*) when it is not a regular file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        msg = f"{path} is {kind}; memory.path must name a JSONL file"
        raise StoreError(msg)
    return st


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
        self._pid = -1  # first: __del__ runs even when the checks below raise
        if not os.fspath(path).strip():
            msg = "the memory path is empty; give the JSONL file to keep reflections in"
            raise StoreError(msg)
        self._path = Path(path)
        self._name = os.fspath(self._path)  # append's stat: a str, not a Path to convert
        self._base = self._path.name
        self._durability = Durability(durability)
        self._fsync = self._durability is Durability.FSYNC
        self._index = OffsetIndex(self._path.with_name(self._path.name + ".index"))
        self._lock_path = self._path.with_name(self._path.name + ".lock")
        self._mutex = threading.Lock()
        self._pid = -1
        self._fd = -1
        self._lock_fd = -1
        self._dir_fd = -1  # the folder, for a stat of the name alone (no path walk per append)
        self._ident = (-1, -1)  # (inode, device) of the file self._fd holds
        self._seen = b"-"  # the lock file's generation and prune flag when last checked
        self._end = -1  # where our last append on self._fd ended
        self._watch = -1  # inotify on self._fd and the lock file (see _watch), or -1
        self._unwatched = False  # no watch can be had for self._fd: stat the name instead
        self._quiet = False  # nothing to doubt at the last full check (with a watch)
        self._queued = bytearray(4)  # FIONREAD of the watch: bytes of events queued
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
            for fd in (self._fd, self._lock_fd, self._dir_fd, self._watch):
                if fd >= 0:
                    os.close(fd)
        self._forget()

    def _after_fork(self) -> None:
        """In a forked child: drop the parent's descriptors (and its locks) without closing.

        Only here is the mutex replaced (a thread of the parent may have held it at the fork):
        replacing it anywhere else lets a second thread in beside the one holding the old one.
        """
        self._mutex = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        self._fd = -1
        self._lock_fd = -1
        self._dir_fd = -1
        self._pid = -1
        self._ident = (-1, -1)
        self._seen = b"-"
        self._end = -1
        self._watch = -1
        self._unwatched = False
        self._quiet = False

    def _open_lock(self) -> int:
        make_dirs(self._path.parent)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        _regular(fd, self._lock_path)
        return fd

    def _open(self) -> int:
        """(Re)open the file for appending, and its lock file."""
        self._close()
        make_dirs(self._path.parent)
        created = not os.path.lexists(self._path)
        fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o600)
        st = _regular(fd, self._path)
        try:
            self._lock_fd = self._open_lock()
        except OSError as err:
            if err.errno not in _NO_LOCK_FILE:  # a symlink there (ELOOP) is refused
                os.close(fd)
                raise
            # A folder we may not write, holding a file we may: append without the prune
            # flag (no prune can run here either: it writes its new file in this folder).
            log.debug("%s: no lock file (%s); appending without it", self._path, err)
        except BaseException:
            os.close(fd)
            raise
        try:
            self._dir_fd = os.open(self._path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            self._dir_fd = -1  # the slow path's stat of the whole path then, every time
        self._fd = fd
        self._ident = (st.st_ino, st.st_dev)
        self._pid = os.getpid()
        if created and self._fsync:
            _fsync_dir(self._path.parent)
        return fd

    def _still_there(self) -> bool:
        """Whether the path still names the file we hold (not replaced, deleted, a link)."""
        try:
            st = _stat(self._name, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_dev) == self._ident

    # --- writing -------------------------------------------------------------------------

    def append(self, reflection: Reflection, /) -> None:
        """Append one reflection; when this returns it is in the file for every process.

        Raises:
            StoreError: The file can't be written (the message says why); nothing of the
                record is left in it (at most a blank line).
        """
        line = encode_line(reflection)
        if len(line) > MAX_LINE:
            msg = (
                f"can't append to {self._path}: the record is {len(line):,} bytes; a store "
                f"keeps records up to {MAX_LINE >> 20} MiB (its analysis and suggestion are "
                "meant to be a few paragraphs)"
            )
            raise StoreError(msg)
        with self._mutex:
            try:
                fd = self._fd if self._fd >= 0 else self._open()
                _flock(fd, _SH)
                try:
                    # Nothing happened since the last full check: no prune waits for the
                    # writers or swapped the file, nobody moved or removed it. With a watch,
                    # no event queued on it (one ioctl); without, the lock file's generation
                    # and flag as they were and the name in its folder still ours (a pread
                    # and an fstatat). Else the slow path sorts it out.
                    if self._watch >= 0:
                        _ioctl(self._watch, _FIONREAD, self._queued)
                        ours = self._quiet and self._queued == _NONE_QUEUED
                    else:
                        ours = self._unwatched and self._same_file()
                    if not ours:
                        fd = self._settle(fd)
                    written = _write(fd, line)
                    end = _lseek(fd, 0, _CUR)  # O_APPEND: where our own write ended
                    start = end - written
                    # The byte before is our own newline when our last line ended there.
                    if written != len(line) or (
                        start and start != self._end and _pread(fd, 1, start - 1) != _NL
                    ):
                        self._end = -1
                        self._mend(fd, line, start, written)
                    self._end = end
                finally:
                    # The descriptor locked now (a failed reopen closed the old one: -1).
                    if self._fd >= 0:
                        _flock(self._fd, _UN)
                if self._fsync:
                    os.fdatasync(fd)
            except OSError as err:
                msg = f"can't append to {self._path}: {_why(err)}"
                raise StoreError(msg) from err

    def append_once(self, reflection: Reflection, /) -> bool:
        """Append *reflection* unless a record with its id is stored; ``True`` when appended.

        The id is looked for among the :data:`~reflexkit.memory.protocols.ONCE_WINDOW` most
        recent records of its task and subtask, under an exclusive lock on the lock file, so
        two processes saving one attempt at the same moment store it once.

        Raises:
            StoreError: The store can't be read or written.
        """
        try:
            lock_fd = self._open_lock()
        except OSError as err:
            if err.errno not in _NO_LOCK_FILE:
                msg = f"can't lock {self._lock_path}: {_why(err)}"
                raise StoreError(msg) from err
            lock_fd = -1  # a folder we may not write: no prune can run here either
        try:
            if lock_fd >= 0:
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
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

    def _settle(self, fd: int) -> int:
        """The slow path of an append, holding *fd* shared: return the descriptor to write to.

        A prune waits for the writers (take turns with it, exclusively), or the file was
        swapped (the generation moved), replaced or removed by someone (the path names
        another file): write to what the path names now, never into an unlinked file.
        """
        self._quiet = False
        if self._watch >= 0 or (self._end >= 0 and not self._unwatched):
            self._rewatch(fd)
        seen = _pread(self._lock_fd, 16, _GEN_AT) if self._lock_fd >= 0 else b""
        mode = _SH
        if seen[8:16].strip(b"\0"):
            _flock(fd, _UN)
            mode = self._take_turns()
            _flock(fd, mode)
        while not self._still_there():
            _flock(fd, _UN)
            fd = -1  # closed by _open, which may fail (a link planted there)
            fd = self._open()
            _flock(fd, mode)
        if mode == _EX:
            self._seen = b"-"  # the prune's flag stays until it has run: check again next time
        else:
            self._seen = _pread(self._lock_fd, 16, _GEN_AT) if self._lock_fd >= 0 else b""
            self._quiet = True
        return fd

    def _rewatch(self, fd: int) -> None:
        """Drain the watch's events, or (the second append on *fd*) start watching.

        Before the slow path's checks, so what happens after them stays queued. A one-shot
        writer (a hook, ``reflexkit reflect``) never imports the watch.
        """
        try:
            from reflexkit.memory import _watch  # noqa: PLC0415 -- see the docstring
        except (ImportError, OSError):  # no descriptor left to read it with: stat instead
            self._unwatched = self._watch < 0
            return
        if self._watch >= 0:
            _watch.drain(self._watch)
        else:
            self._watch = _watch.watch(fd, self._lock_fd)
            self._unwatched = self._watch < 0

    def _same_file(self) -> bool:
        """Without a watch: the lock file as last seen, and the name still the file we hold."""
        try:
            return (
                _pread(self._lock_fd, 16, _GEN_AT) == self._seen
                and _inode(_stat(self._base, dir_fd=self._dir_fd, follow_symlinks=False))
                == self._ident
            )
        except OSError:  # removed; no lock file or folder (EBADF): the slow path
            return False

    def replaced(self) -> None:
        """Say that the file was replaced (as a prune does): appenders reopen the path.

        For whoever swaps the file outside :meth:`prune` (the PostgreSQL spool's replay).

        Raises:
            OSError: The lock file can't be written.
        """
        lock_fd = self._open_lock()
        try:
            _bump(lock_fd)
        finally:
            os.close(lock_fd)

    def _take_turns(self) -> int:
        """The lock mode while the lock file's flag says a prune waits for the writers.

        Exclusive while the prune runs, so it gets its turn between two writers (shared locks
        are granted past a waiting exclusive one). A flag left by a prune that was killed
        (nobody holds the prune lock) is cleared.
        """
        try:
            _flock(self._lock_fd, _SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _EX
        try:
            os.pwrite(self._lock_fd, _NOBODY, _WAITING_AT)
        except OSError as err:  # pragma: no cover -- overwriting 8 bytes the file has
            log.debug("%s: can't clear a killed prune's flag: %s", self._lock_path, err)
        finally:
            _flock(self._lock_fd, _UN)
        return _SH

    def _mend(self, fd: int, line: bytes, start: int, written: int) -> None:
        """Mend what the check after a write found; we hold the file's lock.

        Raises:
            OSError: The write was cut short (a full disk): the fragment is cut back off.
        """
        if written != len(line):
            self._cut(fd, start, written, len(line))
        # The byte before the record is not a newline: a torn line (a crash, a write cut
        # short, a program appending without the lock) got the record glued to its end.
        log.warning(
            "%s: a torn line ends at byte %d; the record is written after it", self._path, start
        )
        unglue(fd, line, start)

    def _cut(self, fd: int, start: int, written: int, size: int) -> NoReturn:
        """Take a write cut short at *start* back off the file, then raise ENOSPC.

        Cut off when nothing was written after it (the lock becomes exclusive for that),
        blanked when something was (whoever wrote that finds it glued and writes it again).
        """
        if written:
            _flock(fd, _EX)  # not atomic: the file may have been swapped meanwhile
            if self._still_there():
                if os.fstat(fd).st_size == start + written:
                    try:
                        os.ftruncate(fd, start)
                    except OSError as err:  # the fragment stays; the next append mends it
                        log.warning(
                            "%s: can't cut a partial write at byte %d: %s", self._path, start, err
                        )
                else:
                    self._blank(fd, [(start, written)])  # the writer after it mends its record
        why = f"{os.strerror(errno.ENOSPC)} (wrote {written} of {size} bytes)"
        raise OSError(errno.ENOSPC, why)

    def _blank(self, fd: int, spans: list[tuple[int, int]]) -> None:
        """Blank *spans* (see :func:`reflexkit._lines.blank`); a failure is only logged."""
        try:
            blank(fd, spans)
        except OSError as err:  # the fragment stays; the next append after it mends its own
            log.warning(
                "%s: can't blank a partial write at byte %d: %s", self._path, spans[0][0], err
            )

    # --- reading -------------------------------------------------------------------------

    def _open_for_reading(self) -> int | None:
        try:
            # Non-blocking: a FIFO swapped in for the file is refused, not waited on.
            fd = os.open(self._path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as err:
            msg = f"can't read {self._path}: {_why(err)}"
            raise StoreError(msg) from err
        _regular(fd, self._path)
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
            msg = f"can't read {self._path}: {_why(err)}"
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
        """Return up to *limit* valid records of a subtask (of a task) from *lines*, in order."""
        found: list[Reflection] = []
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
            msg = f"can't prune {self._path}: {_why(err)}"
            raise StoreError(msg) from err

    def _prune(self, older_than: datetime) -> int:
        from reflexkit.memory._sieve import Sieve  # noqa: PLC0415 -- not on recent's start-up

        lock_fd = self._open_lock()
        tmp = self._path.with_name(self._path.name + ".prune")
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)  # one prune at a time
            _bump(lock_fd)  # before: a prune has started
            old = self._open_locked_original()
            try:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()  # left by a prune that was killed
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
                sieve = Sieve(older_than, out)
                try:
                    # The bulk of the copy runs while writers go on appending to the old file.
                    copied = sieve.run(old, 0, os.fstat(old).st_size)
                    # Writers hold the file shared; the flag makes them take turns with us.
                    _flag_waiting(lock_fd, os.getpid())
                    fcntl.flock(old, fcntl.LOCK_EX)
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
                    _fsync_dir(self._path.parent)
                    _bump(lock_fd)  # after: the file is swapped
                    _flag_waiting(lock_fd, 0)
                    fcntl.flock(old, fcntl.LOCK_UN)  # writers go on; they see the new inode
                    swap.carry_over(self._path)
            finally:
                _flag_waiting(lock_fd, 0)
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
        fd = os.open(self._path, os.O_RDWR | os.O_APPEND | _NOFOLLOW)
        _regular(fd, self._path)
        return fd

    def _names(self, fd: int) -> bool:
        """Whether the path still names the file *fd* holds."""
        st = os.fstat(fd)
        try:
            now = _stat(self._path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev)


def _flag_waiting(lock_fd: int, pid: int) -> None:
    """Say in the lock file that a prune waits for the writers' lock (*pid* 0: no longer)."""
    try:
        os.pwrite(lock_fd, _GEN.pack(pid), _WAITING_AT)
    except OSError as err:  # writers then keep their shared lock: the prune waits longer
        log.warning("can't flag a prune waiting for the writers: %s", err)


def _bump(lock_fd: int) -> None:
    raw = os.pread(lock_fd, 8, _GEN_AT)
    generation = _GEN.unpack(raw)[0] if len(raw) == 8 else 0  # noqa: PLR2004
    data = _GEN.pack(generation + 1)
    if os.pwrite(lock_fd, data, _GEN_AT) != len(data):
        raise OSError(errno.ENOSPC, "short write of the generation")


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


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
