"""Measure the completion judge on a labelled set of attempts, and what it adds per attempt.

The set is ``tests/data/judge/attempts.jsonl``: attempts a reviewer labelled complete,
incomplete or blocker (see the README beside it). For each judge it prints:

* precision and recall of "incomplete" (blocker counts as incomplete): of the attempts the
  judge sent back, how many deserved it; of those that deserved it, how many it sent back;
* how often it blocks work that passed its checks and is complete (false blocks), over the
  attempts whose checks passed;
* blockers caught;
* the time per attempt.

The heuristic judge is scored on the whole set and on its ``hard`` rows alone (written before
any judge saw them). The LLM judge runs the real ``anthropic`` SDK against the fake Messages
API on 127.0.0.1, which answers every request at once with a fixed verdict: its *quality*
can't be measured offline, so only its extra latency per attempt is printed, against a
baseline measured in the same run (the heuristic judge, and no judge at all).

Usage::

    python benchmarks/judge.py [--rounds N] [-v]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reflexkit.llm import Claude, RetryPolicy
from reflexkit.reports._judge import (
    ClaudeJudge,
    CompletionJudge,
    HeuristicJudge,
    JudgeInput,
    Judgement,
    Severity,
)
from reflexkit.testing.fake_messages_api import FakeMessagesApi

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "judge" / "attempts.jsonl"
COMPLETE = {
    "complete": True,
    "severity": "NONE",
    "feedback": "Done as asked.",
    "missing": [],
    "nextActions": [],
}


def load() -> list[dict[str, Any]]:
    """Read the labelled attempts."""
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def as_input(row: dict[str, Any]) -> JudgeInput:
    """The judge input of one labelled attempt."""
    return JudgeInput(
        subtask=row["subtask"],
        diff=row["diff"],
        last_message=row["lastMessage"],
        checks_passed=row["checksPassed"],
    )


def label_of(judgement: Judgement) -> str:
    """complete, incomplete or blocker; a judge that failed is "complete" (it never blocks)."""
    verdict = judgement.verdict
    if verdict is None or verdict.complete:
        return "complete"
    return "blocker" if verdict.severity is Severity.BLOCKER else "incomplete"


def score(rows: list[dict[str, Any]], judge: CompletionJudge, *, verbose: bool) -> dict[str, Any]:
    """Judge every row; return precision, recall, false blocks and blockers caught."""
    tp = fp = fn = 0
    passed = false_blocks = blockers = caught = 0
    for row in rows:
        got = label_of(judge.judge(as_input(row)))
        want = row["label"]
        rejected, deserved = got != "complete", want != "complete"
        tp += rejected and deserved
        fp += rejected and not deserved
        fn += deserved and not rejected
        if row["checksPassed"] and not deserved:
            passed += 1
            false_blocks += rejected
        if want == "blocker":
            blockers += 1
            caught += got == "blocker"
        if verbose and got != want:
            print(f"    miss {row['id']}: labelled {want}, judged {got} ({row['note']})")
    return {
        "n": len(rows),
        "precision": tp / (tp + fp) if tp + fp else float("nan"),
        "recall": tp / (tp + fn) if tp + fn else float("nan"),
        "false_blocks": false_blocks,
        "passed": passed,
        "blockers": blockers,
        "caught": caught,
    }


def per_attempt_ms(
    rows: list[dict[str, Any]], call: Callable[[JudgeInput], object], rounds: int
) -> float:
    """The median over *rounds* of the mean time per attempt, in milliseconds."""
    inputs = [as_input(r) for r in rows]
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for attempt in inputs:
            call(attempt)
        samples.append((time.perf_counter() - started) * 1000 / len(inputs))
    return statistics.median(samples)


def main() -> int:
    """Print the figures; exit 1 when the heuristic judge misses one of its ordinary rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (default 5)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the misses")
    args = parser.parse_args()
    rows = load()
    heuristic = HeuristicJudge()
    labels = {x: sum(r["label"] == x for r in rows) for x in ("complete", "incomplete", "blocker")}
    print(f"labelled attempts: {len(rows)} ({', '.join(f'{v} {k}' for k, v in labels.items())})")
    ok = True
    for title, subset in (
        ("heuristic, all rows", rows),
        ("heuristic, ordinary rows (written with the rules)", [r for r in rows if not r["hard"]]),
        ("heuristic, hard rows only (written blind)", [r for r in rows if r["hard"]]),
    ):
        print(f"\n{title} (n={len(subset)}):")
        s = score(subset, heuristic, verbose=args.verbose)
        print(f"  precision of incomplete   {s['precision']:.2f}")
        print(f"  recall of incomplete      {s['recall']:.2f}")
        print(
            f"  false blocks              {s['false_blocks']} of {s['passed']} complete attempts "
            f"whose checks passed ({s['false_blocks'] / max(s['passed'], 1):.0%})"
        )
        print(f"  blockers caught           {s['caught']} of {s['blockers']}")
        if "ordinary" in title:  # a regression guard: the rules must keep their own rows
            ok = s["false_blocks"] == 0 and s["precision"] == s["recall"] == 1.0

    with FakeMessagesApi() as api:
        judge = ClaudeJudge(
            Claude(base_url=api.url, api_key="sk-bench", retry=RetryPolicy.no_wait())
        )

        def llm(attempt: JudgeInput) -> object:
            api.reply(COMPLETE)
            return judge.judge(attempt)

        llm(as_input(rows[0]))  # the SDK import and the connection: once per process
        none_ms = per_attempt_ms(rows, lambda _a: None, args.rounds)
        heuristic_ms = per_attempt_ms(rows, heuristic.judge, args.rounds)
        llm_ms = per_attempt_ms(rows, llm, args.rounds)
        judge.close()
    print(f"\nlatency per attempt (median of {args.rounds} rounds over {len(rows)} attempts):")
    print(f"  no judge                  {none_ms:.4f} ms")
    print(f"  heuristic judge           {heuristic_ms:.3f} ms")
    print(
        f"  LLM judge, fake API       {llm_ms:.3f} ms "
        f"({llm_ms / max(heuristic_ms, 1e-6):.0f}x the heuristic; the real API adds its "
        "own seconds)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
