"""Events of an orchestrator run, and the JSONL run log they are written to.

Every step of a run is an :class:`Event`, handed in-process to the loop's subscribers (the
insight rules, a live view, entry points of :data:`SUBSCRIBER_GROUP`) and to a
:class:`RunLog`, which appends it as one camelCase JSON object per line. The event kinds and
their fields are listed once, in docs/orchestrator.md.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Self

import attrs
import orjson

from reflexkit import _serde
from reflexkit._lines import LineWriter, open_lines, scan
from reflexkit._text import steady
from reflexkit.models import utcnow
from reflexkit.redaction._gate import outbound_data

__all__ = [
    "DURATION_KEYS",
    "OUTPUT_KEYS",
    "SUBSCRIBER_GROUP",
    "Event",
    "EventData",
    "EventKind",
    "RunLog",
    "StagedEvents",
    "Subscriber",
    "led_to_success",
    "load_subscribers",
]

log = logging.getLogger("reflexkit.orchestrator")

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
    NEEDS_INPUT = "needs_input"
    # Beside an attempt (#18): never an ending, never a change to the outcome.
    NEEDS_REVIEW = "needs_review"
    PAUSED = "paused"  # skipped with no attempt: the insight rules paused it (#17)
    # What the insight rules or the analysis noticed (#17): one finding's fields in data.
    FINDING = "finding"
    # A file modified in many failed attempts (beside its finding): path, detail (#28).
    FILE_FLAGGED = "file_flagged"
    # An analysis of the findings finished: findingsCount, actionsRecommended, source (#28).
    ANALYSIS_COMPLETED = "analysis_completed"
    # The attempt (or its checks) changed reflexkit's own folder: what was repaired, what not.
    OWN_STATE_CHANGED = "own_state_changed"
    # The attempt changed what checks it (tests, a check's program): reported, never a failure.
    CHECKS_CHANGED = "checks_changed"
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


Subscriber = Callable[[Event], None]
"""Gets every event of a run, in order, in-process (see ``Orchestrator``)."""

SUBSCRIBER_GROUP = "reflexkit.subscribers"
"""The entry-point group of subscribers ``reflexkit run`` adds to every run it starts."""


def load_subscribers(group: str = SUBSCRIBER_GROUP) -> list[Subscriber]:
    """Load the subscribers installed packages register under *group* (docs/orchestrator.md).

    Each entry point names a callable that takes an :class:`Event`. One that can't be loaded,
    or is not callable, is skipped with a warning: a plugin never stops the run.
    """
    from importlib.metadata import entry_points  # noqa: PLC0415 -- dear; only `run` needs it

    found: list[Subscriber] = []
    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            subscriber = entry.load()
        except Exception as err:  # noqa: BLE001 -- any plugin error: skip it, say so
            log.warning("event subscriber %s can't be loaded (%s); skipped", entry.name, err)
            continue
        if not callable(subscriber):
            log.warning("event subscriber %s is not callable; skipped", entry.name)
            continue
        found.append(subscriber)
    return found


DURATION_KEYS = frozenset({"durationMs", "subagentMs", "latencyMs", "judgeMs"})
"""The event data keys that hold wall-clock durations: 0 in a normalised run log (#16)."""

OUTPUT_KEYS = frozenset({"agentOutput", "verificationOutput", "subagentError"})
"""The keys that hold tool output: its durations and project paths are steadied when the run
log is normalised, since tools print timings (``Ran 1 test in 0.005s``) and absolute paths."""

_ENDINGS = frozenset(
    {
        EventKind.PASSED,
        EventKind.EXHAUSTED,
        EventKind.STUCK,
        EventKind.SKIPPED,
        EventKind.BUDGET_SPENT,
        EventKind.SETUP_FAILED,
        EventKind.INTERRUPTED,
    }
)


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


class RunLog:
    """Append-only JSONL log of a run's events.

    Each event is one line written with a single ``os.write`` on an ``O_APPEND`` descriptor,
    so lines from concurrent writers never interleave. The file and its folder are created
    on first use; a symbolic link, a folder or a FIFO at *path* is refused.

    The log never breaks the run it records: an event that can't be written (a full disk,
    a read-only folder, a planted link) is counted in :attr:`lost`, and the first such
    failure, and the first write after a recovery, is logged once on
    ``reflexkit.orchestrator``, not every event.

    Args:
        path: The log file, e.g. ``.reflexkit/runs/<run id>.jsonl``.
        clock: Stamps each event's ``at`` as it is written (a deterministic run passes its
            :class:`~reflexkit.models.LogicalClock`); ``None`` keeps the event's own time.
        normalise_durations: Write the durations (:data:`DURATION_KEYS`) as 0, so logs of
            two runs compare byte for byte, and steady the tool output (:data:`OUTPUT_KEYS`:
            durations written ``<dur>``, *root* cut from paths). ``None`` (the default)
            means: when the environment has ``CI=true``.
        root: The project folder, cut from paths in tool output when normalising.
        omit: Kinds of events not written (``reflexion.log: false`` omits
            ``reflection_generated``); the other subscribers still get them.

    Attributes:
        lost: How many events could not be written.
    """

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], datetime] | None = None,
        normalise_durations: bool | None = None,
        root: str | None = None,
        omit: Collection[EventKind] = (),
    ) -> None:
        self.path = path
        self.omit = frozenset(omit)
        self.root = root
        self.clock = clock
        self.normalise_durations = _ci() if normalise_durations is None else normalise_durations
        self._lines = LineWriter(path)  # the writer the fixture recorder shares (#19)
        self.lost = 0
        self._failing = False

    def write(self, event: Event) -> None:
        """Append one event as a line of camelCase JSON; never raises on I/O (see above)."""
        if event.kind in self.omit:
            return
        if self.clock is not None:
            event = attrs.evolve(event, at=self.clock())
        if self.normalise_durations and (DURATION_KEYS | OUTPUT_KEYS).intersection(event.data):
            data = {k: self._steady(k, v) for k, v in event.data.items()}
            event = attrs.evolve(event, data=data)
        try:
            self._lines.append(orjson.dumps(outbound_data(_serde.unstructure(event), "run_log")))
        except OSError as err:
            self.lost += 1
            if not self._failing:
                self._failing = True
                log.warning(
                    "the run log %s can't be written (%s); the run goes on, its events are "
                    "not logged until it can be",
                    self.path,
                    err.strerror or err,
                )
            return
        if self._failing:
            self._failing = False
            log.warning("the run log %s is written again (%d events lost)", self.path, self.lost)

    def _steady(self, key: str, value: str | float | bool | None) -> Any:  # noqa: ANN401
        if key in DURATION_KEYS and value is not None:
            return 0
        if key in OUTPUT_KEYS and isinstance(value, str):
            return steady(value, root=self.root)
        return value

    __call__ = write

    def close(self) -> None:
        """Close the file; a later :meth:`write` opens it again."""
        self._lines.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class StagedEvents:
    """Hands events on in sequential order although subtasks run in parallel (#16).

    A subtask's events are held until it has ended and every subtask before it (in *order*,
    the order a sequential run takes) has been handed on; run-wide events pass straight
    through, and ``run_finished`` / ``run_interrupted`` first hand on whatever is held. So a
    ``--jobs`` run writes the same log, line for line, whatever the thread schedule.

    Args:
        sink: Receives the events (a :class:`RunLog`, for example).
        order: The subtask ids in sequential order.
    """

    def __init__(self, sink: Callable[[Event], None], order: Sequence[str]) -> None:
        self.sink = sink
        self.order = list(order)
        self._held: dict[str, list[Event]] = {subtask_id: [] for subtask_id in self.order}
        self._ended: set[str] = set()
        self._next = 0  # index in order of the first subtask not yet handed on

    def __call__(self, event: Event) -> None:
        """Hold or hand on one event (the orchestrator serialises the calls)."""
        if event.subtask_id in self._held:
            self._held[event.subtask_id].append(event)
            if event.kind in _ENDINGS:
                self._ended.add(event.subtask_id)
                self._release(finished=False)
            return
        if event.kind in {EventKind.RUN_FINISHED, EventKind.RUN_INTERRUPTED}:
            self._release(finished=True)
        self.sink(event)

    def _release(self, *, finished: bool) -> None:
        while self._next < len(self.order):
            subtask_id = self.order[self._next]
            if not finished and subtask_id not in self._ended:
                return
            for held in self._held[subtask_id]:
                self.sink(held)
            self._held[subtask_id] = []
            self._next += 1


def led_to_success(runs: Path) -> set[str]:
    """Return the ids of the reflections that preceded a passing attempt, over all run logs.

    Reads every ``*.jsonl`` in *runs* (``.reflexkit/runs``); lines and files that can't be
    read (a link, a FIFO, a folder) are skipped, and a missing folder means none.
    """
    ids: set[str] = set()
    if not runs.is_dir():
        return ids
    for log in sorted(runs.glob("*.jsonl")):
        for line in _lines_of(log):
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


def _lines_of(path: Path) -> Iterator[bytes]:
    """The lines of a run log short enough to be events; none when it can't be read."""
    try:
        fd = open_lines(path)
    except OSError as err:
        log.warning("%s: cannot read the run log: %s", path, err.strerror or err)
        return
    try:
        yield from (line for _offset, _end, line in scan(fd) if line)
    except OSError as err:
        log.warning("%s: cannot read the run log: %s", path, err.strerror or err)
    finally:
        os.close(fd)
