"""FallbackGenerator: Claude first, the heuristic on any failure, and the reason on the record.

The LLM path runs through the real anthropic SDK against the fake Messages API; the chain
rules are checked with small generators written here against the protocol.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

import attrs
import pytest

from reflexkit.exceptions import GenerationError
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.models import FailureContext, FailureType, Reflection, ReflectionSource
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.reflection._fallback import GENERATOR_ERROR, FallbackGenerator, reason_of
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.reflection._protocols import ReflectionGenerator
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
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
    "analysis": "`tests/test_cart.py::test_total`: total() returns 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py"],
    "confidence": 0.8,
}


def chain(
    api: FakeMessagesApi, *, timeout_ms: int = 3_000, retry: RetryPolicy | None = None
) -> tuple[ClaudeGenerator, FallbackGenerator]:
    """Claude on the fake API (no back-off by default), then the heuristic."""
    client = Claude(
        api_key="sk-ant-test", base_url=api.url, retry=retry or RetryPolicy.no_wait(attempts=2)
    )
    claude = ClaudeGenerator(client, timeout_ms=timeout_ms)
    return claude, FallbackGenerator(claude, HeuristicGenerator(clock=lambda: T0))


@pytest.fixture(scope="module")
def fallback(shared_api: FakeMessagesApi) -> Iterator[FallbackGenerator]:
    """Claude on the shared server (3 s budget, 2 attempts, no back-off), then the heuristic."""
    claude, generator = chain(shared_api)
    with claude:
        yield generator


# --- through the real SDK -----------------------------------------------------------------------


def test_a_working_llm_answers_without_a_fallback_reason(
    fake_messages_api: FakeMessagesApi, fallback: FallbackGenerator
) -> None:
    """When Claude answers, its reflection comes back untouched."""
    fake_messages_api.reply(REPLY)
    r = fallback.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert r.fallback_reason is None
    assert r.model
    assert r.input_tokens == 812
    assert r.output_tokens == 164


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda api: api.invalid_json(), "llm_invalid_output"),
        (lambda api: api.reply({**REPLY, "confidence": 7}), "llm_invalid_output"),
        (lambda api: api.refusal(), "llm_refusal"),
        (lambda api: api.max_tokens(), "llm_max_tokens"),
        (lambda api: [api.rate_limited(), api.rate_limited()], "llm_rate_limited"),
        (lambda api: [api.server_error(500), api.server_error(503)], "llm_server_error"),
        (lambda api: [api.overloaded(), api.overloaded()], "llm_overloaded"),
        (lambda api: [api.drop(), api.drop()], "llm_connection_error"),
        (lambda api: api.error(401, "authentication_error", "bad key"), "llm_auth_failed"),
        (lambda api: api.error(400, "invalid_request_error", "bad"), "llm_bad_request"),
    ],
    ids=[
        "invalid-json",
        "schema-violation",
        "refusal",
        "max-tokens",
        "429",
        "5xx",
        "529",
        "dropped",
        "401",
        "400",
    ],
)
def test_each_llm_failure_gives_the_heuristic_with_its_reason(
    fake_messages_api: FakeMessagesApi,
    fallback: FallbackGenerator,
    script: Callable[[FakeMessagesApi], object],
    reason: str,
) -> None:
    """Every way the LLM fails gives the heuristic reflection, saying why."""
    script(fake_messages_api)
    r = fallback.generate(FAILURE)
    assert r.source is ReflectionSource.HEURISTIC
    assert r.fallback_reason == reason
    assert r.model is None
    assert "tests/test_cart.py::test_total" in r.analysis  # the heuristic's own facts
    assert fake_messages_api.pending == 0


def test_no_api_key_falls_back_and_sends_nothing(
    fake_messages_api: FakeMessagesApi,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No credential: no_api_key, no request, and an info line rather than a warning."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    caplog.set_level(logging.INFO, logger="reflexkit")
    fake_messages_api.reply(REPLY)
    with ClaudeGenerator(Claude(base_url=fake_messages_api.url), timeout_ms=3_000) as claude:
        r = FallbackGenerator(claude, HeuristicGenerator()).generate(FAILURE)
    assert r.source is ReflectionSource.HEURISTIC
    assert r.fallback_reason == "no_api_key"
    assert fake_messages_api.requests == []
    assert fake_messages_api.pending == 1
    lines = [rec for rec in caplog.records if "no_api_key" in rec.getMessage()]
    assert lines
    assert all(rec.levelno == logging.INFO for rec in lines)


def test_retry_after_beyond_the_budget_falls_back_quickly(
    fake_messages_api: FakeMessagesApi,
) -> None:
    """A 429 asking for 4 s inside a 2 s budget: the heuristic answers long before 4 s."""
    fake_messages_api.rate_limited(retry_after_s=4).reply(REPLY)
    claude, generator = chain(fake_messages_api, timeout_ms=2_000, retry=RetryPolicy())
    with claude:
        started = time.monotonic()
        r = generator.generate(FAILURE)
        elapsed = time.monotonic() - started
    assert r.fallback_reason == "llm_rate_limited"
    assert elapsed < 2.0  # under half the Retry-After: generous, not a timing test
    assert len(fake_messages_api.requests) == 1


def test_retry_after_that_fits_is_retried_and_succeeds(
    fake_messages_api: FakeMessagesApi, fallback: FallbackGenerator
) -> None:
    """A 429 with a short Retry-After is waited out; Claude's reflection comes back."""
    fake_messages_api.rate_limited(retry_after_s=0.2).reply(REPLY)
    r = fallback.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert r.fallback_reason is None
    assert len(fake_messages_api.requests) == 2


