"""The LLM path through the real anthropic SDK, against the fake Messages API on 127.0.0.1.

Nothing of reflexkit is patched: the SDK makes real HTTP requests, the fake server answers as
the test scripted it.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexkit._serde import dumps
from reflexkit.exceptions import GenerationError
from reflexkit.models import FailureContext, FailureType, ReflectionSource
from reflexkit.reflection._retry import RetryPolicy
from reflexkit.reflection.claude import ClaudeGenerator
from reflexkit.reflection.fallback import FallbackGenerator
from reflexkit.reflection.fixture import FixtureRecorder
from reflexkit.reflection.heuristic import HeuristicGenerator
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection

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


@pytest.fixture
def claude(fake_messages_api: FakeMessagesApi) -> Iterator[ClaudeGenerator]:
    """A generator that talks to the fake API, with a 3 s budget and no back-off waits."""
    generator = ClaudeGenerator(
        api_key="sk-ant-test",
        base_url=fake_messages_api.url,
        timeout_ms=3_000,
        retry=RetryPolicy.no_wait(),
    )
    yield generator
    generator.close()


def _with_fallback(claude: ClaudeGenerator) -> FallbackGenerator:
    return FallbackGenerator(claude, HeuristicGenerator())


def test_a_valid_reply_is_an_llm_reflection(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """The reply's fields, model, token counts and latency land on the reflection."""
    fake_messages_api.reply(REPLY)
    r = claude.generate(FAILURE, previous=[make_reflection("discount")])
    assert r.source is ReflectionSource.LLM
    assert r.analysis == REPLY["analysis"]
    assert r.action_items == tuple(REPLY["actionItems"])
    assert r.confidence == 0.8
    assert r.model
    assert r.input_tokens is not None
    assert r.output_tokens is not None
    assert r.latency_ms is not None
    assert r.fallback_reason is None


def test_the_request_carries_the_failure_and_earlier_lessons(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """The model sees the failing test, the command and the previous reflections."""
    fake_messages_api.reply(REPLY)
    earlier = make_reflection("discount", analysis="Earlier lesson: the tax is applied twice.")
    claude.generate(FAILURE, previous=[earlier])
    (request,) = fake_messages_api.requests
    text = json.dumps(request.json)
    assert "tests/test_cart.py::test_total" in text
    assert "python -m pytest -q" in text
    assert "the tax is applied twice" in text
    assert request.json["model"] == claude.model
    assert "output_config" in request.json  # structured output, not a forced tool


def test_forced_tool_mode(fake_messages_api: FakeMessagesApi) -> None:
    """mode="tool" asks for a tool call and reads its input."""
    with ClaudeGenerator(
        api_key="k", base_url=fake_messages_api.url, timeout_ms=3_000, mode="tool"
    ) as generator:
        fake_messages_api.reply_tool(REPLY)
        r = generator.generate(FAILURE)
    assert r.suggestion == REPLY["suggestion"]
    body = fake_messages_api.requests[0].json
    assert body["tool_choice"]["type"] == "tool"


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda api: api.invalid_json(), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "confidence": 7}), "llm_invalid_output"),
        (lambda api: api.refusal(), "llm_refusal"),
        (lambda api: api.max_tokens(), "llm_invalid_output"),
        (lambda api: [api.server_error(500) for _ in range(4)], "llm_server_error"),
        (lambda api: [api.overloaded() for _ in range(4)], "llm_overloaded"),
        (lambda api: [api.drop() for _ in range(4)], "llm_connection_error"),
    ],
    ids=["invalid-json", "schema-violation", "refusal", "max-tokens", "500", "529", "dropped"],
)
def test_failures_fall_back_with_their_reason(
    claude: ClaudeGenerator,
    fake_messages_api: FakeMessagesApi,
    script: object,
    reason: str,
) -> None:
    """Every way the LLM fails gives the heuristic reflection and says why."""
    script(fake_messages_api)  # type: ignore[operator]
    r = _with_fallback(claude).generate(FAILURE)
    assert r.source is ReflectionSource.HEURISTIC
    assert r.fallback_reason == reason or (reason == "llm_invalid_output" and r.fallback_reason)
    assert "tests/test_cart.py::test_total" in r.analysis


