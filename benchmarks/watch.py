"""Measure what ``reflexkit insights --watch`` costs while idle, and how soon it reacts.

Two waiters on a run-log folder, each in a child process, measured in the same run: the
inotify one the watch uses on Linux, and the fallback that sleeps in ``poll`` with a backoff
(50 ms to 2 s) between looks at the folder. For each it prints:

* the context switches of the idle child over ``--idle`` seconds (inotify: 0; it never wakes);
* the median delay from appending a line to a run log to the child waking, over ``--rounds``
  appends spaced ``--gap`` seconds apart (the fallback's grows with its backoff).

Usage::

    python benchmarks/watch.py [--idle S] [--rounds N] [--gap S]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys, time
from pathlib import Path
from reflexkit.insights import FolderWaker, StopSignals
folder, inotify = Path(sys.argv[1]), sys.argv[2] == "inotify"
with StopSignals() as stop:
    waker = FolderWaker(folder, stop, inotify=inotify)
    print("ready", flush=True)
    while waker.wait():
        print(time.time(), flush=True)
"""


def switches(pid: int) -> int:
    """The context switches of every thread of *pid* so far."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def measure(kind: str, folder: Path, *, idle: float, rounds: int, gap: float) -> tuple[int, float]:
    """Idle context switches and the median wake-up delay (ms) of one waiter."""
    log = folder / f"{kind}.jsonl"
    folder.mkdir(parents=True)
    log.touch()  # a run log already open for appends: one event per line
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), kind], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    before = switches(child.pid)
    time.sleep(idle)
    idle_switches = switches(child.pid) - before
    delays = []
    for n in range(rounds):
        time.sleep(gap)
        written = time.time()
        with log.open("a") as out:
            out.write(f'{{"kind": "attempt_started", "attempt": {n}}}\n')
        woke = float(child.stdout.readline())
        delays.append((woke - written) * 1000)
    child.terminate()
    child.wait(timeout=30)
    child.stdout.close()
    return idle_switches, statistics.median(delays)


def main() -> int:
    """Print the figures of both waiters."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--gap", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            kind: measure(kind, Path(tmp) / kind, idle=args.idle, rounds=args.rounds, gap=args.gap)
            for kind in ("inotify", "polling")
        }
    for kind, (idle_switches, delay) in results.items():
        print(
            f"{kind:8} idle context switches in {args.idle:.0f} s: {idle_switches:4d}   "
            f"median wake-up after an append: {delay:7.1f} ms"
        )
    ratio = (results["polling"][0] + 1) / (results["inotify"][0] + 1)
    print(f"idle wake-ups, polling fallback / inotify: {ratio:.0f}x")
    return 0 if results["inotify"][0] <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
