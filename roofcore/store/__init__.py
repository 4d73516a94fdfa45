"""Saved runs for a team: a SQL database (SQLAlchemy 2; SQLite in a file by default, PostgreSQL by URL) of uploaded
workloads with their devices and options, who saved them and when; share links; per-project history.

No Streamlit here: the app (``app/runs.py``) and the CLI (``roofline save``, ``roofline check --db``) use this.
Needs the ``team`` extra (``pip install 'roofcore[team]'``: SQLAlchemy, Alembic, psycopg); the rest of roofcore
works without it.

    >>> from roofcore.store import RunStore, Viewer
    >>> store = RunStore("sqlite:///runs.sqlite3")                      # doctest: +SKIP
    >>> run = store.save([(data, "profile.csv")], name="nightly", project="llm")  # doctest: +SKIP
    >>> store.open(run.id, Viewer("ada@example.com", login=True)).workload()     # doctest: +SKIP
"""

from .repository import (
    DEFAULT_PROJECT,
    EVERYONE,
    MAX_FILES,
    PATH_ENV,
    URL_ENV,
    FileInfo,
    NotAllowed,
    RunInfo,
    RunNotFound,
    RunStore,
    SavedRun,
    StoreError,
    Viewer,
    database_url,
    default_path,
    new_id,
    open_store,
    redact,
)

__all__ = ["DEFAULT_PROJECT", "EVERYONE", "MAX_FILES", "PATH_ENV", "URL_ENV", "FileInfo", "NotAllowed", "RunInfo",
           "RunNotFound", "RunStore", "SavedRun", "StoreError", "Viewer", "database_url", "default_path", "new_id",
           "open_store", "redact"]
