"""project.json: where it is found, defaults, and one clear line for every kind of bad file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from reflexkit import ConfigError, ProjectConfig, load_project
from reflexkit.cli import cli
from reflexkit.tasks import _config as config_module
from reflexkit.tasks._config import (
    CONFIG_RELPATH,
    ClaudeCodeConfig,
    Durability,
    GeneratorBackend,
)


def write_config(root: Path, text: str) -> Path:
    """Write *text* as root/.reflexkit/project.json and return its path."""
    path = root / CONFIG_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


_SECTIONS = [
    obj
    for obj in vars(config_module).values()
    if isinstance(obj, type)
    and attrs.has(obj)
    and obj.__module__ == config_module.__name__
    and obj.__name__ not in {"LoadedProject", "SurfaceRule", "AgentRecipe"}  # required fields
]


def test_no_file_means_all_defaults(project_dir: Path) -> None:
    """Without a project.json every value is its default and the root is the cwd."""
    project = load_project()
    assert project.config == ProjectConfig()
    assert project.path is None
    assert project.root == project_dir.resolve()
    assert project.config.reflexion.max_reflections_per_retry == 3
    assert project.config.reflexion.model == "claude-haiku-5-5"


def test_found_in_a_parent_folder(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nearest parent with .reflexkit/project.json is the project root."""
    write_config(project_dir, '{"reflexion": {"backend": "heuristic"}}')
    nested = project_dir / "src" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    project = load_project()
    assert project.config.reflexion.backend is GeneratorBackend.HEURISTIC
    assert project.root == project_dir.resolve()
    assert project.memory_path == project_dir.resolve() / ".reflexkit/memory/reflections.jsonl"


