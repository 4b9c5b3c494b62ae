"""Folders reflexkit creates are never writable by others, whatever the umask.

Under ``umask 000`` (a container default, a shared CI runner) ``mkdir(parents=True)`` made
``.reflexkit`` and its folders ``0777``: anyone on the machine could swap the memory file or
a run log for their own and put text in the next retry prompt. The files were private
already; now the folders are too.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from ..conftest import PYTEST_FAILURE as FAILURE  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _under_umask_0(argv: list[str], cwd: Path, stdin: bytes = b"") -> None:
    env = {k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"}
    done = subprocess.run(
        ["bash", "-c", 'umask 000 && exec "$@"', "bash", *argv],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in {0, 1}, done.stderr.decode()


def _writable_by_others(root: Path) -> list[str]:
    found = []
    for folder, names, files in os.walk(root / ".reflexkit"):
        for name in [".", *names, *files]:
            path = Path(folder, name)
            if not path.is_symlink() and path.lstat().st_mode & (stat.S_IWOTH | stat.S_IWGRP):
                found.append(f"{oct(path.lstat().st_mode)} {path.relative_to(root)}")
    return found


def test_reflect_in_a_new_project_makes_private_folders(tmp_path: Path) -> None:
    """`.reflexkit` itself and `memory/` (and the index) are created by the first save."""
    _under_umask_0(
        [sys.executable, "-m", "reflexkit", "reflect", "--backend", "heuristic"],
        tmp_path,
        json.dumps(FAILURE).encode(),
    )
    assert (tmp_path / ".reflexkit" / "memory" / "reflections.jsonl").is_file()
    _under_umask_0([sys.executable, "-m", "reflexkit", "recent", "discount"], tmp_path)
    assert _writable_by_others(tmp_path) == []


def test_a_run_makes_private_folders(tmp_path: Path) -> None:
    """Runs, prompts, reports, insights and memory: nothing under .reflexkit is writable."""
    (tmp_path / ".reflexkit").mkdir(mode=0o755)
    (tmp_path / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{sys.executable} -c 'raise SystemExit(1)'"]},
                "orchestrator": {"maxAttempts": 2, "agentCommand": ["true", "{prompt_file}"]},
                "reports": {"enabled": True},
            }
        )
    )
    (tmp_path / "task.json").write_text(
        json.dumps({"id": "t", "subtasks": [{"id": "s", "description": "Fix it."}]})
    )
    _under_umask_0([sys.executable, "-m", "reflexkit", "run", "task.json"], tmp_path)
    assert list((tmp_path / ".reflexkit" / "runs").glob("*.jsonl"))
    assert _writable_by_others(tmp_path) == []
