"""One Claude client for reflexkit: the SDK client, the budgeted send, the reason codes.

The generator, the judge and the analyst build their own requests; everything between is
here. The SDK is imported by the first send (or by :func:`preload`), in a worker thread inside
the budget; retries are :class:`RetryPolicy`'s, on the SDK's own ``x-should-retry`` and
``Retry-After``; every failure is a :class:`~reflexkit.exceptions.GenerationError` with a code
from :data:`REASONS`, its message never taken from the request. docs/llm.md describes the whole.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

import attrs

from reflexkit.exceptions import GenerationError
from reflexkit.llm._options import DEFAULT_MODEL
from reflexkit.redaction._gate import outbound_data

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

__all__ = ["NO_WAIT", "REASONS", "Asker", "Claude", "RetryPolicy", "TransientError", "reply_text"]

T = TypeVar("T")

log = logging.getLogger("reflexkit.llm")

REASONS: dict[str, str] = {
    "no_api_key": "no API key or other credential could be resolved (nothing was sent)",
    "llm_auth_failed": "the API rejected the credential (401 or 403)",
    "llm_timeout": "the budget ran out loading the SDK or waiting for a reply, or HTTP 408",
    "llm_rate_limited": "429, and no retry fitted in the budget",
    "llm_overloaded": "529 overloaded, and no retry fitted in the budget",
    "llm_server_error": "a 5xx or 409, and no retry fitted in the budget",
    "llm_connection_error": "the connection failed or was dropped",
    "llm_bad_request": "the API rejected the request (another 4xx, or x-should-retry: false)",
    "llm_refusal": 'the model declined to answer (stop_reason "refusal")',
    "llm_max_tokens": "the reply was cut off at max_tokens or the context window",
    "llm_invalid_output": "the reply was not JSON, or not the reply schema",
    "llm_api_error": "any other error raised by the SDK",
    "run_budget_spent": "no time was left in the run's budget (orchestrator.runTimeoutS), or "
    "in the command's (reflect: generationTimeoutMs from the start of its work)",
}
"""Every reason code a Claude call fails with, and what it means."""

_MS_PER_S = 1_000


class TransientError(GenerationError):
    """A failure that another attempt may not have (a timeout, a 429, a 5xx, a lost connection).

    Attributes:
        reason: The reason code, as on :class:`~reflexkit.exceptions.GenerationError`.
        retry_after_s: How long the server asked the client to wait, in seconds, if it did.
    """

    def __init__(
        self, reason: str, message: str = "", *, retry_after_s: float | None = None
    ) -> None:
        super().__init__(reason, message)
        finite = retry_after_s is not None and math.isfinite(retry_after_s)
        self.retry_after_s = max(retry_after_s, 0.0) if finite else None  # type: ignore[type-var]


def _at_least(low: float, *, high: float = math.inf) -> Callable[[object, Any, float], None]:
    def check(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
        if not low <= value <= high:
            bound = f"between {low:g} and {high:g}" if math.isfinite(high) else f">= {low:g}"
            msg = f"{attribute.name} must be {bound}, got {value!r}"
            raise ValueError(msg)

    return check


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry, inside the deadline each call gives.

    Attributes:
        attempts: The most attempts, the first one included.
        backoff_base_s: The wait after the first failure; it doubles after each further one.
        backoff_max_s: The longest back-off wait.
        jitter: The fraction of each back-off wait that is random (0 for none), so many
            clients that failed together do not retry together.
        min_attempt_s: An attempt is not started with less time than this left; a back-off
            that would leave less is shortened, a ``Retry-After`` that would ends the retries.
        sleep: How to wait (tests may pass a recorder).
    """

    attempts: int = attrs.field(default=4, validator=_at_least(1))
    backoff_base_s: float = attrs.field(default=0.5, validator=_at_least(0))
    backoff_max_s: float = attrs.field(default=8.0, validator=_at_least(0))
    jitter: float = attrs.field(default=0.25, validator=_at_least(0, high=1))
    min_attempt_s: float = attrs.field(default=0.05, validator=_at_least(0))
    sleep: Callable[[float], None] = attrs.field(default=time.sleep, eq=False, repr=False)

    @classmethod
    def no_wait(cls, *, attempts: int = 4) -> RetryPolicy:
        """Return a policy with no back-off, for tests (``Retry-After`` is still honoured)."""
        return cls(attempts=attempts, backoff_base_s=0.0, jitter=0.0)

    def backoff_s(self, failures: int) -> float:
        """Return the back-off wait after *failures* failed attempts, jitter applied."""
        wait = min(self.backoff_base_s * 2.0 ** max(failures - 1, 0), self.backoff_max_s)
        return wait * (1.0 - self.jitter * random.random())  # noqa: S311 -- jitter, not crypto

    def call(self, fn: Callable[[float], T], *, deadline: float) -> T:
        """Run ``fn(seconds_left)`` until it returns, fails for good, or *deadline* passes.

        Args:
            fn: One attempt; it raises :class:`TransientError` for a failure worth retrying.
            deadline: When everything must be over, a :func:`time.monotonic` value.

        Raises:
            TransientError: The last transient failure, its message saying why retries stopped.
            Exception: Whatever else *fn* raised, at once.
        """
        import tenacity  # noqa: PLC0415 -- only a call to the network pays for it

        why_stopped: list[str] = []

        def wait(state: tenacity.RetryCallState) -> float:
            err = _transient(state)
            if err.retry_after_s is not None:
                return err.retry_after_s
            left = deadline - time.monotonic() - self.min_attempt_s
            return max(min(self.backoff_s(state.attempt_number), left), 0.0)

        def stop(state: tenacity.RetryCallState) -> bool:
            err, left = _transient(state), deadline - time.monotonic()
            if state.attempt_number >= self.attempts:
                why_stopped.append(f"{self.attempts} attempts made")
            elif err.retry_after_s is not None and err.retry_after_s + self.min_attempt_s > left:
                why_stopped.append(
                    f"the server asked to wait {err.retry_after_s:.3g} s, "
                    f"more than the {max(left, 0.0):.3g} s left in the budget"
                )
            elif left - state.upcoming_sleep < self.min_attempt_s:
                why_stopped.append("the budget ran out")
            else:
                return False
            return True

        def give_up(state: tenacity.RetryCallState) -> T:
            err, attempts = _transient(state), state.attempt_number
            detail = f"{err} (gave up after {attempts} attempt{'s' * (attempts > 1)}: "
            detail += (why_stopped[-1] if why_stopped else "no attempts left") + ")"
            raise TransientError(err.reason, detail.removeprefix(f"{err.reason}: "))

        def before_sleep(state: tenacity.RetryCallState) -> None:
            log.info(
                "attempt %d failed (%s); retrying in %.3f s",
                state.attempt_number,
                _transient(state).reason,
                state.upcoming_sleep,
            )

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(TransientError),
            wait=wait,
            stop=stop,
            sleep=self.sleep,
            before_sleep=before_sleep,
            retry_error_callback=give_up,
        )
        result: T = retrying(lambda: fn(max(deadline - time.monotonic(), 0.0)))
        return result


