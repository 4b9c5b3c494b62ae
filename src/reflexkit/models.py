"""The shared value types: what a failure looks like and what a reflection says about it.

Models are frozen attrs classes with no serialisation methods of their own: the one converter
in :mod:`reflexkit._serde` reads and writes them as camelCase JSON.
"""

from __future__ import annotations

import enum
import os
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import attrs

__all__ = [
    "DEFAULT_EPOCH",
    "FailureContext",
    "FailureType",
    "LogicalClock",
    "Reflection",
    "ReflectionCategory",
    "ReflectionSource",
    "derived_reflection_id",
    "new_reflection_id",
    "utcnow",
]


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def new_reflection_id() -> str:
    """Return a fresh, unique reflection id (32 lowercase hex digits)."""
    return uuid.uuid4().hex


def derived_reflection_id(
    *, run_id: str, task_id: str, subtask_id: str, attempt: int, fingerprint: str
) -> str:
    """Return the deterministic id of a reflection (32 lowercase hex digits).

    The same run, task, subtask, attempt and failure fingerprint always give the same id, so
    two deterministic runs write byte-identical memory, and storing one lesson twice is
    recognisable as a repeat.
    """
    # The interpreter's own SHA-256, without hashlib's OpenSSL set-up: every reflection gets
    # this id, and `reflexkit reflect` must start fast (#19).
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415 -- 3.11
    except ImportError:  # pragma: no cover -- 3.12 renamed it; an interpreter without both
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # noqa: PLC0415
        except ImportError:
            from hashlib import sha256  # noqa: PLC0415

    parts = (run_id, task_id, subtask_id, str(attempt), fingerprint)
    digest: str = sha256("\0".join(parts).encode()).hexdigest()
    return digest[:32]


DEFAULT_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""The instant a :class:`LogicalClock` shows when ``SOURCE_DATE_EPOCH`` is not set."""


@attrs.frozen
class LogicalClock:
    """A clock for deterministic runs: it always shows the same instant.

    Every reflection and event of a deterministic run is stamped with it, so two runs of
    the same task write the same bytes, whatever the thread schedule. The instant is
    ``SOURCE_DATE_EPOCH`` (seconds since 1970, the reproducible-builds convention) when that
    is set, else :data:`DEFAULT_EPOCH`; ``reflexkit prune`` counts retention from it.
    """

    instant: datetime = DEFAULT_EPOCH

    @classmethod
    def from_environment(cls) -> LogicalClock:
        """Return the clock at ``SOURCE_DATE_EPOCH`` when it is a whole number, else the default."""
        value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        if value.isdigit():
            return cls(datetime.fromtimestamp(int(value), tz=UTC))
        return cls()

    def __call__(self) -> datetime:
        """Return the clock's instant."""
        return self.instant


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
    JUDGE_REJECTED = "judge_rejected"
    """The checks passed (or there were none), but the completion judge found work missing.

    Set only by the retry loop; the failure's output is the judge's feedback.
    """


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
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int over 4,300 digits, a structure too deep
        if isinstance(value, int):
            return f"an integer of {value.bit_length()} bits"
        return f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= _SHOW_MAX else text[: _SHOW_MAX - 3] + "..."


def _wrong_type(attr: attrs.Attribute[Any] | str, expected: str, value: object) -> TypeError:
    """A TypeError that names the field, what it takes and what it got."""
    name = attr if isinstance(attr, str) else attr.name
    return TypeError(f"{name}: expected {expected}, got {type(value).__name__} {_show(value)}")


INT64_MAX = 2**63 - 1
"""The largest integer a record can carry: JSONL and every JSON peer stop at 64 bits."""
INT64_MIN = -(2**63)


def at_least(minimum: int) -> Any:  # noqa: ANN401 -- an attrs validator
    """Validate that an integer (or ``None``) is at least *minimum*.

    A string, a float or a bool is a :class:`TypeError` naming the field: ``"2"`` is not an
    attempt number, and a bool is an int only by accident of history.
    """
    expected = f"an integer >= {minimum}"

    def check(_inst: object, attr: attrs.Attribute[Any], value: int | None) -> None:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise _wrong_type(attr, "an integer", value)
        if value is not None and value < minimum:
            msg = f"expected {expected}, got {_show(value)}"
            raise ValueError(msg)
        if value is not None and value > INT64_MAX:
            msg = f"expected {expected} that fits in 64 bits, got {_show(value)}"
            raise ValueError(msg)

    check.expected = expected  # type: ignore[attr-defined]  # read by the converter's messages
    return check


def unit_interval(_inst: object, _attr: attrs.Attribute[Any], value: float) -> None:
    """Validate that a number lies in [0, 1]."""
    if not 0.0 <= value <= 1.0:
        msg = f"expected {unit_interval.expected}, got {_show(value)}"  # type: ignore[attr-defined]
        raise ValueError(msg)


unit_interval.expected = "a number between 0 and 1"  # type: ignore[attr-defined]


def non_empty(_inst: object, attr: attrs.Attribute[Any], value: str) -> None:
    """Validate that a string is not empty or blank."""
    if not isinstance(value, str):
        raise _wrong_type(attr, "a string", value)
    if not value.strip():
        msg = "expected a non-empty string"
        raise ValueError(msg)


