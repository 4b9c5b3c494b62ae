"""Deterministic, gated reflection through the real CLI (#16).

Record-then-replay, strict fixtures, and byte-identical runs; the LLM path is the real
anthropic SDK against the fake Messages API.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.testing.fake_messages_api import FakeMessagesApi

FAILURE = {
    "sessionId": "run-7",
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
    "actionItems": ["Read total() in src/cart.py"],
    "confidence": 0.8,
}


@pytest.mark.parametrize("attempt", [1, 2])
def test_record_saved_then_replay_gives_the_same_reflection(
    live: FakeMessagesApi, project_dir: Path, attempt: int
) -> None:
    """Recording saves to memory; the replay must not see that record as an earlier attempt."""
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    runner = CliRunner()
    failure = json.dumps({**FAILURE, "attemptNumber": attempt})
    live.reply(REPLY)
    recorded = runner.invoke(
        cli, ["reflect", "--record-fixtures", str(fixtures), "--json"], input=failure
    )
    assert recorded.exit_code == 0, recorded.stderr
    replayed = runner.invoke(cli, ["reflect", "--backend", "fixture", "--json"], input=failure)
    assert replayed.exit_code == 0, replayed.stderr
    first, second = orjson.loads(recorded.stdout), orjson.loads(replayed.stdout)
    assert second["source"] == "fixture", second.get("fallbackReason")
    for field in ("category", "analysis", "suggestion", "actionItems", "confidence"):
        assert second[field] == first[field]


# --- `reflexkit run`: byte-identical runs, record then replay, gates, budgets ---------------

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = """import unittest
from calc import add

class AddTests(unittest.TestCase):
    def test_add_positive(self):
        self.assertEqual(add(2, 3), 5)
"""
SUB_TESTS = """import unittest
from calc import sub

class SubTests(unittest.TestCase):
    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)
"""
SCRIPT = {
    "fix-add": [
        {"calc.py": "def add(a, b):\n    return a * b\n"},
        {"calc.py": "def add(a, b):\n    return a + b\n"},
    ],
    "fix-sub": [
        {"subcalc.py": "def sub(a, b):\n    return b - a\n"},
        {"subcalc.py": "def sub(a, b):\n    return a - b\n"},
    ],
}


def make_project(root: Path, reflexion: dict[str, object] | None = None) -> Path:
    """A tiny project with two bugs, their unittest suites, a script and a task file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(BUGGY)
    (root / "subcalc.py").write_text("def sub(a, b):\n    return a + b\n")
    (root / "test_calc.py").write_text(TESTS)
    (root / "test_subcalc.py").write_text(SUB_TESTS.replace("from calc", "from subcalc"))
    (root / "script.json").write_text(json.dumps(SCRIPT))
    (root / ".reflexkit").mkdir(exist_ok=True)
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic", **(reflexion or {})}})
    )
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "calc",
                "description": "Fix the calculator.",
                "subtasks": [
                    {
                        "id": "fix-add",
                        "description": "add() must add.",
                        "verify": [f"{sys.executable} -m unittest test_calc"],
                    },
                    {
                        "id": "fix-sub",
                        "description": "sub() must subtract.",
                        "verify": [f"{sys.executable} -m unittest test_subcalc"],
                    },
                ],
            }
        )
    )
    return root


