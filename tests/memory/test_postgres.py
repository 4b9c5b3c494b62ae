"""The postgres backend against a real server: the contract, processes, outages, copies."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import orjson
import psycopg
import pytest
from click.testing import CliRunner

from reflexkit.cli import cli
from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory import EpisodicMemory, JsonlMemory
from reflexkit.memory._codec import encode_line
from reflexkit.memory._postgres import _TABLE, MIGRATIONS, SCHEMA_VERSION, PostgresMemory
from reflexkit.testing.memory_contract import MemoryContract, make_reflection
from reflexkit.testing.postgres_server import PostgresServer


class TestPostgresContract(MemoryContract):
    """The published suite, unchanged, on PostgreSQL."""

    @pytest.fixture
    def open_memory(self, database: str, tmp_path: Path) -> Callable[[], EpisodicMemory]:
        """Open handles on one fresh database."""
        return lambda: PostgresMemory(database, spool=tmp_path / "spool.jsonl")


APPENDER = """
import sys
import attrs
from reflexkit.memory._postgres import PostgresMemory
from reflexkit.testing.memory_contract import make_reflection

dsn, spool, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with PostgresMemory(dsn, spool=spool) as store:
    for i in range(count):
        r = make_reflection(f"{name}-s{i % 5}", attempt=i + 1)
        store.append(attrs.evolve(r, id=f"{name}-{i}"))
"""


@pytest.mark.slow
def test_eight_processes_append_at_once_to_a_new_database(database: str, tmp_path: Path) -> None:
    """8 processes start on an empty database at once: one schema, no record lost or doubled."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, database, str(tmp_path / f"spool{n}"), f"p{n}", "300"]
        )
        for n in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    with psycopg.connect(database) as conn:
        versions = conn.execute("SELECT version FROM reflexkit_schema ORDER BY 1").fetchall()
    assert versions == [(v,) for v in range(1, SCHEMA_VERSION + 1)]  # each step once
    with PostgresMemory(database, spool=tmp_path / "reader") as store:
        ids = Counter(r.id for r in store)
        assert set(ids) == {f"p{n}-{i}" for n in range(8) for i in range(300)}
        assert max(ids.values()) == 1
        assert [r.attempt_number for r in store.recent("p3-s2", limit=3)] == [288, 293, 298]


def test_the_task_id_migration_fills_the_column_from_the_records(
    database: str, tmp_path: Path
) -> None:
    """A version-1 database gets a task_id column, filled and indexed for recent(task_id=)."""
    mine = [make_reflection("docs", task_id="t-api", attempt=n) for n in range(1, 4)]
    theirs = [make_reflection("docs", task_id="t-web", attempt=n) for n in range(1, 40)]
    with psycopg.connect(database) as conn:
        conn.execute(MIGRATIONS[0])
        conn.execute("CREATE TABLE reflexkit_schema (version integer NOT NULL)")
        conn.execute("INSERT INTO reflexkit_schema VALUES (1)")
        for r in [*mine, *theirs]:
            conn.execute(
                "INSERT INTO reflexkit_reflections (id, subtask_id, created_at, category,"
                " failure_type, source, record) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    r.id,
                    r.subtask_id,
                    r.created_at,
                    r.category.value,
                    r.failure_type.value,
                    r.source.value,
                    encode_line(r).decode().rstrip(),
                ),
            )
    with PostgresMemory(database, spool=tmp_path / "spool.jsonl") as store:
        assert store.recent("docs", limit=2, task_id="t-api") == mine[1:]
        later = make_reflection("docs", task_id="t-api", attempt=9)
        store.append(later)
        assert store.recent("docs", limit=2, task_id="t-api") == [mine[2], later]
    with psycopg.connect(database) as conn:
        assert conn.execute("SELECT max(version) FROM reflexkit_schema").fetchone() == (2,)
        nulls = conn.execute("SELECT count(*) FROM reflexkit_reflections WHERE task_id IS NULL")
        assert nulls.fetchone() == (0,)
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT seq, record FROM reflexkit_reflections"
            " WHERE task_id = 't-api' AND subtask_id = 'docs' ORDER BY seq DESC LIMIT 2"
        ).fetchall()
    assert "reflexkit_reflections_task_recent" in " ".join(row[0] for row in plan)


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of the test's own, to stop and start."""
    with PostgresServer() as server:
        yield server


