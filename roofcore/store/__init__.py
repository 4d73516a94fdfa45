"""Saved runs for a team: a SQL database (SQLAlchemy 2; SQLite in a file by default, PostgreSQL by URL) of uploaded
workloads with their devices and options, who saved them and when; share links; per-project history.

No Streamlit here: the app (``app/runs.py``) and the CLI (``roofline save``, ``roofline check --db``) use this.
Needs the ``team`` extra (``pip install 'roofcore[team]'``: SQLAlchemy, Alembic, psycopg); the rest of roofcore
works without it.

    >>> from roofcore.store import RunStore, Viewer
    >>> store = RunStore("sqlite:///runs.sqlite3")                      # doctest: +SKIP
    >>> run = store.save([(data, "profile.csv")], name="nightly", project="llm")  # doctest: +SKIP
    >>> ada = Viewer(Owner("https://accounts.google.com", "1044", "ada@example.com"), login=True)
    >>> store.open(run.id, ada).workload()                               # doctest: +SKIP
"""

from __future__ import annotations

from ..safetext import shown
from .identity import EVERYONE, Owner, Viewer, owner_from_claims
from .repository import (
    DEFAULT_PROJECT,
    MAX_FILES,
    PATH_ENV,
    URL_ENV,
    NotAllowed,
    Protected,
    RunNotFound,
    RunStore,
    StoreError,
    database_url,
    default_path,
    new_id,
    open_store,
    redact,
)
from .values import FileInfo, RunInfo, SavedRun

__all__ = ["DEFAULT_PROJECT", "EVERYONE", "MAX_FILES", "PATH_ENV", "URL_ENV", "FileInfo", "NotAllowed", "Owner",
           "Protected", "RunInfo", "RunNotFound", "RunStore", "SavedRun", "StoreError", "Viewer", "database_url",
           "default_path", "new_id", "open_store", "owner_from_claims", "redact", "shown"]
