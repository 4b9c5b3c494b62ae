"""Measure what the retry loop itself costs per attempt, beside its subagent and its checks.

A task of subtasks that each fail a few times with real pytest output and then pass runs
through the real Orchestrator and the real reflection service (heuristic generator, JSONL
memory in a temporary folder, the run log). The subagent and the verifier are stand-ins that
return at once, and the time they take is measured and taken out, so what remains is the
loop's own overhead per attempt: building prompts, reflecting, storing, reading the recent
reflections, formatting the retry section, events and the run log. Beside it, in the same
run: ``service.generate`` + ``save`` alone per failure (the reflection's share of it).

Usage::

    python benchmarks/loop.py [--subtasks N] [--fails K] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from reflexkit.containers import build_application
from reflexkit.events import Event, RunLog
from reflexkit.models import FailureContext
from reflexkit.orchestrator import SubagentRequest, SubagentResult, VerificationResult
from reflexkit.tasks._config import GeneratorBackend, LoadedProject, ProjectConfig, ReflexionConfig
from reflexkit.tasks._task import Subtask, Task

OUTPUT = (
    "============================= test session starts ==============================\n"
    "collected 12 items\n\n"
    "tests/test_cart.py ....F.......                                          [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "_______________________________ test_total_{n} _______________________________\n\n"
    "    def test_total_{n}():\n"
    ">       assert total([100, 200], discount={n}) == 270\n"
    "E       assert {v} == 270\n\n"
    "tests/test_cart.py:{line}: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_cart.py::test_total_{n} - assert {v} == 270\n"
    "========================= 1 failed, 11 passed in 0.05s =========================\n"
)


class Timed:
    """Stand-ins for the subagent and the verifier that record the time spent in them."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.spent = 0.0
        self.attempts = 0

    def run(self, _request: SubagentRequest, /) -> SubagentResult:
        """The subagent: does nothing, at once."""
        start = time.perf_counter()
        self.attempts += 1
        result = SubagentResult(ok=True, output="", duration_ms=0)
        self.spent += time.perf_counter() - start
        return result

    def verifier_for(self, subtask: Subtask) -> _Verifier:
        """The verifier of a subtask: fails *fails* times, then passes."""
        return _Verifier(self, subtask.id)


class _Verifier:
    def __init__(self, timed: Timed, subtask_id: str) -> None:
        self.timed = timed
        self.subtask_id = subtask_id
        self.calls = 0

    def run(self, _workdir: Path) -> VerificationResult:
        start = time.perf_counter()
        self.calls += 1
        n = int(self.subtask_id.rsplit("-", 1)[1])
        passed = self.calls > self.timed.fails
        result = VerificationResult(
            passed=passed,
            command="python -m pytest -q",
            exit_code=0 if passed else 1,
            output="" if passed else OUTPUT.format(n=n, v=250 + self.calls, line=10 + n),
            duration_ms=0,
        )
        self.timed.spent += time.perf_counter() - start
        return result


def one_run(work: Path, subtasks: int, fails: int) -> tuple[float, int]:
    """Run the task once; return (loop overhead per attempt in s, attempts)."""
    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=work))
    timed = Timed(fails)
    task = Task(
        id="bench",
        subtasks=tuple(Subtask(id=f"st-{i}", description=f"fix {i}") for i in range(subtasks)),
    )
    with RunLog(work / ".reflexkit" / "runs" / f"{time.monotonic_ns()}.jsonl") as log:

        def on_event(event: Event) -> None:
            log.write(event)

        orchestrator = app.orchestration.orchestrator(
            subagent=timed, verifier_for=timed.verifier_for, on_event=on_event
        )
        start = time.perf_counter()
        summary = orchestrator.run(task, workdir=work)
        total = time.perf_counter() - start
    app.shutdown_resources()
    if not summary.passed:
        msg = "the benchmark's task did not pass"
        raise RuntimeError(msg)
    return (total - timed.spent) / timed.attempts, timed.attempts


def reflection_only(work: Path, count: int) -> float:
    """Return service.generate + save per failure, in s, on the same kind of output."""
    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=work))
    service = app.reflection.service()
    failures = [
        FailureContext(
            task_id="bench",
            subtask_id=f"st-{i}",
            attempt_number=1,
            command="python -m pytest -q",
            exit_code=1,
            error_output=OUTPUT.format(n=i, v=251, line=10 + i),
        )
        for i in range(count)
    ]
    start = time.perf_counter()
    for failure in failures:
        service.save(service.generate(failure))
    took = (time.perf_counter() - start) / count
    app.shutdown_resources()
    return took


def main(argv: list[str] | None = None) -> int:
    """Print the loop's overhead per attempt and the reflection's share of it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subtasks", type=int, default=50)
    parser.add_argument("--fails", type=int, default=2, help="failed attempts per subtask")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    loop: list[float] = []
    alone: list[float] = []
    attempts = 0
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="reflexkit-loop-") as tmp:
            root = Path(tmp)
            (root / "a").mkdir()
            (root / "b").mkdir()
            if r % 2:
                alone.append(reflection_only(root / "b", args.subtasks * args.fails))
                per, attempts = one_run(root / "a", args.subtasks, args.fails)
            else:
                per, attempts = one_run(root / "a", args.subtasks, args.fails)
                alone.append(reflection_only(root / "b", args.subtasks * args.fails))
            loop.append(per)
    failed = args.subtasks * args.fails
    print(
        f"{args.subtasks} subtasks x ({args.fails} failed + 1 passing) attempts = {attempts}"
        f" attempts, {failed} reflections, {args.rounds} rounds (medians)"
    )
    per_attempt, per_failure = statistics.median(loop) * 1e3, statistics.median(alone) * 1e3
    print(f"loop overhead per attempt (subagent and checks taken out): {per_attempt:.2f} ms")
    print(f"reflection alone (generate + save) per failure:           {per_failure:.2f} ms")
    share = statistics.median(alone) * failed / (statistics.median(loop) * attempts)
    print(f"reflection's share of the loop's own time:                {share:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
