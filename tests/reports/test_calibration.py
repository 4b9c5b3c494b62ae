"""Calibration: AUC with n and a bootstrap interval, from reports, and `reflexkit calibrate`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reflexkit.reports.calibration import Outcome, auc, bootstrap_interval, calibrate
from reflexkit.reports.report import (
    GitChanges,
    JudgeSummary,
    ReportIds,
    Verification,
    build_report,
    write_report,
)


def brute_auc(scores: list[float], labels: list[bool]) -> float:
    """The AUC by definition: over all good/bad pairs, wins plus half the ties."""
    good = [s for s, y in zip(scores, labels, strict=True) if y]
    bad = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def test_auc_matches_the_definition_with_ties() -> None:
    """The rank formula agrees with counting pairs, on random data full of ties."""
    rng = random.Random(7)  # noqa: S311 -- test data
    for _ in range(50):
        n = rng.randint(2, 40)
        scores = [rng.choice([0.1, 0.5, 0.5, 0.8, 0.9]) for _ in range(n)]
        labels = [rng.random() < 0.5 for _ in range(n)]
        if 0 < sum(labels) < n:
            assert auc(scores, labels) == pytest.approx(brute_auc(scores, labels))


def test_auc_extremes() -> None:
    """Perfect separation is 1, reversed is 0, all equal is 0.5, one class is None."""
    assert auc([0.9, 0.8, 0.2], [True, True, False]) == 1.0
    assert auc([0.1, 0.2, 0.9], [True, True, False]) == 0.0
    assert auc([0.5, 0.5], [True, False]) == 0.5
    assert auc([0.5, 0.7], [True, True]) is None


def test_interval_contains_the_auc_and_narrows_with_n() -> None:
    """The interval holds the estimate; ten times the data gives a narrower one."""
    rng = random.Random(1)  # noqa: S311 -- test data

    def sample(n: int) -> tuple[list[float], list[bool]]:
        labels = [rng.random() < 0.6 for _ in range(n)]
        return [min(max(rng.gauss(0.7 if y else 0.5, 0.15), 0), 1) for y in labels], labels

    small, large = sample(40), sample(400)
    low_s, high_s = bootstrap_interval(*small, rounds=500)  # type: ignore[misc]
    low_l, high_l = bootstrap_interval(*large, rounds=500)  # type: ignore[misc]
    assert low_s <= auc(*small) <= high_s  # type: ignore[operator]
    assert high_l - low_l < high_s - low_s
    assert bootstrap_interval(*small, rounds=500) == bootstrap_interval(*small, rounds=500)


def report(  # noqa: PLR0913 -- the fields a calibration reads
    run: str,
    subtask: str,
    attempt: int,
    confidence: float | None,
    *,
    passed: bool | None,
    judge_complete: bool | None = None,
    minute: int = 0,
) -> dict[str, Any]:
    """A real report with the given confidence and outcome."""
    self_report = None if confidence is None else json.dumps({"confidence": confidence}).encode()
    judge = (
        None
        if judge_complete is None
        else JudgeSummary(complete=judge_complete, severity="NONE", source="heuristic")
    )
    return build_report(
        ReportIds(run_id=run, subtask_id=subtask, attempt=attempt, task_id="t"),
        changes=GitChanges(),
        self_report=self_report,
        verification=Verification(passed=passed, judge=judge),
        clock=lambda: datetime(2026, 1, 1, 12, minute, tzinfo=UTC),
    )


REPORTS = [
    # run r1: subtask a fails then passes; subtask b passes at once but is redone in run r2
    report("r1", "a", 1, 0.3, passed=False, minute=1),
    report("r1", "a", 2, 0.9, passed=True, minute=2),
    report("r1", "b", 1, 0.8, passed=True, minute=3),
    report("r2", "b", 1, 0.6, passed=True, judge_complete=False, minute=4),
    report("r2", "b", 2, 0.7, passed=True, minute=5),
    report("r2", "c", 1, None, passed=True, minute=6),
    report("r2", "d", 1, 0.5, passed=None, minute=7),
]


def test_outcomes_from_reports() -> None:
    """Each outcome labels the same reports its own way, and skips what it can't know."""
    verification = calibrate(REPORTS, outcome=Outcome.VERIFICATION, rounds=50)
    assert (verification.n, verification.good, verification.bad) == (5, 3, 2)
    assert (verification.skipped_no_confidence, verification.skipped_unknown) == (1, 1)
    rework = calibrate(REPORTS, outcome=Outcome.REWORK, rounds=50)
    assert (rework.good, rework.bad) == (2, 3)  # r1/b was redone in r2
    final = calibrate(REPORTS, outcome=Outcome.FINAL, rounds=50)
    assert (final.good, final.bad) == (5, 0)
    assert final.auc is None


def test_calibrate_command(tmp_path: Path) -> None:
    """`reflexkit calibrate --json` reads the reports folder and prints n, AUC and interval."""
    for r in REPORTS:
        write_report(r, tmp_path / ".reflexkit" / "reports")
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "calibrate", "--json", "--rounds", "200"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["n"] == 5
    assert data["auc"] == pytest.approx(
        brute_auc([0.3, 0.9, 0.8, 0.6, 0.7], [False, True, True, False, True])
    )
    assert data["low"] <= data["auc"] <= data["high"]
    text = subprocess.run(
        [sys.executable, "-m", "reflexkit", "calibrate", "--outcome", "final"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert text.returncode == 0
    assert "AUC: not defined" in text.stdout
