"""Reading any output: cleaning, captured outputs, the reader chosen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext
from reflexkit.readers import clean_output
from reflexkit.reflection._heuristic import HeuristicGenerator

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    DATA,
    reflection_text,
    run_in_bash,
    write_files,
)

GEN = HeuristicGenerator()


HOLDOUT = DATA / "holdout_like"


def test_a_run_of_blank_lines_reads_as_two_and_long_blanks_are_cut() -> None:
    """Blank runs carry no fact; read whole, they made line-start patterns take seconds."""
    text = "collected 2 items\n" + "   \n" * 400 + "\t\n\nE   KeyError: 'sku'\n"
    assert clean_output(text) == "collected 2 items\n\n\nE   KeyError: 'sku'\n"
    assert clean_output("a\n\nb\n") == "a\n\nb\n"  # two blank lines are kept as printed
    wide = clean_output("[" + " " * 5000 + "100%]\n")
    assert wide == "[" + " " * 160 + "100%]\n"


def test_a_failure_with_thousands_of_blank_lines_is_still_read(tmp_path: Path) -> None:
    """A program that printed 3,000 blank lines before its traceback: the error is quoted."""
    write_files(
        tmp_path,
        {"report.py": "print('  \\n' * 3000)\nrows = {}\nprint(rows['total'])\n"},
    )
    failure = run_in_bash(f"{sys.executable} report.py 2>&1", tmp_path)
    text = reflection_text(GEN.generate(failure))
    assert "KeyError: 'total'" in text
    assert 'report.py", line 3' in text


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        ("git-pull-divergent", ["git config pull.rebase false", "divergent branches"]),
        ("eslint-warnings-max-zero", ["ESLint found too many warnings (maximum: 0)."]),
    ],
)
def test_captured_outputs_quote_the_tools_verdict(item: str, facts: list[str]) -> None:
    """The hint commands git lists and eslint's ``--max-warnings`` verdict, from real runs."""
    data = json.loads((HOLDOUT / f"{item}.json").read_text(encoding="utf-8"))
    text = reflection_text(GEN.generate(structure(data["failureContext"], FailureContext)))
    for fact in facts:
        assert fact in text
