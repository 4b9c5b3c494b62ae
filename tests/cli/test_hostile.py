"""The command line against hostile input and a newcomer's habits.

What is about the process starts ``python -m reflexkit`` as a shell would: pipes whose
reader leaves, closed descriptors, narrow encodings, a terminal on stdin, devices and FIFOs
where files belong, a deleted working directory, another user. What a command says of its
input (JSON built to hurt the parser, project.json, ids, paths) runs in-process
(:func:`invoke_cli`): the same error boundary, without a process start per case.
"""

from __future__ import annotations

import json
import os
import pty
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson
import pytest

from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

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
        assert invoke_cli(root, "reflect", "--input", "fail.json").returncode == 0


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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize(
    "env",
    [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"COLUMNS": "5"}, {"LC_ALL": "C", "LANG": "C"}],
    ids=["NO_COLOR", "TERM=dumb", "COLUMNS=5", "LC_ALL=C"],
)
def test_a_plain_environment_gets_plain_whole_output(project: Path, env: dict[str, str]) -> None:
    """No escape sequences on a pipe, and the memory path printed unbroken even at 5 columns.

    The console reads NO_COLOR, TERM and COLUMNS when a command makes it: those run in this
    process. The C locale is the interpreter's, from its start: that one runs a real process.
    """
    seed(project, 1)
    run = reflexkit if "LC_ALL" in env else invoke_cli
    outputs = {}
    for args in (["stats"], ["recent", "discount"], ["reflect", "--input", "fail.json"]):
        done = run(project, *args, env=env)
        assert done.returncode == 0, done.stderr
        assert b"\x1b" not in done.stdout
        outputs[args[0]] = done
    stats = outputs["stats"]
    assert str(project / MEMORY).encode() in stats.stdout
    assert b"records" in stats.stdout  # a table squeezed to 5 columns showed empty cells


# --- input: terminals, devices, FIFOs, sizes ---------------------------------------------------


def test_reflect_alone_on_a_terminal_says_what_it_wants(project: Path) -> None:
    """`reflexkit reflect` typed alone: exit 2 with what to do, not a silent wait for input."""
    main, other = pty.openpty()
    try:
        done = subprocess.run(
            [PY, "-m", "reflexkit", "reflect"],
            cwd=project,
            stdin=other,
            capture_output=True,
            timeout=30,
            check=False,
        )
    finally:
        os.close(other)
        os.close(main)
    assert done.returncode == 2, done.stderr
    assert b"stdin is a terminal" in done.stderr
    assert b"--input FILE" in done.stderr


