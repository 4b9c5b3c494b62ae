"""Insights files shared with a program that appends torn lines: no insight record is lost.

Four processes pause subtasks (one ``paused.jsonl`` line each) while another program appends
fragments with no newline, without any lock. A record written right after a fragment is
glued to it; the shared line writer sees the byte before its line is not a newline and
writes the record again on a line of its own, so every pause is read back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reflexkit.insights import PausedSubtasks

from ..conftest import FRAGMENT_WRITER  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

PAUSER = """
import sys
from pathlib import Path
from reflexkit.insights import PausedSubtasks

paused = PausedSubtasks(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    paused.pause("t", f"{sys.argv[2]}-{i}", description="d", reason="r")
"""


def test_pauses_written_beside_torn_lines_are_all_read_back(tmp_path: Path) -> None:
    """400 pauses from 4 processes beside a fragment writer: all 400 are read back."""
    path = tmp_path / "paused.jsonl"
    stop = tmp_path / "stop"
    fragments = subprocess.Popen(
        [sys.executable, "-c", FRAGMENT_WRITER, str(path), str(stop), '{"torn": %d', "100"],
        stdout=subprocess.PIPE,
    )
    pausers = [
        subprocess.Popen([sys.executable, "-c", PAUSER, str(path), f"p{n}", "100"])
        for n in range(4)
    ]
    try:
        assert [p.wait(timeout=120) for p in pausers] == [0] * 4
    finally:
        stop.touch()
        out, _ = fragments.communicate(timeout=60)
    assert int(out) > 10
    entries = PausedSubtasks(path).entries()
    assert len(entries) == 400
    assert {s for _, s in entries} == {f"p{n}-{i}" for n in range(4) for i in range(100)}
