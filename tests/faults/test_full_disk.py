"""Full and read-only file systems under a run, the insight rules, `config init` and the hooks.

Each test mounts a small tmpfs of its own where the files go, fills it or makes it
read-only, and runs the real code (real processes where the command line is the contract).
What must hold: the run goes on and says so once, the rules still act on what they found,
nothing half written is left in a file's real name, a hook stays a no-op.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit.insights import FindingLog, HistoryRules, PausedSubtasks
from reflexkit.models import FailureContext, FailureType
from reflexkit.tasks._config import InsightsConfig
from reflexkit.tasks._task import Subtask, Task
from reflexkit.testing.run_history import HistoryWriter

from ..conftest import Disks  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

TESTS = """import unittest
from calc import add

class AddTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT", "ANTHROPIC"))}
    return subprocess.run(
        [sys.executable, "-m", "reflexkit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _project(root: Path) -> Path:
    """A project whose add() is wrong, a task, and a script fixing it on attempt 3."""
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(TESTS)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{sys.executable} -m unittest -q"]},
            }
        )
    )
    (root / "task.json").write_text(
        json.dumps(
            {"id": "calc", "description": "Fix.", "subtasks": [{"id": "add", "description": "."}]}
        )
    )
    wrong = {"calc.py": "def add(a, b):\n    return a * b\n"}
    right = {"calc.py": "def add(a, b):\n    return a + b\n"}
    (root / "script.json").write_text(json.dumps({"add": [wrong, wrong, right]}))
    return root


