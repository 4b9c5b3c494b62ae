"""The insight steps in the real retry loop (#17): paused subtasks, findings, nudges, lessons.

Every test runs the real Orchestrator with real verification commands in subprocesses and
real run logs; the rules are the live HistoryRules over those logs unless a test needs fixed
answers (FixedRules, the port's fake). The LLM path of the analysis goes through the real
anthropic SDK to the fake Messages API.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import orjson
import pytest

from reflexkit.containers import build_application
from reflexkit.events import Event, EventKind, RunLog
from reflexkit.exceptions import StoreError
from reflexkit.insights import (
    LESSONS_HEADING,
    AnalysisCycle,
    ClaudeAnalyst,
    FindingLog,
    FixedRules,
    HistoryRules,
    InMemoryLessons,
    Lesson,
    PausedSubtasks,
    RunLogReader,
)
from reflexkit.insights._rules import NUDGE_HEADING
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.memory import InMemoryMemory
from reflexkit.models import (
    FailureContext,
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
)
from reflexkit.orchestrator._insight_steps import LoopInsights, changed_files, snapshot
from reflexkit.orchestrator._loop import Orchestrator
from reflexkit.orchestrator._outcomes import RunSummary
from reflexkit.orchestrator._subagents import (
    CommandSubagent,
    ScriptedSubagent,
    SubagentRequest,
    SubagentResult,
)
from reflexkit.orchestrator._verify import verifier_factory
from reflexkit.tasks._config import (
    InsightsConfig,
    OrchestratorConfig,
    VerificationConfig,
    load_project,
)
from reflexkit.tasks._task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.containers import Application, FakeServices
    from reflexkit.memory._protocols import MemoryStats
    from reflexkit.testing.fake_messages_api import FakeMessagesApi

PY = shlex.quote(sys.executable)
FAIL = f"{PY} -c \"import sys; print('AssertionError: total is 0'); sys.exit(1)\""
PASS = f'{PY} -c "pass"'


def _run(loop: Orchestrator, task: Task, root: Path, workdir: Path) -> RunSummary:
    """One run, logged where the rules read: .reflexkit/runs/<run id>.jsonl under *root*."""
    run_id = f"run{len(list((root / '.reflexkit' / 'runs').glob('*.jsonl'))):03d}"
    with RunLog(root / ".reflexkit" / "runs" / f"{run_id}.jsonl") as log:
        loop.on_event = log.write
        return loop.run(task, workdir=workdir, run_id=run_id)


def _events(root: Path, run_id: str) -> list[dict[str, object]]:
    path = root / ".reflexkit" / "runs" / f"{run_id}.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


# --- paused subtasks ---------------------------------------------------------------------------


_AGENT = """\
import pathlib, re, sys
prompt = sys.stdin.read()
subtask = re.search(r"# Subtask: (\\w+)", prompt).group(1)
with open(sys.argv[1], "a") as calls:
    calls.write(subtask + "\\n")
