"""torch.compile's Triton launches (roofcore.ingest.kineto_triton) against hand computations."""

import math

from roofcore.ingest.kineto_ops import OPS, op_cost
from roofcore.ingest.kineto_triton import UNCOUNTED, fused_ops

BF16, F32, I64 = "c10::BFloat16", "float", "long int"


def test_names_split_into_aten_ops():
    assert fused_ops("_unsafe_view_add_mean_mul_pow_rsqrt") == ["_unsafe_view", "add", "mean", "mul", "pow", "rsqrt"]
    assert fused_ops("add_bitwise_and_bitwise_not_ge") == ["add", "bitwise_and", "bitwise_not", "ge"]
    assert fused_ops("add_frobnicate") is None
    assert "triton_poi_fused_add_0" in OPS and "triton_mystery" in OPS  # the scan keeps their shapes


def test_reduction_elements_from_numels():
    # RMSNorm-like: x [4,64] bf16, w [64], out [4,64]; xnumel 4, r0_numel 64; add, mean, mul, pow, rsqrt
    r = op_cost("triton_red_fused_add_mean_mul_pow_rsqrt_0", [[4, 64], [64], [4, 64], [], []],
                [BF16, BF16, BF16, "Scalar", "Scalar"], ["", "", "", "4", "64"])
    assert r == (4 * 64 * 5, (256 + 64 + 256) * 2, "bf16", "vector", False)


def test_pointwise_views_count_zero_and_unknown_op_says_why():
    r = op_cost("triton_poi_fused__unsafe_view_mul_silu_2", [[2, 8], [16], []], [BF16, BF16, "Scalar"],
                ["", "", "16"])
    assert r[:2] == (16 * 2, 32 * 2)  # mul + silu per element; the view is free; each argument once
    r = op_cost("triton_poi_fused_frobnicate_0", [[16], [16], []], [F32, F32, "Scalar"], ["", "", "16"])
    assert math.isnan(r[0]) and r[1] == 128 and r[4] == UNCOUNTED


def test_template_gemm():
    # triton_tem_fused_mm_0(A[32,16], B[16,8], C[32,8]) bf16
    r = op_cost("triton_tem_fused_mm_0", [[32, 16], [16, 8], [32, 8]], [BF16, BF16, BF16], ["", "", ""])
    assert r[:4] == (2 * 32 * 8 * 16, (32 * 16 + 16 * 8 + 32 * 8) * 2, "bf16", "matrix")
    assert op_cost("triton_tem_fused_mm_1", [[32, 16], [8, 8]], [BF16, BF16], ["", ""]) is None


def test_integer_pointwise():
    r = op_cost("triton_poi_fused_add_ge_0", [[10], [10], []], ["int", I64, "Scalar"], ["", "", "10"])
    assert r[:3] == (20, 10 * 4 + 10 * 8, None)


def test_a_name_without_its_ops_is_unknown_not_zero():
    r = op_cost("triton_poi_0", [[16], [16], []], [F32, F32, "Scalar"], ["", "", "16"])
    assert math.isnan(r[0]) and r[1] == 128 and r[4] == UNCOUNTED
