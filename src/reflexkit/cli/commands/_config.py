"""``reflexkit config check|init``."""

from __future__ import annotations

from pathlib import Path

import click

from reflexkit import _serde
from reflexkit._files import atomic_write
from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    _fail,
    _state,
)
from reflexkit.cli._output import say, say_json
from reflexkit.tasks._config import (
    CONFIG_RELPATH,
    ProjectConfig,
)

__all__ = ["config"]


@click.group()
def config() -> None:
    """Check or create project.json."""


@config.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate project.json and print the effective configuration as JSON.

    Exit 0 when valid; otherwise print each problem on its own line on stderr and exit 2.
    """
    project = _state(ctx).project()
    where = str(project.path) if project.path else "no project.json found: all defaults"
    say(f"reflexkit: {where}", err=True)
    say_json(project.config)


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.pass_context
def config_init(ctx: click.Context, force: bool) -> None:
    """Write .reflexkit/project.json with every default spelled out."""
    target = _state(ctx).config or Path.cwd() / CONFIG_RELPATH
    if target.exists() and not force:
        _fail([f"{target}: already exists (use --force to overwrite)"], EXIT_BAD_INPUT)
    data = _serde.dumps(ProjectConfig(), indent=True) + b"\n"
    try:  # whole or not at all: a full disk never leaves half a project.json (#13)
        atomic_write(target, data, mode=None if target.exists() else 0o644)
    except OSError as err:
        _fail([f"{target}: cannot write: {err.strerror or err}"], EXIT_FAILED)
    say(f"wrote {target}")
