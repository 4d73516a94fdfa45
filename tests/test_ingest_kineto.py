"""PyTorch profiler traces (Kineto JSON, docs/formats.md): golden FLOPs/bytes from recorded shapes, gzip, CUPTI
counters, the real A100 sample, op linking, every pitfall, exact messages, and fuzzing."""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roofhelpers import mutated, sample

from roofcore import InputError, LimitError, ingest
from roofcore.cli import main
from roofcore.ingest import compression, kineto

DATA = Path(__file__).parent / "data" / "kineto"
SHAPES = DATA / "shapes.pt.trace.json"
SAMPLE = Path(__file__).parent.parent.parent / "shared" / "samples" / "pytorch_kineto_a100_alexnet_trace.json"
LONG = os.environ.get("ROOFCORE_FUZZ_LONG") == "1"
HINT = "Hint: export the trace again with prof.export_chrome_trace(path)."
NAN = float("nan")


def read(doc: object, name: str = "t.json") -> ingest.Workload:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return ingest.read(data, name=name)


def message(doc: object, name: str = "t.json") -> str:
    with pytest.raises(InputError) as e:
        read(doc, name)
    return str(e.value)


def k(name, ts, dur, corr, ext=None, cat="kernel", device=0, **args):
    a = {"External id": corr if ext is None else ext, "device": device, "stream": 7, "correlation": corr, **args}
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur, "args": a}


def rt(ts, corr, tid=1, name="cudaLaunchKernel", cat="cuda_runtime"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": 2,
            "args": {"External id": corr, "cbid": 211, "correlation": corr}}


def op(name, ts, dur, dims=None, types=None, conc=None, tid=1, ext=1, cat="cpu_op"):
    a: dict = {"External id": ext}
    if dims is not None:
        a.update({"Input Dims": dims, "Input type": types, "Concrete Inputs": conc or [""] * len(dims)})
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": a}


def trace(*events, **top):
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8,
                                                      "computeMinor": 0}], **top, "traceEvents": list(events)}


def columns(w, *cols):
    return [tuple(r) for r in w.frame[list(cols)].itertuples(index=False)]


# --------------------------------------------------------------------------------------------- golden fixture

#: (kernel name prefix, FLOPs, bytes_hbm, bytes_pcie, µs, precision, unit, group, row) — worked out by hand:
#: addmm 2·64·4096·1024 FLOPs, (4096 + 64·1024 + 1024·4096 + 64·4096)·4 B, split 30:10 µs between its kernels;
#: mm bf16 2·128·512·256, (128·256 + 256·512 + 128·512)·2; cudnn_convolution stride 2 pad 1 → 16×16 output:
#: 2·8·16·256·3·9 FLOPs, (8·3·32·32 + 16·3·9 + 8·16·16·16)·4 B, split 3:9; add_ (1,16,1,1) broadcast: 32,768 FLOPs,
#: (32768 + 16 + 32768)·4 B; clamp_min (relu's launching op) 32,768, 2·32768·4; fp16 add 3·32768·2 (linked by
#: External id, its launch event missing); _softmax of 64×1000 fp32: 5·64,000 FLOPs, 2·64,000·4 B (ops.softmax);
#: backward-thread mm 2·64³, 3·64²·4; memcpy HtoD 4096 B (also PCIe),
#: DtoD 2·8192, memset 512.
GOLDEN = [
    ("ampere_sgemm_64x64_nn", 402_653_184, 13_578_240, NAN, 30.0, "fp32", "matrix", "aten::addmm", "1001"),
    ("void splitKreduce_kernel", 134_217_728, 4_526_080, NAN, 10.0, "fp32", "matrix", "aten::addmm", "1002"),
    ("sm80_xmma_gemm_bf16bf16", 33_554_432, 458_752, NAN, 8.0, "bf16", "matrix", "aten::mm", "1003"),
    ("void cudnn::ops::nchwToNhwcKernel", 442_368, 57_776, NAN, 3.0, "fp32", "matrix", "aten::cudnn_convolution",
     "1004"),
    ("sm80_xmma_fprop_implicit_gemm_tf32", 1_327_104, 173_328, NAN, 9.0, "tf32", "matrix", "aten::cudnn_convolution",
     "1005"),
    ("void at::native::elementwise_kernel<128, 2", 32_768, 262_208, NAN, 2.5, "fp32", "vector", "aten::add_", "1006"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp", 32_768,
     262_144, NAN, 1.5, "fp32", "vector", "aten::clamp_min", "1007"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>", 32_768, 196_608,
     NAN, 1.25, "fp16", "vector", "aten::add", "1008"),
    ("void (anonymous namespace)::softmax_warp_forward", 320_000, 512_000, NAN, 2.0, "fp32", "vector",
     "aten::_softmax", "1009"),
    ("ampere_sgemm_32x32_sliced1x4_nn", 524_288, 49_152, NAN, 4.0, "fp32", "matrix", "aten::mm", "1014"),
    ("orphan_kernel(float*)", NAN, NAN, NAN, 1.0, None, None, None, "1010"),
    ("Memcpy HtoD (Pinned -> Device)", 0, 4096, 4096, 2.0, None, None, "memcpy", "1011"),
    ("Memcpy DtoD (Device -> Device)", 0, 16_384, NAN, 1.0, None, None, "memcpy", "1012"),
    ("Memset (Device)", 0, 512, NAN, 0.5, None, None, "memset", "1013"),
]
SHAPES_WARNING = ("1 of 14 kernels has unknown FLOPs and bytes (left empty, not zero): the launching op is not "
                  "found, or has no shapes or no FLOP formula here (launching op not found ×1).")


def same(a, b) -> bool:
    return (isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b)) or a == b


def assert_golden(w) -> None:
    f = w.frame
    assert len(f) == len(GOLDEN)
    for i, (name, flops, hbm, pcie, us, prec, unit, group, row) in enumerate(GOLDEN):
        got = f.iloc[i]
        assert got["name"].startswith(name), (i, got["name"])
        assert same(float(got["flops"]), float(flops)), (i, got["flops"])
        assert same(float(got["bytes_hbm"]), float(hbm)), (i, got["bytes_hbm"])
        assert same(float(got["bytes_pcie"]), float(pcie)), (i, got["bytes_pcie"])
        assert got["time_s"] == pytest.approx(us * 1e-6, rel=1e-15)
        assert (None if got["precision"] is None or got["precision"] != got["precision"] else got["precision"]) == prec
        assert (None if got["unit"] is None or got["unit"] != got["unit"] else got["unit"]) == unit
        assert got["group"] == group and got["row"] == row and got["count"] == 1


def test_shapes_trace_golden():
    w = ingest.read(SHAPES)
    assert w.formats == ("pytorch-trace",)
    assert_golden(w)
    assert w.device == "NVIDIA H100 80GB HBM3"
    assert w.meta == {"compute_capability": "9.0", "arch": "sm_90", "sm_count": "132",
                      "profiler": "PyTorch profiler (Kineto trace)", "record_shapes": "true"}
    assert w.warnings == (SHAPES_WARNING,)
    assert w.skipped == ()
    # an op's kernels share its FLOPs and bytes: the sums are the op's numbers
    f = w.frame
    assert f.loc[f["group"] == "aten::addmm", "flops"].sum() == 2 * 64 * 4096 * 1024
    assert f.loc[f["group"] == "aten::cudnn_convolution", "bytes_hbm"].sum() == 231_104


