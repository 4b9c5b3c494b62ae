"""The examples docs/integration.md shows run, offline, and do what they say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("own_loop.py", "passed on attempt 2"),
        ("own_subagent.py", "fix-add: passed after 2 attempts"),
    ],
)
def test_the_example_runs(script: str, expected: str, tmp_path: Path) -> None:
    """Each example fixes its bug on the second attempt, with the lesson of the first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**env, "TMPDIR": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert expected in done.stdout
