"""Workload builders: the new op formulas by hand, attention traffic, GQA, the transformer template and
the 7B decode acceptance test (memory-bound on HBM on every catalog GPU, time ≈ (weights + KV) ÷ bandwidth)."""

import math

import numpy as np
import pytest
from roofhelpers import make_hw, workload_of

from roofcore import InputError, ingest, ops
from roofcore.analyze import analyze
from roofcore.builders import BUILDERS, attention, build_workload, transformer, unfused_attention
from roofcore.catalog import load_catalogs

# ------------------------------------------------------------------------------------------- op formulas


def test_batched_matmul_is_batch_times_matmul():
    k = ops.batched_matmul(3, 4, 5, 6, "bf16")
    assert k.flops == 3 * 2 * 4 * 5 * 6
    assert k.bytes == {"hbm": 3 * (4 * 6 + 6 * 5 + 4 * 5) * 2}
    mixed = ops.batched_matmul(2, 4, 5, 6, "bf16", b_dtype="int8", out_dtype="fp32")
    assert mixed.bytes["hbm"] == 2 * (4 * 6 * 2 + 6 * 5 * 1 + 4 * 5 * 4)
    assert (mixed.precision, mixed.unit) == ("bf16", "matrix")


def test_softmax_and_rmsnorm():
    s = ops.softmax(4, 10, "fp32")
    assert s.flops == 5 * 40 and s.bytes["hbm"] == 2 * 40 * 4 and s.unit == "vector"
    r = ops.rmsnorm(3, 8, "bf16")
    assert r.flops == 4 * 24 and r.bytes["hbm"] == (2 * 24 + 8) * 2 and r.unit == "vector"


def test_flash_attention_flops_bytes_causal_and_gqa():
    b, h, q, s, d = 2, 4, 3, 5, 8
    k = ops.flash_attention(b, h, q, s, d, "bf16")
    assert k.flops == 4 * b * h * q * s * d
    assert k.bytes["hbm"] == (2 * b * h * q * d + 2 * b * h * s * d) * 2
    # causal: queries are the last q of s positions: 3·5 − 3·2/2 = 12 pairs; square: n(n+1)/2
    assert ops.flash_attention(b, h, q, s, d, "bf16", causal=True).flops == 4 * b * h * d * 12
    assert ops.flash_attention(1, 1, 6, 6, 1, "bf16", causal=True).flops == 4 * 21
    assert ops.flash_attention(1, 1, 1, 100, 1, "bf16", causal=True).flops == 4 * 100  # one decode query sees all keys
    gqa = ops.flash_attention(b, h, q, s, d, "bf16", kv_heads=1, kv_dtype="fp8")
    assert gqa.bytes["hbm"] == 2 * b * h * q * d * 2 + 2 * b * 1 * s * d * 1
    with pytest.raises(InputError, match="divisor"):
        ops.flash_attention(1, 4, 1, 1, 1, "bf16", kv_heads=3)


def test_conv2d():
    # 1×3×8×8 input, 4 filters 3×3, stride 2, padding 1 -> P = Q = ⌊(8 + 2 − 3)/2⌋ + 1 = 4
    k = ops.conv2d(1, 3, 8, 8, 4, 3, 3, "fp32", stride=2, padding=1)
    assert k.flops == 2 * 1 * 4 * 3 * 3 * 3 * 4 * 4
    assert k.bytes["hbm"] == (1 * 3 * 8 * 8 + 4 * 3 * 3 * 3 + 1 * 4 * 4 * 4) * 4
    assert ops.conv2d(2, 1, 5, 7, 1, 3, 3, "bf16").flops == 2 * 2 * 1 * 1 * 9 * 3 * 5  # P=3, Q=5
    with pytest.raises(InputError):
        ops.conv2d(1, 1, 2, 2, 1, 5, 5, "bf16")


def test_embedding_and_per_example_matmul():
    e = ops.embedding(10, 16, 1000, "bf16")
    assert e.flops == 0 and e.bytes["hbm"] == 10 * 16 * 2 + 8 * 10 + 10 * 16 * 2
    assert ops.embedding(10, 16, 1000, "int8", out_dtype="bf16").bytes["hbm"] == 160 + 80 + 320
    p = ops.per_example_matmul(2, 3, 4, "bf16")
    assert p.flops == 2 * 2 * 3 * 4 and p.bytes["hbm"] == (2 * 3 + 2 * 3 * 4 + 2 * 4) * 2


