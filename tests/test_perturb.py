"""Every working sample in ../shared/samples through the changes real files go through on their way to a user:
a spreadsheet round-trip (minimal quoting, CRLF, a UTF-8 BOM, no final newline, numbers re-typed with or without
thousands separators or in ``1.5e+06`` form), kernel names holding commas left unquoted, program output before and
after the table, a truncated last line, columns reordered, an unknown column inserted in the middle (newer ncu
versions add ``Body Item Label``), gzip. Each must give the numbers the unperturbed file gives (same kernels, per
kernel the same name, count, FLOPs, time and bytes, NaN where the original has NaN); a truncated last line loses
exactly that row, said in a warning naming its line; a truncated JSON trace is refused with one clear line.

The perturbations are written for CSV text in general (the csv module's view of the rows, re-emitted), never for
one sample: a new sample in tests/samples_expected.yaml is perturbed without new code. JSON traces get the
changes that apply to them (gzip, CRLF, BOM, final newline, truncation). Skips where ../shared/samples is absent.
"""

from __future__ import annotations

import functools
import gzip
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from test_samples import ENTRIES, WORKS, sample_paths

import roofcore
from roofcore.errors import RoofcoreError
from roofcore.models import Workload

# --------------------------------------------------------------------------------------- a file as lines

#: JSON traces larger than this are not perturbed: the same code reads every trace of a format, and the smaller
#: traces of each JSON format (samples and fixtures) cover it; each read of a large one costs seconds
BIG_JSON = 4_000_000

_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,]*)')
_NUMBER = re.compile(r"^[+-]?(\d+)(\.\d+)?$")
_SEPARATED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
#: a cell: (text, quoting) — True: quoted, None: quoted where it must be (a comma, quote or newline), False: never
Cell = tuple[str, "bool | None"]


def cells(line: str) -> list[Cell]:
    """A CSV line's fields, each with whether it was quoted (the csv module forgets that)."""
    return list(_cells(line))


@functools.lru_cache(maxsize=1 << 16)  # the same lines are perturbed many ways
def _cells(line: str) -> tuple[Cell, ...]:
    if '"' not in line:
        return tuple((v, None) for v in line.split(","))
    out: list[Cell] = []
    pos = 0
    while True:
        m = _FIELD.match(line, pos)
        quoted = m.group(1) is not None
        value, end = (m.group(1).replace('""', '"'), m.end()) if quoted else (m.group(2), m.end())
        if end < len(line) and line[end] != ",":  # a stray quote: the rest of the field as it is
            nxt = line.find(",", end)
            end = len(line) if nxt < 0 else nxt
            value, quoted = line[m.start():end], False
        out.append((value, True if quoted else None))
        if end >= len(line):
            return tuple(out)
        pos = end + 1


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def emit(row: list[Cell]) -> str:
    return ",".join('"' + v.replace('"', '""') + '"' if q or (q is None and _NEEDS_QUOTES.search(v)) else v
                    for v, q in row)


def _looks_like_header(row: list[Cell]) -> bool:
    """Three or more column names: each holds a letter, no number alone, no run of spaces (a console table) and no
    space at either end (a log line with commas)."""
    vals = [v for v, _ in row]
    return (len(vals) >= 3 and all(re.search(r"[A-Za-z]", v) and "  " not in v and v == v.strip() for v in vals)
            and not any(_NUMBER.match(v) for v in vals) and not vals[0].startswith("=="))


