"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input, configuration or a setup
that can't work (agent not installed, bad quoting, missing extra), 130 or 143 when SIGINT or
SIGTERM stopped a run. Errors are one line each on stderr, never a traceback (unless
``--debug``). Everything printed from tool output, memory or task files is stripped of terminal
control sequences.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from reflexkit import cli_insights
from reflexkit._reports_cli import calibrate_command
from reflexkit._version import __version__
from reflexkit.cli._config import config
from reflexkit.cli._core import _Group, _State
from reflexkit.cli._demo import demo
from reflexkit.cli._memory import memory, prune, recent, stats
from reflexkit.cli._reflect import fixtures, reflect
from reflexkit.cli._run import run
from reflexkit.hooks.cli import hook
from reflexkit.orchestrator import _process

__all__ = ["cli", "main"]


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="reflexkit")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="project.json to use (default: $REFLEXKIT_CONFIG, else .reflexkit/project.json "
    "here or in the nearest parent).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.pass_context
def cli(ctx: click.Context, config: Path | None, debug: bool) -> None:
    """Reflexion for coding agents: learn from failures, retry with the lessons."""
    ctx.obj = _State(config=config, debug=debug)
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="reflexkit: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )


for _command in (config, reflect, fixtures, recent, prune, stats, memory, run, demo):
    cli.add_command(_command)
cli.add_command(cli_insights.insights)  # insights (#17)
cli.add_command(cli_insights.resume)  # insights (#17)
cli.add_command(cli_insights.lessons)  # insights (#17)
cli.add_command(hook)  # reflexkit hook stop|post-tool-use|session-start|install (#18)
cli.add_command(calibrate_command)  # reflexkit calibrate (#18)


def main() -> None:
    """Run the command line (the ``reflexkit`` console script).

    The process becomes a child subreaper first (Linux), so a grandchild that an agent or a
    check detached with ``setsid`` comes back to us when its parent exits, to be killed and
    reaped. (Only here, not in :data:`cli`: a program embedding the commands keeps its own
    process semantics.)
    """
    _process.become_subreaper()
    cli.main(prog_name="reflexkit")
