"""The retry loop with reports, the risk floor, the completion judge and endings (#18).

Every test runs the real loop from the application container on a real git repository with
a real unittest suite; the agent is a real process (a small Python script that applies the
edits of its plan, attempt by attempt, may write a self-report, and prints its last message).
The LLM judge goes through the real ``anthropic`` SDK to the fake Messages API.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import orjson
import pytest
from click.testing import CliRunner
from dependency_injector import providers

from reflexkit.cli import cli
from reflexkit.containers import build_application, fake_services
from reflexkit.events import Event, EventKind
from reflexkit.llm import Claude
from reflexkit.orchestrator._outcomes import RunSummary
from reflexkit.orchestrator._subagents import (
    CommandSubagent,
    SubagentRequest,
    SubagentResult,
)
from reflexkit.reports._audit import AttemptAudit, AuditedAttempt
from reflexkit.reports._judge import ClaudeJudge, FixtureJudge, HeuristicJudge, JudgeInput
from reflexkit.reports._report import ReportIds, Verification, read_reports, report_schema
from reflexkit.tasks._config import (
    GeneratorBackend,
    JudgeMode,
    LoadedProject,
    MemoryConfig,
    OrchestratorConfig,
    ProjectConfig,
    ReflexionConfig,
    ReportsConfig,
    VerificationConfig,
)
from reflexkit.tasks._task import Subtask, Task
from reflexkit.testing.fake_messages_api import FakeMessagesApi

PY = shlex.quote(sys.executable)
UNITTEST = f"{PY} -m unittest -q"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
FIXED_WITH_TODO = "def add(a, b):\n    # TODO: handle overflow\n    return a + b\n"
TESTS = (
    "import unittest\n"
    "from calc import add\n\n\n"
    "class TestAdd(unittest.TestCase):\n"
    "    def test_add_positive(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)
DONE = "Fixed add() in calc.py; the tests pass."
# The agent: attempt N applies step N of its plan (the last step for later attempts), writes
# the step's self-report, keeps its prompt for the test, and prints the step's message.
AGENT = """import json, pathlib, sys
plan = json.loads(pathlib.Path(sys.argv[1]).read_text())
counter = pathlib.Path(sys.argv[2])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
pathlib.Path(sys.argv[3], f"{n + 1}.md").write_text(sys.stdin.read())
step = plan[min(n, len(plan) - 1)]
for path, text in step.get("files", {}).items():
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
if "selfReport" in step:
    pathlib.Path(".reflexkit").mkdir(exist_ok=True)
    pathlib.Path(".reflexkit/self-report.json").write_text(json.dumps(step["selfReport"]))