def test_env_variable_names_the_file(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$REFLEXKIT_CONFIG is used when no --config is given."""
    other = project_dir / "elsewhere.json"
    other.write_text('{"memory": {"durability": "fsync"}}', encoding="utf-8")
    monkeypatch.setenv("REFLEXKIT_CONFIG", str(other))
    assert load_project().config.memory.durability is Durability.FSYNC


def test_explicit_path_wins_over_env(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--config beats $REFLEXKIT_CONFIG."""
    monkeypatch.setenv("REFLEXKIT_CONFIG", str(project_dir / "missing.json"))
    explicit = project_dir / "p.json"
    explicit.write_text('{"reflexion": {"retentionDays": 7}}', encoding="utf-8")
    assert load_project(explicit).config.reflexion.retention_days == 7


BAD_FILES: list[tuple[str, str, str]] = [
    (
        "string for an int",
        '{"reflexion": {"maxReflectionsPerRetry": "three"}}',
        '$.reflexion.maxReflectionsPerRetry: expected an integer >= 1, got "three"',
    ),
    (
        "float for an int",
        '{"reflexion": {"generationTimeoutMs": 2.5}}',
        "$.reflexion.generationTimeoutMs: expected an integer >= 1, got 2.5",
    ),
    (
        "out of range",
        '{"reflexion": {"maxReflectionsPerRetry": 0}}',
        "$.reflexion.maxReflectionsPerRetry: expected an integer >= 1, got 0",
    ),
    (
        "negative retention",
        '{"reflexion": {"retentionDays": -1}}',
        "$.reflexion.retentionDays: expected an integer from 1 to 100000, got -1",
    ),
    (
        "prompt budget too small",
        '{"reflexion": {"maxPromptChars": 10}}',
        "$.reflexion.maxPromptChars: expected an integer >= 200, got 10",
    ),
    (
        "string for a bool",
        '{"reflexion": {"enabled": "false"}}',
        '$.reflexion.enabled: expected true or false, got "false"',
    ),
    (
        "number for a bool",
        '{"reflexion": {"enabled": 0}}',
        "$.reflexion.enabled: expected true or false, got 0",
    ),
    (
        "unknown enum value",
        '{"reflexion": {"backend": "gpt"}}',
        '$.reflexion.backend: expected one of llm, heuristic, fixture, got "gpt"',
    ),
    (
        "misspelt key",
        '{"reflexion": {"maxReflectionPerRetry": 3}}',
        '$.reflexion.maxReflectionPerRetry: unknown key (did you mean "maxReflectionsPerRetry"?)',
    ),
    (
        "snake_case key",
        '{"memory": {"durability": "none", "file_path": "x"}}',
        (
            "$.memory.file_path: unknown key"
            " (expected one of: backend, path, durability, dsnEnv, spoolPath)"
        ),
    ),
    (
        "unknown section",
        '{"reflection": {}}',
        '$.reflection: unknown key (did you mean "reflexion"?)',
    ),
    (
        "null where a value is required",
        '{"reflexion": {"model": null}}',
        "$.reflexion.model: expected a string, got null",
    ),
    (
        "list for a section",
        '{"memory": ["jsonl"]}',
        '$.memory: expected an object, got ["jsonl"]',
    ),
    (
        "a list at the top",
        '[{"reflexion": {}}]',
        "$: expected an object, got a list",
    ),
    (
        "a string at the top",
        '"reflexion"',
        "$: expected an object, got a string",
    ),
    (
        "invalid JSON",
        '{"reflexion": {"enabled": true,}}',
        "invalid JSON at line 1, column 31: trailing comma is not allowed",
    ),
    (
        "invalid JSON on a later line",
        '{\n  "memory": {\n    "path": "m.jsonl"\n  \n',
        "invalid JSON at line 5, column 1: unexpected end of data",
    ),
    (
        "empty file",
        "",
        "the file is empty; expected a JSON object",
    ),
    (
        "whitespace only",
        "  \n",
        "the file is empty; expected a JSON object",
    ),
    (
        "unknown reflexion mode",
        '{"reflexion": {"mode": "json_schema"}}',
        '$.reflexion.mode: expected one of structured, tool, got "json_schema"',
    ),
    (
        "unknown thinking",
        '{"reflexion": {"thinking": "enabled"}}',
        '$.reflexion.thinking: expected one of auto, adaptive, disabled, got "enabled"',
    ),
    (
        "unknown effort",
        '{"reflexion": {"effort": "minimal"}}',
        '$.reflexion.effort: expected one of low, medium, high, xhigh, max, got "minimal"',
    ),
    (
        "max tokens too small for a reflection",
        '{"reflexion": {"maxTokens": 64}}',
        "$.reflexion.maxTokens: expected an integer from 256 to 128000, got 64",
    ),
    (
        "max tokens as a string",
        '{"reflexion": {"maxTokens": "4096"}}',
        '$.reflexion.maxTokens: expected an integer from 256 to 128000, got "4096"',
    ),
    (
        "claude code turns out of range",
        '{"orchestrator": {"claudeCode": {"maxTurns": 0}}}',
        "$.orchestrator.claudeCode.maxTurns: expected an integer >= 1, got 0",
    ),
    (
        "claude code budget not positive",
        '{"orchestrator": {"claudeCode": {"maxBudgetUsd": 0}}}',
        "$.orchestrator.claudeCode.maxBudgetUsd: expected a number > 0, got 0",
    ),
    (
        "claude code budget as a string",
        '{"orchestrator": {"claudeCode": {"maxBudgetUsd": "2"}}}',
        '$.orchestrator.claudeCode.maxBudgetUsd: expected a number > 0, got "2"',
    ),
    (
        "claude code effort unknown",
        '{"orchestrator": {"claudeCode": {"effort": "extreme"}}}',
        (
            "$.orchestrator.claudeCode.effort: expected one of low, medium, high, xhigh, max,"
            ' got "extreme"'
        ),
    ),
    (
        "a bash command that is a pattern",
        '{"orchestrator": {"claudeCode": {"bashCommands": ["rm *"]}}}',
        (
            "$.orchestrator.claudeCode.bashCommands: expected plain command prefixes such as"
            ' "pytest", got "rm *"'
        ),
    ),
    (
        "misspelt claude code key",
        '{"orchestrator": {"claudeCode": {"maxTurn": 3}}}',
        '$.orchestrator.claudeCode.maxTurn: unknown key (did you mean "maxTurns"?)',
    ),
    (
        "unknown durability",
        '{"memory": {"durability": "always"}}',
        '$.memory.durability: expected one of none, fsync, got "always"',
    ),
]


@pytest.mark.parametrize(("case", "text", "expected"), BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_config_check_rejects_bad_file(
    project_dir: Path, case: str, text: str, expected: str
) -> None:
    """`reflexkit config check` exits 2 with one line naming the path and what was expected."""
    path = write_config(project_dir, text)
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 2, case
    lines = result.stderr.splitlines()
    assert lines == [f"reflexkit: {path.resolve()}: {expected}"], case
    assert result.stdout == ""


def test_several_errors_are_reported_at_once(project_dir: Path) -> None:
    """Every problem of a file is its own line, in one run."""
    write_config(
        project_dir,
        json.dumps({"reflexion": {"enabled": "yes", "retentionDays": 0}, "memory": {"pth": "x"}}),
    )
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert len(caught.value.errors) == 3


def test_unreadable_file_is_one_line(project_dir: Path) -> None:
    """A path that can't be read as a file (here: a folder) is a clear error, exit 2."""
    (project_dir / CONFIG_RELPATH).mkdir(parents=True)
    result = CliRunner().invoke(
        cli, ["--config", str(project_dir / CONFIG_RELPATH), "config", "check"]
    )
    assert result.exit_code == 2
    assert "cannot read" in result.stderr or "a directory" in result.stderr.lower()


@pytest.mark.usefixtures("project_dir")
def test_missing_explicit_file_is_an_error() -> None:
    """--config naming a file that does not exist is exit 2, not defaults."""
    result = CliRunner().invoke(cli, ["--config", "nope.json", "config", "check"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "reflexkit: nope.json: no such file"


def test_config_check_prints_effective_config(project_dir: Path) -> None:
    """A valid file prints the whole effective configuration, defaults filled in."""
    write_config(project_dir, '{"reflexion": {"maxPromptChars": 2000}}')
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    assert printed["reflexion"]["maxPromptChars"] == 2000
    assert printed["memory"]["path"] == ".reflexkit/memory/reflections.jsonl"


@pytest.mark.usefixtures("project_dir")
def test_config_init_writes_defaults_and_refuses_overwrite() -> None:
    """Init writes a valid file of defaults, and won't overwrite it without --force."""
    runner = CliRunner()
    assert runner.invoke(cli, ["config", "init"]).exit_code == 0
    assert load_project().config == ProjectConfig()
    again = runner.invoke(cli, ["config", "init"])
    assert again.exit_code == 2  # bad input, as docs/cli.md says
    assert "already exists" in again.stderr
    assert runner.invoke(cli, ["config", "init", "--force"]).exit_code == 0


def test_console_script_has_no_traceback(project_dir: Path) -> None:
    """The real process prints one line and exits 2 on a bad file, no traceback."""
    write_config(project_dir, '{"reflexion": {"enabled": "false"}}')
    proc = subprocess.run(
        [sys.executable, "-m", "reflexkit", "config", "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


@pytest.mark.usefixtures("project_dir")
def test_usage_error_exits_2() -> None:
    """An unknown option is a usage error: exit 2."""
    assert CliRunner().invoke(cli, ["config", "check", "--bogus"]).exit_code == 2


def test_version() -> None:
    """--version prints the version."""
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert "reflexkit" in result.stdout


@pytest.mark.parametrize("cls", _SECTIONS, ids=lambda cls: cls.__name__)
def test_sections_compare_hash_and_print_field_by_field(cls: type[Any]) -> None:
    """The sections' shared __eq__, __hash__ and __repr__ act as attrs' generated ones."""
    default = cls()
    assert default == cls()
    assert hash(default) == hash(cls())
    assert len({default, cls()}) == 1
    names = [field.name for field in attrs.fields(cls)]
    assert repr(default) == (
        f"{cls.__qualname__}("
        + ", ".join(f"{name}={getattr(default, name)!r}" for name in names)
        + ")"
    )
    assert all(default != other() for other in _SECTIONS if other is not cls)
    assert default != object()


def test_sections_differ_when_a_field_does() -> None:
    """A changed field, however deep, makes the whole configuration unequal."""
    base = ProjectConfig()
    changed = attrs.evolve(
        base,
        orchestrator=attrs.evolve(base.orchestrator, claude_code=ClaudeCodeConfig(max_turns=3)),
    )
    assert changed != base
    assert changed == attrs.evolve(changed)
    assert hash(changed) == hash(attrs.evolve(changed))
    assert "ClaudeCodeConfig(model=None, max_turns=3," in repr(changed)
