"""The LLM serving planner: a model (Hugging Face ``config.json`` or a bundled preset) on catalog devices — time
to first token, time per output token, throughput, memory and cost — from per-op rooflines times calibrated
efficiencies, and a continuous-batching simulation for a request rate. See docs/llm-planner.md.

:mod:`.config` reads model shapes, :mod:`.costing` builds a step's ops (FLOPs and bytes affine in the step's
tokens, sequences, attention pairs and cached tokens), :mod:`.timing` times them on a device, :mod:`.calibration`
holds the per-class efficiencies (defaults with sources, or fitted on a profile), :mod:`.planner` makes the
static-batch plan, :mod:`.serving` simulates serving.
"""

from __future__ import annotations

from .calibration import DEFAULTS, Calibration, ClassFit, calibrate_file, fit, op_class
from .config import ModelConfig, from_hf, load_model, presets
from .costing import CLASSES, KV_PRECISIONS, KV_READS, WEIGHT_PRECISIONS, Quant, quant, step_ops
from .planner import DevicePlan, LLMPlan, Shape, batch_sweep, kv_bytes_per_token, plan, plan_device
from .serving import Lengths, ServingResult, cheapest, lengths_from_csv, parse_lengths, simulate

__all__ = [
    "CLASSES", "DEFAULTS", "KV_PRECISIONS", "KV_READS", "WEIGHT_PRECISIONS", "Calibration", "ClassFit", "DevicePlan", "LLMPlan",
    "Lengths", "ModelConfig", "Quant", "ServingResult", "Shape", "batch_sweep", "calibrate_file", "cheapest", "fit",
    "from_hf", "kv_bytes_per_token", "lengths_from_csv", "load_model", "op_class", "parse_lengths", "plan",
    "plan_device", "presets", "quant", "simulate", "step_ops",
]
