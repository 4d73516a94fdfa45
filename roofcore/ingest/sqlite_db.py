"""Profilers' SQLite databases (docs/formats.md): rocprofv3's rocpd database (:mod:`.rocpd`) and an Nsight Systems
export (:mod:`.nsys_sqlite`), told apart by their tables and read with the stdlib's ``sqlite3`` from a private
in-memory copy.

The file's own SQL never runs: its tables are read by name (never its views), with ``PRAGMA query_only`` and
``trusted_schema = OFF``, and the reading stops after a number of SQLite steps proportional to the file's size (a
crafted file's endless join). A file shorter than its header's page count is "cut" with both sizes; a damaged one
gives SQLite's reason on one line (text that is not UTF-8: U+FFFD); a database written in WAL mode reads (the copy
is switched to a rollback journal). A database of neither tool is named where it is known (roofcore's run store,
the older rpd tracer), else listed by its tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InputError
from ..models import Workload

SQLITE_MAGIC = b"SQLite format 3\x00"
#: thousands of SQLite steps the reading may take per kB of the database, and at least, before it is stopped (a
#: crafted file's endless join): a real database takes a few per kB
STEPS_PER_BYTE = 64
BUDGET_FLOOR = 100_000
DAMAGED_HINT = "copy the file again, whole, from where the profiler wrote it."
HINT = ("load rocprofv3's rocpd database (`--output-format rocpd`, ROCm 7's default <pid>_results.db) or an Nsight "
        "Systems SQLite export (`nsys export --type sqlite`, or the .sqlite `nsys stats` writes beside the report).")

#: a database's reader: (connection, columns by table, source, context) -> workload
Reader = Callable[[Any, dict[str, set[str]], str, "dict[str, Any] | None"], Workload]
#: other tools' SQLite databases, by a table they hold: what they are and what to load instead
OTHERS = {"runs": ("a database of saved runs (roofcore's run store)", "use it as the run store (`--db sqlite:///FILE` "
                   "or ROOFCORE_DB_URL), not as a workload."),
          "rocpd_op": ("a database of the older rocprofiler tracer (rpd)", "profile with rocprofv3 (--output-format "
                       "csv, json or rocpd) and load what it writes."),
          "StringIds": ("an Nsight Systems SQLite export without CUDA kernels (no CUPTI_ACTIVITY_KIND_KERNEL table)",
                        "profile with CUDA tracing on (nsys profile -t cuda …) and check that kernels ran.")}


def parse_any(data: bytes, source: str, context: dict[str, Any] | None) -> Workload:
    """The workload of whichever profiler's database this is (see the module docstring)."""
    import sqlite3  # a Python built without it still reads every other format

    from . import nsys_sqlite, rocpd

    readers: list[tuple[str, Reader]] = [("rocpd_kernel_dispatch", rocpd.read), ("CUPTI_ACTIVITY_KIND_KERNEL",
                                                                                  nsys_sqlite.read)]
    con = opened(data, source, sqlite3)
    try:
        tables = {name: columns(con, name) for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")}
        for table, read in readers:
            if any(t == table or t.startswith(table) for t in tables):
                return read(con, tables, source, context)
        raise _unknown(tables, source)
    except (sqlite3.Error, UnicodeDecodeError) as e:  # SQLite's message can quote the damaged bytes
        if "interrupted" in str(e):
            raise InputError(where=source, text="the database took too long to query (stopped after "
                             f"{budget(len(data)):,} thousand steps): it is not laid out as the profiler writes "
                             "one.", hint=HINT) from None
        raise _damaged(source, _why(e)) from None
    finally:
        con.close()


def _unknown(tables: dict[str, set[str]], source: str) -> InputError:
    other = next((what for table, what in OTHERS.items() if table in tables), None)
    if other is not None:
        return InputError(where=source, text=f"this is {other[0]}, not a profile.", hint=other[1])
    shown = ", ".join(sorted(tables)[:6]) + (", …" if len(tables) > 6 else "") if tables else "no tables"
    return InputError(where=source, expected="a profiler's database (rocprofv3's rocpd_kernel_dispatch or Nsight "
                      "Systems' CUPTI_ACTIVITY_KIND_KERNEL table)", found=f"an SQLite database with {shown}",
                      hint=HINT)


def budget(size: int) -> int:
    """The step budget, in thousands of SQLite steps, of a database of ``size`` bytes."""
    return STEPS_PER_BYTE * size // 1000 + BUDGET_FLOOR


def opened(data: bytes, source: str, sqlite3: Any) -> Any:
    """An in-memory copy of the database, read-only, its queries bounded; a cut file refused by its header."""
    if bytes(data[:16]) != SQLITE_MAGIC:  # a format forced on another file
        raise InputError(where=source, expected="an SQLite database (a profiler's .db or .sqlite file)",
                         found="other data", hint="let the format be detected from the content (no --format).")
    if len(data) < 100:
        raise InputError(where=source, expected="an SQLite database", found="a file too short for its header",
                         hint=DAMAGED_HINT)
    head = bytes(data[:100])
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if page < 512 or page & (page - 1):
        raise _damaged(source, f"its header's page size, {page:,}, is not a power of two from 512")
    if head[24:28] == head[92:96] and pages and len(data) < page * pages:  # the header's count is valid
        raise InputError(where=source, text=f"the database is cut: its header counts {pages:,} pages of {page:,} "
                         f"bytes ({page * pages:,} bytes), the file ends after {len(data):,}.", hint=DAMAGED_HINT)
    buf: bytes | bytearray = data
    if head[18:20] == b"\x02\x02":  # written in WAL mode: an in-memory copy reads it as a rollback-journal file
        buf = bytearray(data)
        buf[18:20] = b"\x01\x01"
    con = sqlite3.connect(":memory:")
    con.text_factory = _text_of  # text that is not UTF-8 (a damaged page): shown with U+FFFD, never an exception
    try:
        con.deserialize(buf)  # SQLite's own copy: the only one, but for a WAL file's header
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA trusted_schema = OFF")
        steps = [0]
        limit = budget(len(buf))

        def bounded() -> int:
            steps[0] += 1
            return int(steps[0] > limit)

        con.set_progress_handler(bounded, 1000)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, UnicodeDecodeError) as e:
        con.close()
        raise _damaged(source, _why(e)) from None
    return con


def _damaged(source: str, why: str) -> InputError:
    return InputError(where=source, expected="a readable SQLite database", found=f"a damaged one ({why})",
                      hint=DAMAGED_HINT)


def _why(e: Exception) -> str:
    """SQLite's reason, on one line; a reason whose own text was damaged: that the schema is."""
    return " ".join(str(e).split()) if not isinstance(e, UnicodeDecodeError) else "its schema is damaged"


def _text_of(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def columns(con: Any, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({q(table)})")}


def q(name: str) -> str:
    """A table or column name quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


def text(v: object) -> str:
    """A timestamp or id as the text a profiler's CSV would hold: whole numbers as digits, others as written."""
    if type(v) is int:
        return str(v)
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
        return str(int(v))
    return str(v).strip() if not isinstance(v, bytes) else ""


def probe(marker: bytes) -> Callable[[bytes], bool]:
    """A format's check of a database's bytes: its marker table's name is written in the schema it holds."""
    return lambda data: data.find(marker) != -1
