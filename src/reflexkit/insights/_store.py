"""Where insights keep their state: the findings log and the paused subtasks.

Both are append-only JSONL files under ``.reflexkit/`` (see :mod:`reflexkit.insights._jsonl`):
``insights.jsonl`` holds every finding, ``paused.jsonl`` every pause and resume, the latest
entry of a subtask winning. Appends from several processes never interleave, and nothing is
ever rewritten, so a crash can cost at most a torn last line, which is skipped and counted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path

from reflexkit.insights._history import RunLogReader
from reflexkit.insights._jsonl import append_records, read_records
from reflexkit.insights._models import Finding, PausedEntry, description_hash
from reflexkit.models import utcnow

__all__ = ["FindingLog", "PausedSubtasks"]


def _key(finding: Finding) -> tuple[str, str, str, str, str]:
    return (
        finding.rule.value,
        finding.subject_type.value,
        finding.task_id,
        finding.subject_id,
        finding.detail,
    )


class FindingLog:
    """The findings of a project, in ``.reflexkit/insights.jsonl``.

    A finding equal to one already logged (same rule, subject and detail) is not logged
    twice: the rules run at the start of every run and see the same history again.

    Args:
        path: The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped = 0
        self._known: set[tuple[str, str, str, str, str]] | None = None
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Finding]:
        """Yield every finding, oldest first; bad lines are counted in :attr:`skipped`."""
        return iter(self.read())

    def read(self) -> list[Finding]:
        """Return every finding, oldest first; bad lines are counted in :attr:`skipped`.

        Raises:
            StoreError: The file can't be read.
        """
        found: list[Finding] = []
        skipped = 0
        for record in read_records(self.path, Finding):
            if record is None:
                skipped += 1
            else:
                found.append(record)
        self.skipped = skipped
        return found

    def add(self, findings: Iterable[Finding]) -> list[Finding]:
        """Log the findings not logged before; return those.

        Raises:
            StoreError: The file can't be read or written.
        """
        with self._lock:
            if self._known is None:
                self._known = {_key(f) for f in self.read()}
            new = []
            for finding in findings:
                key = _key(finding)
                if key not in self._known:
                    self._known.add(key)
                    new.append(finding)
            append_records(self.path, list(new))
            return new


class PausedSubtasks:
    """Which subtasks are paused, in ``.reflexkit/paused.jsonl``.

    A pause or a resume keeps its position in the run history (the last run then), and the
    rules hold only the runs after it against the subtask: positions, never stamps, since
    run logs carry the clocks of their runs.

    Args:
        path: The file.
        clock: The time of a pause or resume (shown to people; no rule compares it).
        runs: The run logs whose history positions are taken in (default: ``runs`` beside
            *path*, as in ``.reflexkit/``).
    """

    def __init__(
        self, path: Path, *, clock: Callable[[], datetime] = utcnow, runs: Path | None = None
    ) -> None:
        self.path = path
        self._now = clock
        self._runs = runs if runs is not None else path.parent / "runs"

    def _position(self, after_run: str | None) -> str:
        """The position of a pause or resume: *after_run*, else the history's last run."""
        if after_run is not None:
            return after_run
        return RunLogReader(self._runs).history().latest()

    def entries(self) -> dict[tuple[str, str], PausedEntry]:
        """Return the latest entry of every subtask that has one, by ``(task, subtask)``.

        Raises:
            StoreError: The file can't be read.
        """
        latest: dict[tuple[str, str], PausedEntry] = {}
        for entry in read_records(self.path, PausedEntry):
            if entry is not None:
                latest[entry.task_id, entry.subtask_id] = entry
        return latest

    def paused(self) -> list[PausedEntry]:
        """Return the subtasks paused now."""
        return [e for e in self.entries().values() if e.paused]

    def pause(
        self,
        task_id: str,
        subtask_id: str,
        *,
        description: str,
        reason: str,
        after_run: str | None = None,
    ) -> PausedEntry:
        """Pause a subtask until it is resumed or its description changes.

        *after_run* is the history's last run as the caller sees it (default: as the run
        logs say).

        Raises:
            StoreError: The file can't be written.
        """
        entry = PausedEntry(
            task_id=task_id,
            subtask_id=subtask_id,
            paused=True,
            description_hash=description_hash(description) if description else "",
            since=self._now(),
            after_run=self._position(after_run),
            reason=reason,
        )
        append_records(self.path, [entry])
        return entry

    def resume(
        self,
        subtask_id: str,
        *,
        task_id: str | None = None,
        reason: str,
        after_run: str | None = None,
    ) -> list[str]:
        """Resume a paused subtask (of every task, unless *task_id* is given).

        The runs up to *after_run* (default: the last run of the history) no longer count.

        Returns:
            ``task/subtask`` of each subtask resumed; empty when none was paused.

        Raises:
            StoreError: The file can't be read or written.
        """
        paused = [
            entry
            for entry in self.paused()
            if entry.subtask_id == subtask_id and (task_id is None or entry.task_id == task_id)
        ]
        position = self._position(after_run) if paused else ""
        resumed = [
            PausedEntry(
                task_id=entry.task_id,
                subtask_id=entry.subtask_id,
                paused=False,
                description_hash=entry.description_hash,
                since=self._now(),
                after_run=position,
                reason=reason,
            )
            for entry in paused
        ]
        append_records(self.path, list(resumed))
        return [f"{e.task_id}/{e.subtask_id}" for e in resumed]
