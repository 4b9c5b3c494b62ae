"""reflexkit: coding agents that learn from their failures, in the style of Reflexion.

The public API is re-exported here, in the style of ``svcs``: what you build with is one
import away (``from reflexkit import build_application, FailureContext``). The names load
on first use (module ``__getattr__``), so ``import reflexkit`` stays cheap and a program
that only needs the models doesn't pay for dependency_injector or the anthropic SDK. See
``docs/`` for the guides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit import exceptions
from reflexkit._lazy import lazy_exports
from reflexkit._version import __version__ as __version__

# The error tree is public as a whole, imported now (it imports nothing): its names are
# exceptions.__all__, listed once.
from reflexkit.exceptions import *  # noqa: F403

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from reflexkit._serde import (
        dumps as dumps,
        loads as loads,
        structure as structure,
        unstructure as unstructure,
    )
    from reflexkit.containers import (
        Application as Application,
        FakeServices as FakeServices,
        build_application as build_application,
        fake_services as fake_services,
    )
    from reflexkit.memory import (
        EpisodicMemory as EpisodicMemory,
        InMemoryMemory as InMemoryMemory,
        JsonlMemory as JsonlMemory,
    )
    from reflexkit.models import (
        FailureContext as FailureContext,
        FailureType as FailureType,
        Reflection as Reflection,
        ReflectionCategory as ReflectionCategory,
        ReflectionSource as ReflectionSource,
    )
    from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent as ClaudeCodeSubagent
    from reflexkit.orchestrator._loop import Orchestrator as Orchestrator
    from reflexkit.orchestrator._subagents import (
        CommandSubagent as CommandSubagent,
        ScriptedSubagent as ScriptedSubagent,
        Subagent as Subagent,
        SubagentRequest as SubagentRequest,
        SubagentResult as SubagentResult,
    )
    from reflexkit.reflection._protocols import (
        ReflectionGenerator as ReflectionGenerator,
        ReflectionService as ReflectionService,
    )
    from reflexkit.tasks._config import (
        LoadedProject as LoadedProject,
        ProjectConfig as ProjectConfig,
        ReflexionConfig as ReflexionConfig,
        VerificationConfig as VerificationConfig,
        load_project as load_project,
    )
    from reflexkit.tasks._task import Subtask as Subtask, Task as Task, load_task as load_task

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "containers": ("Application", "FakeServices", "build_application", "fake_services"),
        "tasks._config": (
            "LoadedProject",
            "ProjectConfig",
            "ReflexionConfig",
            "VerificationConfig",
            "load_project",
        ),
        "tasks._task": ("Subtask", "Task", "load_task"),
        "models": (
            "FailureContext",
            "FailureType",
            "Reflection",
            "ReflectionCategory",
            "ReflectionSource",
        ),
        "memory": ("EpisodicMemory", "InMemoryMemory", "JsonlMemory"),
        "reflection._protocols": ("ReflectionGenerator", "ReflectionService"),
        "orchestrator._subagents": (
            "CommandSubagent",
            "ScriptedSubagent",
            "Subagent",
            "SubagentRequest",
            "SubagentResult",
        ),
        "orchestrator._loop": ("Orchestrator",),
        "orchestrator._claude_code": ("ClaudeCodeSubagent",),
        "_serde": ("dumps", "loads", "structure", "unstructure"),
    },
    loaded=("__version__", *exceptions.__all__),
)
