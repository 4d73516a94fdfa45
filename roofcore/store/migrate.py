"""Schema migrations, run programmatically when a store opens: an empty database is brought to the latest
revision, an older one upgraded, a current one left alone. Alembic's scripts ship inside the package
(``roofcore/store/migrations``); no ``alembic.ini`` is needed.

Several processes may open the same database at once (app replicas, CI jobs): the upgrade runs in one
transaction that first takes a lock (PostgreSQL: a transaction-scoped advisory lock; SQLite: ``BEGIN
IMMEDIATE``, the database's write lock), so one process migrates and the others then find it done.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

from ..errors import InputError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: the advisory lock's key on PostgreSQL (any constant shared by every roofcore process)
_LOCK_KEY = 0x526F6F66  # "Roof"


def _config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    """The latest revision the shipped scripts define."""
    rev = ScriptDirectory.from_config(_config()).get_current_head()
    if rev is None:  # the shipped scripts always define one
        raise RuntimeError(f"no migration scripts in {MIGRATIONS}")
    return rev


def current(engine: Engine) -> str | None:
    """The database's revision (None: never migrated, e.g. an empty database)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def known(conn: Connection) -> None:
    """Raise :class:`InputError` when the database is at a revision these scripts do not define: migrated by a
    newer roofcore, or another application's ``alembic_version`` (Alembic would fail with "Can't locate
    revision")."""
    script = ScriptDirectory.from_config(_config())
    ours = [r.revision for r in script.walk_revisions()][::-1]  # oldest first
    unknown = [h for h in MigrationContext.configure(conn).get_current_heads() if h not in ours]
    if unknown:
        raise InputError(text=f"this database was created by a newer roofcore (revision {', '.join(unknown)}) or "
                         f"another application; this roofcore knows revisions {ours[0]} to {ours[-1]} and changes "
                         "nothing in it.", hint="upgrade roofcore (pip install -U 'roofcore[team]'), or give --db / "
                         "ROOFCORE_DB_URL a database of roofcore's own.")


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to ``revision`` in one locked transaction (see the module's docstring); a database at a
    revision these scripts do not know is left alone (:func:`known`)."""
    with engine.connect() as conn:
        conn = conn.execution_options(roofcore_write=True)  # SQLite: BEGIN IMMEDIATE (see repository._sqlite)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
            known(conn)
            command.upgrade(_config(conn), revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Back to ``revision`` (``"base"``: no tables); for tests and a host undoing an upgrade."""
    with engine.connect() as conn:
        conn = conn.execution_options(roofcore_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
            command.downgrade(_config(conn), revision)
