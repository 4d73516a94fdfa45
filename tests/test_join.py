"""Timeline + counters = a roofline (roofcore.ingest.join): names normalised across tools, the join's formulas,
coverage, the targeted profiler commands, pairs fixed by hand, and the real RTX 5090 pair."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from roofhelpers import col, mutated, sample

import roofcore
from roofcore.analyze import analyze
from roofcore.catalog import load_catalogs
from roofcore.cli.analysis import analysis_text
from roofcore.errors import InputError
from roofcore.ingest import make_frame, nsys_trace
from roofcore.ingest.join import counter_headline, counter_summary, join_counters, role_of
from roofcore.ingest.join_commands import command_script, kernel_regex, targeted_commands
from roofcore.ingest.join_names import match_kernels, normalise_kernel_name, normalise_names
from roofcore.ingest.ncu_metrics import ROOFLINE_METRICS
from roofcore.models import Workload
from roofcore.output import analysis_document, analysis_json

DATA = Path(__file__).parent / "data" / "join"

# the same cuBLAS GEMV as Nsight Systems and Nsight Compute print it (one RTX 5090 run), and its (int)6 sibling
GEMV_NSYS = ("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, "
             "__nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, cublasGemvParamsEx<int, "
             "cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, "
             "cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)")
GEMV_NCU = ("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 0, 1, 1, 0, "
            "7, 0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, "
            "cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, "
            "float>>(T13)")
GEMV6_NSYS = GEMV_NSYS.replace("(int)7", "(int)6")
CUTLASS = "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>(T1::Params)"

SAME = [
    (GEMV_NSYS, GEMV_NCU),
    # CUPTI / Kineto (Itanium demangler) and Nsight Systems (EDG): anonymous namespaces, lambdas, casts, "> >", "char*"
    ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
     "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
     "const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
     "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
     "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
     "{lambda(float)#1}, at::detail::Array<char*, 2>)",
     "void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::launch_clamp_scalar("
     "at::TensorIteratorBase &, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::[lambda() (instance 1)]::"
     "operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)], "
     "at::detail::Array<char *, (int)2>>(int, T2, T3)"),
    # rocprof v1 (clone suffix) and rocprofv3
    ("void convert_unary<__half, float>(void const*, float*, long, long, long, HIP_vector_type<unsigned int, 3u>, long, "
     "long, long) [clone .kd]",
     "void convert_unary<__half, float>(void const*, float*, long, long, long, HIP_vector_type<unsigned int, 3u>, long, "
     "long, long)"),
    ("__amd_rocclr_copyBuffer.kd", "__amd_rocclr_copyBuffer"),
    # literal suffixes and casts; true/false and (bool)
    ("void batched_matrix_multiplication_matrix_core_64x64x4<64u, 64u, 8u>(unsigned int, std::bfloat16_t const*)",
     "void batched_matrix_multiplication_matrix_core_64x64x4<(unsigned int)64, (unsigned int)64, (unsigned int)8>"
     "(unsigned int, const std::bfloat16_t *)"),
    ("void softmax_warp_forward<float, float, float, 6, false, false>(float*, float const*, int)",
     "void <unnamed>::softmax_warp_forward<float, float, float, (int)6, (bool)0, (bool)0>(T2 *, const T1 *, int)"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_one_kernel_two_spellings_share_a_key(a, b):
    assert normalise_kernel_name(a) == normalise_kernel_name(b)


def test_the_key_keeps_what_tells_kernels_apart():
    assert normalise_kernel_name(GEMV_NSYS) == (
        "kernel<int,int,__nv_bfloat16,__nv_bfloat16,__nv_bfloat16,float,0,1,1,0,7,0,cublasGemvParamsEx<int,"
        "cublasGemvTensorStridedBatched<__nv_bfloat16 const>,cublasGemvTensorStridedBatched<__nv_bfloat16 const>,"
        "cublasGemvTensorStridedBatched<__nv_bfloat16>,float>>")
    assert normalise_kernel_name(GEMV6_NSYS) != normalise_kernel_name(GEMV_NSYS)  # template arguments stay
    assert normalise_kernel_name(CUTLASS) == "Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>"
    assert normalise_kernel_name("Cijk_Alik_Bljk_HHS_BH_MT64x64x32_MI16x16x1_SN_ISA942.kd") == \
        "Cijk_Alik_Bljk_HHS_BH_MT64x64x32_MI16x16x1_SN_ISA942"
    assert normalise_kernel_name("Memcpy HtoD (Pageable -> Device)") == "Memcpy HtoD(Pageable->Device)"  # prose kept


def test_cut_names():
    """nsys cuts long names to its column: inside the parameters nothing is lost; inside the template arguments the
    key is a prefix (ending in …), cut back to the last whole argument."""
    assert normalise_kernel_name("gpu_broadcast_kernel_cartesian(CompilerMetadata<DynamicSize, DynamicCheck, void, "
                                 "CartesianIndices<(…") == "gpu_broadcast_kernel_cartesian"
    cut = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::launch_clamp_scalar(at::Tens…"
    assert normalise_kernel_name(cut) == "vectorized_elementwise_kernel<4,…"
    assert normalise_kernel_name(SAME[1][0]).startswith(normalise_kernel_name(cut)[:-1])
    m = match_kernels([cut], [SAME[1][0]])
    assert m.pairs == {cut: (SAME[1][0],)} and m.how[cut] == "cut name"


def test_normalise_names_once_per_distinct_name():
    names = [GEMV_NSYS, CUTLASS, GEMV_NSYS, GEMV_NCU]
    assert list(normalise_names(names)) == [normalise_kernel_name(n) for n in names]
    assert len(normalise_names([])) == 0


# ------------------------------------------------------------------------------------------ the join's formulas


def _w(rows: list[tuple], formats: tuple[str, ...], byte_col: bool = True) -> Workload:
    cols = {"name": [r[0] for r in rows], "count": np.array([r[1] for r in rows], dtype=np.int64),
            "time_s": np.array([r[2] for r in rows], dtype=np.float64),
            "flops": np.array([r[3] for r in rows], dtype=np.float64)}
    if byte_col:
        cols["bytes_hbm"] = np.array([r[4] for r in rows], dtype=np.float64)
    if any(len(r) > 5 for r in rows):
        cols["group"] = [r[5] if len(r) > 5 else None for r in rows]
    return Workload(frame=make_frame(cols, len(rows)), name="+".join(formats), formats=formats,
                    sources=(f"{formats[0]}.csv",))


def test_join_means_spread_and_timeline_counts():
    timeline = _w([("kA<int>(float*)", 100, 2e-3, math.nan, math.nan), ("kB", 10, 1e-3, math.nan, math.nan),
                   ("kC", 5, 5e-4, math.nan, math.nan), ("Memcpy HtoD (Pageable -> Device)", 2, 5e-4, 0.0, 4e6,
                                                         "memcpy")], ("nsys-kern-sum",))
    counters = _w([("kA<int>(float *)", 1, 9e-3, 1e6, 2e6), ("kA<int>(float *)", 1, 9e-3, 3e6, 2e6),
                   ("kA<int>(float *)", 2, 9e-3, 4e6, math.nan),  # two launches in one row; bytes unknown here
                   ("kB", 1, 7e-3, math.nan, 5e5), ("kZ", 1, 1.0, 1.0, 1.0)], ("ncu-details",))
    w = join_counters(timeline, counters)
    # times and counts: the timeline's; the counters' (replay) times are never used, their extra kernel never added
    assert col(w, "name") == col(timeline, "name") and col(w, "count") == [100, 10, 5, 2]
    assert col(w, "time_s") == [2e-3, 1e-3, 5e-4, 5e-4]
    # kA: FLOPs per launch = (1e6 + 3e6 + 4e6) / 4 launches = 2e6; bytes per launch = mean of the launches that have
    # them (2e6); spread = population standard deviation ÷ mean over the launches (per launch: 1e6, 3e6, 2e6, 2e6)
    assert col(w, "flops")[0] == pytest.approx(2e6 * 100) and col(w, "bytes_hbm")[0] == pytest.approx(2e6 * 100)
    assert w.frame["flops_cv"][0] == pytest.approx(statistics.pstdev([1e6, 3e6, 2e6, 2e6]) / 2e6)
    assert w.frame["hbm_bytes_cv"][0] == 0.0 and col(w, "counter_launches")[0] == 4
    # kB: FLOPs unknown in the counters, bytes known: the bytes carry over, the FLOPs stay unknown
    assert col(w, "flops")[1] is None and col(w, "bytes_hbm")[1] == pytest.approx(5e5 * 10)
    # kC: no counters: time only; the copy keeps its own bytes and is not a kernel to cover
    assert col(w, "flops")[2] is None and col(w, "bytes_hbm")[2] is None and col(w, "counter_kernel")[2] is None
    assert col(w, "bytes_hbm")[3] == 4e6 and col(w, "counter_kernel")[3] is None
    assert col(w, "counter_match")[:2] == ["same key and parameters", "same name"]
    # coverage: kernels with counters (kA, kB) over the kernels' time (copies left out)
    s = counter_summary(w)
    assert s["coverage"] == pytest.approx(3e-3 / 3.5e-3) and s["timeline_time_s"] == pytest.approx(3.5e-3)
    assert (s["kernels"], s["kernels_with_counters"]) == (3, 2)
    assert counter_headline(w) == ("Counters for 86% of the timeline's 3.5 ms (2 of 3 kernels); the rest is time "
                                   "only.")
    assert any(x.startswith("1 counter kernel matched no timeline kernel") and "kZ" in x for x in w.warnings)
    assert any(x.startswith("FLOPs or off-chip bytes per launch vary by more than 25%") and "kA<…>" in x
               for x in w.warnings)
    assert w.formats == ("nsys-kern-sum", "ncu-details") and "time_only" not in w.meta


def test_unknown_counter_values_keep_the_timelines_own():
    """A PyTorch trace with shapes has FLOPs of its own: a matched kernel whose counters lack FLOPs keeps them."""
    timeline = _w([("gemm", 4, 1e-3, 8e9, math.nan)], ("pytorch-trace",))
    w = join_counters(timeline, _w([("gemm", 1, 1.0, math.nan, 1e6)], ("ncu-details",)))
    assert col(w, "flops") == [8e9] and col(w, "bytes_hbm") == [4e6]


def test_pairs_fixed_by_hand():
    timeline = _w([("my_gemm_v2", 10, 1e-3, math.nan, math.nan)], ("nsys-kern-sum",))
    counters = _w([("gemm_kernel_renamed", 1, 1.0, 5e6, 1e6)], ("ncu-details",))
    alone = join_counters(timeline, counters)
    assert col(alone, "flops") == [None] and counter_summary(alone)["coverage"] == 0.0
    w = join_counters(timeline, counters, pairs={"my_gemm_v2": "gemm_kernel_renamed", "nope": "gemm_kernel_renamed"})
    assert col(w, "flops") == [5e7] and col(w, "counter_match") == ["by hand"]
    assert counter_summary(w)["coverage"] == 1.0 and counter_headline(w).endswith("(1 of 1 kernel).")
    assert any(x.startswith("pairs naming a kernel neither file has, ignored: nope → gemm_kernel_renamed")
               for x in w.warnings)


def test_a_function_name_alone_matches_only_where_it_is_one_kernel():
    """Nsight Compute's --print-kernel-base function prints cuBLAS's internal::gemvx::kernel<…> as ``kernel``: it stands
    for the timeline's only such kernel, and for none where two differ in their template arguments."""
    counters = _w([("kernel", 1, 1.0, 2e6, 3e6)], ("ncu-details",))
    one = join_counters(_w([(GEMV_NSYS, 10, 1e-3, math.nan, math.nan)], ("nsys-kern-sum",)), counters)
    assert col(one, "bytes_hbm") == [3e7] and col(one, "counter_match") == ["function name"]
    two = join_counters(_w([(GEMV_NSYS, 10, 1e-3, math.nan, math.nan), (GEMV6_NSYS, 10, 1e-3, math.nan, math.nan)],
                           ("nsys-kern-sum",)), counters)
    assert col(two, "bytes_hbm") == [None, None]
    assert any(x.startswith("2 timeline kernels match several counter kernels, or share one with another kernel, "
                            "and are left without counters") and "pairs={timeline name: counter name}" in x
               for x in two.warnings)


