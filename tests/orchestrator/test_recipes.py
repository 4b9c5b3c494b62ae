"""Every agent recipe, run by `reflexkit run --agent NAME` with its real agent CLI (#27).

Each agent talks to a fake model on 127.0.0.1 (the OpenAI-compatible fake, or the fake
Messages API for `claude -p`) that writes the right fix only when the lesson of attempt 1 is
in its prompt: attempt 1 fails the project's real check, attempt 2 passes. With a model that
never answers, every attempt times out, three the same way end `stuck` for every agent, and
nothing the agent started is left running; neither after Ctrl-C.

A test is marked ``agent`` and skipped, saying why, on a machine without its agent (CI
installs codex; Claude Code's CLI comes with claude-agent-sdk, and REFLEXKIT_REQUIRE_AGENTS
makes those two fail instead). A folder of agents outside PATH can be named in
REFLEXKIT_TEST_AGENTS_PATH.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from reflexkit.testing import FakeMessagesApi, FakeOpenAIApi, RecordedRequest, ToolCall, Turn
from reflexkit.testing._fake_server import FakeApi, Hang
from reflexkit.testing.fake_messages_api import message_json, tool_use

LESSON = "Learning from Previous Failures"
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a * b\n"
TESTS = """import unittest
from calc import add


class AddTests(unittest.TestCase):
    def test_add_positive(self):
        self.assertEqual(add(2, 3), 5)
"""
DONE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's word for "finished"

BUNDLED_CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled"


def _agents_path() -> str:
    extra = os.environ.get("REFLEXKIT_TEST_AGENTS_PATH", "")
    return os.pathsep.join(p for p in (extra, str(BUNDLED_CLAUDE), os.environ["PATH"]) if p)


PROGRAMS = {
    "aider": "aider",
    "codex": "codex",
    "mini-swe-agent": "mini",
    "opencode": "opencode",
    "claude-cli": "claude",
}


def _need(recipe: str) -> pytest.MarkDecorator:
    program = PROGRAMS[recipe]
    found = shutil.which(program, path=_agents_path())
    required = recipe in os.environ.get("REFLEXKIT_REQUIRE_AGENTS", "").split(",")
    return pytest.mark.skipif(
        found is None and not required,
        reason=f"{program} ({recipe}) is not installed here; see docs/agents.md to install it",
    )


ALL = [pytest.param(name, marks=[_need(name), pytest.mark.agent]) for name in PROGRAMS]


# --- the fake models ----------------------------------------------------------------------------


def _fixes(request: RecordedRequest) -> bool:
    return LESSON in request.text


def _tool_result_in(request: RecordedRequest) -> bool:
    """The agent sent back what a tool call did: its turn is over."""
    body = request.json if isinstance(request.json, dict) else {}
    messages = body.get("messages") or []
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return (
        any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
        or any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        or any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for m in messages
            if isinstance(m, dict) and isinstance(m.get("content"), list)
            for block in m["content"]
        )
    )


def _write(body: str) -> str:
    return f"printf '{body.replace(chr(10), chr(92) + 'n')}' > calc.py"


def _offers(request: RecordedRequest) -> bool:
    body = request.json if isinstance(request.json, dict) else {}
    return bool(body.get("tools"))


def _shell_model(api: FakeOpenAIApi, tool: str, arg: str, *, finish: Turn) -> None:
    """A model that writes calc.py through its shell tool, then says it is done."""

    def call(body: str) -> Turn:
        return Turn(calls=[ToolCall(tool, {arg: _write(body), "description": "Write calc.py"})])

    api.when(lambda r: _offers(r) and _tool_result_in(r), finish)
    api.when(lambda r: _offers(r) and _fixes(r), call(FIXED))
    api.when(_offers, call(WRONG))
    api.when(lambda _r: True, Turn(text="Fix calc.py"))  # a title, a summary


def _whole_file(body: str) -> Turn:
    return Turn(text=f"calc.py\n```python\n{body}```\n")


def _openai_model(api: FakeOpenAIApi, recipe: str) -> None:
    if recipe == "aider":  # edit format "whole": the file in a fenced block
        api.when(_fixes, _whole_file(FIXED))
        api.when(lambda _r: True, _whole_file(WRONG))
    elif recipe == "codex":
        _shell_model(api, "exec_command", "cmd", finish=Turn(text="I fixed calc.py."))
    elif recipe == "opencode":
        _shell_model(api, "bash", "command", finish=Turn(text="I fixed calc.py."))
    else:  # mini-swe-agent ends when a command prints its word for "finished"
        done = Turn(calls=[ToolCall("bash", {"command": f"echo {DONE}"})])
        _shell_model(api, "bash", "command", finish=done)


def _claude_model(api: FakeMessagesApi, calc: Path) -> None:
    def write(body: str) -> dict[str, Any]:
        return tool_use("Write", {"file_path": str(calc), "content": body})

    api.when(lambda r: _offers(r) and _tool_result_in(r), message_json([_text("Done.")]))
    api.when(lambda r: _offers(r) and _fixes(r), write(FIXED))
    api.when(_offers, write(WRONG))
    api.when(lambda _r: True, message_json([_text("Fix calc.py")]))


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


# --- the project and the run --------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with a bug, its test, a task, and checks that run the test."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TESTS)
    (root / "task.json").write_text(
        json.dumps(
            {
                "id": "calc",
                "description": "Fix the calculator in calc.py.",
                "subtasks": [{"id": "fix-add", "description": "add() in calc.py must add."}],
            }
        )
    )
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "verification": {"commands": [f"{shlex.quote(sys.executable)} -m unittest -q"]},
            }
        )
    )
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start")
    return root


@pytest.fixture(scope="module")
def agent_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: opencode installs its provider package there once."""
    return tmp_path_factory.mktemp("agent-cache")


