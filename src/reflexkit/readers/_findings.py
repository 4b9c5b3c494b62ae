"""What a tool parser finds in a failure's output, and the small helpers every parser shares.

A parser reads one output format (pytest's, rustc's, tsc's ...) and returns :class:`Findings`:
the specific facts quoted verbatim from the output (failing tests, error codes, ``file:line``
locations, messages, expected and actual values, the tool's own hints and summary), the failure
type and category the format implies, and concrete next steps.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from reflexkit._pattern import Pattern
from reflexkit.models import FailureType, ReflectionCategory

__all__ = [
    "MAX_BLOCKS",
    "Findings",
    "Problem",
    "clip",
    "dedupe",
    "group_problems",
    "plural",
]

MAX_BLOCKS = 12
"""Parsers read at most this many per-test blocks in detail (the rest are only counted)."""

ANSI = Pattern(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
"""Terminal colour and control sequences (stripped before any parser reads the output)."""


@attrs.frozen
class Problem:
    """One diagnostic of a compiler, type checker or linter.

    Attributes:
        text: The diagnostic as printed (location, code and message), possibly clipped.
        key: What groups repeats of one diagnostic (its code, or code and message).
        loc: The location exactly as printed (``src/a.py:3:1``, ``src/a.ts(3,1)``).
    """

    text: str
    key: str
    loc: str = ""


@attrs.define
class Findings:
    """The facts one parser extracted from a failure's output.

    Attributes:
        tool: The tool whose format was recognised (``"pytest"``, ``"tsc"``...).
        failure_type: The failure type the format implies.
        category: The reflection category the facts imply.
        headline: One sentence naming the tool and what failed.
        tests: Failing test ids, verbatim.
        facts: Per-failure facts (test id with its assertion, diagnostics), verbatim.
        details: Further verbatim lines (exception, expected vs actual) not tied to a test.
        summary: The tool's own summary line, verbatim (``12 failed, 11 passed``).
        hints: The tool's own advice, verbatim (``git cherry-pick --continue``).
        steps: Concrete next steps.
        advice: The suggestion: what to do differently, one or two sentences.
        confidence: How sure the parser is that it understood the failure.
        evidence: The output line that proves the failure type (a runner's closing count, a
            build's verdict), verbatim; empty when the type is the format's or a guess.
    """

    tool: str
    failure_type: FailureType
    category: ReflectionCategory = ReflectionCategory.ROOT_CAUSE
    headline: str = ""
    tests: list[str] = attrs.field(factory=list)
    facts: list[str] = attrs.field(factory=list)
    details: list[str] = attrs.field(factory=list)
    summary: str = ""
    hints: list[str] = attrs.field(factory=list)
    steps: list[str] = attrs.field(factory=list)
    advice: str = ""
    confidence: float = 0.8
    evidence: str = ""


def plural(count: int, noun: str) -> str:
    """Return ``"1 error"`` or ``"3 errors"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def clip(text: str, limit: int) -> str:
    """Shorten *text* to at most *limit* characters, marking the cut with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def dedupe(items: Iterable[str]) -> list[str]:
    """Return *items* without repeats and blanks, first occurrence first."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def group_problems(problems: Iterable[Problem], *, limit: int = 6, more_locs: int = 3) -> list[str]:
    """Render diagnostics, one line per group of repeats, in order of first appearance.

    Args:
        problems: The diagnostics, in output order.
        limit: The most groups to render; the rest are counted in a last line.
        more_locs: How many further locations of a group to name.

    Returns:
        Lines such as ``E0106 missing lifetime specifier at src/lib.rs:23:39 (+1 more: ...)``.
    """
    groups: dict[str, list[Problem]] = {}
    for problem in problems:
        groups.setdefault(problem.key, []).append(problem)
    lines: list[str] = []
    for members in list(groups.values())[:limit]:
        first = members[0]
        line = first.text
        rest = dedupe(_also(p, first) for p in members[1:] if p.loc and p.loc != first.loc)
        if len(members) > 1:
            shown = ", ".join(rest[:more_locs])
            line += f" (+{len(members) - 1} more" + (f": {shown}" if shown else "") + ")"
        lines.append(line)
    hidden = list(groups)[limit:]
    if hidden:
        lines.append(f"{len(hidden)} more kinds: " + ", ".join(clip(k, 40) for k in hidden[:8]))
    return lines


def _also(problem: Problem, first: Problem) -> str:
    """How a repeat of *first* is named: its location, and its own words when they differ.

    Linters group by code, but two ``F401`` findings name different imports: the second's
    message (``'sys' imported but unused``) is a fact of its own, not a mere repeat.
    """
    if not first.loc or problem.text.replace(problem.loc, first.loc, 1) == first.text:
        return problem.loc
    if problem.text.startswith(problem.loc):  # a line led by its location: quote it as printed
        return clip(problem.text, 90)
    message = problem.text.replace(problem.loc, "", 1).strip(" :-")
    message = message.removesuffix(" at").strip()
    return f"{problem.loc} {clip(message, 70)}" if message else problem.loc