def test_a_hang_falls_back_within_the_budget(fake_messages_api: FakeMessagesApi) -> None:
    """A server that never answers: the heuristic answers once the 400 ms budget is spent."""
    fake_messages_api.hang(10).hang(10)
    claude, generator = chain(fake_messages_api, timeout_ms=400, retry=RetryPolicy())
    with claude:
        started = time.monotonic()
        r = generator.generate(FAILURE)
        elapsed = time.monotonic() - started
    assert r.fallback_reason == "llm_timeout"
    assert r.source is ReflectionSource.HEURISTIC
    assert elapsed < 3  # generous upper bound: not the 10 s hang


# --- the chain itself ---------------------------------------------------------------------------


class Failing:
    """A generator that always raises *error*."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Raise the error."""
        self.calls += 1
        raise self.error


class Fixed:
    """A generator that returns one reflection and remembers what it was given."""

    def __init__(self, source: ReflectionSource = ReflectionSource.HEURISTIC) -> None:
        self.source = source
        self.seen: list[tuple[FailureContext, tuple[Reflection, ...]]] = []

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Return a fresh reflection on the failure's subtask."""
        self.seen.append((failure, tuple(previous)))
        return attrs.evolve(make_reflection(failure.subtask_id), source=self.source)


def test_generators_satisfy_the_protocol() -> None:
    """The chain is itself a generator, so chains nest."""
    generator = FallbackGenerator(Fixed())
    assert isinstance(generator, ReflectionGenerator)
    assert isinstance(FallbackGenerator(generator, Fixed()), ReflectionGenerator)


def test_the_first_reason_is_kept_along_the_chain() -> None:
    """LLM times out, the next one fails too, the third answers: the first reason is recorded."""
    first = Failing(GenerationError("llm_timeout", "no reply"))
    second = Failing(GenerationError("fixture_not_found", "no fixture"))
    last = Fixed()
    r = FallbackGenerator(first, second, last).generate(FAILURE)
    assert r.fallback_reason == "llm_timeout"
    assert (first.calls, second.calls, len(last.seen)) == (1, 1, 1)


def test_the_primary_reflection_is_returned_as_is() -> None:
    """No failure, no fallback_reason, and the later generators are not called."""
    primary, spare = Fixed(ReflectionSource.LLM), Fixed()
    r = FallbackGenerator(primary, spare).generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert r.fallback_reason is None
    assert spare.seen == []


def test_previous_reflections_reach_every_generator() -> None:
    """previous= is passed along the chain unchanged."""
    earlier = [make_reflection("discount")]
    failing, last = Failing(GenerationError("llm_refusal")), Fixed()
    FallbackGenerator(failing, last).generate(FAILURE, previous=earlier)
    assert last.seen == [(FAILURE, tuple(earlier))]


def test_a_bug_falls_back_as_generator_error(caplog: pytest.LogCaptureFixture) -> None:
    """Any exception falls back; its message (which may hold anything) stays out of warnings."""
    caplog.set_level(logging.DEBUG, logger="reflexkit")
    r = FallbackGenerator(Failing(KeyError("secret-ish detail")), Fixed()).generate(FAILURE)
    assert r.fallback_reason == GENERATOR_ERROR
    warnings = [rec for rec in caplog.records if rec.levelno >= logging.WARNING]
    assert warnings
    assert all("secret-ish detail" not in rec.getMessage() for rec in warnings)
    assert any("KeyError" in rec.getMessage() for rec in warnings)


def test_when_every_generator_fails_the_first_reason_is_raised() -> None:
    """An all-failing chain raises a GenerationError with the first failure's reason."""
    generator = FallbackGenerator(
        Failing(GenerationError("llm_overloaded", "529")), Failing(RuntimeError("boom"))
    )
    with pytest.raises(GenerationError) as caught:
        generator.generate(FAILURE)
    assert caught.value.reason == "llm_overloaded"


def test_reason_of() -> None:
    """A GenerationError's reason, or generator_error for anything else."""
    assert reason_of(GenerationError("llm_timeout")) == "llm_timeout"
    assert reason_of(ValueError("x")) == GENERATOR_ERROR


def test_repr_names_the_chain() -> None:
    """The repr lists the chain (ClaudeGenerator's repr holds no key)."""
    with ClaudeGenerator(Claude(api_key="sk-ant-hidden")) as claude:
        text = repr(FallbackGenerator(claude, HeuristicGenerator()))
    assert text.startswith("FallbackGenerator(ClaudeGenerator(")
    assert "sk-ant-hidden" not in text
