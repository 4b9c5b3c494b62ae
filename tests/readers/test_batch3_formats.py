"""Output formats the readers missed on the third holdout-like batch (#12 follow-up).

Each test runs the real tool where this machine has it (skipped where it does not), on a
project of its own: the batch's items in tests/data/holdout_like are measured, never tested
one by one. Tools the test environment lacks are read from outputs captured from real runs
in tests/data/tool_outputs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.reflection.heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    captured_reflection,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()
OUTPUTS = DATA / "tool_outputs"
BIN = Path(sys.executable).parent


# --- mypy and the linters: diagnostics quoted as printed ------------------------------------


@pytest.mark.skipif(not (BIN / "mypy").exists(), reason="no mypy beside this interpreter")
def test_mypy_errors_are_quoted_as_printed(tmp_path: Path) -> None:
    """``file:line: error: message`` keeps its ``error:``: a later attempt greps the line."""
    write_files(
        tmp_path,
        {
            "stock/__init__.py": "",
            "stock/levels.py": """
            def total(levels: dict[str, int]) -> int:
                count: int = "0"
                return sum(levels.values()) + len(levels.keys(1))
            """,
        },
    )
    failure = run_in_bash(f"{BIN / 'mypy'} --no-incremental stock", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "stock/levels.py:2: error: Incompatible types in assignment" in text
    assert "stock/levels.py:3: error:" in text


@pytest.mark.skipif(not (BIN / "ruff").exists(), reason="no ruff beside this interpreter")
def test_lint_repeats_of_one_code_keep_their_own_line(tmp_path: Path) -> None:
    """Two F401s name different imports: the second is quoted as its own line, as printed."""
    write_files(
        tmp_path,
        {
            "geo/a.py": "import os\nimport sys\nimport json\n\n\nprint(1)\n",
            "geo/b.py": "import re\n\n\nprint(2)\n",
        },
    )
    failure = run_in_bash(
        f"{BIN / 'ruff'} check --no-cache --isolated --output-format=concise geo", tmp_path
    )
    text = reflection_text(GEN.generate(failure))
    assert "geo/a.py:1:8: F401 [*] `os` imported but unused" in text
    assert "geo/a.py:2:8: F401 [*] `sys` imported but unused" in text
    assert "geo/b.py:1:8: F401 [*] `re` imported but unused" in text


# --- JSON reports read as the tool's text format ---------------------------------------------


@pytest.mark.skipif(not (BIN / "ruff").exists(), reason="no ruff beside this interpreter")
def test_ruff_json_report_reads_like_its_concise_format(tmp_path: Path) -> None:
    """``ruff check --output-format=json``: codes, messages and locations, as ruff's lines."""
    write_files(tmp_path, {"gauge.py": "import time\n\n\ndef mean_of(v):\n    return mean(v)\n"})
    failure = run_in_bash(
        f"{BIN / 'ruff'} check --no-cache --isolated --output-format=json gauge.py", tmp_path
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.LINT_ERROR
    text = reflection_text(reflection)
    assert "gauge.py:1:8: F401 [*] `time` imported but unused" in text
    assert "F821 Undefined name `mean`" in text


@pytest.mark.skipif(not (BIN / "mypy").exists(), reason="no mypy beside this interpreter")
def test_mypy_json_lines_read_like_its_text_format(tmp_path: Path) -> None:
    """``mypy -O json`` prints one object a line: each is read as mypy's error line."""
    write_files(tmp_path, {"retry.py": "def times(n: int) -> int:\n    return str(n)\n"})
    failure = run_in_bash(f"{BIN / 'mypy'} --no-incremental -O json retry.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert 'retry.py:2: error: Incompatible return value type (got "str", expected "int")' in text
    assert "[return-value]" in text


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        (
            "pyright-outputjson-ledger",
            ["reportReturnType", "reportArgumentType", "ledger/entries.py:12:12 - error:"],
        ),
        (
            "eslint-json-format-cart",
            ["src/cart.js:7:3: Unreachable code. [Error/no-unreachable]", "no-cond-assign"],
        ),
    ],
)
def test_json_reports_of_tools_not_installed_here(item: str, facts: list[str]) -> None:
    """The JSON of pyright (``--outputjson``) and eslint (``-f json``), from real runs."""
    text = reflection_text(captured_reflection(item))
    for fact in facts:
        assert fact in text


