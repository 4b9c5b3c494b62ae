"""Every python and shell code block of README.md and docs/*.md runs as written (#19, #27).

A file's blocks run in order in one namespace (each compiled on its own, so each may start
with ``from __future__ import annotations``), in a fresh interpreter whose working folder is
an empty temporary project, so a later block may use what an earlier one defined, as a reader
would. An indented block (in a list item) is dedented first. A block preceded by
``<!-- no-run -->`` is skipped (an excerpt of a file tested elsewhere, or a schematic); keep
that set small. The public surface (``import reflexkit`` and every subpackage)
is checked here too: each name in ``__all__`` resolves, and importing a package imports none
of its submodules.

A shell block (``bash``, ``sh``, ``console``) runs with ``bash -e`` in a fresh copy of a
small project, as a reader's would be: a bug in ``calc.py`` and its unittest suite, checks
configured, ``failure.json``, ``task.json``, ``edits.json``, and ``my-agent`` on the PATH (an
agent that fixes the bug once the lesson is in its prompt, however the prompt is passed).
Installing, network and other people's tools are marked ``<!-- no-run -->``.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BLOCK = re.compile(r"(?P<mark><!-- no-run -->\s*\n)?[ ]*```python\n(?P<code>.*?)```", re.DOTALL)
PACKAGES = [
    "reflexkit",
    *(
        f"reflexkit.{p.parent.name}"
        for p in (ROOT / "src" / "reflexkit").glob("*/__init__.py")
        if p.parent.name != "_demo"
    ),
]


_DRIVER = """
import json, sys
namespace = {"__name__": "__main__"}
for number, block in enumerate(json.loads(sys.stdin.read()), 1):
    exec(compile(block, f"<block {number}>", "exec"), namespace)
"""


def _blocks(doc: Path) -> list[str]:
    return [textwrap.dedent(m["code"]) for m in BLOCK.finditer(doc.read_text()) if not m["mark"]]


@pytest.mark.slow
def test_the_readmes_python_blocks_run_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """README's blocks run, in order, in a reader's own Python process, without an error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REFLEXKIT_"))}
    env["HOME"] = str(tmp_path)  # no Anthropic profile: the llm backend falls back offline
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=json.dumps(_blocks(ROOT / "README.md")),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, f"README.md:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize(
    "doc", [d for d in DOCS if _blocks(d) and d.name != "README.md"], ids=lambda d: d.name
)
def test_the_python_blocks_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks of one document run, in order, in one namespace, without an error.

    In this process (a fresh interpreter per document cost seconds of start-up each; README's
    run in one, above): in an empty folder, with no Anthropic or reflexkit variables and a
    HOME of its own, in a module of its own so the types a block defines resolve.
    """
    for name in os.environ:
        if name.startswith(("ANTHROPIC_", "REFLEXKIT_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # no Anthropic profile: the llm backend is offline
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_{doc.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for number, block in enumerate(_blocks(doc), 1):
        exec(compile(block, f"<{doc.name} block {number}>", "exec"), module.__dict__)  # noqa: S102


SHELL = re.compile(
    r"(?P<mark><!-- no-run -->\s*\n)?[ ]*```(?:bash|sh|shell|console)\n(?P<code>.*?)```",
    re.DOTALL,
)

MY_AGENT = """#!PYTHON
import pathlib, sys
args = sys.argv[1:]
if "--prompt-file" in args:
    prompt = pathlib.Path(args[args.index("--prompt-file") + 1]).read_text()
elif "--task" in args:
    prompt = args[args.index("--task") + 1]
elif args and pathlib.Path(args[-1]).is_file():
    prompt = pathlib.Path(args[-1]).read_text()
else:
    prompt = sys.stdin.read()