print("worked on", subtask, "and changed what it could")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose rules pause a subtask after 2 failed runs; heuristic reflections."""
    root = tmp_path / "project"
    (root / ".reflexkit").mkdir(parents=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "orchestrator": {"maxAttempts": 1},
                "insights": {"consecutiveFailureLimit": 2},
            }
        )
    )
    (root / "work").mkdir()
    (root / "agent.py").write_text(_AGENT)
    return root


def _calls(root: Path) -> list[str]:
    path = root / "calls.log"
    return path.read_text().split() if path.exists() else []


def test_a_paused_subtask_spends_no_attempt_until_resumed(project: Path) -> None:
    """Failed in its last 2 runs: skipped with 0 attempts, its agent never started; resume."""
    task = Task(
        id="shop",
        description="Make the shop work.",
        subtasks=(
            Subtask(id="cart", description="Fix the cart.", verify=(FAIL,)),
            Subtask(id="tax", description="Fix tax.", verify=(PASS,)),
            Subtask(id="ship", description="Ship it.", verify=(PASS,), depends_on=("cart",)),
        ),
    )
    app = build_application(load_project(cwd=project))
    agent = CommandSubagent([sys.executable, str(project / "agent.py"), str(project / "calls.log")])

    def run() -> RunSummary:
        loop = app.orchestration.orchestrator(subagent=agent)  # what `reflexkit run` builds
        return _run(loop, task, project, project / "work")

    for _ in range(2):
        assert run().outcome("cart").outcome == "exhausted"
    before = _calls(project)
    assert before.count("cart") == 2

    paused = run()
    cart = paused.outcome("cart")
    assert (cart.outcome, cart.attempts) == ("paused", 0)
    assert "stuck or exhausted in its last 2 runs" in (cart.reason or "")
    assert paused.outcome("ship").outcome == "skipped"  # depends on what did not pass
    assert paused.outcome("tax").outcome == "passed"
    assert _calls(project)[len(before) :] == ["tax"]  # the agent never saw cart
    events = _events(project, paused.run_id)
    kinds = [(e["kind"], e["subtaskId"]) for e in events]
    assert ("paused", "cart") in kinds
    assert ("attempt_started", "cart") not in kinds
    finding = next(e for e in events if e["kind"] == "finding")
    assert finding["data"]["rule"] == "consecutive_failures"  # type: ignore[index]
    assert finding["data"]["actionTaken"] == "paused"  # type: ignore[index]
    finished = events[-1]
    assert finished["kind"] == "run_finished"
    assert finished["data"]["paused"] == 1  # type: ignore[index]

    # `reflexkit run` itself (a real process) skips it too, and says so.
    (project / "task.json").write_text(
        json.dumps(
            {
                "id": "shop",
                "description": "Make the shop work.",
                "subtasks": [
                    {"id": "cart", "description": "Fix the cart.", "verify": [FAIL]},
                    {"id": "tax", "description": "Fix tax.", "verify": [PASS]},
                ],
            }
        )
    )
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexkit",
            "run",
            "task.json",
            "--agent-command",
            shlex.join([sys.executable, str(project / "agent.py"), str(project / "calls.log")]),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "[cart]: paused, not attempted" in cli.stdout, cli.stdout + cli.stderr
    assert _calls(project)[len(before) :] == ["tax", "tax"]  # the agent still never saw cart

    resumed = subprocess.run(
        [sys.executable, "-m", "reflexkit", "resume", "cart", "--task", "shop"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    again = run()
    assert again.outcome("cart").outcome == "exhausted"
    assert again.outcome("cart").attempts == 1
    assert _calls(project).count("cart") == 3


# --- events, nudges and time-outs through the run log -----------------------------------------


def _git(work: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)


def _live_rules(root: Path, **config: object) -> LoopInsights:
    settings = InsightsConfig(**config)  # type: ignore[arg-type]
    state = root / ".reflexkit"
    lessons = InMemoryLessons()
    return LoopInsights(
        rules=HistoryRules(
            runs=state / "runs",
            findings=FindingLog(state / "insights.jsonl"),
            paused=PausedSubtasks(state / "paused.jsonl"),
            config=settings,
        ),
        lessons=lessons,
        config=settings,
    )


def test_an_attempt_that_changed_nothing_gets_a_nudge_in_a_dirty_git_tree(
    reflexkit_app: Application, tmp_path: Path
) -> None:
    """Git status stays dirty after attempt 1; attempt 2 changed nothing, so attempt 3 is told."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "cart.py").write_text("TOTAL = 0\n")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    fail = (
        f"{PY} -c \"import cart, sys; print('AssertionError: total is', cart.TOTAL); sys.exit(1)\""
    )
    task = Task(
        id="shop",
        description="",
        subtasks=(Subtask(id="cart", description="Fix the cart.", verify=(fail,)),),
    )
    agent = ScriptedSubagent({"cart": [{"cart.py": "TOTAL = 0  # looked\n"}, {}, {}]})
    loop = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=agent,
        verifier_for=verifier_factory(VerificationConfig()),
        config=OrchestratorConfig(max_attempts=3, stuck_after=3),
        insights=_live_rules(tmp_path),
    )
    summary = _run(loop, task, tmp_path, work)
    assert summary.outcome("cart").outcome == "stuck"
    failed = [e for e in _events(tmp_path, summary.run_id) if e["kind"] == "verification_failed"]
    data = [e["data"] for e in failed]
    assert [d["filesModified"] for d in data] == ["cart.py", "", ""]  # type: ignore[index]
    assert all(d["fingerprint"] for d in data)  # type: ignore[index]
    outputs = ["scripted: edited cart.py", "scripted: edited nothing", "scripted: edited nothing"]
    assert [d["outputChars"] for d in data] == [len(o) for o in outputs]  # type: ignore[index]
    assert [d["timedOut"] for d in data] == [False, False, False]  # type: ignore[index]
    first, second, third = agent.prompts
    assert NUDGE_HEADING not in first
    assert NUDGE_HEADING not in second  # attempt 1 changed cart.py
    assert NUDGE_HEADING in third
    assert third.index("## Learning from Previous Failures") < third.index(NUDGE_HEADING)
    rules = [
        e["data"]["rule"]  # type: ignore[index]
        for e in _events(tmp_path, summary.run_id)
        if e["kind"] == "finding"
    ]
    assert "no_change_repeat" in rules


