"""Reflection: turning a failure into a lesson, and the lessons into a retry prompt.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.reflection._claude import ClaudeGenerator as ClaudeGenerator
    from reflexkit.reflection._fallback import FallbackGenerator as FallbackGenerator
    from reflexkit.reflection._fixture import (
        FixtureGenerator as FixtureGenerator,
        FixtureRecorder as FixtureRecorder,
        fixture_key as fixture_key,
    )
    from reflexkit.reflection._heuristic import HeuristicGenerator as HeuristicGenerator
    from reflexkit.reflection._prompts import prompt_key as prompt_key
    from reflexkit.reflection._protocols import (
        ReflectionGenerator as ReflectionGenerator,
        ReflectionService as ReflectionService,
    )
    from reflexkit.reflection._service import (
        DefaultReflectionService as DefaultReflectionService,
        ServiceHealth as ServiceHealth,
    )

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "_protocols": ("ReflectionGenerator", "ReflectionService"),
        "_service": ("DefaultReflectionService", "ServiceHealth"),
        "_claude": ("ClaudeGenerator",),
        "_heuristic": ("HeuristicGenerator",),
        "_fixture": ("FixtureGenerator", "FixtureRecorder", "fixture_key"),
        "_fallback": ("FallbackGenerator",),
        "_prompts": ("prompt_key",),
    },
)
