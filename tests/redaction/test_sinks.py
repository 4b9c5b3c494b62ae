"""Planted secrets never reach a sink: stdout, memory, fixtures, run logs, the model's prompt.

Each test plants secrets of several formats in a real-looking failure and drives the real
path end to end (the CLI, real files, the real anthropic SDK against the fake Messages API,
real processes for `reflexkit run`), then searches every byte that came out.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from reflexkit import _serde
from reflexkit.cli import cli
from reflexkit.containers import build_application
from reflexkit.events import RunLog
from reflexkit.insights import JsonlLessons, PausedSubtasks
from reflexkit.insights._models import Lesson
from reflexkit.llm import Claude, RetryPolicy
from reflexkit.models import FailureContext, FailureType
from reflexkit.orchestrator._loop import Orchestrator
from reflexkit.orchestrator._subagents import ScriptedSubagent, SubagentResult
from reflexkit.orchestrator._verify import Verifier
from reflexkit.redaction import MAX_OUTPUT_CHARS
from reflexkit.reports._judge import ClaudeJudge, JudgeInput
from reflexkit.tasks._config import (
    GeneratorBackend,
    LoadedProject,
    OrchestratorConfig,
    ProjectConfig,
    ReflexionConfig,
)
from reflexkit.tasks._task import Subtask, Task
from reflexkit.testing.fake_messages_api import FakeMessagesApi
from reflexkit.testing.memory_contract import make_reflection

# Fake values in real formats, assembled so no scanner mistakes this file for a leak.
GITHUB = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
SLACK_APP = "xapp-1-A0FAKE12345-1234567890123-" + "0a1b2c3d" * 8
AWS_SECRET = "/" + "Fake0Secret1Access2Key3For4Tests5Only+" + "A"
URL_PASSWORD = "p4/ss+w@rd99"  # noqa: S105 -- a planted fake
LETTERS_ONLY = "correcthorsebatterystaple"
ENV_VALUE = "plainish-deploy-value-7781"
PEM_BODY = [
    f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:02d}Fake+Line" for i in range(30)
]
PEM = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *PEM_BODY, "-----END RSA PRIVATE KEY-----"])

SECRETS = [GITHUB, SLACK_APP, AWS_SECRET, URL_PASSWORD, LETTERS_ONLY, ENV_VALUE, *PEM_BODY]

OUTPUT = f"""============================= test session starts ==============================
collected 3 items

tests/test_deploy.py F..                                                   [100%]

=================================== FAILURES ===================================
_________________________________ test_upload __________________________________

    def test_upload():
>       client = Client(token="{GITHUB}")
E       RuntimeError: upload failed (secret={AWS_SECRET})
E       DATABASE_URL=postgresql://orders:{URL_PASSWORD}@db.internal:5432/orders
E       SLACK_APP_TOKEN={SLACK_APP}
E       DB_PASSWORD={LETTERS_ONLY}
E       deploy key {ENV_VALUE} rejected
{PEM}

tests/test_deploy.py:12: RuntimeError
=========================== short test summary info ============================
FAILED tests/test_deploy.py::test_upload - RuntimeError: upload failed
========================= 1 failed, 2 passed in 0.31s ==========================
"""

FAILURE = {
    "taskId": "deploy",
    "subtaskId": "upload",
    "attemptNumber": 1,
    "command": f"GITHUB_TOKEN={GITHUB} python -m pytest -q",
    "exitCode": 1,
    "errorOutput": OUTPUT,
    "description": f"Upload with the key {ENV_VALUE}",
}
REPLY = {
    "category": "root_cause",
    "analysis": "tests/test_deploy.py::test_upload: the upload is rejected.",
    "suggestion": f"Rotate the credential {ENV_VALUE} and read the upload error.",
    "actionItems": ["Read test_upload in tests/test_deploy.py"],
    "confidence": 0.7,
}


def assert_clean(*blobs: str | bytes) -> None:
    """No planted secret is in any of *blobs*."""
    for blob in blobs:
        data = blob.encode("utf-8") if isinstance(blob, str) else blob
        leaked = [secret for secret in SECRETS if secret.encode("utf-8") in data]
        assert not leaked, (leaked, data[max(data.find(leaked[0].encode()) - 300, 0) :][:400])


@pytest.fixture
def heuristic(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A heuristic project, with a secret-looking variable in the environment."""
    monkeypatch.setenv("DEPLOY_KEY_MATERIAL", ENV_VALUE)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})
    )
    return project_dir


