"""A throwaway PostgreSQL server for tests: Debian's ``postgresql`` binaries (``/usr/lib/postgresql/*/bin``), a
temporary data directory, listening on 127.0.0.1 on a free port only (no Unix socket, no other address), a
password login; stopped and removed at the end.

Skips where PostgreSQL is not installed, unless ``ROOFCORE_REQUIRE_POSTGRES=1`` (CI), where that is a failure.
initdb refuses to run as root, so as root the server runs as the ``postgres`` system user (``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

USER = "roofline_test"


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    user: str
    password: str

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        pw = self.password if password is None else password
        return f"postgresql://{self.user}:{pw}@{self.host}:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def require_postgres() -> Path:
    """The bin folder, or skip (fail under ROOFCORE_REQUIRE_POSTGRES=1)."""
    import pytest

    bin_dir = binaries()
    problem = None if bin_dir else "PostgreSQL is not installed (apt-get install postgresql)"
    if problem is None:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            problem = "psycopg is not installed (pip install -e '.[dev]')"
    if problem:
        if os.environ.get("ROOFCORE_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{problem} and ROOFCORE_REQUIRE_POSTGRES=1", pytrace=False)
        pytest.skip(f"{problem}; set ROOFCORE_REQUIRE_POSTGRES=1 to fail instead of skipping.")
    return bin_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server() -> Iterator[PgServer]:
    """Start a server (see the module's docstring); stop it and delete its files on exit."""
    bin_dir = require_postgres()
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    base = Path(tempfile.mkdtemp(prefix="roofcore-pg-"))
    data, log, pwfile = base / "data", base / "server.log", base / "pw"
    password = secrets.token_urlsafe(12)
    pwfile.write_text(password + "\n")
    if as_root:
        shutil.chown(base, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    port = free_port()

    def run(*cmd: str) -> None:
        subprocess.run([*prefix, *cmd], check=True, capture_output=True, timeout=120)

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
        "--encoding=UTF8", "--no-locale")
    conf = (f"listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = ''\nfsync = off\n"
            "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 100\n")
    if as_root:
        run("sh", "-c", f"cat >> '{data / 'postgresql.conf'}' <<'EOF'\n{conf}EOF")
    else:
        with open(data / "postgresql.conf", "a") as fh:
            fh.write(conf)
    try:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "start")
        yield PgServer("127.0.0.1", port, USER, password)
    finally:
        with contextlib.suppress(Exception):
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)
