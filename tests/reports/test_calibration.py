"""Calibration: AUC with n and a bootstrap interval, from reports, and `reflexkit calibrate`."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reflexkit.reports._calibration import Outcome, auc, bootstrap_interval, calibrate
from reflexkit.reports._report import (
    GitChanges,
    JudgeSummary,
    ReportIds,
    ReportSettings,
    Verification,
    build_report,
    write_report,
)

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


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
        settings=ReportSettings(clock=lambda: datetime(2026, 1, 1, 12, minute, tzinfo=UTC)),
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
    done = invoke_cli(tmp_path, "calibrate", "--json", "--rounds", "200")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["n"] == 5
    assert data["auc"] == pytest.approx(
        brute_auc([0.3, 0.9, 0.8, 0.6, 0.7], [False, True, True, False, True])
    )
    assert data["low"] <= data["auc"] <= data["high"]
    text = invoke_cli(tmp_path, "calibrate", "--outcome", "final")
    assert text.returncode == 0
    assert b"AUC: not defined" in text.stdout


# --- a labelled corpus, the high-confidence subset and the kill condition (P1, #28) ------------


def corpus(path: Path, rows: list[tuple[float, bool]], *extra: str) -> Path:
    """Write a `{confidence, correct}` JSONL corpus (and any raw *extra* lines) to *path*."""
    lines = [
        json.dumps({"confidence": c, "correct": y, "task": f"t{i}"})
        for i, (c, y) in enumerate(rows)
    ]
    path.write_text("\n".join([*lines, *extra]) + "\n")
    return path


def calibrate_cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> tuple[int, str, str]:
    """`reflexkit calibrate ARGS` (in-process: a claim of output and exit code); code, out, err."""
    done = invoke_cli(cwd or Path.cwd(), "calibrate", *args, stdin=stdin)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def separated(n: int) -> list[tuple[float, bool]]:
    """High confidence that tells right from wrong: correct ones rated above wrong ones."""
    rng = random.Random(3)  # noqa: S311 -- test data
    rows = []
    for _ in range(n):
        correct = rng.random() < 0.6
        high = rng.random() < 0.7
        if high:
            rows.append(
                (round(rng.uniform(0.9, 1.0) if correct else rng.uniform(0.8, 0.88), 3), correct)
            )
        else:
            rows.append((round(rng.uniform(0.1, 0.79), 3), correct))
    return rows


def chance(n: int) -> list[tuple[float, bool]]:
    """Confidence that says nothing: high for right and wrong alike."""
    rng = random.Random(5)  # noqa: S311 -- test data
    return [(round(rng.uniform(0.0, 1.0), 3), rng.random() < 0.5) for _ in range(n)]


@pytest.mark.slow
def test_a_labelled_corpus_is_calibrated_with_its_high_subset(tmp_path: Path) -> None:
    """--labels FILE: n, AUC, the high-confidence subset's AUC and lift, as JSON."""
    rows = separated(400)
    code, out, err = calibrate_cli("--labels", str(corpus(tmp_path / "c.jsonl", rows)), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n"] == 400
    assert data["auc"] == pytest.approx(brute_auc(*map(list, zip(*rows, strict=True))))  # type: ignore[arg-type]
    high = [(c, y) for c, y in rows if c >= 0.8]
    subset = data["highSubset"]
    assert subset["n"] == len(high)
    assert subset["auc"] == pytest.approx(brute_auc([c for c, _ in high], [y for _, y in high]))
    assert subset["auc"] > 0.9
    assert data["highThreshold"] == 0.8
    assert data["lift"] == pytest.approx(
        (sum(y for _, y in high) / len(high)) / (sum(y for _, y in rows) / len(rows))
    )
    assert data["killCondition"]["met"] is False


@pytest.mark.slow
def test_the_kill_condition_is_printed_and_met_at_chance(tmp_path: Path) -> None:
    """Confidence at chance on the high subset: the pre-registered kill condition says MET."""
    path = corpus(tmp_path / "c.jsonl", chance(600))
    code, out, err = calibrate_cli("--labels", str(path))
    assert code == 0, err
    assert "kill condition (pre-registered)" in out
    assert "AUC near chance" in out
    assert "MET" in out
    code, out, _ = calibrate_cli("--labels", str(path), "--json")
    kill = json.loads(out)["killCondition"]
    assert kill["met"] is True
    assert "near chance" in kill["verdict"]


def test_the_kill_condition_is_undecided_without_both_classes(tmp_path: Path) -> None:
    """All high-confidence rows correct: no AUC there, and the verdict says it can't decide."""
    path = corpus(tmp_path / "c.jsonl", [(0.9, True), (0.95, True), (0.2, False), (0.3, True)])
    code, out, _ = calibrate_cli("--labels", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["highSubset"]["auc"] is None
    assert data["killCondition"]["met"] is None
    assert "undecided" in data["killCondition"]["verdict"]
    few = corpus(tmp_path / "few.jsonl", [(0.9, True), (0.85, False), (0.3, False)] * 4)
    kill = json.loads(calibrate_cli("--labels", str(few), "--json")[1])["killCondition"]
    assert kill["met"] is None  # 4 good and 4 bad are too few to call it either way
    assert "at least 5 good and 5 bad" in kill["verdict"]


def test_bad_lines_are_skipped_and_named(tmp_path: Path) -> None:
    """Invalid lines are skipped and reported with their line number; valid ones all count."""
    path = corpus(
        tmp_path / "c.jsonl",
        [(0.9, True), (0.2, False)],
        '{"confidence": 1.5, "correct": true}',
        '{"confidence": 0.5, "correct": "yes"}',
        '{"confidence": true, "correct": true}',
        '{"correct": false}',
        "not json",
        "",
        "[1, 2]",
    )
    code, out, err = calibrate_cli("--labels", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["n"], data["skippedInvalid"]) == (2, 6)
    problems = "\n".join(data["problems"])
    assert "line 3: $.confidence: expected a number from 0 to 1, got 1.5" in problems
    assert 'line 4: $.correct: expected true or false, got "yes"' in problems
    assert "line 5: $.confidence" in problems
    assert "line 6: $.confidence: required" in problems
    assert "line 7: invalid JSON" in problems
    assert "line 9: expected an object" in problems
    code, out, err = calibrate_cli("--labels", str(path))
    assert "skipped 6 invalid lines" in out
    assert "line 3" in err


def test_labels_from_stdin_and_a_file_of_nothing_valid(tmp_path: Path) -> None:
    """`--labels -` reads stdin; a file with no valid line at all is bad input (exit 2)."""
    text = "\n".join(json.dumps({"confidence": c, "correct": y}) for c, y in chance(50))
    code, out, err = calibrate_cli("--labels", "-", "--json", stdin=text)
    assert code == 0, err
    assert json.loads(out)["n"] == 50
    code, _, err = calibrate_cli("--labels", str(corpus(tmp_path / "bad.jsonl", [], "nope")))
    assert code == 2
    assert "no valid line" in err
    code, _, err = calibrate_cli("--labels", str(tmp_path / "missing.jsonl"))
    assert code == 2
    assert "Traceback" not in err


def test_reports_get_the_high_subset_and_kill_condition_too(tmp_path: Path) -> None:
    """The reports path prints the same subset and pre-registered condition."""
    for r in REPORTS:
        write_report(r, tmp_path / ".reflexkit" / "reports")
    code, out, err = calibrate_cli("--rounds", "100", cwd=tmp_path)
    assert code == 0, err
    assert "high-confidence subset (confidence >= 0.8)" in out
    assert "kill condition (pre-registered)" in out


def test_labels_and_reports_together_are_bad_input(tmp_path: Path) -> None:
    """One source at a time: both is exit 2, not a silent choice."""
    path = corpus(tmp_path / "c.jsonl", chance(10))
    code, _, err = calibrate_cli("--labels", str(path), "--reports", str(tmp_path))
    assert code == 2
    assert "can't go together" in err


def test_a_json_array_corpus_is_read_too(tmp_path: Path) -> None:
    """A corpus written as one JSON array counts like JSON Lines; bad items are named."""
    rows = [{"confidence": c, "correct": y} for c, y in chance(30)]
    path = tmp_path / "c.json"
    path.write_text(json.dumps([*rows, {"confidence": 2, "correct": True}], indent=2))
    code, out, err = calibrate_cli("--labels", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["n"], data["skippedInvalid"]) == (30, 1)
    assert "item 30: $.confidence: expected a number from 0 to 1, got 2" in data["problems"][0]
