"""The Claude Code subagent: the real CLI bundled with claude-agent-sdk, against the fake API.

The fake Messages API streams (server-sent events) because the CLI asks for a stream; the
first reply is a Write tool call, which the CLI really executes in the project folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.exceptions import SetupError
from reflexkit.llm import Effort
from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent, permission_rules
from reflexkit.orchestrator._subagents import SubagentRequest, SubagentResult
from reflexkit.tasks._config import ClaudeCodeConfig, OrchestratorConfig
from reflexkit.testing.fake_messages_api import (
    Exchange,
    FakeMessagesApi,
    message_json,
    sse_events,
    tool_use,
)

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
    agent = ClaudeCodeSubagent(env=cli_env)  # the confined defaults allow writes inside
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


# --- confinement, setup errors and the time limit (#20) -----------------------------------------


def _run(
    agent: ClaudeCodeSubagent, workdir: Path, *, prompt: str = "Do it.", timeout_s: float = 120
) -> SubagentResult:
    return agent.run(
        SubagentRequest(
            subtask_id="s", attempt=1, prompt=prompt, workdir=workdir, timeout_s=timeout_s
        )
    )


def _tool_results(api: FakeMessagesApi) -> dict[str, tuple[bool, str]]:
    """Every tool result the CLI sent back, by tool_use id: (is_error, text)."""
    found: dict[str, tuple[bool, str]] = {}
    for request in api.requests:
        body = request.json if isinstance(request.json, dict) else {}
        for message in body.get("messages") or []:
            if message.get("role") != "user" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    found[block["tool_use_id"]] = (bool(block.get("is_error")), text)
    return found


def _ids(*turns: dict[str, Any]) -> list[str]:
    return [turn["content"][0]["id"] for turn in turns]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder with a file, and a folder beside it that the agent must not touch."""
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "calc.py").write_text("x = 1\n")
    (outside / "secret.txt").write_text("secret\n")
    (project / "escape").symlink_to(outside)
    return project, outside


def test_writes_outside_the_project_are_denied(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], layout: tuple[Path, Path]
) -> None:
    """Write/Edit/Read outside the project (directly, by .., by a symlink) and Bash all fail."""
    project, outside = layout
    inside = tool_use("Write", {"file_path": str(project / "new.py"), "content": "ok\n"})
    escapes = [
        tool_use("Write", {"file_path": str(outside / "a.txt"), "content": "x"}),
        tool_use("Write", {"file_path": str(project / ".." / "outside" / "b.txt"), "content": "x"}),
        tool_use("Write", {"file_path": str(project / "escape" / "c.txt"), "content": "x"}),
        tool_use("Read", {"file_path": str(outside / "secret.txt")}),
        tool_use("Bash", {"command": f"echo x > {outside / 'd.txt'}"}),
        tool_use(
            "Write", {"file_path": str(project / ".reflexkit" / "project.json"), "content": "{}"}
        ),
        tool_use(
            "Write", {"file_path": str(project / ".git" / "hooks" / "pre-commit"), "content": "x"}
        ),
    ]
    fake_messages_api.converse(inside, *escapes, message_json([{"type": "text", "text": "done"}]))
    result = _run(ClaudeCodeSubagent(env=cli_env), project)
    assert result.ok, result.error
    results = _tool_results(fake_messages_api)
    assert results[_ids(inside)[0]][0] is False
    assert (project / "new.py").read_text() == "ok\n"
    for tool_id in _ids(*escapes):
        is_error, text = results[tool_id]
        assert is_error, text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not (project / ".reflexkit").exists()
    assert not (project / ".git").exists()
    agent_turns = [r.json for r in fake_messages_api.requests if (r.json or {}).get("tools")]
    assert all("Bash" not in {t["name"] for t in body["tools"]} for body in agent_turns)


