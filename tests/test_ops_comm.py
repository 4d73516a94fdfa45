"""Collectives (roofcore.ingest.kineto_comm) against NCCL's bus-bandwidth factors, and the Overview's
communication line (roofcore.communication)."""

import json

import pytest

from roofcore.analyze import analyze
from roofcore.catalog import load_catalogs
from roofcore.communication import communication_text
from roofcore.ingest import kineto
from roofcore.ingest.kineto_comm import group_context
from roofcore.ingest.kineto_ops import op_cost

BF16 = "c10::BFloat16"
MIB = 1 << 20


def _rpc(coll, n_in, n_out, group):
    extra = (("Collective name", coll), ("Group size", group), ("In msg nelems", n_in), ("Out msg nelems", n_out),
             ("dtype", "BFloat16"))
    return op_cost("record_param_comms", [[n_in]], [BF16], [""], extra, {"link": "nvlink"})


@pytest.mark.parametrize("coll, n_in, n_out, factor, size", [
    ("allreduce", MIB, MIB, 2 * 7 / 8, 2 * MIB),  # 2(n−1)/n of the buffer
    ("_allgather_base", MIB, 8 * MIB, 7 / 8, 16 * MIB),  # (n−1)/n of the gathered output
    ("_reduce_scatter_base", 8 * MIB, MIB, 7 / 8, 16 * MIB),  # (n−1)/n of the input
    ("all_to_all", MIB, MIB, 7 / 8, 2 * MIB),
    ("broadcast", MIB, MIB, 1.0, 2 * MIB),
])
def test_record_param_comms_bus_factors(coll, n_in, n_out, factor, size):
    r = _rpc(coll, n_in, n_out, 8)
    assert r[5]["link"] == pytest.approx(factor * size)
    assert r[2:4] == ("bf16", "vector")


def test_group_size_unknown_is_unknown_and_inferred_is_said():
    dims, types = [[1024]], [BF16]
    assert op_cost("symm_mem::multimem_all_reduce_", dims, types, [""], (), group_context(None, False)) is None
    dist = {"rank": 0, "pg_config": [{"pg_name": "0", "pg_size": 4, "ranks": [0, 1, 2, 3]},
                                     {"pg_name": "5", "pg_size": 1, "ranks": [0]}]}
    r = op_cost("symm_mem::multimem_all_reduce_", dims, types, [""], (), group_context(dist, False))
    assert r[5]["link"] == 2 * 3 / 4 * 2048 and "taken as 4" in r[4]
    two = {"rank": 0, "pg_config": [{"pg_name": "0", "pg_size": 4, "ranks": [0, 1, 2, 3]},
                                    {"pg_name": "1", "pg_size": 2, "ranks": [0, 1]}]}
    assert op_cost("vllm::all_reduce", dims, types, [""], (), group_context(two, False)) is None
    # a recorded group size wins: vllm::all_gather(tensor, dim, world_size, group_name)
    r = op_cost("vllm::all_gather", [[1, 64], [], [], []], [BF16, "Scalar", "Scalar", ""], ["", "-1", "2", ""], (),
                group_context(two, True))
    assert r[5]["link"] == 1 / 2 * (2 * 64 * 2) and r[4] is False


