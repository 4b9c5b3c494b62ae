"""Parallel subtasks (``orchestrator.jobs > 1``) with real parts.

A small thread-aware subagent writes one file per subtask; verification is a real Python
process that checks that file; reflections come from the container's heuristic service.
Concurrency is proven with barriers and events, never with timings.
"""

from __future__ import annotations

import shlex
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from reflexkit.events import Event, RunLog
from reflexkit.orchestrator._loop import Orchestrator
from reflexkit.orchestrator._outcomes import RunSummary
from reflexkit.orchestrator._subagents import SubagentRequest, SubagentResult
from reflexkit.orchestrator._verify import Verifier
from reflexkit.tasks._config import OrchestratorConfig
from reflexkit.tasks._task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.containers import Application
    from reflexkit.reflection._protocols import ReflectionService

PY = shlex.quote(sys.executable)
CHECK = (
    "import pathlib, sys\n"
    "path = pathlib.Path(sys.argv[1] + '.txt')\n"
    "raise SystemExit(0 if path.exists() and path.read_text() == 'ok' else 1)\n"
)


class Agent:
    """Writes ``<subtask>.txt`` in the workdir, recording starts and finishes under a lock.

    Args:
        before: Called before writing (wait on a barrier or an event); a
            :class:`threading.BrokenBarrierError` makes the attempt fail with ``ok=False``.
        content: What to write for a request (``"ok"`` passes verification).
    """

    def __init__(
        self,
        before: Callable[[SubagentRequest], object] | None = None,
        content: Callable[[SubagentRequest], str] = lambda _r: "ok",
    ) -> None:
        self.before = before
        self.content = content
        self.lock = threading.Lock()
        self.log: list[tuple[str, str]] = []
        self.running = 0
        self.max_running = 0

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Wait as told, then write the file."""
        with self.lock:
            self.log.append(("start", request.subtask_id))
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            if self.before is not None:
                self.before(request)
            path = request.workdir / f"{request.subtask_id}.txt"
            path.write_text(self.content(request), encoding="utf-8")
        except threading.BrokenBarrierError:
            return SubagentResult(ok=False, output="", duration_ms=0, error="barrier broken")
        finally:
            with self.lock:
                self.running -= 1
                self.log.append(("finish", request.subtask_id))
        return SubagentResult(ok=True, output="wrote it", duration_ms=0)

    def index(self, what: str, subtask_id: str) -> int:
        """Where ``(what, subtask_id)`` is in the log."""
        return self.log.index((what, subtask_id))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty project with the checker script."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "check.py").write_text(CHECK, encoding="utf-8")
    return work


@pytest.fixture
def service(reflexkit_app: Application) -> ReflectionService:
    """The container's reflection service (heuristic generator, memory in a list)."""
    return reflexkit_app.reflection.service()  # type: ignore[no-any-return]


def sub(subtask_id: str, *depends_on: str) -> Subtask:
    """A subtask verified by ``check.py <id>``."""
    return Subtask(
        id=subtask_id,
        description=f"Write {subtask_id}.txt.",
        depends_on=depends_on,
        verify=(f"{PY} check.py {subtask_id}",),
    )


Run = Callable[..., RunSummary]


@pytest.fixture
def run(service: ReflectionService, workdir: Path) -> Run:
    """Run subtasks with a subagent and an orchestrator config."""

    def go(
        agent: Agent,
        subtasks: tuple[Subtask, ...],
        *,
        on_event: Callable[[Event], None] | None = None,
        **config: int,
    ) -> RunSummary:
        orchestrator = Orchestrator(
            service=service,
            subagent=agent,
            verifier_for=lambda s: Verifier(s.verify, timeout_s=20),
            config=OrchestratorConfig(**config),  # type: ignore[arg-type]
            on_event=on_event,
        )
        return orchestrator.run(Task(id="jobs", subtasks=subtasks), workdir=workdir)

    return go


def test_independent_subtasks_run_at_once(run: Run) -> None:
    """Two subtasks meet at a barrier: only possible when both run at the same time."""
    barrier = threading.Barrier(2, timeout=10)
    agent = Agent(before=lambda _r: barrier.wait())
    summary = run(agent, (sub("a"), sub("b")), jobs=2, max_attempts=1)
    assert summary.passed
    assert [(o.subtask_id, o.outcome, o.attempts) for o in summary.outcomes] == [
        ("a", "passed", 1),
        ("b", "passed", 1),
    ]
    assert agent.max_running == 2


