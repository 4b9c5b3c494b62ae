"""Subagents: who does the work of an attempt.

:class:`CommandSubagent` runs any command-line agent, handing it the prompt in a file or on
stdin; :class:`ScriptedSubagent` applies scripted file edits per attempt (tests and the demo).
Whatever goes wrong with an attempt is a :class:`SubagentResult` with ``ok=False``; only a
setup that can't work at all (the agent program is not installed) raises
:class:`~reflexkit.exceptions.SetupError`, which the loop turns into the subtask's end.

A subagent may also have a ``preflight()`` method taking no arguments: the loop calls it once
before the first attempt of a run, and a :class:`~reflexkit.exceptions.SetupError` it raises
stops the run before any work is done.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import attrs

from reflexkit._files import atomic_write, make_dirs
from reflexkit.exceptions import SetupError
from reflexkit.orchestrator._process import (
    DEFAULT_MAX_OUTPUT_BYTES,
    EXIT_NOT_EXECUTABLE,
    EXIT_NOT_FOUND,
    run_process,
)
from reflexkit.redaction.gate import outbound

__all__ = [
    "PROMPT_FILE",
    "CommandSubagent",
    "Edit",
    "ScriptedSubagent",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
]

_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
"""Errors writing the prompt file that no retry can get past: a full disk, a read-only one."""

_SHELL_SAFE = re.compile(r"[A-Za-z0-9_./+,:=@%-]+")
"""Characters a path may hold and still mean itself inside any shell word, quoted or not."""

PROMPT_FILE = "{prompt_file}"
"""The placeholder in a :class:`CommandSubagent` command line replaced by the prompt's path."""


def _gated_prompt(text: str) -> str:
    """An attempt's prompt through the outbound gate: it goes to an agent, a model."""
    return outbound(text, "agent_prompt")


@attrs.frozen(kw_only=True)
class SubagentRequest:
    """One attempt at a subtask, as handed to a subagent.

    Attributes:
        subtask_id: The subtask.
        attempt: The attempt number, from 1.
        prompt: Everything the subagent is told, reflections included on a retry.
        workdir: The project folder the subagent works in.
        timeout_s: How long the attempt may take.
    """

    subtask_id: str
    attempt: int
    prompt: str = attrs.field(converter=_gated_prompt)
    workdir: Path
    timeout_s: float


@attrs.frozen(kw_only=True)
class SubagentResult:
    """What a subagent reported about its attempt.

    Attributes:
        ok: It finished its work (whether the work is right is for verification to say).
        output: What it printed, head and tail kept when long.
        duration_ms: Wall-clock time.
        error: Why it did not finish (a crash, a time limit).
        cost_usd: What the attempt cost, when the subagent knows.
        turns: How many agent turns it took, when the subagent knows.
        timed_out: It was stopped at the attempt's time limit (the failure is then typed
            ``timeout``).
    """

    ok: bool
    output: str
    duration_ms: int
    error: str | None = None
    cost_usd: float | None = None
    turns: int | None = None
    timed_out: bool = False


