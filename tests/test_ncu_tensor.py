"""FLOPs per tensor-core SASS instruction and architecture (roofcore.ingest.ncu_tensor, docs/formats-tensor.md)."""

from pathlib import Path

import numpy as np
import pytest

from roofcore import ingest
from roofcore.ingest import ncu_tensor

NCU = Path(__file__).parent / "data" / "ncu"
GEMM = 2 * 2048**3  # each GEMM launch of details_volta_tensor_pipe.csv is a 2048³ half GEMM


def read(name: str):
    return ingest.read(NCU / name, name=name)


def test_volta_counts_hmma884_steps_not_the_cutlass_warp_shape():
    w = read("details_volta_tensor_pipe.csv")  # CC 7.0; program output names a Tesla V100-PCIE-32GB
    f = w.frame["flops"].to_numpy()
    # CUTLASS arch::Mma<GemmShape<16, 16, 4>, 32, half_t, …, float>: one mma.m8n8k4 per warp = 4 quad-pair 8×8×4 MMAs,
    # lowered to 4 HMMA.884 STEPs of 512 FLOP; cuBLAS s884 (fp32 accumulate) the same; h884 (fp16 accumulate) 2 STEPs
    # of 1,024; an unnamed kernel the sm_70 default (fp32 accumulate assumed)
    assert f[:4].tolist() == [33_554_432 * 512, 33_554_432 * 512, 16_777_216 * 1_024, 33_554_432 * 512]
    assert f[:4].tolist() == [GEMM] * 4
    assert w.device == "Tesla V100-PCIE-32GB"
    assert "× 512 (16×16×4, from the kernel name; HMMA.884 in 4 STEPs, fp32 accumulate) for 1 launch" in w.warnings[0]
    assert "× 1,024 (8×8×4, from the kernel name; HMMA.884 in 2 STEPs, fp16 accumulate) for 1 launch" in w.warnings[0]


def test_same_count_same_device_same_flops():
    w = read("details_volta_tensor_pipe.csv")
    f = w.frame["flops"].to_numpy()
    pipe = np.array([33_554_432, 33_554_432, 16_777_216, 33_554_432, 33_554_432])
    finite = np.isfinite(f)
    # equal counts on this device give equal FLOPs unless the name names another instruction (h884: fp16 accumulate)
    same = [i for i in range(4) if pipe[i] == 33_554_432]
    assert len({f[i] for i in same}) == 1 and finite[:4].all()


def test_a_factor_above_the_device_peak_is_a_contradiction_never_a_result():
    w = read("details_volta_tensor_pipe.csv")
    # launch 4 names tensor16x8x16 (4,096 FLOP): 33,554,432 × 4,096 in 243.9 µs = 563.5 TFLOP/s, above any sm_70 GPU
    assert np.isnan(w.frame["flops"].iloc[4])
    assert w.frame["unit"].iloc[4] == "matrix"  # still tensor-core work, of unknown size
    note = next(x for x in w.warnings if x.startswith("contradiction:"))
    assert note == ("contradiction: 'sm70_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_warpsize2x2x1_tensor…' "
                    "(1 launch) would run at 563.5 TFLOP/s with × 4,096 FLOP per tensor instruction (16×8×16, from the "
                    "kernel name), above the fp16 matrix peak of any sm_70 device in the catalog (125.0 TFLOP/s): that "
                    "factor cannot be right for it, so its tensor FLOPs are unknown.")
    assert "× 4,096" not in w.warnings[0]  # not listed among the factors used


