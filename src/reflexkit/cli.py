"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input or configuration. Errors are
one line each on stderr, never a traceback (unless ``--debug``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import attrs
import click

from reflexkit import _serde
from reflexkit._version import __version__
from reflexkit.exceptions import ConfigError, ReflexkitError
from reflexkit.tasks.config import CONFIG_RELPATH, LoadedProject, ProjectConfig, load_project

__all__ = ["cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


@attrs.define
class _State:
    """What the top-level options carry to every command."""

    config: Path | None
    debug: bool
    _project: LoadedProject | None = None

    def project(self) -> LoadedProject:
        """Load and validate project.json once per invocation."""
        if self._project is None:
            self._project = load_project(self.config)
        return self._project


def _fail(lines: list[str] | tuple[str, ...], code: int) -> NoReturn:
    for line in lines:
        click.echo(f"reflexkit: {line}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """A group whose commands turn our errors into one-line messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:  # noqa: ANN401 -- whatever the command returns
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except ConfigError as err:
            if _debugging(ctx):
                raise
            _fail(err.errors, EXIT_BAD_INPUT)
        except ReflexkitError as err:
            if _debugging(ctx):
                raise
            _fail([str(err)], EXIT_FAILED)
        except OSError as err:
            if _debugging(ctx):
                raise
            where = f"{err.filename}: " if err.filename else ""
            _fail([f"{where}{err.strerror or err}"], EXIT_FAILED)
        except Exception as err:
            if _debugging(ctx):
                raise
            _fail([f"internal error: {type(err).__name__}: {err} (run with --debug)"], EXIT_FAILED)


def _debugging(ctx: click.Context) -> bool:
    state = ctx.find_object(_State)
    return bool(state and state.debug)


def _state(ctx: click.Context) -> _State:
    return ctx.ensure_object(_State)


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


# --- config ---------------------------------------------------------------------------------


@cli.group()
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
    click.echo(f"reflexkit: {where}", err=True)
    click.echo(_serde.dumps(project.config, indent=True).decode())


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.pass_context
def config_init(ctx: click.Context, force: bool) -> None:
    """Write .reflexkit/project.json with every default spelled out."""
    target = _state(ctx).config or Path.cwd() / CONFIG_RELPATH
    if target.exists() and not force:
        _fail([f"{target}: already exists (use --force to overwrite)"], EXIT_FAILED)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_serde.dumps(ProjectConfig(), indent=True) + b"\n")
    click.echo(f"wrote {target}")


def main() -> None:
    """Run the command line (the ``reflexkit`` console script)."""
    cli.main(prog_name="reflexkit")
