"""A coverage gate that failed while every test passed."""

from __future__ import annotations

import pytest

from reflexkit.models import FailureType, ReflectionCategory

from ..conftest import (  # noqa: TID252 -- tests/ is no package; importlib mode resolves it
    captured_reflection,
    reflection_text,
)


@pytest.mark.parametrize(
    ("item", "facts"),
    [
        (
            "pytest-cov-fail-under-shipping",
            [
                "Required test coverage of 85% not reached. Total coverage: 26.67%",
                "shipping/labels.py         2      2     0%   1-2",
                "shipping/rates.py",
            ],
        ),
        (
            "jest-coverage-threshold-pricing",
            [
                'Jest: "global" coverage threshold for statements (80%) not met: 33.33%',
                "coverage threshold for functions (100%) not met",
                "price.js",
            ],
        ),
    ],
)
def test_coverage_gate_with_every_test_passing_is_a_test_gap(item: str, facts: list[str]) -> None:
    """Tests pass but the coverage gate fails: the missing tests are the lesson, not code."""
    reflection = captured_reflection(item)
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert reflection.category is ReflectionCategory.TEST_GAP
    text = reflection_text(reflection)
    for fact in facts:
        assert fact in text
