"""Episodic memory: the store protocol and its backends.

``JsonlMemory`` is the default (a JSONL file shared safely by many processes),
``InMemoryMemory`` the stand-in for tests, ``PostgresMemory`` (the ``postgres`` extra) the
store for many machines; it loads on first use. Every backend passes the contract suite in
:mod:`reflexkit.testing.memory_contract`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports
from reflexkit.memory._in_memory import InMemoryMemory as InMemoryMemory
from reflexkit.memory._jsonl import JsonlMemory as JsonlMemory
from reflexkit.memory._protocols import EpisodicMemory as EpisodicMemory, MemoryStats as MemoryStats

if TYPE_CHECKING:
    from reflexkit.memory._postgres import PostgresMemory as PostgresMemory

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {"_postgres": ("PostgresMemory",)},
    loaded=("EpisodicMemory", "InMemoryMemory", "JsonlMemory", "MemoryStats"),
)
