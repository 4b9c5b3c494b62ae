"""One append-only line writer for the files many processes share (#19).

The run log, the fixture recorder and (to come) the JSONL store each append whole lines to a
file that other processes append to at the same time. The rule that keeps the lines whole is
the same everywhere: one ``os.write`` of the complete line on an ``O_APPEND`` descriptor,
which the kernel places at the end of the file atomically with respect to other appenders. A
short write (a full disk) is an error, never half a line followed by the next one.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Self

__all__ = ["LineWriter"]


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
            finally:
                if not self._keep_open:
                    os.close(fd)
                    self._fd = None
        if written != len(line):
            msg = f"{self.path}: only {written} of {len(line)} bytes of a line were written"
            raise OSError(msg)

    __call__ = append

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, self._mode)
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
