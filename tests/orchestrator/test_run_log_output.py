"""The run log keeps what a failed attempt printed, redacted and bounded, and its type (#19)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import orjson
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.memory import JsonlMemory
from reflexkit.orchestrator._attempt_log import MAX_LOGGED_CHARS

GITHUB_TOKEN = "ghp_" + "a1B2" * 9
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
# The agent prints a secret, a terminal escape and far more than the log keeps.
AGENT = f"""import sys
print("agent start \\x1b]0;evil title\\x07 token {GITHUB_TOKEN}")
for i in range(5000):
    print(f"agent line {{i}}")
print("agent end")
"""
# The check fails like pytest, printing an AWS key on the way.
CHECK = f"""import sys
print("FAILED tests/test_cart.py::test_total - assert 90 == 100 ({AWS_KEY})")
print("1 failed, 3 passed in 0.12s")
sys.exit(1)
"""


def _project(root: Path, *, max_attempts: int = 1) -> None:
    (root / "agent.py").write_text(AGENT)
    (root / "check.py").write_text(CHECK)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{shlex.quote(sys.executable)} check.py"]},
            }
        )
    )
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "cart",
                "description": "d",
                "subtasks": [{"id": "fix", "description": "d", "maxAttempts": max_attempts}],
            }
        )
    )


def _events(root: Path, kind: str) -> list[dict[str, object]]:
    (log,) = (root / ".reflexkit" / "runs").glob("*.jsonl")
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    return [e for e in events if e["kind"] == kind]


def test_verification_failed_logs_both_outputs_redacted_and_bounded(project_dir: Path) -> None:
    """Agent and check output are in the log: no secret, no escape, head and tail kept."""
    _project(project_dir)
    agent = f"{shlex.quote(sys.executable)} agent.py"
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    assert result.exit_code == 1, result.stderr
    (event,) = _events(project_dir, "verification_failed")
    data = event["data"]
    assert isinstance(data, dict)
    assert data["failureType"] == "test_failure"
    agent_output, check_output = str(data["agentOutput"]), str(data["verificationOutput"])
    assert agent_output.startswith("agent start")
    assert agent_output.rstrip().endswith("agent end")
    assert "characters cut ..." in agent_output
    assert len(agent_output) < MAX_LOGGED_CHARS + 100
    assert "tests/test_cart.py::test_total" in check_output
    raw = json.dumps(data)
    assert GITHUB_TOKEN not in raw
    assert AWS_KEY not in raw
    assert "\\u001b" not in raw
    assert "evil title" not in agent_output or "\x1b" not in agent_output
    assert data["outputRedactions"] == "aws_access_key=1,github_token=1"


def test_reflections_written_by_run_carry_their_redaction_counts(project_dir: Path) -> None:
    """The secret in the check's output is counted on the stored reflection."""
    _project(project_dir)
    agent = f"{shlex.quote(sys.executable)} agent.py"
    CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    (reflection,) = list(JsonlMemory(project_dir / ".reflexkit" / "memory" / "reflections.jsonl"))
    assert reflection.redactions.get("aws_access_key") == 1
    assert AWS_KEY not in reflection.analysis


def test_a_failed_agent_logs_its_output_and_no_verification(project_dir: Path) -> None:
    """When the agent itself fails nothing was verified: verificationOutput is null."""
    _project(project_dir)
    (project_dir / "agent.py").write_text(AGENT + "sys.exit(3)\n")
    agent = f"{shlex.quote(sys.executable)} agent.py"
    CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    (event,) = _events(project_dir, "verification_failed")
    data = event["data"]
    assert isinstance(data, dict)
    assert data["subagentOk"] is False
    assert data["verificationOutput"] is None
    assert str(data["agentOutput"]).startswith("agent start")
    assert data["failureType"] is not None
