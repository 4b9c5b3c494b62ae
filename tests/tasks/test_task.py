"""Task files: a good one loads; every kind of bad one is one clear line per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexkit.exceptions import ConfigError
from reflexkit.tasks._task import Subtask, Task, load_task

ID_EXPECTED = (
    "an id of letters, digits, '.', '_' or '-', starting with a letter or a digit, "
    "at most 100 characters"
)


def write(tmp_path: Path, data: object) -> Path:
    """Write *data* as JSON to tmp_path/task.json and return its path."""
    path = tmp_path / "task.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def errors_of(path: Path) -> tuple[str, ...]:
    """Load the task and return its ConfigError lines, without the file name."""
    with pytest.raises(ConfigError) as info:
        load_task(path)
    prefix = f"{path}: "
    assert all(line.startswith(prefix) for line in info.value.errors)
    return tuple(line.removeprefix(prefix) for line in info.value.errors)


def test_good_file(tmp_path: Path) -> None:
    """Every key in camelCase, defaults where omitted."""
    path = write(
        tmp_path,
        {
            "id": "fix-cart",
            "description": "Make pricing right.",
            "subtasks": [
                {"id": "discount", "description": "Fix the discount.", "verify": ["pytest -q"]},
                {
                    "id": "docs",
                    "description": "Document it.",
                    "maxAttempts": 2,
                    "dependsOn": ["discount"],
                },
            ],
        },
    )
    task = load_task(path)
    assert task == Task(
        id="fix-cart",
        description="Make pricing right.",
        subtasks=(
            Subtask(id="discount", description="Fix the discount.", verify=("pytest -q",)),
            Subtask(
                id="docs", description="Document it.", max_attempts=2, depends_on=("discount",)
            ),
        ),
    )
    assert task.subtask("docs").max_attempts == 2
    assert task.subtasks[0].max_attempts is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            {"id": "t", "subtasks": [{"description": "x"}]},
            ("$.subtasks[0].id: required, but missing",),
            id="missing-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "", "description": "x"}]},
            (f'$.subtasks[0].id: expected {ID_EXPECTED}, got ""',),
            id="empty-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "a;touch PWNED", "description": "x"}]},
            (f'$.subtasks[0].id: expected {ID_EXPECTED}, got "a;touch PWNED"',),
            id="shell-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "../../x", "description": "x"}]},
            (f'$.subtasks[0].id: expected {ID_EXPECTED}, got "../../x"',),
            id="path-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "api/login", "description": "x"}]},
            (f'$.subtasks[0].id: expected {ID_EXPECTED}, got "api/login"',),
            id="slash-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "--help", "description": "x"}]},
            (f'$.subtasks[0].id: expected {ID_EXPECTED}, got "--help"',),
            id="option-id",
        ),
        pytest.param(
            {"id": "x" * 101, "subtasks": [{"id": "s", "description": "x"}]},
            (f'$.id: expected {ID_EXPECTED}, got "{"x" * 57}..."',),
            id="long-task-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "a", "description": "x", "maxAttempt": 2}]},
            ('$.subtasks[0].maxAttempt: unknown key (did you mean "maxAttempts"?)',),
            id="unknown-key",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "a", "description": "x", "maxAttempts": "3"}]},
            ('$.subtasks[0].maxAttempts: expected an integer >= 1, got "3"',),
            id="string-int",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "a", "description": "x", "verify": "pytest"}]},
            ('$.subtasks[0].verify: expected a list, got "pytest"',),
            id="verify-not-a-list",
        ),
        pytest.param(
            {
                "id": "t",
                "subtasks": [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}],
            },
            ('$.subtasks[1].id: duplicate id "a" (already used by $.subtasks[0])',),
            id="duplicate-id",
        ),
        pytest.param(
            {"id": "t", "subtasks": [{"id": "a", "description": "x", "dependsOn": ["b"]}]},
            ('$.subtasks[0].dependsOn[0]: unknown subtask id "b" (known ids: a)',),
            id="unknown-dependency",
        ),
        pytest.param(
            {
                "id": "t",
                "subtasks": [
                    {"id": "a", "description": "x", "dependsOn": ["b"]},
                    {"id": "b", "description": "y", "dependsOn": ["a"]},
                ],
            },
            ("$.subtasks: dependency cycle: a -> b -> a",),
            id="cycle",
        ),
        pytest.param(
            {"id": "t", "subtasks": []},
            ("$.subtasks: expected at least one subtask",),
            id="no-subtasks",
        ),
        pytest.param([1], ("$: expected an object, got a list",), id="not-an-object"),
        pytest.param(
            '{"id": "t",',
            ("invalid JSON at line 1, column 12: unexpected end of data",),
            id="invalid-json",
        ),
    ],
)
def test_bad_file(tmp_path: Path, data: object, expected: tuple[str, ...]) -> None:
    """Each problem is one line naming the JSON path."""
    assert errors_of(write(tmp_path, data)) == expected


def test_every_problem_at_once(tmp_path: Path) -> None:
    """Several problems in one file are all reported."""
    path = write(tmp_path, {"subtasks": [{"id": "a", "description": 3}], "extra": True})
    assert errors_of(path) == (
        "$.id: required, but missing",
        "$.subtasks[0].description: expected a string, got 3",
        "$.extra: unknown key (expected one of: id, description, subtasks, requireVerification)",
    )


def test_missing_file(tmp_path: Path) -> None:
    """A missing file is one line too."""
    assert errors_of(tmp_path / "task.json") == ("no such file",)
