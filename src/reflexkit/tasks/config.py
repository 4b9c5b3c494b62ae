"""Per-project configuration: the validated contents of ``.reflexkit/project.json``.

Every key is optional; a missing file means all defaults. Unknown keys, wrong types and
out-of-range values are errors that name the JSON path (``$.reflexion.backend``).
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

import attrs

from reflexkit import _serde
from reflexkit.exceptions import ConfigError
from reflexkit.models import at_least, non_empty

__all__ = [
    "CONFIG_ENV",
    "CONFIG_RELPATH",
    "Durability",
    "GeneratorBackend",
    "LoadedProject",
    "MemoryBackend",
    "MemoryConfig",
    "OrchestratorConfig",
    "ProjectConfig",
    "ReflexionConfig",
    "SubagentKind",
    "VerificationConfig",
    "find_config",
    "load_project",
]

CONFIG_ENV = "REFLEXKIT_CONFIG"
"""The environment variable that names a project.json when ``--config`` is not given."""

CONFIG_RELPATH = Path(".reflexkit") / "project.json"
"""Where project.json lives, relative to the project root."""


class GeneratorBackend(enum.StrEnum):
    """Which generator writes reflections."""

    LLM = "llm"
    """Claude through the anthropic SDK, falling back to the heuristic on any error."""
    HEURISTIC = "heuristic"
    """Rules that read each tool's output; deterministic, no network."""
    FIXTURE = "fixture"
    """Recorded LLM replies replayed by prompt hash; for tests and CI."""


class SubagentKind(enum.StrEnum):
    """Who makes the changes an attempt needs."""

    COMMAND = "command"
    """Any command-line agent, given by ``orchestrator.agentCommand``."""
    SCRIPTED = "scripted"
    """Scripted edits: tests and demos."""
    CLAUDE_CODE = "claude-code"
    """Claude Code through claude-agent-sdk (extra ``claude-code``)."""


class MemoryBackend(enum.StrEnum):
    """Where reflections are stored."""

    JSONL = "jsonl"
    """A JSONL file on the local disk, shared by the processes of one machine."""
    POSTGRES = "postgres"
    """A PostgreSQL table shared by orchestrators on many machines (extra ``postgres``)."""


class Durability(enum.StrEnum):
    """How hard an append tries to survive a crash."""

    NONE = "none"
    """The record is in the OS page cache when ``append`` returns: safe if the process dies."""
    FSYNC = "fsync"
    """The record is on the disk when ``append`` returns: safe if the machine loses power."""


@attrs.frozen(kw_only=True)
class ReflexionConfig:
    """The ``reflexion`` section: how reflections are generated and used."""

    enabled: bool = True
    max_reflections_per_retry: int = attrs.field(default=3, validator=at_least(1))
    generation_timeout_ms: int = attrs.field(default=30_000, validator=at_least(1))
    retention_days: int = attrs.field(default=30, validator=at_least(1))
    backend: GeneratorBackend = GeneratorBackend.LLM
    model: str = "claude-haiku-5-5"
    max_prompt_chars: int = attrs.field(default=4_000, validator=at_least(200))
    fixtures_path: str = ".reflexkit/fixtures/reflections.jsonl"


@attrs.frozen(kw_only=True)
class MemoryConfig:
    """The ``memory`` section: where episodic memory lives."""

    backend: MemoryBackend = MemoryBackend.JSONL
    path: str = attrs.field(default=".reflexkit/memory/reflections.jsonl", validator=non_empty)
    durability: Durability = Durability.NONE
    dsn_env: str = attrs.field(default="REFLEXKIT_DATABASE_URL", validator=non_empty)
    spool_path: str = attrs.field(default=".reflexkit/memory/spool.jsonl", validator=non_empty)


@attrs.frozen(kw_only=True)
class VerificationConfig:
    """The ``verification`` section: the project's own checks, run after every attempt.

    A subtask with no ``verify`` commands of its own is verified by these.
    """

    commands: tuple[str, ...] = ()
    timeout_s: int = attrs.field(default=600, validator=at_least(1))
    max_output_chars: int = attrs.field(default=20_000, validator=at_least(200))


