"""The Claude Code subagent: the real CLI bundled with claude-agent-sdk, against the fake API.

The fake Messages API streams (server-sent events) because the CLI asks for a stream; the
first reply is a Write tool call, which the CLI really executes in the project folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.orchestrator.claude_code import ClaudeCodeSubagent
from reflexkit.orchestrator.subagents import SubagentRequest
from reflexkit.testing.fake_messages_api import Exchange, FakeMessagesApi, message_json, sse_events

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed")

FIXED = "def add(a, b):\n    return a + b\n"


class Conversation:
    """Answers the agent's own turns from a script, the CLI's side requests with a text.

    Side requests (a session title, ...) come in no fixed order, so each reply is chosen by
    what the request is: the agent's turns offer tools.
    """

    def __init__(self, *turns: dict[str, object]) -> None:
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


@pytest.fixture
def cli_env(
    fake_messages_api: FakeMessagesApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Point the CLI at the fake API, with its configuration in a temporary folder."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}


def test_claude_code_edits_the_project(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A Write tool call is carried out in the workdir; cost and turns come back."""
    work = tmp_path / "project"
    work.mkdir()  # calc.py is new: Claude Code writes an existing file only after reading it
    write = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "Write",
        "input": {"file_path": str(work / "calc.py"), "content": FIXED},
    }
    conversation = Conversation(
        message_json([write], stop_reason="tool_use"),
        message_json([{"type": "text", "text": "I fixed add() in calc.py."}]),
    )
    for _ in range(8):
        fake_messages_api.enqueue(conversation)
    agent = ClaudeCodeSubagent(allowed_tools=["Write", "Read"], env=cli_env)
    result = agent.run(
        SubagentRequest(
            subtask_id="fix-add", attempt=1, prompt="Fix add().", workdir=work, timeout_s=120
        )
    )
    assert result.ok, result.error
    assert (work / "calc.py").read_text() == FIXED
    assert result.turns is not None
    assert result.turns >= 1
    assert result.cost_usd is not None
    assert "fixed" in result.output
    bodies = [r.json for r in fake_messages_api.requests if isinstance(r.json, dict)]
    assert any("Fix add()." in str(b.get("messages")) for b in bodies)
    assert all(b.get("stream") is True for b in bodies if "messages" in b)


def test_an_api_error_is_a_failed_attempt(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """When the API keeps failing, the attempt fails with a reason; nothing raises."""
    for _ in range(30):
        fake_messages_api.error(400, "invalid_request_error", "bad request")
    agent = ClaudeCodeSubagent(env=cli_env, max_turns=1)
    result = agent.run(
        SubagentRequest(subtask_id="s", attempt=1, prompt="hi", workdir=tmp_path, timeout_s=60)
    )
    assert not result.ok
    assert result.error


def test_the_loop_runs_claude_code_from_the_cli(
    fake_messages_api: FakeMessagesApi,
    cli_env: dict[str, str],
    project_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`reflexkit run --subagent claude-code`: Claude Code writes the file the check wants."""
    for name, value in cli_env.items():
        monkeypatch.setenv(name, value)
    (project_dir / "task.json").write_text(
        json.dumps(
            {
                "id": "t",
                "subtasks": [
                    {"id": "s", "description": "Create done.txt.", "verify": ["test -f done.txt"]}
                ],
            }
        )
    )
    write = {
        "type": "tool_use",
        "id": "toolu_02",
        "name": "Write",
        "input": {"file_path": str(project_dir / "done.txt"), "content": "ok\n"},
    }
    conversation = Conversation(
        message_json([write], stop_reason="tool_use"),
        message_json([{"type": "text", "text": "Created done.txt."}]),
    )
    for _ in range(8):
        fake_messages_api.enqueue(conversation)
    result = CliRunner().invoke(cli, ["run", "task.json", "--subagent", "claude-code"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[s] attempt 1: passed" in result.stdout
    (log,) = (project_dir / ".reflexkit" / "runs").glob("*.jsonl")
    passed = [e for e in map(json.loads, log.read_text().splitlines()) if e["kind"] == "passed"]
    assert passed[0]["data"]["subagentTurns"] >= 1
    assert passed[0]["data"]["subagentCostUsd"] is not None
