"""The reflection gate in Python (#16), and staged events for parallel runs."""

from __future__ import annotations

import random
import shlex
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reflexkit.events import Event, EventKind, StagedEvents
from reflexkit.orchestrator._loop import Orchestrator
from reflexkit.orchestrator._outcomes import run_order
from reflexkit.orchestrator._subagents import ScriptedSubagent
from reflexkit.orchestrator._verify import Verifier
from reflexkit.tasks._task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.containers import Application, FakeServices

UNITTEST = f"{shlex.quote(sys.executable)} -m unittest -q"
TESTS = (
    "import unittest\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
    "    def test_add_positive(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
WRONG, RIGHT = "def add(a, b):\n    return a * b\n", "def add(a, b):\n    return a + b\n"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A tiny project with a real bug and a real unittest suite."""
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text(TESTS)
    return tmp_path


@pytest.mark.parametrize(
    ("asked", "subtask_reflects", "reflects"),
    [(True, True, True), (False, True, False), (True, False, False)],
)
def test_reflection_runs_only_when_every_gate_is_open(  # noqa: PLR0913, PLR0917 -- fixtures and cases
    reflexkit_app: Application,
    reflexkit_fakes: FakeServices,
    workdir: Path,
    asked: bool,
    subtask_reflects: bool,
    reflects: bool,
) -> None:
    """The project enables it (the container), the caller asks (run), the subtask allows it."""
    events: list[Event] = []
    agent = ScriptedSubagent({"add": [{"calc.py": WRONG}, {"calc.py": RIGHT}]})
    orchestrator = Orchestrator(
        service=reflexkit_app.reflection.service(),
        subagent=agent,
        verifier_for=lambda _s: Verifier((UNITTEST,), timeout_s=20),
        on_event=events.append,
    )
    task = Task(
        id="calc",
        subtasks=(Subtask(id="add", description="Fix add().", reflect=subtask_reflects),),
    )
    summary = orchestrator.run(task, workdir=workdir, reflect=asked)
    assert summary.passed
    generated = [e for e in events if e.kind is EventKind.REFLECTION_GENERATED]
    stored = reflexkit_fakes.store().recent("add", limit=10)
    assert (len(generated), len(stored)) == ((1, 1) if reflects else (0, 0))
    assert ("Learning from Previous Failures" in agent.prompts[1]) is reflects


def test_staged_events_come_out_in_sequential_order() -> None:
    """Events of three subtasks, shuffled by real threads, are written subtask by subtask."""
    task = Task(
        id="t",
        subtasks=(
            Subtask(id="c", description="c", depends_on=("a",)),
            Subtask(id="a", description="a"),
            Subtask(id="b", description="b"),
        ),
    )
    written: list[Event] = []
    staged = StagedEvents(written.append, run_order(task))
    lock = threading.Lock()
    staged(Event(kind=EventKind.RUN_STARTED))

    def work(subtask_id: str) -> None:
        for attempt in (1, 2):
            for kind in (EventKind.ATTEMPT_STARTED, EventKind.RETRY):
                with lock:  # the orchestrator serialises its callback the same way
                    staged(Event(kind=kind, subtask_id=subtask_id, attempt=attempt))
            threading.Event().wait(random.random() / 100)  # noqa: S311 -- scheduling noise
        with lock:
            staged(Event(kind=EventKind.PASSED, subtask_id=subtask_id, attempt=2))

    threads = [threading.Thread(target=work, args=(s,)) for s in ("b", "c", "a")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    staged(Event(kind=EventKind.RUN_FINISHED))
    assert run_order(task) == ("a", "c", "b")  # as a sequential run takes them
    assert [e.subtask_id for e in written] == ["", *["a"] * 5, *["c"] * 5, *["b"] * 5, ""]
    assert written[-1].kind is EventKind.RUN_FINISHED
