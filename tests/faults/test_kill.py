"""Whole-file replacement killed at random moments: the file is always one whole version."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPLACER = """
import sys
from pathlib import Path
from reflexkit._files import atomic_write

target = Path(sys.argv[1])
versions = [b"A" * 700_000 + b"\\n", b"B" * 900_000 + b"\\n"]
i = 0
print("ready", flush=True)
while True:
    atomic_write(target, versions[i % 2])
    i += 1
"""


def test_a_replace_killed_at_any_moment_leaves_one_whole_version(tmp_path: Path) -> None:
    """SIGKILL a process replacing a file in a loop, 12 times: the file is A or B, whole."""
    target = tmp_path / "project.json"
    target.write_bytes(b"A" * 700_000 + b"\n")
    rnd = random.Random(7)  # noqa: S311 -- kill moments, not secrets
    for _ in range(12):
        child = subprocess.Popen(
            [sys.executable, "-c", REPLACER, str(target)], stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        time.sleep(rnd.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        data = target.read_bytes()
        assert data in {b"A" * 700_000 + b"\n", b"B" * 900_000 + b"\n"}, len(data)
    # What a kill can leave is a temporary file beside it, never in the target's name.
    assert {p.name for p in tmp_path.iterdir()} - {"project.json"} <= {
        p.name for p in tmp_path.glob(".project.json.*.tmp")
    }


_WRITE_AS_NOBODY = """
import sys
from pathlib import Path
from reflexkit._files import atomic_write
atomic_write(Path(sys.argv[1]) / "project.json", b"{}")
print("written")
"""


def test_a_folder_that_cant_be_synced_is_not_a_failed_write() -> None:
    """A write-only folder can't be opened to sync: the file is in place, so no error."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to write as another user")
    folder = Path(tempfile.mkdtemp(prefix="reflexkit-sync-"))
    try:
        folder.chmod(0o733)  # others may create files there, not list it
        box = folder / "box"
        box.mkdir()
        box.chmod(0o333)
        done = subprocess.run(
            [
                *(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"),
                *(sys.executable, "-c", _WRITE_AS_NOBODY, str(box)),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "written"
        assert (box / "project.json").read_bytes() == b"{}"
    finally:
        shutil.rmtree(folder)
