"""Measure the own-folder guard: what noting and checking ``.reflexkit`` costs per attempt.

Before each attempt the loop notes ``.reflexkit`` (:func:`capture`) and after it compares and
repairs (:func:`settle`). Both walk the folder, so the cost grows with what it holds: run
logs and attempt reports pile up over a project's life. This builds folders of a few sizes
(a memory file of 2,000 records, lessons, N old run logs and N reports) and prints, per
size, the time of one capture + settle beside a baseline measured in the same run: a bare
``os.walk`` with an ``lstat`` per entry, the least any such check must do.

Usage::

    python benchmarks/own_state.py [--sizes 10,1000,10000] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from reflexkit.orchestrator._own_state import capture, settle


def build(root: Path, files: int) -> None:
    """A project's .reflexkit with *files* run logs and as many reports."""
    own = root / ".reflexkit"
    (own / "memory").mkdir(parents=True)
    (own / "runs").mkdir()
    line = b'{"id": "x", "analysis": "' + b"a" * 600 + b'"}\n'
    (own / "memory" / "reflections.jsonl").write_bytes(line * 2000)
    (own / "lessons.jsonl").write_bytes(line * 50)
    (own / "project.json").write_text("{}")
    for n in range(files):
        (own / "runs" / f"run-{n}.jsonl").write_bytes(line * 3)
        folder = own / "reports" / f"run-{n // 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"s-{n % 10}.json").write_text("{}")


def bare_walk(top: Path) -> int:
    """The baseline: every entry's lstat, nothing kept."""
    count = 0
    for folder, dirs, names in os.walk(top):
        for name in (*dirs, *names):
            os.lstat(os.path.join(folder, name))  # noqa: PTH118 -- the baseline is os.walk
            count += 1
    return count


def best_of(rounds: int, work: object) -> float:
    """The median seconds of *rounds* calls of *work*."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print the guard's cost per attempt beside the bare walk, per folder size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(f"{'run logs + reports':>20} {'entries':>8} {'guard ms':>9} {'walk ms':>8} {'ratio':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            build(root, size)
            entries = bare_walk(root / ".reflexkit")

            def guard(root: Path = root) -> None:
                settle(root, capture(root), revert=True)

            guarded = best_of(args.rounds, guard)
            walked = best_of(args.rounds, lambda root=root: bare_walk(root / ".reflexkit"))
            print(
                f"{size:>20} {entries:>8} {guarded * 1000:>9.2f} {walked * 1000:>8.2f} "
                f"{guarded / walked:>6.2f}"
            )


if __name__ == "__main__":
    main()
