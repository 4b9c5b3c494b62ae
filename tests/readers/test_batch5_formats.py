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

import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.reflection.heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
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
        subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=GIT_ENV, check=True, text=True
        )


# --- ruff and unittest -----------------------------------------------------------------------


@pytest.mark.skipif(
    not (BIN / "ruff").exists(), reason="no ruff beside this interpreter"
)
def test_ruff_fix_quotes_how_many_findings_remain(tmp_path: Path) -> None:
    """``ruff check --fix`` ends ``Found 3 errors (1 fixed, 2 remaining).``: quoted whole."""
    write_files(
        tmp_path,
        {
            "calc.py": "import os\n\n\ndef area(r):\n    return pi * r * r\n\n\nx = undefined\n"
        },
    )
    failure = run_in_bash(
        f"{BIN / 'ruff'} check --no-cache --isolated --fix calc.py", tmp_path
    )
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
