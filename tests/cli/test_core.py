"""The command line's error boundary: click's own usage errors pass the outbound gate too.

click prints ``Invalid value for '--limit': '<value>' ...``, ``No such command '<name>'`` and
``Got unexpected extra argument (<value>)``, quoting what was typed: a token pasted in the
wrong place, or a name holding escape sequences, must reach stderr redacted and neutralised,
for every command and every option that checks its value.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner

from reflexkit import _serde
from reflexkit.cli import COMMANDS, cli
from reflexkit.testing.memory_contract import make_reflection

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

TOKEN = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
PASSWORD = "hunter2" + "-Zq4vL9pR"
HOSTILE = (
    f"token={TOKEN} password={PASSWORD} \x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"
    " \x1b[2J \u202egnp.exe \x9b31m"
)
RAW = ("\x1b", "\x07", "\u202e", "\x9b", TOKEN, PASSWORD)


def _commands() -> Iterator[tuple[list[str], click.Command]]:
    """Every command, by the words that name it (``["memory", "copy"]``)."""
    for name, entry in sorted(COMMANDS.items()):
        command = entry.load()
        if isinstance(command, click.Group):
            for sub_name, sub in sorted(command.commands.items()):
                yield [name, sub_name], sub
        yield [name], command


def _checked(param: click.Parameter) -> bool:
    """Whether click itself refuses a bad value of *param* (a choice, a number, a file)."""
    if isinstance(param, click.Option) and (param.is_flag or param.count):
        return False
    if isinstance(param.type, click.Path):
        return bool(param.type.exists)
    return param.type not in {click.STRING, click.UNPROCESSED}


def _usage_errors() -> Iterator[tuple[str, list[str]]]:
    """Command lines click refuses, each quoting :data:`HOSTILE`."""
    yield "no such command", [HOSTILE]
    for words, command in _commands():
        where = " ".join(words)
        if isinstance(command, click.Group):
            yield f"{where}: no such command", [*words, HOSTILE]
            continue
        fillers = ["x" for p in command.params if isinstance(p, click.Argument) and p.required]
        if not any(isinstance(p, click.Argument) and p.nargs == -1 for p in command.params):
            yield f"{where}: extra argument", [*words, *fillers, HOSTILE, HOSTILE]
        yield f"{where}: no such option", [*words, f"--bogus={HOSTILE}"]
        for param in command.params:
            if isinstance(param, click.Option) and _checked(param) and param.name != "config":
                yield f"{where} {param.opts[0]}", [*words, *fillers, param.opts[0], HOSTILE]
            elif isinstance(param, click.Argument) and _checked(param):
                yield f"{where} {param.name}", [*words, HOSTILE]


USAGE_ERRORS = dict(_usage_errors())


@pytest.mark.usefixtures("project_dir")
@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_usage_errors_quote_no_secret_and_no_escape(args: list[str]) -> None:
    """Click's message names the bad value redacted, its escapes shown, never obeyed."""
    result = CliRunner().invoke(cli, args)
    out = result.output
    assert result.exit_code == 2, (args, out)
    assert "Error:" in out or "reflexkit:" in out, out
    assert not [raw for raw in RAW if raw in out], ascii(out)


def test_the_console_script_gates_usage_errors(project_dir: Path) -> None:
    """The real process: a bad --limit and an unknown command print no secret, exit 2."""
    for args in (["recent", "cart", "--limit", HOSTILE], [HOSTILE], ["stats", HOSTILE]):
        done = subprocess.run(
            [sys.executable, "-m", "reflexkit", *args],
            cwd=project_dir,
            capture_output=True,
            check=False,
            timeout=60,
        )
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert "Error:" in err, err
        assert "[REDACTED:github_token]" in err, err
        assert not [raw for raw in RAW if raw in err], ascii(err)
        assert not done.stdout


@pytest.mark.usefixtures("project_dir")
def test_a_good_command_line_still_exits_0() -> None:
    """The gate on errors changes nothing for a command that works: exit 0, its output."""
    result = CliRunner().invoke(cli, ["recent", "cart"])
    assert result.exit_code == 0, result.output


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The command in a real process: its warnings reach stderr as Python's defaults show them.

    (In this process, pytest's ``filterwarnings = error`` would raise them instead.)
    """
    return subprocess.run(
        [sys.executable, "-m", "reflexkit", *args],
        cwd=cwd,
        capture_output=True,
        check=False,
        timeout=60,
    )


def test_a_debug_traceback_passes_the_gate(project_dir: Path) -> None:
    """--debug prints the traceback, but not the secret or the escape its message quotes."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": HOSTILE}})
    )
    done = invoke_cli(project_dir, "--debug", "stats")
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" in err, err
    assert "ConfigError" in err, err
    assert not [raw for raw in RAW if raw in err], ascii(err)


def test_a_warning_about_a_planted_record_passes_the_gate(project_dir: Path) -> None:
    """A record the agent planted in memory is skipped with a warning that quotes no secret."""
    record = _serde.unstructure(make_reflection("cart"))
    record["category"] = HOSTILE
    memory = project_dir / ".reflexkit" / "memory" / "reflections.jsonl"
    memory.parent.mkdir(parents=True)
    memory.write_bytes(orjson.dumps(record) + b"\n")
    for args in (["recent", "cart"], ["--json", "recent", "cart"]):
        done = _run(args, project_dir)
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "skipped the record" in err, (args, err)
        assert not [raw for raw in RAW if raw in err], (args, ascii(err))
