"""The ``reflexkit`` command.

Exit codes: 0 when done, 1 when the work failed, 2 for bad input, configuration or a setup
that can't work (agent not installed, bad quoting, missing extra), 130 or 143 when SIGINT or
SIGTERM stopped a run. Errors are one line each on stderr, never a traceback (unless
``--debug``). Everything printed from tool output, memory or task files is stripped of terminal
control sequences.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import shutil
import signal
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import IO, Any, NoReturn, TypeVar

import attrs
import click
import orjson
from dependency_injector import providers
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reflexkit import _serde, cli_insights
from reflexkit._reports_cli import calibrate_command
from reflexkit._text import one_line, strip_control
from reflexkit._version import __version__
from reflexkit.containers import Application, build_application
from reflexkit.exceptions import ConfigError, ReflexkitError, RunInterrupted, SetupError
from reflexkit.hooks.cli import hook
from reflexkit.memory import JsonlMemory
from reflexkit.memory.postgres import PostgresMemory
from reflexkit.models import FailureContext, Reflection, utcnow
from reflexkit.orchestrator import _process
from reflexkit.orchestrator.claude_code import ClaudeCodeSubagent
from reflexkit.orchestrator.events import Event, EventKind, RunLog, StagedEvents, led_to_success
from reflexkit.orchestrator.loop import RunSummary, run_order
from reflexkit.orchestrator.subagents import CommandSubagent, ScriptedSubagent, Subagent
from reflexkit.reflection.fixture import FixtureRecorder, fixture_key, request_options
from reflexkit.tasks.config import (
    CONFIG_RELPATH,
    GeneratorBackend,
    LoadedProject,
    ProjectConfig,
    ReflexionConfig,
    SubagentKind,
    VerificationConfig,
    load_project,
)
from reflexkit.tasks.task import Subtask, Task, check_id, load_task

__all__ = ["cli", "main"]

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


def _app(
    ctx: click.Context,
    *,
    backend: str | None = None,
    jobs: int | None = None,
    deterministic: bool = False,
) -> Application:
    project = _state(ctx).project()
    if backend is not None:
        reflexion = attrs.evolve(project.config.reflexion, backend=GeneratorBackend(backend))
        project = attrs.evolve(project, config=attrs.evolve(project.config, reflexion=reflexion))
    if deterministic:
        reflexion = attrs.evolve(project.config.reflexion, deterministic=True)
        project = attrs.evolve(project, config=attrs.evolve(project.config, reflexion=reflexion))
    if jobs is not None:
        orchestrator = attrs.evolve(project.config.orchestrator, jobs=jobs)
        project = attrs.evolve(
            project, config=attrs.evolve(project.config, orchestrator=orchestrator)
        )
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
    _fail_on_missing_fixtures(service)
    click.echo(
        _serde.dumps(reflection, indent=True).decode()
        if as_json
        else strip_control(_summary(reflection))
    )
    if not no_save and not service.save(reflection):
        _fail([f"could not save the reflection: {service.health.last_error}"], EXIT_FAILED)
    if recorder is not None and not recorder.recorded:
        reason = reflection.fallback_reason or "no reply"
        _fail([f"nothing recorded in {record}: Claude gave no reply ({reason})"], EXIT_FAILED)


def _warn_nondeterministic(app: Application, *, run_id: str | None, recording: bool) -> None:
    """Say on stderr what keeps a deterministic run from repeating byte for byte."""
    if not app.project().config.reflexion.deterministic:
        return
    problems = []
    if run_id is None:
        problems.append("no --run-id: the run id, and so every reflection id, is random")
    if recording or app.project().config.reflexion.backend is GeneratorBackend.LLM:
        problems.append("backend llm: Claude's replies differ between runs (use fixture)")
    for problem in problems:
        click.echo(f"reflexkit: warning: --deterministic with {problem}", err=True)


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
    previous = service.previous(clean)  # exactly what generate() hands the generator
    click.echo(
        fixture_key(
            clean,
            previous=previous,
            root=project.root,
            **request_options(project.config.reflexion),
        )
    )


# --- memory -------------------------------------------------------------------------------


def _check_id(value: str | None, what: str) -> None:
    if value is None:
        return
    try:
        check_id(None, None, value)  # type: ignore[arg-type]  # an attrs validator
    except ValueError as err:
        raise ConfigError([f"{what}: {err}"]) from None


@cli.command()
@click.argument("subtask_id")
@click.option(
    "--task",
    "task_id",
    default=None,
    help="Only reflections of this task (subtask ids repeat across tasks).",
)
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
def recent(
    ctx: click.Context,
    subtask_id: str,
    task_id: str | None,
    limit: int | None,
    format_: str,
) -> None:
    """Show the most recent reflections of a subtask, oldest first.

    Ids are letters, digits, '.', '_' and '-' (at most 100). Lessons of different runs are
    never merged; those of runs before the newest one are headed "Earlier run".
    """
    _check_id(subtask_id, "SUBTASK_ID")
    _check_id(task_id, "--task")
    app = _app(ctx)
    limit = limit or app.project().config.reflexion.max_reflections_per_retry
    records = app.memory.store().recent(subtask_id, limit=limit, task_id=task_id)
    if format_ == "json":
        click.echo(_serde.dumps(records, indent=True).decode())  # JSON escapes controls
    else:
        click.echo(strip_control(app.reflection.service().format_for_prompt(records)), nl=False)


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
    store = app.memory.store()
    figures = store.stats()
    helped_ids = led_to_success(app.project().root / ".reflexkit" / "runs")
    helped = [r for r in store if r.id in helped_ids] if helped_ids else []
    by_category = Counter(r.category.value for r in helped)
    by_source = Counter(r.source.value for r in helped)
    if as_json:
        data = _serde.unstructure(figures)
        data["ledToSuccess"] = {
            "records": len(helped),
            "byCategory": dict(by_category),
            "bySource": dict(by_source),
        }
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    console = Console()
    table = Table(title="reflexkit memory", caption=strip_control(str(app.project().memory_path)))
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
    table.add_row("led to success (from run logs)", str(len(helped)))
    for title, counts in (("category", by_category), ("source", by_source)):
        for key, value in sorted(counts.items()):
            table.add_row(f"  led to success, {title}: {key}", str(value))
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


# --- the orchestrator ---------------------------------------------------------------------


def _describe(event: Event) -> str | None:  # noqa: C901, PLR0912 -- one case per kind
    """One plain line per event worth a line, for the terminal."""
    data, where = event.data, f"[{event.subtask_id}] attempt {event.attempt}"
    text: str | None = None
    match event.kind:
        case EventKind.ATTEMPT_STARTED:
            text = "the subagent is working"
        case EventKind.VERIFICATION_FAILED if data.get("subagentOk") is False:
            text = f"the subagent failed: {data.get('subagentError')}"
        case EventKind.VERIFICATION_FAILED if data.get("timedOut"):
            text = f"verification timed out: `{data.get('command')}` was killed"
        case EventKind.VERIFICATION_FAILED:
            text = f"verification failed: `{data.get('command')}` exited {data.get('exitCode')}"
        case EventKind.REFLECTION_GENERATED:
            fell_back = f", fell back: {data['reason']}" if data.get("reason") else ""
            text = f"reflection ({data.get('source')}{fell_back}): {data.get('category')}"
        case EventKind.RETRY:
            text = "retrying with the lessons in the prompt"
        case EventKind.PASSED:
            text = "passed"
        case EventKind.STUCK | EventKind.EXHAUSTED | EventKind.BUDGET_SPENT:
            text = f"{event.kind.value}, giving up on this subtask: {data.get('reason')}"
        case EventKind.SKIPPED:
            text = f"skipped: {data.get('reason')}"
        case EventKind.SETUP_FAILED:
            text = f"setup error: {data.get('reason')}"
        case EventKind.INTERRUPTED:
            text = f"interrupted by {data.get('signal')}"
        case EventKind.PAUSED:  # insights (#17)
            text = f"paused, not attempted: {data.get('reason')} (reflexkit resume to retry)"
        case EventKind.FINDING:  # insights (#17)
            text = f"finding ({data.get('rule')}): {data.get('detail')}"
    if text is None:
        return None
    if not event.subtask_id:
        return one_line(text)
    return one_line(f"{where}: {text}")


_STYLES = {
    EventKind.VERIFICATION_FAILED: "red",
    EventKind.REFLECTION_GENERATED: "cyan",
    EventKind.PASSED: "bold green",
    EventKind.STUCK: "bold yellow",
    EventKind.EXHAUSTED: "bold red",
    EventKind.BUDGET_SPENT: "bold red",
    EventKind.SETUP_FAILED: "bold red",
    EventKind.INTERRUPTED: "bold red",
}


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn the first SIGINT or SIGTERM into :class:`RunInterrupted`; ignore later ones.

    The loop then kills what runs and writes ``run_interrupted``; a second Ctrl-C can't cut
    that clean-up short. Outside the main thread (no signals there) this does nothing.
    """
    watched = (signal.SIGINT, signal.SIGTERM)

    def handler(signum: int, _frame: object) -> None:
        for number in watched:
            signal.signal(number, signal.SIG_IGN)
        raise RunInterrupted(signum)

    try:
        previous = {number: signal.signal(number, handler) for number in watched}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


