"""The retry loop with real reflexkit parts: the container's service, real verification.

The subagent is scripted (it edits files in tmp_path) or a real command line; verification
runs a real unittest suite; reflections come from the heuristic generator through the
application container bound to in-process fakes.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reflexkit.events import Event, EventKind, RunLog
from reflexkit.orchestrator._loop import Orchestrator
from reflexkit.orchestrator._outcomes import RunSummary
from reflexkit.orchestrator._subagents import (
    CommandSubagent,
    ScriptedSubagent,
    Subagent,
    SubagentResult,
)
from reflexkit.orchestrator._verify import Verifier
from reflexkit.tasks._config import OrchestratorConfig
from reflexkit.tasks._task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.containers import Application, FakeServices
    from reflexkit.reflection._protocols import ReflectionService

PY = shlex.quote(sys.executable)
UNITTEST = f"{PY} -m unittest -q"

BUGGY = "def add(a, b):\n    return a - b\n"
WRONG_FIX = "def add(a, b):\n    return a + b + 1\n"
RIGHT_FIX = "def add(a, b):\n    return a + b\n"
TESTS = (
    "import unittest\n"
    "from calc import add\n\n\n"
    "class TestAdd(unittest.TestCase):\n"
    "    def test_add_positive(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A tiny project with a real bug and a real unittest suite."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_text(BUGGY, encoding="utf-8")
    (work / "test_calc.py").write_text(TESTS, encoding="utf-8")
    return work


@pytest.fixture
def service(reflexkit_app: Application) -> ReflectionService:
    """The container's reflection service (heuristic generator, memory in a list)."""
    return reflexkit_app.reflection.service()  # type: ignore[no-any-return]


@pytest.fixture
def events() -> list[Event]:
    """Every event of the run, in order."""
    return []


Run = Callable[..., RunSummary]


@pytest.fixture
def run(service: ReflectionService, workdir: Path, events: list[Event]) -> Run:
    """Run a task with a subagent and an orchestrator config; verification runs unittest."""

    def go(
        subagent: Subagent,
        *,
        subtasks: tuple[Subtask, ...] | None = None,
        clock: Callable[[], float] | None = None,
        **config: int | None,
    ) -> RunSummary:
        task = Task(
            id="fix-calc",
            description="Make calc.add add.",
            subtasks=subtasks or (Subtask(id="add", description="Fix add() in calc.py."),),
        )
        orchestrator = Orchestrator(
            service=service,
            subagent=subagent,
            verifier_for=lambda s: Verifier(s.verify or (UNITTEST,), timeout_s=20),
            config=OrchestratorConfig(**config),  # type: ignore[arg-type]
            on_event=events.append,
            **({"clock": clock} if clock else {}),
        )
        return orchestrator.run(task, workdir=workdir)

    return go


def kinds(events: list[Event]) -> list[str]:
    """The kinds of the events, as strings."""
    return [e.kind.value for e in events]


def test_pass_on_first_attempt(run: Run, workdir: Path, events: list[Event]) -> None:
    """A right first fix passes with one attempt and no reflection."""
    agent = ScriptedSubagent({"add": [{"calc.py": RIGHT_FIX}]})
    summary = run(agent)
    assert summary.passed
    outcome = summary.outcome("add")
    assert (outcome.outcome, outcome.attempts, outcome.reflections_used) == ("passed", 1, 0)
    assert kinds(events) == ["run_started", "attempt_started", "passed", "run_finished"]
    assert (workdir / "calc.py").read_text(encoding="utf-8") == RIGHT_FIX
    assert agent.prompts == [
        "# Task: fix-calc\nMake calc.add add.\n\n# Subtask: add\nFix add() in calc.py."
    ]