def test_time_outs_of_the_new_loop_read_as_time_outs(
    reflexkit_app: Application, tmp_path: Path
) -> None:
    """Subagent time-outs written by today's loop make the timeout_pattern finding."""
    work = tmp_path / "work"
    work.mkdir()
    timed_out = SubagentResult(
        ok=False, output="", duration_ms=1_000, error="timed out after 1 s", timed_out=True
    )
    task = Task(
        id="shop", description="", subtasks=(Subtask(id="cart", description="x", verify=(PASS,)),)
    )
    loop = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=ScriptedSubagent({"cart": [timed_out, timed_out]}),
        verifier_for=verifier_factory(VerificationConfig()),
        config=OrchestratorConfig(max_attempts=2, stuck_after=3),
        insights=_live_rules(tmp_path, timeout_limit=2),
    )
    summary = _run(loop, task, tmp_path, work)
    events = _events(tmp_path, summary.run_id)
    failed = [e["data"] for e in events if e["kind"] == "verification_failed"]
    assert [(d["failureType"], d["timedOut"]) for d in failed] == [("timeout", True)] * 2  # type: ignore[index]
    findings = [e["data"] for e in events if e["kind"] == "finding"]
    timeouts = [f for f in findings if f["rule"] == "timeout_pattern"]  # type: ignore[index]
    assert len(timeouts) == 1  # after the second attempt, not the first
    assert timeouts[0]["subjectId"] == "cart"  # type: ignore[index]
    assert "raise orchestrator.attemptTimeoutS" in timeouts[0]["detail"]  # type: ignore[operator]
    records = list(RunLogReader(tmp_path / ".reflexkit" / "runs").history().attempts())
    assert [a.timed_out for a in records] == [True, True]


def test_budget_and_interrupted_runs_are_not_failed_runs(tmp_path: Path) -> None:
    """Endings #14 added (budget_spent, interrupted, setup_failed) neither pause nor reset."""
    runs = tmp_path / ".reflexkit" / "runs"
    endings = ["exhausted", "budget_spent", "interrupted", "setup_failed", "exhausted"]
    for index, kind in enumerate(endings):
        with RunLog(runs / f"r{index}.jsonl") as log:
            log.write(Event(kind=EventKind.RUN_STARTED, data={"runId": f"r{index}", "taskId": "t"}))
            log.write(Event(kind=EventKind.ATTEMPT_STARTED, subtask_id="cart", attempt=1))
            log.write(
                Event(
                    kind=EventKind.VERIFICATION_FAILED,
                    subtask_id="cart",
                    attempt=1,
                    data={"failureType": "test_failure", "fingerprint": "f"},
                )
            )
            log.write(Event(kind=EventKind(kind), subtask_id="cart", attempt=1))
    history = RunLogReader(runs).history()
    assert [r.outcome for r in history.of("t", "cart")] == [
        "exhausted",
        "budget",
        "interrupted",
        "setup_error",
        "exhausted",
    ]
    assert history.unknown_kinds == 0
    task = Task(id="t", description="", subtasks=(Subtask(id="cart", description="x"),))
    # Three runs in a row did not end exhausted, but they were no passes either: 2 failed runs.
    assert _live_rules(tmp_path, consecutive_failure_limit=3).start(task).paused == {}
    assert "cart" in _live_rules(tmp_path, consecutive_failure_limit=2).start(task).paused


