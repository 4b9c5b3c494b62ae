"""Per-project configuration: the validated contents of ``.reflexkit/project.json``.

Every key is optional; a missing file means all defaults. Unknown keys, wrong types and
out-of-range values are errors that name the JSON path (``$.reflexion.backend``).
"""

from __future__ import annotations

import enum
import json
import math
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

import attrs

from reflexkit import _serde
from reflexkit._text import show_name
from reflexkit.exceptions import ConfigError
from reflexkit.llm import Effort, OutputMode, RequestOptions, Thinking
from reflexkit.models import at_least, non_empty


def between(low: int, high: int) -> Any:  # noqa: ANN401 -- an attrs validator
    """Validate that an integer (or ``None``) lies in ``[low, high]``."""
    expected = f"an integer from {low} to {high}"

    def check(_inst: object, _attr: attrs.Attribute[Any], value: int | None) -> None:
        if value is not None and not low <= value <= high:
            msg = f"expected {expected}, got {value!r}"
            raise ValueError(msg)

    check.expected = expected  # type: ignore[attr-defined]  # read by the converter's messages
    return check


MAX_DAYS = 100_000
"""The longest age (about 270 years) a setting or ``prune --older-than`` may name: a date
that far back is still a date; ten times that is before year 1, and an OverflowError."""

__all__ = [
    "CONFIG_ENV",
    "CONFIG_RELPATH",
    "MAX_DAYS",
    "AgentRecipe",
    "ClaudeCodeConfig",
    "Durability",
    "FixtureMiss",
    "GeneratorBackend",
    "HooksConfig",
    "InsightsConfig",
    "JudgeMode",
    "LoadedProject",
    "MemoryBackend",
    "MemoryConfig",
    "OrchestratorConfig",
    "ProjectConfig",
    "ReflexionConfig",
    "ReportsConfig",
    "ReviewSurface",
    "RiskConfig",
    "RiskSurfaces",
    "SubagentKind",
    "SurfaceRule",
    "VerificationConfig",
    "expand_user",
    "find_config",
    "load_project",
]


CONFIG_ENV = "REFLEXKIT_CONFIG"
"""The environment variable that names a project.json when ``--config`` is not given."""

CONFIG_RELPATH = Path(".reflexkit") / "project.json"
"""Where project.json lives, relative to the project root."""


class FixtureMiss(enum.StrEnum):
    """What ``backend: fixture`` does when no recorded reply has a failure's key."""

    ERROR = "error"
    """Store nothing; ``reflect`` and ``run`` exit 2 listing the missing keys."""
    HEURISTIC = "heuristic"
    """Store the heuristic's reflection, with ``fallbackReason: fixture_not_found``."""


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


_PATH_MAX = 4096  # Linux's PATH_MAX and NAME_MAX: longer never opens
_NAME_MAX = 255
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def path_text(_inst: object, _attr: attrs.Attribute[Any], value: str) -> None:
    """Validate a path of project.json: no control characters, and a ``~user`` that exists.

    A newline or a NUL in a path is never meant (and a NUL can't reach the file system);
    ``~nobody/x`` would otherwise fail deep inside a command, long after the file was read.
    """
    if not isinstance(value, str):
        return  # the type check says what is wrong
    longest = max((len(part.encode()) for part in value.split("/")), default=0)
    if len(value.encode()) > _PATH_MAX or longest > _NAME_MAX:
        msg = (
            f"expected a path of at most {_PATH_MAX} bytes, each name at most {_NAME_MAX}, "
            f"got {len(value)} characters ({show_name(value, max_chars=40)})"
        )
        raise ValueError(msg)
    if _CONTROL_RE.search(value):
        msg = f"expected a path without control characters, got {json.dumps(value)[:80]}"
        raise ValueError(msg)
    if value.startswith("~"):
        try:
            Path(value).expanduser()
        except RuntimeError:
            msg = f"no such user's home folder: {json.dumps(value)[:80]}"
            raise ValueError(msg) from None


def _non_empty_path(inst: object, attr: attrs.Attribute[Any], value: str) -> None:
    non_empty(inst, attr, value)
    path_text(inst, attr, value)


