"""Both backends pass the one contract suite that reflexkit publishes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reflexkit.memory import EpisodicMemory, InMemoryMemory, JsonlMemory
from reflexkit.testing.memory_contract import MemoryContract


class TestContract(MemoryContract):
    """The published suite, on the JSONL store (both durabilities) and the in-memory one."""

    @pytest.fixture(params=["jsonl", "jsonl-fsync", "in-memory"])
    def open_memory(
        self, request: pytest.FixtureRequest, tmp_path: Path
    ) -> Callable[[], EpisodicMemory]:
        """Open handles on one store of each backend."""
        if request.param == "in-memory":
            shared = InMemoryMemory()
            return lambda: shared
        durability = "fsync" if request.param == "jsonl-fsync" else "none"
        path = tmp_path / "memory" / "reflections.jsonl"
        return lambda: JsonlMemory(path, durability=durability)
