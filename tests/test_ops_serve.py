"""Inference and vendor ops (roofcore.ingest.kineto_serve): each family against a hand computation on a small shape."""

import json
import math

import pytest

from roofcore import ops
from roofcore.ingest import kineto
from roofcore.ingest.kineto_ops import op_cost
from roofcore.ingest.kineto_serve import ATTENTION_UNKNOWN, MOE_UNKNOWN, UNIFORM, VARLEN_EQUAL

BF16, FP8, F32, I32, I64, U8 = "c10::BFloat16", "c10::Float8_e4m3fn", "float", "int", "long int", "unsigned char"


def test_scaled_mm_counts_its_scales_and_out_dtype():
    # A[64,128] fp8 @ B[128,32] fp8, row-wise scales [64,1] and [1,32] fp32, out_dtype 15 = bf16
    r = op_cost("aten::_scaled_mm", [[64, 128], [128, 32], [64, 1], [1, 32], [], [], [], []],
                [FP8, FP8, F32, F32, "", "", "Scalar", "Scalar"], ["", "", "", "", "", "", "15", "False"])
    assert r[0] == 2 * 64 * 32 * 128
    assert r[1] == 64 * 128 + 128 * 32 + 64 * 4 + 32 * 4 + 64 * 32 * 2
    assert r[2:4] == ("fp8", "matrix")


def test_scaled_mm_default_out_dtype_is_mat1s():
    r = op_cost("aten::_scaled_mm", [[64, 128], [128, 32], [], [], [], [], [], []],
                [FP8, FP8, F32, F32, "", "", "", "Scalar"], ["", "", "", "", "", "", "", "False"])
    assert r[1] == 64 * 128 + 128 * 32 + 4 + 4 + 64 * 32 * 1  # out_dtype not given: FP8 out, as PyTorch


def test_scaled_mm_fp4_unpacks_k():
    # A[16, 64/2] @ B[64/2, 8] as Float4_e2m1fn_x2 (two values per byte), MX block scales (1 byte per 32 values)
    fp4, e8 = "c10::Float4_e2m1fn_x2", "c10::Float8_e8m0fnu"
    r = op_cost("aten::_scaled_mm", [[16, 32], [32, 8], [16, 2], [2, 8], [], [], [], []],
                [fp4, fp4, e8, e8, "", "", "Scalar", "Scalar"], ["", "", "", "", "", "", "15", "False"])
    assert r[:3] == (2 * 16 * 8 * 64, 16 * 32 + 32 * 8 + 32 + 16 + 16 * 8 * 2, "fp4")


def test_cutlass_fp4_mm_unpacks_k():
    # out[16,32] bf16 = A[16, 64/2] @ B[32, 64/2]ᵀ, packed two FP4 values per byte; block scales [16,4], [32,4]
    r = op_cost("_C::cutlass_scaled_fp4_mm", [[16, 32], [16, 32], [32, 32], [16, 4], [32, 4], []],
                [BF16, U8, U8, U8, U8, F32], None)
    assert r[0] == 2 * 16 * 32 * 64 and r[2] == "fp4"
    assert r[1] == 16 * 32 + 32 * 32 + 16 * 4 + 32 * 4 + 4 + 16 * 32 * 2  # alpha: one fp32 read


def test_grouped_mm_2d_by_3d():
    # 24 routed rows [24,16] @ 4 experts' [4,16,8] (offs [4] int32): each row in one group
    r = op_cost("aten::_grouped_mm", [[24, 16], [4, 16, 8], [4], [], []], [BF16, BF16, I32, "", ""], None)
    assert r[0] == 2 * 24 * 16 * 8
    assert r[1] == (24 * 16 + 4 * 16 * 8 + 24 * 8) * 2 + 4 * 4


def test_fused_experts_uniform_routing():
    # T=8 tokens, H=16, I=4, E=4 experts, top-2, gated w1 [4, 8, 16]
    t, h, i, e, k = 8, 16, 4, 4, 2
    r = op_cost("vllm::inplace_fused_experts", [[t, h], [e, 2 * i, h], [e, h, i], [t, k], [t, k]],
                [BF16, BF16, BF16, F32, I32], None)
    assert r[0] == 2 * t * k * h * i * 3 + 2 * t * k * h
    active = e * (1 - (1 - k / e) ** t)
    want = t * h * 2 + active * 3 * h * i * 2 + 2 * t * k * i * 2 + t * h * 2 + t * k * (4 + 4)
    assert r[1] == pytest.approx(want) and r[4] == UNIFORM


