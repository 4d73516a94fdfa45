"""Every ``ROOFCORE_*`` environment variable, in one place: its type, default, limits and meaning.

A variable is read when its value is asked for (a running server follows a restart with a new value), and always
through :meth:`Setting.value`: no other module reads ``os.environ`` for these (``tests/test_settings.py``
checks). A malformed value is an error that names the variable, never a silent default. ``roofline config``
prints each with its current value and where it came from.

=============================  ===========  ===============  =====================================================
variable                       type         default          meaning
=============================  ===========  ===============  =====================================================
``ROOFCORE_MAX_INPUT_MB``      number ≥ 0   512              largest input (MB; gzip data once decompressed)
``ROOFCORE_MAX_ROWS``          number ≥ 0   10,000,000       lines of one text input
``ROOFCORE_MAX_KERNELS``       number ≥ 0   2,000,000        rows of a workload read from the inputs
``ROOFCORE_MAX_JSON_DEPTH``    number ≥ 0   100              nesting of objects and arrays in a JSON input
``ROOFCORE_PARSE_TIMEOUT_S``   number ≥ 0   300              seconds reading the inputs of one upload or command
``ROOFCORE_WORKERS``           integer ≥ 1  the usable CPUs  processes parsing files, threads writing output
``ROOFCORE_CATALOG_PATH``      path list    (none)           extra catalog files or folders, ``os.pathsep``-joined
``ROOFCORE_DB_URL``            URL          (none)           the run database (SQLAlchemy URL)
``ROOFCORE_DB_PATH``           path         XDG data dir     the SQLite file used when no URL is set
``ROOFCORE_APP_URL``           URL          (none)           the app's address, for links printed by the CLI
``ROOFCORE_DEBUG``             flag         off              the CLI raises internal errors with their traceback
``ROOFCORE_TRACE``             flag         off              the app logs timing marks of each run to stderr
=============================  ===========  ===============  =====================================================

The five limits (``0`` = no limit) are applied by :mod:`roofcore.limits`. A flag is off when unset, blank, ``0``,
``false``, ``no`` or ``off``, and on for any other value (``1``). The test suite has variables of its own
(``ROOFCORE_REQUIRE_BROWSER``, ``ROOFCORE_REQUIRE_POSTGRES``, ``ROOFCORE_FUZZ_LONG``, ``ROOFCORE_UPDATE_GOLDENS``),
read by the tests only and listed in the README's development section.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from .errors import LimitError, RoofcoreError

T = TypeVar("T")
Source = Literal["env", "default"]


class SettingError(RoofcoreError, ValueError):
    """An environment variable with a value its parser refuses."""


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One variable: ``parse`` turns its non-blank text into the value; blank or unset gives ``default``."""

    name: str
    kind: str  #: the type, in words
    default: T
    limits: str  #: what values are accepted, in words
    meaning: str  #: one line
    parse: Callable[[str, str], T]  #: (variable name, stripped text) -> value; raises an error naming the variable
    shown_default: str = ""  #: the default in words where ``default`` is None (computed where used)
    secret: bool = False  #: may hold a password: shown with it replaced by ``***``

    def raw(self) -> str:
        """The variable's text, stripped ('' when unset)."""
        return os.environ.get(self.name, "").strip()

    def source(self) -> Source:
        return "env" if self.raw() else "default"

    def value(self) -> T:
        raw = self.raw()
        return self.parse(self.name, raw) if raw else self.default


def _hint(name: str) -> str:
    return f"Hint: fix {name} in the environment of the app or command (`roofline config` lists every variable)."


def parse_limit(name: str, raw: str) -> float:
    """A number ≥ 0 (0 = no limit); a :class:`~roofcore.errors.LimitError` otherwise."""
    try:
        v = float(raw)
    except ValueError:
        v = -1.0
    if not v >= 0:  # also NaN
        raise LimitError(f"{name}={raw!r}: expected a number ≥ 0 (0 = no limit). {_hint(name)}")
    return v


def parse_workers(name: str, raw: str) -> int | None:
    """A whole number ≥ 1 (1: one after the other); ``0`` means the default (every usable CPU), as unset."""
    if not raw.isdigit():
        raise SettingError(f"{name}={raw!r}: expected a whole number ≥ 1 (1: one at a time; unset or 0: every "
                           f"usable CPU). {_hint(name)}")
    return int(raw) or None


def parse_paths(name: str, raw: str) -> tuple[Path, ...]:
    """Paths joined by ``os.pathsep`` (``:`` on Linux and macOS, ``;`` on Windows); blank parts are skipped."""
    return tuple(Path(p.strip()).expanduser() for p in raw.split(os.pathsep) if p.strip())


def parse_path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def parse_text(name: str, raw: str) -> str:
    return raw


def parse_app_url(name: str, raw: str) -> str:
    return raw.rstrip("/")


_OFF = ("0", "false", "no", "off")


def parse_flag(name: str, raw: str) -> bool:
    """Off for ``0``, ``false``, ``no``, ``off`` (any case); on for any other non-blank text (``1``)."""
    return raw.lower() not in _OFF