body = "a + b" if "Learning from Previous Failures" in prompt else "a * b"
pathlib.Path("calc.py").write_text(f"def add(a, b):\\n    return {body}\\n")
print("my-agent wrote", body)
"""

SANDBOX = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": (
        "import unittest\nfrom calc import add\n\n\nclass AddTests(unittest.TestCase):\n"
        "    def test_add_positive(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
    "task.json": json.dumps(
        {
            "id": "calc",
            "description": "Fix the calculator.",
            "subtasks": [{"id": "fix-add", "description": "add() in calc.py must add."}],
        }
    ),
    "failure.json": json.dumps(
        {
            "taskId": "t-cart",
            "subtaskId": "st-discount-1",
            "attemptNumber": 1,
            "command": "python -m pytest tests -q",
            "exitCode": 1,
            "errorOutput": "FAILED tests/test_pricing.py::test_quarter_off - assert 500 == 1500",
        }
    ),
}


def _shell_blocks() -> list[tuple[str, int, str]]:
    found = []
    for doc in DOCS:
        for number, m in enumerate(SHELL.finditer(doc.read_text()), 1):
            if not m["mark"]:
                found.append((doc.name, number, textwrap.dedent(m["code"])))
    return found


def _sandbox(root: Path) -> dict[str, str]:
    """A reader's project: files, checks in project.json, my-agent on the PATH."""
    for name, text in SANDBOX.items():
        (root / name).write_text(text)
    wrong, fixed = ("def add(a, b):\n    return a * b\n", "def add(a, b):\n    return a + b\n")
    edits = json.dumps({"fix-add": [{"calc.py": wrong}, {"calc.py": fixed}]})
    (root / "edits.json").write_text(edits)
    (root / "script.json").write_text(edits)
    (root / ".reflexkit").mkdir()
    checks = [f"{sys.executable} -m unittest -q"]
    config = {
        "reflexion": {"backend": "heuristic"},
        "verification": {"commands": checks},
        "orchestrator": {"agentCommand": ["my-agent", "{prompt_file}"]},  # "an agent configured"
    }
    (root / ".reflexkit" / "project.json").write_text(json.dumps(config))
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    agent = bin_dir / "my-agent"
    agent.write_text(MY_AGENT.replace("PYTHON", sys.executable))
    agent.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REFLEXKIT_"))}
    env["HOME"] = str(root)
    env["PATH"] = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]])
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    ("doc", "number", "code"), _shell_blocks(), ids=lambda v: str(v) if len(str(v)) < 20 else ""
)
def test_the_shell_blocks_run(doc: str, number: int, code: str, tmp_path: Path) -> None:
    """A shell block runs, line by line, in a reader's project: every command exits 0."""
    env = _sandbox(tmp_path)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, (
        f"{doc} block {number}:\n{code}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    )


def test_the_no_run_set_stays_small() -> None:
    """Most blocks run; the skipped ones are the exception."""
    skipped = sum(
        len(re.findall(r"<!-- no-run -->\s*\n[ ]*```python", d.read_text())) for d in DOCS
    )
    total = sum(d.read_text().count("```python") for d in DOCS)
    assert skipped * 4 <= total, f"{skipped} of {total} python blocks are marked no-run"
    shell = sum(len(SHELL.findall(d.read_text())) for d in DOCS)
    # The rest install, need a model or another tool: a third of them at least must run.
    assert len(_shell_blocks()) * 3 >= shell, f"{len(_shell_blocks())} of {shell} run"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_of_a_package_resolves(package: str) -> None:
    """`__all__` is there, and each of its names imports."""
    module = importlib.import_module(package)
    assert module.__all__
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"


@pytest.mark.parametrize(
    "package",
    [
        "reflexkit",
        "reflexkit.orchestrator",
        "reflexkit.reflection",
        "reflexkit.tasks",
        "reflexkit.testing",
    ],
)
def test_importing_a_package_imports_none_of_its_submodules(package: str) -> None:
    """Public names load on first use, so one submodule doesn't cost the others."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                f"import sys, {package}; print(' '.join(m for m in sys.modules "
                f"if m.startswith('{package}.')))"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    # the version, the lazy-export helper, and the root's error tree (it imports nothing)
    loader = {"reflexkit._version", "reflexkit._lazy", "reflexkit.exceptions"}
    assert [m for m in done.stdout.split() if m not in loader] == []
