"""Verification: run the project's own checks after an attempt, and describe a failure.

Each command runs in the project folder through the one process runner
(:mod:`reflexkit.orchestrator._process`): a hard time limit, its output (stdout and stderr,
interleaved) captured through a byte-capped head+tail buffer with one cut-marker line for the
middle, everything it started killed when it ends. A command that can't be started is a
failure with exit code 127, never an exception.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from reflexkit._git import git_env
from reflexkit.models import FailureContext, FailureType
from reflexkit.orchestrator._process import EXIT_NOT_FOUND, Command, ProcessResult, run_process
from reflexkit.readers._verdicts import verdict
from reflexkit.redaction import Redactor, redact_failure
from reflexkit.reports._risk import DEFAULT_RULES, on_surface
from reflexkit.tasks._config import ReviewSurface, VerificationConfig
from reflexkit.tasks._task import Subtask

__all__ = [
    "AttemptId",
    "CheckInputs",
    "VerificationResult",
    "Verifier",
    "cannot_run",
    "failure_context",
    "modified_files",
    "needs_shell",
    "verifier_factory",
]


_ASSIGNMENT = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_WORDS = re.compile(
    r"""\\.                              # an escaped character is literal
    | '[^']*'?                            # so is all in single quotes
    | "(?:\\.|[^"\\$`])*"?                # double quotes, up to their end, a $ or a backtick
    | (?P<shell>[|&;<>()`*?\[\]{}\n$] | (?<!\S)~)  # shell syntax; a ~ that starts a word
    | .""",
    re.DOTALL | re.VERBOSE,
)


def needs_shell(command: str) -> bool:
    """Tell whether a command line uses shell syntax (pipes, redirections, variables ...).

    Characters inside single quotes never count; inside double quotes only ``$`` and a
    backtick do. A leading ``NAME=value`` assignment and a ``~`` at the start of a word count.
    """
    words = _SHELL_WORDS.finditer(command)
    return bool(_ASSIGNMENT.match(command)) or any(w.lastgroup == "shell" for w in words)


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
        reports: The report files (absolute paths) written while the checks ran.
        cannot_run: The failing check never started, and not for anything the attempt
            could change: the line of its output that shows it (its program, interpreter,
            runner module, package manager or service is missing, or may not be run).
            ``None`` when it ran, or when what is missing is a file of the project.
    """

    passed: bool
    command: str
    exit_code: int | None
    output: str
    duration_ms: int
    timed_out: bool = False
    reports: tuple[str, ...] = ()
    cannot_run: str | None = None


class Verifier:
    """Runs verification commands in order and stops at the first failure.

    A command with shell syntax (pipes, ``&&``, redirections, variables) runs through
    ``bash -c``; any other is split with :func:`shlex.split` and run directly.

    Args:
        commands: The command lines; none means nothing to check, which passes.
        timeout_s: The time limit of each command.
        max_output_chars: How many bytes of a command's output are kept (head and tail
            halves, captured while reading; the rest is never held in memory).
        reports: Report files the commands write, relative to the workdir; a failure names
            those written while its checks ran (an older one is another attempt's).
    """

    def __init__(
        self,
        commands: Sequence[str],
        *,
        timeout_s: float = 600,
        max_output_chars: int = 20_000,
        reports: Sequence[str] = (),
    ) -> None:
        self.commands = tuple(commands)
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        self.reports = tuple(reports)

    def run(self, workdir: Path, *, budget_s: float | None = None) -> VerificationResult:
        """Run every command in *workdir*; never raises for a failing or missing command.

        Args:
            workdir: Where the commands run.
            budget_s: The most time all commands may take together (what is left of the
                run's time budget); each command gets the smaller of its own limit and what
                is left. A command that would start with nothing left fails as timed out.
        """
        started = time.monotonic()
        before = {name: _stamp(workdir / name) for name in self.reports}
        total = 0
        last = ""
        for command in self.commands:
            last = command
            limit = self.timeout_s
            if budget_s is not None:
                left = budget_s - (time.monotonic() - started)
                if left <= 0:
                    message = f"the run's time budget ran out before `{command}`"
                    return VerificationResult(
                        passed=False,
                        command=command,
                        exit_code=None,
                        output=message,
                        duration_ms=total,
                        timed_out=True,
                    )
                limit = min(limit, left)
            result = self._run_one(command, workdir, limit)
            total += result.duration_ms
            if result.exit_code != 0:
                return VerificationResult(
                    passed=False,
                    command=command,
                    exit_code=result.exit_code,
                    output=result.output,
                    duration_ms=total,
                    timed_out=result.timed_out,
                    reports=_written(self.reports, workdir, before),
                    cannot_run=None if result.timed_out else cannot_run(result.output, workdir),
                )
        return VerificationResult(
            passed=True, command=last, exit_code=0 if last else None, output="", duration_ms=total
        )

    def _run_one(self, command: str, workdir: Path, timeout_s: float) -> ProcessResult:
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
        return run_process(
            Command(argv, cwd=workdir), timeout_s=timeout_s, max_output_bytes=self.max_output_chars
        )


