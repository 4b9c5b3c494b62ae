"""The one converter: camelCase, strict primitives, round trips, errors with JSON paths."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, strategies as st

from reflexkit import (
    ConfigError,
    FailureContext,
    FailureType,
    ProjectConfig,
    Reflection,
    ReflectionCategory,
    ReflectionSource,
    _serde,
    dumps,
    loads,
    structure,
    unstructure,
)
from reflexkit._serde import converter
from reflexkit.models import ID_PATTERN
from reflexkit.tasks._config import Durability, GeneratorBackend, MemoryConfig, ReflexionConfig

from .conftest import corpus_items

texts = st.text(max_size=40)
ids = st.from_regex(ID_PATTERN, fullmatch=True)  # what FailureContext takes (#19, h5)
datetimes = st.datetimes(
    min_value=datetime(2000, 1, 1),  # noqa: DTZ001 -- hypothesis adds the zone
    max_value=datetime(2100, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
small = st.integers(min_value=0, max_value=10**9)

failures = st.builds(
    FailureContext,
    task_id=ids,
    subtask_id=ids,
    attempt_number=st.integers(min_value=1, max_value=100),
    error_output=texts,
    session_id=texts,
    description=texts,
    failure_type=st.none() | st.sampled_from(FailureType),
    command=texts,
    exit_code=st.none() | st.integers(min_value=-255, max_value=255),
    files_modified=st.lists(texts, max_size=3).map(tuple),
    duration_ms=st.none() | small,
    created_at=datetimes,
)

reflections = st.builds(
    Reflection,
    id=ids,
    task_id=texts,
    subtask_id=ids,
    attempt_number=st.integers(min_value=1, max_value=100),
    category=st.sampled_from(ReflectionCategory),
    failure_type=st.sampled_from(FailureType),
    analysis=texts,
    suggestion=texts,
    action_items=st.lists(texts, max_size=3).map(tuple),
    confidence=st.floats(min_value=0, max_value=1),
    source=st.sampled_from(ReflectionSource),
    session_id=texts,
    created_at=datetimes,
    fingerprint=texts,
    fallback_reason=st.none() | texts,
    model=st.none() | texts,
    input_tokens=st.none() | small,
    output_tokens=st.none() | small,
    latency_ms=st.none() | small,
    redactions=st.dictionaries(texts, small, max_size=3),
)

configs = st.builds(
    ProjectConfig,
    reflexion=st.builds(
        ReflexionConfig,
        enabled=st.booleans(),
        max_reflections_per_retry=st.integers(min_value=1, max_value=50),
        generation_timeout_ms=st.integers(min_value=1, max_value=10**6),
        retention_days=st.integers(min_value=1, max_value=3650),
        backend=st.sampled_from(GeneratorBackend),
        model=texts,
        max_prompt_chars=st.integers(min_value=200, max_value=10**6),
    ),
    memory=st.builds(
        MemoryConfig,
        # A path has no control characters and no ~user that may not exist (#19, h5).
        path=texts.filter(lambda p: p.strip() and p.isprintable() and not p.startswith("~")),
        durability=st.sampled_from(Durability),
    ),
)


@given(failures)
def test_failure_context_round_trips(failure: FailureContext) -> None:
    """Structure after unstructure (through JSON bytes) gives back an equal FailureContext."""
    assert structure(loads(dumps(failure)), FailureContext) == failure


@given(reflections)
def test_reflection_round_trips(reflection: Reflection) -> None:
    """Structure after unstructure (through JSON bytes) gives back an equal Reflection."""
    assert converter.structure(loads(dumps(reflection)), Reflection) == reflection


@given(configs)
def test_project_config_round_trips(config: ProjectConfig) -> None:
    """Structure after unstructure gives back an equal ProjectConfig."""
    assert structure(unstructure(config), ProjectConfig) == config


def test_keys_are_camel_case() -> None:
    """Every multi-word field is written in camelCase."""
    data = unstructure(
        FailureContext(task_id="t", subtask_id="s", attempt_number=2, error_output="boom")
    )
    assert {"taskId", "subtaskId", "attemptNumber", "errorOutput", "filesModified"} <= set(data)
    assert not any("_" in key for key in data)


def test_datetimes_are_utc_with_z() -> None:
    """A datetime in any zone is written as UTC with a Z, and read back as the same instant."""
    when = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, error_output="", created_at=when
    )
    data = unstructure(failure)
    assert data["createdAt"] == "2026-03-01T10:00:00Z"
    assert structure(data, FailureContext).created_at == when


def test_enums_are_written_by_value() -> None:
    """Enums are plain strings on the wire."""
    failure = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        error_output="",
        failure_type=FailureType.LINT_ERROR,
    )
    assert unstructure(failure)["failureType"] == "lint_error"


MINIMAL: dict[str, Any] = {"taskId": "t", "subtaskId": "s", "attemptNumber": 1, "errorOutput": ""}


def test_failure_context_needs_only_four_keys() -> None:
    """The four required keys are enough; the rest default, failureType to 'classify it'."""
    failure = structure(MINIMAL, FailureContext)
    assert failure.failure_type is None
    assert failure.files_modified == ()
    assert failure.created_at.tzinfo is not None


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"attemptNumber": "3"}, '$.attemptNumber: expected an integer >= 1, got "3"'),
        ({"attemptNumber": 1.5}, "$.attemptNumber: expected an integer >= 1, got 1.5"),
        ({"attemptNumber": True}, "$.attemptNumber: expected an integer >= 1, got true"),
        ({"attemptNumber": 0}, "$.attemptNumber: expected an integer >= 1, got 0"),
        ({"exitCode": "1"}, '$.exitCode: expected an integer, got "1"'),
        ({"errorOutput": 3}, "$.errorOutput: expected a string, got 3"),
        ({"filesModified": "a.py"}, '$.filesModified: expected a list, got "a.py"'),
        ({"filesModified": ["a.py", 7]}, "$.filesModified[1]: expected a string, got 7"),
        ({"failureType": "flaky"}, "$.failureType: expected one of test_failure, typecheck_error"),
        ({"createdAt": "yesterday"}, "$.createdAt: expected an ISO 8601 date-time"),
        ({"subtaskID": "x"}, '$.subtaskID: unknown key (did you mean "subtaskId"?)'),
        ({"taskId": ""}, "$.taskId: expected an id of letters, digits"),
    ],
)
def test_bad_failure_context_names_the_path(patch: dict[str, Any], expected: str) -> None:
    """Each bad field is reported with its camelCase JSON path and what was expected."""
    with pytest.raises(ConfigError) as caught:
        structure({**MINIMAL, **patch}, FailureContext, source="input")
    assert any(line.startswith(f"input: {expected}") for line in caught.value.errors), caught.value


def test_missing_required_keys_are_all_reported() -> None:
    """Every missing required key is its own error line."""
    with pytest.raises(ConfigError) as caught:
        structure({"taskId": "t"}, FailureContext)
    assert set(caught.value.errors) == {
        "$.subtaskId: required, but missing",
        "$.attemptNumber: required, but missing",
        "$.errorOutput: required, but missing",
    }


def test_a_list_is_not_a_failure_context() -> None:
    """A JSON value of the wrong shape at the top is one clear line."""
    with pytest.raises(ConfigError) as caught:
        structure([MINIMAL], FailureContext)
    assert caught.value.errors[0].startswith("$: expected an object, got [")


@pytest.mark.parametrize("item", corpus_items(), ids=lambda item: item["id"])
def test_corpus_failure_contexts_are_valid_input(item: dict[str, Any]) -> None:
    """Every failureContext of the dev corpus is valid input exactly as it is."""
    failure = structure(item["failureContext"], FailureContext, source=item["id"])
    assert failure.error_output == item["failureContext"]["errorOutput"]


def test_invalid_json_gives_line_and_column() -> None:
    """A syntax error names where it is."""
    with pytest.raises(ConfigError, match=r"x.json: invalid JSON at line 2, column \d+"):
        loads('{"a": 1,\n  oops}', source="x.json")


# --- repeated keys, told without a second parse of the whole text --------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"a": 1, "a": 2}', "a"),
        ('{"x": {"b": 1, "c": 2, "b": 3}}', "b"),
        ('[{"k": 1}, {"k": 2, "k": 3}]', "k"),
        ('{"q\\"": 1, "q\\"": 2}', 'q"'),
        ('{"s": "\\"t\\": 1", "t": 1, "t": 2}', "t"),
        ('{"\\u0061": 1, "a": 2}', "a"),  # the same key, written two ways
    ],
)
def test_a_repeated_key_is_named(text: str, key: str) -> None:
    """Any repeated key in any object is an error that names it."""
    for form in (text, text.encode()):
        with pytest.raises(ConfigError, match=f'the key "{re.escape(key)}" is repeated'):
            loads(form)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\"a\\": 1", "b": ["a", "a"], "c": {"a": 1}}',
        '[{"k": 1}, {"k": 2}]',
        '{"k": "' + 'k\\":' * 1000 + '"}',
        '{"\\\\": 1, "\\\\\\"": 2}',
    ],
)
def test_keys_that_only_look_repeated_are_not(text: str) -> None:
    """Equal keys in different objects, and key-like text in strings, are not repeats."""
    assert loads(text) == json.loads(text)


_REPEATED = [
    ('{"a": 1, "a": 2}', "a"),
    ('{"x": {"b": 1, "c": 2, "b": 3}}', "b"),
    ('{"q\\"": 1, "q\\"": 2}', 'q"'),
    ('{"s": "\\"t\\": 1", "t": 1, "t": 2}', "t"),
]
_LOOK_ALIKES = [
    '{"a": "\\"a\\": 1", "b": ["a", "a"], "c": {"a": 1}}',
    '{"k": "' + 'k\\":' * 1000 + '"}',
    '{"\\\\": 1, "\\\\\\"": 2}',
    '{"u\\u0022:": ":", "t" \n : [":", "\\\\:", {"é:": "\\\\\\":"}]}',
]


def _big(doc: str) -> str:
    """*doc* beside a string of a megabyte of escapes."""
    return '{"pad": "' + '\\"\\\\' * (1 << 18) + '", "doc": ' + doc + "}"


@pytest.mark.parametrize(("text", "key"), _REPEATED)
def test_a_big_input_names_its_repeated_key_too(text: str, key: str) -> None:
    """Behind a megabyte of escapes, the same repeats are found."""
    with pytest.raises(ConfigError, match=f'the key "{re.escape(key)}" is repeated'):
        loads(_big(text))


def _pairs_written(text: str) -> int:
    """The keys of *text* as the stdlib parser reports them, one by one (repeats included)."""
    count = 0

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal count
        count += len(items)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return count


@pytest.mark.parametrize("text", [*_LOOK_ALIKES, *(text for text, _ in _REPEATED)])
def test_keys_are_counted_as_the_stdlib_parser_reads_them(text: str) -> None:
    """The count of keys written is the stdlib's, escapes and key-like strings included."""
    for form in (text, _big(text)):
        assert _serde._keys_written(form) == _pairs_written(form)
        assert _serde._keys_written(form.encode()) == _pairs_written(form)


@pytest.mark.parametrize("text", _LOOK_ALIKES)
def test_a_big_input_with_look_alike_keys_parses(text: str) -> None:
    """Valid big input with key-like text in its strings is never refused."""
    big = _big(text)
    assert loads(big) == json.loads(big)
