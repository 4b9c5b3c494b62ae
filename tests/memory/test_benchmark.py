"""The memory benchmark runs: every figure, on a tiny store (``--smoke``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "memory.py"


@pytest.mark.slow
def test_the_memory_benchmark_runs_every_figure(tmp_path: Path) -> None:
    """``benchmarks/memory.py --smoke`` builds its stores, times every figure and prints them."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--smoke", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for figure in (
        "append x8 processes, page cache",
        "append x8 processes, durability=fsync",
        "warm recent(3) vs offsets in memory + preads",
        "first recent(3) in a new process",
        "prune 2,000 to the newer half",
        "first recent after the prune: no rebuild",
    ):
        assert figure in done.stdout
    assert "full index rebuilds: 0" in done.stdout
    assert list(tmp_path.iterdir()) == []  # it cleans up after itself


@pytest.mark.slow
def test_the_memory_benchmark_times_only_prune_when_asked(tmp_path: Path) -> None:
    """``--only prune`` times the two prune figures and nothing else."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--smoke", "--only", "prune", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "prune 2,000 to the newer half" in done.stdout
    assert "first recent after the prune: no rebuild" in done.stdout
    assert "append x8 processes" not in done.stdout
    assert "full index rebuilds: 0" in done.stdout
