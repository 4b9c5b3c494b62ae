"""Failure classification from the command, the exit code and the output's format."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType
from reflexkit.reflection._classify import classify

from ..conftest import DATA, corpus_items  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

OWN = DATA / "tool_outputs"


def own_items() -> list[dict[str, Any]]:
    """Return the failures produced by really running tools for these tests."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(OWN.glob("*.json"))]


def failure_of(item: dict[str, Any]) -> FailureContext:
    """Read the FailureContext of a corpus item."""
    return structure(item["failureContext"], FailureContext)


def make(output: str, *, command: str = "", exit_code: int | None = 1) -> FailureContext:
    """Build a failure with the given output, command and exit code."""
    return FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        error_output=output,
        command=command,
        exit_code=exit_code,
    )


@pytest.mark.skipif(not corpus_items(), reason="the dev corpus is not present")
@pytest.mark.parametrize("item", corpus_items(), ids=lambda item: item["id"])
def test_dev_corpus_type(item: dict[str, Any]) -> None:
    """Every dev corpus failure gets its labelled type."""
    assert classify(failure_of(item)).value == item["expected"]["failureType"]


@pytest.mark.parametrize("item", own_items(), ids=lambda item: item["id"])
def test_real_tool_output_type(item: dict[str, Any]) -> None:
    """Failures produced by running the real tools on this machine are classified right."""
    assert classify(failure_of(item)).value == item["expected"]["failureType"]


class TestConventions:
    """The corpus labelling conventions hold for new outputs too."""

    def test_collection_error_is_a_test_failure(self) -> None:
        """An import error reported by pytest during collection is a test failure."""
        output = (
            "==================================== ERRORS ====================================\n"
            "_____________________ ERROR collecting tests/test_io.py ______________________\n"
            "E   ModuleNotFoundError: No module named 'ioutils'\n"
            "=========================== short test summary info ============================\n"
            "ERROR tests/test_io.py\n"
            "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n"
        )
        assert classify(make(output, command="pytest", exit_code=2)) is FailureType.TEST_FAILURE

    def test_tsc_syntax_error_is_a_typecheck_error(self) -> None:
        """A TypeScript syntax error reported by tsc is a typecheck error."""
        output = "src/app.ts(3,1): error TS1005: '}' expected.\n"
        assert classify(make(output, command="npx tsc")) is FailureType.TYPECHECK_ERROR

    def test_segfault_is_a_runtime_error(self) -> None:
        """A crash with exit code 139 and no output is a runtime error."""
        assert classify(make("", command="./bin/parse", exit_code=139)) is FailureType.RUNTIME_ERROR

    def test_crlf_script_is_a_tool_error(self) -> None:
        """A shebang with a carriage return is a tool error, whatever the script does."""
        output = "/usr/bin/env: 'python3\\r': No such file or directory\n"
        assert (
            classify(make(output, command="./tools/gen.sh", exit_code=127))
            is FailureType.TOOL_ERROR
        )

    def test_rebase_conflict_is_a_tool_error(self) -> None:
        """A rebase conflict is a tool error."""
        output = (
            "Auto-merging src/app.py\nCONFLICT (content): Merge conflict in src/app.py\n"
            "error: could not apply 1a2b3c4... Rename config loader\n"
        )
        assert classify(make(output, command="git rebase main")) is FailureType.TOOL_ERROR

    def test_exit_124_is_a_timeout(self) -> None:
        """GNU timeout's exit code 124 means the command was killed by the time limit."""
        assert classify(make("polling...\n", command="timeout 30 npm start", exit_code=124)) is (
            FailureType.TIMEOUT
        )


class TestFallbacks:
    """What the classifier does when the output says little."""

    def test_given_type_is_kept(self) -> None:
        """A type already on the failure is returned unchanged."""
        failure = FailureContext(
            task_id="t",
            subtask_id="s",
            attempt_number=1,
            error_output="FAILED tests/test_a.py::test_b - assert 1 == 2",
            command="pytest",
            failure_type=FailureType.LINT_ERROR,
        )
        assert classify(failure) is FailureType.LINT_ERROR

    @pytest.mark.parametrize(
        ("command", "expected"),
        [
            ("python -m pytest -x", FailureType.TEST_FAILURE),
            ("npx vue-tsc --noEmit", FailureType.TYPECHECK_ERROR),
            ("npx eslint .", FailureType.LINT_ERROR),
            ("pip install -r requirements.txt", FailureType.DEPENDENCY_ERROR),
            ("cargo build --release", FailureType.BUILD_ERROR),
            ("python manage.py migrate", FailureType.RUNTIME_ERROR),
            ("bash scripts/release.sh", FailureType.TOOL_ERROR),
        ],
    )
    def test_unrecognised_output_falls_back_to_the_command(
        self, command: str, expected: FailureType
    ) -> None:
        """Output in no known format is classified by the command that produced it."""
        assert classify(make("something went wrong\n", command=command)) is expected

    def test_nothing_known_is_unknown(self) -> None:
        """No known format and no known command give ``unknown``."""
        assert classify(make("it broke\n", command="./run-it")) is FailureType.UNKNOWN

    def test_make_wrapping_pytest_is_a_test_failure(self) -> None:
        """The tool inside a make recipe decides, not make."""
        output = (
            "python -m pytest\nFAILED tests/test_a.py::test_b - assert 1 == 2\n"
            "1 failed, 3 passed in 0.05s\nmake: *** [Makefile:7: test] Error 1\n"
        )
        assert classify(make(output, command="make test", exit_code=2)) is FailureType.TEST_FAILURE
