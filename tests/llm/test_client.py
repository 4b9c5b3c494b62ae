"""The one Claude client, through the real anthropic SDK against the fake Messages API.

Nothing of reflexkit is patched. The budget's cover of the SDK's import is checked in a real
``reflexkit reflect`` process; a loaded machine, where that import takes seconds, is made by
a ``sitecustomize`` that slows the import of ``anthropic`` down (the SDK itself is untouched).
"""

from __future__ import annotations

import email.utils
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reflexkit.exceptions import GenerationError
from reflexkit.llm import (
    REASONS,
    Claude,
    Effort,
    OutputMode,
    RequestOptions,
    RetryPolicy,
    Thinking,
    TransientError,
)
from reflexkit.testing.fake_messages_api import FakeMessagesApi, reply_with

REQUEST = {"messages": [{"role": "user", "content": "hi"}], **RequestOptions().apply({})}
REPLY = {"ok": True}
FAILURE = {
    "taskId": "t",
    "subtaskId": "s",
    "attemptNumber": 1,
    "command": "pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n",
}

_SLOW_SDK = """
import importlib.machinery, os, sys, threading, time

class _SlowSdk:
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def slowly(module):  # outside the import system's global lock, as a real import
            sys.stderr.write(f"anthropic imported in {threading.current_thread().name}\\n")
            time.sleep(float(os.environ["SLOW_SDK_S"]))
            run(module)

        spec.loader.exec_module = slowly
        return spec

sys.meta_path.insert(0, _SlowSdk())
"""


def client(api: FakeMessagesApi, **options: object) -> Claude:
    """A client of *api*, with no back-off unless the test says so."""
    options.setdefault("retry", RetryPolicy.no_wait())
    return Claude(api_key="sk-ant-test", base_url=api.url, **options)  # type: ignore[arg-type]


def _reflect(
    root: Path, api: FakeMessagesApi, *, slow_sdk_s: float | None
) -> tuple[dict[str, object], str]:
    """Run ``reflexkit reflect --backend llm --json --no-save`` in a fresh process."""
    (root / ".reflexkit").mkdir(exist_ok=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "llm", "generationTimeoutMs": 1500}})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REFLEXKIT_"))}
    env |= {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": api.url}
    if slow_sdk_s is not None:
        (root / "site").mkdir()
        (root / "site" / "sitecustomize.py").write_text(_SLOW_SDK)
        env |= {"PYTHONPATH": str(root / "site"), "SLOW_SDK_S": str(slow_sdk_s)}
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "reflect", "--json", "--no-save"],
        input=json.dumps(FAILURE).encode(),
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout), done.stderr.decode()


def test_a_hanging_api_gives_the_heuristic_reflection(
    tmp_path: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """With the API hanging, ``reflect`` falls back when the 1.5 s budget ends.

    The budget runs from the command's start of work: on a machine so loaded that building
    the service takes all of it, nothing is sent (``run_budget_spent``).
    """
    fake_messages_api.hang(60)
    reflection, _ = _reflect(tmp_path, fake_messages_api, slow_sdk_s=None)
    assert reflection["source"] == "heuristic"
    assert reflection["fallbackReason"] in {"llm_timeout", "run_budget_spent"}


def test_the_budget_covers_importing_the_sdk(
    tmp_path: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """An SDK that takes longer to import than the whole budget: the heuristic, and no request.

    Before, the budget started once the SDK was loaded: the command took the import and then
    the whole budget again (6.6 s for a 1.5 s budget).
    """
    fake_messages_api.hang(60)
    reflection, stderr = _reflect(tmp_path, fake_messages_api, slow_sdk_s=30)
    assert reflection["source"] == "heuristic"
    assert fake_messages_api.requests == []  # before: the import, then a request and 1.5 s
    # Its import starts with the command's work, in a thread of its own, not at the send.
    assert "anthropic imported in reflexkit-sdk-import" in stderr
    if reflection["fallbackReason"] == "llm_timeout":
        assert "SDK was not loaded within the budget" in stderr
    else:  # building the service took the whole budget on a loaded machine
        assert reflection["fallbackReason"] == "run_budget_spent"


# --- the budgeted send ----------------------------------------------------------------------


def test_x_should_retry_false_stops_a_retryable_status(fake_messages_api: FakeMessagesApi) -> None:
    """A 500 the server says not to retry is sent once."""
    fake_messages_api.error(500, headers={"x-should-retry": "false"}).enqueue(
        json=reply_with(REPLY)
    )
    with client(fake_messages_api) as claude, pytest.raises(GenerationError) as caught:
        claude.send(REQUEST, budget_s=5)
    assert not isinstance(caught.value, TransientError)
    assert caught.value.reason == "llm_server_error"
    assert len(fake_messages_api.requests) == 1


def test_x_should_retry_true_retries_a_client_error(fake_messages_api: FakeMessagesApi) -> None:
    """A 400 the server says to retry is retried, and the reply after it is used."""
    fake_messages_api.error(400, "invalid_request_error", headers={"x-should-retry": "true"})
    fake_messages_api.enqueue(json=reply_with(REPLY))
    with client(fake_messages_api) as claude:
        message = claude.send(REQUEST, budget_s=5)
    assert message.stop_reason == "end_turn"
    assert len(fake_messages_api.requests) == 2


def test_a_retry_after_date_is_read_by_the_sdk(fake_messages_api: FakeMessagesApi) -> None:
    """``Retry-After`` as an HTTP date far beyond the budget stops the retries at once."""
    later = email.utils.formatdate(time.time() + 3_600, usegmt=True)
    fake_messages_api.error(429, "rate_limit_error", headers={"retry-after": later})
    fake_messages_api.enqueue(json=reply_with(REPLY))
    with client(fake_messages_api) as claude, pytest.raises(TransientError) as caught:
        claude.send(REQUEST, budget_s=5)
    assert caught.value.reason == "llm_rate_limited"
    assert "asked to wait" in str(caught.value)
    assert len(fake_messages_api.requests) == 1


def test_a_spent_budget_sends_nothing(fake_messages_api: FakeMessagesApi) -> None:
    """No time left: ``run_budget_spent`` before anything is sent."""
    with client(fake_messages_api) as claude, pytest.raises(GenerationError) as caught:
        claude.send(REQUEST, budget_s=0)
    assert caught.value.reason == "run_budget_spent"
    assert caught.value.reason in REASONS
    assert fake_messages_api.requests == []


def test_the_key_stays_out_of_the_repr(fake_messages_api: FakeMessagesApi) -> None:
    """The client's repr names its endpoint and policy, never its key."""
    with client(fake_messages_api) as claude:
        assert "sk-ant-test" not in repr(claude)


# --- the request options --------------------------------------------------------------------


def test_options_come_from_strings_or_enums_and_name_the_choices() -> None:
    """Config strings and enums give the same value; a bad one says what is allowed."""
    assert RequestOptions(mode="tool", thinking="disabled", effort="high") == RequestOptions(
        mode=OutputMode.TOOL, thinking=Thinking.DISABLED, effort=Effort.HIGH
    )
    with pytest.raises(ValueError, match=r"OutputMode must be one of 'structured', 'tool'"):
        RequestOptions(mode="json_schema")
    with pytest.raises(ValueError, match="max_tokens must be >= 1"):
        RequestOptions(max_tokens=0)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (RequestOptions(), {"thinking": {"type": "adaptive"}, "effort": "low"}),
        (RequestOptions(mode="tool"), {"thinking": {"type": "disabled"}, "effort": "low"}),
        (RequestOptions(model="claude-haiku-4-5"), {}),
        (RequestOptions(thinking="disabled", effort=None), {"thinking": {"type": "disabled"}}),
    ],
)
def test_thinking_and_effort_suit_the_model_and_the_mode(
    options: RequestOptions, expected: dict[str, object]
) -> None:
    """``auto`` thinking: adaptive, disabled for a forced tool, nothing on Claude 4.5."""
    assert options.thinking_request() == expected


