"""Shared fixtures for the reflexkit test suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "failures" / "dev"
"""The dev corpus of real tool failures, beside the checkout (absent on some machines)."""

DATA = Path(__file__).resolve().parent / "data"


def corpus_items() -> list[dict[str, Any]]:
    """Return the dev corpus items, or an empty list where the corpus is not present."""
    if not CORPUS.is_dir():
        return []
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("*.json"))]


@pytest.fixture
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Return an empty project folder that is the current directory, with no config in reach."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFLEXKIT_CONFIG", raising=False)
    return tmp_path
