"""Output formats the readers missed on the fifth holdout-like batch (#12 follow-up).

Batch 5 (tests/data/holdout_like/b5-*.json) holds what a coding agent really runs in a
repository: test runners behind npm and pytest.ini options, checkers over several packages,
`cargo clippy`/doc-tests, `make -j4`, git's refusals and hooks, `pip install -e .`. Each test
here runs the real tool where this machine has it (skipped where it does not) on a project of
its own; tools the test environment lacks (jest, eslint, a pip build that needs the package
index) are read from output captured from a real run of another project in
tests/data/tool_outputs. The batch's items are measured, never tested one by one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers import clean_output
from reflexkit.reflection.heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    captured_reflection,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()
BIN = Path(sys.executable).parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.org",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.org",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/nonexistent",
}


def _git(cwd: Path, *commands: str) -> None:
    """Run git commands to set a repository up; any failure is the test's own."""
    for command in commands:
        subprocess.run(["bash", "-c", command], cwd=cwd, env=GIT_ENV, check=True, text=True)


# --- ruff and unittest -----------------------------------------------------------------------


@pytest.mark.skipif(not (BIN / "ruff").exists(), reason="no ruff beside this interpreter")
def test_ruff_fix_quotes_how_many_findings_remain(tmp_path: Path) -> None:
    """``ruff check --fix`` ends ``Found 3 errors (1 fixed, 2 remaining).``: quoted whole."""
    write_files(
        tmp_path,
        {"calc.py": "import os\n\n\ndef area(r):\n    return pi * r * r\n\n\nx = undefined\n"},
    )
    failure = run_in_bash(f"{BIN / 'ruff'} check --no-cache --isolated --fix calc.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "1 fixed, 2 remaining" in failure.error_output
    assert "Found 3 errors (1 fixed, 2 remaining)." in text


def test_unittest_long_assertion_keeps_the_failing_frame(tmp_path: Path) -> None:
    """An assertDictEqual message over many lines must not push the test's frame out."""
    write_files(
        tmp_path,
        {
            "test_settings.py": """
            import unittest

            def merged():
                return {"cache": {"ttl": 60}, "log": {"level": "info"}, "name": "svc"}

            class SettingsTests(unittest.TestCase):
                def test_merge_keeps_nested_keys(self):
                    self.assertDictEqual(merged(), {"cache": {"ttl": 60, "size": 512}, "log": {"level": "info", "format": "json"}, "name": "svc"})
            """  # noqa: E501 -- the long line is the point
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_settings.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert 'test_settings.py", line 8, in test_merge_keeps_nested_keys' in text
    assert "FAIL: test_merge_keeps_nested_keys" in text


# --- bash --------------------------------------------------------------------------------------


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


# --- git ---------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_pull_on_a_detached_head_is_quoted_as_tool_misuse(tmp_path: Path) -> None:
    """``git pull`` off any branch prints no ``error:`` line, only git's own sentence."""
    _git(
        tmp_path,
        "git init -q -b main",
        "echo 1 > v && git add v && git commit -qm one",
        "echo 2 > v && git commit -qam two",
        "git checkout -q HEAD~1",
    )
    failure = run_in_bash("git pull", tmp_path, env=GIT_ENV)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "You are not currently on a branch." in text
    assert reflection.category is ReflectionCategory.TOOL_MISUSE
    assert reflection.failure_type is FailureType.TOOL_ERROR


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_push_declined_by_a_hook_quotes_the_hooks_message(tmp_path: Path) -> None:
    """The server's hook says why on ``remote:`` lines; fetching would not help."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    work.mkdir()
    _git(tmp_path, f"git init -q --bare -b main {remote}")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\necho 'commit message must reference a ticket (ABC-123)' >&2\nexit 1\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    _git(
        work,
        "git init -q -b main",
        f"git remote add origin {remote}",
        "echo x > a && git add a && git commit -qm 'tweak'",
    )
    failure = run_in_bash("git push origin main", work, env=GIT_ENV)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "commit message must reference a ticket (ABC-123)" in text
    assert "(pre-receive hook declined)" in text
    assert "Fetch and integrate" not in text


# --- gcc and cargo -----------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_linker_multiple_definition_alone_is_a_root_cause(tmp_path: Path) -> None:
    """A header that defines a global: nothing is missing, the header is wrong."""
    write_files(
        tmp_path,
        {
            "state.h": "int counter = 0;\nvoid bump(void);\n",
            "state.c": '#include "state.h"\nvoid bump(void) { counter++; }\n',
            "main.c": '#include "state.h"\nint main(void) { bump(); return counter; }\n',
        },
    )
    failure = run_in_bash("gcc -o app main.c state.c", tmp_path)
    reflection = GEN.generate(failure)
    assert "multiple definition of `counter'" in reflection_text(reflection)
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_cargo_doc_test_failure_is_named_with_left_and_right(tmp_path: Path) -> None:
    """A doc-test is named ``src/lib.rs - item (line N)``: quoted whole, with its panic."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "clampy"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": """
            /// Clamps a percentage.
            ///
            /// ```
            /// assert_eq!(clampy::pct(150), 100);
            /// ```
            pub fn pct(v: i32) -> i32 {
                v.max(0)
            }
            """,
        },
    )
    failure = run_in_bash("cargo test --offline -q", tmp_path, timeout=300)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "src/lib.rs - pct (line 3)" in text
    assert "left: 150" in text
    assert "right: 100" in text
    assert "cargo test --doc" in text
    assert reflection.failure_type is FailureType.TEST_FAILURE


# --- pip -----------------------------------------------------------------------------------------


def test_pip_crash_on_a_broken_pyproject_quotes_the_parse_error(tmp_path: Path) -> None:
    """``ERROR: Exception:`` then pip's traceback: the last line says what does not parse."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [project]
            name = "tiny"
            version = "0.1.0"
            dependencies = ["attrs" "cattrs"]
            """
        },
    )
    failure = run_in_bash(
        f"{sys.executable} -m pip install --no-index --no-build-isolation -e .", tmp_path
    )
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "TOMLDecodeError" in failure.error_output
    assert "TOMLDecodeError: " in text
    assert "(at line 4, column" in text
    assert reflection.category is ReflectionCategory.ROOT_CAUSE
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR


