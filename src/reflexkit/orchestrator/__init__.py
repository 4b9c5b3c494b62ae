"""The orchestrator: the retry loop, its subagents and verification (events: reflexkit.events).

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.orchestrator._loop import Orchestrator, RunSummary, SubtaskOutcome, build_prompt
    from reflexkit.orchestrator.claude_code import ClaudeCodeSubagent
    from reflexkit.orchestrator.subagents import (
        CommandSubagent,
        ScriptedSubagent,
        Subagent,
        SubagentRequest,
        SubagentResult,
    )
    from reflexkit.orchestrator.verify import VerificationResult, Verifier, verifier_factory

__all__ = [
    "ClaudeCodeSubagent",
    "CommandSubagent",
    "Orchestrator",
    "RunSummary",
    "ScriptedSubagent",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
    "SubtaskOutcome",
    "VerificationResult",
    "Verifier",
    "build_prompt",
    "verifier_factory",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Orchestrator": "_loop",
        "RunSummary": "_loop",
        "SubtaskOutcome": "_loop",
        "build_prompt": "_loop",
        "CommandSubagent": "subagents",
        "ScriptedSubagent": "subagents",
        "Subagent": "subagents",
        "SubagentRequest": "subagents",
        "SubagentResult": "subagents",
        "ClaudeCodeSubagent": "claude_code",
        "VerificationResult": "verify",
        "Verifier": "verify",
        "verifier_factory": "verify",
    },
)