def _orchestrate(
    app: Application, task: Task, agent: Subagent, workdir: Path, *, run_id: str | None = None
) -> RunSummary:
    """Run a task through the application's loop; log and show events.

    In deterministic mode (#16) the run log's times come from the reflections' logical clock,
    durations are 0, and subtask events are written in sequential order even with --jobs.
    """
    run_id = run_id or uuid.uuid4().hex
    log_path = app.project().root / ".reflexkit" / "runs" / f"{run_id}.jsonl"
    if log_path.exists():
        _fail([f"--run-id {run_id}: a run log already exists at {log_path}"], EXIT_BAD_INPUT)
    deterministic = app.project().config.reflexion.deterministic
    console = Console()
    live = console.is_terminal  # a spinner and colours on a terminal, plain lines otherwise
    status = console.status("starting the run") if live else contextlib.nullcontext()
    run_log = RunLog(
        log_path,
        clock=app.reflection.clock() if deterministic else None,
        normalise_durations=True if deterministic else None,
    )
    write = StagedEvents(run_log, run_order(task)) if deterministic else run_log
    with run_log, status as spinner:

        def on_event(event: Event) -> None:
            write(event)
            line = _describe(event)
            if not line:
                return
            if spinner is None:
                click.echo(line)
                return
            console.print(line, style=_STYLES.get(event.kind, ""), markup=False, highlight=False)
            spinner.update(escape(line))

        orchestrator = app.orchestration.orchestrator(subagent=agent, on_event=on_event)
        with _stop_on_signals():
            summary: RunSummary = orchestrator.run(task, workdir=workdir, run_id=run_id)
    table = Table(title=f"run {run_id[:12]} of task {task.id}", caption=f"run log: {log_path}")
    for column in ("subtask", "outcome", "attempts", "time", "reflections used"):
        table.add_column(column, justify="left" if column in {"subtask", "outcome"} else "right")
    for o in summary.outcomes:
        table.add_row(
            strip_control(o.subtask_id),
            o.outcome,
            str(o.attempts),
            f"{o.duration_ms / 1000:.1f} s",
            str(o.reflections_used),
        )
    Console().print(table)
    return summary


