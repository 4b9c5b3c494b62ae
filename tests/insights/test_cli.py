"""`reflexkit insights`, `resume` and `lessons`, end to end through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import orjson
import pytest
from click.testing import CliRunner, Result

from reflexkit.cli import cli
from reflexkit.insights import Finding, FindingLog, JsonlLessons, PausedSubtasks
from reflexkit.insights._analysis import ANALYSIS_SYSTEM_PROMPT
from reflexkit.memory import JsonlMemory
from reflexkit.models import utcnow
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection
from reflexkit.testing.run_history import HistoryWriter

from .test_analysis import FINDING


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _current() -> Finding:
    """FINDING stamped by the wall clock, the only clock the command line has."""
    return attrs.evolve(FINDING, created_at=utcnow())


@pytest.fixture
def llm_project(
    project_dir: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A project on the llm backend whose SDK talks to the fake Messages API."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "llm", "generationTimeoutMs": 3000}})
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return project_dir


def test_insights_lists_findings_and_paused(project_dir: Path) -> None:
    """The findings log and the paused subtasks, as a table and as JSON."""
    state = project_dir / ".reflexkit"
    FindingLog(state / "insights.jsonl").add([FINDING])
    PausedSubtasks(state / "paused.jsonl").pause("shop", "tax", description="d", reason="stuck")
    result = _run("insights")
    assert result.exit_code == 0, result.stderr
    assert "timeout_pattern" in result.stdout
    assert "paused: shop/tax: stuck" in result.stdout
    data = orjson.loads(_run("insights", "--json").stdout)
    assert data["findings"][0]["subjectId"] == "cart"
    assert data["paused"][0]["subtaskId"] == "tax"
    assert data["skippedLines"] == 0


def test_json_before_the_command_name_is_the_same_flag(project_dir: Path) -> None:
    """`reflexkit --json insights` and `--json lessons` print JSON, as the flag after does."""
    FindingLog(project_dir / ".reflexkit" / "insights.jsonl").add([FINDING])
    for command in ("insights", "lessons"):
        before, after = _run("--json", command), _run(command, "--json")
        assert before.exit_code == 0, before.stderr
        assert orjson.loads(before.stdout) == orjson.loads(after.stdout)


def test_insights_with_nothing_yet(project_dir: Path) -> None:
    """A project with no history says so."""
    result = _run("insights")
    assert result.exit_code == 0
    assert "no findings yet" in result.stdout
    assert not (project_dir / ".reflexkit").exists()


def test_analyze_without_findings_sends_nothing(
    llm_project: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """`--analyze` with no findings: no LLM call at all."""
    del llm_project
    result = _run("insights", "--analyze")
    assert result.exit_code == 0, result.stderr
    assert "no LLM call" in result.stdout
    assert fake_messages_api.requests == []


def test_analyze_with_findings_applies_one_action(
    llm_project: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """One request; the pause it proposes is applied and logged."""
    state = llm_project / ".reflexkit"
    FindingLog(state / "insights.jsonl").add([_current()])
    fake_messages_api.reply(
        {
            "summary": "cart never finishes.",
            "taskActions": [
                {"action": "pause", "taskId": "shop", "subtaskId": "cart", "reason": "timeouts"}
            ],
            "lessonActions": [],
        }
    )
    result = _run("insights", "--analyze", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(fake_messages_api.requests) == 1
    data = orjson.loads(result.stdout)
    assert data["analysis"]["source"] == "llm"
    assert data["analysis"]["applied"]["actionTaken"] == "paused"
    assert PausedSubtasks(state / "paused.jsonl").paused()[0].subtask_id == "cart"


def test_resume(project_dir: Path) -> None:
    """`resume` unpauses; resuming what is not paused is exit 1 with one line."""
    paused = PausedSubtasks(project_dir / ".reflexkit" / "paused.jsonl")
    paused.pause("shop", "cart", description="d", reason="stuck")
    result = _run("resume", "cart")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "resumed shop/cart"
    assert paused.paused() == []
    again = _run("resume", "cart")
    assert again.exit_code == 1
    assert again.stderr.strip() == "reflexkit: cart is not paused"


def test_lessons_list_remove_and_harvest(project_dir: Path) -> None:
    """Harvest learns from past runs; `lessons` lists them; `lessons remove ID` forgets one."""
    state = project_dir / ".reflexkit"
    worked = make_reflection(subtask_id="cart")
    JsonlMemory(state / "memory" / "reflections.jsonl").append(worked)
    with HistoryWriter(state / "runs").run("task-1", run_id=worked.session_id) as run:
        run.fail("cart", command="ruff check .", reflection_id=worked.id)
        run.passed("cart", led_to_success=(worked.id,))
    assert "no lessons yet" in _run("lessons").stdout
    result = _run("lessons", "harvest")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "learnt 1 lesson(s)"
    (lesson,) = orjson.loads(_run("lessons", "--json").stdout)
    assert lesson["tool"] == "ruff"
    assert lesson["reflectionId"] == worked.id
    assert "cart" in _run("lessons").stdout
    assert _run("lessons", "remove", lesson["id"]).exit_code == 0
    assert list(JsonlLessons(state / "lessons.jsonl")) == []
    missing = _run("lessons", "remove", lesson["id"])
    assert missing.exit_code == 1
    assert "no lesson" in missing.stderr


def test_bad_config_is_exit_2(project_dir: Path) -> None:
    """A bad insights section stops every insights command with one line."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text('{"insights": {"maxLessons": -1}}')
    result = _run("insights")
    assert result.exit_code == 2
    assert "$.insights.maxLessons" in result.stderr


