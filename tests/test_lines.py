"""The shared append-only line writer: whole lines from many real processes (#19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reflexkit._lines import LineWriter

from .conftest import FRAGMENT_WRITER

_WRITER = """
import sys
from reflexkit._lines import LineWriter
tag, count, keep = sys.argv[2], int(sys.argv[3]), sys.argv[4] == "keep"
with LineWriter(sys.argv[1], keep_open=keep) as lines:
    for i in range(count):
        lines.append(f"{tag} {i} ".encode() + b"x" * 3000)
"""


@pytest.mark.parametrize("keep", ["keep", "reopen"])
def test_concurrent_processes_never_interleave(tmp_path: Path, keep: str) -> None:
    """Four processes append 3 kB lines at once: every line arrives whole, once."""
    target = tmp_path / "deep" / "log.jsonl"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(target), f"p{n}", "200", keep])
        for n in range(4)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    lines = target.read_bytes().splitlines()
    assert len(lines) == 800
    assert all(line.endswith(b"x" * 3000) and line.count(b" ") == 2 for line in lines)
    seen = {tuple(line.split(b" ")[:2]) for line in lines}
    assert len(seen) == 800


def test_a_line_with_a_newline_inside_is_refused(tmp_path: Path) -> None:
    """Two lines passed as one would break the one-write rule: a ValueError, nothing written."""
    writer = LineWriter(tmp_path / "f")
    with pytest.raises(ValueError, match="newline before its end"):
        writer.append(b"one\ntwo")
    writer.append(b"ok\n")
    writer.close()
    assert (tmp_path / "f").read_bytes() == b"ok\n"


def test_reopening_after_close(tmp_path: Path) -> None:
    """A closed writer opens the file again on the next line, after what is there."""
    writer = LineWriter(tmp_path / "f")
    writer.append(b"a")
    writer.close()
    writer.append(b"b")
    writer.close()
    assert (tmp_path / "f").read_bytes() == b"a\nb\n"


@pytest.mark.parametrize("keep", ["keep", "reopen"])
def test_torn_lines_written_beside_the_writers_never_swallow_a_line(
    tmp_path: Path, keep: str
) -> None:
    """A program appends fragments with no newline while 4 writers run: every line is whole.

    A line written right after a fragment would be glued to it (a run-log event or a fixture
    lost); the writer sees the byte before its line is no newline and writes it again.
    """
    target, stop = tmp_path / "log.jsonl", tmp_path / "stop"
    target.write_bytes(b"")
    rogue = subprocess.Popen(
        [sys.executable, "-c", FRAGMENT_WRITER, str(target), str(stop), "torn %d ", "200"],
        stdout=subprocess.PIPE,
    )
    while not target.stat().st_size:  # the writers start once fragments are coming
        assert rogue.poll() is None
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(target), f"p{n}", "300", keep])
        for n in range(4)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    stop.touch()
    out, _ = rogue.communicate(timeout=60)
    assert int(out) > 10
    lines = [line.strip() for line in target.read_bytes().split(b"\n")]
    whole = [line for line in lines if line.endswith(b"x" * 3000) and line[:1] == b"p"]
    assert len(whole) == 1200
    assert len({tuple(line.split(b" ")[:2]) for line in whole}) == 1200


def test_a_pipe_gets_its_lines_unchecked(tmp_path: Path) -> None:
    """A FIFO (a log piped to another program) has no places to check: lines go through."""
    fifo = tmp_path / "events"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the other program, listening
    try:
        with LineWriter(fifo, pipes=True) as lines:
            lines.append(b'{"kind":"run_started"}')
            lines.append(b'{"kind":"run_finished"}')
        out = os.read(reader, 4096)
    finally:
        os.close(reader)
    assert out == b'{"kind":"run_started"}\n{"kind":"run_finished"}\n'
