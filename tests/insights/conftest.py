"""Fixtures of the insights tests: a project folder, a run-log writer, a fake Messages API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reflexkit.insights import FindingLog, HistoryRules, PausedSubtasks
from reflexkit.tasks._config import InsightsConfig
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.run_history import HistoryWriter

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """The project's .reflexkit folder."""
    return tmp_path / ".reflexkit"


@pytest.fixture
def writer(state: Path) -> HistoryWriter:
    """Writes real run logs into .reflexkit/runs, starting two hours before NOW."""
    return HistoryWriter(state / "runs", start=NOW.replace(hour=10))


def make_rules(state: Path, **config: object) -> HistoryRules:
    """The live rules over *state*, with NOW as the clock."""
    return HistoryRules(
        runs=state / "runs",
        findings=FindingLog(state / "insights.jsonl"),
        paused=PausedSubtasks(state / "paused.jsonl", clock=lambda: NOW),
        config=InsightsConfig(**config),  # type: ignore[arg-type]
        clock=lambda: NOW,
    )


@pytest.fixture(scope="module")
def shared_api() -> Iterator[FakeMessagesApi]:
    """One fake Messages API per module: building a client per test costs more than the test."""
    with FakeMessagesApi() as api:
        yield api


@pytest.fixture
def fake_messages_api(shared_api: FakeMessagesApi) -> FakeMessagesApi:
    """The shared server with an empty script and no requests (overrides the plugin's)."""
    return shared_api.reset()
