"""The few objects the command's fast paths need, built without dependency_injector.

``reflexkit recent`` and ``reflexkit reflect`` run once per failure from orchestrators in
other languages, so their start-up is their cost. Importing :mod:`reflexkit.containers`
costs dependency_injector's containers and wiring (which pull in starlette and pydantic when
they are installed) and every backend, with the anthropic SDK's client behind them. For the
plain cases, JSONL memory and the heuristic or llm generator, this module builds the same
objects as :class:`reflexkit.containers.Application` by hand; everything else returns
``None`` and the caller asks the container. ``tests/test_cli_startup.py`` checks that both
give the same reflection, so the two can't drift apart unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from reflexkit import _log
from reflexkit.tasks.config import GeneratorBackend, MemoryBackend

if TYPE_CHECKING:
    from reflexkit.memory import JsonlMemory
    from reflexkit.reflection.fallback import FallbackGenerator
    from reflexkit.reflection.protocols import ReflectionGenerator
    from reflexkit.reflection.service import DefaultReflectionService
    from reflexkit.tasks.config import LoadedProject

__all__ = ["reflection_service", "store"]


def store(project: LoadedProject) -> JsonlMemory | None:
    """The JSONL store ``Memory.store`` would build, or ``None`` for another backend."""
    if project.config.memory.backend != MemoryBackend.JSONL:
        return None
    from reflexkit.memory import JsonlMemory  # noqa: PLC0415 -- only when it is the backend

    return JsonlMemory(project.memory_path, durability=project.config.memory.durability)


def reflection_service(
    project: LoadedProject, memory: JsonlMemory
) -> tuple[DefaultReflectionService, Callable[[], None]] | None:
    """The service ``Reflection.service`` would build, for the llm and heuristic backends.

    Returns:
        The service and what closes its generator (the Claude client), or ``None`` for the
        fixture backend and deterministic mode (the container builds those). The Claude
        generator imports the anthropic SDK only when it has a request to send.
    """
    backend = project.config.reflexion.backend
    if backend not in {GeneratorBackend.HEURISTIC, GeneratorBackend.LLM}:
        return None
    if project.config.reflexion.deterministic:
        return None  # the container builds its logical clock (#16)
    # Only now: the readers' patterns are most of what reflecting costs to import.
    from reflexkit.redaction import Redactor  # noqa: PLC0415
    from reflexkit.reflection.classify import classify  # noqa: PLC0415
    from reflexkit.reflection.fingerprint import fingerprint  # noqa: PLC0415
    from reflexkit.reflection.heuristic import HeuristicGenerator  # noqa: PLC0415
    from reflexkit.reflection.service import DefaultReflectionService  # noqa: PLC0415

    heuristic = HeuristicGenerator()
    generator: ReflectionGenerator = heuristic
    close: Callable[[], None] = lambda: None  # noqa: E731 -- the heuristic holds nothing
    if backend == GeneratorBackend.LLM:
        fallback = _claude_with_fallback(project, heuristic)
        generator, close = fallback, fallback.close
    service = DefaultReflectionService(
        generator=generator,
        store=memory,
        fallback=heuristic,
        redact=Redactor().redact_failure,
        classify=classify,
        fingerprint=fingerprint,
        config=project.config.reflexion,
    )
    return service, close


def _claude_with_fallback(
    project: LoadedProject, heuristic: ReflectionGenerator
) -> FallbackGenerator:
    """``FallbackGenerator(ClaudeGenerator, heuristic)`` as ``Reflection.backend`` builds it."""
    from reflexkit.llm import Claude  # noqa: PLC0415
    from reflexkit.reflection.claude import ClaudeGenerator  # noqa: PLC0415
    from reflexkit.reflection.fallback import FallbackGenerator  # noqa: PLC0415

    _log.ensure_configured()  # the anthropic SDK and httpx log through logging directly
    settings = project.config.reflexion
    claude = ClaudeGenerator(
        Claude(),
        options=settings.request_options(),
        timeout_ms=settings.generation_timeout_ms,
        root=project.root,
    )
    return FallbackGenerator(claude, heuristic)
