"""Rendering for the terminal: run events and run summaries."""

from __future__ import annotations

from reflexkit._text import one_line
from reflexkit.events import Event, EventKind
from reflexkit.redaction.gate import outbound


def show(text: str) -> str:
    """*text* as one line for the terminal: through the outbound gate, then one line.

    The gate redacts secrets and shows control, bidi and hidden characters as ``<U+XXXX>``;
    ids, paths and details come from files anyone can write.
    """
    return one_line(outbound(text, "terminal"))


def _describe(event: Event) -> str | None:  # noqa: C901, PLR0912 -- one case per kind
    """One plain line per event worth a line, for the terminal."""
    data = event.data
    # Events before any attempt (run-start findings, a paused subtask) have attempt 0.
    where = f"[{event.subtask_id}]" + (f" attempt {event.attempt}" if event.attempt else "")
    text: str | None = None
    match event.kind:
        case EventKind.ATTEMPT_STARTED:
            text = "the subagent is working"
        case EventKind.VERIFICATION_FAILED if data.get("subagentOk") is False:
            text = f"the subagent failed: {data.get('subagentError')}"
        case EventKind.VERIFICATION_FAILED if data.get("failureType") == "judge_rejected":
            text = "the completion judge found work missing (its feedback goes to the retry)"
        case EventKind.VERIFICATION_FAILED if data.get("timedOut"):
            text = f"verification timed out: `{data.get('command')}` was killed"
        case EventKind.VERIFICATION_FAILED:
            text = f"verification failed: `{data.get('command')}` exited {data.get('exitCode')}"
        case EventKind.REFLECTION_GENERATED:
            fell_back = f", fell back: {data['reason']}" if data.get("reason") else ""
            text = f"reflection ({data.get('source')}{fell_back}): {data.get('category')}"
        case EventKind.RETRY:
            text = "retrying with the lessons in the prompt"
        case EventKind.PASSED:
            text = "passed"
        case EventKind.STUCK | EventKind.EXHAUSTED | EventKind.BUDGET_SPENT:
            text = f"{event.kind.value}, giving up on this subtask: {data.get('reason')}"
        case EventKind.SKIPPED:
            text = f"skipped: {data.get('reason')}"
        case EventKind.SETUP_FAILED:
            text = f"setup error: {data.get('reason')}"
        case EventKind.INTERRUPTED:
            text = f"interrupted by {data.get('signal')}"
        case EventKind.NEEDS_INPUT:
            text = f"needs input: the agent asked the user ({data.get('cue')})"
        case EventKind.NEEDS_REVIEW:
            text = f"needs review: {data.get('surface')} ({data.get('reason')})"
        case EventKind.PAUSED:  # insights (#17)
            text = f"paused, not attempted: {data.get('reason')} (reflexkit resume to retry)"
        case EventKind.FINDING:  # insights (#17): named by its subject unless it is the subtask
            subject = data.get("subjectId")
            about = "" if not subject or subject == event.subtask_id else f" on {subject}"
            text = f"finding ({data.get('rule')}){about}: {data.get('detail')}"
        case EventKind.CHECKS_CHANGED:
            said = "; ".join(f"{k} {v}" for k, v in data.items() if v)
            text = f"the attempt changed what checks it: {said}"
        case EventKind.OWN_STATE_CHANGED:  # the own-folder guard
            said = "; ".join(f"{k} {v}" for k, v in data.items() if v)
            text = f"reflexkit's own files were changed, not trusted: {said}"
    if text is None:
        return None
    if not event.subtask_id:
        return show(text)
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