# ------------------------------------------------------------------------------------------ roles and routing


def test_roles_from_format_and_content():
    assert role_of(_w([("k", 1, 1e-3, math.nan, math.nan)], ("nsys-kern-sum",))) == "timeline"
    assert role_of(_w([("k", 1, 1e-3, 1.0, math.nan)], ("ncu-details",))) == "counters"
    assert role_of(_w([("k", 1, 1e-3, math.nan, math.nan)], ("ncu-details",))) == ""  # time only: replay times
    assert role_of(_w([("k", 1, 1e-3, math.nan, math.nan)], ("rocprof-v1",))) == "timeline"  # no --pmc
    assert role_of(_w([("k", 1, 1e-3, math.nan, 5.0)], ("rocprof-v1",))) == "counters"
    assert role_of(_w([("k", 1, 1e-3, 1.0, 1.0)], ("inventory-csv",))) == ""


def test_a_time_only_profile_with_an_inventory_still_joins_by_exact_name():
    w = roofcore.read_many([Path(__file__).parent / "data" / "nsys" / "kern_sum.csv",
                            Path(__file__).parent / "data" / "nsys" / "model.yaml"])
    assert "time_join" in w.meta and "counter_coverage" not in w.meta


# ------------------------------------------------------------------------------------------ read_many, end to end


