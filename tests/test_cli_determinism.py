"""Deterministic, gated reflection through the real CLI (#16).

Record-then-replay, strict fixtures, and byte-identical runs; the LLM path is the real
anthropic SDK against the fake Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.testing.fake_messages_api import FakeMessagesApi

FAILURE = {
    "sessionId": "run-7",
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed in 0.1s\n",
}
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_cart.py::test_total: the total is 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only, not to the shipping.",
    "actionItems": ["Read total() in src/cart.py"],
    "confidence": 0.8,
}


@pytest.fixture
def live(
    project_dir: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> FakeMessagesApi:
    """A project whose Claude is the fake Messages API."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text("{}")
    return fake_messages_api


@pytest.mark.parametrize("attempt", [1, 2])
def test_record_saved_then_replay_gives_the_same_reflection(
    live: FakeMessagesApi, project_dir: Path, attempt: int
) -> None:
    """Recording saves to memory; the replay must not see that record as an earlier attempt."""
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    runner = CliRunner()
    failure = json.dumps({**FAILURE, "attemptNumber": attempt})
    live.reply(REPLY)
    recorded = runner.invoke(
        cli, ["reflect", "--record-fixtures", str(fixtures), "--json"], input=failure
    )
    assert recorded.exit_code == 0, recorded.stderr
    replayed = runner.invoke(cli, ["reflect", "--backend", "fixture", "--json"], input=failure)
    assert replayed.exit_code == 0, replayed.stderr
    first, second = orjson.loads(recorded.stdout), orjson.loads(replayed.stdout)
    assert second["source"] == "fixture", second.get("fallbackReason")
    for field in ("category", "analysis", "suggestion", "actionItems", "confidence"):
        assert second[field] == first[field]
