"""The Python API against a newcomer's habits: wrong types, huge numbers, odd ids, reuse.

Values that construct must also store: a model that accepts what the JSONL file or a peer
can't carry only moves the failure to the moment nobody is looking (the service swallows
store errors by design).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from reflexkit import FailureContext, JsonlMemory, build_application, load_project
from reflexkit.testing.memory_contract import make_reflection


def failure(**fields: object) -> FailureContext:
    """A failure with these fields over plausible defaults."""
    base: dict[str, object] = {
        "task_id": "checkout",
        "subtask_id": "discount",
        "attempt_number": 1,
        "error_output": "E   assert 1 == 2",
    }
    base.update(fields)
    return FailureContext(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"task_id": b"checkout"}, TypeError, "task_id: expected a string, got bytes"),
        ({"subtask_id": None}, TypeError, "subtask_id: expected a string, got NoneType"),
        ({"attempt_number": 1.0}, TypeError, "attempt_number: expected an integer, got float"),
        ({"attempt_number": True}, TypeError, "attempt_number: expected an integer, got bool"),
        ({"attempt_number": 2**70}, ValueError, "fits in 64 bits"),
        ({"attempt_number": 10**5000}, ValueError, "an integer of 16610 bits"),
        ({"exit_code": 2**64}, ValueError, "exit_code: expected an integer that fits in 64"),
        ({"exit_code": -(2**64)}, ValueError, "fits in 64 bits"),
        ({"duration_ms": 2**63}, ValueError, "fits in 64 bits"),
        ({"subtask_id": "api/login"}, ValueError, "expected an id of letters"),
        ({"subtask_id": "a\nb"}, ValueError, "expected an id of letters"),
        ({"task_id": "-x"}, ValueError, "expected an id of letters"),
        ({"subtask_id": "cafe\u0301"}, ValueError, "expected an id of letters"),
        ({"subtask_id": "a" * 101}, ValueError, "expected an id of letters"),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else None,
)
def test_a_failure_that_could_not_be_stored_is_refused_at_construction(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    """Wrong types, numbers beyond 64 bits and ids `recent` can't ask for fail at once."""
    with pytest.raises(error, match=message.replace("(", r"\(")):
        failure(**fields)


def test_the_edges_of_what_is_valid_construct_and_store(tmp_path: Path) -> None:
    """64-bit extremes, a negative exit code and a lone surrogate in output all round-trip."""
    app = build_application(load_project(cwd=tmp_path))
    try:
        service = app.reflection.service()
        edge = failure(
            attempt_number=2**63 - 1,
            exit_code=-(2**63),
            duration_ms=2**63 - 1,
            error_output="\ud800 boom",
        )
        reflection = service.generate(edge)
        assert service.save(reflection), service.health.last_error
        (back,) = service.get_recent("discount", limit=1)
        assert back.attempt_number == 2**63 - 1
    finally:
        app.shutdown_resources()


def test_an_application_closed_twice_and_used_after_is_harmless(tmp_path: Path) -> None:
    """shutdown_resources() twice raises nothing; a store used after close reopens its file."""
    app = build_application(load_project(cwd=tmp_path))
    service = app.reflection.service()
    app.shutdown_resources()
    app.shutdown_resources()
    assert service.save(service.generate(failure()))
    memory = JsonlMemory(tmp_path / "m.jsonl")
    memory.close()
    memory.close()
    memory.append(make_reflection("discount"))
    assert [r.subtask_id for r in memory.recent("discount", limit=5)] == ["discount"]
    memory.close()


def test_one_store_shared_by_threads_loses_nothing(tmp_path: Path) -> None:
    """Eight threads appending through one JsonlMemory: every record is there, whole."""
    memory = JsonlMemory(tmp_path / "m.jsonl")
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for attempt in range(1, 51):
                memory.append(make_reflection(f"s{index}", attempt=attempt))
        except BaseException as err:  # noqa: BLE001 -- collected for the assertion
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(1 for _ in memory) == 400
    assert [r.attempt_number for r in memory.recent("s3", limit=3)] == [48, 49, 50]
    memory.close()


class _Garbage:
    """A generator that returns (or raises) whatever it was given."""

    def __init__(self, value: object) -> None:
        self.value = value

    def generate(self, failure: FailureContext) -> object:
        """Return the garbage, or raise it."""
        del failure
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


@pytest.mark.parametrize(
    "garbage",
    [None, {"analysis": "x"}, "a reflection", 42, RecursionError("deep"), MemoryError()],
    ids=["None", "dict", "str", "int", "RecursionError", "MemoryError"],
)
def test_a_generator_returning_garbage_falls_back(tmp_path: Path, garbage: object) -> None:
    """Whatever a custom generator returns or raises, generate() gives a real reflection."""
    from dependency_injector import providers  # noqa: PLC0415 -- the composition root's tool

    app = build_application(load_project(cwd=tmp_path))
    try:
        with app.reflection.generator.override(providers.Object(_Garbage(garbage))):
            service = app.reflection.service()
            reflection = service.generate(failure())
        assert reflection.source.value == "heuristic"
        assert reflection.fallback_reason == "generator_error"
        assert service.save(reflection)
    finally:
        app.shutdown_resources()
