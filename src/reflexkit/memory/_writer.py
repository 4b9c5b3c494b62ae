"""The locked writer of a JSONL store: one whole line a record, never into a stale file.

How an append stays whole (see docs/memory.md): the line is written with one ``os.write``
on an ``O_APPEND`` descriptor, which the kernel never interleaves with another such write,
while holding a *shared* ``flock`` on the file: writers don't wait for each other, only a
prune (which takes the lock exclusively) waits for them and they for it. Under that lock the
writer makes sure that nothing happened since its last full check: no prune waits for the
writers or swapped the file, and nobody moved, removed or replaced it. A writer that has
appended more than once asks its inotify watch (:mod:`reflexkit.memory._watch`: one
``ioctl``); before that, or where no watch can be had, it reads the lock file's generation
and flag (one ``pread``) and checks that the file's name in its folder still names the file
it holds (one ``fstatat`` on the folder's descriptor: device and inode, without following a
symlink and without walking the whole path). When something did happen, the slow path checks
the whole path and reopens it, and writes to that file, never into the old, unlinked one.
After the write it checks the byte before its record (unless its own last record ended
there): when that is not a newline (a torn line: a crash, a write cut short, a program that
appends without the lock), the record was glued to it, so the writer writes the record again
and blanks the glued copy (spaces, keeping its newline; readers skip a blank line), leaving
the fragment a line of its own. A write cut short (a full disk) is cut back off the file when
nothing was written after it, and blanked when something was; the append fails.

A prune that wants the lock exclusively sets a flag in the lock file first; a writer that sees
it takes its turn exclusively too, so a stream of writers can't keep the prune waiting.

The lock file (``<name>.lock``) holds a *generation* a prune bumps before it starts and after
it swaps the file, and the flag; :func:`bump` and :func:`flag_waiting` write them.
"""

from __future__ import annotations

import errno
import fcntl
import operator
import os
import stat
import struct
import termios
import threading
import time
import weakref
from pathlib import Path
from typing import NoReturn

from reflexkit._files import make_dirs
from reflexkit._lines import blank, unglue
from reflexkit._log import get_logger
from reflexkit.exceptions import StoreError
from reflexkit.memory._codec import MAX_LINE, encode_line
from reflexkit.models import Reflection
from reflexkit.redaction._gate import stored
from reflexkit.tasks._config import Durability

__all__ = [
    "NOFOLLOW",
    "NO_LOCK_FILE",
    "Appender",
    "bump",
    "flag_waiting",
    "fsync_dir",
    "lock_within",
    "regular",
    "why",
]

log = get_logger("reflexkit.memory")

_GEN = struct.Struct("<Q")
_GEN_AT = 8  # the first 8 bytes are free for a future magic
_WAITING_AT = 16  # 8 bytes, the pid of a prune waiting for the writers' lock, or zeros
_NOBODY = bytes(8)
# Errors that mean the lock file can't be made here (a folder we may not write), not damage.
NO_LOCK_FILE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC

_OPEN: weakref.WeakSet[Appender] = weakref.WeakSet()

LOCK_WAIT = 10.0
"""Seconds a store waits for a lock another process holds before it gives up: a process
stopped while it holds one (``SIGSTOP``, Ctrl-Z, a debugger, a frozen container) must not
stall every reflexkit process on the machine. Far longer than any lock is held for in
use (a catch-up of a million-record index, a prune's swap). What giving up means is the
caller's: ``recent`` reads without the index, ``append`` raises :class:`StoreError`."""

# append() is the hot path: module-level names save the attribute lookups of each call.
_flock, _EX, _SH, _UN = fcntl.flock, fcntl.LOCK_EX, fcntl.LOCK_SH, fcntl.LOCK_UN
_SH_NB = _SH | fcntl.LOCK_NB
_lseek, _CUR, _write, _pread, _stat = os.lseek, os.SEEK_CUR, os.write, os.pread, os.stat
_inode = operator.attrgetter("st_ino", "st_dev")
_NL = b"\n"
_ioctl, _FIONREAD, _NONE_QUEUED = fcntl.ioctl, termios.FIONREAD, b"\0\0\0\0"


def _forget_after_fork() -> None:
    # Checking os.getpid() on every append would cost more than the append's own lseek.
    for store in list(_OPEN):
        store._after_fork()  # noqa: SLF001 -- the module's own class


os.register_at_fork(after_in_child=_forget_after_fork)


def lock_within(fd: int, mode: int) -> None:
    """``flock`` *fd* in *mode*, waiting at most :data:`LOCK_WAIT` seconds.

    Uncontended, one system call. Contended, the wait is polled (a blocking ``flock`` can't
    be given a deadline), more slowly as it goes on.

    Raises:
        OSError: ``ETIMEDOUT``: another process held the lock all that time.
    """
    try:
        _flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        pass
    else:
        return
    deadline = time.monotonic() + LOCK_WAIT
    pause = 0.0005
    while True:
        time.sleep(pause)
        try:
            _flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                msg = (
                    f"another process has held its lock for {LOCK_WAIT:g} s "
                    "(stopped or hung: find it with fuser or lsof)"
                )
                raise OSError(errno.ETIMEDOUT, msg) from None
            pause = min(pause * 2, 0.05)
        else:
            return


def why(err: OSError) -> str:
    """Say why *err* happened, in words for the user (a symlink refused, named as such)."""
    if err.errno == errno.ELOOP:
        return "it is a symlink, and reflexkit does not follow one there"
    if err.errno == errno.EFBIG and "limit" not in (err.strerror or ""):
        return _too_large(err.strerror or os.strerror(errno.EFBIG))
    return err.strerror or str(err)


