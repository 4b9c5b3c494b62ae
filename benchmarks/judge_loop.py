"""Measure what the completion judge (and the attempt report) add per attempt in the loop.

A task of subtasks runs through the real Orchestrator from the application container, on a
real git repository in a temporary folder: each attempt's stand-in subagent writes one small
Python file and says it is done, the subtask has no checks, so every attempt is judged and
passes. The same task runs with ``verification.judge`` off (the baseline, measured in the same
run), ``heuristic``, and ``llm`` through the real ``anthropic`` SDK against the fake Messages
API on 127.0.0.1 (which answers at once: the real API adds its own seconds); and with reports
on, judge off. What the judge adds is its call plus ``git diff`` of the attempt and reading
AGENTS.md; what a report adds is ``git diff --numstat`` and an atomic write.

Usage::

    python benchmarks/judge_loop.py [--subtasks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reflexkit.containers import build_application
from reflexkit.orchestrator import SubagentRequest, SubagentResult
from reflexkit.tasks._config import (
    GeneratorBackend,
    JudgeMode,
    LoadedProject,
    ProjectConfig,
    ReflexionConfig,
    ReportsConfig,
    VerificationConfig,
)
from reflexkit.tasks._task import Subtask, Task
from reflexkit.testing.fake_messages_api import FakeMessagesApi

COMPLETE = {
    "complete": True,
    "severity": "NONE",
    "feedback": "Done as asked.",
    "missing": [],
    "nextActions": [],
}


class Writer:
    """A stand-in subagent: writes ``pkg/mod_<subtask>.py`` and reports it is done."""

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Write the subtask's module."""
        target = request.workdir / "pkg" / f"mod_{request.subtask_id}.py"
        target.parent.mkdir(exist_ok=True)
        target.write_text(f"def value():\n    return {len(request.subtask_id)}\n")
        return SubagentResult(ok=True, output=f"Wrote {target.name}; it is done.", duration_ms=0)


def fresh_repo(parent: Path) -> Path:
    """A git repository with one commit (its creation is not timed)."""
    root = Path(tempfile.mkdtemp(dir=parent))
    (root / "AGENTS.md").write_text("Keep functions small.\n")
    (root / ".gitignore").write_text(".reflexkit/\n")
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.email=b@example.com", "-c", "user.name=b", "add", "."],
        ["-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def one_run(parent: Path, subtasks: int, *, judge: JudgeMode, reports: bool) -> float:
    """Run the task once; return the wall-clock ms per attempt."""
    root = fresh_repo(parent)
    config = ProjectConfig(
        reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
        verification=VerificationConfig(judge=judge),
        reports=ReportsConfig(enabled=reports),
    )
    app = build_application(LoadedProject(config=config, root=root))
    task = Task(
        id="bench",
        subtasks=tuple(
            Subtask(id=f"s{i}", description=f"write `mod_s{i}.py`") for i in range(subtasks)
        ),
    )
    orchestrator = app.orchestration.orchestrator(subagent=Writer())
    started = time.perf_counter()
    summary = orchestrator.run(task, workdir=root)
    took = time.perf_counter() - started
    app.shutdown_resources()
    if not summary.passed or any(o.attempts != 1 for o in summary.outcomes):
        msg = f"the benchmark's task did not pass at once: {summary.outcomes[:3]}"
        raise RuntimeError(msg)
    return took * 1000 / subtasks


def main(argv: list[str] | None = None) -> int:
    """Print the per-attempt time of each setting and what it adds to the baseline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subtasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    settings = {
        "judge off, reports off (baseline)": (JudgeMode.OFF, False),
        "judge off, reports on": (JudgeMode.OFF, True),
        "heuristic judge": (JudgeMode.HEURISTIC, False),
        "llm judge, fake Messages API": (JudgeMode.LLM, False),
    }
    samples: dict[str, list[float]] = {name: [] for name in settings}
    with FakeMessagesApi() as api, tempfile.TemporaryDirectory() as tmp:
        os.environ["ANTHROPIC_BASE_URL"] = api.url
        os.environ["ANTHROPIC_API_KEY"] = "sk-bench"
        for _ in range(args.rounds):  # interleaved, so drift hits every setting alike
            for name, (judge, reports) in settings.items():
                if judge is JudgeMode.LLM:
                    for _ in range(args.subtasks):
                        api.reply(COMPLETE)
                samples[name].append(
                    one_run(Path(tmp), args.subtasks, judge=judge, reports=reports)
                )
        requests = len(api.requests)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["judge off, reports off (baseline)"]
    print(
        f"per attempt, median of {args.rounds} rounds of {args.subtasks} attempts "
        f"(each judged and passed at once; {requests} requests to the fake API):"
    )
    for name, ms in medians.items():
        extra = ms - base
        print(f"  {name:<36} {ms:8.2f} ms   {extra:+8.2f} ms   x{ms / base:.2f} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
