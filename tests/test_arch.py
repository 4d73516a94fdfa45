"""The architecture and GPU from what an export says besides a device column (roofcore.ingest.arch)."""

from pathlib import Path

import numpy as np
import pytest
from roofhelpers import make_hw, sample

from roofcore import ingest, load_catalogs
from roofcore.cli import main
from roofcore.ingest import arch, make_frame
from roofcore.models import Workload

DATA = Path(__file__).parent / "data" / "arch"


def workload(names, meta=None, device=None, formats=("inventory",)) -> Workload:
    frame = make_frame({"name": np.array(names, dtype=object)}, len(names))
    return Workload(frame=frame, name="w", sources=("w",), formats=formats, meta=meta or {}, device=device)


# ------------------------------------------------------------------------------------------ kernel names


@pytest.mark.parametrize("names, arch_min, tags", [
    (["cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4"], "sm_80", "cutlass_80_"),
    (["ampere_sgemm_32x32_sliced1x4_tn", "void splitKreduce_kernel<float>(float*)"], "sm_80", "ampere_"),
    (["cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1"], "sm_80", "ampere_"),
    (["sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_kernel"], "sm_90", "sm90_"),
    (["mxfp8_quantize_sm100", "bmm_Bfloat16_E2m1_Fp32_t128x16x256u2_s3_sm100f"], "sm_100", "sm100_"),
    (["void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::half_t, "
      "Flash_kernel_traits<128, 64, 64, 4, cutlass::half_t>>, cutlass::arch::Sm80>(Flash_fwd_params)"], "sm_80", "sm80_"),
    (["volta_sgemm_64x64_nt", "volta_scudnn_128x64_relu_interior_nn_v1"], "sm_70", "volta_"),
    (["turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", "cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32"], "sm_75",
     "cutlass_75_ / turing_"),
])
def test_cuda_tags_give_a_lower_bound_never_a_device(names, arch_min, tags):
    ev = arch.from_names(names)
    assert ev.meta == {"arch_min": arch_min}  # built for that architecture; it runs on it or a later one
    assert ev.device is None and "arch" not in ev.meta and "compute_capability" not in ev.meta
    assert ev.said == [f"kernel names carry {tags} tags (built for {arch.FAMILY[arch_min[3:-1] + '.' + arch_min[-1]]}, "
                       f"{arch_min}: the GPU is {arch_min} or a later one that runs them)"]


@pytest.mark.parametrize("names", [
    ["asm80_helper(int *)", "pack_sm(int *)", "smem_copy_64(float *)", "sm_count_kernel(int *)"],
    ["gemm_sm87654(float *)", "convolution_volta(float *)", "reduce(float *, int)"],
])
def test_words_that_only_look_like_tags(names):
    assert arch.from_names(names).meta == {}


@pytest.mark.parametrize("names, gfx, how", [
    (["Cijk_Alik_Bljk_HHS_BH_Bias_HA_S_SAV_UserArgs_MT64x64x32_MI16x16x1_SN_LDSB0_GLS0_ISA1201_IU1_K1_WS32"], "gfx1201",
     "Tensile ISA1201"),
    (["Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8_ISA90a_SK0_WG32_8_1"], "gfx90a", "Tensile ISA90a"),
    (["void rocprim::ROCPRIM_400100_NS::detail::trampoline_kernel<rocprim::default_config, "
      "(rocprim::ROCPRIM_400100_NS::detail::target_arch)910, int>(int)"], "gfx90a", "rocPRIM target_arch 910"),
    (["kernel_gfx942_fused(float *)", "__amd_rocclr_copyBuffer.kd"], "gfx942", "gfx942"),
])
def test_amd_targets_in_kernel_names_are_exact(names, gfx, how):
    ev = arch.from_names(names)
    assert ev.meta == {"gpu_arch": gfx}
    assert ev.said == [f"kernel names carry {how} ({gfx}, {arch.GFX_FAMILY[gfx]})"]


def test_two_amd_targets_set_no_architecture():
    ev = arch.from_names(["Cijk_X_ISA942_Y", "Cijk_X_ISA90a_Y"])
    assert ev.meta == {} and "several AMD targets (gfx90a, gfx942)" in ev.said[0]