# --- lessons that travel --------------------------------------------------------------------------


@attrs.define
class _CountingMemory:
    """Episodic memory that counts what is read: records per ``recent`` call, and scans."""

    inner: InMemoryMemory
    read: list[int] = attrs.Factory(list)
    scans: int = 0

    def append(self, reflection: Reflection, /) -> None:
        self.inner.append(reflection)

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        found = self.inner.recent(subtask_id, limit=limit, task_id=task_id)
        self.read.append(len(found))
        return found

    def prune(self, *, older_than: object) -> int:
        return self.inner.prune(older_than=older_than)  # type: ignore[arg-type]

    def stats(self) -> MemoryStats:
        return self.inner.stats()

    def __iter__(self) -> Iterator[Reflection]:
        self.scans += 1
        return iter(self.inner)


def _test_module(helper: str) -> str:
    return (
        "import unittest\n"
        f"import {helper}\n\n\n"
        "class TestIt(unittest.TestCase):\n"
        "    def test_ok(self):\n"
        f"        self.assertEqual({helper}.VALUE, 1)\n"
    )


def _old_reflection(index: int) -> Reflection:
    return Reflection(
        id=f"old-{index}",
        category=ReflectionCategory.ROOT_CAUSE,
        analysis=f"Analysis {index}.",
        confidence=0.5,
        source=ReflectionSource.HEURISTIC,
        task_id="old",
        subtask_id=f"old{index % 7}",
        attempt_number=1,
        session_id="an-old-run",
        failure_type=FailureType.TEST_FAILURE,
        suggestion=f"Suggestion {index}.",
        fingerprint=f"old-{index}",
    )


def test_the_second_subtask_first_retry_carries_the_first_ones_lesson(
    reflexkit_app: Application, reflexkit_fakes: FakeServices, tmp_path: Path
) -> None:
    """Both miss a helper module; tax's first retry has cart's lesson; recent reads K."""
    memory = _CountingMemory(InMemoryMemory([_old_reflection(i) for i in range(300)]))
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_cart.py").write_text(_test_module("cart_helpers"))
    (work / "test_tax.py").write_text(_test_module("tax_helpers"))
    task = Task(
        id="shop",
        description="Make the shop's tests pass.",
        subtasks=(
            Subtask(id="cart", description="Fix cart.", verify=(f"{PY} -m unittest test_cart",)),
            Subtask(id="tax", description="Fix tax.", verify=(f"{PY} -m unittest test_tax",)),
        ),
    )
    agent = ScriptedSubagent(
        {
            "cart": [{"notes.txt": "looked around"}, {"cart_helpers.py": "VALUE = 1\n"}],
            "tax": [{"notes.txt": "looked again"}, {"tax_helpers.py": "VALUE = 1\n"}],
        }
    )
    with reflexkit_app.memory.store.override(memory):  # built from here on: nothing before
        loop = reflexkit_app.orchestration.orchestrator(subagent=agent)
        summary = _run(loop, task, tmp_path, work)
    assert summary.passed, summary
    learnt = {lesson.subtask_id: lesson for lesson in reflexkit_fakes.lessons()}
    assert set(learnt) == {"cart", "tax"}  # each pass teaches its lesson
    lesson = learnt["cart"]
    assert (lesson.task_id, lesson.tool) == ("shop", "unittest")
    cart_retry, tax_retry = (r.prompt for r in agent.requests if r.attempt == 2)
    assert LESSONS_HEADING not in cart_retry  # nothing learnt yet when cart retried
    assert LESSONS_HEADING in tax_retry
    assert "learnt on shop/cart" in tax_retry
    assert " ".join(lesson.suggestion.split()) in tax_retry
    assert "learnt on shop/tax" not in tax_retry  # never a subtask's own lesson
    assert tax_retry.index("## Learning from Previous Failures") < tax_retry.index(LESSONS_HEADING)
    assert tax_retry.count(LESSONS_HEADING) == 1  # carried once
    # The lookups never touched episodic memory: recent() read at most K, nothing scanned it.
    assert memory.scans == 0
    assert memory.read
    assert max(memory.read) <= 3
    events = _events(tmp_path, summary.run_id)
    passed = [e["data"] for e in events if e["kind"] == "passed"]
    assert [p["filesModified"] for p in passed] == ["cart_helpers.py", "tax_helpers.py"]  # type: ignore[index]
    assert all(isinstance(p["outputChars"], int) for p in passed)  # type: ignore[index]


