"""Issue 26 point 1: on every PyTorch trace in ../shared/samples recorded with shapes, the kernels whose roofline is
known (FLOPs and bytes, or bytes for data movement) hold at least 95% of the kernel time, as `roofline analyze`'s
coverage line says it (Analysis.summary's coverage, on the catalog device the trace names); traces recorded
without shapes keep saying so. Each sample is read and analysed once for the module."""

from __future__ import annotations

import pytest
from roofhelpers import sample

from roofcore.analyze import analyze, coverage_text
from roofcore.catalog import load_catalogs
from roofcore.ingest import read
from roofcore.ingest.arch import catalog_ids

pytestmark = pytest.mark.samples

#: PyTorch traces recorded with shapes → the share of kernel time with a known roofline they must reach
SHAPED = {
    "pytorch_kineto_t4_amp_record_shapes.json": 0.95,  # 95.4%: the rest, 3 kernels launched before the window
    "pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz": 0.95,  # 99.7%
    # vLLM MoE serving on a B200 (H5): 95.7%; the rest is vLLM's unified attention (no KV lengths recorded)
    "pytorch_kineto_b200_cuda12.9_eager.json.gz": 0.95,
    "pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz": 0.95,  # 100%: Inductor's Triton kernels by name
}
#: traces without shapes (or without CPU ops): what their unknown-FLOPs warning must keep saying
SHAPELESS = {
    "pytorch_kineto_a100_alexnet_trace.json": "the trace has no input shapes",
    "pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz": "the trace has no CPU ops",
}
_CACHE: dict[str, tuple] = {}


def _analysed(name: str):
    """(workload, analysis summary on the trace's own catalog device), read once per test module."""
    if name not in _CACHE:
        w = read(sample(name))
        cat = load_catalogs(use_env=False)
        ids = catalog_ids(cat, w.device, w.meta)
        assert ids, f"{name}: the catalog lacks the device {w.device!r}"
        _CACHE[name] = (w, analyze(w, cat.get(ids[0])).summary(ids[0]))
    return _CACHE[name]


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_shaped_trace_has_its_kernel_time_costed(name):
    w, summary = _analysed(name)
    share = summary["coverage"]["time_share_known"]
    assert share >= SHAPED[name], (name, share, [x for x in w.warnings if "unknown FLOPs" in x])
    line = coverage_text(summary)  # the line `roofline analyze` prints
    assert not line or (line.startswith("Roofline known for") and "% of the measured time" in line)


@pytest.mark.parametrize("name", sorted(SHAPELESS))
def test_trace_without_shapes_keeps_saying_so(name):
    w = read(sample(name))
    kernels = w.frame[~w.frame["group"].isin(["memcpy", "memset"])]
    assert kernels["flops"].isna().all()
    assert any(SHAPELESS[name] in x for x in w.warnings)


def test_b200_communication_is_its_own_line():
    """The vLLM trace's symmetric-memory all-reduces (37 of [2557440] bf16 = 888 × 2880 after attention, 36 of
    [2727936] = 888 × 3072 after the MoE) and one NCCL all-gather of 8 × 25136 bf16, over 8 ranks: NCCL's bus
    bytes 2·7/8·S and 7/8·S on NVLink; 18% of the kernel time."""
    _, summary = _analysed("pytorch_kineto_b200_cuda12.9_eager.json.gz")
    c = summary["communication"]
    assert c["link"] == "nvlink" and c["rows"] == 74 and 0.17 < c["time_share"] < 0.19
    assert c["link_bytes"] == pytest.approx(2 * 7 / 8 * (37 * 2557440 + 36 * 2727936) * 2 + 7 / 8 * 8 * 25136 * 2)
    assert c["roof_share"] == pytest.approx(c["link_bytes"] / c["time_s"] / 900e9)


def test_guesses_and_unfit_inputs_are_said():
    """The assumptions behind the costs, and which formulas the recorded inputs did not fit, are warnings."""
    w, _ = _analysed("pytorch_kineto_t4_amp_record_shapes.json")
    assert not any("tensor lists" in x for x in w.warnings)  # every optimizer kernel's name says float
    lists = w.frame[w.frame["group"].astype(str).str.contains("_foreach_|_amp_foreach")]
    assert len(lists) == 24 and set(lists["precision"]) == {"fp32"} and lists["bytes_hbm"].notna().all()
    w, _ = _analysed("pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz")
    assert any(x.startswith("318 ops: batch norm with no 'training' flag recorded") for x in w.warnings)
    unfit = next(x for x in w.warnings if "unknown FLOPs and bytes" in x)
    assert "aten::max_pool2d_with_indices, aten::mean, aten::sum have a formula that the recorded inputs do not fit" \
        in unfit


def test_resnet50_gradients_match_its_published_multiply_adds():
    """PyTorch 1.9's weight gradients are sized from their parent op (kineto_ops_grad.parent_context). Each
    gradient costs the forward's FLOPs: torchvision lists ResNet-50 at 4.089 GFLOPS (multiply-adds) per 224×224
    image, of which the 2048→1000 classifier is 2.048 M, so its convolutions' weight gradients are 2 FLOPs ×
    (4.089 G − 2.048 M) per image, and the input gradients the same less the first convolution (no gradient for
    the image: 112·112·64·3·7·7 multiply-adds). The trace holds 6 iterations of a batch of 32."""
    w, _ = _analysed("pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz")
    flops = w.frame.groupby(w.frame["group"].astype(object))["flops"].sum()
    images = 6 * 32
    convs = 4.089e9 - 2048 * 1000
    assert flops["aten::cudnn_convolution_backward_weight"] == pytest.approx(images * 2 * convs, rel=1e-3)
    first = 112 * 112 * 64 * 3 * 7 * 7
    assert flops["aten::cudnn_convolution_backward_input"] == pytest.approx(images * 2 * (convs - first), rel=1e-3)
