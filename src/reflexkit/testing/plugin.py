"""The reflexkit pytest plugin: fixtures for testing code that uses reflexkit.

Registered as the ``pytest11`` entry point ``reflexkit``, so installing reflexkit makes these
fixtures available in every test suite, with nothing to import:

``reflexkit_project``
    A :class:`~reflexkit.tasks._config.LoadedProject` with the default configuration (heuristic
    reflections), rooted in the test's ``tmp_path``.
``reflexkit_app``
    The :class:`~reflexkit.containers.Application` of that project, bound to in-process fakes
    (:class:`~reflexkit.containers.FakeServices`) for the length of the test: memory in a list,
    the heuristic generator, no network.
``reflexkit_fakes``
    Those fakes, to look into their store or override their generator.
``reflexkit_memory``
    An empty :class:`~reflexkit.memory.InMemoryMemory`.
``fake_messages_api``
    A started :class:`~reflexkit.testing.fake_messages_api.FakeMessagesApi` on 127.0.0.1,
    stopped after the test; point the SDK's ``base_url`` at its ``url``.
``fake_openai_api``
    A started :class:`~reflexkit.testing.fake_openai_api.FakeOpenAIApi` (Chat Completions
    and Responses) on 127.0.0.1, stopped after the test; agents get ``url + "/v1"``.

The heavy imports happen inside the fixtures, so the plugin costs nothing in a test session
that doesn't use them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from reflexkit.containers import Application, FakeServices
    from reflexkit.memory import InMemoryMemory
    from reflexkit.tasks._config import LoadedProject
    from reflexkit.testing.fake_messages_api import FakeMessagesApi
    from reflexkit.testing.fake_openai_api import FakeOpenAIApi

__all__ = [
    "fake_messages_api",
    "fake_openai_api",
    "reflexkit_app",
    "reflexkit_fakes",
    "reflexkit_memory",
    "reflexkit_project",
]


@pytest.fixture
def reflexkit_project(tmp_path: Path) -> LoadedProject:
    """Return a project with the default configuration and heuristic reflections."""
    from reflexkit.tasks._config import (  # noqa: PLC0415 -- keep the plugin light
        GeneratorBackend,
        LoadedProject,
        ProjectConfig,
        ReflexionConfig,
    )

    config = ProjectConfig(reflexion=ReflexionConfig(backend=GeneratorBackend.HEURISTIC))
    return LoadedProject(config=config, root=tmp_path)


@pytest.fixture
def reflexkit_fakes() -> FakeServices:
    """Return the in-process fakes that :func:`reflexkit_app` is bound to."""
    from reflexkit.containers import FakeServices  # noqa: PLC0415

    return FakeServices()


@pytest.fixture
def reflexkit_app(
    reflexkit_project: LoadedProject, reflexkit_fakes: FakeServices
) -> Iterator[Application]:
    """Return the application of :func:`reflexkit_project`, bound to the fakes."""
    from reflexkit.containers import build_application, fake_services  # noqa: PLC0415

    app = build_application(reflexkit_project)
    with fake_services(app, reflexkit_fakes):
        yield app
    app.shutdown_resources()


@pytest.fixture
def reflexkit_memory() -> InMemoryMemory:
    """Return an empty in-memory store."""
    from reflexkit.memory import InMemoryMemory  # noqa: PLC0415

    return InMemoryMemory()


@pytest.fixture
def fake_messages_api() -> Iterator[FakeMessagesApi]:
    """Return a scripted fake Messages API on 127.0.0.1; point ``base_url`` at its ``url``."""
    from reflexkit.testing.fake_messages_api import FakeMessagesApi  # noqa: PLC0415

    with FakeMessagesApi() as api:
        yield api


@pytest.fixture
def fake_openai_api() -> Iterator[FakeOpenAIApi]:
    """Return a scripted OpenAI-compatible API on 127.0.0.1; agents get ``url + "/v1"``."""
    from reflexkit.testing.fake_openai_api import FakeOpenAIApi  # noqa: PLC0415

    with FakeOpenAIApi() as api:
        yield api