def test_read_many_nsys_summary_with_ncu_details():
    counters = roofcore.read(DATA / "ncu_details.csv")
    w = roofcore.read_many([DATA / "kern_sum.csv", DATA / "ncu_details.csv"])
    assert len(w) == 5 and w.formats == ("nsys-kern-sum", "ncu-details")
    assert col(w, "time_s") == pytest.approx([4e-3, 2.5e-3, 2e-3, 1e-3, 5e-4])  # the timeline's, no replay time
    gemv = counters.frame[counters.frame["name"] == GEMV_NCU]
    assert len(gemv) == 3
    assert col(w, "flops")[0] == pytest.approx(gemv["flops"].mean() * 1000)
    assert col(w, "bytes_hbm")[0] == pytest.approx(gemv["bytes_hbm"].mean() * 1000)
    assert w.frame["hbm_bytes_cv"][0] == pytest.approx(statistics.pstdev(gemv["bytes_hbm"]) / 2e6)
    assert col(w, "counter_kernel") == [GEMV_NCU, None, None, counters.frame["name"][3], counters.frame["name"][4]]
    assert col(w, "counter_match") == ["same key and parameters", None, None, "same key and parameters",
                                       "same key and parameters"]
    assert float(w.meta["counter_coverage"]) == pytest.approx(0.55)
    assert counter_headline(w) == "Counters for 55% of the timeline's 10 ms (3 of 5 kernels); the rest is time only."
    assert any("unused_kernel<…>" in x and x.startswith("1 counter kernel matched no timeline kernel")
               for x in w.warnings)
    assert not any("gives times only" in x for x in w.warnings)  # the timeline's own note no longer holds