def test_bash_runs_only_the_commands_the_project_lists(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], layout: tuple[Path, Path]
) -> None:
    """Only listed commands run: python3 does; anything else, even chained after it, is denied."""
    project, outside = layout
    listed = tool_use("Bash", {"command": "python3 -c 'print(6 * 7)'"})
    others = [
        tool_use("Bash", {"command": f"touch {outside / 'e.txt'}"}),
        tool_use("Bash", {"command": f"python3 -c 'print(1)' && touch {outside / 'f.txt'}"}),
    ]
    fake_messages_api.converse(listed, *others, message_json([{"type": "text", "text": "done"}]))
    result = _run(ClaudeCodeSubagent(bash_commands=["python3"], env=cli_env), project)
    assert result.ok, result.error
    results = _tool_results(fake_messages_api)
    assert results[_ids(listed)[0]] == (False, results[_ids(listed)[0]][1])
    assert "42" in results[_ids(listed)[0]][1]
    assert all(results[tool_id][0] for tool_id in _ids(*others))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_git_listed_runs_git_but_no_program_and_writes_nothing_outside(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], layout: tuple[Path, Path]
) -> None:
    """With git listed, git status runs; an alias, a config write and --output are refused."""
    project, outside = layout
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    fsmonitor = outside / "fsmonitor.sh"
    fsmonitor.write_text(f"#!/bin/sh\ntouch {outside / 'fsmonitor-ran'}\n")
    fsmonitor.chmod(0o755)
    allowed = tool_use("Bash", {"command": "git status --short"})
    refused = [
        tool_use("Bash", {"command": f"git -c alias.x='!touch {outside / 'alias-ran'}' x"}),
        tool_use("Bash", {"command": f"git config core.fsmonitor {fsmonitor}"}),
        tool_use("Bash", {"command": f"git diff --output={outside / 'diff.txt'}"}),
        tool_use("Bash", {"command": f"git -C {outside} init"}),
    ]
    fake_messages_api.converse(allowed, *refused, message_json([{"type": "text", "text": "ok"}]))
    result = _run(ClaudeCodeSubagent(bash_commands=["git"], env=cli_env), project)
    assert result.ok, result.error
    results = _tool_results(fake_messages_api)
    assert results[_ids(allowed)[0]][0] is False, results[_ids(allowed)[0]]
    for tool_id in _ids(*refused):
        is_error, text = results[tool_id]
        assert is_error, text
    assert sorted(p.name for p in outside.iterdir()) == ["fsmonitor.sh", "secret.txt"]
    config = subprocess.run(
        ["git", "config", "--get", "core.fsmonitor"], cwd=project, capture_output=True, check=False
    )
    assert config.stdout == b""


def test_project_settings_cannot_widen_the_permissions(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], layout: tuple[Path, Path]
) -> None:
    """A project .claude/settings.json allowing everything is not read; other tools are denied."""
    project, outside = layout
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash", "Write", "Edit", "Read"]}})
    )
    escape = tool_use("Write", {"file_path": str(outside / "g.txt"), "content": "x"})
    denied = [
        tool_use("WebFetch", {"url": "https://example.com", "prompt": "read"}),
        tool_use("Agent", {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}),
        tool_use("CronCreate", {"cron": "* * * * *", "prompt": "again"}),
    ]
    fake_messages_api.converse(escape, *denied, message_json([{"type": "text", "text": "done"}]))
    result = _run(ClaudeCodeSubagent(env=cli_env), project)
    assert result.ok, result.error
    results = _tool_results(fake_messages_api)
    assert all(results[tool_id][0] for tool_id in _ids(escape, *denied))
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_hang_is_stopped_at_the_limit_with_everything_it_started(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], layout: tuple[Path, Path]
) -> None:
    """A tool that hangs: the attempt times out near its limit and leaves no process behind."""
    project, _ = layout
    marker = "313.25"  # a sleep no other process runs
    sleeper = tool_use("Bash", {"command": f"sleep {marker}", "run_in_background": True})
    fake_messages_api.converse(sleeper, then_hang=60)
    agent = ClaudeCodeSubagent(bash_commands=["sleep"], env=cli_env)
    outcome: list[SubagentResult] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: outcome.append(_run(agent, project, timeout_s=6)))
    worker.start()
    seen = False
    while worker.is_alive() and not seen:
        seen = bool(_processes_with(marker))
        time.sleep(0.05)
    worker.join()
    took = time.monotonic() - started
    (result,) = outcome
    assert seen  # the agent's sleep really ran during the attempt
    assert not result.ok
    assert result.error is not None
    assert "timed out" in result.error
    assert result.timed_out  # the loop types the failure "timeout"
    assert took < 6 + 2  # SIGTERM at the limit, SIGKILL 0.5 s later (generous on a busy box)
    assert not _processes_with(marker)
    assert not _clis_in(project)


