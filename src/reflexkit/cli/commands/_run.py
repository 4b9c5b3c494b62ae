"""``reflexkit run``: a task through the retry loop, shown live and logged."""

from __future__ import annotations

import contextlib
import shlex
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict, Unpack

import attrs
import click
from rich.markup import escape

from reflexkit import _serde
from reflexkit.cli import _streams
from reflexkit.cli._console import _STYLES, _describe
from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    _app,
    _check_id,
    _fail,
    _fail_on_missing_fixtures,
    _project,
    _state,
)
from reflexkit.cli._output import say, say_json, say_on, say_table
from reflexkit.containers import Application
from reflexkit.events import Event, EventKind, RunLog, StagedEvents, load_subscribers
from reflexkit.exceptions import ConfigError, RunInterrupted
from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent
from reflexkit.orchestrator._outcomes import RunSummary, run_order
from reflexkit.orchestrator._recipes import COMMAND, RECIPES, command_subagent, recipe_for
from reflexkit.orchestrator._subagents import ScriptedSubagent, Subagent
from reflexkit.tasks._config import (
    AgentRecipe,
    GeneratorBackend,
    OrchestratorConfig,
    SubagentKind,
)
from reflexkit.tasks._task import Task, load_task

__all__ = ["run"]


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """Turn the first SIGINT, SIGTERM or SIGHUP into :class:`RunInterrupted`; ignore later ones.

    The loop then kills what runs and writes ``run_interrupted``; a second Ctrl-C can't cut
    that clean-up short, nor can a closed terminal's hang-up end the run without it. Outside
    the main thread (no signals there) this does nothing.
    """
    watched = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

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
    app: Application, task: Task, agent: Subagent, *, run_id: str | None = None, quiet: bool = False
) -> tuple[RunSummary, RunLog]:
    """Run a task through the application's loop in the project folder; log and show events.

    *quiet* (``--json``) shows nothing on the way (the events are in the run log): stderr
    keeps only warnings and errors. The run log, the live view and the subscribers installed
    packages register (entry points ``reflexkit.subscribers``) each get every event. In
    deterministic mode (#16) events are stamped by the reflections' logical clock, durations
    are 0, and the run log gets subtask events in sequential order even with --jobs (the
    other subscribers get them at once).
    """
    run_id, workdir = run_id or uuid.uuid4().hex, app.project().root
    log_path = app.project().root / ".reflexkit" / "runs" / f"{run_id}.jsonl"
    if log_path.exists():
        _fail([f"--run-id {run_id}: a run log already exists at {log_path}"], EXIT_BAD_INPUT)
    deterministic = app.project().config.reflexion.deterministic
    console = _streams.console()
    live = console.is_terminal and not quiet  # a spinner on a terminal, else plain lines
    status = console.status("starting the run") if live else contextlib.nullcontext()
    run_log = RunLog(
        log_path,
        normalise_durations=True if deterministic else None,
        root=str(workdir.resolve()),
        omit=() if app.project().config.reflexion.log else (EventKind.REFLECTION_GENERATED,),
    )
    # The run log is one subscriber among others; only its copy is held back for order.
    write = StagedEvents(run_log, run_order(task)) if deterministic else run_log
    with run_log, status as spinner:
        said: set[tuple[object, ...]] = set()

        def show(event: Event) -> None:
            # A setup error is said once, by the error line the run ends with.
            if quiet or event.kind is EventKind.SETUP_FAILED or _said_before(event, said):
                return
            line = _describe(event)
            if not line:
                return
            if spinner is None:
                say(line)
                return
            spinner.update(escape(say_on(console, line, style=_STYLES.get(event.kind, ""))))

        orchestrator = app.orchestration.orchestrator(
            subagent=agent,
            subscribers=[write, show, *load_subscribers()],
            stamp=app.reflection.clock(),  # every event, findings included, on the run's clock
            keep_prompts=True,  # beside the run log; `reflexkit show` prints them
        )
        with _stop_on_signals():
            summary: RunSummary = orchestrator.run(task, workdir=workdir, run_id=run_id)
    return summary, run_log


