"""The output layer's pieces: numbers with their commas, rows placed without a copy, merged templates, and the same
text whatever the size of the pieces, the threads or the shape of the text columns."""

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from roofhelpers import make_hw, workload_of
from test_output import stdlib_json

import roofcore
import roofcore.output.columns as columns
from roofcore.models import Kernel
from roofcore.output import analysis_csv, analysis_json
from roofcore.output.columns import jnum
from roofcore.wording.cells import Col, merge_runs, scatter


def _values(cells: list[str]) -> list:
    """Each cell read back as JSON (the comma that ends it stripped): the test compares values, never one orjson
    version's spelling of them (3.13 writes ``1e+16`` where 3.8 wrote ``1e16``)."""
    return [json.loads(c[:-1]) if c[:-1] not in ("", "inf", "-inf") else c[:-1] for c in cells]


def _same(got: list, want: list) -> bool:
    return len(got) == len(want) and all(
        (g == w and (not isinstance(w, float) or np.signbit(g) == np.signbit(w))) for g, w in zip(got, want, strict=True))


def test_numbers_carry_their_comma_and_read_back_as_the_same_values():
    v = np.array([1.5, np.nan, np.inf, -np.inf, 1e16, -0.0, 4.6e-6])
    cells = jnum(v, comma=True).to_pylist()
    assert all(c.endswith(",") and "," not in c[:-1] for c in cells)
    assert _same(_values(cells), [1.5, None, None, None, 1e16, -0.0, 4.6e-6])
    assert _same(_values(jnum(v, comma=True, empty_unknown=True).to_pylist()),
                 [1.5, "", "inf", "-inf", 1e16, -0.0, 4.6e-6])
    assert [x + "," for x in jnum(v).to_pylist()] == cells
    assert _values(jnum(np.array([3, 40], dtype=np.int64), comma=True).to_pylist()) == [3, 40]
    assert jnum(np.array([], dtype=np.float64), comma=True).to_pylist() == []


def test_rows_are_placed_without_copying_their_text():
    items = pa.array(["a", "bb", "", "ccc"])
    out = scatter(items, np.array([1, 2, 5, 6]), 8)
    assert out.to_pylist() == ["", "a", "bb", "", "", "", "ccc", ""]
    assert out.buffers()[2].address == items.buffers()[2].address  # the same characters, not a copy
    assert scatter(items.slice(1, 2), np.array([0, 3]), 4).to_pylist() == ["bb", "", "", ""]
    assert scatter(pa.array(["x", None]), np.array([0, 2]), 3).to_pylist() == ["x", "", None]


def test_merged_runs_write_each_row_as_its_parts_joined():
    a = Col(["x", "y"], np.array([0, 1, 1, 0]))
    b = Col(["p", "q", "r"], np.array([2, 2, 0, 1]))
    out = merge_runs(["<", a, ",", b, ">", 5, "z", "w", a], 4)
    assert [o.tolist() if isinstance(o, Col) else o for o in out] == [["<x,r>", "<y,r>", "<y,p>", "<x,q>"], 5,
                                                                       ["zwx", "zwy", "zwy", "zwx"]]
    kept = merge_runs([a, "-", b], 4, limit=4)  # 2 × 3 combinations > 4: two columns, the text in the first
    assert [o.tolist() for o in kept] == [["x-", "y-", "y-", "x-"], ["r", "r", "p", "q"]]
    assert merge_runs(["a", "b"], 3) == ["ab"]


def _awkward():
    hw = make_hw(100e12, 2e12, levels={"l2": 10e12})
    kernels = []
    for k in range(40):  # every flag, on rows spread over several pieces
        kernels += [
            Kernel(f"gemm_{k}", 1e12, {"hbm": 1e9}, time_s=1e-9 * (k + 1)),  # above the roof
            Kernel(f"slow_{k}", 1e6, {"hbm": 1e6}, time_s=1.0 + k),  # far below
            Kernel(f"tiny_{k}", 1.0, {"hbm": 1.0}, count=10, time_s=1e-6),
            Kernel(f"no flops {k}", float("nan"), {"hbm": 1e9, "sram": 5.0 + k}, time_s=0.01),
            Kernel(f"fp64 {k}", 1e9, {"hbm": 1e6}, time_s=0.0, precision="fp64"),
        ]
    return roofcore.analyze(workload_of(*kernels), [hw, roofcore.load_catalogs().get("h100-sxm")])


@pytest.mark.parametrize("rows", [1, 7, 64])
def test_the_text_is_the_same_whatever_the_pieces_and_threads(monkeypatch, rows):
    a = _awkward()
    whole_json, whole_csv = analysis_json(a), analysis_csv(a)
    monkeypatch.setattr(columns, "CHUNK_ROWS", rows)
    assert analysis_json(a) == whole_json and analysis_csv(a) == whole_csv
    monkeypatch.setenv("ROOFCORE_WORKERS", "1")  # one thread
    assert analysis_json(a) == whole_json and analysis_csv(a) == whole_csv
    doc = json.loads(whole_json)
    assert doc["kernels"] == stdlib_json(a)["kernels"]


@pytest.mark.parametrize("names", [["plain", "names", "only"], ["plain", "=formula", "x"], ["a,b", "c", "d"],
                                   ["a", "quote\"d", "é"], ["a", "tab\there", "+1"]])
def test_text_columns_written_as_they_are_only_when_they_need_nothing(names):
    """A text column with no character to escape or quote is written from its buffer as it is; one such character
    anywhere sends the whole column through the escaping path, so the text is the standard writers' either way."""
    a = roofcore.analyze(workload_of(*(Kernel(n, 1e9, {"hbm": 1e6}, time_s=1e-3) for n in names)),
                         [make_hw(100e12, 2e12)])
    assert [k["name"] for k in json.loads(analysis_json(a))["kernels"]] == names
    got = pd.read_csv(io.StringIO(analysis_csv(a)), keep_default_na=False)["name"].tolist()
    assert got == ["'" + n if n[:1] in "=+-@\t\r" else n for n in names]
