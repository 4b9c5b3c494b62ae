"""Every appender reflexkit has, against something planted where its file should be.

A symbolic link (to a file the attacker wants grown), a folder, a FIFO nobody reads: each
writer runs with a time limit in a real process where it could block (a FIFO), in the test's
own process where it can't (a link, a folder), so a writer that follows the link, blocks
on the FIFO or crashes shows as such. Nothing may be written through a link, nothing may
hang, and a failure is a clear error (a store) or a note in the log (run log, hooks log),
never a traceback out of the run.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reflexkit.insights._lessons import lessons_key, signed

# One record through each appender; prints "ok" or "error: <message>" and exits 0.
WRITE = """
import sys
from pathlib import Path
from reflexkit.exceptions import StoreError

kind, path = sys.argv[1], Path(sys.argv[2])
try:
    if kind == "findings":
        from reflexkit.insights import FindingLog
        from reflexkit.insights._models import Finding, Rule, Severity, SubjectType
        FindingLog(path).add([Finding(rule=Rule.TIMEOUT_PATTERN, severity=Severity.WARNING,
            subject_type=SubjectType.SUBTASK, subject_id="s", detail="d", task_id="t")])
    elif kind == "paused":
        from reflexkit.insights import PausedSubtasks
        PausedSubtasks(path).pause("t", "s", description="d", reason="r")
    elif kind == "lessons":
        from reflexkit.insights._lessons import JsonlLessons
        from reflexkit.insights._models import Lesson
        from reflexkit.models import FailureType
        JsonlLessons(path).add(Lesson(id="l1", fingerprint="f", failure_type=FailureType.UNKNOWN,
            tool="pytest", suggestion="do it"))
    elif kind == "run-log":
        from reflexkit.events import Event, EventKind, RunLog
        with RunLog(path) as log:
            log.write(Event(kind=EventKind.RUN_STARTED))
        if log.lost:
            raise OSError(f"{log.lost} event(s) not written")
    elif kind == "lines":
        from reflexkit._lines import LineWriter
        LineWriter(path, keep_open=False).append(b'{"promptHash":"k"}')
    else:
        raise SystemExit(f"unknown kind {kind}")
except (StoreError, OSError) as err:
    print("error:", err)
else:
    print("ok")