def test_per_example_weights_intensity_tends_to_one():
    """Seed §12.1: I = DF/(D + DF + F) → 1 FLOP/B for large D, F (in bf16), whatever the batch."""
    for d, f in ((64, 64), (1024, 1024), (8192, 16384)):
        k = ops.per_example_matmul(32, d, f, "bf16")
        assert k.flops / k.bytes["hbm"] == pytest.approx(d * f / (d + d * f + f))
    big = ops.per_example_matmul(256, 8192, 16384, "bf16")
    assert big.flops / big.bytes["hbm"] == pytest.approx(1.0, rel=2e-4)
    # bandwidth-bound on any device with a ridge above 1 FLOP/B
    r = analyze(workload_of(big), make_hw(100e12, 2e12)).table(messages=False)
    assert r["bound"][0] == "memory:hbm"


@pytest.mark.parametrize("n", [1, 2, 4, 8, 6])
def test_collectives_ring_and_tree(n):
    s = 64e6
    frac = (n - 1) / n
    steps = math.ceil(math.log2(n)) if n > 1 else 0
    ar = ops.all_reduce(s, n, "bf16")
    assert ar.bytes == {"hbm": 2 * s, "nvlink": pytest.approx(2 * frac * s)}
    assert ar.flops == pytest.approx(frac * s / 2)
    tree = ops.all_reduce(s, n, "fp32", algorithm="tree", link="ici")
    assert tree.bytes["ici"] == 2 * steps * s and tree.flops == steps * s / 4
    ag = ops.all_gather(s, n, "bf16")
    assert ag.bytes == {"hbm": pytest.approx(s / n + s), "nvlink": pytest.approx(frac * s)} and ag.flops == 0
    rs = ops.reduce_scatter(s, n, "bf16", algorithm="tree")
    assert rs.bytes == {"hbm": pytest.approx(s + s / n), "nvlink": pytest.approx(frac * s)}
    assert rs.flops == pytest.approx(frac * s / 2)
    a2a = ops.all_to_all(s, n, "bf16", link="xgmi")
    assert a2a.bytes == {"hbm": 2 * s, "xgmi": pytest.approx(frac * s)} and a2a.flops == 0
    assert ar.unit == "vector" and ar.precision == "bf16"


def test_collectives_refuse_bad_inputs():
    with pytest.raises(InputError, match="chips"):
        ops.all_reduce(1e6, 2.5, "bf16")
    with pytest.raises(InputError, match="ring or tree"):
        ops.all_gather(1e6, 4, "bf16", algorithm="mesh")
    with pytest.raises(InputError, match="link"):
        ops.all_to_all(1e6, 4, "bf16", link="dram")


def test_all_reduce_on_a_link_roof():
    """The link bytes are what bind a large all-reduce on a device whose link is slower than HBM."""
    hw = make_hw(100e12, 2e12, links={"nvlink": 450e9})
    k = ops.all_reduce(1e9, 8, "bf16")
    t = analyze(workload_of(k), hw).table(messages=False)
    assert t["bound"][0] == "link:nvlink"
    assert t["t_roof_s"][0] == pytest.approx(2 * 7 / 8 * 1e9 / 450e9)


# ------------------------------------------------------------------------------- YAML inventory with ops

YAML = b"""
name: new ops
kernels:
  - {name: bmm, op: batched_matmul, batch: 8, m: 128, n: 64, k: 32, dtype: bf16, b_dtype: int8}
  - {name: sm, op: softmax, rows: 1024, cols: 512, dtype: bf16}
  - {name: rms, op: rmsnorm, rows: 16, hidden: 4096, dtype: bf16}
  - {name: fa, op: flash_attention, batch: 2, heads: 32, kv_heads: 8, q_len: 1, kv_len: 4096, head_dim: 128,
     dtype: bf16, kv_dtype: fp8, causal: true}
  - {name: conv, op: conv2d, n: 8, c: 64, h: 56, w: 56, k: 64, r: 3, s: 3, stride: 1, padding: 1, dtype: fp16}
  - {name: emb, op: embedding, tokens: 2048, hidden: 4096, vocab: 32000, dtype: bf16}
  - {name: pex, op: per_example_matmul, batch: 16, d: 512, f: 256, dtype: bf16}
  - {name: ar, op: all_reduce, message_bytes: 64 MiB, chips: 8, dtype: bf16, algorithm: ring, count: 2}
  - {name: ag, op: all_gather, message_bytes: 1e6, chips: 4, dtype: bf16, link: ici}
  - {name: rs, op: reduce_scatter, message_bytes: 1e6, chips: 4, dtype: fp32, algorithm: tree}
  - {name: a2a, op: all_to_all, message_bytes: 1e6, chips: 4, dtype: bf16, link: xgmi}
"""


