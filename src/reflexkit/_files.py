"""Whole-file writes that leave the old file or the whole new one, never a part.

Reports, hook session state, Claude Code's settings and ``reflexkit config init`` replace a
whole file. Each goes through :func:`atomic_write`: the bytes go to a new temporary file
beside the target (created with ``O_EXCL``, so never through a planted link), every byte is
written (a short write is retried, a full disk is an error), the file is synced and renamed
over the target, and the folder is synced so the rename survives a power loss. On any
failure the temporary file is removed and the target is as it was. A symbolic link at the
target is replaced by the file, never followed. :func:`read_regular` reads such a file
back: not through a link, never blocking on a FIFO planted in its place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["FOLDER_MODE", "atomic_write", "make_dirs", "read_regular", "sync_folder"]


FOLDER_MODE = 0o755
"""The most a folder reflexkit creates allows (less the umask): nobody else may write it."""


def make_dirs(folder: Path, mode: int = FOLDER_MODE) -> None:
    """Create *folder* and its missing parents with *mode* (less the umask); fine if it exists.

    ``Path.mkdir(parents=True)`` creates the parents with ``0o777`` less the umask: under
    ``umask 000`` (a container default) anyone on the machine could then replace the memory
    file or a run log and put text into the next retry prompt.

    Raises:
        OSError: As ``Path.mkdir(parents=True, exist_ok=True)``: ``FileExistsError`` when
            *folder* is a file, ``NotADirectoryError`` when a parent is one, and so on.
    """
    try:
        folder.mkdir(mode)
    except FileNotFoundError:
        if folder.parent == folder:
            raise
        make_dirs(folder.parent, mode)
        make_dirs(folder, mode)
    except OSError:
        if not folder.is_dir():
            raise


def sync_folder(folder: Path) -> None:
    """Sync *folder*, so a file created or renamed in it survives a power loss.

    Raises:
        OSError: The folder can't be opened or synced (file systems that can't sync a folder
            at all, ``EINVAL``, are let be).
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


def atomic_write(target: Path, data: bytes, *, mode: int | None = None) -> Path:
    """Replace *target* with *data*, whole or not at all; return *target*.

    Args:
        target: The file; its folder is created when missing.
        data: The new contents.
        mode: Permissions of the file; by default those of the file it replaces, or 0600.

    Raises:
        OSError: The folder or the file can't be written (a full disk, a read-only file
            system, a folder at *target*); *target* is left as it was.
    """
    make_dirs(target.parent)
    if mode is None:
        try:
            info = target.lstat()
        except FileNotFoundError:
            mode = 0o600
        else:
            mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o600
    import tempfile  # noqa: PLC0415 -- random and shutil stay out of `recent`'s start-up (#19)

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            os.fchmod(fd, mode)  # mkstemp made it 0600
            view = memoryview(data)
            while view:
                done = os.write(fd, view)
                if not done:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[done:]
            os.fsync(fd)
        finally:
            os.close(fd)
        Path(tmp).replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise
    # The file is in place by now: a folder that can't be synced (no read permission on it)
    # costs the rename's durability against a power loss, not the write, so it isn't an error.
    with contextlib.suppress(OSError):
        sync_folder(target.parent)
    return target


def read_regular(
    path: Path, *, limit: int | None = 16 * 1024 * 1024, follow: bool = False
) -> bytes:
    """Return the first *limit* bytes of the regular file at *path* (all with ``None``).

    Args:
        path: The file.
        limit: The most to read.
        follow: Read through a symbolic link (a user's file, such as committed fixtures);
            by default a link is refused.

    Raises:
        FileNotFoundError: There is no file.
        OSError: *path* is a folder, a FIFO or a device (or a link, unless *follow*), or
            can't be read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks: list[bytes] = []
        size = 0
        while limit is None or size < limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(limit - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
