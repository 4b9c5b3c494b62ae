"""The one process runner: subagent commands and verification run through :func:`run_process`.

It waits for the process, not its pipe; keeps a bounded head and tail of the output; holds a
hard deadline; and kills the process group and every descendant seen when the program ends,
with a subreaper, ``PR_SET_PDEATHSIG`` and a lifeline watchdog so nothing outlives even a
``SIGKILL`` of the run (docs/orchestrator.md, "Nothing outlives the attempt").
:func:`kill_all` stops every program being run, those registered with :func:`adopted` too.
Linux parts (``/proc``, ``pidfd_open``, ``prctl``) degrade to polling elsewhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import attrs

from reflexkit._text import cut_marker, strip_control

__all__ = [
    "EXIT_NOT_EXECUTABLE",
    "EXIT_NOT_FOUND",
    "Adopted",
    "Command",
    "ProcessResult",
    "adopted",
    "become_subreaper",
    "kill_all",
    "lifeline_env",
    "run_process",
]

EXIT_NOT_FOUND = 127
"""The exit code of a command whose program can't be found (as in a shell)."""

EXIT_NOT_EXECUTABLE = 126
"""The exit code of a command that can't be executed (permissions, a folder)."""

DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
_READ_CHUNK = 1 << 20
_PIPE_SIZE = 1 << 20
_TRACK_EVERY_S = 0.2
_DRAIN_GRACE_S = 0.5
_REAP_GRACE_S = 2.0
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1

_lock = threading.Lock()
_active: dict[int, _Tree | Adopted] = {}  # root pid (or a negative key) -> what runs
_subreaper = False


@attrs.frozen(kw_only=True)
class ProcessResult:
    """What one process did.

    Attributes:
        exit_code: Its exit status; ``None`` when it was killed at its time limit or
            interrupted; 127 when the program could not be found, 126 when it could not be
            executed; ``-N`` when a signal N ended it.
        output: stdout and stderr, interleaved, decoded as UTF-8 (bad bytes replaced), control
            sequences stripped, the middle cut (one marker line) when longer than the cap.
        timed_out: It was killed at its time limit.
        duration_ms: Wall-clock time.
        error: Why it did not run or finish, one line; ``None`` when it exited on its own.
        output_bytes: How many bytes it printed in all (before the cut).
        leftovers_killed: Processes it left behind (background jobs, daemons) that were killed.
    """

    exit_code: int | None
    output: str
    timed_out: bool = False
    duration_ms: int = 0
    error: str | None = None
    output_bytes: int = 0
    leftovers_killed: int = 0


class _Capture:
    """Keeps the first and the last bytes of a stream, counting what went between."""

    def __init__(self, max_bytes: int) -> None:
        self.head_cap = max_bytes // 2
        self.tail_cap = max_bytes - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.tail_cap:  # the chunk alone fills the tail: no copy of the old
            self.tail = bytearray(data[len(data) - self.tail_cap :])
        elif data:
            self.tail += data
            excess = len(self.tail) - self.tail_cap
            if excess > 0:
                del self.tail[:excess]

    def text(self, *, raw: bool = False) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        cut = self.total - len(self.head) - len(self.tail)
        text = head + tail if cut <= 0 else f"{head}\n{cut_marker(cut, 'bytes')}\n{tail}"
        return text if raw else strip_control(text)


# --- process trees --------------------------------------------------------------------------


