"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input or configuration. Errors are
one line each on stderr, never a traceback (unless ``--debug``).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
from collections.abc import Callable
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import attrs
import click
from dependency_injector import providers
from rich.console import Console
from rich.table import Table

from reflexkit import _serde
from reflexkit._version import __version__
from reflexkit.containers import Application, build_application
from reflexkit.exceptions import ConfigError, ReflexkitError
from reflexkit.memory import JsonlMemory
from reflexkit.memory.postgres import PostgresMemory
from reflexkit.models import FailureContext, Reflection, utcnow
from reflexkit.reflection.fixture import FixtureRecorder, fixture_key
from reflexkit.tasks.config import (
    CONFIG_RELPATH,
    GeneratorBackend,
    LoadedProject,
    ProjectConfig,
    ReflexionConfig,
    load_project,
)

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


# --- reflections ----------------------------------------------------------------------------


def _read_failure(stream: IO[bytes], name: str) -> FailureContext:
    source = "stdin" if name in {"-", "<stdin>"} else name
    return _serde.structure(
        _serde.loads(stream.read(), source=source), FailureContext, source=source
    )


def _app(ctx: click.Context, *, backend: str | None = None) -> Application:
    project = _state(ctx).project()
    if backend is not None:
        reflexion = attrs.evolve(project.config.reflexion, backend=GeneratorBackend(backend))
        project = attrs.evolve(project, config=attrs.evolve(project.config, reflexion=reflexion))
    app = build_application(project)
    ctx.call_on_close(app.shutdown_resources)  # closes the store and the HTTP client
    return app


def _summary(reflection: Reflection) -> str:
    lines = [
        (
            f"{reflection.category.value} ({reflection.failure_type.value}), "
            f"source {reflection.source.value}, confidence {reflection.confidence:.2f}"
        ),
    ]
    if reflection.fallback_reason:
        lines.append(f"fell back: {reflection.fallback_reason}")
    lines += ["", f"Analysis: {reflection.analysis}", "", f"Suggestion: {reflection.suggestion}"]
    if reflection.action_items:
        lines += ["", "Action items:", *(f"  - {item}" for item in reflection.action_items)]
    return "\n".join(lines)


@cli.command()
@click.option(
    "--input",
    "input_",
    type=click.File("rb"),
    default="-",
    show_default=True,
    help="A FailureContext as camelCase JSON; - reads stdin.",
)
@click.option(
    "--backend",
    type=click.Choice([b.value for b in GeneratorBackend]),
    default=None,
    help="Override reflexion.backend of project.json.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the reflection as camelCase JSON.")
@click.option("--no-save", is_flag=True, help="Don't append the reflection to memory.")
@click.option(
    "--record-fixtures",
    "record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Ask Claude and append its reply to this fixture file, for offline replay.",
)
@click.pass_context
def reflect(  # noqa: PLR0913, PLR0917 -- click passes one parameter per option
    ctx: click.Context,
    input_: IO[bytes],
    backend: str | None,
    as_json: bool,
    no_save: bool,
    record: Path | None,
) -> None:
    """Reflect on one failure and append the reflection to memory.

    With --record-fixtures the reflection comes from Claude (backend llm) and its reply is
    recorded, so that `--backend fixture` replays it later without the network. Exit 1 when
    the reflection could not be saved or, when recording, when Claude gave no reply to record
    (the fallback reflection is printed all the same).
    """
    if record is not None and backend not in {None, GeneratorBackend.LLM.value}:
        _fail(
            [f"--record-fixtures records Claude's replies; it can't go with --backend {backend}"],
            EXIT_BAD_INPUT,
        )
    failure = _read_failure(input_, getattr(input_, "name", "-"))
    app = _app(ctx, backend=GeneratorBackend.LLM.value if record is not None else backend)
    recorder = None
    with contextlib.ExitStack() as stack:
        if record is not None:
            recorder = FixtureRecorder(app.reflection.claude(), record)
            stack.enter_context(app.reflection.claude.override(providers.Object(recorder)))
        service = app.reflection.service()
        reflection = service.generate(failure)
    click.echo(_serde.dumps(reflection, indent=True).decode() if as_json else _summary(reflection))
    if not no_save and not service.save(reflection):
        _fail([f"could not save the reflection: {service.health.last_error}"], EXIT_FAILED)
    if recorder is not None and not recorder.recorded:
        reason = reflection.fallback_reason or "no reply"
        _fail([f"nothing recorded in {record}: Claude gave no reply ({reason})"], EXIT_FAILED)


