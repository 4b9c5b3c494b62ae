"""The reflexkit command line: reflect, recent, prune, stats and demo, end to end."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from reflexkit import structure
from reflexkit.cli import cli
from reflexkit.memory import JsonlMemory
from reflexkit.models import Reflection, utcnow
from reflexkit.testing.memory_contract import make_reflection

from ..conftest import corpus_items  # noqa: TID252

FAILURE = {
    "taskId": "checkout",
    "subtaskId": "discount",
    "attemptNumber": 1,
    "command": "python -m pytest -q",
    "exitCode": 1,
    "errorOutput": (
        "FAILED tests/test_cart.py::test_total - assert 90 == 100\n1 failed, 3 passed in 0.12s\n"
    ),
}


def _run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin)


@pytest.fixture
def heuristic(project_dir: Path) -> Path:
    """A project whose reflections come from the heuristic (no network in tests)."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})
    )
    return project_dir


def _memory(root: Path) -> JsonlMemory:
    return JsonlMemory(root / ".reflexkit" / "memory" / "reflections.jsonl")


def test_reflect_prints_and_saves(heuristic: Path) -> None:
    """`reflect` reads stdin, prints the reflection and appends it to memory."""
    result = _run("reflect", stdin=json.dumps(FAILURE))
    assert result.exit_code == 0, result.stderr
    assert "tests/test_cart.py::test_total" in result.stdout
    (saved,) = list(_memory(heuristic))
    assert saved.subtask_id == "discount"
    assert saved.source.value == "heuristic"


def test_reflect_json_no_save(heuristic: Path, tmp_path: Path) -> None:
    """--json prints the record as camelCase JSON; --no-save leaves memory alone."""
    failure = tmp_path / "failure.json"
    failure.write_text(json.dumps(FAILURE))
    result = _run("reflect", "--input", str(failure), "--json", "--no-save")
    assert result.exit_code == 0, result.stderr
    record = structure(orjson.loads(result.stdout), Reflection)
    assert record.failure_type.value == "test_failure"
    assert list(_memory(heuristic)) == []


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "stdin: the file is empty; expected a JSON object"),
        ("{", "stdin: invalid JSON at line 1, column 2"),
        (json.dumps({**FAILURE, "attemptNumber": 0}), "stdin: $.attemptNumber: expected"),
        (json.dumps({**FAILURE, "exitcode": 1}), 'did you mean "exitCode"'),
    ],
)
@pytest.mark.usefixtures("heuristic")
def test_reflect_bad_input_is_one_line(stdin: str, message: str) -> None:
    """A bad FailureContext exits 2 with one line naming the field, no traceback."""
    result = _run("reflect", stdin=stdin)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_recent_formats_the_prompt_section_or_json(heuristic: Path) -> None:
    """`recent` prints the retry-prompt section, or the records with --format json."""
    store = _memory(heuristic)
    records = [make_reflection("discount", attempt=n) for n in range(1, 5)]
    for r in records:
        store.append(r)
    result = _run("recent", "discount", "--limit", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    got = [structure(d, Reflection) for d in orjson.loads(result.stdout)]
    assert got == records[2:]
    prompt = _run("recent", "discount")
    assert prompt.stdout.startswith("## Learning from Previous Failures")
    assert _run("recent", "nobody", "--format", "json").stdout.strip() == "[]"
    assert _run("recent", "discount", "--limit", "0").exit_code == 2


def test_prune_and_dry_run(heuristic: Path) -> None:
    """`prune --dry-run` counts, prune removes, both by --older-than days."""
    store = _memory(heuristic)
    store.append(make_reflection(created_at=utcnow() - timedelta(days=45)))
    store.append(make_reflection(created_at=utcnow()))
    dry = _run("prune", "--dry-run")
    assert dry.stdout.strip() == "would remove 1 reflections older than 30 days"
    assert len(list(store)) == 2
    assert _run("prune").stdout.strip() == "removed 1 reflections older than 30 days"
    assert len(list(store)) == 1
    assert _run("prune", "--older-than", "-1").exit_code == 2


def test_stats_counts_and_reports_corrupt_lines(heuristic: Path) -> None:
    """`stats --json` gives the figures, corrupt lines included."""
    store = _memory(heuristic)
    store.append(make_reflection())
    with store.path.open("ab") as f:
        f.write(b"not json\n")
    result = _run("stats", "--json")
    assert result.exit_code == 0, result.stderr
    figures = orjson.loads(result.stdout)
    assert (figures["records"], figures["subtasks"], figures["corrupt"]) == (1, 1, 1)
    table = _run("stats")
    assert "corrupt lines skipped" in table.stdout


def test_memory_path_comes_from_project_json(project_dir: Path) -> None:
    """The memory section of project.json decides where records go."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}, "memory": {"path": "mem/r.jsonl"}})
    )
    assert _run("reflect", stdin=json.dumps(FAILURE)).exit_code == 0
    assert len(list(JsonlMemory(project_dir / "mem" / "r.jsonl"))) == 1


def test_an_unwritable_store_is_exit_2(project_dir: Path) -> None:
    """A store that can't be written as set up (a folder) is one line on stderr and exit 2."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}, "memory": {"path": "blocked"}})
    )
    (project_dir / "blocked").mkdir()
    result = _run("reflect", stdin=json.dumps(FAILURE))
    assert result.exit_code == 2  # a setup problem; a full disk would be exit 1 (#19, h5)
    assert "could not save the reflection" in result.stderr


def test_demo_runs_offline(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo reflects on the bundled failure and shows the retry section, no key needed."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = _run("demo")
    assert result.exit_code == 0, result.stderr
    assert "## Learning from Previous Failures" in result.stdout
    assert "test_quarter_off" in result.stdout
    assert not (project_dir / ".reflexkit").exists()


@pytest.mark.parametrize("item", corpus_items(), ids=lambda item: str(item.get("id", "item")))
def test_reflect_takes_every_corpus_failure_as_input(heuristic: Path, item: dict[str, Any]) -> None:
    """Each dev-corpus failureContext, exactly as it is, is valid input to reflect."""
    result = _run("reflect", "--json", stdin=json.dumps(item["failureContext"]))
    assert result.exit_code == 0, result.stderr
    record = structure(orjson.loads(result.stdout), Reflection)
    assert record.subtask_id == item["failureContext"]["subtaskId"]
    assert len(list(_memory(heuristic))) == 1


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: b"\xef\xbb\xbf" + text.encode(),  # Notepad's UTF-8
        lambda text: text.encode("utf-16"),  # PowerShell 5's `>` (with its BOM)
    ],
    ids=["utf-8 bom", "utf-16"],
)
def test_json_files_saved_by_windows_tools_read(
    heuristic: Path, tmp_path: Path, encode: Any
) -> None:
    """A project.json and a failure file with a byte order mark read like plain UTF-8."""
    config = heuristic / ".reflexkit" / "project.json"
    config.write_bytes(encode(config.read_text()))
    failure = tmp_path / "failure.json"
    failure.write_bytes(encode(json.dumps(FAILURE)))
    result = _run("reflect", "--input", str(failure), "--json")
    assert result.exit_code == 0, result.stderr
    assert structure(orjson.loads(result.stdout), Reflection).failure_type.value == "test_failure"
    assert [r.subtask_id for r in _memory(heuristic)] == [FAILURE["subtaskId"]]
