"""Claude Code as the subagent, through ``claude-agent-sdk`` (extra ``reflexkit[claude-code]``).

The SDK bundles the Claude Code CLI and drives it as a subprocess; it is imported the first
time an attempt runs, so the rest of reflexkit doesn't need it. Permissions are
``dontAsk`` with an explicit ``allowed_tools`` list: the agent may use those tools without
asking and nothing else; ``bypassPermissions`` would be refused when running as root.
The CLI reads ``ANTHROPIC_API_KEY`` (and ``ANTHROPIC_BASE_URL``) from the environment.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from reflexkit.orchestrator.subagents import SubagentRequest, SubagentResult

__all__ = ["DEFAULT_TOOLS", "ClaudeCodeSubagent"]

DEFAULT_TOOLS: tuple[str, ...] = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")
"""The tools an attempt may use without asking: read, change and check the project."""

_MS = 1_000


class ClaudeCodeSubagent:
    """A :class:`~reflexkit.orchestrator.subagents.Subagent` that runs Claude Code.

    Each attempt is a fresh Claude Code session in the project folder with the attempt's
    prompt (the retry lessons included); its result text, cost in USD and number of turns
    come back on the :class:`SubagentResult`. It never raises: a missing extra, a CLI
    failure, an error result or the time limit is ``ok=False`` with the reason.

    Args:
        allowed_tools: What the agent may do without asking.
        model: The model Claude Code uses (its own default when ``None``).
        max_turns: A limit on the agent's turns per attempt.
        env: Extra environment variables for the CLI (e.g. ``CLAUDE_CONFIG_DIR``).
    """

    def __init__(
        self,
        *,
        allowed_tools: Sequence[str] = DEFAULT_TOOLS,
        model: str | None = None,
        max_turns: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.allowed_tools = tuple(allowed_tools)
        self.model = model
        self.max_turns = max_turns
        self.env = dict(env or {})

    def __repr__(self) -> str:
        return (
            f"ClaudeCodeSubagent(allowed_tools={list(self.allowed_tools)!r}, model={self.model!r})"
        )

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Run one attempt; never raises."""
        started = time.monotonic()

        def failed(error: str) -> SubagentResult:
            took = int((time.monotonic() - started) * _MS)
            return SubagentResult(ok=False, output="", duration_ms=took, error=error)

        try:
            import claude_agent_sdk as sdk  # noqa: PLC0415 -- the optional extra
        except ImportError:
            return failed("the claude-code subagent needs: pip install 'reflexkit[claude-code]'")
        options = sdk.ClaudeAgentOptions(
            cwd=str(request.workdir),
            permission_mode="dontAsk",
            allowed_tools=list(self.allowed_tools),
            model=self.model,
            max_turns=self.max_turns,
            env=self.env,
        )

        async def attempt() -> tuple[Any, list[str]]:
            result: Any = None
            texts: list[str] = []
            async for message in sdk.query(prompt=request.prompt, options=options):
                if isinstance(message, sdk.ResultMessage):
                    result = message
                elif isinstance(message, sdk.AssistantMessage):
                    texts += [b.text for b in message.content if isinstance(b, sdk.TextBlock)]
            return result, texts

        try:
            result, texts = asyncio.run(asyncio.wait_for(attempt(), request.timeout_s))
        except TimeoutError:
            return failed(f"Claude Code did not finish within {request.timeout_s:g} s")
        except Exception as err:  # noqa: BLE001 -- a CLI failure is a failed attempt, not a crash
            return failed(f"Claude Code failed: {type(err).__name__}: {err}")
        return _to_result(result, texts, int((time.monotonic() - started) * _MS))


def _to_result(result: Any, texts: list[str], took: int) -> SubagentResult:  # noqa: ANN401
    """Turn the SDK's ResultMessage (or its absence) into a SubagentResult."""
    if result is None:
        missing = "Claude Code gave no result"
        return SubagentResult(ok=False, output="\n".join(texts), duration_ms=took, error=missing)
    error: str | None = None
    if result.is_error:
        detail = f": {'; '.join(result.errors)}" if result.errors else ""
        error = f"Claude Code ended with {result.subtype}{detail}"
    return SubagentResult(
        ok=not result.is_error,
        output=result.result or "\n".join(texts),
        duration_ms=took,
        error=error,
        cost_usd=result.total_cost_usd,
        turns=result.num_turns,
    )
