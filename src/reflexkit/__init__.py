"""reflexkit: coding agents that learn from their failures, in the style of Reflexion.

The public API is re-exported here; see ``docs/`` for the guides.
"""

from reflexkit._serde import converter, dumps, loads, structure, unstructure
from reflexkit._version import __version__
from reflexkit.exceptions import (
    ConfigError,
    CorruptRecordWarning,
    GenerationError,
    ReflexkitError,
    StoreError,
)
from reflexkit.models import (
    FailureContext,
    FailureType,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
)
from reflexkit.tasks.config import (
    LoadedProject,
    MemoryConfig,
    ProjectConfig,
    ReflexionConfig,
    load_project,
)

__all__ = [
    "ConfigError",
    "CorruptRecordWarning",
    "FailureContext",
    "FailureType",
    "GenerationError",
    "LoadedProject",
    "MemoryConfig",
    "ProjectConfig",
    "Reflection",
    "ReflectionCategory",
    "ReflectionSource",
    "ReflexionConfig",
    "ReflexkitError",
    "StoreError",
    "__version__",
    "converter",
    "dumps",
    "load_project",
    "loads",
    "structure",
    "unstructure",
]
