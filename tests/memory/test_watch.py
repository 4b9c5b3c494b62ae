"""A running writer learns of changes to its file from an inotify watch (memory._watch).

A writer that appends more than once stops checking the file's name before each append and
asks the kernel instead; every change that makes the path name another file must still be
seen: made by another process, before or after a fork, with two stores on one file.
"""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reflexkit.exceptions import StoreError
from reflexkit.memory import JsonlMemory
from reflexkit.memory._watch import watch
from reflexkit.testing.memory_contract import make_reflection

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")

SWAP = """
import os, sys
path, how, target = sys.argv[1:]
if how == "link":
    os.rename(path, path + ".moved")
    os.symlink(target, path)
elif how == "unlink":
    os.unlink(path)
elif how == "over":
    with open(target, "wb"):
        pass
    os.rename(target, path)
"""


def _inotify_fds() -> int:
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            count += fd.readlink() == Path("anon_inode:inotify")
    return count


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the store under test lives."""
    return tmp_path / "memory" / "reflections.jsonl"


def _warm(path: Path, appends: int = 3) -> JsonlMemory:
    store = JsonlMemory(path)
    for _ in range(appends):
        store.append(make_reflection())
    return store


def test_a_one_shot_writer_holds_no_watch_and_a_repeat_writer_one(path: Path) -> None:
    """One append: no inotify descriptor (a hook pays nothing); more: one, closed with it."""
    before = _inotify_fds()
    once = _warm(path, 1)
    assert _inotify_fds() == before
    once.close()
    store = _warm(path, 3)
    assert _inotify_fds() == before + 1
    store.close()
    assert _inotify_fds() == before


@pytest.mark.parametrize("how", ["link", "unlink", "over"])
def test_a_change_made_by_another_process_is_seen(path: Path, tmp_path: Path, how: str) -> None:
    """Another process moves the file and plants a link, removes it, or renames one over it."""
    store = _warm(path)
    target = tmp_path / "elsewhere.jsonl"
    if how == "link":
        target.write_bytes(b"")
    subprocess.run([sys.executable, "-c", SWAP, str(path), how, str(target)], check=True)
    last = make_reflection(attempt=9)
    if how == "link":
        with pytest.raises(StoreError, match="symlink"):
            store.append(last)
        assert target.read_bytes() == b""
        return
    store.append(last)
    assert list(JsonlMemory(path)) == [last]


def test_changes_again_and_again_are_each_seen(path: Path, tmp_path: Path) -> None:
    """After the slow path settles one change, the watch on the new file sees the next."""
    store = JsonlMemory(path)
    for round_ in range(5):
        for _ in range(3):
            store.append(make_reflection(attempt=round_ + 1))
        old = tmp_path / f"old-{round_}.jsonl"
        path.rename(old)
        last = make_reflection(attempt=9)
        store.append(last)
        assert list(JsonlMemory(path)) == [last], round_
        assert len(list(JsonlMemory(old))) == (3 if round_ == 0 else 4), round_


def test_two_stores_on_one_file_each_see_a_change(path: Path, tmp_path: Path) -> None:
    """Each store has its own watch: one draining its events hides nothing from the other."""
    first, second = _warm(path), _warm(path)
    path.rename(tmp_path / "moved.jsonl")
    a, b = make_reflection(attempt=8), make_reflection(attempt=9)
    first.append(a)
    second.append(b)
    assert list(JsonlMemory(path)) == [a, b]


def _child_appends() -> None:
    store = _STORE[0]
    for _ in range(3):  # the child's own descriptors, and its own watch
        store.append(make_reflection(subtask_id="child"))
    os._exit(0)


_STORE: list[JsonlMemory] = []


def test_a_forked_child_never_takes_the_parents_events(path: Path, tmp_path: Path) -> None:
    """A child forked from a watching writer appends with its own watch, not the parent's."""
    store = _warm(path)
    _STORE[:] = [store]
    try:
        child = mp.get_context("fork").Process(target=_child_appends)
        child.start()
        child.join(timeout=60)
        assert child.exitcode == 0
        path.rename(tmp_path / "moved.jsonl")
        last = make_reflection(attempt=9)
        store.append(last)  # the parent's watch still holds the rename's event
        assert list(JsonlMemory(path)) == [last]
        assert [r.subtask_id for r in JsonlMemory(tmp_path / "moved.jsonl")].count("child") == 3
    finally:
        _STORE.clear()