def test_pass_after_reflection(
    run: Run, events: list[Event], reflexkit_fakes: FakeServices
) -> None:
    """A wrong fix fails real tests; the retry prompt carries the failing test's name."""
    agent = ScriptedSubagent({"add": [{"calc.py": WRONG_FIX}, {"calc.py": RIGHT_FIX}]})
    summary = run(agent)
    assert summary.passed
    outcome = summary.outcome("add")
    assert (outcome.outcome, outcome.attempts, outcome.reflections_used) == ("passed", 2, 1)
    first, second = agent.prompts
    assert "Learning from Previous Failures" not in first
    assert second.startswith(first + "\n\n## Learning from Previous Failures")
    assert "test_add_positive" in second
    assert "6 != 5" in second  # the actual and expected values
    assert kinds(events) == [
        "run_started",
        "attempt_started",
        "verification_failed",
        "reflection_generated",
        "retry",
        "attempt_started",
        "passed",
        "run_finished",
    ]
    reflected = events[3]
    assert reflected.data["source"] == "heuristic"
    assert reflected.data["saved"] is True
    stored = reflexkit_fakes.store().recent("add", limit=10)
    assert len(stored) == 1
    assert stored[0].session_id == summary.run_id
    assert stored[0].task_id == "fix-calc"
    assert stored[0].attempt_number == 1


def test_exhaustion(run: Run, events: list[Event]) -> None:
    """Attempts run out: exhausted after maxAttempts, each retry with the lessons."""
    agent = ScriptedSubagent(
        {"add": [{"calc.py": WRONG_FIX}, {"calc.py": BUGGY}, {"calc.py": WRONG_FIX}]}
    )
    summary = run(agent, max_attempts=2)
    assert not summary.passed
    outcome = summary.outcome("add")
    assert (outcome.outcome, outcome.attempts) == ("exhausted", 2)
    assert outcome.reason == "failed all 2 attempts"
    assert kinds(events)[-2:] == ["exhausted", "run_finished"]
    assert len(agent.requests) == 2


def test_subtask_max_attempts_wins(run: Run) -> None:
    """A subtask's own maxAttempts overrides the project's."""
    agent = ScriptedSubagent({})
    subtask = Subtask(id="add", description="Fix add().", max_attempts=1)
    summary = run(agent, subtasks=(subtask,), max_attempts=5)
    assert summary.outcome("add").attempts == 1
    assert summary.outcome("add").outcome == "exhausted"


def test_stuck(run: Run, events: list[Event]) -> None:
    """The same failure stuckAfter times in a row stops the subtask before maxAttempts."""
    agent = ScriptedSubagent({})  # never changes anything: the same failure every time
    summary = run(agent, max_attempts=10, stuck_after=2)
    outcome = summary.outcome("add")
    assert (outcome.outcome, outcome.attempts) == ("stuck", 2)
    assert outcome.reason is not None
    assert "the same failure 2 times in a row" in outcome.reason
    stuck = [e for e in events if e.kind is EventKind.STUCK]
    assert len(stuck) == 1
    assert stuck[0].data["times"] == 2


def test_crashing_subagent_is_a_failed_attempt(run: Run, events: list[Event]) -> None:
    """ok=False skips verification, is reflected on, and the retry can still pass."""
    crash = SubagentResult(ok=False, output="Traceback: boom", duration_ms=5, error="crashed")
    agent = ScriptedSubagent({"add": [crash, {"calc.py": RIGHT_FIX}]})
    summary = run(agent)
    assert summary.outcome("add").outcome == "passed"
    assert summary.outcome("add").attempts == 2
    failed = next(e for e in events if e.kind is EventKind.VERIFICATION_FAILED)
    assert failed.data["subagentOk"] is False
    assert failed.data["subagentError"] == "crashed"
    assert failed.data["failureType"] == "tool_error"
    assert "Learning from Previous Failures" in agent.prompts[1]


def test_raising_subagent_does_not_stop_the_run(run: Run) -> None:
    """Even a subagent that breaks its contract and raises is only a failed attempt."""

    class Raising:
        def run(self, request: object, /) -> SubagentResult:
            raise RuntimeError("bug")

    summary = run(Raising(), max_attempts=2, stuck_after=3)
    assert summary.outcome("add").outcome == "exhausted"


