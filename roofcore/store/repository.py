"""Saved runs in a SQL database (SQLite in a file by default, PostgreSQL for a team): save, list, open, delete.

A run is saved only on request, and only whole: its files are read first with the same parsers and limits as
an upload (:func:`roofcore.read_many`, strict: one unreadable file and nothing is saved), then the run and all its
files are written in one transaction. Ids come from :func:`secrets.token_urlsafe` (128 bits), so a link cannot be
guessed. Who sees what is :class:`Viewer`'s rule, applied in the queries themselves; a run someone may not see is
reported exactly like a run that does not exist. The database URL's password never appears in a message (the
engine hides statement parameters too, so file contents never reach a log).
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, create_engine, delete, event, func, select, update
from sqlalchemy.engine import URL, Connection, CursorResult, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.orm import Session
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql import Select

from .. import settings
from ..errors import InputError, RoofcoreError
from ..ingest import max_input_bytes, read_many
from ..ingest.compression import GZIP_MAGIC, gunzip_bounded
from ..models import Workload
from ..safetext import clean, fit, shown
from . import migrate
from .identity import EVERYONE, LABEL_LIMIT, Owner, Viewer, row_owner
from .schema import VISIBILITIES, FileRow, RunRow
from .values import FileInfo, RunInfo, SavedRun

#: the host's database, e.g. ``postgresql://roofline:PASSWORD@db.internal/roofline``
URL_ENV = settings.DB_URL.name
#: where the default SQLite database lives when no URL is set
PATH_ENV = settings.DB_PATH.name
#: files in one run (an upload of a profile with its companions is a handful)
MAX_FILES = 64
DEFAULT_PROJECT = "default"
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


class StoreError(RoofcoreError):
    """The run database cannot do what was asked (unreachable, refused, damaged); the message names the database
    by its URL without the password."""


class RunNotFound(StoreError, LookupError):
    """No run with this id that the viewer may see (deleted, mistyped, or private to someone else: one message)."""

    def __init__(self, run_id: object) -> None:
        shown = repr(run_id) if isinstance(run_id, str) and _ID.fullmatch(run_id) else "in this link"
        super().__init__(f"no saved run {shown} that you can open: it was deleted, the id is wrong, or it is "
                         "private to someone else.")


class NotAllowed(StoreError, PermissionError):
    """The viewer sees the run but may not change it (another user's run shared with the project)."""


class Protected(NotAllowed):
    """The run is kept from deletion in the app: saved with ``roofline save --protect``, or a gate's baseline."""


# --------------------------------------------------------------------------------------------------- URLs


def default_path() -> Path:
    """``$ROOFCORE_DB_PATH``, else ``$XDG_DATA_HOME/roofline/runs.sqlite3`` (``~/.local/share/...``)."""
    path = settings.DB_PATH.value()
    if path:
        return path
    base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    return Path(base) / "roofline" / "runs.sqlite3"


def database_url(url: str | None = None) -> str:
    """The database to use: ``url``, else ``$ROOFCORE_DB_URL``, else SQLite at :func:`default_path`."""
    url = (url or "").strip() or settings.DB_URL.value() or ""
    return url or f"sqlite:///{default_path()}"


def redact(url: str) -> str:
    """The URL with its password replaced by ``***`` (what every message and log line shows)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "<a database URL that cannot be parsed>"


def _password(url: str) -> str | None:
    try:
        return make_url(url).password
    except (ArgumentError, ValueError):
        return None


def _engine(url: str) -> Engine:
    try:
        u = make_url(url)
    except (ArgumentError, ValueError):
        raise StoreError(f"{URL_ENV} / --db: expected a database URL such as sqlite:///runs.sqlite3 or "
                         "postgresql://user:password@host/db, found one that cannot be parsed.") from None
    if u.drivername in ("postgresql", "postgres"):  # the driver we install (psycopg 3), not SQLAlchemy's psycopg2
        u = u.set(drivername="postgresql+psycopg")
    try:
        if u.get_backend_name() == "sqlite":
            return _sqlite(u)
        return create_engine(u, pool_pre_ping=True, hide_parameters=True)
    except (ArgumentError, ImportError) as e:
        raise StoreError(f"{redact(url)}: cannot use this database ({type(e).__name__}: "
                         f"{_scrub(str(e), _password(url))}). Hint: SQLite and PostgreSQL are supported; "
                         "install the team extra (pip install 'roofcore[team]').") from None


def _sqlite(u: URL) -> Engine:
    """SQLite with real transactions: Python's driver would begin them lazily and never before DDL, so it is
    switched to autocommit and each transaction begins explicitly, a writing one with ``BEGIN IMMEDIATE`` (it
    takes the write lock at once and waits for it: concurrent saves queue instead of failing half-way)."""
    path = u.database
    memory = not path or path == ":memory:" or u.query.get("mode") == "memory"
    if path and not memory:
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(u, hide_parameters=True, connect_args={"timeout": 60, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        if not memory:
            cur.execute("PRAGMA journal_mode=WAL")  # readers never wait for a writer
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("roofcore_write") else "BEGIN")

    return engine


def _scrub(text: str, password: str | None) -> str:
    text = " ".join(str(text).split())
    return text.replace(password, "***") if password else text


# ---------------------------------------------------------------------------------------------------- store


def new_id() -> str:
    """128 random bits, URL-safe (22 characters), never starting with "-".

    One token in 64 starts with "-", and a command line reads ``--baseline -Xy…`` as an option, not a value; such a
    token is drawn again (ids saved before this rule are still reached with ``run:ID``).
    """
    while (token := secrets.token_urlsafe(16)).startswith("-"):
        pass
    return token


def _clean_tags(tags: Sequence[str] | str) -> tuple[str, ...]:
    items = tags.split(",") if isinstance(tags, str) else list(tags)
    out = tuple(dict.fromkeys(t for t in (clean(x, "tag", 50, required=False) for x in items) if t))
    if len(out) > 20:
        raise InputError(where="save: tags", expected="at most 20 tags", found=f"{len(out)}")
    return out


def _utc(t: dt.datetime) -> dt.datetime:
    return t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)


#: run ids per ``IN (...)`` when listing files (SQLite before 3.32 allows 999 parameters in one statement)
_IN_CHUNK = 500


def _visible(viewer: Viewer, project: str | None) -> Select[RunRow]:
    """The runs ``viewer`` may see (in ``project``), as a query on :class:`RunRow`."""
    q = select(RunRow).where(viewer.visible())
    return q if project is None else q.where(RunRow.project == clean(project, "project", 100, where="list"))


def _owner(owner: Owner | None) -> Owner | None:
    """A run's owner as stored: a signed-in user's issuer and subject, checked like every other name."""
    if owner is None:
        return None
    if not isinstance(owner, Owner) or owner.legacy:
        raise InputError(where="save: owner", expected="the signed-in user's identity provider (issuer) and "
                         "subject", found=repr(owner)[:80], hint="an e-mail is not an identity (HOSTING.md).")
    return Owner(clean(owner.issuer, "owner's issuer", 500), clean(owner.subject, "owner's subject", 255),
                 clean(owner.label, "owner's label", LABEL_LIMIT, required=False))


def _info(r: RunRow, files: Sequence[FileInfo] = ()) -> RunInfo:
    return RunInfo(id=r.id, project=r.project, name=r.name, tags=tuple(r.tags or ()), owner=row_owner(r),
                   visibility=r.visibility, created_at=_utc(r.created_at), devices=tuple(r.devices or ()),
                   custom_devices=dict(r.custom_devices or {}), options=dict(r.options or {}), kernels=r.kernels,
                   formats=tuple(r.formats or ()), profiled_on=r.profiled_on, size=r.size, stored=r.stored,
                   files=tuple(files), protected=bool(r.protected),
                   baseline_used_at=None if r.baseline_used_at is None else _utc(r.baseline_used_at))


class RunStore:
    """One database of saved runs. Thread-safe (one engine and connection pool; a session per operation), so a
    server shares one store between its sessions (:func:`open_store`)."""

    def __init__(self, url: str | None = None, *, migrate_schema: bool = True) -> None:
        self.url = database_url(url)
        self.safe_url = redact(self.url)
        self._password = _password(self.url)
        self.engine = _engine(self.url)
        if migrate_schema:
            try:
                with self._db("be prepared (schema migration)"):
                    migrate.upgrade(self.engine)
            except InputError as e:  # a newer roofcore's database, or another application's
                self.engine.dispose()
                raise InputError(where=f"the run database {self.safe_url}", text=e.text, hint=e.hint) from None

    def __repr__(self) -> str:
        return f"RunStore({self.safe_url!r})"

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _db(self, what: str) -> Iterator[None]:
        """Database failures as a :class:`StoreError` naming the database without its password."""
        try:
            yield
        except SQLAlchemyError as e:
            cause = e.orig if isinstance(e, DBAPIError) and e.orig is not None else e
            first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
            raise StoreError(f"the run database {self.safe_url} could not {what}: "
                             f"{_scrub(first, self._password)[:300]}") from None

    def _write(self) -> Session:
        return Session(self.engine.execution_options(roofcore_write=True), expire_on_commit=False)

    def _read(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # ------------------------------------------------------------------------------------------------- save

    def save(self, files: Sequence[tuple[bytes, str]], *, name: str, project: str = DEFAULT_PROJECT,
             tags: Sequence[str] | str = (), owner: Owner | None = None, visibility: str = "project",
             devices: Sequence[str] = (), custom_devices: Mapping[str, str] | None = None,
             options: Mapping[str, object] | None = None, fmt: str | None = None,
             created_at: dt.datetime | None = None, protected: bool = False) -> RunInfo:
        """Read ``files`` (``(bytes, name)`` pairs) as one workload, then store them, compressed, with the rest
        in one transaction. Raises the reader's error (nothing saved) if any file cannot be read, and
        :class:`InputError` for a name, project, tag, file name or owner that is not UTF-8 text without control
        characters (:func:`roofcore.store.names.clean`: the same on SQLite and PostgreSQL). ``owner``: the
        signed-in user (:attr:`Viewer.user`); ``protected``: kept from deletion in the app."""
        name = clean(name, "name", 200)
        project = clean(project, "project", 100)
        tag_list = _clean_tags(tags)
        owner = _owner(owner)
        if visibility not in VISIBILITIES:
            raise InputError(where="save: visibility", expected=" or ".join(VISIBILITIES), found=repr(visibility))
        if visibility == "private" and owner is None:
            raise InputError(where="save: visibility", text="a private run needs an owner (sign in first); "
                             "without a login every run is visible to everyone who can reach the app.")
        files = [(bytes(data), str(fname)) for data, fname in files]
        for _data, fname in files:
            clean(fname, "file name", 500)  # checked, kept as it is (a file's name is not collapsed)
        if not files:
            raise InputError(where="save", text="no files to save: upload a profile first.")
        if len(files) > MAX_FILES:
            raise InputError(where="save", expected=f"at most {MAX_FILES} files in one run", found=f"{len(files)}")
        chosen = fmt or (options or {}).get("format")
        options = {**(options or {}), "format": chosen}
        # strict: an unreadable file saves nothing; the files are one run's, so its API traces are notes (read_many)
        workload = read_many(files, fmt=str(chosen) if chosen else None, together=True)
        run_id = new_id()
        rows, size, stored = [], 0, 0
        for i, (data, fname) in enumerate(files):
            already = data[:2] == GZIP_MAGIC
            blob = data if already else gzip.compress(data, compresslevel=6, mtime=0)
            rows.append(FileRow(position=i, name=fname[:500], size=len(data),
                                sha256=hashlib.sha256(data).hexdigest(),
                                encoding="identity" if already else "gzip", data=blob))
            size, stored = size + len(data), stored + len(blob)
        run = RunRow(id=run_id, project=project, name=name, tags=list(tag_list), visibility=visibility,
                     owner=None if owner is None else owner.label or owner.subject,
                     owner_issuer=None if owner is None else owner.issuer,
                     owner_subject=None if owner is None else owner.subject, protected=bool(protected),
                     created_at=_utc(created_at or dt.datetime.now(dt.UTC)), devices=[str(d) for d in devices],
                     custom_devices=dict(custom_devices or {}), options=options, kernels=len(workload),
                     formats=list(workload.formats), profiled_on=fit(workload.device, 200), size=size,
                     stored=stored, files=rows)
        with self._db("save the run"), self._write() as s, s.begin():
            s.add(run)
        return _info(run, [FileInfo(r.name, r.size, r.sha256) for r in rows])

    # ----------------------------------------------------------------------------------------------- reading

    def list(self, viewer: Viewer = EVERYONE, *, project: str | None = None, limit: int | None = None,
             offset: int = 0) -> list[RunInfo]:
        """The runs ``viewer`` may see, newest first (file names and sizes, no contents): every one of them, or a
        page of at most ``limit`` from the ``offset``-th on (:meth:`count` gives the total; newest first, then by
        id, so pages neither overlap nor skip a run while none is saved or deleted)."""
        if (limit is not None and limit < 0) or offset < 0:
            raise ValueError(f"list: limit and offset must not be negative, found {limit} and {offset}")
        q = (_visible(viewer, project).order_by(RunRow.created_at.desc(), RunRow.id)
             .offset(int(offset)).limit(None if limit is None else int(limit)))
        with self._db("list the runs"), self._read() as s:
            runs = list(s.scalars(q))
            files: dict[str, list[FileInfo]] = {}
            for i in range(0, len(runs), _IN_CHUNK):  # a bounded IN (...): old SQLite allows 999 parameters
                fq = (select(FileRow.run_id, FileRow.name, FileRow.size, FileRow.sha256)
                      .where(FileRow.run_id.in_([r.id for r in runs[i:i + _IN_CHUNK]]))
                      .order_by(FileRow.run_id, FileRow.position))
                for rid, fname, fsize, sha in s.execute(fq):
                    files.setdefault(rid, []).append(FileInfo(fname, fsize, sha))
            return [_info(r, files.get(r.id, ())) for r in runs]

    def count(self, viewer: Viewer = EVERYONE, *, project: str | None = None) -> int:
        """How many runs :meth:`list` gives ``viewer`` over all its pages (the same rule as :meth:`projects`)."""
        q = _visible(viewer, project).with_only_columns(func.count(), maintain_column_froms=True)
        with self._db("count the runs"), self._read() as s:
            return int(s.execute(q).scalar_one())

    def projects(self, viewer: Viewer = EVERYONE) -> dict[str, int]:
        """Project name -> number of runs ``viewer`` may see there."""
        q = (select(RunRow.project, func.count()).where(viewer.visible()).group_by(RunRow.project)
             .order_by(RunRow.project))
        with self._db("list the projects"), self._read() as s:
            return {p: int(n) for p, n in s.execute(q)}

    def info(self, run_id: str, viewer: Viewer = EVERYONE) -> RunInfo:
        """One run's description, if ``viewer`` may see it (else :class:`RunNotFound`)."""
        if not isinstance(run_id, str) or not _ID.fullmatch(run_id):
            raise RunNotFound(run_id)
        with self._db("read the run"), self._read() as s:
            r = s.get(RunRow, run_id)
            if r is None or not viewer.can_see(row_owner(r), r.visibility):
                raise RunNotFound(run_id)
            fq = (select(FileRow.name, FileRow.size, FileRow.sha256).where(FileRow.run_id == run_id)
                  .order_by(FileRow.position))
            return _info(r, [FileInfo(*row) for row in s.execute(fq)])

    def open(self, run_id: str, viewer: Viewer = EVERYONE) -> SavedRun:
        """The run and its files as uploaded, if ``viewer`` may see it (else :class:`RunNotFound`)."""
        info = self.info(run_id, viewer)
        with self._db("read the run's files"), self._read() as s:
            rows = list(s.execute(select(FileRow.name, FileRow.encoding, FileRow.sha256, FileRow.data)
                                  .where(FileRow.run_id == run_id).order_by(FileRow.position)))
        if not rows:
            raise RunNotFound(run_id)  # deleted between the two reads
        files = []
        for fname, encoding, sha, blob in rows:
            data = gunzip_bounded(bytes(blob), max_input_bytes(), fname) if encoding == "gzip" else bytes(blob)
            if hashlib.sha256(data).hexdigest() != sha:
                raise StoreError(f"saved run {run_id!r}: the stored file {fname!r} is damaged (its SHA-256 does "
                                 "not match what was saved).")
            files.append((data, fname))
        return SavedRun(info, tuple(files))

    def workload(self, run_id: str, viewer: Viewer = EVERYONE) -> tuple[SavedRun, Workload]:
        """The run and its workload, read again from its files with today's parsers."""
        run = self.open(run_id, viewer)
        return run, run.workload()

    # ------------------------------------------------------------------------------------------------ delete

    def delete(self, run_id: str, viewer: Viewer = EVERYONE) -> None:
        """Delete the run and its files (one transaction), if ``viewer`` may (see :class:`Viewer`) and the run is
        not kept (:attr:`RunInfo.kept`: protected, or a gate's baseline; :class:`Protected`, for every viewer)."""
        if not isinstance(run_id, str) or not _ID.fullmatch(run_id):
            raise RunNotFound(run_id)
        with self._db("delete the run"), self._write() as s, s.begin():
            r = s.get(RunRow, run_id)
            owner = None if r is None else row_owner(r)
            if r is None or not viewer.can_see(owner, r.visibility):
                raise RunNotFound(run_id)
            if not viewer.can_delete(owner, r.visibility):
                raise NotAllowed(f"run {run_id!r} belongs to {shown(owner)}: only its owner can delete it.")
            kept = _info(r).kept
            if kept:
                raise Protected(f"run {run_id!r} ({shown(r.name)}) is not deleted: {kept}. Hint: the host can "
                                "release it (HOSTING.md, section 8: protected runs).")
            s.execute(delete(FileRow).where(FileRow.run_id == run_id))
            s.execute(delete(RunRow).where(RunRow.id == run_id))

    # --------------------------------------------------------------------------------- protection, owners

    def protect(self, run_id: str, on: bool = True) -> RunInfo:
        """Keep the run from deletion in the app (``on``), or release it: off clears the protection and the
        gate-baseline mark both (a host's decision; no viewer rule applies)."""
        values = {"protected": True} if on else {"protected": False, "baseline_used_at": None}
        return self._mark(run_id, values, "protect the run")

    def used_as_baseline(self, run_id: str, when: dt.datetime | None = None) -> RunInfo:
        """Record that a gate (``roofline check --baseline run:ID``) used the run: the app keeps it from deletion."""
        return self._mark(run_id, {"baseline_used_at": _utc(when or dt.datetime.now(dt.UTC))},
                          "record the run as a gate's baseline")

    def _mark(self, run_id: str, values: Mapping[str, object], what: str) -> RunInfo:
        if not isinstance(run_id, str) or not _ID.fullmatch(run_id):
            raise RunNotFound(run_id)
        with self._db(what), self._write() as s, s.begin():
            done = cast(CursorResult[Any], s.execute(update(RunRow).where(RunRow.id == run_id).values(**values)))
            if done.rowcount != 1:  # an UPDATE's result is a CursorResult (Session.execute is typed as Result)
                raise RunNotFound(run_id)
        return self.info(run_id)

    def claim(self, viewer: Viewer) -> int:
        """Bind the legacy runs (saved before owners were identities: an owner label and no issuer or subject)
        whose label is ``viewer``'s *verified* e-mail to ``viewer``'s issuer and subject; how many. Once bound they
        are that user's alone (see :mod:`roofcore.store.identity`). A viewer without a verified e-mail claims
        nothing."""
        if not viewer.login or not viewer.email or viewer.user is None:  # signed in: a user (Viewer.__post_init__)
            return 0
        q = (update(RunRow).where(RunRow.owner_subject.is_(None), RunRow.owner.is_not(None),
                                  func.lower(RunRow.owner) == viewer.email.strip().lower())
             .values(owner_issuer=viewer.user.issuer, owner_subject=viewer.user.subject))
        with self._db("take over the runs saved under your e-mail"), self._write() as s, s.begin():
            return int(cast(CursorResult[Any], s.execute(q)).rowcount or 0)


# ------------------------------------------------------------------------------------------- shared stores

_STORES: dict[str, RunStore] = {}
_LOCK = threading.Lock()


def open_store(url: str | None = None) -> RunStore:
    """The store for ``url`` (default: :func:`database_url`), opened and migrated once per process."""
    resolved = database_url(url)
    with _LOCK:
        store = _STORES.get(resolved)
        if store is None:
            store = _STORES[resolved] = RunStore(resolved)
        return store
