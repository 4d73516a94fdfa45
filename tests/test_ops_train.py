"""Training ops of PyTorch traces (issue 26 points 2, 6, 7): each family's FLOPs and bytes on a small shape worked
out by hand here from the formulas in kineto_ops_train / kineto_ops_grad's docstrings (never from the code)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from roofcore import ingest, ops
from roofcore.ingest.kineto_ops import op_cost
from roofcore.ingest.kineto_ops_grad import BN_TRAINING_GUESS, parent_context, with_parent
from roofcore.ingest.kineto_ops_train import LIST_DTYPE_GUESS, name_dtype

F, H, B, L, S, TL = "float", "c10::Half", "c10::BFloat16", "long int", "Scalar", "TensorList"
NAN = float("nan")


def cost(name, dims, types, concrete=None):
    r = op_cost(name, dims, types, concrete)
    return None if r is None else (r[0], r[1], r[2], r[3], r[4])


# (op, Input Dims, Input type, Concrete Inputs, (FLOPs, bytes, precision, unit, assumed) or None)
CASES = [
    # the optimizer over lists [2,3] and [4] (n = 10 elements, fp32 assumed: 4 B)
    ("aten::_foreach_addcdiv_", [[[2, 3], [4]]] * 3 + [[]], [TL] * 3 + ["ScalarList"], None,
     (3 * 10, (3 + 1) * 10 * 4, "fp32", "vector", False)),
    ("aten::_foreach_lerp_", [[[2, 3], [4]]] * 2 + [[]], [TL, TL, S], None,
     (30, 3 * 10 * 4, "fp32", "vector", False)),
    ("aten::_foreach_sqrt", [[[2, 3], [4]]], [TL], None, (10, 2 * 10 * 4, "fp32", "vector", False)),
    ("aten::_foreach_add_", [[[], [], []], [], []], [TL, F, S], None,  # Adam's step counters: 0-d tensors
     (3, 2 * 3 * 4, "fp32", "vector", False)),
    ("aten::_foreach_norm", [[[5], [3]], []], [TL, S], None, (16, 8 * 4 + 2 * 4, "fp32", "vector", False)),
    ("aten::_foreach_zero_", [[[2, 3], [4]]], [TL], None, (0, 10 * 4, "fp32", "vector", False)),
    ("aten::_foreach_add_", [[[2, 3]], [[3, 3]]], [TL, TL], None, None),  # lists of other sizes
    # fused AdamW, weight decay 0.01: 15 FLOPs per element; p, g, m, v read, p, m, v written
    ("aten::_fused_adamw_", [[[10]], [[10]], [[10]], [[10]], [], [[]], [], [], [], [], [], [], []],
     [TL] * 4 + [TL, TL] + [S] * 7, ["", "", "", "", "", "", "0.001", "0.9", "0.999", "0.01", "1e-08", "False", "False"],
     (15 * 10, 7 * 10 * 4, "fp32", "vector", False)),
    ("aten::_fused_sgd_", [[[10]], [[10]], [[10]], [], [], []], [TL] * 3 + [S] * 3, ["", "", "", "0", "0.9", "0.1"],
     (5 * 10, 5 * 10 * 4, "fp32", "vector", False)),
    # AMP: unscale reads and writes the grads (+ found_inf, inv_scale); update touches three scalars
    ("aten::_amp_foreach_non_finite_check_and_unscale_", [[[8]], [], []], [TL, F, F], None,
     (8, 2 * 8 * 4, "fp32", "vector", False)),
    ("aten::_amp_update_scale_", [[], [], [], [], [], []], [F, "int", F, S, S, S], ["", "", "", "2.", "0.5", "2000"],
     (1, 4 + 4 + 4 + 4 + 4, "fp32", "vector", False)),
    # reductions: input read, output written
    ("aten::sum", [[4, 6], [], [], []], [H, "ScalarList", S, ""], ["", "[0]", "True", ""],
     (24, 24 * 2 + 6 * 2, "fp16", "vector", False)),
    ("aten::sum", [[4, 6], []], [H, ""], ["", ""], (24, 24 * 2 + 2, "fp16", "vector", False)),  # sum(self, dtype)
    ("aten::sum", [[32, 1000], [], [], []], [F, "GenericList", "Bool", ""], None, None),  # PyTorch 1.9: dims unknown
    ("aten::mean", [[4, 6], [], [], []], [H, "ScalarList", S, S], ["", "[-1]", "False", "6"],  # dtype=float
     (24, 24 * 2 + 4 * 4, "fp16", "vector", False)),
    ("aten::max", [[4, 6], [], []], [F, S, S], ["", "1", "False"], (24, 96 + 4 * 4 + 4 * 8, "fp32", "vector", False)),
    ("aten::max", [[4, 6]], [F], [""], (24, 96 + 4, "fp32", "vector", False)),
    ("aten::max", [[4, 6], [4, 6]], [F, F], None, (24, 3 * 96, "fp32", "vector", False)),  # elementwise
    ("aten::linalg_vector_norm", [[10], [], [], [], []], [F, S, "ScalarList", S, ""], ["", "2", "[0]", "False", ""],
     (20, 40 + 4, "fp32", "vector", False)),
    # softmax backward: grad output and output read, grad input written, 4 FLOPs per element
    ("aten::_log_softmax_backward_data", [[8, 10], [8, 10], [], []], [H, H, S, S], ["", "", "1", "5"],
     (320, 3 * 80 * 2, "fp16", "vector", False)),
    ("aten::_softmax_backward_data", [[8, 10], [8, 10], [], [8, 10]], [F, F, "Int", F], None,  # PyTorch 1.9
     (320, 3 * 80 * 4, "fp32", "vector", False)),
    # NLL loss (the T4 sample's shape): one picked element per row, int64 targets, mean → one output
    ("aten::nll_loss_forward", [[512, 10], [512], [], [], []], [F, L, "", S, S], ["", "", "", "1", "-100"],
     (512, 512 * 4 + 512 * 8 + 4 + 4, "fp32", "vector", False)),
    ("aten::nll_loss_forward", [[512, 10], [512], [], [], []], [F, L, "", S, S], ["", "", "", "0", "-100"],
     (512, 512 * 4 + 512 * 8 + 512 * 4 + 4, "fp32", "vector", False)),
    ("aten::nll_loss_backward", [[], [512, 10], [512], [], [], [], []], [F, F, L, "", S, S, F],
     ["", "", "", "", "1", "-100", ""], (512, 4 + 512 * 10 * 4 + 512 * 8 + 4, "fp32", "vector", False)),
    ("aten::nll_loss_forward", [[512, 10], [256], [], [], []], [F, L, "", S, S], None, None),  # rows disagree
    # gathers and scatters
    ("aten::index_select", [[100, 8], [], [5]], [H, S, L], ["", "0", ""], (0, 2 * 40 * 2 + 5 * 8, "fp16", "vector",
                                                                          False)),
    ("aten::gather", [[10, 4], [], [10, 2], []], [F, S, L, S], ["", "1", "", "False"],
     (0, 2 * 20 * 4 + 20 * 8, "fp32", "vector", False)),
    ("aten::scatter_add_", [[10, 4], [], [3, 4], [3, 4]], [F, S, L, F], ["", "0", "", ""],
     (12, 12 * 8 + 12 * 4 + 2 * 12 * 4, "fp32", "vector", False)),
    ("aten::index_add_", [[10, 4], [], [3], [3, 4], []], [F, S, L, F, S], ["", "0", "", "", "1"],
     (12, 3 * 8 + 12 * 4 + 2 * 12 * 4, "fp32", "vector", False)),
    ("aten::cat", [[[2, 3], [2, 3]], []], [TL, S], ["", "0"], (0, NAN, None, "vector", False)),  # sized per kernel
    # RoPE (the B200 sample's vLLM call): 888 tokens, 8 query + 1 key heads of 64, all 64 rotated
    ("_C::rotary_embedding", [[888], [888, 512], [888, 64], [], [131072, 64], []], [L, B, B, S, B, S],
     ["", "", "", "64", "", "True"],
     (3 * 888 * 9 * 64, 2 * 888 * 9 * 64 * 2 + 888 * 64 * 2 + 888 * 8, "bf16", "vector", False)),
    # dropout, masked fill, MSE loss over [4, 8] (n = 32)
    ("aten::native_dropout", [[4, 8], [], []], [H, S, S], ["", "0.1", "True"], (64, 2 * 64 + 32, "fp16", "vector",
                                                                              False)),
    ("aten::native_dropout_backward", [[4, 8], [4, 8], []], [H, "bool", S], ["", "", "1.11"],
     (64, 2 * 64 + 32, "fp16", "vector", False)),
    ("aten::masked_fill_", [[4, 8], [4, 8], []], [F, "bool", S], ["", "", "0"], (0, 2 * 128 + 32, "fp32", "vector",
                                                                              False)),
    ("aten::mse_loss", [[4, 8], [4, 8], []], [F, F, S], ["", "", "1"], (96, 128 + 128 + 4, "fp32", "vector", False)),
    ("aten::mse_loss_backward", [[], [4, 8], [4, 8], []], [F, F, F, S], ["", "", "", "1"],
     (96, 4 + 3 * 128, "fp32", "vector", False)),
    # batch norm [2, 4, 3, 3] (n = 72, C = 4), fp32
    ("aten::native_batch_norm", [[2, 4, 3, 3], [4], [4], [4], [4], [], [], []], [F] * 5 + [S] * 3,
     ["", "", "", "", "", "True", "0.1", "1e-05"],
     (7 * 72, 2 * 72 * 4 + 4 * 16 + 2 * 16 + 2 * 16, "fp32", "vector", False)),
    ("aten::native_batch_norm", [[2, 4, 3, 3], [4], [4], [4], [4], [], [], []], [F] * 5 + [S] * 3,
     ["", "", "", "", "", "False", "0.1", "1e-05"], (4 * 72, 2 * 72 * 4 + 4 * 16, "fp32", "vector", False)),
    ("aten::cudnn_batch_norm", [[2, 4, 3, 3], [4], [4], [4], [4], [], [], []], [F] * 5 + ["Bool", "Double", "Double"],
     None, (7 * 72, 2 * 72 * 4 + 4 * 16 + 2 * 16 + 2 * 16, "fp32", "vector", BN_TRAINING_GUESS)),  # PyTorch 1.9
    ("aten::cudnn_batch_norm_backward", [[2, 4, 3, 3], [2, 4, 3, 3], [4], [4], [4], [4], [4], [], [0]],
     [F] * 7 + ["Double", "unsigned char"], None, (11 * 72, 3 * 72 * 4 + 5 * 16 + 2 * 16, "fp32", "vector", False)),
    # layer / RMS norm backward: g, x [4, 8] fp32; grad input pass (3n) + grad γ, β pass (2n)
    ("aten::native_layer_norm_backward", [[4, 8], [4, 8], [], [4, 1], [4, 1], [8], [8], []], [F, F, "ScalarList"]
     + [F] * 4 + ["ScalarList"], ["", "", "[8]", "", "", "", "", "[True, True, True]"],
     (15 * 32, 5 * 32 * 4 + 2 * 8 * 4 + 8 * 4 + 2 * 4 * 4, "fp32", "vector", False)),
    ("aten::native_layer_norm_backward", [[4, 8], [4, 8], [], [4, 1], [4, 1], [8], [8], []], [F, F, "ScalarList"]
     + [F] * 4 + ["ScalarList"], ["", "", "[8]", "", "", "", "", "[True, False, False]"],
     (10 * 32, 3 * 32 * 4 + 8 * 4 + 2 * 4 * 4, "fp32", "vector", False)),
    ("aten::_fused_rms_norm_backward", [[4, 8], [4, 8], [], [4, 1], [8], []], [F, F, "ScalarList", F, F, "ScalarList"],
     ["", "", "[8]", "", "", "[True, True]"], (10 * 32, 5 * 32 * 4 + 8 * 4 + 8 * 4 + 4 * 4, "fp32", "vector", False)),
    # flash attention backward: 2.5 × the forward's 4·B·H·d·q·s; Q, dO, O read, dQ written; K, V read, dK, dV
    ("aten::_scaled_dot_product_flash_attention_backward", [[1, 2, 16, 8]] * 5 + [[1, 2, 16]] + [[]] * 9,
     [B] * 5 + [F] + [S] * 9, ["", "", "", "", "", "", "", "", "16", "16", "0.", "False", "", "", ""],
     (2.5 * 4 * 2 * 8 * 16 * 16, 4 * 256 * 2 + 4 * 256 * 2 + 32 * 4, "bf16", "matrix", False)),
    ("aten::_scaled_dot_product_flash_attention_backward", [[1, 2, 16, 8]] * 5 + [[1, 2, 16]], [B] * 5 + [F], None,
     None),  # is_causal not recorded
    # xformers-style layout [B, S, H, D], custom_mask_type 1 (causal): pairs 16·16 − 16·15/2 = 136
    ("aten::_efficient_attention_backward", [[1, 16, 2, 8]] * 4 + [[]] + [[1, 16, 2, 8]] + [[]] * 4 + [[1, 2, 16]]
     + [[]] * 9, [B] * 4 + [""] + [B] + [""] * 4 + [F] + [S] * 9,
     [""] * 14 + ["1"] + [""] * 5, (2.5 * 4 * 2 * 8 * 136, 4 * 256 * 2 + 4 * 256 * 2 + 32 * 4, "bf16", "matrix", False)),
    # pooling: 3×3 stride 2 pad 1 on 8×8 → 4×4
    ("aten::max_pool2d_with_indices", [[1, 2, 8, 8], [], [], [], [], []], [F] + ["ScalarList"] * 4 + [S],
     ["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"], (32 * 9, 128 * 4 + 32 * 4 + 32 * 8, "fp32", "vector",
                                                              False)),
    ("aten::max_pool2d_with_indices", [[32, 64, 112, 112], [], [], [], [], []], [F] + ["GenericList"] * 4 + ["Bool"],
     None, None),  # PyTorch 1.9: no geometry
    ("aten::max_pool2d_with_indices_backward", [[1, 2, 4, 4], [1, 2, 8, 8], [], [], [], [], [], [1, 2, 4, 4]],
     [F, F] + ["GenericList"] * 4 + ["Bool", L], None, (32, 32 * 4 + 128 * 4 + 32 * 8, "fp32", "vector", False)),
    ("aten::_adaptive_avg_pool2d", [[2, 3, 7, 7], []], [F, "ScalarList"], ["", "[1, 1]"],
     (294, 294 * 4 + 6 * 4, "fp32", "vector", False)),
    ("aten::avg_pool2d_backward", [[1, 2, 4, 4], [1, 2, 8, 8], [], [], [], [], [], []], [F, F] + ["ScalarList"] * 3
     + [S] * 3, ["", "", "[2, 2]", "[2, 2]", "[0, 0]", "False", "True", ""], (32 * 4, 32 * 4 + 128 * 4, "fp32",
                                                                             "vector", False)),
    # embedding backward: the whole grad weight written
    ("aten::embedding_dense_backward", [[4, 5, 16], [4, 5], [], [], []], [H, L, S, S, S], ["", "", "100", "-1", "False"],
     (320, 320 * 2 + 20 * 8 + 100 * 16 * 2, "fp16", "vector", False)),
    # PyTorch 1.9's cudnn_convolution_backward: both gradients, each the forward's 2·numel(grad out)·C·R·S
    ("aten::cudnn_convolution_backward", [[2, 4, 8, 8], [2, 8, 6, 6], [8, 4, 3, 3]] + [[]] * 8,
     [F] * 3 + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool", "GenericList"], None,
     (2 * 2 * 576 * 36, (576 + 512 + 288 + 512 + 288) * 4, "fp32", "matrix", False)),
]


@pytest.mark.parametrize("name, dims, types, conc, expected", CASES, ids=[c[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_training_op_formulas(name, dims, types, conc, expected):
    got = cost(name, dims, types, conc)
    if expected is None:
        assert got is None
    else:
        assert got[0] == pytest.approx(expected[0], rel=1e-12)
        assert got[1] == pytest.approx(expected[1], rel=1e-12, nan_ok=True)
        assert got[2:] == expected[2:]


def test_grad_weight_size_comes_from_the_parent_op():
    """PyTorch 1.9: cudnn_convolution_backward_weight records its weight_size as an untyped list without a value;
    the enclosing cudnn_convolution_backward records the weight [8, 4, 3, 3]: FLOPs 2·numel(grad out)·4·3·3."""
    gl = "GenericList"
    parent = ("aten::cudnn_convolution_backward", [[2, 4, 8, 8], [2, 8, 6, 6], [8, 4, 3, 3]] + [[]] * 8,
              [F] * 3 + [gl] * 3 + ["Int", "Bool", "Bool", "Bool", gl], None, ())
    child = ("aten::cudnn_convolution_backward_weight", [[], [2, 8, 6, 6], [2, 4, 8, 8]] + [[]] * 7,
             [gl, F, F, gl, gl, gl, "Int", "Bool", "Bool", "Bool"], None, ())
    assert op_cost(*child[:4]) is None  # alone: the filter size is unknown
    sigs = [parent, child]
    # (pid, tid, ts, dur, name, external id, signature, has shapes): the child inside the parent, and one elsewhere
    rows = [(1, 1, 100.0, 50.0, parent[0], 1, 0, True), (1, 1, 110.0, 10.0, child[0], 2, 1, True),
            (1, 2, 110.0, 10.0, child[0], 3, 1, True)]
    res = parent_context(rows, sigs, np.array([0, 1, 1]))
    assert res[0] == 0 and res[2] == 1 and res[1] == 2  # the other thread's op has no parent: unchanged
    filled = sigs[2]
    assert filled[3][0] == "[8, 4, 3, 3]" and filled == with_parent(child, parent)
    flops, nbytes, prec, unit, assumed = op_cost(*filled[:4])
    assert flops == 2 * (2 * 8 * 36) * 4 * 9 and prec == "fp32" and unit == "matrix" and assumed is False
    assert nbytes == (576 + 512 + 288) * 4  # grad out, input read; grad weight written


def test_parent_sizes_never_fail_on_odd_signatures():
    parent = ("aten::cudnn_convolution_backward", [[2, 4, 8, 8], [2, 8, 6, 6], [8, 4, 3, 3]], [F] * 3, None)
    for dims, conc in (([], None), ([[]], [None]), ([{}], "x"), ([[], [2]], [""])):
        child = ("aten::cudnn_convolution_backward_weight", dims, ["GenericList"] * len(dims), conc)
        assert with_parent(child, parent) is None or with_parent(child, parent)[3][0] == "[8, 4, 3, 3]"
    assert with_parent(("aten::cudnn_convolution_backward_weight", [[]], [""], None), ("aten::other", [[1]], [F],
                                                                                       None)) is None


def test_grad_input_size_from_the_parent_is_no_longer_assumed():
    gl = "GenericList"
    parent = ("aten::cudnn_convolution_backward", [[2, 4, 8, 8], [2, 8, 6, 6], [8, 4, 3, 3]], [F] * 3, None)
    child = ("aten::cudnn_convolution_backward_input", [[], [2, 8, 6, 6], [8, 4, 3, 3]], [gl, F, F], None)
    assert op_cost(*child)[4] is True  # its size guessed from the grad output
    flops, nbytes, _, _, assumed = op_cost(*with_parent(child, parent))
    assert assumed is False and nbytes == (576 + 288 + 512) * 4 and flops == 2 * 576 * 4 * 9


def test_layernorm_convention_and_the_kernels_own_traffic():
    """Point 6: 5 FLOPs per element + the affine 2; bytes one read of x, one write of y, γ and β. PyTorch's
    vectorized_layer_norm_kernel loads each row once into registers, loads γ and β, stores y and the row's mean and
    rstd (fp32): its own traffic is within 5% of the model (the statistics, 8 B a row, are all it adds)."""
    rows, hidden = 4096, 1024
    k = ops.layernorm(rows, hidden, "bf16")
    assert k.flops == 7 * rows * hidden and k.bytes["hbm"] == (2 * rows * hidden + 2 * hidden) * 2
    bare = ops.layernorm(rows, hidden, "bf16", affine=False)
    assert bare.flops == 5 * rows * hidden and bare.bytes["hbm"] == 2 * rows * hidden * 2
    kernel = rows * hidden * 2 + 2 * hidden * 2 + rows * hidden * 2 + 2 * rows * 4  # x, γ β, y, mean rstd
    assert abs(k.bytes["hbm"] - kernel) / kernel < 0.05
    for small in (64, 256):  # the statistics weigh more for narrow rows: still within 5% from 64 wide in fp32
        m = ops.layernorm(rows, small, "fp32")
        assert abs(m.bytes["hbm"] - (m.bytes["hbm"] + 8 * rows)) / (m.bytes["hbm"] + 8 * rows) < 0.05
    no_w = op_cost("aten::native_layer_norm", [[4, 64], [], [], [], []], [B, "ScalarList", "", "", S],
                   ["", "[64]", "", "", "1e-05"])
    assert no_w[:2] == (5 * 256, 2 * 256 * 2)  # elementwise_affine=False: no γ, β


def _trace(*events):
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8,
                                                     "computeMinor": 0}], "traceEvents": list(events)}
    return ingest.read(json.dumps(doc).encode(), name="train.json")


def _op(name, ts, dur, dims, types, conc=None, ext=1):
    args = {"External id": ext, "Input Dims": dims, "Input type": types, "Concrete Inputs": conc or [""] * len(dims)}
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def _launch(ts, corr, kernel):
    rt = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": 2,
          "args": {"correlation": corr}}
    k = {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 5, "dur": 10,
         "args": {"correlation": corr, "device": 0, "stream": 7}}
    return [rt, k]


def test_a_trace_reads_tensor_lists_and_parent_sizes_end_to_end():
    """Through the trace reader: a _foreach op's Input Dims (a list of shapes per argument) reach its formula, and a
    PyTorch 1.9 grad-weight op gets its size from the enclosing op, as op_cost alone cannot."""
    gl = "GenericList"
    events = [
        _op("aten::_foreach_sqrt", 0, 20, [[[2, 3], [4]]], [TL], ext=1), *_launch(5, 101, "multi_tensor_apply_kernel"),
        _op("aten::cudnn_convolution_backward", 100, 50, [[2, 4, 8, 8], [2, 8, 6, 6], [8, 4, 3, 3]],
            [F, F, F], ext=2),
        _op("aten::cudnn_convolution_backward_weight", 110, 20, [[], [2, 8, 6, 6], [2, 4, 8, 8]], [gl, F, F], ext=3),
        *_launch(115, 102, "wgrad_alg0_engine"),
    ]
    f = _trace(*events).frame.set_index("name")
    assert f.loc["multi_tensor_apply_kernel", "flops"] == 10
    assert f.loc["multi_tensor_apply_kernel", "bytes_hbm"] == 2 * 10 * 4
    assert f.loc["wgrad_alg0_engine", "flops"] == 2 * (2 * 8 * 36) * 4 * 9
    assert f.loc["wgrad_alg0_engine", "bytes_hbm"] == (576 + 512 + 288) * 4


MTA = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"


@pytest.mark.parametrize("kernel, expected", [
    (MTA + "TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<float, 2, 1, 1>, "
     "at::native::Sqrt<float> >(x)", (4.0, "fp32")),  # the T4 sample's _foreach_sqrt
    (MTA + "TensorListScalarListMetadata<float, 3>, at::native::(anonymous namespace)::PointwiseOpScalarListFunctor"
     "<c10::Half, 3, 3, 0>, std::divides<float> >(x)", (2.0, "fp16")),  # the scalar list's float is not the data's
    (MTA + "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<"
     "c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double)", (2.0, "bf16")),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
     "namespace)::OpaqueType<2>, unsigned int, 2, 128, 1>(x)", (2.0, None)),
    ("at::native::amp_update_scale_cuda_kernel(float*, int*, float const*, double, double, int)", None),
])
def test_tensor_list_dtype_from_the_kernel_name(kernel, expected):
    assert name_dtype(kernel) == expected


def test_tensor_list_kernels_are_sized_by_their_names_dtype():
    """The op records lists without a dtype; each kernel's name says it: fp16 halves the 4 B assumption, a cat's
    bytes come from its kernel alone, and a kernel whose name says nothing keeps 4 B, said in a warning."""
    half = MTA + "TensorListMetadata<2>, at::native::(anonymous namespace)::UnaryOpFunctor<c10::Half, 2, 1, 1>, x>(x)"
    events = [
        _op("aten::_foreach_sqrt", 0, 20, [[[2, 3], [4]]], [TL], ext=1), *_launch(5, 101, half),
        _op("aten::cat", 30, 20, [[[2, 3], [2, 3]], []], [TL, S], ["", "0"], ext=2),
        *_launch(35, 102, "void at::native::CatArrayBatchedCopy<c10::BFloat16, unsigned int, 2, 128, 1>(x)"),
        _op("aten::_foreach_mul_", 60, 20, [[[5]], []], [TL, S], ext=3), *_launch(65, 103, "my_foreach_kernel"),
        _op("aten::cat", 90, 20, [[[3]], []], [TL, S], ["", "0"], ext=4), *_launch(95, 104, "my_cat_kernel"),
    ]
    w = _trace(*events)
    f = w.frame.set_index("row")
    assert f.loc["101", "bytes_hbm"] == 2 * 10 * 2 and f.loc["101", "precision"] == "fp16"
    assert f.loc["102", "flops"] == 0 and f.loc["102", "bytes_hbm"] == 2 * 12 * 2 and f.loc["102", "precision"] == "bf16"
    assert f.loc["103", "bytes_hbm"] == 2 * 5 * 4 and f.loc["103", "precision"] == "fp32"
    assert np.isnan(f.loc["104", "bytes_hbm"])  # a cat whose kernel names no type: unknown
    assert [x for x in w.warnings if "tensor lists" in x] == [f"1 op: {LIST_DTYPE_GUESS}"]
