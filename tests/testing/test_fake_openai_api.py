"""The fake OpenAI API through the real ``openai`` SDK and through plain HTTP.

Chat Completions and Responses, plain and streamed, text and tool calls; rules that answer by
a predicate on the request, on this fake and on the fake Messages API.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from reflexkit.testing import FakeMessagesApi, FakeOpenAIApi, ToolCall, Turn
from reflexkit.testing.fake_messages_api import message_json

openai = pytest.importorskip("openai", reason="the openai SDK is in the test extra")

LESSON = "## Learning from Previous Failures"


@pytest.fixture
def api() -> Iterator[FakeOpenAIApi]:
    """A started server, stopped after the test."""
    with FakeOpenAIApi() as server:
        yield server


@pytest.fixture
def client(api: FakeOpenAIApi) -> Iterator[Any]:
    """The real SDK pointed at the fake, no retries."""
    sdk = openai.OpenAI(base_url=api.url + "/v1", api_key="k", max_retries=0, timeout=10)
    yield sdk
    sdk.close()


def raw(
    api: FakeOpenAIApi, path: str, body: object = None, *, method: str = "POST"
) -> tuple[int, str, bytes]:
    """Send one request with the standard library; return status, content type and body."""
    host, port = api.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        payload = json.dumps(body) if body is not None else None
        conn.request(method, path, body=payload, headers={"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, response.getheader("content-type") or "", response.read()
    finally:
        conn.close()


def sse_data(body: bytes) -> list[str]:
    """The ``data:`` payloads of a server-sent event stream."""
    return [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]


def test_chat_completion_text_through_the_sdk(api: FakeOpenAIApi, client: Any) -> None:
    """A scripted text reply is the SDK's message; the request is recorded."""
    api.reply("hello")
    done = client.chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "hi there"}]
    )
    assert done.choices[0].message.content == "hello"
    assert done.choices[0].finish_reason == "stop"
    assert done.model == "gpt-x"
    assert done.usage.total_tokens > 0
    assert api.requests[0].route == "/v1/chat/completions"
    assert "hi there" in api.requests[0].text


def test_chat_completion_stream_with_tool_call(api: FakeOpenAIApi, client: Any) -> None:
    """A streamed reply carries the text, then the tool call's name and arguments, then usage."""
    api.reply("let me look", ToolCall("bash", {"command": "ls"}))
    stream = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, name, arguments, finish, usage = "", "", "", None, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                name += call.function.name or ""
                arguments += call.function.arguments or ""
            finish = choice.finish_reason or finish
    assert (text, name, json.loads(arguments), finish) == (
        "let me look",
        "bash",
        {"command": "ls"},
        "tool_calls",
    )
    assert usage is not None
    assert usage.completion_tokens > 0


def test_responses_text_and_function_call(api: FakeOpenAIApi, client: Any) -> None:
    """The Responses API gets a message item and a function call item, plain and streamed."""
    api.reply("done", ToolCall("shell", {"command": ["echo", "hi"]}, call_id="call_1"))
    reply = client.responses.create(model="m", input="fix it")
    assert reply.output_text == "done"
    calls = [item for item in reply.output if item.type == "function_call"]
    assert (calls[0].name, calls[0].call_id) == ("shell", "call_1")
    assert json.loads(calls[0].arguments) == {"command": ["echo", "hi"]}

    api.reply("streamed", ToolCall("shell", {"command": ["true"]}))
    with client.responses.stream(model="m", input="again") as stream:
        kinds = [event.type for event in stream]
        completed = stream.get_final_response()
    assert kinds[0] == "response.created"
    assert kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert "response.function_call_arguments.done" in kinds
    assert completed.output_text == "streamed"
    assert api.requests[-1].route == "/v1/responses"


def test_a_rule_answers_by_the_prompt_before_the_script(api: FakeOpenAIApi, client: Any) -> None:
    """``when`` answers the requests its predicate accepts, every time; the rest take the script."""
    api.when(lambda r: LESSON in r.text, Turn(text="fixed"))
    api.reply("first").reply("second")

    def ask(prompt: str) -> str:
        done = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": prompt}]
        )
        return str(done.choices[0].message.content)

    assert ask("do it") == "first"
    assert ask(f"do it\n\n{LESSON}\n- the lesson") == "fixed"
    assert ask(f"{LESSON} again") == "fixed"
    assert ask("do it") == "second"
    assert api.pending == 0


def test_a_rule_with_times_runs_out_and_a_bad_predicate_declines(api: FakeOpenAIApi) -> None:
    """``times`` bounds a rule; a predicate that raises is a rule that declines."""

    def broken(_request: object) -> bool:
        raise KeyError("boom")

    api.when(broken, Turn(text="never"))
    api.when(lambda _r: True, Turn(text="once"), times=1)
    first = raw(api, "/v1/chat/completions", {"model": "m", "messages": []})
    assert json.loads(first[2])["choices"][0]["message"]["content"] == "once"
    status, _, body = raw(api, "/v1/chat/completions", {"model": "m", "messages": []})
    assert status == 400
    assert "no scripted response left" in json.loads(body)["error"]["message"]


def test_raw_http_streams_and_lists_models(api: FakeOpenAIApi) -> None:
    """Plain HTTP sees SSE ending in [DONE], the Responses events, and a models list."""
    api.reply("a").reply("b")
    status, kind, body = raw(api, "/v1/chat/completions", {"model": "m", "stream": True})
    assert (status, kind) == (200, "text/event-stream")
    data = sse_data(body)
    assert data[-1] == "[DONE]"
    assert "".join(
        json.loads(d)["choices"][0]["delta"].get("content") or ""
        for d in data[:-1]
        if json.loads(d)["choices"]
    ) == ("a")
    status, kind, body = raw(api, "/responses", {"model": "m", "stream": True})
    events = [json.loads(d) for d in sse_data(body)]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "b"
    status, _, body = raw(api, "/v1/models", method="GET")
    assert (status, json.loads(body)["data"][0]["id"]) == (200, "fake-model")
    assert raw(api, "/v1/embeddings", {})[0] == 404


def test_scripted_errors_reach_the_sdk_as_its_own_errors(api: FakeOpenAIApi, client: Any) -> None:
    """An error status with OpenAI's error body is the SDK's typed error."""
    api.error(429, "slow down", "rate_limit_error")
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.chat.completions.create(model="m", messages=[])


def test_the_messages_fake_answers_by_predicate_too() -> None:
    """The fake Messages API takes the same rules, streamed or not, through the real SDK."""
    fixed = message_json([{"type": "text", "text": "fixed"}])
    with FakeMessagesApi() as api:
        api.when(lambda r: LESSON in r.text, fixed)
        api.reply_text("broken")
        client = anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0)
        plain = client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
        lesson = [{"role": "user", "content": f"x\n{LESSON}"}]
        with client.messages.stream(model="m", max_tokens=10, messages=lesson) as stream:
            streamed = stream.get_final_text()
        client.close()
    assert plain.content[0].text == "broken"
    assert streamed == "fixed"
