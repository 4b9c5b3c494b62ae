"""The registry of readers: order by priority, registration rules, broken readers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reflexkit.models import FailureContext, FailureType
from reflexkit.readers import (
    Findings,
    Reader,
    analyse,
    register_reader,
    registered_readers,
    unregister_reader,
)


def _failure(output: str, command: str = "tool") -> FailureContext:
    return FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        command=command,
        exit_code=1,
        error_output=output,
    )


def _claims(tool: str) -> Reader:
    def read(text: str, _failure: FailureContext) -> Findings | None:
        if "WIDGET-" not in text:
            return None
        return Findings(tool=tool, failure_type=FailureType.BUILD_ERROR, facts=[text.strip()])

    return Reader(name=tool, read=read, markers=("WIDGET-",), priority=900)


@pytest.fixture
def scratch() -> Iterator[list[str]]:
    """Names registered by the test, unregistered afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        unregister_reader(name)


def test_builtin_readers_are_ordered_by_priority() -> None:
    """Formats that contain others come first: pytest before tracebacks, gcc before make."""
    order = [r.name for r in registered_readers()]
    assert order.index("pytest") < order.index("python")
    assert order.index("jest") < order.index("node")
    assert order.index("gcc") < order.index("make")
    assert order[-1] == "shell"
    priorities = [r.priority for r in registered_readers()]
    assert priorities == sorted(priorities, reverse=True)


def test_a_registered_reader_is_used(scratch: list[str]) -> None:
    """A new reader claims its format; unregistered, the output falls back again."""
    output = "WIDGET-42 frobnication failed\n"
    assert analyse(_failure(output)).tool != "widget"
    scratch.append(register_reader(_claims("widget")).name)
    found = analyse(_failure(output))
    assert (found.tool, found.facts) == ("widget", ["WIDGET-42 frobnication failed"])
    unregister_reader("widget")
    assert analyse(_failure(output)).tool != "widget"


def test_markers_gate_the_reader(scratch: list[str]) -> None:
    """A reader is not even called when none of its markers is in the output."""
    calls: list[str] = []

    def read(text: str, _failure: FailureContext) -> Findings | None:
        calls.append(text)
        return None

    scratch.append(register_reader(Reader("gated", read, ("NEEDLE",), 999)).name)
    analyse(_failure("something else went wrong\n"))
    assert calls == []
    analyse(_failure("a NEEDLE here\n"))
    assert calls == ["a NEEDLE here\n"]


def test_equal_priority_keeps_registration_order(scratch: list[str]) -> None:
    """The first registered of two equal-priority readers wins."""
    scratch.extend(
        [register_reader(_claims("first")).name, register_reader(_claims("second")).name]
    )
    assert analyse(_failure("WIDGET-1\n")).tool == "first"


def test_a_taken_name_needs_replace(scratch: list[str]) -> None:
    """Registering a name twice is an error unless replace=True, which swaps the reader."""
    scratch.append(register_reader(_claims("widget")).name)
    with pytest.raises(ValueError, match="'widget' is already registered"):
        register_reader(_claims("widget"))
    register_reader(Reader("widget", _claims("other").read, ("WIDGET-",), 900), replace=True)
    assert analyse(_failure("WIDGET-1\n")).tool == "other"


def test_only_readers_register() -> None:
    """A bare function is refused with a clear error."""
    with pytest.raises(TypeError, match="takes a Reader, not function"):
        register_reader(_claims("x").read)  # type: ignore[arg-type]


def test_a_reader_that_raises_is_skipped(
    scratch: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A broken reader is logged and the next reader reads the output."""

    def broken(_text: str, _failure: FailureContext) -> Findings | None:
        raise RuntimeError("reader bug")

    scratch.append(register_reader(Reader("broken", broken, (), 990)).name)
    output = "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.01s\n"
    found = analyse(_failure(output, "pytest"))
    assert found.tool == "pytest"
    assert "reader 'broken' failed" in caplog.text


def test_reader_fields_are_validated() -> None:
    """A reader needs a name and a callable; a single marker string is one marker."""
    with pytest.raises(ValueError, match="name"):
        Reader("", lambda _t, _f: None)
    with pytest.raises(TypeError, match="read"):
        Reader("x", "not callable")  # type: ignore[arg-type]
    assert Reader("x", lambda _t, _f: None, "Error:").markers == ("Error:",)
