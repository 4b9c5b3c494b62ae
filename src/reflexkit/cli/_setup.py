"""Telling a setup problem (exit 2) from work that failed (exit 1).

A store that can't be opened because ``.reflexkit`` is read-only, is a file, or its memory
path is a folder or a symlink is the same kind of problem as a bad project.json: nothing
will work until the user changes the setup, and retrying won't help. A full disk or an I/O
error is not: the same command may succeed later.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from reflexkit._files import make_dirs

__all__ = ["SETUP_ERRNOS", "is_setup_error", "memory_setup_problem"]

SETUP_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.ELOOP,
        errno.ENAMETOOLONG,
        errno.ENXIO,  # a FIFO with no reader, opened without blocking
    }
)
"""The errors of opening a file that only a change of setup cures."""


def is_setup_error(err: BaseException) -> bool:
    """Whether *err*, or the OS error behind it, is a setup problem."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in SETUP_ERRNOS:
            return True
        if "memory.path must name a JSONL file" in str(current):  # a folder or a device
            return True
        current = current.__cause__ or current.__context__
    return False


def memory_setup_problem(path: Path) -> str | None:
    """Why a JSONL memory file at *path* can't be written, when it is the setup; else None.

    Used after a save failed, to say what to change: it creates the folders (as the first
    append would) and opens the file for appending without blocking or following a link.
    """
    try:
        make_dirs(path.parent)
    except FileExistsError:  # a file where a folder of the path should be
        return f"{path.parent}: Not a directory"
    except OSError as err:
        if err.errno in SETUP_ERRNOS:
            return f"{err.filename or path.parent}: {err.strerror or err}"
        return None
    try:
        fd = os.open(
            path,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            0o600,
        )
    except OSError as err:
        if err.errno in SETUP_ERRNOS:
            where = err.filename or path
            return f"{where}: {err.strerror or err}"
        return None
    os.close(fd)
    return None
