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
more than it scripted fails loudly.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol, Self, TypedDict, Unpack

import attrs
import orjson

from reflexkit.llm import DEFAULT_MODEL
from reflexkit.reflection.prompts import TOOL_NAME

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


def message_json(  # noqa: PLR0913 -- the fields of a Message a test may want to set
    content: Iterable[Mapping[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = DEFAULT_MODEL,
    input_tokens: int = 812,
    output_tokens: int = 164,
    stop_details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the JSON of a Messages API reply with the given content blocks."""
    return {
        "id": "msg_fake_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": dict(stop_details) if stop_details is not None else None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


class MessageFields(TypedDict, total=False):
    """Optional fields of a scripted reply (see :func:`message_json`)."""

    stop_reason: str
    model: str
    input_tokens: int
    output_tokens: int


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


# --- what the server got ------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RecordedRequest:
    """One request the fake server received.

    Attributes:
        method: ``POST``, ``GET`` ...
        path: The request path, query included.
        headers: The headers, names in lower case.
        body: The raw body.
        json: The parsed JSON body, or ``None`` when it was not JSON.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any


class Exchange:
    """One request in flight, as a scripted response sees it: read the request, write a reply.

    Attributes:
        request: The recorded request.
        stopping: Set when the server stops; a response that waits must wait on it.
    """

    def __init__(
        self, handler: BaseHTTPRequestHandler, request: RecordedRequest, stopping: threading.Event
    ) -> None:
        self._handler = handler
        self.request = request
        self.stopping = stopping

    def send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        """Send a complete response with a ``Content-Length``."""
        handler = self._handler
        handler.send_response(status)
        merged = {
            "content-type": "application/json",
            "request-id": "req_fake_01",
            **(headers or {}),
        }
        for name, value in merged.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()

    def start_stream(self, status: int, headers: Mapping[str, str]) -> None:
        """Send status and headers of a response whose body follows in :meth:`write` calls."""
        handler = self._handler
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.close_connection = True

    def start_body(self, status: int, length: int) -> None:
        """Send status and headers of a JSON body of *length* bytes that follows in writes."""
        handler = self._handler
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("request-id", "req_fake_01")
        handler.send_header("content-length", str(length))
        handler.end_headers()
        handler.wfile.flush()

    def write(self, chunk: bytes) -> None:
        """Write part of a streamed body and flush it to the client."""
        self._handler.wfile.write(chunk)
        self._handler.wfile.flush()

    def drop(self) -> None:
        """Close the connection at once, without a response."""
        self._handler.close_connection = True
        with contextlib.suppress(OSError):
            self._handler.connection.shutdown(socket.SHUT_RDWR)


class Scripted(Protocol):
    """**Protocol**: one scripted answer to one request."""

    def serve(self, exchange: Exchange, /) -> None:
        """Answer the request of *exchange*."""
        ...


@attrs.frozen
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str]
    delay_s: float = 0.0

    def serve(self, exchange: Exchange, /) -> None:
        if self.delay_s and exchange.stopping.wait(self.delay_s):
            exchange.drop()
            return
        asked = exchange.request.json
        if self.status == HTTPStatus.OK and isinstance(asked, dict) and asked.get("stream") is True:
            with contextlib.suppress(orjson.JSONDecodeError):
                message = orjson.loads(self.body)
                if isinstance(message, dict) and message.get("type") == "message":
                    exchange.start_stream(200, {"content-type": "text/event-stream"})
                    exchange.write(sse_events(message))
                    return
        exchange.send(self.status, self.body, self.headers)


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
            _Hang(self._then_hang).serve(exchange)
            return
        if asked.get("stream") is True:
            exchange.start_stream(200, {"content-type": "text/event-stream"})
            exchange.write(sse_events(message))
        else:
            exchange.send(200, orjson.dumps(message))


@attrs.frozen
class _Hang:
    seconds: float

    def serve(self, exchange: Exchange, /) -> None:
        exchange.stopping.wait(self.seconds)  # returns early when the server stops
        exchange.drop()


@attrs.frozen
class _Drop:
    def serve(self, exchange: Exchange, /) -> None:
        exchange.drop()


# --- the server --------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real API
    disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart
    server: _Server

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            json=parsed,
        )
        api = self.server.api
        scripted = api._take(request)  # noqa: SLF001 -- the server belongs to the api
        scripted.serve(Exchange(self, request, api._stopping))  # noqa: SLF001

    def setup(self) -> None:
        super().setup()
        self.server.api._track(self.connection, open_=True)  # noqa: SLF001

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.api._track(self.connection, open_=False)  # noqa: SLF001

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002, ANN401 -- stdlib's signature
        """Stay quiet: tests read :attr:`FakeMessagesApi.requests` instead."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() closes the connections itself

    def __init__(self, address: tuple[str, int], api: FakeMessagesApi) -> None:
        self.api = api
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: ANN401
        """Ignore clients that went away (timeouts, drops); that is what tests provoke."""


class FakeMessagesApi:
    """A scripted Messages API on 127.0.0.1, for the real ``anthropic`` client.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Scripting methods
    return the server, so a test chains them in the order the replies are wanted.

    Args:
        host: The address to listen on.
        port: The port; 0 picks a free one.

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []

    # --- lifecycle ---

    def start(self) -> Self:
        """Start serving in a background thread.

        The anthropic SDK is loaded here too (imported, and a first client built): a client's
        budget covers that (seconds on a loaded machine), which the first call of a test would
        otherwise pay.
        """
        if self._server is not None:
            return self
        import anthropic  # noqa: PLC0415 -- loaded once per process, outside any budget

        anthropic.Anthropic(api_key="warm-up", base_url="http://127.0.0.1:9").close()
        self._stopping.clear()
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="fake-messages-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake hanging responses, close every connection, free the port."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL to give the client (``http://127.0.0.1:<port>``)."""
        if self._server is None:
            msg = "the fake Messages API is not running: call start() or use it in a with block"
            raise RuntimeError(msg)
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- scripting ---

    def enqueue(  # noqa: PLR0913 -- the parts of an HTTP response
        self,
        scripted: Scripted | None = None,
        /,
        *,
        status: int = 200,
        json: object = None,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> Self:
        """Script the next response: a :class:`Scripted` object, or an HTTP response.

        Args:
            scripted: A custom response (for example a stream); the other arguments are then
                ignored.
            status: The HTTP status.
            json: A JSON body (see :func:`reply_with`, :func:`error_json`).
            body: A raw body, when *json* is not given.
            headers: Extra response headers.
            delay_s: Wait this long before answering.
        """
        if scripted is None:
            if body is None:
                body = orjson.dumps(json) if json is not None else b""
            scripted = _Reply(status, body, dict(headers or {}), delay_s)
        with self._lock:
            self._script.append(scripted)
        return self

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

    def hang(self, seconds: float = 30.0) -> Self:
        """Script a request that gets no answer for *seconds*, then a closed connection.

        Stopping the server ends the wait at once.
        """
        return self.enqueue(_Hang(seconds))

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

    def drop(self) -> Self:
        """Script a connection closed without a response."""
        return self.enqueue(_Drop())

    def reset(self) -> Self:
        """Forget the scripted responses not yet served and the requests received.

        For a server shared by several tests (a module- or session-scoped fixture), so that
        each test starts from an empty script and an empty :attr:`requests`.
        """
        with self._lock:
            self._script.clear()
            self.requests.clear()
        return self

    @property
    def pending(self) -> int:
        """How many scripted responses have not been served yet."""
        with self._lock:
            return len(self._script)

    # --- called by the handler ---

    def _take(self, request: RecordedRequest) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if (
                request.method == "POST"
                and request.path.split("?")[0] == MESSAGES_PATH
                and self._script
            ):
                return self._script.popleft()
        if request.path.split("?")[0] != MESSAGES_PATH:
            return _Reply(404, orjson.dumps(error_json("not_found_error", "Not found")), {})
        message = "fake Messages API: no scripted response left for this request"
        return _Reply(400, orjson.dumps(error_json("invalid_request_error", message)), {})

    def _track(self, conn: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)
