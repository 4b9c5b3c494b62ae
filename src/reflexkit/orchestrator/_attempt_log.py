"""What the run log keeps of a failed attempt: its outputs and its failure type (#19).

The agent's output and the verification output go into ``verification_failed`` so a run can
be understood from its log alone. They come from tools and agents, so each is redacted first
(a secret cut in half by the bound would slip past the patterns), then stripped of terminal
control sequences, then bounded to its head and tail. Nothing here raises into the loop: a
redaction that fails withholds the text.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter

import attrs

from reflexkit._text import cut_middle, strip_control
from reflexkit.events import EventData
from reflexkit.models import FailureContext, FailureType, Reflection
from reflexkit.orchestrator._outcomes import RunSummary
from reflexkit.orchestrator._process import DEFAULT_MAX_OUTPUT_BYTES
from reflexkit.orchestrator._subagents import SubagentResult
from reflexkit.orchestrator._verify import (
    AttemptId,
    VerificationResult,
    failure_context,
)
from reflexkit.readers import Findings
from reflexkit.redaction import Redactor, redact_text
from reflexkit.reflection._classify import classify
from reflexkit.reflection._fingerprint import fingerprint, fingerprint_findings, normalise
from reflexkit.reflection._protocols import ReflectionService

__all__ = [
    "MAX_LOGGED_CHARS",
    "agent_figures",
    "agent_fingerprint",
    "attempt_output",
    "change_figures",
    "credit_redactions",
    "fingerprint_of",
    "marker_counts",
    "reflection_details",
    "run_counts",
    "subagent_error",
    "subagent_failure",
]

log = logging.getLogger(__name__)

MAX_LOGGED_CHARS = 4000
"""How much of each output the run log keeps: the head and the tail, the middle cut."""

_WITHHELD = "[output withheld: redaction failed]"
_EXIT_STATUS = re.compile(r"exited with status (?P<code>-?\d+)")
_RAISED = re.compile(r"(the subagent raised \w+):.*", re.DOTALL)
_MARKER = re.compile(r"\[REDACTED:([A-Za-z0-9_]+)\]")


def marker_counts(text: str) -> dict[str, int]:
    """Count the ``[REDACTED:<rule>]`` markers an earlier redaction left in *text*, per rule.

    :func:`~reflexkit.orchestrator._verify.failure_context` redacts the verification output
    before the loop sees it, so a later redaction pass finds nothing: the markers are the
    only record of what was replaced.
    """
    return dict(Counter(_MARKER.findall(text)))


def credit_redactions(reflection: Reflection, failure: FailureContext) -> Reflection:
    """Add the secrets redacted before the service saw *failure* to *reflection*'s counts."""
    try:
        found = marker_counts(failure.error_output) if failure.error_output else {}
        if not found:
            return reflection
        total = Counter(reflection.redactions)
        total.update(found)
        return attrs.evolve(reflection, redactions=dict(sorted(total.items())))
    except Exception:  # counting must never cost the run its reflection
        log.exception("crediting redactions failed")
        return reflection


@functools.cache
def _redactor() -> Redactor:
    """One redactor per process, as the container's singleton (it reads the environment)."""
    return Redactor()


def _logged(text: str | None, counts: dict[str, int]) -> str | None:
    if text is None:
        return None
    try:
        redacted = _redactor().redact(text)
    except Exception:
        log.exception("redacting an output for the run log failed; it is withheld")
        return _WITHHELD
    for rule, count in (*redacted.counts.items(), *marker_counts(text).items()):
        counts[rule] = counts.get(rule, 0) + count
    return cut_middle(strip_control(redacted.text), MAX_LOGGED_CHARS)


def fingerprint_of(failure: FailureContext) -> str:
    """The failure's fingerprint (stuck detection, the rules); ``""`` when it can't be taken."""
    try:
        return fingerprint(failure)
    except Exception:
        log.exception("fingerprinting failed")
        return ""


def agent_fingerprint(result: SubagentResult) -> str:
    """The fingerprint of an attempt whose agent did not finish: how it ended, not its output.

    An agent's output carries its prompt (lessons that change every attempt), timings,
    session ids and token counts, so three identical hangs or crashes had three
    fingerprints with one agent and one with another: ``exhausted`` for some, ``stuck`` for
    others. The ending is the failure: a time-out, an exit status, a crash of the subagent.
    """
    if result.timed_out:
        ending = "timed out"
    elif result.error and (status := _EXIT_STATUS.search(result.error)) is not None:
        ending = f"exited with status {status['code']}"
    else:
        ending = _RAISED.sub(r"\1", normalise(result.error or "did not finish"))
    kind = FailureType.TIMEOUT if result.timed_out else FailureType.TOOL_ERROR
    return fingerprint_findings(kind, Findings(tool="subagent", failure_type=kind), ending)


