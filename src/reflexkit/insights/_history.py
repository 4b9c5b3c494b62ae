"""A typed, tolerant view of the run logs (``.reflexkit/runs/*.jsonl``) for the rules.

Read as plain JSON, so insights never imports the orchestrator, and incrementally
(:class:`RunLogReader` parses only what was appended). Unknown kinds and fields are skipped,
bad lines counted (:attr:`RunHistory.bad_lines`); the fields read are listed in
docs/insights.md.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import orjson

from reflexkit._lines import open_lines, scan
from reflexkit._text import cut_middle
from reflexkit.events import Event, EventKind

__all__ = [
    "MAX_ERROR_CHARS",
    "AttemptRecord",
    "RunHistory",
    "RunLogReader",
    "SubtaskRun",
    "error_excerpt",
]

log = logging.getLogger("reflexkit.insights")

_FAILED_ENDINGS = frozenset({"stuck", "exhausted"})


@attrs.define(kw_only=True)
class AttemptRecord:
    """One attempt of a subtask, as far as the run log tells.

    Attributes:
        run_id: The run.
        task_id: The task (``""`` when the log had no ``run_started``).
        subtask_id: The subtask.
        attempt: The attempt number.
        at: When it started (or when it was first seen).
        passed: It passed; ``False`` while unknown or failed.
        failed: It failed.
        failure_type: The failure's type by value (``test_failure`` ...), when failed.
        timed_out: The attempt ran out of time.
        fingerprint: The failure's fingerprint, ``""`` when unknown.
        files_modified: The files it changed; ``None`` when the log does not say.
        output_chars: The length of the agent's output; ``None`` when the log does not say.
        command: The command that failed (``data.command``), ``""`` when unknown.
        error: What the failure printed (``data.verificationOutput``, else
            ``data.subagentError``, else ``data.agentOutput``), its head and tail within
            :data:`MAX_ERROR_CHARS`; ``""`` when unknown.
    """

    run_id: str
    task_id: str
    subtask_id: str
    attempt: int
    at: datetime | None
    passed: bool = False
    failed: bool = False
    failure_type: str | None = None
    timed_out: bool = False
    fingerprint: str = ""
    files_modified: tuple[str, ...] | None = None
    output_chars: int | None = None
    command: str = ""
    error: str = ""


@attrs.define(kw_only=True)
class SubtaskRun:
    """A subtask's part of one run: its attempts and how it ended.

    Attributes:
        run_id: The run.
        task_id: The task.
        subtask_id: The subtask.
        started_at: When its first attempt started.
        outcome: ``passed``, ``stuck``, ``exhausted`` (the endings the rules count), or
            ``budget``, ``interrupted``, ``setup_error``, ``skipped``, ``paused``; ``None``
            when the log does not say.
        attempts: Its attempts in order.
    """

    run_id: str
    task_id: str
    subtask_id: str
    started_at: datetime | None
    outcome: str | None = None
    attempts: list[AttemptRecord] = attrs.Factory(list)

    @property
    def failed(self) -> bool:
        """It ended stuck or exhausted."""
        return self.outcome in _FAILED_ENDINGS


@attrs.frozen(kw_only=True)
class RunHistory:
    """Every subtask run found in the logs, oldest first.

    Attributes:
        runs: The subtask runs, in the order of the history (see :class:`RunLogReader`).
        order: The run ids in that order, runs with no subtask run included: a position
            in it is how "after a pause or a resume" is told.
        bad_lines: Lines that were not JSON objects with a ``kind``; skipped.
        unknown_kinds: Events of kinds this view does not use; skipped.
        led_to_success: The ids of reflections a passing attempt had in its prompt
            (``data.ledToSuccess`` of ``passed`` events).
    """

    runs: tuple[SubtaskRun, ...] = ()
    order: tuple[str, ...] = ()
    led_to_success: frozenset[str] = frozenset()
    bad_lines: int = 0
    unknown_kinds: int = 0

    def of(self, task_id: str, subtask_id: str) -> list[SubtaskRun]:
        """Return the runs of one subtask, oldest first."""
        return [r for r in self.runs if r.subtask_id == subtask_id and r.task_id == task_id]

    def latest(self) -> str:
        """The id of the last run of the history; ``""`` when there is none."""
        return self.order[-1] if self.order else ""

    def after(self, run_id: str) -> frozenset[str]:
        """The ids of the runs that come after *run_id* (all of them when it is not known)."""
        if run_id not in self.order:
            return frozenset(self.order)
        return frozenset(self.order[self.order.index(run_id) + 1 :])

    def attempts(self) -> Iterator[AttemptRecord]:
        """Yield every attempt, in the order of their runs."""
        for run in self.runs:
            yield from run.attempts


# --- parsing -----------------------------------------------------------------------------------

_KNOWN = frozenset(
    {
        EventKind.RUN_STARTED,
        EventKind.ATTEMPT_STARTED,
        EventKind.VERIFICATION_FAILED,
        EventKind.REFLECTION_GENERATED,
        EventKind.RETRY,
        EventKind.STUCK,
        EventKind.PASSED,
        EventKind.EXHAUSTED,
        EventKind.RUN_FINISHED,
        EventKind.RUN_INTERRUPTED,
        EventKind.PAUSED,
        EventKind.FINDING,
        EventKind.BUDGET_SPENT,
        EventKind.INTERRUPTED,
        EventKind.SETUP_FAILED,
        EventKind.SKIPPED,
    }
)

_OUTCOME_OF: dict[str, str] = {
    EventKind.PASSED: "passed",
    EventKind.STUCK: "stuck",
    EventKind.EXHAUSTED: "exhausted",
    EventKind.PAUSED: "paused",
    EventKind.BUDGET_SPENT: "budget",  # the loop's outcome name since #14
    EventKind.INTERRUPTED: "interrupted",
    EventKind.SETUP_FAILED: "setup_error",
    EventKind.SKIPPED: "skipped",
}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _files(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str) and v)
    if isinstance(value, str):
        return tuple(p.strip() for p in value.replace("\n", ",").split(",") if p.strip())
    return None


@attrs.define
class _FileState:
    """What has been read of one run: from its log file, or from its events in-process."""

    offset: int = 0
    inode: int = 0
    written_ns: int = 0  # the file's modification time: its position among the run logs
    bad_lines: int = 0
    unknown_kinds: int = 0
    run_id: str = ""
    task_id: str = ""
    runs: list[SubtaskRun] = attrs.Factory(list)
    open_runs: dict[str, SubtaskRun] = attrs.Factory(dict)
    led_to_success: set[str] = attrs.Factory(set)

    def position(self) -> tuple[int, datetime]:
        """Where the log stands among the others: last written, then first stamped.

        The file system's time orders run logs written one after another; its ticks are
        coarse (milliseconds), so logs written within one tick fall back to their first
        event's stamp.
        """
        first = self.runs[0].started_at if self.runs else None
        return self.written_ns, first or _NEVER

    def feed(self, line: bytes) -> None:
        """Take one line of a run log."""
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            self.bad_lines += 1
            return
        if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
            self.bad_lines += 1
            return
        raw = event.get("data")
        self.take(
            event["kind"],
            _str(event.get("subtaskId")),
            _int(event.get("attempt")) or 0,
            _time(event.get("at")),
            raw if isinstance(raw, dict) else {},
        )

    def take(
        self, kind: str, subtask: str, number: int, at: datetime | None, data: dict[str, Any]
    ) -> None:
        """Take one event, from a line or from the loop in-process."""
        if kind not in _KNOWN:
            self.unknown_kinds += 1
            return
        if kind == EventKind.RUN_STARTED:
            self.run_id = _str(data.get("runId")) or self.run_id
            self.task_id = _str(data.get("taskId"))
            self.open_runs = {}
            return
        if subtask and kind != EventKind.FINDING:  # a finding names a subtask: no step of it
            self._apply(kind, subtask, number, at, data)

    def _run(self, subtask: str, at: datetime | None) -> SubtaskRun:
        run = self.open_runs.get(subtask)
        if run is None:
            run = SubtaskRun(
                run_id=self.run_id, task_id=self.task_id, subtask_id=subtask, started_at=at
            )
            self.open_runs[subtask] = run
            self.runs.append(run)
        return run

    def _attempt(self, run: SubtaskRun, number: int, at: datetime | None) -> AttemptRecord:
        if run.attempts and run.attempts[-1].attempt == number:
            return run.attempts[-1]
        record = AttemptRecord(
            run_id=run.run_id,
            task_id=run.task_id,
            subtask_id=run.subtask_id,
            attempt=number,
            at=at,
        )
        run.attempts.append(record)
        return record

    def _apply(
        self, kind: str, subtask: str, number: int, at: datetime | None, data: dict[str, Any]
    ) -> None:
        run = self._run(subtask, at)
        run.outcome = _OUTCOME_OF.get(kind, run.outcome)
        if kind == EventKind.PAUSED or number < 1:
            return
        if kind in _STEPS:
            record = self._attempt(run, number, at)
        elif run.attempts and run.attempts[-1].attempt == number:
            record = run.attempts[-1]
        else:
            return
        self._update(record, kind, data)

    def _update(self, record: AttemptRecord, kind: str, data: dict[str, Any]) -> None:
        """What an attempt's event says of it."""
        if kind == EventKind.VERIFICATION_FAILED:
            record.failed = True
            record.failure_type = _str(data.get("failureType")) or None
            record.timed_out = data.get("timedOut") is True or record.failure_type == "timeout"
            record.fingerprint = _str(data.get("fingerprint")) or record.fingerprint
            record.command = _str(data.get("command"))
            record.error = error_excerpt(
                next((t for k in _ERROR_KEYS if (t := _str(data.get(k))).strip()), "")
            )
        elif kind == EventKind.PASSED:
            record.passed = True
            ids = _str(data.get("ledToSuccess"))
            self.led_to_success.update(i for i in ids.split(",") if i)
        elif kind == EventKind.REFLECTION_GENERATED and not record.fingerprint:
            record.fingerprint = _str(data.get("fingerprint"))
        if kind in _RESULTS:
            files = _files(data.get("filesModified"))
            record.files_modified = files if files is not None else record.files_modified
            chars = _int(data.get("outputChars"))
            record.output_chars = chars if chars is not None else record.output_chars


