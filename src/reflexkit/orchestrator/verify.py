"""Verification: run the project's own checks after an attempt, and describe a failure.

Each command runs in the project folder with a time limit; its output (stdout and stderr,
interleaved) is captured, long output keeps its head and its tail and says what was cut. A
command that can't be started is a failure with exit code 127, never an exception.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from reflexkit.models import FailureContext, FailureType
from reflexkit.reflection.redaction import Redactor, redact_failure
from reflexkit.tasks.config import VerificationConfig
from reflexkit.tasks.task import Subtask

__all__ = [
    "EXIT_NOT_FOUND",
    "ProcessResult",
    "VerificationResult",
    "Verifier",
    "cut_middle",
    "failure_context",
    "modified_files",
    "needs_shell",
    "run_process",
    "verifier_factory",
]

EXIT_NOT_FOUND = 127
"""The exit code of a command whose program can't be found (as in a shell)."""

_EXIT_NOT_EXECUTABLE = 126
_KILL_GRACE_S = 5.0


def cut_middle(text: str, max_chars: int) -> str:
    """Keep the head and the tail of *text*, saying how much of the middle was cut.

    Args:
        text: The output.
        max_chars: How many characters of the original to keep at most.

    Returns:
        *text* itself when short enough, else its head, a line
        ``[... N characters cut ...]`` and its tail.
    """
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[len(text) - tail :]}"


_SHELL_ANYWHERE = frozenset("|&;<>()`*?[]{}\n")


def needs_shell(command: str) -> bool:  # noqa: C901 -- a small quote-aware scanner
    """Tell whether a command line uses shell syntax (pipes, redirections, variables ...).

    Characters inside single quotes never count; inside double quotes only ``$`` and a
    backtick do. A leading ``NAME=value`` assignment and a ``~`` at the start of a word count.
    """
    if re.match(r"\s*[A-Za-z_][A-Za-z0-9_]*=", command):
        return True
    quote = ""
    previous = " "
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote == "'":
            if char == "'":
                quote = ""
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char in "$`":
                return True
        elif char in "'\"":
            quote = char
        elif char in _SHELL_ANYWHERE or char == "$" or (char == "~" and previous.isspace()):
            return True
        previous = char
    return False