def test_the_named_device_gives_the_peak():
    peaks = ncu_tensor.peak_lookup("8.0", "NVIDIA A100-PCIE-40GB")
    assert peaks("fp16") == 312e12 and peaks("tf32") == 156e12 and peaks.what == "its device, NVIDIA A100 40GB PCIe"
    assert ncu_tensor.peak_lookup(None, None)("fp16") is None  # nothing known: nothing checked
    names = np.array(["k"] * 3, dtype=object)
    codes = np.zeros(3, dtype=np.int64)
    factors = [ncu_tensor.Factor(4096.0, "16×8×16, from the kernel name", "fp16")]
    tensor = np.array([300e12 * 1e-3, 320e12 * 1e-3, 0.0])
    out, notes = ncu_tensor.contradictions(tensor, np.array([1e-3, 1e-3, 1e-3]), np.array(["fp16"] * 3, dtype=object),
                                           names, codes, factors, peaks)
    assert out[0] == tensor[0] and np.isnan(out[1]) and out[2] == 0.0  # 320 TFLOP/s > 312 (+2 %)
    assert len(notes) == 1 and "above the fp16 matrix peak of its device, NVIDIA A100 40GB PCIe (312.0" in notes[0]


def test_the_architecture_from_program_output_fixes_the_default():
    w = read("details_12col_cc_in_program_output.csv")  # no CC column; 'GPU Device 0: "Volta" … capability 7.0'
    assert w.frame["flops"].tolist() == [1_000 * 512]


def test_sm80_build_tags_fix_the_default_for_later_gpus():
    w = read("details_12col_sm80_tags.csv")  # no CC, no device: kernel names built for sm_80 (or later)
    assert w.frame["flops"].tolist() == [1_000 * 4_096] * 2
    assert "the sm_80 default for fp16 (kernel names built for sm_80 or later)" in w.warnings[0]


@pytest.mark.parametrize("names, cc", [
    (["volta_sgemm_64x64_nt", "tc_gemm(const __half *, float *)"], None),  # sm_70+: Volta, Turing or later differ
    (["turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", "tc_gemm(const __half *, float *)"], None),
])
def test_a_lower_bound_before_sm80_fixes_no_default(names, cc):
    codes, factors = ncu_tensor.per_launch(np.array(names, dtype=object), cc, None)
    assert np.isnan(factors[codes[1]].flops)


@pytest.mark.parametrize("shape, precision, acc, flops", [
    ((8, 8, 4), "fp16", "fp32", 512), ((8, 8, 4), "fp16", "fp16", 1_024), ((16, 16, 4), None, None, 512),
    ((8, 8, 4), "fp64", None, 512),  # DMMA.884: one instruction
    ((16, 8, 8), "fp16", "fp16", 2_048), ((16, 8, 16), "bf16", None, 4_096), ((16, 8, 4), "tf32", None, 1_024),
    ((8, 8, 16), "int8", None, 2_048), ((16, 8, 32), "int8", None, 8_192), ((16, 8, 64), "int4", None, 16_384),
    ((16, 8, 32), "fp8", None, 8_192),
])
def test_flops_per_sass_instruction(shape, precision, acc, flops):
    assert ncu_tensor.flops_per_instruction(shape, precision, acc) == flops


@pytest.mark.parametrize("name, acc", [
    ("volta_h884gemm_128x128_ldg8_nn", "fp16"), ("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", "fp32"),
    ("cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nt_align2", "fp32"),
    ("cutlass::arch::Mma<cutlass::gemm::GemmShape<16, 16, 4>, 32, cutlass::half_t, cutlass::layout::RowMajor, "
     "cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t, cutlass::layout::RowMajor, "
     "cutlass::arch::OpMultiplyAdd>", "fp16"),
    ("my_kernel(float *)", None),
])
def test_accumulate_type_from_names(name, acc):
    assert ncu_tensor.name_accumulate(name) == acc


def test_wmma_shapes_take_the_architecture_default():
    name = "cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nt_align2"
    assert ncu_tensor.name_shape(name) is None  # m16n16k16 is an API shape, not a SASS instruction
    for cc, flops in (("7.0", 512), ("7.5", 2_048), ("8.6", 4_096)):
        codes, factors = ncu_tensor.per_launch(np.array([name], dtype=object), cc, None)
        assert factors[codes[0]].flops == flops
        assert "a wmma shape" in factors[codes[0]].basis
