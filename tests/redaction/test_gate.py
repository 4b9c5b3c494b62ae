"""The outbound gate and its sink registry: every way out redacts and neutralises.

The registry (:data:`reflexkit.redaction._gate.SINKS`) is walked: each sink's gate is given
planted secrets and hostile text, and each registered boundary must call the gate. A scan of
the source finds every function that writes a record, a file line or a model request; each is
a registered boundary or is listed below with the reason it is not one, so a new way out that
skips the gate fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from reflexkit.redaction._gate import SINKS, Sink, outbound, outbound_data

SRC = Path(__file__).resolve().parents[2] / "src" / "reflexkit"

GITHUB = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"
CURL = "curl -u deploy:" + "Pw4-fake-deploy"
SSHPASS = "sshpass -p '" + "Hq3#Zt8!Lm2" + "' ssh deploy@host"
PLANTED = {
    GITHUB: f"token={GITHUB}",
    "Pw4-fake-deploy": f"{CURL} https://ci.example.com",
    "Hq3#Zt8!Lm2": SSHPASS,
}
HOSTILE = "ok\u202e txt.exe\u202c \x1b[2J\x1b]52;c;eA==\x07 \u2066hidden\u2069 \U000e0041"
RAW_CONTROLS = ("\u202e", "\u2066", "\x1b", "\x07", "\U000e0041")

WRITERS = ("LineWriter", "atomic_write", "append_records", "create", "write_text", "write_bytes")
"""The calls that put text outside the process: a JSONL line, a whole file, a record of the
insights store, a Messages API request, a file written by ``pathlib``."""
TERMINAL_WRITERS = ("echo", "secho", "print", "pprint")
"""The calls that write to a terminal: ``click.echo``, ``print``, a rich ``console.print``;
``sys.stdout.write`` and ``sys.stderr.write`` (any ``write`` on a standard stream) too."""

NOT_SINKS = {
    "reflexkit.insights._store:FindingLog.add": "writes through append_records, gated",
    "reflexkit.insights._store:PausedSubtasks.pause": "writes through append_records, gated",
    "reflexkit.insights._store:PausedSubtasks.resume": "writes through append_records, gated",
    "reflexkit.insights._lessons:JsonlLessons._store": "writes through append_records, gated",
    "reflexkit.events:RunLog.__init__": "opens the writer; RunLog.write gates",
    "reflexkit.reflection._fixture:FixtureRecorder._append": "called by generate, which gates",
    "reflexkit.llm._client:_request": "called by Claude.send, which gates every request",
    "reflexkit.orchestrator._subagents:ScriptedSubagent.run": "the scripted agent's own edits",
    "reflexkit.orchestrator._subagents:CommandSubagent.run": (
        "the prompt file: SubagentRequest.prompt passes the gate in its converter"
    ),
    "reflexkit.memory._postgres:PostgresMemory._replay": "empties the spool: writes no text",
    "reflexkit.memory._postgres:_set_aside": (
        "moves lines already in the spool to a file beside it, byte for byte: nothing leaves"
    ),
    "reflexkit.hooks._handlers:_state": "the hook's own counters: numbers and ids",
    "reflexkit.hooks._settings:install_hooks": "Claude Code's settings.json, the user's own file",
    "reflexkit.cli.commands._config:config_init": "project.json from our own defaults",
    "reflexkit.orchestrator._claude_code:_own_session_launcher": "the launcher script we write",
    "reflexkit.cli._output:say_json": "writes show_json's text, gated",
    "reflexkit.cli._output:say_on": "writes show's line, gated",
    "reflexkit.cli._output:say_table": "writes cells, title and caption through show, gated",
    "reflexkit.hooks.__main__:main": "writes the hook's reply, gated by the hook_output sink",
}


def _resolve(boundary: str) -> object:
    module_name, _, qualname = boundary.partition(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


@pytest.mark.parametrize("sink", SINKS.values(), ids=lambda s: s.name)
def test_the_gate_redacts_every_sink(sink: Sink) -> None:
    """Planted secrets of several shapes never pass, in text or in data."""
    for secret, text in PLANTED.items():
        assert secret not in outbound(text, sink.name)
        data = outbound_data({"k": [text, {"n": text}], text: 1}, sink.name)
        assert secret not in repr(data)


@pytest.mark.parametrize("sink", SINKS.values(), ids=lambda s: s.name)
def test_the_gate_neutralises_hostile_text_for_terminals_and_prompts(sink: Sink) -> None:
    """Bidi overrides, escapes and tag characters reach no terminal and no model raw."""
    out = outbound(HOSTILE, sink.name)
    if sink.kind == "record":
        assert out == HOSTILE  # JSON escapes it; the terminal gate shows it when printed
    else:
        assert not [c for c in RAW_CONTROLS if c in out], ascii(out)
        assert "U+202E" in out


@pytest.mark.parametrize("sink", SINKS.values(), ids=lambda s: s.name)
def test_every_registered_boundary_calls_the_gate(sink: Sink) -> None:
    """A sink registered without the gate at its boundary fails here."""
    assert sink.boundaries
    for boundary in sink.boundaries:
        source = inspect.getsource(_resolve(boundary))  # type: ignore[arg-type]
        assert "outbound(" in source or "outbound_data(" in source, boundary


def test_an_unknown_sink_is_an_error() -> None:
    """Text can't leave through a sink nobody registered."""
    with pytest.raises(ValueError, match="register it"):
        outbound("x", "carrier_pigeon")


