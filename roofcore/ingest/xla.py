"""JAX / XLA: ``compiled.cost_analysis()`` saved as JSON (docs/formats.md).

``jax-cost-analysis`` — one row per compiled program. Accepted shapes (JSON; a Python ``repr`` of the same, as
``print(compiled.cost_analysis())`` shows it, is accepted too):

* ``{"flops": 108.0, "bytes accessed": 120.0, ...}`` — one program, named after the file;
* ``[{...}]`` — older JAX's list of one dict (several dicts: programs ``<file>[0]``, ``<file>[1]`` ...);
* ``[{"name": "train_step", "cost": {...} | [{...}], "time_ms": 3.1, "count": 2}, ...]`` — named programs;
* ``{"train_step": {...}, "eval_step": {"cost": {...}, "time_s": 0.01}}`` — named programs keyed by name;
* ``{"device": "TPU v5 lite", "programs": <any of the above>}`` — the same, with the device (``device`` or
  ``device_kind``, as ``jax.devices()[0].device_kind`` gives it).

Fields (XLA ``HloCostAnalysis``; numbers are per execution): ``flops`` → flops (XLA omits zero-valued keys, so
an absent ``flops`` is 0); ``bytes accessed`` → ``bytes_hbm`` (XLA's estimate of operand + output bytes, not
measured HBM traffic — warned; absent, the ``bytes accessed<operand>{}`` / ``bytes accessedout{}`` breakdown is
summed, else unknown); ``transcendentals`` → column ``transcendentals`` (not added to FLOPs); ``optimal_seconds``
→ column ``optimal_s`` (XLA's model estimate, never a time; negative sentinels ignored); ``utilization*``
ignored. A measured time may be added per program as ``time_s`` / ``time_ms`` / ``time_us`` / ``time_ns``
(per execution) and ``count`` (executions; FLOPs, bytes and time are multiplied by it). A program with a
non-numeric or negative value is skipped with the reason.

The xprof Roofline Model CSV is read by :mod:`.xprof`.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import PurePath
from typing import Any

import numpy as np

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_text, make_frame, register_format, skip

COST = "jax-cost-analysis"

COST_HINT = ("save it with json.dump(compiled.cost_analysis(), f), where compiled = "
             "jax.jit(fn).lower(*args).compile().")
TIME_KEYS = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6, "time_ns": 1e-9}
COST_KEYS = ("flops", "bytes accessed", "transcendentals", "optimal_seconds", "utilization")
_BREAKDOWN = re.compile(r"^bytes accessed(\d+|out)\{[^}]*\}$")
_REPR_LIMIT = 4 * 1024 * 1024  # Python-literal fallback only for small inputs
MAX_COUNT = 2**53  #: launches / executions beyond this are not a count (and not exact as floats)

# --------------------------------------------------------------------------------------------- cost analysis


def sniff_cost(head: str, name: str) -> bool:
    if head.lstrip()[:1] not in ("{", "[") or '"traceEvents"' in head:
        return False
    return bool(re.search(r"""["'](bytes accessed|optimal_seconds|transcendentals)["']\s*:""", head)) or (
        bool(re.search(r"""["']flops["']\s*:""", head)) and bool(re.search(r"""["'](cost|programs)["']\s*:""", head)))


def _load_doc(text: str, source: str) -> object:
    limits.check_json_depth(text.encode("utf-8", "surrogatepass"), source)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        err = e
    except RecursionError:
        raise InputError(where=source, text="the input is nested too deeply to read.") from None
    if "'" in text and len(text) <= _REPR_LIMIT:  # print(compiled.cost_analysis()) pasted: a Python literal
        try:
            return ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise InputError(where=f"{source}: line {err.lineno}, column {err.colno}", text=f"not valid JSON: {err.msg}.",
                     hint=COST_HINT)


def _is_cost(d: object) -> bool:
    return isinstance(d, dict) and any(isinstance(k, str) and (k in COST_KEYS or k.startswith(("bytes accessed",
                                       "utilization"))) for k in d)


