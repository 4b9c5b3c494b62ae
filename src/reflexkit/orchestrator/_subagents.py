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
import itertools
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import attrs
import orjson

from reflexkit._files import atomic_write, make_dirs, read_regular
from reflexkit._text import strip_control
from reflexkit.exceptions import SetupError
from reflexkit.orchestrator._process import (
    DEFAULT_MAX_OUTPUT_BYTES,
    EXIT_NOT_EXECUTABLE,
    EXIT_NOT_FOUND,
    Command,
    run_process,
)
from reflexkit.redaction._gate import outbound

__all__ = [
    "EXIT_SETUP",
    "PROMPT",
    "PROMPT_FILE",
    "AgentReport",
    "CommandSubagent",
    "Edit",
    "ScriptedSubagent",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
    "read_agent_result",
]

_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
"""Errors writing the prompt file that no retry can get past: a full disk, a read-only one."""

_SHELL_SAFE = re.compile(r"[A-Za-z0-9_./+,:=@%-]+")
"""Characters a path may hold and still mean itself inside any shell word, quoted or not."""

PROMPT_FILE = "{prompt_file}"
"""The placeholder in a :class:`CommandSubagent` command line replaced by the prompt's path."""

PROMPT = "{prompt}"
"""The placeholder in a :class:`CommandSubagent` command line replaced by the prompt itself."""

EXIT_SETUP = 78
"""The exit code by which a command agent says its setup can't work (``EX_CONFIG`` of
``sysexits.h``): the run stops with a setup error instead of learning a lesson about code."""

_MAX_ARGUMENT_BYTES = 128 * 1024
"""Linux's bound on one argument (``MAX_ARG_STRLEN``): a longer ``{prompt}`` can't be run."""

