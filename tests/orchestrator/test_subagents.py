"""Subagents: a real command line, and the scripted one of the tests and the demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reflexkit.exceptions import SetupError
from reflexkit.orchestrator._recipes import RECIPES
from reflexkit.orchestrator._subagents import (
    AgentReport,
    CommandSubagent,
    ScriptedSubagent,
    Subagent,
    SubagentRequest,
    SubagentResult,
    read_agent_result,
)

# A tiny "agent": writes the prompt it got into answer.txt and says so.
ECHO_AGENT = (
    "import sys\n"
    "text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()\n"
    "open('answer.txt', 'w').write(text)\n"
    "print('wrote', len(text))\n"
)


def request(tmp_path: Path, *, attempt: int = 1, timeout_s: float = 10) -> SubagentRequest:
    """Return a request for subtask "s" in tmp_path."""
    return SubagentRequest(
        subtask_id="s",
        attempt=attempt,
        prompt="Fix it.\nPlease.",
        workdir=tmp_path,
        timeout_s=timeout_s,
    )


def test_both_are_subagents() -> None:
    """They implement the protocol."""
    assert isinstance(CommandSubagent(["true"]), Subagent)
    assert isinstance(ScriptedSubagent({}), Subagent)


def test_command_prompt_on_stdin(tmp_path: Path) -> None:
    """Without {prompt_file} the prompt goes to stdin; it runs in the workdir."""
    result = CommandSubagent([sys.executable, "-c", ECHO_AGENT]).run(request(tmp_path))
    assert result.ok, result.error
    assert result.error is None
    assert result.output.strip() == "wrote 15"
    assert (tmp_path / "answer.txt").read_text(encoding="utf-8") == "Fix it.\nPlease."


def test_command_prompt_in_a_file(tmp_path: Path) -> None:
    """{prompt_file} is replaced by a file holding the prompt, outside the workdir."""
    agent = CommandSubagent([sys.executable, "-c", ECHO_AGENT, "{prompt_file}"])
    result = agent.run(request(tmp_path))
    assert result.ok
    assert (tmp_path / "answer.txt").read_text(encoding="utf-8") == "Fix it.\nPlease."
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answer.txt"]


def test_command_failure_is_not_ok(tmp_path: Path) -> None:
    """A non-zero exit is a failed attempt, with its output."""
    code = "import sys; print('gave up'); sys.exit(2)"
    result = CommandSubagent([sys.executable, "-c", code]).run(request(tmp_path))
    assert not result.ok
    assert result.error is not None
    assert result.error.endswith("exited with status 2")
    assert "gave up" in result.output


def test_command_timeout(tmp_path: Path) -> None:
    """A hanging agent is killed at the request's time limit."""
    code = "import time; time.sleep(30)"
    result = CommandSubagent([sys.executable, "-c", code]).run(request(tmp_path, timeout_s=0.3))
    assert not result.ok
    assert result.error == "timed out after 0.3 s and was killed"
    assert result.duration_ms < 5_000


def test_command_missing_binary(tmp_path: Path) -> None:
    """A missing agent binary is a setup error, found by preflight and by run alike."""
    agent = CommandSubagent(["no-such-agent-xyz", "{prompt_file}"])
    with pytest.raises(SetupError, match="no-such-agent-xyz was not found"):
        agent.preflight()
    with pytest.raises(SetupError, match="command not found: no-such-agent-xyz"):
        agent.run(request(tmp_path))


def test_preflight_passes_an_installed_program() -> None:
    """An agent program on PATH passes the preflight."""
    CommandSubagent([sys.executable, "-c", "pass"]).preflight()
    CommandSubagent(["python3", "-c", "pass"]).preflight()


def test_command_not_executable(tmp_path: Path) -> None:
    """A file that exists but can't be executed is a setup error too."""
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    with pytest.raises(SetupError, match="can't be executed"):
        CommandSubagent([str(script)]).preflight()


def test_prompt_file_path_holds_nothing_from_the_task(tmp_path: Path) -> None:
    """A hostile subtask id never reaches the prompt file's path or a shell.

    The agent is a shell that interpolates the path unquoted, the worst case an agent
    command can be: still no file named by the id is created anywhere.
    """
    hostile = SubagentRequest(
        subtask_id="a;touch PWNED;../../x",
        attempt=1,
        prompt="Fix it.",
        workdir=tmp_path,
        timeout_s=10,
    )
    agent = CommandSubagent(["sh", "-c", "cat {prompt_file} && echo {prompt_file}"])
    result = agent.run(hostile)
    assert result.ok, result.error
    assert result.output.splitlines()[-1].endswith("/prompt.md")
    assert not (tmp_path / "PWNED").exists()
    assert list(tmp_path.iterdir()) == []


