"""The JSONL store under faults, with real processes, files and signals (issue #13).

Killed prunes, files replaced under a writer, damaged index shards, a full tmpfs, symlinks at
the store's paths and readers racing each other: no acknowledged append is lost and no
``recent`` answer is wrong.
"""

from __future__ import annotations

import fcntl
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reflexkit.exceptions import ConfigError, CorruptRecordWarning, StoreError
from reflexkit.memory import JsonlMemory
from reflexkit.memory._codec import encode_line
from reflexkit.models import Reflection
from reflexkit.redaction import Redactor
from reflexkit.reflection._classify import classify
from reflexkit.reflection._fingerprint import fingerprint
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.reflection._service import DefaultReflectionService
from reflexkit.tasks._config import load_project
from reflexkit.testing.memory_contract import make_reflection

from ..conftest import FRAGMENT_WRITER, Disks  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

_NOW = datetime.now(UTC)
_OLD = _NOW - timedelta(days=400)
_CUTOFF = _NOW - timedelta(days=30)


def _python(code: str, *args: object) -> list[str]:
    return [sys.executable, "-c", code, *map(str, args)]


def _ids(path: Path) -> Counter[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)  # nothing torn or interleaved
        return Counter(r.id for r in JsonlMemory(path))


def _truth(path: Path, subtask: str, limit: int, task: str | None = None) -> list[Reflection]:
    mine = [
        r
        for r in JsonlMemory(path)
        if r.subtask_id == subtask and (task is None or r.task_id == task)
    ]
    return mine[-limit:]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the store under test lives."""
    return tmp_path / "memory" / "reflections.jsonl"


# --- killed prunes ------------------------------------------------------------------------

PRUNE_DIES_AT_THE_FOLDER_SYNC = """
import os, signal, stat, sys
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory

real_fsync = os.fsync

def fsync(fd):
    if stat.S_ISDIR(os.fstat(fd).st_mode):  # the folder sync right after the rename
        os.kill(os.getpid(), signal.SIGKILL)
    real_fsync(fd)

os.fsync = fsync
JsonlMemory(sys.argv[1]).prune(older_than=datetime.fromisoformat(sys.argv[2]))
"""


def test_a_prune_killed_after_its_rename_loses_no_append(path: Path) -> None:
    """A prune killed between the rename and what follows: writers append to the new file."""
    writer = JsonlMemory(path)
    writer.append(make_reflection(created_at=_OLD))
    kept = make_reflection(attempt=2, created_at=_NOW)
    writer.append(kept)
    pruner = subprocess.run(
        _python(PRUNE_DIES_AT_THE_FOLDER_SYNC, path, _CUTOFF.isoformat()), check=False
    )
    assert pruner.returncode == -signal.SIGKILL
    later = make_reflection(attempt=3, created_at=_NOW)
    writer.append(later)  # opened before the prune
    assert list(JsonlMemory(path)) == [kept, later]
    assert JsonlMemory(path).recent("sub-1", limit=5) == [kept, later]


WRITER = """
import sys, pathlib
import attrs
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

path, name, stop = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
store = JsonlMemory(path)
now = datetime.now(UTC)
i = 0
while not stop.exists():
    old = i % 4 == 0
    r = make_reflection(f"{name}-s{i % 5}", task_id=f"t{i % 2}", attempt=i + 1,
                        created_at=now - timedelta(days=400 if old else 0))
    r = attrs.evolve(r, id=f"{name}-{i}-{'old' if old else 'new'}")
    store.append(r)
    sys.stdout.write(r.id + "\\n")
    sys.stdout.flush()  # only after append returned
    i += 1
"""

READER = """
import sys, pathlib
from reflexkit.memory import JsonlMemory

path, names, stop = sys.argv[1], sys.argv[2].split(","), pathlib.Path(sys.argv[3])
store = JsonlMemory(path)
reads = 0
while not stop.exists():
    for name in names:
        for task in (None, "t0", "t1"):
            got = store.recent(f"{name}-s1", limit=3, task_id=task)
            attempts = [r.attempt_number for r in got]
            assert attempts == sorted(attempts), attempts
            assert all(r.subtask_id == f"{name}-s1" for r in got)
            assert task is None or all(r.task_id == task for r in got)
            reads += 1
print(reads)
"""

PRUNER = """
import sys
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory

store = JsonlMemory(sys.argv[1])
while True:
    store.prune(older_than=datetime.now(UTC) - timedelta(days=30))
