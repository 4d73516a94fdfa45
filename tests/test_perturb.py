"""Every working sample in ../shared/samples through the changes real files go through on their way to a user:
a spreadsheet round-trip (minimal quoting, CRLF, a UTF-8 BOM, no final newline, numbers re-typed with or without
thousands separators or in ``1.5e+06`` form), kernel names holding commas left unquoted, program output before and
after the table, a truncated last line, columns reordered, an unknown column inserted in the middle (newer ncu
versions add ``Body Item Label``), gzip, lone ``\r`` line ends (classic Mac), UTF-16 from a PowerShell redirect, a
spreadsheet's tab-separated UTF-16 "Unicode text" and its semicolon CSV with decimal commas, a totals row under
the table, the rows sorted by kernel name with empty cells last (a units row moves to the bottom; the rows are
then compared in one order), empty fields right of the table (a spreadsheet's padding, the header's included,
or a script's trailing commas), a blank line or a row of empty fields between two rows, a spreadsheet's ``sep=,`` line above the table, and
pandas' index as a first column and whole numbers as floats in a column with a gap (``df.to_csv(path)``). Each must give the numbers the unperturbed file gives (same kernels, per
kernel the same name, count, FLOPs, time and bytes, NaN where the original has NaN); a truncated last line loses
exactly that row, said in a warning naming its line; a JSON trace cut short is refused with one line saying the
file ends early, or read as far as it goes with a warning saying so (Kineto's reader keeps the complete events).

The perturbations (tests/perturbations.py) are written for CSV text in general, never for one sample: a new sample
in tests/samples_expected.yaml is perturbed without new code. JSON traces get the changes that apply to them
(gzip, CRLF, BOM, final newline, truncation). The repository's own fixtures (tests/data) go through the same
changes, so every class is tested where ../shared/samples is absent; the samples' cases skip there.
"""

from __future__ import annotations

import functools
import gzip
import io
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from perturbations import (
    ACCENTS,
    CHINESE,
    CYRILLIC,
    JAPANESE,
    PERTURBATIONS,
    Doc,
    accented,
    as_scientific,
    cells,
    emit,
    fifteen_digits,
    is_big,
    mac_cr,
    with_separators,
    without_last_row,
)
from test_samples import ENTRIES, WORKS, sample_paths

import roofcore
from roofcore.errors import RoofcoreError
from roofcore.ingest import dbcs
from roofcore.ingest.dialect import CYRILLIC_NOTE, DBCS_NOTE, LEGACY_NOTE, MAC_NOTE
from roofcore.models import Workload

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
        "kern_sum.csv", "gpukernsum_old.csv", "stats_stdout_csv.txt", "console.txt", "kern_sum_timeunit_us.csv",
        "cuda_gpu_trace_nvtx.csv", "nvtx_kern_sum.csv")},
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
    **{f"xla/{f}": ((f"xla/{f}",), "xprof") for f in ("roofline_model_gpu_steps.csv", "roofline_model_run1_tpuhost.csv")},
    "rocprofv3 trace + markers": (("rocprofv3/9_kernel_trace.csv", "rocprofv3/9_marker_api_trace.csv"), "markers"),
}