def inside_path(inst: object, attr: attrs.Attribute[Any], value: str) -> None:
    """A file reflexkit reads (or removes) for the project: relative, and inside it.

    project.json is committed with the repository; a path there that leads out
    (``../x``, ``/home/...``, ``~/x``) would have a file outside read into a report or a
    model request, and the self-report removed after reading.
    """
    _non_empty_path(inst, attr, value)
    parts = PurePosixPath(value).parts
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            break
    if value.startswith(("/", "~", "\\")) or depth < 0 or ":" in (parts[0] if parts else ""):
        msg = f"expected a path inside the project, got {json.dumps(value)[:80]}"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class ReflexionConfig:
    """The ``reflexion`` section: how reflections are generated and used."""

    enabled: bool = True
    max_reflections_per_retry: int = attrs.field(default=3, validator=at_least(1))
    generation_timeout_ms: int = attrs.field(default=30_000, validator=at_least(1))
    retention_days: int = attrs.field(default=30, validator=between(1, MAX_DAYS))
    backend: GeneratorBackend = GeneratorBackend.LLM
    model: str = "claude-haiku-5-5"
    max_prompt_chars: int = attrs.field(default=4_000, validator=at_least(200))
    fixtures_path: str = attrs.field(
        default=".reflexkit/fixtures/reflections.jsonl", validator=_non_empty_path
    )
    mode: OutputMode = OutputMode.STRUCTURED
    thinking: Thinking = Thinking.AUTO
    effort: Effort | None = Effort.LOW
    max_tokens: int = attrs.field(default=4_096, validator=between(256, 128_000))
    deterministic: bool = False
    max_writes_per_run: int | None = attrs.field(default=None, validator=at_least(0))
    fixture_miss: FixtureMiss = FixtureMiss.ERROR
    log: bool = True
    """Write each reflection's ``reflection_generated`` event (its source, fixture key,
    latency, length, reason) to the run log; off, the run log holds none (the reflections
    are stored and used all the same)."""
    max_reflection_chars: int = attrs.field(default=1_500, validator=between(200, 20_000))
    """The summary cap: a stored reflection's analysis, suggestion and action items together
    are at most this many characters, whichever generator wrote them."""
    previous_reflections: int | None = attrs.field(default=None, validator=between(0, 50))
    """How many earlier reflections of the subtask (same task and run) the generator sees
    beside the failure; ``None`` means ``maxReflectionsPerRetry``."""

    def __attrs_post_init__(self) -> None:
        """A deterministic run can't ask a live model: its replies differ between runs."""
        if self.deterministic and self.backend is GeneratorBackend.LLM:
            msg = (
                "deterministic is true but backend is llm: Claude's replies differ between "
                'runs, so the run can\'t repeat; set "backend" to "heuristic" or "fixture" '
                "(record Claude's replies first with --record-fixtures, without --deterministic)"
            )
            raise ValueError(msg)

    @property
    def previous_limit(self) -> int:
        """How many earlier reflections a generator sees (``previousReflections``)."""
        if self.previous_reflections is None:
            return self.max_reflections_per_retry
        return self.previous_reflections

    def request_options(self) -> RequestOptions:
        """The options of a reflection request: what the generators and fixture keys take."""
        return RequestOptions(
            model=self.model,
            mode=self.mode,
            max_tokens=self.max_tokens,
            thinking=self.thinking,
            effort=self.effort,
        )


@attrs.frozen(kw_only=True)
class MemoryConfig:
    """The ``memory`` section: where episodic memory lives."""

    backend: MemoryBackend = MemoryBackend.JSONL
    path: str = attrs.field(
        default=".reflexkit/memory/reflections.jsonl", validator=_non_empty_path
    )
    durability: Durability = Durability.NONE
    dsn_env: str = attrs.field(default="REFLEXKIT_DATABASE_URL", validator=non_empty)
    spool_path: str = attrs.field(
        default=".reflexkit/memory/spool.jsonl", validator=_non_empty_path
    )


class JudgeMode(enum.StrEnum):
    """Who decides whether an attempt whose checks passed (or that has none) is complete."""

    OFF = "off"
    """Nobody: passing checks (or none) mean done."""
    LLM = "llm"
    """Claude, through the anthropic SDK; when it can't answer, the attempt is not blocked."""
    HEURISTIC = "heuristic"
    """Rules over the agent's last message and the diff; deterministic, no network."""
    FIXTURE = "fixture"
    """Recorded judge replies replayed by prompt hash; for tests and CI."""