_MAX_RESULT_BYTES = 64 * 1024
_MAX_REASON_CHARS = 500
_MAX_COST = 1e9


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
        run_id: The run's id (``""`` outside a run).
        task_id: The task's id (``""`` outside a run).
    """

    subtask_id: str
    attempt: int
    prompt: str = attrs.field(converter=_gated_prompt)
    workdir: Path
    timeout_s: float
    run_id: str = ""
    task_id: str = ""


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


def _command_line(argv: Sequence[str]) -> tuple[str, ...]:
    if not argv:
        msg = "CommandSubagent needs a command line"
        raise ValueError(msg)
    _check_prompt_placement(argv)
    return tuple(argv)


def _alternatives(patterns: Sequence[str] | None) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


@attrs.define(eq=False)
class CommandSubagent:
    """Runs a command-line agent once per attempt.

    The command line is a list of arguments, never given to a shell. The prompt goes to the
    agent where it wants it: every ``{prompt_file}`` in an argument becomes the path of a file
    holding the prompt, every ``{prompt}`` the prompt itself (inside that one argument), and
    when the command has neither, the prompt is written to its stdin. The prompt file is
    ``prompt.md`` in a fresh temporary folder (inside *prompt_dir* when given, which
    ``reflexkit run`` sets to ``.reflexkit/prompts``; removed after the attempt): nothing from
    the task (no subtask id) goes into its path. The command runs in the request's working
    folder through the one process runner (:mod:`reflexkit.orchestrator._process`): its own
    session, a hard time limit, bounded output, everything it started killed when the attempt
    ends.

    The agent's environment (docs/agents.md) holds, besides *env*: ``REFLEXKIT_RUN_ID``,
    ``REFLEXKIT_TASK_ID``, ``REFLEXKIT_SUBTASK_ID``, ``REFLEXKIT_ATTEMPT``,
    ``REFLEXKIT_PROMPT_FILE`` (the prompt file, always written) and ``REFLEXKIT_RESULT_FILE``,
    where it may write a JSON object with ``costUsd``, ``turns`` and ``setupError``. An agent
    that exits with :data:`EXIT_SETUP` (78) says its setup can't work (no model, no key, no
    API): the run stops with a setup error, as for a program that is not installed.

    Args:
        argv: The command line, e.g. ``["my-agent", "--prompt-file", "{prompt_file}"]``.
        env: The command's environment; the current one by default.
        max_output_chars: How many bytes of its output are kept (head and tail halves).
        prompt_dir: Where the prompt's temporary folder is made; the system's by default.
        name: What attempt reports call this agent (a recipe's name; ``command`` by default).
        setup_errors: Regular expressions for the agent's own words when it can't reach or
            use its model: an attempt that failed or timed out printing one raises
            :class:`~reflexkit.exceptions.SetupError` (agents retry such errors until their
            time runs out; no lesson about the code is in it).
    """

    argv: tuple[str, ...] = attrs.field(converter=_command_line)
    env: Mapping[str, str] | None = attrs.field(default=None, kw_only=True)
    max_output_chars: int = attrs.field(default=DEFAULT_MAX_OUTPUT_BYTES, kw_only=True)
    prompt_dir: Path | None = attrs.field(default=None, kw_only=True)
    name: str = attrs.field(default="command", kw_only=True)
    """What attempt reports call this subagent."""
    setup_errors: re.Pattern[str] | None = attrs.field(
        default=None, converter=_alternatives, kw_only=True
    )

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
            SetupError: The program can't be found or executed, or the agent says (exit
                :data:`EXIT_SETUP`) that its setup can't work: no attempt can.
        """
        try:
            if self.prompt_dir is not None:
                make_dirs(self.prompt_dir)
            with tempfile.TemporaryDirectory(
                prefix="reflexkit-prompt-", dir=self.prompt_dir
            ) as folder:
                prompt_file = Path(folder) / "prompt.md"
                prompt_file.write_text(request.prompt, encoding="utf-8")
                result_file = Path(folder) / "result.json"
                shown = _shell_safe(prompt_file, request.workdir)
                argv, stdin = self._command_line(request.prompt, shown)
                env = self._environment(request, prompt_file, result_file)
                result = run_process(
                    Command(argv, cwd=request.workdir, env=env, stdin=stdin),
                    timeout_s=request.timeout_s,
                    max_output_bytes=self.max_output_chars,
                )
                reported = read_agent_result(result_file)
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
        if result.exit_code == EXIT_SETUP and not result.timed_out:
            why = reported.setup_error or _last_line(result.output) or "no reason given"
            msg = f"the agent {self.argv[0]} says its setup can't work: {why}"
            raise SetupError(msg)
        error = result.error
        if error is None and result.exit_code != 0:
            error = f"{self.argv[0]} exited with status {result.exit_code}"
        if error is not None:
            self._refuse_setup(result.output)
        return SubagentResult(
            ok=error is None,
            output=result.output,
            duration_ms=result.duration_ms,
            error=error,
            timed_out=result.timed_out,
            cost_usd=reported.cost_usd,
            turns=reported.turns,
        )

    def _refuse_setup(self, output: str) -> None:
        """Raise when a failed attempt's output says the agent can't reach or use its model.

        Raises:
            SetupError: A line matches one of :attr:`setup_errors`; the message quotes it.
        """
        found = self.setup_errors.search(output) if self.setup_errors is not None else None
        if found is None:
            return
        start = output.rfind("\n", 0, found.start()) + 1
        end = output.find("\n", found.end())
        line = strip_control(output[start : end if end >= 0 else len(output)]).strip()
        msg = f"the agent {self.argv[0]} can't reach or use its model: {line[:_MAX_REASON_CHARS]}"
        raise SetupError(msg)

    def _command_line(self, prompt: str, prompt_file: str) -> tuple[list[str], str | None]:
        """The arguments with the placeholders filled in, and what goes to stdin."""
        as_argument = any(PROMPT in part for part in self.argv)
        if as_argument and len(prompt.encode()) >= _MAX_ARGUMENT_BYTES:
            msg = (
                f"the prompt ({len(prompt.encode())} bytes) is too long for one argument "
                f"({{prompt}}, at most {_MAX_ARGUMENT_BYTES - 1}): use {PROMPT_FILE} or stdin"
            )
            raise SetupError(msg)
        argv = [
            part.replace(PROMPT_FILE, prompt_file).replace(PROMPT, prompt) for part in self.argv
        ]
        by_file = any(PROMPT_FILE in part for part in self.argv)
        return argv, None if as_argument or by_file else prompt

    def _environment(
        self, request: SubagentRequest, prompt_file: Path, result_file: Path
    ) -> dict[str, str]:
        """The agent's environment: the given one (or ours) and what reflexkit tells it."""
        env = dict(self.env if self.env is not None else os.environ)
        env.update(
            {
                "REFLEXKIT_RUN_ID": request.run_id,
                "REFLEXKIT_TASK_ID": request.task_id,
                "REFLEXKIT_SUBTASK_ID": request.subtask_id,
                "REFLEXKIT_ATTEMPT": str(request.attempt),
                "REFLEXKIT_PROMPT_FILE": str(prompt_file.absolute()),
                "REFLEXKIT_RESULT_FILE": str(result_file.absolute()),
            }
        )
        return env


@attrs.frozen
class AgentReport:
    """What a command agent reported in its result file (``REFLEXKIT_RESULT_FILE``).

    Attributes:
        cost_usd: What the attempt cost (``costUsd``, a number of dollars, 0 or more).
        turns: How many turns it took (``turns``, a whole number, 0 or more).
        setup_error: Why its setup can't work (``setupError``, read with exit code 78).
        problems: What in the file was not understood (the rest is used).
    """

    cost_usd: float | None = None
    turns: int | None = None
    setup_error: str | None = None
    problems: tuple[str, ...] = ()


_RESULT_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    (
        "costUsd",
        lambda v: type(v) in {int, float} and 0 <= v < _MAX_COST,
        "a number of dollars, 0 or more",
    ),
    ("turns", lambda v: type(v) is int and v >= 0, "a whole number, 0 or more"),
    ("setupError", lambda v: isinstance(v, str), "a string"),
)
"""What a result file may hold: each key, what its value must be, and what is expected."""


