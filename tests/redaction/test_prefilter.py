"""The prefilter: the quick first search never misses a text the bounded triggers select."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import re2

from reflexkit.redaction import RULES, Redactor
from reflexkit.redaction._prefilter import Trigger, bounded, loosened

SECRETS = Path(__file__).parent.parent / "data" / "secrets"

BARE = Redactor(environ={})
TRIGGER = BARE._trigger  # the redactor's own prefilter, as it runs
OPTIONS = re2.Options()
OPTIONS.max_mem = 32 << 20
OPTIONS.log_errors = False
EXACT = re2.compile(TRIGGER.pattern, OPTIONS)


def _texts() -> Iterator[str]:
    """Every rule's examples and look-alikes, the secrets corpora, and adversarial runs."""
    for rule in RULES:
        yield from rule.examples
        yield from rule.lookalikes
    for name in ("secrets", "lookalikes", "real_tools", "real_tools_lookalikes"):
        for item in json.loads((SECRETS / f"{name}.json").read_text("utf-8")):
            yield item["text"] if isinstance(item, dict) else item
    for unit in ("password=", "sk-", "token: ", "eyJhbGci.", "mysql -p'x' ", "a" * 70 + " "):
        yield unit * (4096 // len(unit))


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"a{2,40}b{3}c{1,}", r"a{2,}b{3}c{1,}"),
        (r"[{1,2}]x{0,9}", r"[{1,2}]x{0,}"),
        (r"\{1,2\}y{1,2}", r"\{1,2\}y{1,}"),
        (r"[]{1,2}]z{2,3}", r"[]{1,2}]z{2,}"),
        (r"[^]{1,2}]z{2,3}", r"[^]{1,2}]z{2,}"),
        (r"[[:alpha:]{1,2}]w{4,5}", r"[[:alpha:]{1,2}]w{4,}"),
        (r"\x{41}{1,3}", r"\x{41}{1,}"),
        (r"\Qa{1,2}\E", r"\Qa{1,2}\E"),
    ],
)
def test_loosening_drops_upper_bounds_of_repetitions_only(pattern: str, expected: str) -> None:
    """Braces that are text (escaped, in a class, quoted) stay as they are."""
    assert loosened(pattern) == expected


def test_the_quick_search_finds_every_text_the_triggers_select() -> None:
    """The loosened pattern matches more, never less: no text it misses holds a trigger."""
    selected = 0
    for text in _texts():
        if EXACT.search(text.encode("utf-8", "surrogatepass")) is not None:
            selected += 1
            assert TRIGGER.may_match(text), text[:200]
    assert selected > 300


def test_a_text_without_triggers_is_returned_as_it_is() -> None:
    """A short text the quick search misses yields no span, as the bounded scan would."""
    text = "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed in 0.12s\n"
    assert not TRIGGER.may_match(text)
    assert list(TRIGGER.spans(text)) == []
    assert BARE.redact(text).text is text


def test_long_texts_skip_the_quick_search() -> None:
    """Past 64 KiB the bounded scan runs directly: one scan, not two."""
    trigger = Trigger(bounded("password="))
    assert trigger.may_match("x" * (1 << 17))


def test_redactors_of_the_same_rules_share_their_automata() -> None:
    """Two redactors of the same rules compile their trigger automata once.

    A command builds more than one (the reflection service's, the gate's).
    """
    first, second = Redactor(environ={}), Redactor(environ={})
    assert first.may_find("password=Hq3Zt8Lm2Xp7")
    assert second.may_find("password=Hq3Zt8Lm2Xp7")
    assert first._trigger._quick is second._trigger._quick
    assert Trigger("sk-[a-z]+")._compiled is Trigger("sk-[a-z]+")._compiled