"""

KINDS = ["findings", "paused", "lessons", "run-log", "lines"]


def _write(kind: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WRITE, kind, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.fixture
def write_here(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[str, Path], subprocess.CompletedProcess[str]]:
    """The same writer in this process, for a plant that can't block it (a link, a folder).

    What it prints is its stdout; what it logs (the run log says why on its logger) and
    prints on stderr is its stderr. A FIFO can block a writer: those keep the real process.
    """
    caplog.set_level(logging.WARNING)

    def write(kind: str, path: Path) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["-c", kind, str(path)])
        exec(compile(WRITE, "<writer>", "exec"), {"__name__": "__main__"})  # noqa: S102
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(sys.argv, 0, out, err + caplog.text)

    return write


@pytest.mark.parametrize("kind", KINDS)
def test_a_symlink_in_its_place_is_not_followed(
    tmp_path: Path, kind: str, write_here: Callable[[str, Path], subprocess.CompletedProcess[str]]
) -> None:
    """A link planted at the file's path: the target stays as it was, the writer says why."""
    target = tmp_path / "victim"
    target.write_bytes(b"precious\n")
    path = tmp_path / "state" / "file.jsonl"
    path.parent.mkdir()
    path.symlink_to(target)
    done = write_here(kind, path)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"precious\n"
    assert path.is_symlink()
    assert done.stdout.startswith("error:")
    assert "symbolic link" in done.stdout + done.stderr  # the run log says why on its logger


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_in_its_place_neither_hangs_nor_swallows(tmp_path: Path, kind: str) -> None:
    """A FIFO at the file's path: the writer refuses it (a record in a pipe is a record lost)."""
    path = tmp_path / "file.jsonl"
    os.mkfifo(path)
    done = _write(kind, path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error:")
    assert "not a regular file" in done.stdout + done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_folder_in_its_place_is_a_clear_error(
    tmp_path: Path, kind: str, write_here: Callable[[str, Path], subprocess.CompletedProcess[str]]
) -> None:
    """A folder at the file's path: an error that says so, no traceback."""
    path = tmp_path / "file.jsonl"
    path.mkdir()
    done = write_here(kind, path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error:")
    assert "Traceback" not in done.stderr


# --- the readers ----------------------------------------------------------------------------

READ = """
import sys
from pathlib import Path
from reflexkit.exceptions import StoreError

kind, path = sys.argv[1], Path(sys.argv[2])
try:
    if kind == "findings":
        from reflexkit.insights import FindingLog
        print(len(FindingLog(path).read()))
    elif kind == "paused":
        from reflexkit.insights import PausedSubtasks
        print(len(PausedSubtasks(path).entries()))
    elif kind == "lessons":
        from reflexkit.insights._lessons import JsonlLessons
        print(len(list(JsonlLessons(path))))
    elif kind == "runs":
        from reflexkit.insights import RunLogReader
        history = RunLogReader(path.parent).history()
        print(len(history.runs) + history.bad_lines)
    elif kind == "led":
        from reflexkit.events import led_to_success
        print(len(led_to_success(path.parent)))
except StoreError as err:
    print("error:", err)
"""


@pytest.mark.parametrize("kind", ["findings", "paused", "lessons", "runs", "led"])
def test_readers_never_block_on_a_fifo(tmp_path: Path, kind: str) -> None:
    """A FIFO where a JSONL file is read: a clear error or nothing read, within seconds."""
    path = tmp_path / "runs" / "x.jsonl"
    path.parent.mkdir()
    os.mkfifo(path)
    done = subprocess.run(
        [sys.executable, "-c", READ, kind, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip()
    assert out == "0" or (out.startswith("error:") and "not a regular file" in out)


@pytest.mark.parametrize("kind", ["findings", "paused", "lessons", "runs", "led"])
def test_readers_skip_garbage_and_keep_the_good_lines(tmp_path: Path, kind: str) -> None:
    """Binary junk, a line too long to be a record, a torn tail: the good lines are all read."""
    path = tmp_path / "runs" / "x.jsonl"
    path.parent.mkdir()
    good = {
        "findings": {
            "rule": "timeout_pattern",
            "severity": "warning",
            "subjectType": "subtask",
            "subjectId": "s",
            "detail": "d",
            "taskId": "t",
            "createdAt": "2026-11-23T10:00:00Z",
        },
        "paused": {
            "taskId": "t",
            "subtaskId": "s",
            "paused": True,
            "descriptionHash": "",
            "since": "2026-11-23T10:00:00Z",
            "reason": "r",
        },
        "lessons": {
            "id": "l1",
            "fingerprint": "f",
            "failureType": "unknown",
            "tool": "pytest",
            "suggestion": "do it",
            "createdAt": "2026-11-23T10:00:00Z",
        },
        "runs": {
            "kind": "run_started",
            "subtaskId": "",
            "attempt": 0,
            "at": "2026-11-23T10:00:00Z",
            "data": {"taskId": "t"},
        },
        "led": {
            "kind": "passed",
            "subtaskId": "s",
            "attempt": 2,
            "at": "2026-11-23T10:00:00Z",
            "data": {"ledToSuccess": "r1"},
        },
    }[kind]
    if kind == "lessons":  # only lines reflexkit signed are lessons (#29)
        good = signed(good, lessons_key())
    line = json.dumps(good).encode()
    junk = b"\x00\xff{not json\n" + b"x" * (17 * 1024 * 1024) + b"\n" + b"\x00" * 4096 + b"\n"
    path.write_bytes(line + b"\n" + junk + line + b"\n" + b'{"torn')
    done = subprocess.run(
        [sys.executable, "-c", READ, kind, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() != "0", done.stderr
    assert "Traceback" not in done.stderr


FIXTURE = """
import sys
from reflexkit.exceptions import GenerationError
from reflexkit.models import FailureContext
from reflexkit.reflection._fixture import FixtureGenerator

failure = FailureContext(task_id="t", subtask_id="s", attempt_number=1, command="pytest",
    exit_code=1, error_output="FAILED test_x.py::test_y - assert 1 == 2")
try:
    FixtureGenerator(sys.argv[1]).generate(failure)
except GenerationError as err:
    print("error:", err)
"""


def test_the_fixture_replayer_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    """A FIFO at the fixture file: a clear generation error within seconds, not a hang."""
    path = tmp_path / "reflections.jsonl"
    os.mkfifo(path)
    done = subprocess.run(
        [sys.executable, "-c", FIXTURE, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "not a regular file" in done.stdout