@pytest.mark.slow
def test_a_run_whose_run_log_cant_be_written_goes_on_and_says_so_once(
    tmp_path: Path, disks: Disks
) -> None:
    """The runs folder on a full disk: the run passes, one warning, no traceback per event."""
    root = _project(tmp_path / "p")
    runs = disks.mount(root / ".reflexkit" / "runs")
    disks.fill(runs)
    done = _cli("run", "task.json", "--subagent", "scripted", "--script", "script.json", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "attempt 3: passed" in done.stdout
    assert "Traceback" not in done.stderr
    assert done.stderr.count("can't be written") == 1, done.stderr
    assert "events not written" in done.stdout


@pytest.mark.slow
def test_reports_that_cant_be_written_are_said_once(tmp_path: Path, disks: Disks) -> None:
    """The reports folder on a full disk: three attempts, the run passes, one warning."""
    root = _project(tmp_path / "p")
    config = json.loads((root / ".reflexkit" / "project.json").read_text())
    config["reports"] = {"enabled": True}
    (root / ".reflexkit" / "project.json").write_text(json.dumps(config))
    reports = disks.mount(root / ".reflexkit" / "reports")
    disks.fill(reports)
    done = _cli("run", "task.json", "--subagent", "scripted", "--script", "script.json", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("was not written") == 1, done.stderr


def test_config_init_on_a_full_disk_leaves_no_half_file(tmp_path: Path, disks: Disks) -> None:
    """`config init` with no room: one line on stderr, no project.json at all (not a part)."""
    state = disks.mount(tmp_path / ".reflexkit", size="16k")
    disks.fill(state)
    done = _cli("config", "init", cwd=tmp_path)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "No space left" in done.stderr
    assert not (state / "project.json").exists()
    assert [p.name for p in state.iterdir()] == [".filler"]  # no temporary file left either


def test_config_init_force_on_a_full_disk_keeps_the_old_file(tmp_path: Path, disks: Disks) -> None:
    """`config init --force` with no room: the project.json there stays whole."""
    state = disks.mount(tmp_path / ".reflexkit", size="16k")
    (state / "project.json").write_text('{"reflexion": {"backend": "heuristic"}}\n')
    disks.fill(state)
    done = _cli("config", "init", "--force", cwd=tmp_path)
    assert done.returncode != 0
    assert (state / "project.json").read_text() == '{"reflexion": {"backend": "heuristic"}}\n'


# --- the insight rules ----------------------------------------------------------------------

NOW_TASK = Task(
    id="shop", description="The shop.", subtasks=(Subtask(id="cart", description="Fix it."),)
)


def test_rules_on_a_full_disk_still_act_and_say_so_once(
    tmp_path: Path, disks: Disks, caplog: pytest.LogCaptureFixture
) -> None:
    """Findings and pauses that can't be logged still hold for the run; said once per file."""
    writer = HistoryWriter(tmp_path / "state" / "runs")
    for _ in range(3):
        with writer.run("shop") as run:
            run.fail("cart", fingerprint="fp1")
            run.end("cart", "stuck")
    state = tmp_path / "state"
    disks.mount(state / "full")
    disks.fill(state / "full")
    rules = HistoryRules(
        runs=state / "runs",
        findings=FindingLog(state / "full" / "insights.jsonl"),
        paused=PausedSubtasks(state / "full" / "paused.jsonl"),
        config=InsightsConfig(),
    )
    caplog.set_level(logging.WARNING, logger="reflexkit")
    assert set(rules.at_run_start(NOW_TASK).paused) == {"cart"}
    failure = FailureContext(
        task_id="shop",
        subtask_id="cart",
        attempt_number=2,
        session_id="run-x",
        failure_type=FailureType.TEST_FAILURE,
        command="pytest",
        error_output="FAILED",
    )
    rules.after_failure(failure, fingerprint="fp1", files_changed=[])
    check = rules.after_failure(failure, fingerprint="fp1", files_changed=[])
    assert check.nudge  # the finding holds although it could not be logged
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(r.exc_info is None for r in warnings)  # no traceback
    full = [r.getMessage() for r in warnings if "No space left" in r.getMessage()]
    assert full, [r.getMessage() for r in warnings]
    assert len(full) == len(set(full)), full  # once per file, not once per attempt


# --- the hooks --------------------------------------------------------------------------------


def _hook_project(root: Path) -> dict[str, object]:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    data = Path(__file__).parent.parent / "data" / "hooks"
    payload = json.loads((data / "post_tool_use_failure_bash.json").read_text())
    payload["cwd"] = str(root)
    payload["transcript_path"] = str(root.parent / "transcript.jsonl")
    (root.parent / "transcript.jsonl").write_text((data / "transcript.jsonl").read_text())
    return dict(payload)


def _hook(event: str, payload: object, root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT", "ANTHROPIC"))}
    return subprocess.run(
        [sys.executable, "-m", "reflexkit.hooks", event],
        input=json.dumps(payload),
        cwd=root.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_hooks_on_a_read_only_folder_are_no_ops(tmp_path: Path, disks: Disks) -> None:
    """.reflexkit read-only: each hook exits 0 and prints nothing Claude Code would act on."""
    root = tmp_path / "cart"
    payload = _hook_project(root)
    state = disks.mount(root / ".reflexkit")
    (state / "project.json").write_text(
        json.dumps({"hooks": {"enabled": True}, "verification": {"judge": "heuristic"}})
    )
    disks.read_only(state)
    for event in ("post-tool-use", "stop", "session-start"):
        done = _hook(event, payload, root)
        assert (done.returncode, done.stdout) == (0, ""), done.stderr
        assert "Traceback" not in done.stderr


def test_the_hooks_log_does_not_follow_a_planted_link(tmp_path: Path) -> None:
    """A link at .reflexkit/hooks/hooks.log: the hook runs, the link's target is untouched."""
    root = tmp_path / "cart"
    payload = _hook_project(root)
    (root / ".reflexkit" / "hooks").mkdir(parents=True)
    (root / ".reflexkit" / "project.json").write_text(json.dumps({"hooks": {"enabled": True}}))
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (root / ".reflexkit" / "hooks" / "hooks.log").symlink_to(victim)
    done = _hook("post-tool-use", payload, root)
    assert done.returncode == 0
    assert victim.read_text() == "precious\n"
    assert "symbolic link" in done.stderr


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_a_hooks_session_state_planted_is_neither_blocked_on_nor_followed(
    tmp_path: Path, plant: str
) -> None:
    """A FIFO or a link at the session's state or lock: the hook exits 0 in time, no write."""
    root = tmp_path / "cart"
    payload = _hook_project(root)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(json.dumps({"hooks": {"enabled": True}}))
    sessions = root / ".reflexkit" / "hooks" / "sessions"
    sessions.mkdir(parents=True)
    victim = tmp_path / "victim"
    state = sessions / f"{payload['session_id']}.json"
    if plant == "fifo":
        os.mkfifo(state)
    else:
        (sessions / f"{payload['session_id']}.lock").symlink_to(victim)
    done = _hook("session-start", {**payload, "source": "startup"}, root)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert not victim.exists()  # the lock's link was not followed to create its target