class _BrokenLessons(InMemoryLessons):
    """A lesson book whose lookups and learning fail."""

    def lessons_for(self, *_args: object, **_kwargs: object) -> list[Lesson]:  # type: ignore[override]
        raise StoreError("the lessons file is gone")

    def learn(self, *_args: object, **_kwargs: object) -> Lesson | None:  # type: ignore[override]
        raise StoreError("the lessons file is gone")


def _failure(subtask: str) -> FailureContext:
    return FailureContext(
        task_id="shop",
        subtask_id=subtask,
        attempt_number=1,
        session_id="run-1",
        command="python -m pytest -q",
        error_output="E   ModuleNotFoundError: No module named 'yaml'",
    )


def test_broken_lessons_cost_the_lessons_not_the_run(
    reflexkit_app: Application, tmp_path: Path
) -> None:
    """A lesson book that raises: the run goes on and passes, the prompt has no lessons."""
    work = tmp_path / "work"
    work.mkdir()
    task = Task(
        id="shop",
        description="",
        subtasks=(Subtask(id="cart", description="x", verify=(f"{PY} -c 'import helper'",)),),
    )
    agent = ScriptedSubagent({"cart": [{}, {"helper.py": ""}]})
    loop = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=agent,
        verifier_for=verifier_factory(VerificationConfig()),
        insights=LoopInsights(rules=FixedRules(), lessons=_BrokenLessons()),
    )
    assert loop.run(task, workdir=work).passed
    assert LESSONS_HEADING not in agent.prompts[1]


def test_lessons_stay_within_the_prompt_budget() -> None:
    """The lessons use what the reflections left of maxPromptChars, and no more; 0: none."""
    lessons = InMemoryLessons()
    for index in range(5):
        lessons.add(
            Lesson(
                id=f"l{index}",
                fingerprint="",
                failure_type=FailureType.TEST_FAILURE,
                tool="pytest",
                suggestion=f"Lesson {index}: " + "install the package first. " * 8,
                subtask_id=f"other{index}",
            )
        )
    failure = attrs.evolve(_failure("tax"), failure_type=FailureType.TEST_FAILURE)
    for used in (0, 500, 3_000, 3_900):
        insights = LoopInsights(
            rules=FixedRules(), lessons=lessons, config=InsightsConfig(max_lessons=5)
        )
        section = insights.lessons_section(failure, fingerprint="", used=used)
        assert len(section) <= max(4_000 - used - 2, 0)
    assert LESSONS_HEADING in LoopInsights(
        rules=FixedRules(), lessons=lessons, config=InsightsConfig(max_lessons=5)
    ).lessons_section(failure, fingerprint="", used=0)
    off = LoopInsights(rules=FixedRules(), lessons=lessons, config=InsightsConfig(max_lessons=0))
    assert off.lessons_section(failure, fingerprint="", used=0) == ""


# --- the analysis: only on findings -------------------------------------------------------------


@pytest.fixture
def analyst(fake_messages_api: FakeMessagesApi) -> Iterator[ClaudeAnalyst]:
    """The real Claude analyst, pointed at the fake Messages API."""
    client = Claude(
        api_key="sk-ant-test", base_url=fake_messages_api.url, retry=RetryPolicy.no_wait()
    )
    with ClaudeAnalyst(client, timeout_ms=3_000) as built:
        yield built


def _analysing(root: Path, analyst: ClaudeAnalyst, **config: object) -> LoopInsights:
    settings = InsightsConfig(batch_threshold=1, **config)  # type: ignore[arg-type]
    state = root / ".reflexkit"
    findings = FindingLog(state / "insights.jsonl")
    paused = PausedSubtasks(state / "paused.jsonl")
    lessons = InMemoryLessons()
    return LoopInsights(
        rules=HistoryRules(runs=state / "runs", findings=findings, paused=paused, config=settings),
        lessons=lessons,
        analysis=AnalysisCycle(analyst=analyst, findings=findings, paused=paused, lessons=lessons),
        config=settings,
    )


