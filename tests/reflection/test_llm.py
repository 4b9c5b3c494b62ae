"""Promises of the LLM path across its parts: the API key never leaks, fixture keys travel.

The scenarios of each part are in test_claude.py, test_fallback.py and test_fixture.py; these
tests cross them, through the real anthropic SDK against the fake Messages API.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._serde import dumps
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.models import FailureContext, FailureType
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.reflection._fallback import FallbackGenerator
from reflexkit.reflection._fixture import FixtureRecorder
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.testing.fake_messages_api import FakeMessagesApi

FAILURE = FailureContext(
    task_id="checkout",
    subtask_id="discount",
    attempt_number=2,
    failure_type=FailureType.TEST_FAILURE,
    command="python -m pytest -q",
    exit_code=1,
    error_output=(
        "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed, 3 passed in 0.12s\n"
    ),
)
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_cart.py::test_total: total() returns 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py", "Run pytest tests/test_cart.py::test_total"],
    "confidence": 0.8,
}


def _with_fallback(claude: ClaudeGenerator) -> FallbackGenerator:
    return FallbackGenerator(claude, HeuristicGenerator())


def test_the_api_key_never_leaks(
    fake_messages_api: FakeMessagesApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Not in a reflection, not in a log line at any level, not in a fixture file."""
    key = "sk-ant-api03-" + "Zq7" * 30
    caplog.set_level(logging.DEBUG)
    fixtures = tmp_path / "fixtures.jsonl"
    seen: list[str] = []
    client = Claude(api_key=key, base_url=fake_messages_api.url, retry=RetryPolicy.no_wait())
    with ClaudeGenerator(client, timeout_ms=3_000) as generator:
        recorder = FixtureRecorder(generator, fixtures)
        fake_messages_api.reply(REPLY)
        seen.append(converter_json(recorder.generate(FAILURE)))
        for script, times in (("invalid_json", 1), ("refusal", 1), ("overloaded", 4)):
            for _ in range(times):
                getattr(fake_messages_api, script)()
            seen.append(converter_json(_with_fallback(recorder).generate(FAILURE)))
    sent = fake_messages_api.requests[0].headers.values()
    assert any(key in value for value in sent)  # it really was sent
    assert all(key not in text for text in seen)
    assert key not in caplog.text
    assert key not in fixtures.read_text()


def converter_json(reflection: object) -> str:
    """The stored form of a reflection."""
    return dumps(reflection).decode()


def test_the_fixture_key_is_stable_across_runs_and_machines(tmp_path: Path) -> None:
    """Same failure, another process and another checkout folder: the same key."""
    here = tmp_path / "laptop" / "project"
    there = tmp_path / "ci" / "build" / "checkout"
    output = "FAILED {root}/tests/test_cart.py::test_total - assert 90 == 100\n"

    def key_in(root: Path) -> str:
        code = (
            "import sys; from reflexkit.models import FailureContext;"
            "from reflexkit.reflection._fixture import fixture_key;"
            "f = FailureContext(task_id='t', subtask_id='s', attempt_number=1,"
            " command='pytest -q', exit_code=1, error_output=sys.argv[1]);"
            "print(fixture_key(f, root=sys.argv[2]))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, output.format(root=root), str(root)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(len(str(root)))},
        )
        return done.stdout.strip()

    first, second = key_in(here), key_in(there)
    assert first == second
    assert len(first) == 12
    assert int(first, 16) >= 0
