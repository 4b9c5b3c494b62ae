"""The loop's events reach subscribers that installed packages register (entry points)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
