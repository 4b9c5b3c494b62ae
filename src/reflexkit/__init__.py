"""reflexkit: coding agents that learn from their failures, in the style of Reflexion.

The public API is re-exported here, in the style of ``svcs``: what you build with is one
import away (``from reflexkit import build_application, FailureContext``). The names load
on first use (module ``__getattr__``), so ``import reflexkit`` stays cheap and a program
that only needs the models doesn't pay for dependency_injector or the anthropic SDK. See
``docs/`` for the guides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports
from reflexkit._version import __version__

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from reflexkit._serde import dumps, loads, structure, unstructure
    from reflexkit.containers import Application, FakeServices, build_application, fake_services
    from reflexkit.exceptions import (
        ConfigError,
        CorruptRecordWarning,
        GenerationError,
        ReflexkitError,
        RunInterrupted,
        SetupError,
        StoreError,
    )
    from reflexkit.memory import EpisodicMemory, InMemoryMemory, JsonlMemory
    from reflexkit.models import (
        FailureContext,
        FailureType,
        Reflection,
        ReflectionCategory,
        ReflectionSource,
    )
    from reflexkit.orchestrator._claude_code import ClaudeCodeSubagent
    from reflexkit.orchestrator._loop import Orchestrator
    from reflexkit.orchestrator._subagents import (
        CommandSubagent,
        ScriptedSubagent,
        Subagent,
        SubagentRequest,
        SubagentResult,
    )
    from reflexkit.reflection._protocols import ReflectionGenerator, ReflectionService
    from reflexkit.tasks._config import (
        LoadedProject,
        ProjectConfig,
        ReflexionConfig,
        VerificationConfig,
        load_project,
    )
    from reflexkit.tasks._task import Subtask, Task, load_task

__all__ = [
    "Application",
    "ClaudeCodeSubagent",
    "CommandSubagent",
    "ConfigError",
    "CorruptRecordWarning",
    "EpisodicMemory",
    "FailureContext",
    "FailureType",
    "FakeServices",
    "GenerationError",
    "InMemoryMemory",
    "JsonlMemory",
    "LoadedProject",
    "Orchestrator",
    "ProjectConfig",
    "Reflection",
    "ReflectionCategory",
    "ReflectionGenerator",
    "ReflectionService",
    "ReflectionSource",
    "ReflexionConfig",
    "ReflexkitError",
    "RunInterrupted",
    "ScriptedSubagent",
    "SetupError",
    "StoreError",
    "Subagent",
    "SubagentRequest",
    "SubagentResult",
    "Subtask",
    "Task",
    "VerificationConfig",
    "__version__",
    "build_application",
    "dumps",
    "fake_services",
    "load_project",
    "load_task",
    "loads",
    "structure",
    "unstructure",
]

__getattr__, __dir__ = lazy_exports(
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
        "exceptions": (
            "ConfigError",
            "CorruptRecordWarning",
            "GenerationError",
            "ReflexkitError",
            "RunInterrupted",
            "SetupError",
            "StoreError",
        ),
    },
)