def _environment(recipe: str, api: FakeApi, home: Path, cache: Path, token: str) -> dict[str, str]:
    """The agent's own variables pointing it at the fake model; nothing of the real world."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "REFLEXKIT_", "CLAUDE", "AIDER_", "MSWEA_"))
    }
    base = api.url + "/v1"
    env.update(
        PATH=_agents_path(),
        HOME=str(home),
        XDG_CACHE_HOME=str(cache),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        RECIPE_TEST_TOKEN=token,
        OPENAI_API_KEY="sk-test-not-real",
        OPENAI_API_BASE=base,
        OPENAI_BASE_URL=base,
    )
    if recipe == "aider":
        env["AIDER_MODEL"] = "openai/fake-model"
    elif recipe == "mini-swe-agent":
        env["MSWEA_MODEL_NAME"] = "openai/fake-model"
        env["MSWEA_GLOBAL_CONFIG_DIR"] = str(home / "mini")
    elif recipe == "codex":
        env["CODEX_HOME"] = str(home / "codex")
        (home / "codex").mkdir()
        # codex won't put its sandbox helpers under the temporary folder, and CODEX_HOME is
        # under pytest's: with bubblewrap installed, every command then failed
        # ("bwrap: execvp codex-linux-sandbox"). A temporary folder of its own avoids that.
        env["TMPDIR"] = str(home / "tmp")
        (home / "tmp").mkdir()
        (home / "codex" / "config.toml").write_text(
            'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{base}"\nenv_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
        )
    elif recipe == "opencode":
        config = home / "opencode.json"
        config.write_text(
            json.dumps(
                {
                    "provider": {
                        "fake": {
                            "npm": "@ai-sdk/openai-compatible",
                            "name": "fake",
                            "options": {"baseURL": base, "apiKey": "sk-test-not-real"},
                            "models": {"fake-model": {"name": "fake"}},
                        }
                    },
                    "model": "fake/fake-model",
                    "autoupdate": False,
                    "share": "disabled",
                }
            )
        )
        env["OPENCODE_CONFIG"] = str(config)
    elif recipe == "claude-cli":
        env.update(
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-ant-test-not-real",
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
        )
    return env


AGENT_ARGS = {
    "aider": ["--agent-arg", "--edit-format", "--agent-arg", "whole", "--agent-arg", "calc.py"]
}


@pytest.fixture
def model() -> Iterator[Callable[[str], FakeApi]]:
    """Start the fake API a recipe talks to; stopped after the test."""
    started: list[FakeApi] = []

    def start(recipe: str) -> FakeApi:
        api: FakeApi = FakeMessagesApi() if recipe == "claude-cli" else FakeOpenAIApi()
        started.append(api.start())
        return api

    yield start
    for api in started:
        api.stop()


def _command(recipe: str, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "reflexkit",
        "run",
        "task.json",
        "--agent",
        recipe,
        *AGENT_ARGS.get(recipe, []),
        *options,
    ]


def _leftovers(token: str, project: Path) -> list[str]:
    """Processes still running that carry the run's token or work in the project."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cwd = str((entry / "cwd").readlink())
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state = (entry / "stat").read_text(errors="replace").rsplit(")", 1)[-1].split()[0]
        if state == "Z":
            continue
        if f"RECIPE_TEST_TOKEN={token}".encode() in environ or cwd.startswith(str(project)):
            found.append(f"{entry.name}: {cmdline[:120]}")
    return found


def _no_leftovers(token: str, project: Path) -> None:
    deadline = time.monotonic() + 10
    left = _leftovers(token, project)
    while left and time.monotonic() < deadline:  # a kill is sent; the kernel reaps
        time.sleep(0.2)
        left = _leftovers(token, project)
    assert not left, left


