"""The P3 experiment: how many finished tasks ever get a machine-detectable outcome?

From reflexkit's reports (signals ``checks``, ``judge``, ``rework``) or a board export (JSON
Lines), offline: the base rate of completed tasks with a signal within the window, and the
pre-registered kill condition (:data:`BASE_RATE_FLOOR`). docs/reports.md describes both
sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import orjson

from reflexkit import _serde
from reflexkit.reports._calibration import KillCondition, read_records

__all__ = [
    "BASE_RATE_FLOOR",
    "MIN_TASKS",
    "Detectability",
    "FinishedTask",
    "detectability",
    "read_board",
    "tasks_from_reports",
]

BASE_RATE_FLOOR = 0.20
"""The kill condition: fewer finished tasks with a detectable outcome than this share."""

MIN_TASKS = 5
"""Below this many finished tasks the kill condition is undecided."""

_SHOWN = 20


@attrs.frozen(kw_only=True)
class FinishedTask:
    """One completed task and the outcome signals known of it.

    Attributes:
        id: The task (``run/task/subtask`` for reports, the board's id otherwise).
        completed_at: When it was finished.
        signals: ``(kind, at)`` of every signal; the window decides which count.
    """

    id: str
    completed_at: datetime
    signals: tuple[tuple[str, datetime], ...] = ()


@attrs.frozen(kw_only=True)
class Detectability:
    """What the P3 harness found.

    Attributes:
        source: Where the tasks came from.
        window_days: How long after completion a signal may come.
        completed: Finished tasks.
        detectable: Of them, those with a signal in the window.
        rate: ``detectable / completed`` (``None`` with no finished task).
        by_signal: Per kind of signal, the tasks it made detectable.
        undetectable: The first ids of tasks with no signal.
        skipped_invalid: Board lines that were not valid.
        problems: What was wrong with them (the first 20).
        kill_condition: The pre-registered kill condition and its verdict.
    """

    source: str
    window_days: int
    completed: int
    detectable: int
    rate: float | None
    by_signal: dict[str, int]
    undetectable: tuple[str, ...]
    kill_condition: KillCondition
    skipped_invalid: int = 0
    problems: tuple[str, ...] = ()


def _when(text: object) -> datetime | None:
    """An ISO 8601 time (``Z``, an offset, or none: UTC), as the converter reads one; or None."""
    try:
        value: datetime = _serde.structure_raw(text, datetime)
    except Exception:  # noqa: BLE001 -- any failure to read it is "not a time"
        return None
    return value


def _done(report: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Whether the report's attempt finished its subtask, and the signals it carries."""
    verification = report.get("verification")
    if not isinstance(verification, Mapping):
        return True, []
    judge = verification.get("judge")
    signals = []
    if verification.get("passed") is not None:
        signals.append("checks")
    if isinstance(judge, Mapping):
        signals.append("judge")
    rejected = verification.get("passed") is False or (
        isinstance(judge, Mapping) and judge.get("complete") is False
    )
    return not rejected, signals


def tasks_from_reports(reports: Iterable[Mapping[str, Any]]) -> list[FinishedTask]:
    """The finished subtasks of every run, from ``reflexkit.report.v1`` reports.

    Each (run, task, subtask) is judged by its last report in that run; a later run's first
    report of the same task and subtask is a ``rework`` signal at its time.
    """
    last: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    starts: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    for report in sorted(reports, key=lambda r: (str(r.get("createdAt", "")), r.get("attempt", 0))):
        at = _when(report.get("createdAt"))
        if at is None:  # a report without a time can't be placed
            continue
        run, task, sub = (str(report.get(k, "")) for k in ("runId", "taskId", "subtaskId"))
        last[(run, task, sub)] = report
        starts.setdefault((task, sub), []).append((at, run))
    found = []
    for (run, task, sub), report in last.items():
        done, kinds = _done(report)
        if not done:
            continue
        at = _when(report.get("createdAt")) or datetime.min.replace(tzinfo=UTC)
        signals = [(kind, at) for kind in kinds]
        later = min((t for t, r in starts[(task, sub)] if r != run and t > at), default=None)
        if later is not None:
            signals.append(("rework", later))
        found.append(
            FinishedTask(id=f"{run}/{task}/{sub}", completed_at=at, signals=tuple(signals))
        )
    return sorted(found, key=lambda t: (t.completed_at, t.id))


def _board_task(data: object) -> FinishedTask | str | None:
    """A board line's task, what is wrong with it, or ``None`` for an open task."""
    if not isinstance(data, dict):
        return f"expected an object with id, completedAt and signals, got {_serde.kind(data)}"
    task_id = data.get("id")
    if not isinstance(task_id, str | int) or isinstance(task_id, bool) or task_id == "":
        return "$.id: expected a non-empty string or an integer"
    if data.get("completedAt") is None:
        return None
    completed = _when(data["completedAt"])
    if completed is None:
        return f"$.completedAt: expected an ISO 8601 time, got {_shown(data['completedAt'])}"
    signals = _board_signals(data.get("signals", []))
    if isinstance(signals, str):
        return signals
    return FinishedTask(id=str(task_id), completed_at=completed, signals=signals)


def _board_signals(raw: object) -> tuple[tuple[str, datetime], ...] | str:
    if not isinstance(raw, list):
        return f"$.signals: expected a list, got {_serde.kind(raw)}"
    signals = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            return f"$.signals[{index}]: expected an object with a kind and an at"
        at = _when(item.get("at"))
        if at is None:
            return f"$.signals[{index}].at: expected an ISO 8601 time, got {_shown(item.get('at'))}"
        signals.append((item["kind"], at))
    return tuple(signals)


def _shown(value: object) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 40 else text[:37] + "..."  # noqa: PLR2004


def read_board(raw: bytes, *, source: str = "board") -> tuple[list[FinishedTask], int, list[str]]:
    """Read a board export of tasks (docs/reports.md); open tasks are skipped silently.

    Returns:
        The finished tasks, as :func:`~reflexkit.reports._calibration.read_records` returns them.
    """
    return read_records(raw, _board_task, source=source)


def _kill(completed: int, rate: float | None) -> KillCondition:
    rule = (
        f"base rate under {BASE_RATE_FLOOR:.0%}: fewer finished tasks than that get a "
        "machine-detectable outcome in the window -> keep self-reports as caveat notes only"
    )
    if rate is None or completed < MIN_TASKS:
        verdict = f"undecided: {completed} finished tasks; at least {MIN_TASKS} are needed"
        return KillCondition(rule=rule, met=None, verdict=verdict)
    if rate < BASE_RATE_FLOOR:
        return KillCondition(rule=rule, met=True, verdict=f"MET: base rate {rate:.0%}")
    return KillCondition(rule=rule, met=False, verdict=f"not met: base rate {rate:.0%}")


def detectability(
    tasks: Iterable[FinishedTask], *, window_days: int = 30, source: str = "reports"
) -> Detectability:
    """Count the finished tasks whose outcome a machine could tell within *window_days*.

    Args:
        tasks: The finished tasks (:func:`tasks_from_reports` or :func:`read_board`).
        window_days: How long after completion a signal may come.
        source: Where they came from, for the output.

    Returns:
        The base rate, per signal kind, the first undetectable ids and the kill condition.
    """
    window = timedelta(days=window_days)
    completed = detectable = 0
    by_signal: dict[str, int] = {}
    missing: list[str] = []
    for task in tasks:
        completed += 1
        kinds = sorted({k for k, at in task.signals if at <= task.completed_at + window})
        if kinds:
            detectable += 1
            for kind in kinds:
                by_signal[kind] = by_signal.get(kind, 0) + 1
        elif len(missing) < _SHOWN:
            missing.append(task.id)
    rate = detectable / completed if completed else None
    return Detectability(
        source=source,
        window_days=window_days,
        completed=completed,
        detectable=detectable,
        rate=None if rate is None else round(rate, 4),
        by_signal=dict(sorted(by_signal.items())),
        undetectable=tuple(missing),
        kill_condition=_kill(completed, rate),
    )
