"""Measure the JSONL memory store against the raw file operations it is built on.

Every figure is timed in the same run as its baseline, in interleaved rounds (measured,
baseline, measured, ...; the order alternates from round to round), and judged by the
MEDIAN of the per-round ratios, since single timings vary twofold on shared machines:

* ``append`` (page cache) in one process: from the Reflection object to the line in the
  file, against that process's own raw ``os.write`` of the same bytes (<= 4x).
  Beside it, shown without a target: the same rounds in the process's CPU time (user +
  system; steadier than the wall clock on a loaded machine, where preemption lands on
  either side at random), and the same appends through the outbound gate first
  (``gated_reflection``, as the reflection service saves), which reads the text for secrets.
  In every append figure a store's first two appends (they open the file and start the
  watch that replaces a stat per append) come before the clock; their time is printed.
* ``append`` (page cache) from 8 writer processes started behind a barrier, appending to one
  store: from the Reflection object to the line in the file, against 8 processes doing a raw
  ``os.write`` of the same bytes on kept-open ``O_APPEND`` descriptors (<= 2x).
* ``append`` with ``durability="fsync"``, the same way: against ``os.write`` +
  ``os.fdatasync`` (<= 1.2x).
* ``recent(limit=3)`` on a big store against the same call on 1,000 records (<= 2x), in three
  layouts: the subtask's records at the end of the file, spread through it, and a subtask
  with fewer records than the limit (one, the oldest line of the file).
* a warm ``recent(limit=3)`` against its floor: offsets looked up in a dict, K ``pread`` and
  K ``decode_line`` (<= 3x).
* the first ``recent`` in a new process (after the imports), big store against 1,000 records,
  both indexes current (< 10 ms).
* ``reflexkit recent`` as a fresh process, big store against 1,000 records (<= 1.5x and at
  most 10 ms slower), in the same three layouts; each round keeps the fastest of three runs
  of each command, since a process start varies by more than 10 ms; "slower" is the median
  of the per-round differences.
* ``prune`` of the store to its newer half against copying the kept bytes to a new file
  (``os.sendfile`` of that byte range) and ``fsync``-ing it (<= 3x); then the first
  ``recent`` after it, with no full rebuild of the index (it is carried over).

The big store is written directly with ``encode_line`` (not a million ``append`` calls):
``--records`` lines over one subtask id per 20 records, ``created_at`` rising over 60 days;
its index is warmed by one ``recent`` call before anything is timed.

Usage::

    python benchmarks/memory.py [--records N] [--quick | --smoke] [--dir DIR]
                                [--only append|prune] [--prune-rounds R]

``--quick`` uses 20,000 records and fewer rounds; ``--smoke`` 2,000 records and one round,
to check that every figure runs (the test suite does). ``--only append`` times only the two
append figures (no stores are built); ``--only prune`` builds the stores and times only the
prune figures; ``--prune-rounds`` sets their rounds (3 by default). Files go
to a temporary folder (in ``--dir`` when given; it should be on a real disk for the fsync
figures) removed at the end.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import multiprocessing as mp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from reflexkit.memory import JsonlMemory, PostgresMemory
from reflexkit.memory._codec import decode_line, encode_line
from reflexkit.models import FailureType, Reflection, ReflectionCategory, ReflectionSource
from reflexkit.redaction._gate import gated_reflection

SMALL = 1_000
PER_SUBTASK = 20  # records per subtask id on average
SPAN = timedelta(days=60)
START = datetime(2026, 1, 1, tzinfo=UTC)
LIMIT = 3
BEST_OF = 3  # fresh-process runs per command and round; the fastest counts
LAYOUTS = {  # layout -> the subtask id that has it
    "at the end": "bench-end",
    "spread": "bench-spread",
    "fewer than limit": "bench-rare",
}

_ANALYSES = (
    (
        "The test {test} failed: the engine fixture is module-scoped and an earlier test leaves "
        "the pool read-only, so the insert of attempt {n} raises OperationalError at line {line} "
        "of repository.save; the root cause is the fixture scope."
    ),
    (
        "mypy reports {n} errors in {module}: the helper now returns Optional[dict] but callers "
        "index it directly, and the protocol still has the old signature, so line {line} and "
        "its call sites disagree with the implementation."
    ),
    (
        "The build of {module} failed at the link step: the extension was compiled against the "
        "system OpenSSL headers, EVP_MD_fetch is missing from the older libssl, and attempt {n} "
        "reused the include path of line {line}."
    ),
)
_SUGGESTIONS = (
    "Scope the engine fixture to the function and rerun {test} alone, then in random order.",
    "Update the protocol and the call sites together; narrow the Optional before indexing.",
    "Point CFLAGS and LDFLAGS at the bundled OpenSSL before rebuilding {module}.",
)
_ACTIONS = (
    "Make the fixture function-scoped",
    "Rerun {test} with a fixed seed",
    "Add a test that runs them in reverse order",
    "Narrow the return type in {module}",
)


def _texts(k: int) -> tuple[str, str, tuple[str, ...], int, str]:
    """Return analysis, suggestion, action items, attempt and fingerprint of variant *k*."""
    rnd = random.Random(k)  # noqa: S311
    kind = k % len(_ANALYSES)
    fields = {
        "test": f"tests/test_orders.py::test_checkout_{rnd.randrange(1000)}",
        "module": f"src/shop/services/module_{rnd.randrange(100)}.py",
        "n": rnd.randrange(1, 6),
        "line": rnd.randrange(10, 900),
    }
    actions = tuple(a.format(**fields) for a in rnd.sample(_ACTIONS, rnd.choice((2, 3))))
    return (
        _ANALYSES[kind].format(**fields),
        _SUGGESTIONS[kind].format(**fields),
        actions,
        fields["n"],
        f"{rnd.getrandbits(64):016x}",
    )


_VARIANTS = [_texts(k) for k in range(1024)]


def make_reflection(i: int, subtask_id: str, created_at: datetime) -> Reflection:
    """Return a realistic reflection (its JSONL line is 700-900 bytes)."""
    analysis, suggestion, actions, attempt, fingerprint = _VARIANTS[(i * 7919) % 1024]
    return Reflection(
        id=f"refl-{i:012d}",
        task_id=f"task-{i // 200:06d}",
        subtask_id=subtask_id,
        attempt_number=attempt,
        category=ReflectionCategory.ROOT_CAUSE,
        failure_type=FailureType.TEST_FAILURE,
        analysis=analysis,
        suggestion=suggestion,
        action_items=actions,
        confidence=0.7,
        source=ReflectionSource.HEURISTIC,
        created_at=created_at,
        fingerprint=fingerprint,
    )


def layout_subtask(i: int, n: int, rnd: random.Random) -> str:
    """Return the subtask id of line *i* of *n*: mostly random, a few with a known layout."""
    if i == 0:
        return LAYOUTS["fewer than limit"]
    if i >= n - PER_SUBTASK:
        return LAYOUTS["at the end"]
    step = n // PER_SUBTASK
    if i % step == step // 2:
        return LAYOUTS["spread"]
    return f"sub-{rnd.randrange(max(1, n // PER_SUBTASK)):06d}"


def build_store(path: Path, n: int) -> int:
    """Write *n* lines with encode_line; return the byte offset of the first line to keep.

    The kept half (for prune) is the lines created at or after the midpoint of the span.
    """
    rnd = random.Random(n)  # noqa: S311 -- benchmark data, not secrets
    cutoff_at = -1
    pos = 0
    step = SPAN / n
    with path.open("wb") as out:
        batch: list[bytes] = []
        for i in range(n):
            line = encode_line(make_reflection(i, layout_subtask(i, n, rnd), START + step * i))
            if cutoff_at < 0 and i >= n // 2:
                cutoff_at = pos
            pos += len(line)
            batch.append(line)
            if len(batch) == 10_000:
                out.write(b"".join(batch))
                batch.clear()
        out.write(b"".join(batch))
    return cutoff_at


def prune_cutoff(n: int) -> datetime:
    """Return the created_at of line ``n // 2``: prune keeps it and everything after."""
    return START + (SPAN / n) * (n // 2)


# --- timing -----------------------------------------------------------------------------


@dataclass
class Figure:
    """One row of the table: per-round times of the measured and the baseline operation."""

    name: str
    target: float
    unit: str
    measured: list[float]
    baseline: list[float]
    max_extra_ms: float | None = None  # also: measured - baseline must stay below this
    max_ms: float | None = None  # also: the median measured time must stay below this

    @property
    def ratio(self) -> float:
        """The median of the per-round ratios measured / baseline."""
        return statistics.median(m / b for m, b in zip(self.measured, self.baseline, strict=True))

    @property
    def extra_ms(self) -> float:
        """The median of the per-round differences measured - baseline, in milliseconds."""
        return statistics.median(
            (m - b) * 1e3 for m, b in zip(self.measured, self.baseline, strict=True)
        )

    @property
    def passed(self) -> bool:
        """Whether the figure meets its target(s)."""
        ok = self.ratio <= self.target
        if self.max_extra_ms is not None:
            ok = ok and self.extra_ms <= self.max_extra_ms
        if self.max_ms is not None:
            ok = ok and statistics.median(self.measured) * 1e3 <= self.max_ms
        return ok


def interleave(
    rounds: int, measured: Callable[[], float], baseline: Callable[[], float]
) -> tuple[list[float], list[float]]:
    """Run both in alternating order, *rounds* times; return their per-round seconds."""
    ms: list[float] = []
    bs: list[float] = []
    for r in range(rounds):
        if r % 2:
            bs.append(baseline())
            ms.append(measured())
        else:
            ms.append(measured())
            bs.append(baseline())
    return ms, bs


def per_op(seconds: float, ops: int) -> float:
    """Return the seconds of one operation."""
    return seconds / ops


WRITERS = 8  # writer processes per round, started behind a barrier


def _writer(  # noqa: PLR0913, PLR0917 -- one process's part of a round, as Process args
    kind: str,
    path: str,
    lines: list[bytes],
    records: list[Reflection],
    barrier: Any,  # noqa: ANN401 -- a multiprocessing Barrier
    out: Any,  # noqa: ANN401 -- a multiprocessing Queue
) -> None:
    """One writer process: open, wait at the barrier, append every record, report the span."""
    if kind in {"raw", "raw-fsync"}:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.write(fd, lines[0])
        barrier.wait()
        start = time.perf_counter()
        if kind == "raw-fsync":
            for line in lines:
                os.write(fd, line)
                os.fdatasync(fd)
        else:
            for line in lines:
                os.write(fd, line)
        out.put((start, time.perf_counter()))
        os.close(fd)
        return
    store = JsonlMemory(path, durability="fsync" if kind == "store-fsync" else "none")
    _start(store, records)
    barrier.wait()
    start = time.perf_counter()
    for r in records:
        store.append(r)
    out.put((start, time.perf_counter()))
    store.close()


def bench_append(work: Path, rounds: int, ops: int, *, fsync: bool) -> Figure:
    """Time JsonlMemory.append against os.write (+ fdatasync) of the same bytes.

    Each round starts ``WRITERS`` processes per side that open their file, meet at a barrier
    and append *ops* records each to one shared file; the time is from the first process's
    first append to the last one's last, per record.
    """
    ctx = mp.get_context("fork")
    records = [
        make_reflection(i, f"sub-{i % 50:03d}", START + timedelta(seconds=i)) for i in range(ops)
    ]
    lines = [encode_line(r) for r in records]
    counter = iter(range(1_000_000))

    def one_round(kind: str) -> float:
        path = work / f"{kind}-{next(counter)}.jsonl"
        barrier = ctx.Barrier(WRITERS)
        out = ctx.Queue()
        procs = [
            ctx.Process(target=_writer, args=(kind, str(path), lines, records, barrier, out))
            for _ in range(WRITERS)
        ]
        for proc in procs:
            proc.start()
        spans = [out.get(timeout=600) for _ in procs]
        for proc in procs:
            proc.join()
        _remove_store(path)
        return (max(e for _, e in spans) - min(b for b, _ in spans)) / (WRITERS * ops)

    measured = "store-fsync" if fsync else "store"
    baseline = "raw-fsync" if fsync else "raw"
    ms, bs = interleave(rounds, lambda: one_round(measured), lambda: one_round(baseline))
    if fsync:
        return Figure(f"append x{WRITERS} processes, durability=fsync", 1.2, "us", ms, bs)
    return Figure(f"append x{WRITERS} processes, page cache", 2.0, "us", ms, bs)


def bench_append_one_process(work: Path, rounds: int, ops: int) -> list[Figure]:
    """Time JsonlMemory.append in one process against its own os.write of the same bytes.

    From the Reflection object to the line in the file (encoding, lock, checks, write),
    against a raw ``os.write`` of the encoded lines on a kept-open ``O_APPEND`` descriptor,
    in the same process and the same run, per record.
    """
    records = [
        make_reflection(i, f"sub-{i % 50:03d}", START + timedelta(seconds=i)) for i in range(ops)
    ]
    lines = [encode_line(r) for r in records]
    counter = iter(range(1_000_000))
    starts: list[float] = []
    cpu: dict[str, list[float]] = {"store": [], "raw": []}

    def store_round(*, gate: bool = False) -> float:
        path = work / f"one-store-{next(counter)}.jsonl"
        store = JsonlMemory(path)
        start = time.perf_counter()
        _start(store, records)
        starts.append(time.perf_counter() - start)
        start, start_cpu = time.perf_counter(), time.process_time()
        if gate:
            for r in records:
                store.append(gated_reflection(r))
        else:
            for r in records:
                store.append(r)
        elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if not gate:
            cpu["store"].append(elapsed_cpu / ops)
        store.close()
        _remove_store(path)
        return elapsed / ops

    def raw_round() -> float:
        path = work / f"one-raw-{next(counter)}.jsonl"
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.write(fd, lines[0])
        start, start_cpu = time.perf_counter(), time.process_time()
        for line in lines:
            os.write(fd, line)
        elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        cpu["raw"].append(elapsed_cpu / ops)
        os.close(fd)
        path.unlink()
        return elapsed / ops

    ms, bs = interleave(rounds, store_round, raw_round)
    cms, cbs = cpu["store"], cpu["raw"][: len(cpu["store"])]
    gs, gbs = interleave(rounds, lambda: store_round(gate=True), raw_round)
    print(
        f"a new store's first two appends (open, lock file, watch): "
        f"{statistics.median(starts) * 1e3:.2f} ms, once per store and process"
    )
    return [
        Figure("append, one process, page cache", 4.0, "us", ms, bs),
        # The same rounds in CPU time (user + system) of the process: what other programs on
        # a loaded machine do to the wall clock (preemption) is left out. Shown beside it.
        Figure("  the same in CPU time", math.inf, "us", cms, cbs),
        # The outbound gate before it, as the reflection service saves (no target: it reads
        # the record's text for secrets, which the raw write doesn't).
        Figure("  the same through the gate", math.inf, "us", gs, gbs),
    ]


def _start(store: JsonlMemory, records: list[Reflection]) -> None:
    """Make a store's first two appends before the clock starts: they set it up.

    The first opens the file and its lock file; the second starts the inotify watch that
    spares every later append a stat of the path (a store that appends once never pays
    for one). Their time is printed apart, not hidden: it is paid once per store and process.
    """
    store.append(records[0])
    store.append(records[1])


def bench_recent_floor(big: Path, rounds: int, calls: int) -> Figure:
    """Time a warm recent(3) against its floor: a dict lookup, K preads and K decodes.

    The floor knows every subtask's offsets in memory (built outside the timing), so it pays
    only for reading and decoding the records it returns.
    """
    subtask = LAYOUTS["spread"]
    offsets: list[tuple[int, int]] = []
    with big.open("rb") as f:
        at = 0
        for line in f:
            if b'"subtaskId":"%s"' % subtask.encode() in line:
                offsets.append((at, len(line) - 1))
            at += len(line)
    table = {subtask: offsets}
    store = JsonlMemory(big)
    expected = store.recent(subtask, limit=LIMIT)
    fd = os.open(big, os.O_RDONLY)

    def floor_call() -> list[Reflection]:
        return [decode_line(os.pread(fd, n, o)) for o, n in table[subtask][-LIMIT:]]

    assert floor_call() == expected

    def timed(fn: Callable[[], object]) -> float:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        return per_op(time.perf_counter() - start, calls)

    ms, bs = interleave(
        rounds,
        lambda: timed(lambda: store.recent(subtask, limit=LIMIT)),
        lambda: timed(floor_call),
    )
    os.close(fd)
    store.close()
    return Figure(f"warm recent({LIMIT}) vs offsets in memory + preads", 3.0, "us", ms, bs)


FIRST_RECENT = """
import sys, time
t0 = time.perf_counter()
from reflexkit.memory import JsonlMemory
t1 = time.perf_counter()
got = JsonlMemory(sys.argv[1]).recent(sys.argv[2], limit=int(sys.argv[3]))
t2 = time.perf_counter()
assert len(got) == int(sys.argv[3]), len(got)
print(t2 - t1)
"""


def bench_first_recent(big: Path, small: Path, n: int, rounds: int) -> Figure:
    """Time the first recent in a new process (after the imports), big store against small.

    Both indexes are current: this is the cost of opening and checking the index, and of
    reading the records, with nothing cached in the process.
    """

    def run_one(path: Path) -> float:
        out = subprocess.run(
            [sys.executable, "-c", FIRST_RECENT, str(path), LAYOUTS["at the end"], str(LIMIT)],
            check=True,
            capture_output=True,
            text=True,
        )
        return float(out.stdout)

    ms, bs = interleave(rounds, lambda: run_one(big), lambda: run_one(small))
    name = f"first recent({LIMIT}) in a new process, {n:,} vs {SMALL:,}"
    return Figure(name, 2.0, "ms", ms, bs, max_ms=10.0)


def bench_recent(big: Path, small: Path, n: int, rounds: int, calls: int) -> list[Figure]:
    """Time recent(limit=3) on the big store against the small one, per layout."""
    stores = {big: JsonlMemory(big), small: JsonlMemory(small)}
    figures = []
    for layout, subtask in LAYOUTS.items():
        expected = 1 if subtask == LAYOUTS["fewer than limit"] else LIMIT
        for store in stores.values():
            got = store.recent(subtask, limit=LIMIT)
            assert len(got) == expected, (layout, len(got))

        def timed(store: JsonlMemory, subtask: str = subtask) -> float:
            start = time.perf_counter()
            for _ in range(calls):
                store.recent(subtask, limit=LIMIT)
            return per_op(time.perf_counter() - start, calls)

        ms, bs = interleave(rounds, lambda: timed(stores[big]), lambda: timed(stores[small]))
        figures.append(Figure(f"recent({LIMIT}) {n:,} vs {SMALL:,}: {layout}", 2.0, "us", ms, bs))
    for store in stores.values():
        store.close()
    return figures


def cli_works(config: Path) -> bool:
    """Say whether ``python -m reflexkit ... recent`` runs and prints the records."""
    result = subprocess.run(
        recent_command(config, LAYOUTS["at the end"], cli=True),
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        return False
    try:
        return len(json.loads(result.stdout)) == LIMIT
    except ValueError:
        return False


def recent_command(config: Path, subtask: str, *, cli: bool) -> list[str]:
    """Return the fresh-process command: the CLI, or the library one-liner standing in."""
    if cli:
        return [
            sys.executable,
            "-m",
            "reflexkit",
            "--config",
            str(config),
            "recent",
            subtask,
            "--limit",
            str(LIMIT),
            "--format",
            "json",
        ]
    store = json.loads(config.read_text())["memory"]["path"]
    code = (
        "from reflexkit.memory import JsonlMemory; "
        f"JsonlMemory({store!r}).recent({subtask!r}, limit={LIMIT})"
    )
    return [sys.executable, "-c", code]


def bench_fresh_process(  # noqa: PLR0913 -- the figure and its knobs
    big_config: Path, small_config: Path, n: int, rounds: int, *, cli: bool, best_of: int = BEST_OF
) -> list[Figure]:
    """Time the fresh-process recent on the big store against the small one, per layout.

    A round runs each command ``BEST_OF`` times, alternating, and keeps the fastest of each:
    a process start varies by tens of milliseconds, more than the 10 ms the target allows.
    """
    figures = []
    label = "reflexkit recent" if cli else "python -c recent"
    for layout, subtask in LAYOUTS.items():
        commands = [recent_command(c, subtask, cli=cli) for c in (big_config, small_config)]
        ms: list[float] = []
        bs: list[float] = []
        for r in range(rounds):
            best = [float("inf"), float("inf")]
            for k in range(best_of * 2):
                which = (k + r) % 2
                start = time.perf_counter()
                subprocess.run(commands[which], check=True, stdout=subprocess.DEVNULL)
                best[which] = min(best[which], time.perf_counter() - start)
            ms.append(best[0])
            bs.append(best[1])
        name = f"{label} {n:,} vs {SMALL:,}: {layout}"
        figures.append(Figure(name, 1.5, "ms", ms, bs, max_extra_ms=10.0))
    return figures


class _Rebuilds(logging.Handler):
    """Counts the index's "indexing the store from the start" messages."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "from the start" in record.getMessage():
            self.count += 1


def bench_prune(source: Path, keep_from: int, n: int, work: Path, rounds: int) -> list[Figure]:
    """Time prune to the newer half against sendfile of the kept bytes + fsync.

    The store pruned is a hard link to the big store with a copy of its (current) index, so
    the prune finds an index to carry over, as it would in use; a prune never writes to the
    file it replaces, so the big store stays as it was. After each prune, the first ``recent``
    is timed too, and any full rebuild of the index is counted (there must be none).
    """
    cutoff = prune_cutoff(n)
    size = source.stat().st_size
    index = source.with_name(source.name + ".index")
    rebuilds = _Rebuilds()
    logger = logging.getLogger("reflexkit.memory")
    logger.addHandler(rebuilds)
    logger.setLevel(logging.INFO)
    after: list[float] = []

    def measured() -> float:
        path = work / "prune" / "reflections.jsonl"
        path.parent.mkdir(exist_ok=True)
        os.link(source, path)
        shutil.copytree(index, path.with_name(path.name + ".index"))
        os.sync()  # the copy's dirty pages must not land in the timed fsync
        store = JsonlMemory(path)
        start = time.perf_counter()
        removed = store.prune(older_than=cutoff)
        elapsed = time.perf_counter() - start
        assert removed == n // 2, removed
        assert path.stat().st_size == size - keep_from, path.stat().st_size
        start = time.perf_counter()
        got = store.recent(LAYOUTS["at the end"], limit=LIMIT)
        after.append(time.perf_counter() - start)
        assert len(got) == LIMIT
        store.close()
        _remove_store(path)
        return elapsed

    try:
        ms, bs = interleave(rounds, measured, lambda: _copy_kept(source, keep_from, work))
    finally:
        logger.removeHandler(rebuilds)
    print(
        f"after each prune: first recent {', '.join(fmt(t, 'ms') for t in after)}; "
        f"full index rebuilds: {rebuilds.count}"
    )
    prune = Figure(f"prune {n:,} to the newer half", 3.0, "s", ms, bs)
    first = Figure(
        "first recent after the prune: no rebuild",
        float("inf"),
        "ms",
        after,
        _warm_recent_times(source, len(after)),
        max_ms=10.0 if rebuilds.count == 0 else 0.0,
    )
    return [prune, first]


def _copy_kept(source: Path, keep_from: int, work: Path) -> float:
    """Copy the kept bytes of *source* to a new file with sendfile and fsync it; time it."""
    path = work / "copy.jsonl"
    size = source.stat().st_size
    os.sync()
    start = time.perf_counter()
    src = os.open(source, os.O_RDONLY)
    dst = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        offset, left = keep_from, size - keep_from
        while left:
            sent = os.sendfile(dst, src, offset, left)
            offset += sent
            left -= sent
        os.fsync(dst)
    finally:
        os.close(dst)
        os.close(src)
    elapsed = time.perf_counter() - start
    path.unlink()
    return elapsed


def _warm_recent_times(source: Path, count: int) -> list[float]:
    """Time *count* warm recent calls on *source*: the baseline of the first after a prune.

    A rebuild of the index (seconds) would show against it; a carried-over index costs the
    first check of a shard.
    """
    warm = JsonlMemory(source)
    warm.recent(LAYOUTS["at the end"], limit=LIMIT)
    times = []
    for _ in range(count):
        start = time.perf_counter()
        warm.recent(LAYOUTS["at the end"], limit=LIMIT)
        times.append(time.perf_counter() - start)
    warm.close()
    return times


def _remove_store(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".lock")):
        p.unlink(missing_ok=True)
    shutil.rmtree(path.with_name(path.name + ".index"), ignore_errors=True)


# --- output -----------------------------------------------------------------------------


def fmt(seconds: float, unit: str) -> str:
    """Format seconds in *unit*."""
    scale = {"us": 1e6, "ms": 1e3, "s": 1.0}[unit]
    return f"{seconds * scale:,.2f} {unit}" if unit != "us" else f"{seconds * scale:,.1f} {unit}"


def print_table(figures: list[Figure]) -> None:
    """Print the figures as an aligned table."""
    rows = [("figure", "measured", "baseline", "median ratio [range]", "target", "result")]
    for f in figures:
        target = f"<= {f.target:g}x" if math.isfinite(f.target) else "(shown)"
        ratio = f"{f.ratio:.2f}x"
        if f.max_extra_ms is not None:
            target += f", <= +{f.max_extra_ms:g} ms"
            ratio += f" ({f.extra_ms:+.1f} ms)"
        if f.max_ms is not None:
            target += f", < {f.max_ms:g} ms"
        spread = ""
        if len(f.measured) > 1:
            ratios = sorted(m / b for m, b in zip(f.measured, f.baseline, strict=True))
            spread = f" [{ratios[0]:.2f}-{ratios[-1]:.2f}]"
        ratio += spread
        rows.append(
            (
                f.name,
                fmt(statistics.median(f.measured), f.unit),
                fmt(statistics.median(f.baseline), f.unit),
                ratio,
                target,
                "PASS" if f.passed else "FAIL",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


@dataclass
class Rounds:
    """How many rounds (and operations per round) each figure gets."""

    append: int
    append_ops: int
    fsync: int
    fsync_ops: int
    recent: int
    recent_calls: int
    process: int
    prune: int


def run(n: int, rounds: Rounds, work: Path, only: str | None = None) -> list[Figure]:
    """Build the stores, run every figure (or only the *only* ones), return the rows."""
    if only == "append":  # needs no stores
        return [
            *bench_append_one_process(work, rounds.append, rounds.append_ops * 4),
            bench_append(work, rounds.append, rounds.append_ops, fsync=False),
            bench_append(work, rounds.fsync, rounds.fsync_ops, fsync=True),
        ]
    big, small = work / "big" / "reflections.jsonl", work / "small" / "reflections.jsonl"
    for path in (big, small):
        path.parent.mkdir()
    start = time.perf_counter()
    keep_from = build_store(big, n)
    build_store(small, SMALL)
    size = big.stat().st_size
    print(
        f"built {n:,} records ({size / 1e6:,.0f} MB, {size / n:,.0f} bytes a line, "
        f"{n // PER_SUBTASK:,} subtasks) with encode_line in {time.perf_counter() - start:.1f} s"
    )
    for path in (big, small):
        start = time.perf_counter()
        JsonlMemory(path).recent(LAYOUTS["at the end"], limit=LIMIT)
        print(
            f"warmed the index of {path.parent.name} with one recent: "
            f"{time.perf_counter() - start:.2f} s"
        )
    start = time.perf_counter()
    os.sync()  # the stores' dirty pages must not be written back during the fsync figures
    print(f"synced the new files to disk: {time.perf_counter() - start:.1f} s", flush=True)
    if only == "prune":
        return bench_prune(big, keep_from, n, work, rounds.prune)
    figures = [
        *bench_append_one_process(work, rounds.append, rounds.append_ops * 4),
        bench_append(work, rounds.append, rounds.append_ops, fsync=False),
        bench_append(work, rounds.fsync, rounds.fsync_ops, fsync=True),
    ]
    print("append figures done", flush=True)
    figures += bench_recent(big, small, n, rounds.recent, rounds.recent_calls)
    figures.append(bench_recent_floor(big, rounds.recent, rounds.recent_calls))
    figures.append(bench_first_recent(big, small, n, rounds.process))
    print("recent figures done", flush=True)
    configs = []
    for path in (big, small):
        config = path.parent / "project.json"
        config.write_text(json.dumps({"memory": {"path": str(path)}}))
        configs.append(config)
    cli = cli_works(configs[1])
    if not cli:
        print("`python -m reflexkit recent` does not run: timing `python -c` with the library")
    best_of = 1 if rounds.process == 1 else BEST_OF
    figures += bench_fresh_process(
        configs[0], configs[1], n, rounds.process, cli=cli, best_of=best_of
    )
    print("fresh-process figures done", flush=True)
    figures += bench_prune(big, keep_from, n, work, rounds.prune)
    return figures


# --- the postgres backend beside the JSONL one (issue 8) ---------------------------------

PG_APPENDS = 300  # appends timed per round and store
PG_CALLS = 300  # recent calls timed per round, layout and store
PG_PROCS = 8
PG_PER_PROC = 500
MAX_RECENT_GROWTH = 2.0  # "recent must not grow with the number of records"

_APPENDER = """
import sys, time
from datetime import UTC, datetime
sys.path.insert(0, sys.argv[1])
from memory import make_reflection
kind, target, name, count = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
base = 10_000_000 * (1 + int(name[-1]))  # ids differ between the processes
if kind == "postgres":
    from reflexkit.memory._postgres import PostgresMemory
    store = PostgresMemory(target, spool=target.rsplit("/", 1)[-1] + ".spool")
else:
    from reflexkit.memory import JsonlMemory
    store = JsonlMemory(target)
records = [make_reflection(base + i, name, datetime.now(UTC)) for i in range(count + 1)]
store.append(records.pop())  # connect (and open files) before the clock starts
start = time.time()
for r in records:
    store.append(r)
print(start, time.time())
"""


def _median_seconds(fn: Callable[[], None], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _fill(store_pg: PostgresMemory, jsonl: Path, n: int) -> None:
    rnd = random.Random(n)  # noqa: S311 -- benchmark data
    step = SPAN / n
    records = [make_reflection(i, layout_subtask(i, n, rnd), START + step * i) for i in range(n)]
    store_pg.add_many(iter(records))
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    jsonl.write_bytes(b"".join(encode_line(r) for r in records))


def _processes(kind: str, target: str, work: Path) -> float:
    """Return appends per second of PG_PROCS processes appending PG_PER_PROC each at once."""
    here = str(Path(__file__).resolve().parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, here, kind, target, f"{kind}{p}", str(PG_PER_PROC)],
            cwd=work,
            stdout=subprocess.PIPE,
            text=True,
        )
        for p in range(PG_PROCS)
    ]
    spans = [tuple(map(float, proc.communicate()[0].split())) for proc in procs]
    if any(proc.returncode for proc in procs):
        msg = f"an appending process failed ({kind})"
        raise RuntimeError(msg)
    # From the first process's first timed append to the last one's last: process start-up
    # and imports are not appends.
    return PG_PROCS * PG_PER_PROC / (max(e for _, e in spans) - min(b for b, _ in spans))


def _compare_at(
    n: int, dsn: str, work: Path, rounds: int
) -> tuple[list[tuple[str, str, str]], float]:
    """Fill both backends with *n* records; time append and recent; return rows, worst recent."""
    from reflexkit.memory import PostgresMemory  # noqa: PLC0415 -- optional extra

    rows: list[tuple[str, str, str]] = []
    worst = 0.0
    with PostgresMemory(dsn, spool=work / f"spool{n}") as pg:
        jsonl_path = work / f"jsonl{n}" / "reflections.jsonl"
        start = time.perf_counter()
        _fill(pg, jsonl_path, n)
        jl = JsonlMemory(jsonl_path)
        jl.recent(LAYOUTS["at the end"], limit=LIMIT)
        print(f"filled both stores with {n:,} records in {time.perf_counter() - start:.1f} s")
        counter = iter(range(10**9))
        now = datetime.now(UTC)

        def appending(store: PostgresMemory | JsonlMemory) -> float:
            def one() -> None:
                store.append(make_reflection(20_000_000 + next(counter), "bench-append", now))

            return _median_seconds(one, PG_APPENDS)

        pg_app, jl_app = interleave(rounds, lambda: appending(pg), lambda: appending(jl))
        rows.append((f"append at {n:,} records", *_medians(pg_app, jl_app)))
        for layout in ("at the end", "fewer than limit"):
            sub = LAYOUTS[layout]

            def reading(store: PostgresMemory | JsonlMemory, sub: str = sub) -> float:
                return _median_seconds(lambda: store.recent(sub, limit=LIMIT), PG_CALLS)

            pg_rec, jl_rec = interleave(rounds, lambda: reading(pg), lambda: reading(jl))
            worst = max(worst, statistics.median(pg_rec))
            rows.append((f"recent(3) at {n:,} records, {layout}", *_medians(pg_rec, jl_rec)))
    return rows, worst


def _medians(a: list[float], b: list[float]) -> tuple[str, str]:
    return fmt(statistics.median(a), "us"), fmt(statistics.median(b), "us")


def run_postgres(work: Path, *, quick: bool) -> int:
    """Time the postgres backend and the JSONL store side by side; print the table."""
    from reflexkit.memory import PostgresMemory  # noqa: PLC0415 -- optional extra
    from reflexkit.testing.postgres_server import PostgresServer  # noqa: PLC0415

    small, big = 1_000, (10_000 if quick else 100_000)
    rounds = 3 if quick else 5
    rows: list[tuple[str, str, str]] = []
    worst: dict[int, float] = {}
    with PostgresServer() as server:
        print(f"PostgreSQL from {server.bin_dir}, fsync=off (like the page cache)")
        for n in (small, big):
            more, worst[n] = _compare_at(n, server.create_database(f"bench{n}"), work, rounds)
            rows += more
        dsn = server.create_database("bench_procs")
        with PostgresMemory(dsn, spool=work / "spool-procs") as pg:
            pg.stats()  # create the schema first
        pg_rate = _processes("postgres", dsn, work)
        jl_rate = _processes("jsonl", str(work / "procs" / "reflections.jsonl"), work)
        rows.append(
            (f"appends/s from {PG_PROCS} processes", f"{pg_rate:,.0f}/s", f"{jl_rate:,.0f}/s")
        )
    growth = worst[big] / worst[small]
    print()
    print(f"{'figure':44}  {'postgres':>12}  {'jsonl':>12}")
    print(f"{'-' * 44}  {'-' * 12}  {'-' * 12}")
    for name, a, b in rows:
        print(f"{name:44}  {a:>12}  {b:>12}")
    verdict = "PASS" if growth <= MAX_RECENT_GROWTH else "FAIL"
    print(f"\npostgres recent(3) at {big:,} vs {small:,} records: {growth:.2f}x  {verdict}")
    return 0 if verdict == "PASS" else 1


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; exit 1 when a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=None, help="big store size (1,000,000)")
    parser.add_argument("--quick", action="store_true", help="20,000 records, fewer rounds")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2,000 records, one round each: checks that every figure runs (for the tests)",
    )
    parser.add_argument("--dir", type=Path, default=None, help="where to put the temp folder")
    parser.add_argument(
        "--backend",
        choices=["jsonl", "postgres"],
        default="jsonl",
        help="postgres: the PostgreSQL backend beside the JSONL store (needs a server binary)",
    )
    parser.add_argument(
        "--only",
        choices=["append", "prune"],
        default=None,
        help="append: time only the append figures (no stores built); prune: build the "
        "stores and time only the prune figures (about a minute at 1M)",
    )
    parser.add_argument(
        "--prune-rounds", type=int, default=None, help="rounds of the prune figure (3)"
    )
    args = parser.parse_args(argv)
    if args.backend == "postgres":
        with tempfile.TemporaryDirectory(prefix="reflexkit-bench-", dir=args.dir) as tmp:
            return run_postgres(Path(tmp), quick=args.quick)
    n = args.records or (2_000 if args.smoke else 20_000 if args.quick else 1_000_000)
    if args.smoke:
        rounds = Rounds(1, 200, 1, 10, 1, 10, 1, 1)
    elif args.quick:
        rounds = Rounds(5, 2_000, 7, 100, 3, 100, 3, 2)
    else:
        rounds = Rounds(9, 20_000, 9, 400, 9, 300, 9, 3)
    if args.prune_rounds:
        rounds.prune = args.prune_rounds
    with tempfile.TemporaryDirectory(prefix="reflexkit-bench-", dir=args.dir) as tmp:
        figures = run(n, rounds, Path(tmp), args.only)
    print()
    print_table(figures)
    if args.smoke:
        print("\n--smoke: every figure ran; at this size the targets mean nothing")
        return 0
    return 0 if all(f.passed for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