def show_value(v: object) -> str:
    """A value as a message shows it: a number compactly, anything else as JSON, at most 60 characters."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v:g}"
    try:
        return json.dumps(v)[:60]
    except (TypeError, ValueError):
        return repr(v)[:60]


def _number(v: object, key: str) -> float:
    """A finite, non-negative number (numeric strings accepted); anything else raises ValueError with a reason."""
    x: float | None = None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        x = float(v)
    elif isinstance(v, str):
        try:
            x = float(v.replace(",", ""))
        except ValueError:
            x = None
    if x is None or not math.isfinite(x):
        raise ValueError(f"{key}: expected a non-negative number, found {show_value(v)}")
    if x < 0:
        raise ValueError(f"{key}: expected a non-negative number, found {show_value(v)}")
    return x


def _programs(doc: object, stem: str, source: str) -> tuple[list[tuple[str, str, object]], str | None]:
    """(name, path, entry) per program, and the device if the file names one."""
    device = None
    if isinstance(doc, dict) and "programs" in doc and not _is_cost(doc):
        dev = doc.get("device", doc.get("device_kind"))
        device = dev.strip() if isinstance(dev, str) and dev.strip() else None
        doc = doc["programs"]
        prefix = "$.programs"
    else:
        prefix = "$"
    if _is_cost(doc):
        return [(stem, prefix, doc)], device
    if isinstance(doc, list):
        if not doc:
            raise InputError(where=f"{source}: {prefix}", expected="a cost dict or a list of programs",
                             found="an empty list", hint=COST_HINT)
        out: list[tuple[str, str, object]] = []
        for i, entry in enumerate(doc):
            if isinstance(entry, dict) and "cost" in entry:
                name = entry.get("name")
                out.append((name.strip() if isinstance(name, str) and name.strip() else f"{stem}[{i}]",
                            f"{prefix}[{i}]", entry))
            else:
                out.append((stem if len(doc) == 1 else f"{stem}[{i}]", f"{prefix}[{i}]", entry))
        return out, device
    if isinstance(doc, dict):
        if device is None:
            dev = doc.get("device", doc.get("device_kind"))
            device = dev.strip() if isinstance(dev, str) and dev.strip() else None
        entries = [(str(k), f"{prefix}.{k}", v) for k, v in doc.items() if k not in ("device", "device_kind")]
        if not entries:
            raise InputError(where=f"{source}: {prefix}", expected="cost keys (flops, bytes accessed) or named "
                             "programs", found="an empty object", hint=COST_HINT)
        return entries, device
    if doc is None:
        raise InputError(where=f"{source}: {prefix}", expected="a cost dict", found="null (cost_analysis() "
                         "returns None on some backends)",
                         hint="use a backend that reports costs (CPU, GPU, TPU), or write flops and bytes yourself "
                         "in an inventory file.")
    raise InputError(where=f"{source}: {prefix}", expected="a cost dict or a list of programs",
                     found=f"a JSON {type(doc).__name__}", hint=COST_HINT)


def _program_row(name: str, entry: object, notes: dict[str, list[str]]) -> dict[str, str | float]:
    """One program's row; raises ValueError with a reason when it cannot be used."""
    if isinstance(entry, list) and len(entry) == 1 and isinstance(entry[0], dict):
        entry = entry[0]  # older JAX: [{...}]
    if not isinstance(entry, dict):
        raise ValueError(f"expected a cost dict, found {show_value(entry)}")
    record = entry
    cost = entry.get("cost", entry) if "cost" in entry else entry
    if isinstance(cost, list) and len(cost) == 1 and isinstance(cost[0], dict):
        cost = cost[0]
    if cost is None:
        raise ValueError("cost: expected a cost dict, found null (cost_analysis() returns None on some backends)")
    if not isinstance(cost, dict):
        raise ValueError(f"cost: expected a cost dict, found {show_value(cost)}")
    if not _is_cost(cost):
        keys = ", ".join(map(str, list(cost)[:6])) or "none"
        raise ValueError(f"expected cost keys (flops, bytes accessed), found keys {keys}")
    row: dict[str, str | float] = {"name": name}
    if "flops" in cost:
        row["flops"] = _number(cost["flops"], "flops")
    else:
        row["flops"] = 0.0
        notes["no_flops"].append(name)
    if "bytes accessed" in cost:
        row["bytes_hbm"] = _number(cost["bytes accessed"], "bytes accessed")
    else:
        parts = [_number(v, k) for k, v in cost.items() if isinstance(k, str) and _BREAKDOWN.match(k)]
        row["bytes_hbm"] = float(sum(parts)) if parts else np.nan
    row["transcendentals"] = _number(cost["transcendentals"], "transcendentals") if "transcendentals" in cost else 0.0
    opt = cost.get("optimal_seconds")
    row["optimal_s"] = np.nan
    if opt is not None:
        if isinstance(opt, (int, float)) and not isinstance(opt, bool) and math.isfinite(opt) and opt >= 0:
            row["optimal_s"] = float(opt)
        else:
            notes["bad_optimal"].append(name)
    times = [k for k in TIME_KEYS if k in record or (record is not cost and k in cost)]
    if len(times) > 1:
        raise ValueError(f"expected one time key, found {', '.join(times)}")
    row["time_s"] = np.nan
    if times:
        key = times[0]
        v = record.get(key, cost.get(key) if isinstance(cost, dict) else None)
        row["time_s"] = _number(v, key) * TIME_KEYS[key]
    count = record.get("count", 1)
    if (isinstance(count, bool) or not isinstance(count, (int, float)) or not 1 <= count <= MAX_COUNT
            or int(count) != count):
        raise ValueError(f"count: expected a whole number of executions ≥ 1, found {show_value(count)}")
    row["count"] = count = int(count)
    for key in ("flops", "bytes_hbm", "transcendentals", "optimal_s", "time_s"):
        row[key] = float(row[key]) * count
    return row


