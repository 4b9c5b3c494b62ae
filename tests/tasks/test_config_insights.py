"""The insights section of project.json: defaults and one clear line per bad value (#17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reflexkit import ConfigError, load_project
from reflexkit.cli import cli
from reflexkit.tasks._config import CONFIG_RELPATH, InsightsConfig


def _write(root: Path, data: object) -> Path:
    path = root / CONFIG_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_defaults(project_dir: Path) -> None:
    """No insights section means the defaults; the state files sit under .reflexkit/."""
    project = load_project()
    assert project.config.insights == InsightsConfig()
    assert project.config.insights.enabled
    assert project.config.insights.consecutive_failure_limit == 3
    assert project.insights_path == project_dir.resolve() / ".reflexkit" / "insights.jsonl"
    assert project.lessons_path.name == "lessons.jsonl"
    assert project.paused_path.name == "paused.jsonl"
    assert project.runs_dir.name == "runs"


def test_values_are_read(project_dir: Path) -> None:
    """Every key of the section is read, camelCase."""
    _write(
        project_dir,
        {
            "insights": {
                "enabled": False,
                "consecutiveFailureLimit": 4,
                "timeoutLimit": 2,
                "lookbackHours": 48,
                "minResultLength": 0,
                "batchThreshold": 5,
                "maxLessons": 0,
            }
        },
    )
    assert load_project().config.insights == InsightsConfig(
        enabled=False,
        consecutive_failure_limit=4,
        timeout_limit=2,
        lookback_hours=48,
        min_result_length=0,
        batch_threshold=5,
        max_lessons=0,
    )


BAD = [
    ({"enabled": "true"}, '$.insights.enabled: expected true or false, got "true"'),
    (
        {"consecutiveFailureLimit": 1},
        "$.insights.consecutiveFailureLimit: expected an integer >= 2, got 1",
    ),
    ({"timeoutLimit": "3"}, '$.insights.timeoutLimit: expected an integer >= 1, got "3"'),
    (
        {"lookbackHours": 0},
        "$.insights.lookbackHours: expected an integer from 1 to 2400000, got 0",
    ),
    ({"minResultLength": -1}, "$.insights.minResultLength: expected an integer >= 0, got -1"),
    ({"batchThreshold": 2.5}, "$.insights.batchThreshold: expected an integer >= 1, got 2.5"),
    ({"maxLessons": None}, "$.insights.maxLessons: expected an integer >= 0, got null"),
    ({"maxLesson": 3}, '$.insights.maxLesson: unknown key (did you mean "maxLessons"?)'),
]


@pytest.mark.parametrize(("section", "expected"), BAD, ids=[next(iter(s)) for s, _ in BAD])
def test_bad_values_name_their_path(project_dir: Path, section: object, expected: str) -> None:
    """A wrong type, an out-of-range value or a typo is one line naming the JSON path."""
    path = _write(project_dir, {"insights": section})
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert list(caught.value.errors) == [f"{path.resolve()}: {expected}"]
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 2
    assert expected in result.stderr


def test_section_must_be_an_object(project_dir: Path) -> None:
    """`"insights": true` is an error at $.insights."""
    _write(project_dir, {"insights": True})
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert "$.insights: expected an object" in caught.value.errors[0]
