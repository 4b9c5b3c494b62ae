"""The tolerant, incremental view of the run logs."""

from __future__ import annotations

from pathlib import Path

from reflexkit.insights import RunLogReader
from reflexkit.testing.run_history import HistoryWriter


def test_reads_what_the_run_log_writes(writer: HistoryWriter, state: Path) -> None:
    """Attempts, outcomes, fingerprints, files and output lengths come back typed."""
    with writer.run("shop", run_id="r1") as run:
        run.fail("cart", fingerprint="fp1", files=("a.py", "b.py"), outputChars=7)
        run.timeout("cart", files=None, outputChars=None)
        run.end("cart", "exhausted")
        run.passed("tax", led_to_success=("refl-1",))
    history = RunLogReader(state / "runs").history()
    (cart,) = history.of("shop", "cart")
    assert cart.outcome == "exhausted"
    assert cart.failed
    first, second = cart.attempts
    assert (first.fingerprint, first.files_modified, first.output_chars) == (
        "fp1",
        ("a.py", "b.py"),
        7,
    )
    assert first.command == "python -m pytest -q"
    assert second.timed_out
    assert second.files_modified is None
    assert second.output_chars is None
    (tax,) = history.of("shop", "tax")
    assert tax.outcome == "passed"
    assert history.led_to_success == {"refl-1"}


def test_bad_lines_and_unknown_kinds_are_skipped_and_counted(
    writer: HistoryWriter, state: Path
) -> None:
    """Garbage, non-objects and kinds from a newer loop never stop the read."""
    with writer.run("shop", run_id="r1") as run:
        run.fail("cart")
    log = state / "runs" / "r1.jsonl"
    with log.open("ab") as handle:
        handle.write(b'not json\n[1, 2]\n{"kind": 3}\n')
        handle.write(b'{"kind": "brand_new_kind", "subtaskId": "cart"}\n')
        handle.write(b'{"kind": "attempt_started", "subtaskId": "cart", "attempt": "two"}\n')
    history = RunLogReader(state / "runs").history()
    assert history.bad_lines == 3
    assert history.unknown_kinds == 1
    assert len(history.of("shop", "cart")[0].attempts) == 1


def test_reads_only_what_was_appended(writer: HistoryWriter, state: Path) -> None:
    """A second read picks up appended events; a half-written line waits for its newline."""
    reader = RunLogReader(state / "runs")
    assert reader.history().runs == ()
    with writer.run("shop", run_id="r1") as run:
        run.fail("cart", fingerprint="fp1")
        assert len(reader.history().of("shop", "cart")[0].attempts) == 1
        log = state / "runs" / "r1.jsonl"
        size = log.stat().st_size
        run.fail("cart", fingerprint="fp2")
        whole = log.read_bytes()
        log.write_bytes(whole[: size + 20])  # the writer is mid-line
        assert len(reader.history().of("shop", "cart")[0].attempts) == 1
        log.write_bytes(whole)
    attempts = reader.history().of("shop", "cart")[0].attempts
    assert [a.fingerprint for a in attempts] == ["fp1", "fp2"]


def test_a_missing_folder_is_an_empty_history(tmp_path: Path) -> None:
    """No run logs yet means no runs, not an error."""
    assert RunLogReader(tmp_path / "nope").history().runs == ()


def test_files_as_a_list_are_read_too(state: Path) -> None:
    """The filesModified field may be a JSON list as well as one joined string."""
    log = state / "runs" / "r.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(
        '{"kind":"run_started","data":{"runId":"r","taskId":"t"}}\n'
        '{"kind":"attempt_started","subtaskId":"s","attempt":1,"at":"2026-11-23T10:00:00Z"}\n'
        '{"kind":"verification_failed","subtaskId":"s","attempt":1,'
        '"data":{"filesModified":["x.py", 3, ""],"failureType":"lint_error"}}\n'
    )
    (attempt,) = RunLogReader(state / "runs").history().of("t", "s")[0].attempts
    assert attempt.files_modified == ("x.py",)
    assert attempt.failure_type == "lint_error"