def test_gzip_copy_reads_the_same():
    gz = (DATA / "shapes.pt.trace.json.gz").read_bytes()
    assert gz[:2] == b"\x1f\x8b"
    w = ingest.read(gz, name="shapes.pt.trace.json.gz", fmt="pytorch-trace")
    assert_golden(w)
    assert w.warnings == (SHAPES_WARNING,)
    assert compression.gunzip_bounded(gz, 1 << 20) == SHAPES.read_bytes()


def test_gunzip_bounded_limits_and_damage():
    payload = b" " * 3_000_000
    bomb = gzip.compress(payload)
    with pytest.raises(LimitError) as e:
        compression.gunzip_bounded(bomb, 1_000_000, "bomb.gz")
    assert str(e.value) == ("bomb.gz: the gzip data expands beyond the input size limit of 1 MB "
                            "(ROOFCORE_MAX_INPUT_MB; a guard against decompression bombs). Hint: raise it with "
                            "ROOFCORE_MAX_INPUT_MB=N or --max-input-mb (CLI) if you trust the file.")
    assert compression.gunzip_bounded(bomb, 3_000_000) == payload  # exactly at the limit is fine
    with pytest.raises(LimitError):  # the parser applies the same guard (context max_bytes, else the input limit)
        kineto.parse(bomb, "bomb.gz", {"max_bytes": 1_000_000})
    with pytest.raises(InputError) as e:
        compression.gunzip_bounded(bomb[: len(bomb) // 2], 10_000_000, "cut.gz")
    assert str(e.value) == ("cut.gz: the gzip data ends early (a truncated or partial download?). Hint: copy the .gz "
                            "file again, or gunzip it to see how much is readable.")
    bad = bytearray(gzip.compress(b'{"traceEvents": []}'))
    bad[3] = 0xE0  # reserved flag bits set
    try:
        zlib.decompressobj(wbits=31).decompress(bytes(bad))
        pytest.fail("zlib accepted a damaged header")
    except zlib.error as err:
        reason = str(err)
    with pytest.raises(InputError) as e:
        compression.gunzip_bounded(bytes(bad), 1 << 20, "bad.gz")
    assert str(e.value) == (f"bad.gz: not readable gzip data ({reason}). Hint: copy the file again; a renamed file "
                            "keeps its content.")
    # concatenated members (cat a.gz b.gz) are one stream
    assert compression.gunzip_bounded(gzip.compress(b"ab") + gzip.compress(b"cd"), 10) == b"abcd"


# --------------------------------------------------------------------------------------------- real sample


@pytest.mark.samples
def test_real_a100_alexnet_sample():
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} is absent (the shared samples are not checked out next to the project)")
    w = ingest.read(SAMPLE)
    f = w.frame
    assert len(f) == 98 and w.skipped == ()
    kernels = f[~f["group"].isin(["memcpy", "memset"])]
    assert len(kernels) == 79 and kernels["flops"].isna().all() and kernels["bytes_hbm"].isna().all()
    assert kernels["time_s"].sum() == pytest.approx(10_692e-6, rel=1e-12)
    memcpy, memset = f[f["group"] == "memcpy"], f[f["group"] == "memset"]
    assert len(memcpy) == 16 and (memcpy["flops"] == 0).all()
    assert memcpy["bytes_hbm"].sum() == 244_403_360 and memcpy["bytes_pcie"].sum() == 244_403_360
    assert memcpy["time_s"].sum() == pytest.approx(55_503e-6, rel=1e-12)
    assert len(memset) == 3 and memset["bytes_hbm"].sum() == 21_760 and memset["bytes_pcie"].isna().all()
    assert kernels["group"].value_counts().to_dict() == {
        "aten::cudnn_convolution": 30, "aten::clamp_min_": 14, "aten::addmm": 12, "aten::add_": 10,
        "aten::max_pool2d_with_indices": 6, "aten::native_dropout": 4, "aten::_adaptive_avg_pool2d": 2,
        "aten::uniform_": 1}
    assert f["row"].iloc[0] == "14" and f["row"].is_unique
    assert w.device == "NVIDIA A100-PG509-200"
    assert w.meta == {"compute_capability": "8.0", "arch": "sm_80", "sm_count": "108", "rank": "0",
                      "profiler": "PyTorch profiler (Kineto trace)", "record_shapes": "false"}  # distributedInfo
    assert w.warnings == ("16 of 18 kernels (79 of 98 launches) have unknown FLOPs and bytes (left empty, not zero): "
                          "the trace has no "
                          "input shapes. Hint: profile with torch.profiler.profile(..., record_shapes=True) so each "
                          "op's input shapes are recorded.",)



def events(path: Path) -> dict:
    """The trace decoded whole by the stdlib, for numbers computed without the parser."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


@pytest.mark.samples
def test_real_t4_amp_fp16_from_each_ops_own_dtype():
    """Autocast: aten::linear records fp32 inputs, the aten::addmm / aten::mm inside it c10::Half; the kernels
    take the innermost op's dtype, so the matmuls are fp16 on the fp16 matrix roof."""
    path = sample("pytorch_kineto_t4_amp_record_shapes.json")
    w = ingest.read(path)
    f = w.frame
    assert w.device == "Tesla T4" and w.meta["compute_capability"] == "7.5" and w.meta["sm_count"] == "40"
    assert len(f[~f["group"].isin(["memcpy", "memset"])]) == 159 and w.meta["record_shapes"] == "true"
    # one addmm by hand from the file: bias [2048], x [512, 784], wᵀ [784, 2048], all c10::Half (2 bytes)
    doc = events(path)
    first = next(e for e in doc["traceEvents"] if e.get("cat") == "cpu_op" and e["name"] == "aten::addmm")
    assert first["args"]["Input Dims"][:3] == [[2048], [512, 784], [784, 2048]]
    assert first["args"]["Input type"][:3] == [H, H, H]
    ext = first["args"]["External id"]
    launch = next(e for e in doc["traceEvents"] if e.get("cat") == "cuda_runtime"
                  and e["ts"] >= first["ts"] and e["ts"] <= first["ts"] + first["dur"] and e["tid"] == first["tid"])
    rows = f[f["row"] == str(launch["args"]["correlation"])]
    assert len(rows) == 1 and ext
    assert rows["flops"].iloc[0] == 2 * 512 * 2048 * 784
    assert rows["bytes_hbm"].iloc[0] == (2048 + 512 * 784 + 784 * 2048 + 512 * 2048) * 2
    assert (rows["precision"].iloc[0], rows["unit"].iloc[0]) == ("fp16", "matrix")
    # every mm / addmm of the file: Σ 2·m·n·k by hand equals the FLOPs their kernels carry, all fp16
    want = {"aten::mm": 0, "aten::addmm": 0}
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op" and e["name"] in want:
            a, b = e["args"]["Input Dims"][-2:] if e["name"] == "aten::mm" else e["args"]["Input Dims"][1:3]
            assert a[1] == b[0]
            want[e["name"]] += 2 * a[0] * a[1] * b[1]
    mats = f[f["group"].isin(list(want))]
    assert mats.groupby("group")["flops"].sum().to_dict() == pytest.approx(want, rel=1e-12)
    assert set(mats["precision"]) == {"fp16"}


@pytest.mark.samples
def test_real_v100_old_schema_links_kernels_to_their_ops():
    """PyTorch 1.9: Operator / Kernel / Runtime / Memcpy / Memset, lower-case "external id" on GPU events."""
    path = sample("pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz")
    w = ingest.read(path)
    f = w.frame
    doc = events(path)
    op_by_ext = {e["args"]["External id"]: e["name"] for e in doc["traceEvents"] if e.get("cat") == "Operator"}
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "Kernel"]
    k = f[~f["group"].isin(["memcpy", "memset"])]
    assert len(k) == len(kernels) == 8772
    # each kernel's op, found by the parser (launch → enclosing op), is the op its "external id" names
    assert k["group"].tolist() == [op_by_ext.get(e["args"]["external id"]) for e in kernels]
    assert k["time_s"].sum() == pytest.approx(sum(e["dur"] for e in kernels) * 1e-6, rel=1e-12)
    # the first convolution by hand: x [32, 3, 224, 224], w [64, 3, 7, 7], no stride recorded (PyTorch 1.9), so
    # read size-preserving as warned: 2·32·64·(224·224)·3·49 FLOPs over its kernels
    conv = next(e for e in doc["traceEvents"] if e.get("name") == "aten::cudnn_convolution")
    assert conv["args"]["Input Dims"][:2] == [[32, 3, 224, 224], [64, 3, 7, 7]] and "Concrete Inputs" not in conv["args"]
    mine = [str(e["args"]["correlation"]) for e in kernels if e["args"]["external id"] == conv["args"]["External id"]]
    assert f.loc[f["row"].isin(mine), "flops"].sum() == pytest.approx(2 * 32 * 64 * 224 * 224 * 3 * 49, rel=1e-12)
    assert any("convolution ops recorded no stride or padding" in x for x in w.warnings)
    memcpy = f[f["group"] == "memcpy"]
    assert (memcpy["flops"] == 0).all() and memcpy["bytes_pcie"].iloc[0] == 19_267_584  # HtoD: on the PCIe link
    assert w.device == "Tesla V100-DGXS-32GB" and w.meta["compute_capability"] == "7.0"


