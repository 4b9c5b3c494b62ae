"""bash's errors and traces, and commands killed by timeout."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


def test_bash_trace_quotes_the_command_that_failed(tmp_path: Path) -> None:
    """Under ``bash -x`` the traced command just above the error is the one that failed."""
    write_files(
        tmp_path,
        {"release.sh": 'set -eu\nout=dist/v2\nmkdir -p "$out"\ncp build/app.zip "$out/"\n'},
    )
    failure = run_in_bash(
        "bash -x release.sh", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "No such file or directory" in text
    assert "+ cp build/app.zip dist/v2/" in text


@pytest.mark.skipif(shutil.which("timeout") is None, reason="no GNU timeout on this machine")
def test_timeout_quotes_first_and_last_of_a_repeated_line_and_skips_punctuation(
    tmp_path: Path,
) -> None:
    """A loop's repeated progress is quoted first and last; ``...`` is not what it said.

    The line before the loop is quoted, not the punctuation (TAP's ``...``) after it.
    """
    write_files(
        tmp_path,
        {
            "poll.py": """
            import time
            print("ok 1 - connected to queue", flush=True)
            print("...", flush=True)
            n = 0
            while True:
                n += 1
                print(f"polled {n} times, queue empty", flush=True)
                time.sleep(0.2)
            """
        },
    )
    failure = run_in_bash(f"timeout 1 {sys.executable} poll.py", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TIMEOUT
    text = reflection_text(reflection)
    assert "polled 1 times, queue empty" in text
    assert "ok 1 - connected to queue" in text


@pytest.mark.skipif(shutil.which("timeout") is None, reason="no GNU timeout on this machine")
def test_timeout_quotes_the_first_line_the_program_printed(tmp_path: Path) -> None:
    """The start (``poll 1: queued``) beside the last lines: the state that never changed."""
    write_files(
        tmp_path,
        {
            "poll.py": """
            import itertools, time

            for n in itertools.count(1):
                print(f"poll {n}: {'queued' if n < 40 else 'running'}", flush=True)
                time.sleep(0.01)
            """,
        },
    )
    failure = run_in_bash(f"timeout 2 {sys.executable} poll.py", tmp_path)
    assert failure.exit_code == 124
    assert "poll 1: queued" in reflection_text(GEN.generate(failure))


def test_bash_test_builtin_error_and_the_line_printed_after_it(tmp_path: Path) -> None:
    """``[: : integer expression expected`` is the shell's error; the script's last line too.

    The error does not stop the script: it prints its own verdict after it, and that verdict
    is what the failure looks like to whoever reads the log.
    """
    write_files(
        tmp_path,
        {
            "gate.sh": """
            set -u
            COUNT=$(grep -c TODO notes.txt 2>/dev/null || true)
            echo "todo count: ${COUNT:-none}"
            [ "$COUNT" -lt 5 ] || { echo "TODO budget exceeded, 5 allowed"; exit 1; }
            """
        },
    )
    failure = run_in_bash("bash gate.sh 2>&1", tmp_path)  # one stream, as printed
    assert failure.exit_code == 1
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "gate.sh: line 4: [: : integer expression expected" in text
    assert "TODO budget exceeded, 5 allowed" in text
    assert reflection.failure_type is FailureType.TOOL_ERROR


@pytest.mark.skipif(shutil.which("timeout") is None, reason="no GNU timeout on this machine")
@pytest.mark.parametrize("options", ["-s KILL", "--signal=KILL", "-k 1 -s TERM"])
def test_timeout_with_a_signal_option_is_a_timeout(tmp_path: Path, options: str) -> None:
    """``timeout -s KILL 1 cmd`` exits 137, not 124: still the time limit, not a crash."""
    write_files(
        tmp_path, {"serve.py": "import time\nprint('listening', flush=True)\ntime.sleep(30)\n"}
    )
    failure = run_in_bash(f"timeout {options} 1 {sys.executable} serve.py", tmp_path)
    assert failure.exit_code in {124, 137}
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TIMEOUT
    assert reflection.category is ReflectionCategory.APPROACH_FLAW
    assert "listening" in reflection_text(reflection)


_GOLDEN = {
    "render.py": "import sys\nfor n in range(3):\n    print(f'row {n}: {n * n}')\n",
    "expected/rows.txt": "row 0: 0\nrow 1: 1\nrow 2: 4\n",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_golden_files_a_script_regenerates_are_a_test_failure_quoting_the_change(
    tmp_path: Path,
) -> None:
    """``script && git diff --exit-code``: each changed file with its first `-` and `+` lines."""
    write_files(tmp_path, _GOLDEN)
    setup = "git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -qm base"
    assert run_in_bash(setup, tmp_path).exit_code == 0
    (tmp_path / "render.py").write_text(
        "for n in range(3):\n    print(f'row {n}: {n + n}')\n", encoding="utf-8"
    )
    failure = run_in_bash(
        f"{sys.executable} render.py > expected/rows.txt && git diff --exit-code", tmp_path
    )
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert reflection.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert "expected/rows.txt: -row 1: 1 / +row 1: 2" in text


def test_diff_u_of_expected_and_actual_output_is_a_test_failure(tmp_path: Path) -> None:
    """``diff -u expected actual`` compares without git: the same facts."""
    write_files(tmp_path, {**_GOLDEN, "render.py": "print('row 0: 0')\nprint('row 1: 2')\n"})
    failure = run_in_bash(
        f"{sys.executable} render.py > out.txt && diff -u expected/rows.txt out.txt", tmp_path
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert "out.txt: -row 1: 1 / +row 1: 2" in reflection_text(reflection)


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_a_formatters_drift_shown_by_git_diff_is_a_lint_error(tmp_path: Path) -> None:
    """After a formatter (here a stand-in script named so), the diff is formatting drift."""
    write_files(tmp_path, {"app.py": "x  =  1\n", "fmt.sh": "sed -i 's/  */ /g' app.py\n"})
    setup = "git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -qm base"
    assert run_in_bash(setup, tmp_path).exit_code == 0
    failure = run_in_bash("bash fmt.sh && git diff --exit-code", tmp_path)
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.LINT_ERROR, failure.error_output
    assert "app.py: -x  =  1 / +x = 1" in reflection_text(reflection)