def _scripted(path: Path) -> ScriptedSubagent:
    data = _serde.loads(path.read_bytes(), source=str(path))
    problems = []
    if not isinstance(data, dict):
        problems.append(f"{path}: $: expected an object of subtask ids, got {_serde.kind(data)}")
    else:
        for subtask, attempts in data.items():
            if not isinstance(attempts, list) or not all(
                isinstance(edit, dict) and all(isinstance(v, str | None) for v in edit.values())
                for edit in attempts
            ):
                problems.append(
                    f"{path}: $.{subtask}: expected a list of attempts, each an object of"
                    " file paths to new contents (null deletes the file)"
                )
    if problems:
        raise ConfigError(problems)
    return ScriptedSubagent(data)


@cli.command()
@click.argument("task_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--subagent",
    type=click.Choice([k.value for k in SubagentKind]),
    default=None,
    help="Who makes the changes: any command-line agent, Claude Code (extra claude-code), "
    "or scripted edits (default: orchestrator.subagent, command).",
)
@click.option(
    "--agent-command",
    default=None,
    help="For --subagent command: the agent's command line; {prompt_file} becomes a file "
    "holding the prompt, else the prompt goes to its stdin (default: "
    "orchestrator.agentCommand).",
)
@click.option(
    "--script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="For --subagent scripted: JSON, per subtask id a list of attempts, each an object "
    "of file paths to new contents.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="How many independent subtasks run at once (default: orchestrator.jobs, 1). They "
    "share the project folder, so they should touch different files.",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Derived reflection ids, a logical clock, durations 0, events in sequential order: "
    "two runs of the same task write the same bytes (default: reflexion.deterministic).",
)
@click.option("--run-id", default=None, help="The run's id (default: a fresh random one).")
@click.option(
    "--record-fixtures",
    "record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Reflect with Claude and append its replies to this fixture file, for offline replay.",
)
@click.pass_context
def run(  # noqa: PLR0913, PLR0917 -- click passes one parameter per option
    ctx: click.Context,
    task_file: Path,
    subagent: str | None,
    agent_command: str | None,
    script: Path | None,
    jobs: int | None,
    deterministic: bool,
    run_id: str | None,
    record: Path | None,
) -> None:
    """Run a task: attempt, verify, reflect and retry each subtask until it passes.

    Verification runs each subtask's `verify` commands, else the project's
    verification.commands, in the project root. Exit 0 only when every subtask passed;
    exit 2 (after the run) when the fixture backend missed a key under fixtureMiss error.
    """
    _check_id(run_id, "--run-id")
    task = load_task(task_file)
    app = _app(
        ctx,
        jobs=jobs,
        deterministic=deterministic,
        backend=GeneratorBackend.LLM.value if record is not None else None,
    )
    settings = app.project().config.orchestrator
    agent: Subagent
    kind = subagent or settings.subagent
    if kind == SubagentKind.CLAUDE_CODE:
        agent = ClaudeCodeSubagent.from_config(settings)
    elif kind == SubagentKind.COMMAND:
        try:
            argv = shlex.split(agent_command) if agent_command else list(settings.agent_command)
        except ValueError as err:
            _fail([f"--agent-command: cannot parse {agent_command!r}: {err}"], EXIT_BAD_INPUT)
        if not argv:
            _fail(
                ["--subagent command needs --agent-command (or orchestrator.agentCommand)"],
                EXIT_BAD_INPUT,
            )
        agent = CommandSubagent(argv, prompt_dir=app.project().root / ".reflexkit" / "prompts")
    else:
        if script is None:
            _fail(["--subagent scripted needs --script FILE"], EXIT_BAD_INPUT)
        agent = _scripted(script)
    _warn_nondeterministic(app, run_id=run_id, recording=record is not None)
    project_checks = app.project().config.verification.commands
    unchecked = [s.id for s in task.subtasks if not s.verify and not project_checks]
    if unchecked and not task.require_verification:  # when required, the run says why it stops
        click.echo(
            "reflexkit: warning: no verification configured for "
            + ", ".join(unchecked)
            + ": an attempt passes as soon as the agent finishes",
            err=True,
        )
    with contextlib.ExitStack() as stack:
        if record is not None:
            recorder = FixtureRecorder(app.reflection.claude(), record)
            stack.enter_context(app.reflection.claude.override(providers.Object(recorder)))
        summary = _orchestrate(app, task, agent, app.project().root, run_id=run_id)
    _fail_on_missing_fixtures(app.reflection.service())
    if summary.setup_error is not None:
        _fail([f"setup: {summary.setup_error}"], EXIT_BAD_INPUT)
    if not summary.passed:
        _fail([f"not every subtask passed ({len(summary.outcomes)} run)"], EXIT_FAILED)