def _stat(pid: int, *, zombies: bool = False) -> tuple[int, int, int] | None:
    """(parent pid, process group, start time) of a live process, from /proc; None if gone.

    A zombie counts as gone unless *zombies*.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:  # noqa: PTH123 -- hot path, no Path
            raw = file.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    state = fields[0]
    if state == b"X" or (state == b"Z" and not zombies):
        return None
    return int(fields[1]), int(fields[2]), int(fields[19])


def _all_parents(*, zombies: bool = False) -> dict[int, tuple[int, int]]:
    """Every live process (and zombie, if asked): pid -> (parent pid, start time)."""
    parents: dict[int, tuple[int, int]] = {}
    try:
        names = os.listdir("/proc")  # noqa: PTH208 -- hot path: names, not Path objects
    except OSError:
        return parents
    for name in names:
        if name.isdigit():
            stat = _stat(int(name), zombies=zombies)
            if stat is not None:
                parents[int(name)] = (stat[0], stat[2])
    return parents


class _Tree:
    """A program and every descendant seen while it ran (pid -> start time, to skip reuse)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, int] = {}
        self.killed = 0

    def track(self) -> None:
        """Add the descendants that are alive now."""
        parents = _all_parents()
        known = {self.root, *self.seen}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, started) in parents.items():
                if ppid in known and pid not in known:
                    known.add(pid)
                    self.seen[pid] = started
                    grew = True

    def kill(self) -> None:
        """SIGKILL the process group and every tracked descendant still alive (and theirs)."""
        for _ in range(3):  # a descendant may fork while we kill: look again
            with contextlib.suppress(OSError):
                os.killpg(self.root, signal.SIGKILL)
            self.track()
            alive = False
            for pid, started in list(self.seen.items()):
                stat = _stat(pid)
                if stat is None or stat[2] != started:
                    continue
                alive = True
                self.killed += 1
                with contextlib.suppress(OSError):
                    if stat[1] != os.getpgrp():
                        os.killpg(stat[1], signal.SIGKILL)
                    os.kill(pid, signal.SIGKILL)
            if not alive:
                break

    def reap(self) -> None:
        """Collect the zombies of descendants that were re-parented to us (as a subreaper)."""
        _reap(list(self.seen))


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``).

    A program's grandchild that leaves its session (``setsid``) and whose parent exits is then
    re-parented to this process, not to init, so :func:`run_process` can find and kill it.
    Call it once, in the process that runs the loop (the ``reflexkit`` command does).

    Returns:
        ``True`` when this process is a subreaper now.
    """
    global _subreaper  # noqa: PLW0603 -- one flag per process, like the kernel's
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
    _subreaper = _subreaper or ok
    return ok


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _die_with_us() -> Callable[[], None] | None:
    """The child set-up that has the kernel kill the program when this process dies."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()
    kill = ctypes.c_ulong(signal.SIGKILL)
    option, zero = ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(0)

    def preexec() -> None:  # in the child, between fork and exec: nothing that allocates much
        prctl(option, kill, zero, zero, zero)
        if os.getppid() != parent:  # we died before the prctl: nobody would kill it
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


LIFELINE_VARIABLE = "REFLEXKIT_LIFELINE"
"""The environment variable every program :func:`run_process` starts carries (inherited by
all it starts in turn): the watchdog finds by it the descendants that left their group."""

# The watchdog: groups come in as "+pgid" and go as "-pgid"; at the end of its input (the
# process that runs programs is gone, killed or not) it kills the groups still there, and,
# when there were any (a program was running), every process whose environment carries this
# process's lifeline mark: the descendants that left the group (``setsid``, a daemon).
_WATCHDOG = """
import os, signal, sys
for name in ("SIGINT", "SIGHUP", "SIGTERM", "SIGPIPE"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
mark = sys.argv[1].encode()
groups = set()
for line in sys.stdin.buffer:
    try:
        pid = int(line[1:])
    except ValueError:
        continue
    (groups.add if line[:1] == b"+" else groups.discard)(pid)
for pid in groups:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
for _ in range(3 if groups else 0):
    found = 0
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/" + name + "/environ", "rb") as f:
                marked = mark in f.read().split(b"\\0")
        except OSError:
            continue
        if marked:
            found += 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    if not found:
        break
"""


