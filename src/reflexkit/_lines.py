"""One append-only line writer for the files many processes share (#19).

The run log, the fixture recorder and (to come) the JSONL store each append whole lines to a
file that other processes append to at the same time. The rule that keeps the lines whole is
the same everywhere: one ``os.write`` of the complete line on an ``O_APPEND`` descriptor,
which the kernel places at the end of the file atomically with respect to other appenders. A
short write (a full disk) is an error, never half a line followed by the next one.

After each write the writer reads the byte before its line: when that is not a newline, a torn
line (a write cut short by a full disk or a kill, a program that appends fragments) got the
line glued to its end, and :func:`unglue` writes the line again and blanks the glued copy
with spaces. Blanks never include a newline, so line boundaries never move: whoever reads or
indexes the file never sees a line appear where there was none.

Nothing here follows a symbolic link planted where the file should be (``O_NOFOLLOW``), and
a FIFO or a device in its place is refused (a record written into a pipe nobody reads is a
record lost, and a reader opening it would wait for a writer forever), unless the writer
asks for pipes. :func:`open_lines`, :func:`read_lines` and :func:`scan` are the readers'
side (the episodic memory's too): whole lines from a regular file, a line too long to be a
record skipped without being held in memory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Self

from reflexkit._files import make_dirs

__all__ = ["MAX_LINE", "LineWriter", "blank", "open_lines", "read_lines", "scan", "unglue"]

_TRIES = 5  # torn lines written before one line, one after the other, before giving up

MAX_LINE = 16 << 20
"""The longest line a store keeps: a record is a few KiB; what is longer is damage (a blob
appended by another program, a run of zeros a crash left), skipped without being read whole."""
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


def _refusal(path: Path, err: OSError) -> OSError:
    """The error of an ``O_NOFOLLOW`` open, saying when it met a planted link."""
    if err.errno == errno.ELOOP:
        msg = "is a symbolic link; reflexkit does not follow links it did not make"
        return OSError(errno.ELOOP, msg, str(path))
    return err


def _not_regular(path: Path) -> OSError:
    return OSError(errno.EINVAL, "not a regular file", str(path))


def open_lines(path: str | os.PathLike[str]) -> int:
    """Open a file of lines for reading: not through a link, never blocking on a FIFO.

    Returns:
        A descriptor of the regular file at *path*; the caller closes it.

    Raises:
        FileNotFoundError: There is no file.
        OSError: *path* is a symbolic link, a folder, a FIFO or a device, or can't be opened.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise _refusal(path, err) from err
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_regular(path)
    return fd


def scan(fd: int, start: int = 0, *, tail: bool = True) -> Iterator[tuple[int, int, bytes | None]]:
    """Yield ``(offset, end, line)`` for each line of the file behind *fd* from *start*.

    :func:`read_lines` up to the file's size now, then, with *tail*, the last line with no
    newline (torn, or still being written), ``None`` when it is longer than :data:`MAX_LINE`.

    Args:
        fd: A descriptor open for reading (:func:`open_lines`).
        start: Where to start: the start of a line.
        tail: Also yield a last line with no newline; without it the scan stops after the
            last newline.

    Raises:
        OSError: The file can't be read.
    """
    size = os.fstat(fd).st_size
    at = start
    for offset, end, line in read_lines(fd, start, size):
        yield offset, end, line
        at = end
    if tail and at < size:
        yield at, size, os.pread(fd, size - at, at) if size - at <= MAX_LINE else None


