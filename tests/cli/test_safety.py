"""`reflexkit run` and friends against signals, setup errors, injected ids, escape sequences.

The signal tests start the real command in a subprocess, send it a real SIGINT or SIGTERM
while a real agent (with a `setsid` grandchild) works, and look in /proc for leftovers.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import attrs
import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.memory import JsonlMemory
from reflexkit.testing.memory_contract import make_reflection

PY = shlex.quote(sys.executable)
MEMORY = Path(".reflexkit") / "memory" / "reflections.jsonl"


def alive(mark: str) -> list[int]:
    """The live (not zombie) processes whose command line holds *mark*."""
    found = []
    for name in os.listdir("/proc"):  # noqa: PTH208 -- names, not paths
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        if mark.encode() in cmdline and stat[stat.rfind(b")") + 2 :].split()[0] not in b"ZX":
            found.append(int(name))
    return found


def write_project(
    root: Path, subtasks: list[dict[str, object]], *, checks: bool = True, **task: object
) -> None:
    """A project with heuristic reflection, a verification command (or none) and a task."""
    (root / ".reflexkit").mkdir(exist_ok=True)
    config: dict[str, object] = {"reflexion": {"backend": "heuristic"}}
    if checks:
        config["verification"] = {"commands": [f"{PY} -c 'import sys; sys.exit(1)'"]}
    (root / ".reflexkit" / "project.json").write_text(json.dumps(config))
    (root / "task.json").write_text(
        json.dumps({"id": "calc", "description": "Fix it.", "subtasks": subtasks, **task})
    )


# An agent that starts a setsid grandchild, then works for a long time; both carry the marker.
AGENT = """import subprocess, sys, time
mark = sys.argv[1]
subprocess.Popen(
    ["setsid", sys.executable, "-c", "import time; time.sleep(300)", mark],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
time.sleep(300)
"""


# `reflexkit run`, with the interpreter descheduled for a while right after it started the
# agent (as a loaded machine does): a signal then lands between the start and the moment the
# runner has noted the program, so no bookkeeping of ours knows it yet.
LATE_START = """import subprocess, sys, time
start = subprocess.Popen.__init__
def late(self, args, *rest, **options):
    start(self, args, *rest, **options)
    if "agent.py" in " ".join(map(str, args)):
        time.sleep(60)
subprocess.Popen.__init__ = late
from reflexkit.cli import main
main()
"""


def interrupt_a_run(
    root: Path, signum: signal.Signals, ids: list[str], *, jobs: int = 1, late: bool = False
) -> None:
    """Signal a real `reflexkit run` once its agents and their `setsid` grandchildren are up.

    Then: exit 128+N, one line, ``interrupted`` and ``run_interrupted`` events, no lesson, and
    nothing of what the run started left alive.
    """
    mark = f"reflexkit-test-{uuid.uuid4().hex}"
    write_project(root, [{"id": i, "description": "Work."} for i in ids])
    (root / "agent.py").write_text(AGENT)
    agent = f"{PY} {root / 'agent.py'} {mark}"
    start = [sys.executable, "-c", LATE_START] if late else [sys.executable, "-m", "reflexkit"]
    proc = subprocess.Popen(
        [*start, "run", "task.json", "--agent-command", agent, "--jobs", str(jobs)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"},
    )
    try:
        deadline = time.monotonic() + 60
        # Every agent and its grandchild are up (the run's own argv holds the mark too).
        while len(grandchildren(mark)) < len(ids):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the agents never started"
            time.sleep(0.05)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    end = time.monotonic() + 10
    while alive(mark) and time.monotonic() < end:
        time.sleep(0.05)
    left = alive(mark)
    for pid in left:  # never leave a 300 s sleeper behind a failed test
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 128 + signum, err
    assert err.decode().splitlines() == [
        f"reflexkit: interrupted by {signum.name}: the run was stopped"
    ]
    assert "Traceback" not in out.decode()
    (log,) = (root / ".reflexkit" / "runs").glob("*.jsonl")
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    assert events[-1]["kind"] == "run_interrupted"
    assert events[-1]["data"]["signal"] == signum.name
    assert events[-1]["data"]["running"] == ",".join(f"{i}#1" for i in sorted(ids))
    interrupted = {e["subtaskId"] for e in events if e["kind"] == "interrupted"}
    assert interrupted == set(ids)
    assert left == []
    assert not (root / MEMORY).exists() or not list(JsonlMemory(root / MEMORY))


def grandchildren(mark: str) -> list[int]:
    """The agents' `setsid` grandchildren that are up: sleeping in a session of their own."""
    found = []
    for pid in alive(mark):
        with contextlib.suppress(OSError):
            if (
                os.getsid(pid) == pid
                and b"time.sleep(300)" in Path(f"/proc/{pid}/cmdline").read_bytes()
            ):
                found.append(pid)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize(
    ("signum", "jobs", "ids"),
    [(signal.SIGINT, 1, ["fix-add"]), (signal.SIGTERM, 2, ["a", "b"]), (signal.SIGHUP, 1, ["x"])],
    ids=["SIGINT", "SIGTERM-two-jobs", "SIGHUP"],
)
def test_a_signal_stops_the_run_cleanly(
    tmp_path: Path, signum: signal.Signals, jobs: int, ids: list[str]
) -> None:
    """Children killed, run_interrupted written, exit 128+N, one line, nothing left behind."""
    interrupt_a_run(tmp_path, signum, ids, jobs=jobs)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
def test_a_signal_between_an_agents_start_and_its_bookkeeping_leaves_nothing(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """The signal lands after the agent started, before the runner noted it: all still die.

    This is the CI flake of main e202911, made certain: the agent and the grandchild it
    detached with `setsid` outlived the run.
    """
    interrupt_a_run(tmp_path, signum, ["fix-add"], late=True)


# --- setup errors: exit 2, one line, no lesson ------------------------------------------------


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            "my-agent 'unterminated",
            (
                'reflexkit: --agent-command: cannot parse "my-agent \'unterminated": '
                "No closing quotation"
            ),
        ),
        (
            "no-such-agent-xyz {prompt_file}",
            (
                "reflexkit: setup: the agent command no-such-agent-xyz was not found "
                "(is it installed and on PATH?)"
            ),
        ),
    ],
    ids=["bad-quoting", "not-installed"],
)
def test_a_setup_error_is_exit_2_and_no_lesson(
    project_dir: Path, command: str, message: str
) -> None:
    """Bad quoting or a missing agent: exit 2, one line, nothing stored, nothing retried."""
    write_project(project_dir, [{"id": "fix-add", "description": "Work."}])
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", command])
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [message]
    assert "attempt 2" not in result.stdout
    assert not (project_dir / MEMORY).exists()


