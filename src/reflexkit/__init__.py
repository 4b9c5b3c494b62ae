"""reflexkit: coding agents that learn from their failures, in the style of Reflexion.

The public API is re-exported here, in the style of ``svcs``: what you build with is one
import away (``from reflexkit import build_application, FailureContext``). The names load
on first use (module ``__getattr__``), so ``import reflexkit`` stays cheap and a program
that only needs the models doesn't pay for dependency_injector or the anthropic SDK. See
``docs/`` for the guides.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from reflexkit.memory import EpisodicMemory, InMemoryMemory, JsonlMemory, MemoryStats
    from reflexkit.memory.postgres import PostgresMemory
    from reflexkit.models import (
        FailureContext,
        FailureType,
        Reflection,
        ReflectionCategory,
        ReflectionSource,
    )
    from reflexkit.orchestrator.claude_code import ClaudeCodeSubagent
    from reflexkit.orchestrator.loop import Orchestrator, RunSummary
    from reflexkit.orchestrator.subagents import (
        CommandSubagent,
        ScriptedSubagent,
        Subagent,
        SubagentRequest,
        SubagentResult,
    )
    from reflexkit.reflection.protocols import ReflectionGenerator, ReflectionService
    from reflexkit.tasks.config import (
        LoadedProject,
        MemoryConfig,
        OrchestratorConfig,
        ProjectConfig,
        ReflexionConfig,
        VerificationConfig,
        load_project,
    )
    from reflexkit.tasks.task import Subtask, Task, load_task

_LAZY = {
    # building an application
    "Application": "reflexkit.containers",
    "FakeServices": "reflexkit.containers",
    "build_application": "reflexkit.containers",
    "fake_services": "reflexkit.containers",
    # configuration and tasks
    "LoadedProject": "reflexkit.tasks.config",
    "MemoryConfig": "reflexkit.tasks.config",
    "OrchestratorConfig": "reflexkit.tasks.config",
    "VerificationConfig": "reflexkit.tasks.config",
    "ProjectConfig": "reflexkit.tasks.config",
    "ReflexionConfig": "reflexkit.tasks.config",
    "load_project": "reflexkit.tasks.config",
    "Subtask": "reflexkit.tasks.task",
    "Task": "reflexkit.tasks.task",
    "load_task": "reflexkit.tasks.task",
    # the models
    "FailureContext": "reflexkit.models",
    "FailureType": "reflexkit.models",
    "Reflection": "reflexkit.models",
    "ReflectionCategory": "reflexkit.models",
    "ReflectionSource": "reflexkit.models",
    # the ports and the stores
    "EpisodicMemory": "reflexkit.memory",
    "MemoryStats": "reflexkit.memory",
    "InMemoryMemory": "reflexkit.memory",
    "JsonlMemory": "reflexkit.memory",
    "PostgresMemory": "reflexkit.memory.postgres",
    "ReflectionGenerator": "reflexkit.reflection.protocols",
    "ReflectionService": "reflexkit.reflection.protocols",
    "Subagent": "reflexkit.orchestrator.subagents",
    "SubagentRequest": "reflexkit.orchestrator.subagents",
    "SubagentResult": "reflexkit.orchestrator.subagents",
    # the loop and the subagents
    "Orchestrator": "reflexkit.orchestrator.loop",
    "RunSummary": "reflexkit.orchestrator.loop",
    "CommandSubagent": "reflexkit.orchestrator.subagents",
    "ScriptedSubagent": "reflexkit.orchestrator.subagents",
    "ClaudeCodeSubagent": "reflexkit.orchestrator.claude_code",
    # camelCase JSON in and out (the converter itself stays in reflexkit._serde)
    "dumps": "reflexkit._serde",
    "loads": "reflexkit._serde",
    "structure": "reflexkit._serde",
    "unstructure": "reflexkit._serde",
    # errors
    "ConfigError": "reflexkit.exceptions",
    "CorruptRecordWarning": "reflexkit.exceptions",
    "GenerationError": "reflexkit.exceptions",
    "ReflexkitError": "reflexkit.exceptions",
    "RunInterrupted": "reflexkit.exceptions",
    "SetupError": "reflexkit.exceptions",
    "StoreError": "reflexkit.exceptions",
}

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
    "MemoryConfig",
    "MemoryStats",
    "Orchestrator",
    "OrchestratorConfig",
    "PostgresMemory",
    "ProjectConfig",
    "Reflection",
    "ReflectionCategory",
    "ReflectionGenerator",
    "ReflectionService",
    "ReflectionSource",
    "ReflexionConfig",
    "ReflexkitError",
    "RunInterrupted",
    "RunSummary",
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


def __getattr__(name: str) -> Any:  # noqa: ANN401 -- whatever the named module holds
    """Import a public name on first use and keep it (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'reflexkit' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
