"""mypy, ruff and flake8: diagnostics as printed, JSON and annotation formats."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    captured_reflection,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def mypy(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The mypy command with one cache for the module: the stdlib stubs are read once."""
    return f"{BIN / 'mypy'} --cache-dir {tmp_path_factory.mktemp('mypy-cache')}"


@pytest.mark.slow
@pytest.mark.skipif(not (BIN / "mypy").exists(), reason="no mypy beside this interpreter")
def test_mypy_errors_are_quoted_as_printed(tmp_path: Path, mypy: str) -> None:
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
    failure = run_in_bash(f"{mypy} stock", tmp_path)
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
def test_mypy_json_lines_read_like_its_text_format(tmp_path: Path, mypy: str) -> None:
    """``mypy -O json`` prints one object a line: each is read as mypy's error line."""
    write_files(tmp_path, {"retry.py": "def times(n: int) -> int:\n    return str(n)\n"})
    failure = run_in_bash(f"{mypy} -O json retry.py", tmp_path)
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


def test_ruff_github_annotations_read_as_ruff(tmp_path: Path) -> None:
    """``ruff --output-format=github`` wraps each finding in a workflow command."""
    write_files(tmp_path, {"stats.py": "import os\nfrom math import *\n\ndef f():\n    return x\n"})
    command = (
        f"{sys.executable} -m ruff check --isolated --no-cache --select F "
        "--output-format=github stats.py"
    )
    failure = run_in_bash(command, tmp_path)
    assert failure.error_output.startswith("::error ")
    findings = analyse(failure)
    assert findings.tool == "ruff"
    text = reflection_text(GEN.generate(failure))
    for fact in ("stats.py:1:8", "F401", "F403", "F405"):
        assert fact in text


def test_annotation_without_location_in_its_message_gets_one() -> None:
    """A workflow command whose message has no location: its file/line parameters give it."""
    output = "::error file=src/app.py,line=3,col=5,title=E999::SyntaxError: invalid syntax\n"
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command="lint",
        exit_code=1,
        error_output=output,
    )
    assert "src/app.py:3:5" in reflection_text(GEN.generate(failure))


def test_ruff_format_check_quotes_its_summary(tmp_path: Path) -> None:
    """``ruff format --check``: each file where it points, and the count line as printed."""
    write_files(
        tmp_path, {"a.py": "x = {'a':1}\n", "b.py": "def f( y ):\n  return y\n", "c.py": ""}
    )
    failure = run_in_bash(
        f"{sys.executable} -m ruff format --check --isolated --no-cache .", tmp_path
    )
    text = reflection_text(GEN.generate(failure))
    assert "2 files would be reformatted" in text
    assert "a.py" in text
    assert "b.py" in text


def test_a_linter_the_output_does_not_name_is_not_named() -> None:
    """pyflakes-style lines under `git commit` (a hook): the linter, not a guessed flake8."""
    from reflexkit.readers import analyse  # noqa: PLC0415

    from ..conftest import failure_of  # noqa: PLC0415, TID252

    output = "app.py:1:1: F401 'os' imported but unused\napp.py:3:1: E302 expected 2 blank lines\n"
    found = analyse(failure_of("git commit -m 'Add importer'", output))
    assert "flake8" not in found.headline
    assert "ruff" not in found.headline
    assert "F401" in found.headline


def test_whole_file_findings_and_any_checkers_count_are_read() -> None:
    """A finding with no line (``pyproject.toml: DEP002 ...``) and ``Found 2 ... issues.``."""
    from reflexkit.readers._python_checkers import parse_pyflakes_style  # noqa: PLC0415

    found = parse_pyflakes_style(
        "Scanning 2 files...\n\n"
        "pyproject.toml: DEP002 'rich' defined as a dependency but not used in the codebase\n"
        "shop/client.py:1:8: DEP001 'httpx' imported but missing from the dependency definitions\n"
        "Found 2 dependency issues.\n",
        "deptry .",
    )
    assert found is not None
    assert found.facts[0].startswith("pyproject.toml: DEP002 'rich' defined as a dependency")
    assert found.summary == "Found 2 dependency issues."
    alone = "pyproject.toml: DEP002 'rich' defined as a dependency but not used in the codebase\n"
    assert parse_pyflakes_style(alone, "deptry .") is None