def test_hanging_subagent_is_killed(run: Run, events: list[Event]) -> None:
    """A real command that hangs is killed at the attempt time limit."""
    agent = CommandSubagent([sys.executable, "-c", "import time; time.sleep(30)"])
    summary = run(agent, max_attempts=1, attempt_timeout_s=1)
    outcome = summary.outcome("add")
    assert (outcome.outcome, outcome.attempts) == ("exhausted", 1)
    assert outcome.duration_ms < 10_000
    failed = next(e for e in events if e.kind is EventKind.VERIFICATION_FAILED)
    assert failed.data["failureType"] == "timeout"


def test_missing_verification_command(run: Run, events: list[Event]) -> None:
    """A verification program that does not exist is the setup's failure: no lesson, no retry."""
    agent = ScriptedSubagent({"add": [{"calc.py": RIGHT_FIX}]})
    subtask = Subtask(id="add", description="Fix add().", verify=("no-such-checker-xyz",))
    summary = run(agent, subtasks=(subtask,), max_attempts=2)
    assert summary.outcome("add").outcome == "setup_error"
    assert summary.outcome("add").attempts == 1
    assert "the check `no-such-checker-xyz` could not run" in (summary.setup_error or "")
    assert len(agent.prompts) == 1
    assert not [e for e in events if e.kind is EventKind.VERIFICATION_FAILED]
    assert [e.kind for e in events if e.subtask_id == "add"][-1] is EventKind.SETUP_FAILED


def test_dependency_order_and_skips(run: Run) -> None:
    """Subtasks run in dependsOn order; one whose dependency failed is skipped."""
    agent = ScriptedSubagent({"add": [{"calc.py": RIGHT_FIX}]})
    subtasks = (
        Subtask(id="after-b", description="Needs b.", depends_on=("b",)),
        Subtask(id="b", description="Never passes.", verify=(f"{PY} -c 'raise SystemExit(1)'",)),
        Subtask(id="add", description="Fix add()."),
    )
    summary = run(agent, subtasks=subtasks, max_attempts=1)
    assert [(o.subtask_id, o.outcome) for o in summary.outcomes] == [
        ("b", "exhausted"),
        ("after-b", "skipped"),
        ("add", "passed"),
    ]
    assert summary.outcome("after-b").reason == "dependency did not pass: b"
    assert not summary.passed


def test_run_time_budget(run: Run, events: list[Event]) -> None:
    """When the run's budget is spent, the subtask stops with "budget" and says so."""
    now = [0.0]

    def clock() -> float:
        now[0] += 40.0
        return now[0]

    summary = run(ScriptedSubagent({}), clock=clock, run_timeout_s=100, max_attempts=10)
    outcome = summary.outcome("add")
    assert outcome.outcome == "budget"
    assert 1 <= outcome.attempts < 10
    assert kinds(events)[-2:] == ["budget_spent", "run_finished"]


def test_run_log(service: ReflectionService, workdir: Path, tmp_path: Path) -> None:
    """Events go to a JSONL run log, one camelCase object per line."""
    log_path = tmp_path / ".reflexkit" / "runs" / "run.jsonl"
    agent = ScriptedSubagent({"add": [{"calc.py": WRONG_FIX}, {"calc.py": RIGHT_FIX}]})
    with RunLog(log_path) as run_log:
        Orchestrator(
            service=service,
            subagent=agent,
            verifier_for=lambda _s: Verifier([UNITTEST], timeout_s=20),
            on_event=run_log.write,
        ).run(Task(id="t", subtasks=(Subtask(id="add", description="Fix."),)), workdir=workdir)
    lines = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines][:3] == [
        "run_started",
        "attempt_started",
        "verification_failed",
    ]
    failed = lines[2]
    assert set(failed) == {"kind", "subtaskId", "attempt", "at", "data"}
    assert failed["subtaskId"] == "add"
    assert failed["data"]["exitCode"] == 1
    assert failed["at"].endswith("Z")
    assert lines[-1]["data"]["allPassed"] is True
    assert lines[-1]["data"]["passed"] == 1


