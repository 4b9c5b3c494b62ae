"""ClaudeGenerator through the real anthropic SDK, against the fake Messages API on 127.0.0.1.

Nothing of reflexkit is patched: the SDK builds and sends real HTTP requests, the fake server
answers as each test scripted it, and the generator maps what comes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from collections import abc
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

import anthropic  # noqa: F401 -- loaded here: the budgets below time the API, not the import
import attrs
import pytest
from typing_extensions import is_typeddict

from reflexkit.exceptions import GenerationError
from reflexkit.llm import (
    DEFAULT_MODEL,
    REASONS,
    Claude,
    RequestOptions,
    RetryPolicy,
    TransientError,
)
from reflexkit.models import FailureContext, FailureType, ReflectionCategory, ReflectionSource
from reflexkit.readers._reports import read_report_files
from reflexkit.redaction import Redactor
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.reflection._prompts import MAX_REPORT_CHARS, TOOL_NAME
from reflexkit.testing.fake_messages_api import FakeMessagesApi, message_json
from reflexkit.testing.memory_contract import make_reflection

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
FAILURE = FailureContext(
    task_id="checkout",
    subtask_id="discount",
    attempt_number=2,
    session_id="sess-9",
    failure_type=FailureType.TEST_FAILURE,
    command="python -m pytest -q",
    exit_code=1,
    error_output=(
        "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed, 3 passed in 0.12s\n"
    ),
)
REPLY = {
    "category": "root_cause",
    "analysis": "`tests/test_cart.py::test_total`: total() returns 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py", "Run pytest tests/test_cart.py::test_total"],
    "confidence": 0.8,
}
KEY = "sk-ant-test-key"


def make_claude(api: FakeMessagesApi, **options: Any) -> ClaudeGenerator:
    """A generator talking to *api*: a 3 s budget and no back-off unless the test says so.

    ``api_key`` and ``retry`` go to the client, the request options to ``RequestOptions``;
    ``claude`` shares another generator's client instead.
    """
    claude = options.pop("claude", None) or Claude(
        api_key=options.pop("api_key", KEY),
        base_url=api.url,
        retry=options.pop("retry", RetryPolicy.no_wait()),
    )
    request = {k: options.pop(k) for k in list(options) if k in REQUEST_FIELDS}
    options.setdefault("timeout_ms", 3_000)
    options.setdefault("clock", lambda: T0)
    return ClaudeGenerator(claude, options=RequestOptions(**request), **options)


REQUEST_FIELDS = {"model", "mode", "max_tokens", "thinking", "effort"}


@pytest.fixture(scope="module")
def claude(shared_api: FakeMessagesApi) -> Iterator[ClaudeGenerator]:
    """A generator on the shared server (3 s budget, no back-off), closed after the module."""
    with make_claude(shared_api) as generator:
        yield generator


def reason_of(generator: ClaudeGenerator, failure: FailureContext = FAILURE) -> str:
    """Generate, expecting a GenerationError; return its reason code."""
    with pytest.raises(GenerationError) as caught:
        generator.generate(failure)
    return caught.value.reason


# --- a good reply -------------------------------------------------------------------------------


def test_a_valid_reply_is_an_llm_reflection_with_usage(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """The reply's fields, the answering model, the token counts and the latency are recorded."""
    fake_messages_api.reply(
        REPLY, model="claude-haiku-5-5-20261101", input_tokens=900, output_tokens=120
    )
    r = claude.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert r.category is ReflectionCategory.ROOT_CAUSE
    assert r.failure_type is FailureType.TEST_FAILURE
    assert r.analysis == REPLY["analysis"]
    assert r.suggestion == REPLY["suggestion"]
    assert list(r.action_items) == REPLY["actionItems"]
    assert r.confidence == 0.8
    assert (r.task_id, r.subtask_id, r.attempt_number, r.session_id) == (
        "checkout",
        "discount",
        2,
        "sess-9",
    )
    assert r.model == "claude-haiku-5-5-20261101"  # the model that answered, from the reply
    assert (r.input_tokens, r.output_tokens) == (900, 120)
    assert r.latency_ms is not None
    assert 0 <= r.latency_ms < 10_000
    assert r.fallback_reason is None
    assert r.created_at == T0


