"""The Elixir compile-error reader: a test file's (a test failure) or the code's (a build error).

The outputs below are made up in mix's shape; the live test runs this machine's ``elixirc``
when it has one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import read_as  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _read(output: str, command: str = "mix test") -> tuple[str, str, str]:
    return read_as(output, command)


_ERROR = """Compiling 3 files (.ex)

== Compilation error in file {file} ==
** (CompileError) {file}:12: undefined function totl/1 (expected Cart to define it)
    (elixir 1.14.0) lib/kernel/parallel_compiler.ex:346: Kernel.ParallelCompiler.x/2
    {file}:12: (module)
"""


@pytest.mark.parametrize(
    ("file", "kind"),
    [("lib/shop/cart.ex", "build_error"), ("test/cart_test.exs", "test_failure")],
    ids=["code", "test-file"],
)
def test_elixir_compile_error_is_read(file: str, kind: str) -> None:
    """The code's compile error is a build error; a test file's, the runner's collection error."""
    tool, failure_type, text = _read(_ERROR.format(file=file))
    assert (tool, failure_type) == ("elixir", kind)
    assert f"== Compilation error in file {file} ==" in text
    assert f"{file}:12: undefined function totl/1" in text


@pytest.mark.skipif(shutil.which("elixirc") is None, reason="no elixir on this machine")
def test_live_elixirc_compile_error(tmp_path: Path) -> None:
    """Compile a file that calls a function nobody defined, and read what elixirc prints."""
    (tmp_path / "cart.ex").write_text(
        "defmodule Cart do\n  def total(x), do: totl(x)\nend\n", encoding="utf-8"
    )
    command = "elixirc cart.ex"
    run = subprocess.run(
        command.split(), check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    tool, kind, text = _read(run.stdout + run.stderr, command)
    assert (tool, kind) == ("elixir", "build_error"), run.stdout + run.stderr
    assert "cart.ex:2" in text