_ENVIRONMENT_FOLDERS = frozenset(
    {".venv", "venv", ".tox", ".nox", "node_modules", "vendor", ".bundle", "_build", "target"}
)
"""Folders of a project that hold its environment (installed packages), not its files."""

_OWN_FILE = re.compile(
    r"(?:can't open file '|^cannot execute )(?P<opened>[^':]+)"
    r"|(?P<named>[^\s:]+): (?:No such file or directory|Permission denied)\s*$"
)
"""The file a check could not open or run, in the shapes Python and the shells print."""


def cannot_run(output: str, workdir: Path) -> str | None:
    """The line that shows a failed check never started for its environment's sake.

    The output's own verdict decides (:func:`reflexkit.readers._verdicts.verdict`): a
    command, interpreter, runner module, package manager or service that is missing, or a
    program that may not be run. A check that could not open or run a file of the project
    itself (``python check.py``, ``./run.sh``) is not counted: the attempt may be the one to
    write it, so the attempt's lesson says so and the next attempt can.

    Args:
        output: The failing check's output.
        workdir: The project folder the check ran in.

    Returns:
        The line, or ``None`` when the check ran (or what is missing is the project's).
    """
    proof = verdict(output)
    if proof is None or not proof.setup:
        return None
    own = _OWN_FILE.search(proof.line)
    name = (own["opened"] or own["named"]).strip("'\"`") if own is not None else ""
    if "/" in name or re.search(r"\.[A-Za-z]\w*$", name):
        relative = _inside(
            Path(name) if name.startswith("/") else workdir / name, workdir.resolve()
        )
        if relative is not None and not _ENVIRONMENT_FOLDERS.intersection(relative.split("/")):
            return None
    return proof.line


_Stamp = tuple[int, int, int, int] | None  # inode, size, mtime, ctime; None: absent

_COLLECTION_CONFIGS = re.compile(
    r"(?:^|/)(?:conftest\.py|pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|noxfile\.py"
    r"|package\.json|Makefile|(?:jest|vitest|karma|playwright)\.config\.[cm]?[jt]s"
    r"|\.mocharc(?:\.[a-z]+)?)$"
)
"""Files that decide what a test runner collects or how a check runs."""


def _written(
    reports: Sequence[str], workdir: Path, before: Mapping[str, _Stamp]
) -> tuple[str, ...]:
    """The report files the checks wrote, as absolute paths: absent before, or changed.

    Compared by the file's own state (inode, size, mtime, ctime) before and after, never
    with this process's clock: a file system's clock and ours may disagree.
    """
    return tuple(
        str(workdir / name)
        for name in reports
        if (now := _stamp(workdir / name)) is not None and now != before.get(name)
    )


