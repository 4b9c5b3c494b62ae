"""Learn that a store's file was renamed, removed or replaced, without a ``stat`` per append.

A writer must never append to a file that its path no longer names (a prune swapped it, a
program moved or removed it, a link was planted in its place). Checking the name with
``fstatat`` before every write costs more than the write itself. Instead, a writer that
appends more than once asks the kernel to tell it: an inotify descriptor watches the very
file it holds (through ``/proc/self/fd/N``, so the watch is on that inode, whatever the path
names by then) and its lock file. Every way the path can stop naming the file (a rename
away, an unlink, a rename over it) moves or unlinks that inode, which queues an event
(``IN_MOVE_SELF``, or ``IN_ATTRIB`` for the link count) before the system call that did it
returns; a prune's flag and generation, written to the lock file, queue ``IN_MODIFY``. So
one ``ioctl(FIONREAD)`` on the descriptor, under the lock, says "nothing happened since the
last full check"; anything queued sends the writer down the slow path, which drains the
queue and checks the path in full (``reflexkit.memory._writer``).

Only where the kernel sees every change: on Linux, with ``/proc``, on a local file system.
On a network or FUSE file system another machine's rename queues nothing here, so a store
there (or where inotify can't be had: no instances left, another OS) checks the name on
every append, as before. ``ctypes`` is imported on the first watch only, and the C library
is the process's own (``CDLL(None)``): ``inotify_simple`` finds it with ``ldconfig -p`` in a
subprocess, which costs a one-shot writer (a hook) more than its append.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

__all__ = ["drain", "watch"]

_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_FILE = _IN_ATTRIB | _IN_DELETE_SELF | _IN_MOVE_SELF
_LOCK = _FILE | _IN_MODIFY

# File systems whose changes all go through this kernel's VFS, so inotify sees them.
_LOCAL = frozenset(
    {
        "bcachefs",
        "btrfs",
        "exfat",
        "ext2",
        "ext3",
        "ext4",
        "f2fs",
        "jfs",
        "ntfs3",
        "overlay",
        "ramfs",
        "tmpfs",
        "vfat",
        "xfs",
        "zfs",
    }
)

_libc: ctypes.CDLL | None = None


def _file_system(fd: int) -> str:
    """Return the type of the file system holding *fd* (``/proc/self/mountinfo``), or ""."""
    st = os.fstat(fd)
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    try:
        with open("/proc/self/mountinfo", "rb") as f:  # noqa: PTH123 -- a kernel file
            table = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    for line in table.splitlines():
        fields = line.split(" ")
        if len(fields) > 3 and fields[2] == device and " - " in line:  # noqa: PLR2004
            return line.split(" - ", 1)[1].split(" ", 1)[0]
    return ""


def watch(file_fd: int, lock_fd: int) -> int:
    """Return an inotify descriptor watching *file_fd* and *lock_fd* (if >= 0), or -1.

    -1 where inotify can't be trusted to see every change (see the module docstring) or
    can't be had. The caller checks the path in full *after* this returns, so a change made
    before the watch began is seen too.
    """
    global _libc  # noqa: PLW0603 -- loaded once per process, on the first watch
    if sys.platform != "linux" or _file_system(file_fd) not in _LOCAL:
        return -1
    try:
        if _libc is None:
            import ctypes  # noqa: PLC0415 -- only a writer that appends more than once

            _libc = ctypes.CDLL(None, use_errno=True)
        libc = _libc
        fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    except (ImportError, OSError, AttributeError):  # no ctypes, no C library, no inotify
        return -1
    if fd < 0:  # no instances left (EMFILE): check the name every time instead
        return -1
    for target, mask in ((file_fd, _FILE), (lock_fd, _LOCK)):
        if target >= 0 and libc.inotify_add_watch(fd, b"/proc/self/fd/%d" % target, mask) < 0:
            os.close(fd)
            return -1
    return fd


def drain(fd: int) -> None:
    """Read and drop every event queued on the inotify descriptor *fd*."""
    with contextlib.suppress(BlockingIOError):
        while os.read(fd, 65536):
            pass
