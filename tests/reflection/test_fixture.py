"""Fixtures: Claude's replies recorded through the real SDK, then replayed offline by key."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reflexkit.exceptions import GenerationError
from reflexkit.llm import Claude, RequestOptions, RetryPolicy
from reflexkit.models import FailureContext, FailureType, ReflectionSource
from reflexkit.reflection._claude import ClaudeGenerator
from reflexkit.reflection._fallback import FallbackGenerator
from reflexkit.reflection._fixture import FixtureGenerator, FixtureRecorder, fixture_key
from reflexkit.reflection._heuristic import HeuristicGenerator
from reflexkit.reflection._prompts import reflection_request
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
FAILURE = FailureContext(
    task_id="checkout",
    subtask_id="discount",
    attempt_number=2,
    failure_type=FailureType.TEST_FAILURE,
    command="python -m pytest -q",
    exit_code=1,
    error_output="FAILED tests/test_cart.py::test_total - assert 90 == 100\n",
)
REPLY = {
    "category": "root_cause",
    "analysis": "`tests/test_cart.py::test_total`: total() returns 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only.",
    "actionItems": ["Read total() in src/cart.py"],
    "confidence": 0.8,
}


def live(api: FakeMessagesApi, root: Path, **options: object) -> ClaudeGenerator:
    """A live generator on the fake API."""
    client = Claude(api_key="sk-ant-test", base_url=api.url, retry=RetryPolicy.no_wait(attempts=1))
    return ClaudeGenerator(
        client,
        timeout_ms=3_000,
        root=root,
        options=RequestOptions(**options),  # type: ignore[arg-type]
    )


def write_lines(path: Path, *records: object) -> None:
    """Write *records* as JSONL."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# --- the key ------------------------------------------------------------------------------------


def test_the_key_is_sha256_of_the_canonical_request_as_sent(
    fake_messages_api: FakeMessagesApi, tmp_path: Path
) -> None:
    """The key is computable from the request the SDK really sent.

    Re-serialised with sorted keys and compact separators, its SHA-256 starts with the key.
    """
    fake_messages_api.reply(REPLY)
    with live(fake_messages_api, tmp_path) as claude:
        done = claude.complete(FAILURE)
    sent = fake_messages_api.requests[0].json
    canonical = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(canonical.encode()).hexdigest()[:12]
    assert done.key == expected
    assert fixture_key(FAILURE, root=tmp_path) == expected
    assert len(expected) == 12
    assert int(expected, 16) >= 0


def test_the_key_depends_on_what_the_model_is_asked() -> None:
    """Model, mode, max_tokens, the failure and the previous reflections change the key."""
    base = fixture_key(FAILURE)
    assert fixture_key(FAILURE) == base  # stable
    changed = {
        fixture_key(FAILURE, options=RequestOptions(model="claude-sonnet-5")),
        fixture_key(FAILURE, options=RequestOptions(mode="tool")),
        fixture_key(FAILURE, options=RequestOptions(max_tokens=2_000)),
        fixture_key(FAILURE, previous=[make_reflection("discount")]),
        fixture_key(
            FailureContext(
                task_id="checkout",
                subtask_id="discount",
                attempt_number=2,
                failure_type=FailureType.TEST_FAILURE,
                command="python -m pytest -q",
                exit_code=1,
                error_output="FAILED tests/test_cart.py::test_total - assert 91 == 100\n",
            )
        ),
    }
    assert base not in changed
    assert len(changed) == 5


def test_the_key_ignores_what_differs_between_runs_and_machines(tmp_path: Path) -> None:
    """Timestamps, session ids and the checkout folder are not part of the key."""
    laptop, ci = tmp_path / "laptop" / "proj", tmp_path / "ci" / "build"
    one = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        session_id="run-1",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        duration_ms=1_200,
        error_output=f"{laptop}/src/app.py:3: error: Incompatible types\n",
        failure_type=FailureType.TYPECHECK_ERROR,
    )
    two = FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        session_id="run-2",
        created_at=datetime(2026, 6, 1, tzinfo=UTC),
        duration_ms=80,
        error_output=f"{ci}/src/app.py:3: error: Incompatible types\n",
        failure_type=FailureType.TYPECHECK_ERROR,
    )
    assert fixture_key(one, root=laptop) == fixture_key(two, root=ci)


# --- record, then replay ------------------------------------------------------------------------


