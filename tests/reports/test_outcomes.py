"""The P3 harness, `reflexkit outcomes`: finished tasks with a detectable outcome (#28)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.reports._report import (
    GitChanges,
    JudgeSummary,
    ReportIds,
    ReportSettings,
    Verification,
    build_report,
    write_report,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def report(  # noqa: PLR0913 -- the fields an outcome reads
    run: str,
    subtask: str,
    attempt: int,
    *,
    passed: bool | None,
    days: float = 0,
    judge: bool | None = None,
) -> dict[str, Any]:
    """A real report of *subtask* in *run*, *days* after T0."""
    verdict = (
        None if judge is None else JudgeSummary(complete=judge, severity="NONE", source="heuristic")
    )
    return build_report(
        ReportIds(run_id=run, subtask_id=subtask, attempt=attempt, task_id="shop"),
        changes=GitChanges(),
        self_report=None,
        verification=Verification(passed=passed, judge=verdict),
        settings=ReportSettings(clock=lambda: T0 + timedelta(days=days, minutes=attempt)),
    )


REPORTS = [
    report("r1", "a", 1, passed=False),
    report("r1", "a", 2, passed=True),  # finished, checked
    report("r1", "b", 1, passed=None),  # finished, nothing checked, redone in r2 below
    report("r1", "c", 1, passed=None),  # finished, nothing ever says
    report("r1", "d", 1, passed=False),  # not finished: its checks failed
    report("r1", "e", 1, passed=None, judge=True),  # finished, the judge said complete
    report("r2", "b", 1, passed=None, days=3),  # the rework of r1/b; itself unknown
    report("r3", "c", 1, passed=True, days=40),  # redoes r1/c, but after the 30 days
]


def outcomes(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`reflexkit outcomes ARGS` in the current folder; exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, ["outcomes", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_finished_subtasks_from_reports(project_dir: Path) -> None:
    """Checks, a judge's verdict and a later run's rework make an outcome detectable."""
    for r in REPORTS:
        write_report(r, project_dir / ".reflexkit" / "reports")
    code, out, err = outcomes("--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["completed"], data["detectable"]) == (6, 4)
    assert data["rate"] == round(4 / 6, 4)
    assert data["bySignal"] == {"checks": 2, "judge": 1, "rework": 1}
    assert data["undetectable"] == ["r1/shop/c", "r2/shop/b"]
    assert data["killCondition"]["met"] is False
    assert data["windowDays"] == 30
    wide = json.loads(outcomes("--json", "--window-days", "60")[1])
    assert wide["undetectable"] == ["r2/shop/b"]  # r1/c was redone on day 40
    code, out, _ = outcomes()
    assert "kill condition (pre-registered): base rate under 20%" in out
    assert "not met: base rate 67%" in out


BOARD = [
    {
        "id": "T-1",
        "completedAt": "2026-01-02T10:00:00Z",
        "signals": [{"kind": "ci", "at": "2026-01-02T09:00:00Z"}],
    },
    {
        "id": "T-2",
        "completedAt": "2026-01-03T10:00:00Z",
        "signals": [{"kind": "reopened", "at": "2026-03-30T00:00:00Z"}],
    },
    {"id": "T-3", "completedAt": None, "signals": [{"kind": "ci", "at": "2026-01-02T09:00:00Z"}]},
    *(
        {"id": f"T-{n}", "completedAt": "2026-01-05T10:00:00+01:00", "signals": []}
        for n in range(4, 12)
    ),
]


def test_a_board_export_under_the_floor_meets_the_kill_condition(project_dir: Path) -> None:
    """One of ten finished tasks has a signal in 30 days: 10%, under 20%: MET."""
    path = project_dir / "board.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in BOARD) + "\n")
    code, out, err = outcomes("--board", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["completed"], data["detectable"]) == (10, 1)  # T-3 is open; T-2 came too late
    assert data["bySignal"] == {"ci": 1}
    kill = data["killCondition"]
    assert kill["met"] is True
    assert kill["verdict"] == "MET: base rate 10%"


@pytest.mark.usefixtures("project_dir")  # an empty folder with no project.json
def test_bad_board_lines_are_skipped_and_named() -> None:
    """Invalid lines are counted and named by line; a board of nothing valid is exit 2."""
    lines = [
        json.dumps(BOARD[0]),
        '{"id": "T-9", "completedAt": "yesterday"}',
        '{"id": true, "completedAt": "2026-01-02T10:00:00Z"}',
        '{"id": "T-8", "completedAt": "2026-01-02T10:00:00Z", "signals": [{"kind": "ci"}]}',
        "{oops",
    ]
    code, out, err = outcomes("--board", "-", "--json", stdin="\n".join(lines))
    assert code == 0, err
    data = json.loads(out)
    assert (data["completed"], data["skippedInvalid"]) == (1, 4)
    problems = "\n".join(data["problems"])
    assert 'line 2: $.completedAt: expected an ISO 8601 time, got "yesterday"' in problems
    assert "line 3: $.id" in problems
    assert "line 4: $.signals[0].at" in problems
    assert "line 5: invalid JSON" in problems
    code, _, err = outcomes("--board", "-", stdin="{oops\n")
    assert code == 2
    assert "no valid line" in err


@pytest.mark.usefixtures("project_dir")
def test_board_and_reports_together_are_bad_input() -> None:
    """Two sources at once is a mistake, not a choice: exit 2 and what to do."""
    code, _, err = outcomes("--board", "-", "--reports", "r", stdin="")
    assert code == 2
    assert "can't go together" in err


@pytest.mark.usefixtures("project_dir")
def test_a_board_exported_as_a_json_array() -> None:
    """Boards often export one JSON array: it is read like JSON Lines."""
    code, out, err = outcomes("--board", "-", "--json", stdin=json.dumps(BOARD, indent=1))
    assert code == 0, err
    assert (json.loads(out)["completed"], json.loads(out)["detectable"]) == (10, 1)
