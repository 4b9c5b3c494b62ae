"""What every command shares: the top-level state, exit codes and the error handler."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from reflexkit import _log
from reflexkit._text import one_line
from reflexkit.cli._output import say
from reflexkit.exceptions import ConfigError, ReflexkitError, RunInterrupted, SetupError

if TYPE_CHECKING:
    from reflexkit.containers import Application
    from reflexkit.memory import EpisodicMemory
    from reflexkit.reflection._service import DefaultReflectionService
    from reflexkit.tasks._config import LoadedProject

# Imports of the heavy parts (dependency_injector, cattrs, rich, the readers) happen inside
# the functions that need them, so `reflexkit --version` and `--help` cost click alone.

T = TypeVar("T")

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_SIGNAL_BASE = 128


class _State:
    """What the global options (before or after the subcommand) carry to every command."""

    def __init__(
        self,
        config: Path | None = None,
        *,
        debug: bool = False,
        subreaper: bool = False,
    ) -> None:
        self.config = config
        self.debug = debug
        self.subreaper = subreaper  # main() asks for it; an embedding program doesn't
        self.json = False
        self._project: LoadedProject | None = None

    def project(self) -> LoadedProject:
        """Load and validate project.json once per invocation."""
        if self._project is None:
            from reflexkit.tasks._config import load_project  # noqa: PLC0415 -- lazy, see top

            self._project = load_project(self.config)
        return self._project


def _set_logging(*, debug: bool) -> None:
    _log.configure(debug=debug)


def _global(ctx: click.Context, param: click.Parameter, value: Path | bool | None) -> None:
    """Keep a global option given before or after the command name on the one state."""
    if value:
        setattr(_state(ctx), str(param.name), value)
        if param.name == "debug":
            _set_logging(debug=True)


def global_options() -> list[click.Option]:
    """``--config``, ``--debug`` and ``--json``, for the group and every command under it."""
    return [
        click.Option(
            ["--config"],
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            expose_value=False,
            callback=_global,
            help="project.json to use (default: $REFLEXKIT_CONFIG, else "
            ".reflexkit/project.json here or in the nearest parent).",
        ),
        click.Option(
            ["--debug"],
            is_flag=True,
            expose_value=False,
            callback=_global,
            help="Show tracebacks and debug logs.",
        ),
        click.Option(
            ["--json"],
            is_flag=True,
            expose_value=False,
            callback=_global,
            help="Print the result as camelCase JSON where the command has one.",
        ),
    ]


def add_global_options(command: click.Command) -> None:
    """Accept the global options on *command* and, for a group, on every command under it.

    A command that has an option of the same name already (``reflect --json``) keeps its own.
    """
    taken = {opt for param in command.params for opt in getattr(param, "opts", ())}
    command.params.extend(o for o in global_options() if not taken.intersection(o.opts))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_global_options(sub)


reports_option = click.option(
    "--reports",
    "reports_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The reports folder (default: reports.path of project.json).",
)


def reports_folder(ctx: click.Context, given: Path | None) -> Path:
    """The reports folder: *given* (``--reports``), else ``reports.path`` of project.json."""
    project = _state(ctx).project()  # a bad project.json: one line per error, exit 2
    return given or project.root / project.config.reports.path


def read_corpus(
    name: str, read: Callable[..., tuple[list[T], int, list[str]]], *, limit: int
) -> tuple[str, list[T], int, tuple[str, ...]]:
    """Read the JSON Lines corpus *name* (``-``: stdin) with *read*; exit 2 if no line is valid.

    Returns its name, the values, how many lines were invalid and the first problems (each
    said on stderr as skipped).
    """
    from reflexkit import _serde  # noqa: PLC0415 -- lazy, see top

    where, raw = _serde.read_named(name, limit=limit)
    values, invalid, problems = read(raw, source=where)
    if invalid and not values:
        _fail([f"{where}: no valid line", *problems], EXIT_BAD_INPUT)
    for line in problems:
        say(f"reflexkit: skipped {line}", err=True)
    return where, values, invalid, tuple(problems)


def _fail(lines: Sequence[str], code: int) -> NoReturn:
    """Print each error line through the outbound gate, on one line each, and exit *code*.

    Error lines quote what was wrong (a value in project.json, a field of the input): a
    key pasted into the wrong field must not reach the terminal.
    """
    from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- only on the way out

    for line in lines:
        click.echo(f"reflexkit: {one_line(outbound(line, 'terminal'))}", err=True)
    sys.exit(code)


def _usage_failed(err: click.ClickException) -> NoReturn:
    """Print click's own error (usage, bad value, no such command) through the gate; exit.

    click quotes what was typed (``Invalid value for '--limit': '<value>'``): a token pasted
    in the wrong place reaches the terminal redacted, its escape sequences shown.
    """
    import io  # noqa: PLC0415 -- only on a bad command line

    from reflexkit.redaction._gate import outbound  # noqa: PLC0415 -- the same

    said = io.StringIO()
    err.show(file=said)
    click.echo(outbound(said.getvalue(), "terminal"), err=True, nl=False)
    sys.exit(err.exit_code)


class _Group(click.Group):
    """A group whose commands turn our errors into one-line messages and exit codes."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,  # noqa: ANN401 -- click's context settings
    ) -> Any:  # noqa: ANN401 -- what the command returns
        """Click's ``main``, with its errors printed through the gate (:func:`_usage_failed`)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            done = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as err:
            _usage_failed(err)
        except click.exceptions.Abort:
            say("Aborted!", err=True)
            sys.exit(EXIT_FAILED)
        sys.exit(done if isinstance(done, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:  # noqa: ANN401 -- what the command returns
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except RunInterrupted as err:
            import signal  # noqa: PLC0415 -- only `run` is ever interrupted

            name = signal.Signals(err.signum).name
            _fail([f"interrupted by {name}: the run was stopped"], EXIT_SIGNAL_BASE + err.signum)
        except Exception as err:  # noqa: BLE001 -- each ends as one line, or a gated traceback
            if isinstance(err, OSError):
                from reflexkit.cli._streams import exit_if_reader_left  # noqa: PLC0415

                exit_if_reader_left(err)  # `reflexkit recent s1 | head -1`: quietly, exit 141
            if _debugging(ctx):  # the traceback, through the gate like every line
                import traceback  # noqa: PLC0415 -- only with --debug

                say(traceback.format_exc(), err=True, nl=False)
                sys.exit(_said(err)[1])
            _fail(*_said(err))


@functools.singledispatch
def _said(err: Exception) -> tuple[Sequence[str], int]:
    """The lines and the exit code an error ends a command with (by its most specific class)."""
    return [f"internal error: {type(err).__name__}: {err} (run with --debug)"], EXIT_FAILED


@_said.register
def _(err: ConfigError) -> tuple[Sequence[str], int]:
    return err.errors, EXIT_BAD_INPUT


@_said.register
def _(err: SetupError) -> tuple[Sequence[str], int]:
    return [f"setup: {err}"], EXIT_BAD_INPUT


@_said.register
def _(err: ReflexkitError) -> tuple[Sequence[str], int]:
    from reflexkit.cli._setup import is_setup_error  # noqa: PLC0415 -- only on error

    return [str(err)], EXIT_BAD_INPUT if is_setup_error(err) else EXIT_FAILED


@_said.register
def _(err: OSError) -> tuple[Sequence[str], int]:
    where = f"{err.filename}: " if err.filename else ""
    return [f"{where}{err.strerror or err}"], EXIT_FAILED


def _debugging(ctx: click.Context) -> bool:
    state = ctx.find_object(_State)
    return bool(state and state.debug)


def _state(ctx: click.Context) -> _State:
    return ctx.ensure_object(_State)


def _project(
    ctx: click.Context,
    *,
    backend: str | None = None,
    jobs: int | None = None,
    deterministic: bool = False,
    orchestrator: dict[str, Any] | None = None,
) -> LoadedProject:
    """The project, with the command's overrides of project.json applied.

    *orchestrator* holds fields of the ``orchestrator`` section to replace
    (``max_attempts`` ...), as the command's options give them.
    """
    import attrs  # noqa: PLC0415 -- lazy, see top

    from reflexkit.tasks._config import GeneratorBackend  # noqa: PLC0415

    project = _state(ctx).project()
    if backend is not None or deterministic:
        old = project.config.reflexion
        try:  # the same checks as project.json: --deterministic with backend llm is refused
            reflexion = attrs.evolve(
                old,
                backend=GeneratorBackend(backend) if backend is not None else old.backend,
                deterministic=deterministic or old.deterministic,
            )
            config = attrs.evolve(project.config, reflexion=reflexion)
        except ValueError as err:
            flag = "--deterministic" if deterministic else f"backend {backend}"
            raise ConfigError([f"{flag}: {err}"]) from None
        project = attrs.evolve(project, config=config)
    changes = {**(orchestrator or {}), **({"jobs": jobs} if jobs is not None else {})}
    if changes:
        section = attrs.evolve(project.config.orchestrator, **changes)
        project = attrs.evolve(project, config=attrs.evolve(project.config, orchestrator=section))
    return project


def _app(ctx: click.Context, project: LoadedProject | None = None) -> Application:
    """The application of *project* (the command's, by default), closed when it ends."""
    from reflexkit.containers import build_application  # noqa: PLC0415 -- lazy, see top

    app = build_application(project or _project(ctx))
    ctx.call_on_close(app.shutdown_resources)  # closes the store and the HTTP client
    return app


def _store(ctx: click.Context) -> EpisodicMemory:
    """The project's memory, closed when the command ends."""
    found: EpisodicMemory = _app(ctx).memory.store()
    return found


def _service(ctx: click.Context, *, backend: str | None = None) -> DefaultReflectionService:
    """The reflection service over the project's memory, closed when the command ends."""
    found: DefaultReflectionService = _app(ctx, _project(ctx, backend=backend)).reflection.service()
    return found


def _check_id(value: str | None, what: str) -> None:
    if value is None:
        return
    from reflexkit.models import check_id  # noqa: PLC0415 -- lazy, see top

    try:
        check_id(None, None, value)  # type: ignore[arg-type]  # an attrs validator
    except ValueError as err:
        raise ConfigError([f"{what}: {err}"]) from None


def _fail_on_missing_fixtures(service: object) -> None:
    """Exit 2 listing the fixture keys the fixture backend missed (``fixtureMiss: error``)."""
    health = getattr(service, "health", None)
    missing = list(getattr(health, "missing_fixtures", ()))
    if missing:
        _fail(
            [
                f"no recorded reply for fixture key {key} (nothing stored; record it, or set "
                "reflexion.fixtureMiss to heuristic)"
                for key in missing
            ],
            EXIT_BAD_INPUT,
        )
