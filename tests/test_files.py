"""The one safe reader: a regular file only, no link, never blocking, bounded, a clear error."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._files import read_regular

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
