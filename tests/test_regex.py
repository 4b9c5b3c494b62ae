"""``lazy_regex``: ``re.compile`` deferred to the first use of the pattern."""

from __future__ import annotations

import copy
import re

import pytest

from reflexkit._regex import lazy_regex


def _compiled(pattern: object) -> bool:
    return "_compiled" in vars(pattern)


def test_nothing_is_compiled_until_the_pattern_is_used() -> None:
    """Building it and reading its source compile nothing; the first search does."""
    word = lazy_regex(r"(?P<word>\w+)=(?P<value>\d+)", re.MULTILINE)
    assert word.pattern == r"(?P<word>\w+)=(?P<value>\d+)"
    assert not _compiled(word)
    assert word.search("x a=1") is not None
    assert _compiled(word)


def test_it_answers_as_the_compiled_pattern_does() -> None:
    """Every method and attribute gives what re.compile's pattern gives."""
    source, flags = r"^(?P<key>[a-z]+): (?P<n>\d+)$", re.MULTILINE | re.IGNORECASE
    lazy, eager = lazy_regex(source, flags), re.compile(source, flags)
    text = "Alpha: 1\nbeta: 22\nnot this\nGAMMA: 333"
    assert [m.groupdict() for m in lazy.finditer(text)] == [
        m.groupdict() for m in eager.finditer(text)
    ]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.sub(r"\g<key>", text) == eager.sub(r"\g<key>", text)
    assert lazy.split(text) == eager.split(text)
    assert lazy.groupindex == eager.groupindex
    assert (lazy.flags, lazy.groups) == (eager.flags, eager.groups)
    assert lazy.match(text, 9) is not None
    assert lazy.fullmatch("beta: 22") is not None


def test_a_bad_pattern_fails_at_its_first_use() -> None:
    """The re.error that re.compile raises comes when the pattern is first used."""
    bad = lazy_regex(r"(unclosed")
    with pytest.raises(re.error, match="missing \\)"):
        bad.search("x")


def test_repr_and_copy_work_before_and_after_use() -> None:
    """Its repr names the source without compiling; copies still match."""
    digits = lazy_regex(r"\d+")
    assert repr(digits) == r"lazy_regex('\\d+', 0)"
    assert not _compiled(digits)
    assert copy.deepcopy(digits).search("a1")[0] == "1"  # type: ignore[index]
    digits.search("2")
    assert copy.copy(digits).search("a3")[0] == "3"  # type: ignore[index]