#: perturbations a format refuses on purpose, and why (the check is then that it refuses, not that it reads)
REFUSES: dict[str, dict[str, str]] = {
    "inventory": {  # roofline's own schema, written by hand or by a script: strict, so that a typo is not lost
        "insert_column": "an unknown column is refused (a misspelt 'flops' must not be read as no FLOPs)",
        "program_output": "the header is the first line (a log is no inventory)",
    },
    "xprof": {  # a download from xprof's web page, never a program's output: known by its first line
        "program_output": "xprof's export is known by its header on the first line",
        "reorder": "xprof's export is known by the order of its first columns",
    },
    "markers": {  # rocprofv3 writes the marker trace itself, beside the kernel trace
        "program_output": "rocprofv3 writes marker_api_trace.csv itself: its header is the first line",
        "reorder": "the marker trace is known by the order of its first columns",
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


KEYS = [*FIXTURES, *WORKS]


@pytest.mark.parametrize("key", [k for k in KEYS if k in FIXTURES or len(ENTRIES[k]["files"]) == 1])
def test_docs_round_trip(key):
    """Reading a file into lines and writing it back gives its bytes (the perturbations start from the file)."""
    for p, d in zip(paths(key), originals(key), strict=True):
        if is_big(d):
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
        _check_truncated(key, new, perturbed)
        return
    try:
        got = read(new)
    except RoofcoreError as e:
        pytest.fail(f"{how}: refused: {e}")
    if how in REORDERS:  # the rows' order follows the file's: compared as sets of kernels
        base, got = by_name(base), by_name(got)
    problems = differences(base, got)
    assert not problems, f"{how}: " + "; ".join(problems[:8])


#: how a code page's table is saved (from its UTF-8 twin), the letters its names get, and the note it must carry
PAGES = {"windows-1252": (lambda t: replace(t, cp1252=True), ACCENTS, "cp1252", LEGACY_NOTE),
         "mac-roman": (lambda t: replace(mac_cr(t) or t, mac_roman=True), ACCENTS, "cp1252", MAC_NOTE),
         "windows-1251": (lambda t: replace(t, cp1251=True), CYRILLIC, "cp1251", CYRILLIC_NOTE),
         "gbk": (lambda t: replace(t, page="gbk"), CHINESE, "gbk", DBCS_NOTE.format(page=dbcs.PAGES["gbk"])),
         "shift-jis": (lambda t: replace(t, page="cp932"), JAPANESE, "cp932",
                       DBCS_NOTE.format(page=dbcs.PAGES["cp932"]))}


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("key", [pytest.param(k, marks=[] if k in FIXTURES else [pytest.mark.samples]) for k in KEYS])
def test_a_windows_code_page_reads_as_its_utf8_twin(key, page):
    """A table with names outside ASCII saved in Windows-1252 (a spreadsheet's "CSV" on Windows), in Mac OS Roman
    with lines ended by ``\\r`` (a classic Mac's "CSV (Macintosh)"), with Cyrillic names in Windows-1251 (a
    Russian Windows' "CSV"), or with Chinese or Japanese names in GBK or Shift_JIS, reads as the same table in UTF-8,
    names included, and says which code page it was read in."""
    save, letters, encoding, note = PAGES[page]
    docs = list(originals(key))
    twins = [accented(d, letters, encoding) for d in docs]
    if all(t is None for t in twins):
        pytest.skip("no CSV table with kernel names in these files")
    utf8 = [t or d for t, d in zip(twins, docs, strict=True)]
    saved = [save(t) if t else d for t, d in zip(twins, docs, strict=True)]
    try:
        want = read(utf8)
    except RoofcoreError as e:
        pytest.fail(f"the UTF-8 twin is refused: {e}")
    got = read(saved)
    problems = differences(want, got)
    assert not problems, "; ".join(problems[:8])
    assert any(letters in str(n) for n in got.frame["name"])
    assert any(note in x for x in got.warnings), got.warnings  # a file left out of a group says nothing


#: perturbations that reorder the rows (the workload keeps the file's order)
REORDERS = {"sorted_by_name"}


def by_name(w: Workload) -> Workload:
    """The workload's rows in one order whatever the file's: by name, then the figures."""
    keys = [c for c in ("name", "time_s", "flops", "count") if c in w.frame.columns]
    f = w.frame.assign(name=w.frame["name"].astype(str)).sort_values(keys, kind="stable", na_position="last")
    return replace(w, frame=w.frame.loc[f.index].reset_index(drop=True))


def _check_truncated(key: str, new: list[Doc], perturbed: list[Doc | None]) -> None:
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
        assert len(got) <= len(baseline(key)), "more kernels from a part of the trace than from all of it"
        return
    docs = originals(key)
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
    if not differences(baseline(key), want):
        return  # the row did not count (a table the reader leaves aside): nothing to say
    for d, p in zip(docs, perturbed, strict=True):
        if p is not None:  # by its line in the file, or as the how-manieth row under the header
            line, row = d.last + 1, d.last - d.header
            assert re.search(rf"\b({line}|{row})\b", said), f"no warning names line {line} of {d.name}: {said[:300]!r}"


def test_numbers_with_thousands_separators():
    assert with_separators("1234567") == "1,234,567"
    assert with_separators("-1234.50") == "-1,234.50"
    assert with_separators("999") is None
    assert as_scientific("1234567") == "1.234567e+06"
    assert float(as_scientific("0.0001234")) == 0.0001234
    assert as_scientific("12.5") is None
    assert as_scientific("12345678901234567890") is None  # beyond a spreadsheet's 15 digits
    assert as_scientific("3599977333751882") is None
    assert as_scientific("3599977333897610") is None  # 16 digits: "3.59997733389761e+15" would not say the last


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
    # columns reversed as well: Grid Size and Block Size come before the name, each put back before the next
    turned = PERTURBATIONS["reorder"](d).map_rows(lambda i, row: [(v, False) for v, _ in row])
    got = read([turned])
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


_FRACTION = re.compile(r"^\s*[+-]?\d*\.\d+\s*$")


def _through_pandas(path: Path, d: Doc, index: bool) -> Doc | None:
    """The file's table read by ``pd.read_csv`` and written by ``df.to_csv`` (lines above the table kept): None
    where pandas cannot read it as one table, or reads it wrong itself (rows wider than the header make pandas take
    the first column for its index, or shift every column under the wrong name), or changes itself (a decimal of
    more than 15 digits: rocprof-compute 3.x's fractional-ns timestamps)."""
    import pandas as pd

    if d.kind != "csv" or d.gz or is_big(d):
        return None
    rows = [cells(line) for line in d.lines[d.header + 1:d.last + 1]]
    if any(len(r) > d.width() for r in rows):
        return None  # pandas misreads it (the first column taken for the index, or the others shifted)
    if any(_FRACTION.match(v) and len(v.strip().lstrip("+-").replace(".", "").lstrip("0")) > 15 for r in rows
           for v, _ in r):
        return None  # a float64 holds 15 digits: pandas (2.x's default parser) changes the last ones itself
    try:
        df = pd.read_csv(io.BytesIO(path.read_bytes()), skiprows=d.header)
    except (ValueError, pd.errors.ParserError):
        return None
    above = "".join(a + b for a, b in zip(d.lines[:d.header], d.ends[:d.header], strict=True))
    return Doc.of(path.name, above.encode() + df.to_csv(index=index).encode())


@pytest.mark.parametrize("index", [True, False], ids=["with-index", "index-false"])
@pytest.mark.parametrize("key", [pytest.param(k, marks=[] if k in FIXTURES else [pytest.mark.samples]) for k in KEYS])
def test_a_table_read_and_saved_by_pandas_reads_as_the_original(key, index):
    """The real thing behind pandas_index and pandas_floats: ``pd.read_csv`` then ``df.to_csv`` (the index written
    or not): numbers re-typed, ``n/a`` written empty, a line below the table kept as a row of one field."""
    docs = list(originals(key))
    saved = [_through_pandas(p, d, index) for p, d in zip(paths(key), docs, strict=True)]
    if all(s is None for s in saved):
        pytest.skip("no table here that pandas reads as one")
    got = read([s or d for s, d in zip(saved, docs, strict=True)])
    problems = differences(baseline(key), got)
    assert not problems, "; ".join(problems[:8])


@pytest.mark.parametrize("key", [pytest.param(k, marks=[] if k in FIXTURES else [pytest.mark.samples]) for k in KEYS])
def test_timestamps_kept_to_15_digits_give_each_time_to_its_step(key):
    """Whole numbers of more than 15 digits kept to 15 significant digits (tests/perturbations.py fifteen_digits): a
    duration from such timestamps is known to ± one step. Where the step is 100 ns or more a warning gives it, and a
    time under 100 steps is unknown; every other time is within two steps of the file's own."""
    docs = list(originals(key))
    kept = [fifteen_digits(d) for d in docs]
    if all(k is None for k in kept):
        pytest.skip("no whole number of more than 15 digits in these files")
    base, got = baseline(key), read([k or d for k, d in zip(kept, docs, strict=True)])
    said = [x for x in got.warnings if "as a spreadsheet saves" in x]
    step = int(re.search(r"±([\d,]+) ns", said[0]).group(1).replace(",", "")) if said else 10
    assert len(said) <= 1 and len(got) == len(base)
    for a, b in zip(base.frame["time_s"].to_numpy(), got.frame["time_s"].to_numpy(), strict=True):
        if np.isnan(b):
            assert np.isnan(a) or (said and a < 100 * step * 1e-9), (a, b, said)
        else:
            assert abs(a - b) <= 2 * step * 1e-9 + 1e-15, (a, b, step)


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


def test_header_found_by_names_past_the_quick_look():
    """A header found by its column names: at once absent where the first 64 kB lack a name, found after a long
    preamble, and the earliest of a format's layouts."""
    from roofcore.ingest.columns import Either, header_with

    h = header_with("Dispatch_ID", "Kernel_Name")
    assert h.search("x,y\n" * 100) is None
    text = "program output, line\n" * 5000 + "GPU_ID,kernel_name,dispatch_id\n0,k,1\n"
    m = h.search(text)
    assert m is not None and m.group(0) == "GPU_ID,kernel_name,dispatch_id"
    both = Either(header_with("Name", "Calls"), header_with("Kernel_Name", "Count"))
    assert both.search("Count,Kernel_Name\nCalls,Name\n").group(0) == "Count,Kernel_Name"
