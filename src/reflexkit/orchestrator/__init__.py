"""The orchestrator: the retry loop, its subagents and verification (events: reflexkit.events).

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent as ClaudeCodeSubagent
    from reflexkit.orchestrator._loop import Orchestrator as Orchestrator
    from reflexkit.orchestrator._outcomes import (
        RunSummary as RunSummary,
        SubtaskOutcome as SubtaskOutcome,
    )
    from reflexkit.orchestrator._subagents import (
        CommandSubagent as CommandSubagent,
        ScriptedSubagent as ScriptedSubagent,
        Subagent as Subagent,
        SubagentRequest as SubagentRequest,
        SubagentResult as SubagentResult,
    )
    from reflexkit.orchestrator._verify import VerificationResult as VerificationResult

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "_loop": ("Orchestrator",),
        "_outcomes": ("RunSummary", "SubtaskOutcome"),
        "_subagents": (
            "CommandSubagent",
            "ScriptedSubagent",
            "Subagent",
            "SubagentRequest",
            "SubagentResult",
        ),
        "_claude_code": ("ClaudeCodeSubagent",),
        "_verify": ("VerificationResult",),
    },
)