@dataclass(frozen=True)
class Doc:
    """One input file as lines (endings, BOM and compression kept apart), and where its CSV table is."""

    name: str
    kind: str  #: csv | json | text
    lines: tuple[str, ...]
    ends: tuple[str, ...]  #: each line's ending ("\n", "\r\n", "" for the last without one)
    bom: bool
    gz: bool
    header: int | None = None  #: the table's header line (csv)
    last: int | None = None  #: the table's last row (csv)
    size: int = 0  #: bytes, decompressed

    @classmethod
    def of(cls, name: str, data: bytes) -> Doc:
        gz = data[:2] == b"\x1f\x8b"
        if gz:
            data = gzip.decompress(data)
            name = name.removesuffix(".gz")
        text = data.decode("utf-8", errors="surrogateescape")
        bom = text.startswith("\ufeff")
        text = text.removeprefix("\ufeff")
        if text.lstrip()[:1] in "[{" and len(data) > BIG_JSON:  # only its size is used
            return cls(name, "json", (text,), ("",), bom, gz, size=len(data))
        parts = text.split("\n")
        lines = tuple(p.removesuffix("\r") for p in parts)
        ends = (*("\r\n" if p.endswith("\r") else "\n" for p in parts[:-1]), "")
        if lines[-1] == "":  # the final newline
            lines, ends = lines[:-1], ends[:-1]
        kind, header, last = "text", None, None
        if text.lstrip()[:1] in "[{":
            kind = "json"
        else:
            for i in range(len(lines) - 1):
                if _looks_like_header(cells(lines[i])) and len(cells(lines[i + 1])) >= 3:
                    kind, header = "csv", i
                    last = max(j for j in range(i, len(lines)) if len(cells(lines[j])) >= 2)
                    break
        return cls(name, kind, lines, ends, bom, gz, header, last, len(data))

    def data(self) -> tuple[bytes, str]:
        if len(set(self.ends[:-1])) <= 1:  # one kind of line ending (fast for large files)
            sep = self.ends[0] if len(self.ends) > 1 else "\n"
            text = sep.join(self.lines) + self.ends[-1]
        else:
            text = "".join(a + b for a, b in zip(self.lines, self.ends, strict=True))
        text = ("\ufeff" if self.bom else "") + text
        raw = text.encode("utf-8", errors="surrogateescape")
        return (gzip.compress(raw, mtime=0), self.name + ".gz") if self.gz else (raw, self.name)

    @property
    def rows(self) -> range:
        return range(self.header, self.last + 1)

    def map_rows(self, fn: Callable[[int, list[Cell]], list[Cell]]) -> Doc:
        """Each table row (header included) through ``fn(index, cells)``; lines with fewer than two fields
        (noise inside the table) stay as they are."""
        lines = list(self.lines)
        for i in self.rows:
            row = cells(lines[i])
            if len(row) >= 2:
                lines[i] = emit(fn(i, row))
        return replace(self, lines=tuple(lines))

    def width(self) -> int:
        return len(cells(self.lines[self.header]))


# ------------------------------------------------------------------------------------------ perturbations
# Each takes a Doc and returns the perturbed Doc, or None where it does not apply to that file.



def _big(d: Doc) -> bool:
    return d.kind == "json" and d.size > BIG_JSON


def crlf(d: Doc) -> Doc | None:
    if _big(d):
        return None
    windows = sum(e == "\r\n" for e in d.ends) > len(d.ends) / 2
    return replace(d, ends=tuple(("\n" if windows else "\r\n") if e else e for e in d.ends))


def bom(d: Doc) -> Doc | None:
    if _big(d):
        return None
    return replace(d, bom=not d.bom)


def no_final_newline(d: Doc) -> Doc | None:
    if not d.ends[-1] or _big(d):
        return None
    return replace(d, ends=(*d.ends[:-1], ""))


def _minimal(d: Doc) -> Doc | None:
    return d.map_rows(lambda i, row: [(v, None) for v, _ in row]) if d.kind == "csv" else None


def spreadsheet(d: Doc) -> Doc | None:
    """A spreadsheet round-trip all at once: minimal quoting, CRLF, a BOM, no final newline."""
    if d.kind != "csv":
        return None
    out = _minimal(d)
    return replace(out, ends=(*("\r\n",) * (len(d.ends) - 1), ""), bom=True)


def _retype(d: Doc, fn: Callable[[str], str | None]) -> Doc | None:
    if d.kind != "csv":
        return None
    changed = False

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        nonlocal changed
        if i == d.header:
            return row
        out = []
        for v, q in row:
            new = fn(v)
            changed |= new is not None
            out.append((v, q) if new is None else (new, q))
        return out

    out = d.map_rows(row_fn)
    return out if changed else None


def _separated(v: str) -> str | None:
    m = _NUMBER.match(v)
    if not m or len(m.group(1)) < 4:
        return None
    sign = "-" if v.startswith("-") else ""
    return f"{sign}{int(m.group(1)):,}{m.group(2) or ''}"


def thousands(d: Doc) -> Doc | None:
    """Numbers of four or more digits re-typed with thousands separators (1234567 → "1,234,567", quoted)."""
    return _retype(d, _separated)