def _trace(tmp_path):
    """One 8-rank NCCL all-reduce of 1 MiB bf16 lasting 10 µs, and a GEMM-free 10 µs elementwise kernel."""
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 100, "dur": 20,
         "args": {"External id": 1, "Input Dims": [[524288]], "Input type": [BF16], "Concrete Inputs": [""],
                  "Collective name": "allreduce", "Group size": 8, "In msg nelems": 524288,
                  "Out msg nelems": 524288, "dtype": "BFloat16"}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 105, "dur": 2,
         "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 7,
         "ts": 120, "dur": 10, "args": {"correlation": 7, "device": 0}},
        {"ph": "X", "cat": "kernel", "name": "elementwise_kernel", "pid": 0, "tid": 7, "ts": 140, "dur": 10,
         "args": {"correlation": 9, "device": 0}},
    ]
    p = tmp_path / "comm.json"
    p.write_text(json.dumps({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA B200"}]}))
    return p


def test_communication_line(tmp_path):
    p = _trace(tmp_path)
    w = kineto.parse(p.read_bytes(), str(p))
    assert w.frame["bytes_nvlink"].iloc[0] == 2 * 7 / 8 * MIB
    hw = load_catalogs().get("b200")
    s = analyze(w, hw).summary("b200")
    c = s["communication"]
    assert c["time_share"] == 0.5 and c["rows"] == 1 and c["link"] == "nvlink"
    bw = hw.link_map["nvlink"].bandwidth
    assert c["roof_share"] == pytest.approx(2 * 7 / 8 * MIB / 10e-6 / bw)
    text = communication_text(s)
    assert text.startswith("Communication: 50% of the measured time (1 kernel), at ") and "roof" in text


def test_no_communication_no_line(tmp_path):
    p = _trace(tmp_path)
    doc = json.loads(p.read_text())
    doc["traceEvents"] = doc["traceEvents"][3:]
    p.write_text(json.dumps(doc))
    w = kineto.parse(p.read_bytes(), str(p))
    s = analyze(w, load_catalogs().get("b200")).summary("b200")
    assert "communication" not in s and communication_text(s) == ""


def test_report_says_communication(tmp_path):
    from roofcore.report.model import build_report
    from roofcore.report.sections import summary_html

    p = _trace(tmp_path)
    w = kineto.parse(p.read_bytes(), str(p))
    text = summary_html(build_report(analyze(w, load_catalogs().get("b200")), None, 5))  # the report's summary section
    assert "Communication: 50% of the measured time (1 kernel), at " in text


def test_c10d_base_ops_take_the_right_tensor():
    ctx = {"link": "nvlink", "group_size": 4, "groups": {}}
    # _allgather_base_(output [4,64], input [1,64]): S = the gathered output; _reduce_scatter_base_(out, in [4,64])
    r = op_cost("c10d::_allgather_base_", [[4, 64], [1, 64], [], [], []], [BF16, BF16, "", "Scalar", "Scalar"],
                ["", "", "", "False", "-1"], (), ctx)
    assert r[5]["link"] == 3 / 4 * 4 * 64 * 2
    r = op_cost("c10d::_reduce_scatter_base_", [[1, 64], [4, 64], [], [], [], []], [BF16, BF16, "", "", "", ""],
                [""] * 6, (), ctx)
    assert r[5]["link"] == 3 / 4 * 4 * 64 * 2


def test_old_nccl_event_without_message_args():
    # PyTorch 1.x: nccl:all_reduce with the tensor only; the group size from the trace's one multi-rank group
    r = op_cost("nccl:all_reduce", [[256]], [BF16], [""], (), {"link": "nvlink", "group_size": 2, "groups": {}})
    assert r[5]["link"] == 2 * 1 / 2 * 512 and "taken as 2" in r[4]


def test_comm_rows_by_name_and_by_op():
    import pandas as pd

    from roofcore.communication import comm_rows

    f = pd.DataFrame({"name": ["ncclDevKernel_AllGather_RING_LL", "softmax_warp_allreduce", "cross_device_reduce_1stage",
                               "gemm"], "group": [None, "aten::_softmax", None, "_c10d_functional::all_reduce"],
                      "time_s": [1.0, 1.0, 1.0, 1.0]})
    assert comm_rows(f).tolist() == [True, False, True, True]


def test_comm_rows_match_a_search_of_every_row():
    """Searched once per distinct value, the rows found are those a search of every row finds (names and ops
    repeating, missing, not text)."""
    import re

    import numpy as np
    import pandas as pd

    from roofcore.communication import COMM_GROUP, COMM_KERNEL, comm_rows

    rng = np.random.default_rng(3)
    names = np.array(["ncclDevKernel_AllReduce_Sum_f32", "NCCL_kernel", "gemm", "deep_ep::dispatch", None, np.nan,
                      "reduce_kernel", 7], dtype=object)
    groups = np.array(["c10d::allreduce_", "aten::mm", None, "vllm::all_reduce", "vllm::all_reduce_x", np.nan,
                       "nccl:all_gather", "symm_mem::one_shot"], dtype=object)
    f = pd.DataFrame({"name": names[rng.integers(0, len(names), 500)],
                      "group": groups[rng.integers(0, len(groups), 500)], "time_s": np.ones(500)})

    def every_row(values, pattern: re.Pattern[str]) -> list[bool]:
        return [v is not None and v == v and pattern.search(str(v)) is not None for v in values]

    want = np.array(every_row(f["name"], COMM_KERNEL)) | np.array(every_row(f["group"], COMM_GROUP))
    assert comm_rows(f).tolist() == want.tolist()
    assert 0 < want.sum() < len(f)
