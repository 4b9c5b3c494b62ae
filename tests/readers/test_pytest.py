"""pytest's output: each failing test with its own assertion and location (#26).

Real runs of pytest on small projects: the short summary of ``-q`` cuts long messages, a
method's section is titled ``Class.test``, and ``assert f(x)`` fails as ``assert False``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reflexkit.models import FailureType, ReflectionCategory
from reflexkit.readers import analyse
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    reflection_text,
    run_in_bash,
    write_files,
)

pytestmark = pytest.mark.slow  # each test runs a real pytest: scheduled first (tests/conftest.py)


def _run(tmp_path: Path, files: dict[str, str]) -> list[str]:
    write_files(tmp_path, files)
    failure = run_in_bash(f"{sys.executable} -m pytest -q -p no:cacheprovider tests", tmp_path)
    return analyse(failure).facts


def test_a_methods_cut_summary_is_read_from_its_own_section(tmp_path: Path) -> None:
    """``- IndexEr...`` in the summary: the E line and the location come from the section."""
    facts = _run(
        tmp_path,
        {
            "tests/test_spread.py": """
            import unittest

            def spread(values):
                return values[0] - values[-1] * 100000000000000000000000000000000000000

            class SpreadTests(unittest.TestCase):
                def test_of_nothing_is_an_error_we_expect_to_handle_gracefully(self):
                    self.assertEqual(spread([]), 0)
            """
        },
    )
    assert len(facts) == 1
    assert "IndexError: list index out of range" in facts[0]
    assert "tests/test_spread.py:" in facts[0]


def test_parametrised_tests_keep_their_own_assertions(tmp_path: Path) -> None:
    """Two cases whose cut messages share a prefix: each id gets the assertion under it."""
    facts = _run(
        tmp_path,
        {
            "tests/test_area.py": """
            import pytest

            def area(r):
                return round(3.14159 * r * r, 2)

            @pytest.mark.parametrize(("r", "want"), [(1, 3.15), (2, 12.55)])
            def test_area_of_a_circle_with_a_long_name_so_the_summary_is_cut(r, want):
                assert area(r) == want, f"area of a circle of radius {r} came out wrong: {area(r)}"
            """
        },
    )
    first = next(f for f in facts if "[1-3.15]" in f)
    second = next(f for f in facts if "[2-12.55]" in f)
    assert "3.14" in first
    assert "12.57" not in first
    assert "12.57" in second


def test_a_bare_assert_false_quotes_the_statement_that_failed(tmp_path: Path) -> None:
    """``assert raises(...)`` fails as ``assert False``: the statement says what was checked."""
    facts = _run(
        tmp_path,
        {
            "tests/test_guard.py": """
            def raises(err, f):
                try:
                    f()
                except err:
                    return True
                return False

            def test_guard():
                assert raises(LookupError, lambda: [1, 2][0])
            """
        },
    )
    assert "assert raises(LookupError, lambda: [1, 2][0])" in facts[0]


GEN = HeuristicGenerator()


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


def test_pytest_setup_error_is_quoted_as_its_summary_line(tmp_path: Path) -> None:
    """An error at setup: ``ERROR path::test`` as pytest's summary prints it."""
    write_files(
        tmp_path,
        {
            "test_cache.py": """
            import pytest

            @pytest.fixture
            def cache(tmp_path):
                return open(tmp_path / "missing.json")

            def test_miss(cache):
                assert cache
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -p no:cacheprovider test_cache.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ERROR test_cache.py::test_miss" in text
    assert "FileNotFoundError" in text


def test_a_run_that_selects_no_test_is_a_misuse(tmp_path: Path) -> None:
    """``-k`` matching nothing (exit code 5): nothing was checked; fix the selection."""
    write_files(tmp_path, {"test_calc.py": "def test_add():\n    assert 1 + 1 == 2\n"})
    failure = run_in_bash(f"{sys.executable} -m pytest -p no:cacheprovider -k nomatch", tmp_path)
    assert failure.exit_code == 5  # pytest: no tests collected
    findings = analyse(failure)
    assert findings.category.value == "tool_misuse"
    assert findings.facts == ["1 deselected"]
    assert "--collect-only" in findings.steps[0]


def test_options_of_a_plugin_not_installed_from_the_config_are_a_dependency_error(
    tmp_path: Path,
) -> None:
    """The project's addopts need pytest-cov, which is not installed: nothing was tested."""
    write_files(
        tmp_path,
        {
            "pytest.ini": "[pytest]\naddopts = --cov=shop --cov-report=term-missing\n",
            "test_shop.py": "def test_ok():\n    assert True\n",
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -p no:cacheprovider test_shop.py", tmp_path)
    findings = analyse(failure)
    assert findings.failure_type is FailureType.DEPENDENCY_ERROR, failure.error_output
    assert "unrecognized arguments: --cov=shop --cov-report=term-missing" in findings.facts
    assert any(fact.startswith(("inifile: ", "configfile: ")) for fact in findings.facts)
    assert "pytest-cov" in findings.advice


def test_an_unknown_option_on_the_command_line_is_a_misuse(tmp_path: Path) -> None:
    """An option the command itself passed is the command's mistake, not a missing plugin."""
    write_files(tmp_path, {"test_shop.py": "def test_ok():\n    assert True\n"})
    failure = run_in_bash(
        f"{sys.executable} -m pytest -p no:cacheprovider --cov=shop test_shop.py", tmp_path
    )
    findings = analyse(failure)
    assert findings.failure_type is FailureType.TEST_FAILURE, failure.error_output
    assert findings.category is ReflectionCategory.TOOL_MISUSE


def test_a_test_stopped_by_pytest_timeout_is_a_test_failure_about_waiting() -> None:
    """pytest-timeout's ``Failed: Timeout`` fails one test: its advice is about where it waited.

    The run goes on, so it is a test failure, as jest's and mocha's per-test limits are; a
    limit that ends the whole run (exit 124, faulthandler) is a ``timeout``.
    """
    from reflexkit.readers._python_pytest import parse_pytest  # noqa: PLC0415

    found = parse_pytest(
        "F\n=================================== FAILURES ===================================\n"
        "__________________________ test_drain_returns_items ___________________________\n\n"
        "    def test_drain_returns_items():\n>       assert drain(q) == [0, 1, 2]\n\n"
        "tests/test_worker.py:10: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n"
        "jobs/worker.py:7: in drain\n    item = q.get()\n"
        "/usr/lib/python3.11/threading.py:327: in wait\n>               waiter.acquire()\n"
        "E               Failed: Timeout (>2.0s) from pytest-timeout.\n\n"
        "/usr/lib/python3.11/threading.py:327: Failed\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_worker.py::test_drain_returns_items - Failed: Timeout (>2.0...\n"
        "1 failed in 2.40s\n",
        "python -m pytest -q --timeout=2 tests",
    )
    assert found is not None
    assert found.failure_type is FailureType.TEST_FAILURE
    assert found.evidence == "E               Failed: Timeout (>2.0s) from pytest-timeout."
    assert "time limit" in (found.advice or "")
    assert found.tests == ["tests/test_worker.py::test_drain_returns_items"]


def test_a_conftest_that_does_not_import_is_read_as_pytests(tmp_path: Path) -> None:
    """``ImportError while loading conftest``: the conftest, its error and line are quoted."""
    write_files(
        tmp_path,
        {
            "tests/conftest.py": "import yaml_not_installed\n",
            "tests/test_a.py": "def test_a():\n    assert True\n",
        },
    )
    failure = run_in_bash(f"{sys.executable} -m pytest -q -p no:cacheprovider tests", tmp_path)
    findings = analyse(failure)
    assert findings.tool == "pytest", failure.error_output
    assert findings.category is ReflectionCategory.MISSING_CONTEXT
    assert "ModuleNotFoundError: No module named 'yaml_not_installed'" in findings.facts
    assert "tests/conftest.py:1" in findings.facts


@pytest.mark.parametrize("style", ["long", "short"])
def test_the_tests_own_line_is_quoted_where_the_final_exception_passed(
    tmp_path: Path, style: str
) -> None:
    """A chained error's test line is the one of its last section; a raising helper's too."""
    write_files(
        tmp_path,
        {
            "ledger/__init__.py": "",
            "ledger/book.py": """
            class Closed(Exception):
                pass

            def post(entry):
                try:
                    entry()
                except ValueError as exc:
                    raise Closed("book closed") from exc
            """,
            "tests/test_book.py": """
            from ledger.book import post

            def test_post_reraises_the_entry_error():
                def entry():
                    raise ValueError("negative amount")
                post(entry)

            def test_helper_raises_in_the_test_file():
                def check(total):
                    raise KeyError(total)
                x = 3
                check(x)
            """,
        },
    )
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider --tb={style} tests"
    text = reflection_text(GEN.generate(run_in_bash(command, tmp_path)))
    assert "tests/test_book.py:6" in text  # post(entry): where the test called in
    assert "tests/test_book.py:12" in text  # check(x): the test's own line
    assert "tests/test_book.py:10" in text  # where the helper raised
