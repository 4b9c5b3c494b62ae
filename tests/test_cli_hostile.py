"""The command line against hostile input and a newcomer's habits, in real processes.

Each test starts ``python -m reflexkit`` as a shell would: pipes whose reader leaves,
closed descriptors, narrow encodings, a terminal on stdin, devices and FIFOs where files
belong, JSON built to hurt the parser, a deleted working directory.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import orjson
import pytest

from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

PY = sys.executable
MEMORY = Path(".reflexkit") / "memory" / "reflections.jsonl"
FAILURE = {
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q tests/test_café.py",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_café.py::test_total - assert 'naïve ☕ 𝄞' == 'x'\n",
}


def reflexkit(
    root: Path,
    *args: str,
    stdin: bytes | None = b"",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m reflexkit ARGS`` in *root*, as a shell would."""
    full_env = {k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"}
    full_env.update(env or {})
    return subprocess.run(
        [PY, "-m", "reflexkit", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def in_shell(root: Path, script: str, *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a shell *script* in *root*; ``$RK`` is the reflexkit command."""
    env = {k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"}
    env["RK"] = f"{shlex.quote(PY)} -m reflexkit"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def records(root: Path) -> list[dict[str, object]]:
    """The records in the project's memory file."""
    path = root / MEMORY
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with heuristic reflection and one failure in ``fail.json``."""
    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})
    )
    (tmp_path / "fail.json").write_text(json.dumps(FAILURE))
    return tmp_path


def seed(root: Path, count: int) -> None:
    """Put *count* reflections of checkout/discount in memory."""
    for _ in range(count):
        assert reflexkit(root, "reflect", "--input", "fail.json").returncode == 0


# --- output: pipes, closed descriptors, encodings -------------------------------------------


READER_LEAVES = "(exec <&-; sleep 1)"  # a reader that closes the pipe at once, then lingers


@pytest.mark.parametrize(
    "command",
    [
        "$RK reflect --input fail.json",
        "$RK reflect --input fail.json --json",
        "$RK recent discount",
        "$RK recent discount --json",
        "$RK stats",
        "$RK config check",
    ],
)
def test_a_reader_that_leaves_ends_the_command_quietly(project: Path, command: str) -> None:
    """`... | head -1`: exit 141 as for any Unix tool, no traceback, no "Broken pipe" line."""
    seed(project, 1)
    done = in_shell(project, f'{command} | {READER_LEAVES}; echo "rc=${{PIPESTATUS[0]}}"')
    assert done.stdout.strip() == "rc=141", done.stderr
    assert "Broken pipe" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_reader_that_leaves_costs_the_output_never_the_record(project: Path) -> None:
    """`reflect | head -c 10` saves the reflection although its output went nowhere."""
    done = in_shell(project, f"$RK reflect --input fail.json | {READER_LEAVES}")
    assert done.returncode == 0, done.stderr
    (saved,) = records(project)
    assert saved["subtaskId"] == "discount"


def test_head_reads_the_first_line_of_a_long_answer(project: Path) -> None:
    """`recent --json | head -1` over more output than a pipe holds: first line, no noise.

    The exit is 141 when the reader had gone before a write, 0 when it left in the middle of
    one (the kernel then reports a short write, not an error).
    """
    with JsonlMemory(project / MEMORY) as memory:
        for attempt in range(1, 301):
            memory.append(make_reflection("discount", task_id="checkout", attempt=attempt))
    done = in_shell(
        project, '$RK recent discount --json --limit 300 | head -1; echo "rc=${PIPESTATUS[0]}"'
    )
    first, code = done.stdout.split()
    assert first == "["
    assert code in {"rc=0", "rc=141"}, done.stderr
    assert done.stderr == ""


def test_a_closed_stdout_discards_the_output_and_keeps_the_record(project: Path) -> None:
    """`reflect >&-`: the reflection is saved, and no file we open becomes "stdout"."""
    done = in_shell(project, "$RK reflect --input fail.json >&-")
    assert done.returncode == 0, done.stderr
    assert [r["subtaskId"] for r in records(project)] == ["discount"]
    seed(project, 1)
    done = in_shell(project, "$RK recent discount >&- 2>&-")
    assert done.returncode == 0
    assert all(line.startswith(b"{") for line in (project / MEMORY).read_bytes().splitlines())


def test_a_closed_stderr_still_gives_the_exit_code(project: Path) -> None:
    """An error with stderr closed: nothing to print it on, exit 2 all the same."""
    done = in_shell(project, "$RK recent 'bad id' 2>&-")
    assert done.returncode == 2


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252", "ascii:strict"])
def test_a_narrow_encoding_escapes_what_it_cannot_hold(project: Path, encoding: str) -> None:
    """Text output and --json under a non-UTF-8 stdout: no UnicodeEncodeError, JSON lossless."""
    env = {"PYTHONIOENCODING": encoding}
    text = reflexkit(project, "reflect", "--input", "fail.json", env=env)
    assert text.returncode == 0, text.stderr
    assert b"Traceback" not in text.stderr
    assert b"internal error" not in text.stderr
    as_json = reflexkit(project, "reflect", "--input", "fail.json", "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    # Whatever the stream could not encode is a JSON escape: the text comes back whole.
    codec = encoding.split(":", maxsplit=1)[0]
    codec = "utf-8" if codec == "ascii" else codec  # click writes UTF-8 to an "ascii" stream
    data = json.loads(as_json.stdout.decode(codec))
    assert "naïve ☕ 𝄞" in data["analysis"]
    listed = reflexkit(project, "recent", "discount", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert all("naïve ☕ 𝄞" in r["analysis"] for r in json.loads(listed.stdout.decode(codec)))


@pytest.mark.parametrize(
    "env",
    [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"COLUMNS": "5"}, {"LC_ALL": "C", "LANG": "C"}],
    ids=["NO_COLOR", "TERM=dumb", "COLUMNS=5", "LC_ALL=C"],
)
def test_a_plain_environment_gets_plain_whole_output(project: Path, env: dict[str, str]) -> None:
    """No escape sequences on a pipe, and the memory path printed unbroken even at 5 columns."""
    seed(project, 1)
    for args in (["stats"], ["recent", "discount"], ["reflect", "--input", "fail.json"]):
        done = reflexkit(project, *args, env=env)
        assert done.returncode == 0, done.stderr
        assert b"\x1b" not in done.stdout
    stats = reflexkit(project, "stats", env=env)
    assert str(project / MEMORY).encode() in stats.stdout
