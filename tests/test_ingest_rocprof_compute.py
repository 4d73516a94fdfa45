"""rocprof-compute / Omniperf workload folders across versions: 3.x pmc_perf.csv (rocprofv3 backend), Omniperf 1.x,
pmc_kernel_top.csv, pmc_dispatch_info.csv, empty passes, sysinfo.csv v1.

Expected numbers for the real samples are computed here from the CSV cells with rocprof-compute's calc_ai formulas
(docs/formats.md), independently of the parser; our fixtures' numbers are worked out by hand.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest
from roofhelpers import col, sample

from roofcore import InputError, ingest
from roofcore.catalog import display_path

DATA = Path(__file__).parent / "data" / "rocprof"
SHARED = Path(__file__).parent.parent.parent / "shared" / "samples"


def raw(name: str) -> bytes:
    return (DATA / name).read_bytes()




def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def calc_ai_flops(r: dict[str, str]) -> float:
    """calc_ai: 64 lanes × (ADD + MUL + 2·FMA + TRANS) per VALU precision + 512 × MFMA MOPS (float types)."""
    f = lambda k: float(r[k])  # noqa: E731
    valu = sum(64 * (f(f"SQ_INSTS_VALU_ADD_{p}") + f(f"SQ_INSTS_VALU_MUL_{p}") + 2 * f(f"SQ_INSTS_VALU_FMA_{p}")
                     + f(f"SQ_INSTS_VALU_TRANS_{p}")) for p in ("F16", "F32", "F64"))
    return valu + sum(512 * f(f"SQ_INSTS_VALU_MFMA_MOPS_{t}") for t in ("F16", "BF16", "F32", "F64", "F8"))


def mi300_hbm(r: dict[str, str]) -> float:
    f = lambda k: float(r[k])  # noqa: E731
    return (f("TCC_BUBBLE_sum") * 128 + f("TCC_EA0_RDREQ_32B_sum") * 32
            + (f("TCC_EA0_RDREQ_sum") - f("TCC_BUBBLE_sum") - f("TCC_EA0_RDREQ_32B_sum")) * 64
            + (f("TCC_EA0_WRREQ_sum") - f("TCC_EA0_WRREQ_64B_sum")) * 32 + f("TCC_EA0_WRREQ_64B_sum") * 64)


# --------------------------------------------------------------------------------------------- 3.x pmc_perf.csv


@pytest.mark.samples
def test_real_rocprof_compute_3_mi300x_with_its_folder():
    perf = sample("rocprof_compute3.3_mi300x_bmm_pmc_perf_SUBSET_first40.csv")
    rows = rows_of(perf)
    top, info = (sample(f"rocprof_compute3.3_mi300x_bmm_{n}.csv") for n in ("pmc_kernel_top", "pmc_dispatch_info"))
    w = ingest.read_many([perf, sample("rocprof_compute3.3_mi300x_bmm_sysinfo.csv"),
                          sample("rocprof_compute3.3_mi300x_bmm_roofline.csv"), top, info])
    assert w.formats == ("rocprof-compute",) and len(w) == 40  # kernel_top left out: the same run, per dispatch
    assert w.device == "MI300X" and w.meta["gpu_model"] == "MI300X_A1"  # the stepping (_A1) is not the model
    assert w.meta["arch"] == "gfx942" and w.meta["cu_per_gpu"] == "304"
    assert w.meta["hbm_formula"] == "MI300 (TCC_BUBBLE, TCC_EA0_RDREQ/WRREQ, calc_ai)"
    assert col(w, "row") == [r["Dispatch_ID"] for r in rows]
    assert col(w, "flops") == pytest.approx([calc_ai_flops(r) for r in rows], rel=1e-12)
    assert col(w, "bytes_hbm") == pytest.approx([mi300_hbm(r) for r in rows], rel=1e-12)
    # fractional-ns timestamps (averaged over passes) kept exactly: End − Start in decimal
    assert col(w, "time_s") == pytest.approx([float(Decimal(r["End_Timestamp"]) - Decimal(r["Start_Timestamp"]))
                                              * 1e-9 for r in rows], rel=1e-12)
    gemm = next(i for i, r in enumerate(rows) if float(r["SQ_INSTS_VALU_MFMA_MOPS_BF16"]) > 0)
    assert col(w, "precision")[gemm] == "bf16" and col(w, "unit")[gemm] == "matrix"
    assert col(w, "flops")[gemm] == 512 * float(rows[gemm]["SQ_INSTS_VALU_MFMA_MOPS_BF16"]) + 64 * sum(
        float(rows[gemm][f"SQ_INSTS_VALU_{op}_{p}"]) * (2 if op == "FMA" else 1)
        for p in ("F16", "F32", "F64") for op in ("ADD", "MUL", "FMA", "TRANS"))
    assert [h.id for h in w.measured] == ["mi300x-measured"]  # its 8 GPUs: one device, their median
    perf_, top_, info_ = (display_path(p) for p in (perf, top, info))
    assert (f"{perf_}: holds 40 of the 301 dispatches that {info_} lists (a subset, or a filtered run): totals cover "
            "only those.") in w.warnings
    assert (f"{top_}: a per-kernel summary of the run whose dispatches {perf_} lists one by one; those are used, and "
            "this summary is left out (its times would count twice).") in w.warnings


def test_3x_layout_fixture_floats_fractional_ns_and_fp8():
    sysinfo = ingest.FORMATS["rocprof-compute-sysinfo"].parse(raw("sysinfo_mi300.csv"), "s.csv", {})
    w = ingest.read(raw("pmc_perf_v3layout.csv"), name="pmc_perf.csv", context=sysinfo)
    assert w.formats == ("rocprof-compute",) and col(w, "name")[1] == "__amd_rocclr_fillBufferAligned"
    assert col(w, "flops") == [512 * 2000 + 64 * 2 * 50, 0.0] and col(w, "precision") == ["fp8", None]
    assert col(w, "bytes_hbm") == [10 * 128 + 100 * 32 + (500 - 10 - 100) * 64 + (300 - 200) * 32 + 200 * 64,
                                   (64 - 64) * 32 + 64 * 64]
    assert col(w, "bytes_l2") == [64 * 1300, 64 * 64] and col(w, "bytes_l1") == [64 * 2000, 64 * 64]
    assert col(w, "time_s") == pytest.approx([6769.54e-9, 2000.5e-9], rel=1e-9)


# --------------------------------------------------------------------------------------------- kernel_top, dispatch_info


def test_kernel_top_alone_is_a_time_only_summary():
    w = ingest.read(raw("pmc_kernel_top.csv"), name="pmc_kernel_top.csv")
    assert w.formats == ("rocprof-compute-kernel-top",) and w.meta["time_only"] == "true"
    assert col(w, "count") == [3, 3] and col(w, "time_s") == pytest.approx([20308.5e-9, 6001.5e-9])
    assert col(w, "flops") == [None, None]


@pytest.mark.samples
def test_real_kernel_top_sample():
    path = sample("rocprof_compute3.3_mi300x_bmm_pmc_kernel_top.csv")
    rows = rows_of(path)
    w = ingest.read(path)
    assert col(w, "name") == [r["Kernel_Name"] for r in rows] and col(w, "count") == [int(r["Count"]) for r in rows]
    assert col(w, "time_s") == pytest.approx([float(r["Sum(ns)"]) * 1e-9 for r in rows], rel=1e-12)


def test_dispatch_info_is_context_not_a_workload():
    with pytest.raises(InputError) as e:
        ingest.read(raw("pmc_dispatch_info.csv"), name="pmc_dispatch_info.csv")
    assert str(e.value) == (
        "pmc_dispatch_info.csv: this is rocprof-compute's list of dispatches (pmc_dispatch_info.csv: dispatch id, "
        "kernel name, GPU; no time or counters), context for pmc_perf.csv, not a workload. Hint: load it together "
        "with the workload file it belongs to.")
    w = ingest.read_many([(raw("pmc_perf_v3layout.csv"), "pmc_perf.csv"),
                          (raw("pmc_dispatch_info.csv"), "pmc_dispatch_info.csv")])
    assert ("pmc_perf.csv: holds 2 of the 3 dispatches that pmc_dispatch_info.csv lists (a subset, or a filtered "
            "run): totals cover only those.") in w.warnings


def test_kernel_top_with_pmc_perf_is_not_counted_twice():
    w = ingest.read_many([(raw("pmc_kernel_top.csv"), "top.csv"), (raw("pmc_perf_v3layout.csv"), "pmc_perf.csv")])
    assert w.sources == ("pmc_perf.csv",) and len(w) == 2 and col(w, "count") == [1, 1]


# --------------------------------------------------------------------------------------------- empty, Omniperf 1.x


@pytest.mark.samples
def test_real_empty_pass_is_refused_as_empty():
    path = sample("omniperf2.0_mi100_EMPTY_pmc_perf_0.csv")
    with pytest.raises(InputError) as e:
        ingest.read(path, name="pmc_perf_0.csv")
    assert str(e.value) == (
        "pmc_perf_0.csv: expected at least one dispatch row, found a header only. Hint: the file is empty (no "
        "dispatch was profiled): rocprof-compute writes such files when its dispatch or kernel filter (--dispatch, "
        "--kernel) matched nothing, or when the program launched no kernel; profile again with a filter that matches.")


@pytest.mark.samples
def test_real_omniperf_1x_mi100_with_its_v1_sysinfo():
    perf = sample("omniperf1.x_mi100_pmc_perf.csv")
    rows = rows_of(perf)
    w = ingest.read_many([perf, sample("omniperf1.x_mi100_sysinfo.csv")])
    assert w.formats == ("rocprof-compute",) and len(w) == len(rows) == 167
    assert w.device == "mi100" and w.meta["arch"] == "gfx908" and w.meta["gpu_series"] == "MI100"
    assert w.meta["cu_per_gpu"] == "120" and w.meta["rocm_version"] == "4.2.0-21"

    def mi200_hbm(r: dict[str, str]) -> float:  # MI100 (gfx908) has the MI200 TCC_EA counters
        f = lambda k: float(r[k])  # noqa: E731
        return (f("TCC_EA_RDREQ_32B_sum") * 32 + (f("TCC_EA_RDREQ_sum") - f("TCC_EA_RDREQ_32B_sum")) * 64
                + f("TCC_EA_WRREQ_64B_sum") * 64 + (f("TCC_EA_WRREQ_sum") - f("TCC_EA_WRREQ_64B_sum")) * 32)

    assert col(w, "bytes_hbm") == [mi200_hbm(r) for r in rows]
    assert col(w, "bytes_l1") == [64 * float(r["TCP_TOTAL_CACHE_ACCESSES_sum"]) for r in rows]
    assert col(w, "time_s") == pytest.approx([(int(r["End_Timestamp"]) - int(r["Start_Timestamp"])) * 1e-9
                                              for r in rows], rel=1e-12)
    # only SQ_INSTS_VALU (all vector instructions): FLOPs unknown, and the user is told why
    assert col(w, "flops") == [None] * 167
    assert any("no FLOP counters" in x and "The file has SQ_INSTS_VALU" in x for x in w.warnings)
    assert col(w, "bytes_lds") == [None] * 167
    assert any(x.endswith("LDS bytes need lds_banks_per_cu, which the sysinfo.csv read with it does not give "
                          "(Omniperf 1.x does not record it): LDS bytes are unknown.") for x in w.warnings)


def test_sysinfo_v1_fixture():
    info = ingest.FORMATS["rocprof-compute-sysinfo"].parse(raw("sysinfo_v1.csv"), "sysinfo.csv", {})[
        "rocprof_sysinfo"]
    assert (info["gpu_model"], info["gpu_arch"], info["gpu_series"], info["cu_per_gpu"]) == (
        "mi100", "gfx908", "MI100", 120)
    assert info["hbm_bw"] == 1228.8e9 and info["max_sclk"] == 1502e6 and info["gpu_l2"] == 8192 * 1024
    assert info["rocm_version"] == "4.5.2-1" and info["warnings"] == []