def _too_large(what: str) -> str:
    """*what*, followed by the file size limit that refused a write (``ulimit -f``)."""
    import resource  # noqa: PLC0415 -- only on this error path

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit == resource.RLIM_INFINITY:
        return what
    return f"{what}: the file size limit (ulimit -f) is {limit:,} bytes"


def _cut_short(start: int, written: int, size: int) -> OSError:
    """The error for a write cut short at *start*: the file size limit, or a full disk.

    Python ignores SIGXFSZ, so a write past ``ulimit -f`` is cut short at the limit (and the
    next one fails with EFBIG), just as a full disk cuts it short: name the one it was.
    """
    import resource  # noqa: PLC0415 -- only on this error path

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    code = errno.ENOSPC
    if limit != resource.RLIM_INFINITY and start + size > limit:
        code = errno.EFBIG
    what = f"{os.strerror(code)} (wrote {written} of {size} bytes)"
    return OSError(code, _too_large(what) if code == errno.EFBIG else what)


def regular(fd: int, path: Path) -> os.stat_result:
    """Return the fstat of *fd*; a StoreError (closing *fd*) when it is not a regular file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        msg = f"{path} is {kind}; memory.path must name a JSONL file"
        raise StoreError(msg)
    return st


class Appender:
    """Appends records to one JSONL file for a store; safe to share between threads.

    Args:
        path: The JSONL file; created (mode 0600, with its folders) on the first append.
        durability: ``"none"`` or ``"fsync"`` (see :class:`~reflexkit.memory.JsonlMemory`).

    Each process (also after ``fork``) opens its own descriptors.
    """

    def __init__(self, path: Path, durability: Durability) -> None:
        self._pid = -1  # first: __del__ runs even when __init__ does not finish
        self._path = path
        self._name = os.fspath(path)  # the slow path's stat: a str, not a Path to convert
        self._base = path.name
        self._fsync = durability is Durability.FSYNC
        self._lock_path = path.with_name(path.name + ".lock")
        self._mutex = threading.Lock()
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
        _OPEN.add(self)

    def close(self) -> None:
        """Close the descriptors (a later append opens them again)."""
        with self._mutex:
            self._close()

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

    def open_lock(self) -> int:
        """Open the lock file (made if missing, 0600), never through a link; its descriptor."""
        make_dirs(self._path.parent)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
        regular(fd, self._lock_path)
        return fd

    def _open(self) -> int:
        """(Re)open the file for appending, and its lock file."""
        self._close()
        make_dirs(self._path.parent)
        created = not os.path.lexists(self._path)
        fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT | NOFOLLOW, 0o600)
        st = regular(fd, self._path)
        try:
            self._lock_fd = self.open_lock()
        except OSError as err:
            if err.errno not in NO_LOCK_FILE:  # a symlink there (ELOOP) is refused
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
            fsync_dir(self._path.parent)
        return fd

    def _still_there(self) -> bool:
        """Whether the path still names the file we hold (not replaced, deleted, a link)."""
        try:
            st = _stat(self._name, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return (st.st_ino, st.st_dev) == self._ident

    def append(self, reflection: Reflection, /) -> None:
        """Append one reflection; when this returns it is in the file for every process.

        Raises:
            StoreError: The file can't be written (the message says why); nothing of the
                record is left in it (at most a blank line).
        """
        line = encode_line(stored(reflection))  # the outbound gate, by construction
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
                try:
                    _flock(fd, _SH_NB)
                except BlockingIOError:  # a prune's turn (or a stopped process): bounded
                    lock_within(fd, _SH)
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
                msg = f"can't append to {self._path}: {why(err)}"
                raise StoreError(msg) from err

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
            lock_within(fd, mode)
        while not self._still_there():
            _flock(fd, _UN)
            fd = -1  # closed by _open, which may fail (a link planted there)
            fd = self._open()
            lock_within(fd, mode)
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
        """Take a write cut short at *start* back off the file, then raise why (see _cut_short).

        Cut off when nothing was written after it (the lock becomes exclusive for that),
        blanked when something was (whoever wrote that finds it glued and writes it again).
        """
        if written:
            lock_within(fd, _EX)  # not atomic: the file may have been swapped meanwhile
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
        raise _cut_short(start, written, size)

    def _blank(self, fd: int, spans: list[tuple[int, int]]) -> None:
        """Blank *spans* (see :func:`reflexkit._lines.blank`); a failure is only logged."""
        try:
            blank(fd, spans)
        except OSError as err:  # the fragment stays; the next append after it mends its own
            log.warning(
                "%s: can't blank a partial write at byte %d: %s", self._path, spans[0][0], err
            )


def flag_waiting(lock_fd: int, pid: int) -> None:
    """Say in the lock file that a prune waits for the writers' lock (*pid* 0: no longer)."""
    try:
        os.pwrite(lock_fd, _GEN.pack(pid), _WAITING_AT)
    except OSError as err:  # writers then keep their shared lock: the prune waits longer
        log.warning("can't flag a prune waiting for the writers: %s", err)


def bump(lock_fd: int) -> None:
    raw = os.pread(lock_fd, 8, _GEN_AT)
    generation = _GEN.unpack(raw)[0] if len(raw) == 8 else 0  # noqa: PLR2004
    data = _GEN.pack(generation + 1)
    if os.pwrite(lock_fd, data, _GEN_AT) != len(data):
        raise OSError(errno.ENOSPC, "short write of the generation")


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
