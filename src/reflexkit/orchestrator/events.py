"""Events of an orchestrator run, and the JSONL run log they are written to.

A run log starts with ``run_started``, and ends with ``run_finished`` or, when a signal
stopped it, ``run_interrupted``; every subtask ends with exactly one of ``passed``,
``exhausted``, ``stuck``, ``skipped``, ``budget_spent``, ``setup_failed`` or ``interrupted``
(``setup_failed`` with an empty ``subtaskId`` when the subagent's preflight failed before any
subtask started). String values are stripped of terminal control sequences.

Every step of a run is an :class:`Event`; the orchestrator hands each one to its ``on_event``
callback, which may print it, show it live, and append it to a :class:`RunLog`: one camelCase
JSON object per line, for example::

    {"kind":"verification_failed","subtaskId":"discount","attempt":1,
     "at":"2026-01-31T12:00:00.123456Z","data":{"command":"pytest -q","exitCode":1}}
"""

from __future__ import annotations

import enum
from datetime import datetime
from pathlib import Path
from typing import Self

import attrs
import orjson

from reflexkit import _serde
from reflexkit._lines import LineWriter
from reflexkit.models import utcnow

__all__ = ["Event", "EventData", "EventKind", "RunLog", "led_to_success"]

EventData = dict[str, str | int | float | bool | None]
"""The details of an event: flat JSON scalars under camelCase keys."""


class EventKind(enum.StrEnum):
    """What happened."""

    RUN_STARTED = "run_started"
    ATTEMPT_STARTED = "attempt_started"
    VERIFICATION_FAILED = "verification_failed"
    REFLECTION_GENERATED = "reflection_generated"
    RETRY = "retry"
    # How a subtask ended: exactly one of these per subtask of a run.
    PASSED = "passed"
    EXHAUSTED = "exhausted"
    STUCK = "stuck"
    SKIPPED = "skipped"
    BUDGET_SPENT = "budget_spent"
    SETUP_FAILED = "setup_failed"
    INTERRUPTED = "interrupted"
    # How the run ended: one of these.
    RUN_FINISHED = "run_finished"
    RUN_INTERRUPTED = "run_interrupted"


@attrs.frozen(kw_only=True)
class Event:
    """One step of a run.

    Attributes:
        kind: What happened.
        subtask_id: The subtask it happened to; ``""`` for run-wide events.
        attempt: The attempt number (1-based); 0 for run-wide events.
        at: When, in UTC.
        data: Details such as ``command``, ``exitCode``, ``source``, ``reason``.
    """

    kind: EventKind
    subtask_id: str = ""
    attempt: int = 0
    at: datetime = attrs.field(factory=utcnow)
    data: EventData = attrs.field(factory=dict)


class RunLog:
    """Append-only JSONL log of a run's events.

    Each event is one line written with a single ``os.write`` on an ``O_APPEND`` descriptor,
    so lines from concurrent writers never interleave. The file and its folder are created
    on first use.

    Args:
        path: The log file, e.g. ``.reflexkit/runs/<run id>.jsonl``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = LineWriter(path)  # the writer the fixture recorder shares (#19)

    def write(self, event: Event) -> None:
        """Append one event as a line of camelCase JSON."""
        self._lines.append(orjson.dumps(_serde.unstructure(event)))

    __call__ = write

    def close(self) -> None:
        """Close the file; a later :meth:`write` opens it again."""
        self._lines.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def led_to_success(runs: Path) -> set[str]:
    """Return the ids of the reflections that preceded a passing attempt, over all run logs.

    Reads every ``*.jsonl`` in *runs* (``.reflexkit/runs``); lines that can't be read are
    skipped, and a missing folder means none.
    """
    ids: set[str] = set()
    if not runs.is_dir():
        return ids
    for log in sorted(runs.glob("*.jsonl")):
        for line in log.read_bytes().splitlines():
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(event, dict) or event.get("kind") != EventKind.PASSED.value:
                continue
            data = event.get("data")
            value = data.get("ledToSuccess") if isinstance(data, dict) else None
            if isinstance(value, str):
                ids.update(i for i in value.split(",") if i)
    return ids