@pytest.mark.samples
def test_real_mi210_gpu_only_trace():
    path = sample("pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz")
    w = ingest.read(path)
    f = w.frame
    kernels = [e for e in events(path)["traceEvents"] if e.get("cat") == "kernel"]
    assert len(f) == len(kernels) == 562 and f["flops"].isna().all() and f["bytes_hbm"].isna().all()
    assert f["time_s"].tolist() == pytest.approx([e["dur"] * 1e-6 for e in kernels], rel=1e-12)
    assert w.device == "AMD Instinct MI210"
    assert "compute_capability" not in w.meta and "arch" not in w.meta  # HIP's computeMajor.Minor 9.0 is neither
    assert w.meta["cu_per_gpu"] == "104" and w.meta["record_shapes"] == "true"
    assert w.warnings == ("45 of 45 kernels (562 of 562 launches) have unknown FLOPs and bytes (left empty, not "
                          "zero): the trace has no "
                          "CPU ops (cpu_op events) to link them to. Hint: profile with activities=[ProfilerActivity"
                          ".CPU, ProfilerActivity.CUDA] and record_shapes=True so each kernel's launching op and its "
                          "input shapes are recorded.",)


@pytest.mark.samples
def test_real_mi300x_torch_compile_trace():
    path = sample("pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz")
    w = ingest.read(path)
    f = w.frame
    # kernels run on device 2; deviceProperties lists the one visible GPU as id 0
    assert w.device == "AMD Instinct MI300X" and w.meta["cu_per_gpu"] == "304"
    assert len(f) == 12
    triton = f[f["group"].astype(str).str.startswith("triton_")]
    assert len(triton) == 4
    # Inductor's Triton kernels (issue 26): elements (xnumel·r0_numel, Concrete Inputs) × the ops the name lists
    # (add, mean, mul, pow, rsqrt: 1 each); bytes: every tensor argument once ([8,4096,2048], [2048], [8,4096,2048])
    first = triton.iloc[0]
    assert first["name"] == "triton_red_fused_add_mean_mul_pow_rsqrt_0"
    assert first["flops"] == 32768 * 2048 * 5 and first["bytes_hbm"] == (2 * 8 * 4096 * 2048 + 2048) * 2
    mm = f[f["group"] == "aten::mm"]
    assert len(mm) == 7 and set(mm["precision"]) == {"bf16"}
    dims = [e["args"]["Input Dims"] for e in events(path)["traceEvents"] if e.get("name") == "aten::mm"]
    assert dims[0][:2] == [[32768, 2048], [2048, 2048]] and dims[4][:2] == [[32768, 2048], [2048, 8192]]
    assert mm["flops"].tolist() == [2 * a[0] * a[1] * b[1] for a, b, _ in dims]  # mm.out: (self, mat2, out)
    # flash attention, q/k/v [8, 4096, 16, 128] bf16, not causal (Concrete Inputs): 4·B·H·d·S², Q, K, V, O once
    att = f[f["group"] == "aten::_flash_attention_forward"]
    assert att["flops"].sum() == 4 * 8 * 16 * 128 * 4096 * 4096
    assert att["bytes_hbm"].sum() == 4 * 8 * 16 * 4096 * 128 * 2


