"""The fake Messages API on its own: a real HTTP server, scripted in order, recording requests.

These tests speak plain HTTP to it with the standard library; the tests in tests/reflection
drive it through the real anthropic SDK.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from reflexkit.testing.fake_messages_api import (
    Exchange,
    FakeMessagesApi,
    error_json,
    message_json,
    reply_with,
    tool_reply_with,
)

REPLY = {"category": "root_cause", "analysis": "a", "suggestion": "s", "confidence": 0.5}


@pytest.fixture
def api() -> Iterator[FakeMessagesApi]:
    """A started server, stopped after the test."""
    with FakeMessagesApi() as server:
        yield server


def post(
    api: FakeMessagesApi, body: object = None, *, path: str = "/v1/messages", timeout: float = 5
) -> tuple[int, dict[str, str], Any]:
    """POST JSON; return status, headers (lower-case names) and the parsed JSON body."""
    host, port = api.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body or {"model": "m"}),
            headers={"content-type": "application/json", "x-api-key": "k"},
        )
        response = conn.getresponse()
        raw = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return response.status, headers, json.loads(raw) if raw else None
    finally:
        conn.close()


def test_scripted_responses_come_in_order_and_requests_are_recorded(
    api: FakeMessagesApi,
) -> None:
    """Each POST gets the next scripted answer; every request is kept with headers and body."""
    api.reply(REPLY).overloaded().server_error(503)
    assert api.pending == 3
    status, _, body = post(api, {"model": "m", "n": 1})
    assert status == 200
    assert body["type"] == "message"
    assert json.loads(body["content"][0]["text"]) == REPLY
    assert post(api)[0] == 529
    status, _, body = post(api)
    assert status == 503
    assert body == error_json("api_error", "Internal server error")
    assert api.pending == 0
    assert len(api.requests) == 3
    first = api.requests[0]
    assert (first.method, first.path) == ("POST", "/v1/messages")
    assert first.json == {"model": "m", "n": 1}
    assert first.headers["x-api-key"] == "k"
    assert json.loads(first.body) == first.json


def test_an_unscripted_request_is_a_loud_400(api: FakeMessagesApi) -> None:
    """More requests than scripted: 400 invalid_request_error, still recorded."""
    status, _, body = post(api)
    assert status == 400
    assert body["error"]["type"] == "invalid_request_error"
    assert "no scripted response" in body["error"]["message"]
    assert len(api.requests) == 1


def test_another_path_is_404_and_does_not_use_the_script(api: FakeMessagesApi) -> None:
    """Only POST /v1/messages consumes the script."""
    api.reply(REPLY)
    status, _, _ = post(api, path="/v1/models")
    assert status == 404
    assert api.pending == 1


def test_rate_limited_sends_retry_after_headers(api: FakeMessagesApi) -> None:
    """429 with retry-after (seconds) and retry-after-ms, and the API's error body."""
    api.rate_limited(retry_after_s=1.5, retry_after_ms=1500).rate_limited()
    status, headers, body = post(api)
    assert status == 429
    assert headers["retry-after"] == "1.5"
    assert headers["retry-after-ms"] == "1500"
    assert body["error"]["type"] == "rate_limit_error"
    status, headers, _ = post(api)
    assert status == 429
    assert "retry-after" not in headers


def test_refusal_max_tokens_and_invalid_json_bodies(api: FakeMessagesApi) -> None:
    """The model-side failures are 200 replies with the telling stop_reason or text."""
    api.refusal().max_tokens().invalid_json()
    _, _, refusal = post(api)
    assert refusal["stop_reason"] == "refusal"
    assert refusal["content"] == []
    _, _, cut = post(api)
    assert cut["stop_reason"] == "max_tokens"
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut["content"][0]["text"])
    _, _, prose = post(api)
    assert prose["stop_reason"] == "end_turn"
    with pytest.raises(json.JSONDecodeError):
        json.loads(prose["content"][0]["text"])


def test_tool_reply(api: FakeMessagesApi) -> None:
    """A forced-tool reply has one tool_use block and stop_reason tool_use."""
    api.reply_tool(REPLY)
    _, _, body = post(api)
    (block,) = body["content"]
    assert block["type"] == "tool_use"
    assert block["name"] == "record_reflection"
    assert block["input"] == REPLY
    assert body["stop_reason"] == "tool_use"


def test_a_dropped_connection_gets_no_response(api: FakeMessagesApi) -> None:
    """drop(): the connection closes without a status line."""
    api.drop()
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        post(api)
    assert len(api.requests) == 1


def test_a_hang_answers_nothing_and_stop_releases_it() -> None:
    """hang(): the client times out; stopping the server ends the hang at once."""
    api = FakeMessagesApi().start()
    try:
        api.hang(30)
        with pytest.raises((TimeoutError, socket.timeout)):
            post(api, timeout=0.3)
    finally:
        started = time.monotonic()
        api.stop()
    assert time.monotonic() - started < 5  # not the 30 s hang


def test_delay_then_reply(api: FakeMessagesApi) -> None:
    """enqueue(delay_s=...) answers late but answers."""
    api.enqueue(json=reply_with(REPLY), delay_s=0.2)
    started = time.monotonic()
    assert post(api)[0] == 200
    assert time.monotonic() - started >= 0.15


def test_custom_scripted_responses(api: FakeMessagesApi) -> None:
    """Anything with serve(exchange) can be scripted, e.g. a hand-written stream."""

    class Stream:
        def serve(self, exchange: Exchange, /) -> None:
            exchange.start_stream(200, {"content-type": "text/plain"})
            exchange.write(b"part one, ")
            exchange.write(b"part two")

    api.enqueue(Stream())
    host, port = api.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request("POST", "/v1/messages", body=b"{}")
        response = conn.getresponse()
        assert response.read() == b"part one, part two"
    finally:
        conn.close()


def test_stop_frees_the_port_and_url_needs_a_running_server() -> None:
    """After stop() nothing listens; url raises before start()."""
    api = FakeMessagesApi()
    with pytest.raises(RuntimeError, match="not running"):
        _ = api.url
    with api:
        url = api.url
        assert url.startswith("http://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    api.stop()  # stopping twice is harmless


def test_concurrent_requests_are_all_recorded(api: FakeMessagesApi) -> None:
    """The server is threaded: parallel clients each get one scripted answer."""
    for _ in range(5):
        api.reply(REPLY)
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda: statuses.append(post(api)[0])) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert statuses == [200] * 5
    assert len(api.requests) == 5


def test_body_helpers() -> None:
    """message_json and friends build the Messages API shapes."""
    body = message_json([{"type": "text", "text": "hi"}], input_tokens=3, output_tokens=4)
    assert body["usage"] == {"input_tokens": 3, "output_tokens": 4}
    assert body["role"] == "assistant"
    assert reply_with(REPLY, model="m2")["model"] == "m2"
    assert tool_reply_with(REPLY, name="t")["content"][0]["name"] == "t"
    assert error_json("overloaded_error", "Overloaded") == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_reset_forgets_script_and_requests(api: FakeMessagesApi) -> None:
    """reset() gives a shared server a clean slate."""
    api.reply(REPLY).reply(REPLY)
    post(api)
    assert (api.pending, len(api.requests)) == (1, 1)
    assert api.reset() is api
    assert (api.pending, api.requests) == (0, [])
    assert post(api)[0] == 400  # nothing scripted any more