def _events(project: Path) -> list[dict[str, Any]]:
    (log,) = (project / ".reflexkit" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


# --- the tests ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ALL)
def test_the_agent_fixes_the_bug_once_the_lesson_is_in_its_prompt(
    recipe: str,
    project: Path,
    model: Callable[[str], FakeApi],
    agent_cache: Path,
    tmp_path: Path,
) -> None:
    """Attempt 1 fails the real check; attempt 2 carries the lesson and passes."""
    api = model(recipe)
    if isinstance(api, FakeOpenAIApi):
        _openai_model(api, recipe)
    else:
        assert isinstance(api, FakeMessagesApi)
        _claude_model(api, project / "calc.py")
    token = uuid.uuid4().hex
    env = _environment(recipe, api, tmp_path / "home", agent_cache, token)
    done = subprocess.run(
        _command(recipe, "--attempt-timeout", "240"),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    outputs = [e["data"].get("agentOutput") for e in _events(project) if "data" in e]
    assert done.returncode == 0, [o for o in outputs if o]
    assert "[fix-add] attempt 1: verification failed" in done.stdout
    assert "[fix-add] attempt 2: passed" in done.stdout
    assert (project / "calc.py").read_text() == FIXED
    assert any(LESSON in r.text for r in api.requests)
    started = [e for e in _events(project) if e["kind"] == "attempt_started"]
    assert [e["attempt"] for e in started] == [1, 2]
    _no_leftovers(token, project)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ALL)
def test_a_model_that_never_answers_ends_stuck_and_leaves_nothing(
    recipe: str,
    project: Path,
    model: Callable[[str], FakeApi],
    agent_cache: Path,
    tmp_path: Path,
) -> None:
    """Three time-outs the same way end `stuck` for any agent; its processes are all gone."""
    api = model(recipe)
    api.when(lambda _r: True, Hang(120))
    token = uuid.uuid4().hex
    env = _environment(recipe, api, tmp_path / "home", agent_cache, token)
    done = subprocess.run(
        _command(recipe, "--attempt-timeout", "4", "--max-attempts", "3"),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-4000:]
    endings = [e["kind"] for e in _events(project) if e["kind"] in {"stuck", "exhausted"}]
    assert endings == ["stuck"], done.stdout[-4000:]
    _no_leftovers(token, project)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ALL)
def test_ctrl_c_stops_the_run_and_leaves_nothing(
    recipe: str,
    project: Path,
    model: Callable[[str], FakeApi],
    agent_cache: Path,
    tmp_path: Path,
) -> None:
    """SIGINT while the agent waits on its model: exit 130, every agent process gone."""
    api = model(recipe)
    api.when(lambda _r: True, Hang(120))
    token = uuid.uuid4().hex
    env = _environment(recipe, api, tmp_path / "home", agent_cache, token)
    with subprocess.Popen(
        _command(recipe, "--attempt-timeout", "240"),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as run:
        deadline = time.monotonic() + 240
        while not api.requests and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert api.requests, "the agent never asked its model"
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGINT, out[-3000:] + err[-3000:]
    assert "interrupted" in err
    _no_leftovers(token, project)


class _Closed:
    """A base URL where nothing listens: the model can't be reached."""

    def __init__(self) -> None:
        with FakeOpenAIApi() as api:
            self.url = api.url  # stopped on leaving: the port refuses connections


# aider gives up on an unreachable model and exits 0, its words printed: a clean exit's output
# is not read for them (a test's output could hold them), so aider's attempts time out.
WITH_SETUP_WORDS = [p for p in ALL if p.values[0] in {"codex", "mini-swe-agent"}]


@pytest.mark.parametrize("recipe", WITH_SETUP_WORDS)
def test_an_unreachable_model_is_a_setup_error_not_a_lesson(
    recipe: str, project: Path, agent_cache: Path, tmp_path: Path
) -> None:
    """The agent retries its model until the attempt's time is up: exit 2, one line, no lesson."""
    token = uuid.uuid4().hex
    env = _environment(recipe, _Closed(), tmp_path / "home", agent_cache, token)  # type: ignore[arg-type]
    done = subprocess.run(
        # LiteLLM's client retries before aider or mini-swe-agent print its error.
        _command(recipe, "--attempt-timeout", "20" if recipe == "codex" else "120"),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert "can't reach or use its model" in done.stderr
    assert not (project / ".reflexkit" / "memory" / "reflections.jsonl").exists()
    started = [e for e in _events(project) if e["kind"] == "attempt_started"]
    assert len(started) == 1
    _no_leftovers(token, project)
