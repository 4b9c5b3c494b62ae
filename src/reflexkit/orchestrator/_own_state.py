"""The own-folder guard: what an attempt did to reflexkit's own state in ``.reflexkit/``.

Before each attempt the loop takes a :func:`capture` of the folder; after it, :func:`settle`
removes planted links and special files, restores permissions, takes out what only the
attempt can have added, and reports every other change as one ``own_state_changed`` event.
The rules are described once, in docs/orchestrator.md ("The own folder").
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Callable
from pathlib import Path

import attrs

from reflexkit._files import make_dirs
from reflexkit._text import show_name

__all__ = [
    "OWN_FOLDER",
    "OwnChanges",
    "OwnState",
    "capture",
    "linked_own_folder",
    "no_space",
    "settle",
    "shared_own_path",
]

OWN_FOLDER = ".reflexkit"
_MAX_ENTRIES = 100_000
"""How many entries are looked at, at most (a project's worth is a few hundred)."""
_TAIL_BYTES = 256
"""How much of an append-only file's end is kept, to tell an append from a rewrite."""
_FLOODED = "\0flooded"
"""The listing key that says the walk stopped at :data:`_MAX_ENTRIES` (no path has a NUL)."""
_PROMPTS = "prompts/"
"""The subagent's prompt folders: made and removed around the attempt by the loop's side."""


@attrs.frozen
class _Entry:
    is_dir: bool
    mode: int
    size: int
    inode: int
    stamp: tuple[int, int]  # (mtime_ns, ctime_ns): a write moves ctime, which nobody can set
    tail: bytes = b""


@attrs.frozen(kw_only=True)
class OwnState:
    """``.reflexkit`` (and the project root's permissions) before an attempt.

    Attributes:
        root_mode: The permission bits of the project root (``None``: unreadable).
        entries: Per path relative to ``.reflexkit`` (``""`` is the folder itself).
    """

    root_mode: int | None
    entries: dict[str, _Entry]
    listings: Listings = attrs.field(factory=dict)
    kept: frozenset[str] = frozenset()


@attrs.frozen(kw_only=True)
class OwnChanges:
    """What an attempt did to ``.reflexkit`` (comma-separated, relative paths, shown safely).

    Attributes:
        links: Symbolic links found, each ``path -> target``; removed.
        special: FIFOs, sockets and devices found (a writer that opens a FIFO waits for a
            reader forever); removed.
        restored: Permissions put back, each ``path (mode 000 -> 755)``.
        reverted: Files whose appended records (or which, when new) were taken out again.
        changed: Files rewritten, truncated or replaced: reported, not repaired.
        added: Files added and left (when subtasks run in parallel).
        removed: Files that are gone.
    """

    links: tuple[str, ...] = ()
    special: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    reverted: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any(attrs.astuple(self))

    def as_data(self) -> dict[str, str]:
        """The event's data: every list as one comma-separated string."""
        return {
            "links": ", ".join(self.links),
            "special": ", ".join(self.special),
            "restored": ", ".join(self.restored),
            "reverted": ", ".join(self.reverted),
            "changed": ", ".join(self.changed),
            "added": ", ".join(self.added),
            "removed": ", ".join(self.removed),
        }


def _tail_kept(relative: str) -> bool:
    """Append-only files read back during a run (not old run logs or reports: many, unread)."""
    return relative.endswith(".jsonl") and not relative.startswith(("runs/", "reports/"))


def _entry(path: str, relative: str, info: os.stat_result) -> _Entry:
    tail = b""
    if stat.S_ISREG(info.st_mode) and info.st_size and _tail_kept(relative):
        tail = _read_at(path, max(info.st_size - _TAIL_BYTES, 0), min(info.st_size, _TAIL_BYTES))
    return _Entry(
        is_dir=stat.S_ISDIR(info.st_mode),
        mode=stat.S_IMODE(info.st_mode),
        size=info.st_size,
        inode=info.st_ino,
        stamp=(info.st_mtime_ns, info.st_ctime_ns),
        tail=tail,
    )


def _read_at(path: str, offset: int, size: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        return os.pread(fd, size, offset)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _history(relative: str) -> bool:
    """A folder of history or derived data: its files are listed, not each stat'ed.

    Old run logs and reports pile up with the project's age; the memory store's index shards
    grow with its subtasks and are checked by the store itself when read.
    """
    return (
        relative in {"runs", "reports"}
        or relative.startswith("reports/")
        or (relative.startswith("memory/") and relative.endswith(".index"))
    )


Listings = dict[str, dict[str, int]]
"""Per history folder (relative), its files (not folders, not links) by name, with inodes."""


def _walk(
    top: str,
    visit: Callable[[str, str, os.stat_result], bool],
    *,
    kept: frozenset[str] = frozenset(),
) -> Listings:
    """Call *visit* (path, relative, lstat) on ``top`` and below; descend where it says so.

    In a history folder only folders, links and the files in *kept* are visited; the other
    files are listed by name and inode (``scandir``: no ``stat`` each), which is what tells
    a file added, removed or replaced there. So the cost follows the folder's live part, not
    the number of runs a project has had.
    """
    stack = [(top, "")]
    seen = 0
    listings: Listings = {}
    while stack:
        if seen >= _MAX_ENTRIES:
            listings[_FLOODED] = {}
            break
        path, relative = stack.pop()
        try:
            info = os.lstat(path)
        except OSError:
            continue
        seen += 1
        if not visit(path, relative, info) or not stat.S_ISDIR(info.st_mode):
            continue
        history = _history(relative)
        prefix = f"{relative}/" if relative else ""
        children: list[tuple[str, str]] = []
        listed: dict[str, int] = {}
        try:
            with os.scandir(path) as found:
                for entry in found:
                    child = f"{prefix}{entry.name}"
                    if f"{child}/".startswith(_PROMPTS):
                        continue
                    if history and child not in kept and entry.is_file(follow_symlinks=False):
                        listed[entry.name] = entry.inode()
                        seen += 1
                        continue
                    children.append((entry.path, child))
        except OSError:
            continue
        if history:
            listings[relative] = listed
        stack.extend(sorted(children, reverse=True))
    return listings


def _open_files(workdir: Path) -> frozenset[str]:
    """The files under ``.reflexkit`` this process has open to write (Linux), relative."""
    top = os.path.realpath(workdir / OWN_FOLDER) + os.sep
    fds = Path("/proc/self/fd")
    found: set[str] = set()
    try:
        listed = list(fds.iterdir())
    except OSError:
        return frozenset()
    for entry in listed:
        try:
            target = str(entry.readlink())
        except OSError:
            continue
        if target.startswith(top):
            found.add(target[len(top) :].removesuffix(_DELETED))
    return frozenset(found)


def _mode_of(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def capture(workdir: Path) -> OwnState:
    """Note ``.reflexkit`` in *workdir* as it is now (never raises)."""
    entries: dict[str, _Entry] = {}

    def visit(path: str, relative: str, info: os.stat_result) -> bool:
        entries[relative] = _entry(path, relative, info)
        return not stat.S_ISLNK(info.st_mode)

    kept = _open_files(workdir)
    listings = _walk(str(workdir / OWN_FOLDER), visit, kept=kept)
    return OwnState(root_mode=_mode_of(workdir), entries=entries, listings=listings, kept=kept)


def settle(
    workdir: Path,
    before: OwnState,
    *,
    revert: bool,
    allowed: Callable[[str], bool] = lambda _relative: False,
    shared: Callable[[str], bool] = lambda _relative: False,
) -> OwnChanges:
    """Compare ``.reflexkit`` with *before*, repair what can be, and say what changed.

    Args:
        workdir: The project root.
        before: What :func:`capture` noted before the attempt.
        revert: Nothing but the attempt wrote in the folder since *before* (one subtask at a
            time): appended records and added files are taken out again.
        allowed: Paths the agent is asked to write (its self-report): left alone.
        shared: Paths other running subtasks write too (with *revert* false): their
            changes are not the attempt's to report.
    """
    settler = _Settler(before, revert=revert, allowed=allowed, shared=shared)
    root_mode = _mode_of(workdir)
    if before.root_mode is not None and root_mode is not None and root_mode != before.root_mode:
        _chmod(workdir, before.root_mode, ".", root_mode, settler.found)
    own = workdir / OWN_FOLDER
    listings = _walk(str(own), settler.visit, kept=before.kept)
    if listings.pop(_FLOODED, None) is not None:
        settler.flooded(own)
    for folder, names in listings.items():
        settler.compare_listing(workdir, folder, before.listings.get(folder, {}), names)
    settler.removed(_reattach(workdir))
    return OwnChanges(**{k: tuple(v) for k, v in settler.found.items()})


class _Settler:
    """One walk of :func:`settle`: repairs and notes, entry by entry."""

    def __init__(
        self,
        before: OwnState,
        *,
        revert: bool,
        allowed: Callable[[str], bool],
        shared: Callable[[str], bool],
    ) -> None:
        self.before = before
        self.revert = revert
        self.allowed = allowed
        self.shared = shared
        self.found: dict[str, list[str]] = {k: [] for k in attrs.fields_dict(OwnChanges)}
        self.after: set[str] = set()

    def flooded(self, own: Path) -> None:
        """The walk stopped at its bound: look at every entry noted before, one by one.

        So an agent can't hide a change behind enough files to stop the walk.
        """
        self.found["added"].append(
            f"{show_name(OWN_FOLDER)}: over {_MAX_ENTRIES} entries (flooded; the check "
            "looked at what was there before one by one)"
        )
        for relative in sorted(self.before.entries.keys() - self.after):
            path = str(own / relative) if relative else str(own)
            with contextlib.suppress(OSError):
                self.visit(path, relative, os.lstat(path))

    def removed(self, back: list[str]) -> None:
        """Note what was put back (*back*), and what is gone that was there before."""
        found = self.found
        found["restored"] += [f"{show_name(OWN_FOLDER + '/' + r)} (put back)" for r in back]
        found["changed"] = [c for c in found["changed"] if c not in back]
        for relative, old in self.before.entries.items():
            gone = relative not in self.after and relative not in back and not old.is_dir
            if gone and not self.allowed(relative) and (self.revert or not self.shared(relative)):
                found["removed"].append(show_name(relative))

    def visit(self, path: str, relative: str, info: os.stat_result) -> bool:
        """Repair and note one entry; tell whether to descend into it."""
        name = OWN_FOLDER + (f"/{relative}" if relative else "")
        if stat.S_ISLNK(info.st_mode):
            link = Path(path)
            try:
                target = str(link.readlink())
                link.unlink()  # the link itself: its target is never touched
            except OSError:
                target = "?"
            self.found["links"].append(f"{show_name(name)} -> {show_name(target, max_chars=200)}")
            return False
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError):
                Path(path).unlink()
            self.found["special"].append(show_name(name))
            return False
        self.after.add(relative)
        old = self.before.entries.get(relative)
        mode = stat.S_IMODE(info.st_mode)
        if old is not None and mode != old.mode and not self.allowed(relative):
            _chmod(Path(path), old.mode, name, mode, self.found)
        if stat.S_ISDIR(info.st_mode) or self.allowed(relative):
            return True
        if self.shared(relative) and not self.revert:
            return True
        if old is None:
            self._added(path, relative)
        elif (info.st_ino, info.st_size, (info.st_mtime_ns, info.st_ctime_ns)) != (
            old.inode,
            old.size,
            old.stamp,
        ):
            self._changed(path, relative, info, old)
        return True

    def compare_listing(
        self, workdir: Path, folder: str, before: dict[str, int], after: dict[str, int]
    ) -> None:
        """Note the files added, removed or replaced in a history folder."""
        for name, inode in after.items():
            relative = f"{folder}/{name}"
            self.after.add(relative)
            if self.allowed(relative) or (self.shared(relative) and not self.revert):
                continue
            if name not in before:
                self._added(str(workdir / OWN_FOLDER / relative), relative)
            elif before[name] != inode:
                self.found["changed"].append(show_name(relative))
        for name in before.keys() - after.keys():
            relative = f"{folder}/{name}"
            if not self.allowed(relative) and (self.revert or not self.shared(relative)):
                self.found["removed"].append(show_name(relative))

    def _repairs(self, relative: str) -> bool:
        """Whether the attempt alone can have written *relative* since the capture.

        Paths other reflexkit processes of the project write too (memory, run logs, reports,
        insights, lessons: another run, `reflexkit reflect`, a prune) are reported, never
        cut back or removed: what they wrote is valid and must not be lost.
        """
        return self.revert and not self.shared(relative)

    def _added(self, path: str, relative: str) -> None:
        if not self._repairs(relative):
            self.found["added"].append(show_name(relative))
            return
        with contextlib.suppress(OSError):
            Path(path).unlink()
        self.found["reverted"].append(show_name(relative))

    def _changed(self, path: str, relative: str, info: os.stat_result, old: _Entry) -> None:
        appended = (
            self._repairs(relative)
            and relative.endswith(".jsonl")
            and info.st_ino == old.inode
            and info.st_size > old.size
            and _read_at(path, old.size - len(old.tail), len(old.tail)) == old.tail
        )
        if appended and _truncate(path, old.size):
            self.found["reverted"].append(show_name(relative))
        else:
            self.found["changed"].append(show_name(relative))


def _chmod(path: Path, mode: int, name: str, now: int, found: dict[str, list[str]]) -> None:
    try:
        path.chmod(mode)
    except OSError:
        return
    found["restored"].append(f"{show_name(name)} (mode {now:03o} -> {mode:03o})")


def _truncate(path: str, size: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.ftruncate(fd, size)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


_DELETED = " (deleted)"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND


def _reattach(workdir: Path) -> list[str]:
    """Put back the files under ``.reflexkit`` this process writes and someone removed.

    A writer that keeps its file open (the run log, the memory store) would go on writing into
    the removed file, where nobody can read it. Each such descriptor (Linux: ``/proc/self/fd``)
    gets its file's content back at its path (replacing whatever the agent put there), and
    the descriptor is switched to that file with ``dup2``, so the writer never notices.

    Returns:
        The paths put back, relative to ``.reflexkit``.
    """
    fds = Path("/proc/self/fd")
    top = os.path.realpath(workdir / OWN_FOLDER) + os.sep
    back: list[str] = []
    try:
        listed = list(fds.iterdir())
    except OSError:
        return back
    for entry in listed:
        try:
            fd = int(entry.name)
            target = str(entry.readlink())
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except (OSError, ValueError):
            continue
        path = target.removesuffix(_DELETED)
        if path == target or not path.startswith(top) or not flags & (os.O_WRONLY | os.O_RDWR):
            continue
        if os.path.lexists(path):
            # Replaced, not removed: a prune's new file (or an agent's: reported as changed
            # by the walk). Copying the old one back would undo the prune and lose what
            # was appended to the new file since.
            continue
        if _put_back(entry, path, fd, flags & _WRITE_FLAGS):
            back.append(path[len(top) :])
    return back


def _put_back(source: Path, path: str, fd: int, flags: int) -> bool:
    partial = Path(f"{path}.{os.getpid()}.restore")
    try:
        make_dirs(partial.parent)
        with source.open("rb") as old, partial.open("xb") as new:
            while chunk := old.read(1 << 20):
                new.write(chunk)
        partial.replace(path)
        reopened = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        partial.unlink(missing_ok=True)
        return False
    try:
        os.dup2(reopened, fd, inheritable=False)
    finally:
        os.close(reopened)
    return True


_MAX_OWN_ENTRIES = 100_000
"""How many entries of ``.reflexkit`` are looked at for links, at most (a run's worth is few)."""


def linked_own_folder(workdir: Path) -> str | None:
    """Why ``.reflexkit`` in *workdir* can't be written to: a symlink at or under it; or None."""
    top = workdir / OWN_FOLDER
    found: str | None = None
    if top.is_symlink():
        found = OWN_FOLDER
    elif top.is_dir():
        seen = 0
        for folder, dirs, files in os.walk(top):  # links to folders are listed, not entered
            for name in (*dirs, *files):
                seen += 1
                if os.path.islink(os.path.join(folder, name)):  # noqa: PTH118, PTH114 -- os.walk's strings
                    found = os.path.relpath(os.path.join(folder, name), workdir)  # noqa: PTH118
                    break
            if found is not None or seen > _MAX_OWN_ENTRIES:
                break
    if found is None:
        return None
    try:
        target = str((workdir / found).readlink())
    except OSError:
        target = "?"
    return (
        f"{show_name(found)} in {show_name(str(workdir))} is a symbolic link (to "
        f"{show_name(target, max_chars=200)}): reflexkit writes run logs, memory and reports "
        "only inside the project's own .reflexkit folder; replace the link with a real folder "
        "or file"
    )


_SHARED_OWN = ("runs/", "memory/", "reports/", "fixtures/", "prompts/")
_SHARED_OWN_FILES = frozenset({"insights.jsonl", "lessons.jsonl", "paused.jsonl"})


def shared_own_path(relative: str) -> bool:
    """A path of ``.reflexkit`` the loop writes to while other subtasks' attempts run."""
    return relative.startswith(_SHARED_OWN) or relative in _SHARED_OWN_FILES


_MIN_FREE_BYTES = 64 * 1024
"""Less free space than this where ``.reflexkit`` lives, and the run stops (a reflection,
its events and a prompt file are a few KiB; a run that can't keep them only burns attempts)."""


def no_space(workdir: Path, *, after: int = 0) -> str | None:
    """Why the run can't go on when the file system of ``.reflexkit`` is full; else None."""
    own = workdir / OWN_FOLDER
    try:
        fs = os.statvfs(own if own.is_dir() else workdir)
    except OSError:
        return None
    free = fs.f_bavail * fs.f_frsize
    if free >= _MIN_FREE_BYTES or fs.f_blocks == 0:  # 0 blocks: a pseudo file system
        return None
    when = f"after attempt {after}" if after else "before the attempt"
    return (
        f"no space left on the device of {show_name(str(own))} {when} ({free} bytes free): "
        "the run can't keep its reflections, run log or prompts; free some space (did the "
        "agent fill the disk?) and run again"
    )