def _transient(state: Any) -> TransientError:  # noqa: ANN401 -- tenacity's RetryCallState
    """Return the TransientError of the attempt that just failed."""
    err = state.outcome.exception()
    assert isinstance(err, TransientError)  # noqa: S101 -- only these are retried
    return err


NO_WAIT = RetryPolicy.no_wait()
"""A policy with no back-off (``Retry-After`` still honoured), for tests."""


_CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_CONFIG_DIR",
)


def _credential_possible() -> bool:
    """Whether the SDK could find a credential: conservative, ``True`` when in doubt.

    The SDK reads these variables, then profiles in ``~/.config/anthropic`` (``Anthropic``
    under ``%APPDATA%`` on Windows). Only when none is set and that folder is absent is it
    sure that no request can be sent, and the SDK's import is skipped.
    """
    if any(os.environ.get(name) for name in _CREDENTIAL_ENV) or sys.platform == "win32":
        return True
    try:
        return (Path.home() / ".config" / "anthropic").exists()
    except (OSError, RuntimeError):  # no home folder to look in
        return True


def preload() -> None:
    """Start importing the SDK in a daemon thread now, if a request may be sent at all.

    The import costs seconds of CPU and counts against the first send's budget; a command
    that knows it will ask Claude (``reflect`` with the llm backend) calls this at the start
    of its work, so the import runs while the command builds its service. The first send
    then waits for it (the import system's own lock) only as long as its budget allows.
    """
    if "anthropic" not in sys.modules and _credential_possible():
        _start_import()


@functools.cache  # one import thread per process
def _start_import() -> None:
    threading.Thread(target=_import_sdk, name="reflexkit-sdk-import", daemon=True).start()


def _import_sdk() -> None:
    """Import the SDK; a failure is the first send's to report."""
    with contextlib.suppress(BaseException):  # Claude._build imports it again and reports
        import anthropic  # noqa: F401, PLC0415 -- the point of the thread


