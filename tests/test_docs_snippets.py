"""Every python code block of README.md and docs/*.md runs as written (#19).

A file's blocks run in order in one namespace (each compiled on its own, so each may start
with ``from __future__ import annotations``), in a fresh interpreter whose working folder is
an empty temporary project, so a later block may use what an earlier one defined, as a reader
would. An indented block (in a list item) is dedented first. A block preceded by
``<!-- no-run -->`` is skipped (an excerpt of a file tested elsewhere, or a schematic); keep
that set small. The public surface (``import reflexkit`` and every subpackage)
is checked here too: each name in ``__all__`` resolves, and importing a package imports none
of its submodules.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
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


@pytest.mark.parametrize("doc", [d for d in DOCS if _blocks(d)], ids=lambda d: d.name)
def test_the_python_blocks_run(doc: Path, tmp_path: Path) -> None:
    """The blocks of one document run, in order, without an error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REFLEXKIT_"))}
    env["HOME"] = str(tmp_path)  # no Anthropic profile: the llm backend falls back offline
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=json.dumps(_blocks(doc)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, f"{doc.name}:\n{done.stderr[-3000:]}"


def test_the_no_run_set_stays_small() -> None:
    """Most blocks run; the skipped ones are the exception."""
    skipped = sum(
        len(re.findall(r"<!-- no-run -->\s*\n[ ]*```python", d.read_text())) for d in DOCS
    )
    total = sum(d.read_text().count("```python") for d in DOCS)
    assert skipped * 4 <= total, f"{skipped} of {total} python blocks are marked no-run"


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
    loader = {"reflexkit._version", "reflexkit._lazy"}  # the version, the lazy-export helper
    assert [m for m in done.stdout.split() if m not in loader] == []