def test_no_verification_is_said_on_stderr(project_dir: Path) -> None:
    """A run where nothing checks the agent's work says so."""
    write_project(project_dir, [{"id": "fix-add", "description": "Work."}], checks=False)
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", f"{PY} -c pass"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        (
            "reflexkit: warning: no verification configured for fix-add: an attempt passes as "
            "soon as the agent finishes"
        )
    ]


# --- injected ids -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["a;touch PWNED", "../../x", "api/login", "-rf", "a\x1b]52;c;eA==\x07"]
)
def test_injected_ids_are_rejected_with_a_json_path(project_dir: Path, bad: str) -> None:
    """A hostile subtask id never runs: exit 2 naming $.subtasks[0].id, nothing written."""
    write_project(project_dir, [{"id": bad, "description": "Work."}])
    agent = "sh -c 'echo {prompt_file}'"
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("reflexkit: task.json: $.subtasks[0].id: expected an id of letters")
    assert "\x1b" not in line
    assert not (project_dir / "PWNED").exists()
    assert not (project_dir / ".reflexkit" / "runs").exists()


@pytest.mark.parametrize("args", [["../../x"], ["ok", "--task", "a;b"]], ids=["subtask", "task"])
@pytest.mark.usefixtures("project_dir")
def test_recent_rejects_bad_ids(args: list[str]) -> None:
    """`reflexkit recent` checks its ids the same way."""
    result = CliRunner().invoke(cli, ["recent", *args])
    assert result.exit_code == 2
    assert "expected an id of letters" in result.stderr


# --- scoping and escapes at the terminal ----------------------------------------------------

ESCAPES = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\x1bc\x9b2J"