def test_fused_add_rms_norm_reads_and_writes_both():
    r = op_cost("_C::fused_add_rms_norm", [[4, 8], [4, 8], [8], []], [BF16, BF16, BF16, "Scalar"], None)
    assert r[0] == 4 * 32 + 32  # rmsnorm's 4 per element + the add
    assert r[1] == (4 * 32 + 8) * 2  # input and residual read and written, γ read


def test_rms_norm_out_first_and_act_and_mul():
    r = op_cost("_C::rms_norm", [[4, 8], [4, 8], [8], []], [BF16, BF16, BF16, "Scalar"], None)
    assert r[:2] == (4 * 32, (2 * 32 + 8) * 2)
    r = op_cost("_C::silu_and_mul", [[4, 8], [4, 16]], [BF16, BF16], None)
    assert r[:2] == (2 * 32, (64 + 32) * 2)


def test_quant_and_cache_writes():
    r = op_cost("_C::static_scaled_fp8_quant", [[4, 8], [4, 8], []], [FP8, BF16, F32], None)
    assert r[:2] == (32, 32 * 2 + 32 + 4)
    r = op_cost("_C::dynamic_scaled_fp8_quant", [[4, 8], [4, 8], []], [FP8, BF16, F32], None)
    assert r[:2] == (64, 2 * 32 * 2 + 32 + 4)  # a max pass, then the scaling pass
    # 6 tokens × 1 head × 8 into an fp8 (uint8) cache: read k, v, slots; write 2·48 bytes
    r = op_cost("_C_cache_ops::reshape_and_cache_flash", [[6, 1, 8], [6, 1, 8], [10, 16, 1, 8], [10, 16, 1, 8], [6],
                                                          [], [], []],
                [BF16, BF16, U8, U8, I64, "", F32, F32], None)
    assert r[:2] == (96, 96 * 2 + 96 + 6 * 8)


def test_unified_attention_is_unknown_with_its_reason():
    r = op_cost("vllm::unified_attention_with_output", [[8, 2, 4], [8, 1, 4], [8, 1, 4], [8, 2, 4], [], [], []],
                [FP8, BF16, BF16, BF16, "", "", ""], ["", "", "", "", "", "", ""])
    assert math.isnan(r[0]) and math.isnan(r[1]) and r[4] == ATTENTION_UNKNOWN


