"""A real PostgreSQL server for the postgres backend's tests, started here and stopped after."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from reflexkit.testing.postgres_server import PostgresServer, find_server_binaries

_names = itertools.count()


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("REFLEXKIT_REQUIRE_POSTGRES"):  # CI: these tests must run
        pytest.fail(f"REFLEXKIT_REQUIRE_POSTGRES is set, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session (skipped where there is none to start)."""
    try:
        import psycopg  # noqa: F401, PLC0415
    except ImportError:
        _skip_or_fail("psycopg is not installed (pip install 'reflexkit[postgres]')")
    if find_server_binaries() is None:
        _skip_or_fail("no PostgreSQL server binaries here (Debian: apt-get install postgresql)")
    with PostgresServer() as server:
        yield server


@pytest.fixture
def database(postgres_server: PostgresServer) -> str:
    """The DSN of a new, empty database."""
    return postgres_server.create_database(f"t{os.getpid()}_{next(_names)}")