def test_no_watch_where_the_kernel_may_not_see_every_change(path: Path) -> None:
    """Only a listed local file system gets a watch (procfs here stands for NFS or FUSE)."""
    fd = os.open("/proc/self/status", os.O_RDONLY)
    try:
        assert watch(fd, -1) == -1
    finally:
        os.close(fd)
    store = _warm(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = watch(fd, -1)
        assert got >= 0  # tmp_path: a local file system
        os.close(got)
    finally:
        os.close(fd)
        store.close()


NO_INOTIFY = """
import os, resource, sys
from reflexkit.exceptions import StoreError
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection
path = sys.argv[1]
store = JsonlMemory(path)
store.append(make_reflection())  # opens the file, its lock file and its folder
import reflexkit.memory._watch  # loaded while descriptors are left: the watch itself fails
# No descriptor left for an inotify instance: the second append can't start a watch.
free = os.dup(0)
os.close(free)
resource.setrlimit(resource.RLIMIT_NOFILE, (free, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
for _ in range(3):
    store.append(make_reflection())
assert store._appender._watch == -1 and store._appender._unwatched, "a watch was started"
os.rename(path, path + ".moved")
os.symlink(sys.argv[2], path)
try:
    store.append(make_reflection())
except StoreError as err:
    print(err)
"""


def test_a_writer_with_no_watch_to_be_had_checks_names(path: Path, tmp_path: Path) -> None:
    """No inotify instance to be had (no descriptors left): each append checks the name."""
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"")
    path.parent.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", NO_INOTIFY, str(path), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "symlink" in done.stdout
    assert target.read_bytes() == b""
    assert len(list(JsonlMemory(f"{path}.moved"))) == 4


ROTATE = """
import os, sys, time
path, times = sys.argv[1], int(sys.argv[2])
print("rotating", flush=True)
for n in range(times):
    time.sleep(0.005)
    try:
        os.rename(path, f"{path}.{n}")
    except FileNotFoundError:  # not made again yet
        pass
"""


