"""Global options anywhere, JSON output, and paths printed whole (#19)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner, Result

from reflexkit.cli import cli
from reflexkit.memory import JsonlMemory

from ..conftest import PYTEST_FAILURE as FAILURE  # noqa: TID252


def _run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin)


@pytest.fixture
def elsewhere(project_dir: Path) -> Path:
    """A project.json outside the working folder, found only through --config."""
    other = project_dir / "other"
    (other / ".reflexkit").mkdir(parents=True)
    config = other / ".reflexkit" / "project.json"
    config.write_text(json.dumps({"reflexion": {"backend": "heuristic"}}))
    return config


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    ctx = click.Context(cli)
    found = [path]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            found += _walk(sub, (*path, name))
    return found


@pytest.mark.parametrize("path", _walk(cli)[1:], ids=" ".join)
def test_every_command_takes_the_global_options(path: tuple[str, ...]) -> None:
    """--config, --debug and --json are options of every command, group or leaf."""
    command: click.Command = cli
    ctx = click.Context(cli)
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, name)
        assert found is not None
        command = found
    opts = {opt for param in command.params for opt in getattr(param, "opts", ())}
    assert {"--config", "--debug", "--json"} <= opts


@pytest.mark.parametrize("where", ["before", "after"])
def test_config_before_or_after_the_subcommand(elsewhere: Path, where: str) -> None:
    """`reflect --config X` works as `--config X reflect` does: the reflection lands there."""
    args = ["reflect", "--no-save"]
    args = (
        ["--config", str(elsewhere), *args]
        if where == "before"
        else [*args, "--config", str(elsewhere)]
    )
    result = _run(*args, "--json", stdin=json.dumps(FAILURE))
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout)["source"] == "heuristic"  # not llm: that config was read


def test_config_after_a_nested_command(elsewhere: Path) -> None:
    """`config check --config X` checks X."""
    result = _run("config", "check", "--config", str(elsewhere))
    assert result.exit_code == 0, result.stderr
    assert str(elsewhere) in result.stderr
    assert orjson.loads(result.stdout)["reflexion"]["backend"] == "heuristic"


def test_a_missing_config_after_the_subcommand_is_exit_2(project_dir: Path) -> None:
    """A setup error, wherever the option is: one line, exit 2."""
    result = _run("recent", "discount", "--config", str(project_dir / "nope.json"))
    assert result.exit_code == 2
    assert "nope.json" in result.stderr


def test_recent_json_is_format_json(elsewhere: Path) -> None:
    """`--json`, before or after, is the same as `--format json`, which stays."""
    root = elsewhere.parent.parent
    saved = _run("--config", str(elsewhere), "reflect", stdin=json.dumps(FAILURE))
    assert saved.exit_code == 0, saved.stderr
    outputs = {
        args: _run(*args).stdout
        for args in (
            ("--config", str(elsewhere), "recent", "discount", "--format", "json"),
            ("recent", "discount", "--json", "--config", str(elsewhere)),
            ("--json", "--config", str(elsewhere), "recent", "discount"),
        )
    }
    assert len(set(outputs.values())) == 1
    (record,) = orjson.loads(next(iter(outputs.values())))
    assert (
        record["id"]
        == next(iter(JsonlMemory(root / ".reflexkit" / "memory" / "reflections.jsonl"))).id
    )


def test_debug_after_the_subcommand_shows_the_traceback(project_dir: Path) -> None:
    """--debug after the command prints the traceback (through the gate), not one line."""
    (project_dir / "bad.json").write_text("{")
    result = _run("reflect", "--input", "bad.json", "--debug")
    assert result.exit_code == 2, result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    assert "ConfigError" in result.stderr


def test_prune_and_stats_print_json(elsewhere: Path) -> None:
    """Commands with a result print it as JSON with --json after them."""
    pruned = _run("prune", "--older-than", "5", "--dry-run", "--json", "--config", str(elsewhere))
    assert pruned.exit_code == 0, pruned.stderr
    assert orjson.loads(pruned.stdout) == {"removed": 0, "olderThanDays": 5, "dryRun": True}
    stats = _run("stats", "--config", str(elsewhere), "--json")
    assert stats.exit_code == 0, stats.stderr
    assert orjson.loads(stats.stdout)["records"] == 0


def _scripted_project(root: Path) -> None:
    (root / ".reflexkit").mkdir(parents=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {
                    "commands": [
                        (
                            f'{sys.executable} -c "import pathlib,sys; '
                            "sys.exit(pathlib.Path('ok').read_text() != 'yes')\""
                        )
                    ]
                },
            }
        )
    )
    (root / "task.json").write_text(
        json.dumps({"id": "t", "description": "d", "subtasks": [{"id": "s", "description": "d"}]})
    )
    (root / "script.json").write_text(json.dumps({"s": [{"ok": "no"}, {"ok": "yes"}]}))


def test_run_json_prints_the_summary(project_dir: Path) -> None:
    """`run --json`: the summary as JSON on stdout, the events only in the run log."""
    _scripted_project(project_dir)
    result = _run("run", "task.json", "--subagent", "scripted", "--script", "script.json", "--json")
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads(result.stdout)
    assert summary["passed"] is True
    assert [(o["subtaskId"], o["outcome"], o["attempts"]) for o in summary["outcomes"]] == [
        ("s", "passed", 2)
    ]
    assert Path(summary["runLog"]).is_file()
    assert "attempt 2: passed" not in result.stderr + result.stdout


def test_run_prints_a_long_run_log_path_on_one_line(tmp_path: Path) -> None:
    """Rich wrapped the caption's path across lines; the path is printed whole."""
    root = tmp_path / ("a-rather-long-folder-name-" * 4) / "project"
    _scripted_project(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT_", "ANTHROPIC_"))}
    env["COLUMNS"] = "40"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexkit",
            "run",
            "task.json",
            "--subagent",
            "scripted",
            "--script",
            "script.json",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (log,) = (root / ".reflexkit" / "runs").glob("*.jsonl")
    assert f"run log: {log}\n" in done.stdout


@pytest.mark.usefixtures("project_dir")
def test_the_demo_prints_no_path_it_deleted() -> None:
    """The demo's folder is gone when it ends, so it names no run log in it."""
    result = _run("demo")
    assert result.exit_code == 0, result.stderr
    assert "run log:" not in result.stdout