def test_an_outage_loses_nothing(
    own_server: PostgresServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Appends during an outage go to the spool and reach the database exactly once."""
    database = own_server.create_database("outage")
    store = PostgresMemory(database, spool=tmp_path / "spool.jsonl", connect_timeout_s=1)
    before = [make_reflection(attempt=n) for n in range(1, 6)]
    during = [make_reflection(attempt=n) for n in range(6, 11)]
    after = make_reflection(attempt=11)
    try:
        for r in before:
            store.append(r)
        own_server.stop()
        with caplog.at_level(logging.WARNING, logger="reflexkit.memory"):
            for r in during:
                store.append(r)  # never raises
            assert store.recent("sub-1", limit=3) == during[-3:]  # from the spool
        assert "kept in" in caplog.text
        assert len(list(store.spool)) == 5
        own_server.start()
        store._away_until = 0  # don't wait out the pause after an outage
        store.append(after)
        assert list(store) == [*before, *during, after]
        assert list(store.spool) == []
        assert store.recent("sub-1", limit=2) == [during[-1], after]
    finally:
        store.close()


def test_a_second_replay_adds_nothing(database: str, tmp_path: Path) -> None:
    """A spool replayed twice (a crash before it was emptied) leaves one copy of each record."""
    spool = tmp_path / "spool.jsonl"
    records = [make_reflection(attempt=n) for n in range(1, 4)]
    for r in records:
        JsonlMemory(spool).append(r)
    saved = spool.read_bytes()
    with PostgresMemory(database, spool=spool) as store:
        assert store.sync() == 3
        spool.write_bytes(saved)  # as if the process died before truncating it
        assert store.sync() == 3
        assert list(store) == records


def test_a_spool_that_is_a_link_is_refused_and_its_target_kept(
    database: str, tmp_path: Path
) -> None:
    """A link planted at the spool: never replayed from, and what it points at never emptied."""
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(encode_line(make_reflection()))
    before = victim.read_bytes()
    spool = tmp_path / "spool.jsonl"
    spool.symlink_to(victim)
    with PostgresMemory(database, spool=spool) as store:
        with pytest.raises(StoreError, match="symbolic link"):
            store.sync()
        with pytest.raises(StoreError):
            store.stats()
    assert victim.read_bytes() == before
    assert spool.is_symlink()


def test_a_replayed_spool_is_replaced_not_truncated(database: str, tmp_path: Path) -> None:
    """After a replay the spool is a new empty file (the one atomic writer), and appends go on."""
    spool = tmp_path / "spool.jsonl"
    JsonlMemory(spool).append(make_reflection(attempt=1))
    held = spool.stat().st_ino
    with PostgresMemory(database, spool=spool) as store:
        assert store.sync() == 1
        assert spool.read_bytes() == b""
        assert spool.stat().st_ino != held
        store.spool.append(make_reflection(attempt=2))
        assert store.sync() == 1
        assert [r.attempt_number for r in store] == [1, 2]


@pytest.fixture
def postgres_project(project_dir: Path, database: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose memory backend is postgres, the DSN in the environment."""
    monkeypatch.setenv("FLEET_DB", database)
    (project_dir / ".reflexkit").mkdir()
    (project_dir / ".reflexkit" / "project.json").write_text(
        json.dumps(
            {
                "reflexion": {"backend": "heuristic"},
                "memory": {"backend": "postgres", "dsnEnv": "FLEET_DB"},
            }
        )
    )
    return project_dir


def test_copy_both_ways_twice(postgres_project: Path, database: str) -> None:
    """`memory copy` moves a history either way; running it again copies nothing."""
    jsonl = JsonlMemory(postgres_project / ".reflexkit" / "memory" / "reflections.jsonl")
    records = [make_reflection(f"s{n % 3}", attempt=n + 1) for n in range(10)]
    for r in records:
        jsonl.append(r)
    runner = CliRunner()
    first = runner.invoke(cli, ["memory", "copy", "--from", "jsonl", "--to", "postgres"])
    assert first.exit_code == 0, first.stderr
    assert "copied 10 reflections from jsonl to postgres (0 already there)" in first.stdout
    again = runner.invoke(cli, ["memory", "copy", "--from", "jsonl", "--to", "postgres"])
    assert "copied 0 reflections from jsonl to postgres (10 already there)" in again.stdout
    jsonl.path.unlink()
    back = runner.invoke(cli, ["memory", "copy", "--from", "postgres", "--to", "jsonl"])
    assert "copied 10 reflections from postgres to jsonl (0 already there)" in back.stdout
    runner.invoke(cli, ["memory", "copy", "--from", "postgres", "--to", "jsonl"])
    assert list(JsonlMemory(jsonl.path)) == records
    with PostgresMemory(database, spool=postgres_project / "spool") as store:
        assert list(store) == records


def test_the_cli_uses_the_database(postgres_project: Path) -> None:
    """With memory.backend postgres, reflect and recent go through the database."""
    failure = {
        "taskId": "t",
        "subtaskId": "fleet",
        "attemptNumber": 1,
        "errorOutput": "FAILED tests/test_a.py::test_b - assert 1 == 2",
    }
    runner = CliRunner()
    assert runner.invoke(cli, ["reflect"], input=json.dumps(failure)).exit_code == 0
    shown = runner.invoke(cli, ["recent", "fleet", "--format", "json"])
    assert json.loads(shown.stdout)[0]["subtaskId"] == "fleet"
    assert not (postgres_project / ".reflexkit" / "memory" / "reflections.jsonl").exists()


@pytest.mark.usefixtures("postgres_project")
def test_a_missing_dsn_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DSN in the environment: exit 2, naming the variable."""
    monkeypatch.delenv("FLEET_DB")
    result = CliRunner().invoke(cli, ["stats"])
    assert result.exit_code == 2
    assert "$FLEET_DB (memory.dsnEnv) is not set" in result.stderr


def test_records_of_a_newer_version_read_without_its_fields(database: str, tmp_path: Path) -> None:
    """A row a newer reflexkit wrote, with fields this one doesn't know, reads as a record."""
    old = make_reflection("docs", task_id="t-api", attempt=1)
    new = make_reflection("docs", task_id="t-api", attempt=2)
    with PostgresMemory(database, spool=tmp_path / "spool.jsonl") as store:
        store.append(old)
    record = {**orjson.loads(encode_line(new)), "reviewedBy": "judge", "tags": ["x"]}
    with psycopg.connect(database) as conn:
        conn.execute(
            "INSERT INTO reflexkit_reflections (id, task_id, subtask_id, created_at, category,"
            " failure_type, source, record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                new.id,
                new.task_id,
                new.subtask_id,
                new.created_at,
                new.category.value,
                new.failure_type.value,
                new.source.value,
                orjson.dumps(record).decode(),
            ),
        )
    with (
        warnings.catch_warnings(),
        PostgresMemory(database, spool=tmp_path / "spool.jsonl") as store,
    ):
        warnings.simplefilter("error", CorruptRecordWarning)
        assert store.recent("docs", limit=3, task_id="t-api") == [old, new]
        assert list(store) == [old, new]