def test_every_new_op_works_from_yaml():
    w = ingest.read(YAML, name="ops.yaml")
    assert w.skipped == () and len(w) == 11
    f = w.frame.set_index("name")
    assert f.loc["bmm", "flops"] == ops.batched_matmul(8, 128, 64, 32, "bf16").flops
    assert f.loc["bmm", "bytes_hbm"] == 8 * (128 * 32 * 2 + 32 * 64 + 128 * 64 * 2)
    assert f.loc["sm", "bytes_hbm"] == 2 * 1024 * 512 * 2
    assert f.loc["rms", "flops"] == 4 * 16 * 4096
    assert f.loc["fa", "bytes_hbm"] == 2 * 2 * 32 * 128 * 2 + 2 * 2 * 8 * 4096 * 128 * 1
    assert f.loc["fa", "flops"] == 4 * 2 * 32 * 4096 * 128
    assert f.loc["conv", "flops"] == 2 * 8 * 64 * 64 * 9 * 56 * 56 and f.loc["conv", "precision"] == "fp16"
    assert f.loc["emb", "flops"] == 0 and f.loc["emb", "bytes_hbm"] == 2 * 2048 * 4096 * 2 + 8 * 2048
    assert f.loc["pex", "flops"] == 2 * 16 * 512 * 256
    s = 64 * 2**20
    assert f.loc["ar", "bytes_nvlink"] == pytest.approx(2 * 2 * 7 / 8 * s)  # count 2
    assert f.loc["ar", "bytes_hbm"] == 2 * 2 * s
    assert f.loc["ag", "bytes_ici"] == pytest.approx(0.75e6) and np.isnan(f.loc["ag", "bytes_nvlink"])
    assert f.loc["rs", "flops"] == pytest.approx(0.75e6 / 4)
    assert f.loc["a2a", "bytes_xgmi"] == pytest.approx(0.75e6)
    # and it analyses: collectives on their link where the device has it
    hw = make_hw(100e12, 2e12, links={"nvlink": 450e9, "ici": 100e9, "xgmi": 100e9})
    t = analyze(w, hw).table(messages=False).set_index("name")
    assert t.loc["ar", "bound"] == "link:nvlink"
    assert t.loc["sm", "bound"] == "memory:hbm"


def test_yaml_op_parameter_errors_name_the_parameter():
    bad = b"""kernels:
  - {name: ok, op: softmax, rows: 1, cols: 2, dtype: bf16}
  - {name: a, op: all_reduce, message_bytes: 1e6, chips: 3, algorithm: mesh}
  - {name: b, op: flash_attention, batch: 1, heads: 4, kv_heads: 3, q_len: 1, kv_len: 8, head_dim: 4}
  - {name: c, op: flash_attention, batch: 1, heads: 4, q_len: 1, kv_len: 8, head_dim: 4, causal: 'yes'}
  - {name: d, op: all_gather, message_bytes: 3 s, chips: 2}
"""
    w = ingest.read(bad, name="bad.yaml")
    assert len(w) == 1
    reasons = {s.row: s.reason for s in w.skipped}
    assert "ring or tree" in reasons["$.kernels[1].algorithm"]
    assert "divisor" in reasons["$.kernels[2].kv_heads"]
    assert "true or false" in reasons["$.kernels[3].causal"]
    assert "$.kernels[4].message_bytes" in reasons


# -------------------------------------------------------------------------------------------- attention


def test_flash_moves_less_than_unfused():
    kw = dict(batch=4, heads=32, q_len=2048, kv_len=2048, head_dim=128)
    flash = attention(**kw, flash=True)
    unfused = attention(**kw, flash=False)
    assert list(unfused.frame["name"]) == ["attn_scores", "attn_softmax", "attn_pv"]
    fb, ub = flash.frame["bytes_hbm"].sum(), unfused.frame["bytes_hbm"].sum()
    assert fb < ub / 10  # the score matrix (B·H·q·kv) never leaves the chip
    # unfused by hand: QKᵀ and PV each read Q/K (or P/V) and write S (or O); softmax reads and writes S
    b, h, q, s, d = 4, 32, 2048, 2048, 128
    scores = b * h * q * s * 2
    assert ub == (b * h * q * d * 2 + b * h * s * d * 2 + scores) * 2 + 2 * scores
    assert unfused.frame["flops"].sum() == 4 * b * h * q * s * d + 5 * b * h * q * s
    # causal flash skips the masked half; unfused computes everything
    assert flash.frame["flops"].sum() == 4 * b * h * d * (q * s - q * (q - 1) / 2)