def read_agent_result(path: Path) -> AgentReport:
    """Read an agent's result file; a missing or bad one reports nothing, never raises.

    The file is read by the one safe reader (a regular file, no link, 64 KiB at most): the
    agent wrote it, so it is data, and only numbers and one bounded string come out of it.
    """
    data, problem = _result_json(path)
    if data is None:
        return AgentReport(problems=(problem,) if problem else ())
    given = [(key, data[key], valid, what) for key, valid, what in _RESULT_FIELDS if key in data]
    good = {key: value for key, value, valid, _ in given if value is None or valid(value)}
    problems = tuple(f"{key}: expected {what}" for key, _, _, what in given if key not in good)
    cost, setup = good.get("costUsd"), good.get("setupError")
    return AgentReport(
        cost_usd=float(cost) if cost is not None else None,
        turns=good.get("turns"),
        setup_error=strip_control(setup)[:_MAX_REASON_CHARS] if setup else None,
        problems=problems,
    )


def _result_json(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The result file's JSON object, or ``None`` and why not (``""``: there is no file)."""
    try:
        data = orjson.loads(read_regular(path, limit=_MAX_RESULT_BYTES))
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return None, f"result file: {err}"
    except orjson.JSONDecodeError:
        return None, "result file: not JSON"
    if not isinstance(data, dict):
        return None, "result file: expected a JSON object"
    return data, ""


def _check_prompt_placement(argv: Sequence[str]) -> None:
    """Refuse ``{prompt}`` inside a shell's ``-c`` script: the prompt would run as code.

    Raises:
        ValueError: It is; the message shows the safe form (``sh -c '... "$1"' sh {prompt}``).
    """
    for flag, script in itertools.pairwise(argv):
        if flag == "-c" and PROMPT in script:
            msg = (
                f"{PROMPT} inside a -c script would run the prompt as shell code: pass it as "
                'its own argument after the script and use "$1" '
                f"(sh -c 'agent \"$1\"' sh {PROMPT})"
            )
            raise ValueError(msg)


def _last_line(output: str) -> str:
    """The agent's last non-empty output line, bounded: its own word on what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return strip_control(lines[-1])[:_MAX_REASON_CHARS] if lines else ""


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