class _Lifeline:
    """The write end of the pipe to this process's watchdog (see :data:`_WATCHDOG`)."""

    def __init__(self) -> None:
        self._fd = -1
        self._pid = -1  # the process that started the watchdog (a forked child starts its own)
        self.watchdog = -1  # the watchdog's pid
        self.mark = os.urandom(8).hex()  # LIFELINE_VARIABLE's value in what we start

    def watch(self, pgid: int) -> None:
        self._send(b"+%d\n" % pgid)

    def forget(self, pgid: int) -> None:
        if self._pid == os.getpid():
            self._send(b"-%d\n" % pgid)

    def _send(self, message: bytes) -> None:
        for _ in range(2):  # a watchdog that died (killed by hand) is started again
            try:
                if self._pid != os.getpid():
                    self._start()
                os.write(self._fd, message)  # a few bytes: one atomic pipe write
            except OSError:
                self._pid = -1
            else:
                return

    def _start(self) -> None:
        read, write = os.pipe()  # both close-on-exec: no program inherits the write end
        try:
            # Its own process group (a terminal's Ctrl-C is not for it), our session (the
            # orphan sweep spares it).
            watchdog = os.posix_spawn(
                sys.executable,
                [sys.executable, "-I", "-S", "-c", _WATCHDOG, self.entry],
                os.environ,
                file_actions=[(os.POSIX_SPAWN_DUP2, read, 0)],
                setpgroup=0,
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        if self._fd >= 0 and self._pid == os.getpid():
            os.close(self._fd)
        self._fd, self._pid, self.watchdog = write, os.getpid(), watchdog

    @property
    def entry(self) -> str:
        """The environment entry every program carries: ``REFLEXKIT_LIFELINE=<mark>``."""
        return f"{LIFELINE_VARIABLE}={self.mark}"


_lifeline = _Lifeline()


def lifeline_env() -> dict[str, str]:
    """The variable for the environment of a program other code starts (:func:`adopted`).

    Its descendants that leave its group (``setsid``) then die with this process too.
    """
    return {LIFELINE_VARIABLE: _lifeline.mark}


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _sweep_orphans(*, everything: bool = False) -> int:
    """Kill and reap orphans re-parented to us (subreaper only).

    An orphan is a child of ours outside our own session: every program :func:`run_process`
    starts gets a session of its own, so what it leaves behind is outside ours, while children
    other code started (a server) normally share our session and are spared; a program other
    code starts in a session of its own (Claude Code's CLI) is registered with :func:`adopted`
    while it runs, and no sweep happens while anything is registered, unless *everything*
    (:func:`kill_all`): then every child outside our session dies with its group, registered
    or not (a program an interrupt caught between its start and its registration), and only
    the unregistered ones are reaped here (a registered one's owner waits for it).
    Runs under the lock that also covers starting a program, so a program another thread is
    starting right now is never mistaken for an orphan; only the pids found are waited for.
    """
    if not _subreaper:
        return 0
    me = os.getpid()
    count = 0
    with _lock:
        if _active and not everything:  # another thread's program may still use its orphans
            return 0
        ours = os.getsid(0)
        owned = {tree.root for tree in map(_tree_of, _active.values()) if tree is not None}
        for _ in range(3):  # an orphan's own children become ours when it dies
            orphans = [
                pid
                for pid, (ppid, _) in _all_parents(zombies=True).items()
                if ppid == me and _session(pid) not in {ours, None}
            ]
            if not set(orphans) - owned:
                break
            for pid in orphans:
                stat = _stat(pid)
                if stat is None:
                    continue  # a zombie (killed with its group): only to be reaped
                with contextlib.suppress(OSError):
                    os.killpg(stat[1], signal.SIGKILL)  # its own group, never ours: other session
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    count += pid not in owned
            _reap([pid for pid in orphans if pid not in owned])
    return count


def _tree_of(what: _Tree | Adopted) -> _Tree | None:
    return what if isinstance(what, _Tree) else what._tree  # noqa: SLF001 -- this module's


def _reap(pids: list[int]) -> None:
    """Wait for these children to end, for a short grace at most (never hang on one)."""
    pending = set(pids)
    end = time.monotonic() + _REAP_GRACE_S
    while pending and time.monotonic() < end:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not (or no longer) our child
                pending.discard(pid)
                continue
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.005)


