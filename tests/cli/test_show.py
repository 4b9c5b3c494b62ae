"""`reflexkit show RUN`: a run's attempts, their kept prompts and outcomes (#27)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reflexkit.cli import cli

AGENT = """import pathlib, sys
prompt = pathlib.Path(sys.argv[1]).read_text()
body = "a + b" if "Learning from Previous Failures" in prompt else "a * b"
pathlib.Path("calc.py").write_text(f"def add(a, b):\\n    return {body}\\n")
"""
TESTS = """import unittest
from calc import add

class AddTests(unittest.TestCase):
    def test_add_positive(self):
        self.assertEqual(add(2, 3), 5)
"""


@pytest.fixture
def ran(project_dir: Path) -> str:
    """A run that failed once and passed on attempt 2; returns its run id."""
    (project_dir / "calc.py").write_text("def add(a, b):\n    return a - b\n")
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
        json.dumps({"id": "calc", "subtasks": [{"id": "fix-add", "description": "add() adds."}]})
    )
    agent = f"{shlex.quote(sys.executable)} agent.py {{prompt_file}}"
    done = CliRunner().invoke(
        cli, ["run", "task.json", "--agent-command", agent, "--run-id", "run-one"]
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    return "run-one"


def test_show_prints_attempts_prompts_and_outcomes(ran: str) -> None:
    """Attempt 1 failed with its prompt; attempt 2 passed and its prompt has the lesson."""
    done = CliRunner().invoke(cli, ["show", ran])
    assert done.exit_code == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"run {ran} of task calc: passed")
    first, second = out.split("[fix-add] attempt 1: failed")[1].split("[fix-add] attempt 2: passed")
    assert "verification failed" in first
    assert "add() adds." in first
    assert "Learning from Previous Failures" not in first
    assert "Learning from Previous Failures" in second
    assert f".reflexkit/runs/{ran}/prompts/fix-add-2.md" in second


def test_show_finds_the_latest_run_a_prefix_and_says_json(ran: str) -> None:
    """No RUN: the latest; a unique start of an id works; --json has the same attempts."""
    runner = CliRunner()
    assert runner.invoke(cli, ["show"]).stdout == runner.invoke(cli, ["show", ran]).stdout
    assert runner.invoke(cli, ["show", "run-o", "--no-prompts"]).exit_code == 0
    data = json.loads(runner.invoke(cli, ["show", ran, "--json"]).stdout)
    assert data["passed"] is True
    assert [(a["attempt"], a["outcome"]) for a in data["attempts"]] == [
        (1, "failed"),
        (2, "passed"),
    ]
    assert "Learning from Previous Failures" in data["attempts"][1]["prompt"]


@pytest.mark.usefixtures("ran")
def test_an_unknown_run_is_bad_input() -> None:
    """A run that is not there: exit 2 and one line."""
    done = CliRunner().invoke(cli, ["show", "nope"])
    assert done.exit_code == 2
    assert "no run" in done.stderr


def test_a_prompt_file_an_agent_rewrote_is_shown_safely(ran: str, project_dir: Path) -> None:
    """Escapes and secrets planted in a kept prompt never reach the terminal; a FIFO never hangs."""
    prompts = project_dir / ".reflexkit" / "runs" / ran / "prompts"
    secret = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
    (prompts / "fix-add-1.md").write_text(f"\x1b[2J\x1b]52;c;eA==\x07 token {secret}\n")
    (prompts / "fix-add-2.md").unlink()
    os.mkfifo(prompts / "fix-add-2.md")
    done = CliRunner().invoke(cli, ["show", ran])
    assert done.exit_code == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert secret not in done.stdout
    assert "prompt: not kept" in done.stdout


def test_links_fifos_and_folders_among_run_logs_are_skipped(ran: str, project_dir: Path) -> None:
    """A dangling link, a FIFO, a link to /dev/zero or a folder named *.jsonl: the run shows.

    Whatever an agent planted in .reflexkit/runs, the latest real run log is found and shown
    (one was dangling: ``show`` failed on it with exit 1 before).
    """
    runs = project_dir / ".reflexkit" / "runs"
    (runs / "zz-dangling.jsonl").symlink_to(project_dir / "nowhere")
    (runs / "zz-zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(runs / "zz-fifo.jsonl")
    (runs / "zz-folder.jsonl").mkdir()
    runner = CliRunner()
    for args in (["show"], ["show", "zz"], ["show", ran]):
        done = runner.invoke(cli, args)
        if args == ["show", "zz"]:
            assert done.exit_code == 2, done.stdout + done.stderr  # none of them is a run
            continue
        assert done.exit_code == 0, done.stdout + done.stderr
        assert done.stdout.startswith(f"run {ran} of task calc: passed"), done.stdout


def test_a_prompt_path_out_of_reflexkits_folder_is_not_read(ran: str, project_dir: Path) -> None:
    """A run log's promptPath that leads out (``..``, a linked folder) prints no file there."""
    outside = project_dir.parent / f"{project_dir.name}-outside"
    outside.mkdir()
    (outside / "notes.md").write_text("OUTSIDE_MARKER private notes\n")
    runs = project_dir / ".reflexkit" / "runs"
    (project_dir / ".reflexkit" / "linked").symlink_to(outside)
    log = next(runs.glob(f"{ran}*.jsonl"))
    text = log.read_text()
    escaped = f".reflexkit/../../{outside.name}/notes.md"
    text = text.replace(f".reflexkit/runs/{ran}/prompts/fix-add-1.md", escaped)
    text = text.replace(f".reflexkit/runs/{ran}/prompts/fix-add-2.md", ".reflexkit/linked/notes.md")
    log.write_text(text)
    done = CliRunner().invoke(cli, ["show", ran])
    assert done.exit_code == 0, done.stderr
    assert "OUTSIDE_MARKER" not in done.stdout
    data = json.loads(CliRunner().invoke(cli, ["show", ran, "--json"]).stdout)
    assert "OUTSIDE_MARKER" not in json.dumps(data)
