"""The public face of ``reflexkit``: what users build with, pinned (as httpx's test is).

A name added to or dropped from ``reflexkit.__all__`` is an API change: make it here, on
purpose, and in the docs.
"""

from __future__ import annotations

import inspect

import reflexkit

EXPORTED = [
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


def test_exported_members() -> None:
    """``__all__`` is exactly the pinned list, and every name is ours and resolves."""
    assert reflexkit.__all__ == EXPORTED
    assert len(EXPORTED) <= 41  # about forty: what users build with, not every module
    for name in EXPORTED:
        member = getattr(reflexkit, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__module__.startswith("reflexkit."), name
    assert set(EXPORTED) <= set(dir(reflexkit))