class Adopted:
    """A program that other code starts (an SDK's CLI), in a session of its own.

    While it is registered (see :func:`adopted`), :func:`kill_all` kills its process group
    and its descendants like those of :func:`run_process`, and the orphan sweep spares it
    (it is our child outside our session, as orphans are). :meth:`attach` names it once it
    is started; a :meth:`kill` that came first kills it as soon as it is attached.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tree: _Tree | None = None
        self.killed = False

    def attach(self, pid: int) -> None:
        """Name the started program: the leader of its own session and process group."""
        with self._lock:
            self._tree = _Tree(pid)
            kill = self.killed
        with _lock:
            _lifeline.watch(pid)  # killed with its group should this process die
        if kill:
            self._tree.kill()

    def kill(self) -> None:
        """SIGKILL the program's group and descendants now, or as soon as it is attached."""
        with self._lock:
            self.killed = True
            tree = self._tree
        if tree is not None:
            tree.kill()


_adopted_keys = iter(range(-1, -(2**62), -1))  # never a pid: run_process's keys are positive


@contextlib.contextmanager
def adopted() -> Iterator[Adopted]:
    """Register a program other code is about to start, for :func:`kill_all`.

    Enter before the program starts (so no orphan sweep can take it for an orphan) and call
    :meth:`Adopted.attach` with its pid once it runs. On leaving, whatever is left of it
    is killed and orphans it left behind are swept.
    """
    handle = Adopted()
    with _lock:
        key = next(_adopted_keys)
        _active[key] = handle
    try:
        yield handle
    finally:
        with _lock:
            _active.pop(key, None)
        if handle._tree is not None:  # noqa: SLF001 -- the class's own module
            handle._tree.kill()  # noqa: SLF001
            with _lock:
                _lifeline.forget(handle._tree.root)  # noqa: SLF001
        _sweep_orphans()


def kill_all() -> int:
    """Kill every program :func:`run_process` is running, in any thread, with its descendants.

    Programs registered with :func:`adopted` are killed too, and (as a subreaper) every child
    outside our session and what it started: orphans, and a program an interrupt caught
    between its start and its registration.

    Returns:
        How many programs were running.
    """
    with _lock:
        trees = list(_active.values())
    for tree in trees:
        tree.kill()
    _sweep_orphans(everything=True)
    return len(trees)


# --- running one program --------------------------------------------------------------------


def _environment(env: Mapping[str, str] | None, cwd: Path) -> dict[str, str]:
    """A program's environment: *env* (ours by default), with two things made right.

    ``PWD`` names the folder it runs in: programs that trust ``$PWD`` over ``getcwd()``
    (opencode, many shell scripts) would otherwise work in reflexkit's folder. And no Python
    it runs writes bytecode (``PYTHONDONTWRITEBYTECODE``, unless set): Python trusts a
    ``.pyc`` whose source has the same size and modification second, so an agent's fix
    written in the same second as the check that compiled the old code, the same length
    (``a * b`` to ``a + b``), was checked as the old code, and the attempt failed.
    """
    base = os.environ if env is None else env
    return {
        "PYTHONDONTWRITEBYTECODE": "1",
        **base,
        "PWD": str(cwd.absolute()),
        **lifeline_env(),  # what it starts, even in a session of its own, dies with us
    }


def _start(command: Command) -> subprocess.Popen[bytes] | ProcessResult:
    argv, cwd = command.argv, command.cwd
    program = argv[0] if argv else ""
    try:
        return subprocess.Popen(  # noqa: S603 -- running the user's own commands is the point
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL if command.stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_environment(command.env, cwd),
            start_new_session=True,
            preexec_fn=_die_with_us(),  # noqa: PLW1509 -- a prctl and a getppid, no locks
        )
    except FileNotFoundError:
        message = f"command not found: {program} (is it installed and on PATH?)"
        if not cwd.is_dir():
            message = f"cannot run {program}: the folder {cwd} does not exist"
        return ProcessResult(exit_code=EXIT_NOT_FOUND, output=message, error=message)
    except (PermissionError, IsADirectoryError):
        message = f"cannot execute {program}: permission denied"
        return ProcessResult(exit_code=EXIT_NOT_EXECUTABLE, output=message, error=message)
    except (OSError, ValueError) as err:
        message = f"cannot run {program}: {err}"
        return ProcessResult(exit_code=EXIT_NOT_EXECUTABLE, output=message, error=message)