def test_varlen_attention_exact_and_assumed():
    dims = [[64, 4, 16], [64, 2, 16], [64, 2, 16], [3], [3], [], [], [], [], []]
    types = [BF16, BF16, BF16, I32, I32, "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]
    # 2 sequences of 32 (= max): causal pairs per sequence 32·33/2
    r = op_cost("flash_attn::_flash_attn_varlen_forward", dims, types, ["", "", "", "", "", "32", "32", "0.", "", "True"])
    assert r[0] == 4 * 4 * 16 * 2 * (32 * 33 / 2) and r[4] is False
    assert r[1] == (2 * 64 * 4 * 16 + 2 * 64 * 2 * 16) * 2
    r = op_cost("flash_attn::_flash_attn_varlen_forward", dims, types, ["", "", "", "", "", "40", "40", "0.", "", "True"])
    assert r[4] == VARLEN_EQUAL


def _trace(tmp_path):
    """A vLLM-like trace: one moe_forward (hidden [8,16], router logits [8,4]) that allocates top-k ids [8,2]
    int32 and activations [24,4], and launches an FP4-weight GEMM kernel."""
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "vllm::moe_forward", "pid": 1, "tid": 1, "ts": 100, "dur": 50,
         "args": {"External id": 1, "Input Dims": [[8, 16], [8, 4], []], "Input type": [BF16, BF16, ""],
                  "Concrete Inputs": ["", "", ""]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 105, "dur": 1,
         "args": {"External id": 2, "Input Dims": [[], [], [], [], [], []],
                  "Input type": ["ScalarList", "Scalar", "", "", "", ""], "Concrete Inputs": ["[8, 2]", "3", "", "", "", ""]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 107, "dur": 1,
         "args": {"External id": 3, "Input Dims": [[], [], [], [], [], []],
                  "Input type": ["ScalarList", "Scalar", "", "", "", ""], "Concrete Inputs": ["[24, 4]", "0", "", "", "", ""]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 2,
         "args": {"correlation": 7, "External id": 1}},
        {"ph": "X", "cat": "kernel", "name": "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_swiGlu", "pid": 0, "tid": 7, "ts": 120,
         "dur": 10, "args": {"correlation": 7, "External id": 1, "device": 0}},
    ]
    p = tmp_path / "moe.json"
    p.write_text(json.dumps({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA B200"}]}))
    return p


def test_moe_forward_sized_from_its_allocations(tmp_path):
    p = _trace(tmp_path)
    w = kineto.parse(p.read_bytes(), str(p))
    row = w.frame.iloc[0]
    t, h, i, e, k = 8, 16, 4, 4, 2
    assert row["flops"] == 2 * t * k * h * i * 3 + 2 * t * k * h
    active = e * (1 - (1 - k / e) ** t)
    # hidden read as FP8 (the kernel name's activations), FP4 weights with a 1-byte scale per 32, bf16 output;
    # router logits and the top-k ids and weights read
    want = t * h * 1 + active * 3 * h * i * (0.5 + 1 / 32) + 2 * t * k * i * 1 + t * h * 2 + t * e * 2 + t * k * 6
    assert row["bytes_hbm"] == pytest.approx(want) and row["precision"] == "fp8"
    assert any("top-k (2) and intermediate size (4)" in x and "(fp4)" in x for x in w.warnings)


def test_transformer_engine_gemms():
    # TE 1.x: y[64,32] = x[64,16] · W[32,16]ᵀ as te_gemm_ts(A=W, transa, B=x, ..., D=y); FP8 stored as uint8
    dims = [[32, 16], [], [], [], [], [64, 16], [], [], [], [], [64, 32]] + [[]] * 11
    types = ["unsigned char", "", "", "", "Scalar", "unsigned char", "", "", "", "Scalar", BF16] + [""] * 11
    r = op_cost("tex_ts::te_gemm_ts", dims, types, [""] * 22)
    assert r[:4] == (2 * 64 * 32 * 16, 32 * 16 + 64 * 16 + 64 * 32 * 2, "fp8", "matrix")
    # TE 2.x _LayerNormLinear(inp [4,8,16], ln_weight [16], ln_bias [16], weight [32,16], ...), fp8 False
    r = op_cost("_LayerNormLinear", [[4, 8, 16], [16], [16], [32, 16]] + [[]] * 4, [BF16] * 4 + [""] * 4,
                [""] * 7 + ["False"])
    assert r[0] == 2 * 32 * 32 * 16 + ops.layernorm(32, 16, "bf16").flops  # the GEMM + the layer norm's convention
    assert r[1] == (32 * 16 + 16 * 32 + 32 * 32) * 2 + 2 * 16 * 2


def test_moe_forward_without_its_sizes_says_why(tmp_path):
    p = _trace(tmp_path)
    doc = json.loads(p.read_text())
    del doc["traceEvents"][1]  # no top-k ids allocated inside the op
    p.write_text(json.dumps(doc))
    w = kineto.parse(p.read_bytes(), str(p))
    assert math.isnan(w.frame["flops"].iloc[0]) and any(MOE_UNKNOWN in x for x in w.warnings)


def test_moe_forward_around_fused_experts_is_not_counted_twice(tmp_path):
    p = _trace(tmp_path)
    doc = json.loads(p.read_text())
    doc["traceEvents"].insert(1, {
        "ph": "X", "cat": "cpu_op", "name": "vllm::inplace_fused_experts", "pid": 1, "tid": 1, "ts": 104, "dur": 40,
        "args": {"External id": 9, "Input Dims": [[8, 16], [4, 8, 16], [4, 16, 4], [8, 2], [8, 2]],
                 "Input type": [BF16, BF16, BF16, F32, I32], "Concrete Inputs": [""] * 5}})
    # and a routing kernel launched by the MoE op itself, before its experts
    doc["traceEvents"] += [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 102, "dur": 1,
         "args": {"correlation": 8}},
        {"ph": "X", "cat": "kernel", "name": "topkGatingSoftmax", "pid": 0, "tid": 7, "ts": 115, "dur": 2,
         "args": {"correlation": 8, "device": 0}}]
    p.write_text(json.dumps(doc))
    f = kineto.parse(p.read_bytes(), str(p)).frame.set_index("name")
    # the GEMM's launch (ts 110) sits in the fused-experts op: it carries the experts' cost, once
    assert f.loc["bmm_MxE4m3_MxE2m1MxE4m3_Fp32_swiGlu", "group"] == "vllm::inplace_fused_experts"
    assert f.loc["bmm_MxE4m3_MxE2m1MxE4m3_Fp32_swiGlu", "flops"] == 2 * 8 * 2 * 16 * 4 * 3 + 2 * 8 * 2 * 16
    assert math.isnan(f.loc["topkGatingSoftmax", "flops"])  # not the MoE layer's cost a second time


def test_flash_attn_forward_with_a_sliding_window():
    # q, k [1, 6, 2, 4] bf16, causal, window (2, 0): query p sees keys max(0, p-2)..p: 1+2+3+3+3+3 = 15 pairs
    dims = [[1, 6, 2, 4], [1, 6, 2, 4], [1, 6, 2, 4]] + [[]] * 8
    types = [BF16] * 3 + ["Scalar"] * 8
    r = op_cost("flash_attn::_flash_attn_forward", dims, types, ["", "", "", "0.", "", "True", "2", "0"] + [""] * 3)
    assert r[0] == 4 * 1 * 2 * 4 * 15 and r[1] == 4 * 6 * 2 * 4 * 2
    r = op_cost("flash_attn::_flash_attn_forward", dims, types, ["", "", "", "0.", "", "True", "-1", "0"] + [""] * 3)
    assert r[0] == 4 * 1 * 2 * 4 * 21  # no window: causal 6·7/2


def test_transformer_engine_layernorm_mlp_by_shapes():
    # _LayerNormMLP(inp [2,4,16], ln_weight [16], ln_bias [16], fc1_weight [64,16] (gated: 2·32), fc1_bias [64],
    #               use_fc1_bias, fc2_weight [16,32], fc2_bias [16], ...) in bf16
    dims = [[2, 4, 16], [16], [16], [64, 16], [64], [], [16, 32], [16], []]
    types = [BF16, BF16, BF16, BF16, BF16, "Scalar", BF16, BF16, "Scalar"]
    r = op_cost("_LayerNormMLP", dims, types, [""] * 5 + ["True", "", "", "False"])
    rows = 8
    assert r[0] == ops.layernorm(rows, 16, "bf16").flops + 2 * rows * 16 * 64 + rows * 64 + 2 * rows * 32 * 16
    assert r[1] == (rows * 16 + 16 + 16 + 64 + 16 + 64 * 16 + 16 * 32 + 2 * rows * 64 + rows * 16) * 2
    assert r[2:4] == ("bf16", "matrix")


def test_unified_attention_hint_says_the_trace_lacks_it(tmp_path):
    from roofcore.ingest.kineto_hint import unknown_flops_hint

    p = _trace(tmp_path)
    doc = json.loads(p.read_text())
    doc["traceEvents"][0].update(name="vllm::unified_attention_with_output", args={
        "External id": 1, "Input Dims": [[8, 2, 4], [8, 1, 4], [8, 1, 4], [8, 2, 4], [], [], []],
        "Input type": [BF16] * 4 + [""] * 3, "Concrete Inputs": [""] * 7})
    p.write_text(json.dumps(doc))
    w = kineto.parse(p.read_bytes(), str(p))
    assert unknown_flops_hint(w).startswith("the FLOPs of vllm::unified_attention_with_output (1 launch, 10 µs) "
                                            "depend on what the trace does not record")
    assert any(ATTENTION_UNKNOWN in x for x in w.warnings)
    assert not any("recorded inputs do not fit" in x for x in w.warnings)  # it lacks lengths, not a fit
