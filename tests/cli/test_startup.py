"""Start-up of the command and of ``import reflexkit``: what each path leaves unimported.

Speed itself is measured by benchmarks/cli.py; these tests check, in fresh processes, the
imports a command doesn't need (the anthropic SDK for a heuristic reflection, every command
module for ``--version``), so a stray top-level import can't bring them back unnoticed.
The object graphs come from the one composition root, whose providers import their class
when first called.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import reflexkit
from reflexkit.cli import COMMANDS

from ..conftest import DATA, PYTEST_FAILURE as FAILURE  # noqa: TID252

HEAVY = ("anthropic", "dependency_injector", "starlette", "pydantic", "rich", "httpx")

# Runs the command in-process and then prints the top-level packages it imported.
_WRAPPER = """
import json, sys
from reflexkit.cli import cli
try:
    cli.main(args=sys.argv[1:], prog_name="reflexkit")
except SystemExit as done:
    code = done.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A heuristic project with nothing in memory, and a home with no Anthropic profile."""
    (tmp_path / ".reflexkit").mkdir()
    (tmp_path / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}})
    )
    (tmp_path / "home").mkdir()
    return tmp_path


def _imported(
    root: Path, *args: str, stdin: bytes = b"", full: bool = False
) -> tuple[int, set[str]]:
    """Exit code and top-level modules (every module: *full*) of ``reflexkit ARGS``.

    The command runs in a fresh interpreter.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "REFLEXKIT_")) and k != "HOME"
    }
    env["HOME"] = str(root / "home")  # no ~/.config/anthropic profile to find
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *args],
        input=stdin,
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    report = json.loads(done.stderr.decode().strip().splitlines()[-1])
    modules = set(report["modules"])
    return report["code"], modules if full else {m.split(".")[0] for m in modules}


def test_version_imports_no_config_machinery(project: Path) -> None:
    """`--version` needs click alone: no cattrs, no attrs classes of ours."""
    code, modules = _imported(project, "--version")
    assert code in {0, None}
    assert not modules & {"cattrs", "orjson", "attrs", "attr"}


def _store_of_one(project: Path) -> Path:
    """One reflection of ``discount`` in memory, not indexed yet; the index folder's path."""
    from reflexkit.memory import JsonlMemory  # noqa: PLC0415
    from reflexkit.testing.memory_contract import make_reflection  # noqa: PLC0415

    path = project / ".reflexkit" / "memory" / "reflections.jsonl"
    with JsonlMemory(path) as store:
        store.append(make_reflection(subtask_id="discount", task_id="checkout"))
    index = path.with_name(path.name + ".index")
    shutil.rmtree(index, ignore_errors=True)
    return index


