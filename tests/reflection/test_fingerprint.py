"""Fingerprints: one failure across attempts keeps its fingerprint, different failures differ."""

from __future__ import annotations

import re
from typing import Any

import attrs
import pytest

from reflexkit._serde import structure
from reflexkit.models import FailureContext, FailureType
from reflexkit.reflection._fingerprint import fingerprint, normalise

from ..conftest import CORPUS, MISSING_CORPUS, corpus_items  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def make(
    output: str, *, command: str = "pytest", failure_type: FailureType | None = None
) -> FailureContext:
    """Build a failure with the given output."""
    return FailureContext(
        task_id="t",
        subtask_id="s",
        attempt_number=1,
        error_output=output,
        command=command,
        exit_code=1,
        failure_type=failure_type,
    )


def pytest_run(  # noqa: PLR0913 -- one knob per kind of run-to-run noise
    *,
    test: str = "test_total",
    value: str = "3 == 4",
    line: int = 7,
    secs: str = "0.03",
    addr: str = "0x7f0fe33c9490",
    tmp: str = "/tmp/pytest-of-dev/pytest-12/test_total0",  # noqa: S108 -- printed, never used
) -> str:
    """Return a pytest failure output with the run-to-run details given."""
    return (
        "=================================== FAILURES ===================================\n"
        f"_________________________ {test} _________________________\n"
        f"tmp_path = PosixPath('{tmp}')\n"
        f">       assert total(<Cart object at {addr}>) == 4\n"
        f"E       assert {value}\n\n"
        f"tests/test_sum.py:{line}: AssertionError\n"
        "=========================== short test summary info ============================\n"
        f"FAILED tests/test_sum.py::{test} - assert {value}\n"
        f"1 failed, 5 passed in {secs}s\n"
    )


class TestStable:
    """Noise that changes between attempts does not change the fingerprint."""

    def test_shape(self) -> None:
        """A fingerprint is 16 lowercase hex digits."""
        assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(make(pytest_run())))

    def test_timings_addresses_temp_paths_and_lines(self) -> None:
        """Durations, hex addresses, tmp_path folders and line numbers are ignored."""
        first = make(pytest_run())
        second = make(
            pytest_run(
                secs="1.27",
                addr="0x55d0c0ffee10",
                line=9,
                tmp="/tmp/pytest-of-dev/pytest-13/test_total0",  # noqa: S108 -- printed only
            )
        )
        assert fingerprint(first) == fingerprint(second)

    def test_timestamps_pids_and_uuids(self) -> None:
        """Timestamps, process ids and UUIDs in unrecognised output are ignored."""
        template = "{ts} worker[{pid}] job {uuid} crashed: connection reset by peer\n"
        first = template.format(
            ts="2026-11-23T06:12:37Z", pid=4711, uuid="3fa85f64-5717-4562-b3fc-2c963f66afa6"
        )
        second = template.format(
            ts="2026-11-24T17:01:02Z", pid=15, uuid="9b2e1c3d-0000-4a5b-8c7d-112233445566"
        )
        assert fingerprint(make(first, command="./worker")) == fingerprint(
            make(second, command="./worker")
        )

    def test_classified_and_given_type_agree(self) -> None:
        """A failure fingerprints the same before and after its type is filled in."""
        failure = make(pytest_run())
        classified = attrs.evolve(failure, failure_type=FailureType.TEST_FAILURE)
        assert fingerprint(failure) == fingerprint(classified)

    def test_codes_keep_their_digits(self) -> None:
        """Numbers inside identifiers such as TS2322 or E0308 are kept."""
        assert "TS2322" in normalise("src/a.ts(3,5): error TS2322: Type")
        assert normalise("src/a.ts(3,5)") == "src/a.ts(<n>,<n>)"


class TestDistinct:
    """Different failures get different fingerprints."""

    def test_other_failing_test(self) -> None:
        """Another failing test is another failure."""
        assert fingerprint(make(pytest_run())) != fingerprint(make(pytest_run(test="test_tax")))

    def test_other_type(self) -> None:
        """The same output under another failure type is another failure."""
        output = pytest_run()
        assert fingerprint(make(output, failure_type=FailureType.TEST_FAILURE)) != fingerprint(
            make(output, failure_type=FailureType.TIMEOUT)
        )

    def test_other_message(self) -> None:
        """A different error message is a different failure."""
        first = make(
            'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
            "KeyError: 'user'\n",
            command="python a.py",
        )
        second = make(
            'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
            "KeyError: 'email'\n",
            command="python a.py",
        )
        assert fingerprint(first) != fingerprint(second)

    @pytest.mark.skipif(not CORPUS.is_dir(), reason=MISSING_CORPUS)
    def test_dev_corpus_fingerprints_are_distinct(self) -> None:
        """No two dev corpus failures share a fingerprint."""
        items: list[dict[str, Any]] = corpus_items()
        prints = {fingerprint(structure(item["failureContext"], FailureContext)) for item in items}
        assert len(prints) == len(items)