"""


@pytest.mark.slow
def test_a_pruner_killed_at_random_moments_loses_nothing(path: Path, tmp_path: Path) -> None:
    """SIGKILL the pruner 15 times while 3 writers and a reader run: every ack'd record stays."""
    rng = random.Random(20261123)  # noqa: S311 -- timing jitter, not security
    stop = tmp_path / "stop"
    names = [f"w{n}" for n in range(3)]
    writers = [
        subprocess.Popen(_python(WRITER, path, name, stop), stdout=subprocess.PIPE, text=True)
        for name in names
    ]
    reader = subprocess.Popen(
        _python(READER, path, ",".join(names), stop), stdout=subprocess.PIPE, text=True
    )
    try:
        while not path.exists() or path.stat().st_size < 10_000:  # the writers are running
            time.sleep(0.01)
        kills = 0
        for _ in range(15):
            pruner = subprocess.Popen(_python(PRUNER, path))
            time.sleep(rng.uniform(0.05, 0.4))
            pruner.send_signal(signal.SIGKILL)
            pruner.wait(timeout=30)
            kills += pruner.returncode == -signal.SIGKILL
        assert kills == 15, "the pruner ended on its own"
    finally:
        stop.touch()
    acknowledged = [line for w in writers for line in w.communicate(timeout=60)[0].split()]
    reads, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0
    assert int(reads) > 0
    assert all(w.returncode == 0 for w in writers)

    stored = _ids(path)
    assert max(stored.values()) == 1
    new = {i for i in acknowledged if i.endswith("-new")}
    assert new <= set(stored)
    assert set(stored) <= set(acknowledged) | {i for i in stored if i.endswith("-old")}
    store = JsonlMemory(path)
    for name in names:
        for task in (None, "t0", "t1"):
            sub = f"{name}-s1"
            assert store.recent(sub, limit=3, task_id=task) == _truth(path, sub, 3, task)


# --- files replaced under a writer ----------------------------------------------------------


PRUNE = """
import sys
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory
JsonlMemory(sys.argv[1]).prune(older_than=datetime.fromisoformat(sys.argv[2]))
"""


def test_a_prune_killed_while_it_waits_for_a_writer_hinders_no_one(path: Path) -> None:
    """A prune SIGKILLed while a writer holds the file: the next append clears its flag."""
    store = JsonlMemory(path)
    records = [make_reflection(created_at=_OLD), make_reflection(attempt=2, created_at=_NOW)]
    for r in records:
        store.append(r)
    flag = path.with_name(path.name + ".lock"), slice(16, 24)
    held = os.open(path, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_SH)  # as a writer does in the middle of its append
    pruner = subprocess.Popen(_python(PRUNE, path, _CUTOFF.isoformat()))
    try:
        deadline = time.monotonic() + 60
        while flag[0].read_bytes()[flag[1]] in {b"", bytes(8)}:  # until it flags its wait
            assert pruner.poll() is None, "the prune did not wait for the writer"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        pruner.kill()
        pruner.wait()
        os.close(held)
    assert flag[0].read_bytes()[flag[1]] != bytes(8)  # the dead prune's flag is still up
    later = make_reflection(attempt=3, created_at=_NOW)
    store.append(later)  # finds nobody pruning: clears it, and goes on with a shared lock
    assert flag[0].read_bytes()[flag[1]] == bytes(8)
    assert list(_ids(path)) == [r.id for r in (*records, later)]


# A writer that has appended once checks the file's name before each append; one that has
# appended more learns of a change from an inotify watch on the file it holds (memory._watch).
RUNNING = pytest.mark.parametrize("appended", [1, 3], ids=["checked by name", "watched"])


@RUNNING
def test_a_file_replaced_under_a_writer_gets_the_next_append(
    path: Path, tmp_path: Path, appended: int
) -> None:
    """``mv f.new f`` under a running writer: its next append goes to the new file."""
    writer = JsonlMemory(path)
    for n in range(appended):
        writer.append(make_reflection(attempt=1, analysis=f"warm-{n}"))
    restored = make_reflection(attempt=7)
    other = tmp_path / "restored.jsonl"
    other.write_bytes(encode_line(restored))
    subprocess.run(["mv", str(other), str(path)], check=True)
    later = make_reflection(attempt=8)
    writer.append(later)
    assert list(JsonlMemory(path)) == [restored, later]
    path.unlink()  # and removed: the next append creates the file again, visible to all
    last = make_reflection(attempt=9)
    writer.append(last)
    assert list(JsonlMemory(path)) == [last]


# --- a damaged index ------------------------------------------------------------------------


