"""Deterministic reflection in the service (#16): derived ids, one clock, budgets, keys."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import attrs
import pytest

from reflexkit.memory import InMemoryMemory
from reflexkit.models import FailureContext, LogicalClock, derived_reflection_id
from reflexkit.redaction import Redactor
from reflexkit.reflection import _service as module
from reflexkit.reflection._classify import classify
from reflexkit.reflection._fingerprint import fingerprint
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.reflection._prompts import reflection_request
from reflexkit.reflection._service import DefaultReflectionService
from reflexkit.tasks._config import GeneratorBackend, ReflexionConfig

OUTPUT = (
    "FAIL: test_add_positive (test_calc.AddTests.test_add_positive)\n"
    "AssertionError: 6 != 5\n\nRan 1 test in {t}\n\nFAILED (failures=1)\n"
)


def failure(attempt: int = 1, *, took: str = "0.010s", subtask: str = "fix-add") -> FailureContext:
    """A unittest failure of run ``r1``."""
    return FailureContext(
        session_id="r1",
        task_id="calc",
        subtask_id=subtask,
        attempt_number=attempt,
        command="python -m unittest",
        exit_code=1,
        error_output=OUTPUT.format(t=took),
    )


def service(**config: object) -> tuple[DefaultReflectionService, InMemoryMemory]:
    """The shipped service over the heuristic and a list, with *config* in ``reflexion``."""
    store = InMemoryMemory()
    reflexion = ReflexionConfig(**config)  # type: ignore[arg-type]
    built = DefaultReflectionService(
        generator=HeuristicGenerator(),
        store=store,
        fallback=HeuristicGenerator(),
        redact=Redactor().redact_failure,
        classify=classify,
        fingerprint=fingerprint,
        config=reflexion,
        clock=LogicalClock() if reflexion.deterministic else datetime.now,  # type: ignore[arg-type]
    )
    return built, store


def test_the_fixture_key_ignores_durations_but_not_values() -> None:
    """A suite's timing changes every run; its assertion values are the failure."""
    assert (
        reflection_request(failure(took="0.010s")).key
        == reflection_request(failure(took="1.5 s")).key
    )
    changed = attrs.evolve(failure(), error_output=OUTPUT.format(t="0.1s").replace("6", "7"))
    assert reflection_request(changed).key != reflection_request(failure()).key


def test_deterministic_ids_and_times() -> None:
    """Same inputs, same id and time; the id is the documented derivation."""
    first, _ = service(deterministic=True, backend=GeneratorBackend.HEURISTIC)
    second, _ = service(deterministic=True, backend=GeneratorBackend.HEURISTIC)
    a, b = first.generate(failure()), second.generate(failure())
    assert a == b
    assert a.created_at == datetime(2000, 1, 1, tzinfo=UTC)
    assert a.id == derived_reflection_id(
        run_id="r1", task_id="calc", subtask_id="fix-add", attempt=1, fingerprint=a.fingerprint
    )
    assert first.details(a.id).latency_ms == 0
    assert first.generate(failure(2)).id != a.id


def test_source_date_epoch_sets_the_logical_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reproducible-builds convention; anything but digits is ignored."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert LogicalClock.from_environment()() == datetime(2026, 1, 1, tzinfo=UTC)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    assert LogicalClock.from_environment()() == datetime(2000, 1, 1, tzinfo=UTC)


def test_ordinary_ids_are_the_attempts() -> None:
    """Outside deterministic mode too, one attempt's failure gets one id (saved once, #26)."""
    built, _ = service()
    assert built.generate(failure()).id == built.generate(failure()).id
    assert built.generate(failure(2)).id != built.generate(failure()).id


def test_the_write_budget_holds_across_threads() -> None:
    """Eight threads saving at once into a budget of three: exactly three stored."""
    built, store = service(max_writes_per_run=3)
    reflections = [built.generate(failure(subtask=f"s{i}")) for i in range(8)]
    results: list[bool] = []
    barrier = threading.Barrier(len(reflections))

    def save(index: int) -> None:
        barrier.wait()
        results.append(built.save(reflections[index]))

    threads = [threading.Thread(target=save, args=(i,)) for i in range(len(reflections))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True] * 3
    assert len(list(store)) == 3
    skipped = [r for r in reflections if built.details(r.id).reason == "write_budget"]
    assert len(skipped) == 5
    assert built.health.budget_skips == 5


def test_the_budget_is_per_run() -> None:
    """Another run (session id) has its own budget."""
    built, store = service(max_writes_per_run=1)
    assert built.save(built.generate(failure()))
    assert not built.save(built.generate(failure(2)))
    other = attrs.evolve(failure(), session_id="r2")
    assert built.save(built.generate(other))
    assert len(list(store)) == 2


def test_details_are_bounded_in_a_long_lived_service(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service remembers the details of the newest reflections only.

    The bound is lowered from its 10,000 so the test makes a hundred reflections, not 10,001:
    what it checks (the oldest forgotten, the rest kept, never more than the bound) is the same.
    """
    assert module._KEEP_DETAILS == 10_000
    monkeypatch.setattr(module, "_KEEP_DETAILS", 100)
    built, _ = service()
    first = built.generate(failure())
    second = built.generate(failure(2))
    for attempt in range(3, module._KEEP_DETAILS + 2):
        built.generate(failure(attempt))
    assert built.details(first.id).length == 0  # forgotten: the empty details
    assert built.details(second.id).length > 0  # the newest 100 are all kept
    assert len(built._details) == module._KEEP_DETAILS


def test_a_deterministic_config_refuses_the_live_model() -> None:
    """In Python as in project.json: deterministic with backend llm does not build."""
    with pytest.raises(ValueError, match="deterministic is true but backend is llm"):
        ReflexionConfig(deterministic=True)
    assert ReflexionConfig(deterministic=True, backend=GeneratorBackend.FIXTURE).deterministic
