"""The reflection service: redacts, classifies, falls back, and never raises into its caller."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from reflexkit import (
    FailureContext,
    FailureType,
    GenerationError,
    Reflection,
    ReflectionSource,
    StoreError,
)
from reflexkit.memory import EpisodicMemory, InMemoryMemory, JsonlMemory, MemoryStats
from reflexkit.redaction import Redactor
from reflexkit.reflection._classify import classify
from reflexkit.reflection._fingerprint import fingerprint
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.reflection._service import DefaultReflectionService
from reflexkit.tasks._config import ReflexionConfig

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

PYTEST_OUTPUT = """\
F.                                                                       [100%]
=================================== FAILURES ===================================
_________________________________ test_total __________________________________

    def test_total():
>       assert total([1, 2]) == 3
E       assert 4 == 3
E        +  where 4 = total([1, 2])

tests/test_cart.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_total - assert 4 == 3
1 failed, 1 passed in 0.03s
"""

SECRET = "sk-ant-api03-" + "Q" * 40 + "AA"


def failure(attempt: int = 1, output: str = PYTEST_OUTPUT, **kw: object) -> FailureContext:
    """A failed pytest run of subtask s1."""
    fields: dict[str, object] = {
        "task_id": "t1",
        "subtask_id": "s1",
        "attempt_number": attempt,
        "command": "python -m pytest -q",
        "exit_code": 1,
        "error_output": output,
        "created_at": NOW,
    }
    fields.update(kw)
    return FailureContext(**fields)  # type: ignore[arg-type]


class RaisingGenerator:
    """A generator that always fails the way it is told to."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def generate(
        self, failure: FailureContext, /, *, previous: Sequence[Reflection] = ()
    ) -> Reflection:
        """Raise the configured error."""
        self.calls += 1
        raise self.error


class BrokenStore:
    """A store whose every operation fails, like a full or read-only disk."""

    def append(self, reflection: Reflection, /) -> None:
        """Fail."""
        raise StoreError("disk full")

    def recent(self, subtask_id: str, *, limit: int) -> list[Reflection]:
        """Fail."""
        raise StoreError("unreadable")

    def prune(self, *, older_than: datetime) -> int:
        """Fail."""
        raise StoreError("read-only")

    def stats(self) -> MemoryStats:
        """Fail."""
        raise StoreError("unreadable")

    def __iter__(self) -> Iterator[Reflection]:
        """Fail."""
        raise StoreError("unreadable")


def make_service(
    store: EpisodicMemory,
    *,
    generator: object | None = None,
    fallback: object | None = None,
    env: dict[str, str] | None = None,
    **config: object,
) -> DefaultReflectionService:
    """Build the service by hand, the way the container does."""
    heuristic = HeuristicGenerator()
    return DefaultReflectionService(
        generator=generator or heuristic,  # type: ignore[arg-type]
        store=store,
        fallback=fallback or heuristic,  # type: ignore[arg-type]
        redact=Redactor(environ=env or {}).redact_failure,
        classify=classify,
        fingerprint=fingerprint,
        config=ReflexionConfig(**config),  # type: ignore[arg-type]
        clock=lambda: NOW,
    )