def test_scripted_applies_the_nth_edit(tmp_path: Path) -> None:
    """Attempt N applies the N-th entry; past the end nothing changes."""
    crash = SubagentResult(ok=False, output="", duration_ms=0, error="crashed")
    agent = ScriptedSubagent({"s": [{"a.txt": "one", "sub/b.txt": "two"}, {"a.txt": None}, crash]})
    assert agent.run(request(tmp_path, attempt=1)).ok
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one"
    assert (tmp_path / "sub" / "b.txt").read_text(encoding="utf-8") == "two"
    assert agent.run(request(tmp_path, attempt=2)).ok
    assert not (tmp_path / "a.txt").exists()
    assert agent.run(request(tmp_path, attempt=3)) is crash
    fourth = agent.run(request(tmp_path, attempt=4))
    assert fourth.ok
    assert fourth.output == "scripted: no edits for this attempt"
    assert agent.prompts == ["Fix it.\nPlease."] * 4
    assert [r.attempt for r in agent.requests] == [1, 2, 3, 4]


def test_scripted_refuses_paths_outside_the_workdir(tmp_path: Path) -> None:
    """An edit escaping the workdir fails the attempt instead of writing there."""
    work = tmp_path / "work"
    work.mkdir()
    result = ScriptedSubagent({"s": [{"../evil.txt": "x"}]}).run(request(work))
    assert not result.ok
    assert result.error is not None
    assert "outside the working folder" in result.error
    assert not (tmp_path / "evil.txt").exists()


def test_scripted_edits_replace_a_fifo_and_never_write_through_a_link(tmp_path: Path) -> None:
    """A FIFO at an edit's path is replaced whole (the atomic writer), never waited on."""
    import os  # noqa: PLC0415

    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    outside.write_text("keep\n")
    os.mkfifo(work / "fifo.txt")
    (work / "link.txt").symlink_to(outside)
    assert ScriptedSubagent({"s": [{"fifo.txt": "one\n"}]}).run(request(work)).ok
    assert (work / "fifo.txt").read_text() == "one\n"
    assert not ScriptedSubagent({"s": [{"link.txt": "two\n"}]}).run(request(work)).ok
    assert outside.read_text() == "keep\n"


# An agent that tells what reflexkit gave it: its environment, its arguments, its stdin.
TELLING_AGENT = """import json, os, sys
seen = {k: v for k, v in os.environ.items() if k.startswith("REFLEXKIT_")}
seen["argv"] = sys.argv[1:]
seen["stdin"] = sys.stdin.read()
seen["promptFileText"] = open(os.environ["REFLEXKIT_PROMPT_FILE"]).read()
open("seen.json", "w").write(json.dumps(seen))
"""


def run_request(tmp_path: Path) -> SubagentRequest:
    """A request of run r1, task t, subtask s, attempt 2."""
    return SubagentRequest(
        subtask_id="s",
        attempt=2,
        prompt="Fix it.\nPlease.",
        workdir=tmp_path,
        timeout_s=10,
        run_id="r1",
        task_id="t",
    )


def seen(tmp_path: Path) -> dict[str, object]:
    """What the telling agent saw."""
    data: dict[str, object] = json.loads((tmp_path / "seen.json").read_text(encoding="utf-8"))
    return data


def test_the_agent_is_told_its_run_task_subtask_attempt_and_prompt_file(tmp_path: Path) -> None:
    """REFLEXKIT_* name the run, task, subtask and attempt; the prompt file is always there."""
    agent = CommandSubagent([sys.executable, "-c", TELLING_AGENT])
    result = agent.run(run_request(tmp_path))
    assert result.ok, result.error
    told = seen(tmp_path)
    assert (
        told["REFLEXKIT_RUN_ID"],
        told["REFLEXKIT_TASK_ID"],
        told["REFLEXKIT_SUBTASK_ID"],
        told["REFLEXKIT_ATTEMPT"],
    ) == ("r1", "t", "s", "2")
    assert told["stdin"] == told["promptFileText"] == "Fix it.\nPlease."
    assert Path(str(told["REFLEXKIT_PROMPT_FILE"])).is_absolute()
    assert not Path(str(told["REFLEXKIT_PROMPT_FILE"])).exists()  # removed after the attempt


def test_prompt_placeholder_passes_the_prompt_as_one_argument(tmp_path: Path) -> None:
    """{prompt} is the prompt itself, one argument, spaces and newlines kept; stdin is empty."""
    agent = CommandSubagent([sys.executable, "-c", TELLING_AGENT, "-t", "{prompt}", "--x={prompt}"])
    assert agent.run(run_request(tmp_path)).ok
    told = seen(tmp_path)
    assert told["argv"] == ["-t", "Fix it.\nPlease.", "--x=Fix it.\nPlease."]
    assert told["stdin"] == ""


