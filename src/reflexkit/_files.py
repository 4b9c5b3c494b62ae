"""Whole-file writes that leave the old file or the whole new one, never a part.

Reports, hook session state, Claude Code's settings and ``reflexkit config init`` replace a
whole file. Each goes through :func:`atomic_write`: the bytes go to a new temporary file
beside the target (created with ``O_EXCL``, so never through a planted link), every byte is
written (a short write is retried, a full disk is an error), the file is synced and renamed
over the target, and the folder is synced so the rename survives a power loss. On any
failure the temporary file is removed and the target is as it was. A symbolic link at the
target is replaced by the file, never followed.

:func:`read_regular` is the one safe reader, for every file whose path a payload, a config or
a repository can name: a regular file only, no link followed, a non-blocking open (a FIFO
planted there never hangs it), a size bound (``/dev/zero`` or a huge file never fills the
memory), and an error that says which of these it was.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Literal

__all__ = [
    "FOLDER_MODE",
    "atomic_write",
    "make_dirs",
    "open_regular",
    "read_regular",
    "safe_id",
    "sync_folder",
]


FOLDER_MODE = 0o755
"""The most a folder reflexkit creates allows (less the umask): nobody else may write it."""


OWN_FOLDER_NAME = ".reflexkit"

OWN_GITIGNORE = b"""\
# Made by reflexkit. Memory, run logs, prompts and reports hold tool output (and may hold
# what a redaction missed): they stay out of git. Commit project.json and recorded fixtures.
*
!.gitignore
!project.json
!fixtures/
!fixtures/**
"""
"""The ``.gitignore`` reflexkit puts in its own folder when it makes the folder or one in it."""


def make_dirs(folder: Path, mode: int = FOLDER_MODE) -> None:
    """Create *folder* and its missing parents with *mode* (less the umask); fine if it exists.

    ``Path.mkdir(parents=True)`` creates the parents with ``0o777`` less the umask: under
    ``umask 000`` (a container default) anyone on the machine could then replace the memory
    file or a run log and put text into the next retry prompt. A folder made in (or as)
    ``.reflexkit`` gives that folder its ``.gitignore`` (:data:`OWN_GITIGNORE`) when it has
    none, so the memory never shows up in ``git status``.

    Raises:
        OSError: As ``Path.mkdir(parents=True, exist_ok=True)``: ``FileExistsError`` when
            *folder* is a file, ``NotADirectoryError`` when a parent is one, and so on.
    """
    try:
        folder.mkdir(mode)
        _ignore_own(folder)
    except FileNotFoundError:
        if folder.parent == folder:
            raise
        make_dirs(folder.parent, mode)
        make_dirs(folder, mode)
    except OSError:
        if not folder.is_dir():
            raise


def _ignore_own(made: Path) -> None:
    """Give ``.reflexkit`` its ``.gitignore`` when *made* is it or a folder right inside it."""
    own = made if made.name == OWN_FOLDER_NAME else made.parent
    if own.name != OWN_FOLDER_NAME:
        return
    ignore = own / ".gitignore"
    try:
        if not os.path.lexists(ignore):
            atomic_write(ignore, OWN_GITIGNORE, mode=0o644)
    except OSError:  # a read-only or full disk: the folder itself is what was asked for
        return


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


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


_OUTSIDE = "is outside the project; reflexkit reads only files inside it there"


def _beneath(path: str | os.PathLike[str], root: Path) -> bool:
    """Whether *path*, its links followed, lies inside *root* (resolved)."""
    try:
        return Path(path).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of links
        return False


def _opened_beneath(fd: int, root: Path) -> bool:
    """Whether the file open on *fd* is inside *root* (Linux; elsewhere the path check holds)."""
    try:
        opened = Path(f"/proc/self/fd/{fd}").readlink()
    except OSError:
        return True
    return opened.is_relative_to(root.resolve())


def open_regular(
    path: str | os.PathLike[str], *, follow: bool = False, within: Path | None = None
) -> int:
    """Open the regular file at *path* for reading; return its descriptor (the caller closes it).

    Never through a symbolic link (unless *follow*), never blocking (a FIFO planted there
    would wait for a writer forever), never a device (``/dev/zero`` never ends); with
    *within*, never a file outside that folder (an absolute path, ``..``, a folder on the
    way that links out), checked on the path and again on what was opened.

    Raises:
        FileNotFoundError: There is no file.
        OSError: *path* is a link, a folder, a FIFO, a device or a socket, or outside
            *within* (the message says which), or can't be opened.
    """
    if within is not None:
        named, path = path, within / path
        if not _beneath(path, within):
            raise OSError(errno.EACCES, _OUTSIDE, os.fspath(named))
    fd = _open_regular(path, follow=follow)
    if within is not None and not _opened_beneath(fd, within):
        os.close(fd)
        raise OSError(errno.EACCES, _OUTSIDE, os.fspath(path))
    return fd


def _open_regular(path: str | os.PathLike[str], *, follow: bool) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as err:
        if err.errno == errno.ELOOP and not follow:
            why = "is a symbolic link; reflexkit does not follow links there"
            raise OSError(errno.ELOOP, why, os.fspath(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        why = f"is {_kind(mode)}, not a regular file"
        raise OSError(errno.EINVAL, why, os.fspath(path))
    return fd


def read_regular(
    path: str | os.PathLike[str],
    *,
    limit: int | None = 16 * 1024 * 1024,
    follow: bool = False,
    keep: Literal["head", "tail"] | None = None,
    within: Path | None = None,
) -> bytes:
    """Return the bytes of the regular file at *path*: the one safe reader.

    Every file whose path a payload, a config or a repository can name is read here: a
    regular file only, no link followed, a non-blocking open, and at most *limit* bytes.

    Args:
        path: The file.
        limit: The most it may hold (``None``: no bound, for files reflexkit wrote itself).
        follow: Read through a symbolic link (a user's own file, such as committed
            fixtures, whose target is checked the same way); by default a link is refused.
        keep: What of a longer file to return instead of refusing it: its first *limit*
            bytes (``"head"``, an excerpt) or its last (``"tail"``, a log or a transcript
            read from its end).
        within: A folder *path* must lie in, links followed (relative paths start there):
            for paths a payload or a failure names, which may point anywhere.

    Raises:
        FileNotFoundError: There is no file.
        OSError: *path* is a folder, a FIFO, a device or a socket (or a link, unless
            *follow*), can't be read, or (``errno.EFBIG``) holds more than *limit* bytes;
            the message says which.
    """
    fd = open_regular(path, follow=follow, within=within)
    try:
        start = 0
        if keep == "tail" and limit is not None:
            start = max(0, os.fstat(fd).st_size - limit)
        chunks: list[bytes] = []
        size = 0
        while limit is None or size <= limit:
            want = 1 << 20 if limit is None else min(limit + 1 - size, 1 << 20)
            chunk = os.pread(fd, want, start + size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
        if limit is not None and size > limit:
            if keep is not None:  # "tail": it grew while read; its newest bytes
                return data[:limit] if keep == "head" else data[-limit:]
            why = f"holds more than {_size(limit)}, the most reflexkit reads there"
            raise OSError(errno.EFBIG, why, os.fspath(path))
        return data
    finally:
        os.close(fd)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and not n % (1 << shift):
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_ID = 64


def safe_id(text: str) -> str:
    """Return *text* as a file-name part that can't name another folder.

    Anything but letters, digits, ``_``, ``.`` and ``-`` becomes ``_``, leading dots go, and
    a long id is cut; when anything changed, a short hash of the original is appended so
    two different ids never collide. An empty id becomes ``unknown``.
    """
    clean = _UNSAFE.sub("_", text).lstrip(".")[:_MAX_ID]
    if clean == text and clean:
        return clean
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{clean or 'unknown'}-{digest}"
