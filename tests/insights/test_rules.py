"""The rule tier over real run-log files: pausing, resuming, findings and the nudge."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import orjson

from reflexkit.insights import FindingLog, PausedSubtasks, Rule, Severity
from reflexkit.models import FailureContext, FailureType
from reflexkit.tasks._task import Subtask, Task
from reflexkit.testing.run_history import HistoryWriter

from .conftest import NOW, make_rules

TASK = Task(
    id="shop",
    description="The shop.",
    subtasks=(
        Subtask(id="cart", description="Fix the cart total."),
        Subtask(id="tax", description="Add the tax line."),
    ),
)


def _failed_runs(writer: HistoryWriter, times: int, *, outcome: str = "stuck") -> None:
    for _ in range(times):
        with writer.run("shop") as run:
            run.fail("cart", fingerprint="fp1")
            run.end("cart", outcome)
            run.passed("tax")


def test_a_subtask_failed_in_its_last_n_runs_is_paused(writer: HistoryWriter, state: Path) -> None:
    """Stuck or exhausted three runs in a row: paused, with a finding that says so."""
    with writer.run("shop") as run:
        run.fail("cart")
        run.end("cart", "exhausted")
    _failed_runs(writer, 2)
    check = make_rules(state).at_run_start(TASK)
    assert set(check.paused) == {"cart"}
    (finding,) = [f for f in check.findings if f.rule is Rule.CONSECUTIVE_FAILURES]
    assert finding.severity is Severity.ACTION_TAKEN
    assert finding.action_taken == "paused"
    assert "reflexkit resume cart" in finding.detail
    assert PausedSubtasks(state / "paused.jsonl").paused()[0].subtask_id == "cart"
    # A new process sees the pause without re-deriving it.
    assert set(make_rules(state).at_run_start(TASK).paused) == {"cart"}


def test_a_pass_breaks_the_streak(writer: HistoryWriter, state: Path) -> None:
    """Two failed runs, a passing one, two failed runs: not paused."""
    _failed_runs(writer, 2)
    with writer.run("shop") as run:
        run.passed("cart")
    _failed_runs(writer, 2)
    assert make_rules(state).at_run_start(TASK).paused == {}


def test_fewer_failed_runs_than_the_limit_pause_nothing(writer: HistoryWriter, state: Path) -> None:
    """The limit is the limit: two failed runs are not three."""
    _failed_runs(writer, 2)
    assert make_rules(state).at_run_start(TASK).paused == {}
    assert set(make_rules(state, consecutive_failure_limit=2).at_run_start(TASK).paused) == {"cart"}


def test_resume_is_not_undone_by_the_old_history(writer: HistoryWriter, state: Path) -> None:
    """After `resume`, the failed runs before it no longer count."""
    _failed_runs(writer, 3)
    rules = make_rules(state)
    assert "cart" in rules.at_run_start(TASK).paused
    PausedSubtasks(state / "paused.jsonl", clock=lambda: NOW).resume("cart", reason="test")
    assert rules.at_run_start(TASK).paused == {}


# --- pause and resume by position in the history, never by stamps (#29) --------------------------


def test_runs_stamped_ahead_are_not_paused_again_at_once_after_a_resume(state: Path) -> None:
    """Run logs stamped a year ahead of the resume's clock: the old runs still don't count."""
    ahead = HistoryWriter(state / "runs", start=NOW + timedelta(days=365))
    _failed_runs(ahead, 3)
    rules = make_rules(state)
    assert "cart" in rules.at_run_start(TASK).paused
    PausedSubtasks(state / "paused.jsonl", clock=lambda: NOW).resume("cart", reason="test")
    assert rules.at_run_start(TASK).paused == {}
    _failed_runs(ahead, 2)
    assert make_rules(state).at_run_start(TASK).paused == {}  # 2 new failed runs: not yet
    _failed_runs(ahead, 1)
    assert "cart" in make_rules(state).at_run_start(TASK).paused


def test_runs_of_one_logical_instant_are_paused_again_after_a_resume(state: Path) -> None:
    """Deterministic runs all stamp 2000-01-01: after a resume, 3 new failed runs pause again."""
    logical = HistoryWriter(
        state / "runs", start=datetime(2000, 1, 1, tzinfo=UTC), step=timedelta(0)
    )
    _failed_runs(logical, 3)
    assert "cart" in make_rules(state).at_run_start(TASK).paused
    PausedSubtasks(state / "paused.jsonl", clock=lambda: NOW).resume("cart", reason="test")
    assert make_rules(state).at_run_start(TASK).paused == {}
    for _ in range(3):
        time.sleep(0.02)  # one file-system tick apart, as real runs are
        _failed_runs(logical, 1)
    assert "cart" in make_rules(state).at_run_start(TASK).paused


def test_a_changed_description_unpauses(writer: HistoryWriter, state: Path) -> None:
    """The description the subtask was paused with is hashed; a new one resumes it."""
    _failed_runs(writer, 3)
    rules = make_rules(state)
    assert "cart" in rules.at_run_start(TASK).paused
    same = Task(
        id="shop",
        description="The shop.",
        subtasks=(Subtask(id="cart", description="  Fix the   cart total.\n"),),
    )
    assert "cart" in rules.at_run_start(same).paused  # whitespace is not a change
    changed = Task(
        id="shop",
        description="The shop.",
        subtasks=(Subtask(id="cart", description="Fix the cart total; keep the coupon rules."),),
    )
    assert rules.at_run_start(changed).paused == {}
    (entry,) = PausedSubtasks(state / "paused.jsonl").entries().values()
    assert not entry.paused
    assert entry.reason == "its description changed"


def test_the_pause_is_per_task(writer: HistoryWriter, state: Path) -> None:
    """Subtask ids are unique within a task only: another task's cart is not paused."""
    _failed_runs(writer, 3)
    other = Task(id="admin", description="", subtasks=(Subtask(id="cart", description="x"),))
    assert make_rules(state).at_run_start(other).paused == {}