def _all_files(root: Path) -> list[bytes]:
    """Every file reflexkit wrote under *root* (the project.json the test wrote aside)."""
    return [
        path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != "project.json"
    ]


def test_reflect_recent_and_memory_hold_no_secret(heuristic: Path) -> None:
    """`reflect` and `recent` print no secret, memory stores none, and the counts are there."""
    runner = CliRunner()
    shown = runner.invoke(cli, ["reflect"], input=json.dumps(FAILURE))
    assert shown.exit_code == 0, shown.stderr
    as_json = runner.invoke(cli, ["reflect", "--json"], input=json.dumps(FAILURE))
    assert as_json.exit_code == 0, as_json.stderr
    redactions = json.loads(as_json.stdout)["redactions"]
    assert redactions["private_key"] == 1
    assert redactions["url_password"] == 1
    assert redactions["env:DEPLOY_KEY_MATERIAL"] >= 1
    recent = runner.invoke(cli, ["recent", "upload"])
    recent_json = runner.invoke(cli, ["recent", "upload", "--format", "json"])
    assert "## Learning from Previous Failures" in recent.stdout
    assert_clean(
        shown.stdout,
        shown.stderr,
        as_json.stdout,
        recent.stdout,
        recent_json.stdout,
        *_all_files(heuristic / ".reflexkit"),
    )


@pytest.fixture
def live(live: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch) -> FakeMessagesApi:
    """The shared live project (tests/conftest.py), with a secret planted in the environment."""
    monkeypatch.setenv("DEPLOY_KEY_MATERIAL", ENV_VALUE)
    return live


def test_the_model_and_the_fixture_file_see_no_secret(
    live: FakeMessagesApi, project_dir: Path
) -> None:
    """The request Claude gets holds no secret; the recorded reply is redacted too."""
    fixtures = project_dir / ".reflexkit" / "fixtures" / "reflections.jsonl"
    live.reply(REPLY)
    result = CliRunner().invoke(
        cli,
        ["reflect", "--record-fixtures", str(fixtures), "--no-save"],
        input=json.dumps(FAILURE),
    )
    assert result.exit_code == 0, result.stderr
    (request,) = live.requests
    assert "test_upload" in request.body.decode()
    assert_clean(request.body, fixtures.read_bytes())
    assert "[REDACTED:env:DEPLOY_KEY_MATERIAL]" in fixtures.read_text()


AGENT = """import sys
print("agent: using token", {token!r})
print("-----BEGIN OPENSSH PRIVATE KEY-----")
print({body!r})
"""
CHECK = """import sys
print({output!r})
sys.exit(1)
"""


def test_a_run_writes_no_secret_to_its_log_memory_or_terminal(heuristic: Path) -> None:
    """`reflexkit run` with real processes printing secrets: nothing leaks anywhere."""
    (heuristic / "agent.py").write_text(AGENT.format(token=GITHUB, body=PEM_BODY[0]))
    (heuristic / "check.py").write_text(CHECK.format(output=OUTPUT))
    python = shlex.quote(sys.executable)
    (heuristic / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{python} check.py --token {GITHUB}"]},
                "orchestrator": {"maxAttempts": 2},
            }
        )
    )
    (heuristic / "task.json").write_text(
        json.dumps({"id": "deploy", "subtasks": [{"id": "upload", "description": "Upload."}]})
    )
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", f"{python} agent.py"])
    assert result.exit_code == 1, result.stdout + result.stderr
    (log,) = (heuristic / ".reflexkit" / "runs").glob("*.jsonl")
    assert b"verification_failed" in log.read_bytes()
    assert_clean(result.stdout, result.stderr, *_all_files(heuristic / ".reflexkit"))


def test_a_subagent_error_reaches_the_run_log_redacted(tmp_path: Path) -> None:
    """A crashed subagent's error message goes into the run log without its secret."""
    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=tmp_path))
    crash = SubagentResult(
        ok=False, output="", duration_ms=5, error=f"Claude Code ended with error: bad key {GITHUB}"
    )
    log_path = tmp_path / "runs" / "r.jsonl"
    with RunLog(log_path) as run_log:
        Orchestrator(
            service=app.reflection.service(),
            subagent=ScriptedSubagent({"s": [crash]}),
            verifier_for=lambda _s: Verifier([f"{shlex.quote(sys.executable)} -c pass"]),
            config=OrchestratorConfig(max_attempts=1),
            on_event=run_log.write,
        ).run(Task(id="t", subtasks=(Subtask(id="s", description="x"),)), workdir=tmp_path)
    app.shutdown_resources()
    text = log_path.read_text()
    assert "[REDACTED:github_token]" in text
    assert_clean(text, *_all_files(tmp_path))


