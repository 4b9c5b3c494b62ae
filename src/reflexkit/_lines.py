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
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Self

__all__ = ["LineWriter", "blank", "unglue"]

_TRIES = 5  # torn lines written before one line, one after the other, before giving up


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
    """

    def __init__(
        self, path: str | os.PathLike[str], *, keep_open: bool = True, mode: int = 0o644
    ) -> None:
        self.path = Path(path)
        self._keep_open = keep_open
        self._mode = mode
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
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC  # read: the byte before
        fd = os.open(self.path, flags, self._mode)
        self._seekable = stat.S_ISREG(os.fstat(fd).st_mode)
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
