"""The example reader of docs/readers.md works, registered by hand and as an entry point."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "readers.md"

_ANALYSE = textwrap.dedent(
    """
    import json, sys
    from reflexkit.models import FailureContext
    from reflexkit.readers import analyse
    {register}
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, command="terraform validate",
        exit_code=1, error_output=sys.stdin.read(),
    )
    found = analyse(failure)
    print(json.dumps({{"tool": found.tool, "type": found.failure_type.value,
                      "facts": found.facts, "hints": found.hints}}))
    """
)


def _blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    """A folder on PYTHONPATH holding the documented reader as ``terraform_reader.py``."""
    module = next(b for b in _blocks("python") if "READER = Reader(" in b)
    (tmp_path / "terraform_reader.py").write_text(module, encoding="utf-8")
    return tmp_path


def _run(plugin_dir: Path, register: str) -> dict[str, object]:
    output = _blocks("text")[0]
    env = {**os.environ, "PYTHONPATH": str(plugin_dir)}
    done = subprocess.run(
        [sys.executable, "-c", _ANALYSE.format(register=register)],
        input=output,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    result["stderr"] = done.stderr
    return result


def _expect_terraform(result: dict[str, object]) -> None:
    assert result["tool"] == "terraform"
    assert result["type"] == "build_error"
    assert result["facts"] == ["main.tf line 12: Unsupported argument"]
    assert result["hints"] == ['Did you mean "instance_type"?']


def test_registered_by_hand(plugin_dir: Path) -> None:
    """``register_reader(READER)`` makes analyse() read Terraform's boxes."""
    register = "from reflexkit.readers import register_reader\n"
    register += "from terraform_reader import READER\nregister_reader(READER)"
    _expect_terraform(_run(plugin_dir, register))


def test_without_the_reader_the_generic_reader_answers(plugin_dir: Path) -> None:
    """The same output without the reader is not claimed by a built-in reader."""
    assert _run(plugin_dir, "")["tool"] != "terraform"


def _dist_info(folder: Path, name: str, entry_points: str) -> None:
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def test_loaded_from_the_entry_point_group(plugin_dir: Path) -> None:
    """An installed distribution's ``reflexkit.readers`` entry point is used with no code."""
    _dist_info(
        plugin_dir, "my_readers", "[reflexkit.readers]\nterraform = terraform_reader:READER\n"
    )
    _expect_terraform(_run(plugin_dir, ""))


def test_broken_entry_points_are_skipped_and_logged(plugin_dir: Path) -> None:
    """A plugin that fails to import or names no Reader never stops the reading."""
    _dist_info(
        plugin_dir,
        "broken_readers",
        "[reflexkit.readers]\nmissing = no_such_module:READER\n"
        "wrong = terraform_reader:read_terraform\n",
    )
    _dist_info(
        plugin_dir, "my_readers", "[reflexkit.readers]\nterraform = terraform_reader:READER\n"
    )
    result = _run(plugin_dir, "import logging\nlogging.basicConfig()")
    _expect_terraform(result)
    stderr = str(result["stderr"])
    assert "no_such_module:READER" in stderr
    assert "failed to load" in stderr
    assert "terraform_reader:read_terraform" in stderr
    assert "not a reflexkit.readers.Reader" in stderr