def subagent_error(result: SubagentResult) -> str | None:
    """The subagent's own error message, redacted; ``None`` when it gave none."""
    return redact_text(result.error) if result.error else None


def _failure_type(failure: FailureContext) -> str:
    if failure.failure_type not in {None, FailureType.UNKNOWN}:
        return failure.failure_type.value
    try:
        return classify(failure).value
    except Exception:
        log.exception("classifying a failure for the run log failed")
        return FailureType.UNKNOWN.value


def attempt_output(failure: FailureContext, result: SubagentResult) -> EventData:
    """The ``verification_failed`` fields on what the attempt printed and how it failed.

    Returns:
        ``failureType`` (classified when the failure has none), ``agentOutput``,
        ``verificationOutput`` (``None`` when the agent failed and nothing was verified) and
        ``outputRedactions``, the secrets replaced in the two per rule (``rule=count``,
        comma-separated, sorted; ``""`` for none: event data are flat scalars).
    """
    counts: dict[str, int] = {}
    return {
        "failureType": _failure_type(failure),
        "agentOutput": _logged(result.output, counts),
        "verificationOutput": _logged(failure.error_output if result.ok else None, counts),
        "outputRedactions": ",".join(f"{rule}={n}" for rule, n in sorted(counts.items())),
    }


def reflection_details(service: ReflectionService, reflection: Reflection) -> EventData:
    """The fixture key, latency, length and reason the service noted on a reflection (#16)."""
    details = getattr(service, "details", None)
    if not callable(details):
        return {}
    try:
        noted = details(reflection.id)
        figures: EventData = {
            "fixtureKey": noted.fixture_key,
            "latencyMs": noted.latency_ms,
            "length": noted.length,
            "reason": noted.reason,
        }
    except Exception:
        log.exception("reading the reflection's details failed")
        return {}
    return figures


def change_figures(result: SubagentResult, changed: tuple[str, ...] | None) -> EventData:
    """What the insight rules read of an attempt: its output's length, the files it changed."""
    figures: EventData = {"outputChars": len(result.output)}
    if changed is not None:  # unknown (or insights off): no key, not "no files"
        figures["filesModified"] = ",".join(changed)
    return figures


def agent_figures(result: SubagentResult) -> EventData:
    """What the attempt's subagent cost, for the run log (cost and turns when it reports them)."""
    return {
        "subagentMs": result.duration_ms,
        "subagentCostUsd": result.cost_usd,
        "subagentTurns": result.turns,
    }


_MAX_SUBAGENT_ERROR_CHARS = DEFAULT_MAX_OUTPUT_BYTES
"""Bounds a subagent's own output (the runner's capture already fits: no second, smaller cut)."""


def subagent_failure(result: SubagentResult, attempt: AttemptId, /) -> FailureContext:
    """The failure of an attempt whose subagent failed (nothing was checked)."""
    error = result.error or "the subagent did not finish"
    timed_out = result.timed_out or "timed out" in error or "did not finish within" in error
    output = cut_middle(
        f"{error}\n{result.output}".strip() if result.output else error,
        _MAX_SUBAGENT_ERROR_CHARS,
    )
    verification = VerificationResult(
        passed=False,
        command="subagent",
        exit_code=None,
        output=output,
        duration_ms=result.duration_ms,
        timed_out=timed_out,
    )
    failure = failure_context(verification, attempt)
    if failure.failure_type is None:
        failure = attrs.evolve(failure, failure_type=FailureType.TOOL_ERROR)
    return failure


def run_counts(summary: RunSummary) -> EventData:
    """The ``run_finished`` figures: a count per outcome, whether all passed, how long."""
    counts: EventData = {"runId": summary.run_id, "allPassed": summary.passed}
    for outcome in summary.outcomes:
        previous = counts.get(outcome.outcome, 0)
        counts[outcome.outcome] = (previous if isinstance(previous, int) else 0) + 1
    counts["durationMs"] = summary.duration_ms
    return counts
