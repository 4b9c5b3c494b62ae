"""The heuristic generator: specific, verbatim, short, honest and fast reflections."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest

from reflexkit._serde import structure
from reflexkit.models import (
    FailureContext,
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
)
from reflexkit.reflection._heuristic import MAX_CHARS, HeuristicGenerator
from reflexkit.reflection._protocols import ReflectionGenerator

from ..conftest import DATA, corpus_items  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

OWN = DATA / "tool_outputs"
T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def own_items() -> list[dict[str, Any]]:
    """Return the failures produced by really running tools for these tests."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(OWN.glob("*.json"))]


def failure_of(item: dict[str, Any]) -> FailureContext:
    """Read the FailureContext of a corpus item."""
    return structure(item["failureContext"], FailureContext)


def size_of(reflection: Reflection) -> int:
    """Return the length of analysis, suggestion and action items together."""
    return (
        len(reflection.analysis)
        + len(reflection.suggestion)
        + sum(len(item) for item in reflection.action_items)
    )


def text_of(reflection: Reflection) -> str:
    """Return what a key fact must appear in: analysis, suggestion and action items."""
    return "\n".join([reflection.analysis, reflection.suggestion, *reflection.action_items])


def make(
    output: str, *, command: str = "", exit_code: int | None = 1, attempt: int = 1
) -> FailureContext:
    """Build a failure of subtask s1."""
    return FailureContext(
        task_id="t1",
        subtask_id="s1",
        attempt_number=attempt,
        error_output=output,
        command=command,
        exit_code=exit_code,
    )


GEN = HeuristicGenerator(clock=lambda: T0)

PYTEST_OUTPUT = (
    "=================================== FAILURES ===================================\n"
    "________________________________ test_total ____________________________________\n"
    "\n    def test_total():\n>       assert total([1, 2]) == 4\nE       assert 3 == 4\n\n"
    "tests/test_sum.py:7: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_sum.py::test_total - assert 3 == 4\n"
    "1 failed, 5 passed in 0.03s\n"
)


def check_reflection(item: dict[str, Any]) -> None:
    """Assert type, key facts, category and size of the reflection on one corpus item."""
    reflection = GEN.generate(failure_of(item))
    expected = item["expected"]
    text = text_of(reflection)
    missing = [fact for fact in expected["keyFacts"] if fact not in text]
    assert reflection.failure_type.value == expected["failureType"]
    assert not missing, f"key facts not quoted: {missing}\n{text}"
    assert reflection.category.value in expected["categoryHints"]
    assert size_of(reflection) <= MAX_CHARS
    # 0.5 and up when a reader knew the format; 0.4 for error lines found by their shape alone
    assert reflection.confidence >= 0.4 or not expected["keyFacts"]


@pytest.mark.skipif(not corpus_items(), reason="the dev corpus is not present")
@pytest.mark.parametrize("item", corpus_items(), ids=lambda item: item["id"])
def test_dev_corpus_reflection(item: dict[str, Any]) -> None:
    """Each dev corpus failure: right type, every key fact quoted verbatim, an accepted category."""
    check_reflection(item)


@pytest.mark.parametrize("item", own_items(), ids=lambda item: item["id"])
def test_real_tool_output_reflection(item: dict[str, Any]) -> None:
    """Failures produced by running the real tools on this machine are reflected on as well."""
    check_reflection(item)


class TestRecord:
    """The fields of the reflection record."""

    def test_fields(self) -> None:
        """Source, ids, attempt, fingerprint and creation time are filled in."""
        reflection = GEN.generate(make(PYTEST_OUTPUT, command="pytest", attempt=2))
        assert reflection.source is ReflectionSource.HEURISTIC
        assert (reflection.task_id, reflection.subtask_id, reflection.attempt_number) == (
            "t1",
            "s1",
            2,
        )
        assert len(reflection.fingerprint) == 16
        assert reflection.created_at == T0
        assert reflection.model is None
        assert reflection.fallback_reason is None

    def test_is_a_reflection_generator(self) -> None:
        """The generator satisfies the ReflectionGenerator protocol."""
        assert isinstance(HeuristicGenerator(), ReflectionGenerator)

    def test_deterministic_apart_from_id(self) -> None:
        """Two runs on one failure differ only in their ids."""
        failure = make(PYTEST_OUTPUT, command="pytest")
        first, second = GEN.generate(failure), GEN.generate(failure)
        assert first.id != second.id
        assert attrs.evolve(first, id="x") == attrs.evolve(second, id="x")

    def test_given_type_is_kept(self) -> None:
        """A failure type set by the orchestrator is not overridden."""
        failure = attrs.evolve(make(PYTEST_OUTPUT), failure_type=FailureType.BUILD_ERROR)
        assert GEN.generate(failure).failure_type is FailureType.BUILD_ERROR

    def test_assertion_and_command_to_rerun(self) -> None:
        """The assert line is quoted and the first failing test gets a command to run it alone."""
        reflection = GEN.generate(make(PYTEST_OUTPUT, command="pytest"))
        assert "assert 3 == 4" in reflection.analysis
        assert any(
            'pytest "tests/test_sum.py::test_total"' in item for item in reflection.action_items
        )