def _writers() -> set[str]:
    """``module:qualname`` of every function in src that calls one of :data:`WRITERS`."""
    found: set[str] = set()
    for path in sorted(SRC.rglob("*.py")):
        if path.name in {"_files.py", "_lines.py"} or "testing" in path.parts:
            continue  # the writers themselves, and the test helpers
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text("utf-8"))
        found |= {f"{module}:{name}" for name in _calling(tree)}
    return found


def _calling(tree: ast.Module) -> set[str]:
    names: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                chain = ast.unparse(func)
                if name in WRITERS and (name != "create" or "messages" in chain) and scope:
                    names.add(".".join(scope))
                if _writes_to_terminal(name, chain):
                    names.add(".".join(scope) or "<module>")
            visit(child, scope)

    visit(tree, [])
    return names


def _writes_to_terminal(name: str, chain: str) -> bool:
    """Whether a call named *name* (``chain`` in full) writes to stdout or stderr."""
    if name in TERMINAL_WRITERS:
        return True
    return name in {"write", "writelines"} and ("stdout" in chain or "stderr" in chain)


@pytest.mark.slow
def test_every_writer_is_a_registered_boundary_or_says_why_not() -> None:
    """A new function that writes text out, unregistered and unexplained, fails here."""
    boundaries = {b for sink in SINKS.values() for b in sink.boundaries}
    writers = _writers()
    unexplained = sorted(writers - boundaries - set(NOT_SINKS))
    assert not unexplained, unexplained
    stale = sorted(set(NOT_SINKS) - writers)
    assert not stale, stale


def test_the_gate_follows_the_environment_as_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret-looking variable set, changed or removed after the first text left is seen.

    The gate compares the environment with the one its redactor was built for on every call
    (cheaply), not the secrets read from it again.
    """
    first, second = "Vq7-" + "Lm2Xp9Kd4Zt8Hw", "Rt5-" + "Bn3Yc8Qs1Jf6Ue"
    assert outbound(f"the value {first}", "memory") == f"the value {first}"
    monkeypatch.setenv("DEPLOY_TOKEN", first)
    assert first not in outbound(f"the value {first}", "memory")
    monkeypatch.setenv("DEPLOY_TOKEN", second)
    assert second not in outbound(f"the value {second}", "memory")
    monkeypatch.delenv("DEPLOY_TOKEN")
    assert outbound(f"the value {second}", "memory") == f"the value {second}"
