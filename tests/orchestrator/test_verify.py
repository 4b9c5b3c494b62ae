"""Verification runs real commands: pass, fail, time out, missing program, long output."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._text import cut_middle
from reflexkit.models import FailureType
from reflexkit.orchestrator._verify import (
    AttemptId,
    CheckInputs,
    Verifier,
    failure_context,
    modified_files,
    needs_shell,
)
from reflexkit.redaction import Redactor

PY = shlex.quote(sys.executable)


def py(code: str) -> str:
    """Return a command line that runs *code* with this Python."""
    return f"{PY} -c {shlex.quote(code)}"


def test_all_pass(tmp_path: Path) -> None:
    """Every command exits 0: passed, the last command named."""
    (tmp_path / "x.txt").write_text("ok", encoding="utf-8")
    check = py("import sys; sys.exit(0 if open('x.txt').read() == 'ok' else 1)")
    result = Verifier([py("pass"), check], timeout_s=10).run(tmp_path)
    assert result.passed
    assert result.command == check
    assert result.exit_code == 0


def test_stops_at_first_failure(tmp_path: Path) -> None:
    """The failing command, its exit code and output are reported; later ones don't run."""
    fail = py("import sys; print('out'); print('boom', file=sys.stderr); sys.exit(3)")
    later = py("open('ran.txt', 'w').write('x')")
    result = Verifier([py("pass"), fail, later], timeout_s=10).run(tmp_path)
    assert not result.passed
    assert result.command == fail
    assert result.exit_code == 3
    assert "out" in result.output
    assert "boom" in result.output
    assert not (tmp_path / "ran.txt").exists()


def test_shell_syntax_runs_through_bash(tmp_path: Path) -> None:
    """Pipes and && need a shell; quoted punctuation does not."""
    assert needs_shell("echo hi | grep h")
    assert needs_shell("make && make test")
    assert needs_shell('echo "$HOME"')
    assert needs_shell("FOO=1 pytest")
    assert not needs_shell('python -c "import sys; sys.exit(0 if 1 else (2))"')
    assert not needs_shell("pytest -q tests/test_a.py")
    assert not needs_shell("echo 'a | b'")
    result = Verifier(["echo hello | grep -q hello && exit 4"], timeout_s=10).run(tmp_path)
    assert result.exit_code == 4


def test_timeout_kills_the_command(tmp_path: Path) -> None:
    """A command past its time limit is killed, with what it printed so far."""
    slow = py("import time; print('started', flush=True); time.sleep(30)")
    result = Verifier([slow], timeout_s=0.5).run(tmp_path)
    assert not result.passed
    assert result.timed_out
    assert result.exit_code is None
    assert "started" in result.output
    assert "timed out after 0.5 s" in result.output
    assert result.duration_ms < 5_000


def test_timeout_kills_grandchildren(tmp_path: Path) -> None:
    """A shell command's children are killed with it, so the run does not hang on them."""
    result = Verifier(["sleep 30 | cat"], timeout_s=0.5).run(tmp_path)
    assert result.timed_out
    assert result.duration_ms < 5_000


def test_missing_program(tmp_path: Path) -> None:
    """A program that does not exist is exit code 127 and a clear message, not an exception."""
    result = Verifier(["no-such-program-xyz --check"], timeout_s=10).run(tmp_path)
    assert not result.passed
    assert result.exit_code == 127
    assert result.output == "command not found: no-such-program-xyz (is it installed and on PATH?)"
    context = failure_context(result, AttemptId(task="t", subtask="s", attempt=1))
    assert context.failure_type is FailureType.TOOL_ERROR


def test_missing_program_in_a_shell_command(tmp_path: Path) -> None:
    """Through bash the exit code is 127 too."""
    result = Verifier(["no-such-program-xyz && true"], timeout_s=10).run(tmp_path)
    assert result.exit_code == 127
    assert "no-such-program-xyz" in result.output


def test_long_output_keeps_head_and_tail(tmp_path: Path) -> None:
    """Long output keeps its head and tail and says how much was cut."""
    noisy = py("import sys; print('HEAD' + 'x' * 50000 + 'TAIL'); sys.exit(1)")
    result = Verifier([noisy], timeout_s=10, max_output_chars=1000).run(tmp_path)
    assert result.output.startswith("HEAD")
    assert result.output.rstrip().endswith("TAIL")
    cut = 50009 - 1000  # 4 + 50000 + 4 bytes and a newline
    assert f"\n[... {cut} bytes cut ...]\n" in result.output
    assert len(result.output) < 1100


def test_cut_middle_leaves_short_text() -> None:
    """Short text is left alone."""
    assert cut_middle("abc", 3) == "abc"
    assert cut_middle("abcdef", 4) == "ab\n[... 2 characters cut ...]\nef"