def test_complete_returns_the_reply_and_the_key(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """complete() is what the fixture recorder uses: the validated reply and the prompt key."""
    fake_messages_api.server_error(503).reply(REPLY)
    done = claude.complete(FAILURE)
    assert len(fake_messages_api.requests) == 2
    assert done.key == claude.prompt(FAILURE).key
    assert done.reply.confidence == 0.8
    assert done.reflection.source is ReflectionSource.LLM


def test_the_default_model_is_haiku(fake_messages_api: FakeMessagesApi) -> None:
    """Unless configured, the request names claude-haiku-5-5."""
    assert DEFAULT_MODEL == "claude-haiku-5-5"
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api) as generator:
        assert generator.options.model == "claude-haiku-5-5"
        generator.generate(FAILURE)
    assert fake_messages_api.requests[0].json["model"] == "claude-haiku-5-5"


# --- the request --------------------------------------------------------------------------------


def test_the_request_uses_structured_output_by_default(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """output_config carries the reply's JSON schema; no tool is forced; the key is sent."""
    fake_messages_api.reply(REPLY)
    claude.generate(FAILURE)
    (request,) = fake_messages_api.requests
    assert request.method == "POST"
    assert request.path.startswith("/v1/messages")
    assert any(KEY in value for value in request.headers.values())  # x-api-key or bearer
    body = request.json
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["schema"]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {
        "category",
        "analysis",
        "suggestion",
        "actionItems",
        "confidence",
    }
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["max_tokens"] == claude.options.max_tokens
    assert "verbatim" in body["system"] or "exactly as the output prints them" in body["system"]


def _problems(value: Any, tp: Any, path: str = "$") -> list[str]:  # noqa: C901, PLR0911
    """Where *value* does not fit the SDK's parameter type *tp* (TypedDicts, Literals ...)."""
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin in {Required, NotRequired}:
        return _problems(value, get_args(tp)[0], path)
    if origin in {Union, types.UnionType}:
        options = [_problems(value, arg, path) for arg in get_args(tp)]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{path}: {value!r} not in {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        hints = get_type_hints(tp, include_extras=True)
        found = [f"{path}.{k}: no such parameter in {tp.__name__}" for k in value if k not in hints]
        found += [f"{path}.{k}: required" for k in tp.__required_keys__ if k not in value]
        for k, v in value.items():
            found += _problems(v, hints[k], f"{path}.{k}") if k in hints else []
        return found
    if origin in {list, abc.Iterable, abc.Sequence}:
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        item = get_args(tp)[0]
        return [p for i, v in enumerate(value) for p in _problems(v, item, f"{path}[{i}]")]
    if origin in {dict, abc.Mapping} or tp is dict:
        return [] if isinstance(value, dict) else [f"{path}: expected an object"]
    if isinstance(tp, type) and not isinstance(value, tp):
        return [f"{path}: expected {tp.__name__}"]
    return []


def test_the_checker_catches_parameters_the_sdk_does_not_have() -> None:
    """The conformance check below would see a misspelt parameter or a bad effort."""
    from anthropic.types.message_create_params import (  # noqa: PLC0415
        MessageCreateParamsNonStreaming as Params,
    )

    base = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}
    assert _problems(base, Params) == []
    assert _problems({**base, "thinkng": {"type": "adaptive"}}, Params)
    assert _problems({**base, "thinking": {"type": "adaptive", "budget_tokens": 9}}, Params)
    assert _problems({**base, "output_config": {"effort": "minimal"}}, Params)


@pytest.mark.parametrize("model", [DEFAULT_MODEL, "claude-sonnet-5-5", "claude-haiku-4-5"])
@pytest.mark.parametrize("mode", ["structured", "tool"])
@pytest.mark.parametrize("thinking", ["auto", "adaptive", "disabled"])
def test_every_parameter_sent_exists_in_the_sdk(
    fake_messages_api: FakeMessagesApi, model: str, mode: str, thinking: str
) -> None:
    """The request that reaches the server fits the SDK's own MessageCreateParams types."""
    from anthropic.types.message_create_params import (  # noqa: PLC0415
        MessageCreateParamsNonStreaming as Params,
    )

    if mode == "tool":
        fake_messages_api.reply_tool(REPLY)
    else:
        fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, model=model, mode=mode, thinking=thinking) as generator:
        generator.generate(FAILURE)
    body = fake_messages_api.requests[0].json
    assert _problems(body, Params) == []