@attrs.frozen(kw_only=True)
class VerificationConfig:
    """The ``verification`` section: the project's own checks, run after every attempt.

    A subtask with no ``verify`` commands of its own is verified by these.
    """

    commands: tuple[str, ...] = ()
    timeout_s: int = attrs.field(default=600, validator=at_least(1))
    max_output_chars: int = attrs.field(default=20_000, validator=at_least(200))
    reports: tuple[str, ...] = ()
    """Report files the checks write (JUnit XML, SARIF, CTRF), relative to the project root:
    a failure names the ones its check wrote, and the reflection reads them as data."""
    judge: JudgeMode = JudgeMode.OFF
    judge_timeout_ms: int = attrs.field(default=30_000, validator=at_least(1))
    judge_fixtures_path: str = attrs.field(
        default=".reflexkit/fixtures/judge.jsonl", validator=path_text
    )


def _positive_number(_inst: object, _attr: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        msg = f"expected a number > 0, got {value:g}"
        raise ValueError(msg)


_positive_number.expected = "a number > 0"  # type: ignore[attr-defined]  # the converter reads it


def _bash_commands(_inst: object, _attr: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    for command in value:
        if not command.strip() or any(c in command for c in "()\n\r*"):
            msg = f'expected plain command prefixes such as "pytest", got {json.dumps(command)}'
            raise ValueError(msg)


@attrs.frozen(kw_only=True)
class ClaudeCodeConfig:
    """The ``orchestrator.claudeCode`` section: the Claude Code subagent's limits."""

    model: str | None = None
    max_turns: int | None = attrs.field(default=None, validator=at_least(1))
    effort: Effort | None = None
    max_budget_usd: float | None = attrs.field(default=None, validator=_positive_number)
    bash_commands: tuple[str, ...] = attrs.field(default=(), validator=_bash_commands)


def _regexes(_inst: object, _attr: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    """Validate that every pattern is a regular expression Python can compile."""
    for index, pattern in enumerate(value):
        try:
            re.compile(pattern)
        except re.error as err:
            msg = f"pattern {index} is not a regular expression: {err}"
            raise ValueError(msg) from None


def _command(_inst: object, _attr: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    if not value or not value[0].strip():
        msg = "expected a command line: the program, then its arguments"
        raise ValueError(msg)


_command.expected = "a command line: the program, then its arguments"  # type: ignore[attr-defined]


@attrs.frozen(kw_only=True)
class AgentRecipe:
    """How to run one command-line agent: a built-in recipe, or one of ``orchestrator.agents``.

    Attributes:
        command: The command line, one argument per item: ``{prompt}`` becomes the prompt
            (one argument), ``{prompt_file}`` the path of a file holding it; with neither the
            prompt goes to stdin.
        env: Variables the agent gets unless the environment already sets them (the model,
            its base URL and key are the agent's own variables, left to the user).
        about: One line on the agent, for ``reflexkit run --help`` and the docs.
    """

    command: tuple[str, ...] = attrs.field(validator=_command)
    env: dict[str, str] = attrs.field(factory=dict, hash=False)  # the config stays hashable
    about: str = ""
    setup_errors: tuple[str, ...] = attrs.field(default=(), validator=_regexes)
    """Regular expressions for the agent's own output when it can't reach or use its model
    (``litellm.APIConnectionError``): an attempt that failed or timed out printing one is a
    setup error, not a lesson about the code."""


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
    allowed_tools: tuple[str, ...] = ()
    claude_code: ClaudeCodeConfig = attrs.Factory(ClaudeCodeConfig)
    agent: str | None = None
    """A recipe's name (``aider``, ``codex``, one of :attr:`agents` ...): the ``command``
    subagent runs its command line (docs/agents.md)."""
    agents: dict[str, AgentRecipe] = attrs.field(factory=dict, hash=False)
    """The project's own recipes, by name; a name of a built-in one replaces it."""
    agent_args: tuple[str, ...] = ()
    """Arguments added after the recipe's command line (files for aider, an edit format ...)."""


class ReviewSurface(enum.StrEnum):
    """What part of a project a change touches, for the review risk floor."""

    AUTH = "auth"
    DATA = "data"
    INFRA = "infra"
    BUILD = "build"
    UI = "ui"
    TEST = "test"
    DOCS = "docs"
    NONE = "none"


def _weight(_inst: object, _attr: attrs.Attribute[Any], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        msg = f"expected a number between 0 and 1, got {value!r}"
        raise ValueError(msg)


_weight.expected = "a number between 0 and 1"  # type: ignore[attr-defined]  # for the converter


@attrs.frozen(kw_only=True)
class SurfaceRule:
    """One row of the risk table: the paths of a surface and how risky a change there is.

    Attributes:
        weight: The score of a change on this surface, 0 to 1.
        patterns: Regular expressions searched in each changed path (lowercase, ``/``
            separators); one match puts the file on this surface.
    """

    weight: float = attrs.field(validator=_weight)
    patterns: tuple[str, ...] = attrs.field(validator=_regexes)


@attrs.frozen(kw_only=True)
class RiskSurfaces:
    """Per surface, a rule replacing the built-in one; ``null`` (or absent) keeps the default.

    Of the surfaces whose patterns match a file, the one of the highest weight wins (between
    equal weights: auth, data, infra, build, ui, test, docs); a file no pattern matches is on
    ``none``.
    """

    test: SurfaceRule | None = None
    docs: SurfaceRule | None = None
    auth: SurfaceRule | None = None
    data: SurfaceRule | None = None
    infra: SurfaceRule | None = None
    build: SurfaceRule | None = None
    ui: SurfaceRule | None = None


@attrs.frozen(kw_only=True)
class RiskConfig:
    """The ``risk`` section: when a diff needs an independent review.

    Attributes:
        threshold: A diff whose score reaches this needs review.
        large_diff_lines: A diff of at least this many changed lines (insertions plus
            deletions) scores at least *threshold*, whatever it touches.
        surfaces: Rules replacing the built-in ones, per surface.
    """

    threshold: float = attrs.field(default=0.5, validator=_weight)
    large_diff_lines: int = attrs.field(default=800, validator=at_least(1))
    surfaces: RiskSurfaces = attrs.Factory(RiskSurfaces)


@attrs.frozen(kw_only=True)
class ReportsConfig:
    """The ``reports`` section: a ``reflexkit.report.v1`` file after every attempt.

    Attributes:
        enabled: Write reports (nothing is written when off).
        path: The folder of reports, relative to the project root; one subfolder per run.
        self_report_path: Where the agent may write its self-report, relative to the root.
    """

    enabled: bool = False
    path: str = attrs.field(default=".reflexkit/reports", validator=path_text)
    self_report_path: str = attrs.field(
        default=".reflexkit/self-report.json", validator=inside_path
    )


@attrs.frozen(kw_only=True)
class HooksConfig:
    """The ``hooks`` section: reflexkit as Claude Code hooks (``reflexkit hook install``).

    Attributes:
        enabled: Every hook is a strict no-op unless this is true.
        max_stop_blocks: The most times per request of the user the stop hook sends the
            agent back to work with the judge's feedback (a new request starts a new count).
        lessons: How many recent lessons the session-start hook adds as context.
        log_path: Where hooks log what they did and every error, relative to the root.
    """

    enabled: bool = False
    max_stop_blocks: int = attrs.field(default=3, validator=at_least(0))
    lessons: int = attrs.field(default=5, validator=at_least(0))
    log_path: str = attrs.field(default=".reflexkit/hooks/hooks.log", validator=path_text)


@attrs.frozen(kw_only=True)
class InsightsConfig:
    """The ``insights`` section: rules over run history, paused subtasks, lessons (#17).

    Attributes:
        enabled: Run the rules at run start and after each failed attempt.
        consecutive_failure_limit: A subtask stuck or exhausted in this many runs in a row is
            paused; a file modified in this many failed attempts within the lookback is
            flagged.
        timeout_limit: This many timed-out attempts of a subtask in a row is a finding.
        lookback_hours: How far back the file-correlation rule looks.
        min_result_length: Agent output shorter than this many characters is "no output".
        batch_threshold: Analyse the findings every this many completed attempts of a run.
        max_lessons: The most lessons from other subtasks in one retry prompt (0: none).
        model: The model of the analysis; ``None``: ``reflexion.model``.
        prompt_path: A file whose text replaces the analysis's built-in system prompt,
            relative to the project root; ``None``: the built-in one.
    """

    enabled: bool = True
    consecutive_failure_limit: int = attrs.field(default=3, validator=at_least(2))
    timeout_limit: int = attrs.field(default=3, validator=at_least(1))
    lookback_hours: int = attrs.field(default=24, validator=between(1, MAX_DAYS * 24))
    min_result_length: int = attrs.field(default=20, validator=at_least(0))
    batch_threshold: int = attrs.field(default=10, validator=at_least(1))
    max_lessons: int = attrs.field(default=2, validator=at_least(0))
    model: str | None = attrs.field(default=None, validator=attrs.validators.optional(non_empty))
    prompt_path: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(inside_path)
    )


@attrs.frozen(kw_only=True)
class ProjectConfig:
    """The whole of project.json."""

    reflexion: ReflexionConfig = attrs.Factory(ReflexionConfig)
    memory: MemoryConfig = attrs.Factory(MemoryConfig)
    verification: VerificationConfig = attrs.Factory(VerificationConfig)
    orchestrator: OrchestratorConfig = attrs.Factory(OrchestratorConfig)
    insights: InsightsConfig = attrs.Factory(InsightsConfig)
    reports: ReportsConfig = attrs.Factory(ReportsConfig)
    risk: RiskConfig = attrs.Factory(RiskConfig)
    hooks: HooksConfig = attrs.Factory(HooksConfig)

    def __attrs_post_init__(self) -> None:
        """A deterministic run can't have a live model judge its attempts either."""
        if self.reflexion.deterministic and self.verification.judge is JudgeMode.LLM:
            msg = (
                "reflexion.deterministic is true but verification.judge is llm: Claude's "
                'verdicts differ between runs; set the judge to "heuristic" or "fixture"'
            )
            raise ValueError(msg)


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
    def runs_dir(self) -> Path:
        """The run logs: ``.reflexkit/runs``, one ``<run id>.jsonl`` per run."""
        return self.root / ".reflexkit" / "runs"

    @property
    def insights_path(self) -> Path:
        """The findings of the insight rules: ``.reflexkit/insights.jsonl``."""
        return self.root / ".reflexkit" / "insights.jsonl"

    @property
    def lessons_path(self) -> Path:
        """The project's lessons: ``.reflexkit/lessons.jsonl``."""
        return self.root / ".reflexkit" / "lessons.jsonl"

    @property
    def paused_path(self) -> Path:
        """The paused subtasks: ``.reflexkit/paused.jsonl``."""
        return self.root / ".reflexkit" / "paused.jsonl"

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
    # The folder that holds .reflexkit/, found without following a .reflexkit that is a
    # symlink: through one, the "root" was the link's target and the run worked there.
    parent = config_path.absolute().parent
    return (parent.parent if parent.name == ".reflexkit" else parent).resolve()


_LABEL_MAX = 200
"""How much of a file name an error line shows (the middle of a longer one is cut)."""


def _current_folder() -> Path:
    try:
        return Path.cwd().resolve()
    except FileNotFoundError:
        msg = "the current folder was deleted; cd into the project (or pass --config)"
        raise ConfigError([msg]) from None
    except OSError as err:
        raise ConfigError([f"the current folder can't be read: {err.strerror or err}"]) from None


def expand_user(path: Path, label: str) -> Path:
    """``path.expanduser()``, with a ConfigError for a ``~user`` that does not exist.

    Raises:
        ConfigError: The home folder can't be found.
    """
    try:
        return path.expanduser()
    except RuntimeError:
        raise ConfigError([f"{label}: no such user's home folder"]) from None


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
    project = _load(config, cwd)
    _check_memory_file(project)
    _check_written_inside(project)
    return project


def _written_paths(project: LoadedProject) -> list[tuple[str, Path, bool]]:
    """The files and folders project.json names that reflexkit writes: key, path, is a folder."""
    config = project.config
    return [
        ("$.memory.path", project.memory_path, False),
        ("$.memory.spoolPath", project.spool_path, False),
        ("$.hooks.logPath", project.root / Path(config.hooks.log_path).expanduser(), False),
        ("$.reports.path", project.root / Path(config.reports.path).expanduser(), True),
    ]


def _check_written_inside(project: LoadedProject) -> None:
    """Refuse a file or folder reflexkit writes that leads out of the project.

    project.json is committed with the repository: a ``memory.path`` of ``~/.bashrc`` (or
    ``../x``, or a committed link to a folder outside) would have every reflection, which
    quotes tool output such as ``$(...)``, appended to a file the user's shell runs. The
    folder each lives in is resolved (links followed) and must be inside the project root;
    the file itself is never followed (the writers open it with ``O_NOFOLLOW``).
    """
    root = project.root.resolve()
    for key, path, folder in _written_paths(project):
        where = path if folder else path.parent
        resolved = Path(os.path.realpath(where))
        if resolved != root and not resolved.is_relative_to(root):
            label = f"{project.path}: " if project.path else ""
            link = _first_link(project.root, where)
            if link is not None:
                why = (
                    f"{show_name(str(link))} is a symbolic link that leads out of the project "
                    f"(to {show_name(str(resolved))}); reflexkit does not follow links it did "
                    "not make"
                )
            else:
                why = f"got {show_name(str(path))}, which leads to {show_name(str(resolved))}"
            msg = f"{label}{key}: expected a path inside the project; {why}"
            raise ConfigError([msg])
        inside = resolved.relative_to(root)
        _check_not_state(project, key, path, inside if folder else inside / path.name)


def _check_not_state(project: LoadedProject, key: str, path: Path, inside: Path) -> None:
    """Refuse a written path in git's own folder or on the configuration file itself.

    Inside the project, but not the project's files: appended to ``.git/config`` a
    reflection leaves every git command failing (``fatal: bad config line``), and in
    ``.git/hooks`` it waits for a mode change to run; on project.json it breaks the next load.
    """
    state = ".git" in inside.parts
    config_file = project.path is not None and Path(os.path.realpath(project.path)) == (
        project.root.resolve() / inside
    )
    if state or config_file:
        label = f"{project.path}: " if project.path else ""
        what = "git's own folder" if state else "the configuration file itself"
        msg = (
            f"{label}{key}: expected a path inside the project outside {what}; "
            f"got {show_name(str(path))}"
        )
        raise ConfigError([msg])


def _first_link(root: Path, where: Path) -> Path | None:
    """The first folder on the way from *root* to *where* that is a symbolic link, if any."""
    try:
        parts = where.relative_to(root).parts
    except ValueError:
        return None
    folder = root
    for part in parts:
        folder /= part
        if folder.is_symlink():
            return folder.relative_to(root)
    return None


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_memory_file(project: LoadedProject) -> None:
    """Refuse a memory file that is a FIFO, a device or a socket: opening one would hang."""
    jsonl = project.config.memory.backend is MemoryBackend.JSONL
    key, path = ("path", project.memory_path) if jsonl else ("spoolPath", project.spool_path)
    try:
        mode = path.lstat().st_mode
    except OSError:
        return  # missing (created on the first append) or unreachable: memory says why
    for test, what in _SPECIAL:
        if test(mode):
            where = f"{project.path}: " if project.path else ""
            msg = f"{where}$.memory.{key}: {show_name(str(path))} is {what}; expected a JSONL file"
            raise ConfigError([msg])


def _load(config: Path | str | None, cwd: Path | None) -> LoadedProject:
    here = _current_folder() if cwd is None else cwd.resolve()
    from_env = os.environ.get(CONFIG_ENV, "")
    # Unset, empty and blank are the same: a stray `export REFLEXKIT_CONFIG=" "` means none.
    explicit = config if config is not None else (from_env if from_env.strip() else None)
    label = show_name(str(explicit), max_chars=_LABEL_MAX) if explicit is not None else ""
    if config is None and explicit is not None:
        label = f"{label} (${CONFIG_ENV})"
    path = expand_user(Path(explicit), label) if explicit is not None else find_config(here)
    if path is None:
        return LoadedProject(config=ProjectConfig(), root=here)
    if not path.is_absolute():
        path = here / path
    label = label or show_name(str(path), max_chars=_LABEL_MAX)
    raw = _serde.read_file(path, source=label)
    data = _serde.loads(raw, source=label)
    if not isinstance(data, dict):
        raise ConfigError([f"{label}: $: expected an object, got {_serde.kind(data)}"])
    return LoadedProject(
        config=_serde.structure(data, ProjectConfig, source=label),
        root=_root_of(path),
        path=path,
    )