@attrs.frozen
class Command:
    """A program to run: its arguments, where, its environment and what it reads."""

    argv: Sequence[str]
    cwd: Path = attrs.field(kw_only=True)
    env: Mapping[str, str] | None = attrs.field(default=None, kw_only=True)  # the current one
    stdin: str | None = attrs.field(default=None, kw_only=True)  # none: an empty stdin


def run_process(
    command: Command,
    /,
    *,
    timeout_s: float,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    raw: bool = False,
) -> ProcessResult:
    """Run a program with a hard time limit, capturing bounded output; never raises for it.

    The program runs in its own session (no shell: the arguments are passed as they are).
    When it ends, its process group and every descendant seen are killed (see the module
    docstring).

    Args:
        command: The program, its folder, environment and standard input.
        timeout_s: The time limit in seconds: a hard deadline.
        max_output_bytes: How many bytes of output are kept (head and tail halves).
        raw: Keep control characters (for machine-readable output such as ``git -z``).

    Returns:
        What it did; a program that can't be found has exit code 127 and an ``error``.

    Raises:
        BaseException: An interrupt raised while waiting goes on, after the program and its
            descendants were killed.
    """
    started = time.monotonic()
    capture = _Capture(max_output_bytes)
    timed_out, leftovers = False, 0
    tree: _Tree | None = None
    try:  # an interrupt from here on still ends what started (kill_all: even if unregistered)
        with _lock:  # started and registered at once: an orphan sweep never sees it unowned
            proc = _start(command)
            if isinstance(proc, ProcessResult):
                return attrs.evolve(proc, duration_ms=int((time.monotonic() - started) * 1000))
            tree = _active[proc.pid] = _Tree(proc.pid)
            _lifeline.watch(proc.pid)
        timed_out = _wait(proc, tree, capture, command.stdin, deadline=started + timeout_s)
    finally:
        if tree is not None and isinstance(proc, subprocess.Popen):  # it started
            leftovers = _end(proc, tree, capture)
    elapsed = int((time.monotonic() - started) * 1000)
    if timed_out:
        message = f"timed out after {timeout_s:g} s and was killed"
        text = capture.text(raw=raw)
        return ProcessResult(
            exit_code=None,
            output=f"{text}\n[{message}]" if text else f"[{message}]",
            timed_out=True,
            duration_ms=elapsed,
            error=message,
            output_bytes=capture.total,
            leftovers_killed=leftovers,
        )
    return ProcessResult(
        exit_code=proc.returncode,
        output=capture.text(raw=raw),
        duration_ms=elapsed,
        output_bytes=capture.total,
        leftovers_killed=leftovers,
    )


def _end(proc: subprocess.Popen[bytes], tree: _Tree, capture: _Capture) -> int:
    """Kill the program's tree, wait for it, unregister it, sweep its orphans, drain its pipe.

    Returns how many processes it left behind were killed.
    """
    tree.kill()
    with contextlib.suppress(ChildProcessError):
        proc.wait()
    with _lock:
        _active.pop(proc.pid, None)
        _lifeline.forget(proc.pid)
    # Orphans are swept before the pipe is drained: a daemon that holds the pipe would
    # otherwise have the drain's grace to write into the project after the attempt.
    swept = _sweep_orphans()
    _drain(proc, capture)
    tree.reap()
    return tree.killed + swept + _sweep_orphans()