@register_format(COST, "JAX compiled.cost_analysis() as JSON: flops and bytes accessed per program (XLA "
                 "estimates; add time_ms per program for measured times)", sniff_cost, priority=15)
def parse_cost(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """One row per compiled program (accepted shapes and fields in the module docstring)."""
    text = check_text(data, source)
    doc = _load_doc(text, source)
    stem = PurePath(source).name
    for suffix in (".json", ".txt"):
        stem = stem.removesuffix(suffix)
    entries, device = _programs(doc, stem or "program", source)
    rows: list[dict[str, str | float]] = []
    skipped: list[Skipped] = []
    notes: dict[str, list[str]] = {"no_flops": [], "bad_optimal": []}
    for name, path, entry in entries:
        try:
            row = _program_row(name, entry, notes)
        except ValueError as e:
            skipped.append(skip(source, path, str(e)))
            continue
        row["row"] = path
        rows.append(row)
    if not rows:
        first = skipped[0]
        raise InputError(where=f"{source}: {first.row}", text=f"no usable program; the first problem: {first.reason}.",
                         hint=COST_HINT)
    n = len(rows)
    columns: dict[str, object] = {key: [r[key] for r in rows] for key in
                                  ("name", "count", "flops", "time_s", "bytes_hbm", "row")}
    columns["source"] = [source] * n
    columns["transcendentals"] = np.array([r["transcendentals"] for r in rows], dtype=np.float64)
    columns["optimal_s"] = np.array([r["optimal_s"] for r in rows], dtype=np.float64)
    frame = make_frame(columns, n)
    frame["transcendentals"] = frame["transcendentals"].astype(np.float64)
    frame["optimal_s"] = frame["optimal_s"].astype(np.float64)
    warnings = []
    if frame["bytes_hbm"].notna().any():
        warnings.append("'bytes accessed' is XLA's estimate of the bytes each program's operations read and write "
                        "(operands + outputs), not measured HBM traffic: reuse in caches and on-chip memory is not "
                        "modelled, so the HBM intensities are estimates.")
    if frame["bytes_hbm"].isna().any():
        warnings.append(f"{int(frame['bytes_hbm'].isna().sum())} program(s) give no 'bytes accessed': their bytes "
                        "are unknown.")
    if notes["no_flops"]:
        warnings.append(f"no 'flops' key for {', '.join(notes['no_flops'][:5])}: read as 0 (XLA leaves out "
                        "zero-valued keys).")
    if notes["bad_optimal"]:
        warnings.append(f"optimal_seconds of {', '.join(notes['bad_optimal'][:5])} is negative or not a number (a "
                        "'not estimated' sentinel): ignored.")
    if frame["time_s"].isna().all():
        warnings.append("no measured time: cost_analysis() gives work, not time (optimal_seconds is XLA's model "
                        "estimate, kept in optimal_s and never used as a time). Hint: add \"time_ms\" to each "
                        "program (timed after block_until_ready()) to compare it with the roofline.")
    meta = {"profiler": "JAX cost_analysis (XLA HloCostAnalysis)"}
    return Workload(frame=frame, name=source, sources=(source,), formats=(COST,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)