def _show_summary(
    summary: RunSummary, task: Task, run_log: RunLog, *, as_json: bool, log_kept: bool = True
) -> None:
    """The run's outcomes: JSON, or a table; and where its log is, when the log is kept."""
    if as_json:
        data = _serde.unstructure(summary)
        data["passed"] = summary.passed
        data["runLog"] = str(run_log.path) if log_kept else None
        say_json(data)
        return
    if any(o.outcome not in {"setup_error", "skipped"} for o in summary.outcomes):
        say_table(
            f"run {summary.run_id[:12]} of task {task.id}",
            ("subtask", "outcome", "attempts", "time", "reflections used"),
            [
                (
                    o.subtask_id,
                    o.outcome,
                    o.attempts,
                    f"{o.duration_ms / 1000:.1f} s",
                    o.reflections_used,
                )
                for o in summary.outcomes
            ],
            right=("attempts", "time", "reflections used"),
        )
    if log_kept:  # plain echo: rich would wrap a long path across lines
        lost = f" ({run_log.lost} events not written)" if run_log.lost else ""
        say(f"run log: {run_log.path}{lost}")


def _said_before(event: Event, said: set[tuple[object, ...]]) -> bool:
    """Whether a finding was shown already in this run: its rule, on the same subject.

    A rule that fires again after each attempt says nothing new to the terminal; the run log
    keeps every one.
    """
    if event.kind is not EventKind.FINDING:
        return False
    data = event.data
    key = (data.get("rule"), data.get("subjectType"), data.get("subjectId"), event.subtask_id)
    if key in said:
        return True
    said.add(key)
    return False


def _warn_nondeterministic(app: Application, *, run_id: str | None) -> None:
    """Say on stderr what keeps a deterministic run from repeating byte for byte.

    A live model is not among them: the configuration refuses it (exit 2).
    """
    if app.project().config.reflexion.deterministic and run_id is None:
        say(
            "reflexkit: warning: --deterministic with no --run-id: the run id, and so every "
            "reflection id, is random",
            err=True,
        )


_NO_AGENT = (
    "no agent configured: give --agent (aider, codex, mini-swe-agent, opencode, claude-cli, "
    "or a recipe of orchestrator.agents) or --agent-command 'my-agent {prompt_file}', or set "
    "orchestrator.agent or orchestrator.agentCommand in project.json (docs/agents.md)"
)


@attrs.frozen(kw_only=True)
class _AgentOptions:
    """What ``--subagent``, ``--agent``, ``--agent-command``, ``--agent-arg``, ``--script`` say."""

    kind: str | None = None
    name: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    script: Path | None = None


def _subagent(app: Application, options: _AgentOptions) -> Subagent:
    """The subagent the options (else ``orchestrator``) name; exit 2 when unusable."""
    settings = app.project().config.orchestrator
    kind = _kind(options) or settings.subagent
    if kind == SubagentKind.CLAUDE_CODE:
        return ClaudeCodeSubagent.from_config(settings)
    if kind == SubagentKind.COMMAND:
        return _command_agent(app.project().root / ".reflexkit" / "prompts", options, settings)
    if options.script is None:
        _fail(["--subagent scripted needs --script FILE"], EXIT_BAD_INPUT)
    return _scripted(options.script)


def _kind(options: _AgentOptions) -> str | None:
    """The kind of subagent the options ask for; ``None`` when they leave it to project.json."""
    if options.name is not None and options.command is not None:
        _fail(["--agent and --agent-command name two agents: give one"], EXIT_BAD_INPUT)
    if options.name is None and options.command is None:
        return options.kind
    if options.kind not in {None, SubagentKind.COMMAND}:
        _fail(
            [f"--subagent {options.kind} runs no command: drop --agent/--agent-command"],
            EXIT_BAD_INPUT,
        )
    return SubagentKind.COMMAND


def _command_agent(
    prompt_dir: Path, options: _AgentOptions, settings: OrchestratorConfig
) -> Subagent:
    """A command-line agent: a recipe by name, else ``--agent-command`` or ``agentCommand``."""
    extra = (*settings.agent_args, *options.args)
    name = options.name or (None if options.command else settings.agent)
    if name is not None and name != COMMAND:
        recipe = recipe_for(name, settings)
        return command_subagent(name, recipe, extra_args=extra, prompt_dir=prompt_dir)
    try:
        argv = shlex.split(options.command) if options.command else list(settings.agent_command)
    except ValueError as err:
        _fail([f"--agent-command: cannot parse {options.command!r}: {err}"], EXIT_BAD_INPUT)
    if not argv:
        _fail([_NO_AGENT], EXIT_BAD_INPUT)
    recipe = AgentRecipe(command=(*argv, *extra))
    return command_subagent(COMMAND, recipe, prompt_dir=prompt_dir)


def _scripted(path: Path) -> ScriptedSubagent:
    data = _serde.loads(_serde.read_file(path, source=str(path)), source=str(path))
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