def no_thousands(d: Doc) -> Doc | None:
    """Numbers printed with thousands separators re-typed without them."""
    return _retype(d, lambda v: v.replace(",", "") if _SEPARATED.match(v) else None)


def _scientific(v: str) -> str | None:
    m = _NUMBER.match(v)
    if not m or len((m.group(1) + (m.group(2) or "")[1:]).lstrip("0")) > 15:
        return None  # a spreadsheet keeps 15 digits: it would lose the rest (a ns timestamp's last ones)
    x = float(v)
    if not (abs(x) >= 1e6 or 0 < abs(x) < 1e-3):
        return None
    text = np.format_float_scientific(x, unique=True, exp_digits=2)
    return text.replace(".e", ".0e")


def scientific(d: Doc) -> Doc | None:
    """Large and small numbers re-typed as a spreadsheet shows them: 1234567 → 1.234567e+06 (the same value)."""
    return _retype(d, _scientific)


_NAME_COLUMN = re.compile(r"^(kernel[ _]?name|name|kernel)$", re.I)


def names_unquoted(d: Doc) -> Doc | None:
    """Kernel names left unquoted: a name holding commas spills over several fields."""
    if d.kind != "csv":
        return None
    cols = [j for j, (v, _) in enumerate(cells(d.lines[d.header])) if _NAME_COLUMN.match(v.strip())]
    hit = False

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        nonlocal hit
        if i == d.header:
            return row
        for j in cols:
            if j < len(row) and "," in row[j][0]:
                hit = True
                row[j] = (row[j][0], False)
        return row

    out = d.map_rows(row_fn)
    return out if hit else None


PREAMBLE = ("Loading model from ./checkpoints (3 shards)", "batch 8, seq 128, warm-up: 3 iterations, timed: 10", "")
TRAILER = ("", "Done: 10 iterations, 3.21 ms/iter, 311.5 samples/s", "exit status 0")


def program_output(d: Doc) -> Doc | None:
    """The program's own output printed before and after the table (a tee'd log)."""
    if d.kind == "json":
        return None
    n0, n1 = len(PREAMBLE), len(TRAILER)
    ends = (*("\r\n" if d.ends[0] == "\r\n" else "\n",) * n0, *d.ends[:-1], d.ends[-1] or "\n",
            *("\r\n" if d.ends[0] == "\r\n" else "\n",) * (n1 - 1), d.ends[-1])
    shift = {"header": d.header + n0, "last": d.last + n0} if d.kind == "csv" else {}
    return replace(d, lines=(*PREAMBLE, *d.lines, *TRAILER), ends=ends, **shift)


def _spilled(d: Doc) -> bool:
    """Whether some row holds more fields than the header (a name with unquoted commas): where its columns are
    cannot be told here, so the columns are not moved."""
    width = d.width()
    return any(len(r) > width and any(v.strip() for v, _ in r[width:]) for r in map(cells, d.lines[d.header:d.last + 1]))


def _reshape(d: Doc, fn: Callable[[list[Cell]], list[Cell]]) -> Doc | None:
    if d.kind != "csv" or _spilled(d):
        return None
    width = d.width()

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        if len(row) < width:
            row = row + [("", None)] * (width - len(row))
        return fn(row[:width]) + row[width:]

    return d.map_rows(row_fn)


def reorder(d: Doc) -> Doc | None:
    """The columns in the reverse order."""
    return _reshape(d, lambda row: row[::-1])


def insert_column(d: Doc) -> Doc | None:
    """An unknown column in the middle (newer ncu versions add ``Body Item Label``); a repeated header gets it too."""
    if d.kind != "csv" or _spilled(d):
        return None
    at = d.width() // 2
    header = cells(d.lines[d.header])

    def row_fn(i: int, row: list[Cell]) -> list[Cell]:
        label = "Body Item Label" if row == header else "item 1"
        row = row + [("", None)] * (at - len(row))
        return [*row[:at], (label, row[0][1]), *row[at:]]

    return d.map_rows(row_fn)


def gzipped(d: Doc) -> Doc | None:
    """Compressed (or, where the sample is compressed, decompressed)."""
    if _big(d):
        return None
    return replace(d, gz=not d.gz)


