"""Fixtures of the hook tests: one fake Messages API per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reflexkit.testing.fake_messages_api import FakeMessagesApi


@pytest.fixture(scope="module")
def shared_api() -> Iterator[FakeMessagesApi]:
    """One server for the module."""
    with FakeMessagesApi() as api:
        yield api


@pytest.fixture
def fake_messages_api(shared_api: FakeMessagesApi) -> FakeMessagesApi:
    """The shared server with an empty script and no requests (overrides the plugin's)."""
    return shared_api.reset()