class _RunOptions(TypedDict):
    """The options of ``reflexkit run`` beside the task file, as click passes them."""

    subagent: str | None
    agent: str | None
    agent_command: str | None
    agent_args: tuple[str, ...]
    script: Path | None
    jobs: int | None
    deterministic: bool
    run_id: str | None
    max_attempts: int | None
    attempt_timeout: int | None
    record: Path | None


@click.command()
@click.argument("task_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--subagent",
    type=click.Choice([k.value for k in SubagentKind]),
    default=None,
    help="Who makes the changes: any command-line agent, Claude Code (extra claude-code), "
    "or scripted edits (default: orchestrator.subagent, command).",
)
@click.option(
    "--agent",
    metavar="NAME",
    default=None,
    help=f"The agent, by recipe: {', '.join(RECIPES)}, a recipe of orchestrator.agents, or "
    "command (orchestrator.agentCommand) (default: orchestrator.agent). See docs/agents.md.",
)
@click.option(
    "--agent-command",
    default=None,
    help="An agent's command line instead of a recipe; {prompt} becomes the prompt (one "
    "argument), {prompt_file} a file holding it, else it goes to stdin (default: "
    "orchestrator.agentCommand).",
)
@click.option(
    "--agent-arg",
    "agent_args",
    multiple=True,
    metavar="ARG",
    help="An argument added to the agent's command line (repeatable; after "
    "orchestrator.agentArgs), e.g. the files aider may edit.",
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
    "--max-attempts",
    type=click.IntRange(min=1),
    default=None,
    help="Attempts per subtask (default: orchestrator.maxAttempts, 3).",
)
@click.option(
    "--attempt-timeout",
    type=click.IntRange(min=1),
    default=None,
    metavar="SECONDS",
    help="How long one attempt's agent may run (default: orchestrator.attemptTimeoutS, 900).",
)
@click.option(
    "--record-fixtures",
    "record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Reflect with Claude and append its replies to this fixture file, for offline replay.",
)
@click.pass_context
def run(ctx: click.Context, task_file: Path, **options: Unpack[_RunOptions]) -> None:
    """Run a task: attempt, verify, reflect and retry each subtask until it passes.

    Verification runs each subtask's `verify` commands, else the project's
    verification.commands, in the project root. Exit 0 only when every subtask passed;
    exit 2 (after the run) when the fixture backend missed a key under fixtureMiss error.
    """
    run_id, record = options["run_id"], options["record"]
    _check_id(run_id, "--run-id")
    task = load_task(task_file)
    limits = {
        "max_attempts": options["max_attempts"],
        "attempt_timeout_s": options["attempt_timeout"],
    }
    project = _project(
        ctx,
        jobs=options["jobs"],
        deterministic=options["deterministic"],
        backend=GeneratorBackend.LLM.value if record is not None else None,
        orchestrator={key: value for key, value in limits.items() if value is not None},
    )
    app = _app(ctx, project)
    agent = _AgentOptions(
        kind=options["subagent"],
        name=options["agent"],
        command=options["agent_command"],
        args=options["agent_args"],
        script=options["script"],
    )
    chosen = _subagent(app, agent)
    _warn_nondeterministic(app, run_id=run_id)
    project_checks = app.project().config.verification.commands
    unchecked = [s.id for s in task.subtasks if not s.verify and not project_checks]
    if unchecked and not task.require_verification:  # when required, the run says why it stops
        say(
            "reflexkit: warning: no verification configured for "
            + ", ".join(unchecked)
            + ": an attempt passes as soon as the agent finishes",
            err=True,
        )
    with contextlib.ExitStack() as stack:
        if record is not None:
            from dependency_injector import providers  # noqa: PLC0415 -- only when recording

            from reflexkit.reflection._fixture import FixtureRecorder  # noqa: PLC0415

            recorder = FixtureRecorder(app.reflection.claude_generator(), record)
            stack.enter_context(
                app.reflection.claude_generator.override(providers.Object(recorder))
            )
        summary, run_log = _orchestrate(app, task, chosen, run_id=run_id, quiet=_state(ctx).json)
    _show_summary(summary, task, run_log, as_json=_state(ctx).json)
    _fail_on_missing_fixtures(app.reflection.service())
    if summary.setup_error is not None:
        _fail([f"setup: {summary.setup_error}"], EXIT_BAD_INPUT)
    if not summary.passed:
        _fail([f"not every subtask passed ({len(summary.outcomes)} run)"], EXIT_FAILED)
