"""The continuous-batching simulation of roofcore.llm.serving (small runs on a small model)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from roofhelpers import make_hw

from roofcore.cli import main
from roofcore.errors import InputError
from roofcore.llm import (
    Calibration,
    Lengths,
    Shape,
    from_hf,
    lengths_from_csv,
    parse_lengths,
    quant,
    simulate,
)
from roofcore.llm.costing import prefill_x, step_ops
from roofcore.llm.timing import op_times, roofs
from roofcore.units import Dimension, parse

SMALL = {"hidden_size": 256, "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 512,
         "num_hidden_layers": 4, "vocab_size": 1000}


def _hw(capacity: str = "2 GB"):
    hw = make_hw(10e12, 100e9, precision="fp16")
    return replace(hw, levels=(replace(hw.levels[0], capacity=parse(capacity, Dimension.BYTES)),))


def test_low_rate_ttft_is_one_prefill_and_no_queue():
    m, q, hw = from_hf(SMALL), quant("fp16"), _hw()
    r = simulate(m, q, hw, Shape(), Calibration(), rate=0.5, inputs=Lengths("constant", 100, 100),
                 outputs=Lengths("constant", 20, 20), requests=50)
    t = step_ops(m, q)
    prefill = op_times(t, roofs(hw, t, 1, 1), Calibration(), prefill_x(1, 100)).total[0]
    assert r.completed == 50 and r.ttft_p50_s == pytest.approx(prefill, rel=1e-9)  # alone: TTFT = its prefill
    assert r.goodput_share == 1.0 and r.max_running <= 2


def test_high_rate_queues_and_the_kv_budget_caps_the_batch():
    m, q = from_hf(SMALL), quant("fp16")
    low = simulate(m, q, _hw(), Shape(), Calibration(), rate=1.0, inputs=Lengths("constant", 200, 200),
                   outputs=Lengths("constant", 50, 50), requests=200)
    high = simulate(m, q, _hw(), Shape(), Calibration(), rate=1e5, inputs=Lengths("constant", 200, 200),
                    outputs=Lengths("constant", 50, 50), requests=200, ttft_target_s=low.ttft_p99_s)
    assert high.ttft_p99_s > 10 * low.ttft_p99_s and high.goodput_share < 1.0
    assert high.throughput_tok_s > low.throughput_tok_s
    # the cache of one request: 250 tokens × 2·4 layers·2 KV heads·32·2 B = 256 KB; the budget bounds the batch
    per_req = 250 * 2 * 4 * 2 * 32 * 2
    assert high.max_running <= high.kv_budget_bytes // per_req
    tight = _hw("1.12 GB")  # about 16 MB of cache after 1 GiB of workspace
    capped = simulate(m, q, tight, Shape(), Calibration(), rate=1e5, inputs=Lengths("constant", 200, 200),
                      outputs=Lengths("constant", 50, 50), requests=100)
    assert capped.max_running <= capped.kv_budget_bytes // per_req < high.max_running


def test_lengths_parse_and_csv():
    assert parse_lengths("128", "--input") == Lengths("constant", 128, 128)
    assert parse_lengths("64:512", "--input") == Lengths("uniform", 64, 512)
    with pytest.raises(InputError, match="range"):
        parse_lengths("512:64", "--input")
    ins, outs = lengths_from_csv("prompt_tokens,completion_tokens\n10,5\n30,7\n")
    assert ins.values == (10, 30) and outs.values == (5, 7) and ins.mean == 20
    with pytest.raises(InputError, match="columns named"):
        lengths_from_csv("a,b\n1,2\n")


def test_cli_rate_json(capsys):
    assert main(["llm", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "2", "--requests", "40", "--input",
                 "64:256", "--output", "16:64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    s = doc["serving"][0]
    assert s["completed"] == 40 and s["ttft_p50_s"] > 0 and s["tpot_p99_s"] >= s["tpot_p50_s"]
    assert doc["options"][0]["meets"] and doc["options"][0]["cost_per_mtok"] is None  # no price given