_LIMIT_RANGE = "a number ≥ 0; 0 = no limit"

MAX_INPUT_MB: Setting[float] = Setting("ROOFCORE_MAX_INPUT_MB", "number (MB)", 512.0, _LIMIT_RANGE,
                                       "largest input file, and gzip data once decompressed", parse_limit)
MAX_ROWS: Setting[float] = Setting("ROOFCORE_MAX_ROWS", "number", 10_000_000.0, _LIMIT_RANGE,
                                   "lines of one text input (CSV, YAML, console output)", parse_limit)
MAX_KERNELS: Setting[float] = Setting("ROOFCORE_MAX_KERNELS", "number", 2_000_000.0, _LIMIT_RANGE,
                                      "rows of a workload read from the inputs", parse_limit)
MAX_JSON_DEPTH: Setting[float] = Setting("ROOFCORE_MAX_JSON_DEPTH", "number", 100.0, _LIMIT_RANGE,
                                         "nesting of objects and arrays in a JSON input", parse_limit)
PARSE_TIMEOUT_S: Setting[float] = Setting("ROOFCORE_PARSE_TIMEOUT_S", "number (s)", 300.0, _LIMIT_RANGE,
                                          "seconds reading the inputs of one upload or command", parse_limit)
WORKERS: Setting[int | None] = Setting(
    "ROOFCORE_WORKERS", "integer", None, "a whole number ≥ 1; 0 = every usable CPU",
    "processes parsing a set of files, threads writing JSON/CSV (1: one after the other)", parse_workers,
    "every usable CPU")
CATALOG_PATH: Setting[tuple[Path, ...]] = Setting(
    "ROOFCORE_CATALOG_PATH", "path list", (), f"files or folders joined by {os.pathsep!r}",
    "extra hardware catalogs, loaded after the built-in ones and before --catalog", parse_paths, "none")
DB_URL: Setting[str | None] = Setting(
    "ROOFCORE_DB_URL", "URL", None, "a SQLAlchemy URL (sqlite:///..., postgresql://...)",
    "the run database of saved runs, the History page and `roofline check`/`save`", parse_text,
    "SQLite at ROOFCORE_DB_PATH", secret=True)
DB_PATH: Setting[Path | None] = Setting(
    "ROOFCORE_DB_PATH", "path", None, "a file path (created on first save)",
    "the SQLite run database used when ROOFCORE_DB_URL is not set", parse_path,
    "$XDG_DATA_HOME/roofline/runs.sqlite3")
APP_URL: Setting[str | None] = Setting(
    "ROOFCORE_APP_URL", "URL", None, "the app's address (http(s)://host[:port]/path)",
    "where `roofline save` links a saved run (?run=ID)", parse_app_url, "none")
DEBUG: Setting[bool] = Setting("ROOFCORE_DEBUG", "flag", False, "1 (on); unset, 0, false, no or off (off)",
                               "the CLI shows an internal error's traceback instead of one line", parse_flag)
TRACE: Setting[bool] = Setting("ROOFCORE_TRACE", "flag", False, "1 (on); unset, 0, false, no or off (off)",
                               "the app prints timing marks of each run's phases on the server's stderr", parse_flag)

#: every variable, in the order `roofline config` prints them
SETTINGS: tuple[Setting[Any], ...] = (MAX_INPUT_MB, MAX_ROWS, MAX_KERNELS, MAX_JSON_DEPTH, PARSE_TIMEOUT_S, WORKERS,
                                 CATALOG_PATH, DB_URL, DB_PATH, APP_URL, DEBUG, TRACE)
BY_NAME: dict[str, Setting[Any]] = {s.name: s for s in SETTINGS}


def cores() -> int:
    """How many processes or threads to use: ``ROOFCORE_WORKERS``, else the CPUs this process may run on."""
    n = WORKERS.value()
    if n:
        return n
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_PASSWORD = re.compile(r"(://[^/:@]*:)[^/]*@")  #: the password of user:password@host


def shown(setting: Setting[Any]) -> str:
    """The current value as `roofline config` prints it (a malformed value is printed with what is wrong)."""
    try:
        v = setting.value()
    except RoofcoreError as e:
        raw = _PASSWORD.sub(r"\1***@", setting.raw()) if setting.secret else setting.raw()
        return f"{raw!r} (invalid: {' '.join(str(e).split())})"
    if v is None or v == ():
        return setting.shown_default or "none"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:,.0f}" if v == int(v) else f"{v:g}"
    if isinstance(v, tuple):
        return os.pathsep.join(str(p) for p in v)
    return _PASSWORD.sub(r"\1***@", str(v)) if setting.secret else str(v)


def table() -> list[dict[str, str]]:
    """One row per variable: name, value, source (env or default), type, limits, meaning."""
    return [{"name": s.name, "value": shown(s), "source": s.source(), "type": s.kind, "limits": s.limits,
             "meaning": s.meaning} for s in SETTINGS]
