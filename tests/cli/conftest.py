"""Fixtures of the command-line tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexkit.testing.fake_messages_api import FakeMessagesApi


@pytest.fixture
def live(
    project_dir: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> FakeMessagesApi:
    """A project whose Claude is the fake Messages API, with a generous generation budget."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"generationTimeoutMs": 30_000}})
    )
    return fake_messages_api
