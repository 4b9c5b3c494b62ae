"""How an attempt ended, read from the agent's last message.

:func:`classify_ending` is pure: ``completed``, ``waiting_for_user``, ``genuinely_stuck``,
``error`` or ``working``, from the end of the message only (its last paragraphs, code blocks
removed). docs/reports.md says what each means for the loop.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence

import attrs

from reflexkit._text import one_line

__all__ = ["STUCK_MIN_AGE_S", "AttemptEnding", "Ending", "classify_ending"]


class Ending(enum.StrEnum):
    """How an attempt ended."""

    COMPLETED = "completed"
    WAITING_FOR_USER = "waiting_for_user"
    GENUINELY_STUCK = "genuinely_stuck"
    ERROR = "error"
    WORKING = "working"


STUCK_MIN_AGE_S = 30.0
"""Below this age (seconds since the agent's last output) an agent is not called stuck."""


@attrs.frozen(kw_only=True)
class AttemptEnding:
    """The ending and the cue that decided it (for logs and events)."""

    kind: Ending
    reason: str


_TAIL_CHARS = 1_200
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")

_ERROR = re.compile(
    r"^\s*(?:api error|error:|fatal:|panic:)"
    r"|traceback \(most recent call last\)"
    r"|\b(?:credit balance is too low|usage limit reached|rate limit(?:ed)? exceeded"
    r"|invalid api key|overloaded_error|prompt is too long|context window exceeded"
    r"|request timed out|internal server error|connection (?:error|refused|reset))\b",
    re.IGNORECASE | re.MULTILINE,
)

_PLEASANTRY = re.compile(
    r"(?:let me know if|feel free to|hope this helps|happy to help|if you(?:'d| would) like"
    r"|if you want)[^.?!\n]*[.?!]?"
    r"|(?:is there )?anything else (?:you(?:'d| would) like|i can help with)[^?\n]*\?",
    re.IGNORECASE,
)

_ASKS_USER = re.compile(
    r"\b(?:should i|shall i|would you (?:like|prefer)|do you (?:want|prefer|know|have)"
    r"|which (?:\w+ ){0,3}(?:do|should|would) (?:you|i|we)|can you (?:confirm|clarify|provide"
    r"|tell|share|check)|could you (?:confirm|clarify|provide|tell|share|check)"
    r"|what (?:\w+ ){0,3}(?:do|should|would) you|how (?:do|should|would) you (?:like|want)"
    r"|is it (?:ok|okay|fine) (?:if|to)|may i|do i have your)\b",
    re.IGNORECASE,
)
_NEEDS_INPUT = re.compile(
    r"\b(?:please (?:confirm|clarify|advise|let me know (?:which|whether|what|how|if you))"
    r"|(?:waiting|wait) for your (?:input|answer|confirmation|decision)"
    r"|before i (?:proceed|continue|go ahead)[^.\n]*(?:confirm|need|let me know)"
    r"|i need (?:you|your) (?:to|input|confirmation|decision|answer)"
    r"|let me know (?:which|whether|what|how) (?:you|i|we))\b",
    re.IGNORECASE,
)

_GAVE_UP = re.compile(
    r"\b(?:i(?:'m| am) (?:unable|not able|stuck)|i (?:cannot|can't|could not|couldn't|was "
    r"(?:not|unable) (?:able )?to)|i (?:was|have been) unable|i(?:'ve| have) run out of"
    r"|i don't (?:know how|have (?:access|permission))|giving up|i give up"
    r"|(?:is|are) blocked (?:by|on)|without (?:access|permission) to)\b",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:done|completed?|finished|fixed|implemented|all (?:\d+ )?tests? (?:now )?pass(?:es|ed)?"
    r"|tests? (?:now )?pass|(?:is|are) now (?:working|passing|correct)|i(?:'ve| have) "
    r"(?:fixed|added|updated|implemented|changed|made|created|removed|refactored|resolved))\b",
    re.IGNORECASE,
)
_ANNOUNCED = re.compile(
    r"(?:^|\n)\s*(?:next(?: steps?)?|now|then)?,?\s*(?:i'll|i will|let me|let's|i'm going to"
    r"|next steps?)\b[^\n]*(?::|\.\.\.|…)\s*\Z",
    re.IGNORECASE,
)
_NEXT_STEPS = re.compile(
    r"(?:^|\n)\s*(?:#+\s*)?(?:\*\*)?(?:next steps|remaining (?:work|steps)|todo)(?:\*\*)?:?\s*\n"
    r"(?:\s*(?:[-*]|\d+[.)])[^\n]*\n?)+\s*\Z",
    re.IGNORECASE,
)
_TERMINAL = re.compile(r"[.!?)\]\"'`*|>]\s*\Z|\b(?:done|ok)\s*\Z", re.IGNORECASE)
_CUT_OFF = re.compile(
    r"(?:[,;:(\-\u2013\u2014]|\b(?:and|or|but|to|the|a|an|of|with|for|in|on|at|that|which"
    r"|because|so|then|if|when|while|is|are|was|were|will|would|should|can|could))\s*\Z",
    re.IGNORECASE,
)
"""A message that ends on a comma or a word no sentence ends with was cut off mid-sentence.

A last line that merely lacks a full stop (``Applied 3 edits``, a tool's log line) is not:
command-line agents print logs, not prose.
"""


def _tail(text: str) -> str:
    """The last paragraphs of a message, code blocks and inline code removed."""
    prose = _INLINE_CODE.sub("code", _FENCE.sub("\n", text))
    tail = prose.strip()[-_TAIL_CHARS:]
    paragraphs = [p for p in re.split(r"\n\s*\n", tail) if p.strip()]
    return "\n\n".join(paragraphs[-2:])


def _last_paragraph(tail: str) -> str:
    parts = [p for p in re.split(r"\n\s*\n", tail) if p.strip()]
    return parts[-1] if parts else ""


def classify_ending(
    text: str | None,
    /,
    *,
    is_error: bool = False,
    running: Sequence[str] = (),
    age_s: float | None = None,
) -> AttemptEnding:
    """Classify how an attempt ended from the agent's last message.

    Args:
        text: The agent's last message (its final text output); ``None`` or empty when it
            wrote nothing.
        is_error: The agent run itself reported an error (a non-zero exit, an SDK error
            result): the ending is ``error`` whatever the text says.
        running: What the agent started that is still running (a background shell's
            command, a tool call with no result yet): the agent is ``working``.
        age_s: Seconds since the agent's last output, for a watcher that asks while the
            agent may still be at work; an ending that would be ``genuinely_stuck`` is
            ``working`` below :data:`STUCK_MIN_AGE_S`. ``None`` (a stop, which is final):
            no age gate.

    Returns:
        The ending and the cue that decided it: the first of the rules below, read top to
        bottom, that matches.
    """
    if is_error:
        return AttemptEnding(kind=Ending.ERROR, reason="the agent run reported an error")
    if running:
        what = ", ".join(one_line(r)[:80] for r in running[:3])
        return AttemptEnding(kind=Ending.WORKING, reason=f"still running: {what}")
    ending = _by_text(text)
    if ending.kind is Ending.GENUINELY_STUCK and age_s is not None and age_s < STUCK_MIN_AGE_S:
        return AttemptEnding(
            kind=Ending.WORKING,
            reason=f"too recent to call stuck ({age_s:.0f} s < {STUCK_MIN_AGE_S:.0f} s)",
        )
    return ending


def _by_text(text: str | None) -> AttemptEnding:
    if not text or not text.strip():
        return AttemptEnding(kind=Ending.GENUINELY_STUCK, reason="the agent wrote nothing")
    tail = _tail(text)
    last = _last_paragraph(tail)
    for rule in _RULES:
        ending = rule(last, tail)
        if ending is not None:
            return ending
    return AttemptEnding(kind=Ending.COMPLETED, reason="ended with a finished message")


def _errored(last: str, _tail: str) -> AttemptEnding | None:
    if (match := _ERROR.search(last)) is not None:
        return AttemptEnding(kind=Ending.ERROR, reason=f"error text: {match.group(0).strip()!r}")
    return None


def _asks(last: str, _tail: str) -> AttemptEnding | None:
    asking = _PLEASANTRY.sub("", last)
    question = "?" in asking and _ASKS_USER.search(asking)
    if question or (match := _NEEDS_INPUT.search(asking)) is not None:
        cue = question.group(0) if question else match.group(0) if match else "?"
        return AttemptEnding(kind=Ending.WAITING_FOR_USER, reason=f"asks the user: {cue!r}")
    return None


def _gave_up(last: str, _tail: str) -> AttemptEnding | None:
    if (match := _GAVE_UP.search(last)) is not None and not _DONE.search(last):
        return AttemptEnding(kind=Ending.GENUINELY_STUCK, reason=f"gave up: {match.group(0)!r}")
    return None


def _more_to_do(last: str, tail: str) -> AttemptEnding | None:
    if _NEXT_STEPS.search(tail) and not _DONE.search(tail):
        return AttemptEnding(kind=Ending.GENUINELY_STUCK, reason="ended on a list of next steps")
    if _ANNOUNCED.search(last):
        return AttemptEnding(kind=Ending.GENUINELY_STUCK, reason="announced more work and stopped")
    if not _TERMINAL.search(last) and _CUT_OFF.search(last):
        return AttemptEnding(kind=Ending.GENUINELY_STUCK, reason="stopped mid-sentence")
    return None


_RULES: tuple[Callable[[str, str], AttemptEnding | None], ...] = (
    _errored,
    _asks,
    _gave_up,
    _more_to_do,
)
"""The ending rules in order, each on the last paragraph and the tail of the message."""
