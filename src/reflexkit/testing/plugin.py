"""The reflexkit pytest plugin: fixtures for testing code that uses reflexkit.

Registered as the ``pytest11`` entry point ``reflexkit``, so installing reflexkit makes the
fixtures available in every test suite; inside reflexkit's own tests a module may also say
``pytest_plugins = ["reflexkit.testing.plugin"]``.

Fixtures:
    fake_messages_api: A started :class:`~reflexkit.testing.FakeMessagesApi`, stopped after
        the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reflexkit.testing.fake_messages_api import FakeMessagesApi

__all__ = ["fake_messages_api"]


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesApi]:
    """Return a scripted fake Messages API on 127.0.0.1; point ``base_url`` at its ``url``."""
    with FakeMessagesApi() as api:
        yield api
