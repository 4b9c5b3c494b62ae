"""`reflexkit insights --watch`: a real process reacting to real run-log appends (#28).

The watcher runs as `python -m reflexkit insights --watch`; the test writes run logs with the
orchestrator's own RunLog (HistoryWriter), reads the events the watcher prints, counts its
context switches while nothing happens (blocked in poll: none), and ends it with a signal.
The analysis goes through the real anthropic SDK to the fake Messages API.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

import pytest

from reflexkit.insights import FindingLog, PausedSubtasks
from reflexkit.insights._watch import FolderWaker, StopSignals
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.run_history import HistoryWriter

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

WAIT_S = 60.0  # the most a step may take on a loaded machine; never reached when it works


class Watcher:
    """A `reflexkit insights --watch --json` process and the lines it prints."""

    def __init__(self, root: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reflexkit", "insights", "--watch", "--json", *args],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: queue.Queue[str] = queue.Queue()
        self.pumps = [
            threading.Thread(target=_pump, args=(stream, into), daemon=True)
            for stream, into in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors))
        ]
        for pump in self.pumps:
            pump.start()

    def __enter__(self) -> Self:
        ready = self.errors.get(timeout=WAIT_S)
        assert "watching" in ready, ready
        assert "inotify" in ready  # Linux: blocked on inotify, not a timer
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT_S)
        for pump in self.pumps:
            pump.join(timeout=WAIT_S)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def events_until(self, kind: str) -> list[dict[str, Any]]:
        """The events printed up to and including the first of *kind*."""
        seen = []
        while True:
            event = json.loads(self.lines.get(timeout=WAIT_S))
            seen.append(event)
            if event["kind"] == kind:
                return seen

    def switches(self) -> int:
        """The context switches of all its threads so far (a process blocked in poll makes none)."""
        total = 0
        for status in Path(f"/proc/{self.proc.pid}/task").glob("*/status"):
            for line in status.read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
        return total

    def end(self, signum: int) -> tuple[int, str]:
        """Send *signum*; return the exit code and what it printed on stderr."""
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=WAIT_S)
        self.pumps[1].join(timeout=WAIT_S)
        rest = []
        while not self.errors.empty():
            rest.append(self.errors.get())
        return code, "".join(rest)


def wall_clock() -> datetime:
    """The time the watcher sees: this process's clock may be moved (REFLEXKIT_TEST_DAYS_AHEAD)."""
    done = subprocess.run(
        [sys.executable, "-c", "import time; print(time.time())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return datetime.fromtimestamp(float(done.stdout), tz=UTC)


def _pump(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


@pytest.fixture
def project(tmp_path: Path, fake_messages_api: FakeMessagesApi) -> tuple[Path, dict[str, str]]:
    """A project on the llm backend (the fake Messages API), pausing after 2 failed runs."""
    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "llm", "generationTimeoutMs": 60_000},
                "insights": {"consecutiveFailureLimit": 2, "batchThreshold": 4},
            }
        )
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT", "ANTHROPIC"))}
    env = {**clean, "ANTHROPIC_BASE_URL": fake_messages_api.url, "ANTHROPIC_API_KEY": "sk-test"}
    return tmp_path, env


