"""Grouping repeated diagnostics keeps what each one says."""

from __future__ import annotations

from reflexkit.readers._findings import Problem, group_problems


def test_repeats_of_one_code_keep_their_own_words() -> None:
    """Two F401s name two imports: the second is a fact, quoted as printed."""
    problems = [
        Problem("geom/vec.py:1:1: F401 'os' imported but unused", "F401", "geom/vec.py:1:1"),
        Problem("geom/vec.py:2:1: F401 'sys' imported but unused", "F401", "geom/vec.py:2:1"),
        Problem("F401 'json' imported but unused at a.py:3:1", "F401", "a.py:3:1"),
    ]
    (line,) = group_problems(problems)
    assert line.startswith("geom/vec.py:1:1: F401 'os' imported but unused (+2 more: ")
    assert "geom/vec.py:2:1: F401 'sys' imported but unused" in line
    assert "a.py:3:1 F401 'json' imported but unused" in line


def test_true_repeats_are_named_by_location_only() -> None:
    """The same words at another place add only the place."""
    problems = [
        Problem("a.py:9:1: W291 trailing whitespace", "W291", "a.py:9:1"),
        Problem("a.py:19:1: W291 trailing whitespace", "W291", "a.py:19:1"),
    ]
    assert group_problems(problems) == ["a.py:9:1: W291 trailing whitespace (+1 more: a.py:19:1)"]