def test_recent_is_scoped_by_task_and_stripped(project_dir: Path) -> None:
    """--task keeps other tasks' lessons out; escape sequences never reach the terminal."""
    store = JsonlMemory(project_dir / MEMORY)
    mine = make_reflection("docs", task_id="mine", analysis=f"MINE {ESCAPES} end")
    theirs = make_reflection("docs", task_id="theirs", analysis="THEIRS")
    store.append(attrs.evolve(mine, session_id="r1"))
    store.append(attrs.evolve(theirs, session_id="r2"))
    result = CliRunner().invoke(cli, ["recent", "docs", "--task", "mine"])
    assert result.exit_code == 0, result.stderr
    assert "MINE link end" in result.stdout
    assert "THEIRS" not in result.stdout
    assert not any(
        0x7F <= ord(c) <= 0x9F or (ord(c) < 0x20 and c not in "\n\t") for c in result.stdout
    )
    as_json = CliRunner().invoke(cli, ["recent", "docs", "--task", "mine", "--format", "json"])
    assert "\x1b" not in as_json.stdout  # JSON escapes it
    assert json.loads(as_json.stdout)[0]["taskId"] == "mine"


@pytest.mark.usefixtures("project_dir")
def test_reflect_output_is_stripped() -> None:
    """A failure whose output carries escape sequences prints none of them."""
    failure = {
        "taskId": "t",
        "subtaskId": "s",
        "attemptNumber": 1,
        "command": f"pytest {ESCAPES}",
        "errorOutput": f"FAILED tests/test_x.py::test_y - assert 1 == 2 {ESCAPES}\n",
    }
    result = CliRunner().invoke(
        cli, ["reflect", "--backend", "heuristic", "--no-save"], input=json.dumps(failure)
    )
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert "\x9b" not in result.stdout
    assert "\x07" not in result.stdout


def test_the_prompt_file_stays_under_reflexkit(project_dir: Path) -> None:
    """The agent's prompt file is under .reflexkit/prompts, and gone after the attempt."""
    write_project(project_dir, [{"id": "fix-add", "description": "Work."}], checks=False)
    code = "import pathlib, sys; pathlib.Path('where.txt').write_text(sys.argv[1])"
    agent = f"{PY} -c {shlex.quote(code)} {{prompt_file}}"
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", agent])
    assert result.exit_code == 0, result.stderr
    where = Path((project_dir / "where.txt").read_text())
    prompts = project_dir / ".reflexkit" / "prompts"
    assert where.parent.parent == prompts
    assert where.name == "prompt.md"
    assert prompts.is_dir()
    assert list(prompts.iterdir()) == []


def test_a_task_that_requires_verification_fails_fast_without_it(project_dir: Path) -> None:
    """A task with requireVerification and nothing to check: exit 2 before attempt 1."""
    write_project(
        project_dir,
        [{"id": "fix-add", "description": "Work."}],
        checks=False,
        requireVerification=True,
    )
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", f"{PY} -c pass"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        (
            "reflexkit: setup: task calc requires verification, but nothing checks fix-add "
            "(give them verify commands, or set verification.commands)"
        )
    ]
    assert "attempt 1" not in result.stdout


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="wait4 rusage of one child")
def test_a_gigabyte_of_verification_output_in_bounded_memory(tmp_path: Path) -> None:
    """A real run whose check prints 1 GiB stays far below it (was a 3.2 GB peak)."""
    (tmp_path / ".reflexkit").mkdir()
    flood = "head -c 1G /dev/zero | tr '\\0' x; echo; echo 'FAILED tests/test_x.py::test_y'; exit 1"
    (tmp_path / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"sh -c {shlex.quote(flood)}"]},
                "orchestrator": {"maxAttempts": 1},
            }
        )
    )
    (tmp_path / "task.json").write_text(
        json.dumps({"id": "calc", "subtasks": [{"id": "fix-add", "description": "Work."}]})
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "reflexkit", "run", "task.json", "--agent-command", f"{PY} -c pass"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "REFLEXKIT_CONFIG"},
    )
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 1, err
    # Typically ~40 MiB; once 378 MiB in a full-suite run: Linux keeps the peak of the
    # pytest worker that forked the child (its memory before exec) in the child's ru_maxrss.
    # Half of the output is the bound that proves it is never held whole.
    assert usage.ru_maxrss < 512 * 1024, f"peak RSS {usage.ru_maxrss} KiB"
    (reflection,) = list(JsonlMemory(tmp_path / MEMORY))
    assert "test_x.py::test_y" in reflection.analysis + " ".join(reflection.action_items)
