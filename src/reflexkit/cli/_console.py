"""Rendering for the terminal: run events and run summaries."""

from __future__ import annotations

from collections.abc import Callable

from reflexkit.cli._output import show
from reflexkit.events import Event, EventData, EventKind


def _failed(data: EventData) -> str:
    """What failed in a failed attempt: the agent, the judge, a time-out or a check."""
    if data.get("subagentOk") is False:
        return f"the subagent failed: {data.get('subagentError')}"
    if data.get("failureType") == "judge_rejected":
        return "the completion judge found work missing (its feedback goes to the retry)"
    if data.get("timedOut"):
        return f"verification timed out: `{data.get('command')}` was killed"
    return f"verification failed: `{data.get('command')}` exited {data.get('exitCode')}"


def _reflected(data: EventData) -> str:
    fell_back = f", fell back: {data['reason']}" if data.get("reason") else ""
    return f"reflection ({data.get('source')}{fell_back}): {data.get('category')}"


def _listed(data: EventData) -> str:
    return "; ".join(f"{k} {v}" for k, v in data.items() if v)


def _found(data: EventData, subtask_id: str | None = None) -> str:
    """A finding, named by its subject unless that is the subtask itself."""
    subject = data.get("subjectId")
    about = "" if not subject or subject == subtask_id else f" on {subject}"
    return f"finding ({data.get('rule')}){about}: {data.get('detail')}"


def _gave_up(data: EventData) -> str:
    return f"giving up on this subtask: {data.get('reason')}"


_LINES: dict[EventKind, Callable[[EventData], str]] = {
    EventKind.ATTEMPT_STARTED: lambda _: "the subagent is working",
    EventKind.VERIFICATION_FAILED: _failed,
    EventKind.REFLECTION_GENERATED: _reflected,
    EventKind.RETRY: lambda _: "retrying with the lessons in the prompt",
    EventKind.PASSED: lambda _: "passed",
    EventKind.STUCK: lambda d: f"stuck, {_gave_up(d)}",
    EventKind.EXHAUSTED: lambda d: f"exhausted, {_gave_up(d)}",
    EventKind.BUDGET_SPENT: lambda d: f"budget_spent, {_gave_up(d)}",
    EventKind.SKIPPED: lambda d: f"skipped: {d.get('reason')}",
    EventKind.SETUP_FAILED: lambda d: f"setup error: {d.get('reason')}",
    EventKind.INTERRUPTED: lambda d: f"interrupted by {d.get('signal')}",
    EventKind.NEEDS_INPUT: lambda d: f"needs input: the agent asked the user ({d.get('cue')})",
    EventKind.NEEDS_REVIEW: lambda d: f"needs review: {d.get('surface')} ({d.get('reason')})",
    EventKind.PAUSED: lambda d: (  # insights (#17)
        f"paused, not attempted: {d.get('reason')} (reflexkit resume to retry)"
    ),
    EventKind.FINDING: _found,
    EventKind.CHECKS_CHANGED: lambda d: f"the attempt changed what checks it: {_listed(d)}",
    EventKind.OWN_STATE_CHANGED: lambda d: (  # the own-folder guard
        f"reflexkit's own files were changed, not trusted: {_listed(d)}"
    ),
}
"""The line each kind of event worth a line gets on the terminal, from its data."""


def _describe(event: Event) -> str | None:
    """One plain line per event worth a line, for the terminal."""
    line = _LINES.get(event.kind)
    if line is None:
        return None
    text = _found(event.data, event.subtask_id) if line is _found else line(event.data)
    if not event.subtask_id:
        return show(text)
    # Events before any attempt (run-start findings, a paused subtask) have attempt 0.
    where = f"[{event.subtask_id}]" + (f" attempt {event.attempt}" if event.attempt else "")
    return show(f"{where}: {text}")


_STYLES = {
    EventKind.VERIFICATION_FAILED: "red",
    EventKind.REFLECTION_GENERATED: "cyan",
    EventKind.PASSED: "bold green",
    EventKind.STUCK: "bold yellow",
    EventKind.EXHAUSTED: "bold red",
    EventKind.BUDGET_SPENT: "bold red",
    EventKind.SETUP_FAILED: "bold red",
    EventKind.INTERRUPTED: "bold red",
    EventKind.NEEDS_INPUT: "bold yellow",
    EventKind.NEEDS_REVIEW: "yellow",
    EventKind.PAUSED: "yellow",
    EventKind.FINDING: "yellow",
    EventKind.OWN_STATE_CHANGED: "bold yellow",
    EventKind.CHECKS_CHANGED: "yellow",
}
