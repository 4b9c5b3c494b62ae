"""The LLM generator: Claude writes the reflection, inside one hard time budget.

The ``anthropic`` SDK is imported the first time a reflection is generated, so importing
reflexkit (and the heuristic path, and the CLI) does not pay for it. The client is built with
``max_retries=0``: a :class:`~reflexkit.reflection._retry.RetryPolicy` owns retries, so the
SDK's do not stack on top, and every attempt gets the time left in the budget as its timeout.

Every failure is a :class:`~reflexkit.exceptions.GenerationError` with a stable reason code
(see :data:`REASONS`); a :class:`~reflexkit.reflection.fallback.FallbackGenerator` turns it
into the heuristic reflection with ``fallbackReason`` set. The API key never appears in a
reflection, a log line or an error message: messages are written here, from status codes and
exception class names, never from the request.
"""

from __future__ import annotations

import email.utils
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, get_args

import attrs

from reflexkit._deadline import time_left
from reflexkit.exceptions import GenerationError
from reflexkit.models import FailureContext, Reflection, ReflectionSource, utcnow
from reflexkit.reflection._retry import RetryPolicy, TransientError
from reflexkit.reflection.prompts import (
    DEFAULT_EFFORT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    TOOL_NAME,
    Effort,
    LlmReply,
    OutputMode,
    Prompt,
    ThinkingMode,
    build_prompt,
    parse_reply,
    reflection_from_reply,
    thinking_request,
)

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

__all__ = ["REASONS", "ClaudeGenerator", "Completion"]

log = logging.getLogger("reflexkit.reflection")

REASONS: dict[str, str] = {
    "no_api_key": "no API key or other credential could be resolved (nothing was sent)",
    "llm_auth_failed": "the API rejected the credential (401 or 403)",
    "llm_timeout": "the budget ran out waiting for a reply, or the server answered 408",
    "llm_rate_limited": "429, and no retry fitted in the budget",
    "llm_overloaded": "529 overloaded, and no retry fitted in the budget",
    "llm_server_error": "a 5xx or 409, and no retry fitted in the budget",
    "llm_connection_error": "the connection failed or was dropped",
    "llm_bad_request": "the API rejected the request (another 4xx); not retried",
    "llm_refusal": 'the model declined to answer (stop_reason "refusal")',
    "llm_max_tokens": "the reply was cut off at max_tokens or the context window",
    "llm_invalid_output": "the reply was not JSON, or not the reply schema",
    "llm_api_error": "any other error raised by the SDK",
    "run_budget_spent": "no time was left in the run's budget (orchestrator.runTimeoutS)",
}
"""Every reason code ClaudeGenerator raises, with what it means."""

_MS_PER_S = 1_000


@attrs.frozen(kw_only=True)
class Completion:
    """One successful generation: the reflection and the validated reply behind it.

    Attributes:
        reflection: The reflection, ``source=llm``.
        reply: The model's validated answer (what a fixture records).
        key: The prompt key of the request (see :func:`~reflexkit.reflection.prompts.prompt_key`).
        attempts: How many requests it took.
    """

    reflection: Reflection
    reply: LlmReply
    key: str
    attempts: int


_CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
)


def _credential_possible() -> bool:
    """Whether the SDK could find a credential: conservative, ``True`` when in doubt.

    The SDK reads these variables, then profiles in ``$ANTHROPIC_CONFIG_DIR`` (default
    ``~/.config/anthropic``, ``Anthropic`` under ``%APPDATA%`` on Windows). Only when none
    is set and that folder is absent is it sure that no request can be sent.
    """
    if any(os.environ.get(name) for name in _CREDENTIAL_ENV):
        return True
    folder = os.environ.get("ANTHROPIC_CONFIG_DIR")
    if folder:
        return True
    if sys.platform == "win32":
        return True  # a profile folder in %APPDATA%: let the SDK decide
    try:
        return (Path.home() / ".config" / "anthropic").exists()
    except (OSError, RuntimeError):  # no home folder to look in
        return True


