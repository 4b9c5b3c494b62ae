"""The loop's events: subscribers that installed packages register (entry points), the log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import reflexkit
from reflexkit.events import Event, EventKind, RunLog

PLUGIN = """
import json, os

def follow(event):
    with open(os.environ["FOLLOWED"], "a") as out:
        out.write(json.dumps([event.kind.value, event.subtask_id, event.attempt]) + "\\n")

not_callable = 42
"""


def _plugin(folder: Path) -> Path:
    """An installed distribution (a dist-info on the path) with three subscribers."""
    folder.mkdir()
    (folder / "follower.py").write_text(PLUGIN)
    info = folder / "follower-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: follower\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[reflexkit.subscribers]\n"
        "follow = follower:follow\n"
        "missing = follower_gone:follow\n"
        "number = follower:not_callable\n"
    )
    return folder


def test_reflexkit_run_hands_every_event_to_registered_subscribers(tmp_path: Path) -> None:
    """A real `reflexkit run`: the plugin gets every event the run log gets, in order.

    A subscriber that can't be loaded, or is not callable, is skipped and said.
    """
    plugin = _plugin(tmp_path / "plugin")
    project = tmp_path / "project"
    (project / ".reflexkit").mkdir(parents=True)
    (project / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})
    )
    (project / "task.json").write_text(
        json.dumps(
            {
                "id": "t",
                "description": "",
                "subtasks": [{"id": "s", "description": "d", "verify": ["true"]}],
            }
        )
    )
    followed = tmp_path / "followed.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")]),
        "FOLLOWED": str(followed),
    }
    agent = f"{sys.executable} -c pass"
    done = subprocess.run(
        [
            sys.executable,
            *("-m", "reflexkit", "run", "task.json", "--run-id", "r1"),
            "--agent-command",
            agent,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = (project / ".reflexkit" / "runs" / "r1.jsonl").read_text().splitlines()
    logged = [[e["kind"], e["subtaskId"], e["attempt"]] for e in map(json.loads, lines)]
    assert [json.loads(line) for line in followed.read_text().splitlines()] == logged
    assert logged[0][0] == "run_started"
    assert logged[-1][0] == "run_finished"
    assert "subscriber missing can't be loaded" in done.stderr
    assert "subscriber number is not callable" in done.stderr


def test_a_normalised_run_log_writes_every_duration_as_0(tmp_path: Path) -> None:
    """Every wall-clock time the loop writes (a key ending in ``Ms``) is 0 when normalised.

    So two deterministic runs compare byte for byte with the completion judge on too: its
    ``judgeMs`` is on ``passed`` and on a rejection's ``verification_failed``.
    """
    src = Path(reflexkit.__file__).parent
    named = {m for f in src.rglob("*.py") for m in re.findall(r'"([a-z]\w*Ms)"', f.read_text())}
    assert {"durationMs", "judgeMs"} <= named
    log = RunLog(tmp_path / "run.jsonl", normalise_durations=True)
    log.write(Event(kind=EventKind.PASSED, subtask_id="s", data=dict.fromkeys(named, 1234)))
    (line,) = (tmp_path / "run.jsonl").read_bytes().splitlines()
    assert json.loads(line)["data"] == dict.fromkeys(named, 0)