def test_record_then_replay_round_trip(fake_messages_api: FakeMessagesApi, tmp_path: Path) -> None:
    """A recorded reply replays as the same reflection, offline, with source fixture."""
    fixtures = tmp_path / "fixtures" / "reflections.jsonl"  # the folder is created
    earlier = [make_reflection("discount")]
    fake_messages_api.reply(REPLY)
    with live(fake_messages_api, tmp_path) as claude:
        recorder = FixtureRecorder(claude, fixtures)
        recorded = recorder.generate(FAILURE, previous=earlier)
    assert recorder.recorded == 1
    assert recorded.source is ReflectionSource.LLM

    (line,) = fixtures.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert set(record) == {"promptHash", "completion"}
    assert record["promptHash"] == fixture_key(FAILURE, previous=earlier, root=tmp_path)
    assert record["completion"] == REPLY
    assert "sk-ant-test" not in line

    replayer = FixtureGenerator(fixtures, root=tmp_path, clock=lambda: T0)
    replayed = replayer.generate(FAILURE, previous=earlier)
    assert replayed.source is ReflectionSource.FIXTURE
    for field in ("category", "analysis", "suggestion", "action_items", "confidence"):
        assert getattr(replayed, field) == getattr(recorded, field)
    assert replayed.failure_type is FailureType.TEST_FAILURE
    assert replayed.created_at == T0
    assert len(fake_messages_api.requests) == 1  # the replay sent nothing


def test_replay_is_deterministic(tmp_path: Path) -> None:
    """The same fixture gives the same reflection every time (bar id and clock)."""
    fixtures = tmp_path / "f.jsonl"
    write_lines(fixtures, {"promptHash": fixture_key(FAILURE), "completion": REPLY})
    generator = FixtureGenerator(fixtures, clock=lambda: T0)
    first, second = generator.generate(FAILURE), generator.generate(FAILURE)
    assert (first.analysis, first.confidence, first.created_at) == (
        second.analysis,
        second.confidence,
        second.created_at,
    )


def test_a_failed_live_call_records_nothing(
    fake_messages_api: FakeMessagesApi, tmp_path: Path
) -> None:
    """A refusal is an error, not a fixture."""
    fixtures = tmp_path / "f.jsonl"
    fake_messages_api.refusal()
    with live(fake_messages_api, tmp_path) as claude:
        recorder = FixtureRecorder(claude, fixtures)
        with pytest.raises(GenerationError) as caught:
            recorder.generate(FAILURE)
    assert caught.value.reason == "llm_refusal"
    assert recorder.recorded == 0
    assert not fixtures.exists()


def test_a_fixture_that_cannot_be_written_still_returns_the_reflection(
    fake_messages_api: FakeMessagesApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Recording is best effort: the live reflection comes back, the failure is logged."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    fake_messages_api.reply(REPLY)
    with live(fake_messages_api, tmp_path) as claude:
        recorder = FixtureRecorder(claude, blocker / "f.jsonl")
        r = recorder.generate(FAILURE)
    assert r.source is ReflectionSource.LLM
    assert recorder.recorded == 0
    assert any(rec.levelno == logging.ERROR for rec in caplog.records)


def test_recording_in_tool_mode_replays_in_tool_mode(
    fake_messages_api: FakeMessagesApi, tmp_path: Path
) -> None:
    """The mode is part of the key: a tool-mode recording replays with mode="tool"."""
    fixtures = tmp_path / "f.jsonl"
    fake_messages_api.reply_tool(REPLY)
    with live(fake_messages_api, tmp_path, mode="tool") as claude:
        FixtureRecorder(claude, fixtures).generate(FAILURE)
    assert (
        FixtureGenerator(fixtures, options=RequestOptions(mode="tool"), root=tmp_path)
        .generate(FAILURE)
        .analysis
    )
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(fixtures, root=tmp_path).generate(FAILURE)
    assert caught.value.reason == "fixture_not_found"


# --- missing and broken fixtures ----------------------------------------------------------------


def test_a_missing_fixture_names_the_key(tmp_path: Path) -> None:
    """The error says which key to record."""
    fixtures = tmp_path / "f.jsonl"
    write_lines(fixtures, {"promptHash": "000000000000", "completion": REPLY})
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(fixtures).generate(FAILURE)
    assert caught.value.reason == "fixture_not_found"
    assert fixture_key(FAILURE) in str(caught.value)


def test_a_missing_file_is_fixture_not_found(tmp_path: Path) -> None:
    """No file at all: fixture_not_found, naming the path."""
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(tmp_path / "absent.jsonl").generate(FAILURE)
    assert caught.value.reason == "fixture_not_found"
    assert "absent.jsonl" in str(caught.value)


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        '{"promptHash": "abc"}',
        '{"promptHash": "abc", "completion": {}, "extra": 1}',
        '{"promptHash": 5, "completion": {}}',
        "[1, 2]",
    ],
    ids=["not-json", "no-completion", "extra-key", "hash-not-string", "not-object"],
)
def test_a_malformed_line_is_fixture_invalid(tmp_path: Path, line: str) -> None:
    """A line that is not {promptHash, completion} is fixture_invalid, naming the line."""
    fixtures = tmp_path / "f.jsonl"
    fixtures.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(fixtures).generate(FAILURE)
    assert caught.value.reason == "fixture_invalid"
    assert "f.jsonl" in str(caught.value)


