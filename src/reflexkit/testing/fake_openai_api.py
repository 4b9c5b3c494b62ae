"""A fake OpenAI-compatible API (Chat Completions and Responses) for testing any agent.

Most coding agents (aider, codex, mini-swe-agent, opencode, anything built on LiteLLM or the
``openai`` SDK) talk to a model through an OpenAI-compatible API: point their base URL (for
example ``OPENAI_BASE_URL`` or ``OPENAI_API_BASE``) at :attr:`FakeOpenAIApi.url` + ``/v1``
and they run against a scripted model on 127.0.0.1. A :class:`Turn` is the model's reply,
text and/or tool calls, answered in the shape of whichever endpoint was asked (``POST
/v1/chat/completions`` or ``POST /v1/responses``), as server-sent events when the request
asks for a stream::

    with FakeOpenAIApi() as api:
        api.when(lambda r: "Learning from Previous Failures" in r.text, Turn(text=FIXED))
        api.when(lambda r: True, Turn(text=BROKEN))
        run_the_agent(base_url=api.url + "/v1")

Rules (:meth:`~reflexkit.testing.FakeApi.when`) answer by a predicate on the request; the
script (:meth:`~reflexkit.testing.FakeApi.enqueue`, :meth:`FakeOpenAIApi.reply`) answers in
order. ``GET /v1/models`` lists :attr:`FakeOpenAIApi.model`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from http import HTTPStatus
from typing import Any, Self

import attrs
import orjson

from reflexkit.testing._fake_server import (
    Exchange,
    FakeApi,
    RecordedRequest,
    Reply,
    Scripted,
)

__all__ = [
    "FakeOpenAIApi",
    "ToolCall",
    "Turn",
    "chat_chunks",
    "chat_completion_json",
    "openai_error_json",
    "response_events",
    "response_json",
]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")
MODELS_PATHS = ("/v1/models", "/models")
FAKE_MODEL = "fake-model"

_IDS = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_fake_{next(_IDS):04d}"


def openai_error_json(message: str, error_type: str = "invalid_request_error") -> dict[str, Any]:
    """Return the JSON of an OpenAI-style error (``{"error": {"message": ..., "type": ...}}``)."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}


