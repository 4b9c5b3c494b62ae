"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1, scripted per test.

The real ``anthropic`` client reaches it through ``base_url``, so tests exercise the SDK's
own request building, headers, timeouts and error classes (``respx`` can't see the SDK's
``httpx2``). Each ``POST /v1/messages`` is recorded and answered by the next scripted
response, in order::

    with FakeMessagesApi() as api:
        api.overloaded().reply({"category": "root_cause", ...})
        gen = ClaudeGenerator(Claude(base_url=api.url, api_key="k", retry=NO_WAIT))
        gen.generate(failure)
        assert len(api.requests) == 2

A scripted response is anything with a ``serve(exchange)`` method (see :class:`Scripted`),
so new kinds, such as a server-sent event stream for Claude Code, are added without
touching the server. When the script runs out, the server answers 400 so a test that sends
more than it scripted fails loudly. A standing rule answers by a predicate on the request
instead of in order (``api.when(lambda r: "lesson" in r.text, reply_with(...))``), and
:class:`~reflexkit.testing.fake_openai_api.FakeOpenAIApi` is the same server for
OpenAI-compatible agents.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any, Self, TypedDict, Unpack

import attrs
import orjson

from reflexkit.llm import DEFAULT_MODEL
from reflexkit.reflection._prompts import TOOL_NAME
from reflexkit.testing._fake_server import (
    Exchange,
    FakeApi,
    Hang,
    RecordedRequest,
    Reply,
    Scripted,
)

__all__ = [
    "Conversation",
    "Exchange",
    "FakeMessagesApi",
    "MessageFields",
    "RecordedRequest",
    "Scripted",
    "error_json",
    "message_json",
    "reply_with",
    "sse_events",
    "tool_reply_with",
    "tool_use",
]

MESSAGES_PATH = "/v1/messages"


# --- response bodies --------------------------------------------------------------------------


class MessageFields(TypedDict, total=False):
    """Optional fields of a scripted reply (see :func:`message_json`)."""

    stop_reason: str
    model: str
    input_tokens: int
    output_tokens: int


def message_json(
    content: Iterable[Mapping[str, Any]],
    *,
    stop_details: Mapping[str, Any] | None = None,
    **fields: Unpack[MessageFields],
) -> dict[str, Any]:
    """Return the JSON of a Messages API reply with the given content blocks."""
    return {
        "id": "msg_fake_01",
        "type": "message",
        "role": "assistant",
        "model": fields.get("model", DEFAULT_MODEL),
        "content": [dict(block) for block in content],
        "stop_reason": fields.get("stop_reason", "end_turn"),
        "stop_sequence": None,
        "stop_details": dict(stop_details) if stop_details is not None else None,
        "usage": {
            "input_tokens": fields.get("input_tokens", 812),
            "output_tokens": fields.get("output_tokens", 164),
        },
    }


def reply_with(data: object, **fields: Unpack[MessageFields]) -> dict[str, Any]:
    """Return a structured-output reply: *data* serialised as the JSON text of one text block.

    Args:
        data: The JSON object the model "wrote".
        **fields: Passed to :func:`message_json` (``model``, ``input_tokens`` ...).
    """
    return message_json([{"type": "text", "text": orjson.dumps(data).decode()}], **fields)


def tool_reply_with(
    data: Mapping[str, Any], *, name: str = TOOL_NAME, **fields: Unpack[MessageFields]
) -> dict[str, Any]:
    """Return a forced-tool reply: one ``tool_use`` block whose input is *data*."""
    block = {"type": "tool_use", "id": "toolu_fake_01", "name": name, "input": dict(data)}
    fields.setdefault("stop_reason", "tool_use")
    return message_json([block], **fields)


