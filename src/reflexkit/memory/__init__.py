"""Episodic memory: the store protocol and its backends.

``JsonlMemory`` is the default (a JSONL file shared safely by many processes),
``InMemoryMemory`` the stand-in for tests. Every backend passes the contract suite in
:mod:`reflexkit.testing.memory_contract`.
"""

from reflexkit.memory.in_memory import InMemoryMemory
from reflexkit.memory.jsonl import JsonlMemory
from reflexkit.memory.protocols import EpisodicMemory, MemoryStats

__all__ = ["EpisodicMemory", "InMemoryMemory", "JsonlMemory", "MemoryStats"]
