"""The corpus items under tests/data (tools, repositories) are well formed: key facts quoted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..conftest import DATA  # noqa: TID252 -- tests/ is no package; importlib mode resolves it

ITEMS = [
    path
    for folder in (
        "unseen_tools",
        "unseen_tools_2",
        "unseen_tools_3",
        "unseen_tools_4",
        "unseen_repos",
        "unseen_repos_2",
        "unseen_repos_3",
        "unseen_repos_4",
    )
    for path in sorted((DATA / folder).glob("*.json"))
]
TYPES = {
    "test_failure", "typecheck_error", "lint_error", "build_error", "runtime_error",
    "dependency_error", "timeout", "tool_error", "unknown",
}  # fmt: skip


@pytest.mark.parametrize("path", ITEMS, ids=[p.stem for p in ITEMS])
def test_item_is_labelled_from_its_own_output(path: Path) -> None:
    """Labels are verbatim quotes of the output, one known type, one or two categories."""
    item: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    output = item["failureContext"]["errorOutput"]
    expected = item["expected"]
    assert expected["failureType"] in TYPES
    assert 1 <= len(expected["keyFacts"]) <= 6
    assert all(fact in output for fact in expected["keyFacts"])
    assert 1 <= len(expected["categoryHints"]) <= 2