def test_a_timeline_and_counters_with_no_kernel_in_common_are_read_side_by_side():
    """Two unrelated runs (no kernel matches) are not a timeline with its counters: every kernel of both stays,
    and a warning says they were not joined (joining would drop the counter export's kernels)."""
    timeline = roofcore.read(DATA / "kern_sum.csv")
    other = roofcore.read(Path(__file__).parent / "data" / "ncu" / "details_12col_nersc.csv")
    assert not set(normalise_names(col(timeline, "name"))) & set(normalise_names(col(other, "name")))
    w = roofcore.read_many([DATA / "kern_sum.csv", Path(__file__).parent / "data" / "ncu" / "details_12col_nersc.csv"])
    assert len(w) == len(timeline) + len(other) and "counter_coverage" not in w.meta
    assert any("read side by side, not joined" in x for x in w.warnings)


def test_targeted_commands_for_the_uncovered_time():
    w = roofcore.read_many([DATA / "kern_sum.csv", DATA / "ncu_details.csv"])
    cmds = targeted_commands(w)
    # uncovered: cutlass 2.5 ms, gemvx (int)6 2 ms: both needed for 80% of the uncovered 4.5 ms
    assert [(n, round(s, 3)) for n, s, _ in cmds] == [(CUTLASS, 0.25), (GEMV6_NSYS, 0.2)]
    assert cmds[0][2] == ("ncu --kernel-name-base demangled --kernel-name regex:'\\bKernel2\\b' --launch-skip 0 "
                          '--launch-count 10 --metrics "$METRICS" -o kernel1 $APP')
    script = command_script(w)
    # the metrics once, in a shell variable; each kernel's command under a comment; the reports exported as CSV
    assert script == ["APP=./app  # your program and its arguments", f"METRICS={','.join(ROOFLINE_METRICS)}",
                      "# 1) 25% of the time: cutlass::Kernel2<…cutlass_80_wmma_tensorop_bf16…>",
                      cmds[0][2], "# 2) 20% of the time: std::enable_if<…>::type internal::gemvx::kernel<…>", cmds[1][2],
                      "for i in 1 2; do ncu --import kernel$i.ncu-rep --csv --page raw --print-units base > kernel$i.csv; "
                      "done"]
    assert w.meta["counter_commands"] == "\n".join(script)
    rx = re.search(r"regex:'([^']*)'", cmds[1][2]).group(1)
    assert rx == r"\bkernel<.*\b6\D"
    # the gemvx (int)6 kernel as nsys and as ncu print it, and not its (int)7 sibling
    assert re.search(rx, GEMV6_NSYS) and re.search(rx, GEMV_NCU.replace(" 7, 0,", " 6, 0,"))
    assert not re.search(rx, GEMV_NSYS) and not re.search(rx, GEMV_NCU)
    note = next(x for x in w.warnings if x.startswith("No counters for 2 of 5 kernels (45% of the timeline's kernel "
                                                       "time). Hint: collect them for the 2 that hold most of it"))
    head, script_text = note.split("\n", 1)
    assert script_text == w.meta["counter_commands"] and head.endswith("(set APP to your program first), then load "
                                                                       "the kernel*.csv files they write "
                                                                       "together with this timeline:")