def truncated(d: Doc) -> Doc | None:
    """A partial copy: the file ends half-way through its table's last row (a CSV) or at 60% (a JSON trace)."""
    if _big(d):
        return None
    if d.kind == "json":
        text = "\n".join(d.lines)
        cut = text[: int(len(text) * 0.6)]
        lines = tuple(cut.split("\n"))
        return replace(d, lines=lines, ends=(*("\n",) * (len(lines) - 1), ""))
    if d.kind != "csv" or d.last == d.header:
        return None
    line = d.lines[d.last]
    return replace(d, lines=(*d.lines[: d.last], line[: len(line) // 2]), ends=(*d.ends[: d.last], ""))


def without_last_row(d: Doc) -> Doc:
    """What a truncated copy can still give: the file without its table's last row."""
    return replace(d, lines=d.lines[: d.last] + d.lines[d.last + 1:], ends=d.ends[: d.last] + d.ends[d.last + 1:])


#: the changes each file goes through (minimal quoting alone is not run: ``spreadsheet`` is minimal quoting with the
#: line endings, BOM and final newline that are also run alone; each read costs time on a 2-core machine)
PERTURBATIONS: dict[str, Callable[[Doc], Doc | None]] = {
    f.__name__: f for f in (crlf, bom, no_final_newline, spreadsheet, thousands, no_thousands, scientific,
                            names_unquoted, program_output, truncated, reorder, insert_column, gzipped)}


# ---------------------------------------------------------------------------------------------- checking

COMPARED = ("name", "count", "flops", "time_s", "precision")


def differences(base: Workload, got: Workload, rel: float = 1e-9) -> list[str]:
    """How ``got`` differs from ``base``: kernel count, then per kernel name, count, FLOPs, time and bytes."""
    if len(got) != len(base):
        return [f"{len(got)} kernels, expected {len(base)}"]
    fb, fg = base.frame, got.frame
    cols = [c for c in fb.columns if c in COMPARED or c.startswith("bytes_")]
    out = [f"column {c} missing" for c in cols if c not in fg.columns]
    out += [f"column {c} added" for c in fg.columns if c.startswith("bytes_") and c not in fb.columns]
    for c in (c for c in cols if c in fg.columns):
        a, b = fb[c].to_numpy(), fg[c].to_numpy()
        if fb[c].dtype.kind in "fiu":
            a, b = a.astype(np.float64), b.astype(np.float64)
            same = np.isclose(a, b, rtol=rel, atol=0.0) | (np.isnan(a) & np.isnan(b))
        else:
            same = np.array([x == y or (x != x and y != y) for x, y in zip(a, b, strict=True)], dtype=bool)
        for i in np.flatnonzero(~same)[:3]:
            out.append(f"row {i} ({str(fb['name'].iloc[i])[:60]!r}): {c} {b[i]!r}, expected {a[i]!r}")
    return out


def _unused_one_row_fewer(base: Workload, got: Workload) -> list[str]:
    """``got`` is ``base`` with one kernel (the last row's) missing or changed — nothing else."""
    if len(got) not in (len(base), len(base) - 1):
        return [f"{len(got)} kernels, expected {len(base)} or one fewer"]
    return []


def read(docs: list[Doc]) -> Workload:
    """The files read together; one file by ``roofcore.read`` (the parser and its checks, without the joins of
    several files, which cost time on every read and change no number of one file)."""
    if len(docs) == 1:
        return roofcore.read(*docs[0].data())
    return roofcore.read_many([d.data() for d in docs])


DATA = Path(__file__).parent / "data"
#: the repository's own fixtures in the shape of each format (run where ../shared/samples is absent too):
#: name -> (files under tests/data, format family)
FIXTURES: dict[str, tuple[tuple[str, ...], str]] = {
    **{f"ncu/{f}": ((f"ncu/{f}",), "ncu") for f in (
        "details_12col_nersc.csv", "details_20col_rules.csv", "details_set_full_ragged.csv",
        "details_trailing_comma.csv", "details_nvtx.csv", "details_two_tables.csv", "details_log_file.log",
        "raw_page.csv", "raw_legacy_2019.csv")},
    **{f"nsys/{f}": ((f"nsys/{f}",), "nsys") for f in (
        "kern_sum.csv", "gpukernsum_old.csv", "stats_stdout_csv.txt", "console.txt")},
    **{f"nvprof/{f}": ((f"nvprof/{f}",), "nvprof") for f in (
        "gpu_trace.csv", "metrics_flops_dram.csv", "summary.csv", "summary_unquoted_names.csv")},
    **{f"rocprof/{f}": ((f"rocprof/{f}",), "rocprof") for f in (
        "results_v1.csv", "results_v2.csv", "results.stats.csv", "kernel_trace_v3.csv", "counter_collection_v3.csv",
        "pmc_perf_mi200.csv", "pmc_perf_v3layout.csv", "pmc_kernel_top.csv", "hiptrace_results.json",
        "rocprofv3_results.json")},
    "rocprof-compute MI200 folder": (("rocprof/pmc_perf_mi200.csv", "rocprof/sysinfo_mi200.csv", "rocprof/roofline.csv"),
                                     "rocprof"),
    "rocprofv3 trace + counters": (("rocprof/kernel_trace_v3.csv", "rocprof/counter_collection_v3.csv"), "rocprof"),
    **{f"kineto/{f}": ((f"kineto/{f}",), "pytorch") for f in ("shapes.pt.trace.json", "cupti_ranges.pt.trace.json")},
    "inventory CSV": (("advise/measured_block.csv",), "inventory"),
}


#: perturbations a format refuses on purpose, and why (the check is then that it refuses, not that it reads)
REFUSES: dict[str, dict[str, str]] = {
    "inventory": {  # roofline's own schema, written by hand or by a script: strict, so that a typo is not lost
        "insert_column": "an unknown column is refused (a misspelt 'flops' must not be read as no FLOPs)",
        "program_output": "the header is the first line (a log is no inventory)",
    },
}


def paths(key: str) -> list[Path]:
    return [DATA / f for f in FIXTURES[key][0]] if key in FIXTURES else sample_paths(key)


@functools.cache
def originals(key: str) -> tuple[Doc, ...]:
    return tuple(_doc(p) for p in paths(key))


@functools.cache
def _doc(path: Path) -> Doc:
    return Doc.of(path.name, path.read_bytes())


@functools.cache
def _perturbed(path: Path, how: str) -> Doc | None:
    """A file perturbed (once: a group of files and the files alone share it)."""
    return PERTURBATIONS[how](_doc(path))


@functools.cache
def baseline(key: str) -> Workload:
    return read(list(originals(key)))


def baseline_of(docs: list[Doc]) -> Workload:
    return baseline(next(k for k in KEYS if list(originals(k)) == docs))


KEYS = [*FIXTURES, *WORKS]


@pytest.mark.parametrize("key", [k for k in KEYS if k in FIXTURES or len(ENTRIES[k]["files"]) == 1])
def test_docs_round_trip(key):
    """Reading a file into lines and writing it back gives its bytes (the perturbations start from the file)."""
    for p, d in zip(paths(key), originals(key), strict=True):
        if _big(d):
            continue
        data, _ = d.data()
        raw = p.read_bytes()
        assert _unzip(data) == _unzip(raw), p.name


def _unzip(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _case(key: str, how: str):
    marks = [] if key in FIXTURES else [pytest.mark.samples]
    return pytest.param(key, how, marks=marks, id=f"{key}-{how}")


CASES = [_case(k, p) for k in KEYS for p in PERTURBATIONS]


@pytest.mark.parametrize(("key", "how"), CASES)
def test_perturbed_sample_gives_the_same_numbers(key, how):
    docs = list(originals(key))
    perturbed = [_perturbed(p, how) for p in paths(key)]
    if all(p is None for p in perturbed):
        pytest.skip(f"{how} does not apply to these files")
    new = [p or d for p, d in zip(perturbed, docs, strict=True)]
    if key in FIXTURES and how in REFUSES.get(FIXTURES[key][1], {}):
        with pytest.raises(RoofcoreError):  # refused on purpose: said in one line
            read(new)
        return
    base = baseline(key)
    if how == "truncated":
        _check_truncated(docs, new, perturbed)
        return
    try:
        got = read(new)
    except RoofcoreError as e:
        pytest.fail(f"{how}: refused: {e}")
    problems = differences(base, got)
    assert not problems, f"{how}: " + "; ".join(problems[:8])


def _check_truncated(docs: list[Doc], new: list[Doc], perturbed: list[Doc | None]) -> None:
    """A CSV cut in its last row: that row is lost and a warning names its line. A JSON trace cut short: refused with
    one line saying the file ends early, or read as far as it goes with a warning saying so."""
    if any(p is not None and p.kind == "json" for p in perturbed):
        early = re.compile(r"truncat|ends? (early|before)|incomplete|cut off", re.I)
        try:
            got = read(new)
        except RoofcoreError as e:
            text = str(e)
            assert "\n" not in text.strip() and early.search(text), text
            return
        assert any(early.search(w) for w in got.warnings), f"a trace cut short read without a word: {got.warnings}"
        assert len(got) <= len(baseline_of(docs)), "more kernels from a part of the trace than from all of it"
        return
    try:
        want = read([without_last_row(d) if p is not None else d for d, p in zip(docs, perturbed, strict=True)])
    except RoofcoreError as e:  # nothing left without that row: the cut file is refused as well
        with pytest.raises(RoofcoreError):
            read(new)
        del e
        return
    got = read(new)
    problems = differences(want, got)
    assert not problems, "truncated: " + "; ".join(problems[:8])
    said = " ".join([*got.warnings, *(f"{s.row} {s.reason}" for s in got.skipped)])
    if not differences(baseline_of(docs), want):
        return  # the row did not count (a table the reader leaves aside): nothing to say
    for d, p in zip(docs, perturbed, strict=True):
        if p is not None:  # by its line in the file, or as the how-manieth row under the header
            line, row = d.last + 1, d.last - d.header
            assert re.search(rf"\b({line}|{row})\b", said), f"no warning names line {line} of {d.name}: {said[:300]!r}"


def test_numbers_with_thousands_separators():
    assert _separated("1234567") == "1,234,567"
    assert _separated("-1234.50") == "-1,234.50"
    assert _separated("999") is None
    assert _scientific("1234567") == "1.234567e+06"
    assert float(_scientific("0.0001234")) == 0.0001234
    assert _scientific("12.5") is None
    assert _scientific("12345678901234567890") is None  # beyond a spreadsheet's 15 digits
    assert _scientific("3599977333751882") is None
    assert _scientific("3599977333897610") is None  # 16 digits: "3.59997733389761e+15" would not say the last


def test_cells_keep_their_quoting():
    line = '"a, b",1,"",x,"say ""hi"""'
    assert cells(line) == [("a, b", True), ("1", None), ("", True), ("x", None), ('say "hi"', True)]
    assert emit(cells(line)) == line
    assert emit([("a, b", False), ("1", None)]) == "a, b,1"
    assert cells("a,") == [("a", None), ("", None)]




# ----------------------------------------------------------------------------------- what cannot be put back
# Each quirk class on the repository's own fixtures, where the perturbation destroys information or the split is
# decided by what a column must look like.


def test_ncu_written_back_without_any_quotes():
    """A script that joined every field with commas: names, ``(256, 1, 1)`` and ``33,619,968`` spill over several
    fields; each is put back by its shape (brackets that balance, digit groups after a number)."""
    d = Doc.of("script.csv", (DATA / "ncu/details_20col_rules.csv").read_bytes())
    bare = d.map_rows(lambda i, row: [(v, False) for v, _ in row])
    assert "ln_fwd_kernel<float, 1024>(LayerNormParams),1,7,(256, 1, 1)" in bare.data()[0].decode()
    got = read([bare])
    assert not differences(read([d]), got) and not got.skipped


def test_ncu_name_whose_end_cannot_be_told_is_refused():
    """A name holding commas without the space a demangler writes after them, left unquoted on a details page
    (whose rows vary in width): where it ends cannot be told, and the refusal says so."""
    d = Doc.of("script.csv", (DATA / "ncu/details_20col_rules.csv").read_bytes())
    bad = d.map_rows(lambda i, row: [(v.replace(", ", ","), False) if j == 4 else (v, q)
                                     for j, (v, q) in enumerate(row)])
    with pytest.raises(RoofcoreError, match=r"line 3: no launch row could be read: the Kernel Name holds commas "
                                            r"that are not quoted, and where it ends cannot be told"):
        read([bad])


def test_rocprof_name_whose_end_cannot_be_told_is_left_out():
    """A results.csv row whose kernel name is unquoted and which lacks a field as well: the count no longer says where
    the name ends (it would end inside its brackets), so the row is left out, said; the other row is read."""
    lines = (DATA / "rocprof/results_v1.csv").read_text().split("\n")
    lines[2] = lines[2].replace('"saxpy(float, float const*, float*, int) [clone .kd]",0,0,1,',
                                "saxpy(float, float const*, float*, int) [clone .kd],0,1,")
    w = roofcore.read("\n".join(lines).encode(), "results.csv")
    assert list(w.frame["name"]) == ["copy_kernel(float*, float*, int, int) [clone .kd]"]
    assert ("line 3", "KernelName holds commas that are not quoted, and with 28 fields where the header has 26, "
            "where it ends cannot be told") in [(s.row, s.reason) for s in w.skipped]


def test_ncu_file_cut_inside_its_last_value():
    """pyarrow reads an open quote at the end of a file as a value (``"3.10"`` cut to ``"3.``): the row is left
    out, named by its line."""
    data = (DATA / "ncu/details_12col_nersc.csv").read_bytes().rstrip(b"\n")
    w = roofcore.read_many([(data[:-3], "cut.csv")])
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("line 55", "the file ends inside this row (a truncated copy?)")]
    assert not differences(roofcore.read_many([(data, "cut.csv")]), w)


def test_spreadsheet_timestamps():
    """rocprof's ns timestamps as a spreadsheet re-types them: thousands separators and scientific notation that
    kept every digit read as written; a 16-digit timestamp shown with 15 digits lost its last one: unknown, said."""
    from roofcore.ingest.rocprof_common.table import plain_number

    assert plain_number("3,599,977,333,751,882") == "3599977333751882"
    assert plain_number("1.234567e+06") == "1234567"
    assert plain_number("2.5E-04") == "0.00025"
    assert plain_number("3.599977333751882e+15") == "3599977333751882"  # every digit kept
    assert plain_number("3.59997733375188e+15") == "3.59997733375188e+15"  # the last digit lost: left as it is
    assert plain_number("12,34") == "12,34" and plain_number("n/a") == "n/a"
    src = (DATA / "rocprof/results_v1.csv").read_text()
    base = roofcore.read_many([(src.encode(), "results.csv")])
    big = src.replace(",2000,12000,", ",1234567890123456,1234567890133456,")  # 16 digits, 10,000 ns apart
    exact = roofcore.read_many([(big.replace("1234567890123456", "1.234567890123456e+15")
                                 .replace("1234567890133456", "1.234567890133456e+15").encode(), "results.csv")])
    assert exact.frame["time_s"].tolist() == [10e-6, base.frame["time_s"][1]]
    lossy = roofcore.read_many([(big.replace("1234567890123456", "1.23456789012346E+15").encode(), "results.csv")])
    assert np.isnan(lossy.frame["time_s"][0]) and "scientific notation" in " ".join(lossy.warnings)


def test_names_put_back_by_their_shape():
    from roofcore.ingest.columns import header_with, is_open, rejoin, unspill

    assert rejoin(["1", "f(a", " b)", "5", ""], 1, 4) == ["1", "f(a, b)", "5", ""]  # a trailing comma stays
    assert rejoin(["1", "f(a", " b", " c)", "5", ""], 1, 4) == ["1", "f(a, b, c)", "5", ""]  # an empty last column
    assert rejoin(["1", "f<1", "2>", "5"], 1, 3) == ["1", "f<1,2>", "5"]  # the count decides
    assert unspill(["0", "void f<float", " 2>(float*)", "1"], 1) == ["0", "void f<float, 2>(float*)", "1"]
    assert unspill(["0", "void f<float", "2>(float*)", "1"], 1) is None  # where it ends cannot be told
    assert unspill(["0", "operator<(int)", "1"], 1) == ["0", "operator<(int)", "1"]
    assert is_open("void f<float") and not is_open("a->b(int)") and not is_open("k<1>(int)")
    h = header_with("Name", "Calls", "TotalDurationNs")
    assert h.search('x\nCalls,"Name",Body Item Label,TotalDurationNs\n')
    assert not h.search("KernelName,Calls,TotalDurationNs") and not h.search("Name,Calls")