@attrs.frozen(kw_only=True)
class ProcessResult:
    """What one process did.

    Attributes:
        exit_code: Its exit status; ``None`` when it was killed for taking too long;
            127 when the program could not be found, 126 when it could not be executed.
        output: stdout and stderr, interleaved, decoded as UTF-8 (bad bytes replaced).
        timed_out: It was killed at its time limit.
        duration_ms: Wall-clock time.
        error: Why it did not run or finish, one line; ``None`` when it exited on its own.
    """

    exit_code: int | None
    output: str
    timed_out: bool = False
    duration_ms: int = 0
    error: str | None = None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except OSError:
        proc.kill()


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run a program with a time limit, capturing its output; never raises for the program.

    The program runs in its own process group, so everything it started is killed at the
    time limit too.

    Args:
        argv: The program and its arguments (no shell).
        cwd: Where it runs.
        timeout_s: The time limit in seconds.
        stdin: Text handed over on its standard input (none: an empty stdin).
        env: Its environment; the current one by default.

    Returns:
        What it did; a program that can't be found has exit code 127 and an ``error``.
    """
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    program = argv[0] if argv else ""
    try:
        proc = subprocess.Popen(  # noqa: S603 -- running the user's own commands is the point
            list(argv),
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        message = f"command not found: {program} (is it installed and on PATH?)"
        if not cwd.is_dir():
            message = f"cannot run {program}: the folder {cwd} does not exist"
        return ProcessResult(
            exit_code=EXIT_NOT_FOUND, output=message, duration_ms=elapsed(), error=message
        )
    except (PermissionError, IsADirectoryError):
        message = f"cannot execute {program}: permission denied"
        return ProcessResult(
            exit_code=_EXIT_NOT_EXECUTABLE, output=message, duration_ms=elapsed(), error=message
        )
    except (OSError, ValueError) as err:
        message = f"cannot run {program}: {err}"
        return ProcessResult(
            exit_code=_EXIT_NOT_EXECUTABLE, output=message, duration_ms=elapsed(), error=message
        )
    data = stdin.encode() if stdin is not None else None
    try:
        out, _ = proc.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, _ = proc.communicate(timeout=_KILL_GRACE_S)
        except subprocess.TimeoutExpired:  # a grandchild escaped the group and holds the pipe
            proc.kill()
            out = b""
        message = f"timed out after {timeout_s:g} s and was killed"
        text = out.decode("utf-8", errors="replace")
        return ProcessResult(
            exit_code=None,
            output=f"{text}\n[{message}]" if text else f"[{message}]",
            timed_out=True,
            duration_ms=elapsed(),
            error=message,
        )
    return ProcessResult(
        exit_code=proc.returncode,
        output=out.decode("utf-8", errors="replace"),
        duration_ms=elapsed(),
    )


@attrs.frozen(kw_only=True)
class VerificationResult:
    """The outcome of verifying one attempt.

    Attributes:
        passed: Every command exited with 0.
        command: The command that failed, or the last one run when all passed (``""``
            when there was nothing to run).
        exit_code: Its exit status; ``None`` when it was killed at its time limit.
        output: Its output, head and tail kept when long.
        duration_ms: The time all commands took together.
        timed_out: The failing command was killed at its time limit.
    """

    passed: bool
    command: str
    exit_code: int | None
    output: str
    duration_ms: int
    timed_out: bool = False


class Verifier:
    """Runs verification commands in order and stops at the first failure.

    A command with shell syntax (pipes, ``&&``, redirections, variables) runs through
    ``bash -c``; any other is split with :func:`shlex.split` and run directly.

    Args:
        commands: The command lines; none means nothing to check, which passes.
        timeout_s: The time limit of each command.
        max_output_chars: How much of a command's output is kept (head and tail).
    """

    def __init__(
        self, commands: Sequence[str], *, timeout_s: float = 600, max_output_chars: int = 20_000
    ) -> None:
        self.commands = tuple(commands)
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars

    def run(self, workdir: Path) -> VerificationResult:
        """Run every command in *workdir*; never raises for a failing or missing command."""
        total = 0
        last = ""
        for command in self.commands:
            last = command
            result = self._run_one(command, workdir)
            total += result.duration_ms
            if result.exit_code != 0:
                return VerificationResult(
                    passed=False,
                    command=command,
                    exit_code=result.exit_code,
                    output=cut_middle(result.output, self.max_output_chars),
                    duration_ms=total,
                    timed_out=result.timed_out,
                )
        return VerificationResult(
            passed=True, command=last, exit_code=0 if last else None, output="", duration_ms=total
        )

    def _run_one(self, command: str, workdir: Path) -> ProcessResult:
        if needs_shell(command):
            argv = ["bash", "-c", command]
        else:
            try:
                argv = shlex.split(command)
            except ValueError as err:
                message = f"cannot parse the command {command!r}: {err}"
                return ProcessResult(exit_code=2, output=message, error=message)
        if not argv:
            message = "empty verification command"
            return ProcessResult(exit_code=2, output=message, error=message)
        return run_process(argv, cwd=workdir, timeout_s=self.timeout_s)


def failure_context(  # noqa: PLR0913 -- every field of the failure is an argument
    result: VerificationResult,
    *,
    task: str,
    subtask: str,
    attempt: int,
    session_id: str = "",
    files_modified: Sequence[str] = (),
    description: str = "",
    redactor: Redactor | None = None,
) -> FailureContext:
    """Turn a failed verification into a redacted :class:`~reflexkit.models.FailureContext`.

    Args:
        result: The failed verification.
        task: The task id.
        subtask: The subtask id.
        attempt: The attempt number (1-based).
        session_id: The run id.
        files_modified: What the attempt changed (see :func:`modified_files`).
        description: The subtask's description.
        redactor: Removes secrets; a fresh one reading ``os.environ`` by default.

    Returns:
        The failure, its output and command redacted; a timeout is typed as such, a
        missing program as a tool error, anything else left for the classifier.
    """
    failure_type: FailureType | None = None
    if result.timed_out:
        failure_type = FailureType.TIMEOUT
    elif result.exit_code == EXIT_NOT_FOUND and "command not found" in result.output:
        failure_type = FailureType.TOOL_ERROR
    failure = FailureContext(
        task_id=task,
        subtask_id=subtask,
        attempt_number=attempt,
        error_output=result.output,
        session_id=session_id,
        description=description,
        failure_type=failure_type,
        command=result.command,
        exit_code=result.exit_code,
        files_modified=tuple(files_modified),
        duration_ms=result.duration_ms,
    )
    clean, _counts = redact_failure(failure, redactor=redactor)
    return clean


def modified_files(workdir: Path) -> tuple[str, ...]:
    """Return the files changed, added or deleted in *workdir*, from ``git status``.

    Paths are relative to the repository root, sorted. ``()`` when *workdir* is not in a git
    repository or git is not installed.
    """
    here = workdir.resolve()
    if not any((folder / ".git").exists() for folder in (here, *here.parents)):
        return ()  # not a repository: don't pay for starting git on every failed attempt
    result = run_process(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
        cwd=workdir,
        timeout_s=30,
    )
    if result.exit_code != 0:
        return ()
    paths: list[str] = []
    entries = iter(result.output.split("\0"))
    for entry in entries:
        if len(entry) < 4:  # noqa: PLR2004 -- "XY path"
            continue
        status, path = entry[:2], entry[3:]
        paths.append(path)
        if "R" in status or "C" in status:
            next(entries, None)  # the original path of a rename or copy follows
    return tuple(sorted(set(paths)))


def verifier_factory(config: VerificationConfig) -> Callable[[Subtask], Verifier]:
    """Return the ``verifier_for`` of the loop: a subtask's own commands, else the project's."""

    def verifier_for(subtask: Subtask) -> Verifier:
        return Verifier(
            subtask.verify or config.commands,
            timeout_s=config.timeout_s,
            max_output_chars=config.max_output_chars,
        )

    return verifier_for