def _shards(path: Path) -> list[Path]:
    return sorted(path.with_name(path.name + ".index").glob("*.idx"))


def _truncate(p: Path) -> None:
    with p.open("r+b") as f:
        f.truncate(max(0, p.stat().st_size - 5))


def _stray_tail(p: Path) -> None:
    with p.open("ab") as f:
        f.write(b"\x07stray")


def _stray_middle(p: Path) -> None:
    size = p.stat().st_size
    with p.open("r+b") as f:
        for at in range(3, size, 50):
            f.seek(at)
            f.write(b"\xff\x00\xfe")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "shard deleted": Path.unlink,
    "shard truncated mid-entry": _truncate,
    "stray bytes after a shard": _stray_tail,
    "stray bytes inside entries": _stray_middle,
    "shard emptied": lambda p: p.write_bytes(b""),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_shard_never_gives_a_wrong_answer(path: Path, damage: str) -> None:
    """Deleted, truncated or scribbled-on shards: recent still answers right, then repairs."""
    store = JsonlMemory(path)
    for n in range(120):
        store.append(make_reflection(f"s{n % 4}", task_id=f"t{n % 3}", attempt=n + 1))
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)
    for shard in _shards(path):
        DAMAGE[damage](shard)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)
        for reader in (store, JsonlMemory(path)):  # one that looked before, and a new one
            for sub in ("s0", "s1", "s2", "s3"):
                assert reader.recent(sub, limit=3) == _truth(path, sub, 3)
                assert reader.recent(sub, limit=2, task_id="t1") == _truth(path, sub, 2, "t1")
    store.append(later := make_reflection("s1", attempt=999))
    assert store.recent("s1", limit=1) == [later]


@pytest.mark.parametrize("how", ["same size", "longer", "shorter"])
def test_a_file_emptied_and_refilled_in_place_is_reindexed(path: Path, how: str) -> None:
    """Same inode, other records (all sharing a suffix): the index notices and rebuilds."""
    store = JsonlMemory(path)
    for n in range(30):
        store.append(make_reflection(f"s{n % 3}", attempt=n + 1))
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)
    size = path.stat().st_size
    count = {"same size": 30, "longer": 40, "shorter": 20}[how]
    refill = b"".join(  # other records, other subtasks: the same size for the same count
        encode_line(make_reflection(f"s{(n + 1) % 3}", attempt=n + 1)) for n in range(count)
    )
    with path.open("r+b") as f:  # in place: the inode stays
        f.truncate(0)
        f.write(refill)
    assert (path.stat().st_size == size) == (how == "same size")
    for sub in ("s0", "s1", "s2"):
        assert store.recent(sub, limit=3) == _truth(path, sub, 3)


