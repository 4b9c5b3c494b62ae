"""The one process runner with real processes.

Daemons, setsid grandchildren, held pipes, a gigabyte of output, hard deadlines.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from reflexkit.orchestrator._process import Command, adopted, kill_all, run_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")


def marker() -> str:
    """A unique word to find a test's processes by their command line."""
    return f"reflexkit-test-{uuid.uuid4().hex}"


def sleeper(mark: str, seconds: int = 300) -> str:
    """A shell word list starting a process that sleeps and carries *mark* in its argv."""
    return f"{sys.executable} -c 'import time; time.sleep({seconds})' {mark}"


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
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        if mark.encode() in cmdline and state not in {b"Z", b"X"}:
            found.append(int(name))
    return found


def gone(mark: str, within_s: float = 5) -> bool:
    """Wait until no process carries *mark* (a SIGKILL takes a moment to land)."""
    end = time.monotonic() + within_s
    while alive(mark):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_background_job_is_killed_when_the_program_ends(tmp_path: Path) -> None:
    """A daemon started with `&` does not outlive the attempt."""
    mark = marker()
    result = run_process(
        Command(["sh", "-c", f"{sleeper(mark)} > /dev/null 2>&1 & echo started"], cwd=tmp_path),
        timeout_s=30,
    )
    assert result.exit_code == 0
    assert result.output == "started\n"
    assert gone(mark)


def test_background_job_holding_stdout_does_not_make_it_time_out(tmp_path: Path) -> None:
    """The runner waits for the program, not for the pipe a background job still holds."""
    mark = marker()
    result = run_process(
        Command(["sh", "-c", f"{sleeper(mark)} & echo done"], cwd=tmp_path), timeout_s=20
    )
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.output == "done\n"
    assert result.duration_ms < 20_000
    assert gone(mark)


def test_setsid_grandchild_is_killed_at_the_time_limit(tmp_path: Path) -> None:
    """A grandchild in a session of its own is killed with the program at its time limit."""
    mark = marker()
    result = run_process(
        Command(["sh", "-c", f"setsid {sleeper(mark)} & wait"], cwd=tmp_path), timeout_s=1
    )
    assert result.timed_out
    assert result.exit_code is None
    assert result.duration_ms < 20_000  # a hard deadline, not the sleeper's 300 s
    assert result.leftovers_killed >= 1
    assert gone(mark)


def test_setsid_grandchild_of_a_finished_program_is_killed(tmp_path: Path) -> None:
    """A setsid grandchild seen while its parent ran is killed when the program ends."""
    mark = marker()
    result = run_process(
        Command(
            ["sh", "-c", f"setsid {sleeper(mark)} > /dev/null 2>&1 & sleep 1; echo bye"],
            cwd=tmp_path,
        ),
        timeout_s=30,
    )
    assert result.exit_code == 0
    assert gone(mark)


_PEAK = """
import sys
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
sys.stderr.write(f"VmHWM {peak}\\n")
"""