def test_gqa_kv_bytes_use_kv_heads():
    mha = unfused_attention(batch=1, heads=32, q_len=1, kv_len=4096, head_dim=128)
    gqa = unfused_attention(batch=1, heads=32, kv_heads=8, q_len=1, kv_len=4096, head_dim=128)
    k_mha = mha[0].bytes["hbm"] - (32 * 128 + 32 * 4096) * 2
    k_gqa = gqa[0].bytes["hbm"] - (32 * 128 + 32 * 4096) * 2
    assert k_mha == 32 * 4096 * 128 * 2 and k_gqa == 8 * 4096 * 128 * 2

    base = dict(layers=2, hidden=4096, heads=32, ffn=11008, vocab=32000, batch=1, seq=1024, phase="decode")
    full = transformer(**base).frame.set_index("name")
    grouped = transformer(**base, kv_heads=8).frame.set_index("name")
    # projection: Q keeps 32 heads, K and V shrink to 8 heads of 128
    assert grouped.loc["layer0/qkv_proj", "weight_bytes"] == 4096 * (32 + 2 * 8) * 128 * 2
    assert full.loc["layer0/qkv_proj", "weight_bytes"] == 4096 * 3 * 4096 * 2
    # attention reads the KV cache at kv_heads
    q_o = 2 * 1 * 32 * 1 * 128 * 2
    assert grouped.loc["layer0/attention", "bytes_hbm"] - q_o == 2 * 1024 * 8 * 128 * 2
    assert full.loc["layer0/attention", "bytes_hbm"] - q_o == 2 * 1024 * 32 * 128 * 2
    assert grouped.loc["layer0/kv_cache_write", "bytes_hbm"] == 2 * 8 * 128 * (2 + 2)


# ------------------------------------------------------------------------------------ transformer template


SEVEN_B = dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008, vocab=32000)


def test_transformer_kernel_list_groups_and_weights():
    w = transformer(**SEVEN_B, batch=2, seq=128, phase="prefill")
    f = w.frame
    assert w.formats == ("builder",) and w.sources == ("builder:transformer",)
    assert f["name"].is_unique and (f["count"] == 1).all()
    per_layer = ["attn_norm", "qkv_proj", "rope", "kv_cache_write", "attention", "o_proj", "attn_residual",
                 "ffn_norm", "ffn_gate", "ffn_up", "ffn_act", "ffn_down", "ffn_residual"]
    assert list(f["name"][:14]) == ["embedding", *(f"layer0/{op}" for op in per_layer)]
    assert list(f["name"][-2:]) == ["final_norm", "lm_head"]
    assert len(f) == 1 + 32 * len(per_layer) + 2
    assert set(f["group"]) == {"embedding", "final_norm", "lm_head", *per_layer}
    by_layer = transformer(**SEVEN_B, batch=1, seq=8, group_by="layer/op").frame
    assert by_layer["group"][1] == "layer0/attn_norm" and by_layer["group"].iloc[-1] == "head/lm_head"
    # weights: every matrix once (the embedding gather reads rows, not the table) + norm scales
    matrices = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 32000 * 4096
    norms = (2 * 32 + 1) * 4096
    assert f["weight_bytes"].sum() == (matrices + norms) * 2
    # prefill: T = batch·seq tokens through each projection; logits for the last token of each sequence
    g = f.set_index("name")
    assert g.loc["layer0/qkv_proj", "flops"] == 2 * 256 * 3 * 4096 * 4096
    assert g.loc["lm_head", "flops"] == 2 * 2 * 32000 * 4096
    assert g.loc["layer0/attention", "flops"] == 4 * 2 * 32 * 128 * (128 * 129 / 2)
    assert (f["weight_bytes"] <= f["bytes_hbm"]).all()


