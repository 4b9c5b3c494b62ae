"""Tasks and configuration: project.json and task files, validated.

The public names load on first use, so importing one submodule doesn't import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexkit._lazy import lazy_exports

if TYPE_CHECKING:
    from reflexkit.tasks._config import (
        LoadedProject as LoadedProject,
        MemoryConfig as MemoryConfig,
        OrchestratorConfig as OrchestratorConfig,
        ProjectConfig as ProjectConfig,
        ReflexionConfig as ReflexionConfig,
        VerificationConfig as VerificationConfig,
        load_project as load_project,
    )
    from reflexkit.tasks._task import (
        Subtask as Subtask,
        Task as Task,
        load_task as load_task,
    )

__getattr__, __dir__, __all__ = lazy_exports(
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
        "_task": ("Subtask", "Task", "load_task"),
    },
)
