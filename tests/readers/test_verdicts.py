"""The failure type from the output's own verdict first, the command line second (#26)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reflexkit.readers import analyse
from reflexkit.readers._verdicts import _SETUP_SHAPES, _SHAPES, _search, verdict
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import DATA, failure_of, reflection_text  # noqa: TID252 -- tests/ is no package

VERDICTS: list[dict[str, Any]] = json.loads(
    (DATA / "reader_cases" / "verdicts.json").read_text(encoding="utf-8")
)
SETUP: list[dict[str, Any]] = json.loads(
    (DATA / "reader_cases" / "setup.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", VERDICTS, ids=[c["why"] for c in VERDICTS])
def test_type_follows_the_verdict_not_the_command(case: dict[str, Any]) -> None:
    """Whose verdict is in the output decides the type."""
    found = analyse(failure_of(case["command"], case["output"], case.get("exitCode", 1)))
    assert found.failure_type.value == case["type"]


def test_a_doc_builders_strict_mode_gets_no_crash_advice() -> None:
    """``Aborted with 1 warnings`` is a verdict, not a native crash: no sanitizer advice."""
    output = "WARNING -  Doc file 'a.md' contains a link 'b.md', but the target is not found.\n\nAborted with 1 warnings in strict mode!\n"  # noqa: E501
    text = reflection_text(
        HeuristicGenerator().generate(failure_of("mkdocs build --strict", output))
    )
    assert "sanitize" not in text
    assert "Aborted with 1 warnings in strict mode!" in text


@pytest.mark.parametrize("case", SETUP, ids=[c["command"] for c in SETUP])
def test_a_check_that_could_not_run_is_an_environment_lesson(case: dict[str, Any]) -> None:
    """The check never started: say so, quote why, and never advise changing approach."""
    reflection = HeuristicGenerator().generate(failure_of(case["command"], case["output"]))
    text = reflection_text(reflection)
    assert reflection.failure_type.value == case["type"]
    assert reflection.category.value == case["category"]
    assert case["fact"] in text
    assert "could not" in text
    assert "npm error npm run" not in text
    assert "change approach" not in text.lower()


def test_a_setup_line_inside_a_test_run_is_the_test_runs() -> None:
    """A long run that prints `command not found` among its results keeps its own verdict."""
    output = (
        "".join(f"ok {n} step {n}\n" for n in range(1, 20))
        + "x: command not found\nnot ok 20 last\n"
    )
    found = verdict(output)
    assert found is not None
    assert not found.setup


@pytest.mark.parametrize("word", ["Running Sphinx v9.0.4", "helpdesk: open", "Usefully done"])
def test_a_hint_word_is_a_whole_word(word: str) -> None:
    """``Run`` is not cut out of ``Running`` (nor ``help`` out of ``helpdesk``)."""
    output = f"{word}\nerror: the build broke at src/a.c:3\n"
    found = analyse(failure_of("./build.sh", output))
    assert not any(h.startswith(("ning", "desk", "fully")) for h in found.hints)


AGENT_BANNER = (
    "Claude Code timed out after 900 s (stopped)\n"
    "Model metadata for claude-x-1 not found; using defaults\n"
    "Waiting for the language server to start...\n"
)


def test_an_agent_that_timed_out_gets_a_lesson_about_time_and_scope() -> None:
    """The agent's banner lines are not errors of the code; the lesson is about time."""
    failure = failure_of("subagent", AGENT_BANNER, exit_code=None, failure_type="timeout")
    reflection = HeuristicGenerator().generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type.value == "timeout"
    assert "Model metadata" not in text
    assert "mock the dependency" not in text
    assert "time" in reflection.suggestion
    assert "Claude Code timed out after 900 s (stopped)" in text


def test_an_agent_that_could_not_reach_its_model_gets_a_connectivity_lesson() -> None:
    """A connection error of the agent is connectivity or credentials, not the code."""
    output = (
        "the subagent did not finish\n"
        "Model metadata for claude-x-1 not found; using defaults\n"
        "API Error: Connection error. (ECONNREFUSED 127.0.0.1:443)\n"
    )
    reflection = HeuristicGenerator().generate(failure_of("subagent", output, exit_code=None))
    text = reflection_text(reflection)
    assert reflection.category.value == "missing_context"
    assert "API Error: Connection error. (ECONNREFUSED 127.0.0.1:443)" in text
    assert "connectivity" in reflection.suggestion
    assert "approach" not in reflection.suggestion


def _case_outputs() -> list[str]:
    folder = DATA / "reader_cases"
    return [
        case["output"]
        for name in ("verdicts.json", "setup.json", "generic.json", "blocks.json")
        for case in json.loads((folder / name).read_text(encoding="utf-8"))
        if isinstance(case, dict) and "output" in case
    ]


def test_the_shapes_read_only_the_lines_their_needles_are_on() -> None:
    """Each shape, read around its needles' lines, finds what a pass over the whole text finds."""
    outputs = _case_outputs()
    assert len(outputs) > 100
    for needles, pattern, _, span in _SETUP_SHAPES + _SHAPES:
        for text in outputs:
            found = _search(needles, pattern, text, span)
            full = pattern.search(text)
            needled = full is not None and any(n in text for n in needles[0])
            if needled:
                assert full is not None
                assert found is not None, (pattern.pattern[:60], text[:80])
                assert found.start() == full.start()
            else:
                assert found is None or full is not None


def test_a_wait_that_ran_out_of_time_is_about_what_never_came_up() -> None:
    """A waiter's time-out thrown with its stack: no advice to fix the code at the frame."""
    output = "Error: Timed out waiting for: tcp:127.0.0.1:5432\n" + "".join(
        f"    at step{n} (/p/node_modules/waiter/lib/w.js:{n}:1)\n" for n in range(12)
    )
    reflection = HeuristicGenerator().generate(failure_of("npm run e2e", output))
    assert reflection.failure_type.value == "timeout"
    assert reflection.category.value == "missing_context"
    assert "never became ready" in reflection.suggestion


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (
            "./build.sh",
            (
                "./build.sh: line 3: cp: missing destination file operand after 'out'\n"
                "Try 'cp --help' for more information.\n"
            ),
        ),
        (
            "make test",
            (
                "scripts/run-tests.sh: line 12: grep: invalid option -- 'Q'\n"
                "Try 'grep --help' for more information.\n"
            ),
        ),
    ],
)
def test_a_usage_error_inside_the_projects_own_script_is_the_codes(
    command: str, output: str
) -> None:
    """A command misused by the project's script (``script: line N:``) is the script's bug."""
    found = analyse(failure_of(command, output))
    assert found.category.value == "root_cause"
    assert "lacks a program" not in found.headline
    assert not any("`which`" in step for step in found.steps)


def test_a_usage_error_of_the_command_itself_is_still_setup() -> None:
    """The command line's own misuse stays a tool error."""
    output = (
        "cp: missing destination file operand after 'out'\nTry 'cp --help' for more information.\n"
    )
    assert analyse(failure_of("cp out", output)).failure_type.value == "tool_error"
