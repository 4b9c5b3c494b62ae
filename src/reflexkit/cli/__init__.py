"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input, configuration or a setup
that can't work (agent not installed, bad quoting, missing extra), 130 or 143 when SIGINT or
SIGTERM stopped a run. Errors are one line each on stderr, never a traceback (unless
``--debug``). Everything printed from tool output, memory or task files is stripped of terminal
control sequences.
"""

from __future__ import annotations

import atexit
import gc
import importlib
from typing import Any, NamedTuple

import click

from reflexkit import _log
from reflexkit._version import __version__
from reflexkit.cli._core import (
    _Group,
    _State,
    _state,
    add_global_options,
    global_options,
)

__all__ = ["COMMANDS", "Command", "cli", "main"]


class _LazyGroup(_Group):
    """The main group: a command's module is imported only when that command runs.

    ``--help`` lists the commands from their one-line summaries in :data:`COMMANDS`, so it
    imports none of them either (a test checks the summaries against the commands' own).
    """

    def __init__(self, *args: Any, lazy: dict[str, Command], **kwargs: Any) -> None:  # noqa: ANN401
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self._lazy:
            command = self._lazy[cmd_name].load()
            add_global_options(command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(name, self._lazy[name].short_help(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class Command(NamedTuple):
    """Where a command lives (``module:attribute`` under :mod:`reflexkit.cli.commands`, private)."""

    where: str
    summary: str

    def short_help(self, limit: int) -> str:
        """The summary cut to *limit* characters, as click cuts a command's own help."""
        return click.Command(None, help=self.summary).get_short_help_str(limit)

    def load(self) -> click.Command:
        """Import the command."""
        module, _, attr = self.where.partition(":")
        command = getattr(importlib.import_module(f"reflexkit.cli.commands.{module}"), attr)
        if not isinstance(command, click.Command):  # pragma: no cover -- a typo in COMMANDS
            msg = f"{self.where} is not a click command"
            raise TypeError(msg)
        return command


COMMANDS = {
    "config": Command("_config:config", "Check or create project.json."),
    "reflect": Command(
        "_reflect:reflect", "Reflect on one failure and append the reflection to memory."
    ),
    "fixtures": Command(
        "_reflect:fixtures", "Recorded Claude replies, replayed offline by `--backend fixture`."
    ),
    "recent": Command(
        "_memory:recent", "Show the most recent reflections of a subtask, oldest first."
    ),
    "prune": Command("_memory:prune", "Remove reflections older than a number of days."),
    "stats": Command(
        "_memory:stats",
        "Count what memory holds: records, subtasks, categories, failure types, corrupt lines.",
    ),
    "memory": Command("_memory:memory", "Move and sync reflections between memory backends."),
    "run": Command(
        "_run:run",
        "Run a task: attempt, verify, reflect and retry each subtask until it passes.",
    ),
    "show": Command(
        "_show:show_command",
        "Show a run, attempt by attempt: prompts and outcomes (default: the latest run).",
    ),
    "demo": Command(
        "_demo:demo",
        "Fix a real bug with the retry loop, offline: fail, reflect, retry with the lesson, pass.",
    ),
    "insights": Command(
        "_insights:insights", "List the findings of the insight rules and the paused subtasks."
    ),
    "resume": Command(
        "_insights:resume",
        "Resume a subtask the insight rules paused, so the next run attempts it again.",
    ),
    "lessons": Command(
        "_insights:lessons",
        "List the project's lessons: fixes that worked, offered to other subtasks.",
    ),
    "hook": Command(
        "_hook:hook", "Claude Code hooks (enable them with hooks.enabled in project.json)."
    ),
    "calibrate": Command(
        "_calibrate:calibrate_command",
        "Compute the AUC of the agents' self-reported confidence against outcomes.",
    ),
    "git-history": Command(
        "_experiments:git_history_command",
        "Which gate would have caught the reverts and quick fixes in a repository's history (P2).",
    ),
    "outcomes": Command(
        "_experiments:outcomes_command",
        "How many finished tasks get a machine-detectable outcome within a window (P3).",
    ),
}
"""Every command: where it lives and its one-line summary for ``--help``."""

# Commands that start no process, so need no subreaper (and skip importing what makes one).
_NO_PROCESSES = frozenset({"recent", "reflect", "fixtures", "stats", "prune", "memory", "show"})


@click.group(
    cls=_LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "--version", "-V", prog_name="reflexkit")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Reflexion for coding agents: learn from failures, retry with the lessons.

    --config, --debug and --json go before or after the command name, on every command.
    """
    state = _state(ctx)
    _log.configure(debug=state.debug)
    # Here, not in main(): --version and --help start no processes, nor do the commands that
    # only read and write memory, which orchestrators call once per failure (#19).
    if state.subreaper and ctx.invoked_subcommand not in _NO_PROCESSES:
        from reflexkit.orchestrator import _process  # noqa: PLC0415 -- lazy, like the commands

        _process.become_subreaper()


cli.params.extend(global_options())


def main() -> None:
    """Run the command line (the ``reflexkit`` console script); never returns.

    The process becomes a child subreaper first (Linux), so a grandchild that an agent or a
    check detached with ``setsid`` comes back to us when its parent exits, to be killed and
    reaped. (Only here, not in :data:`cli`: a program embedding the commands keeps its own
    process semantics.)
    """
    from reflexkit import _lazy  # noqa: PLC0415
    from reflexkit.cli import _streams  # noqa: PLC0415 -- closed descriptors, encodings (h5)

    _lazy.own_process()
    _streams.prepare()
    # At exit the interpreter collects garbage over every object still alive: over the
    # anthropic SDK's types that is 1-2 s on a busy machine, after the command is done
    # (benchmarks/claude_limits.py). The process is ending, its files are closed: freeze the
    # heap so no collection walks it (finalizers still run as references drop).
    atexit.register(gc.freeze)
    cli.main(prog_name="reflexkit", obj=_State(subreaper=True))