def _clis_in(folder: Path) -> list[int]:
    """Pids of live Claude Code CLIs working in *folder* (their command line doesn't name it)."""
    found = []
    for pid in _processes_with("_bundled/claude"):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cwd").resolve() == folder.resolve():
                found.append(pid)
    return found


def _processes_with(text: str, *, name: str | None = None) -> list[int]:
    """Pids of live processes whose command line holds *text* (and *name*, if given)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z" and (name is None or name in cmdline):
            found.append(int(entry.name))
    return found


def test_a_rejected_key_is_a_setup_error_at_once(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A 401 is not retried for minutes: the first report raises SetupError."""
    for _ in range(20):
        fake_messages_api.error(401, "authentication_error", "invalid x-api-key")
    started = time.monotonic()
    with pytest.raises(SetupError, match="can't use the API"):
        _run(ClaudeCodeSubagent(env=cli_env), tmp_path, timeout_s=120)
    assert time.monotonic() - started < 60  # the CLI alone retries 401s for minutes
    assert len(fake_messages_api.requests) <= 3


def test_no_credential_is_a_setup_error(
    fake_messages_api: FakeMessagesApi,
    cli_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'Not logged in' (no key at all) raises SetupError, and no request reaches the API."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(SetupError, match="Not logged in"):
        _run(ClaudeCodeSubagent(env=cli_env), tmp_path)
    assert not [r for r in fake_messages_api.requests if r.path.startswith("/v1/messages")]


def test_an_unreachable_api_is_a_setup_error_long_before_the_limit(
    cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listens at ANTHROPIC_BASE_URL: SetupError after three failures, not at 120 s."""
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    with pytest.raises(SetupError, match="can't be reached"):
        _run(ClaudeCodeSubagent(env=cli_env), tmp_path, timeout_s=120)
    assert time.monotonic() - started < 60


def test_an_api_that_keeps_failing_is_a_setup_error(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """529 through all of the CLI's retries, before any reply: SetupError, not a lesson."""
    for _ in range(10):
        fake_messages_api.overloaded()
    env = {**cli_env, "CLAUDE_CODE_MAX_RETRIES": "1"}  # the CLI's own retries, shortened
    with pytest.raises(SetupError, match="kept failing"):
        _run(ClaudeCodeSubagent(env=env), tmp_path)


def test_preflight_names_the_missing_extra(tmp_path: Path) -> None:
    """Without claude-agent-sdk, preflight() raises SetupError with the pip command."""
    code = (
        "import sys\n"
        "sys.modules['claude_agent_sdk'] = None  # as if the extra were not installed\n"
        "from reflexkit.exceptions import SetupError\n"
        "from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent\n"
        "try:\n"
        "    ClaudeCodeSubagent().preflight()\n"
        "except SetupError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert "pip install 'reflexkit[claude-code]'" in done.stdout
    ClaudeCodeSubagent().preflight()  # installed here: the CLI starts, no error


def test_preflight_reports_a_cli_that_cannot_start(tmp_path: Path) -> None:
    """A temp folder where the launcher can't run (here: no python at its path) is reported."""
    code = (
        "import sys, tempfile\n"
        "sys.executable = '/nonexistent/python3'  # the launcher's interpreter is missing\n"
        f"tempfile.tempdir = {str(tmp_path)!r}\n"
        "from reflexkit.exceptions import SetupError\n"
        "from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent\n"
        "try:\n"
        "    ClaudeCodeSubagent().preflight()\n"
        "except SetupError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert "Claude Code CLI can't be started" in done.stdout


def test_project_settings_reach_the_cli(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """orchestrator.claudeCode: the model and effort go into the agent's own requests."""
    config = OrchestratorConfig(
        claude_code=ClaudeCodeConfig(
            model="claude-sonnet-5-5", max_turns=3, effort=Effort.LOW, max_budget_usd=5.0
        )
    )
    fake_messages_api.converse(message_json([{"type": "text", "text": "done"}]))
    result = _run(ClaudeCodeSubagent.from_config(config, env=cli_env), tmp_path)
    assert result.ok, result.error
    agent = next(r.json for r in fake_messages_api.requests if (r.json or {}).get("tools"))
    assert agent["model"] == "claude-sonnet-5-5"
    assert agent.get("output_config", {}).get("effort") == "low"


def test_an_attempt_over_its_budget_fails(
    fake_messages_api: FakeMessagesApi, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A reply whose usage costs more than maxBudgetUsd ends the attempt as failed."""
    costly = message_json(
        [{"type": "text", "text": "done"}], input_tokens=5_000_000, output_tokens=100_000
    )
    fake_messages_api.converse(costly)
    result = _run(ClaudeCodeSubagent(max_budget_usd=0.01, env=cli_env), tmp_path)
    assert not result.ok
    assert result.cost_usd is not None
    assert result.cost_usd > 0.01
    assert result.error is not None
    assert "budget" in result.error


def test_a_retry_through_the_cli_carries_the_lesson(
    fake_messages_api: FakeMessagesApi,
    cli_env: dict[str, str],
    project_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Attempt 1 writes the wrong file; attempt 2's request to the model holds the reflection."""
    for name, value in cli_env.items():
        monkeypatch.setenv(name, value)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}, "orchestrator": {"maxAttempts": 2}})
    )
    (project_dir / "task.json").write_text(
        json.dumps(
            {
                "id": "t",
                "subtasks": [
                    {
                        "id": "s",
                        "description": "Write ok into done.txt.",
                        "verify": ["grep -qx ok done.txt"],
                    }
                ],
            }
        )
    )
    done = str(project_dir / "done.txt")
    fake_messages_api.converse(
        tool_use("Write", {"file_path": done, "content": "wrong\n"}),
        message_json([{"type": "text", "text": "Wrote done.txt."}]),
        tool_use("Read", {"file_path": done}),
        tool_use("Write", {"file_path": done, "content": "ok\n"}),
        message_json([{"type": "text", "text": "Fixed done.txt."}]),
        requests=60,
    )
    result = CliRunner().invoke(cli, ["run", "task.json", "--subagent", "claude-code"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "[s] attempt 2: passed" in result.stdout
    prompts = [
        str(r.json["messages"][0]["content"])
        for r in fake_messages_api.requests
        if isinstance(r.json, dict) and r.json.get("tools") and r.json.get("messages")
    ]
    first = [p for p in prompts if "Write ok into done.txt." in p]
    assert any("Learning from Previous Failures" in p for p in first)
    assert not all("Learning from Previous Failures" in p for p in first)


def test_the_default_rules_confine_the_agent_to_the_project() -> None:
    """Read and edit ./**, no edits of .git/.claude/.reflexkit, and no Bash by default."""
    allow, deny = permission_rules()
    assert allow == ["Read(./**)", "Edit(./**)"]
    assert "Bash" in deny
    assert {"Edit(./.git/**)", "Edit(./.claude/**)", "Edit(./.reflexkit/**)"} <= set(deny)
    assert {"Agent", "CronCreate", "WebFetch"} <= set(deny)
    allow, deny = permission_rules(
        bash_commands=["pytest", "python -m pytest"], extra=["WebFetch(domain:docs.python.org)"]
    )
    assert allow[2:] == [
        "Bash(pytest:*)",
        "Bash(python -m pytest:*)",
        "WebFetch(domain:docs.python.org)",
    ]
    assert "Bash" not in deny
    assert "WebFetch" not in deny  # a deny would beat the project's own allow rule


@pytest.mark.parametrize("command", ["", "  ", "rm *", "echo (x)", "a\nb"])
def test_a_bash_command_that_would_break_its_rule_is_rejected(command: str) -> None:
    """Wildcards, parentheses, newlines and blanks are no command prefix."""
    with pytest.raises(ValueError, match="plain command prefix"):
        ClaudeCodeSubagent(bash_commands=[command])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize(
    ("signum", "jobs"),
    [(signal.SIGINT, 2), (signal.SIGTERM, 2), (signal.SIGINT, 1)],
    ids=["SIGINT-two-jobs", "SIGTERM-two-jobs", "SIGINT-one-job"],
)
def test_an_interrupt_stops_claude_code_attempts_at_once(
    fake_messages_api: FakeMessagesApi,
    cli_env: dict[str, str],
    project_dir: Path,
    signum: signal.Signals,
    jobs: int,
) -> None:
    """`reflexkit run --jobs N`: a signal kills every CLI and all they started, now (#20).

    Each agent starts a background `sleep` through Bash, then the API stops answering; the
    attempts have a 300 s limit, so a run that waited for them would still be running.
    """
    ids = ["a", "b"][:jobs]
    marks = [f"{time.time_ns() % 10**6}.{n}1" for n in range(1, jobs + 1)]  # sleeps of no other
    fake_messages_api.converse(
        *(tool_use("Bash", {"command": f"sleep {m}", "run_in_background": True}) for m in marks),
        then_hang=300,
    )
    (project_dir / ".reflexkit").mkdir()
    config = {
        "reflexion": {"backend": "heuristic"},
        "orchestrator": {
            "subagent": "claude-code",
            "jobs": jobs,
            "attemptTimeoutS": 300,
            "claudeCode": {"bashCommands": ["sleep"]},
        },
        "verification": {"commands": ["true"]},
    }
    (project_dir / ".reflexkit" / "project.json").write_text(json.dumps(config))
    task = {
        "id": "t",
        "subtasks": [{"id": i, "description": f"{i}."} for i in ids],
    }
    (project_dir / "task.json").write_text(json.dumps(task))
    env = {**os.environ, **cli_env}
    env.pop("REFLEXKIT_CONFIG", None)
    # Output to a file, not a pipe: a CLI left alive would hold a pipe open for ever.
    with (project_dir / "stderr.txt").open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reflexkit", "run", "task.json"],
            cwd=project_dir,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )
    try:
        deadline = time.monotonic() + 90
        while not all(_processes_with(f"sleep {m}") for m in marks):
            assert proc.poll() is None, (project_dir / "stderr.txt").read_text()
            assert time.monotonic() < deadline, "the agents never started their sleeps"
            time.sleep(0.05)
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_left_behind(project_dir, marks)
    err = (project_dir / "stderr.txt").read_text()
    assert proc.returncode == 128 + signum, err
    assert err.splitlines()[-1] == (f"reflexkit: interrupted by {signum.name}: the run was stopped")
    (log,) = (project_dir / ".reflexkit" / "runs").glob("*.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert events[-1]["kind"] == "run_interrupted"
    assert events[-1]["data"]["running"] == ",".join(f"{i}#1" for i in ids)
    assert {e["subtaskId"] for e in events if e["kind"] == "interrupted"} == set(ids)
    assert not [e for e in events if e["kind"] == "verification_failed"]
    end = time.monotonic() + 5
    while any(_processes_with(f"sleep {m}") for m in marks) and time.monotonic() < end:
        time.sleep(0.05)
    for mark in marks:
        assert not _processes_with(f"sleep {mark}")
    assert not _clis_in(project_dir)


def _kill_left_behind(project: Path, marks: list[str]) -> list[int]:
    """SIGKILL what a failed test would leave: the CLIs of *project* and the marked sleeps."""
    found = _clis_in(project)
    found += [pid for mark in marks for pid in _processes_with(f"sleep {mark}")]
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return found