def _stamp(path: Path) -> _Stamp:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _inside(path: Path, root: Path) -> str | None:
    """*path* relative to *root* (POSIX), when it lies inside it; else ``None``."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except (OSError, ValueError, RuntimeError):
        return None


@attrs.define
class _Noted:
    """The programs, files and folders inside *root* that the words of the checks name."""

    root: Path
    search: str  # the PATH programs are looked up on
    programs: dict[str, _Stamp] = attrs.Factory(dict)
    files: dict[str, _Stamp] = attrs.Factory(dict)
    folders: list[str] = attrs.Factory(list)

    def note(self, word: str, *, program: bool) -> None:
        """Note *word* as a program (where a command starts), a file or a folder, if it is."""
        root = self.root
        candidate = root / word if word else root
        if "/" not in word and program:
            found = shutil.which(word, path=self.search)
            relative = _inside(Path(found), root) if found else None
            if relative is not None:
                self.programs[relative] = _stamp(root / relative)
                return
        if not word or word.startswith("-") or not candidate.exists():
            return
        relative = _inside(candidate, root)
        if relative is None or relative == ".":
            return
        if candidate.is_dir():
            self.folders.append(relative)
        else:
            self.files[relative] = _stamp(root / relative)


@attrs.frozen(kw_only=True)
class CheckInputs:
    """What a subtask's checks run and name inside the project, noted before an attempt.

    An attempt that changes these and then passes may have passed by changing the checks:
    :meth:`changed_by` says which, so the loop reports it (never a failure: editing a test
    can be the fix).

    Attributes:
        programs: Programs of the commands found inside the project (a virtual
            environment's ``bin/``, ``node_modules/.bin``, a relative ``PATH`` entry), with
            their stamps.
        files: Files the commands name (``check.py``, ``tests/test_x.py``), with stamps.
        folders: Folders the commands name (``tests``): any file changed under them counts.
    """

    programs: dict[str, _Stamp] = attrs.field(factory=dict)
    files: dict[str, _Stamp] = attrs.field(factory=dict)
    folders: tuple[str, ...] = ()

    @classmethod
    def of(cls, commands: Sequence[str], workdir: Path, *, path: str | None = None) -> CheckInputs:
        """Note the programs, files and folders of *commands* inside *workdir* (never raises).

        Args:
            commands: The verification command lines.
            workdir: The project root the checks run in.
            path: The ``PATH`` programs are looked up on (the environment's by default);
                relative entries count from *workdir*, as they do when the check runs.
        """
        root = workdir.resolve()
        search = os.pathsep.join(
            str(root / entry) if not Path(entry).is_absolute() else entry
            for entry in (path if path is not None else os.environ.get("PATH", "")).split(
                os.pathsep
            )
        )
        noted = _Noted(root=root, search=search)
        for command in commands:
            try:
                words = shlex.split(command)
            except ValueError:
                continue
            for index, word in enumerate(words):
                if word.startswith("-") and "=" in word:
                    word = word.split("=", 1)[1]  # noqa: PLW2901 -- --rootdir=tests
                first = index == 0 or words[index - 1] in {"&&", "||", "|", ";"}
                try:  # a word is any text (`python -c "<300 characters>"`): never a path error
                    noted.note(word, program=first)
                except (OSError, ValueError):
                    continue
        return cls(
            programs=noted.programs, files=noted.files, folders=tuple(dict.fromkeys(noted.folders))
        )

    def changed_by(
        self, workdir: Path, changed: Sequence[str] | None
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What of the checks the attempt changed: (programs, files).

        Args:
            workdir: The project root.
            changed: The files the attempt changed (relative, POSIX), ``None`` when unknown:
                then only the programs and the files the commands name are compared.

        Returns:
            The programs, and the files: those the commands name or that lie under a folder
            they name, tests by their path (``tests/``, ``test_*.py``, ``*.spec.ts`` ...),
            and the files that decide what a runner collects (``conftest.py``,
            ``pytest.ini``, ``pyproject.toml``, ``package.json``, ``jest.config.js`` ...).
        """
        root = workdir.resolve()
        programs = [p for p, stamp in self.programs.items() if _stamp(root / p) != stamp]
        files = {f for f, stamp in self.files.items() if _stamp(root / f) != stamp}
        for path in changed or ():
            if (
                path in self.files
                or any(path.startswith(f"{folder}/") for folder in self.folders)
                or on_surface(path, ReviewSurface.TEST, DEFAULT_RULES)
                or _COLLECTION_CONFIGS.search(path)
            ):
                files.add(path)
        return tuple(sorted(programs)), tuple(sorted(files))


@attrs.frozen(kw_only=True)
class AttemptId:
    """Which attempt failed: the ids and the description its failure carries."""

    task: str
    subtask: str
    attempt: int  # 1-based
    session_id: str = ""  # the run id
    description: str = ""  # the subtask's


def failure_context(
    result: VerificationResult,
    attempt: AttemptId,
    /,
    *,
    files_modified: Sequence[str] = (),
    redactor: Redactor | None = None,
) -> FailureContext:
    """Turn a failed verification into a redacted :class:`~reflexkit.models.FailureContext`.

    Args:
        result: The failed verification.
        attempt: Which attempt it was.
        files_modified: What the attempt changed (see :func:`modified_files`).
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
        task_id=attempt.task,
        subtask_id=attempt.subtask,
        attempt_number=attempt.attempt,
        error_output=result.output,
        session_id=attempt.session_id,
        description=attempt.description,
        failure_type=failure_type,
        command=result.command,
        exit_code=result.exit_code,
        files_modified=tuple(files_modified),
        duration_ms=result.duration_ms,
        reports=result.reports,
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
    git_status = ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"]
    result = run_process(
        # no fsmonitor, hook or driver of the repository runs
        Command(git_status, cwd=workdir, env=git_env(repository=workdir)),
        timeout_s=30,
        max_output_bytes=4 << 20,
        raw=True,
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
            reports=config.reports,
        )

    return verifier_for
