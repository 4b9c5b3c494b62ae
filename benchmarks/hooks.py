"""Measure what the Claude Code hooks add to a session: the time of one hook process.

Claude Code starts the post-tool-use hook after every Bash call and the stop hook at every
stop, so a hook's cost is mostly its process start. In a temporary git project this prints
the median wall time of:

* ``python -c pass``: the interpreter alone (the baseline, measured in the same run);
* the light entry point ``python -m reflexkit.hooks post-tool-use`` with hooks off (a no-op),
  and with hooks on for a Bash call that worked (nothing to reflect on);
* the same through the full command line, ``python -m reflexkit hook post-tool-use``;
* a failed Bash call reflected on (heuristic) and stored;
* a stop that writes a report (git numstat, the risk floor, an atomic write) and runs the
  heuristic judge;
* with the llm judge against the fake Messages API: stops in an unchanged state (the memo's
  verdict, no request) against stops whose last message changes each time (a request each):
  the requests sent and the median time of a stop.

Usage::

    python benchmarks/hooks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "hooks"


def timed(argv: list[str], stdin: bytes, cwd: Path, rounds: int) -> float:
    """The median wall time of running *argv* with *stdin*, in milliseconds."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        done = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, check=False)
        samples.append((time.perf_counter() - started) * 1000)
        assert done.returncode == 0, done.stderr
    return statistics.median(samples)


def payload(name: str, root: Path, **changes: object) -> bytes:
    """A recorded payload pointed at *root*."""
    data = json.loads((DATA / name).read_text())
    data["cwd"] = str(root)
    data["transcript_path"] = str(DATA / "transcript.jsonl")
    data.update(changes)
    return json.dumps(data).encode()


def main() -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs per figure (default 7)")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="reflexkit-hooks-bench-") as tmp:
        root = Path(tmp) / "project"
        (root / "orders").mkdir(parents=True)
        (root / "orders" / "export.py").write_text("def export_csv(o):\n    return ''\n")
        for git in (["init", "-q"], ["add", "."]):
            subprocess.run(["git", *git], cwd=root, check=True)
        subprocess.run(
            ["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "s"],
            cwd=root,
            check=True,
        )
        ok = payload("post_tool_use_bash_ok.json", root)
        light = [py, "-m", "reflexkit.hooks", "post-tool-use"]
        full = [py, "-m", "reflexkit", "hook", "post-tool-use"]
        rows = [("python -c pass (baseline)", timed([py, "-c", "pass"], b"", root, args.rounds))]
        rows.append(("light entry, hooks off", timed(light, ok, root, args.rounds)))
        config = root / ".reflexkit" / "project.json"
        config.parent.mkdir()
        config.write_text(
            json.dumps(
                {
                    "hooks": {"enabled": True},
                    "reports": {"enabled": True},
                    "reflexion": {"backend": "heuristic"},
                    "verification": {"judge": "heuristic"},
                }
            )
        )
        rows.append(("light entry, Bash call that worked", timed(light, ok, root, args.rounds)))
        rows.append(("full CLI, Bash call that worked", timed(full, ok, root, args.rounds)))
        failures = [
            payload("post_tool_use_failure_bash.json", root, tool_use_id=f"toolu_{n}")
            for n in range(args.rounds)
        ]
        samples = [timed(light, stdin, root, 1) for stdin in failures]
        rows.append(("light entry, failed Bash -> reflection", statistics.median(samples)))
        (root / "orders" / "export.py").write_text("def export_csv(o):\n    return 'a,b'\n")
        stop = payload("stop.json", root)
        rows.append(
            (
                "stop: report + heuristic judge",
                timed([py, "-m", "reflexkit.hooks", "stop"], stop, root, args.rounds),
            )
        )
        memo = memo_rows(root, args.rounds)
    base = rows[0][1]
    print(f"median wall time of one hook process ({args.rounds} runs each):")
    for label, ms in rows:
        print(f"  {label:<42} {ms:8.1f} ms  ({ms / base:4.1f}x the interpreter alone)")
    print(f"the stop hook's memo, llm judge ({args.rounds} stops each):")
    for label, requests, ms in memo:
        print(f"  {label:<42} {requests:3d} requests  {ms:8.1f} ms a stop")
    return 0


VERDICT = {
    "complete": False,
    "severity": "MEDIUM",
    "feedback": "export_csv writes no header.",
    "missing": ["the header row"],
    "nextActions": ["Write the header first"],
}


def memo_rows(root: Path, rounds: int) -> list[tuple[str, int, float]]:
    """Stops in one state (judged once) against stops in a new state each (judged each)."""
    from reflexkit.testing.fake_messages_api import FakeMessagesApi  # noqa: PLC0415

    config = root / ".reflexkit" / "project.json"
    config.write_text(
        json.dumps(
            {
                "hooks": {"enabled": True, "maxStopBlocks": 10_000},
                "reflexion": {"backend": "heuristic"},
                "verification": {"judge": "llm", "judgeTimeoutMs": 60_000},
            }
        )
    )
    argv = [sys.executable, "-m", "reflexkit.hooks", "stop"]
    found = []
    with FakeMessagesApi() as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-bench"}
        for label, changing in (("unchanged state (memo)", False), ("a new state each stop", True)):
            api.reset()
            for _ in range(rounds):
                api.reply(VERDICT)
            samples = []
            for n in range(rounds):
                message = f"Done, take {n}." if changing else "Done."
                stdin = payload("stop.json", root, session_id=label, last_assistant_message=message)
                started = time.perf_counter()
                subprocess.run(
                    argv, input=stdin, cwd=root, env=env, capture_output=True, check=True
                )
                samples.append((time.perf_counter() - started) * 1000)
            found.append((label, len(api.requests), statistics.median(samples)))
    return found


if __name__ == "__main__":
    sys.exit(main())