PLANTED_TOKEN = "ghp_" + "R4nd0mFakeT0ken" * 2 + "AbCdEf"


def _planted(subtask: str) -> bytes:
    """A memory line as an agent (or an older version) wrote it: a token in its analysis."""
    r = make_reflection(subtask)
    return encode_line(attrs.evolve(r, analysis=f"deploy with token={PLANTED_TOKEN}"))


def test_copy_and_replay_pass_the_gate_into_the_shared_database(
    postgres_project: Path, database: str, tmp_path: Path
) -> None:
    """Records read from a file the agent can write reach the fleet's database redacted.

    `memory copy` copied them as they were, and so did the replay of a planted spool line.
    """
    memory = postgres_project / ".reflexkit" / "memory" / "reflections.jsonl"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_bytes(_planted("copied"))
    done = CliRunner().invoke(cli, ["memory", "copy", "--from", "jsonl", "--to", "postgres"])
    assert done.exit_code == 0, done.stderr
    spool = tmp_path / "planted-spool.jsonl"
    spool.write_bytes(_planted("spooled"))
    with PostgresMemory(database, spool=spool) as store:
        assert store.sync() == 1
        held = list(store)
    assert {r.subtask_id for r in held} == {"copied", "spooled"}
    for r in held:
        assert PLANTED_TOKEN not in r.analysis, r
        assert "[REDACTED:github_token]" in r.analysis
    with psycopg.connect(database) as conn:
        rows = conn.execute(f"select record from {_TABLE}").fetchall()  # noqa: S608 -- ours
    assert PLANTED_TOKEN not in repr(rows)


def test_spooled_lines_that_cant_be_replayed_are_kept_aside(
    database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Lines of the spool that are not records are moved to ``<spool>.rejected``, not lost.

    A line edited by hand, a record of the wrong shape, a torn last line: the replay stores
    what it can, says which lines it set aside and where, and the spool starts empty.
    """
    spool = tmp_path / "spool.jsonl"
    good = make_reflection(attempt=1)
    wrong = orjson.loads(encode_line(make_reflection(attempt=2)))
    wrong["attemptNumber"] = "two"
    bad = [b"{not json", orjson.dumps(wrong), b'{"id":"torn']
    spool.write_bytes(encode_line(good) + bad[0] + b"\n" + bad[1] + b"\n" + bad[2])
    with (
        caplog.at_level(logging.WARNING, logger="reflexkit.memory"),
        PostgresMemory(database, spool=spool) as store,
    ):
        assert store.sync() == 1
        assert list(store) == [good]
    assert spool.read_bytes() == b""
    rejected = tmp_path / "spool.jsonl.rejected"
    assert rejected.read_bytes().splitlines() == bad
    assert str(rejected) in caplog.text


def test_text_that_is_not_valid_unicode_reaches_the_database(database: str, tmp_path: Path) -> None:
    """Lone surrogates are stored as U+FFFD, and found by the id they were given."""
    odd = make_reflection("sub-caf\udce9", analysis="caf\udce9.py failed")
    with PostgresMemory(database, spool=tmp_path / "spool.jsonl") as store:
        store.append(odd)
        (got,) = store.recent("sub-caf\udce9", limit=3)
        assert (got.subtask_id, got.analysis) == ("sub-caf\ufffd", "caf\ufffd.py failed")
        assert list(store.spool) == []
