"""The verification and orchestrator sections of project.json."""

from __future__ import annotations

import pytest

from reflexkit import _serde
from reflexkit.exceptions import ConfigError
from reflexkit.tasks._config import OrchestratorConfig, ProjectConfig, VerificationConfig


def test_defaults() -> None:
    """A missing section is all defaults."""
    config = _serde.structure({}, ProjectConfig)
    assert config.verification == VerificationConfig(
        commands=(), timeout_s=600, max_output_chars=20_000
    )
    assert config.orchestrator == OrchestratorConfig(
        max_attempts=3, stuck_after=3, run_timeout_s=None, attempt_timeout_s=900, jobs=1
    )


def test_camel_case_keys() -> None:
    """Every key is read in camelCase."""
    config = _serde.structure(
        {
            "verification": {"commands": ["pytest -q"], "timeoutS": 60, "maxOutputChars": 500},
            "orchestrator": {
                "maxAttempts": 5,
                "stuckAfter": 2,
                "runTimeoutS": 3600,
                "attemptTimeoutS": 300,
                "jobs": 4,
            },
        },
        ProjectConfig,
    )
    assert config.verification.commands == ("pytest -q",)
    assert config.orchestrator.run_timeout_s == 3600
    assert _serde.unstructure(config.orchestrator)["stuckAfter"] == 2


def test_bad_values() -> None:
    """Out-of-range values, wrong types and unknown keys name their JSON path."""
    with pytest.raises(ConfigError) as info:
        _serde.structure(
            {
                "verification": {"commands": "pytest", "timeoutS": 0},
                "orchestrator": {"stuckAfter": 1, "runTimeoutS": "1h", "maxAttempt": 3},
            },
            ProjectConfig,
            source="project.json",
        )
    assert info.value.errors == (
        'project.json: $.verification.commands: expected a list, got "pytest"',
        "project.json: $.verification.timeoutS: expected an integer >= 1, got 0",
        "project.json: $.orchestrator.stuckAfter: expected an integer >= 2, got 1",
        'project.json: $.orchestrator.runTimeoutS: expected an integer >= 1, got "1h"',
        'project.json: $.orchestrator.maxAttempt: unknown key (did you mean "maxAttempts"?)',
    )


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("reports", "selfReportPath", "../victim.txt"),
        ("reports", "selfReportPath", "/home/someone/.bashrc"),
        ("reports", "selfReportPath", ".reflexkit/../../victim.txt"),
        ("insights", "promptPath", "/etc/hostname"),
        ("insights", "promptPath", "../../secrets/prompt.md"),
        ("insights", "promptPath", "~/prompt.md"),
    ],
)
def test_files_the_project_names_for_reading_stay_inside_it(
    section: str, key: str, value: str
) -> None:
    """A committed project.json can't have reflexkit read (or remove) a file outside it."""
    with pytest.raises(ConfigError) as info:
        _serde.structure({section: {key: value}}, ProjectConfig, source="project.json")
    (error,) = info.value.errors
    assert f"$.{section}.{key}: expected a path inside the project" in error, error


def test_a_self_report_path_inside_the_project_is_kept() -> None:
    """The default and any relative path that stays inside load as written."""
    config = _serde.structure(
        {"reports": {"selfReportPath": "out/../.reflexkit/me.json"}}, ProjectConfig
    )
    assert config.reports.self_report_path == "out/../.reflexkit/me.json"
