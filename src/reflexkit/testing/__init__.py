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
        "_fake_server": ("FakeApi", "RecordedRequest", "Scripted"),
        "fake_messages_api": ("FakeMessagesApi",),
        "fake_openai_api": ("FakeOpenAIApi", "ToolCall", "Turn"),
        "memory_contract": ("MemoryContract", "make_reflection"),
        "postgres_server": ("PostgresServer",),
        "run_history": ("HistoryWriter", "RunScript"),
    },
)
