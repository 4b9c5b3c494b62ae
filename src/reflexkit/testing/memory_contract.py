"""The contract every episodic-memory backend passes, as a pytest test class to inherit.

reflexkit runs it against :class:`~reflexkit.memory.JsonlMemory` and
:class:`~reflexkit.memory.InMemoryMemory`; a third-party backend runs the same tests by
subclassing :class:`MemoryContract` and providing one fixture::

    from reflexkit.testing.memory_contract import MemoryContract

    class TestMyStore(MemoryContract):
        @pytest.fixture
        def open_memory(self, tmp_path):
            # Return a callable: each call opens a new handle on ONE store (the same file,
            # database, ...), so the suite can check what other handles see.
            return lambda: MyStore(tmp_path / "store")

Handles are closed by the suite when they have a ``close()`` method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import attrs
import pytest

from reflexkit.memory._protocols import EpisodicMemory
from reflexkit.models import (
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
    new_reflection_id,
)

__all__ = ["MemoryContract", "make_reflection"]

_NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def make_reflection(
    subtask_id: str = "sub-1",
    *,
    task_id: str = "task-1",
    attempt: int = 1,
    created_at: datetime = _NOW,
    analysis: str = "tests/test_cart.py::test_total failed: assert 90 == 100",
) -> Reflection:
    """Return a plausible reflection; every argument has a default (``attrs.evolve`` the rest)."""
    return Reflection(
        id=new_reflection_id(),
        session_id="session-1",
        task_id=task_id,
        subtask_id=subtask_id,
        attempt_number=attempt,
        category=ReflectionCategory.ROOT_CAUSE,
        failure_type=FailureType.TEST_FAILURE,
        analysis=analysis,
        suggestion="Apply the discount after the tax, as the spec says.",
        action_items=("Read src/cart.py:41", "Run pytest tests/test_cart.py -q"),
        confidence=0.7,
        source=ReflectionSource.HEURISTIC,
        created_at=created_at,
        fingerprint="0123456789abcdef",
    )


class MemoryContract:
    """Tests that pin down the :class:`~reflexkit.memory.EpisodicMemory` behaviour."""

    @pytest.fixture
    def open_memory(self) -> Callable[[], EpisodicMemory]:
        """Return a callable that opens a new handle on one shared store (override this)."""
        msg = "a MemoryContract subclass must provide the open_memory fixture"
        raise NotImplementedError(msg)

    @pytest.fixture
    def handles(
        self, open_memory: Callable[[], EpisodicMemory]
    ) -> Iterator[Callable[[], EpisodicMemory]]:
        """Open handles through *open_memory* and close them after the test."""
        opened: list[EpisodicMemory] = []

        def open_one() -> EpisodicMemory:
            handle = open_memory()
            opened.append(handle)
            return handle

        yield open_one
        for handle in opened:
            close = getattr(handle, "close", None)
            if callable(close):
                close()

    @pytest.fixture
    def memory(self, handles: Callable[[], EpisodicMemory]) -> EpisodicMemory:
        """A handle on an empty store."""
        return handles()

    # --- the protocol --------------------------------------------------------------------

    def test_is_an_episodic_memory(self, memory: EpisodicMemory) -> None:
        """The backend satisfies the runtime-checkable protocol."""
        assert isinstance(memory, EpisodicMemory)

    def test_an_empty_store_has_nothing(self, memory: EpisodicMemory) -> None:
        """A new store reads empty, counts zero and prunes nothing."""
        assert memory.recent("sub-1", limit=3) == []
        assert list(memory) == []
        stats = memory.stats()
        assert (stats.records, stats.subtasks, stats.corrupt) == (0, 0, 0)
        assert memory.prune(older_than=_NOW) == 0

    # --- append and recent ---------------------------------------------------------------

    def test_recent_returns_the_newest_oldest_first(self, memory: EpisodicMemory) -> None:
        """Recent gives the last *limit* records of the subtask, oldest of them first."""
        records = [make_reflection(attempt=n) for n in range(1, 6)]
        for r in records:
            memory.append(r)
        assert memory.recent("sub-1", limit=3) == records[2:]

    def test_recent_with_fewer_records_than_the_limit(self, memory: EpisodicMemory) -> None:
        """A subtask with fewer records than the limit gives all of them."""
        records = [make_reflection(attempt=n) for n in (1, 2)]
        for r in records:
            memory.append(r)
        assert memory.recent("sub-1", limit=10) == records
        assert memory.recent("sub-1", limit=1) == records[1:]

    def test_recent_keeps_subtasks_apart(self, memory: EpisodicMemory) -> None:
        """Other subtasks' records never show up; an unknown subtask has none."""
        mine = [make_reflection("a", attempt=n) for n in range(1, 4)]
        for n, r in enumerate(mine):
            memory.append(r)
            memory.append(make_reflection(f"other-{n}"))
            memory.append(make_reflection("b"))
        assert memory.recent("a", limit=5) == mine
        assert memory.recent("nobody", limit=5) == []

    def test_recent_keeps_tasks_apart(self, memory: EpisodicMemory) -> None:
        """A subtask id shared by two tasks: asked with a task id, only that task's records."""
        mine = [make_reflection("docs", task_id="t-api", attempt=n) for n in range(1, 4)]
        theirs = [make_reflection("docs", task_id="t-web", attempt=n) for n in range(1, 6)]
        for n, r in enumerate(mine):
            memory.append(r)
            memory.append(theirs[n])
        memory.append(theirs[3])
        memory.append(theirs[4])
        assert memory.recent("docs", limit=2, task_id="t-api") == mine[1:]
        assert memory.recent("docs", limit=9, task_id="t-api") == mine
        assert memory.recent("docs", limit=2, task_id="t-web") == theirs[3:]
        assert memory.recent("docs", limit=9, task_id="t-none") == []
        assert memory.recent("docs", limit=2) == theirs[3:]  # no task id: the subtask's own

    def test_recent_orders_by_append_not_by_time(self, memory: EpisodicMemory) -> None:
        """Recency is the order of appends, not the createdAt stamps."""
        late = make_reflection(attempt=1, created_at=_NOW)
        early = make_reflection(attempt=2, created_at=_NOW - timedelta(days=1))
        memory.append(late)
        memory.append(early)
        assert memory.recent("sub-1", limit=2) == [late, early]

    @pytest.mark.parametrize("limit", [0, -1])
    def test_recent_rejects_a_limit_below_one(self, memory: EpisodicMemory, limit: int) -> None:
        """A limit below 1 is a ValueError, not an empty list."""
        with pytest.raises(ValueError, match="limit"):
            memory.recent("sub-1", limit=limit)

    def test_every_field_comes_back_equal(self, memory: EpisodicMemory) -> None:
        """Every field, unicode and escapes included, round-trips exactly."""
        r = Reflection(
            id="r-ü-1",
            session_id="s",
            task_id="t",
            subtask_id='odd "sub" \\ ü 🙂',
            attempt_number=7,
            category=ReflectionCategory.MISSING_CONTEXT,
            failure_type=FailureType.DEPENDENCY_ERROR,
            analysis="ModuleNotFoundError: No module named 'yaml'\nline two\ttab",
            suggestion="Add PyYAML to the dependencies.",
            action_items=("pip install pyyaml", "python -c 'import yaml'"),
            confidence=0.25,
            source=ReflectionSource.LLM,
            created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
            fingerprint="fedcba9876543210",
            fallback_reason=None,
            model="claude-haiku-5-5",
            input_tokens=1200,
            output_tokens=340,
            latency_ms=1875,
            redactions={"aws_access_key": 1, "env_value": 2},
        )
        memory.append(r)
        assert memory.recent(r.subtask_id, limit=1) == [r]
        assert list(memory) == [r]

    def test_a_secret_appended_directly_is_stored_redacted(self, memory: EpisodicMemory) -> None:
        """The outbound gate is part of the store's write: no caller of ``append`` skips it."""
        token = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
        password = "Hq3Zt8" + "Lm2Xp7Kd"
        r = make_reflection(attempt=1)
        r = attrs.evolve(
            r,
            analysis=f"The client used token={token} and failed.",
            suggestion=f"Stop passing DB_PASSWORD={password} on the command line.",
            action_items=(f"curl -u deploy:{password} https://ci.example.com",),
        )
        memory.append(r)
        stored = [*memory.recent(r.subtask_id, limit=1), *memory]
        assert len(stored) == 2
        assert token not in repr(stored)
        assert password not in repr(stored)
        assert stored[0].id == r.id

    # --- iteration and what other handles see ---------------------------------------------

    def test_iteration_yields_every_record_in_append_order(self, memory: EpisodicMemory) -> None:
        """Iterating a store yields every record in append order."""
        records = [make_reflection(f"s{n % 4}", attempt=n + 1) for n in range(25)]
        for r in records:
            memory.append(r)
        assert list(memory) == records

    def test_another_handle_sees_what_was_appended(
        self, handles: Callable[[], EpisodicMemory]
    ) -> None:
        """What one handle appends, another handle reads at once."""
        writer, reader = handles(), handles()
        reader.recent("sub-1", limit=3)  # a reader that has looked before
        first, second = make_reflection(attempt=1), make_reflection(attempt=2)
        writer.append(first)
        assert reader.recent("sub-1", limit=3) == [first]
        writer.append(second)
        assert reader.recent("sub-1", limit=3) == [first, second]
        assert list(handles()) == [first, second]

    # --- prune ---------------------------------------------------------------------------

    def test_prune_removes_only_older_records(self, memory: EpisodicMemory) -> None:
        """Prune removes records created before the cut-off and keeps the rest in order."""
        old = [make_reflection(f"s{n}", created_at=_NOW - timedelta(days=40 + n)) for n in range(3)]
        new = [make_reflection(f"s{n}", created_at=_NOW - timedelta(days=n)) for n in range(3)]
        at_cutoff = make_reflection("s0", created_at=_NOW - timedelta(days=30))
        for r in (old[0], new[0], old[1], at_cutoff, new[1], old[2], new[2]):
            memory.append(r)
        assert memory.prune(older_than=_NOW - timedelta(days=30)) == 3
        assert list(memory) == [new[0], at_cutoff, new[1], new[2]]
        assert memory.recent("s0", limit=5) == [new[0], at_cutoff]
        assert memory.prune(older_than=_NOW - timedelta(days=30)) == 0

    def test_appends_after_a_prune_are_kept(self, handles: Callable[[], EpisodicMemory]) -> None:
        """A handle opened before another handle's prune still appends where readers look."""
        writer, pruner = handles(), handles()
        writer.append(make_reflection(created_at=_NOW - timedelta(days=90)))
        kept = make_reflection(attempt=2)
        writer.append(kept)
        assert pruner.prune(older_than=_NOW - timedelta(days=30)) == 1
        later = make_reflection(attempt=3)
        writer.append(later)  # the writer opened the store before the prune
        assert handles().recent("sub-1", limit=5) == [kept, later]
        assert list(pruner) == [kept, later]

    def test_prune_rejects_a_naive_cutoff(self, memory: EpisodicMemory) -> None:
        """A cut-off without a time zone is ambiguous and refused."""
        with pytest.raises(ValueError, match="timezone"):
            memory.prune(older_than=datetime(2026, 1, 1))  # noqa: DTZ001 -- the point of the test

    # --- stats ---------------------------------------------------------------------------

    def test_stats_count_what_is_stored(self, memory: EpisodicMemory) -> None:
        """Stats counts records, subtasks, categories, failure types and sources."""
        memory.append(make_reflection("a"))
        memory.append(attrs.evolve(make_reflection("a"), category=ReflectionCategory.TEST_GAP))
        lint = attrs.evolve(make_reflection("b"), failure_type=FailureType.LINT_ERROR)
        memory.append(attrs.evolve(lint, source=ReflectionSource.LLM))
        stats = memory.stats()
        assert stats.records == 3
        assert stats.subtasks == 2
        assert stats.by_category == {"root_cause": 2, "test_gap": 1}
        assert stats.by_failure_type == {"test_failure": 2, "lint_error": 1}
        assert stats.by_source == {"heuristic": 2, "llm": 1}
        assert stats.corrupt == 0