def run_helper(code: str, tmp_path: Path) -> tuple[str, int]:
    """Run *code* in a fresh Python process; return its stdout and its peak RSS in KiB.

    The peak is the child's own VmHWM, read by the child at its end: ``ru_maxrss`` from
    ``os.wait4`` would also hold the peak of the pytest worker that forked it (Linux keeps
    it through exec), which made these bounds flaky in a loaded full-suite run.
    """
    script = tmp_path / "helper.py"
    script.write_text(textwrap.dedent(code) + _PEAK, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    peak = done.stderr.decode().rsplit("VmHWM ", 1)[1]
    return done.stdout.decode(), int(peak)


def test_escaped_setsid_orphan_is_reaped_by_the_subreaper(tmp_path: Path) -> None:
    """A grandchild that leaves the session at once (`setsid -f`) comes back to a subreaper."""
    mark = marker()
    out, _ = run_helper(
        f"""
        import os
        from pathlib import Path
        from reflexkit.orchestrator._process import (
            Command, _lifeline, become_subreaper, run_process
        )
        assert become_subreaper()
        result = run_process(
            Command(
                ["sh", "-c", "setsid -f {sleeper(mark)} > /dev/null 2>&1; echo forked"],
                cwd=Path.cwd(),
            ),
            timeout_s=30,
        )
        me = str(os.getpid())
        children = 0  # zombies too: every orphan must have been reaped
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            children += fields[1].decode() == me and stat.parent.name != str(_lifeline.watchdog)
        print(result.exit_code, children)
        """,
        tmp_path,
    )
    exit_code, children = out.split()
    assert exit_code == "0"
    assert children == "0"
    assert gone(mark)


@pytest.mark.slow
def test_a_gigabyte_of_output_in_bounded_memory(tmp_path: Path) -> None:
    """1 GiB of output is counted, cut to head and tail, and never held whole."""
    out, peak_kib = run_helper(
        """
        from pathlib import Path
        from reflexkit.orchestrator._process import Command, run_process
        result = run_process(
            Command(
                ["sh", "-c", "head -c 1G /dev/zero | tr '\\\\0' x; echo; echo END"],
                cwd=Path.cwd(),
            ),
            timeout_s=120,
            max_output_bytes=20_000,
        )
        print(result.exit_code, result.output_bytes, len(result.output))
        print(result.output.splitlines()[1])
        print(result.output.splitlines()[-1])
        """,
        tmp_path,
    )
    first, marker_line, last = out.splitlines()
    exit_code, total, kept = first.split()
    assert exit_code == "0"
    assert int(total) == (1 << 30) + 5
    assert int(kept) < 21_000
    assert marker_line == f"[... {(1 << 30) + 5 - 20_000} bytes cut ...]"
    assert last == "END"
    assert peak_kib < 200 * 1024, f"peak RSS {peak_kib} KiB"


def test_large_prompt_to_a_program_that_never_reads_it(tmp_path: Path) -> None:
    """A big stdin the program ignores neither blocks the runner nor fails the run."""
    result = run_process(
        Command(["sh", "-c", "echo ignoring stdin"], cwd=tmp_path, stdin="x" * (4 << 20)),
        timeout_s=20,
    )
    assert result.exit_code == 0
    assert result.output == "ignoring stdin\n"


def test_stdin_is_handed_over_whole(tmp_path: Path) -> None:
    """A program reading its stdin gets every byte, even past the pipe's buffer."""
    prompt = "line\n" * 100_000
    result = run_process(Command(["wc", "-c"], cwd=tmp_path, stdin=prompt), timeout_s=20)
    assert result.output.strip() == str(len(prompt))


def test_control_sequences_are_stripped_from_output(tmp_path: Path) -> None:
    """A clipboard write in the output never reaches a terminal or a record."""
    result = run_process(
        Command(["printf", r"ok\033]52;c;cm0gLXJm\007\033c done\n"], cwd=tmp_path), timeout_s=10
    )
    assert result.output == "ok done\n"


def test_signal_death_is_a_negative_exit_code(tmp_path: Path) -> None:
    """A program killed by a signal reports -N, and no time-out."""
    result = run_process(Command(["sh", "-c", "kill -9 $$"], cwd=tmp_path), timeout_s=10)
    assert result.exit_code == -9
    assert not result.timed_out


def _own_session(*argv: str) -> subprocess.Popen[bytes]:
    """Start a program in a session of its own, as an SDK starts Claude Code's CLI."""
    return subprocess.Popen(list(argv), start_new_session=True)


def test_kill_all_kills_an_adopted_program_and_its_children() -> None:
    """A program other code started, registered with adopted(), dies with kill_all (#20)."""
    mark = marker()
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {mark!r}])\n"
        "time.sleep(300)\n"
    )
    proc = _own_session(sys.executable, "-c", code, mark)
    try:
        with adopted() as handle:
            handle.attach(proc.pid)
            end = time.monotonic() + 10
            while len(alive(mark)) < 2 and time.monotonic() < end:
                time.sleep(0.02)
            assert kill_all() >= 1
            assert proc.wait(timeout=10) == -9
        assert gone(mark)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_kill_before_attach_kills_at_attach() -> None:
    """An interrupt between the start and attach() is not lost: attach() kills at once."""
    proc = _own_session(sys.executable, "-c", "import time; time.sleep(300)")
    try:
        with adopted() as handle:
            kill_all()  # the program started, but nobody named it yet
            handle.attach(proc.pid)
            assert proc.wait(timeout=10) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