# ------------------------------------------------------------------------------------------ program output


@pytest.mark.parametrize("line, device, meta", [
    ("Detected GPU: NVIDIA A100-PCIE-40GB (SM 8.0)", "NVIDIA A100-PCIE-40GB",
     {"compute_capability": "8.0", "arch": "sm_80"}),
    ("device: NVIDIA GeForce RTX 5070 (sm_120), 48 SMs, 2.625 GHz", "NVIDIA GeForce RTX 5070",
     {"compute_capability": "12.0", "arch": "sm_120", "sm_count": "48"}),
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a3b2c1d-0000-1111-2222-333344445555)", "NVIDIA H100 80GB HBM3", {}),
    ('Device 0: "Tesla V100-SXM2-16GB"', "Tesla V100-SXM2-16GB", {}),
    ("  0: NVIDIA A100-SXM4-80GB (sm_80, 79.150 GiB / 80.000 GiB available)", "NVIDIA A100-SXM4-80GB",
     {"compute_capability": "8.0", "arch": "sm_80"}),
    ("Using device 1: AMD Instinct MI250X", "AMD Instinct MI250X", {}),
    ('GPU Device 0: "Ampere" with compute capability 8.0', None, {"compute_capability": "8.0", "arch": "sm_80"}),
])
def test_device_lines_of_a_program(line, device, meta):
    ev = arch.from_text(f"Running warm-up...\n{line}\nPassed.\n\"ID\",\"Process ID\",\"Kernel Name\"\n")
    assert ev.device == device and ev.meta == meta
    assert ev.said and line.strip()[:40] in ev.said[0]


@pytest.mark.parametrize("lead", ["", "  ", "\t", "> ", "* ", "## ", "- ", " -*> "])
def test_a_device_line_behind_marks_is_found_and_a_json_key_is_not(lead):
    """What may stand before a label (blanks, quote and list marks) is skipped; a JSON key, indented or not, is
    no program's line (lines are pre-filtered on their first character after those marks)."""
    text = "\n".join(["{", '  "device": "NVIDIA A100-SXM4-80GB",', '"GPU 0": "NVIDIA H100",',
                      f"{lead}GPU 0: NVIDIA H100 80GB HBM3", "}"])
    ev = arch.from_text(text)
    assert ev.device == "NVIDIA H100 80GB HBM3"
    assert arch.from_text("\n".join(text.splitlines()[:3])).device is None


@pytest.mark.parametrize("text", [
    "Device: cuda:0\nGPU: available\n",  # no model named
    "Marketing Name: AMD EPYC 9654 96-Core Processor\n",  # a CPU
    "GPU 0: AMD Radeon Graphics\n",  # a marketing name that names no model
    '0,"kernel(float *, int)",1200,NVIDIA A100\n',  # a table's row, not a program's line
])
def test_lines_that_name_no_gpu(text):
    ev = arch.from_text(text)
    assert ev.device is None and ev.meta == {}


def test_rocminfo_agents_give_the_gpu():
    text = ('{"Agent1.Name": "AMDInstinctMI300AAccelerator", "Agent1.VendorName": "CPU", "Agent1.ComputeUnit": "48",\n'
            ' "Agent5.DeviceType": "GPU",\n "Agent5.Name": "gfx942",\n "Agent5.MarketingName": "AMDInstinctMI300A",\n'
            ' "Agent5.ComputeUnit": "228"}\n')
    ev = arch.from_agents(text)
    assert ev.device == "AMD Instinct MI300A" and ev.meta == {"gpu_arch": "gfx942", "cu_per_gpu": "228"}
    plain = ("*******\nAgent 2\n*******\n  Name:                    gfx90a\n  Marketing Name:          AMD Radeon Graphics"
             "\n  Device Type:             GPU\n  Compute Unit:            104\n")
    ev = arch.from_agents(plain)
    assert ev.device is None and ev.meta == {"gpu_arch": "gfx90a", "cu_per_gpu": "104"}


# ------------------------------------------------------------------------------------------ ncu pages


