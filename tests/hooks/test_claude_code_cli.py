"""The hooks fired by the real Claude Code CLI (bundled with claude-agent-sdk), fake API behind it.

`reflexkit hook install` registers the hooks in the project's .claude/settings.local.json; the CLI
runs a scripted session (a Bash command that fails, a Write, a final message) and fires
SessionStart, PostToolUseFailure, PostToolUse and Stop with its own payloads.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reflexkit.reports._report import report_schema
from reflexkit.testing.fake_messages_api import Exchange, FakeMessagesApi, message_json, sse_events

sdk = pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")


class Conversation:
    """Answers the agent's turns from a script and the CLI's side requests with a text."""

    def __init__(self, *turns: dict[str, Any]) -> None:
        self.turns = list(turns)

    def serve(self, exchange: Exchange, /) -> None:
        """Stream the next turn when the request offers tools, else a short text."""
        asked = exchange.request.json if isinstance(exchange.request.json, dict) else {}
        if asked.get("tools") and self.turns:
            message = self.turns.pop(0)
        else:
            message = message_json([{"type": "text", "text": "ok"}])
        exchange.start_stream(200, {"content-type": "text/event-stream"})
        exchange.write(sse_events(message))


def tool(name: str, tool_id: str, **tool_input: str) -> dict[str, Any]:
    """A turn that calls one tool."""
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    return message_json([block], stop_reason="tool_use")


@pytest.mark.slow
def test_hooks_fire_from_the_claude_code_cli(
    fake_messages_api: FakeMessagesApi, tmp_path: Path
) -> None:
    """A failed command becomes a reflection, the stop writes a report, payloads are real."""
    root = tmp_path / "cart"
    (root / "orders").mkdir(parents=True)
    (root / "orders" / "__init__.py").write_text("")
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
        ["add", "."],
        ["commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "hooks": {"enabled": True},
                "reports": {"enabled": True},
                "reflexion": {"backend": "heuristic"},
            }
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "hook", "install"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    conversation = Conversation(
        tool("Bash", "toolu_01", command="ls /nonexistent-reflexkit-dir", description="List"),
        tool(
            "Write",
            "toolu_02",
            file_path=str(root / "orders" / "export.py"),
            content="def export_csv(orders):\n    return ''\n",
        ),
        message_json([{"type": "text", "text": "I added export_csv in orders/export.py."}]),
    )
    for _ in range(12):
        fake_messages_api.enqueue(conversation)
    home = tmp_path / "home"
    home.mkdir()
    options = sdk.ClaudeAgentOptions(
        cwd=str(root),
        permission_mode="dontAsk",
        allowed_tools=["Bash", "Write", "Read"],
        setting_sources=["project", "local"],  # hook install writes the local settings
        env={
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": fake_messages_api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-real",
        },
    )

    async def session() -> Any:
        result = None
        async for message in sdk.query(prompt="Add CSV export.", options=options):
            if isinstance(message, sdk.ResultMessage):
                result = message
        return result

    result = asyncio.run(asyncio.wait_for(session(), 180))
    assert result is not None
    assert not result.is_error

    log = [
        json.loads(line)
        for line in (root / ".reflexkit" / "hooks" / "hooks.log").read_text().splitlines()
    ]
    events = [entry["event"] for entry in log]
    assert events == ["session-start", "post-tool-use", "stop"]  # the Write is not a Bash call
    [record] = [
        json.loads(line)
        for line in (root / ".reflexkit" / "memory" / "reflections.jsonl").read_text().splitlines()
    ]
    assert "/nonexistent-reflexkit-dir" in record["analysis"]
    assert record["sessionId"] == result.session_id
    [report_file] = (root / ".reflexkit" / "reports").rglob("*.json")
    report = json.loads(report_file.read_text())
    jsonschema.Draft202012Validator(report_schema()).validate(report)
    assert {"path": "orders/export.py", "insertions": 2, "deletions": 0} in report["filesChanged"]
    assert report["verification"]["ending"] == "completed"
    assert report["provenance"]["selfReport"] == "missing"
