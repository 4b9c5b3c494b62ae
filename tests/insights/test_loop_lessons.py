"""Lessons travel through today's real retry loop: two subtasks, one environment problem.

The loop is the real Orchestrator with real verification (unittest in a subprocess) and the
container's reflection service (heuristic generator); the subagent is scripted. Lessons reach
it through LessonAwareService, which wraps the service and listens to the events.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reflexkit.exceptions import StoreError
from reflexkit.insights import LESSONS_HEADING, InMemoryLessons, Lesson
from reflexkit.insights.prompting import LessonAwareService
from reflexkit.models import FailureContext, FailureType
from reflexkit.orchestrator.events import Event, EventKind
from reflexkit.orchestrator.loop import Orchestrator
from reflexkit.orchestrator.subagents import ScriptedSubagent
from reflexkit.orchestrator.verify import verifier_factory
from reflexkit.tasks.config import VerificationConfig
from reflexkit.tasks.task import Subtask, Task

if TYPE_CHECKING:
    from reflexkit.containers import Application

PY = shlex.quote(sys.executable)


def _test_module(helper: str) -> str:
    return (
        "import unittest\n"
        f"import {helper}\n\n\n"
        "class TestIt(unittest.TestCase):\n"
        "    def test_ok(self):\n"
        f"        self.assertEqual({helper}.VALUE, 1)\n"
    )


def test_second_subtask_first_retry_carries_the_first_ones_lesson(
    reflexkit_app: Application, tmp_path: Path
) -> None:
    """Both subtasks miss a helper module; the tax retry prompt has the cart lesson."""
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
    lessons = InMemoryLessons()
    service = LessonAwareService(reflexkit_app.reflection.service(), lessons=lessons, max_lessons=2)
    loop = Orchestrator(
        service=service,
        subagent=agent,
        verifier_for=verifier_factory(VerificationConfig()),
        on_event=service.on_event,
    )
    summary = loop.run(task, workdir=work)
    assert summary.passed, summary
    learnt = {lesson.subtask_id: lesson for lesson in lessons}
    assert set(learnt) == {"cart", "tax"}  # each pass teaches its lesson
    lesson = learnt["cart"]
    assert (lesson.task_id, lesson.tool) == ("shop", "unittest")
    cart_retry, tax_retry = (r.prompt for r in agent.requests if r.attempt == 2)
    assert LESSONS_HEADING not in cart_retry  # nothing learnt yet when cart retried
    assert LESSONS_HEADING in tax_retry
    assert "learnt on shop/cart" in tax_retry
    assert " ".join(lesson.suggestion.split()) in tax_retry
    # The lessons come after the subtask's own reflections, inside the prompt budget.
    assert tax_retry.index("## Learning from Previous Failures") < tax_retry.index(LESSONS_HEADING)


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


def test_broken_lessons_never_break_the_prompt(reflexkit_app: Application) -> None:
    """A failing lesson book costs the lessons, not the retry prompt or the run."""
    inner = reflexkit_app.reflection.service()
    service = LessonAwareService(inner, lessons=_BrokenLessons())
    reflection = service.generate(_failure("tax"))
    service.save(reflection)
    recent = service.get_recent("tax")
    assert service.format_for_prompt(recent) == inner.format_for_prompt(recent)
    service.on_event(
        Event(kind=EventKind.PASSED, subtask_id="tax", data={"ledToSuccess": reflection.id})
    )


def test_lessons_stay_within_the_prompt_budget(reflexkit_app: Application) -> None:
    """Reflections and lessons together fit reflexion.maxPromptChars; 0 lessons: none."""
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
    inner = reflexkit_app.reflection.service()
    for budget in (600, 900, 1_500, 4_000):
        service = LessonAwareService(inner, lessons=lessons, max_lessons=5, max_prompt_chars=budget)
        service.save(service.generate(_failure("tax")))
        recent = service.get_recent("tax")
        own = inner.format_for_prompt(recent)
        section = service.format_for_prompt(recent)
        assert section.startswith(own)
        # The lessons use what the reflections left of the budget, and no more.
        assert len(section) <= max(budget, len(own)) + 2
    assert LESSONS_HEADING in section  # the last budget (4,000) has room for them
    off = LessonAwareService(inner, lessons=lessons, max_lessons=0)
    off.generate(_failure("tax"))
    assert LESSONS_HEADING not in off.format_for_prompt(off.get_recent("tax"))