# --- demo ---------------------------------------------------------------------------------

_DEMO_BUG = "return round(price_cents * percent / 100)"
_DEMO_WRONG_FIX = "return price_cents - percent"
_DEMO_RIGHT_FIX = "return round(price_cents * (100 - percent) / 100)"


@cli.command()
def demo() -> None:
    """Fix a real bug with the retry loop, offline: fail, reflect, retry with the lesson, pass.

    A copy of a small bundled project (a discount function that returns the discount instead
    of the discounted price, and its unittest suite) is fixed in a temporary folder. A
    scripted subagent stands in for Claude Code; verification, reflection (the heuristic: no
    API key, no network), memory and the retry prompt are the real ones.
    """
    with tempfile.TemporaryDirectory(prefix="reflexkit-demo-") as tmp:
        root = Path(tmp) / "cart-project"
        with resources.as_file(resources.files("reflexkit") / "_demo" / "project") as bundled:
            shutil.copytree(bundled, root, ignore=shutil.ignore_patterns("__pycache__"))
        source = (root / "cart" / "pricing.py").read_text()
        config = ProjectConfig(
            reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC),
            verification=VerificationConfig(
                commands=(f"{shlex.quote(sys.executable)} -m unittest",)
            ),
        )
        app = build_application(LoadedProject(config=config, root=root))
        click.get_current_context().call_on_close(app.shutdown_resources)
        task = Task(
            id="cart",
            description="The cart project's discounts are wrong.",
            subtasks=(
                Subtask(
                    id="fix-discount",
                    description="apply_discount() in cart/pricing.py returns the discount "
                    "instead of the discounted price; make the unittest suite pass.",
                ),
            ),
        )
        agent = ScriptedSubagent(
            {
                "fix-discount": [
                    {"cart/pricing.py": source.replace(_DEMO_BUG, _DEMO_WRONG_FIX)},
                    {"cart/pricing.py": source.replace(_DEMO_BUG, _DEMO_RIGHT_FIX)},
                ]
            }
        )
        click.echo(
            "reflexkit demo: a retry loop that learns, on a copy of a small project with a real\n"
            "bug and real tests. A SCRIPTED SUBAGENT stands in for Claude Code: its two edits\n"
            "are fixed in advance (a plausible wrong fix, then the right one). Verification runs\n"
            "the project's real unittest suite; the reflection is written by the heuristic\n"
            "generator (no API key, no network).\n"
        )
        summary = _orchestrate(app, task, agent, root)
        if len(agent.prompts) > 1:
            click.echo("\n--- the prompt attempt 2 got " + "-" * 46)
            click.echo(agent.prompts[1])
        if not summary.passed:
            _fail(["the demo did not pass: this is a bug, please report it"], EXIT_FAILED)


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