# --- the retry policy on its own --------------------------------------------------------------


def test_backoff_is_jittered_doubling_and_capped() -> None:
    """Back-off doubles per failure, is capped, and jitter only ever shortens it."""
    policy = RetryPolicy(backoff_base_s=0.5, backoff_max_s=2.0, jitter=0.25)
    for failures, full in ((1, 0.5), (2, 1.0), (3, 2.0), (6, 2.0)):
        waits = [policy.backoff_s(failures) for _ in range(50)]
        assert all(full * 0.75 <= w <= full for w in waits)
    assert len({policy.backoff_s(1) for _ in range(20)}) > 1  # really random
    assert RetryPolicy(jitter=0.0).backoff_s(1) == 0.5


def test_the_policy_passes_the_remaining_time_to_each_attempt() -> None:
    """Each attempt is told what is left of the one budget, and non-transient errors pass."""
    seen: list[float] = []
    waits: list[float] = []

    def attempt(remaining_s: float) -> str:
        seen.append(remaining_s)
        if len(seen) < 3:
            raise TransientError("llm_server_error", "HTTP 500")
        return "ok"

    policy = RetryPolicy(attempts=4, jitter=0.0, sleep=waits.append)
    assert policy.call(attempt, deadline=time.monotonic() + 10) == "ok"
    assert len(seen) == 3
    assert seen == sorted(seen, reverse=True)
    assert all(0 < s <= 10.0 for s in seen)
    assert waits == [0.5, 1.0]

    def broken(_remaining_s: float) -> str:
        raise GenerationError("llm_refusal", "no")

    with pytest.raises(GenerationError) as caught:
        policy.call(broken, deadline=time.monotonic() + 10)
    assert caught.value.reason == "llm_refusal"


@pytest.mark.parametrize("hint", [float("nan"), float("inf"), -3.0])
def test_the_policy_survives_any_retry_after_hint(hint: float) -> None:
    """A NaN, infinite or negative Retry-After on a TransientError never reaches sleep()."""
    waits: list[float] = []
    calls: list[float] = []

    def attempt(remaining_s: float) -> str:
        calls.append(remaining_s)
        if len(calls) == 1:
            raise TransientError("llm_rate_limited", "HTTP 429", retry_after_s=hint)
        return "ok"

    policy = RetryPolicy(attempts=2, jitter=0.0, sleep=waits.append)
    assert policy.call(attempt, deadline=time.monotonic() + 5) == "ok"
    assert all(0.0 <= w < 5.0 for w in waits)


@pytest.mark.parametrize(
    "options",
    [{"attempts": 0}, {"jitter": 1.5}, {"backoff_base_s": -1}],
    ids=["attempts", "jitter", "backoff"],
)
def test_the_policy_rejects_bad_values(options: dict[str, float]) -> None:
    """Out-of-range settings are a ValueError."""
    with pytest.raises(ValueError, match="must be"):
        RetryPolicy(**options)  # type: ignore[arg-type]