def test_timeouts_in_a_row_are_a_finding(writer: HistoryWriter, state: Path) -> None:
    """Three timed-out attempts in a row: raise attemptTimeoutS or split the subtask."""
    with writer.run("shop") as run:
        run.timeout("cart")
        run.timeout("cart")
    rules = make_rules(state)
    assert not [f for f in rules.at_run_start(TASK).findings if f.rule is Rule.TIMEOUT_PATTERN]
    failure = FailureContext(
        task_id="shop",
        subtask_id="cart",
        attempt_number=1,
        session_id="r-now",
        failure_type=FailureType.TIMEOUT,
        error_output="the subagent timed out after 900 s",
    )
    check = rules.after_failure(failure, fingerprint="fp-timeout")
    (finding,) = [f for f in check.findings if f.rule is Rule.TIMEOUT_PATTERN]
    assert "attemptTimeoutS" in finding.detail
    assert "split the subtask" in finding.detail


def test_a_pass_between_timeouts_resets_the_count(writer: HistoryWriter, state: Path) -> None:
    """Timed out, passed, timed out twice: not three in a row."""
    with writer.run("shop") as run:
        run.timeout("cart")
        run.passed("cart")
    with writer.run("shop") as run:
        run.timeout("cart")
        run.timeout("cart")
    findings = make_rules(state).at_run_start(TASK).findings
    assert not [f for f in findings if f.rule is Rule.TIMEOUT_PATTERN]


def _failure(attempt: int, files: tuple[str, ...] = ()) -> FailureContext:
    return FailureContext(
        task_id="shop",
        subtask_id="cart",
        attempt_number=attempt,
        session_id="run-1",
        failure_type=FailureType.TEST_FAILURE,
        command="python -m pytest -q",
        error_output="FAILED tests/test_cart.py::test_total - assert 90 == 100",
        files_modified=files,
        created_at=NOW,
    )


def test_no_change_and_the_same_failure_gets_a_nudge(writer: HistoryWriter, state: Path) -> None:
    """An attempt that changed nothing and failed as before: a finding and a prompt nudge."""
    with writer.run("shop", run_id="run-1") as run:
        run.fail("cart", fingerprint="fp1", files=("src/cart.py",))
        rules = make_rules(state)
        check = rules.after_failure(_failure(2), fingerprint="fp1", files_changed=())
    (finding,) = check.findings
    assert finding.rule is Rule.NO_CHANGE_REPEAT
    assert "changed no files" in check.nudge
    assert "fp1" in check.nudge


def test_no_nudge_when_files_changed_or_the_failure_differs(
    writer: HistoryWriter, state: Path
) -> None:
    """Changing files, or failing differently, is progress of a kind: no nudge."""
    with writer.run("shop", run_id="run-1") as run:
        run.fail("cart", fingerprint="fp1")
    rules = make_rules(state)
    assert rules.after_failure(_failure(2), fingerprint="fp1", files_changed=["x.py"]).nudge == ""
    assert rules.after_failure(_failure(2), fingerprint="fp2", files_changed=[]).nudge == ""
    # The attempt being checked is not compared with itself, even once it is in the log.
    assert rules.after_failure(_failure(1), fingerprint="fp1", files_changed=[]).nudge == ""


def test_a_file_in_many_failed_attempts_is_a_finding(writer: HistoryWriter, state: Path) -> None:
    """src/cart.py modified in three failed attempts across subtasks: look at it first."""
    with writer.run("shop") as run:
        run.fail("cart", files=("src/cart.py", "src/a.py"))
        run.fail("tax", files=("src/cart.py",))
    rules = make_rules(state)
    check = rules.after_failure(_failure(1, ("src/cart.py",)), fingerprint="fpx")
    (finding,) = [f for f in check.findings if f.rule is Rule.FILE_FAILURE_CORRELATION]
    assert finding.subject_id == "src/cart.py"
    assert "cart, tax" in finding.detail