@pytest.mark.parametrize(
    ("model", "mode", "thinking", "effort"),
    [
        (DEFAULT_MODEL, "structured", {"type": "adaptive"}, "low"),
        ("claude-opus-5-5", "structured", {"type": "adaptive"}, "low"),
        (DEFAULT_MODEL, "tool", {"type": "disabled"}, "low"),
        ("claude-haiku-4-5", "structured", None, None),  # no adaptive thinking, no effort
        ("claude-haiku-4-5-20251001", "tool", None, None),
        ("claude-opus-4-5-20251101", "structured", None, None),
    ],
)
def test_auto_thinking_suits_the_model_and_the_mode(
    fake_messages_api: FakeMessagesApi,
    model: str,
    mode: str,
    thinking: dict[str, str] | None,
    effort: str | None,
) -> None:
    """A short structured reply: adaptive at low effort, off for a forced tool, none on 4.5."""
    fake_messages_api.reply_tool(REPLY) if mode == "tool" else fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, model=model, mode=mode) as generator:
        generator.generate(FAILURE)
    body = fake_messages_api.requests[0].json
    assert body.get("thinking") == thinking
    assert body.get("output_config", {}).get("effort") == effort
    assert body["max_tokens"] == 4_096  # room for thinking, which counts toward max_tokens


def test_effort_and_max_tokens_are_configurable(fake_messages_api: FakeMessagesApi) -> None:
    """effort=None sends no effort; max_tokens is what was asked."""
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, effort=None, max_tokens=2_000) as generator:
        generator.generate(FAILURE)
    body = fake_messages_api.requests[0].json
    assert "effort" not in body["output_config"]
    assert body["max_tokens"] == 2_000


def test_a_thinking_block_before_the_answer_is_skipped(fake_messages_api: FakeMessagesApi) -> None:
    """Adaptive thinking puts a thinking block first; the answer is the text block after it."""
    thought = {"type": "thinking", "thinking": "The total is off by 10.", "signature": "s"}
    text = {"type": "text", "text": json.dumps(REPLY)}
    fake_messages_api.enqueue(json=message_json([thought, text]))
    with make_claude(fake_messages_api) as generator:
        assert generator.generate(FAILURE).analysis == REPLY["analysis"]


