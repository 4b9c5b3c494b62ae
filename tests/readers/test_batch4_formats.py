"""Output formats the readers missed on the fourth holdout-like batch (#12 follow-up).

Batch 4 (tests/data/holdout_like/b4-*.json) holds ordinary failures as a coding agent meets
them. Each test here runs the real tool where this machine has it (skipped where it does not)
on a project of its own; tools the test environment lacks are read from output captured from
a real run of another project. The batch's items are measured, never tested one by one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.models import ReflectionCategory
from reflexkit.reflection.heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    captured_reflection,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


# --- pytest ----------------------------------------------------------------------------------


def test_pytest_quotes_where_the_code_under_test_raised_as_printed(tmp_path: Path) -> None:
    """``pkg/mod.py:4: KeyError`` is quoted whole, and an awaited-never warning beside it."""
    write_files(
        tmp_path,
        {
            "rates/__init__.py": "",
            "rates/table.py": """
            import asyncio

            async def rate(code):
                return {"EUR": 1.0}[code]

            async def total(codes):
                out = 0
                for code in codes:
                    out += rate(code)
                return out
            """,
            "tests/test_table.py": """
            import asyncio
            from rates.table import rate, total

            def test_unknown_code():
                assert asyncio.run(rate("XXX")) is None

            def test_total():
                assert asyncio.run(total(["EUR"])) == 1.0
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -q -p no:cacheprovider tests", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "rates/table.py:4: KeyError" in text
    assert "rates/table.py:9: TypeError" in text
    assert "RuntimeWarning: coroutine 'rate' was never awaited" in text


