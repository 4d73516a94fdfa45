"""What ``roofline check`` refuses before it judges anything, so that a gate never passes for want of a baseline:

* an empty side (``--baseline ""``: an unset variable, or ``$(cat .roofline-baseline)`` of a file that is not
  there; an empty path would otherwise read the current folder, and with it the current profile);
* the current run given as its own baseline: the same file or saved run, a baseline folder that holds the
  current file, or a baseline whose kernels are the current ones exactly (the same content under another name);
* a saved run with no database to read it from, or a database that is not there: a check only reads, so it
  never creates a database (SQLite creates a missing file on connect; ``roofline save`` may create one).

The command's code is :mod:`roofcore.cli.team`; the database pieces are imported only when a saved run is read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import settings
from .errors import InputError, RoofcoreError
from .models import Workload

URL_ENV = settings.DB_URL.name  #: as :data:`roofcore.store.URL_ENV` (the store needs the team extra)
NO_DATABASE = "no run database configured (--db or ROOFCORE_DB_URL)"
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


class SameRun(InputError):
    """The baseline is the current run itself: nothing to compare."""


def refuse_empty(items: Sequence[str], where: str) -> None:
    """An empty or blank argument on a side: never read as the current folder."""
    for item in items:
        if not item.strip():
            raise InputError(where=where, text=f"an empty {'baseline' if where == '--baseline' else 'argument'} "
                             f"({item!r}): nothing to compare against, and a gate without a baseline never passes.",
                             hint="an unset variable, or $(cat FILE) of a file that is not there, gives an empty "
                                  "one; name a profile, a folder of profiles, or a saved run (run:ID).")


def database_configured(db: str | None) -> bool:
    """Whether a run database is named (``--db``, ``$ROOFCORE_DB_URL``) or the default SQLite file exists."""
    if (db or "").strip() or settings.DB_URL.value():
        return True
    try:
        from .store import default_path
    except ImportError:
        return False
    return default_path().is_file()


def run_id(items: Sequence[str], db: str | None) -> str | None:
    """The saved run a side names: ``run:ID``, or an id that is no file while a database is configured. An id that
    is no file with no database configured is refused here (it names neither a file nor a run we can read)."""
    if len(items) != 1:
        return None
    item = items[0]
    if item.startswith("run:"):
        return item[4:]
    if not _RUN_ID.fullmatch(item) or Path(item).exists():
        return None
    if database_configured(db):
        return item
    raise RoofcoreError(f"{item}: no such file, and {NO_DATABASE} to look it up as a saved run.")


def read_url(db: str | None) -> str:
    """The database a read (``roofline check``) opens: ``--db``, else ``$ROOFCORE_DB_URL``, else the default SQLite
    file where it exists. Refused, creating nothing, when none is configured or a SQLite file is not there."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from .catalog import display_path
    from .store import database_url, default_path, redact

    named = (db or "").strip() or settings.DB_URL.value() or ""
    if not named and not default_path().is_file():
        raise RoofcoreError(f"{NO_DATABASE}: a saved run cannot be read (the default database "
                            f"{display_path(default_path())} does not exist).")
    url = database_url(named or None)
    try:
        u = make_url(url)
    except (ArgumentError, ValueError):
        return url  # the store's own message: a URL that cannot be parsed
    path = u.database or ""
    if u.get_backend_name() == "sqlite" and path and path != ":memory:" and not path.startswith("file:") \
            and u.query.get("mode") != "memory" and not Path(path).expanduser().is_file():
        where = "--db" if (db or "").strip() else URL_ENV
        raise RoofcoreError(f"{where} {redact(url)}: no such database file ({display_path(Path(path).expanduser())}); "
                            "`roofline check` only reads a run database and never creates one. Hint: check the "
                            "path (sqlite:///relative/path.db, sqlite:////absolute/path.db).")
    return url


def _files(items: Sequence[str]) -> set[Path]:
    """The files a side reads (a folder's visible files, as :func:`roofcore.ingest.read_many` takes them)."""
    out: set[Path] = set()
    for item in items:
        p = Path(item)
        try:
            if p.is_dir():
                out |= {f.resolve() for f in p.iterdir() if f.is_file() and not f.name.startswith(".")}
            elif p.exists():
                out.add(p.resolve())
        except OSError:
            continue  # the read says what is wrong with it
    return out


def refuse_same_files(current: Sequence[str], baseline: Sequence[str]) -> None:
    """Before anything is read: the baseline names the current files themselves, or a folder that holds one."""
    cur, base = _files(current), _files(baseline)
    if not cur or not base:
        return
    from .catalog import display_path

    if cur == base:
        raise SameRun(where="--baseline", text=f"the baseline is the current profile itself ("
                      f"{', '.join(sorted(display_path(p) for p in cur)[:3])}): nothing to compare.", hint=_HINT)
    both = sorted(display_path(p) for p in cur & base)
    if both:
        raise SameRun(where="--baseline", text=f"the baseline holds the current profile itself ({', '.join(both[:3])}"
                      f"{' …' if len(both) > 3 else ''}): its kernels would be judged against themselves.", hint=_HINT)


def refuse_same_run(current: str | None, baseline: str | None) -> None:
    if current is not None and current == baseline:
        raise SameRun(where="--baseline", text=f"the baseline is the current profile itself (saved run {current}): "
                      "nothing to compare.", hint=_HINT)


def refuse_same_kernels(current: Workload, baseline: Workload, label: str) -> None:
    """After reading: the baseline's kernels are the current ones exactly (names, launches, FLOPs, bytes and times
    in the same order), e.g. a copy of the current file or a saved run of it. Cheap: the first column that differs
    ends it, and two runs of a program never measure every kernel's time the same."""
    a, b = current.frame, baseline.frame
    if len(a) != len(b) or set(current.byte_columns) != set(baseline.byte_columns):
        return
    for col in ("time_s", "flops", "count", *sorted(current.byte_columns)):
        if not np.array_equal(a[col].to_numpy(np.float64), b[col].to_numpy(np.float64), equal_nan=True):
            return
    if not (a["name"].to_numpy(object) == b["name"].to_numpy(object)).all():
        return
    raise SameRun(where="--baseline", text=f"the baseline is the current profile itself ({label} holds the same "
                  "kernels with the same times): nothing to compare.", hint=_HINT)


_HINT = "give the profile of an earlier run (a file, or a saved run: run:ID) as --baseline."