def test_transformer_precisions_and_unfused():
    base = dict(**SEVEN_B, batch=1, seq=512, phase="decode")
    bf16 = transformer(**base).frame.set_index("name")
    int4 = transformer(**base, weight_dtype="int4", kv_dtype="fp8").frame.set_index("name")
    # int4 weights: a quarter of the bf16 weight bytes; the compute ceiling stays bf16
    assert int4.loc["layer0/ffn_down", "weight_bytes"] == bf16.loc["layer0/ffn_down", "weight_bytes"] / 4
    assert int4.loc["layer0/ffn_down", "precision"] == "bf16"
    assert int4["bytes_hbm"].sum() < bf16["bytes_hbm"].sum() / 3
    assert int4.loc["layer0/attention", "bytes_hbm"] < bf16.loc["layer0/attention", "bytes_hbm"]
    unfused = transformer(**base, flash=False).frame
    assert {"layer0/attn_scores", "layer0/attn_softmax", "layer0/attn_pv"} <= set(unfused["name"])
    non_gated = transformer(**base, gated_ffn=False).frame
    assert "layer0/ffn_gate" not in set(non_gated["name"])


def test_7b_decode_is_hbm_bound_on_every_gpu_at_weights_plus_kv_over_bandwidth():
    """Acceptance: a 7B-class model in decode at batch 1 is memory-bound on HBM on every catalog GPU, and
    its per-token time (Σ t_roof) is within 10% of (weight bytes + KV-cache bytes) ÷ HBM bandwidth."""
    context = 2048
    w = transformer(**SEVEN_B, batch=1, seq=context, phase="decode")
    # the expected bytes, independently: a Llama-7B's parameters (every matrix, embedding table and norm
    # scales) at 2 bytes, plus the KV cache of 2048 positions: K and V, 32 layers × 4096 wide, bf16
    params = 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert 6.5e9 < params < 7.0e9
    kv_cache = 2 * 32 * context * 4096 * 2
    expected_bytes = params * 2 + kv_cache
    gpus = [h for h in load_catalogs() if h.kind.value == "gpu"]
    assert len(gpus) >= 10
    a = analyze(w, gpus)
    for hw in gpus:
        t = a.table(hw.id, messages=False)
        assert (t["bound"] == "memory:hbm").all(), (hw.id, t.loc[t["bound"] != "memory:hbm", ["name", "bound"]])
        per_token = t["t_roof_s"].sum()
        expected = expected_bytes / hw.offchip.bandwidth
        assert per_token == pytest.approx(expected, rel=0.10), hw.id


def test_transformer_rejects_bad_shapes():
    with pytest.raises(InputError, match="kv_heads"):
        transformer(**{**SEVEN_B, "kv_heads": 5}, batch=1, seq=8)
    with pytest.raises(InputError, match="context"):
        transformer(**SEVEN_B, batch=1, seq=8, context=4)
    with pytest.raises(InputError, match="decode"):
        transformer(**SEVEN_B, batch=1, seq=8, phase="train")


# ------------------------------------------------------------------------------------------- registry


def test_build_workload_validates_params():
    assert set(BUILDERS) >= {"transformer", "attention"}
    w = build_workload("transformer", {**SEVEN_B, "batch": "4", "seq": 128, "phase": "decode", "kv_dtype": "float8"})
    assert w.name.startswith("transformer") and w.meta["builder"] == "transformer"
    with pytest.raises(InputError) as e:
        build_workload("transfomer", {})
    assert "did you mean 'transformer'" in str(e.value)
    with pytest.raises(InputError) as e:
        build_workload("transformer", {**SEVEN_B, "batch": 1}, where="plan.yaml: $.base")
    assert e.value.where == "plan.yaml: $.base" and "'seq'" in e.value.expected
    with pytest.raises(InputError) as e:
        build_workload("transformer", {**SEVEN_B, "batch": 1, "seq": 8, "kv_head": 8})
    assert e.value.where == "builder.kv_head" and "kv_heads" in e.value.hint
    with pytest.raises(InputError) as e:
        build_workload("transformer", {**SEVEN_B, "batch": 1.5, "seq": 8})
    assert e.value.where == "builder.batch"
    with pytest.raises(InputError) as e:
        build_workload("transformer", {**SEVEN_B, "kv_heads": 6, "batch": 1, "seq": 8})
    assert e.value.where == "builder.kv_heads"
    with pytest.raises(InputError) as e:
        build_workload("attention", {"batch": 1, "heads": 2, "q_len": 1, "kv_len": 4, "head_dim": 8, "flash": "no"})
    assert e.value.where == "builder.flash"