def test_pytest_collection_error_is_quoted_as_its_summary_line_too(tmp_path: Path) -> None:
    """``ERROR tests/test_x.py`` (the short summary) and ``ERROR collecting ...`` both appear."""
    write_files(
        tmp_path,
        {
            "clock/__init__.py": "",
            "clock/fmt.py": "def hhmm(minutes):\n    return f'{minutes // 60:02}'\n",
            "tests/test_fmt.py": "from clock.fmt import format_hhmm\n\n"
            "def test_noon():\n    assert format_hhmm(720) == '12:00'\n",
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -q -p no:cacheprovider tests", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ERROR tests/test_fmt.py" in text
    assert "ERROR collecting tests/test_fmt.py" in text
    assert "ImportError: cannot import name 'format_hhmm' from 'clock.fmt'" in text


# --- cargo -----------------------------------------------------------------------------------


CARGO_TOML = '[package]\nname = "tiles"\nversion = "0.1.0"\nedition = "2021"\n'


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_quotes_a_notes_list_and_the_warnings_beside_the_error(tmp_path: Path) -> None:
    """The list rustc indents under a note, and a warning printed next to the error."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/main.rs": """
            use std::collections::HashSet;
            use std::fmt::Write;

            #[derive(Debug)]
            struct Tile {
                x: i32,
            }

            fn main() {
                let seen: HashSet<Tile> = HashSet::new();
                println!("{}", seen.contains(&Tile { x: 1 }));
            }
            """,
        },
    )
    text = reflection_text(GEN.generate(run_in_bash("cargo build --offline", tmp_path)))
    assert "`Tile: Eq`" in text  # the list under `note: the following trait bounds ...`
    assert "`Tile: Hash`" in text
    assert "warning: unused import: `std::fmt::Write`" in text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this machine")
def test_rustc_unresolved_item_of_own_module_quotes_its_label(tmp_path: Path) -> None:
    """``no `perimeter` in `geo``` is the span's label: a renamed item, not a missing crate."""
    write_files(
        tmp_path,
        {
            "Cargo.toml": CARGO_TOML,
            "src/geo.rs": "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
            "src/main.rs": "mod geo;\nuse geo::perimeter;\n\nfn main() {\n    perimeter(1);\n}\n",
        },
    )
    reflection = GEN.generate(run_in_bash("cargo build --offline", tmp_path))
    assert "no `perimeter` in `geo`" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


# --- jest, node:test and pip -----------------------------------------------------------------


def test_jest_quotes_snapshot_count_and_did_not_throw() -> None:
    """The snapshot count line and ``Received function did not throw`` are the failures.

    Output of ``npx jest --ci`` (jest 29) on a stale snapshot and a toThrow that did not throw.
    """
    reflection = captured_reflection("jest-tags-snapshot-tothrow")
    text = reflection_text(reflection)
    assert "1 snapshot failed." in text
    assert "Received function did not throw" in text
    assert "snapshot" in reflection.suggestion  # advised as a snapshot, not as a value


def test_pip_conflict_quotes_what_the_conflict_is_caused_by() -> None:
    """The lines under ``The conflict is caused by:`` name the two pins that clash."""
    text = reflection_text(captured_reflection("pip-flask-werkzeug-conflict"))
    assert "flask 3.0.0 depends on Werkzeug>=3.0.0" in text
    assert "The user requested werkzeug==2.0.0" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_test_tap_quotes_a_one_line_error_as_printed(tmp_path: Path) -> None:
    """TAP's ``error: 'message'`` line is quoted as printed, not unquoted."""
    write_files(
        tmp_path,
        {
            "test/fetch.test.js": """
            const test = require("node:test");
            test("loads the feed", async () => {
              throw new Error("feed offline");
            });
            """,
        },
    )
    failure = run_in_bash("node --test --test-reporter=tap test/", tmp_path)
    assert "error: 'feed offline'" in reflection_text(GEN.generate(failure))


# --- timeout ---------------------------------------------------------------------------------


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


# --- what kind of mistake: make, git, node ---------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_recipe_program_not_installed_is_missing_context(tmp_path: Path) -> None:
    """Error 127 from a recipe: the program it runs is not installed."""
    (tmp_path / "Makefile").write_text("check:\n\treflexkit-no-such-linter src\n")
    reflection = GEN.generate(run_in_bash("make check", tmp_path))
    assert "Error 127" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.MISSING_CONTEXT


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_missing_prerequisite_is_missing_context(tmp_path: Path) -> None:
    """``No rule to make target 'x.o', needed by 'app'``: a source file is missing."""
    (tmp_path / "Makefile").write_text("app: main.o net.o\n\tcc -o app main.o net.o\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    reflection = GEN.generate(run_in_bash("make", tmp_path))
    assert "No rule to make target 'net.o', needed by 'app'" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.MISSING_CONTEXT


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")
def test_git_commit_with_nothing_staged_is_tool_misuse(tmp_path: Path) -> None:
    """``no changes added to commit`` has no error line: the files were never staged."""
    for command in (
        "git init -q -b main",
        "git config user.email dev@example.org",
        "git config user.name Dev",
        "echo a > notes.txt && git add notes.txt && git commit -qm init",
    ):
        subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    (tmp_path / "notes.txt").write_text("b\n")
    (tmp_path / "todo.txt").write_text("c\n")
    reflection = GEN.generate(run_in_bash("git commit -m 'Update notes'", tmp_path))
    text = reflection_text(reflection)
    assert "no changes added to commit" in text
    assert "todo.txt" in text  # the new file git lists as untracked
    assert reflection.category == ReflectionCategory.TOOL_MISUSE


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_node_import_of_own_path_that_does_not_resolve_is_root_cause(tmp_path: Path) -> None:
    """An ESM import of ``./lib/util`` without its extension: the import is wrong."""
    write_files(
        tmp_path,
        {
            "main.mjs": 'import { twice } from "./lib/util";\nconsole.log(twice(2));\n',
            "lib/util.mjs": "export const twice = (n) => 2 * n;\n",
        },
    )
    reflection = GEN.generate(run_in_bash("node main.mjs", tmp_path))
    assert "ERR_MODULE_NOT_FOUND" in reflection_text(reflection)
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on this machine")
def test_gcc_call_declared_and_defined_nowhere_is_root_cause(tmp_path: Path) -> None:
    """An implicit declaration and an undefined reference to one name: a misspelt call."""
    write_files(
        tmp_path,
        {
            "totals.c": "int compute_total(int a, int b) { return a + b; }\n",
            "main.c": "#include <stdio.h>\n\n"
            'int main(void) {\n    printf("%d\\n", compute_totl(1, 2));\n    return 0;\n}\n',
        },
    )
    reflection = GEN.generate(run_in_bash("gcc -Wall -o app main.c totals.c", tmp_path))
    text = reflection_text(reflection)
    assert "undefined reference to `compute_totl'" in text
    assert "implicit declaration of function" in text
    assert reflection.category == ReflectionCategory.ROOT_CAUSE


# --- Python tracebacks -----------------------------------------------------------------------


def test_python_implicit_chaining_is_named_as_printed(tmp_path: Path) -> None:
    """An exception raised in an ``except`` block: the handler failed, not only the first call."""
    write_files(
        tmp_path,
        {
            "prices.py": """
            def parse(text):
                try:
                    return float(text)
                except ValueError:
                    return float(text.replace(",", ".").strip("EUR "))

            print(parse("12,50 EURO"))
            """,
        },
    )
    text = reflection_text(GEN.generate(run_in_bash(f"{sys.executable} prices.py", tmp_path)))
    assert "During handling of the above exception, another exception occurred:" in text
    assert "ValueError: could not convert string to float: '12,50 EURO'" in text
    assert "caused by" not in text  # not `raise ... from`: the handler itself failed