def test_no_findings_no_llm_request_findings_one_per_batch(
    reflexkit_app: Application,
    fake_messages_api: FakeMessagesApi,
    analyst: ClaudeAnalyst,
    tmp_path: Path,
) -> None:
    """Analysis after every attempt: none is sent while nothing was found; then one is."""
    work = tmp_path / "work"
    work.mkdir()
    task = Task(
        id="shop",
        description="",
        subtasks=(
            Subtask(id="cart", description="x", verify=(f"{PY} -c 'import helper'",)),
            Subtask(id="tax", description="x", verify=(PASS,)),
        ),
    )
    scripted = {"cart": [{"a.py": "A = 1\n"}, {"helper.py": ""}]}

    def loop(insights: LoopInsights) -> Orchestrator:
        return Orchestrator(
            service=reflexkit_app.reflection.service(),
            subagent=ScriptedSubagent(scripted),
            verifier_for=verifier_factory(VerificationConfig()),
            insights=insights,
        )

    clean = _run(loop(_analysing(tmp_path, analyst)), task, tmp_path, work)
    assert clean.passed
    assert not [e for e in _events(tmp_path, clean.run_id) if e["kind"] == "finding"]
    assert fake_messages_api.requests == []  # three completed attempts, no findings, no call

    fake_messages_api.reply(
        {"summary": "cart says little.", "taskActions": [], "lessonActions": []}
    )
    work2 = tmp_path / "work2"
    work2.mkdir()
    # The agent's output (35 characters) is now "stale": a finding after cart's failure.
    stale = _run(
        loop(_analysing(tmp_path, analyst, min_result_length=1_000, consecutive_failure_limit=2)),
        task,
        tmp_path,
        work2,
    )
    assert stale.passed
    rules = {e["data"]["rule"] for e in _events(tmp_path, stale.run_id) if e["kind"] == "finding"}  # type: ignore[index]
    assert "stale_output" in rules
    assert len(fake_messages_api.requests) >= 1
    assert "stale_output" in fake_messages_api.requests[0].json["messages"][0]["content"]


# --- insights off -------------------------------------------------------------------------------


def test_insights_disabled_changes_nothing_in_the_loop(
    reflexkit_app: Application, tmp_path: Path
) -> None:
    """enabled=false: the same prompts, outcomes and events as a loop without insights."""
    task = Task(
        id="shop",
        description="Make it work.",
        subtasks=(
            Subtask(id="cart", description="x", verify=(f"{PY} -c 'import helper'",)),
            Subtask(id="tax", description="y", verify=(PASS,)),
        ),
    )
    rules = FixedRules(paused={"tax": "paused"}, nudges={"cart": "## Note\nchange something"})
    lessons = InMemoryLessons()
    lessons.add(
        Lesson(
            id="l1",
            fingerprint="",
            failure_type=FailureType.RUNTIME_ERROR,
            tool="python",
            suggestion="Create helper.py.",
            subtask_id="elsewhere",
        )
    )
    seen: list[tuple[list[str], list[tuple[str, str, int, list[str]]], list[str]]] = []
    for index, insights in enumerate(
        (None, LoopInsights(rules=rules, lessons=lessons, config=InsightsConfig(enabled=False)))
    ):
        work = tmp_path / f"work{index}"
        work.mkdir()
        agent = ScriptedSubagent({"cart": [{}, {"helper.py": ""}]})
        events: list[Event] = []
        loop = Orchestrator(
            service=reflexkit_app.reflection.service(),
            subagent=agent,
            verifier_for=verifier_factory(VerificationConfig()),
            on_event=events.append,
            insights=insights,
        )
        summary = loop.run(task, workdir=work, run_id=f"same-{index}")
        seen.append(
            (
                agent.prompts,
                [(e.kind.value, e.subtask_id, e.attempt, sorted(e.data)) for e in events],
                [o.outcome for o in summary.outcomes],
            )
        )
    assert seen[0] == seen[1]
    assert rules.asked == []
    assert all("filesModified" not in keys for *_, keys in seen[0][1])


