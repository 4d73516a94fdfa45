"""Advice true to the file (issue 23, point 7): a PyTorch trace recorded with shapes is never told to record shapes;
it is told which ops have no FLOP formula (longest first, with launches and time), which have one their recorded
inputs do not fit, and how many launches have no launching op. A trace without shapes keeps the record_shapes
advice; a trace without CPU ops is told to record them.

Our fixture tests/data/kineto/no_formula.pt.trace.json (our own names and numbers): aten::mm in bf16 (costed),
aten::histc twice and aten::cumsum (no formula), aten::mm on int64 (a formula its inputs do not fit), a kernel
whose launch is not in the trace, and a host copy.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from roofhelpers import make_hw, sample

import roofcore
from roofcore import advise as adv
from roofcore.ingest.kineto_hint import shapes_recorded, unknown_flops_hint
from roofcore.views import chart_gaps, collect_commands

FIXTURE = Path(__file__).resolve().parent / "data" / "kineto" / "no_formula.pt.trace.json"
HW = make_hw(100e12, 2e12, links={"pcie": 25e9})
NO_FORMULA = ("the trace has input shapes, but roofcore has no FLOP formula for the ops that launched them: "
              "aten::histc (2 launches, 60 µs) and aten::cumsum (1 launch, 10 µs); the recorded inputs do not "
              "fit the FLOP formula of aten::mm (1 launch, 5 µs); 1 launch has no launching op in the trace")


def without_shapes(data: bytes) -> bytes:
    """The same trace as recorded without record_shapes: no Input Dims / Input type / Concrete Inputs."""
    doc = json.loads(data)
    doc.pop("record_shapes", None)
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op":
            for k in ("Input Dims", "Input type", "Concrete Inputs"):
                e["args"].pop(k, None)
    return json.dumps(doc).encode()


def without_cpu_ops(data: bytes) -> bytes:
    doc = json.loads(data)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in ("cpu_op", "cuda_runtime")]
    return json.dumps(doc).encode()


def missing_data(w: roofcore.Workload) -> adv.Recommendation:
    found = [r for r in adv.advise(roofcore.analyze(w, HW)).items if r.rule == "missing_data"]
    assert len(found) == 1
    return found[0]


def test_a_trace_with_shapes_is_told_which_ops_have_no_formula():
    w = roofcore.read(FIXTURE)
    assert shapes_recorded(w)
    assert unknown_flops_hint(w) == NO_FORMULA
    r = missing_data(w)
    assert r.reason.endswith("so no rule can judge them; " + NO_FORMULA + ".")
    assert "record_shapes" not in r.reason and "with_flops" not in r.reason
    commands = collect_commands(w)
    assert commands == ["PyTorch profiler: " + NO_FORMULA + "."]
    a = roofcore.analyze(w, HW)
    assert not any("record_shapes" in c for c in chart_gaps(a, 1).commands)


def test_a_trace_without_shapes_keeps_the_record_shapes_advice():
    w = roofcore.read(without_shapes(FIXTURE.read_bytes()), name="no_shapes.pt.trace.json")
    assert not shapes_recorded(w)
    hint = unknown_flops_hint(w)
    assert "record_shapes=True" in hint and "formula" not in hint
    assert "record_shapes=True" in missing_data(w).reason
    assert any("record_shapes=True" in c for c in collect_commands(w))


def test_a_trace_without_cpu_ops_is_told_to_record_them():
    w = roofcore.read(without_cpu_ops(FIXTURE.read_bytes()), name="gpu_only.pt.trace.json")
    hint = unknown_flops_hint(w)
    assert hint.startswith("the trace has no CPU ops (cpu_op events) to link the kernels to: profile with "
                           "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
    assert hint.endswith("(record_shapes=True is on already)")  # the trace says it recorded shapes
    assert "record_shapes=True is on already" in missing_data(w).reason


def test_every_kernel_known_says_nothing():
    w = roofcore.read(FIXTURE)
    known = w.frame["flops"].notna().to_numpy()
    assert unknown_flops_hint(replace(w, frame=w.frame[known].reset_index(drop=True))) == ""


@pytest.mark.samples
@pytest.mark.parametrize("name", ["pytorch_kineto_t4_amp_record_shapes.json",
                                  "pytorch_kineto_b200_cuda12.9_eager.json.gz",
                                  "pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz"])
def test_real_traces_recorded_with_shapes_name_their_ops(name):
    w = roofcore.read(sample(name))
    r = missing_data(w)
    assert "record_shapes" not in r.reason and "record_shapes" not in " ".join(collect_commands(w))
    if name.startswith("pytorch_kineto_t4"):  # every op has a formula now; 3 launches precede the trace's window
        assert r.reason.endswith("3 launches have no launching op in the trace.")
    if name.startswith("pytorch_kineto_v100"):  # PyTorch 1.9 records no geometry for pooling and reductions
        assert ("do not fit the FLOP formula of aten::max_pool2d_with_indices (6 launches, 1.42 ms), aten::mean "
                "(6 launches, 212 µs) and aten::sum (6 launches, 44 µs).") in r.reason


@pytest.mark.samples
def test_a_real_trace_without_shapes_keeps_the_record_shapes_advice():
    w = roofcore.read(sample("pytorch_kineto_a100_alexnet_trace.json"))
    assert "record_shapes=True" in missing_data(w).reason
