"""How an attempt ended: a table of realistic last messages of coding agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexkit.reports._ending import STUCK_MIN_AGE_S, Ending, classify_ending

DATA = Path(__file__).parent.parent / "data" / "endings.jsonl"
TABLE = [
    (row["message"], Ending(row["ending"]))
    for row in map(json.loads, DATA.read_text(encoding="utf-8").splitlines())
]
"""Realistic last messages of coding agents, each with the ending a reader would give it."""


@pytest.mark.parametrize(("message", "ending"), TABLE)
def test_table(message: str, ending: Ending) -> None:
    """Each realistic last message gets the ending a reader would give it."""
    result = classify_ending(message)
    assert result.kind is ending, result.reason


@pytest.mark.parametrize("ending", [e for e in Ending if e is not Ending.WORKING])
def test_every_ending_has_rows(ending: Ending) -> None:
    """The table covers each ending read from text at least three times (working is not)."""
    assert sum(1 for _, e in TABLE if e is ending) >= 3


def test_run_error_wins_over_text() -> None:
    """A run that reported an error ended in error, whatever its last words."""
    assert classify_ending("All tests pass.", is_error=True).kind is Ending.ERROR


def test_none_is_stuck_and_reason_is_given() -> None:
    """No message at all is stuck, with a reason."""
    result = classify_ending(None)
    assert result.kind is Ending.GENUINELY_STUCK
    assert result.reason == "the agent wrote nothing"


def test_question_early_in_a_long_message_does_not_count() -> None:
    """Only the end of the message is read."""
    text = "Should I use Decimal?\n\n" + "I used Decimal. " * 200 + "\n\nDone."
    assert classify_ending(text).kind is Ending.COMPLETED


@pytest.mark.parametrize(
    "message",
    ["Installing the dependencies now, this takes a minute:", "Building", "All tests pass."],
)
def test_a_running_tool_is_working_whatever_the_text(message: str) -> None:
    """An agent whose `npm install` still runs is working, not stuck (nor done)."""
    result = classify_ending(message, running=["npm install"])
    assert result.kind is Ending.WORKING
    assert "npm install" in result.reason


def test_too_recent_to_call_stuck() -> None:
    """A stuck-looking message younger than the age gate is working; an old one is stuck."""
    message = "Next, I'll run the full build:"
    assert classify_ending(message).kind is Ending.GENUINELY_STUCK
    assert classify_ending(message, age_s=5).kind is Ending.WORKING
    assert classify_ending(message, age_s=STUCK_MIN_AGE_S).kind is Ending.GENUINELY_STUCK
    assert classify_ending("Which database should I use?", age_s=5).kind is Ending.WAITING_FOR_USER