def _text(value: object, field: str) -> str:
    """Take a string as it is and bytes decoded as UTF-8 (bad bytes replaced).

    Tool output arrives as bytes from ``subprocess``; anything else is a TypeError that names
    the field, at construction, not a traceback deep in the service later.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    raise _wrong_type(field, "a string", value)


def _error_output_text(value: object) -> str:
    return _text(value, "error_output")


def _session_id_text(value: object) -> str:
    return _text(value, "session_id")


def _description_text(value: object) -> str:
    return _text(value, "description")


def _command_text(value: object) -> str:
    return _text(value, "command")


def _paths(value: object, field: str = "files_modified") -> tuple[str, ...]:
    """Take any iterable of path strings as a tuple; a lone string is a mistake, not a list."""
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise _wrong_type(field, "a list of paths", value)
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise _wrong_type(field, "a list of path strings", item)
    return items


def _report_paths(value: object) -> tuple[str, ...]:
    return _paths(value, "reports")


def _failure_type(value: object, field: str = "failure_type") -> FailureType | None:
    """Take a FailureType, its value as a string, or ``None``."""
    if value is None or isinstance(value, FailureType):
        return value
    if isinstance(value, str):
        try:
            return FailureType(value)
        except ValueError:
            known = ", ".join(t.value for t in FailureType)
            msg = f"{field}: expected one of {known}, got {_show(value)}"
            raise ValueError(msg) from None
    raise _wrong_type(field, "a FailureType", value)


def _optional_int(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise _wrong_type(attr, "an integer or None", value)
    if value is not None and not INT64_MIN <= value <= INT64_MAX:
        msg = f"{attr.name}: expected an integer that fits in 64 bits, got {_show(value)}"
        raise ValueError(msg)


def _aware(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, datetime):
        raise _wrong_type(attr, "a datetime", value)
    if value.tzinfo is None:
        msg = f"{attr.name}: expected a timezone-aware datetime, got a naive one"
        raise ValueError(msg)


ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
"""What a task or subtask id may be: letters, digits, ``.``, ``_`` and ``-``, starting with a
letter or a digit, at most 100 characters. Ids go into prompts, run logs, memory records and
command lines, so nothing in them may be a path separator, a shell character or an option."""

_ID_RE = re.compile(ID_PATTERN)
_ID_EXPECTED = (
    "an id of letters, digits, '.', '_' or '-', starting with a letter or a digit, "
    "at most 100 characters"
)


def check_id(_inst: object, _attr: attrs.Attribute[Any], value: str) -> None:
    """Validate a task or subtask id against :data:`ID_PATTERN` (an attrs validator).

    It lives here, beside the other validators, so ``reflexkit recent`` checks its id
    arguments without importing the task models (#19); ``reflexkit.tasks._task`` re-exports it.
    """
    if not isinstance(value, str):
        raise _wrong_type(_attr if _attr is not None else "id", "a string", value)
    if not _ID_RE.fullmatch(value):
        msg = f"expected {_ID_EXPECTED}, got {_show(value)}"
        raise ValueError(msg)


check_id.expected = _ID_EXPECTED  # type: ignore[attr-defined]  # read by the converter


@attrs.frozen(kw_only=True)
class FailureContext:
    """One failed attempt at a subtask, as the orchestrator saw it.

    Only ``task_id``, ``subtask_id``, ``attempt_number`` and ``error_output`` are required;
    ``failure_type`` left as ``None`` means "classify it from the command and the output".
    ``error_output`` should already be redacted when the context is built by an orchestrator;
    the reflection service redacts it again before storing or sending it anywhere.

    Inputs are checked at construction: text fields take ``str`` or ``bytes`` (decoded as
    UTF-8, bad bytes replaced), integers must be ``int``, ``failure_type`` may be given by
    value (``"test_failure"``), ``files_modified`` is any iterable of paths (not one string);
    anything else is a :class:`TypeError` or :class:`ValueError` naming the field.
    ``task_id`` and ``subtask_id`` match :data:`ID_PATTERN`, as in task files, so every
    stored reflection is one ``recent`` can ask for; integers fit in 64 bits, as JSONL does.
    """

    task_id: str = attrs.field(validator=check_id)
    subtask_id: str = attrs.field(validator=check_id)
    attempt_number: int = attrs.field(validator=at_least(1))
    error_output: str = attrs.field(converter=_error_output_text)
    session_id: str = attrs.field(default="", converter=_session_id_text)
    description: str = attrs.field(default="", converter=_description_text)
    failure_type: FailureType | None = attrs.field(default=None, converter=_failure_type)
    command: str = attrs.field(default="", converter=_command_text)
    exit_code: int | None = attrs.field(default=None, validator=_optional_int)
    files_modified: tuple[str, ...] = attrs.field(default=(), converter=_paths)
    duration_ms: int | None = attrs.field(default=None, validator=at_least(0))
    created_at: datetime = attrs.field(factory=utcnow, validator=_aware)
    reports: tuple[str, ...] = attrs.field(default=(), converter=_report_paths)
    """Files the check wrote its machine-readable report to (JUnit XML, SARIF, CTRF, cargo
    JSON), relative to the folder the check ran in; the heuristic reads them (bounded,
    regular files only, redacted) beside the output."""


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

    @classmethod
    def on(
        cls,
        failure: FailureContext,
        /,
        *,
        created_at: datetime,
        **fields: Any,  # noqa: ANN401 -- the reflection's own fields, as the class takes them
    ) -> Reflection:
        """A new reflection on *failure*: a fresh id, the failure's ids and attempt, *fields*."""
        return cls(
            id=new_reflection_id(),
            session_id=failure.session_id,
            task_id=failure.task_id,
            subtask_id=failure.subtask_id,
            attempt_number=failure.attempt_number,
            created_at=created_at,
            **fields,
        )
