"""The look before the entry-point scan: importlib.metadata only when a plugin may be there.

The plugins themselves (loaded, broken, skipped) are tested in ``test_docs_example.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from reflexkit.readers import ENTRY_POINT_GROUP
from reflexkit.readers._registry import _group_may_be_declared


def _dist_info(folder: Path, name: str, entry_points: str | None) -> None:
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def _on_path(monkeypatch: pytest.MonkeyPatch, *entries: Path) -> None:
    monkeypatch.setattr(sys, "path", [str(e) for e in entries])


def test_no_distribution_declares_the_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Distributions with other entry points, or none, and a missing folder: no scan."""
    _dist_info(tmp_path, "tool", "[console_scripts]\ntool = tool:main\n")
    _dist_info(tmp_path, "plain", None)
    (tmp_path / "old.egg-info").write_text("Metadata-Version: 1.0\n")  # a file, not a folder
    _on_path(monkeypatch, tmp_path, tmp_path / "missing")
    assert not _group_may_be_declared(ENTRY_POINT_GROUP)


@pytest.mark.parametrize("info", ["my_readers-0.1.dist-info", "My_Readers.egg-info"])
def test_a_declared_group_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, info: str
) -> None:
    """An entry_points.txt naming the group, in a dist-info or egg-info folder: scan."""
    (tmp_path / info).mkdir()
    (tmp_path / info / "entry_points.txt").write_text(
        "[reflexkit.readers]\nterraform = terraform_reader:READER\n"
    )
    _on_path(monkeypatch, tmp_path / "elsewhere", tmp_path)
    assert _group_may_be_declared(ENTRY_POINT_GROUP)


def test_a_zip_or_an_egg_on_the_path_means_a_full_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the look can't see into is left to importlib.metadata."""
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("x-0.1.dist-info/entry_points.txt", "[reflexkit.readers]\nx = x:R\n")
    _on_path(monkeypatch, archive)
    assert _group_may_be_declared(ENTRY_POINT_GROUP)
    egg = tmp_path / "x-0.1-py3.11.egg"
    egg.mkdir()
    _on_path(monkeypatch, egg)
    assert _group_may_be_declared(ENTRY_POINT_GROUP)


def test_another_finder_of_distributions_means_a_full_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A meta-path finder with find_distributions may know plugins we can't see."""

    class Finder:
        def find_spec(self, *_args: object) -> None:
            return None

        def find_distributions(self, *_args: object) -> list[object]:
            return []

    _on_path(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert _group_may_be_declared(ENTRY_POINT_GROUP)


_READERS = """
import json, sys
from reflexkit.readers import registered_readers
names = [r.name for r in registered_readers()]
print(json.dumps({"metadata": "importlib.metadata" in sys.modules, "plugin": "tf" in names}))
"""


@pytest.mark.parametrize("declared", [False, True])
def test_the_scan_runs_only_when_a_plugin_is_declared(tmp_path: Path, *, declared: bool) -> None:
    """In a fresh process: no plugin, no importlib.metadata; a plugin is still loaded."""
    (tmp_path / "tf_reader.py").write_text(
        "from reflexkit.readers import Reader\n"
        "READER = Reader('tf', lambda text, failure: None, ('Error:',), 10)\n"
    )
    if declared:
        _dist_info(tmp_path, "tf_reader", "[reflexkit.readers]\ntf = tf_reader:READER\n")
    done = subprocess.run(
        [sys.executable, "-c", _READERS],
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == {"metadata": declared, "plugin": declared}