@pytest.fixture(params=["in-memory", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> EpisodicMemory:
    """Each backend the service is tested with."""
    if request.param == "jsonl":
        return JsonlMemory(tmp_path / "memory" / "reflections.jsonl")
    return InMemoryMemory()


def test_generate_classifies_and_names_the_facts(store: EpisodicMemory) -> None:
    """A pytest failure without a type is classified and its failing test is quoted."""
    reflection = make_service(store).generate(failure())
    assert reflection.failure_type is FailureType.TEST_FAILURE
    assert reflection.source is ReflectionSource.HEURISTIC
    text = " ".join([reflection.analysis, reflection.suggestion, *reflection.action_items])
    assert "tests/test_cart.py::test_total" in text
    assert reflection.fingerprint
    assert (reflection.task_id, reflection.subtask_id, reflection.attempt_number) == ("t1", "s1", 1)


def test_saved_reflection_comes_back(store: EpisodicMemory) -> None:
    """A reflection saved through the service is what get_recent returns."""
    service = make_service(store)
    reflection = service.generate(failure())
    assert service.save(reflection)
    assert service.get_recent("s1") == [reflection]


def test_get_recent_defaults_to_max_reflections_per_retry(store: EpisodicMemory) -> None:
    """Without a limit, maxReflectionsPerRetry reflections come back, the newest ones."""
    service = make_service(store, max_reflections_per_retry=2)
    for attempt in (1, 2, 3):
        service.save(service.generate(failure(attempt)))
    assert [r.attempt_number for r in service.get_recent("s1")] == [2, 3]


def test_secrets_are_redacted_before_the_generator_sees_them(store: EpisodicMemory) -> None:
    """An API key in the output never reaches the reflection or the store; its count does."""
    leaky = PYTEST_OUTPUT.replace("1 failed", f"ANTHROPIC_API_KEY={SECRET}\n1 failed")
    service = make_service(store)
    reflection = service.generate(failure(output=leaky))
    service.save(reflection)
    assert SECRET not in repr(reflection)
    assert sum(reflection.redactions.values()) >= 1
    assert all(SECRET not in repr(r) for r in store)


def test_environment_secret_values_are_redacted(store: EpisodicMemory) -> None:
    """The exact value of a secret-looking environment variable is removed."""
    value = "hunter2-but-longer-and-random-9f8e7d"
    service = make_service(store, env={"DEPLOY_TOKEN": value})
    reflection = service.generate(
        failure(output=PYTEST_OUTPUT.replace("assert 4 == 3\n", f"assert 4 == 3 ({value})\n"))
    )
    assert value not in repr(reflection)


def test_generation_error_falls_back_with_its_reason(store: EpisodicMemory) -> None:
    """A GenerationError falls back to the heuristic, which records the reason."""
    broken = RaisingGenerator(GenerationError("llm_timeout", "budget spent"))
    service = make_service(store, generator=broken)
    reflection = service.generate(failure())
    assert reflection.fallback_reason == "llm_timeout"
    assert reflection.source is ReflectionSource.HEURISTIC
    assert service.health.generation_fallbacks == 1


def test_a_generator_bug_falls_back_too(store: EpisodicMemory) -> None:
    """Any exception from a generator falls back; the run is never broken."""
    service = make_service(store, generator=RaisingGenerator(ZeroDivisionError("bug")))
    assert service.generate(failure()).fallback_reason == "generator_error"


def test_when_every_generator_fails_a_minimal_reflection_remains(store: EpisodicMemory) -> None:
    """With generator and fallback both failing, the service still answers."""
    service = make_service(
        store,
        generator=RaisingGenerator(GenerationError("llm_refusal")),
        fallback=RaisingGenerator(RuntimeError("also broken")),
    )
    reflection = service.generate(failure())
    assert reflection.fallback_reason == "llm_refusal"
    assert "python -m pytest -q" in reflection.analysis
    assert reflection.confidence <= 0.2


def test_store_errors_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A broken store makes save False, get_recent empty and prune 0, each logged."""
    service = make_service(BrokenStore())
    with caplog.at_level(logging.WARNING, logger="reflexkit.reflection"):
        reflection = service.generate(failure())  # reads previous reflections: fails softly
        assert not service.save(reflection)
        assert service.get_recent("s1") == []
        assert service.prune() == 0
    assert service.health.store_errors == 4
    assert "disk full" in caplog.text


def test_prune_defaults_to_retention_days(store: EpisodicMemory) -> None:
    """prune() without a cutoff removes what is older than retentionDays."""
    service = make_service(store, retention_days=7)
    old = attrs.evolve(service.generate(failure(1)), created_at=NOW - timedelta(days=8))
    new = attrs.evolve(service.generate(failure(2)), created_at=NOW - timedelta(days=6))
    service.save(old)
    service.save(new)
    assert service.prune() == 1
    assert [r.attempt_number for r in store] == [2]


def test_repeated_failure_is_deduplicated_in_the_prompt(store: EpisodicMemory) -> None:
    """The same failure three times shows once in the prompt section, with its count."""
    service = make_service(store)
    for attempt in (1, 2, 3):
        noisy = PYTEST_OUTPUT.replace("0.03s", f"0.0{attempt}s")
        service.save(service.generate(failure(attempt, output=noisy)))
    section = service.format_for_prompt(service.get_recent("s1"))
    assert section.startswith("## Learning from Previous Failures")
    assert "The same failure 3 times" in section
    assert section.count("tests/test_cart.py::test_total") >= 1
    assert len(section) <= 4000


def test_prompt_section_respects_max_prompt_chars(store: EpisodicMemory) -> None:
    """The section never exceeds maxPromptChars."""
    service = make_service(store, max_prompt_chars=600)
    for attempt in (1, 2, 3):
        other = PYTEST_OUTPUT.replace("test_total", f"test_total_{attempt}")
        service.save(service.generate(failure(attempt, output=other)))
    assert 0 < len(service.format_for_prompt(service.get_recent("s1"))) <= 600


# --- one attempt, one record ----------------------------------------------------------------


def test_one_attempt_saved_twice_by_two_services_is_stored_once(tmp_path: Path) -> None:
    """Two services on one file (two processes, as reflect then reflect --json): one record."""
    path = tmp_path / "memory" / "reflections.jsonl"
    first, second = make_service(JsonlMemory(path)), make_service(JsonlMemory(path))
    assert first.save(first.generate(failure()))
    again = second.generate(failure())
    assert second.save(again)
    assert second.details(again.id).reason == "already_stored"
    assert len(list(JsonlMemory(path))) == 1
    section = second.format_for_prompt(second.get_recent("s1", task_id="t1"))
    assert "2 times" not in section
    assert "twice" not in section


def test_another_attempt_or_another_failure_is_stored(store: EpisodicMemory) -> None:
    """Idempotence is per attempt and fingerprint: the next attempt, or another failure, adds."""
    service = make_service(store)
    service.save(service.generate(failure(1)))
    service.save(service.generate(failure(2)))
    service.save(service.generate(failure(2, output="ModuleNotFoundError: No module named 'x'")))
    assert len(list(store)) == 3


SAVE = """
import sys
from pathlib import Path
from reflexkit import FailureContext, build_application, load_project
service = build_application(load_project(cwd=Path(sys.argv[1]))).reflection.service()
failure = FailureContext(task_id="t1", subtask_id="s1", attempt_number=1, session_id="run-1",
    command="python -m pytest -q", exit_code=1, error_output=sys.stdin.read())
assert service.save(service.generate(failure))
"""


@pytest.mark.slow
def test_processes_saving_one_attempt_at_once_store_it_once(tmp_path: Path) -> None:
    """Six processes save the same attempt at the same moment: one record."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text('{"reflexion": {"backend": "heuristic"}}')
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAVE, str(tmp_path)], stdin=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    for proc in procs:
        proc.communicate(PYTEST_OUTPUT, timeout=120)
    assert [proc.returncode for proc in procs] == [0] * 6
    records = list(JsonlMemory(tmp_path / ".reflexkit" / "memory" / "reflections.jsonl"))
    assert len(records) == 1


def test_get_recent_takes_the_task_and_the_run(store: EpisodicMemory) -> None:
    """Another run, or another task with the same subtask id, never leaks in."""
    service = make_service(store)
    for run in ("run-1", "run-2"):
        for task in ("t1", "t2"):
            for attempt in (1, 2):
                service.save(service.generate(failure(attempt, task_id=task, session_id=run)))
    mine = service.get_recent("s1", task_id="t1", session_id="run-2")
    assert [(r.task_id, r.session_id, r.attempt_number) for r in mine] == [
        ("t1", "run-2", 1),
        ("t1", "run-2", 2),
    ]
    assert len(service.get_recent("s1", task_id="t1", session_id="run-1", limit=1)) == 1


def test_reflect_then_reflect_json_store_the_attempt_once(tmp_path: Path) -> None:
    """The new user's report: `reflect` and then `reflect --json` on one failure, one record."""
    import json  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text('{"reflexion": {"backend": "heuristic"}}')
    data = json.dumps(
        {"taskId": "t1", "subtaskId": "s1", "attemptNumber": 1, "errorOutput": PYTEST_OUTPUT}
    )
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "reflexkit", "reflect", *extra],
            input=data,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    records = list(JsonlMemory(tmp_path / ".reflexkit" / "memory" / "reflections.jsonl"))
    assert len(records) == 1
