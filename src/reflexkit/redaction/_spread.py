"""Every other printing of a value a rule found: the same secret, printed without its name."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterator, Mapping

from reflexkit._pattern import Pattern
from reflexkit.redaction._shapes import _SPREAD_MIN, _generated_looking
from reflexkit.redaction._windows import _NEAR, _apply, _Edit

_PAIR_VALUE = Pattern(r"=([^\s;,&\"']{8,})")
_SPREAD_MAX = 64
"""At most this many found values are searched for in the rest of the text (longest first)."""


def _spreading(found: Mapping[str, str]) -> list[tuple[str, str]]:
    """The found values worth searching for elsewhere: long and generated-looking."""
    values = [
        (value, rule)
        for value, rule in found.items()
        if len(value) >= _SPREAD_MIN and "[REDACTED:" not in value and _generated_looking(value)
    ]
    values.sort(key=lambda pair: (-len(pair[0]), pair[0]))
    return values[:_SPREAD_MAX]


def _occurrences(
    text: str,
    start: int,
    stop: int,
    values: list[tuple[str, str]],
    cuts: list[tuple[int, int, str]],
) -> list[tuple[int, int, str]]:
    """Where the *values* stand alone in ``text[start:stop]``: ``(start, end, rule)``.

    *cuts* are the cut copies (:func:`_cut_copies`) of the whole of *text*, sorted.
    """
    found: list[tuple[int, int, str]] = []
    for value, rule in values:
        at = text.find(value, start, stop)
        while at != -1:
            found.append((at, at + len(value), rule))
            at = text.find(value, at + len(value), stop)
    starts = {a for a, _, _ in found}
    ends = {b for _, b, _ in found}
    size = len(text)
    hits = [
        (a, b, rule)
        for a, b, rule in found  # alone, or glued to another found value (``pw1 + pw2``)
        if (a == 0 or not text[a - 1].isalnum() or a in ends)
        and (b >= size or not text[b].isalnum() or b in starts)
    ]
    low = bisect.bisect_left(cuts, (start, -1, ""))
    hits += itertools.takewhile(lambda hit: hit[1] <= stop, cuts[low:])
    hits.sort()
    kept: list[tuple[int, int, str]] = []
    for hit in hits:
        if not kept or hit[0] >= kept[-1][1]:
            kept.append(hit)
    return kept


_CUT_WORD = Pattern(r"[A-Za-z0-9_+/=-]+")
_CUT_MIN = 6


def _cut_copies(
    text: str, start: int, stop: int, values: list[tuple[str, str]]
) -> list[tuple[int, int, str]]:
    """Where a tool kept the head or the tail of a found value around ``...``.

    Pytest cuts a long string in an assertion to ``'sec_Pc7K...Xw9Km4Rv7'``: the head of one
    value and the tail of the same or another one.
    """
    hits: list[tuple[int, int, str]] = []
    at = text.find("...", start, stop)
    while at != -1:
        after = at + 3
        while after < stop and text[after] == ".":  # pytest's progress dots: one run
            after += 1
        if after - at == 3:  # noqa: PLR2004 -- a cut is three dots exactly
            for low, high, wanted in _cut_pieces(text, at, after, start, stop):
                piece = text[low:high]
                if len(piece) < _CUT_MIN:
                    continue
                rule = next((r for v, r in values if wanted(v, piece)), None)
                if rule is not None and _generated_looking(piece):
                    hits.append((low, high, rule))
        at = text.find("...", after, stop)
    return hits


def _cut_pieces(
    text: str, at: int, after: int, start: int, stop: int
) -> Iterator[tuple[int, int, Callable[[str, str], bool]]]:
    """The word that ends at ``...`` (a head: ``startswith``) and the one after it (a tail)."""
    low = max(at - _NEAR, start)
    head = _CUT_WORD.match(text[low:at][::-1])  # read backwards from the dots
    if head is not None:
        yield at - head.end(), at, str.startswith
    tail = _CUT_WORD.match(text, after, min(after + _NEAR, stop))
    if tail is not None:
        yield after, tail.end(), str.endswith


def _spread(
    text: str, edits: list[_Edit], found: Mapping[str, str], counts: dict[str, int]
) -> list[_Edit]:
    """Replace every other standalone copy of a value a rule found, anywhere in *text*.

    A tool prints one value several ways: Go's ``%+v`` beside ``%v`` (no names), a call's
    positional argument beside the repr of the object it built, a traceback's source line
    beside its locals. Once one printing names it a secret, the others go too, counted
    under the rule that found it.
    """
    values = _spreading(found)
    if not values:
        return edits

    def edit(hits: list[tuple[int, int, str]]) -> list[_Edit]:
        for _, _, rule in hits:
            counts[rule] = counts.get(rule, 0) + 1
        return [(a, b, f"[REDACTED:{rule}]") for a, b, rule in hits]

    def cut(piece: str) -> list[tuple[int, int, str]]:
        return sorted(_cut_copies(piece, 0, len(piece), values)) if "..." in piece else []

    cuts = cut(text)
    out: list[_Edit] = []
    position = 0
    for start, end, new in edits:
        out += edit(_occurrences(text, position, start, values, cuts))
        inner = edit(_occurrences(new, 0, len(new), values, cut(new)))
        out.append((start, end, _apply(new, inner, 0, len(new)) if inner else new))
        position = end
    out += edit(_occurrences(text, position, len(text), values, cuts))
    return out