@pytest.mark.parametrize("state", ["deleted", "garbage", "torn", "zeroed"])
def test_a_damaged_state_means_a_rebuild(path: Path, state: str) -> None:
    """The index's state file deleted, replaced by garbage, torn or zeroed: rebuilt."""
    store = JsonlMemory(path)
    for n in range(40):
        store.append(make_reflection(f"s{n % 4}", attempt=n + 1))
    assert store.recent("s2", limit=3) == _truth(path, "s2", 3)
    file = path.with_name(path.name + ".index") / "state"
    raw = file.read_bytes()
    if state == "deleted":
        file.unlink()
    elif state == "garbage":
        file.write_bytes(os.urandom(len(raw)))
    elif state == "torn":
        file.write_bytes(raw[: len(raw) // 2])
    else:
        file.write_bytes(bytes(len(raw)))
    for sub in ("s0", "s1", "s2", "s3"):
        assert store.recent(sub, limit=3) == _truth(path, sub, 3)


FORGE = """
import struct, sys, zlib, resource
from pathlib import Path
from reflexkit.memory import JsonlMemory
from reflexkit.memory import _index as ix
from reflexkit.testing.memory_contract import make_reflection

path, how = Path(sys.argv[1]), sys.argv[2]
store = JsonlMemory(path)
for n in range(12):
    store.append(make_reflection(f"s{n % 2}", attempt=n + 1))
truth = store.recent("s1", limit=3)
folder = path.with_name(path.name + ".index")
state = folder / "state"
shard = ix._shard_of(ix.subtask_key("s1"))
raw = bytearray(state.read_bytes())
head = list(ix._HEAD.unpack_from(raw))
at = ix._SLOTS_AT + shard * ix._SLOT.size
count, crc, serial = ix._SLOT.unpack_from(raw, at)
if how == "slot count":  # the state says the shard holds 4 billion entries
    ix._SLOT.pack_into(raw, at, 0xFFFF_FFF0, crc, serial)
elif how == "entry length":  # the newest entry names a line of 4 GiB, its own CRC redone
    shard_file = folder / ix._shard_name(shard)
    entries = bytearray(shard_file.read_bytes()[: count * ix.ENTRY.size])
    last = (count - 1) * ix.ENTRY.size
    key, offset, _, line_crc, _ = ix.ENTRY.unpack_from(entries, last)
    body = struct.pack("<8sQII", key, offset, 0xFFFF_FFF0, line_crc)
    entries[last:last + ix.ENTRY.size] = body + struct.pack("<I", zlib.crc32(body))
    shard_file.write_bytes(entries)
    ix._SLOT.pack_into(raw, at, count, zlib.crc32(entries), serial)
else:  # the header names a last line of exabytes, its own CRC redone
    head[3] = 1 << 60  # upto
    head[4] = 0  # last start
    body = ix._HEAD.pack(*head)[:-4]
    raw[: ix._HEAD.size] = body + struct.pack("<I", zlib.crc32(body))
state.write_bytes(bytes(raw))
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a size read must not allocate
assert JsonlMemory(path).recent("s1", limit=3) == truth
print("ok")
"""


@pytest.mark.parametrize("how", ["slot count", "entry length", "head span"])
def test_sizes_the_index_names_are_never_trusted_for_a_read(path: Path, how: str) -> None:
    """A forged index (CRCs redone) naming gigabytes: a rebuild, not a MemoryError.

    Every size read from the index is held to what the file it describes can hold before
    anything is read or allocated with it.
    """
    child = subprocess.run(
        _python(FORGE, path, how), capture_output=True, text=True, check=False, timeout=120
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"


HOLD_A_LOCK = """
import fcntl, os, signal, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)  # as a reader does while it catches the index up
print("held", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)  # suspended there (Ctrl-Z, a debugger, a frozen VM)
"""

READ_WHILE_HELD = """
import sys
from reflexkit.memory import JsonlMemory, _writer
from reflexkit.testing.memory_contract import make_reflection
_writer.LOCK_WAIT = 0.5  # the bound under test, shortened
store = JsonlMemory(sys.argv[1])
print([r.attempt_number for r in store.recent("s1", limit=3)])
store.append(make_reflection("s1", attempt=10))  # appends never wait on the index
"""


def test_a_process_stopped_holding_the_index_lock_stalls_no_reader(path: Path) -> None:
    """A reader suspended mid catch-up (SIGSTOP) holds the index's lock: others read on.

    They wait a bounded time (``LOCK_WAIT``), then read the file from the end, as where no
    index can be kept: right answers, never a hang of every ``recent`` on the machine.
    """
    path.parent.mkdir(parents=True)
    store = JsonlMemory(path)
    for n in range(9):
        store.append(make_reflection(f"s{n % 3}", attempt=n + 1))
    assert len(store.recent("s1", limit=3)) == 3
    state = path.with_name(path.name + ".index") / "state"
    holder = subprocess.Popen(_python(HOLD_A_LOCK, state), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        reader = subprocess.run(
            _python(READ_WHILE_HELD, path), check=False, capture_output=True, text=True, timeout=30
        )
        assert reader.returncode == 0, reader.stderr
        assert reader.stdout.strip() == "[2, 5, 8]"
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert [r.attempt_number for r in store.recent("s1", limit=4)] == [2, 5, 8, 10]


SAVE_WHILE_HELD = """
import sys, time
from reflexkit.exceptions import StoreError
from reflexkit.memory import JsonlMemory, _writer
from reflexkit.testing.memory_contract import make_reflection
_writer.LOCK_WAIT = 0.5  # the bound under test, shortened
store = JsonlMemory(sys.argv[1])
start = time.monotonic()
try:
    print(store.append_once(make_reflection("s1", attempt=int(sys.argv[2]))))
except StoreError as err:
    print("StoreError", "held its lock" in str(err))
print(time.monotonic() - start < 20)
"""


@pytest.mark.parametrize("held", ["lock file", "store"])
def test_a_process_stopped_holding_a_store_lock_stalls_no_writer(path: Path, held: str) -> None:
    """A prune (or writer) suspended holding a lock: a save waits a bounded time, no more.

    The lock file (a prune runs, or ``append_once`` checks): the save goes on without it
    and stores the record. The store itself (a prune's swap): a ``StoreError`` that says a
    process holds the lock, which the reflection service reports; the run goes on.
    """
    store = JsonlMemory(path)
    for n in range(3):
        store.append(make_reflection("s1", attempt=n + 1))
    target = path.with_name(path.name + ".lock") if held == "lock file" else path
    holder = subprocess.Popen(_python(HOLD_A_LOCK, target), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        saver = subprocess.run(
            _python(SAVE_WHILE_HELD, path, 4),
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert saver.returncode == 0, saver.stderr
        if held == "lock file":
            assert saver.stdout.split() == ["True", "True"]
        else:
            assert saver.stdout.split() == ["StoreError", "True", "True"]
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    want = [1, 2, 3, 4] if held == "lock file" else [1, 2, 3]
    assert [r.attempt_number for r in store.recent("s1", limit=5)] == want


# --- racing readers -------------------------------------------------------------------------

RACER = """
import sys
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

path, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = JsonlMemory(path)
for i in range(rounds):
    mine = make_reflection(f"{name}-sub", attempt=i + 1)
    store.append(mine)
    got = store.recent(f"{name}-sub", limit=3)
    assert got[-1] == mine, (got, mine)
"""


@pytest.mark.slow
def test_racing_readers_never_rebuild_the_index(path: Path) -> None:
    """6 processes x 150 append+recent on a 20k-record store: no shard is ever rebuilt."""
    path.parent.mkdir(parents=True)
    path.write_bytes(
        b"".join(encode_line(make_reflection(f"bulk-{n % 500}", attempt=1)) for n in range(20_000))
    )
    store = JsonlMemory(path)
    assert len(store.recent("bulk-7", limit=3)) == 3  # builds the index once
    before = {p.name: p.stat().st_ino for p in _shards(path)}
    racers = [subprocess.Popen(_python(RACER, path, f"r{n}", 150)) for n in range(6)]
    assert [r.wait(timeout=300) for r in racers] == [0] * 6
    after = {p.name: p.stat().st_ino for p in _shards(path)}
    # A rebuild starts from empty shards (new files); catching up only appends to them.
    assert {name: after[name] for name in before} == before
    for n in range(6):
        assert store.recent(f"r{n}-sub", limit=3) == _truth(path, f"r{n}-sub", 3)


# --- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path: Path, disks: Disks) -> Path:
    """A 1 MiB tmpfs of our own, mounted for the test and unmounted after it."""
    return disks.mount(tmp_path / "tmpfs", size="1m")


def _fill(mnt: Path, leave: int) -> Path:
    """Fill the file system up to *leave* free bytes with a filler file; return it."""
    filler = mnt / "filler"
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with filler.open("ab") as f:
        f.write(b"\0" * max(0, free - leave))
    return filler


FILL_UP = """
import sys
import attrs
from reflexkit.exceptions import StoreError
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

store = JsonlMemory(sys.argv[1])
errors = 0
i = 0
while errors < 5:
    r = make_reflection(f"s{i % 3}", attempt=i + 1, analysis="x" * (300 + 97 * (i % 11)))
    r = attrs.evolve(r, id=f"full-{i}")
    try:
        store.append(r)
    except StoreError as err:
        errors += 1
        print("error", err, file=sys.stderr)
    else:
        print(r.id, flush=True)
        if i % 5 == 0:
            store.recent(f"s{i % 3}", limit=3)
    i += 1
"""


def test_a_full_tmpfs_cuts_partial_writes_and_recovers(small_tmpfs: Path) -> None:
    """A full tmpfs: StoreError, save() False, no SIGBUS, no fragment; fine once space is back."""
    filler = _fill(small_tmpfs, leave=24 * 1024)
    path = small_tmpfs / "memory" / "reflections.jsonl"
    child = subprocess.run(
        _python(FILL_UP, path), capture_output=True, text=True, check=False, timeout=120
    )
    assert child.returncode == 0, child.stderr  # -7 would be SIGBUS
    assert "No space left on device" in child.stderr
    acknowledged = child.stdout.split()
    assert acknowledged
    assert list(_ids(path)) == acknowledged  # every acked record, once, nothing torn
    store = JsonlMemory(path)
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)

    before = path.read_bytes()
    heuristic = HeuristicGenerator()
    service = DefaultReflectionService(
        generator=heuristic,
        store=store,
        fallback=heuristic,
        redact=Redactor(environ={}).redact_failure,
        classify=classify,
        fingerprint=fingerprint,
    )
    assert service.save(make_reflection("s1", analysis="y" * 50_000)) is False
    assert service.health.store_errors == 1
    with pytest.raises(StoreError, match="can't prune"):
        store.prune(older_than=datetime(2099, 1, 1, tzinfo=UTC))
    assert path.read_bytes() == before  # nothing of either is left in the file

    filler.unlink()  # space is back
    later = make_reflection("s1", attempt=10_000)
    store.append(later)
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)
    assert store.recent("s1", limit=1) == [later]
    assert list(_ids(path)) == [*acknowledged, later.id]


WRITERS_FILL_UP_TOGETHER = 4


def test_a_file_size_limit_is_named_and_loses_nothing(path: Path) -> None:
    """``ulimit -f`` (RLIMIT_FSIZE): the error names the limit, not a full disk; no fragment.

    Python ignores SIGXFSZ, so the write past the limit is cut short, then refused (EFBIG).
    """
    limit = 64 << 10
    child = subprocess.run(
        _python(FILL_UP, path),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    assert child.returncode == 0, child.stderr
    assert "file size limit" in child.stderr
    assert "No space left" not in child.stderr
    acknowledged = child.stdout.split()
    assert acknowledged
    assert list(_ids(path)) == acknowledged
    store = JsonlMemory(path)  # without the limit: the store goes on
    store.append(make_reflection("s1", attempt=99))
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)


def test_writers_filling_a_tmpfs_together_lose_nothing(small_tmpfs: Path) -> None:
    """Four processes hit a full tmpfs at once: every acked record once, nothing torn."""
    filler = _fill(small_tmpfs, leave=48 * 1024)
    path = small_tmpfs / "memory" / "reflections.jsonl"
    path.parent.mkdir()
    JsonlMemory(path).append(make_reflection("s0", attempt=99_999))  # create the side files first
    children = [
        subprocess.Popen(
            _python(FILL_UP.replace('f"full-{i}"', f'f"w{n}-{{i}}"'), path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS_FILL_UP_TOGETHER)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [child.returncode for child in children] == [0] * WRITERS_FILL_UP_TOGETHER
    acknowledged = [i for out, _ in outputs for i in out.split()]
    assert acknowledged
    ids = _ids(path)  # raises on a torn or interleaved line
    assert all(ids[i] == 1 for i in acknowledged), "an acked record is missing or doubled"
    filler.unlink()
    store = JsonlMemory(path)
    later = make_reflection("s1", attempt=10_000)
    store.append(later)
    assert store.recent("s1", limit=3) == _truth(path, "s1", 3)
    assert store.recent("s1", limit=1) == [later]


# --- lines other programs leave without a newline ---------------------------------------------


APPENDER = """
import sys
import attrs
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection
store = JsonlMemory(sys.argv[1])
for i in range(int(sys.argv[3])):
    r = make_reflection(f"s{i % 5}", attempt=i + 1)
    store.append(attrs.evolve(r, id=f"{sys.argv[2]}-{i}"))
    print(r.subtask_id, f"{sys.argv[2]}-{i}", flush=True)
"""


def test_fragments_written_beside_the_writers_never_swallow_a_record(
    path: Path, tmp_path: Path
) -> None:
    """A program appends unterminated fragments while 4 writers run: no acked record is lost.

    Each fragment is a torn line; a record written right after one would be glued to it and
    unreadable. Whenever a fragment lands before a record, whatever the timing, the writer
    must notice and leave its record whole on a line of its own.
    """
    store = JsonlMemory(path)
    store.append(make_reflection("s0", attempt=99_999))
    stop = tmp_path / "stop"
    rogue = subprocess.Popen(
        _python(FRAGMENT_WRITER, path, stop, '{"id":"rogue-%d","analysis":"', "300"),
        stdout=subprocess.PIPE,
        text=True,
    )
    size, deadline = path.stat().st_size, time.monotonic() + 60
    while path.stat().st_size == size:  # the writers start once fragments are coming
        assert rogue.poll() is None
        assert time.monotonic() < deadline
        time.sleep(0.005)
    writers = [
        subprocess.Popen(_python(APPENDER, path, f"w{n}", 1500), stdout=subprocess.PIPE, text=True)
        for n in range(4)
    ]
    outputs = [w.communicate(timeout=300)[0] for w in writers]
    stop.touch()
    fragments = int(rogue.communicate(timeout=60)[0])
    assert [w.returncode for w in writers] == [0] * 4
    assert fragments > 50
    acked = [line.split() for out in outputs for line in out.splitlines()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        ids = Counter(r.id for r in JsonlMemory(path))
        assert [i for _, i in acked if ids[i] != 1] == []
        assert store.recent("s3", limit=4) == _truth(path, "s3", 4)
        assert store.stats().corrupt >= 1  # the fragments are kept, as bad lines


def test_a_valid_record_left_without_a_newline_survives_the_next_append(path: Path) -> None:
    """A record another program wrote without its newline stays readable after an append."""
    first, foreign, later = (make_reflection("s1", attempt=n) for n in (1, 2, 3))
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_line(first) + encode_line(foreign).rstrip(b"\n"))
    store = JsonlMemory(path)
    store.append(later)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)
        assert list(store) == [first, foreign, later]
        assert store.recent("s1", limit=3) == [first, foreign, later]


# --- damage: a blob in the file, a run of zeros -----------------------------------------------

DAMAGED_READER = """
import shutil, sys, warnings
from datetime import UTC, datetime
from reflexkit.exceptions import CorruptRecordWarning
from reflexkit.memory import JsonlMemory
warnings.simplefilter("ignore", CorruptRecordWarning)
path = sys.argv[1]
store = JsonlMemory(path)
found = [r.attempt_number for r in store.recent("s1", limit=5)]
stats = store.stats()
removed = store.prune(older_than=datetime(2026, 1, 1, tzinfo=UTC))
after = [r.attempt_number for r in store.recent("s1", limit=5)]
index = path + ".index"
shutil.rmtree(index)
open(index, "w").close()  # a file where the index folder goes: recent reads from the end
backwards = [r.attempt_number for r in JsonlMemory(path).recent("s1", limit=5)]
# VmHWM: this process's own peak since exec (ru_maxrss would count the forking parent's too)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) // 1024
print(found, stats.records, stats.corrupt, removed, after, backwards, peak)
"""


def test_a_blob_or_a_run_of_zeros_in_the_store_costs_no_memory(path: Path) -> None:
    """A 64 MiB line and a 40 MiB zero tail: read past in bounded memory, kept by prune.

    A crash can leave a run of zeros where a file's end was, and another program can append a
    blob with no newline: neither is a record, and neither may cost its size in memory, hang
    the reader or be thrown away.
    """
    old = make_reflection("s1", attempt=1, created_at=datetime(2025, 1, 1, tzinfo=UTC))
    new = [make_reflection("s1", attempt=n, created_at=_NOW) for n in (2, 3)]
    path.parent.mkdir(parents=True)
    with path.open("wb") as f:
        f.write(encode_line(old) + encode_line(new[0]))
        for _ in range(64):
            f.write(b"x" * (1 << 20))
        f.write(b"\n" + encode_line(new[1]))
        for _ in range(40):
            f.write(bytes(1 << 20))
    child = subprocess.run(
        _python(DAMAGED_READER, path), capture_output=True, text=True, check=False, timeout=120
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("[1, 2, 3] 3 2 1 [2, 3] [2, 3] "), child.stdout
    # Python and reflexkit take ~45 MiB; reading the blob whole would take twice its size.
    assert int(child.stdout.split()[-1]) < 140, f"peak RSS {child.stdout.split()[-1]} MiB"
    data = path.read_bytes()
    assert data.count(b"x" * (64 << 20)) == 1  # prune kept the blob and the zeros whole
    assert data.endswith(bytes(40 << 20))


def test_a_record_too_long_for_the_store_is_refused(path: Path) -> None:
    """A record over the store's line limit: StoreError naming the limit, nothing written."""
    store = JsonlMemory(path)
    store.append(make_reflection("s1", attempt=1))
    before = path.read_bytes()
    with pytest.raises(StoreError, match="up to 16 MiB"):
        store.append(make_reflection("s1", attempt=2, analysis="y" * (17 << 20)))
    assert path.read_bytes() == before


def test_a_torn_tail_does_not_switch_the_index_off(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A torn last line is not a reason to read the whole file backwards on every call."""
    records = [make_reflection(f"s{n % 3}", attempt=n + 1) for n in range(30)]
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(encode_line(r) for r in records) + b'{"id":"torn')
    store = JsonlMemory(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert store.recent("s1", limit=2) == records[1::3][-2:]
        assert store.recent("s2", limit=2) == records[2::3][-2:]
    assert "reading from the end" not in caplog.text
    state = path.with_name(path.name + ".index") / "state"
    before = state.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert store.recent("s1", limit=2) == records[1::3][-2:]
    assert state.read_bytes() == before  # nothing new to index: the state is not rewritten


NOBODY_APPENDS = """
import sys
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

store = JsonlMemory(sys.argv[1])
for n in (1, 2):
    store.append(make_reflection("s1", attempt=n))
print([r.attempt_number for r in store.recent("s1", limit=3)])
"""


def test_a_writable_store_in_a_folder_we_may_not_write_takes_appends() -> None:
    """No lock file can be made beside it (and no index): appends still go in, recent reads.

    Run as ``nobody`` (root may write anywhere), in a folder of root's, on a file of
    nobody's: the lock file only carries a prune's flag, and no prune can run there.
    """
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run a child as nobody")
    folder = Path(tempfile.mkdtemp())  # not under tmp_path: root's 0700 folders bar nobody
    try:
        folder.chmod(0o755)
        store = folder / "reflections.jsonl"
        store.touch()
        os.chown(store, 65534, 65534)
        child = subprocess.run(
            [
                setpriv,
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                *_python(NOBODY_APPENDS, store),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert child.returncode == 0, child.stderr
        assert child.stdout.strip() == "[1, 2]"
        assert not store.with_name(store.name + ".lock").exists()
    finally:
        shutil.rmtree(folder)


# --- symlinks, folders, empty paths ---------------------------------------------------------


def test_a_symlink_at_the_store_path_is_refused(path: Path, tmp_path: Path) -> None:
    """A store path that is a symlink: StoreError, and the target is never written."""
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    store = JsonlMemory(path)
    with pytest.raises(StoreError, match="symlink"):
        store.append(make_reflection())
    with pytest.raises(StoreError, match="symlink"):
        store.recent("sub-1", limit=3)
    with pytest.raises(StoreError, match="symlink"):
        store.prune(older_than=_CUTOFF)
    assert target.read_bytes() == b""


@RUNNING
def test_a_symlink_planted_under_a_running_writer_is_refused(
    path: Path, tmp_path: Path, appended: int
) -> None:
    """The store replaced by a link while a writer holds it open: refused, not followed."""
    writer = JsonlMemory(path)
    kept = [make_reflection(attempt=1, analysis=f"warm-{n}") for n in range(appended)]
    for r in kept:
        writer.append(r)
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"")
    moved = tmp_path / "moved.jsonl"
    path.rename(moved)
    path.symlink_to(target)
    with pytest.raises(StoreError, match="symlink"):
        writer.append(make_reflection(attempt=2))
    assert target.read_bytes() == b""
    assert list(JsonlMemory(moved)) == kept


def test_a_symlink_at_the_lock_or_index_is_refused(path: Path, tmp_path: Path) -> None:
    """A lock file or index folder that is a symlink: StoreError, the target untouched."""
    store = JsonlMemory(path)
    store.append(make_reflection(created_at=_OLD))
    store.append(make_reflection(attempt=2, created_at=_NOW))
    lock_target = tmp_path / "lock-target"
    lock_target.write_bytes(b"")
    lock = path.with_name(path.name + ".lock")
    lock.unlink()  # writers made it; an attacker puts a link in its place
    lock.symlink_to(lock_target)
    with pytest.raises(StoreError, match="symlink"):
        store.prune(older_than=_CUTOFF)
    with pytest.raises(StoreError, match="symlink"):
        JsonlMemory(path).append(make_reflection(attempt=3))  # a new writer opens the lock
    assert lock_target.read_bytes() == b""
    index_target = tmp_path / "index-target"
    index_target.mkdir()
    shutil.rmtree(path.with_name(path.name + ".index"), ignore_errors=True)
    path.with_name(path.name + ".index").symlink_to(index_target)
    with pytest.raises(StoreError, match="symlink"):
        store.recent("sub-1", limit=3)
    assert list(index_target.iterdir()) == []


def test_a_folder_or_an_empty_path_is_refused(tmp_path: Path) -> None:
    """A folder where the file should be, or an empty path: a clear StoreError."""
    folder = tmp_path / "memory.jsonl"
    folder.mkdir()
    store = JsonlMemory(folder)
    with pytest.raises(StoreError, match="is a folder"):
        store.recent("sub-1", limit=3)
    with pytest.raises(StoreError, match=r"memory\.jsonl"):
        store.append(make_reflection())
    for empty in ("", "  "):
        with pytest.raises(StoreError, match="empty"):
            JsonlMemory(empty)


@pytest.mark.parametrize("key", ["path", "spoolPath"])
def test_the_config_rejects_an_empty_memory_path(tmp_path: Path, key: str) -> None:
    """``memory.path: ""`` is a configuration error naming the JSON path."""
    config = tmp_path / "project.json"
    config.write_text(f'{{"memory": {{"{key}": ""}}}}')
    with pytest.raises(ConfigError, match=rf"\$\.memory\.{key}: expected a non-empty string"):
        load_project(config)