def test_prepare_redacts_before_it_cuts(tmp_path: Path) -> None:
    """A huge output is redacted whole, then cut: a key across the cut leaves no line behind."""
    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    app = build_application(LoadedProject(config=config, root=tmp_path))
    service = app.reflection.service()
    filler = [f"build step {i}: compiling module_{i}.c" for i in range(40_000)]
    middle = len("\n".join(filler[:2000]))  # about where the head is cut
    assert middle < MAX_OUTPUT_CHARS
    output = "\n".join([*filler[:1800], PEM, *filler[1800:], "FAILED: 1 error"])
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, command="make", error_output=output
    )
    clean, counts, _ = service.prepare(failure)
    assert len(clean.error_output) <= MAX_OUTPUT_CHARS + 200
    assert counts == {"private_key": 1}
    assert "characters cut ..." in clean.error_output
    reflection = service.generate(failure)
    app.shutdown_resources()
    assert_clean(clean.error_output, repr(reflection))


CURL_PASSWORD = "Pw4-fake-" + "deploy77"
SELF_REPORTING_AGENT = """import json, pathlib
pathlib.Path(".reflexkit").mkdir(exist_ok=True)
pathlib.Path(".reflexkit/self-report.json").write_text(json.dumps({{
    "confidence": 0.4,
    "mostLikelyWrong": {{"surface": "data", "description": "I set token={token}"}},
    "knownNotInDiff": "the deploy key {env} is still in the environment",
}}))
print("done; pushed with", {token!r})
"""


def test_attempt_reports_hold_no_secret_of_the_check_or_the_self_report(heuristic: Path) -> None:
    """With reports on, the check's command line and the self-report are stored redacted.

    The check is a ``curl -u user:pw``-shaped command line; the agent's self-report names a
    token (#29).
    """
    (heuristic / "agent.py").write_text(SELF_REPORTING_AGENT.format(token=GITHUB, env=ENV_VALUE))
    (heuristic / "check.py").write_text(CHECK.format(output="FAILED: upload rejected"))
    python = shlex.quote(sys.executable)
    check = f"{python} check.py -u deploy:{CURL_PASSWORD} --token {GITHUB}"
    (heuristic / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [check]},
                "orchestrator": {"maxAttempts": 1},
                "reports": {"enabled": True},
            }
        )
    )
    (heuristic / "task.json").write_text(
        json.dumps({"id": "deploy", "subtasks": [{"id": "upload", "description": "Upload."}]})
    )
    result = CliRunner().invoke(cli, ["run", "task.json", "--agent-command", f"{python} agent.py"])
    assert result.exit_code == 1, result.stdout + result.stderr
    (report,) = (heuristic / ".reflexkit" / "reports").rglob("*.json")
    text = report.read_text()
    assert "[REDACTED:" in text
    assert "I set token=" in text  # the self-report was read, not dropped
    for planted in (CURL_PASSWORD, GITHUB, ENV_VALUE):
        assert planted not in text, planted
    assert_clean(result.stdout, result.stderr, *_all_files(heuristic / ".reflexkit"))


