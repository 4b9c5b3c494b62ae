"""The reflexion switches of project.json, driven through the CLI as a user sets them (#28).

The reflection log on or off, the summary cap, the number of earlier reflections the model
sees, and a deterministic run refusing a live model. The LLM path is the real anthropic SDK
against the fake Messages API.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.testing.fake_messages_api import FakeMessagesApi

FAILURE = {
    "sessionId": "run-7",
    "taskId": "checkout",
    "subtaskId": "discount",
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed\n",
}
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_cart.py::test_total: the total is 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py"],
    "confidence": 0.8,
}


def write_config(root: Path, config: dict[str, object]) -> None:
    """Write *config* as the project's project.json."""
    (root / ".reflexkit").mkdir(exist_ok=True)
    (root / ".reflexkit" / "project.json").write_text(json.dumps(config))


@pytest.fixture
def live(
    project_dir: Path,  # noqa: ARG001 -- the current folder, with no config in reach
    fake_messages_api: FakeMessagesApi,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeMessagesApi:
    """Claude is the fake Messages API, in an empty project folder."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    return fake_messages_api


def reflect(attempt: int, *extra: str) -> dict[str, object]:
    """`reflexkit reflect --json` on attempt *attempt* of the failure; the reflection."""
    result = CliRunner().invoke(
        cli, ["reflect", "--json", *extra], input=json.dumps({**FAILURE, "attemptNumber": attempt})
    )
    assert result.exit_code == 0, result.output + result.stderr
    reflection: dict[str, object] = orjson.loads(result.stdout)
    return reflection


def earlier_shown(api: FakeMessagesApi) -> list[str]:
    """The attempts of the earlier reflections the last request showed the model."""
    request = api.requests[-1].json
    text = request["messages"][0]["content"]
    return [part.split('"', 1)[0] for part in text.split('<reflection attempt="')[1:]]


@pytest.mark.parametrize(
    ("setting", "shown"),
    [({}, ["1", "2", "3"]), ({"previousReflections": 1}, ["3"]), ({"previousReflections": 0}, [])],
    ids=["default-maxReflectionsPerRetry", "one", "none"],
)
def test_the_model_sees_as_many_earlier_reflections_as_configured(
    live: FakeMessagesApi, project_dir: Path, setting: dict[str, int], shown: list[str]
) -> None:
    """reflexion.previousReflections (default: maxReflectionsPerRetry, 3) bounds the prompt."""
    write_config(project_dir, {"reflexion": setting})
    for attempt in (1, 2, 3, 4):
        live.reply({**REPLY, "analysis": f"Attempt {attempt}: the total is 90."})
        reflect(attempt)
    assert earlier_shown(live) == shown


def test_the_summary_cap_bounds_what_claude_wrote(live: FakeMessagesApi, project_dir: Path) -> None:
    """A long reply is cut to reflexion.maxReflectionChars, in output and in memory."""
    write_config(project_dir, {"reflexion": {"maxReflectionChars": 300}})
    live.reply(
        {
            **REPLY,
            "analysis": "The total is 90, expected 100. " * 40,
            "actionItems": ["Read total() in src/cart.py " * 5] * 4,
        }
    )
    reflection = reflect(1)
    assert reflection["source"] == "llm"
    size = len(str(reflection["analysis"])) + len(str(reflection["suggestion"]))
    size += sum(len(item) for item in reflection["actionItems"])  # type: ignore[attr-defined]
    assert 200 < size <= 300
    assert str(reflection["analysis"]).startswith("The total is 90, expected 100.")
    assert str(reflection["analysis"]).endswith("…")
    stored = orjson.loads(
        (project_dir / ".reflexkit" / "memory" / "reflections.jsonl").read_bytes().splitlines()[0]
    )
    assert stored["analysis"] == reflection["analysis"]


def test_the_summary_cap_bounds_the_heuristic(project_dir: Path) -> None:
    """The heuristic writes within the cap too, and a short reflection is left whole."""
    output = "".join(
        f"FAILED tests/test_cart.py::test_{n} - assert {n} == {n + 1}\n" for n in range(40)
    )
    write_config(project_dir, {"reflexion": {"backend": "heuristic", "maxReflectionChars": 250}})
    result = CliRunner().invoke(
        cli,
        ["reflect", "--json", "--no-save"],
        input=json.dumps({**FAILURE, "attemptNumber": 1, "errorOutput": output}),
    )
    assert result.exit_code == 0, result.stderr
    reflection = orjson.loads(result.stdout)
    size = len(reflection["analysis"]) + len(reflection["suggestion"])
    assert size + sum(len(i) for i in reflection["actionItems"]) <= 250
    assert "test_0" in reflection["analysis"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"maxReflectionChars": 50},
            "maxReflectionChars: expected an integer from 200",
        ),
        (
            {"previousReflections": -1},
            "previousReflections: expected an integer from 0",
        ),
        ({"previousReflections": "2"}, "$.reflexion.previousReflections: expected an integer from"),
        ({"log": "off"}, '$.reflexion.log: expected true or false, got "off"'),
    ],
)
def test_bad_settings_are_named(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, object], message: str
) -> None:
    """Each new key is validated like every other: exit 2 and the JSON path."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    write_config(project_dir, {"reflexion": config})
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 2
    assert message in result.stderr


# --- the reflection log, and deterministic runs, through `reflexkit run` -----------------------


def make_project(root: Path, reflexion: dict[str, object]) -> Path:
    """A one-subtask project whose scripted agent fails once, then fixes the bug."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    (root / "script.json").write_text(
        json.dumps(
            {
                "fix-add": [
                    {"calc.py": "def add(a, b):\n    return a * b\n"},
                    {"calc.py": "def add(a, b):\n    return a + b\n"},
                ]
            }
        )
    )
    write_config(root, {"reflexion": reflexion})
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "calc",
                "description": "Fix the calculator.",
                "subtasks": [
                    {
                        "id": "fix-add",
                        "description": "add() must add.",
                        "verify": [f"{sys.executable} -m unittest test_calc"],
                    }
                ],
            }
        )
    )
    return root


def run(root: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[int, str]:
    """`reflexkit run` on the project's task with its script; exit code and stderr."""
    monkeypatch.chdir(root)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "scripted", "--script", "script.json", *extra]
    )
    return result.exit_code, result.stderr