@attrs.frozen(kw_only=True)
class OrchestratorConfig:
    """The ``orchestrator`` section: how often and how long subtasks are retried."""

    max_attempts: int = attrs.field(default=3, validator=at_least(1))
    stuck_after: int = attrs.field(default=3, validator=at_least(2))
    run_timeout_s: int | None = attrs.field(default=None, validator=at_least(1))
    attempt_timeout_s: int = attrs.field(default=900, validator=at_least(1))
    jobs: int = attrs.field(default=1, validator=at_least(1))
    subagent: SubagentKind = SubagentKind.COMMAND
    agent_command: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ("Read", "Write", "Edit", "Glob", "Grep", "Bash")


@attrs.frozen(kw_only=True)
class ProjectConfig:
    """The whole of project.json."""

    reflexion: ReflexionConfig = attrs.Factory(ReflexionConfig)
    memory: MemoryConfig = attrs.Factory(MemoryConfig)
    verification: VerificationConfig = attrs.Factory(VerificationConfig)
    orchestrator: OrchestratorConfig = attrs.Factory(OrchestratorConfig)


@attrs.frozen(kw_only=True)
class LoadedProject:
    """A validated configuration and where it came from.

    Attributes:
        config: The validated configuration.
        root: The project root: the folder that holds ``.reflexkit/``; relative paths in the
            configuration are resolved against it.
        path: The file it was read from, or ``None`` when defaults were used.
    """

    config: ProjectConfig
    root: Path
    path: Path | None = None

    @property
    def memory_path(self) -> Path:
        """The memory file, resolved against the project root."""
        return self.root / Path(self.config.memory.path).expanduser()

    @property
    def spool_path(self) -> Path:
        """Where the postgres backend keeps appends while the database is away."""
        return self.root / Path(self.config.memory.spool_path).expanduser()

    def database_url(self) -> str:
        """The DSN of the postgres backend, from the variable ``memory.dsnEnv`` names.

        Raises:
            ConfigError: The variable is not set.
        """
        name = self.config.memory.dsn_env
        value = os.environ.get(name, "").strip()
        if not value:
            msg = (
                f"${name} (memory.dsnEnv) is not set; the postgres backend reads its "
                "connection string from it"
            )
            raise ConfigError([f"project.json: {msg}"])
        return value

    @property
    def fixtures_path(self) -> Path:
        """The recorded LLM replies of the fixture backend, resolved against the project root."""
        return self.root / Path(self.config.reflexion.fixtures_path).expanduser()


def find_config(start: Path) -> Path | None:
    """Return ``.reflexkit/project.json`` in *start* or its nearest parent that has one."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_RELPATH
        if candidate.is_file():
            return candidate
    return None


def _root_of(config_path: Path) -> Path:
    parent = config_path.resolve().parent
    return parent.parent if parent.name == ".reflexkit" else parent


def load_project(config: Path | str | None = None, *, cwd: Path | None = None) -> LoadedProject:
    """Find, read and validate project.json.

    The file is *config* when given, else ``$REFLEXKIT_CONFIG``, else
    ``.reflexkit/project.json`` in *cwd* or its nearest parent that has one. No file found
    means all defaults, with *cwd* as the project root.

    Args:
        config: An explicit path (``--config``); it must exist.
        cwd: Where the search starts; the current directory by default.

    Returns:
        The validated configuration with its root and path.

    Raises:
        ConfigError: The file can't be read, isn't JSON or doesn't validate; every problem
            is one line, ``"<file>: $.json.path: what was expected"``.
    """
    here = (cwd or Path.cwd()).resolve()
    explicit = config if config is not None else os.environ.get(CONFIG_ENV) or None
    path = Path(explicit).expanduser() if explicit is not None else find_config(here)
    if path is None:
        return LoadedProject(config=ProjectConfig(), root=here)
    if not path.is_absolute():
        path = here / path
    label = str(explicit) if explicit is not None else str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([f"{label}: no such file"]) from None
    except OSError as err:
        raise ConfigError([f"{label}: cannot read: {err.strerror or err}"]) from None
    data = _serde.loads(raw, source=label)
    if not isinstance(data, dict):
        raise ConfigError([f"{label}: $: expected an object, got {_serde.kind(data)}"])
    return LoadedProject(
        config=_serde.structure(data, ProjectConfig, source=label),
        root=_root_of(path),
        path=path,
    )
