"""The pytest plugin, as a user's test suite sees it: installed, nothing to import."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
from reflexkit import FailureContext


def test_reflect_and_retry(reflexkit_app, reflexkit_fakes):
    service = reflexkit_app.reflection.service()
    failure = FailureContext(
        task_id="t", subtask_id="s", attempt_number=1, command="python -m pytest -q",
        exit_code=1, error_output="FAILED tests/test_a.py::test_b - assert 1 == 2\\n",
    )
    reflection = service.generate(failure)
    assert reflection.source.value == "heuristic"
    assert service.save(reflection)
    assert list(reflexkit_fakes.store()) == [reflection]
    assert "test_a.py::test_b" in service.format_for_prompt(service.get_recent("s"))


def test_memory_is_fresh_per_test(reflexkit_app, reflexkit_memory, reflexkit_project, tmp_path):
    assert list(reflexkit_app.memory.store()) == []
    assert list(reflexkit_memory) == []
    assert reflexkit_project.root == tmp_path
    assert not (tmp_path / ".reflexkit").exists()  # nothing written to disk


def test_fake_messages_api_is_served(fake_messages_api):
    assert fake_messages_api.url.startswith("http://127.0.0.1:")
"""


def test_the_fixtures_work_in_a_users_suite(pytester: pytest.Pytester) -> None:
    """A fresh suite that only installs reflexkit gets working fixtures."""
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3)
