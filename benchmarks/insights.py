"""Precision and recall of each insight rule on a labelled synthetic history, and their costs.

A seeded generator writes real run-log files (through the orchestrator's own ``RunLog``, see
:mod:`reflexkit.testing.run_history`) for several tasks: subtasks with known stuck,
time-out, no-change, stale-output and correlated-file cases, near misses of each (one short of
the limit, a pass in between, a change of files, a different failure, a file touched outside
the lookback) and clean subtasks that pass. Every case is labelled when it is written. The
rules (:func:`reflexkit.insights.evaluate`) then read the logs back, and each rule's findings
are compared with its labels.

Beside it, in the same run:

* ``HistoryRules.at_run_start`` pauses exactly the stuck subtasks of each task;
* LLM requests counted at the fake Messages API: none for a history with no findings, one for
  one with findings;
* the cost of asking the rules again after one more event (incremental read) against reading
  the whole history afresh, and of a lesson lookup through the index against a scan of every
  lesson.

Usage::

    python benchmarks/insights.py [--cases N] [--clean M] [--seed S]

Exit 0 when every rule has precision and recall 1.0 and the request counts are 0 and 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reflexkit.insights import (
    AnalysisCycle,
    ClaudeAnalyst,
    FindingLog,
    HistoryRules,
    InMemoryLessons,
    PausedSubtasks,
    Rule,
    RunLogReader,
    evaluate,
    tool_of,
)
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.models import FailureContext, FailureType
from reflexkit.tasks import Subtask, Task
from reflexkit.tasks._config import InsightsConfig
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection
from reflexkit.testing.run_history import HistoryWriter, RunScript

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
CONFIG = InsightsConfig(
    consecutive_failure_limit=3, timeout_limit=3, lookback_hours=24, min_result_length=20
)
N = CONFIG.consecutive_failure_limit

Label = tuple[str, str, str]  # (rule, task/subtask or file, "")


class Generator:
    """Writes cases into run logs and remembers what each rule should find."""

    def __init__(self, runs: Path, rng: random.Random) -> None:
        self.writer = HistoryWriter(runs, start=NOW - timedelta(hours=6), step=timedelta(seconds=2))
        self.old = HistoryWriter(runs, start=NOW - timedelta(days=5), step=timedelta(seconds=2))
        self.rng = rng
        self.labels: dict[str, set[str]] = defaultdict(set)
        self.tasks: dict[str, list[Subtask]] = defaultdict(list)
        self._serial = 0

    def _name(self, kind: str) -> tuple[str, str]:
        self._serial += 1
        task = f"task-{self.rng.randrange(4)}"
        subtask = f"{kind}-{self._serial}"
        self.tasks[task].append(Subtask(id=subtask, description=f"Do {subtask}."))
        return task, subtask

    def _file(self) -> tuple[str, ...]:
        self._serial += 1
        return (f"src/unique_{self._serial}.py",)

    def _fp(self) -> str:
        self._serial += 1
        return f"fp-{self._serial}"

    def _fail(self, run: RunScript, subtask: str, **options: object) -> None:
        options.setdefault("files", self._file())
        options.setdefault("fingerprint", self._fp())
        run.fail(subtask, **options)  # type: ignore[arg-type]

    # --- each case: a positive or a near miss ---------------------------------------------

    def stuck(self, *, positive: bool) -> None:
        """Stuck or exhausted in the last N runs; the near miss has a pass between or N-1."""
        task, subtask = self._name("stuck")
        outcomes = ["stuck", "exhausted", "stuck"] if positive else ["stuck", "passed", "stuck"]
        if not positive and self.rng.random() < 0.5:
            outcomes = ["exhausted"] * (N - 1)
        for outcome in outcomes:
            with self.writer.run(task) as run:
                if outcome == "passed":
                    run.passed(subtask, outputChars=300)
                else:
                    self._fail(run, subtask)
                    run.end(subtask, outcome)
        if positive:
            self.labels[Rule.CONSECUTIVE_FAILURES].add(f"{task}/{subtask}")

    def timeout(self, *, positive: bool) -> None:
        """N time-outs in a row across two runs (then a pass); the near miss has a pass between."""
        task, subtask = self._name("slow")
        with self.writer.run(task) as run:
            run.timeout(subtask, files=self._file())
            run.timeout(subtask, files=self._file())
            if not positive:
                run.passed(subtask)
        with self.writer.run(task) as run:
            run.timeout(subtask, files=self._file())
            if positive:
                run.passed(subtask)  # the pattern was seen; passing later does not unsee it
        if positive:
            self.labels[Rule.TIMEOUT_PATTERN].add(f"{task}/{subtask}")

    def timeout_positive_last(self) -> None:
        """N time-outs in a row at the end of the history."""
        task, subtask = self._name("slow")
        with self.writer.run(task) as run:
            for _ in range(N):
                run.timeout(subtask, files=self._file())
        self.labels[Rule.TIMEOUT_PATTERN].add(f"{task}/{subtask}")

    def no_change(self, *, positive: bool) -> None:
        """No files changed and the same fingerprint; near misses change files or fail anew."""
        task, subtask = self._name("idle")
        fp = self._fp()
        with self.writer.run(task) as run:
            self._fail(run, subtask, fingerprint=fp)
            if positive:
                self._fail(run, subtask, fingerprint=fp, files=())
            elif self.rng.random() < 0.5:
                self._fail(run, subtask, fingerprint=self._fp(), files=())  # failed differently
            else:
                self._fail(run, subtask, fingerprint=fp)  # changed files
            run.passed(subtask)
        if positive:
            self.labels[Rule.NO_CHANGE_REPEAT].add(f"{task}/{subtask}")

    def stale(self, *, positive: bool) -> None:
        """Agent output under minResultLength N times; the near miss has a long last one."""
        task, subtask = self._name("quiet")
        lengths = [3, 0, 12] if positive else [3, 0, 400]
        with self.writer.run(task) as run:
            for chars in lengths:
                self._fail(run, subtask, outputChars=chars)
            run.end(subtask, "exhausted")
        if positive:
            self.labels[Rule.STALE_OUTPUT].add(f"{task}/{subtask}")

    def hot_file(self, *, positive: bool) -> None:
        """One file in N failed attempts; the near miss has one of them outside the lookback."""
        self._serial += 1
        path = f"src/hot_{self._serial}.py"
        writers = [self.writer] * N if positive else [self.writer] * (N - 1) + [self.old]
        for writer in writers:
            task, subtask = self._name("edit")
            with writer.run(task) as run:
                self._fail(run, subtask, files=(path, *self._file()))
                run.passed(subtask)
        if positive:
            self.labels[Rule.FILE_FAILURE_CORRELATION].add(path)
        else:
            task, subtask = self._name("edit")
            with self.writer.run(task) as run:  # passing attempts don't count
                run.passed(subtask)
                run.passed(subtask)

    def clean(self) -> None:
        """A subtask that passes, perhaps after one ordinary failure."""
        task, subtask = self._name("clean")
        with self.writer.run(task) as run:
            if self.rng.random() < 0.5:
                self._fail(run, subtask)
            run.passed(subtask, outputChars=self.rng.randrange(50, 5000))


def score(predicted: set[str], expected: set[str]) -> tuple[float, float]:
    """Precision and recall; 1.0 for an empty side that should be empty."""
    hits = len(predicted & expected)
    precision = hits / len(predicted) if predicted else float(not expected)
    recall = hits / len(expected) if expected else 1.0
    return precision, recall


def subject(rule: Rule, task_id: str, subject_id: str) -> str:
    """How a finding names what it is about, for comparison with the labels."""
    return subject_id if rule is Rule.FILE_FAILURE_CORRELATION else f"{task_id}/{subject_id}"


def generate(root: Path, cases: int, clean: int, seed: int) -> Generator:
    """Write the labelled history; cases are shuffled so runs of different kinds interleave."""
    rng = random.Random(seed)  # noqa: S311 -- a reproducible benchmark, not crypto
    gen = Generator(root / "runs", rng)
    jobs = []
    for _ in range(cases):
        jobs += [
            lambda: gen.stuck(positive=True),
            lambda: gen.stuck(positive=False),
            lambda: gen.timeout(positive=True),
            gen.timeout_positive_last,
            lambda: gen.timeout(positive=False),
            lambda: gen.no_change(positive=True),
            lambda: gen.no_change(positive=False),
            lambda: gen.stale(positive=True),
            lambda: gen.stale(positive=False),
            lambda: gen.hot_file(positive=True),
            lambda: gen.hot_file(positive=False),
        ]
    jobs += [gen.clean] * clean
    rng.shuffle(jobs)
    for job in jobs:
        job()
    return gen


def rule_figures(root: Path, gen: Generator) -> bool:
    """Print precision and recall per rule; True when all are 1.0."""
    started = time.perf_counter()
    history = RunLogReader(root / "runs").history()
    read_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    findings = evaluate(history, CONFIG, now=NOW)
    eval_ms = (time.perf_counter() - started) * 1000
    attempts = sum(1 for _ in history.attempts())
    print(
        f"history: {len(list(root.joinpath('runs').glob('*.jsonl')))} run logs, "
        f"{len(history.runs)} subtask runs, {attempts} attempts; read {read_ms:.1f} ms, "
        f"rules {eval_ms:.1f} ms; bad lines {history.bad_lines}"
    )
    by_rule: dict[str, set[str]] = defaultdict(set)
    for finding in findings:
        by_rule[finding.rule].add(subject(finding.rule, finding.task_id, finding.subject_id))
    ok = True
    print(f"{'rule':28} {'labelled':>8} {'found':>6} {'precision':>9} {'recall':>7}")
    for rule in (
        Rule.CONSECUTIVE_FAILURES,
        Rule.TIMEOUT_PATTERN,
        Rule.NO_CHANGE_REPEAT,
        Rule.STALE_OUTPUT,
        Rule.FILE_FAILURE_CORRELATION,
    ):
        precision, recall = score(by_rule[rule], gen.labels[rule])
        ok = ok and precision == 1.0 and recall == 1.0
        print(
            f"{rule.value:28} {len(gen.labels[rule]):8d} {len(by_rule[rule]):6d} "
            f"{precision:9.3f} {recall:7.3f}"
        )
    return ok


def pause_figures(root: Path, gen: Generator) -> bool:
    """The live rules pause exactly the labelled stuck subtasks."""
    rules = HistoryRules(
        runs=root / "runs",
        findings=FindingLog(root / "insights.jsonl"),
        paused=PausedSubtasks(root / "paused.jsonl", clock=lambda: NOW),
        config=CONFIG,
        clock=lambda: NOW,
    )
    paused = set()
    for task_id, subtasks in gen.tasks.items():
        check = rules.at_run_start(Task(id=task_id, description="", subtasks=tuple(subtasks)))
        paused |= {f"{task_id}/{s}" for s in check.paused}
    precision, recall = score(paused, gen.labels[Rule.CONSECUTIVE_FAILURES])
    print(
        f"at_run_start pauses {len(paused)} subtasks "
        f"(precision {precision:.3f}, recall {recall:.3f}); the loop is to skip them"
    )
    return precision == 1.0 and recall == 1.0


def request_figures(root: Path) -> bool:
    """LLM requests at the fake Messages API: none without findings, one with."""
    clean_root = root / "clean"
    clean = Generator(clean_root / "runs", random.Random(1))  # noqa: S311
    for _ in range(50):
        clean.clean()
    quiet = evaluate(RunLogReader(clean_root / "runs").history(), CONFIG, now=NOW)
    noisy = evaluate(RunLogReader(root / "runs").history(), CONFIG, now=NOW)
    counts = []
    with FakeMessagesApi() as api:
        analyst = ClaudeAnalyst(
            Claude(api_key="sk-ant-bench", base_url=api.url, retry=RetryPolicy.no_wait())
        )
        with analyst:
            for findings, where in ((quiet, clean_root), (noisy, root)):
                api.reset()
                api.reply({"summary": "s", "taskActions": [], "lessonActions": []})
                AnalysisCycle(
                    analyst=analyst,
                    findings=FindingLog(where / "analysis.jsonl"),
                    paused=PausedSubtasks(where / "analysis-paused.jsonl"),
                    lessons=InMemoryLessons(),
                ).run(findings)
                counts.append(len(api.requests))
    print(
        f"LLM requests: {counts[0]} for a history with {len(quiet)} findings, "
        f"{counts[1]} for one with {len(noisy)} findings"
    )
    return counts == [0, 1]


def cost_figures(root: Path) -> None:
    """Incremental re-read against a full read; indexed lesson lookup against a scan."""
    reader = RunLogReader(root / "runs")
    reader.history()
    log = next(iter(sorted((root / "runs").glob("*.jsonl"))))
    line = log.read_bytes().splitlines()[1] + b"\n"
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        with log.open("ab") as handle:
            handle.write(line)
        reader.history()
    incremental = (time.perf_counter() - started) / rounds
    started = time.perf_counter()
    for _ in range(rounds):
        RunLogReader(root / "runs").history()
    full = (time.perf_counter() - started) / rounds
    print(
        f"rules asked again after one more event: {incremental * 1000:.2f} ms incremental, "
        f"{full * 1000:.2f} ms reading everything afresh ({full / incremental:.1f}x)"
    )

    book = InMemoryLessons()
    count = 20_000
    for index in range(count):
        reflection = make_reflection(subtask_id=f"s{index % 500}")
        book.learn(
            attrs_evolve(reflection, fingerprint=f"fp{index % 2000}", suggestion=f"Fix {index}."),
            tool=("pytest", "mypy", "ruff", "tsc")[index % 4],
        )
    failure = FailureContext(
        task_id="task-1",
        subtask_id="other",
        attempt_number=1,
        failure_type=FailureType.TEST_FAILURE,
        command="python -m pytest -q",
        error_output="x",
    )
    lessons = list(book)
    rounds = 200
    started = time.perf_counter()
    for index in range(rounds):
        book.lessons_for(failure, fingerprint=f"fp{index}", limit=2)
    indexed = (time.perf_counter() - started) / rounds
    tool = tool_of(failure.command)
    started = time.perf_counter()
    for index in range(rounds):
        wanted = f"fp{index}"
        [
            lesson
            for lesson in lessons
            if lesson.fingerprint == wanted
            or (lesson.tool == tool and lesson.failure_type is failure.failure_type)
        ]
    scanned = (time.perf_counter() - started) / rounds
    print(
        f"lesson lookup over {count} lessons: {indexed * 1e6:.0f} us through the index, "
        f"{scanned * 1e6:.0f} us scanning them all ({scanned / indexed:.1f}x)"
    )


def attrs_evolve(reflection: object, **changes: object) -> object:
    """``attrs.evolve`` (imported here to keep the benchmark's imports at the top short)."""
    import attrs  # noqa: PLC0415

    return attrs.evolve(reflection, **changes)  # type: ignore[misc]


def main() -> int:
    """Generate, measure, print; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=30, help="cases of each kind (30)")
    parser.add_argument("--clean", type=int, default=200, help="clean subtasks (200)")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reflexkit-insights-") as tmp:
        root = Path(tmp)
        gen = generate(root, args.cases, args.clean, args.seed)
        ok = rule_figures(root, gen)
        ok = pause_figures(root, gen) and ok
        ok = request_figures(root) and ok
        cost_figures(root)
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