def _recent(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "recent", "discount", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Learning from Previous Failures" in done.stdout
    return done


def test_a_warning_has_the_commands_prefix(project: Path) -> None:
    """A warning of `recent` is one line, with the command's prefix."""
    _store_of_one(project).write_text("not a folder\n")
    lines = _recent(project).stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("reflexkit: WARNING: "), lines
    assert "no index" in lines[0]


def test_debug_after_the_command_shows_info_lines(project: Path) -> None:
    """--debug given after `recent` sets the level too."""
    index = _store_of_one(project)
    assert "indexing the store" not in _recent(project).stderr
    shutil.rmtree(index)
    lines = _recent(project, "--debug").stderr.splitlines()
    assert any(
        line.startswith("reflexkit: INFO: ") and "indexing the store from the start" in line
        for line in lines
    ), lines


def test_a_bad_project_json_still_gets_the_converters_message(project: Path) -> None:
    """A typo in project.json is reported with the JSON path and a suggestion."""
    (project / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"maxReflectionsPerRetyr": 2, "backend": "heuristic"}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "recent", "discount"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "$.reflexion.maxReflectionsPerRetyr: unknown key" in done.stderr
    assert 'did you mean "maxReflectionsPerRetry"' in done.stderr


_COMPILED = """
import json, sys
from reflexkit._pattern import Pattern
import gc
from reflexkit.models import FailureContext
from reflexkit.readers import analyse
from reflexkit.redaction import Redactor

def compiled():
    return sum(
        1 for o in gc.get_objects() if isinstance(o, Pattern) and o._compiled is not None
    )

total = sum(1 for o in gc.get_objects() if isinstance(o, Pattern))
engine = sum(
    1
    for name, module in list(sys.modules.items())
    if name.startswith("reflexkit.redaction")
    for value in vars(module).values()
    if isinstance(value, Pattern)
)
after_import = compiled()
failure = FailureContext(**json.loads(sys.argv[1]))
found = analyse(failure)
clean, counts = Redactor(environ={}).redact_failure(failure)
print(json.dumps({
    "total": total, "engine": engine, "afterImport": after_import, "afterUse": compiled(),
    "tool": found.tool, "facts": found.facts, "counts": counts,
    "output": clean.error_output,
}))
"""


def test_patterns_compile_when_a_reading_needs_them() -> None:
    """Importing the readers and redaction compiles none of their module-level patterns.

    The redaction engine's are lazy too (a text without a trigger uses none of them).
    Reading a pytest failure with a token in it compiles a few, and reads and redacts it
    right.
    """
    failure = {
        "task_id": "checkout",
        "subtask_id": "discount",
        "attempt_number": 1,
        "command": "python -m pytest -q",
        "exit_code": 1,
        "error_output": FAILURE["errorOutput"] + "token=ghp_" + "a1B2" * 9 + "\n",
    }
    done = subprocess.run(
        [sys.executable, "-c", _COMPILED, json.dumps(failure)],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report["afterImport"] == 0
    assert report["engine"] > 50, report  # the engine's own are lazy too
    assert 0 < report["afterUse"] < report["total"] / 4, report
    assert report["tool"] == "pytest"
    assert report["facts"] == ["tests/test_cart.py::test_total: assert 90 == 100"]
    assert report["counts"] == {"github_token": 1}
    assert "ghp_" not in report["output"]


def test_heuristic_reflect_leaves_the_llm_generators_out(project: Path) -> None:
    """A heuristic reflection imports no Claude or fixture generator, nor run events."""
    code, modules = _imported(
        project,
        "reflect",
        "--backend",
        "heuristic",
        stdin=json.dumps(FAILURE).encode(),
        full=True,
    )
    assert code in {0, None}
    lazy = {
        "reflexkit.reflection._fixture",
        "reflexkit.reflection._claude",
        "tenacity",
        "reflexkit.orchestrator._process",
        "reflexkit.events",
        "ctypes",
    }
    assert not modules & lazy, sorted(modules & lazy)
    assert "reflexkit.reflection._service" in modules  # the check above looked at a reflection


def test_llm_backend_without_a_credential_never_imports_the_sdk(project: Path) -> None:
    """No key, no profile: the fallback reflection, and no SDK."""
    code, modules = _imported(
        project, "reflect", "--backend", "llm", "--no-save", stdin=json.dumps(FAILURE).encode()
    )
    assert code in {0, None}
    assert "anthropic" not in modules


@pytest.mark.slow
def test_llm_backend_with_a_credential_does_load_the_sdk(project: Path) -> None:
    """The check is conservative: a profile folder means the SDK gets to look."""
    (project / "home" / ".config" / "anthropic").mkdir(parents=True)
    code, modules = _imported(
        project, "reflect", "--backend", "llm", "--no-save", stdin=json.dumps(FAILURE).encode()
    )
    assert code in {0, None}
    assert "anthropic" in modules


def test_import_reflexkit_is_cheap() -> None:
    """`import reflexkit` loads none of the heavy parts, nor cattrs."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, reflexkit; print(' '.join({m.split('.')[0] for m in sys.modules}))",
        ],
        capture_output=True,
        check=True,
        text=True,
    )
    assert set(done.stdout.split()).isdisjoint({*HEAVY, "cattrs", "click"})


def test_every_public_name_resolves() -> None:
    """Each name of `reflexkit.__all__` imports, and dir() lists them."""
    for name in reflexkit.__all__:
        assert getattr(reflexkit, name) is not None, name
    assert set(reflexkit.__all__) <= set(dir(reflexkit))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        reflexkit.nope  # noqa: B018 -- the access is the test


_SUBREAPER = """
import ctypes, sys
from reflexkit.cli import main
sys.argv = ["reflexkit", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
flag = ctypes.c_int(0)
ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0)  # GET_CHILD_SUBREAPER
print("subreaper", flag.value, "process-module", "reflexkit.orchestrator._process" in sys.modules)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("config", "check"), "subreaper 1 process-module True"),
        (("--version",), "subreaper 0 process-module False"),
        (("recent", "discount"), "subreaper 0 process-module False"),
    ],
)
def test_main_becomes_a_subreaper_only_to_run_a_command(
    project: Path, args: tuple[str, ...], expected: str
) -> None:
    """A command gets the subreaper (detached grandchildren come back).

    --version, and the commands that only read or write memory, start no process: they skip
    it, and the import of what makes one.
    """
    done = subprocess.run(
        [sys.executable, "-c", _SUBREAPER, *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == expected


_TEARDOWN = """
import atexit, gc, sys
from reflexkit.cli import main
atexit.register(lambda: print("teardown ran, gc", gc.isenabled(), file=sys.stderr))
sys.argv = ["reflexkit", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(
    "args",
    [
        ("recent", "discount"),
        ("reflect", "--backend", "heuristic"),
        ("recent", "no such id!"),
        ("config", "check"),
        ("--version",),
    ],
    ids=" ".join,
)
def test_every_command_ends_with_the_interpreters_teardown(
    project: Path, args: tuple[str, ...]
) -> None:
    """No command pauses the cyclic GC or skips the teardown (no gc/os._exit tricks).

    The exit code, the output and the stored records are what they should be.
    """
    done = subprocess.run(
        [sys.executable, "-c", _TEARDOWN, *args],
        input=json.dumps(FAILURE).encode(),
        cwd=project,
        capture_output=True,
        check=False,
    )
    assert b"teardown ran, gc True" in done.stderr, done.stderr
    if args[0] == "reflect":
        assert done.returncode == 0, done.stderr
        assert b"Analysis:" in done.stdout
        recent = _recent(project)  # the reflection was stored before the process ended
        assert "tests/test_cart.py::test_total" in recent.stdout
    if args[1:] == ("no such id!",):
        assert done.returncode == 2
        assert b"SUBTASK_ID" in done.stderr


def test_output_bigger_than_a_pipe_reaches_the_reader(project: Path) -> None:
    """Everything buffered reaches the reader before the process ends: here 200 records."""
    from reflexkit.memory import JsonlMemory  # noqa: PLC0415
    from reflexkit.testing.memory_contract import make_reflection  # noqa: PLC0415

    with JsonlMemory(project / ".reflexkit" / "memory" / "reflections.jsonl") as store:
        for attempt in range(1, 201):
            store.append(make_reflection("discount", task_id="checkout", attempt=attempt))
    done = subprocess.run(
        [sys.executable, "-m", "reflexkit", "recent", "discount", "--limit", "200", "--json"],
        cwd=project,
        capture_output=True,
        check=True,
    )
    assert len(done.stdout) > 1 << 16
    assert [r["attemptNumber"] for r in json.loads(done.stdout)] == list(range(1, 201))


_HELP = """
import sys
from reflexkit.cli import cli
try:
    cli.main(args=["--help"], prog_name="reflexkit")
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("reflexkit.cli.commands.")), file=sys.stderr)
"""


def test_help_imports_no_command() -> None:
    """`reflexkit --help` lists every command from its summary, importing none of them."""
    done = subprocess.run([sys.executable, "-c", _HELP], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"
    for name in COMMANDS:
        assert f"  {name} " in done.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_commands_own(name: str) -> None:
    """The table's one-line summary is the first paragraph of the command's help."""
    command = COMMANDS[name].load()
    assert COMMANDS[name].summary == command.get_short_help_str(limit=1_000)


# --- the modules each hot command imports ---------------------------------------------------

# What orchestrators and Claude Code start once per failure or per tool call. Each imports
# exactly the modules pinned in tests/data/startup_modules.json: a new module on one of these
# paths (a top-level import that should have been lazy) fails here, whatever the machine's
# speed. If the new import is meant, measure `python benchmarks/cli.py` and re-pin: run this
# test with the environment variable REFLEXKIT_PIN_STARTUP set.
STARTUP_PINS = DATA / "startup_modules.json"
HOOKS_DATA = DATA / "hooks"
HOT_COMMANDS = {
    "recent": ("reflexkit", "recent", "discount"),
    "reflect": ("reflexkit", "reflect", "--backend", "heuristic", "--no-save"),
    "hook post-tool-use, ok": ("reflexkit.hooks", "post-tool-use"),
    "hook post-tool-use, failed": ("reflexkit.hooks", "post-tool-use"),
}


def _hook_payload(name: str, root: Path) -> bytes:
    data = json.loads((HOOKS_DATA / name).read_text())
    data["cwd"] = str(root)
    data["transcript_path"] = str(root / "transcript.jsonl")
    return json.dumps(data).encode()


def _stdin_of(name: str, root: Path) -> bytes:
    if name == "reflect":
        return json.dumps(FAILURE).encode()
    if name == "hook post-tool-use, ok":
        return _hook_payload("post_tool_use_bash_ok.json", root)
    if name == "hook post-tool-use, failed":
        return _hook_payload("post_tool_use_failure_bash.json", root)
    return b""


# Runs a module as ``python -m`` does, and prints what it imported when the process exits.
_RUN_MODULE = """
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
module, sys.argv = sys.argv[1], sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _modules_of(root: Path, name: str) -> dict[str, list[str]]:
    """Our modules and the other top-level packages (not the stdlib) that *name* imported.

    The command runs as ``python -m`` runs it, through its real entry point.
    """
    module, *args = HOT_COMMANDS[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REFLEXKIT_"))}
    env["HOME"] = str(root / "home")
    done = subprocess.run(
        [sys.executable, "-c", _RUN_MODULE, module, *args],
        input=_stdin_of(name, root),
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    imported = json.loads(done.stderr.decode().strip().splitlines()[-1])
    ours = sorted(m for m in imported if m.split(".")[0] == "reflexkit")
    others = sorted(
        {
            m.split(".")[0]
            for m in imported
            if m.split(".")[0] not in {*sys.stdlib_module_names, "reflexkit", "__main__"}
            and not m.startswith(("_", "cython_"))  # helpers of the interpreter and Cython
        }
    )
    return {"reflexkit": ours, "packages": others}


@pytest.fixture
def hot_project(project: Path) -> Path:
    """The heuristic project with hooks on and one reflection of ``discount`` in memory."""
    from reflexkit.memory import JsonlMemory  # noqa: PLC0415
    from reflexkit.testing.memory_contract import make_reflection  # noqa: PLC0415

    (project / ".reflexkit" / "project.json").write_text(
        json.dumps({"reflexion": {"backend": "heuristic"}, "hooks": {"enabled": True}})
    )
    with JsonlMemory(project / ".reflexkit" / "memory" / "reflections.jsonl") as store:
        store.append(make_reflection(subtask_id="discount", task_id="checkout"))
    return project


@pytest.mark.slow
def test_hot_commands_import_only_their_pinned_modules(hot_project: Path) -> None:
    """recent, reflect and the post-tool-use hook import exactly the pinned modules."""
    found = {name: _modules_of(hot_project, name) for name in HOT_COMMANDS}
    if os.environ.get("REFLEXKIT_PIN_STARTUP"):
        STARTUP_PINS.write_text(json.dumps(found, indent=2) + "\n")
    pinned = json.loads(STARTUP_PINS.read_text())
    for name, modules in found.items():
        for kind in ("reflexkit", "packages"):
            added = sorted(set(modules[kind]) - set(pinned[name][kind]))
            gone = sorted(set(pinned[name][kind]) - set(modules[kind]))
            assert not added, f"{name} now imports {added}: make the import lazy, or re-pin"
            assert not gone, f"{name} no longer imports {gone}: re-pin (REFLEXKIT_PIN_STARTUP=1)"


PROBE = "import sys, reflexkit.containers; print('pydantic' in sys.modules)"


def test_a_library_keeps_dependency_injectors_integrations() -> None:
    """Only our own commands skip DI's pydantic probe; a program importing the root keeps it."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, reflexkit.containers; print('pydantic' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "True"