def test_ncu_page_implies_the_peak_bandwidth_and_sm_count():
    w = ingest.read(DATA / "ncu_details_no_device_a100_80gb.csv")
    assert w.device is None and w.meta["compute_capability"] == "8.0"
    assert w.meta["sm_count"] == "108"
    # launch 0: 815.60 GB/s at 40.00 % of peak; launch 1 (8.10 %, under 10 %) is too imprecise to use
    assert float(w.meta["dram_peak_bytes_per_s"]) == pytest.approx(815.60e9 / 0.40, rel=1e-3)
    assert w.meta["device_evidence"] == ("compute capability 8.0 (Ampere) from the export; 108 SMs; peak DRAM "
                                         "bandwidth ≈ 2,039 GB/s (815.6 GB/s at 40 % of peak, launch 0)")


def test_bandwidth_tells_devices_of_one_architecture_apart():
    cat = load_catalogs()
    meta = {"compute_capability": "8.0", "dram_peak_bytes_per_s": "2.035e12"}
    assert arch.by_bandwidth(cat, meta) == ["a100-80gb-sxm"]
    assert arch.by_bandwidth(cat, {**meta, "dram_peak_bytes_per_s": "1.54e12"})[0] in ("a100-40gb-sxm", "a100-40gb-pcie")
    assert arch.by_bandwidth(cat, {**meta, "dram_peak_bytes_per_s": "9e11"}) == []  # no sm_80 device fits
    assert arch.by_bandwidth(cat, {"compute_capability": "12.0", "dram_peak_bytes_per_s": "1.757e12"}) == ["rtx-5090"]
    assert arch.by_bandwidth(cat, {"dram_peak_bytes_per_s": "1.757e12"}) == []  # no architecture: no answer


def test_two_devices_equally_near_are_no_answer():
    a = make_hw(100e12, 1.00e12, hw_id="a-card")
    b = make_hw(100e12, 1.04e12, hw_id="b-card")
    for hw, name in ((a, "NVIDIA A100 X"), (b, "NVIDIA A100 Y")):
        object.__setattr__(hw, "name", name)
        object.__setattr__(hw, "kind", type(hw.kind)("gpu"))
    assert arch.by_bandwidth([a, b], {"compute_capability": "8.0", "dram_peak_bytes_per_s": "1.02e12"}) == []
    assert arch.by_bandwidth([a, b], {"compute_capability": "8.0", "dram_peak_bytes_per_s": "1.002e12"}) == ["a-card"]


# ------------------------------------------------------------------------------------------ applied to workloads


def test_infer_keeps_what_the_parser_read():
    w = workload(["Cijk_X_ISA942_Y"], meta={"compute_capability": "8.0", "arch": "sm_80"}, device="NVIDIA A100")
    out = arch.infer(w, b"")
    assert out.meta["arch"] == "sm_80" and "gpu_arch" not in out.meta  # the parser's reading wins
    assert "device_evidence" not in out.meta and out.device == "NVIDIA A100"  # the file named its device


def test_infer_names_the_device_only_when_the_export_does():
    w = workload(["sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_kernel"])
    out = arch.infer(w, b"Loading model...\nepoch 1 done\n")
    assert out.device is None and out.meta["arch_min"] == "sm_80" and "arch" not in out.meta
    out = arch.infer(w, b"Using device 0: NVIDIA L4\nName,Calls\n")
    assert out.device == "NVIDIA L4" and out.meta["compute_capability"] == "8.9"  # from the device name
    assert out.meta["device_evidence"].startswith("the program's output names the GPU: 'Using device 0: NVIDIA L4'")


def test_the_hook_runs_for_every_format(tmp_path):
    w = ingest.read(DATA / "rocprof_results_tensile_gfx1201.csv")
    assert w.meta["gpu_arch"] == "gfx1201"
    assert w.meta["device_evidence"] == "kernel names carry Tensile ISA1201 (gfx1201, RDNA 4)"
    gz = tmp_path / "results.csv.gz"
    import gzip

    gz.write_bytes(gzip.compress((DATA / "rocprof_results_tensile_gfx1201.csv").read_bytes()))
    assert ingest.read(gz).meta["gpu_arch"] == "gfx1201"