class Claude:
    """The Claude client every Claude caller of reflexkit shares.

    Args:
        api_key: The API key; ``None`` lets the SDK resolve a credential
            (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a profile). With none,
            :meth:`send` raises ``no_api_key`` without sending anything.
        base_url: Another endpoint (a proxy, or the fake Messages API in tests); ``None``
            lets the SDK read ``ANTHROPIC_BASE_URL``.
        retry: How to retry inside each call's budget.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._api_key = api_key
        # An empty ANTHROPIC_BASE_URL means none, as for the SDK's other variables.
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.retry = retry or RetryPolicy()
        self._lock = threading.Lock()
        self._client: Future[anthropic.Anthropic] | None = None

    def __repr__(self) -> str:  # the key stays out of reprs, and so out of logs
        return f"Claude(base_url={self._base_url!r}, retry={self.retry!r})"

    def send(
        self, request: Mapping[str, Any], /, *, budget_s: float, started: float | None = None
    ) -> Message:
        """Send *request* (the keyword arguments of ``messages.create``) within *budget_s*.

        Args:
            request: The request.
            budget_s: The whole time allowed: loading the SDK, every attempt and every wait.
            started: When the budget started (:func:`time.monotonic`); now by default.

        Returns:
            The model's message, not yet validated: the caller reads its own schema.

        Raises:
            GenerationError: With a reason code from :data:`REASONS`.
        """
        deadline = (time.monotonic() if started is None else started) + budget_s
        # Every request to a model leaves here: through the gate, whoever built it (a Prompt
        # was gated when built; gating twice changes nothing).
        request = outbound_data(dict(request), "model_request")
        if deadline <= time.monotonic():
            raise GenerationError("run_budget_spent", "no time left in the budget")
        try:
            client = self._loading().result(timeout=max(deadline - time.monotonic(), 0.0))
        except FutureTimeout:
            raise GenerationError(
                "llm_timeout", "the Anthropic SDK was not loaded within the budget"
            ) from None
        return self.retry.call(
            lambda seconds_left: _within(client, request, seconds_left), deadline=deadline
        )

    def close(self) -> None:
        """Close the HTTP connections, if a client was built; a later send builds another."""
        with self._lock:
            loading, self._client = self._client, None
        if loading is not None and loading.done() and loading.exception() is None:
            loading.result().close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _loading(self) -> Future[anthropic.Anthropic]:
        """The client, built on first use in a daemon thread (no sender waits past its budget)."""
        with self._lock:
            if self._client is None:
                self._client = Future()
                if _credential_possible() or self._api_key is not None:
                    threading.Thread(
                        target=self._build,
                        args=(self._client,),
                        name="reflexkit-claude",
                        daemon=True,
                    ).start()
                else:  # importing the SDK costs seconds: with nothing to send, skip it
                    self._client.set_exception(
                        GenerationError(
                            "no_api_key",
                            "no credential in the environment or the SDK's config folder",
                        )
                    )
            return self._client

    def _build(self, into: Future[anthropic.Anthropic]) -> None:
        try:
            import anthropic  # noqa: PLC0415 -- only a Claude client pays for the SDK

            try:
                into.set_result(
                    anthropic.Anthropic(
                        api_key=self._api_key, base_url=self._base_url, max_retries=0
                    )
                )
            except anthropic.CredentialsError as err:
                raise GenerationError(
                    "no_api_key", f"no usable credential ({type(err).__name__})"
                ) from None
        except BaseException as err:  # noqa: BLE001 -- handed to the sender's thread
            into.set_exception(err)


class Asker:
    """A caller that asks Claude one kind of question: the generator, the judge, the analyst.

    It holds what they share (the client, the model, the budget, the reply's size) and
    closes the client; a subclass builds its request and reads its reply.

    Args:
        claude: The client (a fresh :class:`Claude` by default).
        model: The model to ask.
        timeout_ms: The one overall budget of a question, loading the SDK included.
        max_tokens: The most tokens a reply may take (the class's :attr:`MAX_TOKENS` by
            default).
    """

    MAX_TOKENS: ClassVar[int] = 1_024

    def __init__(
        self,
        claude: Claude | None = None,
        /,
        *,
        model: str = DEFAULT_MODEL,
        timeout_ms: int = 30_000,
        max_tokens: int | None = None,
    ) -> None:
        self.claude = claude if claude is not None else Claude()
        self.model = model
        self.max_tokens = self.MAX_TOKENS if max_tokens is None else max_tokens
        self.timeout_ms = timeout_ms

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, timeout_ms={self.timeout_ms})"

    def close(self) -> None:
        """Close the client's HTTP connections."""
        self.claude.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _within(client: anthropic.Anthropic, request: Mapping[str, Any], seconds: float) -> Message:
    """Make one request that ends within *seconds*, whatever the server does.

    The SDK's timeout is per connect and per read: a reply that arrives in slow pieces resets
    it with every piece. So the request runs in a worker thread and this call waits for it
    until the deadline, no longer; a request left behind ends on its own and is dropped.
    """
    outcome: Future[Message] = Future()

    def request_once() -> None:
        try:
            outcome.set_result(_request(client, request, seconds))
        except BaseException as err:  # noqa: BLE001 -- handed to the caller's thread
            outcome.set_exception(err)

    threading.Thread(target=request_once, name="reflexkit-claude-request", daemon=True).start()
    try:
        return outcome.result(timeout=seconds)
    except FutureTimeout:
        raise TransientError(
            "llm_timeout", f"no complete reply within {seconds * _MS_PER_S:.0f} ms"
        ) from None


def _request(client: anthropic.Anthropic, request: Mapping[str, Any], seconds: float) -> Message:
    """Make one request with *seconds* as its timeout; map failures to reason codes."""
    import anthropic  # noqa: PLC0415 -- loaded with the client

    try:
        message: Message = client.messages.create(**request, timeout=seconds)
    except TypeError as err:
        # The SDK raises TypeError, not an API error, when no credential resolves.
        if "authentication" not in str(err):
            raise
        raise GenerationError(
            "no_api_key", "no API key: set ANTHROPIC_API_KEY or pass api_key (nothing was sent)"
        ) from None
    except anthropic.CredentialsError as err:
        raise GenerationError(
            "no_api_key", f"no usable credential ({type(err).__name__})"
        ) from None
    except anthropic.APITimeoutError:
        raise TransientError(
            "llm_timeout", f"no reply within {seconds * _MS_PER_S:.0f} ms"
        ) from None
    except anthropic.APIConnectionError as err:
        cause = type(err.__cause__).__name__ if err.__cause__ else type(err).__name__
        raise TransientError("llm_connection_error", f"connection failed ({cause})") from None
    except anthropic.APIStatusError as err:
        raise _status_error(client, err) from None
    except anthropic.AnthropicError as err:
        raise GenerationError("llm_api_error", type(err).__name__) from None
    return message


_REASON_BY_STATUS = {408: "llm_timeout", 409: "llm_server_error", 429: "llm_rate_limited"}
_OVERLOADED = 529
_SERVER_ERROR = 500


def _status_error(client: anthropic.Anthropic, err: anthropic.APIStatusError) -> GenerationError:
    """Map an HTTP error to a reason code; the SDK says whether to retry and after how long."""
    status, label = (
        err.status_code,
        f"HTTP {err.status_code}" + (f" {err.type}" if err.type else ""),
    )
    if status in {401, 403}:
        return GenerationError("llm_auth_failed", label)
    reason = _REASON_BY_STATUS.get(status)
    if reason is None and (status == _OVERLOADED or err.type == "overloaded_error"):
        reason = "llm_overloaded"
    if reason is None and status >= _SERVER_ERROR:
        reason = "llm_server_error"
    if not client._should_retry(err.response):  # noqa: SLF001 -- the SDK's policy, x-should-retry
        return GenerationError(reason or "llm_bad_request", label)
    try:  # retry-after-ms, retry-after in seconds or as an HTTP date
        after = client._parse_retry_after_header(err.response.headers)  # noqa: SLF001
    except (TypeError, ValueError, OverflowError):
        after = None
    return TransientError(reason or "llm_bad_request", label, retry_after_s=after)


def reply_text(message: Message, /, *, asked: str) -> str:
    """The text of *message*: a refusal, a cut-off reply or an empty one is an error.

    Args:
        message: The reply.
        asked: What the model was asked to do, for the refusal's message ("judge").

    Raises:
        GenerationError: ``llm_refusal``, ``llm_max_tokens`` or ``llm_invalid_output``.
    """
    check_stop(message, asked=asked)
    # Thinking blocks may come first: the answer is the text blocks, wherever they are.
    text = "".join(block.text for block in message.content if block.type == "text")
    if not text.strip():
        raise GenerationError("llm_invalid_output", "the reply has no text")
    return text


def check_stop(message: Message, /, *, asked: str) -> None:
    """Raise for a refusal or a reply cut off at ``max_tokens`` (see :func:`reply_text`)."""
    if message.stop_reason == "refusal":
        raise GenerationError("llm_refusal", f"the model declined to {asked}")
    if message.stop_reason in {"max_tokens", "model_context_window_exceeded"}:
        raise GenerationError("llm_max_tokens", f"the reply was cut off ({message.stop_reason})")
