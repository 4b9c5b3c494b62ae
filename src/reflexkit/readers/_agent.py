"""The coding agent's own failure: it ran out of time, or could not reach its model.

When the agent itself fails (the orchestrator records its command as ``subagent``), its
output is the agent's log: banners, progress and model metadata lines, none of them an
error of the code. Quoting them ("Model metadata for ... not found") or advising to "start
or mock the dependency it waits for" teaches the next attempt nothing. This reader says what
failed: the agent's time ran out (scope and pace are the lesson) or it could not reach its
model (connectivity, credentials or the model's name: no change to the code helps).
"""

from __future__ import annotations

import re

from reflexkit._pattern import Pattern
from reflexkit.models import FailureContext, FailureType, ReflectionCategory
from reflexkit.readers._findings import Findings, clip

__all__ = ["AGENT_COMMAND", "parse_agent"]

AGENT_COMMAND = "subagent"
"""The command the orchestrator records for a failure of the agent itself."""

_TIMED_OUT = Pattern(r"\btimed out\b|\bdid not finish within\b|\btime limit\b", re.IGNORECASE)
_UNREACHABLE = Pattern(
    r"^.*(?:Connection (?:refused|reset|error)|ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|"
    r"Could not resolve host|getaddrinfo|Name or service not known|Temporary failure in name "
    r"resolution|[Nn]etwork is unreachable|APIConnectionError|APITimeoutError|Unable to connect|"
    r"certificate verify failed|\b(?:401|403)\b.*(?:[Uu]nauthori[sz]ed|[Ff]orbidden)|"
    r"authentication_error|invalid x-api-key|API key|overloaded_error|\b529\b|"
    r"not_found_error|Could not reach|failed to connect).*$",
    re.MULTILINE,
)


def parse_agent(text: str, failure: FailureContext) -> Findings | None:
    """Read an agent that timed out or could not reach its model; else ``None``.

    An agent that stopped otherwise (it exited with an error after running the tests, say)
    is read by the other readers: what it printed may be the failure.
    """
    if failure.command != AGENT_COMMAND:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else "the agent failed without a message"
    unreachable = _UNREACHABLE.search(text)
    if unreachable is not None:
        return _unreachable(first, unreachable.group(0).strip())
    timed_out = failure.failure_type is FailureType.TIMEOUT or bool(_TIMED_OUT.search(first))
    if timed_out:
        return _timed_out(first)
    return None  # another failure of the agent: what it printed is read as any output


def _timed_out(first: str) -> Findings:
    findings = Findings(tool="agent", failure_type=FailureType.TIMEOUT)
    findings.category = ReflectionCategory.APPROACH_FLAW
    findings.facts = [clip(first, 200)]
    findings.headline = (
        "The coding agent ran out of time before it finished; the checks never judged its work."
    )
    findings.advice = (
        "Plan for the time limit: make the smallest change that satisfies the subtask, run "
        "only the checks that cover it (one test file, not the whole suite), never start a "
        "command that waits for input or runs forever, and stop once the checks pass."
    )
    findings.steps.append("Split the subtask or narrow it to the files the failure names.")
    findings.confidence = 0.6
    return findings


def _unreachable(first: str, evidence: str) -> Findings:
    findings = Findings(tool="agent", failure_type=FailureType.TOOL_ERROR)
    findings.category = ReflectionCategory.MISSING_CONTEXT
    findings.facts = [clip(evidence, 200)]
    if first != evidence:
        findings.details.append(clip(first, 160))
    findings.headline = (
        "The coding agent could not reach its model, so no work was done; the code was not judged."
    )
    findings.advice = (
        "This is connectivity or credentials, not the code: check the network, the API key "
        "and base URL the agent uses and the model's name; every attempt fails the same way "
        "until that is fixed, so fix it before retrying."
    )
    findings.steps.append("Check the agent can reach its model: run it once by hand.")
    findings.confidence = 0.6
    return findings