MAX_ERROR_CHARS = 800
"""The most characters of a failure's output an attempt record keeps (head and tail)."""
_ERROR_KEYS = ("verificationOutput", "subagentError", "agentOutput")


def error_excerpt(text: str) -> str:
    """A failure's output bounded to :data:`MAX_ERROR_CHARS`: its head and its tail."""
    return cut_middle(text.strip(), MAX_ERROR_CHARS, at_lines=True) if text.strip() else ""


_NEVER = datetime.min.replace(tzinfo=UTC)
_RESULTS = frozenset({EventKind.VERIFICATION_FAILED, EventKind.PASSED})
_STEPS = _RESULTS | {EventKind.ATTEMPT_STARTED}


class RunLogReader:
    """Reads the run history of a project: its run logs, incrementally, and the live runs.

    The history is a sequence: the run logs in the order they were last written (the file
    system's modification time; within one of its ticks, the first stamp, then the name),
    a run this process follows live (:meth:`observe`) in its log's place, and the live runs
    with no log last. Positions in it, never the events' own stamps, say what came after a
    pause: a deterministic run stamps 2000-01-01, a run under a ``SOURCE_DATE_EPOCH`` ahead
    stamps the future, and the wall clock may jump.

    Args:
        runs: The folder of run logs (``.reflexkit/runs``).
    """

    def __init__(self, runs: Path) -> None:
        self.runs = runs
        self._files: dict[str, _FileState] = {}
        self._live: dict[str, _FileState] = {}  # run id -> the run followed in-process
        self._current: _FileState | None = None
        self._refused: set[str] = set()
        self._lock = threading.Lock()

    def observe(self, event: Event, *, run_id: str | None = None) -> None:
        """Take an event of a run this process runs (a subscriber of the loop).

        The run's own log file, if any, is then left out of the history: its events are
        here already, whether or not they are written yet (a deterministic run writes a
        subtask's events only when it ends). *run_id* names the run the event belongs to,
        so several loops may share one reader; ``None``: the run that started last.
        """
        with self._lock:
            if event.kind is EventKind.RUN_STARTED:
                started = run_id or _str(event.data.get("runId"))
                self._current = _FileState(run_id=started)
                self._live.pop(started, None)
                self._live[started] = self._current
                while len(self._live) > _MAX_LIVE_RUNS:
                    del self._live[next(iter(self._live))]
            state = self._current if run_id is None else self._live.get(run_id)
            if state is not None:
                data: dict[str, Any] = dict(event.data)
                state.take(event.kind, event.subtask_id, event.attempt, event.at, data)

    def history(self) -> RunHistory:
        """Return every subtask run in the logs, reading only what changed since last time.

        Safe to call from several threads (the loop's parallel subtasks): reads are serialised.
        """
        with self._lock:
            return self._history()

    def _history(self) -> RunHistory:
        self._scan()
        files = sorted(self._files.items(), key=lambda item: (*item[1].position(), item[0]))
        # A live run takes its log's place when it has one (its events are all here), else
        # it comes last: it is running now, or ran in this process without a log.
        states = [self._live.get(s.run_id, s) for _path, s in files]
        logged = {s.run_id for _path, s in files}
        states += [s for run_id, s in self._live.items() if run_id not in logged]
        return RunHistory(
            runs=tuple(run for state in states for run in state.runs),
            order=tuple(dict.fromkeys(state.run_id for state in states)),
            bad_lines=sum(s.bad_lines for s in states),
            unknown_kinds=sum(s.unknown_kinds for s in states),
            led_to_success=frozenset().union(*(s.led_to_success for s in states)),
        )

    def _scan(self) -> None:
        """Read what was appended to each log since the last read; forget the logs gone."""
        seen: set[str] = set()
        try:
            entries = list(os.scandir(self.runs))
        except (FileNotFoundError, NotADirectoryError):
            entries = []
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            path = entry.path
            seen.add(path)
            state = self._files.get(path)
            try:
                info = entry.stat()
            except OSError:
                continue
            if state is not None and (state.inode, state.offset) == (info.st_ino, info.st_size):
                continue  # unchanged since the last read: not even opened
            self._refresh(path)
        for gone in set(self._files) - seen:
            del self._files[gone]

    def _refresh(self, path: str) -> None:
        state = self._files.get(path)
        try:
            fd = open_lines(path)
        except OSError as err:
            self._cannot_read(path, err)
            return
        try:
            info = os.fstat(fd)
            if state is None or state.inode != info.st_ino or info.st_size < state.offset:
                state = _FileState(inode=info.st_ino, run_id=Path(path).stem)
                self._files[path] = state
            # Whole lines only: a last line with no newline is still being written (or torn).
            for _offset, end, line in scan(fd, state.offset, tail=False):
                if line is None:
                    state.bad_lines += 1  # too long to be an event
                elif line.strip():
                    state.feed(line)
                state.offset = end
            state.written_ns = info.st_mtime_ns
        except OSError as err:
            self._cannot_read(path, err)
        finally:
            os.close(fd)
        self._refused.discard(path)

    def _cannot_read(self, path: str, err: OSError) -> None:
        """Say once per file that it can't be read (a FIFO, a link, a folder, an I/O error)."""
        if path not in self._refused:
            self._refused.add(path)
            log.warning("%s: cannot read the run log: %s", path, err.strerror or err)


_MAX_LIVE_RUNS = 1_000
"""The most runs one process follows live (a long-lived process runs the loop many times)."""