@runtime_checkable
class Subagent(Protocol):
    """**Protocol**: does the work of one attempt at a subtask, in its working folder.

    A subagent may also have a ``name`` (a string class attribute: ``command``,
    ``scripted``, ``claude-code``), which attempt reports record as their ``agent``; one
    without it is recorded by its class name.
    """

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Attempt the subtask; report what happened instead of raising."""
        ...


class CommandSubagent:
    """Runs a command-line agent once per attempt.

    The command line is a list of arguments, never given to a shell. Every ``{prompt_file}``
    in an argument is replaced by the path of a file holding the prompt (inside that one
    argument); when there is none, the prompt is written to the command's stdin. The prompt
    file is ``prompt.md`` in a fresh temporary folder (inside *prompt_dir* when given, which
    ``reflexkit run`` sets to ``.reflexkit/prompts``; removed after the attempt): nothing from
    the task (no subtask id) goes into its path. The command runs in the request's working
    folder through the one process runner (:mod:`reflexkit.orchestrator._process`): its own
    session, a hard time limit, bounded output, everything it started killed when the attempt
    ends.

    Args:
        argv: The command line, e.g. ``["my-agent", "--prompt-file", "{prompt_file}"]``.
        env: The command's environment; the current one by default.
        max_output_chars: How many bytes of its output are kept (head and tail halves).
        prompt_dir: Where the prompt's temporary folder is made; the system's by default.
    """

    name: ClassVar[str] = "command"
    """What attempt reports call this subagent."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_BYTES,
        prompt_dir: Path | None = None,
    ) -> None:
        if not argv:
            msg = "CommandSubagent needs a command line"
            raise ValueError(msg)
        self.argv = tuple(argv)
        self.env = env
        self.max_output_chars = max_output_chars
        self.prompt_dir = prompt_dir

    def preflight(self) -> None:
        """Check that the agent program exists and can be executed.

        A program given with a relative path (``./agent``) is checked when it runs, in the
        working folder.

        Raises:
            SetupError: The program is not on ``PATH`` or can't be executed.
        """
        program = self.argv[0]
        if os.sep in program and not Path(program).is_absolute():
            return
        path = self.env.get("PATH") if self.env is not None else None
        if shutil.which(program, path=path) is None:
            if Path(program).is_absolute() and Path(program).exists():
                msg = f"the agent command {program} can't be executed (permission denied)"
            else:
                msg = f"the agent command {program} was not found (is it installed and on PATH?)"
            raise SetupError(msg)

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Run the command on the request's prompt.

        Raises:
            SetupError: The program can't be found or executed: no attempt can work.
        """
        uses_file = any(PROMPT_FILE in part for part in self.argv)
        try:
            if self.prompt_dir is not None:
                make_dirs(self.prompt_dir)
            with tempfile.TemporaryDirectory(
                prefix="reflexkit-prompt-", dir=self.prompt_dir
            ) as folder:
                prompt_file = Path(folder) / "prompt.md"
                prompt_file.write_text(request.prompt, encoding="utf-8")
                shown = _shell_safe(prompt_file, request.workdir)
                argv = [part.replace(PROMPT_FILE, shown) for part in self.argv]
                result = run_process(
                    argv,
                    cwd=request.workdir,
                    timeout_s=request.timeout_s,
                    stdin=None if uses_file else request.prompt,
                    env=self.env,
                    max_output_bytes=self.max_output_chars,
                )
        except OSError as err:
            if err.errno in _NO_ROOM:  # no attempt can work until space is freed
                msg = f"cannot write the prompt file: {err}"
                raise SetupError(msg) from None
            return SubagentResult(
                ok=False, output="", duration_ms=0, error=f"cannot prepare the prompt: {err}"
            )
        if result.exit_code in {EXIT_NOT_FOUND, EXIT_NOT_EXECUTABLE} and result.error:
            msg = f"the agent command can't run: {result.error}"
            raise SetupError(msg)
        error = result.error
        if error is None and result.exit_code != 0:
            error = f"{self.argv[0]} exited with status {result.exit_code}"
        return SubagentResult(
            ok=error is None,
            output=result.output,
            duration_ms=result.duration_ms,
            error=error,
            timed_out=result.timed_out,
        )


Edit = Mapping[str, str | None]
"""One attempt's file edits: a path relative to the working folder -> its new contents
(``None`` deletes the file)."""


class ScriptedSubagent:
    """Applies scripted edits: attempt N of a subtask applies the N-th entry of its script.

    An entry is an :data:`Edit` (files to write), or a :class:`SubagentResult` returned as is
    without editing anything (to play a crashed or failing agent). An attempt past the end of
    the script, or of a subtask with no script, edits nothing and reports success.

    Every request is recorded in :attr:`requests`, so a test can read the prompts it got.

    Args:
        script: Per subtask id, the entries of its attempts in order.
    """

    name: ClassVar[str] = "scripted"
    """What attempt reports call this subagent."""

    def __init__(self, script: Mapping[str, Sequence[Edit | SubagentResult]]) -> None:
        self.script = {key: tuple(value) for key, value in script.items()}
        self.requests: list[SubagentRequest] = []

    @property
    def prompts(self) -> list[str]:
        """The prompts of every request so far, in order."""
        return [request.prompt for request in self.requests]

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Apply the edits of this attempt; never raises."""
        started = time.monotonic()
        self.requests.append(request)
        entries = self.script.get(request.subtask_id, ())
        index = request.attempt - 1
        if index >= len(entries):
            return SubagentResult(
                ok=True, output="scripted: no edits for this attempt", duration_ms=0
            )
        entry = entries[index]
        if isinstance(entry, SubagentResult):
            return entry
        written: list[str] = []
        try:
            root = request.workdir.resolve()
            for relpath, contents in entry.items():
                target = (root / relpath).resolve()
                if not target.is_relative_to(root):
                    msg = f"scripted edit outside the working folder: {relpath}"
                    raise ValueError(msg)  # noqa: TRY301 -- reported below like any failure
                if contents is None:
                    target.unlink(missing_ok=True)
                else:  # the one atomic writer: never through a link, never into a FIFO
                    atomic_write(
                        target, contents.encode(), mode=None if target.is_file() else 0o644
                    )
                written.append(relpath)
        except (OSError, ValueError) as err:
            return SubagentResult(
                ok=False,
                output="",
                duration_ms=int((time.monotonic() - started) * 1000),
                error=f"scripted edit failed: {err}",
            )
        return SubagentResult(
            ok=True,
            output="scripted: edited " + (", ".join(written) or "nothing"),
            duration_ms=int((time.monotonic() - started) * 1000),
        )


def _shell_safe(prompt_file: Path, workdir: Path) -> str:
    """The prompt file's path as it goes into the command line.

    An agent command may hand ``{prompt_file}`` to a shell (``bash -c "agent <
    {prompt_file}"``), so a project folder named ``p $(touch x)`` or holding a quote would
    reach it: such a path is given relative to the project folder (the agent's working
    folder), whose part under ``.reflexkit/`` is made of safe characters only.
    """
    absolute = str(prompt_file)
    if _SHELL_SAFE.fullmatch(absolute):
        return absolute
    try:
        relative = prompt_file.relative_to(workdir).as_posix()
    except ValueError:
        return absolute
    return relative if _SHELL_SAFE.fullmatch(relative) else absolute