def _wait(
    proc: subprocess.Popen[bytes],
    tree: _Tree,
    capture: _Capture,
    stdin: str | None,
    *,
    deadline: float,
) -> bool:
    """Read output and feed stdin until the process exits; ``True`` when the deadline hit."""
    pending = memoryview(stdin.encode()) if stdin is not None else memoryview(b"")
    with selectors.DefaultSelector() as selector:
        pipes = _Pipes(proc=proc, selector=selector, capture=capture, pending=pending)
        pidfd = pipes.register()
        try:
            return _pump(pipes, tree, deadline=deadline, polling=pidfd < 0)
        finally:
            if pidfd >= 0:
                os.close(pidfd)
            _close_stdin(proc)


@attrs.define(kw_only=True)
class _Pipes:
    """A process's pipes in one selector: its output read into *capture*, *pending* fed in."""

    proc: subprocess.Popen[bytes]
    selector: selectors.BaseSelector
    capture: _Capture
    pending: memoryview

    def register(self) -> int:
        """Watch the output, the process's exit (a pidfd, where there is one) and stdin.

        Returns the pidfd to close, or -1 when there is none (then the caller polls).
        """
        proc, selector = self.proc, self.selector
        assert proc.stdout is not None  # noqa: S101 -- Popen was given stdout=PIPE
        out = proc.stdout.fileno()
        os.set_blocking(out, False)
        with contextlib.suppress(OSError, AttributeError):  # fewer wake-ups on a flood
            fcntl.fcntl(out, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        selector.register(out, selectors.EVENT_READ, "out")
        pidfd = -1
        with contextlib.suppress(OSError, AttributeError):
            pidfd = os.pidfd_open(proc.pid)
            selector.register(pidfd, selectors.EVENT_READ, "exit")
        if proc.stdin is not None:
            if self.pending:
                os.set_blocking(proc.stdin.fileno(), False)
                selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "in")
            else:
                proc.stdin.close()
        return pidfd

    def serve(self, key: selectors.SelectorKey) -> None:
        """Read the output that is there, or write what stdin takes."""
        if key.data == "out":
            if not _read(key.fd, self.capture):
                self.selector.unregister(key.fd)
        elif key.data == "in":
            self.pending = _write(self.proc, self.pending)
            if not self.pending:
                self.selector.unregister(key.fd)
                _close_stdin(self.proc)


def _pump(pipes: _Pipes, tree: _Tree, *, deadline: float, polling: bool) -> bool:
    """Serve the pipes until the process exits; ``True`` when the deadline hit first."""
    next_track = time.monotonic() + _TRACK_EVERY_S
    while pipes.proc.poll() is None:
        now = time.monotonic()
        if now >= deadline:
            return True
        if now >= next_track:
            tree.track()
            next_track = now + _TRACK_EVERY_S
        wait = min(deadline, next_track) - now
        if polling:
            wait = min(wait, 0.02)
        for key, _ in pipes.selector.select(timeout=max(wait, 0)):
            pipes.serve(key)
    return False


def _read(fd: int, capture: _Capture) -> bool:
    """Read what is there; ``False`` at end of file."""
    try:
        data = os.read(fd, _READ_CHUNK)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if not data:
        return False
    capture.feed(data)
    return True


def _write(proc: subprocess.Popen[bytes], pending: memoryview) -> memoryview:
    assert proc.stdin is not None  # noqa: S101 -- only registered with a stdin pipe
    try:
        written = os.write(proc.stdin.fileno(), pending[:65536])
    except BlockingIOError:
        return pending
    except OSError as err:  # the program closed its stdin: it won't read the rest
        if err.errno in {errno.EPIPE, errno.EINVAL, errno.EBADF}:
            return memoryview(b"")
        raise
    return pending[written:]


def _close_stdin(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.close()


def _drain(proc: subprocess.Popen[bytes], capture: _Capture) -> None:
    """Read what is left in the pipe, for a short grace at most, then close it."""
    if proc.stdout is None or proc.stdout.closed:
        return
    fd = proc.stdout.fileno()
    end = time.monotonic() + _DRAIN_GRACE_S
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (left := end - time.monotonic()) > 0:
            if not selector.select(timeout=left):
                break  # nothing more within the grace: something escaped and holds the pipe
            if not _read(fd, capture):
                break
    proc.stdout.close()
