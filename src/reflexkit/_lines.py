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
asks for pipes. :func:`open_lines` and :func:`scan` are the readers' side: whole lines from
a regular file, a line too long to be a record skipped without being held in memory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Self

__all__ = ["MAX_LINE", "LineWriter", "blank", "open_lines", "scan", "unglue"]

_TRIES = 5  # torn lines written before one line, one after the other, before giving up
_BLOCK = 1 << 20

MAX_LINE = 16 * 1024 * 1024
"""The longest line read as a record: longer is a blob or a crash's zeros, skipped unread."""


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


def scan(
    fd: int, start: int = 0, *, tail: bool = True, max_line: int = MAX_LINE
) -> Iterator[tuple[int, int, bytes | None]]:
    """Yield ``(offset, end, line)`` for each line of the file behind *fd* from *start*.

    *line* is without its newline, and ``None`` for a line longer than *max_line*, which is
    skipped without being held; *end* is where the next line starts. Memory stays within
    one block and one line, whatever the file holds.

    Args:
        fd: A descriptor open for reading (:func:`open_lines`).
        start: Where to start: the start of a line.
        tail: Also yield a last line with no newline (torn, or still being written); without
            it the scan stops after the last newline.
        max_line: The longest line yielded as bytes.

    Raises:
        OSError: The file can't be read.
    """
    at, pending, first, skipping = start, bytearray(), start, False
    while block := os.pread(fd, _BLOCK, at):
        at += len(block)
        begin = 0
        while (newline := block.find(b"\n", begin)) >= 0:
            end = at - len(block) + newline + 1
            if skipping or len(pending) + newline - begin > max_line:
                yield first, end, None
            else:
                pending += block[begin:newline]
                yield first, end, bytes(pending)
            pending.clear()
            first, skipping, begin = end, False, newline + 1
        if not skipping:
            pending += block[begin:]
            if len(pending) > max_line:
                pending.clear()
                skipping = True
    if tail and (pending or skipping):
        yield first, at, None if skipping else bytes(pending)


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