def test_snapshots_see_one_attempts_changes_and_skip_caches(tmp_path: Path) -> None:
    """Added, rewritten and deleted files count; the run log, caches and venvs do not."""
    (tmp_path / "keep.py").write_text("A = 1\n")
    (tmp_path / "gone.py").write_text("B = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("C = 1\n")
    before = snapshot(tmp_path)
    assert before is not None
    assert set(before) == {"keep.py", "gone.py", "pkg/mod.py"}
    (tmp_path / "pkg" / "mod.py").write_text("C = 22\n")
    (tmp_path / "gone.py").unlink()
    (tmp_path / "new.py").write_text("")
    for cache in (".reflexkit/runs", "pkg/__pycache__", ".venv/lib"):
        (tmp_path / cache).mkdir(parents=True)
        (tmp_path / cache / "x").write_text("noise")
    assert changed_files(before, snapshot(tmp_path)) == ("gone.py", "new.py", "pkg/mod.py")
    assert changed_files(before, None) is None


def test_paused_subtasks_with_parallel_jobs(reflexkit_app: Application, tmp_path: Path) -> None:
    """With jobs=2 a paused subtask is skipped as well, and its dependants with it."""
    task = Task(
        id="shop",
        description="",
        subtasks=(
            Subtask(id="cart", description="x", verify=(PASS,)),
            Subtask(id="tax", description="y", verify=(PASS,)),
            Subtask(id="ship", description="z", verify=(PASS,), depends_on=("cart",)),
            Subtask(id="docs", description="w", verify=(PASS,)),
        ),
    )
    agent = ScriptedSubagent({})
    rules = FixedRules(paused={"cart": "stuck in its last 3 runs"})
    loop = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=agent,
        verifier_for=verifier_factory(VerificationConfig()),
        config=OrchestratorConfig(jobs=2),
        insights=LoopInsights(rules=rules, lessons=InMemoryLessons()),
    )
    summary = loop.run(task, workdir=tmp_path)
    assert [(o.subtask_id, o.outcome, o.attempts) for o in summary.outcomes] == [
        ("cart", "paused", 0),
        ("tax", "passed", 1),
        ("ship", "skipped", 0),
        ("docs", "passed", 1),
    ]
    assert sorted(r.subtask_id for r in agent.requests) == ["docs", "tax"]
    assert rules.asked == [("start", "shop")]


# --- the rules follow the loop's events in-process (#25) -----------------------------------------


def _timing_out_project(root: Path) -> Path:
    (root / ".reflexkit").mkdir(parents=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "orchestrator": {"maxAttempts": 3, "stuckAfter": 5},
            }
        )
    )
    return root


def test_a_loop_built_from_python_with_no_run_log_fires_the_rules(tmp_path: Path) -> None:
    """docs/orchestrator.md's loop (``on_event=...``, no RunLog): 3 time-outs, a finding."""
    root = _timing_out_project(tmp_path / "project")
    timed_out = SubagentResult(
        ok=False, output="", duration_ms=1_000, error="timed out after 1 s", timed_out=True
    )
    task = Task(
        id="shop", description="", subtasks=(Subtask(id="cart", description="x", verify=(PASS,)),)
    )
    app = build_application(load_project(cwd=root))
    seen: list[Event] = []
    orchestrator = app.orchestration.orchestrator(
        subagent=ScriptedSubagent({"cart": [timed_out] * 3}), on_event=seen.append
    )
    summary = orchestrator.run(task, workdir=root)
    assert summary.outcome("cart").attempts == 3
    assert not (root / ".reflexkit" / "runs").exists()  # nothing was logged to a file
    findings = [e for e in seen if e.kind is EventKind.FINDING]
    timeouts = [e for e in findings if e.data["rule"] == "timeout_pattern"]
    assert [(e.subtask_id, e.attempt) for e in timeouts] == [("cart", 3)]
    assert "no_change_repeat" in {e.data["rule"] for e in findings}


def test_every_subscriber_gets_every_event_though_one_raises(tmp_path: Path) -> None:
    """Subscribers are called in order; one that raises costs only itself."""
    root = _timing_out_project(tmp_path / "project")
    task = Task(
        id="shop", description="", subtasks=(Subtask(id="cart", description="x", verify=(PASS,)),)
    )
    app = build_application(load_project(cwd=root))
    first: list[EventKind] = []
    last: list[EventKind] = []

    def broken(event: Event) -> None:
        raise RuntimeError(event.kind)

    orchestrator = app.orchestration.orchestrator(
        subagent=ScriptedSubagent({"cart": [{}]}),
        subscribers=[lambda e: first.append(e.kind), broken],
        on_event=lambda e: last.append(e.kind),
    )
    assert orchestrator.run(task, workdir=root).passed
    assert first == last
    assert first[0] is EventKind.RUN_STARTED
    assert first[-1] is EventKind.RUN_FINISHED