def test_output_that_only_looks_like_json_is_read_as_text() -> None:
    """A program printing a dict before its traceback is not taken for a JSON report."""
    output = (
        "{'rows': 3}\n"
        "{\n"
        "Traceback (most recent call last):\n"
        '  File "load.py", line 4, in <module>\n'
        "    rows = data['rows'] / 0\n"
        "ZeroDivisionError: division by zero\n"
    )
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="python load.py",
        exit_code=1,
        error_output=output,
    )
    text = reflection_text(GEN.generate(failure))
    assert "ZeroDivisionError: division by zero" in text


def test_one_unknown_global_among_other_rules_is_not_missing_context() -> None:
    """``'console' is not defined`` beside other rules: the code is what to fix (verification)."""
    reflection = captured_reflection("eslint-json-format-cart")
    assert reflection.category is ReflectionCategory.VERIFICATION
    assert "console" in reflection.suggestion  # the environment is still named


# --- coverage gates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        (
            "pytest-cov-fail-under-shipping",
            [
                "Required test coverage of 85% not reached. Total coverage: 26.67%",
                "shipping/labels.py         2      2     0%   1-2",
                "shipping/rates.py",
            ],
        ),
        (
            "jest-coverage-threshold-pricing",
            [
                'Jest: "global" coverage threshold for statements (80%) not met: 33.33%',
                "coverage threshold for functions (100%) not met",
                "price.js",
            ],
        ),
    ],
)
def test_coverage_gate_with_every_test_passing_is_a_test_gap(item: str, facts: list[str]) -> None:
    """Tests pass but the coverage gate fails: the missing tests are the lesson, not code."""
    reflection = captured_reflection(item)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert reflection.category is ReflectionCategory.TEST_GAP
    text = reflection_text(reflection)
    for fact in facts:
        assert fact in text


# --- pip: what a failed build and --require-hashes print -------------------------------------


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_pip_build_quotes_the_compiler_error_inside_it(tmp_path: Path) -> None:
    """A package whose build runs the C compiler: its error first, then pip's own line."""
    write_files(
        tmp_path,
        {
            "fastcrc/setup.py": """
            import subprocess
            from setuptools import setup
            # probe for the system library, as many C-extension packages do
            subprocess.run(["gcc", "-c", "probe.c", "-o", "probe.o"], check=True)
            setup(name="fastcrc", version="0.1")
            """,
            "fastcrc/probe.c": "#include <crc32c_missing.h>\nint probe(void) { return 0; }\n",
        },
    )
    failure = run_in_bash(
        f"{sys.executable} -m pip install --no-index --no-build-isolation ./fastcrc", tmp_path
    )
    reflection = GEN.generate(failure)
    assert reflection.failure_type is FailureType.DEPENDENCY_ERROR
    text = reflection_text(reflection)
    assert "probe.c:1:10: fatal error: crc32c_missing.h: No such file or directory" in text
    assert "error: metadata-generation-failed" in text


