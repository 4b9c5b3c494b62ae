"""The store's promises under real concurrency and real crashes: separate processes."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

from reflexkit.exceptions import CorruptRecordWarning
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

pytestmark = pytest.mark.slow  # multi-process reliability tests: scheduled first (conftest.py)

WRITER = """
import sys
import attrs
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = JsonlMemory(path)
now = datetime.now(UTC)
for i in range(count):
    old = i % 5 == 0  # every fifth record is old enough for the pruner
    r = make_reflection(f"{name}-s{i % 7}", attempt=i + 1,
                        created_at=now - timedelta(days=400 if old else 0))
    store.append(attrs.evolve(r, id=f"{name}-{i}-{'old' if old else 'new'}"))
"""

PRUNER = """
import sys, pathlib
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory

store, stop = JsonlMemory(sys.argv[1]), pathlib.Path(sys.argv[2])
prunes = removed = 0
while not stop.exists():
    removed += store.prune(older_than=datetime.now(UTC) - timedelta(days=30))
    prunes += 1
print(prunes, removed)
"""

KILLED = """
import sys
import attrs
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

path, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = JsonlMemory(path)
i = 0
while True:
    r = make_reflection("killed", attempt=i + 1, analysis="x" * size)
    r = attrs.evolve(r, id=f"{name}-{i}")
    store.append(r)
    sys.stdout.write(r.id + "\\n")
    sys.stdout.flush()  # only after append returned
    i += 1
"""

KILLED_BESIDE_PRUNES = """
import sys
import attrs
from datetime import UTC, datetime, timedelta
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

path, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = JsonlMemory(path)
now = datetime.now(UTC)
i = 0
while True:
    old = i % 4 == 0  # for the pruners
    r = make_reflection(f"k{i % 3}", attempt=i + 1, analysis="x" * size,
                        created_at=now - timedelta(days=400 if old else 0))
    store.append(attrs.evolve(r, id=f"{name}-{i}-{'old' if old else 'new'}"))
    sys.stdout.write(f"{name}-{i}-{'old' if old else 'new'}\\n")
    sys.stdout.flush()  # only after append returned
    i += 1
"""


def _python(code: str, *args: object) -> list[str]:
    return [sys.executable, "-c", code, *map(str, args)]


def test_eight_writers_and_a_pruner_lose_nothing(tmp_path: Path) -> None:
    """8 processes append 5,000 records each while a ninth prunes: none lost, torn or doubled."""
    path = tmp_path / "reflections.jsonl"
    stop = tmp_path / "stop"
    pruner = subprocess.Popen(_python(PRUNER, path, stop), stdout=subprocess.PIPE, text=True)
    writers = [subprocess.Popen(_python(WRITER, path, f"w{n}", 5000)) for n in range(8)]
    for w in writers:
        assert w.wait(timeout=120) == 0
    stop.touch()
    out, _ = pruner.communicate(timeout=60)
    prunes, removed = map(int, out.split())
    assert pruner.returncode == 0
    assert prunes > 1, "the pruner never ran while the writers did"

    store = JsonlMemory(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptRecordWarning)  # nothing torn or interleaved
        ids = Counter(r.id for r in store)
        expected_new = {f"w{n}-{i}-new" for n in range(8) for i in range(5000) if i % 5}
        assert {i for i in ids if i.endswith("-new")} == expected_new
        assert max(ids.values()) == 1
        old_left = sum(1 for i in ids if i.endswith("-old"))
        assert removed + old_left == 8 * 1000
        # the index agrees with the file after all those swaps
        last = [r for r in store if r.subtask_id == "w3-s2"][-3:]
        assert store.recent("w3-s2", limit=3) == last


def test_writers_killed_at_random_moments_lose_no_acknowledged_record(tmp_path: Path) -> None:
    """SIGKILL at random moments, 20 times: every acknowledged append is on disk."""
    path = tmp_path / "reflections.jsonl"
    rng = random.Random(20261123)  # noqa: S311 -- timing jitter, not security
    acknowledged: list[str] = []
    for round_ in range(20):
        size = rng.choice([100, 5_000, 300_000])  # big lines can be torn by the kill
        proc = subprocess.Popen(
            _python(KILLED, path, f"r{round_}", size), stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()  # it is running and has appended once
        time.sleep(rng.uniform(0.0, 0.15))
        proc.send_signal(signal.SIGKILL)
        # Not communicate(timeout=...): it reads the pipe's descriptor, past what readline
        # has buffered, and the first id cut in two there reads as a record never written.
        with proc.stdout:
            rest = proc.stdout.read()  # up to the end of the pipe: the process is dead
        proc.wait(timeout=30)
        acknowledged += [first.strip(), *rest.split()]

    store = JsonlMemory(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorruptRecordWarning)
        stored = [r.id for r in store]
    torn = [w for w in caught if issubclass(w.category, CorruptRecordWarning)]
    assert set(acknowledged) <= set(stored)
    assert len(stored) == len(set(stored))
    assert store.stats().corrupt == len(torn)
    # the store goes on: the next append starts on a line of its own and reads back whole
    after = make_reflection("killed", attempt=10_000)
    store.append(after)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)
        assert store.recent("killed", limit=1) == [after]
        assert [r.id for r in store] == [*stored, after.id]


def test_writers_killed_beside_two_pruners_lose_no_acknowledged_record(tmp_path: Path) -> None:
    """4 writers SIGKILLed and restarted 12 times while 2 processes prune: nothing lost."""
    path = tmp_path / "reflections.jsonl"
    stop = tmp_path / "stop"
    rng = random.Random(20261128)  # noqa: S311 -- timing jitter, not security
    pruners = [
        subprocess.Popen(_python(PRUNER, path, stop), stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    acknowledged: list[str] = []

    def start(name: str) -> subprocess.Popen[str]:
        size = rng.choice([100, 5_000, 300_000])  # big lines can be torn by the kill
        return subprocess.Popen(
            _python(KILLED_BESIDE_PRUNES, path, name, size), stdout=subprocess.PIPE, text=True
        )

    def kill(proc: subprocess.Popen[str]) -> None:
        proc.send_signal(signal.SIGKILL)
        assert proc.stdout is not None
        with proc.stdout:
            acknowledged.extend(proc.stdout.read().split())
        proc.wait(timeout=30)

    writers = {n: start(f"w{n}") for n in range(4)}
    for round_ in range(12):
        time.sleep(rng.uniform(0.3, 0.9))
        n = rng.randrange(4)
        kill(writers[n])
        writers[n] = start(f"w{n}.{round_}")
    for proc in writers.values():
        kill(proc)
    stop.touch()
    for pruner in pruners:
        pruner.communicate(timeout=60)
        assert pruner.returncode == 0

    store = JsonlMemory(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptRecordWarning)  # torn by a kill: reported
        ids = Counter(r.id for r in store)
        assert {a for a in acknowledged if a.endswith("-new")} <= set(ids)
        assert max(ids.values(), default=1) == 1
        for sub in ("k0", "k1", "k2"):
            assert store.recent(sub, limit=3) == [r for r in store if r.subtask_id == sub][-3:]
