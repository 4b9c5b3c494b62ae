"""Test helpers: the fake model APIs (Anthropic, OpenAI), the memory contract, the plugin.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.testing._fake_server import (
        FakeApi as FakeApi,
        RecordedRequest as RecordedRequest,
        Scripted as Scripted,
    )
    from reflexkit.testing.fake_messages_api import FakeMessagesApi as FakeMessagesApi
    from reflexkit.testing.fake_openai_api import (
        FakeOpenAIApi as FakeOpenAIApi,
        ToolCall as ToolCall,
        Turn as Turn,
    )
    from reflexkit.testing.memory_contract import (
        MemoryContract as MemoryContract,
        make_reflection as make_reflection,
    )
    from reflexkit.testing.postgres_server import PostgresServer as PostgresServer
    from reflexkit.testing.run_history import HistoryWriter as HistoryWriter, RunScript as RunScript

__getattr__, __dir__, __all__ = lazy_exports(
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