def test_pip_require_hashes_quotes_the_lines_to_add(tmp_path: Path) -> None:
    """``--require-hashes`` without a hash: pip prints the line to add; it is the hint."""
    import zipfile  # noqa: PLC0415 -- only this test builds a wheel

    (tmp_path / "wheels").mkdir()
    with zipfile.ZipFile(tmp_path / "wheels" / "tinypkg-0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tinypkg/__init__.py", "")
        wheel.writestr(
            "tinypkg-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n"
        )
        wheel.writestr(
            "tinypkg-0.1.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("tinypkg-0.1.dist-info/RECORD", "")
    (tmp_path / "requirements.txt").write_text("tinypkg==0.1\n", encoding="utf-8")
    failure = run_in_bash(
        f"{sys.executable} -m pip install --dry-run --require-hashes --no-index "
        "--find-links wheels -r requirements.txt",
        tmp_path,
    )
    reflection = GEN.generate(failure)
    assert reflection.category is ReflectionCategory.ROOT_CAUSE
    assert "tinypkg==0.1 --hash=sha256:" in reflection_text(reflection)


# --- C and C++: what the compiler adds beside its errors -------------------------------------


@pytest.mark.skipif(shutil.which("clang") is None, reason="no clang on this machine")
def test_clang_error_count_is_its_summary(tmp_path: Path) -> None:
    """A clang run closes with ``N errors generated.``: the summary of the run."""
    write_files(tmp_path, {"q.c": "int f(void) { return x; }\nint g(void) { return y; }\n"})
    failure = run_in_bash("clang -c q.c -o q.o", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "2 errors generated." in text


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")
def test_gxx_note_naming_the_missing_include_is_the_hint(tmp_path: Path) -> None:
    """g++'s ``did you forget to '#include <map>'?`` note names the fix: it is quoted."""
    write_files(tmp_path, {"idx.cpp": "#include <string>\nstd::map<std::string, int> index;\n"})
    failure = run_in_bash(
        "g++ -std=c++17 -c idx.cpp", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "#include <map>" in text


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_implicit_declaration_beside_an_error_is_quoted(tmp_path: Path) -> None:
    """An implicit declaration warning next to an error is a bug too: its line is quoted."""
    write_files(
        tmp_path,
        {
            "main.c": """
            struct cfg;
            struct cfg *load(void);
            int main(void) {
                struct cfg *c = load();
                return c->port + count_items(c);
            }
            """
        },
    )
    failure = run_in_bash(
        "gcc -std=c11 -Wall -c main.c", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
    )
    text = reflection_text(GEN.generate(failure))
    assert "main.c:5:13: error:" in text
    assert "implicit declaration of function 'count_items'" in text


@pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("gcc") is None, reason="no make or gcc"
)
def test_make_keep_going_names_the_goal_not_remade(tmp_path: Path) -> None:
    """``make -k``: both failing recipes and make's verdict on the goal are quoted."""
    write_files(
        tmp_path,
        {
            "Makefile": "all: a.o b.o\n%.o: %.c\n\tgcc -c $< -o $@\n",
            "a.c": "int a(void) { return 1 }\n",
            "b.c": "int b(void) { return q; }\n",
        },
    )
    failure = run_in_bash("make -k", tmp_path, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    text = reflection_text(GEN.generate(failure))
    assert "make: *** [Makefile:3: a.o] Error 1" in text
    assert "make: *** [Makefile:3: b.o] Error 1" in text
    assert "make: Target 'all' not remade because of errors." in text


# --- git: the commands and verdicts it prints on lines of their own --------------------------

_GIT_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.org",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.org",
    "LC_ALL": "C",
}


def _git(cwd: Path, *commands: str) -> None:
    for command in commands:
        subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=_GIT_ENV, check=True, capture_output=True
        )


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_push_without_upstream_quotes_the_command_it_suggests(tmp_path: Path) -> None:
    """The command git prints indented on a line of its own is the hint."""
    _git(
        tmp_path,
        "git init -q --bare remote.git",
        "git init -q -b main work",
        "cd work && git remote add origin ../remote.git && echo a > a && git add a "
        "&& git commit -qm a && git checkout -q -b topic/export",
    )
    failure = run_in_bash("git push", tmp_path / "work", env=_GIT_ENV)
    text = reflection_text(GEN.generate(failure))
    assert "has no upstream branch" in text
    assert "git push --set-upstream origin topic/export" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_stash_pop_conflict_says_the_stash_is_kept(tmp_path: Path) -> None:
    """A conflicting ``git stash pop`` keeps the stash: git's own verdict is quoted."""
    _git(
        tmp_path,
        "git init -q -b main . && printf 'workers = 2\\n' > app.ini && git add app.ini "
        "&& git commit -qm init",
        "printf 'workers = 4\\n' > app.ini && git stash -q",
        "printf 'workers = 8\\n' > app.ini && git commit -qam eight",
    )
    failure = run_in_bash("git stash pop", tmp_path, env=_GIT_ENV)
    text = reflection_text(GEN.generate(failure))
    assert "CONFLICT (content): Merge conflict in app.ini" in text
    assert "The stash entry is kept in case you need it again." in text


# --- node:test: the TAP line, the failing line, cancelled tests ------------------------------

_NODE_TESTS = {
    "test/slug.test.js": """
    const { describe, it, before } = require("node:test");
    const assert = require("node:assert");
    const slug = (s) => s.toLowerCase().replace(/ /g, "_");
    describe("slug", () => {
      it("joins words with dashes", () => {
        assert.strictEqual(slug("Hello World"), "hello-world");
      });
    });
    describe("store", () => {
      before(async () => { throw new Error("ENOENT: no such file, open 'slugs.json'"); });
      it("loads saved slugs", () => {});
    });
    """,
}


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_tap_quotes_its_line_and_the_failing_line(tmp_path: Path) -> None:
    """TAP: ``not ok N - name`` as printed, and the stack's line, not the test's declaration."""
    write_files(tmp_path, _NODE_TESTS)
    failure = run_in_bash("node --test --test-reporter=tap test/", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "not ok 1 - joins words with dashes" in text
    assert "test/slug.test.js:6:12" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_spec_names_the_tests_a_failing_hook_cancelled(tmp_path: Path) -> None:
    """Spec: a ``before`` hook that throws cancels its tests; they and the count are quoted."""
    write_files(tmp_path, _NODE_TESTS)
    failure = run_in_bash("node --test --test-reporter=spec test/", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "loads saved slugs" in text
    assert "\u2139 cancelled 1" in text


# --- what a program printed before its error -------------------------------------------------


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


def test_python_script_progress_before_its_traceback_is_quoted(tmp_path: Path) -> None:
    """The last lines a script printed say how far it got: they are quoted with the error."""
    write_files(
        tmp_path,
        {
            "migrate.py": """
            steps = ["users", "orders", "invoices"]
            for n, step in enumerate(steps):
                print(f"migrated {step}", flush=True)
                if step == "orders":
                    raise KeyError(step)
            """
        },
    )
    failure = run_in_bash(f"{sys.executable} migrate.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "KeyError: 'orders'" in text
    assert "migrated users / migrated orders" in text


@pytest.mark.skipif(not (BIN / "ruff").exists(), reason="no ruff beside this interpreter")
def test_ruff_grouped_format_names_every_code_with_its_file(tmp_path: Path) -> None:
    """``--output-format=grouped`` prints the file once, then ``row:col CODE message`` rows."""
    write_files(
        tmp_path,
        {
            "ship/a.py": "def f(x=[]):\n    try:\n        return g(x)\n    except:\n        pass\n",
            "ship/b.py": "def h(v):\n    return v == None\n",
        },
    )
    failure = run_in_bash(
        f"{BIN / 'ruff'} check --no-cache --isolated --select E,F,B --output-format=grouped ship",
        tmp_path,
    )
    reflection = GEN.generate(failure)
    assert reflection.category is ReflectionCategory.VERIFICATION
    text = reflection_text(reflection)
    for code in ("B006", "F821", "E722", "E711"):
        assert code in text
    assert "ship/a.py:3:16: F821 Undefined name `g`" in text


# --- Python: a worker's traceback, chained under the call that re-raised it ------------------


def test_worker_traceback_points_at_the_workers_function(tmp_path: Path) -> None:
    """A process pool re-raises a worker's error: its own frame is quoted, not just ``map``."""
    write_files(
        tmp_path,
        {
            "sizes.py": """
            from concurrent.futures import ProcessPoolExecutor

            def ratio(pair):
                w, h = pair
                return h / w

            if __name__ == "__main__":
                with ProcessPoolExecutor(max_workers=1) as pool:
                    print(list(pool.map(ratio, [(4, 3), (0, 1)])))
            """
        },
    )
    failure = run_in_bash(f"{sys.executable} sizes.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ZeroDivisionError: division by zero" in text
    assert 'sizes.py", line 5, in ratio' in text
    assert '"""' not in text  # the quotes around the worker's traceback are not its message


# --- timeout: the progress a killed program printed ------------------------------------------


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


@pytest.mark.skipif(not (BIN / "ruff").exists(), reason="no ruff beside this interpreter")
def test_an_undefined_name_among_many_style_findings_is_quoted_first(tmp_path: Path) -> None:
    """F821 is a bug, not style: it leads even when many style codes come before it."""
    write_files(
        tmp_path,
        {
            "a.py": "import os, sys\nimport json\nimport re\nl = 1\n",
            "b.py": "import csv\nimport io\nfrom typing import List\n\n\ndef f(x: List[int]):\n"
            "    try:\n        return g(x)\n    except:\n        return x == None\n",
        },
    )
    failure = run_in_bash(
        f"{BIN / 'ruff'} check --no-cache --isolated --select E,F,UP --output-format=concise .",
        tmp_path,
    )
    reflection = GEN.generate(failure)
    assert "b.py:8:16: F821 Undefined name `g`" in reflection.analysis.split("Errors: ", 1)[1][:60]