@pytest.mark.samples
def test_real_b200_rank_file():
    path = sample("pytorch_kineto_b200_cuda12.9_eager.json.gz")
    w = ingest.read(path)
    f = w.frame
    doc = events(path)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    copies = [e for e in doc["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    k = f[f["group"] != "memcpy"]
    assert len(k) == len(kernels) == 768 and len(f) == 768 + len(copies)
    assert k["time_s"].sum() == pytest.approx(sum(e["dur"] for e in kernels) * 1e-6, rel=1e-12)
    assert w.device == "NVIDIA B200" and w.meta["compute_capability"] == "10.0" and w.meta["arch"] == "sm_100"
    memcpy = f[f["group"] == "memcpy"]
    assert (memcpy["flops"] == 0).all()
    h2d = memcpy["name"].str.startswith("Memcpy HtoD")
    d2d = memcpy["name"].str.startswith("Memcpy DtoD")
    by_kind = {kind: sum(e["args"]["bytes"] for e in copies if e["name"].startswith(kind))
               for kind in ("Memcpy HtoD", "Memcpy DtoD")}
    assert memcpy.loc[h2d, "bytes_pcie"].sum() == by_kind["Memcpy HtoD"]  # host copies on the PCIe link
    assert memcpy.loc[d2d, "bytes_pcie"].isna().all()  # device-to-device: no link, device memory read + written
    assert memcpy.loc[d2d, "bytes_hbm"].sum() == 2 * by_kind["Memcpy DtoD"]


@pytest.mark.samples
def test_real_cpu_only_trace_refused():
    with pytest.raises(InputError) as e:
        ingest.read(sample("pytorch_kineto_cpu_only_no_gpu.json.gz"), name="cpu.json.gz")
    assert str(e.value) == (
        'cpu.json.gz: expected GPU kernel events ("cat": "kernel"), found none among 30 events (4 cpu_op, 0 '
        "cuda_runtime). Hint: profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CPU-only "
        "trace has no kernels to place on a roofline.")


@pytest.mark.samples
def test_rocprof_hip_trace_json_is_not_claimed():
    """rocprof v1's --hip-trace results.json is a Chrome trace (string timestamps, an empty first event): another
    format's file. Not detected as Kineto; forced, it is not called CPU-only."""
    data = sample("rocprofv1_mi300a_vecadd_hiptrace_results.json").read_bytes()
    assert kineto.sniff(data[:65536].decode(), "results.json") is False
    assert ingest.detect(data, "results.json").name != "pytorch-trace"
    with pytest.raises(InputError) as e:
        kineto.parse(data, "results.json")
    assert str(e.value) == (
        "results.json: not a PyTorch profiler trace: its events have no Kineto categories and 17 events have "
        "timestamps written as JSON strings, as in rocprof's --hip-trace results.json. Hint: drop --format so the "
        "format is detected from the content.")


@pytest.mark.samples
@pytest.mark.parametrize(("name", "device", "hw"), [
    ("pytorch_kineto_a100_alexnet_trace.json", "NVIDIA A100-PG509-200", "a100-40gb-sxm"),
    ("pytorch_kineto_b200_cuda12.9_eager.json.gz", "NVIDIA B200", "b200"),
    ("pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz", "AMD Instinct MI300X", "mi300x"),
    # none, or that very model where the catalog has it; never another device
    ("pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz", "AMD Instinct MI210", "mi210"),
    ("pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz", "Tesla V100-DGXS-32GB", "v100"),
    ("pytorch_kineto_t4_amp_record_shapes.json", "Tesla T4", "t4"),
])
def test_real_devices_map_to_the_catalog_or_to_none(name, device, hw):
    from roofcore import load_catalogs

    w = ingest.read(sample(name))
    assert w.device == device
    hits = load_catalogs(use_env=False).suggest(w.device, w.meta)
    if hw in ("a100-40gb-sxm", "b200", "mi300x"):
        assert hits == [hw]
    else:
        assert hits == [] or (len(hits) == 1 and hits[0].startswith(hw)), hits


# --------------------------------------------------------------------------------------------- CUPTI counters


def test_cupti_range_trace_golden():
    """Range profiler without kernel tracing: one row per range; FLOPs by the NERSC formula (2·ffma + fmul + fadd =
    145,408, as the ncu reference), ranges' synthetic ts/dur never used as time, ops via the n-th kernel launch."""
    w = ingest.read(DATA / "cupti_ranges.pt.trace.json")
    assert columns(w, "flops", "precision", "unit", "group", "row") == [
        (145_408.0, "fp32", "vector", "aten::mm", "range 0"),
        (16.0, "fp32", "vector", "aten::mm", "range 1"),
        (512 * 1000 + 2 * 10.0, "fp16", "matrix", "aten::bmm", "range 2"),
    ]
    f = w.frame
    assert f["bytes_hbm"].tolist() == [512.0, 1024.0, 65536.0]
    assert f["bytes_l2"].tolist()[0] == 233_856.0 and f["bytes_l1"].tolist()[0] == 384.0
    assert np.isnan(f["bytes_l2"].tolist()[1:]).all()
    assert f["time_s"].tolist()[:2] == pytest.approx([7.488e-6, 4.224e-6], rel=1e-12)
    assert np.isnan(f["time_s"].iloc[2])
    assert w.device == "NVIDIA A100-SXM4-40GB"
    assert w.warnings == (
        "tensor-core FLOPs estimated as 512 × sm__inst_executed_pipe_tensor.sum (the factor depends on the "
        "architecture and instruction). Hint: add the sm__ops_path_tensor_* counters to profiler_metrics for exact "
        "tensor FLOPs.",
        "1 CUPTI counter range has no time (range ts/dur are synthetic). Hint: add gpu__time_duration.sum to "
        "profiler_metrics to measure each kernel's time.",
    )


def test_cupti_ranges_matched_to_kernels_by_name_and_order():
    rng = {"ph": "X", "cat": "cuda_profiler_range", "pid": 0, "tid": 0, "ts": 0, "dur": 999}
    doc = trace(
        op("aten::mm", 10, 30, [[2, 4], [4, 8]], ["float", "float"]), rt(12, 1), rt(20, 2),
        k("gemm", 100, 5, 1), k("gemm", 110, 6, 2),
        {**rng, "name": "gemm", "args": {"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 4096.0,
                                         "dram__bytes_op_read.sum": 100, "dram__bytes_op_write.sum": 28}},
        {**rng, "name": "other", "args": {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 5}})
    w = read(doc)
    # first "gemm": counters replace the shape estimate (exact tensor FLOPs, bf16 from the counter name); the
    # kernel keeps its real duration; the second "gemm" keeps its share of the op's shape-derived numbers
    assert columns(w, "precision", "unit") == [("bf16", "matrix"), ("fp32", "matrix")]
    assert w.frame["flops"].tolist() == pytest.approx([4096.0, 2 * 2 * 8 * 4 * 6 / 11], rel=1e-15)
    assert w.frame["bytes_hbm"].tolist() == pytest.approx([128.0, (8 + 32 + 16) * 4 * 6 / 11], rel=1e-15)
    assert w.frame["time_s"].tolist() == pytest.approx([5e-6, 6e-6])
    assert w.warnings == ("1 of 2 CUPTI counter ranges match no kernel event of the same name and order; their "
                          "counters were not used.",)


def test_counter_point_formulas():
    p = kineto.counter_point({"sm__sass_thread_inst_executed_op_dfma_pred_on.sum": 10,
                              "sm__sass_thread_inst_executed_op_dmul_pred_on.sum": 3,
                              "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 1,
                              "dram__bytes.sum": 64, "gpu__time_duration.sum": 2000, "bogus": "n/a"})
    assert (p["flops"], p["precision"], p["unit"], p["bytes_hbm"], p["time_s"]) == (24.0, "fp64", "vector", 64.0,
                                                                                      2e-6)
    assert math.isnan(kineto.counter_point({"dram__bytes.sum": 5})["flops"])  # no FLOP counters: unknown, not 0
    assert kineto.counter_point({"sm__inst_executed_pipe_tensor.sum": 2}, "h1688gemm", 2048)["flops"] == 4096
    assert kineto.name_precision("ampere_h16816gemm_256x128") == "fp16"
    assert kineto.name_precision("cutlass_80_tensorop_s1688gemm") == "tf32"
    assert kineto.name_precision("sm90_xmma_gemm_bf16bf16") == "bf16"
    assert kineto.name_precision("ampere_sgemm_128x64_tn") is None


# --------------------------------------------------------------------------------------------- op formulas

F, H, S, L = "float", "c10::Half", "Scalar", "ScalarList"


@pytest.mark.parametrize(("name", "dims", "types", "conc", "expected"), [
    # ops.matmul with a shared operand: batch·m rows (b shared), or bᵀ @ aᵀ with batch·n rows (a shared)
    ("aten::matmul", [[2, 3, 8, 16], [16, 4]], [F, F], None,
     (2 * 6 * 8 * 4 * 16, (6 * 8 * 16 + 16 * 4 + 6 * 8 * 4) * 4, "fp32", "matrix", False)),
    ("aten::matmul", [[8, 16], [5, 16, 4]], [H, H], None,
     (2 * 5 * 8 * 4 * 16, (8 * 16 + 5 * 16 * 4 + 5 * 8 * 4) * 2, "fp16", "matrix", False)),
    # both batched and broadcast against each other ([2,1] with [3]): not a layout of ops' formulas, unknown
    ("aten::matmul", [[2, 1, 8, 16], [3, 16, 4]], [F, F], None, None),
    ("aten::mm", [[4, 5], [5, 7]], ["long int", "long int"], None, None),  # integer matmul: no precision
    ("aten::matmul", [[16], [16]], [H, H], None, (32, (16 + 16 + 1) * 2, "fp16", "matrix", False)),
    ("aten::linear", [[4, 10, 32], [64, 32], [64]], [F, F, F], None,
     (2 * 40 * 64 * 32, (1280 + 2048 + 64 + 40 * 64) * 4, "fp32", "matrix", False)),
    ("aten::bmm", [[3, 8, 16], [3, 16, 4]], ["c10::BFloat16"] * 2, None,
     (2 * 3 * 8 * 4 * 16, (384 + 192 + 96) * 2, "bf16", "matrix", False)),
    ("aten::baddbmm", [[3, 8, 4], [3, 8, 16], [3, 16, 4], [], []], [F, F, F, S, S], None,
     (2 * 3 * 8 * 4 * 16, (96 + 384 + 192 + 96) * 4, "fp32", "matrix", False)),
    ("aten::mm", [[4, 5], [6, 7]], [F, F], None, None),  # inner sizes differ: no formula
    # conv2d with padding="same" (string) keeps the size; depthwise conv (groups = channels)
    ("aten::conv2d", [[1, 4, 10, 10], [8, 4, 3, 3], [], [], [], [], []], [F, F, "", L, "", L, S],
     ["", "", "", "[1, 1]", "'same'", "[1, 1]", "1"], (2 * 8 * 100 * 4 * 9, (400 + 288 + 800) * 4, "fp32", "matrix",
                                                        False)),
    ("aten::convolution", [[1, 32, 16, 16], [32, 1, 3, 3], [32], [], [], [], [], [], []],
     [F, F, F, L, L, L, S, L, S], ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "32"],
     (2 * 32 * 256 * 1 * 9, (8192 + 288 + 32 + 8192) * 4, "fp32", "matrix", False)),
    # transposed convolution: every input element meets each weight of its group
    ("aten::convolution", [[1, 8, 4, 4], [8, 4, 2, 2], [], [], [], [], [], [], []],
     [F, F, "", L, L, L, S, L, S], ["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"],
     (2 * 16 * 8 * 4 * 4, (128 + 128 + 256) * 4, "fp32", "matrix", False)),
    ("aten::conv3d", [[2, 3, 8, 8, 8], [5, 3, 3, 3, 3], [5], [], [], [], []], [F, F, F, L, L, L, S],
     ["", "", "", "[2, 2, 2]", "[0, 0, 0]", "[1, 1, 1]", "1"],
     (2 * 2 * 5 * 27 * 3 * 27, (3072 + 405 + 5 + 2 * 5 * 27) * 4, "fp32", "matrix", False)),
    # no Concrete Inputs (PyTorch < 2.1): a size-preserving convolution is assumed, and flagged
    ("aten::cudnn_convolution", [[1, 3, 8, 8], [4, 3, 3, 3]], [F, F], None,
     (2 * 4 * 64 * 3 * 9, (192 + 108 + 256) * 4, "fp32", "matrix", True)),
    # PyTorch ≤ 1.7 cudnn_convolution(self, weight, bias, padding, stride, dilation, groups, ...)
    ("aten::cudnn_convolution", [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []],
     [F, F, F, L, L, L, S, S, S], ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1", "False", "False"],
     (2 * 4 * 36 * 3 * 9, (192 + 108 + 4 + 144) * 4, "fp32", "matrix", False)),
    ("aten::convolution_backward",
     [[2, 4, 6, 6], [2, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], [], []],
     [F, F, F, L, L, L, L, S, L, S, L],
     ["", "", "", "[4]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"],
     (2 * (2 * 2 * 4 * 36 * 3 * 9), (288 + 384 + 108 + 384 + 108) * 4, "fp32", "matrix", False)),
    # elementwise: broadcast output, sizes from the dtypes
    ("aten::mul", [[4, 1], [1, 3]], ["double", "double"], None, (12, (4 + 3 + 12) * 8, "fp64", "vector", False)),
    ("aten::where", [[6], [6], [6]], ["bool", "long int", "long int"], None, (6, 6 + 48 + 48 + 48, None, "vector",
                                                                                False)),
    ("aten::add", [[4, 2], [3, 2]], [F, F], None, None),  # shapes do not broadcast
    ("aten::relu", [[]], [F], None, (1, 8, "fp32", "vector", False)),  # a 0-dim tensor is one element
    ("aten::gelu", [[], []], [S, S], None, None),  # no tensor at all
    ("aten::copy_", [[1024], [1024], []], ["c10::BFloat16", F, S], None, (0, 1024 * 2 + 1024 * 4, None, "vector",
                                                                          False)),
    ("aten::fill_", [[10, 10], []], [H, S], None, (0, 200, None, "vector", False)),
    ("aten::softmax", [[4, 4], [], []], [F, S, S], None, None),  # no formula (its child _softmax has one)
    # ops.softmax, ops.layernorm, ops.rmsnorm, ops.embedding on the recorded shapes
    ("aten::_log_softmax", [[8, 100], [], []], [H, S, S], ["", "1", "False"], (5 * 800, 2 * 800 * 2, "fp16", "vector",
                                                                              False)),
    ("aten::native_layer_norm", [[4, 16, 64], [], [64], [64], []], ["c10::BFloat16", L, "c10::BFloat16",
                                                                     "c10::BFloat16", S],
     ["", "[64]", "", "", "1e-05"], (7 * 4096, (2 * 4096 + 2 * 64) * 2, "bf16", "vector", False)),
    ("aten::rms_norm", [[32, 128], [], [128], []], [F, L, F, S], ["", "[128]", "", ""],
     (4 * 4096, (2 * 4096 + 128) * 4, "fp32", "vector", False)),
    ("aten::embedding", [[1000, 64], [8, 16], [], [], []], [H, "long int", S, S, S], None,
     (0, 128 * 64 * 2 + 8 * 128 + 128 * 64 * 2, "fp16", "vector", False)),
    # flash attention (ops.flash_attention): q [B,H,S,D] with 2 K/V heads, causal from Concrete Inputs
    ("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64], [2, 2, 128, 64], [2, 2, 128, 64], [], [], [], []],
     ["c10::BFloat16"] * 3 + [S] * 4, ["", "", "", "0.", "True", "False", "0.125"],
     (4 * 2 * 8 * 64 * (128 * 128 - 128 * 127 // 2), (2 * 2 * 8 * 128 * 64 + 2 * 2 * 2 * 128 * 64) * 2, "bf16",
      "matrix", False)),
    ("aten::_flash_attention_forward", [[2, 128, 8, 64], [2, 128, 8, 64], [2, 128, 8, 64], [], [], [], [], [], [],
                                        [], []], ["c10::BFloat16"] * 3 + ["", ""] + [S] * 6,
     ["", "", "", "", "", "128", "128", "0.", "False", "False", "0.125"],
     (4 * 2 * 8 * 64 * 128 * 128, 4 * 2 * 8 * 128 * 64 * 2, "bf16", "matrix", False)),
    ("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3, ["c10::BFloat16"] * 3, None, None),  # causal?
    # PyTorch ≤ 1.10 backward convolutions: grad input FLOPs exact whatever the stride (its size assumed when
    # self_size is not recorded); grad weight only with its size
    ("aten::cudnn_convolution_backward_input", [[], [2, 8, 6, 6], [8, 4, 3, 3], [], [], [], [], [], [], []],
     ["GenericList", F, F] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"], None,
     (2 * 2 * 8 * 36 * 4 * 9, (576 + 288 + 2 * 4 * 36) * 4, "fp32", "matrix", True)),
    ("aten::cudnn_convolution_backward_input", [[], [2, 8, 6, 6], [8, 4, 3, 3], [], [], [], [], [], [], []],
     ["GenericList", F, F] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"],
     ["[2, 4, 8, 8]", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1", "False", "False", "False"],
     (2 * 2 * 8 * 36 * 4 * 9, (576 + 288 + 512) * 4, "fp32", "matrix", False)),
    ("aten::cudnn_convolution_backward_weight", [[], [2, 8, 6, 6], [2, 4, 8, 8], [], [], [], [], [], [], []],
     ["GenericList", F, F] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"], None, None),
    ("aten::cudnn_convolution_backward_weight", [[], [2, 8, 6, 6], [2, 4, 8, 8], [], [], [], [], [], [], []],
     ["GenericList", F, F] + ["GenericList"] * 3 + ["Int", "Bool", "Bool", "Bool"],
     ["[8, 4, 3, 3]", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1", "False", "False", "False"],
     (2 * 2 * 8 * 36 * 4 * 9, (576 + 512 + 288) * 4, "fp32", "matrix", False)),
])
def test_op_formulas(name, dims, types, conc, expected):
    got = kineto.op_cost(name, dims, types, conc)
    assert got == (None if expected is None else (float(expected[0]), float(expected[1]), *expected[2:]))


def test_conv_without_geometry_is_warned():
    doc = trace(op("aten::cudnn_convolution", 10, 20, [[1, 3, 8, 8], [4, 3, 3, 3]], [F, F]), rt(12, 5),
                k("conv_kernel", 50, 3, 5))
    w = read(doc)
    assert w.frame["flops"].tolist() == [2 * 4 * 64 * 3 * 9]
    assert w.warnings == ("1 convolution op recorded no stride or padding (no 'Concrete Inputs'; PyTorch < 2.1): "
                          "output and input were assumed the same size (stride 1, 'same' padding), which overcounts "
                          "a strided convolution's FLOPs (or its grad input's bytes). Hint: profile with a newer "
                          "PyTorch for exact convolution FLOPs.",)


# --------------------------------------------------------------------------------------------- linking


def test_innermost_op_examples():
    g = np.zeros(5, dtype=np.int64)
    start = np.array([0.0, 1.0, 2.0, 6.0, 6.0])
    end = np.array([10.0, 5.0, 3.0, 6.0, 9.0])  # [0,10] > [1,5] > [2,3]; [6,9] > [6,6] (zero length, same start)
    q = np.array([2.5, 4.0, 0.0, 5.5, 6.0, 7.0, 10.0, 11.0, -1.0])
    got = kineto.innermost(g, start, end, np.zeros(len(q), dtype=np.int64), q)
    assert got.tolist() == [2, 1, 0, 0, 3, 4, 0, -1, -1]
    # another thread sees none of them; NaN times and NaN ops are ignored
    assert kineto.innermost(g, start, end, np.ones(2, dtype=np.int64), np.array([2.5, 7.0])).tolist() == [-1, -1]
    assert kineto.innermost(g, np.r_[start[:4], np.nan], end, np.zeros(2, dtype=np.int64),
                            np.array([np.nan, 7.0])).tolist() == [-1, 0]


@st.composite
def nested_ops(draw):
    """Properly nested intervals on a few threads (what one thread's profiler ranges are), plus query times."""
    ops: list[tuple[int, float, float]] = []

    def fill(thread: int, lo: int, hi: int, depth: int) -> None:
        t = lo
        while t < hi and len(ops) < 60:
            if not draw(st.booleans()):
                break
            a = draw(st.integers(t, hi))
            b = draw(st.integers(a, hi))
            ops.append((thread, float(a), float(b)))
            if depth < 4 and b > a:
                fill(thread, a, b, depth + 1)
            t = b + draw(st.integers(0, 2))  # siblings may touch (end == next start)

    for thread in range(draw(st.integers(1, 3))):
        fill(thread, 0, 40, 0)
    order = draw(st.permutations(range(len(ops))))
    ops = [ops[i] for i in order]
    queries = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 42).map(lambda x: x / 2 * 2 + 0.5 * (x % 2))),
                            max_size=30))
    return ops, queries


@settings(max_examples=300 if not LONG else 5000, deadline=None)
@given(nested_ops())
def test_innermost_matches_brute_force(case):
    ops, queries = case
    g = np.array([o[0] for o in ops], dtype=np.int64)
    s = np.array([o[1] for o in ops])
    e = np.array([o[2] for o in ops])
    qg = np.array([q[0] for q in queries], dtype=np.int64)
    qt = np.array([q[1] for q in queries], dtype=np.float64)
    got = kineto.innermost(g, s, e, qg, qt)
    for j, (thread, t) in enumerate(queries):
        holding = [i for i, (th, a, b) in enumerate(ops) if th == thread and a <= t <= b]
        want = max(holding, key=lambda i: (ops[i][1], -ops[i][2], i)) if holding else -1
        assert got[j] == want, (ops, thread, t)


def test_linking_pitfalls():
    """Launch on another thread than an overlapping op; CUDA graph (one launch, several kernels); kernels with
    equal zero durations share equally; External id fallback only when it differs from the correlation."""
    doc = trace(
        op("aten::mm", 0, 100, [[8, 8], [8, 8]], [F, F], tid=1, ext=50),
        op("aten::add", 40, 20, [[8, 8], [8, 8]], [F, F], tid=2, ext=51),
        rt(45, 1, tid=1),  # inside both ops in time, but only mm is on its thread
        rt(70, 2, tid=1, name="cudaGraphLaunch"),
        k("mm_kernel", 200, 4, 1),
        k("graph_a", 210, 0, 2), k("graph_b", 211, 0, 2),
        k("by_ext", 220, 1, 99, ext=51),  # no launch event: External id 51 names aten::add
        k("same_ids", 230, 1, 98, ext=98),  # External id == correlation (older traces): not an op id
    )
    w = read(doc)
    f = w.frame
    assert f["name"].tolist() == ["mm_kernel", "graph_a", "graph_b", "by_ext", "same_ids"]
    assert f["group"].tolist() == ["aten::mm", "aten::mm", "aten::mm", "aten::add", None]
    # the mm op (2·8³ = 1024 FLOPs) is launched twice; its kernels split by duration 4:0:0 → 1024, 0, 0
    assert f["flops"].tolist()[:4] == [1024.0, 0.0, 0.0, 64.0] and math.isnan(f["flops"].iloc[4])


def test_zero_duration_kernels_share_equally_and_are_warned():
    doc = trace(op("aten::mm", 0, 50, [[8, 8], [8, 8]], [F, F]), rt(5, 1), rt(6, 2), k("a", 100, 0, 1),
                k("b", 101, 0, 2))
    w = read(doc)
    assert w.frame["flops"].tolist() == [512.0, 512.0]
    assert w.warnings == ("2 events last 0 µs (the trace rounds to whole µs): achieved rates are unknown for them.",)


# --------------------------------------------------------------------------------------------- pitfalls


def test_legacy_category_names_and_array_format():
    """PyTorch 1.8-era categories (Kernel, Runtime, Operator, Memcpy) and a bare event array (Chrome format)."""
    events = [op("aten::mm", 0, 50, [[2, 2], [2, 2]], [F, F], cat="Operator"),
              rt(5, 1, cat="Runtime"), k("gemm", 100, 3, 1, cat="Kernel"),
              k("Memcpy DtoH (Device -> Pageable)", 110, 2, 2, cat="Memcpy", bytes=64)]
    w = read(events)
    f = w.frame
    assert f["name"].tolist() == ["gemm", "Memcpy DtoH (Device -> Pageable)"]
    assert f["group"].tolist() == ["aten::mm", "memcpy"]
    assert f["flops"].tolist() == [16.0, 0.0] and f["bytes_hbm"].tolist() == [48.0, 64.0]
    assert np.isnan(f["bytes_pcie"].iloc[0]) and f["bytes_pcie"].iloc[1] == 64.0
    assert w.device is None  # a bare array has no deviceProperties


def test_rocm_trace():
    """ROCm traces keep the schema: float ts with fractions, hipLaunchKernel, no occupancy args, gcnArchName."""
    doc = {"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X", "gcnArchName": "gfx942:sramecc+:xnack-"}],
           "traceEvents": [op("aten::mm", 10.25, 40.5, [[16, 16], [16, 16]], ["c10::BFloat16"] * 2),
                           rt(12.875, 7, name="hipLaunchKernel"),
                           {"ph": "X", "cat": "kernel", "name": "Cijk_Alik_Bljk_BBS_BH_MT64x64x64", "pid": 2,
                            "tid": 3, "ts": 100.125, "dur": 3.75, "args": {"device": 0, "correlation": 7}}]}
    w = read(doc)
    assert w.device == "AMD Instinct MI300X" and w.meta["arch"] == "gfx942" and "compute_capability" not in w.meta
    assert columns(w, "flops", "bytes_hbm", "precision") == [(8192.0, 1536.0, "bf16")]
    assert w.frame["time_s"].iloc[0] == pytest.approx(3.75e-6)


