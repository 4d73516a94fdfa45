"""Nsight Compute exports that carry rates, not totals: NVIDIA's roofline sections (``--section
SpeedOfLight_RooflineChart``, ``SpeedOfLight_Hierarchical{Single,Double,Half}RooflineChart``) give per launch the
thread instructions executed *per cycle* of each FP op, the SM clock and the achieved DRAM bandwidth, and no
duration (docs/formats.md).

Per launch and precision, achieved FLOP/s = (2·fma + mul + add per cycle) × SM clock — the same FLOPs per
instruction as the counters (§3.6a), whichever form the export gives the rate in (``…per_cycle_elapsed``, the
sections' derived ``…_x2``/``_x4`` read back as instructions: :data:`~.ncu_metrics.PER_CYCLE`). Where the launch
has a duration, FLOPs = FLOP/s × duration (a derived figure, said so). Where it has none, the FLOP rate and the
bandwidths go into the frame as ``flops_rate`` (FLOP/s) and ``bandwidth_<level>`` (byte/s): the analysis places
the launch by them (achieved = the FLOP rate, intensity = FLOP rate ÷ bandwidth) and its FLOPs, bytes and time stay
unknown, until a details page of the same launch gives the duration (:mod:`.ncu_merge`)."""

from __future__ import annotations

import numpy as np

from .ncu_metrics import OPS, PER_CYCLE

#: the SM clock a per-cycle rate is multiplied by: the sections use smsp__ (achieved) and sm__ (peaks), the same clock
CLOCKS = ("smsp__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second")
#: bytes column -> the achieved bandwidth metrics (byte/s) giving its rate; the sections' L2 and L1 bandwidths
#: (``derived__lts__lts2xbar_bytes``, L1 writeback bytes) measure other traffic than lts__t_bytes / l1tex__t_bytes
BANDWIDTHS = {"bytes_hbm": (("dram__bytes.sum.per_second",), ("dram__bytes_read.sum.per_second",
                                                              "dram__bytes_write.sum.per_second")),
              "bytes_l2": (("lts__t_bytes.sum.per_second",),), "bytes_l1": (("l1tex__t_bytes.sum.per_second",),)}


def _first_known(m: dict[str, np.ndarray], *alternatives: tuple[str, ...]) -> np.ndarray | None:
    """Per launch, the first alternative whose metrics are all known (each alternative summed); None: none present."""
    out = None
    for alt in alternatives:
        if all(a in m for a in alt):
            v = np.sum([m[a] for a in alt], axis=0)
            out = v if out is None else np.where(np.isnan(out), v, out)
    return out


def clock(m: dict[str, np.ndarray]) -> np.ndarray | None:
    """The SM clock per launch (Hz), None where the export has none."""
    return _first_known(m, *((c,) for c in CLOCKS))


def flop_rates(m: dict[str, np.ndarray], warnings: list[str]) -> dict[str, np.ndarray]:
    """FLOP/s per precision (``fp64``, ``fp32``, ``fp16``) from the per-cycle rates × the SM clock; ``{}`` when the
    export has no per-cycle rate (or no clock, with a warning)."""
    per_op: dict[str, np.ndarray] = {}  # thread instructions per cycle
    for metric, (op, inst) in PER_CYCLE.items():
        if metric in m:
            v = m[metric] * inst
            per_op[op] = np.where(np.isnan(per_op[op]), v, per_op[op]) if op in per_op else v
    if not per_op:
        return {}
    hz = clock(m)
    if hz is None:
        warnings.append("FP instruction rates per cycle without the SM clock (\"SM Frequency\", "
                        "smsp__cycles_elapsed.avg.per_second): FLOP rates unknown.")
        return {}
    out: dict[str, np.ndarray] = {}
    for p, prec in (("d", "fp64"), ("f", "fp32"), ("h", "fp16")):
        parts = [(2.0 if op.endswith("fma") else 1.0) * per_op[op] for op in (f"{p}add", f"{p}mul", f"{p}fma")
                 if op in per_op]
        if parts:
            out[prec] = np.sum(parts, axis=0) * hz
    absent = [op for op in OPS if op not in per_op]
    if absent and len(absent) < len(OPS):
        warnings.append(f"FLOP rates leave out {', '.join(absent)}: the export has no per-cycle rate for them "
                        "(SpeedOfLight_RooflineChart covers fp32 and fp64; add "
                        "--section SpeedOfLight_HierarchicalHalfRooflineChart for fp16).")
    return out


def apply(m: dict[str, np.ndarray], rates: dict[str, np.ndarray], flops: np.ndarray, time_s: np.ndarray,
          cols: dict[str, object], warnings: list[str]) -> np.ndarray:
    """FLOPs where the counters leave them unknown and the launch has a duration (FLOP/s × duration), the
    ``flops_rate`` / ``bandwidth_<level>`` columns for launches without a duration, and the warnings that say
    so. Returns the FLOPs."""
    n = len(time_s)
    rate = np.sum(list(rates.values()), axis=0) if rates else np.full(n, np.nan)
    fill = np.isnan(flops) & np.isfinite(rate) & np.isfinite(time_s)
    if fill.any():
        flops = np.where(fill, rate * time_s, flops)
        warnings.append(f"derived figures: FLOPs of {int(fill.sum()):,} launch(es) = FP instructions per cycle × SM "
                        "clock × duration (NVIDIA's roofline section rates; collect "
                        "sm__sass_thread_inst_executed_op_*_pred_on.sum for counted FLOPs).")
    untimed = np.isnan(time_s)
    bandwidths = {col.replace("bytes_", "bandwidth_"): v for col, alts in BANDWIDTHS.items()
                  if (v := _first_known(m, *alts)) is not None}
    pointed = untimed & np.isfinite(rate) & np.isfinite(bandwidths.get("bandwidth_hbm", np.full(n, np.nan)))
    if (untimed & np.isfinite(rate)).any():
        cols["flops_rate"] = np.where(untimed, rate, np.nan)
        for col, v in bandwidths.items():
            cols[col] = np.where(untimed, v, np.nan)
            cols.setdefault(col.replace("bandwidth_", "bytes_"), np.full(n, np.nan))  # the level, bytes unknown
        warnings.append(f"{int(pointed.sum()):,} of {n:,} launches have rates only (NVIDIA's roofline section: FP "
                        "instructions per cycle × SM clock, DRAM bandwidth) and no duration: each is placed by its "
                        "achieved FLOP/s and intensity (FLOP/s ÷ byte/s), its FLOPs, bytes and time stay unknown; "
                        "load it with a details page of the same launches (ncu --csv with gpu__time_duration.sum) "
                        "for totals.")
    return flops