def test_cheap_on_200000_kernels():
    names = np.array([f"void k{i % 3000}<float, {i % 3000}>(float *) sm80_xmma" for i in range(200_000)], dtype=object)
    w = workload(names)
    ops = arch.distinct(names)
    assert len(ops) == 3000  # distinct names only are searched
    assert arch.infer(w, b"x" * 2_000_000).meta["arch_min"] == "sm_80"


# ------------------------------------------------------------------------------------------ the CLI


def test_cli_default_device_from_the_evidence(capsys):
    assert main(["analyze", str(DATA / "ncu_details_no_device_a100_80gb.csv")]) == 0
    out = capsys.readouterr().out
    assert "(a100-80gb-sxm)" in out
    assert ("The implied peak DRAM bandwidth (≈ 2,039 GB/s) is the NVIDIA A100 80GB SXM4's (a100-80gb-sxm, 2,039 GB/s): "
            "the catalog's one device of compute capability 8.0 that fits it.") in out
    assert "Device evidence: compute capability 8.0 (Ampere) from the export; 108 SMs; peak DRAM bandwidth" in out
    assert main(["analyze", str(DATA / "rocprof_results_tensile_gfx1201.csv")]) == 0
    out = capsys.readouterr().out
    assert "(radeon-ai-pro-r9700)" in out and "Device evidence: kernel names carry Tensile ISA1201" in out


@pytest.mark.samples
@pytest.mark.parametrize("name, device", [
    ("ncu_details_a100_julia_set_full_rules_humanunits.csv", "a100-80gb-sxm"),
    ("ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv", "a100-40gb-pcie"),
    ("ncu_details_rtx5070_win_gemm_naive.csv", "rtx-5070"),
    ("ncu_rtx5090_deepseekocr_gemv_details_na_legacy_metrics.csv", "rtx-5090"),
    ("rocprofv1_r9700_rdna4_llamacpp_results_multigpu_gpuid2.csv", "radeon-ai-pro-r9700"),
    ("rocprofv1_r9700_rdna4_llamacpp_results.stats.csv", "radeon-ai-pro-r9700"),
    ("rocprofv1_mi300x_8gpu_gunrock_bfs_results_7kB_kernel_names.csv", "mi300x"),
    ("rocprofv1_mi300a_vecadd_hiptrace_results.json", "mi300a"),
])
def test_samples_get_their_device(capsys, name, device):
    assert main(["analyze", str(sample(name)), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert f"({device}) —" in out and "Device evidence: " in out


def test_cli_says_what_the_export_said_when_it_names_no_device(capsys, tmp_path):
    f = tmp_path / "kern_sum.csv"
    f.write_text("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                 "60.0,6000,2,3000.0,3000.0,2900,3100,141.4,cutlass_80_tensorop_s1688gemm_64x64_16x10_nn_align4\n"
                 "40.0,4000,2,2000.0,2000.0,1900,2100,141.4,void add<float>(float *)\n")
    assert main(["analyze", str(f)]) == 2
    err = capsys.readouterr().err
    assert ("the input does not say which device it ran on: kernel names carry cutlass_80_ tags (built for Ampere, "
            "sm_80: the GPU is sm_80 or a later one that runs them), which names no one device; name at least one "
            "device with --hardware ID") in err


def test_ncu_evidence_survives_a_spreadsheet_round_trip():
    text = (DATA / "ncu_details_no_device_a100_80gb.csv").read_text()
    plain = arch.from_ncu(text).meta
    assert arch.from_ncu("\ufeff" + text.replace('"', "").replace("\n", "\r\n")).meta == plain
    assert plain["sm_count"] == "108"


def test_ncu_raw_page_bytes_over_duration():
    raw = ('"ID","Process ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
           '"dram__throughput.avg.pct_of_peak_sustained_elapsed","device__attribute_multiprocessor_count"\n'
           '"","","","Mbyte","Mbyte","usecond","%",""\n'
           '"0","11","k(float *)","600.00","200.00","500.00","50.00","132"\n')
    ev = arch.from_ncu(raw)  # (800 MB / 500 µs) / 50 % = 3.2 TB/s, an H100 SXM's class
    assert float(ev.meta["dram_peak_bytes_per_s"]) == pytest.approx(3.2e12) and ev.meta["sm_count"] == "132"