def test_two_loops_sharing_the_rules_follow_their_own_runs(tmp_path: Path) -> None:
    """Two runs at once in one process, one container: each run's events feed its own run."""
    root = _timing_out_project(tmp_path / "project")
    app = build_application(load_project(cwd=root))
    both_started = threading.Barrier(2, timeout=30)

    class TimingOut:
        """Times out every attempt; the first attempts wait until both runs have started."""

        def run(self, request: SubagentRequest) -> SubagentResult:
            if request.attempt == 1:
                both_started.wait()
            return SubagentResult(
                ok=False, output="", duration_ms=1_000, error="timed out after 1 s", timed_out=True
            )

    seen: dict[str, list[Event]] = {"a": [], "b": []}

    def run(task_id: str) -> None:
        task = Task(
            id=task_id,
            description="",
            subtasks=(Subtask(id="cart", description="x", verify=(PASS,)),),
        )
        loop = app.orchestration.orchestrator(subagent=TimingOut(), on_event=seen[task_id].append)
        loop.run(task, workdir=root, run_id=f"run-{task_id}")

    threads = [threading.Thread(target=run, args=(t,)) for t in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for task_id, events in seen.items():
        timeouts = [
            e for e in events if e.kind is EventKind.FINDING and e.data["rule"] == "timeout_pattern"
        ]
        assert [(e.data["taskId"], e.attempt) for e in timeouts] == [(task_id, 3)], task_id


def test_named_events_for_a_flagged_file_and_a_finished_analysis(
    reflexkit_app: Application,
    fake_messages_api: FakeMessagesApi,
    analyst: ClaudeAnalyst,
    tmp_path: Path,
) -> None:
    """A file in failed attempts is `file_flagged`; each analysis ends `analysis_completed`.

    The analysis is told the run's active subtasks and the error each failure printed.
    """
    work = tmp_path / "work"
    work.mkdir()
    task = Task(
        id="shop",
        description="",
        subtasks=(
            Subtask(id="cart", description="x", verify=(FAIL,)),
            Subtask(id="tax", description="x", verify=(PASS,)),
        ),
    )
    edits = [{"src_cart.py": f"TOTAL = {n}\n"} for n in range(3)]
    for _ in range(3):
        fake_messages_api.reply(
            {
                "summary": "cart keeps failing in src_cart.py.",
                "taskActions": [],
                "lessonActions": [],
            }
        )
    loop = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=ScriptedSubagent({"cart": edits}),
        verifier_for=verifier_factory(VerificationConfig()),
        insights=_analysing(tmp_path, analyst, consecutive_failure_limit=2),
    )
    summary = _run(loop, task, tmp_path, work)
    events = _events(tmp_path, summary.run_id)
    flagged = [e for e in events if e["kind"] == "file_flagged"]
    assert flagged
    assert flagged[0]["data"]["path"] == "src_cart.py"  # type: ignore[index]
    assert flagged[0]["subtaskId"] == "cart"
    completed = [e for e in events if e["kind"] == "analysis_completed"]
    assert completed
    data = completed[-1]["data"]
    assert data["source"] == "llm"  # type: ignore[index]
    assert data["findingsCount"] >= 1  # type: ignore[index,operator]
    assert data["actionsRecommended"] == 0  # type: ignore[index]
    prose = [
        e
        for e in events
        if e["kind"] == "finding" and e["data"]["subjectType"] == "analysis"  # type: ignore[index]
    ]
    assert prose[0]["data"]["detail"] == "cart keeps failing in src_cart.py."  # type: ignore[index]
    content = fake_messages_api.requests[-1].json["messages"][0]["content"]
    history = json.loads(content.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    assert {t["subtaskId"]: t["status"] for t in history["activeTasks"]} == {
        "cart": "active",
        "tax": "active",
    }
    assert "AssertionError: total is 0" in history["recentFailures"][0]["error"]
