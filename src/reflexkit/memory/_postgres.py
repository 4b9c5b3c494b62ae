"""Fleet memory: reflections in PostgreSQL, shared by orchestrators on many machines.

Needs the ``postgres`` extra (``pip install 'reflexkit[postgres]'``: psycopg 3 and its pool).

Each record is one row: its id (the key: copying a history twice adds nothing), the subtask,
the creation time, the category, failure type and source (for ``stats``), and the record's
camelCase JSON exactly as the JSONL store writes it. ``recent`` is an index lookup on
``(subtask_id, seq)``, or ``(task_id, subtask_id, seq)`` with a task id: ``seq`` is the order
of appends, which is what "recent" means in every backend.

When the database can't be reached, nothing is lost: an append goes to a local JSONL spool (a
:class:`~reflexkit.memory.JsonlMemory`, with all its guarantees) and a warning says so; reads
answer from the spool. The next operation that reaches the database replays the spool, inside
one transaction, before doing its own work; the reflection id makes the replay idempotent, so
a crash between the commit and the truncation of the spool can't make a duplicate.

The schema is created or migrated on first use, under a transaction-scoped advisory lock, so
any number of processes can start against a new database at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from reflexkit._files import atomic_write, open_regular
from reflexkit._lines import LineWriter
from reflexkit.exceptions import CorruptRecordWarning, StoreError
from reflexkit.memory._codec import (
    MAX_LINE,
    clean_text,
    decode_line,
    encode_line,
    read_lines,
    valid_text,
)
from reflexkit.memory._jsonl import JsonlMemory
from reflexkit.memory._protocols import MemoryStats
from reflexkit.models import Reflection
from reflexkit.redaction._gate import gated_reflection, stored

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["SCHEMA_VERSION", "PostgresMemory"]

log = logging.getLogger("reflexkit.memory")


class _ConnectErrors(logging.Filter):
    """Keep the pool's warnings off the terminal (debug logs), and why it couldn't connect (#19).

    The pool logs why a connection failed ("database ... does not exist") and then raises a
    bare ``PoolTimeout``; the cause goes into our one-line error instead.
    """

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "error connecting in %r: %s" and isinstance(record.args, tuple):
            self.last = _why(record.args[-1]) if isinstance(record.args[-1], BaseException) else ""
        if record.levelno > logging.WARNING:
            return True
        # Its warnings ("couldn't stop thread" after an outage...) are for --debug only.
        log.debug("psycopg.pool: %s", record.getMessage())
        return False


_CONNECT_ERRORS = _ConnectErrors()
logging.getLogger("psycopg.pool").addFilter(_CONNECT_ERRORS)

_TABLE = "reflexkit_reflections"
_LOCK_ID = 0x7265666C78_6B6974  # "reflxkit": the advisory lock of migrations
_PRUNE_BATCH = 5_000
_COPY_BATCH = 1_000
_RETRY_AFTER_S = 2.0

MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE {_TABLE} (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        subtask_id text NOT NULL,
        created_at timestamptz NOT NULL,
        category text NOT NULL,
        failure_type text NOT NULL,
        source text NOT NULL,
        record text NOT NULL
    );
    CREATE INDEX {_TABLE}_recent ON {_TABLE} (subtask_id, seq);
    CREATE INDEX {_TABLE}_created ON {_TABLE} (created_at);
    """,
    # 2: recent(subtask, task_id=T) is an index lookup too, not a filter over the subtask's
    # rows of every task (#13); the column is filled from the records already stored.
    f"""
    ALTER TABLE {_TABLE} ADD COLUMN task_id text;
    UPDATE {_TABLE} SET task_id = coalesce(record::jsonb ->> 'taskId', '');
    ALTER TABLE {_TABLE} ALTER COLUMN task_id SET NOT NULL;
    CREATE INDEX {_TABLE}_task_recent ON {_TABLE} (task_id, subtask_id, seq);
    """,  # noqa: S608 -- constants
)
"""The schema, one entry per version; a new version appends an entry, never edits one."""

SCHEMA_VERSION = len(MIGRATIONS)