def test_threads_appending_while_another_process_rotates_lose_nothing(path: Path) -> None:
    """4 threads append to one watching store while a process renames it away 40 times.

    Every acknowledged record is in exactly one file: the store or one of the rotated ones.
    """
    store = _warm(path)
    warm = {r.id for r in JsonlMemory(path)}
    acknowledged: list[str] = []
    lock = threading.Lock()
    done = threading.Event()

    def append(name: str) -> None:
        i = 0
        while not done.is_set():
            r = make_reflection(subtask_id=f"{name}-{i % 7}")
            store.append(r)
            with lock:
                acknowledged.append(r.id)
            i += 1

    rotator = subprocess.Popen(
        [sys.executable, "-c", ROTATE, str(path), "40"], stdout=subprocess.PIPE, text=True
    )
    assert rotator.stdout is not None
    assert rotator.stdout.readline() == "rotating\n"
    threads = [threading.Thread(target=append, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    try:
        rotator.communicate(timeout=60)
    finally:
        done.set()
        for t in threads:
            t.join(timeout=120)
    assert rotator.returncode == 0
    found = Counter(
        r.id
        for f in path.parent.iterdir()
        if f.name.startswith(path.name) and f.is_file() and f.suffix != ".lock"
        for r in JsonlMemory(f)
    )
    assert all(found[i] == 1 for i in acknowledged)
    assert set(found) == warm | set(acknowledged)
    rotated = [f for f in path.parent.iterdir() if f.suffix[1:].isdigit()]
    assert len(rotated) > 1, "the store was not rotated while the threads appended"


PRUNER = """
import sys, pathlib
from datetime import datetime
from reflexkit.memory import JsonlMemory

store, stop = JsonlMemory(sys.argv[1]), pathlib.Path(sys.argv[2])
cutoff = datetime.fromisoformat(sys.argv[3])  # the test's clock, not this process's
prunes = removed = 0
while not stop.exists():
    removed += store.prune(older_than=cutoff)
    prunes += 1
    if prunes == 1:
        print("pruning", flush=True)
print(prunes, removed)
"""


def test_threads_appending_through_the_watch_while_another_process_prunes(
    path: Path, tmp_path: Path
) -> None:
    """4 threads x 500 appends on one watching store, a pruner process swapping the file.

    Every acknowledged record that is not old is in the store exactly once; the old ones are
    either pruned or still there, once.
    """
    now = datetime.now(UTC)
    store = JsonlMemory(path)
    for _ in range(3):  # the watch is on from the second
        store.append(make_reflection(created_at=now))
    warm = {r.id for r in JsonlMemory(path)}
    acknowledged: dict[str, bool] = {}  # id -> old
    lock = threading.Lock()

    def append(name: str) -> None:
        for i in range(500):
            old = i % 4 == 0
            r = make_reflection(
                subtask_id=f"{name}-{i % 7}",
                created_at=now - timedelta(days=400 if old else 0),
            )
            store.append(r)
            with lock:
                acknowledged[r.id] = old

    stop = tmp_path / "stop"
    cutoff = (now - timedelta(days=30)).isoformat()
    pruner = subprocess.Popen(
        [sys.executable, "-c", PRUNER, str(path), str(stop), cutoff],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert pruner.stdout is not None
    assert pruner.stdout.readline() == "pruning\n"  # it runs: the threads start now
    threads = [threading.Thread(target=append, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    stop.touch()
    out, _ = pruner.communicate(timeout=60)
    assert pruner.returncode == 0
    prunes, removed = map(int, out.split())
    found = Counter(r.id for r in JsonlMemory(path))
    new = [i for i, old in acknowledged.items() if not old]
    assert len(acknowledged) == 2000
    assert all(found[i] == 1 for i in new)
    assert max(found.values()) == 1
    old_left = sum(1 for i, old in acknowledged.items() if old and found[i])
    assert removed + old_left == 500
    assert set(found) - set(acknowledged) == warm
    assert prunes > 1, "the pruner never ran while the threads appended"


WRITER_ON_CUE = """
import sys
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

store = JsonlMemory(sys.argv[1])
for _ in range(3):  # the watch is on from the second: appends take no lock from here
    store.append(make_reflection())
print("ready", flush=True)
sys.stdin.readline()
last = make_reflection(attempt=9)
store.append(last)
print(last.id, flush=True)
"""


@pytest.mark.parametrize("snapshot", ["before the record", "after the record"])
def test_a_record_written_while_the_file_is_replaced_is_kept_once(
    path: Path, tmp_path: Path, snapshot: str
) -> None:
    """A watching writer appends while a replacer holds the file: the record is kept, once.

    The replacer does what a prune and the spool's replay do: it says it is replacing the
    file, holds the file's lock, copies it up to a snapshot (taken before the record lands
    in it, or after), says how far it carried it over, renames the copy over the path and
    lets go. The writer wrote without the lock into the old file: it writes the record again
    to the new one when the snapshot missed it, and not when the copy has it.
    """
    with subprocess.Popen(
        [sys.executable, "-c", WRITER_ON_CUE, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as writer:
        assert writer.stdin is not None
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        warm = [r.id for r in JsonlMemory(path)]
        replacer = JsonlMemory(path)
        held = os.open(path, os.O_RDWR | os.O_APPEND)
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            replacer.replacing()  # before the snapshot
            before = os.fstat(held).st_size
            writer.stdin.write("go\n")
            writer.stdin.flush()
            deadline = time.monotonic() + 60
            while os.fstat(held).st_size == before:  # the record lands in the old file
                assert time.monotonic() < deadline, "the writer never wrote"
                time.sleep(0.01)
            upto = before if snapshot == "before the record" else os.fstat(held).st_size
            copy = tmp_path / "copy.jsonl"
            copy.write_bytes(os.pread(held, upto, 0))
            replacer.replacing(held, upto)
            copy.replace(path)
            replacer.replacing()
        finally:
            os.close(held)  # lets go of the lock: the writer's append returns
        last = writer.stdout.readline().strip()
        assert writer.wait(timeout=60) == 0
    assert [r.id for r in JsonlMemory(path)] == [*warm, last]