def test_the_request_carries_the_redacted_failure_and_previous_reflections(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """The model sees the redacted output, the command and the earlier lessons, not a secret."""
    secret = "sk-ant-api03-" + "Qx9" * 30
    leaky = FailureContext(
        task_id="checkout",
        subtask_id="discount",
        attempt_number=3,
        failure_type=FailureType.TEST_FAILURE,
        command="python -m pytest -q",
        exit_code=1,
        error_output=(
            f"ANTHROPIC_API_KEY={secret}\n"
            "FAILED tests/test_cart.py::test_total - assert 90 == 100\n"
        ),
    )
    redacted, counts = Redactor(environ={}).redact_failure(leaky)
    assert counts  # the rule table found the key
    earlier = [
        make_reflection("discount", attempt=1, analysis="Lesson one: the tax is applied twice."),
        make_reflection("discount", attempt=2, analysis="Lesson two: rounding drops a cent."),
    ]
    fake_messages_api.reply(REPLY)
    claude.generate(redacted, previous=earlier)
    (request,) = fake_messages_api.requests
    text = json.dumps(request.json)
    assert secret not in request.body.decode()
    assert "REDACTED" in text
    assert "tests/test_cart.py::test_total" in text
    assert "assert 90 == 100" in text
    assert "python -m pytest -q" in text
    assert "Lesson one: the tax is applied twice." in text
    assert "Lesson two: rounding drops a cent." in text
    assert "Do not repeat them" in text


def test_an_unknown_failure_type_is_asked_of_the_model(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """When nothing classifies the failure, the schema asks for failureType and it is used."""
    vague = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, error_output="something odd happened"
    )
    fake_messages_api.reply({**REPLY, "failureType": "runtime_error"})
    r = claude.generate(vague)
    schema = fake_messages_api.requests[0].json["output_config"]["format"]["schema"]
    assert "failureType" in schema["required"]
    assert r.failure_type is FailureType.RUNTIME_ERROR


# --- forced-tool mode ---------------------------------------------------------------------------


def test_forced_tool_mode_sends_a_tool_and_reads_its_input(
    fake_messages_api: FakeMessagesApi,
) -> None:
    """mode="tool" forces record_reflection and reads the tool_use block's input."""
    fake_messages_api.reply_tool(REPLY)
    with make_claude(fake_messages_api, mode="tool") as generator:
        r = generator.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert r.suggestion == REPLY["suggestion"]
    body = fake_messages_api.requests[0].json
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    (tool,) = body["tools"]
    assert tool["name"] == TOOL_NAME
    assert tool["input_schema"]["properties"]["category"]["type"] == "string"
    assert "format" not in body["output_config"]


def test_forced_tool_mode_without_the_tool_call_is_invalid_output(
    fake_messages_api: FakeMessagesApi,
) -> None:
    """A tool-mode reply with only text (or another tool) is not a reflection."""
    fake_messages_api.reply(REPLY).reply_tool(REPLY, name="other_tool")
    with make_claude(fake_messages_api, mode="tool") as generator:
        assert reason_of(generator) == "llm_invalid_output"
        assert reason_of(generator) == "llm_invalid_output"


def test_forced_tool_mode_validates_the_tool_input(fake_messages_api: FakeMessagesApi) -> None:
    """The tool input goes through the same converter: a bad category is rejected."""
    fake_messages_api.reply_tool({**REPLY, "category": "bad_luck"})
    with make_claude(fake_messages_api, mode="tool") as generator:
        assert reason_of(generator) == "llm_invalid_output"


# --- replies that are errors, not reflections --------------------------------------------------


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda api: api.invalid_json(), "llm_invalid_output"),
        (lambda api: api.reply_text("   "), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "confidence": 7}), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "category": "bad_luck"}), "llm_invalid_output"),
        (lambda api: api.reply({"category": "root_cause"}), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "mood": "sad"}), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "analysis": " "}), "llm_invalid_output"),
        (lambda api: api.refusal(), "llm_refusal"),
        (lambda api: api.max_tokens(), "llm_max_tokens"),
        (lambda api: api.reply(REPLY, stop_reason="max_tokens"), "llm_max_tokens"),
        (lambda api: api.error(400, "invalid_request_error", "bad"), "llm_bad_request"),
        (lambda api: api.error(401, "authentication_error", "bad key"), "llm_auth_failed"),
        (lambda api: api.error(403, "permission_error", "no"), "llm_auth_failed"),
    ],
    ids=[
        "not-json",
        "blank",
        "confidence-7",
        "unknown-category",
        "missing-fields",
        "extra-key",
        "blank-analysis",
        "refusal",
        "max-tokens-cut",
        "max-tokens-whole",
        "400",
        "401",
        "403",
    ],
)
def test_permanent_errors_raise_once_with_their_reason(
    claude: ClaudeGenerator,
    fake_messages_api: FakeMessagesApi,
    script: Callable[[FakeMessagesApi], object],
    reason: str,
) -> None:
    """A refusal, a cut-off reply, bad JSON, a schema violation or a 4xx: one request, an error."""
    script(fake_messages_api)
    assert reason_of(claude) == reason
    assert len(fake_messages_api.requests) == 1
    assert reason in REASONS


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda api: api.rate_limited(), "llm_rate_limited"),
        (lambda api: api.server_error(500), "llm_server_error"),
        (lambda api: api.server_error(502), "llm_server_error"),
        (lambda api: api.error(409, "conflict", "conflict"), "llm_server_error"),
        (lambda api: api.error(408, "timeout_error", "slow"), "llm_timeout"),
        (lambda api: api.overloaded(), "llm_overloaded"),
        (lambda api: api.drop(), "llm_connection_error"),
    ],
    ids=["429", "500", "502", "409", "408", "529", "dropped"],
)
def test_transient_errors_are_retried_then_raise_with_their_reason(
    fake_messages_api: FakeMessagesApi,
    script: Callable[[FakeMessagesApi], object],
    reason: str,
) -> None:
    """Transient failures are retried up to the policy's attempts; the last one's reason wins."""
    for _ in range(3):
        script(fake_messages_api)
    with (
        make_claude(fake_messages_api, retry=RetryPolicy.no_wait(attempts=3)) as generator,
        pytest.raises(TransientError) as caught,
    ):
        generator.generate(FAILURE)
    assert caught.value.reason == reason
    assert "gave up after 3 attempts" in str(caught.value)
    assert len(fake_messages_api.requests) == 3
    assert fake_messages_api.pending == 0