def unglue(fd: int, line: bytes, start: int) -> None:
    """Write *line* again until a copy starts a line; blank the glued copies.

    *fd* is an ``O_APPEND`` descriptor opened for reading too; *start* is where the glued
    copy of *line* begins (the byte before it is not a newline).

    Raises:
        OSError: A copy was cut short (a full disk; its bytes are blanked too), or torn
            lines kept coming before every copy.
    """
    glued = [(start, len(line) - 1)]  # a whole copy keeps its newline
    try:
        for _ in range(_TRIES):
            written = os.write(fd, line)
            start = os.lseek(fd, 0, os.SEEK_CUR) - written
            if written != len(line):
                glued.append((start, written))
                msg = f"{os.strerror(errno.ENOSPC)} (wrote {written} of {len(line)} bytes)"
                raise OSError(errno.ENOSPC, msg)
            if os.pread(fd, 1, start - 1) == b"\n":
                return
            glued.append((start, len(line) - 1))
        raise OSError(errno.EIO, "torn lines keep being written into the file")
    finally:
        # Should this fail, a glued copy stays part of an unreadable line: never a second
        # readable copy, and the line written last is whole.
        with contextlib.suppress(OSError):
            blank(fd, glued)


def blank(fd: int, spans: Iterable[tuple[int, int]]) -> None:
    """Overwrite the ``(offset, length)`` *spans* of the file behind *fd* with spaces.

    Raises:
        OSError: A span could not be written (it stays as it was).
    """
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_APPEND)  # else pwrite appends
    try:
        for start, length in spans:
            view, at = memoryview(b" " * length), start
            while view:
                done = os.pwrite(fd, view, at)
                if not done:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view, at = view[done:], at + done
    finally:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class LineWriter:
    """Append whole lines to *path*; the file and its folder are created on first use.

    Args:
        path: The file.
        keep_open: Keep the descriptor between lines (a run log: many lines, one writer);
            ``False`` opens and closes it for each line (an occasional recorder).
        mode: Permissions of a new file.
        pipes: Accept a FIFO or a terminal at *path* (a log piped to another program); its
            writes never block: a full pipe is an error. Without it, anything but a regular
            file is refused.

    A symbolic link at *path* is never followed: :meth:`append` raises instead.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        keep_open: bool = True,
        mode: int = 0o644,
        pipes: bool = False,
    ) -> None:
        self.path = Path(path)
        self._keep_open = keep_open
        self._mode = mode
        self._pipes = pipes
        self._fd: int | None = None
        self._seekable = True
        self._lock = threading.Lock()

    def append(self, line: bytes) -> None:
        """Append *line*, adding the newline when it has none.

        Raises:
            ValueError: *line* holds a newline before its end (it would be two lines).
            OSError: The file can't be opened or written, or took only part of the line.
        """
        if not line.endswith(b"\n"):
            line += b"\n"
        if b"\n" in line[:-1]:
            msg = "a line to append holds a newline before its end"
            raise ValueError(msg)
        with self._lock:
            fd = self._fd if self._fd is not None else self._open()
            try:
                written = os.write(fd, line)
                # O_APPEND: where our own write went (a pipe or a terminal has no places).
                start = os.lseek(fd, 0, os.SEEK_CUR) - written if self._seekable else -1
                if written != len(line):
                    # Others may have appended after it: no cutting back, blanks instead
                    # (whoever wrote after it finds their line glued and writes it again).
                    if start >= 0:
                        blank(fd, [(start, written)])
                    msg = f"{self.path}: only {written} of {len(line)} bytes of a line were written"
                    raise OSError(errno.ENOSPC, msg)
                if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
                    unglue(fd, line, start)
            finally:
                if not self._keep_open:
                    os.close(fd)
                    self._fd = None

    __call__ = append

    def _open(self) -> int:
        make_dirs(self.path.parent)
        # Read too: the byte before. Non-blocking: a FIFO never holds the run up.
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
        try:
            fd = os.open(self.path, flags | os.O_NONBLOCK, self._mode)
        except OSError as err:
            raise _refusal(self.path, err) from err
        self._seekable = stat.S_ISREG(os.fstat(fd).st_mode)
        if not self._seekable and not self._pipes:
            os.close(fd)
            raise _not_regular(self.path)
        self._fd = fd
        return fd

    def close(self) -> None:
        """Close the file; a later :meth:`append` opens it again."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
