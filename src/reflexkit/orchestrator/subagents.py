"""Subagents: who does the work of an attempt.

:class:`CommandSubagent` runs any command-line agent, handing it the prompt in a file or on
stdin; :class:`ScriptedSubagent` applies scripted file edits per attempt (tests and the demo).
Neither raises: whatever goes wrong is a :class:`SubagentResult` with ``ok=False``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from reflexkit.orchestrator.verify import cut_middle, run_process

__all__ = [
    "PROMPT_FILE",
    "CommandSubagent",
    "Edit",
    "ScriptedSubagent",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
]

PROMPT_FILE = "{prompt_file}"
"""The placeholder in a :class:`CommandSubagent` command line replaced by the prompt's path."""


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
    prompt: str
    workdir: Path
    timeout_s: float


@attrs.frozen(kw_only=True)
class SubagentResult:
    """What a subagent reported about its attempt.

    Attributes:
        ok: It finished its work (whether the work is right is for verification to say).
        output: What it printed, head and tail kept when long.
        duration_ms: Wall-clock time.
        error: Why it did not finish (a crash, a time limit, a missing program).
        cost_usd: What the attempt cost, when the subagent knows.
        turns: How many agent turns it took, when the subagent knows.
    """

    ok: bool
    output: str
    duration_ms: int
    error: str | None = None
    cost_usd: float | None = None
    turns: int | None = None


@runtime_checkable
class Subagent(Protocol):
    """**Protocol**: does the work of one attempt at a subtask, in its working folder."""

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Attempt the subtask; report what happened instead of raising."""
        ...


class CommandSubagent:
    """Runs a command-line agent once per attempt.

    Every ``{prompt_file}`` in *argv* is replaced by the path of a temporary file holding the
    prompt; when there is none, the prompt is written to the command's stdin. The command runs
    in the request's working folder, in its own process group, and is killed with everything it
    started at the request's time limit.

    Args:
        argv: The command line, e.g. ``["my-agent", "--prompt-file", "{prompt_file}"]``.
        env: The command's environment; the current one by default.
        max_output_chars: How much of its output is kept (head and tail).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        max_output_chars: int = 20_000,
    ) -> None:
        if not argv:
            msg = "CommandSubagent needs a command line"
            raise ValueError(msg)
        self.argv = tuple(argv)
        self.env = env
        self.max_output_chars = max_output_chars

    def run(self, request: SubagentRequest, /) -> SubagentResult:
        """Run the command on the request's prompt; never raises."""
        uses_file = any(PROMPT_FILE in part for part in self.argv)
        try:
            with tempfile.TemporaryDirectory(prefix="reflexkit-prompt-") as folder:
                prompt_file = Path(folder) / f"{request.subtask_id}-{request.attempt}.md"
                prompt_file.write_text(request.prompt, encoding="utf-8")
                argv = [part.replace(PROMPT_FILE, str(prompt_file)) for part in self.argv]
                result = run_process(
                    argv,
                    cwd=request.workdir,
                    timeout_s=request.timeout_s,
                    stdin=None if uses_file else request.prompt,
                    env=self.env,
                )
        except OSError as err:
            return SubagentResult(
                ok=False, output="", duration_ms=0, error=f"cannot prepare the prompt: {err}"
            )
        error = result.error
        if error is None and result.exit_code != 0:
            error = f"{self.argv[0]} exited with status {result.exit_code}"
        return SubagentResult(
            ok=error is None,
            output=cut_middle(result.output, self.max_output_chars),
            duration_ms=result.duration_ms,
            error=error,
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
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(contents, encoding="utf-8")
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
