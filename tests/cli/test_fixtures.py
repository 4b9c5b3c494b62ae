"""Recording Claude's replies through the CLI and replaying them offline, end to end.

The real anthropic SDK talks to the fake Messages API over HTTP (``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.testing.fake_messages_api import FakeMessagesApi

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

FAILURE = {
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed in 0.1s\n",
}
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_cart.py::test_total: the total is 90, expected 100.",
    "suggestion": "Apply the discount to the subtotal only, not to the shipping.",
    "actionItems": ["Read total() in src/cart.py", "Run pytest tests/test_cart.py::test_total"],
    "confidence": 0.8,
}


def test_record_then_replay_offline(live: FakeMessagesApi, project_dir: Path) -> None:
    """A recorded reply replays under --backend fixture, and `fixtures key` names it."""
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    runner = CliRunner()
    key = runner.invoke(cli, ["fixtures", "key"], input=json.dumps(FAILURE))
    assert key.exit_code == 0, key.stderr

    live.reply(REPLY)
    recorded = runner.invoke(
        cli,
        ["reflect", "--record-fixtures", str(fixtures), "--json", "--no-save"],
        input=json.dumps(FAILURE),
    )
    assert recorded.exit_code == 0, recorded.stderr
    assert orjson.loads(recorded.stdout)["source"] == "llm"
    (line,) = fixtures.read_bytes().splitlines()
    assert orjson.loads(line)["promptHash"] == key.stdout.strip()
    assert live.pending == 0
    as_json = runner.invoke(cli, ["fixtures", "key", "--json"], input=json.dumps(FAILURE))
    assert orjson.loads(as_json.stdout) == {
        "fixtureKey": key.stdout.strip(),
        "subtaskId": FAILURE["subtaskId"],
    }

    replayed = runner.invoke(
        cli, ["reflect", "--backend", "fixture", "--json"], input=json.dumps(FAILURE)
    )
    assert replayed.exit_code == 0, replayed.stderr
    record = orjson.loads(replayed.stdout)
    assert record["source"] == "fixture"
    assert record["analysis"] == REPLY["analysis"]
    assert record["actionItems"] == REPLY["actionItems"]


def test_recording_without_a_reply_is_exit_1(live: FakeMessagesApi, project_dir: Path) -> None:
    """When Claude fails, the fallback is printed, nothing recorded, and the exit says so."""
    live.refusal()
    fixtures = project_dir / "f.jsonl"
    result = CliRunner().invoke(
        cli, ["reflect", "--record-fixtures", str(fixtures), "--no-save"], input=json.dumps(FAILURE)
    )
    assert result.exit_code == 1
    assert "source heuristic" in result.stdout
    assert f"nothing recorded in {fixtures}: Claude gave no reply (llm_refusal)" in result.stderr
    assert not fixtures.exists()


def test_recording_refuses_another_backend(live: FakeMessagesApi, tmp_path: Path) -> None:
    """--record-fixtures with --backend heuristic is a usage error."""
    result = CliRunner().invoke(
        cli,
        ["reflect", "--record-fixtures", str(tmp_path / "f.jsonl"), "--backend", "heuristic"],
        input=json.dumps(FAILURE),
    )
    assert result.exit_code == 2
    assert "can't go with --backend heuristic" in result.stderr
    assert not live.requests


def test_no_api_key_reflects_with_the_heuristic(
    project_dir: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reflect --backend llm` without a key: a heuristic reflection, no_api_key, exit 0."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    result = CliRunner().invoke(
        cli, ["reflect", "--backend", "llm", "--json"], input=json.dumps(FAILURE)
    )
    assert result.exit_code == 0, result.stderr
    record = orjson.loads(result.stdout)
    assert (record["source"], record["fallbackReason"]) == ("heuristic", "no_api_key")
    assert not fake_messages_api.requests
    assert (project_dir / ".reflexkit" / "memory" / "reflections.jsonl").exists()


def test_key_sees_the_same_run_as_the_generator(live: FakeMessagesApi, project_dir: Path) -> None:
    """With a sessionId, `fixtures key` leaves other runs' reflections out, as generate() does."""
    runner = CliRunner()
    earlier_run = {**FAILURE, "sessionId": "run-1"}
    saved = runner.invoke(cli, ["reflect", "--backend", "heuristic"], input=json.dumps(earlier_run))
    assert saved.exit_code == 0, saved.stderr
    this_run = {**FAILURE, "sessionId": "run-2", "attemptNumber": 2}
    key = runner.invoke(cli, ["fixtures", "key"], input=json.dumps(this_run)).stdout.strip()
    fixtures = project_dir / "fixtures.jsonl"
    live.reply(REPLY)
    recorded = runner.invoke(
        cli,
        ["reflect", "--record-fixtures", str(fixtures), "--no-save"],
        input=json.dumps(this_run),
    )
    assert recorded.exit_code == 0, recorded.stderr
    (line,) = fixtures.read_bytes().splitlines()
    assert orjson.loads(line)["promptHash"] == key
    (request,) = live.requests
    assert "<reflection" not in json.dumps(request.json)  # run-1's lesson stayed out


def test_a_torn_fixture_line_with_fixture_miss_error_exits_2(project_dir: Path) -> None:
    """fixtureMiss: error, the failure's reply only on a torn line: exit 2, not a quiet fallback."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "fixture", "fixtureMiss": "error"}})
    )
    key = invoke_cli(project_dir, "fixtures", "key", stdin=json.dumps(FAILURE))
    assert key.returncode == 0, key.stderr
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    fixtures.parent.mkdir()
    other = json.dumps({"promptHash": "0" * 12, "completion": REPLY})
    torn = json.dumps({"promptHash": key.stdout.decode().strip(), "completion": REPLY})[:-9]
    fixtures.write_text(other + "\n" + torn + "\n")
    done = invoke_cli(project_dir, "reflect", "--json", stdin=json.dumps(FAILURE))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert key.stdout.strip() in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "folder", "no_good_line"])
def test_an_unreadable_fixture_file_with_fixture_miss_error_exits_2(
    project_dir: Path, kind: str
) -> None:
    """fixtureMiss: error and a fixture file that can't be replayed: exit 2, nothing stored.

    A FIFO (never opened blocking), a folder, or a file with no good line at all miss every
    key as a missing file does; the fallback would hide that the fixture is broken. The FIFO
    is read by a real process under a time limit: a blocking open would hang this one.
    """
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "fixture", "fixtureMiss": "error"}})
    )
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    fixtures.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(fixtures)
    elif kind == "folder":
        fixtures.mkdir()
    else:
        fixtures.write_text("not json\n")
    if kind == "fifo":
        done = subprocess.run(
            [sys.executable, "-m", "reflexkit", "reflect", "--json"],
            input=json.dumps(FAILURE).encode(),
            capture_output=True,
            cwd=project_dir,
            check=False,
            timeout=60,
        )
    else:
        done = invoke_cli(project_dir, "reflect", "--json", stdin=json.dumps(FAILURE))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert b"fixture key" in done.stderr
    assert not (project_dir / ".reflexkit" / "memory" / "reflections.jsonl").exists()
