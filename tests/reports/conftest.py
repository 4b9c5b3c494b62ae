"""Helpers for the report tests: real git repositories in temporary folders."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reflexkit.testing.fake_messages_api import FakeMessagesApi


def git(root: Path, *args: str) -> str:
    """Run git in *root* and return its stdout."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit: a small Python project."""
    root = tmp_path / "project"
    (root / "src" / "cart").mkdir(parents=True)
    (root / "src" / "cart" / "pricing.py").write_text("def price(x):\n    return x\n")
    (root / "README.md").write_text("# cart\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "start")
    return root


@pytest.fixture(scope="module")
def shared_api() -> Iterator[FakeMessagesApi]:
    """One fake Messages API per module: building a server per test costs more than the test."""
    with FakeMessagesApi() as api:
        yield api


@pytest.fixture
def fake_messages_api(shared_api: FakeMessagesApi) -> FakeMessagesApi:
    """The shared server with an empty script and no requests (overrides the plugin's)."""
    return shared_api.reset()