def test_a_transient_error_then_a_reply_succeeds(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A 529, a 500 and a dropped connection are retried; the fourth answer wins."""
    fake_messages_api.overloaded().server_error(500).drop().reply(REPLY)
    r = claude.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert len(fake_messages_api.requests) == 4


def test_the_sdk_does_not_retry_on_its_own(fake_messages_api: FakeMessagesApi) -> None:
    """The client is built with max_retries=0: one attempt allowed means one request sent."""
    fake_messages_api.server_error(500).server_error(500).reply(REPLY)
    with make_claude(fake_messages_api, retry=RetryPolicy.no_wait(attempts=1)) as generator:
        assert reason_of(generator) == "llm_server_error"
    assert len(fake_messages_api.requests) == 1
    assert "x-stainless-retry-count" not in fake_messages_api.requests[0].headers or (
        fake_messages_api.requests[0].headers["x-stainless-retry-count"] == "0"
    )


# --- the one time budget ------------------------------------------------------------------------


def test_retry_after_that_fits_is_waited_out(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """A 429 with Retry-After: 0.3 inside a 3 s budget: wait, retry, succeed."""
    fake_messages_api.rate_limited(retry_after_s=0.3).reply(REPLY)
    started = time.monotonic()
    r = claude.generate(FAILURE)
    elapsed = time.monotonic() - started
    assert r.source is ReflectionSource.LLM
    assert len(fake_messages_api.requests) == 2
    assert elapsed >= 0.25  # it did wait (no back-off in this policy: only Retry-After)
    # Each attempt's HTTP timeout is what was left of the one 3 s budget (the SDK reports it).
    first, second = (float(r.headers["x-stainless-timeout"]) for r in fake_messages_api.requests)
    assert first <= 3.0
    assert second <= first - 0.25


def test_retry_after_ms_is_read_too(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """retry-after-ms, the API's precise header, is preferred to retry-after."""
    fake_messages_api.rate_limited(retry_after_s=60, retry_after_ms=200).reply(REPLY)
    started = time.monotonic()
    claude.generate(FAILURE)
    assert 0.15 <= time.monotonic() - started < 30
    assert len(fake_messages_api.requests) == 2


def test_retry_after_beyond_the_budget_stops_at_once(
    fake_messages_api: FakeMessagesApi,
) -> None:
    """A 429 asking for 4 s inside a 2 s budget: no wait, no second request."""
    fake_messages_api.rate_limited(retry_after_s=4).reply(REPLY)
    with make_claude(fake_messages_api, timeout_ms=2_000, retry=RetryPolicy()) as generator:
        started = time.monotonic()
        with pytest.raises(GenerationError) as caught:
            generator.generate(FAILURE)
        elapsed = time.monotonic() - started
    assert caught.value.reason == "llm_rate_limited"
    assert "asked to wait" in str(caught.value)
    assert elapsed < 2  # well below the 4 s asked for: generous, not a timing test
    assert len(fake_messages_api.requests) == 1


def _warmed(api: FakeMessagesApi, **options: Any) -> ClaudeGenerator:
    """A generator whose client is built: loading the SDK, a cost of the process, is paid here.

    The warm-up answers one queued reply under a budget no loaded machine exceeds, so the
    budget under test times the API alone.
    """
    warm = make_claude(api, timeout_ms=60_000, retry=RetryPolicy())
    warm.generate(FAILURE)
    return make_claude(api, claude=warm.claude, **options)


def test_a_hang_is_cut_at_the_budget(fake_messages_api: FakeMessagesApi) -> None:
    """A server that never answers costs the 400 ms budget, not the SDK's ten minutes."""
    fake_messages_api.reply(REPLY).hang(10).hang(10)
    with _warmed(fake_messages_api, timeout_ms=400) as generator:
        started = time.monotonic()
        with pytest.raises(GenerationError) as caught:
            generator.generate(FAILURE)
        elapsed = time.monotonic() - started
    assert caught.value.reason == "llm_timeout"
    assert elapsed < 3  # generous: the point is that it is not 10 s


def test_a_reply_that_trickles_in_is_cut_at_the_budget(fake_messages_api: FakeMessagesApi) -> None:
    """A valid reply sent in 40 slow pieces over 4 s stops at the 1 s budget (+0.25 s).

    What the same generator takes for a prompt reply, measured just before, is added to the
    bound: on a loaded machine every request is slower, and that is not the deadline's fault.
    """
    fake_messages_api.reply(REPLY).trickle(REPLY, seconds=4, pieces=40)
    with make_claude(fake_messages_api, timeout_ms=1_000, retry=RetryPolicy()) as generator:
        started = time.monotonic()
        generator.generate(FAILURE)
        baseline = time.monotonic() - started
        started = time.monotonic()
        with pytest.raises(GenerationError) as caught:
            generator.generate(FAILURE)
        elapsed = time.monotonic() - started
    assert caught.value.reason == "llm_timeout"
    assert elapsed < 1.0 + 0.25 + baseline  # one deadline, not one timeout per read (was 4 s)
    assert len(fake_messages_api.requests) == 2


def test_a_reply_that_trickles_in_within_the_budget_is_used(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """Slow pieces that all arrive inside the budget make a reflection as usual."""
    fake_messages_api.trickle(REPLY, seconds=0.4, pieces=8)
    assert claude.generate(FAILURE).analysis == REPLY["analysis"]


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "nan"},
        {"retry-after": "NaN", "retry-after-ms": "nan"},
        {"retry-after": "inf"},
        {"retry-after-ms": "-inf"},
        {"retry-after": "1e999"},
        {"retry-after": "-5"},
        {"retry-after": "soon"},
        {"retry-after": "Wed, 99 Foo 2026 99:99:99 GMT"},
        {"retry-after": "Mon, 23 Nov 2026 12:00:00"},
        {"retry-after": ""},
    ],
)
def test_a_garbage_retry_after_does_not_escape(
    fake_messages_api: FakeMessagesApi, headers: dict[str, str]
) -> None:
    """Retry-After that is NaN, infinite, negative or not a date is ignored: retry, succeed."""
    fake_messages_api.error(429, "rate_limit_error", "slow down", headers=headers).reply(REPLY)
    with make_claude(fake_messages_api, timeout_ms=2_000) as generator:
        assert generator.generate(FAILURE).source is ReflectionSource.LLM
    assert len(fake_messages_api.requests) == 2