def test_kernel_regex_tells_namesakes_apart():
    names = [GEMV_NSYS, GEMV6_NSYS, CUTLASS]
    for n in names:
        rx = kernel_regex(n, names)
        assert [m for m in names if re.search(rx, m)] == [n]


def test_nsys_gpu_trace_is_a_timeline_of_launches():
    """cuda_gpu_trace: one row per launch (memory operations left out), joined per launch with ncu's sampled ones."""
    path = DATA / "cuda_gpu_trace.csv"
    assert roofcore.ingest.detect(path.read_bytes(), path.name).name == "nsys-gpu-trace"
    t = roofcore.read(path)
    assert t.device == "NVIDIA GeForce RTX 5090" and t.meta["time_only"] == "true"
    assert col(t, "time_s") == pytest.approx([4e-6, 3.5e-6, 4.5e-6, 2e-6, 3e-6]) and col(t, "row")[0] == "6"
    assert col(t, "name")[3] == ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add"
                                 "<c10::BFloat16>, std::array<char *, (unsigned long)3>>(int, T2, T3)")  # unquoted
    assert t.warnings[0] == "2 memory operations (copies, memsets; 0.663 ms) left out: they are not kernels."
    w = roofcore.read_many([path, DATA / "ncu_details.csv"])
    gemv = roofcore.read(DATA / "ncu_details.csv").frame.iloc[:3]
    assert col(w, "count") == [1] * 5 and col(w, "time_s") == col(t, "time_s")
    assert col(w, "bytes_hbm")[:3] == pytest.approx([gemv["bytes_hbm"].mean()] * 3)
    assert col(w, "bytes_hbm")[3] == 3e6 and col(w, "flops")[4] is None
    assert counter_headline(w) == ("Counters for 82% of the timeline's 17 µs (2 of 3 kernels); the rest is time "
                                   "only.")