@attrs.frozen
class ToolCall:
    """One call of a tool (a function) by the model.

    Attributes:
        name: The tool's name, as the agent offered it (``shell``, ``bash`` ...).
        arguments: Its arguments: a JSON object, or the JSON text itself.
        call_id: The call's id; a fresh one when empty.
    """

    name: str
    arguments: Mapping[str, Any] | str = attrs.field(factory=dict)
    call_id: str = ""

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON text the wire carries."""
        if isinstance(self.arguments, str):
            return self.arguments
        return orjson.dumps(dict(self.arguments)).decode()


# --- Chat Completions -----------------------------------------------------------------------------


def chat_completion_json(
    text: str | None = None,
    calls: Sequence[ToolCall] = (),
    *,
    model: str = FAKE_MODEL,
    prompt_tokens: int = 812,
    completion_tokens: int = 164,
) -> dict[str, Any]:
    """Return the JSON of a Chat Completions reply: *text* and/or tool *calls*."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id or _next_id("call"),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for call in calls
        ]
    return {
        "id": _next_id("chatcmpl"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _sse_data(data: object) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def chat_chunks(completion: Mapping[str, Any], *, include_usage: bool = True) -> bytes:
    """Return a Chat Completions reply as the server-sent events of a stream.

    The role, the text, each tool call (its name, then its arguments), the finish reason, a
    usage chunk (when *include_usage*: ``stream_options.include_usage``), then ``[DONE]``.
    """
    head = {key: completion[key] for key in ("id", "created", "model") if key in completion}
    head["object"] = "chat.completion.chunk"
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        choices = [{"index": 0, "delta": dict(delta), "finish_reason": finish, "logprobs": None}]
        return _sse_data({**head, "choices": choices})

    out = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        out.append(chunk({"content": message["content"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        opening = {
            "index": index,
            "id": call.get("id"),
            "type": "function",
            "function": {"name": function.get("name"), "arguments": ""},
        }
        out.append(chunk({"tool_calls": [opening]}))
        arguments = {"index": index, "function": {"arguments": function.get("arguments", "")}}
        out.append(chunk({"tool_calls": [arguments]}))
    out.append(chunk({}, choice.get("finish_reason") or "stop"))
    if include_usage and completion.get("usage"):
        out.append(_sse_data({**head, "choices": [], "usage": completion["usage"]}))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


# --- Responses ------------------------------------------------------------------------------------


def _output_items(text: str | None, calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if text:
        items.append(
            {
                "type": "message",
                "id": _next_id("msg"),
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    items.extend(
        {
            "type": "function_call",
            "id": _next_id("fc"),
            "call_id": call.call_id or _next_id("call"),
            "name": call.name,
            "arguments": call.arguments_json,
            "status": "completed",
        }
        for call in calls
    )
    return items


def response_json(
    text: str | None = None,
    calls: Sequence[ToolCall] = (),
    *,
    model: str = FAKE_MODEL,
    input_tokens: int = 812,
    output_tokens: int = 164,
) -> dict[str, Any]:
    """Return the JSON of a Responses API reply: a message with *text* and/or *calls*."""
    return {
        "id": _next_id("resp"),
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": _output_items(text, calls),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def _item_events(index: int, item: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The events that stream one output item, from ``added`` to ``done``."""
    where = {"output_index": index, "item_id": item.get("id")}
    if item.get("type") == "message":
        yield "response.output_item.added", {"output_index": index, "item": {**item, "content": []}}
        for part_index, part in enumerate(item.get("content") or []):
            at = {**where, "content_index": part_index}
            empty = {**part, "text": ""}
            yield "response.content_part.added", {**at, "part": empty}
            yield "response.output_text.delta", {**at, "delta": part.get("text", "")}
            yield "response.output_text.done", {**at, "text": part.get("text", "")}
            yield "response.content_part.done", {**at, "part": dict(part)}
    elif item.get("type") == "function_call":
        opening = {**item, "arguments": "", "status": "in_progress"}
        yield "response.output_item.added", {"output_index": index, "item": opening}
        arguments = item.get("arguments", "")
        yield "response.function_call_arguments.delta", {**where, "delta": arguments}
        yield "response.function_call_arguments.done", {**where, "arguments": arguments}
    else:
        yield "response.output_item.added", {"output_index": index, "item": dict(item)}
    yield "response.output_item.done", {"output_index": index, "item": dict(item)}


def response_events(response: Mapping[str, Any]) -> bytes:
    """Return a Responses API reply as the server-sent events of a stream.

    ``response.created`` and ``response.in_progress`` (no output yet), per output item its
    ``added``, delta and ``done`` events, then ``response.completed`` with the whole reply.
    """
    sequence = itertools.count()

    def event(name: str, data: Mapping[str, Any]) -> bytes:
        body = {"type": name, "sequence_number": next(sequence), **data}
        return b"event: " + name.encode() + b"\n" + _sse_data(body)

    started = {**response, "status": "in_progress", "output": [], "usage": None}
    out = [
        event("response.created", {"response": started}),
        event("response.in_progress", {"response": started}),
    ]
    for index, item in enumerate(response.get("output") or []):
        out.extend(event(name, data) for name, data in _item_events(index, item))
    out.append(event("response.completed", {"response": dict(response)}))
    return b"".join(out)


# --- answers --------------------------------------------------------------------------------------


def _asks_stream(request: RecordedRequest) -> bool:
    return isinstance(request.json, dict) and request.json.get("stream") is True


def _include_usage(request: RecordedRequest) -> bool:
    asked = request.json if isinstance(request.json, dict) else {}
    options = asked.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def _send(exchange: Exchange, data: Mapping[str, Any]) -> None:
    """Send a reply's JSON, as a stream of its own kind when the request asks for one."""
    request = exchange.request
    if _asks_stream(request) and data.get("object") == "chat.completion":
        exchange.stream(chat_chunks(data, include_usage=_include_usage(request)))
    elif _asks_stream(request) and data.get("object") == "response":
        exchange.stream(response_events(data))
    else:
        exchange.send_json(200, data)


def _calls(calls: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(calls)


@attrs.frozen
class Turn:
    """One reply of the model, in the shape of the endpoint asked, streamed when asked.

    Attributes:
        text: What the model says (none when empty).
        calls: The tools it calls.
        model: The model named in the reply; the request's own when empty.
    """

    text: str = ""
    calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_calls)
    model: str = ""

    def json_for(self, request: RecordedRequest) -> dict[str, Any]:
        """The reply's JSON for *request*'s endpoint (Responses, else Chat Completions)."""
        asked = request.json if isinstance(request.json, dict) else {}
        model = self.model or str(asked.get("model") or FAKE_MODEL)
        if request.route in RESPONSES_PATHS:
            return response_json(self.text or None, self.calls, model=model)
        return chat_completion_json(self.text or None, self.calls, model=model)

    def serve(self, exchange: Exchange, /) -> None:
        """Answer the request with this turn."""
        _send(exchange, self.json_for(exchange.request))


@attrs.frozen
class _Reply(Reply):
    def streamed(self, exchange: Exchange, /) -> bool:
        """A completion or response asked for as a stream goes as server-sent events."""
        if self.status == HTTPStatus.OK and _asks_stream(exchange.request):
            try:
                data = orjson.loads(self.body)
            except orjson.JSONDecodeError:
                data = None
            if isinstance(data, dict) and data.get("object") in {"chat.completion", "response"}:
                _send(exchange, data)
                return True
        return False


@attrs.frozen
class _Models:
    model: str

    def serve(self, exchange: Exchange, /) -> None:
        entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "reflexkit"}
        exchange.send_json(200, {"object": "list", "data": [entry]})


class FakeOpenAIApi(FakeApi):
    """A scripted OpenAI-compatible API on 127.0.0.1 (Chat Completions and Responses).

    Give agents ``url + "/v1"`` as their base URL. Each reply is a :class:`Turn` (or any
    :class:`~reflexkit.testing.Scripted`); :meth:`when` answers by a predicate on the
    request, the script in order. Use it as a context manager, or call :meth:`start` and
    :meth:`stop`.

    Args:
        host: The address to listen on.
        port: The port; 0 picks a free one.
        model: The model ``GET /v1/models`` lists.

    Attributes:
        requests: Every request received, in order.
    """

    scripted_paths = CHAT_PATHS + RESPONSES_PATHS
    label = "fake OpenAI API"
    reply_type = _Reply

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, model: str = FAKE_MODEL) -> None:
        super().__init__(host=host, port=port)
        self.model = model

    def _error(self, status: int, message: str) -> Scripted:
        return _Reply(status, orjson.dumps(openai_error_json(message)), {})

    def _unrouted(self, request: RecordedRequest) -> Scripted:
        if request.method == "GET" and request.route in MODELS_PATHS:
            return _Models(self.model)
        return self._error(404, "Not found")

    def reply(self, text: str = "", *calls: ToolCall) -> Self:
        """Script the next reply: *text* and/or tool *calls* (see :class:`Turn`)."""
        return self.enqueue(Turn(text=text, calls=calls))

    def error(
        self,
        status: int,
        message: str = "The server had an error",
        kind: str = "server_error",
    ) -> Self:
        """Script an HTTP error with an OpenAI-style error body."""
        return self.enqueue(status=status, json=openai_error_json(message, kind))