@pytest.mark.slow
def test_the_watch_reacts_to_failures_and_every_n_completions(
    project: tuple[Path, dict[str, str]], fake_messages_api: FakeMessagesApi
) -> None:
    """Failed attempts run the rules at once; the 4th completed attempt runs one analysis."""
    root, env = project
    fake_messages_api.reply(
        {"summary": "cart fails in src/cart.py every time.", "taskActions": [], "lessonActions": []}
    )
    state = root / ".reflexkit"
    writer = HistoryWriter(state / "runs", start=wall_clock() - timedelta(hours=1))
    with Watcher(root, env) as watcher:
        before = watcher.switches()
        time.sleep(1.0)  # idle: nothing written, nothing to do
        assert watcher.switches() - before <= 2

        with writer.run("shop") as run:
            run.fail(
                "cart", files=("src/cart.py",), verificationOutput="AssertionError: total is 0"
            )
            run.fail(
                "cart", files=("src/cart.py",), verificationOutput="AssertionError: total is 0"
            )
        flagged = watcher.events_until("file_flagged")
        assert flagged[-1]["data"]["path"] == "src/cart.py"
        assert any(e["data"].get("rule") == "file_failure_correlation" for e in flagged)
        assert fake_messages_api.requests == []  # 2 completed attempts: no analysis yet

        with writer.run("shop") as run:
            run.fail(
                "cart", files=("src/cart.py",), verificationOutput="AssertionError: total is 0"
            )
            run.end("cart", "stuck")
            run.passed("tax")
        events = watcher.events_until("analysis_completed")
        assert events[-1]["data"]["source"] == "llm", events[-1]
        assert events[-1]["data"]["findingsCount"] >= 1
        prose = [e for e in events if e["data"].get("subjectType") == "analysis"]
        assert prose[0]["data"]["detail"] == "cart fails in src/cart.py every time."
        [request] = fake_messages_api.requests
        content = request.json["messages"][0]["content"]
        assert "AssertionError: total is 0" in content
        assert '"activeTasks"' in content

        code, stderr = watcher.end(signal.SIGTERM)
    assert code == 0
    assert "Traceback" not in stderr
    assert "stopped watching" in stderr
    logged = FindingLog(state / "insights.jsonl").read()
    assert {f.rule.value for f in logged} >= {"file_failure_correlation", "analysis"}


def test_the_watch_pauses_a_subtask_that_failed_its_last_runs(
    project: tuple[Path, dict[str, str]],
) -> None:
    """Two stuck runs of a subtask: the watch pauses it, as the next run start would."""
    root, env = project
    state = root / ".reflexkit"
    writer = HistoryWriter(state / "runs")
    with Watcher(root, env, "--every", "1000") as watcher:
        for _ in range(2):
            with writer.run("shop") as run:
                run.fail("ship", files=())
                run.end("ship", "stuck")
        events = watcher.events_until("finding")
        while events[-1]["data"]["rule"] != "consecutive_failures":
            events += watcher.events_until("finding")
        assert events[-1]["data"]["actionTaken"] == "paused"
        code, _ = watcher.end(signal.SIGINT)
    assert code == 0
    assert [e.subtask_id for e in PausedSubtasks(state / "paused.jsonl").paused()] == ["ship"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_an_idle_watch_cleanly(
    project: tuple[Path, dict[str, str]], signum: int
) -> None:
    """Ctrl-C or SIGTERM while idle: exit 0 at once, no traceback, nothing written."""
    root, env = project
    with Watcher(root, env) as watcher:
        code, stderr = watcher.end(signum)
    assert code == 0
    assert "Traceback" not in stderr
    assert not (root / ".reflexkit" / "insights.jsonl").exists()


def test_without_inotify_the_waker_looks_with_a_backoff(tmp_path: Path) -> None:
    """The fallback sees an append and stops on request, sleeping in poll in between."""
    runs = tmp_path / "runs"
    with StopSignals() as stop:
        waker = FolderWaker(runs, stop, inotify=False)
        assert not waker.blocking
        threading.Timer(0.2, lambda: (runs / "r.jsonl").write_text("{}\n")).start()
        assert waker.wait() is True
        threading.Timer(0.2, stop.stop).start()
        assert waker.wait() is False
        waker.close()


def test_every_without_watch_is_a_usage_error(tmp_path: Path) -> None:
    """`--every` means nothing without `--watch`: exit 2 with one line."""
    done = invoke_cli(tmp_path, "insights", "--every", "3")
    assert done.returncode == 2
    assert b"--every goes with --watch" in done.stderr