def test_a_completion_that_breaks_the_schema_is_fixture_invalid(tmp_path: Path) -> None:
    """A recorded completion goes through the converter like a live reply."""
    fixtures = tmp_path / "f.jsonl"
    write_lines(
        fixtures, {"promptHash": fixture_key(FAILURE), "completion": {**REPLY, "confidence": 3}}
    )
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(fixtures).generate(FAILURE)
    assert caught.value.reason == "fixture_invalid"


def test_the_last_line_wins_and_changes_are_picked_up(tmp_path: Path) -> None:
    """Re-recording appends; the generator rereads the file when it changes."""
    fixtures = tmp_path / "f.jsonl"
    key = fixture_key(FAILURE)
    write_lines(
        fixtures,
        {"promptHash": key, "completion": REPLY},
        {"promptHash": key, "completion": {**REPLY, "suggestion": "Second take."}},
    )
    generator = FixtureGenerator(fixtures)
    assert generator.generate(FAILURE).suggestion == "Second take."
    with fixtures.open("a", encoding="utf-8") as f:
        f.write(
            "\n"
            + json.dumps(
                {"promptHash": key, "completion": {**REPLY, "suggestion": "Third take, longer."}}
            )
            + "\n"
        )
    assert generator.generate(FAILURE).suggestion == "Third take, longer."


def test_through_the_fallback_a_missing_fixture_gives_the_heuristic(tmp_path: Path) -> None:
    """As the service chains it: the heuristic answers, fallbackReason fixture_not_found."""
    fixtures = tmp_path / "f.jsonl"
    write_lines(fixtures, {"promptHash": "000000000000", "completion": REPLY})
    chain = FallbackGenerator(FixtureGenerator(fixtures), HeuristicGenerator())
    r = chain.generate(FAILURE)
    assert r.source is ReflectionSource.HEURISTIC
    assert r.fallback_reason == "fixture_not_found"


def test_unknown_failure_type_is_read_from_the_fixture(tmp_path: Path) -> None:
    """When the prompt asked for failureType, the recorded one is used."""
    vague = FailureContext(task_id="t", subtask_id="s", attempt_number=1, error_output="odd")
    assert reflection_request(vague).failure_type is None
    fixtures = tmp_path / "f.jsonl"
    write_lines(
        fixtures,
        {"promptHash": fixture_key(vague), "completion": {**REPLY, "failureType": "timeout"}},
    )
    assert FixtureGenerator(fixtures).generate(vague).failure_type is FailureType.TIMEOUT


def test_a_torn_line_keeps_the_good_lines_and_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One torn line (a crash mid-record) costs that line only, and is named in a warning."""
    fixtures = tmp_path / "f.jsonl"
    good = json.dumps({"promptHash": fixture_key(FAILURE), "completion": REPLY})
    other = json.dumps({"promptHash": "0" * 12, "completion": REPLY})
    fixtures.write_text(other + "\n" + good[: len(good) // 2] + "\n" + good + "\n")
    with caplog.at_level(logging.WARNING, logger="reflexkit.reflection"):
        reflection = FixtureGenerator(fixtures).generate(FAILURE)
    assert reflection.source is ReflectionSource.FIXTURE
    assert any("f.jsonl:2" in r.getMessage() for r in caplog.records)


def test_a_key_only_on_a_torn_line_is_a_miss(tmp_path: Path) -> None:
    """What the torn line held is missing (fixture_not_found), not the whole file invalid."""
    fixtures = tmp_path / "f.jsonl"
    good = json.dumps({"promptHash": fixture_key(FAILURE), "completion": REPLY})
    other = json.dumps({"promptHash": "0" * 12, "completion": REPLY})
    fixtures.write_text(other + "\n" + good[:-5])
    with pytest.raises(GenerationError) as caught:
        FixtureGenerator(fixtures).generate(FAILURE)
    assert caught.value.reason == "fixture_not_found"