_INSERT = (
    f"INSERT INTO {_TABLE} (id, task_id, subtask_id, created_at, category, failure_type,"  # noqa: S608 -- a constant
    " source, record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
)
_RECENT = (
    f"SELECT seq, record FROM {_TABLE} WHERE subtask_id = %s"  # noqa: S608 -- a constant
    " ORDER BY seq DESC LIMIT %s"
)
_RECENT_OF_TASK = (
    f"SELECT seq, record FROM {_TABLE} WHERE task_id = %s AND subtask_id = %s"  # noqa: S608
    " ORDER BY seq DESC LIMIT %s"
)


def _row(r: Reflection, line: bytes) -> tuple[Any, ...]:
    r = valid_text(r)  # its ids as the line has them (lone surrogates as U+FFFD)
    return (
        r.id,
        r.task_id,
        r.subtask_id,
        r.created_at,
        r.category.value,
        r.failure_type.value,
        r.source.value,
        line.rstrip(b"\n").decode(),
    )


class PostgresMemory:
    """Episodic memory in a PostgreSQL table, with a local spool for outages.

    Args:
        dsn: The connection string (``postgresql://user@host:5432/db``). Give it through an
            environment variable (project.json names it in ``memory.dsnEnv``), never in a file.
        spool: The local JSONL file that takes appends while the database is away.
        max_connections: The size of the connection pool.
        connect_timeout_s: How long one attempt to connect may take.
    """

    def __init__(
        self,
        dsn: str,
        *,
        spool: str | os.PathLike[str],
        max_connections: int = 4,
        connect_timeout_s: float = 3.0,
    ) -> None:
        try:
            import psycopg  # noqa: PLC0415 -- the optional extra
            from psycopg_pool import ConnectionPool, PoolTimeout  # noqa: PLC0415
        except ImportError as err:
            msg = "the postgres backend needs psycopg: pip install 'reflexkit[postgres]'"
            raise StoreError(msg) from err
        self._psycopg = psycopg
        self._unreachable: tuple[type[BaseException], ...] = (
            psycopg.OperationalError,
            PoolTimeout,
        )
        self._timeout = connect_timeout_s

        def new_pool() -> ConnectionPool[psycopg.Connection[Any]]:
            return ConnectionPool(
                dsn,
                min_size=0,
                max_size=max_connections,
                kwargs={"connect_timeout": max(1, round(connect_timeout_s)), "autocommit": False},
                check=ConnectionPool.check_connection,
                open=False,
                name="reflexkit",
            )

        self._new_pool = new_pool
        self._pool = new_pool()
        self._spool = JsonlMemory(spool)
        self._lock = threading.Lock()
        self._ready = False
        self._opened = False
        self._where = _redact_dsn(dsn)
        self._away_until = 0.0
        self._away_reason = ""

    def __repr__(self) -> str:
        return f"PostgresMemory({self._where!r}, spool={str(self._spool.path)!r})"

    @property
    def where(self) -> str:
        """The database, as messages name it (``postgresql://user@host:port/name``, no password)."""
        return self._where

    @property
    def spool(self) -> JsonlMemory:
        """The local spool of appends made while the database was away."""
        return self._spool

    # --- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection pool and the spool."""
        with self._lock:
            if self._opened:
                self._pool.close()
                self._opened = False
        self._spool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """Lend a pooled connection; fail at once for a while after the database was away.

        Without that pause every operation during an outage would wait the whole connect
        timeout before falling back to the spool.
        """
        with self._lock:
            if not self._opened:
                self._pool.open(wait=False)
                self._opened = True
            if time.monotonic() < self._away_until:
                raise self._psycopg.OperationalError(self._away_reason)
            pool = self._pool
        _CONNECT_ERRORS.last = ""  # what the pool reports from now on is this attempt's
        try:
            with pool.connection(timeout=self._timeout) as conn:
                yield conn
        except self._unreachable as err:
            with self._lock:
                self._away_until = time.monotonic() + _RETRY_AFTER_S
                self._away_reason = f"{_why(err)} (not retried for {_RETRY_AFTER_S:g} s)"
                if self._pool is pool:
                    # The pool backs off its reconnection attempts ever longer while the
                    # database is away; a new one connects as soon as it is back.
                    self._pool = self._new_pool()
                    self._opened = False
            pool.close(timeout=0)
            raise

    def _prepare(self, conn: psycopg.Connection[Any]) -> None:
        """Create or migrate the schema once per instance, then replay the spool."""
        if not self._ready:
            migrate(conn)
            self._ready = True
        self._replay(conn)

    # --- the spool -----------------------------------------------------------------------

    def _replay(self, conn: psycopg.Connection[Any]) -> int:
        path = self._spool.path
        try:
            # The safe reader's open: a link planted at the spool is never followed (nor is
            # what it points at emptied), a FIFO never waited on, a device never read.
            fd = open_regular(path)
        except FileNotFoundError:
            return 0
        except OSError as err:
            msg = f"can't replay the spool {path}: {err.strerror or err}"
            raise StoreError(msg) from err
        try:
            if os.fstat(fd).st_size == 0:
                return 0
            fcntl.flock(fd, fcntl.LOCK_EX)  # the spool's writers wait; so do other replayers
            now, held = path.lstat(), os.fstat(fd)
            if (now.st_ino, now.st_dev) != (held.st_ino, held.st_dev):
                return 0  # another replayer emptied it meanwhile
            rows, rejected = self._spooled(fd, path)
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(_INSERT, rows)
            _set_aside(path, rejected)
            # Only after the commit (a crash before it replays again), and through the one
            # atomic writer: the path gets a new empty file, never a truncated link target.
            # Writers waiting on the old file see the path names another and reopen it.
            atomic_write(path, b"")
            self._spool.replaced()  # before the old file's lock goes: writers then reopen
        finally:
            os.close(fd)
        log.warning("replayed %d spooled reflections into the database", len(rows))
        return len(rows)

    @staticmethod
    def _spooled(fd: int, path: Path) -> tuple[list[tuple[Any, ...]], list[bytes]]:
        """The rows of the spool's readable lines, and the lines that are not records.

        A line too long to be a record (over 16 MiB: a blob, not a record) is dropped with
        a warning, never held.
        """
        rows = []
        rejected = []
        size = os.fstat(fd).st_size
        upto = 0
        for offset, upto, line in read_lines(fd, 0, size):  # noqa: B007 -- upto: the last
            if line is None or not line.strip():
                if line is None:
                    log.warning("%s: a line at byte %d is too long to replay", path, offset)
                continue
            try:
                r = decode_line(line)
            except ValueError as err:
                log.warning("%s: the line at byte %d can't be replayed: %s", path, offset, err)
                rejected.append(line)
                continue
            gated = gated_reflection(r)  # the spool is a file the agent can write
            rows.append(_row(gated, line if gated is r else encode_line(gated)))
        if upto < size:
            log.warning("%s: a torn last line (no newline) can't be replayed", path)
            if size - upto <= MAX_LINE:
                rejected.append(os.pread(fd, size - upto, upto))
        return rows, rejected

    def sync(self) -> int:
        """Replay the spool into the database now; return how many records were replayed.

        Raises:
            StoreError: The database can't be reached.
        """
        try:
            with self._connection() as conn:
                if not self._ready:
                    migrate(conn)
                    self._ready = True
                return self._replay(conn)
        except self._unreachable as err:
            raise _failed(err, "can't reach the database at", self._where) from err

    # --- the protocol --------------------------------------------------------------------

    def append(self, reflection: Reflection, /) -> None:
        """Insert one reflection; into the local spool (with a warning) when the database is away.

        Raises:
            StoreError: Neither the database nor the spool can be written.
        """
        self.append_once(reflection)

    def append_once(self, reflection: Reflection, /) -> bool:
        """Insert *reflection* unless its id is stored (the table's key); ``True`` when new.

        While the database is away it goes to the spool (``True``, unless the spool holds
        it already); the replay inserts each id once.

        Raises:
            StoreError: Neither the database nor the spool can be written.
        """
        reflection = stored(reflection)  # the outbound gate, by construction
        line = encode_line(reflection)
        try:
            with self._connection() as conn:
                self._prepare(conn)
                return conn.execute(_INSERT, _row(reflection, line)).rowcount != 0
        except self._unreachable as err:
            log.warning(
                "can't reach the database at %s (%s); reflection %s kept in %s until it is back",
                self._where,
                _why(err),
                reflection.id,
                self._spool.path,
            )
            return self._spool.append_once(reflection)
        except self._psycopg.Error as err:
            raise _failed(err, "can't append to", self._where) from err

    def recent(
        self, subtask_id: str, *, limit: int, task_id: str | None = None
    ) -> list[Reflection]:
        """Return the *limit* most recently appended reflections of a subtask, oldest first.

        While the database is away, the answer comes from the spool, with a warning.

        Raises:
            ValueError: *limit* is below 1.
        """
        if limit < 1:
            msg = f"limit must be >= 1, got {limit}"
            raise ValueError(msg)
        subtask_id = clean_text(subtask_id)  # as stored (valid_text)
        task_id = None if task_id is None else clean_text(task_id)
        try:
            with self._connection() as conn:
                self._prepare(conn)
                if task_id is None:
                    query = conn.execute(_RECENT, (subtask_id, limit))
                else:
                    query = conn.execute(_RECENT_OF_TASK, (task_id, subtask_id, limit))
                rows = query.fetchall()
        except self._unreachable as err:
            log.warning(
                "can't reach the database at %s (%s); answering from %s",
                self._where,
                _why(err),
                self._spool.path,
            )
            return self._spool.recent(subtask_id, limit=limit, task_id=task_id)
        except self._psycopg.Error as err:
            raise _failed(err, "can't read", self._where) from err
        return [r for r in map(self._decode, reversed(rows)) if r is not None]

    def _decode(self, row: tuple[int, str]) -> Reflection | None:
        seq, record = row
        try:
            return decode_line(record.encode())
        except ValueError as err:
            warnings.warn(
                f"{self._where}: skipped the record at seq {seq}: {err}",
                CorruptRecordWarning,
                stacklevel=4,
            )
            return None

    def prune(self, *, older_than: datetime) -> int:
        """Delete the reflections created before *older_than*, in batches; return how many.

        Each batch is its own short transaction, so appends and reads go on meanwhile.

        Raises:
            StoreError: The database can't be reached.
        """
        if older_than.tzinfo is None:
            msg = "older_than must be timezone-aware"
            raise ValueError(msg)
        removed = 0
        try:
            with self._connection() as conn:
                self._prepare(conn)
                conn.commit()
                while True:
                    with conn.transaction():
                        count = conn.execute(
                            f"DELETE FROM {_TABLE} WHERE seq IN (SELECT seq FROM {_TABLE}"  # noqa: S608
                            " WHERE created_at < %s ORDER BY seq LIMIT %s)",
                            (older_than, _PRUNE_BATCH),
                        ).rowcount
                    removed += count
                    if count < _PRUNE_BATCH:
                        break
        except self._psycopg.Error as err:
            raise _failed(err, "can't prune", self._where) from err
        except self._unreachable as err:
            raise _failed(err, "can't reach the database at", self._where) from err
        return removed

    def stats(self) -> MemoryStats:
        """Count the records, subtasks, categories, failure types and sources.

        Raises:
            StoreError: The database can't be reached.
        """
        try:
            with self._connection() as conn:
                self._prepare(conn)
                totals = conn.execute(
                    f"SELECT count(*), count(DISTINCT subtask_id),"  # noqa: S608
                    f" pg_total_relation_size('{_TABLE}') FROM {_TABLE}"
                ).fetchone()
                records, subtasks, size = totals or (0, 0, 0)
                by: dict[str, dict[str, int]] = {}
                for column in ("category", "failure_type", "source"):
                    rows = conn.execute(
                        f"SELECT {column}, count(*) FROM {_TABLE} GROUP BY 1"  # noqa: S608
                    ).fetchall()
                    by[column] = {str(k): int(v) for k, v in rows}
        except self._unreachable as err:
            raise _failed(err, "can't reach the database at", self._where) from err
        except self._psycopg.Error as err:
            raise _failed(err, "can't read", self._where) from err
        return MemoryStats(
            records=int(records),
            subtasks=int(subtasks),
            by_category=by["category"],
            by_failure_type=by["failure_type"],
            by_source=by["source"],
            size_bytes=int(size),
        )

    def __iter__(self) -> Iterator[Reflection]:
        """Yield every record in append order (from the spool while the database is away)."""
        try:
            with self._connection() as conn:
                self._prepare(conn)
                conn.commit()
                with conn.transaction(), conn.cursor(name="reflexkit_all") as cur:
                    cur.itersize = 1_000
                    cur.execute(f"SELECT seq, record FROM {_TABLE} ORDER BY seq")  # noqa: S608
                    rows = list(cur)  # a snapshot: the connection goes back to the pool
        except self._unreachable as err:
            log.warning(
                "can't reach the database at %s (%s); reading the spool", self._where, _why(err)
            )
            return iter(self._spool)
        except self._psycopg.Error as err:
            raise _failed(err, "can't read", self._where) from err
        return (r for r in map(self._decode, rows) if r is not None)

    def add_many(self, reflections: Iterator[Reflection]) -> int:
        """Insert reflections in batches, skipping ids already present; return how many were new.

        Raises:
            StoreError: The database can't be reached or written.
        """
        added = 0
        try:
            with self._connection() as conn:
                self._prepare(conn)
                conn.commit()
                batch: list[tuple[Any, ...]] = []
                for r in map(gated_reflection, reflections):  # read from a file: gated again
                    batch.append(_row(r, encode_line(r)))
                    if len(batch) >= _COPY_BATCH:
                        added += _insert_batch(conn, batch)
                        batch = []
                added += _insert_batch(conn, batch)
        except self._unreachable as err:
            raise _failed(err, "can't reach the database at", self._where) from err
        except self._psycopg.Error as err:
            raise _failed(err, "can't write", self._where) from err
        return added


