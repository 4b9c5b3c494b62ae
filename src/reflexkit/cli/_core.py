"""What every command shares: the top-level state, exit codes and the error handler."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import attrs
import click

from reflexkit import _serde
from reflexkit._text import one_line
from reflexkit.containers import Application, build_application
from reflexkit.exceptions import ConfigError, ReflexkitError, RunInterrupted, SetupError
from reflexkit.models import FailureContext
from reflexkit.tasks.config import (
    GeneratorBackend,
    LoadedProject,
    load_project,
)
from reflexkit.tasks.task import check_id

F = TypeVar("F", bound=Callable[..., Any])

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_SIGNAL_BASE = 128


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
        click.echo(f"reflexkit: {one_line(line)}", err=True)
    sys.exit(code)


class _Group(click.Group):
    """A group whose commands turn our errors into one-line messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:  # noqa: ANN401, C901 -- one clause per error
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except RunInterrupted as err:
            name = signal.Signals(err.signum).name
            _fail([f"interrupted by {name}: the run was stopped"], EXIT_SIGNAL_BASE + err.signum)
        except ConfigError as err:
            if _debugging(ctx):
                raise
            _fail(err.errors, EXIT_BAD_INPUT)
        except SetupError as err:
            if _debugging(ctx):
                raise
            _fail([f"setup: {err}"], EXIT_BAD_INPUT)
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


def _read_failure(stream: IO[bytes], name: str) -> FailureContext:
    source = "stdin" if name in {"-", "<stdin>"} else name
    return _serde.structure(
        _serde.loads(stream.read(), source=source), FailureContext, source=source
    )


def _app(ctx: click.Context, *, backend: str | None = None, jobs: int | None = None) -> Application:
    project = _state(ctx).project()
    if backend is not None:
        reflexion = attrs.evolve(project.config.reflexion, backend=GeneratorBackend(backend))
        project = attrs.evolve(project, config=attrs.evolve(project.config, reflexion=reflexion))
    if jobs is not None:
        orchestrator = attrs.evolve(project.config.orchestrator, jobs=jobs)
        project = attrs.evolve(
            project, config=attrs.evolve(project.config, orchestrator=orchestrator)
        )
    app = build_application(project)
    ctx.call_on_close(app.shutdown_resources)  # closes the store and the HTTP client
    return app


def _check_id(value: str | None, what: str) -> None:
    if value is None:
        return
    try:
        check_id(None, None, value)  # type: ignore[arg-type]  # an attrs validator
    except ValueError as err:
        raise ConfigError([f"{what}: {err}"]) from None
