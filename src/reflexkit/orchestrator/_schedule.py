"""Which subtask runs when: one after another, or up to ``jobs`` at once.

A subtask starts once every subtask it depends on has ended, and is ``skipped`` when one of
them did not pass or the run has halted (a setup error, an interrupt). In parallel each
subtask runs in a thread of its own; :class:`Schedule` knows nothing of attempts, only how to
start one subtask (*run_one*) and what to do when the run is cut short (*abort*).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import attrs

from reflexkit.orchestrator._outcomes import SubtaskOutcome
from reflexkit.tasks._task import Subtask

__all__ = ["Schedule", "blocked"]


def blocked(subtask: Subtask, outcomes: dict[str, SubtaskOutcome]) -> list[str]:
    """The dependencies of *subtask* that have not passed (or not finished)."""
    return [d for d in subtask.depends_on if d not in outcomes or outcomes[d].outcome != "passed"]


@attrs.frozen(kw_only=True)
class Schedule:
    """Runs subtasks in ``dependsOn`` order, ``jobs`` at a time.

    Args:
        jobs: How many subtasks may run at once (1: one after another, in this thread).
        run_one: Runs one subtask to its end.
        skipped: Told of each subtask skipped, with the reason (the loop writes the event).
        halted: Set when nothing new may start.
        abort: Called when the parallel run is cut short (an interrupt, a bug), before the
            pool waits for its threads: stop their processes, start nothing.
    """

    jobs: int
    run_one: Callable[[Subtask], SubtaskOutcome]
    skipped: Callable[[Subtask, str], None]
    halted: threading.Event
    abort: Callable[[], None]

    def run(self, ordered: list[Subtask]) -> dict[str, SubtaskOutcome]:
        """Every subtask's outcome, by id."""
        return self._parallel(ordered) if self.jobs > 1 else self._sequential(ordered)

    def skip(self, subtask: Subtask, blocked_by: list[str]) -> SubtaskOutcome:
        reason = (
            "dependency did not pass: " + ", ".join(blocked_by)
            if blocked_by
            else "the run stopped: the subagent can't work as set up"
        )
        self.skipped(subtask, reason)
        return SubtaskOutcome(subtask_id=subtask.id, outcome="skipped", reason=reason)

    def _sequential(self, ordered: list[Subtask]) -> dict[str, SubtaskOutcome]:
        outcomes: dict[str, SubtaskOutcome] = {}
        for subtask in ordered:
            waits_on = blocked(subtask, outcomes)
            if waits_on or self.halted.is_set():
                outcomes[subtask.id] = self.skip(subtask, waits_on)
                continue
            outcomes[subtask.id] = self.run_one(subtask)
        return outcomes

    def _parallel(self, ordered: list[Subtask]) -> dict[str, SubtaskOutcome]:
        """Run up to ``jobs`` subtasks at once, each as soon as its dependencies finished."""
        outcomes: dict[str, SubtaskOutcome] = {}
        pending = list(ordered)
        running: dict[Future[SubtaskOutcome], str] = {}
        with ThreadPoolExecutor(
            max_workers=self.jobs, thread_name_prefix="reflexkit-subtask"
        ) as pool:

            def start(subtask: Subtask) -> None:
                running[pool.submit(self.run_one, subtask)] = subtask.id

            try:
                while pending or running:
                    self._start_ready(pending, running, outcomes, start)
                    if not running:
                        # nothing runs and nothing can start: a cycle or an unknown dependency
                        for subtask in pending:
                            outcomes[subtask.id] = self.skip(subtask, blocked(subtask, outcomes))
                        break
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        outcomes[running.pop(future)] = future.result()
            except BaseException:
                self.abort()
                raise
        return outcomes

    def _start_ready(
        self,
        pending: list[Subtask],
        running: dict[Future[SubtaskOutcome], str],
        outcomes: dict[str, SubtaskOutcome],
        start: Callable[[Subtask], None],
    ) -> None:
        """Skip or start every pending subtask whose dependencies have all ended."""
        progressed = True
        while progressed:  # skips can unblock (and skip) further subtasks
            progressed = False
            for subtask in list(pending):
                if not all(d in outcomes for d in subtask.depends_on):
                    continue
                waits_on = blocked(subtask, outcomes)
                if waits_on or self.halted.is_set():
                    outcomes[subtask.id] = self.skip(subtask, waits_on)
                    pending.remove(subtask)
                    progressed = True
                elif len(running) < self.jobs:
                    start(subtask)
                    pending.remove(subtask)
