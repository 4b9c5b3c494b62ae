"""``reflexkit hook ...``: the Claude Code hooks, and their installation.

Every hook command reads the event's payload on stdin, prints what Claude Code should read
on stdout, and exits 0 whatever happens: a hook never fails the session.
"""

from __future__ import annotations

from pathlib import Path

import click

from reflexkit.cli._core import EXIT_BAD_INPUT, _fail
from reflexkit.cli._output import say
from reflexkit.exceptions import ConfigError
from reflexkit.hooks._handlers import answer
from reflexkit.hooks._settings import install_hooks, portable

__all__ = ["hook"]


def _run(event: str) -> None:
    ctx = click.get_current_context()
    config = getattr(ctx.find_root().obj, "config", None)  # --config before or after (#19)
    answer(event, say, config=Path(config) if config else None)
    ctx.exit(0)


@click.group()
def hook() -> None:
    """Claude Code hooks (enable them with hooks.enabled in project.json).

    Lessons at session start, reflections on failed commands, reports and the completion
    judge at stop.
    """


@hook.command("stop")
def hook_stop() -> None:
    """Stop: write the attempt report; with the judge on, block an incomplete stop."""
    _run("stop")


@hook.command("post-tool-use")
def hook_post_tool_use() -> None:
    """PostToolUse / PostToolUseFailure: a failed Bash command becomes a reflection."""
    _run("post-tool-use")


@hook.command("session-start")
def hook_session_start() -> None:
    """SessionStart: recent lessons of the project as additional context."""
    _run("session-start")


@hook.command("install")
@click.option(
    "--settings",
    "settings",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The settings file (default: .claude/settings.local.json in the current folder, "
    "this machine's own).",
)
@click.option(
    "--shared",
    is_flag=True,
    help="Write .claude/settings.json, the file a team commits: the hooks run the reflexkit "
    "command on each machine's PATH, never a path of this one.",
)
def hook_install(settings: Path | None, shared: bool) -> None:
    """Register the hooks in Claude Code's settings, keeping what is there; safe to repeat.

    By default in .claude/settings.local.json (not committed), naming this machine's
    interpreter; with --shared in .claude/settings.json, naming only `reflexkit`.
    """
    if settings is not None and shared:
        _fail(["--settings and --shared name two files: give one"], EXIT_BAD_INPUT)
    name = "settings.json" if shared else "settings.local.json"
    path = settings or Path.cwd() / ".claude" / name
    try:
        changed = install_hooks(path)
    except ConfigError as err:
        _fail(err.errors, EXIT_BAD_INPUT)
    say(f"{'registered the hooks in' if changed else 'already registered in'} {path}")
    if portable(path):
        say(
            "the hooks run `reflexkit hook ...`: every machine needs reflexkit on its PATH "
            "(for this machine's own file: reflexkit hook install, without --shared)"
        )
    else:
        say(
            "this machine's own settings (not committed); to share the hooks with your team: "
            "reflexkit hook install --shared"
        )
    if changed:
        say('enable them with "hooks": {"enabled": true} in .reflexkit/project.json')
