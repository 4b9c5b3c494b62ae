"""The heuristic generator: a specific reflection from the tool's own output, no model needed.

It runs when there is no API key, when the LLM fails or times out, and in every test, so it
has to be good on its own. A reader for the output's format (see :mod:`reflexkit.readers`)
extracts the facts a developer looks for first (failing test ids, error classes and messages,
error codes, ``file:line`` locations as printed, missing modules, expected and actual values)
and the reflection quotes them verbatim, so a later attempt can grep for them. It is deterministic
apart from the id and the creation time, never touches the network, and stays short.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import attrs

from reflexkit.models import (
    FailureContext,
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
    utcnow,
)
from reflexkit.readers import Findings, analyse, type_from_command
from reflexkit.readers._findings import clip
from reflexkit.reflection._fingerprint import fingerprint_findings

__all__ = ["HeuristicGenerator"]

MAX_CHARS = 1_500
"""Analysis, suggestion and action items together stay under this many characters."""

_ANALYSIS_BUDGET = 880
_SUGGESTION_BUDGET = 330
_ITEM_LIMIT = 170
_HEADLINE_LIMIT = 200
_FACT_LIMIT = 360
"""No quoted fact, detail or summary is longer: a reflection never pastes a whole block."""
_AGAIN = " before editing again. "
_MAX_ITEMS = 4


class HeuristicGenerator:
    """A :class:`~reflexkit.reflection._protocols.ReflectionGenerator` that reads tool output.

    Args:
        clock: Returns the creation time of a reflection (tests pass a fixed one).
        max_chars: The most characters analysis, suggestion and action items may take together.
        root: The project folder: report files a failure names are read only inside it
            (the current folder by default).
    """

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = utcnow,
        max_chars: int = MAX_CHARS,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self._clock = clock
        self._max_chars = max_chars
        self._root = None if root is None else Path(root)

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Write a reflection on *failure* from the facts in its output.

        Args:
            failure: The (already redacted) failure; a missing or unknown type is classified.
            previous: Earlier reflections of the same subtask, oldest first. When one has the
                same fingerprint, the new reflection says the previous fix did not work and
                asks for a different approach.

        Returns:
            A reflection with ``source=heuristic`` and its fingerprint filled in.
        """
        if failure.reports:
            failure = _with_reports(failure, self._root)
        findings = analyse(failure)
        failure_type = failure.failure_type
        if failure_type in {None, FailureType.UNKNOWN}:
            failure_type = findings.failure_type
        if failure_type is FailureType.UNKNOWN:
            failure_type = type_from_command(failure.command)
        assert failure_type is not None  # noqa: S101 -- narrowed for mypy
        print_ = fingerprint_findings(failure_type, findings, failure.error_output)
        repeats = [p for p in previous if p.fingerprint and p.fingerprint == print_]
        category = ReflectionCategory.APPROACH_FLAW if repeats else findings.category
        analysis, suggestion, items = self._write(failure, findings, repeats, previous, print_)
        confidence = findings.confidence
        if not findings.facts:
            confidence = min(confidence, 0.3)
        return Reflection.on(
            failure,
            created_at=self._clock(),
            category=category,
            failure_type=failure_type,
            analysis=analysis,
            suggestion=suggestion,
            action_items=items,
            confidence=round(confidence, 2),
            source=ReflectionSource.HEURISTIC,
            fingerprint=print_,
        )

    def _write(
        self,
        failure: FailureContext,
        findings: Findings,
        repeats: Sequence[Reflection],
        previous: Sequence[Reflection],
        print_: str,
    ) -> tuple[str, str, tuple[str, ...]]:
        """Compose analysis, suggestion and action items within the length budget."""
        head = _opening(failure, findings, repeats, previous, print_)
        suggestion = _suggestion(findings, repeats)
        items = [clip(step, _ITEM_LIMIT) for step in findings.steps[:_MAX_ITEMS]]
        budget = self._max_chars - len(suggestion) - sum(len(i) for i in items) - 20
        analysis = self._analysis(head, findings, min(budget, _ANALYSIS_BUDGET + 200))
        while (
            len(analysis) + len(suggestion) + sum(len(i) for i in items) > self._max_chars and items
        ):
            items.pop()
        return analysis, suggestion, tuple(items)

    @staticmethod
    def _analysis(head: str, findings: Findings, budget: int) -> str:
        """Quote the facts, then details and the summary, then more failing test ids.

        Facts come first and are never cut mid-way; room is kept for the details and the
        tool's summary line; test ids that did not fit with their messages are listed last.
        """
        tail = [" " + clip(d, _FACT_LIMIT).rstrip(".") + "." for d in findings.details]
        if findings.summary:
            tail.append(f" Summary: {clip(findings.summary, _FACT_LIMIT).rstrip('.')}.")
        reserve = min(sum(len(t) for t in tail), 260)
        parts = [head]
        used = len(head)
        shown = 0
        label = " Failing: " if findings.tests else " Errors: "
        for fact in _without_repeats(findings):
            piece = (label if shown == 0 else "; ") + clip(fact, _FACT_LIMIT)
            if used + len(piece) + reserve > budget and shown > 0:
                break
            parts.append(piece)
            used += len(piece)
            shown += 1
        if shown and not parts[-1].endswith((".", "…")):
            parts.append(".")
            used += 1
        for piece in tail:
            if used + len(piece) <= budget:
                parts.append(piece)
                used += len(piece)
        written = "".join(parts)
        return (written + _more_tests(findings, shown, written, budget - used)).strip()


