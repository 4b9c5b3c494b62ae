"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input, configuration or a setup
that can't work (agent not installed, bad quoting, missing extra), 130 or 143 when SIGINT or
SIGTERM stopped a run. Errors are one line each on stderr, never a traceback (unless
``--debug``). Everything printed from tool output, memory or task files is stripped of terminal
control sequences.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from reflexkit._version import __version__
from reflexkit.cli._core import (
    _Group,
    _set_logging,
    _State,
    _state,
    add_global_options,
    global_options,
)

__all__ = ["cli", "main"]


class _LazyGroup(_Group):
    """The main group: a command's module is imported only when that command runs.

    ``reflexkit --version`` then costs click alone, and ``recent`` doesn't pay for ``run``'s
    imports. ``--help`` imports every command, for its one-line help.
    """

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:  # noqa: ANN401
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self._lazy:
            module, _, attr = self._lazy[cmd_name].partition(":")
            command = getattr(importlib.import_module(module), attr)
            if not isinstance(command, click.Command):  # pragma: no cover -- a typo in _COMMANDS
                msg = f"{self._lazy[cmd_name]} is not a click command"
                raise TypeError(msg)
            add_global_options(command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


_COMMANDS = {
    "config": "reflexkit.cli._config:config",
    "reflect": "reflexkit.cli._reflect:reflect",
    "fixtures": "reflexkit.cli._reflect:fixtures",
    "recent": "reflexkit.cli._memory:recent",
    "prune": "reflexkit.cli._memory:prune",
    "stats": "reflexkit.cli._memory:stats",
    "memory": "reflexkit.cli._memory:memory",
    "run": "reflexkit.cli._run:run",
    "demo": "reflexkit.cli._demo:demo",
    "insights": "reflexkit.cli_insights:insights",  # insights (#17)
    "resume": "reflexkit.cli_insights:resume",  # insights (#17)
    "lessons": "reflexkit.cli_insights:lessons",  # insights (#17)
    "hook": "reflexkit.hooks.cli:hook",  # reflexkit hook stop|post-tool-use|session-start|install
    "calibrate": "reflexkit._reports_cli:calibrate_command",  # reflexkit calibrate (#18)
}

# Commands that start no process, so need no subreaper (and skip importing what makes one).
_NO_PROCESSES = frozenset({"recent", "reflect", "fixtures", "stats", "prune", "memory"})


@click.group(
    cls=_LazyGroup, lazy=_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "--version", "-V", prog_name="reflexkit")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Reflexion for coding agents: learn from failures, retry with the lessons.

    --config, --debug and --json go before or after the command name, on every command.
    """
    state = _state(ctx)
    _set_logging(debug=state.debug)
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
    from reflexkit.cli import _streams  # noqa: PLC0415 -- closed descriptors, encodings (h5)

    _streams.prepare()
    cli.main(prog_name="reflexkit", obj=_State(subreaper=True))