@cli.group()
def fixtures() -> None:
    """Recorded Claude replies, replayed offline by `--backend fixture`."""


@fixtures.command("key")
@click.option(
    "--input",
    "input_",
    type=click.File("rb"),
    default="-",
    show_default=True,
    help="A FailureContext as camelCase JSON; - reads stdin.",
)
@click.pass_context
def fixtures_key(ctx: click.Context, input_: IO[bytes]) -> None:
    """Print the fixture key that reflecting on a failure asks for.

    The key is the first 12 hex digits of the sha256 of the request Claude would get: the
    failure as the service prepares it (redacted, classified), the subtask's recent
    reflections in memory, the model and the output mode.
    """
    failure = _read_failure(input_, getattr(input_, "name", "-"))
    app = _app(ctx)
    project = app.project()
    service = app.reflection.service()
    clean, _, _ = service.prepare(failure)
    previous = service.get_recent(clean.subtask_id)
    click.echo(
        fixture_key(
            clean, model=project.config.reflexion.model, previous=previous, root=project.root
        )
    )


# --- memory -------------------------------------------------------------------------------


@cli.command()
@click.argument("subtask_id")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="How many reflections (default: reflexion.maxReflectionsPerRetry).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["prompt", "json"]),
    default="prompt",
    show_default=True,
    help="The retry-prompt section, or the records as a JSON list.",
)
@click.pass_context
def recent(ctx: click.Context, subtask_id: str, limit: int | None, format_: str) -> None:
    """Show the most recent reflections of a subtask, oldest first."""
    app = _app(ctx)
    limit = limit or app.project().config.reflexion.max_reflections_per_retry
    records = app.memory.store().recent(subtask_id, limit=limit)
    if format_ == "json":
        click.echo(_serde.dumps(records, indent=True).decode())
    else:
        click.echo(app.reflection.service().format_for_prompt(records), nl=False)