def test_prompt_placeholder_in_a_shell_script_is_refused() -> None:
    """A prompt pasted into `sh -c` would be run as shell code: it must be its own argument."""
    with pytest.raises(ValueError, match="own argument"):
        CommandSubagent(["bash", "-c", "agent '{prompt}'"])
    CommandSubagent(["bash", "-c", 'agent "$1"', "agent", "{prompt}"])  # the safe form


def test_a_prompt_too_long_for_an_argument_is_a_setup_error(tmp_path: Path) -> None:
    """Linux refuses an argument of 128 KiB: the error says to use {prompt_file}."""
    agent = CommandSubagent([sys.executable, "-c", "pass", "{prompt}"])
    big = SubagentRequest(
        subtask_id="s", attempt=1, prompt="x" * 200_000, workdir=tmp_path, timeout_s=10
    )
    with pytest.raises(SetupError, match=r"too long for one argument.*\{prompt_file\}"):
        agent.run(big)


def test_exit_78_is_the_agent_saying_setup_error(tmp_path: Path) -> None:
    """Exit 78 stops the run as a setup error, with the agent's reason from its result file."""
    code = (
        "import json, os, sys\n"
        "print('cannot reach http://127.0.0.1:9/v1')\n"
        "open(os.environ['REFLEXKIT_RESULT_FILE'], 'w').write("
        "json.dumps({'setupError': 'no model configured: set OPENAI_BASE_URL'}))\n"
        "sys.exit(78)\n"
    )
    with pytest.raises(SetupError, match="says its setup can't work: no model configured"):
        CommandSubagent([sys.executable, "-c", code]).run(request(tmp_path))
    bare = "print('no API key'); raise SystemExit(78)"
    with pytest.raises(SetupError, match="no API key"):
        CommandSubagent([sys.executable, "-c", bare]).run(request(tmp_path))


def test_the_result_file_reports_cost_and_turns(tmp_path: Path) -> None:
    """The cost and turns of the result file reach the result; bad values are dropped."""
    code = (
        "import json, os\n"
        "open(os.environ['REFLEXKIT_RESULT_FILE'], 'w').write("
        "json.dumps({'costUsd': 0.25, 'turns': 7}))\n"
    )
    result = CommandSubagent([sys.executable, "-c", code]).run(request(tmp_path))
    assert (result.ok, result.cost_usd, result.turns) == (True, 0.25, 7)
    assert read_agent_result(tmp_path / "none.json") == AgentReport()
    bad = tmp_path / "bad.json"
    bad.write_text('{"costUsd": "lots", "turns": true, "setupError": 3}', encoding="utf-8")
    report = read_agent_result(bad)
    assert (report.cost_usd, report.turns, report.setup_error) == (None, None, None)
    assert len(report.problems) == 3
    bad.write_text("[1]", encoding="utf-8")
    assert read_agent_result(bad).problems == ("result file: expected a JSON object",)


def test_a_fifo_as_result_file_never_blocks(tmp_path: Path) -> None:
    """An agent that leaves a FIFO at its result file costs nothing: the reader skips it."""
    code = "import os; os.mkfifo(os.environ['REFLEXKIT_RESULT_FILE'])"
    result = CommandSubagent([sys.executable, "-c", code]).run(request(tmp_path))
    assert result.ok
    assert (result.cost_usd, result.turns) == (None, None)


# What the real agents print, retrying, when their model can't be reached (a closed port).
UNREACHED = {
    "codex": "ERROR: Reconnecting... waiting for network",
    "aider": (
        "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error."
    ),
    "mini-swe-agent": "Retrying <unknown> in 4 seconds as it raised litellm.APIConnectionError",
}


@pytest.mark.parametrize(("recipe", "said"), UNREACHED.items())
def test_an_agent_that_cannot_reach_its_model_is_a_setup_error(
    tmp_path: Path, recipe: str, said: str
) -> None:
    """Retrying an unreachable model until the time runs out teaches no lesson: setup error."""
    code = f"import sys, time\nprint('working')\nprint({said!r}, flush=True)\ntime.sleep(30)\n"
    agent = CommandSubagent([sys.executable, "-c", code], setup_errors=RECIPES[recipe].setup_errors)
    with pytest.raises(SetupError, match=r"can't reach or use its model: .*(network|Connection)"):
        agent.run(request(tmp_path, timeout_s=1))


def test_setup_words_in_a_finished_attempt_are_only_output(tmp_path: Path) -> None:
    """An agent that finishes (exit 0) having printed such a line, from a test, is not stopped."""
    code = "print('litellm.APIConnectionError in a test fixture')"
    agent = CommandSubagent(
        [sys.executable, "-c", code], setup_errors=RECIPES["aider"].setup_errors
    )
    assert agent.run(request(tmp_path)).ok
