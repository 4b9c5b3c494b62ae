"""Tasks and configuration: project.json and task files, validated.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.tasks._config import (
        LoadedProject,
        MemoryConfig,
        OrchestratorConfig,
        ProjectConfig,
        ReflexionConfig,
        VerificationConfig,
        load_project,
    )
    from reflexkit.tasks._task import Subtask, Task, load_task, parse_task

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
        "_config": (
            "LoadedProject",
            "MemoryConfig",
            "OrchestratorConfig",
            "ProjectConfig",
            "ReflexionConfig",
            "VerificationConfig",
            "load_project",
        ),
        "_task": ("Subtask", "Task", "load_task", "parse_task"),
    },
)
