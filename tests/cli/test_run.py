"""`reflexkit run` end to end: a real command-line agent, real verification, real memory."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.memory import JsonlMemory

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = """import unittest
from calc import add

class AddTests(unittest.TestCase):
    def test_add_positive(self):
        self.assertEqual(add(2, 3), 5)
"""
# A stand-in agent: it reads its prompt from a file and only gets the fix right once the
# prompt carries the lesson of the failed attempt.
AGENT = """import pathlib, sys
prompt = pathlib.Path(sys.argv[1]).read_text()
fixed = "Learning from Previous Failures" in prompt and "test_add_positive" in prompt
body = "a + b" if fixed else "a * b"
pathlib.Path("calc.py").write_text(f"def add(a, b):\\n    return {body}\\n")
print("agent wrote", body)
"""


@pytest.fixture
def project(project_dir: Path) -> Path:
    """A tiny project with a bug, its unittest suite, an agent and a task file."""
    (project_dir / "calc.py").write_text(BUGGY)
    (project_dir / "test_calc.py").write_text(TESTS)
    (project_dir / "agent.py").write_text(AGENT)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{shlex.quote(sys.executable)} -m unittest"]},
            }
        )
    )
    (project_dir / "task.json").write_text(
        json.dumps(
            {
                "id": "calc",
                "description": "Fix the calculator.",
                "subtasks": [{"id": "fix-add", "description": "add() must add."}],
            }
        )
    )
    return project_dir


def _agent(project: Path) -> str:
    return f"{shlex.quote(sys.executable)} {project / 'agent.py'} {{prompt_file}}"


def test_a_command_agent_passes_after_a_reflection(project: Path) -> None:
    """Attempt 1 fails real verification; the retry prompt carries the lesson; attempt 2 passes."""
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "command", "--agent-command", _agent(project)]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[fix-add] attempt 1: verification failed" in result.stdout
    assert "[fix-add] attempt 2: passed" in result.stdout
    assert (project / "calc.py").read_text().endswith("return a + b\n")
    (reflection,) = list(JsonlMemory(project / ".reflexkit" / "memory" / "reflections.jsonl"))
    assert "test_add_positive" in reflection.analysis
    (log,) = (project / ".reflexkit" / "runs").glob("*.jsonl")
    kinds = [orjson.loads(line)["kind"] for line in log.read_bytes().splitlines()]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert "reflection_generated" in kinds


def test_a_run_that_does_not_pass_exits_1(project: Path) -> None:
    """An agent that never fixes it: the subtask stops, and the exit code says so."""
    stubborn = project / "stubborn.py"
    stubborn.write_text("print('I changed nothing')\n")
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "task.json",
            "--agent-command",
            f"{shlex.quote(sys.executable)} {stubborn}",
        ],
    )
    assert result.exit_code == 1
    assert "not every subtask passed" in result.stderr
    assert "giving up on this subtask" in result.stdout


def test_a_scripted_run(project: Path) -> None:
    """--subagent scripted applies the edits of a script file, attempt by attempt."""
    script = project / "script.json"
    script.write_text(json.dumps({"fix-add": [{"calc.py": "def add(a, b):\n    return a + b\n"}]}))
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "scripted", "--script", str(script)]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[fix-add] attempt 1: passed" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "task.json"], "no agent configured: give --agent (aider, codex"),
        (["run", "task.json", "--agent", "nope"], "agent nope: no such recipe (known: aider"),
        (["run", "task.json", "--agent", "aider", "--agent-command", "x"], "give one"),
        (["run", "task.json", "--agent-command", "sh -c 'x {prompt}'"], "its own argument"),
        (["run", "task.json", "--subagent", "scripted"], "--subagent scripted needs --script"),
        (["run", "bad-task.json", "--agent-command", "x"], "$.subtasks[0].id"),
    ],
)
def test_bad_run_input_is_one_line(project: Path, args: list[str], message: str) -> None:
    """Usage and task-file errors exit 2 with one line naming what is wrong."""
    (project / "bad-task.json").write_text(
        json.dumps({"id": "t", "subtasks": [{"id": 3, "description": "x"}]})
    )
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_the_agent_command_can_come_from_project_json(project: Path) -> None:
    """orchestrator.agentCommand in project.json stands in for --agent-command."""
    config = project / ".reflexkit" / "project.json"
    data = json.loads(config.read_text())
    data["orchestrator"] = {"agentCommand": shlex.split(_agent(project))}
    config.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["run", "task.json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[fix-add] attempt 2: passed" in result.stdout


def test_jobs_runs_independent_subtasks(project: Path) -> None:
    """--jobs 2 runs two independent scripted subtasks; both pass."""
    (project / "task2.json").write_text(
        json.dumps(
            {
                "id": "two",
                "subtasks": [
                    {"id": "a", "description": "write a", "verify": ["test -f a.txt"]},
                    {"id": "b", "description": "write b", "verify": ["test -f b.txt"]},
                ],
            }
        )
    )
    script = project / "script2.json"
    script.write_text(json.dumps({"a": [{"a.txt": "a"}], "b": [{"b.txt": "b"}]}))
    result = CliRunner().invoke(
        cli,
        ["run", "task2.json", "--subagent", "scripted", "--script", str(script), "--jobs", "2"],
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[a] attempt 1: passed" in result.stdout
    assert "[b] attempt 1: passed" in result.stdout


def test_stats_count_the_reflections_that_led_to_success(project: Path) -> None:
    """After a run that passed on its retry, stats credits the reflection that preceded it."""
    runner = CliRunner()
    before = orjson.loads(runner.invoke(cli, ["stats", "--json"]).stdout)
    assert before["ledToSuccess"] == {"records": 0, "byCategory": {}, "bySource": {}}
    ran = runner.invoke(cli, ["run", "task.json", "--agent-command", _agent(project)])
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    after = orjson.loads(runner.invoke(cli, ["stats", "--json"]).stdout)
    assert after["ledToSuccess"]["records"] == 1
    assert after["ledToSuccess"]["bySource"] == {"heuristic": 1}
    assert "led to success (from run logs)" in runner.invoke(cli, ["stats"]).stdout


def test_a_recipe_from_project_json_with_agent_args_and_run_limits(project: Path) -> None:
    """A project's recipe runs by --agent, with agentArgs and --agent-arg appended in order.

    --max-attempts 1 stops after the first failure; the agent saw {prompt} as one argument.
    """
    config = project / ".reflexkit" / "project.json"
    data = json.loads(config.read_text())
    args_agent = project / "args_agent.py"
    args_agent.write_text(
        "import json, os, sys\n"
        "told = {k: os.environ.get(k) for k in ('MODE', 'REFLEXKIT_RUN_ID', 'REFLEXKIT_TASK_ID')}\n"
        "open('args.json', 'w').write(json.dumps([sys.argv[1:], told]))\n"
    )
    data["orchestrator"] = {
        "agents": {
            "mine": {
                "command": [sys.executable, str(args_agent), "--task", "{prompt}"],
                "env": {"MODE": "recipe"},
            }
        },
        "agentArgs": ["--from-config"],
    }
    config.write_text(json.dumps(data))
    result = CliRunner().invoke(
        cli,
        [
            *("run", "task.json", "--agent", "mine", "--agent-arg", "calc.py"),
            *("--max-attempts", "1", "--run-id", "r-42"),
        ],
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    argv, told = json.loads((project / "args.json").read_text())
    assert argv[0] == "--task"
    assert argv[1].endswith("add() must add.")
    assert argv[2:] == ["--from-config", "calc.py"]
    assert told == {"MODE": "recipe", "REFLEXKIT_RUN_ID": "r-42", "REFLEXKIT_TASK_ID": "calc"}
    assert "[fix-add] attempt 2" not in result.stdout


def test_attempt_timeout_bounds_the_agent(project: Path) -> None:
    """--attempt-timeout kills an agent that runs past it; the attempt is a time-out."""
    sleeper = project / "sleeper.py"
    sleeper.write_text("import time\ntime.sleep(60)\n")
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "task.json",
            "--agent-command",
            f"{shlex.quote(sys.executable)} {sleeper}",
            "--attempt-timeout",
            "1",
            "--max-attempts",
            "1",
        ],
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "timed out after 1 s" in result.stdout


def test_findings_name_their_subject_and_print_once(project: Path) -> None:
    """A file finding says which file; a rule that fires after every attempt prints once."""
    wrong = project / "wrong.py"
    wrong.write_text(
        "import os, pathlib\n"
        "n = os.environ['REFLEXKIT_ATTEMPT']\n"
        "pathlib.Path('calc.py').write_text(f'def add(a, b):\\n    return a * b  # {n}\\n')\n"
    )
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "task.json",
            "--agent-command",
            f"{shlex.quote(sys.executable)} {wrong}",
            "--max-attempts",
            "5",
        ],
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "finding (" in line]
    files = [line for line in lines if "file_failure_correlation" in line]
    assert len(files) == 1, lines
    assert "finding (file_failure_correlation) on calc.py: modified in 3" in files[0]
    assert len(lines) == len({line.split(": finding ")[1].split(":")[0] for line in lines})
    assert "attempt 0" not in result.stdout


@pytest.mark.parametrize(
    "agent",
    [
        "no-such-agent-program-x",  # not installed: found before attempt 1
        f"{shlex.quote(sys.executable)} -c \"print('no API key'); raise SystemExit(78)\"",
    ],
)
@pytest.mark.usefixtures("project")
def test_a_setup_error_is_said_once_without_a_table(agent: str) -> None:
    """The run ends with one line naming the setup error, exit 2; no table, no repeat."""
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    assert result.exit_code == 2, result.stdout + result.stderr
    both = result.stdout + result.stderr
    said = [line for line in both.splitlines() if "setup" in line and "run log:" not in line]
    assert len(said) == 1, both
    assert said[0].startswith("reflexkit: setup: ")
    assert "outcome" not in result.stdout  # the table's header


def test_run_json_keeps_stderr_clean(project: Path) -> None:
    """--json: the summary on stdout, the events only in the run log, stderr empty."""
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--agent-command", _agent(project), "--json"]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stderr == ""
    summary = json.loads(result.stdout)
    assert summary["passed"] is True
    assert Path(summary["runLog"]).is_file()


@pytest.mark.parametrize(
    ("check", "shown"),
    [
        (f"{shlex.quote(sys.executable)} -m reflexkit_no_such_runner_xyz", "No module named"),
        ("no-such-test-runner-xyz --quiet", "command not found: no-such-test-runner-xyz"),
        ("no-such-test-runner-xyz --quiet && true", "no-such-test-runner-xyz: command not found"),
    ],
    ids=["runner module missing", "program missing", "program missing in a shell"],
)
def test_a_check_that_cannot_run_ends_the_run_as_broken_setup(
    project: Path, check: str, shown: str
) -> None:
    """The check never ran: no code lesson, no second attempt, exit 2 naming the setup (#26)."""
    config = project / ".reflexkit" / "project.json"
    data = json.loads(config.read_text())
    data["verification"] = {"commands": [check]}
    config.write_text(json.dumps(data))
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "command", "--agent-command", _agent(project)]
    )
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "setup" in result.stderr
    assert "could not run" in result.stderr
    assert shown in result.stderr
    assert "attempt 2" not in result.stdout
    memory = project / ".reflexkit" / "memory" / "reflections.jsonl"
    assert not memory.exists() or not list(JsonlMemory(memory))


def test_a_check_naming_a_file_the_attempt_must_write_is_retried(project: Path) -> None:
    """`python check.py` with no check.py yet is the attempt's to write: a lesson and a retry."""
    config = project / ".reflexkit" / "project.json"
    data = json.loads(config.read_text())
    data["verification"] = {"commands": [f"{shlex.quote(sys.executable)} check.py"]}
    data["orchestrator"] = {"maxAttempts": 2}
    config.write_text(json.dumps(data))
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--subagent", "command", "--agent-command", _agent(project)]
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "attempt 2" in result.stdout
