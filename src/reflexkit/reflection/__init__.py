"""Reflection: turning a failure into a lesson, and the lessons into a retry prompt.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.reflection.claude import ClaudeGenerator
    from reflexkit.reflection.fallback import FallbackGenerator
    from reflexkit.reflection.fixture import FixtureGenerator, FixtureRecorder
    from reflexkit.reflection.heuristic import HeuristicGenerator
    from reflexkit.reflection.protocols import ReflectionGenerator, ReflectionService
    from reflexkit.reflection.retry_prompt import format_reflections
    from reflexkit.reflection.service import DefaultReflectionService, ServiceHealth

__all__ = [
    "ClaudeGenerator",
    "DefaultReflectionService",
    "FallbackGenerator",
    "FixtureGenerator",
    "FixtureRecorder",
    "HeuristicGenerator",
    "ReflectionGenerator",
    "ReflectionService",
    "ServiceHealth",
    "format_reflections",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ReflectionGenerator": "protocols",
        "ReflectionService": "protocols",
        "DefaultReflectionService": "service",
        "ServiceHealth": "service",
        "ClaudeGenerator": "claude",
        "HeuristicGenerator": "heuristic",
        "FixtureGenerator": "fixture",
        "FixtureRecorder": "fixture",
        "FallbackGenerator": "fallback",
        "format_reflections": "retry_prompt",
    },
)