print(step.get("message", "Done."))
"""
COMPLETE = {
    "complete": True,
    "severity": "NONE",
    "feedback": "add() adds.",
    "missing": [],
    "nextActions": [],
}
MISSING = {
    "complete": False,
    "severity": "MEDIUM",
    "feedback": "Negative numbers are not covered.",
    "missing": ["a test of add() with negative numbers"],
    "nextActions": ["Add a test for add(-2, -3)"],
}


def git(root: Path, *args: str) -> str:
    """Run git in *root* and return its stdout."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a bug, its unittest suite and one commit."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TESTS)
    (root / ".gitignore").write_text(".reflexkit/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    return root


class Agent:
    """The stand-in agent's files: its plan, its attempt counter and the prompts it got."""

    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path / "agent"
        self.prompts_dir = self.folder / "prompts"
        self.prompts_dir.mkdir(parents=True)
        self.script = self.folder / "agent.py"
        self.script.write_text(AGENT)
        self.plan_file = self.folder / "plan.json"

    def plan(self, *steps: dict[str, Any]) -> list[str]:
        """Set the plan; return the agent's command line."""
        self.plan_file.write_text(json.dumps(list(steps)))
        return [
            sys.executable,
            str(self.script),
            str(self.plan_file),
            str(self.folder / "count"),
            str(self.prompts_dir),
        ]

    def prompt(self, attempt: int) -> str:
        """The prompt of one attempt."""
        return (self.prompts_dir / f"{attempt}.md").read_text()


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    """A fresh stand-in agent."""
    return Agent(tmp_path)


TASK = Task(
    id="calc",
    description="The calculator is wrong.",
    subtasks=(Subtask(id="fix-add", description="add() in `calc.py` must add."),),
)


def project_of(
    root: Path, *, reports: bool = False, judge: JudgeMode = JudgeMode.OFF, **verification: Any
) -> LoadedProject:
    """A heuristic-reflection project with JSONL memory in *root*."""
    return LoadedProject(
        config=ProjectConfig(
            reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
            memory=MemoryConfig(),
            verification=VerificationConfig(
                commands=(UNITTEST,), judge=judge, judge_timeout_ms=5_000, **verification
            ),
            reports=ReportsConfig(enabled=reports),
        ),
        root=root,
    )


Run = Callable[..., tuple[RunSummary, list[Event]]]


@pytest.fixture
def run(repo: Path) -> Iterator[Run]:
    """Run TASK in *repo* through the container's loop, the agent being a real command."""
    apps = []

    def go(
        project: LoadedProject, argv: list[str], *, fakes: bool = True
    ) -> tuple[RunSummary, list[Event]]:
        app = build_application(project)
        apps.append(app)
        events: list[Event] = []
        agent = CommandSubagent(argv)
        if fakes:
            with fake_services(app):
                loop = app.orchestration.orchestrator(subagent=agent, on_event=events.append)
                summary = loop.run(TASK, workdir=repo, run_id="run-1")
        else:
            loop = app.orchestration.orchestrator(subagent=agent, on_event=events.append)
            summary = loop.run(TASK, workdir=repo, run_id="run-1")
        return summary, events

    yield go
    for app in apps:
        app.shutdown_resources()


def kinds(events: list[Event]) -> list[str]:
    """The kinds of the events, in order."""
    return [e.kind.value for e in events]


def validate(report: dict[str, Any]) -> None:
    """Fail unless *report* validates against the shipped schema."""
    jsonschema.Draft202012Validator(
        report_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(report)


# --- reports ---------------------------------------------------------------------------------


def test_reports_off_write_nothing(repo: Path, agent: Agent, run: Run) -> None:
    """With reports off (the default) no report file is written and the prompt asks for none."""
    summary, events = run(
        project_of(repo), agent.plan({"files": {"calc.py": BUGGY}}, {"files": {"calc.py": FIXED}})
    )
    assert summary.passed
    assert summary.outcomes[0].attempts == 2
    assert not (repo / ".reflexkit" / "reports").exists()
    assert [p for p in repo.rglob("*") if "reports" in p.parts] == []
    assert "Self-report" not in agent.prompt(1)
    assert EventKind.NEEDS_REVIEW.value not in kinds(events)


def test_reports_on_one_valid_report_per_attempt(repo: Path, agent: Agent, run: Run) -> None:
    """A failed and a passed attempt each leave one schema-valid report in the run's folder."""
    confident = {
        "confidence": 0.9,
        "mostLikelyWrong": {"surface": "none", "description": "overflow is not handled"},
        "knownNotInDiff": None,
    }
    summary, _ = run(
        project_of(repo, reports=True),
        agent.plan(
            {"files": {"calc.py": "def add(a, b):\n    return a * b\n"}, "message": "Done."},
            {"files": {"calc.py": FIXED}, "selfReport": confident, "message": DONE},
        ),
    )
    assert summary.passed
    files = sorted((repo / ".reflexkit" / "reports" / "run-1").glob("*.json"))
    assert [f.name for f in files] == ["fix-add-1.json", "fix-add-2.json"]
    first, second = read_reports(repo / ".reflexkit" / "reports")
    for report in (first, second):
        validate(report)
        assert report["filesChanged"] == [{"path": "calc.py", "insertions": 1, "deletions": 1}]
        assert report["taskId"] == "calc"
        assert report["agent"] == "command"
    assert first["attempt"] == 1
    assert first["verification"]["passed"] is False
    assert first["verification"]["command"] == UNITTEST
    assert first["verification"]["exitCode"] == 1
    assert first["provenance"]["degraded"] is True
    assert first["provenance"]["selfReport"] == "missing"
    assert first["confidence"] is None
    assert second["verification"]["passed"] is True
    assert second["verification"]["ending"] == "completed"
    assert second["verification"]["judge"] is None  # verification.judge is off
    assert second["confidence"] == 0.9
    assert second["provenance"]["degraded"] is False
    assert "Self-report" in agent.prompt(1)
    assert not (repo / ".reflexkit" / "self-report.json").exists()  # read and removed


def test_a_report_for_an_attempt_whose_agent_failed(repo: Path, agent: Agent, run: Run) -> None:
    """An agent that exits non-zero still leaves a report, its ending ``error``."""
    argv = agent.plan({"files": {"calc.py": FIXED}})
    failing = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    summary, _ = run(project_of(repo, reports=True), failing)
    assert not summary.passed
    reports = read_reports(repo / ".reflexkit" / "reports")
    assert len(reports) == 3  # maxAttempts
    for report in reports:
        validate(report)
        assert report["verification"]["passed"] is False
        assert report["verification"]["command"] == "subagent"
        assert report["verification"]["ending"] == "error"
    assert argv  # the plan is unused: the failing agent edits nothing


# --- the risk floor --------------------------------------------------------------------------


def test_a_risky_diff_emits_needs_review_and_still_passes(
    repo: Path, agent: Agent, run: Run
) -> None:
    """A change to auth code is flagged for review; the outcome stays ``passed``."""
    login = "def login(user, password):\n    return password == 'secret'\n"
    summary, events = run(
        project_of(repo, reports=True),
        agent.plan({"files": {"calc.py": FIXED, "auth/login.py": login}, "message": DONE}),
    )
    assert summary.passed
    (review,) = [e for e in events if e.kind is EventKind.NEEDS_REVIEW]
    assert review.subtask_id == "fix-add"
    assert review.attempt == 1
    assert review.data["surface"] == "auth"
    assert review.data["score"] == 1.0
    assert "auth/login.py" in str(review.data["reason"])
    assert kinds(events).index("needs_review") < kinds(events).index("passed")
    (report,) = read_reports(repo / ".reflexkit" / "reports")
    assert report["risk"]["needsReview"] is True


# --- reports subscribe to the loop's events --------------------------------------------------

ATTEMPT_ENDS = {EventKind.PASSED, EventKind.VERIFICATION_FAILED, EventKind.NEEDS_INPUT}


def test_the_events_that_end_an_attempt_carry_what_its_report_records(
    repo: Path, agent: Agent, run: Run
) -> None:
    """How the agent ended and what the checks said are in the events; the reports agree.

    The attempt reports are written by a subscriber of the loop's events, so the run log holds
    all a report's verification says: another process following the log sees the same.
    """
    summary, events = run(
        project_of(repo, reports=True, judge=JudgeMode.HEURISTIC),
        agent.plan(
            {"files": {"calc.py": "def add(a, b):\n    return a * b\n"}, "message": DONE},
            {"files": {"calc.py": FIXED_WITH_TODO}, "message": DONE},
            {"files": {"calc.py": FIXED}, "message": DONE},
        ),
    )
    assert summary.passed
    ends = [e for e in events if e.kind in ATTEMPT_ENDS]
    assert [(e.kind, e.attempt) for e in ends] == [
        (EventKind.VERIFICATION_FAILED, 1),
        (EventKind.VERIFICATION_FAILED, 2),
        (EventKind.PASSED, 3),
    ]
    failed, rejected, passed = ends
    assert (failed.data["checksPassed"], failed.data["checksExitCode"]) == (False, 1)
    assert (rejected.data["checksPassed"], rejected.data["checksExitCode"]) == (True, 0)
    assert rejected.data["command"] == "completion judge"  # the failure; the checks passed
    assert (rejected.data["judge"], rejected.data["judgeSeverity"]) == ("heuristic", "MEDIUM")
    assert (passed.data["checksPassed"], passed.data["checksExitCode"]) == (True, 0)
    reports = read_reports(repo / ".reflexkit" / "reports")
    assert len(reports) == 3
    for report, event in zip(reports, ends, strict=True):
        verification = report["verification"]
        assert event.data["ending"] == verification["ending"] == "completed"
        assert event.data["checksCommand"] == verification["command"] == UNITTEST
        assert event.data["checksPassed"] == verification["passed"]
        assert event.data["checksExitCode"] == verification["exitCode"]


def test_needs_review_comes_right_before_the_event_that_ends_its_attempt(
    repo: Path, agent: Agent, run: Run
) -> None:
    """A risky diff in a failed attempt and in the passing one: each review precedes its end."""
    login = "def login(user, password):\n    return password == 'secret'\n"
    summary, events = run(
        project_of(repo, reports=True),
        agent.plan(
            {"files": {"calc.py": "def add(a, b):\n    return a * b\n", "auth/login.py": login}},
            {"files": {"calc.py": FIXED}, "message": DONE},
        ),
    )
    assert summary.passed
    at = [i for i, e in enumerate(events) if e.kind is EventKind.NEEDS_REVIEW]
    assert [events[i].attempt for i in at] == [1, 2]
    for i in at:
        follows = events[i + 1]
        assert follows.kind in ATTEMPT_ENDS
        assert (follows.subtask_id, follows.attempt) == (events[i].subtask_id, events[i].attempt)


# --- endings ---------------------------------------------------------------------------------


def test_waiting_for_user_ends_with_needs_input(repo: Path, agent: Agent, run: Run) -> None:
    """An agent that stops to ask is not retried and not reflected on: ``needs_input``."""
    summary, events = run(
        project_of(repo, reports=True),
        agent.plan({"message": "There are two ways to fix add(). Which one do you prefer?"}),
    )
    (outcome,) = summary.outcomes
    assert outcome.outcome == "needs_input"
    assert outcome.attempts == 1
    assert not summary.passed
    assert "retry" not in kinds(events)
    assert "reflection_generated" not in kinds(events)
    assert "verification_failed" not in kinds(events)
    (ending,) = [e for e in events if e.kind is EventKind.NEEDS_INPUT]
    assert "Which one do you" in str(ending.data["cue"])
    assert ending.data["reason"] == "the agent is waiting for the user"
    assert ending.data["ending"] == "waiting_for_user"
    assert ending.data["checksPassed"] is False  # the agent changed nothing: add() still subtracts
    (report,) = read_reports(repo / ".reflexkit" / "reports")
    assert report["verification"]["ending"] == "waiting_for_user"


def test_a_question_after_work_that_passes_its_checks_is_no_wait(
    repo: Path, agent: Agent, run: Run
) -> None:
    """An offer at the end of work whose checks pass ("Should I also ...?") still passes."""
    summary, _ = run(
        project_of(repo),
        agent.plan({"files": {"calc.py": FIXED}, "message": "Fixed. Should I also add docs?"}),
    )
    assert summary.passed


# --- the judge -------------------------------------------------------------------------------


def test_a_heuristic_rejection_reaches_the_retry_prompt(repo: Path, agent: Agent, run: Run) -> None:
    """Checks pass, the heuristic judge finds a TODO: a judge_rejected failure and a retry."""
    summary, events = run(
        project_of(repo, reports=True, judge=JudgeMode.HEURISTIC),
        agent.plan(
            {"files": {"calc.py": FIXED_WITH_TODO}, "message": DONE},
            {"files": {"calc.py": FIXED}, "message": DONE},
        ),
    )
    assert summary.passed
    assert summary.outcomes[0].attempts == 2
    (failed,) = [e for e in events if e.kind is EventKind.VERIFICATION_FAILED]
    assert failed.data["failureType"] == "judge_rejected"
    assert failed.data["command"] == "completion judge"
    retry = agent.prompt(2)
    assert "the diff adds TODOs or stubs: # TODO: handle overflow" in retry
    assert "Replace the TODOs and stubs with the real implementation." in retry
    assert "The completion judge on the previous attempt" not in agent.prompt(1)
    assert "reflection_generated" in kinds(events)
    assert "(judge_rejected)" in retry  # the lesson's heading names the failure type
    first, second = read_reports(repo / ".reflexkit" / "reports")
    assert first["verification"]["passed"] is True  # the checks passed; the judge did not
    assert first["verification"]["judge"] == {
        "complete": False,
        "severity": "MEDIUM",
        "source": "heuristic",
    }
    assert second["verification"]["judge"]["complete"] is True
    (passed,) = [e for e in events if e.kind is EventKind.PASSED]
    assert passed.data["judge"] == "heuristic"
    assert passed.data["judgeSeverity"] == "NONE"


def test_the_judge_feedback_reaches_a_plain_retry(repo: Path, agent: Agent, run: Run) -> None:
    """With reflexion.enabled off there are no lessons, but the judge's feedback still comes."""
    project = project_of(repo, judge=JudgeMode.HEURISTIC)
    config = project.config
    plain = LoadedProject(
        config=attrs.evolve(config, reflexion=attrs.evolve(config.reflexion, enabled=False)),
        root=repo,
    )
    summary, events = run(
        plain,
        agent.plan(
            {"files": {"calc.py": FIXED_WITH_TODO}, "message": DONE},
            {"files": {"calc.py": FIXED}, "message": DONE},
        ),
    )
    assert summary.passed
    assert "reflection_generated" not in kinds(events)
    retry = agent.prompt(2)
    assert "Learning from Previous Failures" not in retry
    assert "The completion judge on the previous attempt" in retry
    assert "Replace the TODOs and stubs with the real implementation." in retry


def test_a_judge_that_always_rejects_ends_stuck(repo: Path, agent: Agent, run: Run) -> None:
    """The same rejection every time is a repeated failure: the subtask ends ``stuck``."""
    summary, _ = run(
        project_of(repo, judge=JudgeMode.HEURISTIC),
        agent.plan({"files": {"calc.py": FIXED_WITH_TODO}, "message": DONE}),
    )
    (outcome,) = summary.outcomes
    assert outcome.outcome in {"stuck", "exhausted"}
    assert outcome.attempts == 3


@pytest.fixture
def claude_env(
    monkeypatch: pytest.MonkeyPatch, fake_messages_api: FakeMessagesApi
) -> FakeMessagesApi:
    """The SDK pointed at the fake Messages API with a test key."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    return fake_messages_api


def test_the_llm_judge_through_the_sdk(
    repo: Path, agent: Agent, run: Run, claude_env: FakeMessagesApi
) -> None:
    """Claude's verdict comes through the SDK; its missing items reach the retry prompt."""
    claude_env.reply(MISSING).reply(COMPLETE)
    summary, events = run(
        project_of(repo, judge=JudgeMode.LLM),
        agent.plan(
            {"files": {"calc.py": FIXED}, "message": DONE},
            {"files": {"calc.py": FIXED}, "message": DONE},
        ),
        fakes=False,
    )
    assert summary.passed
    assert summary.outcomes[0].attempts == 2
    assert len(claude_env.requests) == 2
    content = claude_env.requests[0].json["messages"][0]["content"]
    assert "add() in `calc.py` must add." in content
    assert "Checks: passed" in content
    assert "+    return a + b" in content  # the attempt's diff against its starting commit
    retry = agent.prompt(2)
    assert "a test of add() with negative numbers" in retry
    assert "Add a test for add(-2, -3)" in retry
    (passed,) = [e for e in events if e.kind is EventKind.PASSED]
    assert passed.data["judge"] == "llm"


def test_a_judge_error_never_blocks(
    repo: Path,
    agent: Agent,
    run: Run,
    claude_env: FakeMessagesApi,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A judge that can't answer (the API rejects the key) is logged; the attempt passes."""
    claude_env.error(401, "authentication_error", "invalid x-api-key")
    summary, events = run(
        project_of(repo, judge=JudgeMode.LLM),
        agent.plan({"files": {"calc.py": FIXED}, "message": DONE}),
        fakes=False,
    )
    assert summary.passed
    assert summary.outcomes[0].attempts == 1
    (passed,) = [e for e in events if e.kind is EventKind.PASSED]
    assert passed.data["judgeError"]
    assert passed.data["judgeSeverity"] is None
    assert "gave no verdict" in caplog.text


def test_the_fake_services_judge_stands_in_for_claude(repo: Path, agent: Agent, run: Run) -> None:
    """Under fake_services an llm judge is the heuristic one: no network, same verdicts."""
    summary, events = run(
        project_of(repo, judge=JudgeMode.LLM),
        agent.plan({"files": {"calc.py": FIXED}, "message": DONE}),
    )
    assert summary.passed
    (passed,) = [e for e in events if e.kind is EventKind.PASSED]
    assert passed.data["judge"] == "heuristic"


# --- reflexkit run: exit codes -----------------------------------------------------------------


def write_project(repo: Path, **extra: Any) -> None:
    """project.json and task.json for ``reflexkit run`` in *repo*."""
    (repo / ".reflexkit").mkdir(exist_ok=True)
    (repo / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [UNITTEST]},
                **extra,
            }
        )
    )
    (repo / "task.json").write_text(
        json.dumps(
            {
                "id": "calc",
                "description": "The calculator is wrong.",
                "subtasks": [{"id": "fix-add", "description": "add() must add."}],
            }
        )
    )