def test_back_off_waits_are_cut_to_the_budget(fake_messages_api: FakeMessagesApi) -> None:
    """Long back-off waits never carry the generation past its budget."""
    for _ in range(4):
        fake_messages_api.server_error(500)
    # The budget leaves room for a first answer on a loaded machine; the back-off dwarfs it.
    slow = RetryPolicy(attempts=4, backoff_base_s=60.0, backoff_max_s=60.0, jitter=0.0)
    with make_claude(fake_messages_api, timeout_ms=3_000, retry=slow) as generator:
        started = time.monotonic()
        assert reason_of(generator) == "llm_server_error"
        elapsed = time.monotonic() - started
    assert elapsed < 60  # not 180 s of back-off


# --- credentials --------------------------------------------------------------------------------


def test_no_api_key_raises_and_sends_nothing(
    fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no credential anywhere, no_api_key, and the server never sees a request."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, api_key=None) as generator:
        assert reason_of(generator) == "no_api_key"
    assert fake_messages_api.requests == []


def test_the_key_comes_from_the_environment(
    fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """api_key=None lets the SDK read ANTHROPIC_API_KEY."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, api_key=None) as generator:
        generator.generate(FAILURE)
    assert any("sk-ant-from-env" in v for v in fake_messages_api.requests[0].headers.values())


def test_the_key_stays_out_of_repr_and_errors(fake_messages_api: FakeMessagesApi) -> None:
    """Neither the repr nor an error message shows the key."""
    fake_messages_api.error(401, "authentication_error", "invalid x-api-key")
    with make_claude(fake_messages_api) as generator:
        assert KEY not in repr(generator)
        with pytest.raises(GenerationError) as caught:
            generator.generate(FAILURE)
    assert KEY not in str(caught.value)


# --- construction -------------------------------------------------------------------------------


def test_bad_options_are_rejected() -> None:
    """A zero budget or an unknown mode is a ValueError at construction."""
    with pytest.raises(ValueError, match="must be"):
        ClaudeGenerator(Claude(api_key="k"), timeout_ms=0)
    with pytest.raises(ValueError, match="must be"):
        RequestOptions(mode="xml")


def test_close_is_idempotent(fake_messages_api: FakeMessagesApi) -> None:
    """close() twice, or before any request, is harmless; a closed generator reconnects."""
    generator = make_claude(fake_messages_api)
    generator.close()
    fake_messages_api.reply(REPLY)
    generator.generate(FAILURE)
    generator.close()
    generator.close()


def test_the_sdk_is_not_imported_without_a_credential(tmp_path: Path) -> None:
    """Importing the generators, or building one with no credential to find, skips the SDK."""
    code = (
        "import sys; from reflexkit.reflection._claude import ClaudeGenerator;"
        "from reflexkit.reflection._fallback import FallbackGenerator;"
        "from reflexkit.reflection._fixture import FixtureGenerator;"
        "ClaudeGenerator();"
        "print('anthropic' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["HOME"] = str(tmp_path)  # no ~/.config/anthropic profile
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    assert done.stdout.strip() == "False"


JUNIT_REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="billing" tests="3" failures="1" errors="1">
    <testcase name="testTotal" classname="billing.InvoiceTest"
      file="tests/InvoiceTest.php" line="12"/>
    <testcase name="testRounding" classname="billing.InvoiceTest"
      file="tests/InvoiceTest.php" line="31">
      <failure message="Failed asserting that 10.0 matches expected 10.5."
        >tests/InvoiceTest.php:34</failure>
    </testcase>
    <testcase name="testVat" classname="billing.TaxTest">
      <error message="Undefined array key &quot;CH&quot; (token AKIAZ7QWERTY12345678)"/>
    </testcase>
  </testsuite>
</testsuites>
"""


LONG = "because the value " * 8


def with_reports(tmp_path: Path, *files: tuple[str, str]) -> FailureContext:
    """FAILURE as a check that printed only ``FAILURES!`` and wrote *files*."""
    for name, text in files:
        (tmp_path / name).write_text(text, encoding="utf-8")
    return FailureContext(
        task_id="billing",
        subtask_id="rounding",
        attempt_number=1,
        failure_type=FailureType.TEST_FAILURE,
        command="vendor/bin/phpunit --log-junit junit.xml",
        exit_code=1,
        error_output="FAILURES!\nTests: 3, Assertions: 3, Failures: 1, Errors: 1.\n",
        reports=tuple(str(tmp_path / name) for name, _ in files),
    )


def test_the_request_carries_the_facts_of_the_report_files(
    tmp_path: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """A report the check wrote reaches the model: each failing test, its message and place."""
    failure = with_reports(tmp_path, ("junit.xml", JUNIT_REPORT))
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, root=tmp_path) as generator:
        generator.generate(failure)
    (request,) = fake_messages_api.requests
    content = request.json["messages"][0]["content"]
    facts, output = content.index("Report files the check wrote"), content.index("Output:")
    assert output < facts < content.index("</failure>")
    report = content[facts:]
    assert "FAIL: testRounding (billing.InvoiceTest)" in report
    assert "Failed asserting that 10.0 matches expected 10.5." in report
    assert "at tests/InvoiceTest.php:31" in report
    assert "ERROR: testVat (billing.TaxTest)" in report
    assert "3 tests, 2 failures" in report
    assert "testTotal" not in report  # a passing test is no fact
    assert "report junit.xml:" in report  # the project root is cut from the path
    assert str(tmp_path) not in request.body.decode()
    assert "AKIAZ7QWERTY12345678" not in request.body.decode()  # through the outbound gate


def test_report_facts_in_the_request_are_bounded(
    tmp_path: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """A report of thousands of failing tests adds a bounded section, head and tail kept."""
    cases = "".join(
        f'<testcase name="test_{n}" classname="big.Suite"><failure message="bad value {n} {LONG}"/>'
        "</testcase>"
        for n in range(5_000)
    )
    failure = with_reports(tmp_path, ("big.xml", f"<testsuite>{cases}</testsuite>"))
    assert len(read_report_files(failure.reports, root=tmp_path)) > MAX_REPORT_CHARS
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, root=tmp_path) as generator:
        generator.generate(failure)
    content = fake_messages_api.requests[0].json["messages"][0]["content"]
    report = content[content.index("Report files the check wrote") :]
    assert len(report) < 5_000
    assert "FAIL: test_0 (big.Suite)" in report
    assert "middle omitted" in report
    assert "5000 tests, 5000 failures" in report  # the closing count is kept


def test_a_report_that_cannot_be_read_is_named_not_fatal(
    tmp_path: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """A missing report, or one that is a link, is named in the request; the model still answers."""
    failure = with_reports(tmp_path, ("junit.xml", JUNIT_REPORT))
    (tmp_path / "link.xml").symlink_to(tmp_path / "junit.xml")
    failure = attrs.evolve(
        failure, reports=(str(tmp_path / "gone.xml"), str(tmp_path / "link.xml"))
    )
    fake_messages_api.reply(REPLY)
    with make_claude(fake_messages_api, root=tmp_path) as generator:
        reflection = generator.generate(failure)
    content = fake_messages_api.requests[0].json["messages"][0]["content"]
    assert reflection.source is ReflectionSource.LLM
    assert "report gone.xml: not read" in content
    assert "report link.xml: not read" in content
    assert "testRounding" not in content


def test_a_failure_without_reports_has_no_report_section(
    claude: ClaudeGenerator, fake_messages_api: FakeMessagesApi
) -> None:
    """No report named, no section (and no file touched)."""
    fake_messages_api.reply(REPLY)
    claude.generate(FAILURE)
    assert "Report files" not in fake_messages_api.requests[0].json["messages"][0]["content"]