def test_rocm_device_listed_once_and_old_schema_external_id():
    """ROCm numbers a kernel's device physically (2) but lists the visible GPU as id 0: one model, so it is that
    one; HIP's computeMajor/Minor are no architecture. A 2021-schema kernel ("external id", no launch event)
    finds its op by that id."""
    doc = {"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4,
                                 "numSms": 304}], "hip_runtime_version": 70226015,
           "traceEvents": [op("aten::mm", 10, 40, [[16, 16], [16, 16]], [F, F], ext=77, cat="Operator"),
                           {"ph": "X", "cat": "Kernel", "name": "Cijk_Ailk_Bljk_SB", "pid": 2, "tid": 3, "ts": 100,
                            "dur": 4, "args": {"device": 2, "correlation": 9, "external id": 77}}]}
    w = read(doc)
    assert w.device == "AMD Instinct MI300X" and w.meta["cu_per_gpu"] == "304"
    assert "compute_capability" not in w.meta and "arch" not in w.meta
    assert columns(w, "group", "flops") == [("aten::mm", 2 * 16**3)]


def test_copies_do_no_math_and_unknown_bytes_stay_unknown():
    doc = trace(k("Memcpy HtoD (Pageable -> Device)", 1, 2, 1, cat="gpu_memcpy", bytes=1000),
                k("Memcpy DtoH (Device -> Pinned)", 4, 2, 2, cat="gpu_memcpy"),  # no "bytes" recorded
                k("Memcpy DtoD (Device -> Device)", 7, 2, 3, cat="gpu_memcpy", bytes=64),
                k("Memset (Device)", 9, 1, 4, cat="gpu_memset", bytes=32))
    w = read(doc)
    f = w.frame
    assert f["flops"].tolist() == [0.0] * 4
    assert f["bytes_pcie"].tolist()[0] == 1000 and np.isnan(f["bytes_pcie"].tolist()[1:]).all()
    assert math.isnan(f["bytes_hbm"].iloc[1]) and f["bytes_hbm"].tolist()[2:] == [128.0, 32.0]
    assert f["group"].tolist() == ["memcpy", "memcpy", "memcpy", "memset"]