def run_in(root: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[int, str, str]:
    """`reflexkit run` on the project's task with its script, from inside the project."""
    monkeypatch.chdir(root)
    result = CliRunner().invoke(
        cli,
        ["run", "task.json", "--subagent", "scripted", "--script", "script.json", *extra],
    )
    return result.exit_code, result.stdout, result.stderr


def sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_two_deterministic_runs_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    """Same task, same script, same run id: identical memory files and run logs (sha256)."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    monkeypatch.delenv("CI", raising=False)
    digests = []
    for name in ("first", "second"):
        # The same inputs, the project path included (tool output names absolute paths).
        root = make_project(tmp_path / "project")
        code, _, err = run_in(
            root, monkeypatch, "--deterministic", "--run-id", "ci-1", "--jobs", jobs
        )
        assert code == 0, err
        monkeypatch.chdir(tmp_path)
        root = root.rename(tmp_path / name)
        memory = root / ".reflexkit" / "memory" / "reflections.jsonl"
        log = root / ".reflexkit" / "runs" / "ci-1.jsonl"
        if jobs == "1":
            digests.append((sha256(memory), sha256(log)))
        else:  # parallel subtasks append in the order they finish: the same lines, any order
            lines = b"\n".join(sorted(memory.read_bytes().splitlines()))
            digests.append((hashlib.sha256(lines).hexdigest(), sha256(log)))
    assert digests[0] == digests[1]
    events = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    assert {e["at"] for e in events} == {"2000-01-01T00:00:00Z"}
    kinds = [(e["kind"], e["subtaskId"]) for e in events]
    # Sequential order even with --jobs 2: every fix-add event before any fix-sub event.
    subtasks = [s for _, s in kinds if s]
    assert subtasks == sorted(subtasks, key=["fix-add", "fix-sub"].index)
    generated = [e["data"] for e in events if e["kind"] == "reflection_generated"]
    assert len(generated) == 2
    assert all(d["latencyMs"] == 0 and d["length"] > 0 for d in generated)
    records = [orjson.loads(line) for line in memory.read_bytes().splitlines()]
    assert {r["id"] for r in records} == {d["reflectionId"] for d in generated}
    assert all(r["sessionId"] == "ci-1" for r in records)


def test_without_deterministic_runs_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: two ordinary runs do not write the same memory."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    digests = []
    for name in ("first", "second"):
        root = make_project(tmp_path / "project")
        code, _, err = run_in(root, monkeypatch, "--run-id", "ci-1")
        assert code == 0, err
        monkeypatch.chdir(tmp_path)
        root = root.rename(tmp_path / name)
        digests.append(sha256(root / ".reflexkit" / "memory" / "reflections.jsonl"))
    assert digests[0] != digests[1]


def test_ci_true_normalises_durations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under CI=true the run log's durations are 0 even outside deterministic mode."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    monkeypatch.setenv("CI", "true")
    root = make_project(tmp_path / "p")
    code, _, err = run_in(root, monkeypatch, "--run-id", "r1")
    assert code == 0, err
    events = [
        orjson.loads(line)
        for line in (root / ".reflexkit" / "runs" / "r1.jsonl").read_bytes().splitlines()
    ]
    durations = [
        v
        for e in events
        for k, v in e["data"].items()
        if k in {"durationMs", "subagentMs", "latencyMs"} and v is not None
    ]
    assert durations
    assert set(durations) == {0}


def test_a_reused_run_id_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second run under the same --run-id would mix two runs in one log: exit 2."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = make_project(tmp_path / "p")
    assert run_in(root, monkeypatch, "--run-id", "r1")[0] == 0
    code, _, err = run_in(root, monkeypatch, "--run-id", "r1")
    assert code == 2
    assert "a run log already exists" in err
    code, _, err = run_in(root, monkeypatch, "--run-id", "../escape")
    assert code == 2
    assert "--run-id" in err


# --- gates: with reflection off, the run is what it was without reflexkit's reflection ------

GOLDEN = Path(__file__).parents[1] / "data" / "golden"
# An agent that keeps every prompt it gets and fixes add() on its second attempt.
PROMPT_KEEPER = """import pathlib, sys
prompt = pathlib.Path(sys.argv[1]).read_text()
kept = pathlib.Path("prompts.txt")
seen = kept.read_text() if kept.exists() else ""
attempt = seen.count("=== prompt") + 1
kept.write_text(seen + f"=== prompt {attempt}\\n{prompt}\\n")
body = "a + b" if attempt > 1 else "a * b"
pathlib.Path("calc.py").write_text(f"def add(a, b):\\n    return {body}\\n")
"""


def gated_project(root: Path, *, reflect_in_task: bool, enabled: bool = True) -> Path:
    """One subtask, verified by `python3 -m unittest` (a path-free command for the golden)."""
    make_project(root, {"enabled": enabled})
    (root / "agent.py").write_text(PROMPT_KEEPER)
    subtask: dict[str, object] = {
        "id": "fix-add",
        "description": "add() must add.",
        "verify": ["python3 -m unittest test_calc"],
    }
    if not reflect_in_task:
        subtask["reflect"] = False
    (root / "task.json").write_text(
        json.dumps({"id": "calc", "description": "Fix the calculator.", "subtasks": [subtask]})
    )
    return root


def run_gated(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`reflexkit run` with the prompt-keeping agent, deterministic, run id `gated`."""
    monkeypatch.chdir(root)
    agent = f"{sys.executable} agent.py {{prompt_file}}"
    result = CliRunner().invoke(
        cli,
        ["run", "task.json", "--agent-command", agent, "--deterministic", "--run-id", "gated"],
    )
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("reflect_in_task", "enabled"),
    [(False, True), (True, False), (False, False)],
    ids=["subtask-off", "project-off", "both-off"],
)
def test_with_reflection_off_prompts_and_log_match_the_golden_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reflect_in_task: bool, enabled: bool
) -> None:
    """Off by the task file or by the project: no memory file, and golden prompts and log."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = gated_project(tmp_path / "p", reflect_in_task=reflect_in_task, enabled=enabled)
    code, err = run_gated(root, monkeypatch)
    assert code == 0, err
    assert not (root / ".reflexkit" / "memory").exists()
    assert (root / "prompts.txt").read_text() == (GOLDEN / "reflect_off.prompts.txt").read_text()
    log = (root / ".reflexkit" / "runs" / "gated.jsonl").read_bytes()
    assert log == (GOLDEN / "reflect_off.run.jsonl").read_bytes()


def test_with_reflection_on_the_retry_prompt_carries_the_lesson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control for the golden test: the same run with the gate open differs."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = gated_project(tmp_path / "p", reflect_in_task=True)
    code, err = run_gated(root, monkeypatch)
    assert code == 0, err
    assert "Learning from Previous Failures" in (root / "prompts.txt").read_text()
    assert (root / ".reflexkit" / "memory" / "reflections.jsonl").exists()


# --- write budget ---------------------------------------------------------------------------


def test_past_the_write_budget_the_run_goes_on_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A budget of one: the second reflection is not stored; both subtasks still pass."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = make_project(tmp_path / "p", {"maxWritesPerRun": 1})
    code, _, err = run_in(root, monkeypatch, "--run-id", "r1")
    assert code == 0, err
    records = (root / ".reflexkit" / "memory" / "reflections.jsonl").read_bytes().splitlines()
    assert len(records) == 1
    events = [
        orjson.loads(line)
        for line in (root / ".reflexkit" / "runs" / "r1.jsonl").read_bytes().splitlines()
    ]
    generated = [
        (e["subtaskId"], e["data"]["saved"], e["data"]["reason"])
        for e in events
        if e["kind"] == "reflection_generated"
    ]
    assert generated == [("fix-add", True, None), ("fix-sub", False, "write_budget")]
    assert [e["kind"] for e in events][-1] == "run_finished"


# --- strict fixtures --------------------------------------------------------------------------


def test_reflect_with_a_missing_fixture_exits_2_and_stores_nothing(live: FakeMessagesApi) -> None:
    """With fixtureMiss error (the default): exit 2 naming the key, no memory written."""
    runner = CliRunner()
    key = runner.invoke(cli, ["fixtures", "key"], input=json.dumps(FAILURE)).stdout.strip()
    result = runner.invoke(cli, ["reflect", "--backend", "fixture"], input=json.dumps(FAILURE))
    assert result.exit_code == 2
    assert f"no recorded reply for fixture key {key}" in result.stderr
    assert not Path(".reflexkit/memory/reflections.jsonl").exists()
    assert not live.requests


def test_reflect_with_fixture_miss_heuristic_falls_back(live: FakeMessagesApi) -> None:
    """With fixtureMiss heuristic, the old behaviour: the heuristic answers and is stored."""
    Path(".reflexkit/project.json").write_text(
        json.dumps({"reflexion": {"fixtureMiss": "heuristic"}})
    )
    result = CliRunner().invoke(
        cli, ["reflect", "--backend", "fixture", "--json"], input=json.dumps(FAILURE)
    )
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout)["fallbackReason"] == "fixture_not_found"
    assert Path(".reflexkit/memory/reflections.jsonl").exists()
    assert not live.requests


def test_config_check_rejects_an_empty_fixtures_path(project_dir: Path) -> None:
    """An empty fixturesPath would replay from the project folder itself: a config error."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"fixturesPath": ""}})
    )
    result = CliRunner().invoke(cli, ["config", "check"])
    assert result.exit_code == 2
    assert "$.reflexion.fixturesPath: expected a non-empty string" in result.stderr


