"""A throw-away PostgreSQL server for tests: a temporary data folder, a free port, trust auth.

It runs the server binaries of the machine (``initdb``, ``pg_ctl``, ``postgres``: Debian's
``postgresql`` package puts them in ``/usr/lib/postgresql/<version>/bin``). PostgreSQL refuses
to run as root, so under root the server runs as the ``postgres`` user (or ``nobody``).

    with PostgresServer() as server:
        dsn = server.create_database("t1")
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["PostgresServer", "find_server_binaries"]


def find_server_binaries() -> Path | None:
    """Return the folder of ``initdb`` and ``pg_ctl``, or None when there is no server here."""
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    for candidate in (shutil.which("pg_ctl"), *debian):
        if candidate:
            folder = Path(candidate).resolve().parent
            if (folder / "initdb").exists():
                return folder
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A PostgreSQL server on 127.0.0.1 in a temporary folder, removed on :meth:`stop`."""

    def __init__(self, *, bin_dir: Path | None = None) -> None:
        found = bin_dir or find_server_binaries()
        if found is None:
            msg = "no PostgreSQL server binaries (initdb, pg_ctl) on this machine"
            raise RuntimeError(msg)
        self.bin_dir = found
        self.port = _free_port()
        self._tmp = Path(tempfile.mkdtemp(prefix="reflexkit-pg-"))
        self.data_dir = self._tmp / "data"
        self._user: str | None = None
        if os.geteuid() == 0:
            self._user = "postgres" if _user_exists("postgres") else "nobody"
            entry = pwd.getpwnam(self._user)
            os.chown(self._tmp, entry.pw_uid, entry.pw_gid)
        self.started = False

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin_dir / argv[0]), *argv[1:]]
        if self._user is not None:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)  # noqa: S603

    def dsn(self, dbname: str = "postgres") -> str:
        """The connection string of a database on this server."""
        return f"postgresql://reflexkit@127.0.0.1:{self.port}/{dbname}"

    def start(self) -> Self:
        """Create the cluster (first time) and start the server; wait until it accepts."""
        if not self.data_dir.exists():
            self._run(
                "initdb",
                "-D",
                str(self.data_dir),
                "-U",
                "reflexkit",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            )
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1"
            " -c unix_socket_directories='' -c fsync=off"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data_dir),
            "-o",
            options,
            "-l",
            str(self._tmp / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        self.started = True
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.5),
            ):
                return self
            time.sleep(0.05)
        msg = f"PostgreSQL did not start; see {self._tmp / 'log'}"
        raise RuntimeError(msg)

    def stop(self, *, remove: bool = False) -> None:
        """Stop the server (fast shutdown); with *remove*, delete its folder too."""
        if self.started:
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop", check=False)
            self.started = False
        if remove:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def create_database(self, name: str) -> str:
        """Create an empty database and return its connection string."""
        import psycopg  # noqa: PLC0415 -- the optional extra

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop(remove=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
