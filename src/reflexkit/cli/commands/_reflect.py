"""``reflexkit reflect`` and ``reflexkit fixtures key``."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click
from click.core import ParameterSource

from reflexkit import _log, _serde
from reflexkit._deadline import deadline_in
from reflexkit._text import show_name
from reflexkit.cli._core import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    _app,
    _fail,
    _fail_on_missing_fixtures,
    _project,
    _service,
    _state,
)
from reflexkit.cli._output import say, say_json
from reflexkit.tasks._config import (
    GeneratorBackend,
)

if TYPE_CHECKING:
    from reflexkit.models import FailureContext, Reflection

__all__ = ["fixtures", "reflect"]

log = _log.get_logger("reflexkit.cli")


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


_input_option = click.option(
    "--input",
    "input_",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="A FailureContext as camelCase JSON; - reads stdin.",
)
"""``--input``: the failure to read, for ``reflect`` and ``fixtures key`` alike."""


FIFO_WAIT_S = 5.0
"""How long ``--input`` of a named FIFO waits for its writer (one started a moment later)."""


def _read_input(ctx: click.Context, input_: str) -> FailureContext:
    """Read the failure: from a file or a pipe, bounded, never waiting on a silent terminal.

    stdin on a terminal with no ``--input`` is a newcomer who typed the command alone: it is
    an error saying what to do, not a prompt that waits forever. ``--input -`` given on
    purpose reads the terminal, after one line on stderr saying how to end the input.
    """
    from reflexkit.models import FailureContext  # noqa: PLC0415 -- lazy, as in _core

    if input_ == "-":
        source = "stdin"
        stdin: IO[bytes] = getattr(sys.stdin, "buffer", None) or io.BytesIO()  # None: closed
        if stdin.isatty():
            given = ctx.get_parameter_source("input_") is not ParameterSource.DEFAULT
            if not given:
                msg = (
                    f"{ctx.command_path} reads a FailureContext as JSON from stdin, and stdin "
                    "is a terminal: pipe one in or give --input FILE (--input - reads what "
                    "you type)"
                )
                _fail([msg], EXIT_BAD_INPUT)
            say("reflexkit: reading a FailureContext as JSON; end with Ctrl-D", err=True)
        raw = _serde.read_limited(stdin, source=source)
    else:
        source = show_name(input_, max_chars=200)  # an error line stays a line
        raw = _serde.read_file(input_, source=source, fifo_wait_s=FIFO_WAIT_S)
    # FailureContext checks the ids: one `recent` can't ask for is refused, not stored.
    return _serde.structure(_serde.loads(raw, source=source), FailureContext, source=source)


@click.command()
@_input_option
@click.option(
    "--backend",
    type=click.Choice([b.value for b in GeneratorBackend]),
    default=None,
    help="Override reflexion.backend of project.json.",
)
@click.option("--no-save", is_flag=True, help="Don't append the reflection to memory.")
@click.option(
    "--record-fixtures",
    "record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Ask Claude and append its reply to this fixture file, for offline replay.",
)
@click.pass_context
def reflect(
    ctx: click.Context, input_: str, backend: str | None, no_save: bool, record: Path | None
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
    failure = _read_input(ctx, input_)
    log.debug("reflect: work started")  # benchmarks/claude_limits.py times from this line
    # The generation budget runs from here: building the service and loading the anthropic
    # SDK count, so a hanging API costs generationTimeoutMs from the start of the work. The
    # SDK's import starts now, beside the service's building, not at the first send.
    reflexion = _state(ctx).project().config.reflexion
    if record is not None or (backend or reflexion.backend) == GeneratorBackend.LLM:
        from reflexkit.llm._client import preload  # noqa: PLC0415 -- only for Claude

        preload()
    budget_ms = reflexion.generation_timeout_ms
    recorder = None
    with deadline_in(budget_ms / 1_000):
        if record is None:
            service = _service(ctx, backend=backend)
            reflection = service.generate(failure)
        else:
            from dependency_injector import providers  # noqa: PLC0415 -- only when recording

            from reflexkit.reflection._fixture import FixtureRecorder  # noqa: PLC0415

            app = _app(ctx, _project(ctx, backend=GeneratorBackend.LLM.value))
            recorder = FixtureRecorder(app.reflection.claude_generator(), record)
            with app.reflection.claude_generator.override(providers.Object(recorder)):
                service = app.reflection.service()
                reflection = service.generate(failure)
    _fail_on_missing_fixtures(service)
    # Saved before it is printed: a reader that leaves early (`| head -c 10`) or a stdout
    # that fails costs the output, never the record.
    saved = no_save or service.save(reflection)
    if _state(ctx).json:
        say_json(reflection)
    else:
        say(_summary(reflection))
    if not saved:
        problem = _memory_problem(ctx)
        if problem is not None:  # nothing will save until the setup changes: exit 2
            _fail([f"could not save the reflection (printed above): {problem}"], EXIT_BAD_INPUT)
        _fail([f"could not save the reflection: {service.health.last_error}"], EXIT_FAILED)
    if recorder is not None and not recorder.recorded:
        reason = reflection.fallback_reason or "no reply"
        _fail([f"nothing recorded in {record}: Claude gave no reply ({reason})"], EXIT_FAILED)


def _memory_problem(ctx: click.Context) -> str | None:
    """What in the setup keeps the JSONL memory from being written, if that is the cause."""
    from reflexkit.cli._setup import memory_setup_problem  # noqa: PLC0415 -- only on error
    from reflexkit.tasks._config import MemoryBackend  # noqa: PLC0415

    project = _state(ctx).project()
    if project.config.memory.backend is not MemoryBackend.JSONL:
        return None
    return memory_setup_problem(project.memory_path)


@click.group()
def fixtures() -> None:
    """Recorded Claude replies, replayed offline by `--backend fixture`."""


@fixtures.command("key")
@_input_option
@click.pass_context
def fixtures_key(ctx: click.Context, input_: str) -> None:
    """Print the fixture key that reflecting on a failure asks for (--json: an object).

    The key is the first 12 hex digits of the sha256 of the request Claude would get: the
    failure as the service prepares it (redacted, classified), the subtask's recent
    reflections in memory, the model and the output mode.
    """
    from reflexkit.reflection._fixture import fixture_key  # noqa: PLC0415

    failure = _read_input(ctx, input_)
    app = _app(ctx)
    project = app.project()
    service = app.reflection.service()
    clean, _, _ = service.prepare(failure)
    previous = service.previous(clean)  # exactly what generate() hands the generator
    key = fixture_key(
        clean,
        previous=previous,
        options=project.config.reflexion.request_options(),
        root=project.root,
    )
    if _state(ctx).json:  # as every --json: a camelCase object
        say_json({"fixtureKey": key, "subtaskId": clean.subtask_id}, indent=False)
        return
    say(key)
