"""The one safe reader: a regular file only, no link, never blocking, bounded, a clear error."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._files import OWN_GITIGNORE, make_dirs, read_regular

# Reads in a child process with a time limit: a reader that blocks on a FIFO or reads
# /dev/zero until the memory is gone shows as a time-out or a crash, not a hung suite.
READ = """
import sys
from reflexkit._files import read_regular
try:
    data = read_regular(sys.argv[1], limit=1 << 20, follow=sys.argv[2] == "follow")
except OSError as err:
    print("error:", err)
else:
    print("read", len(data))
"""


def _read_in_child(path: Path, *, follow: bool = False) -> str:
    done = subprocess.run(
        [sys.executable, "-c", READ, str(path), "follow" if follow else "no"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO nobody writes is an error naming it, not a hang."""
    os.mkfifo(tmp_path / "f")
    assert "is a FIFO, not a regular file" in _read_in_child(tmp_path / "f")


@pytest.mark.parametrize("follow", [False, True])
def test_a_link_to_dev_zero_is_refused(tmp_path: Path, follow: bool) -> None:
    """A committed link to /dev/zero: refused as a link, or (following it) as a device."""
    (tmp_path / "l").symlink_to("/dev/zero")
    out = _read_in_child(tmp_path / "l", follow=follow)
    assert out.startswith("error:")
    assert ("character device" if follow else "symbolic link") in out


def test_a_link_to_a_file_is_refused_unless_followed(tmp_path: Path) -> None:
    """A link is never followed by default; with follow, its regular target is read."""
    (tmp_path / "t").write_bytes(b"x" * 10)
    (tmp_path / "l").symlink_to(tmp_path / "t")
    with pytest.raises(OSError, match="symbolic link") as caught:
        read_regular(tmp_path / "l")
    assert caught.value.errno == errno.ELOOP
    assert read_regular(tmp_path / "l", follow=True) == b"x" * 10


def test_a_file_over_the_bound_is_an_error_and_its_tail_can_be_read(tmp_path: Path) -> None:
    """More than the limit is EFBIG (not silently cut), or its head or tail when asked."""
    path = tmp_path / "big"
    path.write_bytes(b"a" * 100 + b"b" * 100)
    with pytest.raises(OSError, match="more than 150 bytes") as caught:
        read_regular(path, limit=150)
    assert caught.value.errno == errno.EFBIG
    assert read_regular(path, limit=200) == b"a" * 100 + b"b" * 100
    assert read_regular(path, limit=100, keep="tail") == b"b" * 100
    assert read_regular(path, limit=100, keep="head") == b"a" * 100


def test_a_folder_is_refused(tmp_path: Path) -> None:
    """A folder at the path says so."""
    with pytest.raises(OSError, match="is a folder"):
        read_regular(tmp_path)


FAILURE_JSON = (
    '{"sessionId": "s", "taskId": "t", "subtaskId": "st", "attemptNumber": 1,'
    ' "command": "pytest", "exitCode": 1,'
    ' "errorOutput": "FAILED test_x.py::test_a - assert 1 == 2"}'
)


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


def test_the_own_folder_stays_out_of_git_status(tmp_path: Path) -> None:
    """The first reflection made in a repository leaves only .reflexkit/.gitignore to add.

    Memory (tool output) never shows in `git status`; project.json and fixtures still do.
    """
    _git(tmp_path, "init", "-q")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "reflect", "--backend", "heuristic"],
        input=FAILURE_JSON,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".reflexkit" / "memory" / "reflections.jsonl").is_file()
    assert _git(tmp_path, "status", "--porcelain", "-uall").splitlines() == [
        "?? .reflexkit/.gitignore"
    ]
    (tmp_path / ".reflexkit" / "project.json").write_text("{}")
    (tmp_path / ".reflexkit" / "fixtures").mkdir()
    (tmp_path / ".reflexkit" / "fixtures" / "replies.jsonl").write_text("")
    status = _git(tmp_path, "status", "--porcelain", "-uall").splitlines()
    assert sorted(status) == [
        "?? .reflexkit/.gitignore",
        "?? .reflexkit/fixtures/replies.jsonl",
        "?? .reflexkit/project.json",
    ]


def test_a_gitignore_of_ones_own_is_kept(tmp_path: Path) -> None:
    """A .gitignore the user put in .reflexkit is never replaced; a link there is not followed."""
    own = tmp_path / ".reflexkit"
    own.mkdir()
    (own / ".gitignore").write_text("memory/\n")
    make_dirs(own / "memory")
    assert (own / ".gitignore").read_text() == "memory/\n"
    other = tmp_path / "other" / ".reflexkit"
    other.parent.mkdir()
    target = tmp_path / "target.txt"
    target.write_text("mine")
    other.mkdir()
    (other / ".gitignore").symlink_to(target)
    make_dirs(other / "runs")
    assert target.read_text() == "mine"
    made = tmp_path / "fresh" / ".reflexkit"
    make_dirs(made / "runs")
    assert (made / ".gitignore").read_bytes() == OWN_GITIGNORE
