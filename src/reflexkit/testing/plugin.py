"""The reflexkit pytest plugin (entry point ``reflexkit``): fixtures for code that uses reflexkit.

``reflexkit_project``, ``reflexkit_app`` (bound to :class:`~reflexkit.containers.FakeServices`),
``reflexkit_fakes``, ``reflexkit_memory``, ``fake_messages_api`` and ``fake_openai_api``; each
is described in docs/testing.md. Heavy imports happen inside the fixtures.
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