def test_one_job_runs_one_at_a_time(run: Run) -> None:
    """With jobs=1 the same barrier breaks: the subtasks ran one after another."""
    barrier = threading.Barrier(2, timeout=0.5)
    agent = Agent(before=lambda _r: barrier.wait())
    summary = run(agent, (sub("a"), sub("b")), jobs=1, max_attempts=1)
    assert not summary.passed
    assert summary.outcome("a").outcome == "exhausted"
    assert agent.max_running == 1
    assert agent.log == [("start", "a"), ("finish", "a"), ("start", "b"), ("finish", "b")]


def test_depends_on_is_honoured(run: Run) -> None:
    """A subtask starts only after every subtask it depends on finished."""
    agent = Agent()
    subtasks = (sub("d", "c", "b"), sub("a"), sub("c", "a"), sub("b"), sub("e"))
    summary = run(agent, subtasks, jobs=3, max_attempts=1)
    assert summary.passed
    assert agent.index("finish", "a") < agent.index("start", "c")
    assert agent.index("finish", "c") < agent.index("start", "d")
    assert agent.index("finish", "b") < agent.index("start", "d")
    assert agent.max_running <= 3


def test_at_most_jobs_at_a_time(run: Run) -> None:
    """Never more than ``jobs`` subtasks run at once."""
    agent = Agent()
    summary = run(agent, tuple(sub(f"s{i}") for i in range(6)), jobs=2, max_attempts=1)
    assert summary.passed
    assert agent.max_running <= 2


def test_outcome_order_is_the_sequential_order(run: Run) -> None:
    """Outcomes come in dependsOn order whatever the completion order; skips still cascade."""
    fast_done = threading.Event()

    def before(request: SubagentRequest) -> None:
        if request.subtask_id == "slow":  # finishes only after "fast" has
            assert fast_done.wait(timeout=10)

    def content(request: SubagentRequest) -> str:
        if request.subtask_id == "fast":
            fast_done.set()
        return "bad" if request.subtask_id == "broken" else "ok"

    subtasks = (
        sub("after-broken", "broken"),
        sub("slow"),
        sub("broken"),
        sub("after-after", "after-broken"),
        sub("fast"),
        sub("after-slow", "slow"),
    )
    parallel = run(Agent(before, content), subtasks, jobs=3, max_attempts=1)
    fast_done.set()
    sequential = run(Agent(content=content), subtasks, jobs=1, max_attempts=1)
    expected = [
        ("slow", "passed"),
        ("broken", "exhausted"),
        ("after-broken", "skipped"),
        ("after-after", "skipped"),
        ("fast", "passed"),
        ("after-slow", "passed"),
    ]
    assert [(o.subtask_id, o.outcome) for o in parallel.outcomes] == expected
    assert [(o.subtask_id, o.outcome) for o in sequential.outcomes] == expected
    assert parallel.outcome("after-broken").reason == "dependency did not pass: broken"
    assert parallel.outcome("after-after").reason == "dependency did not pass: after-broken"


def test_run_log_from_many_threads(run: Run, tmp_path: Path) -> None:
    """Events of subtasks running at once all reach the run log, one whole line each."""
    ids = [f"s{i}" for i in range(4)]
    barrier = threading.Barrier(len(ids), timeout=10)

    def before(request: SubagentRequest) -> None:
        if request.attempt == 1:
            barrier.wait()

    agent = Agent(before, content=lambda r: "ok" if r.attempt > 1 else "not yet")
    log_path = tmp_path / "runs" / "run.jsonl"
    with RunLog(log_path) as run_log:
        summary = run(agent, tuple(sub(i) for i in ids), on_event=run_log.write, jobs=4)
    assert summary.passed
    lines = [orjson.loads(line) for line in log_path.read_bytes().splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert lines[-1]["data"]["passed"] == len(ids)
    for subtask_id in ids:
        own = [line["kind"] for line in lines if line["subtaskId"] == subtask_id]
        assert own == [
            "attempt_started",
            "verification_failed",
            "reflection_generated",
            "retry",
            "attempt_started",
            "passed",
        ]


def test_cycle_is_skipped_not_hung(run: Run) -> None:
    """A cycle (load_task rejects them) cannot deadlock the scheduler: it is skipped."""
    agent = Agent()
    summary = run(agent, (sub("x", "y"), sub("y", "x"), sub("z")), jobs=2, max_attempts=1)
    assert [(o.subtask_id, o.outcome) for o in summary.outcomes] == [
        ("z", "passed"),
        ("x", "skipped"),
        ("y", "skipped"),
    ]
    assert summary.outcome("x").reason == "dependency did not pass: y"