def test_old_failures_fall_out_of_the_lookback(state: Path) -> None:
    """Failed attempts older than lookbackHours are not held against a file."""
    old = HistoryWriter(state / "runs", start=NOW.replace(day=20))
    with old.run("shop") as run:
        for _ in range(3):
            run.fail("cart", files=("src/cart.py",))
    findings = make_rules(state, lookback_hours=24).at_run_start(TASK).findings
    assert not [f for f in findings if f.rule is Rule.FILE_FAILURE_CORRELATION]
    findings = make_rules(state, lookback_hours=24 * 7).at_run_start(TASK).findings
    assert [f for f in findings if f.rule is Rule.FILE_FAILURE_CORRELATION]


def test_short_agent_output_is_stale(writer: HistoryWriter, state: Path) -> None:
    """Agent output under minResultLength three attempts running: a stale finding."""
    with writer.run("shop") as run:
        for _ in range(3):
            run.fail("cart", outputChars=4)
        for chars in (4, 4, 400):
            run.fail("tax", outputChars=chars)
    findings = make_rules(state, min_result_length=20).at_run_start(TASK).findings
    assert [f.subject_id for f in findings if f.rule is Rule.STALE_OUTPUT] == ["cart"]


def test_findings_are_logged_once(writer: HistoryWriter, state: Path) -> None:
    """Every run start sees the same history; insights.jsonl gets each finding once."""
    with writer.run("shop") as run:
        for _ in range(3):
            run.timeout("cart", files=None)
    make_rules(state).at_run_start(TASK)
    make_rules(state).at_run_start(TASK)
    lines = (state / "insights.jsonl").read_bytes().splitlines()
    assert len(lines) == 1
    record = orjson.loads(lines[0])
    assert set(record) >= {
        "rule",
        "severity",
        "subjectType",
        "subjectId",
        "detail",
        "actionTaken",
    }
    assert record["rule"] == "timeout_pattern"


def test_disabled_rules_find_nothing(writer: HistoryWriter, state: Path) -> None:
    """insights.enabled false: no pause, no finding, no file written."""
    _failed_runs(writer, 3)
    rules = make_rules(state, enabled=False)
    assert rules.at_run_start(TASK).paused == {}
    assert rules.after_failure(_failure(1), fingerprint="x").findings == ()
    assert not (state / "insights.jsonl").exists()


def test_broken_state_never_breaks_the_run(writer: HistoryWriter, state: Path) -> None:
    """A paused file that can't be read (a folder in its place) means: nothing paused."""
    _failed_runs(writer, 3)
    (state / "paused.jsonl").mkdir(parents=True)
    check = make_rules(state).at_run_start(TASK)
    assert check.paused == {}
    assert check.findings == ()


def test_torn_and_foreign_lines_in_state_files_are_skipped(state: Path) -> None:
    """A torn line in paused.jsonl or insights.jsonl costs only that line."""
    paused = PausedSubtasks(state / "paused.jsonl", clock=lambda: NOW)
    paused.pause("shop", "cart", description="d", reason="r")
    with (state / "paused.jsonl").open("ab") as handle:
        handle.write(b'{"taskId": "shop", "subt')
    paused.pause("shop", "tax", description="d", reason="r")
    assert {e.subtask_id for e in paused.paused()} == {"cart", "tax"}
    log = FindingLog(state / "insights.jsonl")
    (state / "insights.jsonl").write_bytes(b"{broken\n")
    assert log.read() == []
    assert log.skipped == 1


def test_parallel_subtasks_can_ask_at_once(writer: HistoryWriter, state: Path) -> None:
    """Threads asking while the log grows (a smoke test; reads are serialised by a lock).

    Each asker sees every attempt once, in order, and the answers never raise.
    """
    rules = make_rules(state)
    problems: list[str] = []

    def ask(subtask: str) -> None:
        for attempt in range(1, 40):
            failure = attrs.evolve(_failure(attempt), subtask_id=subtask)
            rules.after_failure(failure, fingerprint="fp1", files_changed=["src/shared.py"])
            runs = rules.reader.history().of("shop", "cart")
            numbers = [a.attempt for a in runs[0].attempts] if runs else []
            if numbers != list(range(1, len(numbers) + 1)):
                problems.append(f"{subtask}: {numbers}")
                return

    threads = [threading.Thread(target=ask, args=(f"s{n}",)) for n in range(4)]
    with writer.run("shop", run_id="run-1") as run:
        for thread in threads:
            thread.start()
        for _ in range(30):
            run.fail("cart", files=("src/shared.py",))
        for thread in threads:
            thread.join()
    assert problems == []
    assert len(rules.reader.history().of("shop", "cart")[0].attempts) == 30