def test_read_many_rocprof_stats_with_rocprofv3_counters():
    """A --stats summary and the rocprofv3 counters of another run: the summary is the timeline, not a duplicate."""
    w = roofcore.read_many([DATA / "results.stats.csv", DATA / "counter_collection.csv"])
    assert w.formats == ("rocprof-v1-stats", "rocprof-v3") and len(w) == 3
    counters = roofcore.read(DATA / "counter_collection.csv")
    assert col(w, "flops")[0] == pytest.approx(counters.frame["flops"].mean() * 400)  # [clone .kd] dropped
    assert col(w, "bytes_hbm")[0] == pytest.approx(counters.frame["bytes_hbm"].mean() * 400)
    assert col(w, "time_s") == pytest.approx([12e-3, 6e-3, 2e-3])
    assert counter_headline(w) == "Counters for 60% of the timeline's 20 ms (1 of 3 kernels); the rest is time only."
    cmds = targeted_commands(w)
    assert [c.split(" --kernel-include-regex ")[0] for _, _, c in cmds] == ["rocprofv3", "rocprofv3"]
    assert cmds[0][2].endswith(""" --pmc "$PMC" --output-format csv -- $APP""")
    script = command_script(w)
    assert script[1].startswith("PMC=SQ_INSTS_VALU_ADD_F16,") and not any(x.startswith("METRICS=") for x in script)
    # rocprof's spelling of the Tensile kernel (.kd), told from the other kernels by a part of its name
    rx = re.search(r"--kernel-include-regex '([^']*)'", cmds[0][2]).group(1)
    names = list(w.frame["name"])
    assert len(rx) < 30 and re.search(rx, "Cijk_Alik_Bljk_HHS_BH_MT64x64x32_MI16x16x1_SN_ISA942.kd")
    assert [n for n in names if re.search(rx, n)] == [cmds[0][0]] and cmds[0][0].startswith("Cijk_Alik_Bljk_HHS")


def test_pairs_through_read_many():
    ncu = (DATA / "ncu_details.csv").read_text().replace("void unused_kernel<float>(float *)", "renamed_gemm")
    w = roofcore.read_many([DATA / "kern_sum.csv", (ncu.encode(), "ncu.csv")], pairs={CUTLASS: "renamed_gemm"})
    assert col(w, "counter_match")[1] == "by hand" and col(w, "bytes_hbm")[1] == pytest.approx(1e5 * 50)
    assert counter_summary(w)["kernels_with_counters"] == 4


def test_a_timeline_alone_names_the_commands():
    w = roofcore.read_many([DATA / "kern_sum.csv"])
    assert "counter_coverage" not in w.meta and counter_headline(w) == ""
    lines = w.meta["counter_commands"].split("\n")
    assert lines[1].startswith("METRICS=") and lines[3].startswith("ncu --kernel-name-base demangled --kernel-name "
                                                                   "regex:'\\bkernel<")
    assert any(x.startswith("No counters for 5 of 5 kernels (100% of the timeline's kernel time).") for x in w.warnings)


def test_a_timeline_with_flops_of_its_own_alone_is_left_as_it_is():
    """A PyTorch trace with shapes has FLOPs for its kernels: read alone, no counter commands are added to it."""
    from roofcore.ingest.join import join_inputs

    shaped = _w([("gemm", 4, 1e-3, 8e9, 1e6), ("relu", 4, 1e-3, math.nan, math.nan)], ("pytorch-trace",))
    assert join_inputs([shaped]) == [shaped]
    bare = _w([("gemm", 4, 1e-3, math.nan, math.nan)], ("pytorch-trace",))
    lines = join_inputs([bare])[0].meta["counter_commands"].split("\n")
    # no vendor said: both tools' commands, each list named once
    assert [x.split("=")[0] for x in lines[:3]] == ["APP", "METRICS", "PMC"] and lines[3].startswith("# 1) 100% of")
    assert lines[4].startswith("ncu ") and lines[5].startswith("rocprofv3 ") and lines[6].startswith("for i in 1;")