def test_pip_build_error_inside_the_local_project_is_its_own() -> None:
    """``pip install -e .``: setuptools' ``error:`` line in the subprocess output is the cause.

    Captured from a real run (the build needs setuptools from the package index).
    """
    reflection = captured_reflection("pip-editable-flat-layout-discovery")
    text = reflection_text(reflection)
    assert "Multiple top-level packages discovered in a flat-layout: ['bot', 'plugins']" in text
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


# --- eslint and jest (captured: no node tools in the test environment) -------------------------


def test_eslint_names_the_warnings_rules_beside_the_errors() -> None:
    """Errors come first, but the warnings' rules are named too: they fail `--max-warnings`."""
    text = reflection_text(captured_reflection("eslint-errors-and-warnings-rules"))
    assert "eqeqeq" in text
    assert "no-else-return" in text
    assert "prefer-template" in text


def test_jest_ci_snapshot_not_written_is_quoted() -> None:
    """Under ``--ci`` a missing snapshot is not written: jest's sentence says so."""
    text = reflection_text(captured_reflection("jest-ci-snapshot-not-written"))
    assert "New snapshot was not written" in text
    assert "render \u203a two lines" in text  # jest joins describe and test with \u203a


def test_jest_suite_that_cannot_load_quotes_the_test_suites_line() -> None:
    """When only a suite failed to load, ``Tests:`` counts no failure: ``Test Suites:`` does."""
    reflection = captured_reflection("jest-suite-cannot-load-test-suites-line")
    text = reflection_text(reflection)
    assert "Test Suites: 1 failed, 1 passed, 2 total" in text
    assert "Cannot find module './tokens' from 'lib/lexer.js'" in text
    # './tokens' is the project's own path, as node's reader says: the import is wrong
    assert reflection.category is ReflectionCategory.ROOT_CAUSE


# --- blank runs ----------------------------------------------------------------------------------


def test_a_run_of_blank_lines_reads_as_two_and_long_blanks_are_cut() -> None:
    """Blank runs carry no fact; read whole, they made line-start patterns take seconds."""
    text = "collected 2 items\n" + "   \n" * 400 + "\t\n\nE   KeyError: 'sku'\n"
    assert clean_output(text) == "collected 2 items\n\n\nE   KeyError: 'sku'\n"
    assert clean_output("a\n\nb\n") == "a\n\nb\n"  # two blank lines are kept as printed
    wide = clean_output("[" + " " * 5000 + "100%]\n")
    assert wide == "[" + " " * 160 + "100%]\n"


def test_a_failure_with_thousands_of_blank_lines_is_still_read(tmp_path: Path) -> None:
    """A program that printed 3,000 blank lines before its traceback: the error is quoted."""
    write_files(
        tmp_path,
        {"report.py": "print('  \\n' * 3000)\nrows = {}\nprint(rows['total'])\n"},
    )
    failure = run_in_bash(f"{sys.executable} report.py 2>&1", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "KeyError: 'total'" in text
    assert 'report.py", line 3' in text
