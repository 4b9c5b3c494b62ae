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