def test_input_dash_on_a_terminal_reads_it_after_a_hint(project: Path) -> None:
    """`--input -` on a terminal says how to end the input, then reads what is typed."""
    main, other = pty.openpty()
    try:
        proc = subprocess.Popen(
            [PY, "-m", "reflexkit", "reflect", "--input", "-", "--no-save"],
            cwd=project,
            stdin=other,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(main, json.dumps(FAILURE).encode() + b"\n\x04")  # the line, then Ctrl-D
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(other)
        os.close(main)
    assert proc.returncode == 0, err
    assert b"end with Ctrl-D" in err
    assert b"root_cause" in out or b"Analysis" in out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_as_input_is_refused_at_once(project: Path, device: str) -> None:
    """`--input /dev/zero` is one line and exit 2, not an endless read into memory."""
    done = reflexkit(project, "reflect", "--input", device, timeout=30)
    assert done.returncode == 2
    assert f"{device}: is a device".encode() in done.stderr
    assert records(project) == []


def test_endless_stdin_is_cut_off_with_memory_bounded(project: Path) -> None:
    """`cat /dev/zero | reflexkit reflect`: exit 2 after the limit, peak memory bounded."""
    done = in_shell(
        project,
        "head -c 2000000000 /dev/zero | tr '\\0' ' ' | /usr/bin/env time -f %M $RK reflect",
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "stdin: more than 32 MiB" in done.stderr
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    assert peak_kib < 200_000, peak_kib  # 2 GB offered, well under 200 MB held


@pytest.mark.slow
def test_a_fifo_nobody_writes_is_an_error_not_a_hang(project: Path) -> None:
    """A named FIFO with no writer, as --input, --config or a task file: exit 2, at once."""
    fifo = project / "fifo"
    os.mkfifo(fifo)
    for args in (
        ["reflect", "--input", "fifo"],
        ["config", "check", "--config", "fifo"],
        ["run", "fifo"],
    ):
        done = reflexkit(project, *args, timeout=30)
        assert done.returncode == 2, (args, done.stderr)
        assert b"fifo: a FIFO with nothing written to it" in done.stderr, done.stderr


def test_a_fifo_or_a_pipe_with_a_writer_is_read(project: Path) -> None:
    """Process substitution `<(...)` and a FIFO that is being written both work."""
    done = in_shell(project, "$RK reflect --no-save --input <(cat fail.json)")
    assert done.returncode == 0, done.stderr
    done = in_shell(project, "mkfifo f2; (cat fail.json > f2 &); sleep 0.5; $RK reflect --input f2")
    assert done.returncode == 0, done.stderr
    assert [r["subtaskId"] for r in records(project)] == ["discount"]


def test_a_fifo_whose_writer_comes_a_moment_later_is_read(project: Path) -> None:
    """`--input` of a named FIFO waits a few seconds for its writer, as a pipe would."""
    done = in_shell(project, "mkfifo f3; (sleep 1; cat fail.json > f3) & $RK reflect --input f3")
    assert done.returncode == 0, done.stderr
    assert [r["subtaskId"] for r in records(project)] == ["discount"]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/tty-nonexistent", "."])
def test_config_that_is_not_a_file_is_one_line(project: Path, target: str) -> None:
    """--config at a device, a missing path or a folder: exit 2, one line, no hang.

    Only a device can block a read: it runs a real process with a time limit, the others run
    in this process.
    """
    if target.startswith("/dev/zero"):
        done = reflexkit(project, "recent", "discount", "--config", target, timeout=30)
    else:
        done = invoke_cli(project, "recent", "discount", "--config", target)
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


# --- JSON built to hurt ---------------------------------------------------------------------


def failure_text(**fields: str) -> str:
    """The failure as JSON text, with some values replaced by raw JSON."""
    parts = {k: json.dumps(v) for k, v in FAILURE.items()}
    parts.update(fields)
    return "{" + ",".join(f'"{k}":{v}' for k, v in parts.items()) + "}"


HURTFUL = {
    "5000-digit integer": (failure_text(attemptNumber="1" + "0" * 5000), "number too large"),
    "NaN": (failure_text(exitCode="NaN"), "invalid JSON"),
    "Infinity": (failure_text(durationMs="Infinity"), "invalid JSON"),
    "repeated key": (
        failure_text()[:-1] + ',"subtaskId":"other"}',
        'the key "subtaskId" is repeated',
    ),
    "lone surrogate": (failure_text(errorOutput='"\\ud800 x"'), "surrogate"),
    "top-level array": ("[" + failure_text() + "]", "$: expected an object"),
    "100,000-deep nesting": ("[" * 100_000 + "]" * 100_000, "nested more than 1024 levels"),
    "1,000-deep nesting in a field": (
        failure_text(filesModified="[" * 1000 + "]" * 1000),
        "nested too deep",
    ),
    "file of NULs": ("\0" * 10_000, "invalid JSON"),
    "empty": ("", "empty"),
    "number for a string": (failure_text(taskId="5"), "$.taskId: expected an id of letters"),
    "string for a number": (failure_text(attemptNumber='"1"'), "$.attemptNumber: expected"),
    "true as attempt number": (failure_text(attemptNumber="true"), "got true"),
    "1.0 as attempt number": (failure_text(attemptNumber="1.0"), "got 1.0"),
    "negative attempt": (failure_text(attemptNumber="-1"), "got -1"),
    "huge attempt": (failure_text(attemptNumber="1e300"), "$.attemptNumber"),
    "negative duration": (failure_text(durationMs="-5"), "$.durationMs"),
    "path in subtaskId": (failure_text(subtaskId='"../../etc"'), "$.subtaskId: expected an id"),
    "newline in taskId": (failure_text(taskId='"a\\nb"'), "$.taskId: expected an id"),
    "NUL in subtaskId": (failure_text(subtaskId='"a\\u0000b"'), "$.subtaskId: expected an id"),
    "NFD subtaskId": (failure_text(subtaskId='"cafe\\u0301"'), "$.subtaskId: expected an id"),
    "10,000-character id": (failure_text(subtaskId=json.dumps("a" * 10_000)), "$.subtaskId"),
}


@pytest.mark.parametrize(("text", "expected"), HURTFUL.values(), ids=HURTFUL.keys())
def test_hurtful_json_is_one_clear_line_and_exit_2(project: Path, text: str, expected: str) -> None:
    """Each attack on the parser or the model: exit 2, a message naming it, nothing stored."""
    done = invoke_cli(project, "reflect", stdin=text.encode())
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    assert expected in err, err
    assert "Traceback" not in err
    assert "internal error" not in err
    assert all(len(line) < 400 for line in err.splitlines())
    assert records(project) == []


def test_valid_input_around_the_edges_is_accepted(project: Path) -> None:
    """What is hostile-looking but valid passes: a big exit code, unicode text, a BOM."""
    text = failure_text(exitCode="-9", attemptNumber="9223372036854775807")
    done = invoke_cli(project, "reflect", stdin=b"\xef\xbb\xbf" + text.encode())
    assert done.returncode == 0, done.stderr
    (saved,) = records(project)
    assert saved["attemptNumber"] == 9223372036854775807


# --- project.json, task files and the environment ---------------------------------------------


def write_config(root: Path, text: str) -> None:
    """Replace the project's project.json with *text*."""
    (root / ".reflexkit" / "project.json").write_text(text)


CONFIGS = {
    "repeated key": (
        '{"reflexion": {"backend": "heuristic", "backend": "llm"}}',
        'the key "backend" is repeated',
    ),
    "5000-digit integer": (
        '{"reflexion": {"maxReflectionsPerRetry": 1' + "0" * 5000 + "}}",
        "number too large",
    ),
    "bool for an integer": (
        '{"reflexion": {"maxReflectionsPerRetry": true}}',
        "$.reflexion.maxReflectionsPerRetry: expected an integer >= 1, got true",
    ),
    "deep nesting": (
        '{"orchestrator": {"agentCommand": ' + "[" * 1000 + "]" * 1000 + "}}",
        "nested too deep",
    ),
    "newline in a path": (
        '{"memory": {"path": "a\\nb.jsonl"}}',
        "$.memory.path: expected a path without control characters",
    ),
    "NUL in a path": (
        '{"reports": {"path": "a\\u0000b"}}',
        "$.reports.path: expected a path without control characters",
    ),
    "a user that does not exist": (
        '{"memory": {"path": "~no-such-user-h5/m.jsonl"}}',
        "$.memory.path: no such user's home folder",
    ),
    "top-level array": ("[]", "$: expected an object, got a list"),
}


@pytest.mark.parametrize(("text", "expected"), CONFIGS.values(), ids=CONFIGS.keys())
def test_hurtful_project_json_is_exit_2_on_every_command(
    project: Path, text: str, expected: str
) -> None:
    """project.json built to hurt: `recent` and `reflect` both exit 2 with the JSON path."""
    write_config(project, text)
    for args in (["recent", "discount"], ["reflect", "--input", "fail.json"]):
        done = invoke_cli(project, *args)
        assert done.returncode == 2, (args, done.stderr)
        err = done.stderr.decode()
        assert expected in err, err
        assert "internal error" not in err
    assert records(project) == []


def test_a_task_file_with_a_repeated_key_is_refused(project: Path) -> None:
    """Which of two `verify` lists would run? Neither: the task file is an error."""
    (project / "task.json").write_text(
        '{"id": "t", "subtasks": [{"id": "a", "description": "d", "verify": ["true"],'
        ' "verify": ["rm -rf x"]}]}'
    )
    done = invoke_cli(project, "run", "task.json")
    assert done.returncode == 2, done.stderr
    assert b'the key "verify" is repeated' in done.stderr


@pytest.mark.parametrize("value", ["", "   ", "\t\n"])
def test_a_blank_reflexkit_config_means_unset(project: Path, value: str) -> None:
    """`export REFLEXKIT_CONFIG=" "` is no setting: the project's own file is found."""
    done = invoke_cli(project, "config", "check", env={"REFLEXKIT_CONFIG": value})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reflexion"]["backend"] == "heuristic"


def test_a_missing_reflexkit_config_names_the_variable(project: Path) -> None:
    """A path from the environment that is missing says where it came from, newline shown."""
    done = invoke_cli(project, "recent", "discount", env={"REFLEXKIT_CONFIG": "no\nsuch.json"})
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        "reflexkit: no<U+000A>such.json ($REFLEXKIT_CONFIG): no such file"
    )


def test_config_of_a_user_that_does_not_exist(project: Path) -> None:
    """`--config ~nobody-h5/p.json`: exit 2, one line, no RuntimeError."""
    done = invoke_cli(project, "recent", "discount", "--config", "~no-such-user-h5/p.json")
    assert done.returncode == 2
    assert b"no such user's home folder" in done.stderr


def test_a_deleted_working_directory_is_a_setup_error(tmp_path: Path) -> None:
    """Cwd removed under the process: exit 2 saying so, for reading and for reflecting."""
    gone = tmp_path / "gone"
    gone.mkdir()
    (tmp_path / "fail.json").write_text(json.dumps(FAILURE))
    done = in_shell(
        gone,
        f"rmdir {shlex.quote(str(gone))}; $RK recent discount; echo rc=$?;"
        f" $RK reflect --backend heuristic --input {shlex.quote(str(tmp_path / 'fail.json'))};"
        " echo rc=$?",
    )
    assert done.stdout.split() == ["rc=2", "rc=2"], done.stderr
    assert done.stderr.count("the current folder was deleted") == 2


def test_no_home_still_works(project: Path) -> None:
    """HOME unset: reflect and recent work (nothing needs the home folder)."""
    env = {k: v for k, v in os.environ.items() if k not in {"HOME", "REFLEXKIT_CONFIG"}}
    for args in (["reflect", "--input", "fail.json"], ["recent", "discount"]):
        done = subprocess.run(
            [PY, "-m", "reflexkit", *args],
            cwd=project,
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr


# --- an unwritable or misshapen .reflexkit ----------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("a file named .reflexkit/memory", "Not a directory"),
        ("a folder where the memory file goes", "Is a directory"),
    ],
)
def test_a_misshapen_reflexkit_folder_is_a_setup_error(
    project: Path, shape: str, expected: str
) -> None:
    """Memory that can't be opened as laid out: exit 2 naming the path, the reflection shown."""
    memory = project / MEMORY
    if shape.startswith("a file"):
        memory.parent.write_text("not a folder")
    else:
        memory.mkdir(parents=True)
    done = invoke_cli(project, "reflect", "--input", "fail.json")
    assert done.returncode == 2, done.stderr
    assert b"Analysis:" in done.stdout  # the work is printed, not lost
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("reflexkit: could not save the reflection (printed above): ")
    assert expected in last
    for args in (["recent", "discount"], ["stats"]):
        done = invoke_cli(project, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert b"Traceback" not in done.stderr


def as_nobody() -> list[str]:
    """A command prefix that drops root (which ignores permissions) to nobody."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: permissions can't be tested")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder that nobody (uid 65534) can reach, unlike pytest's 0700 tmp_path."""
    path = Path(tempfile.mkdtemp(prefix="reflexkit-h5-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("where", ["read-only .reflexkit", "read-only working directory"])
def test_an_unwritable_place_for_memory_is_a_setup_error(shared_dir: Path, where: str) -> None:
    """No permission to create memory: exit 2 with the path and the reason, no traceback."""
    (shared_dir / "fail.json").write_text(json.dumps(FAILURE))
    (shared_dir / "fail.json").chmod(0o644)
    if where.startswith("read-only .reflexkit"):
        (shared_dir / ".reflexkit").mkdir(mode=0o555)
        (shared_dir / ".reflexkit").chmod(0o555)
    done = subprocess.run(
        [*as_nobody(), PY, "-m", "reflexkit", "reflect", "--backend", "heuristic"],
        cwd=shared_dir,
        input=json.dumps(FAILURE).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"},
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.decode().strip().splitlines()[-1]
    assert "Permission denied" in last, last
    assert "Traceback" not in done.stderr.decode()


@pytest.mark.parametrize("umask", [0o000, 0o077])
def test_the_memory_file_is_private_whatever_the_umask(project: Path, umask: int) -> None:
    """Umask 000 does not make memory world-writable (reflections become prompts)."""
    done = in_shell(project, f"umask {umask:03o}; $RK reflect --input fail.json")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((project / MEMORY).stat().st_mode) == 0o600


@pytest.mark.parametrize("command", [["recent", "discount"], ["reflect", "--input", "fail.json"]])
def test_a_fifo_as_the_memory_file_is_an_error_not_a_hang(
    project: Path, command: list[str]
) -> None:
    """memory.path naming a FIFO: opening it would wait for a writer forever; exit 2 instead."""
    (project / MEMORY).parent.mkdir(parents=True)
    os.mkfifo(project / MEMORY)
    done = reflexkit(project, *command, timeout=30)
    assert done.returncode == 2, done.stderr
    assert b"$.memory.path: " in done.stderr
    assert b"is a FIFO; expected a JSONL file" in done.stderr


@pytest.mark.parametrize(
    "subtask_id", ["-x", "a/b", "..", "a\nb", "cafe\u0301", "caf\u00e9", "\u0430pi", "a" * 10_000]
)
def test_recent_refuses_ids_it_can_never_have_stored(project: Path, subtask_id: str) -> None:
    """`recent -- -x`, paths, newlines, NFD/NFC and lookalike letters, 10,000 characters."""
    done = invoke_cli(project, "recent", "--", subtask_id)
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    assert err.startswith("reflexkit: SUBTASK_ID: expected an id of letters"), err
    assert len(err) < 400


def test_very_long_paths_give_short_error_lines(project: Path) -> None:
    """A 10,000-character memory.path or --input name: exit 2, each error line bounded."""
    write_config(project, json.dumps({"memory": {"path": "a" * 10_000}}))
    done = invoke_cli(project, "recent", "discount")
    assert done.returncode == 2
    assert b"$.memory.path: expected a path of at most 4096 bytes" in done.stderr
    assert len(done.stderr) < 400
    write_config(project, "{}")
    for name in ("b" * 5000, "/".join(["c" * 200] * 30)):
        done = invoke_cli(project, "reflect", "--input", name)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr) < 400, done.stderr


def test_an_unreadable_config_or_input_is_one_line(shared_dir: Path) -> None:
    """project.json or --input without read permission: exit 2, "Permission denied"."""
    (shared_dir / ".reflexkit").mkdir(mode=0o755)
    config = shared_dir / ".reflexkit" / "project.json"
    config.write_text("{}")
    config.chmod(0o000)
    failure_file = shared_dir / "fail.json"
    failure_file.write_text(json.dumps(FAILURE))
    failure_file.chmod(0o000)
    env = {k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"}
    for args, shown in (
        (["recent", "discount"], "project.json: cannot read: Permission denied"),
        (["reflect", "--input", "fail.json", "--config", "/dev/null/x"], None),
        (["fixtures", "key", "--input", "fail.json"], "'fail.json' is not readable"),
    ):
        done = subprocess.run(
            [*as_nobody(), PY, "-m", "reflexkit", *args],
            cwd=shared_dir,
            capture_output=True,
            timeout=60,
            check=False,
            env=env,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr.decode()
        if shown is not None:
            assert shown in done.stderr.decode(), done.stderr
    config.chmod(0o644)
    done = subprocess.run(
        [*as_nobody(), PY, "-m", "reflexkit", "reflect", "--input", "fail.json"],
        cwd=shared_dir,
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 2
    assert "'fail.json' is not readable" in done.stderr.decode()


@pytest.mark.parametrize("days", ["99999999999999999999", "1000000"])
def test_prune_older_than_a_date_before_year_1_is_a_usage_error(project: Path, days: str) -> None:
    """`prune --older-than` huge: exit 2 naming the range, not an OverflowError."""
    seed(project, 1)
    done = invoke_cli(project, "prune", "--older-than", days)
    assert done.returncode == 2, done.stderr
    assert b"0<=x<=100000" in done.stderr
    assert len(records(project)) == 1


def test_ages_in_project_json_are_bounded(project: Path) -> None:
    """RetentionDays and lookbackHours that reach before year 1 are config errors."""
    write_config(
        project,
        json.dumps({"reflexion": {"retentionDays": 10**7}, "insights": {"lookbackHours": 10**12}}),
    )
    done = invoke_cli(project, "prune")
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "$.reflexion.retentionDays: expected an integer from 1 to 100000" in err
    assert "$.insights.lookbackHours: expected an integer from 1 to 2400000" in err


WRITTEN_OUTSIDE = {
    "memory in a file the shell runs": ('{{"memory": {{"path": "{victim}"}}}}', "$.memory.path"),
    "memory up and out": ('{{"memory": {{"path": "../{up}"}}}}', "$.memory.path"),
    "memory through a committed link": (
        '{{"memory": {{"path": ".reflexkit/out/victim_rc"}}}}',
        "$.memory.path",
    ),
    "the spool": (
        '{{"memory": {{"backend": "postgres", "spoolPath": "{victim}"}}}}',
        "$.memory.spoolPath",
    ),
    "the hooks log": ('{{"hooks": {{"logPath": "{victim}"}}}}', "$.hooks.logPath"),
    "the reports folder": ('{{"reports": {{"path": "{outside}"}}}}', "$.reports.path"),
}


@pytest.mark.parametrize(("template", "key"), WRITTEN_OUTSIDE.values(), ids=WRITTEN_OUTSIDE)
def test_project_json_names_no_file_outside_the_project_to_write(
    project: Path, template: str, key: str
) -> None:
    """A committed project.json can't have reflexkit append to a file outside the project.

    Before, ``memory.path: ~/.bashrc`` appended every reflection there, and a reflection
    quotes tool output: ``$(...)`` in a failing test's message ran at the next shell.
    """
    outside = project.parent / f"{project.name}-elsewhere"
    outside.mkdir()
    victim = outside / "victim_rc"
    victim.write_text("X=1\n")
    (project / ".reflexkit" / "out").symlink_to(outside)
    up = project.parent / f"{project.name}-victim_rc"
    up.write_text("X=1\n")
    write_config(project, template.format(victim=victim, outside=outside, up=up.name))
    failure = {**FAILURE, "errorOutput": "E   AssertionError: $(touch pwned)"}
    (project / "fail.json").write_text(json.dumps(failure))
    done = in_shell(project, "$RK reflect --input fail.json --backend heuristic")
    assert done.returncode == 2, done.stderr
    assert key in done.stderr
    assert "inside the project" in done.stderr
    assert victim.read_text() == "X=1\n"
    assert up.read_text() == "X=1\n"
    assert list(outside.iterdir()) == [victim]


WRITTEN_INTO_STATE = {
    "memory in git's config": ('{"memory": {"path": ".git/config"}}', "$.memory.path"),
    "memory as a git hook": ('{"memory": {"path": "x/../.git/hooks/pre-commit"}}', "$.memory.path"),
    "the hooks log in git's folder": ('{"hooks": {"logPath": ".git/info/log"}}', "$.hooks.logPath"),
    "the reports in git's folder": ('{"reports": {"path": ".git"}}', "$.reports.path"),
    "memory on the config itself": (
        '{"memory": {"path": ".reflexkit/project.json"}}',
        "$.memory.path",
    ),
}


@pytest.mark.parametrize(("config", "key"), WRITTEN_INTO_STATE.values(), ids=WRITTEN_INTO_STATE)
def test_project_json_names_no_file_of_gits_or_its_own_to_write(
    project: Path, config: str, key: str
) -> None:
    """Inside the project, but git's state or the configuration: refused, naming the key.

    Before, ``memory.path: .git/config`` appended a reflection there and every git
    command after it failed (``fatal: bad config line``).
    """
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    git_config = (project / ".git" / "config").read_bytes()
    write_config(project, config)
    (project / "fail.json").write_text(json.dumps(FAILURE))
    done = in_shell(project, "$RK reflect --input fail.json --backend heuristic")
    assert done.returncode == 2, done.stderr
    assert key in done.stderr
    assert "inside the project outside" in done.stderr
    assert (project / ".git" / "config").read_bytes() == git_config
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert json.loads((project / ".reflexkit" / "project.json").read_text())