def test_cli_text_and_json_state_the_coverage():
    w = roofcore.read_many([DATA / "kern_sum.csv", DATA / "ncu_details.csv"])
    a = analyze(w, [load_catalogs().get("h100-sxm")])
    text = analysis_text(a)
    assert "\nCounters for 55% of the timeline's 10 ms (3 of 5 kernels); the rest is time only.\n" in text
    doc = analysis_document(a, kernels=False)
    assert doc["counters"]["coverage"] == pytest.approx(0.55) and doc["counters"]["kernels_with_counters"] == 3
    assert doc["counters"]["commands"] == w.meta["counter_commands"].split("\n")
    assert '"counters": {' in analysis_json(a)
    # the hint's commands indented under its first line, one a line, as they are pasted into a shell
    assert "time). Hint: collect them for the 2 that hold most of it" in text
    assert "together with this timeline:\n  APP=./app  # your program and its arguments\n  METRICS=gpu__time_" in text
    assert "\n  ncu --kernel-name-base demangled --kernel-name regex:'\\bKernel2\\b' --launch-skip 0" in text


def test_json_of_a_timeline_alone_gives_the_commands():
    w = roofcore.read_many([DATA / "kern_sum.csv"])
    doc = analysis_document(analyze(w, [load_catalogs().get("h100-sxm")]), kernels=False)
    assert doc["counters"] == {"commands": w.meta["counter_commands"].split("\n")}
    assert doc["counters"]["commands"][1].startswith("METRICS=") and counter_headline(w) == ""


# ------------------------------------------------------------------------------------------ the real pair


def test_real_rtx5090_timeline_with_one_sampled_gemv_launch():
    nsys = sample("nsys_rtx5090_deepseekocr_decode_cuda_gpu_kern_sum_unquoted.csv")
    ncu = sample("ncu_rtx5090_deepseekocr_gemv_details_na_legacy_metrics.csv")
    w = roofcore.read_many([nsys, ncu])
    assert len(w) == 46  # the timeline's kernels; the ncu launch adds none
    f = w.frame
    hit = f[f["counter_kernel"].notna()]
    assert len(hit) == 1 and hit["name"].iloc[0].startswith("std::enable_if<!T7, void>::type internal::gemvx::kernel<")
    assert ", (int)7, " in hit["name"].iloc[0] and hit["count"].iloc[0] == 16448
    assert hit["time_s"].iloc[0] == pytest.approx(61_602_133e-9)  # the timeline's time, not ncu's replay
    assert np.isnan(hit["flops"].iloc[0])  # ncu's FLOP counters read n/a: unknown
    assert hit["bytes_hbm"].iloc[0] == pytest.approx(2.33e6 * 16448)  # its DRAM bytes (2.33 MB read, 0 written)
    s = counter_summary(w)
    assert s["coverage"] == pytest.approx(61_602_133 / 179_072_697) and s["kernels_with_counters"] == 1
    assert counter_headline(w) == ("Counters for 34% of the timeline's 179 ms (1 of 46 kernels); the rest is time "
                                   "only.")
    # five kernels without counters hold most of the rest: the metrics, a comment and a command each, the export
    assert w.meta["counter_commands"].count("\nncu ") == 5 and w.meta["counter_commands"].count("\n") == 12


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=mutated([(DATA / "cuda_gpu_trace.csv").read_bytes()],
                    [b",", b'"', b"\n", b"n/a", b"-1", b"1e999", b"\x00", b"[CUDA memset]", b"Start (us)"],
                    raw_size=512))
def test_fuzz_gpu_trace_ends_in_a_workload_or_an_input_error(data):
    try:
        w = nsys_trace.parse(data, "fuzz.csv")
    except InputError:
        return
    assert len(w) > 0 and (w.frame["count"] == 1).all() and (w.frame["time_s"] >= 0).all()


def test_gpu_trace_with_a_header_whose_quotes_do_not_pair_up_is_one_line():
    """An unbalanced quote in the header hides the Name column from the CSV reader: one line, not a KeyError."""
    data = (b'Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,"BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),'
            b'Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n1,2,3,4,5,6,7,8,9,10,0,0,,,,,GPU 0,1,7,k\n')
    with pytest.raises(InputError, match="expected Duration and Name columns"):
        roofcore.read(data, "trace.csv", fmt="nsys-gpu-trace")