@cli.command()
@click.option(
    "--older-than",
    "days",
    type=click.IntRange(min=0),
    default=None,
    help="Age in days (default: reflexion.retentionDays).",
)
@click.option("--dry-run", is_flag=True, help="Count what would go; remove nothing.")
@click.pass_context
def prune(ctx: click.Context, days: int | None, dry_run: bool) -> None:
    """Remove reflections older than a number of days."""
    app = _app(ctx)
    days = days if days is not None else app.project().config.reflexion.retention_days
    cutoff = utcnow() - timedelta(days=days)
    store = app.memory.store()
    if dry_run:
        count = sum(1 for r in store if r.created_at < cutoff)
        click.echo(f"would remove {count} reflections older than {days} days")
    else:
        count = store.prune(older_than=cutoff)
        click.echo(f"removed {count} reflections older than {days} days")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as camelCase JSON.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Count what memory holds: records, subtasks, categories, failure types, corrupt lines."""
    app = _app(ctx)
    figures = app.memory.store().stats()
    if as_json:
        click.echo(_serde.dumps(figures, indent=True).decode())
        return
    console = Console()
    table = Table(title="reflexkit memory", caption=str(app.project().memory_path))
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("records", str(figures.records))
    table.add_row("subtasks", str(figures.subtasks))
    table.add_row("corrupt lines skipped", str(figures.corrupt))
    if figures.size_bytes is not None:
        table.add_row("file size (bytes)", str(figures.size_bytes))
    for title, counts in (
        ("category", figures.by_category),
        ("failure type", figures.by_failure_type),
        ("source", figures.by_source),
    ):
        for key, value in sorted(counts.items()):
            table.add_row(f"{title}: {key}", str(value))
    console.print(table)


@cli.group()
def memory() -> None:
    """Move and sync reflections between memory backends."""


@memory.command("copy")
@click.option(
    "--from", "source", type=click.Choice(["jsonl", "postgres"]), required=True, help="Copy from."
)
@click.option(
    "--to", "target", type=click.Choice(["jsonl", "postgres"]), required=True, help="Copy to."
)
@click.pass_context
def memory_copy(ctx: click.Context, source: str, target: str) -> None:
    """Copy every reflection from one backend to the other; safe to run again.

    The JSONL side is memory.path of project.json, the postgres side the database that
    $REFLEXKIT_DATABASE_URL (or memory.dsnEnv) names. A reflection already in the target
    (same id) is skipped, so a second run copies nothing.
    """
    if source == target:
        _fail([f"--from and --to are both {source}: nothing to copy"], EXIT_BAD_INPUT)
    project = _state(ctx).project()
    jsonl = JsonlMemory(project.memory_path, durability=project.config.memory.durability)
    with PostgresMemory(project.database_url(), spool=project.spool_path) as postgres:
        if target == "postgres":
            total = sum(1 for _ in jsonl)
            added = postgres.add_many(iter(jsonl))
        else:
            seen = {r.id for r in jsonl}
            total = added = 0
            for r in postgres:
                total += 1
                if r.id not in seen:
                    jsonl.append(r)
                    seen.add(r.id)
                    added += 1
    click.echo(
        f"copied {added} reflections from {source} to {target} ({total - added} already there)"
    )


@memory.command("sync")
@click.pass_context
def memory_sync(ctx: click.Context) -> None:
    """Replay the reflections spooled while the database was away (postgres backend)."""
    project = _state(ctx).project()
    with PostgresMemory(project.database_url(), spool=project.spool_path) as postgres:
        count = postgres.sync()
    click.echo(f"replayed {count} spooled reflections into the database")


# --- demo ---------------------------------------------------------------------------------


@cli.command()
def demo() -> None:
    """Reflect on a bundled real failure and show the retry prompt (no API key, no network).

    The failure is the real output of `python -m unittest` on a small example project whose discount
    function returns the discount instead of the discounted price. Memory lives in a
    temporary folder that is removed afterwards.
    """
    bundled = resources.files("reflexkit") / "_demo" / "failure.json"
    failure = _serde.structure(_serde.loads(bundled.read_bytes()), FailureContext)
    with tempfile.TemporaryDirectory(prefix="reflexkit-demo-") as tmp:
        config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
        app = build_application(LoadedProject(config=config, root=Path(tmp)))
        click.get_current_context().call_on_close(app.shutdown_resources)
        service = app.reflection.service()
        click.echo("reflexkit demo: the heuristic generator (no API key, no network) reflects on")
        click.echo("a real unittest failure of a small example project.\n")
        click.echo(f"subtask:  {failure.description}")
        click.echo(
            f"attempt:  {failure.attempt_number}, `{failure.command}` exited {failure.exit_code}"
        )
        heads = [line for line in failure.error_output.splitlines() if line.startswith("FAIL:")]
        click.echo("output:   " + "\n          ".join(heads) + "\n")
        reflection = service.generate(failure)
        saved = service.save(reflection)
        click.echo("--- reflection " + "-" * 60)
        click.echo(_summary(reflection))
        click.echo("\n--- the prompt of attempt 2 gets this section " + "-" * 29)
        click.echo(service.format_for_prompt(service.get_recent(failure.subtask_id)), nl=False)
        if not saved:
            _fail([f"could not save the reflection: {service.health.last_error}"], EXIT_FAILED)


def main() -> None:
    """Run the command line (the ``reflexkit`` console script)."""
    cli.main(prog_name="reflexkit")