def test_superchip_host_copies_cross_c2c():
    doc = trace(k("Memcpy HtoD (Pinned -> Device)", 1, 2, 1, cat="gpu_memcpy", bytes=1000))
    doc["deviceProperties"][0]["name"] = "NVIDIA GH200 480GB"
    w = read(doc)
    assert "bytes_pcie" not in w.frame.columns and w.frame["bytes_c2c"].tolist() == [1000.0]


def test_not_kineto_json_is_not_called_cpu_only():
    assert kineto.sniff('{ "traceEvents":[{}\n,{"ph":"M","pid":2,"name":"process_name"}', "r.json") is False
    assert kineto.sniff('{"traceEvents": [{"ph": "X", "name": "Copy", "pid": "1", "ts": "622109046136"}', "r.json") \
        is False
    assert kineto.sniff('{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "ts": 1}', "r.json") is True
    def refusal(doc: dict) -> str:
        with pytest.raises(InputError) as e:
            kineto.parse(json.dumps(doc).encode(), "t.json")  # forced: detection gives such files to their format
        return str(e.value)

    assert refusal({"traceEvents": [{}, {"ph": "X", "name": "Copy", "pid": "1", "ts": "622109046136", "dur": "9"}]}
                   ) == ("t.json: not a PyTorch profiler trace: its events have no Kineto categories and 1 event has "
                         "timestamps written as JSON strings, as in rocprof's --hip-trace results.json. Hint: drop "
                         "--format so the format is detected from the content.")
    assert refusal({"traceEvents": [{"ph": "X", "name": "step", "ts": 1, "dur": 2}]}) == (
        't.json: expected a PyTorch profiler trace (events with "cat": "kernel", "cpu_op", ...), found 1 event '
        "without Kineto's categories. Hint: is this a PyTorch profiler trace? Export one with "
        "prof.export_chrome_trace(path).")