AGENT = """import subprocess, sys, time
mark = sys.argv[1]
# A child of its own (a tool the agent started), in the agent's group, then the agent sleeps.
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", mark + "-child"])
open("agent-started", "w").close()
time.sleep(300)
"""
ESCAPING_AGENT = AGENT.replace('"import time;', '"import os, time; os.setsid();')
"""The agent's child leaves its process group and session (``setsid``): a daemon."""


@pytest.mark.parametrize(("via_shell", "escaping"), [(False, False), (True, False), (False, True)])
def test_a_sigkilled_run_leaves_no_agent_running(
    tmp_path: Path, via_shell: bool, escaping: bool
) -> None:
    """SIGKILL `reflexkit run` mid-attempt: the agent and what it started die with it.

    Also a child that left the agent's group with ``setsid``: the group kill can't reach
    it, and it outlived a SIGKILL of the run before.
    """
    mark = marker()
    (tmp_path / "agent.py").write_text(ESCAPING_AGENT if escaping else AGENT)
    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text(
        '{"reflexion": {"backend": "heuristic"}, "verification": {"commands": ["true"]}}'
    )
    (tmp_path / "task.json").write_text(
        '{"id": "t", "description": "d", "subtasks": [{"id": "s", "description": "d"}]}'
    )
    agent = f"{sys.executable} agent.py {mark} {{prompt_file}}"
    if via_shell:  # a shell that stays the agent's parent: the agent is a grandchild
        agent = f"sh -c '{sys.executable} agent.py {mark} x; true' {{prompt_file}}"
    run = subprocess.Popen(
        [
            *(sys.executable, "-m", "reflexkit", "run", "task.json", "--subagent", "command"),
            "--agent-command",
            agent,
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 60
        while not (tmp_path / "agent-started").exists() or len(set(alive(mark)) - {run.pid}) < (
            3 if via_shell else 2
        ):
            assert run.poll() is None, "the run ended before its agent started"
            assert time.monotonic() < end, "the agent never started"
            time.sleep(0.05)
        # the agent and its child (and the shell between the run and the agent)
        assert len(set(alive(mark)) - {run.pid}) == (3 if via_shell else 2)
        run.kill()  # SIGKILL: no handler, no finally, no atexit in the run
        run.wait(timeout=30)
        assert gone(mark, within_s=10), alive(mark)
    finally:
        if run.poll() is None:
            run.kill()
        for pid in alive(mark):
            os.kill(pid, 9)


_TRUSTS_ITS_FOLDER_VARIABLE = """import os, pathlib, sys
here = os.environ["PWD"]
pathlib.Path(here, "here.txt").write_text("hi")
sys.stdout.write(here)
"""


@pytest.mark.parametrize("given", [None, {"PATH": os.environ["PATH"], "PWD": "/elsewhere"}])
def test_pwd_names_the_folder_the_program_runs_in(
    tmp_path: Path, given: dict[str, str] | None
) -> None:
    """A program that trusts $PWD (opencode did) works in its folder, not in ours."""
    result = run_process(
        Command([sys.executable, "-c", _TRUSTS_ITS_FOLDER_VARIABLE], cwd=tmp_path, env=given),
        timeout_s=30,
    )
    assert result.exit_code == 0, result.output
    assert result.output == str(tmp_path)
    assert (tmp_path / "here.txt").is_file()


def test_a_same_size_edit_in_the_same_second_is_seen_by_the_next_check(tmp_path: Path) -> None:
    """No stale bytecode: `a * b` rewritten to `a + b` at once is what the next run imports."""
    check = [sys.executable, "-c", "import calc; print(calc.add(2, 3))"]
    seen = []
    for body in ("a * b", "a + b", "a - b"):
        source = tmp_path / "calc.py"
        source.write_text(f"def add(a, b):\n    return {body}\n")
        os.utime(source, ns=(10**18, 10**18))  # the same second each time, as a fast agent's
        seen.append(run_process(Command(check, cwd=tmp_path), timeout_s=30).output.strip())
    assert seen == ["6", "5", "-1"]
