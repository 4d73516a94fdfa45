"""Counters beside formulas (issue 27 point 4): a timeline's op formulas and counters of the same kernels both
kept by the join, compared per op with their ratio, flagged outside [0.8, 1.25], counters used by default."""

from __future__ import annotations

import numpy as np
import pytest

from roofcore.hierarchy.sources import CAUSES, compare, pairs_in, prefer
from roofcore.ingest.frames import make_frame
from roofcore.ingest.join import join_counters
from roofcore.models import Workload


def _pair() -> Workload:
    """A PyTorch-like timeline (FLOPs and bytes from formulas, one op per kernel) and ncu-like counters of its
    kernels: the GEMM's counters 1.5× its formula (tile padding), the norm's bytes 0.5× (cache hits)."""
    tl = make_frame({"name": ["gemm", "gemm", "norm", "copy"], "flops": [2e9, 2e9, 1e6, 0.0],
                     "bytes_hbm": [1e6, 1e6, 4e6, 8e6], "time_s": [1e-3, 1e-3, 1e-4, 1e-4],
                     "op": ["aten::mm", "aten::mm", "aten::layer_norm", None],
                     "group": ["aten::mm", "aten::mm", "aten::layer_norm", "memcpy"]}, 4)
    ct = make_frame({"name": ["gemm", "norm"], "flops": [3e9, 1.1e6], "bytes_hbm": [1.1e6, 2e6],
                     "time_s": [9e-4, 9e-5]}, 2)
    return join_counters(Workload(frame=tl, name="t", formats=("pytorch-trace",)),
                         Workload(frame=ct, name="c", formats=("ncu-details",)))


def test_both_sources_kept_and_compared():
    w = _pair()
    assert pairs_in(w) == ["flops", "bytes_hbm"]
    assert w.frame["flops"].tolist()[:3] == [3e9, 3e9, 1.1e6]  # counters by default
    cmp = compare(w).set_index(["op", "quantity"])
    mm = cmp.loc[("aten::mm", "flops")]
    assert mm["launches"] == 2 and mm["formula"] == 4e9 and mm["counter"] == 6e9
    assert mm["ratio"] == pytest.approx(1.5) and mm["flagged"] and mm["causes"] == CAUSES[("flops", "high")]
    norm = cmp.loc[("aten::layer_norm", "bytes_hbm")]
    assert norm["ratio"] == pytest.approx(0.5) and norm["causes"] == CAUSES[("bytes", "low")]
    assert not cmp.loc[("aten::layer_norm", "flops")]["flagged"]  # 1.1: within the band
    assert ("outside", "flops") not in cmp.index  # the copy has no counters: not compared


def test_prefer_switches_and_says_so():
    w = _pair()
    f = prefer(w, "formulas")
    assert f.frame["flops"].tolist() == [2e9, 2e9, 1e6, 0.0]
    assert f.meta["flops_from"] == "formulas" and "op formulas" in f.warnings[-1]
    c = prefer(w)
    assert c.frame["flops"].tolist()[:3] == [3e9, 3e9, 1.1e6] and "--flops-from formulas" in c.warnings[-1]
    plain = Workload(frame=make_frame({"name": ["k"], "flops": [1.0]}, 1))
    assert prefer(plain) is plain and compare(plain) is None


def test_sources_text_and_json():
    from roofcore.cli.levels import sources_json, sources_text

    w = prefer(_pair())
    text = sources_text(w)
    assert "uses the counters" in text and "aten::mm flops ×1.50: likely padding" in text
    doc = sources_json(w)
    assert doc["flops_from"] == "counters"
    assert {(d["op"], d["quantity"]) for d in doc["counters_vs_formulas"] if d["flagged"]} == {
        ("aten::mm", "flops"), ("aten::layer_norm", "bytes_hbm")}
    assert np.isfinite([d["ratio"] for d in doc["counters_vs_formulas"]]).all()


def test_cupti_counters_beside_the_op_formula_in_a_pytorch_trace():
    """A PyTorch trace with CUPTI ranges: the counters replace the first GEMM's shape estimate, and both stay."""
    import json

    from roofcore import ingest

    def x(cat, name, pid, tid, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}

    events = [x("cpu_op", "aten::mm", 1, 1, 10, 30, **{"External id": 1, "Input Dims": [[2, 4], [4, 8]],
                                                          "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}),
              *(x("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, 2, correlation=c) for ts, c in ((12, 1), (20, 2))),
              *(x("kernel", "gemm", 0, 7, ts, d, correlation=c, device=0) for ts, d, c in ((100, 5, 1), (110, 6, 2))),
              x("cuda_profiler_range", "gemm", 0, 0, 0, 999, **{"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 4096.0,
                                                                  "dram__bytes_op_read.sum": 100,
                                                                  "dram__bytes_op_write.sum": 28})]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8,
                                                     "computeMinor": 0}], "traceEvents": events}
    w = ingest.read(json.dumps(doc).encode(), name="t.json")
    f = w.frame
    assert f["counter_flops"].tolist()[0] == 4096.0 and np.isnan(f["counter_flops"].tolist()[1])
    assert f["formula_flops"].tolist()[0] == pytest.approx(2 * 2 * 8 * 4 * 5 / 11)  # its share of the op
    cmp = compare(w).set_index(["op", "quantity"])
    assert cmp.loc[("aten::mm", "flops"), "ratio"] == pytest.approx(4096.0 / (2 * 2 * 8 * 4 * 5 / 11))
    assert cmp.loc[("aten::mm", "flops"), "flagged"]
    assert prefer(w, "formulas").frame["flops"].tolist()[0] == pytest.approx(2 * 2 * 8 * 4 * 5 / 11)


def test_an_op_whose_name_is_not_text_is_read_as_no_backward_op():
    """Found by the event fuzz test: a damaged trace's cpu_op named by a JSON list raised TypeError (unhashable)
    while looking for autograd's backward ops; it is read, its kernels keep their ancestry."""
    import json
    from pathlib import Path

    import roofcore

    doc = json.loads((Path(__file__).parent / "data" / "kineto" / "levels_small.json").read_text())
    op = next(e for e in doc["traceEvents"] if e.get("cat") == "cpu_op")
    op["name"] = ["aten::linear"]
    w = roofcore.read_many([(json.dumps(doc).encode(), "damaged.json")])
    assert len(w.frame) == 42 and "module" in w.frame.columns