def run_cli(repo: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    """``reflexkit run`` in *repo*; its exit code and the kinds in its run log."""
    monkeypatch.chdir(repo)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--agent-command", " ".join(shlex.quote(a) for a in argv)]
    )
    (log,) = (repo / ".reflexkit" / "runs").glob("*.jsonl")
    return result.exit_code, [orjson.loads(line)["kind"] for line in log.read_bytes().splitlines()]


def test_cli_needs_review_keeps_exit_0(
    repo: Path, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that passes with a risky diff exits 0; the run log has ``needs_review``."""
    write_project(repo, reports={"enabled": True})
    argv = agent.plan({"files": {"calc.py": FIXED, "migrations/0001.sql": "DROP TABLE x;\n"}})
    code, logged = run_cli(repo, argv, monkeypatch)
    assert code == 0
    assert "needs_review" in logged
    assert logged[-1] == "run_finished"


def test_cli_needs_input_exits_1(repo: Path, agent: Agent, monkeypatch: pytest.MonkeyPatch) -> None:
    """A subtask that waits for the user is not a pass: ``reflexkit run`` exits 1."""
    write_project(repo)
    argv = agent.plan({"message": "Should I change the signature of add() too?"})
    code, logged = run_cli(repo, argv, monkeypatch)
    assert code == 1
    assert "needs_input" in logged
    assert "retry" not in logged


# --- the container -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (JudgeMode.OFF, type(None)),
        (JudgeMode.HEURISTIC, HeuristicJudge),
        (JudgeMode.FIXTURE, FixtureJudge),
        (JudgeMode.LLM, ClaudeJudge),
    ],
)
def test_the_container_builds_only_the_selected_judge(
    repo: Path, mode: JudgeMode, expected: type
) -> None:
    """verification.judge picks the judge; init_resources() builds that one and no other."""
    app = build_application(project_of(repo, judge=mode))
    try:
        app.init_resources()
        judges = (HeuristicJudge, FixtureJudge, ClaudeJudge)
        built = [
            r()
            for r in app.traverse(types=[providers.Resource])
            if r.initialized and isinstance(r(), judges)
        ]
        assert [type(j) for j in built] == ([] if expected is type(None) else [expected])
        assert type(app.orchestration.judge()) is expected
        loop = app.orchestration.orchestrator(subagent=CommandSubagent(["true"]))
        assert loop.audit.judge_ is app.orchestration.judge()
    finally:
        app.shutdown_resources()


def test_the_fixture_judge_reads_the_configured_file(repo: Path) -> None:
    """The fixture judge's file is verification.judgeFixturesPath under the project root."""
    app = build_application(
        project_of(repo, judge=JudgeMode.FIXTURE, judge_fixtures_path="f.jsonl")
    )
    judge = app.orchestration.judge()
    assert isinstance(judge, FixtureJudge)
    assert judge.path == repo / "f.jsonl"
    app.shutdown_resources()


PARALLEL_AGENT = """import json, pathlib, re, sys, time
prompt = sys.stdin.read()
sub = re.search(r"# Subtask: (\\S+)", prompt).group(1)
path = pathlib.Path(re.search(r"write `([^`]*self-report[^`]*)`", prompt).group(1))
pathlib.Path(f"{sub}.py").write_text("X = 1\\n")
time.sleep(0.3)  # the other subtask is running now
path.parent.mkdir(exist_ok=True)
path.write_text(json.dumps({"confidence": 0.1 if sub == "a" else 0.9}))
time.sleep(0.3)
print("Done.")
"""


def test_parallel_subtasks_keep_their_own_self_reports(repo: Path, tmp_path: Path) -> None:
    """With --jobs 2 each running subtask writes and gets back its own self-report."""
    script = tmp_path / "parallel_agent.py"
    script.write_text(PARALLEL_AGENT)
    project = LoadedProject(
        config=ProjectConfig(
            reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
            verification=VerificationConfig(commands=(f"{PY} -c pass",)),
            reports=ReportsConfig(enabled=True),
            orchestrator=OrchestratorConfig(jobs=2),
        ),
        root=repo,
    )
    task = Task(
        id="pair",
        description="Two independent modules.",
        subtasks=(
            Subtask(id="a", description="Write a.py."),
            Subtask(id="b", description="Write b.py."),
        ),
    )
    app = build_application(project)
    with fake_services(app):
        loop = app.orchestration.orchestrator(
            subagent=CommandSubagent([sys.executable, str(script)])
        )
        summary = loop.run(task, workdir=repo, run_id="run-2")
    app.shutdown_resources()
    assert summary.passed
    reports = {r["subtaskId"]: r for r in read_reports(repo / ".reflexkit" / "reports")}
    assert reports["a"]["confidence"] == 0.1
    assert reports["b"]["confidence"] == 0.9
    assert not reports["a"]["provenance"]["degraded"]
    assert not reports["b"]["provenance"]["degraded"]


class HeldAudit(AttemptAudit):
    """Holds subtask a's report until subtask b's is written (or 10 s pass)."""

    def __init__(self, project: LoadedProject) -> None:
        super().__init__(project)
        self.a_held = threading.Event()
        self.b_written = threading.Event()
        self.overlapped = False

    def finish(
        self, audited: AuditedAttempt, ids: ReportIds, verification: Verification, **kw: Any
    ) -> dict[str, Any] | None:
        """Write the report; a's waits for b's, so the two must be written at once."""
        if ids.subtask_id == "a":
            self.a_held.set()
            self.overlapped = self.b_written.wait(timeout=10)
        report = super().finish(audited, ids, verification, **kw)
        if ids.subtask_id == "b":
            self.b_written.set()
        return report


class AfterA:
    """Writes ``<subtask>.py``; b's attempt ends only once a's report is being written."""

    name = "after-a"

    def __init__(self, audit: HeldAudit) -> None:
        self.audit = audit

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Do the subtask's work, b's after a's report has begun."""
        if request.subtask_id == "b":
            self.audit.a_held.wait(timeout=10)
        (request.workdir / f"{request.subtask_id}.py").write_text("X = 1\n")
        return SubagentResult(ok=True, output="Done.", duration_ms=0)


def test_parallel_subtasks_write_their_reports_at_once(repo: Path) -> None:
    """With --jobs 2 one subtask's slow report holds no other: b's is written while a's waits."""
    project = LoadedProject(
        config=ProjectConfig(
            reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
            verification=VerificationConfig(commands=(f"{PY} -c pass",)),
            reports=ReportsConfig(enabled=True),
            orchestrator=OrchestratorConfig(jobs=2),
        ),
        root=repo,
    )
    task = Task(
        id="pair",
        description="Two independent modules.",
        subtasks=(Subtask(id="a", description="Write a.py."), Subtask(id="b", description="b")),
    )
    audit = HeldAudit(project)
    events: list[Event] = []
    app = build_application(project)
    with fake_services(app), app.orchestration.audit.override(providers.Object(audit)):
        loop = app.orchestration.orchestrator(subagent=AfterA(audit), on_event=events.append)
        summary = loop.run(task, workdir=repo, run_id="run-3")
    app.shutdown_resources()
    assert summary.passed
    assert audit.overlapped, "a's report held the event lock: b's report waited for it"
    reports = {r["subtaskId"]: r for r in read_reports(repo / ".reflexkit" / "reports")}
    assert sorted(reports) == ["a", "b"]
    for report in reports.values():
        validate(report)
        assert report["verification"]["passed"] is True
    assert kinds(events)[-1] == "run_finished"


def test_the_run_budget_caps_the_judge(
    repo: Path, agent: Agent, run: Run, claude_env: FakeMessagesApi
) -> None:
    """A judge asked near the end of the run gets the time left, not its own 30 s (#18)."""
    claude_env.hang(60)
    project = project_of(repo, judge=JudgeMode.LLM)
    project = attrs.evolve(
        project,
        config=attrs.evolve(
            project.config,
            verification=attrs.evolve(project.config.verification, judge_timeout_ms=30_000),
            orchestrator=OrchestratorConfig(run_timeout_s=5),
        ),
    )
    summary, events = run(
        project, agent.plan({"files": {"calc.py": FIXED}, "message": DONE}), fakes=False
    )
    assert summary.passed  # a judge that ran out of time objects to nothing
    (passed,) = [e for e in events if e.kind is EventKind.PASSED]
    # Timed out within the time left; or, on a very slow machine, none was left to ask in.
    assert passed.data["judgeError"] in {"llm_timeout", "run_budget_spent"}
    judge_ms = passed.data["judgeMs"]
    assert isinstance(judge_ms, int)
    assert judge_ms < 5_000  # the run's 5 s, not the judge's 30 s
    assert summary.duration_ms < 15_000


def test_no_judge_is_asked_once_the_run_budget_is_spent() -> None:
    """With no time left the Claude judge sends nothing and says why; it never blocks (#18)."""
    api = FakeMessagesApi().start()
    try:
        judge = ClaudeJudge(Claude(api_key="k", base_url=api.url), timeout_ms=30_000)
        judgement = judge.judge(JudgeInput(subtask="Fix it.", diff="+x", budget_s=0.0))
        judge.close()
    finally:
        api.stop()
    assert judgement.verdict is None
    assert judgement.error == "run_budget_spent"
    assert not judgement.rejects
    assert api.requests == []


@pytest.mark.parametrize(
    ("configured", "chosen"), [("command", "scripted"), ("claude-code", "scripted")]
)
def test_the_report_names_the_subagent_that_ran(
    project_dir: Path, configured: str, chosen: str
) -> None:
    """`reflexkit run --subagent X` writes X in every report, whatever project.json says (#18)."""
    (project_dir / ".reflexkit").mkdir()
    config = {
        "reflexion": {"backend": "heuristic"},
        "orchestrator": {"subagent": configured, "maxAttempts": 1},
        "verification": {"commands": [f"{PY} -c 'import sys; sys.exit(1)'"]},
        "reports": {"enabled": True},
    }
    (project_dir / ".reflexkit" / "project.json").write_text(json.dumps(config))
    task = {"id": "t", "subtasks": [{"id": "s", "description": "Write a.txt."}]}
    (project_dir / "task.json").write_text(json.dumps(task))
    (project_dir / "script.json").write_text(json.dumps({"s": [{"a.txt": "a\n"}]}))
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", chosen, "--script", "script.json"]
    )
    assert result.exit_code == 1, result.output
    (report,) = read_reports(project_dir / ".reflexkit" / "reports")
    assert report["agent"] == chosen


def test_the_run_budget_caps_a_claude_reflection(
    repo: Path, agent: Agent, run: Run, claude_env: FakeMessagesApi
) -> None:
    """A reflection asked for near the end of the run gets the time left, not its own 30 s."""
    claude_env.hang(60)
    project = project_of(repo)
    project = attrs.evolve(
        project,
        config=attrs.evolve(
            project.config,
            reflexion=attrs.evolve(
                project.config.reflexion,
                backend=GeneratorBackend.LLM,
                generation_timeout_ms=30_000,
            ),
            orchestrator=OrchestratorConfig(run_timeout_s=5, max_attempts=1),
        ),
    )
    summary, events = run(
        project, agent.plan({"files": {}, "message": "I changed nothing."}), fakes=False
    )
    assert summary.outcomes[0].outcome in {"exhausted", "budget"}
    assert summary.duration_ms < 15_000  # the run's 5 s, not the generator's 30 s
    reflected = [e for e in events if e.kind is EventKind.REFLECTION_GENERATED]
    if reflected:  # the heuristic stood in when Claude ran out of the run's time
        assert reflected[0].data["source"] == "heuristic"
        assert reflected[0].data["reason"] in {"llm_timeout", "run_budget_spent"}
