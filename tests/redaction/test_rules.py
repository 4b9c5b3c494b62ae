"""The rule table as data: every rule's examples are redacted, its look-alikes are not."""

from __future__ import annotations

import re

import pytest

from reflexkit.redaction import RULES, Redactor, Rule
from reflexkit.redaction._prefilter import bounded

BARE = Redactor(environ={})


def _id(rule: Rule) -> str:
    return rule.id


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_each_rule_carries_examples_and_lookalikes(rule: Rule) -> None:
    """A rule without a true and a false positive is a rule nobody has checked."""
    assert rule.examples, f"{rule.id}: no example of what it removes"
    assert rule.lookalikes, f"{rule.id}: no look-alike it must leave alone"


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_each_example_is_redacted_by_its_rule(rule: Rule) -> None:
    """Quoted and unquoted CLI passwords and punctuated values are among the examples."""
    for example in rule.examples:
        result = BARE.redact(example)
        assert rule.id in result.counts, (example, result.text)
        assert f"[REDACTED:{rule.id}]" in result.text, (example, result.text)
        assert "[REDACTED:[REDACTED" not in result.text, result.text  # never nested


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_each_marked_secret_is_gone_whole(rule: Rule) -> None:
    """The part of an example marked ``⟦...⟧`` is gone, not only something beside it."""
    for example, secrets in rule.marked_examples:
        text = BARE.redact(example).text
        for secret in secrets:
            assert secret not in text, (example, text)
            tail = secret[len(secret) // 2 :]
            assert len(tail) < 6 or tail not in text, (example, text)  # no half left either


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_each_lookalike_is_left_alone(rule: Rule) -> None:
    """Test ids, code and placeholders are among the look-alikes."""
    for lookalike in rule.lookalikes:
        result = BARE.redact(lookalike)
        assert result.text == lookalike, (lookalike, result.text)
        assert result.counts == {}


def test_rule_ids_are_unique_and_name_the_replacement() -> None:
    """An id is what ``[REDACTED:<id>]`` and the counts say."""
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9_]+", i) for i in ids)


def test_every_trigger_is_bounded_for_the_prefilter() -> None:
    """No unbounded repetition reaches RE2: its scan stays linear on a line of matches."""
    for rule in RULES:
        pattern = bounded(rule.trigger)
        assert not re.search(r"(?<!\\)[\])][*+]|\{\d+,\}", pattern), (rule.id, pattern)


def test_every_case_names_a_rule() -> None:
    """A case in a family's ``.toml`` for a rule nobody wrote is a case nobody checks."""
    from reflexkit.redaction._rules._base import _cases  # noqa: PLC0415 -- the tests' own reader

    assert sorted(set(_cases()) - {rule.id for rule in RULES}) == []


@pytest.mark.parametrize("rule", RULES, ids=_id)
def test_each_example_goes_among_other_lines(rule: Rule) -> None:
    """An example between other lines, and the rule's examples joined line after line.

    A pattern anchored with ``$`` outside multi-line mode read only the last line of a
    region: two password prompts in a row kept the first password.
    """
    marked = [(example, s) for example, secrets in rule.marked_examples for s in secrets]
    joined = "\n".join(rule.examples)
    texts = [f"$ make deploy\n{example}\nexit status 1" for example in rule.examples]
    for text in [*texts, joined, f"{joined}\n{joined}"]:
        out = BARE.redact(text).text
        left = [s for example, s in marked if example in text and s in out]
        assert not left, (text, out)
