"""Tasks and configuration: project.json and task files, validated.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.tasks.config import (
        LoadedProject,
        MemoryConfig,
        OrchestratorConfig,
        ProjectConfig,
        ReflexionConfig,
        VerificationConfig,
        load_project,
    )
    from reflexkit.tasks.task import Subtask, Task, load_task, parse_task

__all__ = [
    "LoadedProject",
    "MemoryConfig",
    "OrchestratorConfig",
    "ProjectConfig",
    "ReflexionConfig",
    "Subtask",
    "Task",
    "VerificationConfig",
    "load_project",
    "load_task",
    "parse_task",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LoadedProject": "config",
        "MemoryConfig": "config",
        "OrchestratorConfig": "config",
        "ProjectConfig": "config",
        "ReflexionConfig": "config",
        "VerificationConfig": "config",
        "load_project": "config",
        "Subtask": "task",
        "Task": "task",
        "load_task": "task",
        "parse_task": "task",
    },
)
