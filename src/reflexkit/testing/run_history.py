"""Write synthetic run logs, in the orchestrator's own format, for tests and benchmarks.

The events are written by the orchestrator's :class:`~reflexkit.events.RunLog`,
so a history built here has exactly the shape a real run leaves in ``.reflexkit/runs``, plus
the fields the insight rules read that the loop adds (``fingerprint``, ``filesModified``,
``outputChars`` on attempt events; see docs/insights.md)::

    writer = HistoryWriter(tmp_path / ".reflexkit" / "runs")
    with writer.run("shop") as run:
        run.fail("cart", fingerprint="fp1", files=("src/cart.py",))
        run.fail("cart", fingerprint="fp1", files=())
        run.end("cart", "stuck")
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from reflexkit.events import Event, EventData, EventKind, RunLog
from reflexkit.models import utcnow

__all__ = ["HistoryWriter", "RunScript"]


class RunScript:
    """The events of one run, written as they are scripted (see :meth:`HistoryWriter.run`)."""

    def __init__(self, log: RunLog, writer: HistoryWriter, run_id: str) -> None:
        self._log = log
        self._writer = writer
        self.run_id = run_id
        self._attempts: dict[str, int] = {}

    def _emit(self, kind: EventKind, subtask: str = "", attempt: int = 0, **data: object) -> None:
        clean: EventData = {
            k: v for k, v in data.items() if isinstance(v, str | int | float | bool)
        }
        self._log.write(
            Event(
                kind=kind, subtask_id=subtask, attempt=attempt, at=self._writer.tick(), data=clean
            )
        )

    def _start(self, subtask: str) -> int:
        number = self._attempts.get(subtask, 0) + 1
        self._attempts[subtask] = number
        self._emit(EventKind.ATTEMPT_STARTED, subtask, number, promptChars=100, timeoutS=900.0)
        return number

    def fail(
        self,
        subtask: str,
        *,
        fingerprint: str = "fp-default",
        files: Sequence[str] | None = ("src/app.py",),
        reflection_id: str = "",
        **data: object,
    ) -> int:
        """Write a failed attempt (and its reflection when *reflection_id* is given).

        *data* are more fields of the ``verification_failed`` event, camelCase, over its
        defaults (``command``, ``failureType``, ``outputChars`` 500; ``verificationOutput``
        is what the check printed); a ``None`` leaves a field out.
        """
        return self._fail(subtask, fingerprint, files, reflection_id, data)

    def _fail(
        self,
        subtask: str,
        fingerprint: str,
        files: Sequence[str] | None,
        reflection_id: str,
        data: dict[str, object],
    ) -> int:
        number = self._start(subtask)
        fields: dict[str, object] = {
            "command": "python -m pytest -q",
            "exitCode": 1,
            "failureType": "test_failure",
            "outputChars": 500,
            "filesModified": None if files is None else ",".join(files),
            **data,
        }
        fields["subagentOk"] = fields["failureType"] != "timeout"
        self._emit(
            EventKind.VERIFICATION_FAILED, subtask, number, fingerprint=fingerprint, **fields
        )
        if reflection_id:
            self._emit(
                EventKind.REFLECTION_GENERATED,
                subtask,
                number,
                reflectionId=reflection_id,
                source="heuristic",
                category="root_cause",
                fingerprint=fingerprint,
                saved=True,
            )
        return number

    def timeout(
        self, subtask: str, *, files: Sequence[str] | None = ("src/app.py",), **data: object
    ) -> int:
        """Write an attempt whose subagent ran out of time (*data* as for :meth:`fail`)."""
        data = {"command": "subagent", "failureType": "timeout", **data}
        return self._fail(subtask, "fp-timeout", files, "", data)

    def passed(self, subtask: str, *, led_to_success: Sequence[str] = (), **data: object) -> int:
        """Write a passing attempt (*data*: more event fields, over ``outputChars`` 500)."""
        number = self._start(subtask)
        self._emit(
            EventKind.PASSED,
            subtask,
            number,
            **{
                "durationMs": 1000,
                "reflectionsUsed": len(led_to_success),
                "ledToSuccess": ",".join(led_to_success),
                "outputChars": 500,
                **data,
            },
        )
        return number

    def end(self, subtask: str, outcome: str) -> None:
        """Write how a failing subtask ended: ``stuck`` or ``exhausted``."""
        kind = EventKind.STUCK if outcome == "stuck" else EventKind.EXHAUSTED
        self._emit(kind, subtask, self._attempts.get(subtask, 0))


class HistoryWriter:
    """Writes runs into a run-log folder, one file per run, with a clock that moves on.

    Args:
        runs: The folder (``.reflexkit/runs``).
        start: The time of the first event; each event is *step* later than the one before.
        step: The time between events.
    """

    def __init__(
        self, runs: Path, *, start: datetime | None = None, step: timedelta | None = None
    ) -> None:
        self.runs = runs
        self.now = start or utcnow() - timedelta(hours=1)
        self.step = step or timedelta(seconds=1)

    def tick(self) -> datetime:
        """Return the time of the next event."""
        self.now += self.step
        return self.now

    @contextmanager
    def run(self, task_id: str, *, run_id: str | None = None) -> Iterator[RunScript]:
        """Write one run of *task_id*: ``run_started``, what the block scripts, ``run_finished``."""
        run_id = run_id or uuid.uuid4().hex[:12]
        with RunLog(self.runs / f"{run_id}.jsonl") as log:
            script = RunScript(log, self, run_id)
            script._emit(EventKind.RUN_STARTED, runId=run_id, taskId=task_id, subtasks=1)  # noqa: SLF001
            yield script
            script._emit(EventKind.RUN_FINISHED, runId=run_id)  # noqa: SLF001
