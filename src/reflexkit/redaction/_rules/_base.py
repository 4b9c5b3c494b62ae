"""What a rule is: :class:`Rule`, its constructor for the family tables, and its cases."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypedDict, Unpack

import attrs

from reflexkit._pattern import Pattern

__all__ = ["Redacted", "Rule", "compiled"]


@attrs.frozen
class Redacted:
    """Text with its secrets replaced.

    Attributes:
        text: The redacted text.
        counts: How many secrets each rule replaced (only rules that fired).
    """

    text: str
    counts: dict[str, int]


@attrs.frozen
class Rule:
    """One shape of secret.

    Attributes:
        name: The rule's id: the name in ``[REDACTED:<name>]`` and in the counts.
        source: The pattern (:attr:`pattern` compiled), run on the lines the prefilter
            selected; only its ``secret`` group (or the whole match) is replaced. Its
            repetitions are bounded where a match may end early (a value read ahead), so
            a line of a thousand matches costs a thousand short reads.
        trigger: A regular expression (in the common subset of ``re`` and RE2, no look-around)
            whose match somewhere on a line makes the line a candidate. Its unbounded
            repetitions are bounded when the prefilter is built (:func:`bounded`).
        keywords: Lower-case strings one of which must be on a candidate line for this rule
            to run there (a cheap second filter); empty: run on every candidate line.
        check: Tells a real secret from a look-alike, given the match; ``None``: always.
        context_lines: Lines after the trigger line that belong to the same secret (the
            ``password`` line of a multi-line ``.netrc`` entry).
        example: An obviously fake example of what the rule must remove (the docs show it);
            :attr:`examples` adds more, and :attr:`lookalikes` the texts like them that the
            whole redactor must leave alone, from the ``<family>.toml`` file beside the
            family's module (read when a test asks, not at import). A test checks both,
            with the rule's id in the replacement.
        gate_source: Where keywords are weak (``sk``, ``:``), a cheap pattern that must also
            be found on the line before the rule runs there.
    """

    name: str
    source: str
    trigger: str
    keywords: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None
    context_lines: int = 0
    example: str = ""
    gate_source: str | None = None

    @property
    def id(self) -> str:
        """The rule's id: :attr:`name`, as gitleaks calls it."""
        return self.name

    @property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`source` compiled, on first use (a rule runs only where its line triggers)."""
        return compiled(self.source)

    @property
    def gate(self) -> re.Pattern[str] | None:
        """:attr:`gate_source` compiled, on first use."""
        return None if self.gate_source is None else compiled(self.gate_source)

    @property
    def examples(self) -> tuple[str, ...]:
        """What the rule must remove: :attr:`example` and the rule's own in its family's cases."""
        return tuple(text for text, _ in self.marked_examples)

    @property
    def marked_examples(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Each example with the secrets marked in its case (``⟦...⟧``), which must all go.

        A mark says which part of the example is the secret: a rule that redacts only the
        scheme of ``Authorization: Token token="..."`` removes something, but not the
        secret, and fails its case.
        """
        cases = (self.example, *_cases().get(self.name, {}).get("examples", ()))
        return tuple((_MARK.sub(r"\1", case), tuple(_MARK.findall(case))) for case in cases)

    @property
    def lookalikes(self) -> tuple[str, ...]:
        """Texts like :attr:`examples` that the whole redactor must leave alone."""
        return tuple(_cases().get(self.name, {}).get("lookalikes", ()))


_MARK = Pattern("\u27e6(.*?)\u27e7")
"""``⟦secret⟧`` in a case: the part that must not survive."""


@functools.cache
def compiled(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, once: the table's patterns compile when first needed."""
    return re.compile(source)


class _Options(TypedDict, total=False):
    """What a rule of the table may add to its pattern, trigger, keywords and check."""

    example: str
    context_lines: int
    gate: str | None


def _rule(
    name: str,
    pattern: str,
    trigger: str,
    markers: Iterable[str] = (),
    check: Callable[[re.Match[str]], bool] | None = None,
    **options: Unpack[_Options],
) -> Rule:
    """A :class:`Rule` as the family tables write it: positionally, its options by name."""
    return Rule(
        name=name,
        source=_within_lines(pattern),
        trigger=trigger,
        keywords=tuple(markers),
        check=check,
        context_lines=options.get("context_lines", 0),
        example=options.get("example", ""),
        gate_source=options.get("gate"),
    )


_LINE_READ = 512
"""How far along its line a rule reads between a tool's name and its flag (``mysql ... -p``)."""


def _within_lines(pattern: str) -> str:
    """Bound "the rest of the line" in a rule's pattern to :data:`_LINE_READ` characters.

    Unbounded, a line holding a tool's name a thousand times is read to its end a thousand
    times; bounded, each match reads a fixed distance, and the cost is linear in the line.
    """
    bound = f"[^\\n]{{0,{_LINE_READ}}}"
    return pattern.replace("[^\\n]*?", bound + "?").replace("[^\\n]*", bound)


@functools.cache
def _cases() -> dict[str, dict[str, list[str]]]:
    """Each rule's extra examples and its look-alikes, from each family's ``<family>.toml``."""
    import tomllib  # noqa: PLC0415 -- only the tests read the cases

    cases: dict[str, dict[str, list[str]]] = {}
    for path in sorted(Path(__file__).parent.glob("*.toml")):
        cases |= tomllib.loads(path.read_text("utf-8"))
    return cases


def _fake(*parts: str) -> str:
    """Join *parts*: examples are assembled so no scanner mistakes this file for a leak."""
    return "".join(parts)
