"""pytest's output: each failing test with its own assertion and location (#26).

Real runs of pytest on small projects: the short summary of ``-q`` cuts long messages, a
method's section is titled ``Class.test``, and ``assert f(x)`` fails as ``assert False``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from reflexkit.readers import analyse

from ..conftest import run_in_bash, write_files  # noqa: TID252 -- tests/ is no package


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
