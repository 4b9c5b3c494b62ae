"""A standing trigger: the insight rules and the analysis, run as the run logs grow (#28).

``reflexkit insights --watch`` sweeps the history when a run logs a failure and runs the
analysis every ``every`` attempts, handing out what it finds as events. Idle, it blocks in
``poll`` on inotify (or backs off from 50 ms to 2 s); SIGINT and SIGTERM end it after the
step in progress. docs/insights.md describes it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Protocol, Self

import attrs

from reflexkit._files import make_dirs
from reflexkit.insights._analysis import AnalysisCycle, AnalysisOutcome, active_tasks
from reflexkit.insights._events import InsightEvent, insight_events
from reflexkit.insights._history import AttemptRecord, RunHistory
from reflexkit.insights._models import ActiveTask, Finding, Rule
from reflexkit.insights._rules import HistoryRules
from reflexkit.insights._store import FindingLog, PausedSubtasks
from reflexkit.models import utcnow

__all__ = ["FolderWaker", "InsightWatch", "StopSignals", "analysis_input"]

log = logging.getLogger("reflexkit.insights")

_WATCHED = 0x2 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
"""inotify: modify, moved-to, create, delete, delete-self, move-self (one event a write)."""
_GONE = 0x400 | 0x800 | 0x8000  # delete-self, move-self, ignored: watch the folder again
_POLL_FIRST_MS = 50
_POLL_MOST_MS = 2_000
_RECENT_RUNS = 50
"""The runs whose subtasks the analysis is told are active."""


class StopSignals:
    """SIGINT and SIGTERM as a flag and a descriptor to wait on, while the block lasts.

    Use as a ``with`` block in the main thread: the handlers set :attr:`stopped` and wake a
    ``poll`` on :attr:`fd`; at the end the previous handlers and wake-up descriptor are put
    back. Outside the main thread (where signals can't be caught) only :meth:`stop` stops.
    """

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous: dict[int, object] = {}
        self._wakeup = -1

    @property
    def fd(self) -> int:
        """Readable once a signal arrived or :meth:`stop` was called."""
        return self._read

    def stop(self) -> None:
        """Stop the watch from another thread (as a signal would)."""
        self.stopped.set()
        with contextlib.suppress(OSError):
            os.write(self._write, b"\0")

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.stop()

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
            self._wakeup = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._previous:
            signal.set_wakeup_fd(self._wakeup)
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]  # what signal() gave
        os.close(self._read)
        os.close(self._write)


class Waker(Protocol):
    """**Protocol**: blocks until the folder may have changed, or the watch should stop."""

    def wait(self) -> bool:
        """Return ``True`` when the folder may have changed, ``False`` to stop."""
        ...

    def close(self) -> None:
        """Release what the waker holds."""
        ...


class FolderWaker:
    """Wakes when a file in *folder* is written, created or removed; no CPU while waiting.

    Args:
        folder: The folder (created when missing).
        stop: The signals that end the wait.
        inotify: Use inotify (``None``: when it can be had, on Linux).
    """

    def __init__(self, folder: Path, stop: StopSignals, *, inotify: bool | None = None) -> None:
        self.folder = folder
        self.stop = stop
        make_dirs(folder)
        self._inotify = _open_inotify(folder) if inotify is not False else None
        if inotify and self._inotify is None:
            log.warning("inotify is not available here; the watch looks at %s now and then", folder)
        self._poll = select.poll()
        self._poll.register(stop.fd, select.POLLIN)
        if self._inotify is not None:
            self._poll.register(self._inotify.fileno(), select.POLLIN)
        self._seen = _signature(folder)
        self._sleep_ms = _POLL_FIRST_MS

    @property
    def blocking(self) -> bool:
        """It blocks on inotify (else it sleeps with a backoff between looks)."""
        return self._inotify is not None

    def wait(self) -> bool:
        """Block until the folder may have changed (``True``) or a stop was asked (``False``)."""
        while not self.stop.stopped.is_set():
            timeout = None if self._inotify is not None else self._sleep_ms
            ready = {fd for fd, _ in self._poll.poll(timeout)}
            if self.stop.stopped.is_set() or self.stop.fd in ready:
                return False
            if self._inotify is not None:
                if self._drained():
                    return True
                continue
            now = _signature(self.folder)
            if now != self._seen:
                self._seen, self._sleep_ms = now, _POLL_FIRST_MS
                return True
            self._sleep_ms = min(self._sleep_ms * 2, _POLL_MOST_MS)
        return False

    def _drained(self) -> bool:
        """Read the pending inotify events; watch the folder again if it went away."""
        assert self._inotify is not None  # noqa: S101 -- wait() checked
        events = self._inotify.read(timeout=0)
        if any(e.mask & _GONE for e in events):
            make_dirs(self.folder)
            with contextlib.suppress(OSError):
                self._inotify.add_watch(str(self.folder), _WATCHED)
        return bool(events)

    def close(self) -> None:
        """Close the inotify descriptor."""
        if self._inotify is not None:
            self._inotify.close()


def _open_inotify(folder: Path) -> _INotify | None:
    try:
        from inotify_simple import INotify  # type: ignore[import-untyped]  # noqa: PLC0415 -- Linux only

        watcher: _INotify = INotify(nonblocking=True)
    except (ImportError, OSError, AttributeError):
        return None
    try:
        watcher.add_watch(str(folder), _WATCHED)
    except OSError as err:  # no watches left (fs.inotify.max_user_watches)
        log.warning("can't watch %s with inotify (%s)", folder, err)
        watcher.close()
        return None
    return watcher


class _INotify(Protocol):
    """What the watch uses of ``inotify_simple.INotify``."""

    def fileno(self) -> int: ...
    def add_watch(self, path: str, mask: int) -> int: ...
    def read(self, timeout: int | None = None) -> Sequence[_InotifyEvent]: ...
    def close(self) -> None: ...


class _InotifyEvent(Protocol):
    @property
    def mask(self) -> int: ...


def _signature(folder: Path) -> frozenset[tuple[str, int, int]]:
    """The folder's files by name, size and modification time (the polling fallback's look)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return frozenset()
    found = set()
    for entry in entries:
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            found.add((entry.name, info.st_size, info.st_mtime_ns))
    return frozenset(found)


