"""Test helpers: the fake model APIs (Anthropic, OpenAI), the memory contract, the plugin.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.testing._fake_server import FakeApi, RecordedRequest, Scripted
    from reflexkit.testing.fake_messages_api import FakeMessagesApi
    from reflexkit.testing.fake_openai_api import FakeOpenAIApi, ToolCall, Turn
    from reflexkit.testing.memory_contract import MemoryContract, make_reflection
    from reflexkit.testing.postgres_server import PostgresServer
    from reflexkit.testing.run_history import HistoryWriter, RunScript

__all__ = [
    "FakeApi",
    "FakeMessagesApi",
    "FakeOpenAIApi",
    "HistoryWriter",
    "MemoryContract",
    "PostgresServer",
    "RecordedRequest",
    "RunScript",
    "Scripted",
    "ToolCall",
    "Turn",
    "make_reflection",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "FakeApi": "_fake_server",
        "RecordedRequest": "_fake_server",
        "Scripted": "_fake_server",
        "FakeMessagesApi": "fake_messages_api",
        "FakeOpenAIApi": "fake_openai_api",
        "ToolCall": "fake_openai_api",
        "Turn": "fake_openai_api",
        "MemoryContract": "memory_contract",
        "make_reflection": "memory_contract",
        "PostgresServer": "postgres_server",
        "HistoryWriter": "run_history",
        "RunScript": "run_history",
    },
)