class TestPrevious:
    """How earlier reflections of the subtask change the new one."""

    def test_same_failure_again_changes_approach(self) -> None:
        """A failure whose fingerprint already failed says the fix did not work: approach_flaw."""
        first = GEN.generate(make(PYTEST_OUTPUT, command="pytest", attempt=1))
        again = make(PYTEST_OUTPUT.replace("0.03s", "0.09s"), command="pytest", attempt=2)
        second = GEN.generate(again, previous=[first])
        assert second.fingerprint == first.fingerprint
        assert second.category is ReflectionCategory.APPROACH_FLAW
        assert "previous fix did not work" in second.analysis
        assert second.suggestion.startswith("Change approach")
        assert "tests/test_sum.py::test_total" in second.analysis

    def test_new_failure_is_named_as_a_change(self) -> None:
        """A different failure after an earlier one says the failure changed."""
        first = GEN.generate(make(PYTEST_OUTPUT, command="pytest", attempt=1))
        lint = "app.py:3:1: F401 [*] `os` imported but unused\nFound 1 error.\n"
        second = GEN.generate(make(lint, command="ruff check .", attempt=2), previous=[first])
        assert second.category is not ReflectionCategory.APPROACH_FLAW
        assert "changed since attempt 1" in second.analysis


class TestUnknownOutput:
    """Output in no known format gets an honest, low-confidence reflection."""

    def test_unknown_output_quotes_error_lines(self) -> None:
        """The error-looking lines are quoted, with low confidence."""
        output = "starting job 7\nstep 1 ok\nFATAL could not reach license server lic-3\n"
        reflection = GEN.generate(make(output, command="./deploy", exit_code=3))
        assert "FATAL could not reach license server lic-3" in reflection.analysis
        assert reflection.confidence <= 0.4
        assert reflection.failure_type is FailureType.UNKNOWN

    def test_empty_output(self) -> None:
        """No output at all still gives a reflection naming the command and exit code."""
        reflection = GEN.generate(make("", command="./check", exit_code=5))
        assert "`./check` failed (exit code 5)" in reflection.analysis
        assert reflection.confidence <= 0.2

    def test_recognised_beats_unknown(self) -> None:
        """A recognised format is more confident than an unrecognised one."""
        known = GEN.generate(make(PYTEST_OUTPUT, command="pytest"))
        unknown = GEN.generate(make("boom\n", command="./x"))
        assert known.confidence > unknown.confidence


class TestShapeAndSpeed:
    """Length and time limits hold on large and coloured outputs."""

    def test_colours_are_ignored(self) -> None:
        """ANSI colour codes do not hide the facts."""
        coloured = "\x1b[31mFAILED\x1b[0m tests/test_sum.py::test_total - assert 3 == 4\n"
        coloured += "\x1b[31m1 failed\x1b[0m in 0.03s\n"
        reflection = GEN.generate(make(coloured, command="pytest"))
        assert "tests/test_sum.py::test_total" in reflection.analysis

    def test_many_failures_stay_short(self) -> None:
        """Two hundred failing tests still make a reflection under the length limit."""
        lines = [
            f"FAILED tests/test_m.py::test_case_{i} - assert {i} == {i + 1}" for i in range(200)
        ]
        output = "\n".join(lines) + "\n200 failed in 1.20s\n"
        reflection = GEN.generate(make(output, command="pytest"))
        assert size_of(reflection) <= MAX_CHARS
        assert "tests/test_m.py::test_case_0" in reflection.analysis
        assert "more failing" in reflection.analysis

    @pytest.mark.parametrize(
        "name", ["pytest-inventory-assertions", "make-gcc-queue", "jest-price-discount"]
    )
    def test_100kb_output_keeps_its_facts_and_length(self, name: str) -> None:
        """A 100 KB output still gives its key facts within the limit (speed: the benchmark)."""
        item = json.loads((OWN / f"{name}.json").read_text(encoding="utf-8"))
        failure = failure_of(item)
        output = failure.error_output
        while len(output) < 100_000:
            output += "\n" + failure.error_output
        reflection = GEN.generate(attrs.evolve(failure, error_output=output[:100_000]))
        assert size_of(reflection) <= MAX_CHARS
        assert item["expected"]["keyFacts"][0] in text_of(reflection)


def test_repeats_of_one_error_do_not_hide_another_tests_assertion() -> None:
    """Eight tests failing on one error are named once each; the ninth's assertion shows."""
    output = "".join(
        f"  {i}) test case {i} (BigTest)\n"
        "     ** (RuntimeError) database connection refused by the server at localhost:5432\n"
        f"     test/big_test.exs:{i}\n\n"
        for i in range(1, 9)
    )
    output += "  9) test totals (BigTest)\n     Assertion with == failed\n"
    output += "     left:  170\n     right: 270\n\n9 tests, 9 failures\n"
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, command="mix test", exit_code=2,
        error_output=output,
    )  # fmt: skip
    analysis = HeuristicGenerator().generate(failure).analysis
    assert analysis.count("database connection refused") == 1
    assert "test case 8 (BigTest)" in analysis
    assert "left:  170" in analysis
    assert "more failing" not in analysis