def analysis_input(
    history: RunHistory,
    findings: FindingLog,
    paused: PausedSubtasks,
    *,
    lookback_hours: int,
    now: datetime,
) -> tuple[list[Finding], list[AttemptRecord], list[ActiveTask]]:
    """What an analysis between runs is asked about.

    Returns:
        The recent findings (not the analysis's own), the recent failed attempts and the
        subtasks of the recent runs.
    """
    since = now - timedelta(hours=lookback_hours)
    recent = [f for f in findings.read() if f.rule is not Rule.ANALYSIS and f.created_at >= since]
    failures = [a for a in history.attempts() if a.failed and (a.at is None or a.at >= since)]
    tasks = active_tasks(history, paused.paused(), runs=_RECENT_RUNS)
    return recent, failures, tasks


def _at_least_one(every: int) -> int:
    return max(every, 1)


@attrs.define(eq=False, kw_only=True)
class InsightWatch:
    """The standing trigger: rules on every new failed attempt, the analysis every N done.

    Args:
        rules: The live rules over the run logs (``app.insights.rules()``).
        analysis: The analysis (built on first use: no client while nothing is due).
        findings: The findings log (what the analysis is asked about).
        paused: The paused subtasks.
        every: Analyse every this many completed attempts (``insights.batchThreshold``).
        lookback_hours: How far back the analysis looks (``insights.lookbackHours``).
        emit: Gets each event, in order.
        clock: The time of the events.
    """

    rules: HistoryRules
    analysis: Callable[[], AnalysisCycle | None]
    findings: FindingLog
    paused: PausedSubtasks
    every: int = attrs.field(converter=_at_least_one)
    lookback_hours: int
    emit: Callable[[InsightEvent], None]
    clock: Callable[[], datetime] = utcnow
    failed: int = attrs.field(init=False)
    done: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.failed, self.done = self._counts(self.rules.reader.history())

    @staticmethod
    def _counts(history: RunHistory) -> tuple[int, int]:
        """Failures (attempts, and runs ended stuck or exhausted) and completed attempts."""
        failed = sum(run.failed for run in history.runs)
        done = 0
        for attempt in history.attempts():
            failed += attempt.failed
            done += attempt.failed or attempt.passed
        return failed, done

    def step(self) -> list[InsightEvent]:
        """Look at what the run logs gained since the last step; act on it; emit the events.

        Never raises: a failing step is logged and the watch goes on.
        """
        try:
            return self._step()
        except Exception:
            log.exception("the insight watch failed on a change of the run logs; going on")
            return []

    def _step(self) -> list[InsightEvent]:
        history = self.rules.reader.history()
        failed, done = self._counts(history)
        found: list[Finding | AnalysisOutcome] = []
        if failed > self.failed:
            found += self.rules.sweep()
        if done // self.every > self.done // self.every:
            cycle = self.analysis()
            if cycle is not None:
                recent, failures, tasks = analysis_input(
                    history,
                    self.findings,
                    self.paused,
                    lookback_hours=self.lookback_hours,
                    now=self.clock(),
                )
                found.append(cycle.run(recent, failures, tasks=tasks))
        self.failed, self.done = failed, done
        events = insight_events(found, at=self.clock())
        for event in events:
            self.emit(event)
        return events

    def run(self, waker: Waker) -> Iterator[list[InsightEvent]]:
        """Step after every wake-up of *waker* until it says stop; yield each step's events."""
        while waker.wait():
            yield self.step()
