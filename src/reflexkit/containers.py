"""The composition root: dependency-injector containers that bind reflexkit's ports.

Per-concern containers (:class:`Memory`, :class:`Reflection`) are joined by
:class:`Application`, which receives the validated project configuration and picks the
generator and the memory backend with ``Selector``. :class:`FakeServices` holds in-process
stand-ins for the outside world; :func:`fake_services` binds an application to them for the
length of a ``with`` block.

Only this module and :mod:`reflexkit.cli` import ``dependency_injector`` or name concrete
classes; everything else takes its collaborators in ``__init__``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from reflexkit._lazy import without_integrations

# What dependency-injector probes for at import, to support in wiring and configuration; the
# containers use none of it (see without_integrations).
with without_integrations(
    "pydantic", "pydantic_settings", "yaml", "starlette", "fastapi", "werkzeug", "fast_depends"
):
    from dependency_injector import containers, providers

from reflexkit.memory._protocols import EpisodicMemory
from reflexkit.models import LogicalClock, utcnow
from reflexkit.reflection._protocols import ReflectionService
from reflexkit.tasks._config import LoadedProject, ReflexionConfig

__all__ = [
    "Application",
    "FakeServices",
    "Insights",
    "Memory",
    "Orchestration",
    "Reflection",
    "build_application",
    "fake_services",
]


_T = TypeVar("_T")


def _imported(path: str) -> Any:  # noqa: ANN401 -- whatever the module holds
    """The object at ``module:name`` (or ``module:Class.attribute``), imported now."""
    module, _, name = path.partition(":")
    return functools.reduce(getattr, name.split("."), importlib.import_module(module))


def _lazy(path: str) -> Callable[..., Any]:
    """A factory for the class at ``module:name`` that imports it when first called.

    The root names every class, but a command pays only for the ones its graph builds: a
    heuristic reflection never imports the Claude generator, the loop or PostgreSQL.
    """

    def build(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 -- the class's own arguments
        return _imported(path)(*args, **kwargs)

    build.__qualname__ = build.__name__ = path.rpartition(":")[2]
    return build


def _object(path: str) -> providers.Callable[Any]:
    """A provider of the object at ``module:name`` (a function handed over as it is)."""
    return providers.Callable(_imported, path)


def _clock_for(reflexion: ReflexionConfig) -> Callable[[], datetime]:
    """The clock of reflections and run logs: logical in deterministic mode, else the wall."""
    return LogicalClock.from_environment() if reflexion.deterministic else utcnow


def _closing(instance: _T) -> Iterator[_T]:
    """Own *instance* as a Resource: hand it out, then close it at ``shutdown_resources()``.

    The provider passes in what a ``Selector`` chose, so only the selected backend is built:
    ``init_resources()`` starts this resource, never the branches that were not chosen (a
    JSONL project needs no database URL, a heuristic one no Claude client). Anything with a
    ``close()`` is closed; the heuristic generator has none and needs none.
    """
    try:
        yield instance
    finally:
        close = getattr(instance, "close", None)
        if callable(close):
            close()


class Memory(containers.DeclarativeContainer):
    """Episodic memory, chosen by ``memory.backend``; both backends for ``memory copy``."""

    project = providers.Dependency(instance_of=LoadedProject)

    jsonl = providers.Factory(
        _lazy("reflexkit.memory._jsonl:JsonlMemory"),
        project.provided.memory_path,
        durability=project.provided.config.memory.durability,
    )
    postgres = providers.Factory(
        _lazy("reflexkit.memory._postgres:PostgresMemory"),
        project.provided.database_url.call(),
        spool=project.provided.spool_path,
    )
    backend = providers.Selector(
        project.provided.config.memory.backend, jsonl=jsonl, postgres=postgres
    )
    store = providers.Resource(_closing, backend)


class Reflection(containers.DeclarativeContainer):
    """The reflection service and its generators, chosen by ``reflexion.backend``."""

    project = providers.Dependency(instance_of=LoadedProject)
    store = providers.Dependency(instance_of=EpisodicMemory)  # type: ignore[type-abstract]  # a runtime-checkable protocol

    claude: providers.Dependency[Any] = providers.Dependency()  # reflexkit.llm.Claude

    redactor = providers.Singleton(_lazy("reflexkit.redaction:Redactor"))
    heuristic = providers.Singleton(
        _lazy("reflexkit.reflection._heuristic:HeuristicGenerator"),
        max_chars=project.provided.config.reflexion.max_reflection_chars,
        root=project.provided.root,
    )
    options = project.provided.config.reflexion.request_options.call()
    claude_generator = providers.Factory(
        _lazy("reflexkit.reflection._claude:ClaudeGenerator"),
        claude,
        options=options,
        timeout_ms=project.provided.config.reflexion.generation_timeout_ms,
        root=project.provided.root,
    )

    backend = providers.Selector(
        project.provided.config.reflexion.backend,
        llm=providers.Factory(
            _lazy("reflexkit.reflection._fallback:FallbackGenerator"), claude_generator, heuristic
        ),
        heuristic=heuristic,
        fixture=providers.Factory(
            _lazy("reflexkit.reflection._fixture:FixtureGenerator"),
            project.provided.fixtures_path,
            options=options,
            root=project.provided.root,
        ),
    )
    generator = providers.Resource(_closing, backend)

    clock = providers.Singleton(_clock_for, project.provided.config.reflexion)
    service = providers.Singleton(
        _lazy("reflexkit.reflection._service:DefaultReflectionService"),
        generator=generator,
        store=store,
        fallback=heuristic,
        redact=redactor.provided.redact_failure,
        classify=_object("reflexkit.reflection._classify:classify"),
        fingerprint=_object("reflexkit.reflection._fingerprint:fingerprint"),
        config=project.provided.config.reflexion,
        clock=clock,
    )


def _judge_fixtures(project: LoadedProject) -> Path:
    """Where a fixture judge reads its recorded verdicts."""
    return project.root / project.config.verification.judge_fixtures_path


class Orchestration(containers.DeclarativeContainer):
    """The retry loop and its subagent, chosen by ``orchestrator.subagent``.

    The completion judge is chosen by ``verification.judge``; only the chosen one is built
    (``off`` builds none), and a Claude judge's client is closed at ``shutdown_resources()``.
    """

    project = providers.Dependency(instance_of=LoadedProject)
    service = providers.Dependency(instance_of=ReflectionService)  # type: ignore[type-abstract]  # a runtime-checkable protocol
    insights: providers.Dependency[Any] = providers.Dependency(default=None)  # LoopInsights
    claude: providers.Dependency[Any] = providers.Dependency()  # reflexkit.llm.Claude

    subagent = providers.Selector(
        project.provided.config.orchestrator.subagent,
        command=providers.Factory(
            _lazy("reflexkit.orchestrator._subagents:CommandSubagent"),
            project.provided.config.orchestrator.agent_command,
        ),
        scripted=providers.Factory(
            _lazy("reflexkit.orchestrator._subagents:ScriptedSubagent"), providers.Object({})
        ),
        **{
            "claude-code": providers.Factory(
                _lazy("reflexkit.orchestrator._claude_code:ClaudeCodeSubagent.from_config"),
                project.provided.config.orchestrator,
            )
        },
    )
    verifier_for = providers.Factory(
        _lazy("reflexkit.orchestrator._verify:verifier_factory"),
        project.provided.config.verification,
    )
    claude_judge = providers.Factory(
        _lazy("reflexkit.reports._judge:ClaudeJudge"),
        claude,
        model=project.provided.config.reflexion.model,
        timeout_ms=project.provided.config.verification.judge_timeout_ms,
    )
    judge_backend = providers.Selector(
        project.provided.config.verification.judge,
        off=providers.Object(None),
        llm=claude_judge,
        heuristic=providers.Factory(_lazy("reflexkit.reports._judge:HeuristicJudge")),
        fixture=providers.Factory(
            _lazy("reflexkit.reports._judge:FixtureJudge"),
            providers.Callable(_judge_fixtures, project),
            model=project.provided.config.reflexion.model,
        ),
    )
    judge = providers.Resource(_closing, judge_backend)
    audit = providers.Factory(
        _lazy("reflexkit.reports._audit:AttemptAudit"),
        project,
        judge=judge,
        agent=project.provided.config.orchestrator.subagent,
    )
    orchestrator = providers.Factory(
        _lazy("reflexkit.orchestrator._loop:Orchestrator"),
        service=service,
        subagent=subagent,
        verifier_for=verifier_for,
        config=project.provided.config.orchestrator,
        reflect=project.provided.config.reflexion.enabled,
        audit=audit,
        insights=insights,
    )


class Insights(containers.DeclarativeContainer):
    """The rule tier, the analysis and the lessons of a project (docs/insights.md)."""

    project = providers.Dependency(instance_of=LoadedProject)
    claude: providers.Dependency[Any] = providers.Dependency()  # reflexkit.llm.Claude

    clock = providers.Singleton(_clock_for, project.provided.config.reflexion)  # the runs'
    findings = providers.Singleton(
        _lazy("reflexkit.insights._store:FindingLog"), project.provided.insights_path
    )
    paused = providers.Singleton(
        _lazy("reflexkit.insights._store:PausedSubtasks"),
        project.provided.paused_path,
        runs=project.provided.runs_dir,
    )
    lessons = providers.Singleton(
        _lazy("reflexkit.insights._lessons:JsonlLessons"), project.provided.lessons_path
    )
    rules = providers.Singleton(
        _lazy("reflexkit.insights._rules:HistoryRules"),
        runs=project.provided.runs_dir,
        findings=findings,
        paused=paused,
        config=project.provided.config.insights,
        clock=clock,
    )
    heuristic_analyst = providers.Singleton(_lazy("reflexkit.insights._analysis:HeuristicAnalyst"))
    analyst_backend = providers.Selector(
        project.provided.config.reflexion.backend,
        llm=providers.Factory(
            _lazy("reflexkit.insights._analysis:ClaudeAnalyst"),
            claude,
            # insights.model and insights.promptPath, else reflexion.model and the built-in
            model=providers.Callable(_lazy("reflexkit.insights._analysis:analysis_model"), project),
            timeout_ms=project.provided.config.reflexion.generation_timeout_ms,
            system=providers.Callable(
                _lazy("reflexkit.insights._analysis:analysis_prompt"), project
            ),
        ),
        heuristic=heuristic_analyst,
        fixture=heuristic_analyst,
    )
    analyst = providers.Resource(_closing, analyst_backend)
    analysis = providers.Singleton(
        _lazy("reflexkit.insights._analysis:AnalysisCycle"),
        analyst=analyst,
        fallback=heuristic_analyst,
        findings=findings,
        paused=paused,
        lessons=lessons,
        clock=clock,
    )
    # The loop's insight steps: a fresh one (and fresh per-run state) per Orchestrator.
    loop = providers.Factory(
        _lazy("reflexkit.orchestrator._insight_steps:LoopInsights"),
        rules=rules,
        lessons=lessons,
        analysis=analysis,
        config=project.provided.config.insights,
        max_prompt_chars=project.provided.config.reflexion.max_prompt_chars,
    )


class Application(containers.DeclarativeContainer):
    """Everything reflexkit needs, for one validated project."""

    project = providers.Dependency(instance_of=LoadedProject)
    # One Claude client for the generator, the judge and the analyst; built only when one of
    # them is, and the SDK imported by its first request.
    claude = providers.Singleton(_lazy("reflexkit.llm:Claude"))
    insights = providers.Container(Insights, project=project, claude=claude)

    memory = providers.Container(Memory, project=project)
    reflection = providers.Container(Reflection, project=project, store=memory.store, claude=claude)
    orchestration = providers.Container(
        Orchestration,
        project=project,
        service=reflection.service,
        insights=insights.loop,
        claude=claude,
    )


class FakeServices(containers.DeclarativeContainer):
    """In-process stand-ins for the outside world: memory in a list, no network, no agent.

    The subagent is a :class:`ScriptedSubagent` with an empty script (every attempt edits
    nothing and succeeds); override ``subagent`` with a script of your own. ``judge`` stands
    in for the Claude judge (``verification.judge: llm``); ``off``, ``heuristic`` and
    ``fixture`` stay as configured, since none of them reaches the network.
    """

    store = providers.Singleton(_lazy("reflexkit.memory._in_memory:InMemoryMemory"))
    generator = providers.Singleton(_lazy("reflexkit.reflection._heuristic:HeuristicGenerator"))
    subagent = providers.Singleton(
        _lazy("reflexkit.orchestrator._subagents:ScriptedSubagent"), providers.Object({})
    )
    rules = providers.Singleton(_lazy("reflexkit.insights._rules:FixedRules"))
    analyst = providers.Singleton(_lazy("reflexkit.insights._analysis:HeuristicAnalyst"))
    lessons = providers.Singleton(_lazy("reflexkit.insights._lessons:InMemoryLessons"))
    judge = providers.Singleton(_lazy("reflexkit.reports._judge:HeuristicJudge"))


def build_application(project: LoadedProject) -> Application:
    """Return the live application for a validated project (see :func:`load_project`)."""
    return Application(project=project)


@contextmanager
def fake_services(app: Application, fakes: FakeServices | None = None) -> Iterator[FakeServices]:
    """Bind *app* to in-process fakes for the length of a ``with`` block.

    Args:
        app: The application to rebind; its overrides are undone when the block exits,
            also when it raises.
        fakes: The stand-ins to use; a fresh :class:`FakeServices` by default.

    Yields:
        The fakes, so a test can look into their store.
    """
    fakes = fakes or FakeServices()
    with (
        app.memory.store.override(fakes.store),
        app.reflection.generator.override(fakes.generator),
        app.orchestration.subagent.override(fakes.subagent),
        app.orchestration.claude_judge.override(fakes.judge),
        app.insights.rules.override(fakes.rules),
        app.insights.analyst.override(fakes.analyst),
        app.insights.lessons.override(fakes.lessons),
        app.reset_singletons(),
    ):
        yield fakes