def test_max_tokens_is_an_error_not_a_reflection(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A reply cut off by max_tokens raises a GenerationError, never a half reflection."""
    fake_messages_api.max_tokens()
    with pytest.raises(GenerationError) as caught:
        claude.generate(FAILURE)
    assert caught.value.reason.startswith("llm_")


def test_transient_errors_are_retried(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A 529 and a 500 are retried; the third answer wins."""
    fake_messages_api.overloaded().server_error(500).reply(REPLY)
    r = claude.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert len(fake_messages_api.requests) == 3


def test_retry_after_that_fits_is_honoured(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A 429 whose Retry-After fits the budget is waited out and retried."""
    fake_messages_api.rate_limited(retry_after_s=0.3).reply(REPLY)
    started = time.monotonic()
    r = claude.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert time.monotonic() - started >= 0.25


def test_retry_after_beyond_the_budget_falls_back_at_once(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A 429 asking for 60 s when 3 s are left is not waited for."""
    fake_messages_api.rate_limited(retry_after_s=60)
    started = time.monotonic()
    r = _with_fallback(claude).generate(FAILURE)
    assert time.monotonic() - started < 30  # far below the 60 s asked for
    assert r.fallback_reason == "llm_rate_limited"


def test_a_hang_is_cut_at_the_budget(fake_messages_api: FakeMessagesApi) -> None:
    """A server that never answers costs the budget (here 0.5 s), not the SDK's 10 minutes."""
    fake_messages_api.hang(10)
    with ClaudeGenerator(
        api_key="k", base_url=fake_messages_api.url, timeout_ms=500, retry=RetryPolicy.no_wait()
    ) as generator:
        started = time.monotonic()
        r = _with_fallback(generator).generate(FAILURE)
        elapsed = time.monotonic() - started
    assert r.fallback_reason == "llm_timeout"
    assert elapsed < 5  # generous: the point is it isn't 10 s or more


def test_no_api_key_sends_nothing(
    fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a credential the heuristic answers, with no_api_key, and no request is made."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with ClaudeGenerator(base_url=fake_messages_api.url, timeout_ms=3_000) as generator:
        r = _with_fallback(generator).generate(FAILURE)
    assert r.fallback_reason == "no_api_key"
    assert fake_messages_api.requests == []


def test_no_api_key_is_not_a_warning(
    fake_messages_api: FakeMessagesApi,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Running without a key is the offline mode: logged at info, not warning."""
    caplog.set_level(logging.INFO, logger="reflexkit")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with ClaudeGenerator(base_url=fake_messages_api.url, timeout_ms=3_000) as generator:
        _with_fallback(generator).generate(FAILURE)
    assert "no_api_key" in caplog.text
    assert all(rec.levelname == "INFO" for rec in caplog.records if "no_api_key" in rec.message)


@pytest.mark.parametrize(
    ("script", "attempts"),
    [
        (lambda api: api.invalid_json(), 1),
        (lambda api: api.refusal(), 1),
        (lambda api: api.error(400, "invalid_request_error", "bad"), 1),
        (lambda api: [api.server_error(500) for _ in range(4)], 4),
        (lambda api: [api.overloaded() for _ in range(4)], 4),
        (lambda api: [api.drop() for _ in range(4)], 4),
    ],
    ids=["invalid-json", "refusal", "400", "500", "529", "dropped"],
)
def test_attempts_per_scenario(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi, script: object, attempts: int
) -> None:
    """Permanent errors are tried once; transient ones up to the policy's 4 attempts."""
    script(fake_messages_api)  # type: ignore[operator]
    _with_fallback(claude).generate(FAILURE)
    assert len(fake_messages_api.requests) == attempts


def test_the_api_key_never_leaks(
    fake_messages_api: FakeMessagesApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Not in a reflection, not in a log line at any level, not in a fixture file."""
    key = "sk-ant-api03-" + "Zq7" * 30
    caplog.set_level(logging.DEBUG)
    fixtures = tmp_path / "fixtures.jsonl"
    seen: list[str] = []
    with ClaudeGenerator(
        api_key=key, base_url=fake_messages_api.url, timeout_ms=3_000, retry=RetryPolicy.no_wait()
    ) as generator:
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
            "from reflexkit.reflection.fixture import fixture_key;"
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