def kinds(root: Path, run_id: str) -> list[str]:
    """The kinds of the events in a run's log, in order."""
    log = root / ".reflexkit" / "runs" / f"{run_id}.jsonl"
    return [orjson.loads(line)["kind"] for line in log.read_bytes().splitlines()]


def test_the_reflection_log_can_be_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reflexion.log false: no reflection_generated in the run log, nothing else changes."""
    on = make_project(tmp_path / "on", {"backend": "heuristic"})
    off = make_project(tmp_path / "off", {"backend": "heuristic", "log": False})
    assert run(on, monkeypatch, "--run-id", "r1")[0] == 0
    assert run(off, monkeypatch, "--run-id", "r1")[0] == 0
    with_log, without = kinds(on, "r1"), kinds(off, "r1")
    assert with_log.count("reflection_generated") == 1
    assert "reflection_generated" not in without
    assert without == [k for k in with_log if k != "reflection_generated"]
    memory = off / ".reflexkit" / "memory" / "reflections.jsonl"
    assert len(memory.read_bytes().splitlines()) == 1  # the reflection is stored all the same


@pytest.mark.parametrize(
    ("config", "flags", "message"),
    [
        ({}, ("--deterministic",), "--deterministic: deterministic is true but backend is llm"),
        (
            {"deterministic": True},
            (),
            "$.reflexion: deterministic is true but backend is llm",
        ),
        (
            {"backend": "heuristic", "deterministic": True},
            ("--record-fixtures", "f.jsonl"),
            "deterministic is true but backend is llm",
        ),
    ],
    ids=["flag", "project-json", "recording"],
)
def test_a_deterministic_run_refuses_a_live_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: dict[str, object],
    flags: tuple[str, ...],
    message: str,
) -> None:
    """Deterministic with backend llm is a validation error: exit 2, one line, nothing run."""
    root = make_project(tmp_path / "p", config)
    code, err = run(root, monkeypatch, "--run-id", "r1", *flags)
    assert code == 2
    assert message in err
    assert "heuristic" in err
    assert "fixture" in err
    assert "Traceback" not in err
    assert not (root / ".reflexkit" / "runs").exists()


def test_a_deterministic_project_refuses_a_live_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The completion judge is a live model too: `config check` says so, exit 2."""
    root = make_project(tmp_path / "p", {"backend": "heuristic", "deterministic": True})
    config = json.loads((root / ".reflexkit" / "project.json").read_text())
    write_config(root, {**config, "verification": {"judge": "llm"}})
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 2
    assert "verification.judge is llm" in result.stderr


def test_a_deterministic_run_with_a_deterministic_backend_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: heuristic and deterministic together are fine."""
    root = make_project(tmp_path / "p", {"backend": "heuristic", "deterministic": True})
    code, err = run(root, monkeypatch, "--run-id", "r1")
    assert code == 0, err
    assert "warning" not in err