def test_analyze_without_a_key_falls_back(
    llm_project: Path, fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No credential: nothing is sent, the findings stand, exit 0."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    FindingLog(llm_project / ".reflexkit" / "insights.jsonl").add([_current()])
    result = _run("insights", "--analyze")
    assert result.exit_code == 0, result.stderr
    assert "analysis (heuristic)" in result.stdout
    assert "no_api_key" in result.stdout
    assert fake_messages_api.requests == []


def test_control_characters_never_reach_the_terminal(project_dir: Path) -> None:
    """A subtask id or path with escape sequences is printed defanged."""
    finding = attrs.evolve(FINDING, subject_id="cart\x1b]0;pwned\x07", detail="a\x1b[2Jb\nc")
    FindingLog(project_dir / ".reflexkit" / "insights.jsonl").add([finding])
    result = _run("insights")
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout


def test_lessons_says_why_old_unsigned_lessons_are_not_listed(project_dir: Path) -> None:
    """Old unsigned lessons: `lessons` says how many it ignores, why, and how to learn them."""
    state = project_dir / ".reflexkit"
    worked = make_reflection(subtask_id="cart")
    JsonlMemory(state / "memory" / "reflections.jsonl").append(worked)
    with HistoryWriter(state / "runs").run("task-1", run_id=worked.session_id) as run:
        run.fail("cart", command="ruff check .", reflection_id=worked.id)
        run.passed("cart", led_to_success=(worked.id,))
    assert _run("lessons", "harvest").exit_code == 0
    path = state / "lessons.jsonl"
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    old = [{k: v for k, v in line.items() if k != "mac"} for line in lines]  # as 0.x wrote them
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in old * 3))
    for args in (("lessons",), ("lessons", "--json")):
        result = _run(*args)
        assert result.exit_code == 0, result.stderr
        assert "no lessons yet" not in result.output
        notes = [line for line in result.stderr.splitlines() if "not signed" in line]
        assert len(notes) == 1, result.stderr
        assert "3 lines" in notes[0]
        assert "reflexkit lessons harvest" in notes[0]
    assert orjson.loads(_run("lessons", "--json").stdout) == []


def _configure(root: Path, **insights: object) -> None:
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "llm", "generationTimeoutMs": 3000, "model": "m-reflect"},
                "insights": insights,
            }
        )
    )


def test_the_analysis_has_its_own_model_and_prompt_file(
    llm_project: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """`insights.model` and `insights.promptPath` set the analysis apart from reflections."""
    (llm_project / "prompts").mkdir()
    (llm_project / "prompts" / "analysis.txt").write_text("Review the history. JSON only.\n")
    _configure(llm_project, model="m-analyse", promptPath="prompts/analysis.txt")
    FindingLog(llm_project / ".reflexkit" / "insights.jsonl").add([_current()])
    fake_messages_api.reply({"summary": "s", "taskActions": [], "lessonActions": []})
    assert _run("insights", "--analyze").exit_code == 0
    [request] = fake_messages_api.requests
    assert request.json["model"] == "m-analyse"
    assert request.json["system"] == "Review the history. JSON only.\n"


@pytest.mark.parametrize("prompt", [None, "prompts/missing.txt"])
def test_the_built_in_prompt_and_the_reflection_model_by_default(
    llm_project: Path, fake_messages_api: FakeMessagesApi, prompt: str | None
) -> None:
    """No `insights.model`: `reflexion.model`; no prompt file (or none there): the built-in."""
    _configure(llm_project, **({"promptPath": prompt} if prompt else {}))
    FindingLog(llm_project / ".reflexkit" / "insights.jsonl").add([_current()])
    fake_messages_api.reply({"summary": "s", "taskActions": [], "lessonActions": []})
    assert _run("insights", "--analyze").exit_code == 0
    [request] = fake_messages_api.requests
    assert request.json["model"] == "m-reflect"
    assert request.json["system"] == ANALYSIS_SYSTEM_PROMPT


def test_analyze_tells_the_model_the_active_tasks_and_errors(
    llm_project: Path, fake_messages_api: FakeMessagesApi
) -> None:
    """`--analyze` lists the subtasks of recent runs and each failure's error text."""
    state = llm_project / ".reflexkit"
    with HistoryWriter(state / "runs").run("shop") as run:
        run.fail("cart", verificationOutput="ModuleNotFoundError: No module named 'yaml'")
    FindingLog(state / "insights.jsonl").add([_current()])
    fake_messages_api.reply({"summary": "s", "taskActions": [], "lessonActions": []})
    assert _run("insights", "--analyze").exit_code == 0
    content = fake_messages_api.requests[0].json["messages"][0]["content"]
    assert '"subtaskId": "cart"' in content
    assert '"activeTasks"' in content
    assert "No module named 'yaml'" in content