def test_failure_context_is_redacted(tmp_path: Path) -> None:
    """Secrets in the output never reach the FailureContext."""
    secret = "sk-ant-api03-" + "A" * 80
    leak = py(f"import sys; print('token {secret}'); sys.exit(1)")
    result = Verifier([leak], timeout_s=10).run(tmp_path)
    context = failure_context(
        result,
        AttemptId(task="t", subtask="s", attempt=2, session_id="run1"),
        files_modified=("a.py",),
        redactor=Redactor(environ={}),
    )
    assert secret not in context.error_output
    assert "REDACTED" in context.error_output
    assert context.attempt_number == 2
    assert context.session_id == "run1"
    assert context.files_modified == ("a.py",)
    assert context.exit_code == 1


def test_timeout_failure_type(tmp_path: Path) -> None:
    """A timeout is typed as such."""
    result = Verifier([py("import time; time.sleep(5)")], timeout_s=0.3).run(tmp_path)
    assert failure_context(result, AttemptId(task="t", subtask="s", attempt=1)).failure_type is (
        FailureType.TIMEOUT
    )


def test_modified_files_outside_git(tmp_path: Path) -> None:
    """No repository: no list."""
    (tmp_path / "a.py").write_text("x", encoding="utf-8")
    assert modified_files(tmp_path) == ()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_modified_files_from_git(tmp_path: Path) -> None:
    """Changed, new and deleted files are listed, relative to the repository root."""

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "kept.py").write_text("1", encoding="utf-8")
    (tmp_path / "gone.py").write_text("1", encoding="utf-8")
    git("add", ".")
    git("-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "init")
    (tmp_path / "kept.py").write_text("2", encoding="utf-8")
    (tmp_path / "gone.py").unlink()
    (tmp_path / "new dir").mkdir()
    (tmp_path / "new dir" / "new file.py").write_text("3", encoding="utf-8")
    assert modified_files(tmp_path) == ("gone.py", "kept.py", "new dir/new file.py")


def test_check_inputs_read_any_command_word_without_raising(tmp_path: Path) -> None:
    """A word too long to be a file name (`python -c "<300 characters>"`) is just a word.

    CheckInputs.of never raises: it used to fail with ENAMETOOLONG on such a command, and the
    loop logged a traceback on every attempt with the checks' changes unwatched.
    """
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    code = "import sys; " * 30 + "print(1)"
    inputs = CheckInputs.of([f'python -c "{code}"', "pytest tests/test_a.py"], tmp_path)
    assert inputs.files == {"tests/test_a.py": inputs.files["tests/test_a.py"]}


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (f"{PY} -m reflexkit_no_such_runner_xyz", "No module named reflexkit_no_such_runner_xyz"),
        ("no-such-program-xyz --flag", "command not found: no-such-program-xyz"),
        ("no-such-program-xyz -q && echo done", "no-such-program-xyz: command not found"),
        ("sh -c 'no-such-program-xyz'", "no-such-program-xyz: not found"),
    ],
)
def test_a_check_that_cannot_start_says_so(tmp_path: Path, command: str, shown: str) -> None:
    """A missing program, shell command or runner module: the check never ran (#26)."""
    result = Verifier([command], timeout_s=10).run(tmp_path)
    assert not result.passed
    assert result.cannot_run is not None
    assert shown in result.cannot_run


def test_a_missing_program_in_the_projects_venv_cannot_run(tmp_path: Path) -> None:
    """A runner missing from the project's own virtualenv is its environment, not its code."""
    result = Verifier([".venv/bin/pytest -q && true"], timeout_s=10).run(tmp_path)
    assert result.cannot_run is not None
    assert ".venv/bin/pytest" in result.cannot_run


@pytest.mark.parametrize(
    "command",
    [
        f"{PY} check.py",  # the attempt may be the one to write check.py
        "./run.sh && true",
        "bash run.sh",
    ],
)
def test_a_missing_project_file_is_the_attempts(tmp_path: Path, command: str) -> None:
    """A file of the project that is not there (yet) is for the next attempt to write."""
    result = Verifier([command], timeout_s=10).run(tmp_path)
    assert not result.passed
    assert result.cannot_run is None


def test_a_script_that_is_not_executable_is_the_attempts(tmp_path: Path) -> None:
    """``./run.sh: Permission denied`` names a file of the project: the attempt can fix it."""
    (tmp_path / "run.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    result = Verifier(["./run.sh"], timeout_s=10).run(tmp_path)
    assert result.exit_code == 126
    assert result.cannot_run is None


def test_a_failing_run_that_prints_a_missing_command_ran(tmp_path: Path) -> None:
    """A test run with its own verdict ran, whatever else it printed."""
    lines = "".join(f"print('ok {n} - step {n}');" for n in range(1, 20))
    code = f"{lines}print('x: command not found');print('not ok 20 - last');raise SystemExit(1)"
    result = Verifier([py(code)], timeout_s=10).run(tmp_path)
    assert not result.passed
    assert result.cannot_run is None


def test_a_check_that_fails_its_assertion_ran(tmp_path: Path) -> None:
    """An ordinary failure carries no setup verdict."""
    result = Verifier([py("assert 1 == 2")], timeout_s=10).run(tmp_path)
    assert result.cannot_run is None
