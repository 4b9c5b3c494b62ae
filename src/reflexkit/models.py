"""The shared value types: what a failure looks like and what a reflection says about it.

Models are frozen attrs classes with no serialisation methods of their own: the one converter
in :mod:`reflexkit._serde` reads and writes them as camelCase JSON.
"""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime
from typing import Any

import attrs

__all__ = [
    "FailureContext",
    "FailureType",
    "Reflection",
    "ReflectionCategory",
    "ReflectionSource",
    "new_reflection_id",
    "utcnow",
]


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def new_reflection_id() -> str:
    """Return a fresh, unique reflection id (32 lowercase hex digits)."""
    return uuid.uuid4().hex


class FailureType(enum.StrEnum):
    """What kind of check failed."""

    TEST_FAILURE = "test_failure"
    TYPECHECK_ERROR = "typecheck_error"
    LINT_ERROR = "lint_error"
    BUILD_ERROR = "build_error"
    RUNTIME_ERROR = "runtime_error"
    DEPENDENCY_ERROR = "dependency_error"
    TIMEOUT = "timeout"
    TOOL_ERROR = "tool_error"
    UNKNOWN = "unknown"


class ReflectionCategory(enum.StrEnum):
    """What the reflection says went wrong."""

    ROOT_CAUSE = "root_cause"
    """The code is wrong in a specific place; fix that."""
    APPROACH_FLAW = "approach_flaw"
    """The way the subtask was attacked can't work; change strategy."""
    MISSING_CONTEXT = "missing_context"
    """Something the attempt needed to know was missing (a dependency, a file, an API)."""
    TOOL_MISUSE = "tool_misuse"
    """A tool, command or configuration was used wrongly."""
    TEST_GAP = "test_gap"
    """The tests expect something the attempt did not account for."""
    VERIFICATION = "verification"
    """The change may be right, but a check (lint, types, style) rejects it."""


class ReflectionSource(enum.StrEnum):
    """Which generator wrote a reflection."""

    LLM = "llm"
    HEURISTIC = "heuristic"
    FIXTURE = "fixture"


# --- validators: their messages become "$.path: <message>" in ConfigError lines -------------


_SHOW_MAX = 60


def _show(value: object) -> str:
    """Render a value the way the user wrote it in JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return (
            '"' + value + '"' if len(value) <= _SHOW_MAX else '"' + value[: _SHOW_MAX - 3] + '..."'
        )
    return repr(value)


def at_least(minimum: int) -> Any:  # noqa: ANN401 -- an attrs validator
    """Validate that an integer (or ``None``) is at least *minimum*."""
    expected = f"an integer >= {minimum}"

    def check(_inst: object, _attr: attrs.Attribute[Any], value: int | None) -> None:
        if value is not None and value < minimum:
            msg = f"expected {expected}, got {_show(value)}"
            raise ValueError(msg)

    check.expected = expected  # type: ignore[attr-defined]  # read by the converter's messages
    return check


def unit_interval(_inst: object, _attr: attrs.Attribute[Any], value: float) -> None:
    """Validate that a number lies in [0, 1]."""
    if not 0.0 <= value <= 1.0:
        msg = f"expected {unit_interval.expected}, got {_show(value)}"  # type: ignore[attr-defined]
        raise ValueError(msg)


unit_interval.expected = "a number between 0 and 1"  # type: ignore[attr-defined]


def non_empty(_inst: object, _attr: attrs.Attribute[Any], value: str) -> None:
    """Validate that a string is not empty or blank."""
    if not value.strip():
        msg = "expected a non-empty string"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class FailureContext:
    """One failed attempt at a subtask, as the orchestrator saw it.

    Only ``task_id``, ``subtask_id``, ``attempt_number`` and ``error_output`` are required;
    ``failure_type`` left as ``None`` means "classify it from the command and the output".
    ``error_output`` should already be redacted when the context is built by an orchestrator;
    the reflection service redacts it again before storing or sending it anywhere.
    """

    task_id: str = attrs.field(validator=non_empty)
    subtask_id: str = attrs.field(validator=non_empty)
    attempt_number: int = attrs.field(validator=at_least(1))
    error_output: str
    session_id: str = ""
    description: str = ""
    failure_type: FailureType | None = None
    command: str = ""
    exit_code: int | None = None
    files_modified: tuple[str, ...] = ()
    duration_ms: int | None = attrs.field(default=None, validator=at_least(0))
    created_at: datetime = attrs.field(factory=utcnow)


@attrs.frozen(kw_only=True)
class Reflection:
    """What one failed attempt teaches the next one.

    ``fingerprint`` identifies the failure up to noise (numbers, addresses, temporary paths,
    timings), so repeats of one failure are recognised. ``fallback_reason`` says why a
    fallback generator wrote it (``"no_api_key"``, ``"llm_timeout"`` ...), ``redactions``
    counts the secrets removed from the failure output, per rule, never their values.
    ``model``, ``input_tokens``, ``output_tokens`` and ``latency_ms`` are filled by LLM
    generators.
    """

    id: str = attrs.field(validator=non_empty)
    task_id: str
    subtask_id: str = attrs.field(validator=non_empty)
    attempt_number: int = attrs.field(validator=at_least(1))
    category: ReflectionCategory
    failure_type: FailureType
    analysis: str
    suggestion: str
    action_items: tuple[str, ...] = ()
    confidence: float = attrs.field(validator=unit_interval)
    source: ReflectionSource
    session_id: str = ""
    created_at: datetime = attrs.field(factory=utcnow)
    fingerprint: str = ""
    fallback_reason: str | None = None
    model: str | None = None
    input_tokens: int | None = attrs.field(default=None, validator=at_least(0))
    output_tokens: int | None = attrs.field(default=None, validator=at_least(0))
    latency_ms: int | None = attrs.field(default=None, validator=at_least(0))
    redactions: dict[str, int] = attrs.field(factory=dict)