def test_with_reflection_disabled_retries_are_plain(
    reflexkit_app: Application, reflexkit_fakes: FakeServices, tmp_path: Path
) -> None:
    """reflect=False: no reflections stored, no lessons in the prompt, stuck still detected."""
    check = tmp_path / "check.py"
    check.write_text(
        "import sys\nprint('FAILED tests/test_x.py::test_y - assert 1 == 2')\nsys.exit(1)\n"
    )
    agent = ScriptedSubagent({})
    orchestrator = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=agent,
        verifier_for=lambda _s: Verifier([f"{sys.executable} {check}"]),
        config=OrchestratorConfig(max_attempts=5, stuck_after=3),
        reflect=False,
    )
    summary = orchestrator.run(
        Task(id="t", subtasks=(Subtask(id="s", description="never passes"),)), workdir=tmp_path
    )
    assert summary.outcomes[0].outcome == "stuck"
    assert summary.outcomes[0].attempts == 3
    assert list(reflexkit_fakes.store()) == []
    assert all("Learning from Previous Failures" not in p for p in agent.prompts)


def _noisy(
    n: int, *, timed_out: bool = False, error: str = "agent exited with status 1"
) -> SubagentResult:
    """An agent's failed attempt whose output differs every time (it echoes its prompt)."""
    return SubagentResult(
        ok=False,
        output=f"session {n}: Tokens: {n * 1.7:.1f}k sent\nFix add() ... lesson {'x' * n}",
        duration_ms=n,
        error="timed out after 4 s and was killed" if timed_out else error,
        timed_out=timed_out,
    )


@pytest.mark.parametrize("timed_out", [True, False])
def test_an_agent_that_fails_the_same_way_is_stuck_whatever_it_printed(
    run: Run, timed_out: bool
) -> None:
    """Three hangs (or three exit 1s) end stuck for any agent, however noisy its output (#27)."""
    agent = ScriptedSubagent({"add": [_noisy(n, timed_out=timed_out) for n in range(1, 6)]})
    outcome = run(agent, max_attempts=5, stuck_after=3).outcome("add")
    assert (outcome.outcome, outcome.attempts) == ("stuck", 3)


def test_an_agent_that_fails_differently_is_not_stuck(run: Run) -> None:
    """A time-out, then exit 1, then exit 2: three different endings, so exhausted."""
    script = [
        _noisy(1, timed_out=True),
        _noisy(2, error="agent exited with status 1"),
        _noisy(3, error="agent exited with status 2"),
    ]
    outcome = run(ScriptedSubagent({"add": script}), max_attempts=3, stuck_after=3).outcome("add")
    assert outcome.outcome == "exhausted"


def test_each_prompt_is_kept_under_the_run_folder(
    service: ReflectionService, workdir: Path, events: list[Event]
) -> None:
    """attempt_started names the kept prompt: attempt 2's carries the lesson; secrets go."""
    secret = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
    agent = ScriptedSubagent({"add": [{"calc.py": WRONG_FIX}, {"calc.py": RIGHT_FIX}]})
    subtask = Subtask(id="add", description=f"Fix add() in calc.py. Token: {secret}")
    orchestrator = Orchestrator(
        service=service,
        subagent=agent,
        verifier_for=lambda _s: Verifier((UNITTEST,), timeout_s=20),
        on_event=events.append,
        keep_prompts=True,
    )
    task = Task(id="fix-calc", description="Make calc.add add.", subtasks=(subtask,))
    assert orchestrator.run(task, workdir=workdir).passed
    started = [e for e in events if e.kind is EventKind.ATTEMPT_STARTED]
    paths = [e.data["promptPath"] for e in started]
    assert all(isinstance(p, str) and p.startswith(".reflexkit/runs/") for p in paths)
    first, second = (workdir / str(p) for p in paths)
    assert first.name == "add-1.md"
    assert second.name == "add-2.md"
    assert "Learning from Previous Failures" in second.read_text()
    assert "Learning from Previous Failures" not in first.read_text()
    assert secret not in first.read_text()
    assert "Fix add() in calc.py" in first.read_text()
    assert first.stat().st_mode & 0o077 == 0