def _opening(
    failure: FailureContext,
    findings: Findings,
    repeats: Sequence[Reflection],
    previous: Sequence[Reflection],
    print_: str,
) -> str:
    """The analysis's first sentences: a repeat or a change, the command, the headline."""
    opening: list[str] = []
    if repeats:
        attempts = ", ".join(str(r.attempt_number) for r in repeats[-3:])
        word = "attempts" if len(repeats) > 1 else "attempt"
        opening.append(
            f"Same failure as {word} {attempts} "
            f"({len(repeats) + 1} times): the previous fix did not work."
        )
    elif previous and previous[-1].fingerprint and previous[-1].fingerprint != print_:
        opening.append(
            f"The failure changed since attempt {previous[-1].attempt_number} "
            f"({previous[-1].failure_type.value} before)."
        )
    if failure.command:
        exit_text = f" (exit code {failure.exit_code})" if failure.exit_code is not None else ""
        opening.append(f"`{clip(failure.command, 100)}` failed{exit_text}.")
    opening.append(clip(findings.headline, _HEADLINE_LIMIT))
    return " ".join(part for part in opening if part)


def _suggestion(findings: Findings, repeats: Sequence[Reflection]) -> str:
    """The advice, after "change approach" on a repeat, before the tool's own hint."""
    hint = ""
    if findings.hints:
        quoted = "; ".join(f"`{clip(h, 120)}`" for h in findings.hints[:2])
        hint = f" The tool's own hint: {quoted}."
    prefix = ""
    if repeats:
        earlier = repeats[-1].suggestion.split(_AGAIN, 1)[-1]  # not nested on 3rd repeat
        prefix = (
            "Change approach: the earlier suggestion ("
            + clip(earlier, 90)
            + ") did not fix it, so question the assumption behind it"
            + _AGAIN
        )
    # The tool's hint is a fact to quote verbatim: the generic advice is what gets shortened.
    room = max(_SUGGESTION_BUDGET - len(prefix) - len(hint), 60)
    return prefix + clip(findings.advice, room) + hint


def _with_reports(failure: FailureContext, root: Path | None) -> FailureContext:
    """Add the text of the report files the failure names to its output, redacted.

    The files are read as they are on disk, so they pass the same redaction as the output
    before any fact is quoted from them.
    """
    from reflexkit.readers._reports import read_report_files  # noqa: PLC0415 -- rare
    from reflexkit.redaction import Redactor  # noqa: PLC0415 -- rare

    text = read_report_files(failure.reports, root=root)
    if not text:
        return failure
    clean = Redactor().redact(text).text
    return attrs.evolve(failure, error_output=f"{clean}\n{failure.error_output}")


def _without_repeats(findings: Findings) -> list[str]:
    """The facts, a failing test whose message repeats an earlier test's named with its id only.

    Ten tests failing on one message would otherwise fill the room with copies, and push
    another test's own assertion out behind "(+1 more failing)".
    """
    seen: set[str] = set()
    out: list[str] = []
    for fact in findings.facts:
        test = next((t for t in findings.tests if fact.startswith(f"{t}: ")), "")
        message = _DIGITS.sub("#", fact[len(test) + 2 :]) if test else ""
        if message and message in seen:  # the same words, another line or count
            out.append(f"{test} (the same error)")
            continue
        seen.add(message)
        out.append(fact)
    return out


_DIGITS = re.compile(r"\d+")


def _more_tests(findings: Findings, shown: int, written: str, room: int) -> str:
    """List the failing test ids not yet named, as far as *room* allows, then count the rest."""
    unseen = [t for t in findings.tests if t not in written]
    pieces: list[str] = []
    for test in unseen:
        piece = (" Also failing: " if not pieces else ", ") + test
        if len(piece) + 20 > room:
            break
        pieces.append(piece)
        room -= len(piece)
    remaining = len(unseen) - len(pieces) if findings.tests else len(findings.facts) - shown
    if remaining > 0:
        pieces.append(f" (+{remaining} more{' failing' if findings.tests else ''}).")
    elif pieces:
        pieces.append(".")
    return "".join(pieces)