class ClaudeGenerator:
    """A :class:`~reflexkit.reflection.protocols.ReflectionGenerator` backed by Claude.

    Args:
        model: The model to ask.
        api_key: The API key; ``None`` lets the SDK resolve a credential
            (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a profile). With none found,
            :meth:`generate` raises ``no_api_key`` without sending anything.
        base_url: Another endpoint (a proxy, or a fake server in tests).
        timeout_ms: The one overall budget of a generation, retries and waits included.
        retry: How to retry inside the budget (its own ``budget_s`` is replaced by
            *timeout_ms*).
        max_tokens: The most tokens a reply may take, thinking included.
        mode: ``json_schema`` constrains the reply with ``output_config`` (the default);
            ``tool`` forces a tool call instead, for models or gateways without structured
            outputs (the newest models reject forced tool choice).
        thinking: ``auto`` (the default) sends what suits a short structured reply on the
            model: adaptive thinking at *effort*, thinking disabled in ``tool`` mode, and
            nothing on Claude 4.5 and earlier; ``adaptive`` or ``disabled`` are sent as
            given (see :func:`~reflexkit.reflection.prompts.thinking_request`).
        effort: The ``output_config.effort`` level (``low`` by default); ``None`` sends
            none.
        root: The project root, cut from paths in the prompt (see
            :func:`~reflexkit.reflection.prompts.build_prompt`); the current directory by
            default.
        clock: Returns the creation time of a reflection.
    """

    def __init__(  # noqa: PLR0913 -- keyword-only options of one generator
        self,
        *,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_ms: int = 30_000,
        retry: RetryPolicy | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        mode: OutputMode = "json_schema",
        thinking: ThinkingMode = "auto",
        effort: Effort | None = DEFAULT_EFFORT,
        root: str | os.PathLike[str] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        if max_tokens < 1:
            msg = f"max_tokens must be >= 1, got {max_tokens}"
            raise ValueError(msg)
        if timeout_ms < 1:
            msg = f"timeout_ms must be >= 1, got {timeout_ms}"
            raise ValueError(msg)
        if mode not in {"json_schema", "tool"}:
            msg = f"mode must be 'json_schema' or 'tool', got {mode!r}"
            raise ValueError(msg)
        if effort is not None and effort not in get_args(Effort):
            msg = f"effort must be one of {', '.join(get_args(Effort))} or None, got {effort!r}"
            raise ValueError(msg)
        thinking_request(model, mode=mode, thinking=thinking, effort=effort)  # checks thinking
        self.model = model
        self.mode: OutputMode = mode
        self.max_tokens = max_tokens
        self.thinking: ThinkingMode = thinking
        self.effort: Effort | None = effort
        self.timeout_ms = timeout_ms
        self._api_key = api_key
        self._base_url = base_url
        self._retry = (retry or RetryPolicy()).with_budget(timeout_ms / _MS_PER_S)
        self._root = root
        self._clock = clock
        self._client: anthropic.Anthropic | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # the key stays out of reprs, and so out of logs
        return (
            f"ClaudeGenerator(model={self.model!r}, mode={self.mode!r}, "
            f"timeout_ms={self.timeout_ms})"
        )

    def prompt(self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()) -> Prompt:
        """Return the request this generator sends for *failure* (and so its fixture key)."""
        return build_prompt(
            failure,
            model=self.model,
            previous=previous,
            mode=self.mode,
            max_tokens=self.max_tokens,
            thinking=self.thinking,
            effort=self.effort,
            root=self._root,
        )

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Ask Claude for a reflection on *failure*, within ``timeout_ms``.

        Args:
            failure: The (already redacted) failure.
            previous: The subtask's earlier reflections, oldest first.

        Returns:
            The reflection, ``source=llm``, with model, tokens and latency recorded.

        Raises:
            GenerationError: With a reason code from :data:`REASONS`.
        """
        return self.complete(failure, previous=previous).reflection

    def complete(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Completion:
        """Like :meth:`generate`, and also return the validated reply and the prompt key.

        Raises:
            GenerationError: With a reason code from :data:`REASONS`.
        """
        # The first generation of a process imports the SDK, which takes from a few hundred
        # milliseconds to seconds on a loaded machine: a one-time cost of the process, not of
        # this reflection, so the budget starts after it (unless the run's deadline is nearer).
        retry, left = self._retry, time_left()
        if left is None or left >= retry.budget_s:
            client = self._get_client()
            started = time.monotonic()
        else:  # the run's deadline comes first: a hard one, the SDK's first import included
            if left <= 0:
                raise GenerationError("run_budget_spent", "no time left in the run's budget")
            retry, started = retry.with_budget(left), time.monotonic()
            client = self._client_by(started + left)
        prompt = self.prompt(failure, previous=previous)
        attempts = 0

        def attempt(remaining_s: float) -> Message:
            nonlocal attempts
            attempts += 1
            return self._send(client, prompt, remaining_s)

        message = retry.call(attempt, started=started)
        reply = self._reply_of(message)
        latency_ms = round((time.monotonic() - started) * _MS_PER_S)
        reflection = reflection_from_reply(
            reply,
            failure,
            failure_type=prompt.failure_type,
            source=ReflectionSource.LLM,
            model=message.model or self.model,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            latency_ms=latency_ms,
            clock=self._clock,
        )
        log.debug(
            "reflection from %s in %d ms, %d attempt(s), %d+%d tokens",
            reflection.model,
            latency_ms,
            attempts,
            message.usage.input_tokens,
            message.usage.output_tokens,
        )
        return Completion(reflection=reflection, reply=reply, key=prompt.key, attempts=attempts)

    def send(
        self, prompt: Prompt, /, *, retry: RetryPolicy | None = None, started: float | None = None
    ) -> Message:
        """Send any request through this generator's client, retries and error mapping.

        For the other Claude callers of reflexkit (the completion judge, the insights
        analysis): one client, one overall deadline per call, the same reason codes.

        Args:
            prompt: The request (its ``request`` is the keyword arguments of
                ``messages.create``).
            retry: The retry policy and budget; this generator's own by default.
            started: When the budget started (:func:`time.monotonic`); by default once the
                client is built, so the SDK's one-time import is not charged. A caller with
                a hard deadline (the judge in a run's time budget) passes its own start.

        Returns:
            The model's message, not yet validated: the caller reads its own schema.

        Raises:
            GenerationError: With a reason code from :data:`REASONS`.
        """
        policy = retry if retry is not None else self._retry
        if started is None:
            client = self._get_client()
            started = time.monotonic()
        else:
            client = self._client_by(started + policy.budget_s)
        return policy.call(
            lambda remaining_s: self._send(client, prompt, remaining_s), started=started
        )

    def close(self) -> None:
        """Close the HTTP connections of the client, if one was built."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------------

    def _client_by(self, deadline: float) -> anthropic.Anthropic:
        """The client, built by *deadline* (a monotonic time) or ``llm_timeout``.

        The SDK's first import can take seconds on a loaded machine; it runs in a worker
        thread, so a caller with a hard deadline never waits past it (the import goes on and
        the next call finds the client ready).
        """
        with self._lock:
            if self._client is not None:
                return self._client
        built: list[anthropic.Anthropic | BaseException] = []
        done = threading.Event()

        def build() -> None:
            try:
                built.append(self._get_client())
            except BaseException as err:  # noqa: BLE001 -- handed to the caller's thread
                built.append(err)
            finally:
                done.set()

        threading.Thread(target=build, name="reflexkit-claude-client", daemon=True).start()
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            raise GenerationError(
                "llm_timeout", "the Anthropic SDK was not loaded within the budget"
            )
        result = built[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _get_client(self) -> anthropic.Anthropic:
        with self._lock:
            if self._client is None:
                self._client = self._build_client()
            return self._client

    def _build_client(self) -> anthropic.Anthropic:
        if self._api_key is None and not _credential_possible():
            # Importing the SDK costs more than a second; with nothing to send, skip it.
            raise GenerationError(
                "no_api_key", "no credential in the environment or the SDK's config folder"
            )
        import anthropic  # noqa: PLC0415 -- only the LLM path pays for the SDK import

        try:
            return anthropic.Anthropic(
                api_key=self._api_key, base_url=self._base_url, max_retries=0
            )
        except anthropic.CredentialsError as err:
            raise GenerationError(
                "no_api_key", f"no usable credential ({type(err).__name__})"
            ) from None

    def _send(self, client: anthropic.Anthropic, prompt: Prompt, remaining_s: float) -> Message:
        """Make one request that ends by *remaining_s* from now, whatever the server does.

        The SDK's timeout is per connect and per read: a reply that arrives in slow pieces
        resets it with every piece and can take many times the budget. So the request runs
        in a worker thread and this call waits for it until the deadline, no longer. A
        request left behind ends on its own (its reply arrives, or a read waits longer than
        *remaining_s*); its result is dropped.
        """
        outcome: list[Message | BaseException] = []
        done = threading.Event()

        def request() -> None:
            try:
                outcome.append(self._request(client, prompt, remaining_s))
            except BaseException as err:  # noqa: BLE001 -- handed to the caller's thread
                outcome.append(err)
            finally:
                done.set()

        threading.Thread(target=request, name="reflexkit-claude-request", daemon=True).start()
        if not done.wait(remaining_s):
            raise TransientError(
                "llm_timeout", f"no complete reply within {remaining_s * _MS_PER_S:.0f} ms"
            )
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _request(self, client: anthropic.Anthropic, prompt: Prompt, remaining_s: float) -> Message:
        """Make one request with *remaining_s* as its timeout; map failures to reason codes."""
        import anthropic  # noqa: PLC0415 -- already loaded by _build_client

        try:
            message: Message = client.messages.create(**prompt.request, timeout=remaining_s)
        except TypeError as err:
            # The SDK raises TypeError, not an API error, when no credential resolves.
            if "authentication" not in str(err):
                raise
            raise GenerationError(
                "no_api_key",
                "no API key: set ANTHROPIC_API_KEY or pass api_key (nothing was sent)",
            ) from None
        except anthropic.CredentialsError as err:
            raise GenerationError(
                "no_api_key", f"no usable credential ({type(err).__name__})"
            ) from None
        except anthropic.APITimeoutError:
            raise TransientError(
                "llm_timeout", f"no reply within {remaining_s * _MS_PER_S:.0f} ms"
            ) from None
        except anthropic.APIConnectionError as err:
            cause = type(err.__cause__).__name__ if err.__cause__ else type(err).__name__
            raise TransientError("llm_connection_error", f"connection failed ({cause})") from None
        except anthropic.APIStatusError as err:
            raise _status_error(err.status_code, err.response.headers, err.type) from None
        except anthropic.AnthropicError as err:
            raise GenerationError("llm_api_error", type(err).__name__) from None
        return message

    def _reply_of(self, message: Message) -> LlmReply:
        """Validate a reply: a refusal, a cut-off reply or bad JSON is an error."""
        if message.stop_reason == "refusal":
            raise GenerationError("llm_refusal", "the model declined to write a reflection")
        if message.stop_reason in {"max_tokens", "model_context_window_exceeded"}:
            raise GenerationError(
                "llm_max_tokens",
                f"the reply was cut off ({message.stop_reason}, max_tokens={self.max_tokens})",
            )
        if self.mode == "tool":
            for block in message.content:
                if block.type == "tool_use" and block.name == TOOL_NAME:
                    return parse_reply(block.input, source="tool input")
            raise GenerationError("llm_invalid_output", f"the reply has no {TOOL_NAME} call")
        # Thinking blocks may come first: the answer is the text blocks, wherever they are.
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text.strip():
            raise GenerationError("llm_invalid_output", "the reply has no text")
        return parse_reply(text)


_REASON_BY_STATUS = {408: "llm_timeout", 409: "llm_server_error", 429: "llm_rate_limited"}
_OVERLOADED = 529
_SERVER_ERROR = 500
_CLIENT_ERROR = 400


def _status_error(status: int, headers: Any, error_type: str | None) -> GenerationError:  # noqa: ANN401 -- httpx2 headers
    """Map an HTTP error status to a reason code; retryable ones carry ``Retry-After``."""
    label = f"HTTP {status}" + (f" {error_type}" if error_type else "")
    reason = _REASON_BY_STATUS.get(status)
    if reason is None and (status == _OVERLOADED or error_type == "overloaded_error"):
        reason = "llm_overloaded"
    if reason is None and status >= _SERVER_ERROR:
        reason = "llm_server_error"
    if reason is not None:
        return TransientError(reason, label, retry_after_s=_retry_after_s(headers))
    if status in {401, 403}:
        return GenerationError("llm_auth_failed", label)
    return GenerationError("llm_bad_request" if status >= _CLIENT_ERROR else "llm_api_error", label)


def _retry_after_s(headers: Any) -> float | None:  # noqa: ANN401 -- httpx2 headers
    """Read ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date), in seconds.

    A value that is not a finite number or a valid date (``nan``, ``inf``, ``soon``) counts
    as absent: the server's hint is advice, and garbage in it must not stop a generation.
    """
    millis = _finite_seconds(headers.get("retry-after-ms"), scale=1 / _MS_PER_S)
    if millis is not None:
        return millis
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _finite_seconds(value, scale=1.0)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - time.time(), 0.0)


def _finite_seconds(value: str | None, *, scale: float) -> float | None:
    """Return *value* times *scale* when it is a finite number, at least 0; else ``None``."""
    if value is None:
        return None
    try:
        seconds = float(value) * scale
    except ValueError:
        return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None