def test_run_recorded_then_replayed_gives_the_same_reflections(
    live: FakeMessagesApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --record-fixtures` with Claude, then the same run offline: the same lessons."""
    fixtures = tmp_path / "fixtures.jsonl"
    root = make_project(tmp_path / "project", {"backend": "llm"})
    live.reply(REPLY)
    live.reply({**REPLY, "analysis": "sub() subtracts the wrong way round: -2, expected 2."})
    code, _, err = run_in(root, monkeypatch, "--record-fixtures", str(fixtures), "--run-id", "rec")
    assert code == 0, err
    assert len(fixtures.read_bytes().splitlines()) == 2
    monkeypatch.chdir(tmp_path)
    recorded = root.rename(tmp_path / "recorded")

    root = make_project(tmp_path / "project", {"backend": "fixture", "fixturesPath": str(fixtures)})
    code, _, err = run_in(root, monkeypatch, "--run-id", "replay")
    assert code == 0, err
    assert len(live.requests) == 2  # the replay asked nobody

    def lessons(project: Path) -> list[tuple[str, str, str]]:
        memory = project / ".reflexkit" / "memory" / "reflections.jsonl"
        records = [orjson.loads(line) for line in memory.read_bytes().splitlines()]
        return [(r["subtaskId"], r["analysis"], r["suggestion"]) for r in records]

    assert lessons(root) == lessons(recorded)
    events = [
        orjson.loads(line)
        for line in (root / ".reflexkit" / "runs" / "replay.jsonl").read_bytes().splitlines()
    ]
    generated = [e["data"] for e in events if e["kind"] == "reflection_generated"]
    assert [d["source"] for d in generated] == ["fixture", "fixture"]
    recorded_keys = [
        orjson.loads(line)["promptHash"] for line in fixtures.read_bytes().splitlines()
    ]
    assert [d["fixtureKey"] for d in generated] == recorded_keys


def test_run_with_missing_fixtures_exits_2_listing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop goes on (both subtasks pass), nothing is stored, and the exit lists the keys."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = make_project(tmp_path / "p", {"backend": "fixture"})
    code, _, err = run_in(root, monkeypatch, "--run-id", "r1")
    assert code == 2
    assert err.count("no recorded reply for fixture key") == 2
    assert not (root / ".reflexkit" / "memory" / "reflections.jsonl").exists()
    events = [
        orjson.loads(line)
        for line in (root / ".reflexkit" / "runs" / "r1.jsonl").read_bytes().splitlines()
    ]
    generated = [e["data"] for e in events if e["kind"] == "reflection_generated"]
    assert [(d["saved"], d["reason"]) for d in generated] == [(False, "fixture_miss")] * 2
    assert all(d["fixtureKey"] in err for d in generated)
    assert events[-1]["data"]["allPassed"] is True


def test_deterministic_without_a_run_id_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newcomer's --deterministic without --run-id would never repeat: say so."""
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    root = make_project(tmp_path / "p")
    code, _, err = run_in(root, monkeypatch, "--deterministic")
    assert code == 0, err
    assert "--deterministic with no --run-id" in err


# --- the insight rules see a deterministic run as they see any other (#25) ------------------------

HANG = (
    "import sys, time; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n=====\\n'); "
    "time.sleep(30)"
)


def hanging_project(root: Path) -> Path:
    """A subtask whose agent records its prompt, changes nothing and times out each time."""
    root.mkdir(parents=True)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "orchestrator": {"maxAttempts": 3, "attemptTimeoutS": 2},
                "insights": {"timeoutLimit": 2},
            }
        )
    )
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "shop",
                "description": "",
                "subtasks": [{"id": "cart", "description": "Fix the cart.", "verify": ["true"]}],
            }
        )
    )
    return root


def run_hanging(
    root: Path, prompts: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> list[dict[str, object]]:
    """`reflexkit run` with the hanging agent; the run log's events."""
    monkeypatch.chdir(root)
    # -I -S: the agent records its prompt long before the limit, even on a loaded machine
    agent = f"{sys.executable} -I -S -c {json.dumps(HANG)} {prompts}"
    result = CliRunner().invoke(
        cli, ["run", "task.json", "--agent-command", agent, "--run-id", "r1", *extra]
    )
    assert result.exit_code == 1, result.output + result.stderr
    log = root / ".reflexkit" / "runs" / "r1.jsonl"
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


@pytest.mark.slow
def test_a_deterministic_run_sees_the_findings_and_nudges_of_a_normal_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """timeout_pattern, no_change_repeat and the "changed nothing" nudge, in both modes.

    And two deterministic runs that emit findings write the same bytes.
    """
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    seen = {}
    digests = []
    for name, extra in (
        ("normal", ()),
        ("det1", ("--deterministic",)),
        ("det2", ("--deterministic",)),
    ):
        root = hanging_project(tmp_path / "project")
        prompts = tmp_path / f"{name}.prompts"
        events = run_hanging(root, prompts, monkeypatch, *extra)
        findings = sorted(
            (str(e["data"]["rule"]), e["attempt"])  # type: ignore[index]
            for e in events
            if e["kind"] == "finding"
        )
        nudged = [
            "## Note: your last attempt changed nothing" in p
            for p in prompts.read_text().split("=====")[:3]
        ]
        seen[name] = (findings, nudged)
        if extra:
            digests.append(sha256(root / ".reflexkit" / "runs" / "r1.jsonl"))
            stamps = {e["data"]["createdAt"] for e in events if e["kind"] == "finding"}  # type: ignore[index]
            assert stamps == {"2000-01-01T00:00:00Z"}
        monkeypatch.chdir(tmp_path)
        root.rename(tmp_path / name)
    rules = {rule for rule, _attempt in seen["normal"][0]}
    assert {"timeout_pattern", "no_change_repeat"} <= rules
    assert seen["normal"][1] == [False, False, True]
    assert seen["det1"] == seen["normal"]
    assert digests[0] == digests[1]


# --- pause and resume by position, whatever the runs' clock (#29) ---------------------------------


def failing_project(root: Path) -> Path:
    """A subtask that fails every run; paused after 2 failed runs."""
    root.mkdir(parents=True)
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "orchestrator": {"maxAttempts": 1},
                "insights": {"consecutiveFailureLimit": 2},
            }
        )
    )
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "shop",
                "description": "",
                "subtasks": [{"id": "cart", "description": "Fix the cart.", "verify": ["false"]}],
            }
        )
    )
    return root


def outcome_of(root: Path, run_id: str) -> str:
    """`reflexkit run --deterministic` once; how the subtask ended."""
    result = CliRunner().invoke(
        cli,
        ["run", "task.json", "--agent-command", "true", "--deterministic", "--run-id", run_id],
    )
    assert result.exit_code == 1, result.output + result.stderr
    log = root / ".reflexkit" / "runs" / f"{run_id}.jsonl"
    endings = [e["kind"] for e in map(orjson.loads, log.read_bytes().splitlines())]
    return next(k for k in ("exhausted", "stuck", "paused") if k in endings)


def resume(subtask: str) -> None:
    """`reflexkit resume SUBTASK`."""
    result = CliRunner().invoke(cli, ["resume", subtask])
    assert result.exit_code == 0, result.output + result.stderr


@pytest.mark.parametrize(
    "epoch",
    [
        None,  # stamped 2000-01-01, long before the resume
        str(int(time.time()) + 400 * 86_400),  # stamped ahead of the resume
    ],
    ids=["stamped-2000", "stamped-ahead"],  # the same ids in every xdist worker
)
def test_a_resumed_subtask_is_paused_again_after_new_failed_runs_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, epoch: str | None
) -> None:
    """Runs stamped by another clock than the resume's are ordered by position.

    Paused after 2 failed runs, attempted again after the resume, paused again after 2 new
    failed runs.
    """
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    if epoch is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    root = failing_project(tmp_path / "project")
    monkeypatch.chdir(root)
    assert [outcome_of(root, f"r{i}") for i in (1, 2, 3)] == ["exhausted", "exhausted", "paused"]
    resume("cart")
    assert outcome_of(root, "r4") == "exhausted"  # not paused again at once
    assert outcome_of(root, "r5") == "exhausted"
    assert outcome_of(root, "r6") == "paused"  # paused again, after 2 new failed runs
