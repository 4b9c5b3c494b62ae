"""A wall clock that jumped: records stamped in the future or far in the past.

A machine whose clock ran ahead, or that jumped back after writing, leaves stamps that are
out of order and later than *now*. Retention keeps exactly the records stamped at or after
its cut-off, whatever the order; ``recent`` goes by the order of appends, not by stamps;
the insight rules' lookback window holds a record for its width around *now*, never forever.
The rules' clock is injected the way :class:`HistoryRules` takes it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs

from reflexkit.insights import Rule
from reflexkit.insights._history import AttemptRecord
from reflexkit.insights._rules import file_findings
from reflexkit.memory import JsonlMemory
from reflexkit.tasks._config import InsightsConfig
from reflexkit.testing.memory_contract import make_reflection

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_prune_decides_each_skewed_stamp_on_its_own(tmp_path: Path) -> None:
    """Stamps jumping back and forth over 3 MiB of blocks: prune keeps exactly the newer ones."""
    store = JsonlMemory(tmp_path / "reflections.jsonl")
    skews = [timedelta(days=d) for d in (-400, 3650, -40, 0, -31, 1, -29, -3650, 200)]
    kept: set[str] = set()
    for n in range(1800):
        stamp = NOW + skews[n % len(skews)]
        record = attrs.evolve(
            make_reflection(f"s{n % 7}", attempt=n + 1, created_at=stamp, analysis="x" * 1500),
            id=f"r{n}",
        )
        store.append(record)
        if stamp >= NOW - timedelta(days=30):
            kept.add(record.id)
    assert store.prune(older_than=NOW - timedelta(days=30)) == 1800 - len(kept)
    assert {r.id for r in store} == kept
    # A future stamp (a clock that ran ahead) is a record like any other: recent() is append
    # order, so the newest appends come back whatever their stamps say.
    newest = [r.id for r in store.recent("s0", limit=3)]
    appended = [f"r{n}" for n in range(1800) if n % 7 == 0 and f"r{n}" in kept]
    assert newest == appended[-3:]


def _failed(at: datetime, path: str = "src/cart.py") -> AttemptRecord:
    return AttemptRecord(
        run_id="r",
        task_id="shop",
        subtask_id="cart",
        attempt=1,
        at=at,
        failed=True,
        files_modified=(path,),
    )


def test_the_lookback_window_does_not_hold_a_far_future_stamp_forever() -> None:
    """Failures stamped ten years ahead are outside a 24 h window; an hour ahead is inside."""
    config = InsightsConfig(lookback_hours=24, consecutive_failure_limit=3)
    far = [_failed(NOW + timedelta(days=3650)) for _ in range(3)]
    assert file_findings(far, config, now=NOW) == []
    near = [_failed(NOW + timedelta(hours=1)) for _ in range(3)]  # the clock went back an hour
    (finding,) = file_findings(near, config, now=NOW)
    assert finding.rule is Rule.FILE_FAILURE_CORRELATION
    old = [_failed(NOW - timedelta(hours=25)) for _ in range(3)]
    assert file_findings(old, config, now=NOW) == []
