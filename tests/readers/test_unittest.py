"""unittest's output: each failing test with its exception and frame."""

from __future__ import annotations

import sys
from pathlib import Path

from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    failure_of,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


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


def test_another_runner_printing_unittests_format_is_not_called_unittest() -> None:
    """nose2, green or Django's runner print unittest's format: unittest is not named."""
    output = (
        "FAIL: test_split (tests.test_money.SplitTest.test_split)\n"
        "----------------------------------------------------------------------\n"
        "Traceback (most recent call last):\n"
        '  File "/app/tests/test_money.py", line 7, in test_split\n'
        "    self.assertEqual(split(10, 3), [4, 3, 3])\n"
        "AssertionError: Lists differ: [3, 3, 3] != [4, 3, 3]\n\n"
        "----------------------------------------------------------------------\n"
        "Ran 2 tests in 0.001s\n\nFAILED (failures=1)\n"
    )
    text = reflection_text(HeuristicGenerator().generate(failure_of("nose2 -v", output)))
    assert "unittest" not in text
    assert "AssertionError: Lists differ: [3, 3, 3] != [4, 3, 3]" in text


def test_a_fail_raised_in_a_helper_is_located_at_the_tests_line(tmp_path: Path) -> None:
    """An assertion helper raises the AssertionError: the test's own line is the place."""
    write_files(
        tmp_path,
        {
            "helpers.py": """
            def assert_renders(case, got, want):
                case.assertEqual(got, want)
            """,
            "test_render.py": """
            import unittest
            from helpers import assert_renders

            class TestRender(unittest.TestCase):
                def test_heading(self):
                    assert_renders(self, "<p>x</p>", "<h1>x</h1>")
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_render", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert 'test_render.py", line 6, in test_heading' in text
    assert 'helpers.py", line 2' not in text


def test_an_error_names_where_it_raised_and_the_tests_line(tmp_path: Path) -> None:
    """An ERROR is located where the code raised, with the line of the test that called it."""
    write_files(
        tmp_path,
        {
            "shop.py": """
            def total(prices):
                return sum(prices) / len(prices)
            """,
            "test_shop.py": """
            import unittest
            import shop

            class TestShop(unittest.TestCase):
                def test_empty(self):
                    self.assertEqual(shop.total([]), 0)
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_shop", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "ZeroDivisionError: division by zero" in text
    assert 'shop.py", line 2, in total' in text
    assert 'test_shop.py", line 6, in test_empty' in text


def test_a_test_module_missing_a_package_is_not_the_codes_fault(tmp_path: Path) -> None:
    """``No module named 'x'`` while loading a test module: install it; no _FailedTest re-run."""
    write_files(
        tmp_path,
        {"test_api.py": "import unittest\nimport reflexkit_no_such_yaml\n"},
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_api", tmp_path)
    reflection = GEN.generate(failure)
    text = reflection_text(reflection)
    assert "No module named 'reflexkit_no_such_yaml'" in text
    assert "test dependencies" in reflection.suggestion
    assert "_FailedTest" not in "".join(reflection.action_items)
    assert reflection.category.value == "missing_context"


def test_a_test_module_that_does_not_exist_is_a_misuse(tmp_path: Path) -> None:
    """``python -m unittest tests.test_calcs`` for ``test_calc.py``: no test ran, fix the name."""
    write_files(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/test_calc.py": """
            import unittest

            class T(unittest.TestCase):
                def test_a(self):
                    self.assertEqual(1, 2)
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest tests.test_calcs", tmp_path)
    assert "No module named 'tests.test_calcs'" in failure.error_output
    reflection = GEN.generate(failure)
    assert reflection.category.value == "tool_misuse"
    assert "does not exist" in reflection.suggestion
    assert "test dependencies" not in reflection.suggestion


def test_a_run_that_found_no_test_is_a_misuse() -> None:
    """Python 3.12's ``NO TESTS RAN`` (exit code 5): nothing was checked; fix what it was given."""
    output = "\n----------------------------------------------------------------------\n"
    output += "Ran 0 tests in 0.000s\n\nNO TESTS RAN\n"
    reflection = GEN.generate(failure_of("python -m unittest discover -s test", output, 5))
    assert reflection.category.value == "tool_misuse"
    assert "NO TESTS RAN" in reflection_text(reflection)


def test_a_fail_in_the_test_files_own_helper_is_located_at_its_assertion(tmp_path: Path) -> None:
    """A helper method of the test module asserts: its line (in the test's file) is the place."""
    write_files(
        tmp_path,
        {
            "test_scan.py": """
            import unittest

            class TestScan(unittest.TestCase):
                def test_py_scan(self):
                    self._check(int)

                def _check(self, scan):
                    self.assertRaises(ValueError, scan, "7")
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_scan", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert 'test_scan.py", line 8, in _check' in text
    assert "ValueError not raised by int" in text


def test_a_chained_errors_test_line_is_read_from_its_last_section(tmp_path: Path) -> None:
    """The cause raised in a helper of the test file; the test's line is the last section's."""
    write_files(
        tmp_path,
        {
            "test_q.py": """
            import unittest

            class Full(Exception):
                pass

            def push(item):
                try:
                    raise OverflowError("no room")
                except OverflowError:
                    raise Full

            class Q(unittest.TestCase):
                def test_full(self):
                    x = 1
                    push(x)
            """,
        },
    )
    failure = run_in_bash(f"{sys.executable} -m unittest test_q.py", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "line 10, in push" in text  # where Full was raised
    assert "the test's line: File" in text
    assert "line 15, in test_full" in text