def _insert_batch(conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]) -> int:
    if not rows:
        return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(_INSERT, rows, returning=False)
        return max(cur.rowcount, 0)


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Create or upgrade the schema to :data:`SCHEMA_VERSION`; return the version found.

    Safe when many processes do it at once: they queue on an advisory lock.

    Raises:
        StoreError: The database holds a newer schema than this reflexkit knows.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
        conn.execute("CREATE TABLE IF NOT EXISTS reflexkit_schema (version integer NOT NULL)")
        row = conn.execute("SELECT coalesce(max(version), 0) FROM reflexkit_schema").fetchone()
        found = int(row[0]) if row else 0
        if found > SCHEMA_VERSION:
            msg = (
                f"the database holds reflexkit schema version {found}, newer than this "
                f"reflexkit knows ({SCHEMA_VERSION}); upgrade reflexkit"
            )
            raise StoreError(msg)
        for version in range(found + 1, SCHEMA_VERSION + 1):
            conn.execute(MIGRATIONS[version - 1])
            conn.execute("INSERT INTO reflexkit_schema (version) VALUES (%s)", (version,))
    return found


def _set_aside(spool: Path, lines: list[bytes]) -> None:
    """Append the spool's *lines* that are not records to ``<spool>.rejected`` (0600).

    Kept for a human to look at, written before the spool is emptied: a crash between the
    two sets them aside twice, never loses them.
    """
    if not lines:
        return
    rejected = spool.with_name(spool.name + ".rejected")
    try:
        with LineWriter(rejected, mode=0o600) as out:
            for line in lines:
                out.append(line.replace(b"\n", b" "))
    except (OSError, ValueError) as err:
        log.warning("%s: can't set %d lines aside: %s", rejected, len(lines), err)
        return
    log.warning("%s: %d spooled lines that can't be replayed were set aside", rejected, len(lines))


def _failed(err: BaseException, action: str, where: str) -> StoreError:
    return StoreError(f"{action} {where}: {_why(err)}")


def _why(err: BaseException) -> str:
    if type(err).__name__ == "PoolTimeout" and _CONNECT_ERRORS.last:
        return _CONNECT_ERRORS.last  # the pool's bare timeout hides the real cause
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _redact_dsn(dsn: str) -> str:
    """The DSN without its password, for messages."""
    try:
        from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415
    except ImportError:  # pragma: no cover -- the constructor checked
        return "the database"
    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 -- a bad DSN: say nothing of it
        return "the database"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    name = parts.get("dbname") or ""
    user = parts.get("user")
    return f"postgresql://{f'{user}@' if user else ''}{host}:{port}/{name}"
