"""The HTTP server under the fake model APIs: scripted answers, standing rules, recorded requests.

:class:`FakeApi` is a real HTTP server on 127.0.0.1 that records every request and answers
the requests to its API's paths, first by its standing rules (:meth:`FakeApi.when`: answer
depending on the request, such as "is the lesson in the prompt?"), then by its script, in
order. :class:`~reflexkit.testing.fake_messages_api.FakeMessagesApi` (Anthropic) and
:class:`~reflexkit.testing.fake_openai_api.FakeOpenAIApi` (Chat Completions, Responses) say
what a reply looks like on their wire.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Protocol, Self

import attrs
import orjson

__all__ = [
    "Exchange",
    "FakeApi",
    "RecordedRequest",
    "Reply",
    "Scripted",
]


# --- what the server got ------------------------------------------------------------------------


def _strings(value: object) -> Iterator[str]:
    """Every string value inside parsed JSON, depth first (keys left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


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

    @property
    def text(self) -> str:
        """Every string in the JSON body, one a line: what a predicate searches for a prompt.

        System prompt, messages, tool results and instructions alike, on any API's wire, so
        ``"Learning from Previous Failures" in request.text`` asks whether the lessons reached
        the model.
        """
        return "\n".join(_strings(self.json))

    @property
    def route(self) -> str:
        """The path without its query."""
        return self.path.split("?")[0]


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

    def send_json(self, status: int, data: object) -> None:
        """Send *data* as a JSON body."""
        self.send(status, orjson.dumps(data))

    def stream(self, events: bytes) -> None:
        """Send a complete server-sent event stream and close the connection."""
        self.start_stream(200, {"content-type": "text/event-stream"})
        self.write(events)

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


Predicate = Callable[[RecordedRequest], bool]
"""A test on a request, such as ``lambda r: "Learning from Previous Failures" in r.text``."""


@attrs.frozen
class Hang:
    """No answer for *seconds* (stopping the server ends the wait), then a closed connection."""

    seconds: float

    def serve(self, exchange: Exchange, /) -> None:
        """Wait, then drop the connection."""
        exchange.stopping.wait(self.seconds)  # returns early when the server stops
        exchange.drop()


@attrs.frozen
class Drop:
    """A connection closed without a response."""

    def serve(self, exchange: Exchange, /) -> None:
        """Drop the connection."""
        exchange.drop()


@attrs.define
class _Rule:
    predicate: Predicate
    answer: Scripted
    times: int | None


# --- the server --------------------------------------------------------------------------------


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body, by ``Content-Length`` or chunked (as some HTTP clients send it)."""
    if "chunked" in (handler.headers.get("transfer-encoding") or "").lower():
        parts: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline().strip():  # trailers, up to the blank line
                    pass
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("content-length") or 0)
    return handler.rfile.read(length) if length else b""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs
    disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart
    server: _Server

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        body = _read_body(self)
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
        """Stay quiet: tests read :attr:`FakeApi.requests` instead."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() closes the connections itself

    def __init__(self, address: tuple[str, int], api: FakeApi) -> None:
        self.api = api
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: ANN401
        """Ignore clients that went away (timeouts, drops); that is what tests provoke."""


class FakeApi:
    """A scripted model API on 127.0.0.1; a subclass says which paths and what replies.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`. Scripting methods
    return the server, so a test chains them in the order the replies are wanted.

    Args:
        host: The address to listen on.
        port: The port; 0 picks a free one.

    Attributes:
        requests: Every request received, in order.
    """

    scripted_paths: ClassVar[tuple[str, ...]] = ()
    """The request paths (without query) answered by rules and script; others get a 404."""
    label: ClassVar[str] = "fake API"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._script: deque[Scripted] = deque()
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []

    # --- what a subclass says ---

    def _warm_up(self) -> None:
        """Load what the first request would otherwise pay for (an SDK), outside any budget."""

    def _json_answer(self, data: object, /) -> Scripted:
        """A successful reply with *data* as its JSON (streamed when the request asks)."""
        return Reply(200, orjson.dumps(data), {})

    def _error(self, status: int, message: str) -> Scripted:
        """An error reply in the API's own shape."""
        return Reply(status, orjson.dumps({"error": {"message": message}}), {})

    # --- lifecycle ---

    def start(self) -> Self:
        """Start serving in a background thread."""
        if self._server is not None:
            return self
        self._warm_up()
        self._stopping.clear()
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=self.label.replace(" ", "-"),
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
            msg = f"the {self.label} is not running: call start() or use it in a with block"
            raise RuntimeError(msg)
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- scripting ---

    def enqueue(
        self,
        scripted: Scripted | None = None,
        /,
        *,
        status: int = 200,
        json: object = None,
        headers: Mapping[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> Self:
        """Script the next response: a :class:`Scripted` object, or an HTTP response.

        Args:
            scripted: A custom response (for example a stream); the other arguments are then
                ignored.
            status: The HTTP status.
            json: A JSON body (none: an empty one; any other body is a :class:`Scripted`).
            headers: Extra response headers.
            delay_s: Wait this long before answering.
        """
        if scripted is None:
            body = orjson.dumps(json) if json is not None else b""
            scripted = self._http(status, body, dict(headers or {}), delay_s)
        with self._lock:
            self._script.append(scripted)
        return self

    def _http(self, status: int, body: bytes, headers: dict[str, str], delay_s: float) -> Scripted:
        return Reply(status, body, headers, delay_s)

    def when(
        self,
        predicate: Predicate,
        answer: Scripted | Mapping[str, Any],
        /,
        *,
        times: int | None = None,
    ) -> Self:
        """Answer every request that *predicate* accepts with *answer*, before the script.

        Rules are asked in the order they were added; the first that accepts a request
        answers it, and a request no rule accepts gets the next scripted response. So an
        agent's model can depend on its prompt::

            api.when(lambda r: "Learning from Previous Failures" in r.text, FIXED)
            api.when(lambda r: True, BROKEN)

        Args:
            predicate: A test on the :class:`RecordedRequest`.
            answer: A :class:`Scripted` response, or the JSON of a successful reply (streamed
                when the request asks for a stream).
            times: Answer at most this many requests (no limit by default).
        """
        scripted = self._json_answer(answer) if isinstance(answer, Mapping) else answer
        with self._lock:
            self._rules.append(_Rule(predicate, scripted, times))
        return self

    def hang(self, seconds: float = 30.0) -> Self:
        """Script a request that gets no answer for *seconds*, then a closed connection.

        Stopping the server ends the wait at once.
        """
        return self.enqueue(Hang(seconds))

    def drop(self) -> Self:
        """Script a connection closed without a response."""
        return self.enqueue(Drop())

    def reset(self) -> Self:
        """Forget the rules, the scripted responses not yet served and the requests received.

        For a server shared by several tests (a module- or session-scoped fixture), so that
        each test starts from an empty script and an empty :attr:`requests`.
        """
        with self._lock:
            self._script.clear()
            self._rules.clear()
            self.requests.clear()
        return self

    @property
    def pending(self) -> int:
        """How many scripted responses have not been served yet."""
        with self._lock:
            return len(self._script)

    # --- called by the handler ---

    def _take(self, request: RecordedRequest) -> Scripted:
        """The answer to *request*: a rule's, else the script's next, else an error."""
        with self._lock:
            self.requests.append(request)
            rules = list(self._rules)
        if request.route not in self.scripted_paths:
            return self._unrouted(request)
        for rule in rules:
            try:
                accepted = rule.predicate(request)
            except Exception:  # noqa: BLE001 -- a failing predicate only declines
                accepted = False
            if accepted and self._use(rule):
                return rule.answer
        with self._lock:
            if request.method == "POST" and self._script:
                return self._script.popleft()
        return self._error(400, f"{self.label}: no scripted response left for this request")

    def _unrouted(self, request: RecordedRequest) -> Scripted:
        """The answer to a request outside :attr:`scripted_paths`: 404 unless overridden."""
        del request
        return self._error(404, "Not found")

    def _use(self, rule: _Rule) -> bool:
        with self._lock:
            if rule.times is None:
                return True
            if rule.times <= 0:
                return False
            rule.times -= 1
            return True

    def _track(self, conn: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


@attrs.frozen
class Reply:
    """A complete HTTP response, after *delay_s*; an API's subclass may stream it instead."""

    status: int
    body: bytes
    headers: dict[str, str]
    delay_s: float = 0.0

    def serve(self, exchange: Exchange, /) -> None:
        if self.delay_s and exchange.stopping.wait(self.delay_s):
            exchange.drop()
            return
        if not self.streamed(exchange):
            exchange.send(self.status, self.body, self.headers)

    def streamed(self, exchange: Exchange, /) -> bool:
        """Send the reply as a stream when the request asks for one; ``False`` when it didn't."""
        del exchange
        return False
