"""Measure what the insight steps add to the retry loop per attempt (#17).

The same task runs through the real Orchestrator built by the container, once with
``insights.enabled`` false (the baseline) and once with it on, in the same process and
alternating, each in a fresh project: a working folder of ``--files`` files (outside git, so
each attempt's change is measured by a walk before and after it; ``--git`` makes it a git
repository instead), ``--history`` earlier runs of the task in the run logs (the rules read
them), heuristic reflections and JSONL memory. The subagent and the verifier are in-process
stand-ins that edit one file and fail a few times before passing; their time is taken out,
so what remains is the loop's own time per attempt, with and without insights.

Usage::

    python benchmarks/loop_insights.py [--subtasks N] [--fails K] [--files F] [--history H]
                                       [--rounds R] [--git]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import loop  # benchmarks/loop.py: its timed subagent and verifier
from reflexkit.containers import build_application
from reflexkit.events import RunLog
from reflexkit.orchestrator import SubagentRequest, SubagentResult
from reflexkit.tasks._config import load_project
from reflexkit.tasks._task import Subtask, Task


class Timed(loop.Timed):
    """The loop benchmark's stand-ins, with a subagent that writes one file per attempt."""

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Write ``<subtask>.py`` with the attempt number: one changed file per attempt."""
        start = time.perf_counter()
        self.attempts += 1
        (request.workdir / f"{request.subtask_id}.py").write_text(f"N = {request.attempt}\n")
        result = SubagentResult(ok=True, output="wrote one file, as asked", duration_ms=0)
        self.spent += time.perf_counter() - start
        return result


def _project(root: Path, *, enabled: bool, files: int, git: bool) -> None:
    (root / ".reflexkit").mkdir(parents=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "insights": {"enabled": enabled, "batchThreshold": 5},
            }
        )
    )
    src = root / "src"
    src.mkdir()
    for index in range(files):
        (src / f"module_{index}.py").write_text(f"VALUE = {index}\n")
    if git:
        (root / ".gitignore").write_text(".reflexkit/\n")
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
            subprocess.run(
                ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
                cwd=root,
                check=True,
                capture_output=True,
            )


def one_run(root: Path, task: Task, fails: int) -> tuple[float, int]:
    """Run the task once in *root*; return (loop time per attempt in s, attempts)."""
    app = build_application(load_project(cwd=root))
    timed = Timed(fails)
    with RunLog(root / ".reflexkit" / "runs" / f"{time.monotonic_ns()}.jsonl") as log:
        orchestrator = app.orchestration.orchestrator(
            subagent=timed, verifier_for=timed.verifier_for, on_event=log.write
        )
        start = time.perf_counter()
        summary = orchestrator.run(task, workdir=root)
        total = time.perf_counter() - start
    app.shutdown_resources()
    if not summary.passed:
        msg = f"the benchmark's task did not pass: {summary}"
        raise RuntimeError(msg)
    return (total - timed.spent) / timed.attempts, timed.attempts


def measure(args: argparse.Namespace, *, enabled: bool) -> tuple[float, int]:
    """One round: a fresh project with its history, then the measured run."""
    task = Task(
        id="bench",
        subtasks=tuple(Subtask(id=f"st-{i}", description=f"fix {i}") for i in range(args.subtasks)),
    )
    with tempfile.TemporaryDirectory(prefix="reflexkit-insights-loop-") as tmp:
        root = Path(tmp)
        _project(root, enabled=enabled, files=args.files, git=args.git)
        for _ in range(args.history):
            one_run(root, task, args.fails)
        return one_run(root, task, args.fails)


def main(argv: list[str] | None = None) -> int:
    """Print the loop's time per attempt without and with insights, and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subtasks", type=int, default=20)
    parser.add_argument("--fails", type=int, default=2, help="failed attempts per subtask")
    parser.add_argument("--files", type=int, default=1_000, help="files in the working folder")
    parser.add_argument("--history", type=int, default=5, help="earlier runs in the run logs")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--git", action="store_true", help="make the working folder a git repo")
    args = parser.parse_args(argv)
    off: list[float] = []
    on: list[float] = []
    attempts = 0
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        for enabled in order:
            per, attempts = measure(args, enabled=enabled)
            (on if enabled else off).append(per)
    where = "a git repository" if args.git else "a plain folder (walked)"
    print(
        f"{args.subtasks} subtasks x ({args.fails} failed + 1 passing) = {attempts} attempts;"
        f" {args.files} files in {where}; {args.history} earlier runs; {args.rounds} rounds"
        " (medians)"
    )
    base, with_insights = statistics.median(off) * 1e3, statistics.median(on) * 1e3
    print(f"loop per attempt, insights off (baseline): {base:8.2f} ms")
    print(f"loop per attempt, insights on:             {with_insights:8.2f} ms")
    print(
        f"insight steps per attempt:                 {with_insights - base:8.2f} ms"
        f" ({with_insights / base:.2f}x the baseline)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
