"""JAX cost_analysis() JSON and the xprof Roofline Model CSV (docs/formats.md): golden values, every accepted shape,
pitfalls (estimates vs measurements, GiB/s, summary rows, containers), exact messages, fuzzing."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import mutated

from roofcore import InputError, ingest
from roofcore.cli import main
from roofcore.ingest import xla, xprof

DATA = Path(__file__).parent / "data" / "xla"
LONG = os.environ.get("ROOFCORE_FUZZ_LONG") == "1"
GIB = 2.0**30
BYTES_WARNING = ("'bytes accessed' is XLA's estimate of the bytes each program's operations read and write "
                 "(operands + outputs), not measured HBM traffic: reuse in caches and on-chip memory is not "
                 "modelled, so the HBM intensities are estimates.")
NO_TIME = ("no measured time: cost_analysis() gives work, not time (optimal_seconds is XLA's model estimate, kept in "
           "optimal_s and never used as a time). Hint: add \"time_ms\" to each program (timed after "
           "block_until_ready()) to compare it with the roofline.")
COST_HINT = ("Hint: save it with json.dump(compiled.cost_analysis(), f), where compiled = "
             "jax.jit(fn).lower(*args).compile().")
XPROF_HINT = 'Hint: export the Roofline Model table again with its "Export as CSV" button.'


def cost(doc: object, name: str = "c.json", **kw) -> ingest.Workload:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return ingest.read(data, name=name, fmt="jax-cost-analysis", **kw)


def rows(w, *cols):
    return [tuple(r) for r in w.frame[list(cols)].itertuples(index=False)]


# --------------------------------------------------------------------------------------------- cost analysis


def test_single_program_dict():
    w = ingest.read(DATA / "cost_single.json")
    assert w.formats == ("jax-cost-analysis",)
    f = w.frame
    assert rows(w, "name", "count", "flops", "bytes_hbm", "transcendentals", "optimal_s", "row") == [
        ("cost_single", 1, 4_294_967_296.0, 25_165_824.0, 2_097_152.0, 0.0001220703125, "$")]
    assert math.isnan(f["time_s"].iloc[0])  # optimal_seconds is a model estimate, never a time
    assert f["precision"].isna().all() and f["unit"].isna().all()
    assert w.warnings == (BYTES_WARNING, NO_TIME)
    assert w.device is None and w.meta == {"profiler": "JAX cost_analysis (XLA HloCostAnalysis)"}


def test_older_jax_list_and_python_repr():
    w = ingest.read(DATA / "cost_old_list.json")
    assert rows(w, "name", "flops", "bytes_hbm", "transcendentals", "row") == [
        ("cost_old_list", 1_048_576.0, 3_145_728.0, 0.0, "$[0]")]
    assert math.isnan(w.frame["optimal_s"].iloc[0])
    # print(compiled.cost_analysis()) pasted into a file: single quotes, a Python literal
    w = ingest.read(DATA / "cost_repr.txt")
    assert w.formats == ("jax-cost-analysis",)
    assert rows(w, "name", "flops", "bytes_hbm") == [("cost_repr", 4_194_304.0, 229_376.0)]


def test_named_programs_with_times_counts_and_bad_entries():
    w = ingest.read(DATA / "cost_programs.json")
    assert w.device == "TPU v5 lite"
    assert rows(w, "name", "count", "flops", "bytes_hbm", "transcendentals", "row") == [
        ("train_step", 4, 1.4e13, 8.0e9, 4.0e6, "$.programs[0]"),  # per execution × count 4
        ("eval_step", 1, 1.0e12, 6.0e8, 0.0, "$.programs[1]"),  # cost as [ {...} ] (older JAX) inside a record
        ("all_gather_params", 1, 0.0, 4.0e8, 0.0, "$.programs[2]"),  # no flops key: XLA omits zeros
        ("breakdown_only", 1, 5.0e9, 6.0e7, 0.0, "$.programs[3]"),  # no total: operands + output summed
    ]
    f = w.frame
    assert f["time_s"].tolist()[:2] == pytest.approx([4 * 12.5e-3, 2.5e-3], rel=1e-15)
    assert math.isnan(f["time_s"].iloc[2]) and f["time_s"].iloc[3] == 0.002
    assert f["optimal_s"].iloc[0] == pytest.approx(4 * 0.0115) and math.isnan(f["optimal_s"].iloc[1])
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("$.programs[4]", 'flops: expected a non-negative number, found "n/a"'),
        ("$.programs[5]", "bytes accessed: expected a non-negative number, found -5"),
        ("$.programs[6]", "cost: expected a cost dict, found null (cost_analysis() returns None on some backends)"),
    ]
    assert w.warnings == (
        BYTES_WARNING,
        "no 'flops' key for all_gather_params: read as 0 (XLA leaves out zero-valued keys).",
        "optimal_seconds of eval_step is negative or not a number (a 'not estimated' sentinel): ignored.",
    )


def test_programs_keyed_by_name():
    w = cost({"device_kind": "NVIDIA H100 80GB HBM3",
              "fwd": {"flops": 2e9, "bytes accessed": 1e8, "time_us": 40},
              "bwd": [{"flops": 4e9, "bytes accessed": 2e8}],
              "opt": {"cost": {"flops": 1e6, "bytes accessed": 3e7}, "time_ns": 9000, "count": 2}})
    assert w.device == "NVIDIA H100 80GB HBM3"
    assert rows(w, "name", "count", "flops", "bytes_hbm", "row") == [
        ("fwd", 1, 2e9, 1e8, "$.fwd"), ("bwd", 1, 4e9, 2e8, "$.bwd"), ("opt", 2, 2e6, 6e7, "$.opt")]
    assert w.frame["time_s"].iloc[0] == pytest.approx(40e-6) and w.frame["time_s"].iloc[2] == pytest.approx(18e-6)
    assert NO_TIME not in w.warnings


def test_bad_programs_are_skipped_with_reasons():
    w = cost([{"name": "ok", "cost": {"flops": 1, "bytes accessed": 2}},
              {"name": "two_times", "time_s": 1, "time_ms": 2, "cost": {"flops": 1}},
              {"name": "bad_count", "count": 0.5, "cost": {"flops": 1}},
              {"name": "huge_count", "count": 2**64, "cost": {"flops": 1}},
              {"name": "inf", "cost": {"flops": float("inf")}},
              {"name": "neg_time", "time_ms": -1, "cost": {"flops": 1}},
              {"name": "no_keys", "cost": {"something": 1}},
              {"name": "not_dict", "cost": 7}, "just a string"])
    assert w.frame["name"].tolist() == ["ok"]
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("$[1]", "expected one time key, found time_s, time_ms"),
        ("$[2]", "count: expected a whole number of executions ≥ 1, found 0.5"),
        ("$[3]", "count: expected a whole number of executions ≥ 1, found 1.84467e+19"),
        ("$[4]", "flops: expected a non-negative number, found inf"),
        ("$[5]", "time_ms: expected a non-negative number, found -1"),
        ("$[6]", "expected cost keys (flops, bytes accessed), found keys something"),
        ("$[7]", "cost: expected a cost dict, found 7"),
        ("$[8]", 'expected a cost dict, found "just a string"'),
    ]


@pytest.mark.parametrize(("data", "expected"), [
    (b"null", "c.json: $: expected a cost dict, found null (cost_analysis() returns None on some backends). Hint: use "
              "a backend that reports costs (CPU, GPU, TPU), or write flops and bytes yourself in an inventory file."),
    (b"[]", "c.json: $: expected a cost dict or a list of programs, found an empty list. " + COST_HINT),
    (b"{}", "c.json: $: expected cost keys (flops, bytes accessed) or named programs, found an empty object. "
            + COST_HINT),
    (b"3.5", "c.json: $: expected a cost dict or a list of programs, found a JSON float. " + COST_HINT),
    (b'{"flops": 1,', "c.json: line 1, column 13: not valid JSON: Expecting property name enclosed in double quotes. "
                      + COST_HINT),
    (b'[{"flops": -1}]', "c.json: $[0]: no usable program; the first problem: flops: expected a non-negative number, "
                         "found -1. " + COST_HINT),
    (b"", "c.json: expected a workload file (CSV or YAML), found an empty file. Hint: export again, or check that the "
          "right file was chosen."),
])
def test_cost_messages(data, expected):
    with pytest.raises(InputError) as e:
        cost(data)
    assert str(e.value) == expected


# --------------------------------------------------------------------------------------------- xprof


def test_xprof_tpu_export_golden():
    """Step 'Total' rows; FLOPs = GFLOP/s × 1e9 × Total Time, bytes = GiB/s × 2^30 × Total Time (HBM, CMEM, VMEM
    read + write); the Program summary, the IDLE row, a 'while' container and a zero-time row are left out."""
    w = ingest.read(DATA / "roofline_model_run1_tpuhost.csv")
    assert w.formats == ("xprof-roofline",)
    f = w.frame
    assert rows(w, "name", "count", "precision", "unit", "group", "row", "xprof_bound") == [
        ("fusion.12", 10, "bf16", "matrix", "convolution fusion", "3", "Compute"),
        ("fusion.7", 20, "bf16", None, "loop fusion", "4", "HBM"),
        ("copy.3", 5, "bf16", None, "data formatting", "5", "HBM"),
    ]
    assert f["time_s"].tolist() == pytest.approx([2000e-6, 500e-6, 100e-6], rel=1e-15)
    assert f["flops"].tolist() == pytest.approx([150_000e9 * 2e-3, 2000e9 * 5e-4, 0.0], rel=1e-15)
    assert f["model_flops"].tolist() == pytest.approx([145_000e9 * 2e-3, 2000e9 * 5e-4, 0.0], rel=1e-15)
    assert f["bytes_hbm"].tolist() == pytest.approx([250 * GIB * 2e-3, 1200 * GIB * 5e-4, 800 * GIB * 1e-4], rel=1e-15)
    assert f["bytes_vmem"].tolist() == pytest.approx([1200 * GIB * 2e-3, 200 * GIB * 5e-4, 0.0], rel=1e-15)
    assert f["bytes_cmem"].tolist() == [0.0, 0.0, 0.0]
    assert f["bytes_hbm"].iloc[0] == pytest.approx(536_870_912.0, rel=1e-15)  # 250 GiB/s for 2 ms = 0.5 GiB
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("6", "contains other ops (category 'while'): its work is that of the ops inside, listed separately"),
        ("7", "idle time, not an op"),
        ("8", "Total Time (us): 0, so FLOPs and bytes cannot be derived from its rates"),
    ]
    assert w.warnings == ("rows of Step 'Total' used; 5 rows of other steps left out. FLOPs = FLOP rate × Total Time "
                          "and bytes = bandwidth (GiB/s × 2^30) × Total Time, as xprof derives its rates; unless the "
                          "rows are 'Total (HW)' they come from XLA's cost model, not counters.",)
    assert w.meta == {"profiler": "xprof Roofline Model", "xprof_step": "Total", "device_type": "TPU"}
    assert w.device is None


def test_xprof_gpu_export_per_step():
    w = ingest.read(DATA / "roofline_model_gpu_steps.csv")
    f = w.frame
    assert rows(w, "name", "count", "group", "unit", "row") == [
        ("cublas-gemm.1", 2, "custom-call", "matrix", "3"), ("loop_add_fusion", 4, "loop fusion", None, "4"),
        ("cublas-gemm.1", 2, "custom-call", "matrix", "6")]
    assert f["precision"].isna().all()  # no bf16 normalisation on GPUs: precision unknown
    assert f["flops"].tolist() == pytest.approx([250_000e9 * 400e-6, 512e9 * 80e-6, 256_000e9 * 390e-6], rel=1e-15)
    assert f["bytes_hbm"].tolist() == pytest.approx([900 * GIB * 400e-6, 1600 * GIB * 80e-6, 920 * GIB * 390e-6],
                                                    rel=1e-15)
    assert f["bytes_l1"].tolist() == pytest.approx([2000 * GIB * 400e-6, 0.0, 2100 * GIB * 390e-6], rel=1e-15)
    assert w.meta["xprof_step"] == "per step" and w.meta["device_type"] == "GPU"
    assert w.warnings[0].startswith("rows of every numbered step used. FLOPs = FLOP rate")


def test_xprof_units_from_labels_and_step_choice():
    header = ('"Step","Rank","Category","Operation","# Occurrences","Total Time (ms)","Normalized FLOP Rate (TFLOP/s)",'
              '"Memory BW (GB/s)"\n')
    body = '"Average","1","dot","dot.4","3","2.5","120","900"\n"Total","1","dot","dot.4","6","5","120","900"\n'
    data = (header + body).encode()
    w = ingest.read(data, name="r.csv")
    assert w.formats == ("xprof-roofline",) and w.meta["xprof_step"] == "Total"
    f = w.frame
    assert f["time_s"].tolist() == [0.005]
    assert f["flops"].tolist() == pytest.approx([120e12 * 5e-3], rel=1e-15)
    assert f["bytes_hbm"].tolist() == pytest.approx([900e9 * 5e-3], rel=1e-15)  # GB, not GiB: 1e9
    assert w.warnings[1] == "no 'HBM BW' column: off-chip bytes taken from 'Memory BW' (all memory spaces)."
    w = ingest.read(data, name="r.csv", context={"xprof_step": "Average"})
    assert w.meta["xprof_step"] == "Average" and w.frame["time_s"].tolist() == [0.0025]
    w = ingest.read(header.replace('"dot"', '""').encode() + b'"Total","1","","op","1","1","1","1"\n', name="r.csv")
    assert w.frame["group"].tolist() == [None] and w.frame["unit"].isna().all()  # an empty category is no group


def test_xprof_bad_cells_and_bom():
    text = ('\ufeff"Step","Rank","Category","Operation","# Occurrences","Total Time (us)",'
            '"Normalized FLOP Rate (GFLOP/s)","HBM BW (GiB/s)"\r\n'
            '"Total","1","fusion","a","1","10","n/a","1"\r\n'
            '"Total","2","fusion","b","1.5","10","1","1"\r\n'
            '"Total","3","fusion","c","1","-4","1","1"\r\n'
            '"Total","4","fusion","","1","10","1","1"\r\n'
            '"Total","5","fusion","d","1","","1","1"\r\n'
            '"Total","6","fusion","e","2","10","","1"\r\n'
            '"Total","7","fusion","f","1e30","10","1","1"\r\n')
    w = ingest.read(text.encode(), name="r.csv")
    f = w.frame
    assert f["name"].tolist() == ["e"]
    assert math.isnan(f["flops"].iloc[0]) and f["bytes_hbm"].iloc[0] == pytest.approx(GIB * 1e-5)  # empty = unknown
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("2", 'Normalized FLOP Rate (GFLOP/s): expected a non-negative number, found "n/a"'),
        ("3", '# Occurrences: expected a whole number ≥ 1, found "1.5"'),
        ("4", 'Total Time (us): expected a non-negative number, found "-4"'),
        ("5", "Operation: expected an op name, found an empty cell"),
        ("6", "Total Time (us): expected a number, found an empty cell"),
        ("8", '# Occurrences: expected a whole number ≥ 1, found "1e30"'),
    ]


@pytest.mark.parametrize(("text", "expected"), [
    ("name,flops\nx,1\n", 'x.csv: header: expected the Roofline Model columns "Step","Rank","Category","Operation",'
                          "..., found none. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","# Occurrences"\n"Total","1","a","b","1"\n',
     "x.csv: header: expected columns Total Time (us), Normalized FLOP Rate (GFLOP/s), found columns Step, Rank, "
     "Category, Operation, # Occurrences. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)"\n',
     "x.csv: expected op rows, found a header only. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)"\n'
     '"Total","0","Program","Program","10","1"\n',
     "x.csv: expected op rows, found only the Program summary row. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)"\n'
     '"Total","1","while","while.3","10","1"\n',
     "x.csv: line 2: no usable op rows; the first problem: contains other ops (category 'while'): its work is that of "
     "the ops inside, listed separately. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)"\n'
     '"warmup","1","fusion","f","10","1"\n',
     "x.csv: Step: expected Total, Total (HW), Average or step numbers, found warmup. " + XPROF_HINT),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)"\n'
     '"Total","1","f","a","1","2","3"\n',
     "x.csv: line 2: not a readable CSV: 7 fields where the header has 6. Hint: quote fields that contain commas; "
     'export the Roofline Model table again with its "Export as CSV" button.'),
    ('"Step","Rank","Category","Operation","Total Time (us)","Normalized FLOP Rate (GFLOP/s)","Rank"\n'
     '"Total","1","f","a","1","2","3"\n',
     "x.csv: header: expected each column once, found 'Rank' twice. " + XPROF_HINT),
])
def test_xprof_messages(text, expected):
    with pytest.raises(InputError) as e:
        ingest.read(text.encode(), name="x.csv", fmt="xprof-roofline")
    assert str(e.value) == expected


# --------------------------------------------------------------------------------------------- detection, CLI


def test_detection():
    for name, fmt in [("cost_single.json", "jax-cost-analysis"), ("cost_old_list.json", "jax-cost-analysis"),
                      ("cost_programs.json", "jax-cost-analysis"), ("cost_repr.txt", "jax-cost-analysis"),
                      ("roofline_model_run1_tpuhost.csv", "xprof-roofline"),
                      ("roofline_model_gpu_steps.csv", "xprof-roofline")]:
        assert ingest.detect((DATA / name).read_bytes(), "renamed.dat").name == fmt, name
    assert not xla.sniff_cost('{"traceEvents": [], "flops": 1}', "t.json")
    assert not xprof.sniff_xprof("name,flops,bytes\n", "x.csv")


def test_cli_analyze_tpu(capsys):
    assert main(["analyze", str(DATA / "roofline_model_run1_tpuhost.csv"), "--hardware", "tpu-v5e", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workload"]["kernels"] == 3 and len(out["skipped"]) == 3
    k = {x["name"]: x for x in out["kernels"]}
    assert k["fusion.12"]["ceiling"] == "bf16-matrix"
    assert k["fusion.12"]["intensity"]["hbm"] == pytest.approx(3e11 / (250 * GIB * 2e-3))
    assert main(["analyze", str(DATA / "cost_programs.json"), "--hardware", "tpu-v5e"]) == 0
    assert "train_step" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------- fuzzing

FUZZ = settings(max_examples=10_000 if LONG else 150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = {p.name: p.read_bytes() for p in DATA.iterdir()}


XLA_JUNK = [b",", b'"', b"{", b"]", b"null", b"-1", b"1e999", b"NaN", b"\xff", b"'", b"\r\n", b'"n/a"', b"[[", b"0"]


def outcome(parse, data: bytes) -> None:
    try:
        w = parse(data, "fuzz.dat", {})
    except InputError:
        return
    assert isinstance(w, ingest.Workload) and len(w.frame) > 0


@FUZZ
@given(st.binary(max_size=1024) | mutated(sorted(SEEDS.values()), XLA_JUNK))
def test_fuzz_cost_analysis(data):
    outcome(xla.parse_cost, data)


@FUZZ
@given(st.binary(max_size=1024) | mutated(sorted(SEEDS.values()), XLA_JUNK))
def test_fuzz_xprof(data):
    outcome(xprof.parse_xprof, data)


COST_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 2**70) | st.floats() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                               ["flops", "bytes accessed", "cost", "name", "time_ms", "count", "programs",
                                "optimal_seconds", "bytes accessed0{}", "device"]), inner, max_size=4),
                           max_leaves=15)


@FUZZ
@given(COST_VALUES)
def test_fuzz_cost_structures(doc):
    outcome(xla.parse_cost, json.dumps(doc).encode())
