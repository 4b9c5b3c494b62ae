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

from reflexkit._text import strip_control
from reflexkit.events import EventData
from reflexkit.models import FailureContext, FailureType, Reflection
from reflexkit.orchestrator.subagents import SubagentResult
from reflexkit.orchestrator.verify import cut_middle
from reflexkit.redaction import Redactor, redact_text
from reflexkit.reflection.classify import classify
from reflexkit.reflection.fingerprint import fingerprint

__all__ = [
    "MAX_LOGGED_CHARS",
    "attempt_output",
    "credit_redactions",
    "fingerprint_of",
    "marker_counts",
    "subagent_error",
]

log = logging.getLogger(__name__)

MAX_LOGGED_CHARS = 4000
"""How much of each output the run log keeps: the head and the tail, the middle cut."""

_WITHHELD = "[output withheld: redaction failed]"
_MARKER = re.compile(r"\[REDACTED:([A-Za-z0-9_]+)\]")


def marker_counts(text: str) -> dict[str, int]:
    """Count the ``[REDACTED:<rule>]`` markers an earlier redaction left in *text*, per rule.

    :func:`~reflexkit.orchestrator.verify.failure_context` redacts the verification output
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