def sse_events(message: Mapping[str, Any]) -> bytes:
    """Return a reply as the server-sent events of a streamed response (``"stream": true``).

    The same message, in the order the Messages API streams it: ``message_start``, then per
    content block ``content_block_start``, one delta (``text_delta`` or
    ``input_json_delta``) and ``content_block_stop``, then ``message_delta`` (stop reason,
    output tokens) and ``message_stop``.
    """

    def event(name: str, data: Mapping[str, Any]) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 0}
    out = [event("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        if block.get("type") == "tool_use":
            opening = {**block, "input": {}}
            delta = {
                "type": "input_json_delta",
                "partial_json": orjson.dumps(block.get("input", {})).decode(),
            }
        else:
            opening = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        out += [
            event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            ),
            event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            event("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    stop = {
        "stop_reason": message.get("stop_reason"),
        "stop_sequence": message.get("stop_sequence"),
    }
    out += [
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": stop,
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(out)


def error_json(error_type: str, message: str) -> dict[str, Any]:
    """Return the JSON of a Messages API error (``{"type": "error", "error": {...}}``)."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


@attrs.frozen
class _Reply(Reply):
    def streamed(self, exchange: Exchange, /) -> bool:
        """A message asked for with ``"stream": true`` goes as server-sent events."""
        asked = exchange.request.json
        if self.status == HTTPStatus.OK and isinstance(asked, dict) and asked.get("stream") is True:
            with contextlib.suppress(orjson.JSONDecodeError):
                message = orjson.loads(self.body)
                if isinstance(message, dict) and message.get("type") == "message":
                    exchange.start_stream(200, {"content-type": "text/event-stream"})
                    exchange.write(sse_events(message))
                    return True
        return False


@attrs.frozen
class _Trickle:
    """A complete reply whose body arrives in small pieces, *interval_s* apart."""

    message: dict[str, Any]
    pieces: int
    interval_s: float

    def serve(self, exchange: Exchange, /) -> None:
        asked = exchange.request.json
        if isinstance(asked, dict) and asked.get("stream") is True:
            body = sse_events(self.message)
            exchange.start_stream(200, {"content-type": "text/event-stream"})
        else:
            body = orjson.dumps(self.message)
            exchange.start_body(200, len(body))
        size = max(len(body) // self.pieces, 1)
        for start in range(0, len(body), size):
            if exchange.stopping.wait(self.interval_s):
                exchange.drop()
                return
            try:
                exchange.write(body[start : start + size])
            except OSError:  # the client gave up, as a client with a deadline should
                return


_TOOL_IDS = itertools.count(1)


def tool_use(name: str, tool_input: Mapping[str, Any], *, id_: str | None = None) -> dict[str, Any]:
    """Return an agent turn that calls one tool (``stop_reason: "tool_use"``).

    Each turn gets its own ``toolu_fake_<n>`` id unless *id_* is given.
    """
    block = {
        "type": "tool_use",
        "id": id_ or f"toolu_fake_{next(_TOOL_IDS):04d}",
        "name": name,
        "input": dict(tool_input),
    }
    return message_json([block], stop_reason="tool_use")


class Conversation:
    """The model's side of an agent session, such as Claude Code's, one scripted turn a request.

    A request that offers tools is the agent's own turn and gets the next scripted message
    (see :func:`tool_use`); other requests (a session title, a summary) come in no fixed
    order and get a short text. After the last turn every request gets the short text.
    Replies are streamed when the request asks for a stream, as the CLI does.

    Args:
        *turns: The agent's turns, in order.
        then_hang: After the last turn, leave the agent's requests unanswered this long
            (an API that stopped answering mid-session) instead of a short text.

    Attributes:
        served: How many scripted turns were sent.
    """

    def __init__(self, *turns: Mapping[str, Any], then_hang: float | None = None) -> None:
        self._turns = [dict(turn) for turn in turns]
        self._then_hang = then_hang
        self._lock = threading.Lock()
        self.served = 0

    def serve(self, exchange: Exchange, /) -> None:
        """Send the next turn to an agent request, a short text to any other."""
        asked = exchange.request.json if isinstance(exchange.request.json, dict) else {}
        message = message_json([{"type": "text", "text": "ok"}])
        with self._lock:
            hang = bool(asked.get("tools")) and not self._turns and self._then_hang is not None
            if asked.get("tools") and self._turns:
                message = self._turns.pop(0)
                self.served += 1
        if hang and self._then_hang is not None:
            Hang(self._then_hang).serve(exchange)
            return
        if asked.get("stream") is True:
            exchange.start_stream(200, {"content-type": "text/event-stream"})
            exchange.write(sse_events(message))
        else:
            exchange.send(200, orjson.dumps(message))


class FakeMessagesApi(FakeApi):
    """A scripted Messages API on 127.0.0.1, for the real ``anthropic`` client.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Scripting methods
    return the server, so a test chains them in the order the replies are wanted;
    :meth:`~reflexkit.testing.FakeApi.when` answers by a predicate on the request instead.

    Args:
        host: The address to listen on.
        port: The port; 0 picks a free one.

    Attributes:
        requests: Every request received, in order.
    """

    scripted_paths = (MESSAGES_PATH,)
    label = "fake Messages API"
    reply_type = _Reply

    def _warm_up(self) -> None:
        """Load the anthropic SDK and build a first client.

        A client's budget covers that (seconds on a loaded machine), which the first call of a
        test would otherwise pay.
        """
        import anthropic  # noqa: PLC0415 -- loaded once per process, outside any budget

        anthropic.Anthropic(api_key="warm-up", base_url="http://127.0.0.1:9").close()

    def _error(self, status: int, message: str) -> Scripted:
        kind = "not_found_error" if status == HTTPStatus.NOT_FOUND else "invalid_request_error"
        return _Reply(status, orjson.dumps(error_json(kind, message)), {})

    # --- scripting ---

    def reply(self, data: object, **fields: Unpack[MessageFields]) -> Self:
        """Script a structured-output reply: *data* as JSON text (see :func:`reply_with`)."""
        return self.enqueue(json=reply_with(data, **fields))

    def reply_tool(
        self, data: Mapping[str, Any], *, name: str = TOOL_NAME, **fields: Unpack[MessageFields]
    ) -> Self:
        """Script a forced-tool reply: one ``tool_use`` block with *data* as its input."""
        return self.enqueue(json=tool_reply_with(data, name=name, **fields))

    def reply_text(self, text: str, *, stop_reason: str = "end_turn") -> Self:
        """Script a reply with one text block, as the model wrote it."""
        return self.enqueue(
            json=message_json([{"type": "text", "text": text}], stop_reason=stop_reason)
        )

    def invalid_json(self) -> Self:
        """Script a reply whose text is not JSON."""
        return self.reply_text("Here is my reflection: the test failed because of a typo.")

    def refusal(self) -> Self:
        """Script a refusal: ``stop_reason: "refusal"`` and no content."""
        details = {"type": "refusal", "category": None, "explanation": None}
        return self.enqueue(json=message_json([], stop_reason="refusal", stop_details=details))

    def max_tokens(self) -> Self:
        """Script a reply cut off at ``max_tokens``: half a JSON object."""
        return self.reply_text(
            '{"category": "root_cause", "analysis": "The te', stop_reason="max_tokens"
        )

    def error(
        self,
        status: int,
        error_type: str = "api_error",
        message: str = "Internal server error",
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        """Script an HTTP error with the API's error body."""
        return self.enqueue(status=status, json=error_json(error_type, message), headers=headers)

    def rate_limited(
        self, *, retry_after_s: float | None = None, retry_after_ms: float | None = None
    ) -> Self:
        """Script a 429, with ``retry-after`` (seconds) and/or ``retry-after-ms`` when given."""
        headers: dict[str, str] = {}
        if retry_after_s is not None:
            headers["retry-after"] = f"{retry_after_s:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return self.error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
            headers=headers,
        )

    def server_error(self, status: int = 500) -> Self:
        """Script a 5xx ``api_error``."""
        return self.error(status, "api_error", "Internal server error")

    def overloaded(self) -> Self:
        """Script a 529 ``overloaded_error``."""
        return self.error(529, "overloaded_error", "Overloaded")

    def trickle(
        self, data: object, *, seconds: float, pieces: int = 20, **fields: Unpack[MessageFields]
    ) -> Self:
        """Script a valid reply (see :func:`reply_with`) that takes *seconds* to arrive.

        The headers come at once; the body follows in *pieces* small writes spread over
        *seconds*, so no single read waits long: only an overall deadline stops it early.
        A streamed request gets the same reply as server-sent events, equally slow.
        """
        pieces = max(pieces, 1)
        return self.enqueue(_Trickle(reply_with(data, **fields), pieces, seconds / pieces))

    def converse(
        self, *turns: Mapping[str, Any], requests: int = 40, then_hang: float | None = None
    ) -> Conversation:
        """Script an agent session: *turns* in order, shared by the next *requests* requests.

        Args:
            *turns: The agent's turns (see :func:`tool_use`, :func:`message_json`).
            requests: How many requests the conversation answers.
            then_hang: See :class:`Conversation`.

        Returns:
            The :class:`Conversation`, to see how many turns were served.
        """
        conversation = Conversation(*turns, then_hang=then_hang)
        for _ in range(requests):
            self.enqueue(conversation)
        return conversation
