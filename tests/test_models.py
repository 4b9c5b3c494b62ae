"""The models check what they are given at construction, naming the field."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from reflexkit import FailureContext, FailureType


def failure(**changes: Any) -> FailureContext:
    """Build a valid failure with *changes* applied."""
    fields: dict[str, Any] = {
        "task_id": "t-cart",
        "subtask_id": "st-1",
        "attempt_number": 1,
        "error_output": "FAILED tests/test_cart.py::test_total",
    }
    fields.update(changes)
    return FailureContext(**fields)


def test_bytes_output_is_decoded_with_bad_bytes_replaced() -> None:
    """Output from subprocess arrives as bytes; a stray byte must not cost the whole output."""
    got = failure(error_output=b"assert 1 == 2\n\xff tail", command=b"pytest -q")
    assert got.error_output == "assert 1 == 2\n\ufffd tail"
    assert got.command == "pytest -q"


def test_a_failure_type_may_be_given_by_value_and_paths_as_a_list() -> None:
    """What a newcomer writes by hand is taken as meant."""
    got = failure(failure_type="timeout", files_modified=["src/a.py", "src/b.py"])
    assert got.failure_type is FailureType.TIMEOUT
    assert got.files_modified == ("src/a.py", "src/b.py")


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"attempt_number": "2"}, TypeError, 'attempt_number: expected an integer, got str "2"'),
        ({"attempt_number": 2.0}, TypeError, "attempt_number: expected an integer, got float"),
        ({"attempt_number": True}, TypeError, "attempt_number: expected an integer, got bool"),
        ({"attempt_number": 0}, ValueError, "expected an integer >= 1, got 0"),
        ({"error_output": 3}, TypeError, "error_output: expected a string, got int 3"),
        ({"error_output": None}, TypeError, "error_output: expected a string, got NoneType"),
        ({"subtask_id": b"st-1"}, TypeError, "subtask_id: expected a string, got bytes"),
        ({"exit_code": "1"}, TypeError, 'exit_code: expected an integer or None, got str "1"'),
        ({"duration_ms": "5"}, TypeError, "duration_ms: expected an integer, got str"),
        ({"files_modified": "src/a.py"}, TypeError, "files_modified: expected a list of paths"),
        ({"files_modified": [1]}, TypeError, "files_modified: expected a list of path strings"),
        ({"failure_type": "flaky"}, ValueError, "failure_type: expected one of test_failure,"),
        ({"created_at": "2026-01-01"}, TypeError, "created_at: expected a datetime"),
        ({"created_at": datetime(2026, 1, 1)}, ValueError, "expected a timezone-aware"),  # noqa: DTZ001
    ],
)
def test_wrong_types_fail_at_construction_naming_the_field(
    changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Not a traceback deep in the service later: a clear error now."""
    with pytest.raises(error, match=message.replace("(", r"\(")):
        failure(**changes)