def test_bad_values_skip_rows_with_reasons():
    doc = trace(k("ok", 1, 2, 1), k("neg", 2, -3, 2), k("text", 3, "abc", 3), k("nodur", 4, None, 4),
                k(["not", "a", "name"], 5, 1, 5), {"ph": "X", "cat": "kernel", "name": "huge", "ts": 1e400, "dur": 1},
                "not an object", 42)
    w = read(doc)
    assert w.frame["name"].tolist() == ["ok", "nodur"]
    assert math.isnan(w.frame["time_s"].iloc[1])  # a missing duration is unknown time, not zero
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("2", "dur: expected a non-negative number, found -3"),
        ("3", 'dur: expected a non-negative number, found "abc"'),
        ("5", 'name: expected a kernel name, found ["not", "a", "name"]'),
        ("event 5", "ts: expected a number, found inf"),
    ]
    assert "2 entries of traceEvents are not a JSON object and ignored." in w.warnings


def test_truncated_trace_keeps_what_was_read():
    text = SHAPES.read_text()
    cut = text.index('"ampere_sgemm_32x32_sliced1x4_nn"')
    w = ingest.read(text[:cut].encode(), name="cut.json")
    assert len(w.frame) == 9  # the kernels before the cut
    complete = text[:cut].count("\n  {") - 1  # events that started before the cut, less the one cut
    assert complete == 61
    assert w.warnings[-1] == (f"the file ends early, at character {cut} (truncated?): the 61 events before the "
                              "break were read, the rest is missing.")