def test_the_llm_judge_sends_no_secret_of_the_diff_or_the_message(
    fake_messages_api: FakeMessagesApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's request, through the real SDK, holds the diff and the message redacted (#29)."""
    monkeypatch.setenv("DEPLOY_KEY_MATERIAL", ENV_VALUE)
    fake_messages_api.reply(
        {"complete": True, "severity": "NONE", "feedback": "ok", "missing": [], "nextActions": []}
    )
    attempt = JudgeInput(
        subtask="Upload the build.",
        diff=f"+GITHUB_TOKEN = '{GITHUB}'\n+# deploy with sshpass -p '{CURL_PASSWORD}' ssh x\n",
        last_message=f"Done. I used curl -u deploy:{CURL_PASSWORD} and the key {ENV_VALUE}.",
        checks_passed=True,
    )
    claude = Claude(
        base_url=fake_messages_api.url, api_key="sk-test", retry=RetryPolicy.no_wait(attempts=1)
    )
    judge = ClaudeJudge(claude)
    judge.judge(attempt)
    judge.close()
    (request,) = fake_messages_api.requests
    body = json.dumps(request.json)
    assert "[REDACTED:" in body
    assert "Upload the build." in body
    for planted in (GITHUB, CURL_PASSWORD, ENV_VALUE):
        assert planted not in body, planted


BIDI = "safe\u202e" + "exe.txt"


def test_lessons_and_insights_print_no_bidi_override(project_dir: Path) -> None:
    """`reflexkit lessons` and `reflexkit insights` show U+202E, never print it raw (#29)."""
    state = project_dir / ".reflexkit"
    JsonlLessons(state / "lessons.jsonl").add(
        Lesson(
            id="l1",
            tool="ruff",
            failure_type=FailureType.LINT_ERROR,
            fingerprint="f" * 16,
            suggestion=f"Run ruff on {BIDI} first",
            subtask_id="cart",
        )
    )
    PausedSubtasks(state / "paused.jsonl").pause("shop", "cart", description="d", reason=BIDI)
    for command in (["lessons"], ["insights"]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, result.stdout + result.stderr
        assert "\u202e" not in result.stdout + result.stderr, command
        assert "U+202E" in result.stdout, (command, result.stdout)


HOSTILE_RECORD = (
    f"rename \u202egnp.exe \u2066hidden\u2069 \x9b31m red \x1b[2J clear \x1b]52;c;eA==\x07 "
    f"\U000e0041 token={GITHUB}"
)
RAW_TERMINAL = ("\u202e", "\u2066", "\u2069", "\x9b", "\x1b", "\x07", "\U000e0041")


@pytest.mark.slow
def test_records_an_agent_wrote_reach_the_terminal_escaped_and_redacted(project_dir: Path) -> None:
    """A line planted in memory prints neither raw controls nor its secret, in text or JSON.

    The memory file is in the project, where the agent can write (or an older version wrote
    it); ``recent`` and ``stats`` print what it holds. JSON output stays valid and reads
    back as the record was, but for the secret (#29's terminal class).
    """
    memory = project_dir / ".reflexkit" / "memory" / "reflections.jsonl"
    memory.parent.mkdir(parents=True)
    record = _serde.unstructure(make_reflection("cart", analysis=HOSTILE_RECORD))
    record["suggestion"] = HOSTILE_RECORD
    memory.write_bytes(orjson.dumps(record) + b"\n")
    for args in (
        ["recent", "cart", "--format", "json"],
        ["recent", "cart"],
        ["--json", "stats"],
        ["stats"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "reflexkit", *args],
            cwd=project_dir,
            capture_output=True,
            check=False,
            timeout=60,
        )
        out = done.stdout.decode() + done.stderr.decode()
        assert done.returncode == 0, (args, out)
        assert GITHUB not in out, args  # read back, whatever wrote it: through the gate again
        assert not [c for c in RAW_TERMINAL if c in out], (args, out)
        if "json" in args or "--json" in args:
            data = json.loads(done.stdout)
            if args[0] == "recent":
                shown = data[0]["analysis"]  # escaped, so it reads back as written
                assert "\u202egnp.exe \u2066hidden\u2069" in shown, shown
                assert "token=[REDACTED:github_token]" in shown, shown


def test_log_lines_on_stderr_pass_the_gate(tmp_path: Path) -> None:
    """A warning quoting a token and a bidi override prints neither (the log handler's gate)."""
    code = (
        "import logging\n"
        "from reflexkit import _log\n"
        "_log.configure(debug=False)\n"
        "logging.getLogger('reflexkit.x').warning('tool said %s', "
        f"{f'token={GITHUB} ok{BIDI}'!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, check=False, timeout=60
    )
    err = done.stderr.decode()
    assert "reflexkit: WARNING: tool said token=[REDACTED:github_token]" in err, err
    assert GITHUB not in err
    assert "\u202e" not in err
    assert "<U+202E>" in err


def test_error_lines_quote_no_secret(project_dir: Path) -> None:
    """A key pasted into the wrong field of project.json: the error names it, redacted."""
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": GITHUB}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "stats"],
        cwd=project_dir,
        capture_output=True,
        check=False,
        timeout=60,
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "$.reflexion.backend: expected one of" in err, err
    assert GITHUB not in err
    assert "[REDACTED:github_token]" in err
