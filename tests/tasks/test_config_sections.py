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
