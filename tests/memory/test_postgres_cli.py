"""The command line on the postgres backend: what stats shows and how failures read (#19)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

from reflexkit.memory._postgres import PostgresMemory
from reflexkit.testing.memory_contract import make_reflection
from reflexkit.testing.postgres_server import PostgresServer

from ..conftest import invoke_cli  # noqa: TID252 -- tests/ is no package; importlib mode resolves it


def _project(root: Path) -> None:
    (root / ".reflexkit").mkdir()
    (root / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "memory": {"backend": "postgres", "dsnEnv": "FLEET_DB"},
            }
        )
    )


def _reflexkit(root: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REFLEXKIT_", "ANTHROPIC_"))}
    env["FLEET_DB"] = dsn
    return subprocess.run(
        [sys.executable, "-m", "reflexkit", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_stats_describes_the_database(database: str, tmp_path: Path) -> None:
    """The table names the database and its table size, not the unused JSONL file."""
    _project(tmp_path)
    with PostgresMemory(database, spool=tmp_path / "spool.jsonl") as store:
        store.append(make_reflection())
    env = {"FLEET_DB": database}  # in this process: what stats prints is the claim
    shown = invoke_cli(tmp_path, "stats", env=env)
    assert shown.returncode == 0, shown.stderr
    assert f"database: {database}\n".encode() in shown.stdout
    assert b"table size (bytes)" in shown.stdout
    assert b"reflections.jsonl" not in shown.stdout
    assert b"file size" not in shown.stdout
    data = orjson.loads(invoke_cli(tmp_path, "stats", "--json", env=env).stdout)
    assert (data["backend"], data["location"], data["records"]) == ("postgres", database, 1)


def test_a_missing_database_says_so_in_one_line(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """The real cause, "does not exist", is in the error; the pool's warnings are not shown.

    A real process: the pool's retries and warnings end with it.
    """
    _project(tmp_path)
    missing = postgres_server.dsn("no_such_db")
    result = _reflexkit(tmp_path, missing, "stats")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert 'database "no_such_db" does not exist' in lines[0]
    assert "error connecting" not in result.stderr
