"""A throw-away project for the examples: a bug, its unittest suite, reflexkit's config."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = (
    "import unittest\n"
    "from calc import add\n\n\n"
    "class AddTests(unittest.TestCase):\n"
    "    def test_add_positive(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)


def make_project() -> Path:
    """Write the project to a new temporary folder and return it."""
    root = Path(tempfile.mkdtemp(prefix="reflexkit-example-"))
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TESTS)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})  # offline: no API key needed
    )
    return root


def toy_agent(prompt: str, workdir: Path) -> None:
    """Stand in for a coding agent: it gets the fix right once the prompt carries the lesson."""
    learnt = "Learning from Previous Failures" in prompt and "test_add_positive" in prompt
    body = "a + b" if learnt else "a * b"
    (workdir / "calc.py").write_text(f"def add(a, b):\n    return {body}\n")