def test_decode_window_boundaries(monkeypatch):
    """The text is decoded window by window: every cut position must read the same (tiny windows, BOM, CRLF)."""
    reference = ingest.read(SHAPES).frame.drop(columns="source")
    data = b"\xef\xbb\xbf" + SHAPES.read_bytes().replace(b"\n", b"\r\n")
    for window in (1, 7, 64, 997):
        monkeypatch.setattr(kineto, "WINDOW", window)
        got = kineto.parse(data, "w.json").frame.drop(columns="source")
        assert got.equals(reference), window


def test_multi_gpu_and_meta():
    doc = trace(k("a", 1, 2, 1, device=0), k("b", 2, 2, 2, device=1), k("c", 3, 2, 3, device=1))
    doc["deviceProperties"].append({"id": 1, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0})
    w = read(doc)
    assert w.device == "NVIDIA A100-SXM4-80GB" and w.meta["devices"] == "0,1"


# --------------------------------------------------------------------------------------------- messages


@pytest.mark.parametrize(("data", "expected"), [
    (b"", "t.json: expected a PyTorch profiler trace (JSON), found an empty file. " + HINT),
    (b"   \n", "t.json: expected a PyTorch profiler trace (JSON), found an empty file. " + HINT),
    (b'{"traceEvents": [{"ph": x}]}', "t.json: line 1, column 25: not valid JSON: Expecting value. " + HINT),
    (b'{"traceEvents": [{"ph": "X"} {"ph": "X"}]}',
     "t.json: line 1, column 30: not valid JSON: Expecting ',' delimiter. " + HINT),
    (b'{"traceEvents": []} trailing', "t.json: line 1, column 21: not valid JSON: Extra data. " + HINT),
    (b'"traceEvents"', 't.json: $: expected a JSON object with "traceEvents" (a PyTorch profiler trace), found a '
                       "JSON string. " + HINT),
    (b'{"schemaVersion": 1, "traceName": "x"}',
     't.json: $: expected key "traceEvents", found keys schemaVersion, traceName. Hint: is this a PyTorch profiler '
     "trace? Export one with prof.export_chrome_trace(path)."),
    (b'{"traceEvents": {"a": 1}}', "t.json: $.traceEvents: expected a list of trace events, found a JSON object. "
                                   + HINT),
    (b'{"schemaVersion": 1, "traceEv', "t.json: the file ends early, at character 21, before any trace event "
                                       "(truncated?). " + HINT),
    (b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]}',
     't.json: expected GPU kernel events ("cat": "kernel"), found none among 1 events (1 cpu_op, 0 cuda_runtime). '
     "Hint: profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CPU-only trace has no kernels "
     "to place on a roofline."),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}',
     "t.json: event 0: no usable kernel events; the first problem: dur: expected a non-negative number, found -1. "
     + HINT),
    (b'{"traceEvents": [{"ph": "X", "name": "caf\xe9"}]}',
     "t.json: expected UTF-8 text, found byte 0xe9 at offset 41. Hint: save the file as UTF-8."),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "t.json: expected a text workload file (CSV or YAML), found binary data (a "
                                          "PNG image). Hint: is this the right file? A renamed file keeps its content."),
    (b"[" * 100_000, "t.json: JSON nested 100,000 levels deep, above the JSON depth limit of 100 "
                     "(ROOFCORE_MAX_JSON_DEPTH). Hint: raise it with ROOFCORE_MAX_JSON_DEPTH=N (0 = no limit); on a "
                     "shared server the host sets it."),
])
def test_messages(data, expected):
    with pytest.raises((InputError, LimitError)) as e:
        kineto.parse(data, "t.json")
    assert str(e.value) == expected


def test_sniffing():
    assert ingest.detect(SHAPES.read_bytes(), "anything.txt").name == "pytorch-trace"
    assert kineto.sniff('[{"ph": "X", "cat": "kernel", "name": "k"}]', "x") is True  # Chrome's bare array
    assert kineto.sniff('name,flops\n"traceEvents",1', "x.csv") is False


def test_cli_analyze(capsys):
    assert main(["analyze", str(SHAPES), "--hardware", "h100-sxm", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workload"]["formats"] == ["pytorch-trace"] and out["workload"]["kernels"] == 14
    by_row = {k["row"]: k for k in out["kernels"]}
    assert by_row["1005"]["ceiling"] == "tf32-matrix" and by_row["1011"]["bound"] == "link:pcie"


# --------------------------------------------------------------------------------------------- fuzzing

FUZZ = settings(max_examples=10_000 if LONG else 150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = [SHAPES.read_bytes(), (DATA / "cupti_ranges.pt.trace.json").read_bytes(),
         (DATA / "shapes.pt.trace.json.gz").read_bytes()]


def outcome(data: bytes) -> None:
    try:
        w = kineto.parse(data, "fuzz.json")
    except InputError:
        return
    assert isinstance(w, ingest.Workload) and len(w.frame) > 0
    assert set(w.frame.columns) >= {"name", "count", "flops", "time_s", "bytes_hbm"}


KINETO_JUNK = [b",", b'"', b"{", b"]", b"null", b"-1", b"1e999", b"NaN", b"\xff", b'"dur": "x"', b"[[[", b"\x00"]


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**70) | st.floats(allow_nan=True) |
                    st.sampled_from(["", "X", "float", "c10::Half", "[1, 1]", "True", "aten::mm"]),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                        ["a", "bytes", "correlation", "External id"]), inner, max_size=3), max_leaves=12)
EVENT = st.fixed_dictionaries({}, optional={
    "ph": st.sampled_from(["X", "s", "i"]) | JSON,
    "cat": st.sampled_from(list(kineto.CATS)) | JSON, "name": st.sampled_from([*list(kineto.OPS)[:8], "k"]) | JSON,
    "ts": st.integers(0, 50) | JSON, "dur": st.integers(0, 50) | JSON, "pid": st.integers(0, 2) | JSON,
    "tid": st.integers(0, 2) | JSON,
    "args": st.fixed_dictionaries({}, optional={
        "correlation": st.integers(0, 5) | JSON, "External id": st.integers(0, 5) | JSON,
        "device": st.integers(0, 1) | JSON, "bytes": JSON,
        "Input Dims": st.lists(st.lists(st.integers(0, 9), max_size=4), max_size=4) | JSON,
        "Input type": st.lists(st.sampled_from(["float", "c10::Half", "Scalar", "", "long int"]), max_size=4) | JSON,
        "Concrete Inputs": st.lists(st.sampled_from(["", "[1, 1]", "[2]", "True", "same", "x"]), max_size=9) | JSON,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": JSON, "dram__bytes.sum": JSON,
        "gpu__time_duration.sum": JSON}) | JSON,
})


@FUZZ
@given(st.binary(max_size=2048) | mutated(SEEDS, KINETO_JUNK))
def test_fuzz_bytes_end_in_workload_or_input_error(data):
    outcome(data)


@FUZZ
@given(st.lists(EVENT, max_size=25), st.none() | JSON)
def test_fuzz_event_structures(events, props):
    outcome(json.dumps({"deviceProperties": props, "traceEvents": events}).encode())
