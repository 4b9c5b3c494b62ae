"""Test helpers: the fake Messages API, the memory contract and the pytest plugin.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.testing.fake_messages_api import FakeMessagesApi
    from reflexkit.testing.memory_contract import MemoryContract, make_reflection
    from reflexkit.testing.postgres_server import PostgresServer
    from reflexkit.testing.run_history import HistoryWriter, RunScript

__all__ = [
    "FakeMessagesApi",
    "HistoryWriter",
    "MemoryContract",
    "PostgresServer",
    "RunScript",
    "make_reflection",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "FakeMessagesApi": "fake_messages_api",
        "MemoryContract": "memory_contract",
        "make_reflection": "memory_contract",
        "PostgresServer": "postgres_server",
        "HistoryWriter": "run_history",
        "RunScript": "run_history",
    },
)
