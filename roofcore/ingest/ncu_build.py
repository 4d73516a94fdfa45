"""From launches to the workload: FLOPs (CUDA cores and tensor pipes), precision, bytes per level, time, and the
warnings that say what was derived or is unknown (docs/formats.md)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import InputError
from . import ncu_rates, ncu_tensor
from .ncu_metrics import FLOP_METRICS, OPS, PROFILE_COMMAND, TENSOR_OPS, Launches

# ------------------------------------------------------------------------------------------ deriving


#: bytes column -> rate metrics (byte/s) whose product with the duration gives its bytes
_RATES = {"bytes_hbm": (("dram__bytes.sum.per_second",), ("dram__bytes_read.sum.per_second",
                                                           "dram__bytes_write.sum.per_second")),
          "bytes_l2": (("lts__t_bytes.sum.per_second",),), "bytes_l1": (("l1tex__t_bytes.sum.per_second",),)}
_LEVEL_WORDS = {"bytes_hbm": "DRAM bytes", "bytes_l2": "L2 bytes", "bytes_l1": "L1 bytes"}


def _chain(m: dict[str, np.ndarray], *alternatives: tuple[str, ...]) -> np.ndarray | None:
    """Per launch, the first alternative whose metrics are all known (each alternative is summed)."""
    out = None
    for alt in alternatives:
        if not all(a in m for a in alt):
            continue
        v = m[alt[0]].copy()
        for a in alt[1:]:
            v = v + m[a]
        out = v if out is None else np.where(np.isnan(out), v, out)
    return out


def _tensor_precision(family: str) -> str | None:
    """Input precision named in an ``sm__ops_path_tensor_*`` counter (``src_bf16_dst_fp32`` → bf16)."""
    m = re.search(r"src_([a-z0-9_]+?)(_dst|$)", family)
    src = m.group(1) if m else family
    for key, prec in (("fp4_fp6_fp8", "fp8"), ("bf16", "bf16"), ("tf32", "tf32"), ("fp16", "fp16"), ("fp64", "fp64"),
                      ("fp8", "fp8"), ("e4m3", "fp8"), ("e5m2", "fp8"), ("int8", "int8"), ("s8", "int8"),
                      ("u8", "int8"), ("int4", "int4"), ("s4", "int4"), ("fp4", "fp4"), ("fp32", "tf32")):
        if key in src:
            return prec
    return None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


_PCT_NOTE = " (DRAM throughput only as a % of peak, which is not bytes)"


def _pct_only(other: list[str]) -> bool:
    """Whether the export gives DRAM throughput only as a percentage of the device's peak."""
    return any(re.search(r"dram_throughput|dram__throughput|^DRAM Throughput$", o) for o in other)


def _pipe_tensor(pipe: np.ndarray, names: np.ndarray, cc: str | None, device: str | None, time_s: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Tensor FLOPs from warp-level tensor instructions × FLOP per instruction (:mod:`.ncu_tensor`): per launch
    FLOPs (NaN where the factor is unknown, or puts the launch above its device's peak), input precision (None: not
    stated) and warnings."""
    codes, factors = ncu_tensor.per_launch(names, cc, device)
    per = np.array([f.flops for f in factors] or [np.nan])[codes]
    with np.errstate(invalid="ignore"):
        tensor = np.where(pipe == 0, 0.0, pipe * per)  # no tensor instruction: no tensor FLOPs, whatever the factor
    prec = np.array([f.precision for f in factors] or [None], dtype=object)[codes]
    checked, contradicted = ncu_tensor.contradictions(tensor, time_s, prec, names, codes, factors,
                                                      ncu_tensor.peak_lookup(cc, device))
    used = (np.nan_to_num(pipe) > 0) & ~(np.isnan(checked) & ~np.isnan(tensor))  # contradicted: said apart
    tensor = checked
    n_used = np.bincount(codes[used], minlength=len(factors))
    known: dict[tuple[float, str], int] = {}
    unknown: dict[str, int] = {}
    assumed = 0
    for f, k in zip(factors, n_used, strict=True):
        if not k:
            continue
        if np.isnan(f.flops):
            unknown[f.basis] = unknown.get(f.basis, 0) + int(k)
        else:
            known[(f.flops, f.basis)] = known.get((f.flops, f.basis), 0) + int(k)
        assumed += int(k) if f.precision is None else 0
    notes = []
    exact = "collect sm__ops_path_tensor_* counters (e.g. sm__ops_path_tensor_src_fp16_dst_fp32.sum) for exact tensor FLOPs"
    if known:
        parts = "; ".join(f"× {fl:,.0f} ({basis}) for {_plural(k, 'launch')}" for (fl, basis), k in known.items())
        volta = "; Volta's HMMA.884 steps: 512, or 1,024 accumulating in fp16" if "HMMA.884" in parts else ""
        notes.append("tensor-core FLOPs = sm__inst_executed_pipe_tensor.sum × the FLOPs of one MMA instruction "
                     f"(2·M·N·K for shape M×N×K{volta}): {parts}; {exact}.")
    if unknown:
        parts = "; ".join(f"{basis} ({_plural(k, 'launch')})" if len(unknown) > 1 else basis
                          for basis, k in unknown.items())
        notes.append(f"tensor-core FLOPs unknown for {_plural(sum(unknown.values()), 'launch')}: {parts}; {exact}.")
    if assumed:
        notes.append(f"{_plural(assumed, 'launch')} with tensor instructions: the kernel name states no input "
                     "precision; fp16 assumed.")
    return tensor, prec, notes + contradicted


def _cuda_flops(m: dict[str, np.ndarray], warnings: list[str]) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """CUDA-core FLOPs per precision and in all (None: no counter)."""
    # CUDA-core FLOPs: sm__ counters, smsp__ per launch where the sm__ one is unknown
    ops: dict[str, np.ndarray] = {}
    for op in OPS:
        v = _chain(m, (f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum",),
                   (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum",))
        if v is not None:
            ops[op] = v
    by_prec: dict[str, np.ndarray] = {}
    for p, prec in (("d", "fp64"), ("f", "fp32"), ("h", "fp16")):
        parts = [(2.0 if op.endswith("fma") else 1.0) * ops[op] for op in (f"{p}add", f"{p}mul", f"{p}fma") if op in ops]
        if parts:
            by_prec[prec] = np.sum(parts, axis=0)
    cuda = np.sum(list(by_prec.values()), axis=0) if by_prec else None
    absent = [op for op in OPS if op not in ops]
    if ops and absent:
        warnings.append(f"CUDA-core FLOPs leave out {', '.join(absent)}: their sm__sass_thread_inst_executed_op_"
                        "*_pred_on.sum counters are not in the export.")

    return by_prec, cuda


def _tensor_flops(la: Launches, n: int, cuda: np.ndarray | None, cc_text: str | None, device: str | None,
                  warnings: list[str]) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray, bool]:
    """Tensor FLOPs, their precision per launch, which launches used tensor cores, and whether op counters
    (families) gave them."""
    m = la.metrics
    # tensor FLOPs: op counters (already FLOPs), else pipe instructions × FLOPs per instruction
    families: dict[str, dict[str, np.ndarray]] = {}
    for name, v in m.items():
        t = TENSOR_OPS.match(name)
        if t:
            family = families.setdefault(t.group(2), {})
            key = (t.group(4) or "all") + ("" if t.group(1) == "sm" else "_smsp")
            family[key] = v
    tensor = None
    tensor_prec = None
    tensor_used = np.zeros(n, dtype=bool)  # launches known to have run tensor-core work (FLOPs known or not)
    if families:
        fam_vals: dict[str, np.ndarray] = {}
        for fam, parts_ in families.items():
            fv = parts_.get("all", parts_.get("all_smsp"))
            if fv is None:
                on = parts_.get("on", parts_.get("on_smsp"))
                off = parts_.get("off", parts_.get("off_smsp"))
                fv = off if on is None else (on if off is None else on + off)
                if on is not None and np.nansum(on) > 0:
                    warnings.append(f"2:4-sparse tensor ops counted as executed (sm__ops_path_tensor_{fam}_sparsity_on): "
                                    "compare them with dense roofs with care.")
            assert fv is not None  # a family's counters are all, on or off (_TENSOR_OPS)
            fam_vals[fam] = fv
        stack = np.vstack(list(fam_vals.values()))
        tensor = stack.sum(axis=0)
        precs = np.array([_tensor_precision(f) for f in fam_vals], dtype=object)
        dominant = np.nan_to_num(stack, nan=-1.0).argmax(axis=0)
        tensor_prec = precs[dominant]
        tensor_used = np.nan_to_num(tensor) > 0
    else:
        pipe = _chain(m, ("sm__inst_executed_pipe_tensor.sum",), ("smsp__inst_executed_pipe_tensor.sum",))
        if pipe is not None:
            tensor, tensor_prec, notes = _pipe_tensor(pipe, la.names, cc_text, device, _time(m, n))
            tensor_used = np.nan_to_num(pipe) > 0
            warnings.extend(notes)
        elif cuda is not None:
            warnings.append("no tensor-core counter (sm__inst_executed_pipe_tensor.sum or sm__ops_path_tensor_*): "
                            "FLOPs count CUDA cores only.")

    return tensor, tensor_prec, tensor_used, bool(families)


def _total_flops(cuda: np.ndarray | None, tensor: np.ndarray | None, n: int, warnings: list[str]) -> np.ndarray:
    flops: np.ndarray
    if tensor is None:
        flops = np.full(n, np.nan) if cuda is None else cuda
    elif cuda is None:
        # tensor FLOPs alone: the total for a launch that used tensor cores (its CUDA-core FLOPs, left out, are
        # small beside them), unknown for one that did not (zero would claim it did no work)
        flops = np.where(np.nan_to_num(tensor) > 0, tensor, np.nan)
        only = int((np.nan_to_num(tensor) > 0).sum())
        warnings.append(f"no CUDA-core FLOP counters (sm__sass_thread_inst_executed_op_*): FLOPs are tensor-core "
                        f"FLOPs alone ({_plural(only, 'launch')}), unknown for the other {n - only:,}; add them with "
                        f"--metrics {FLOP_METRICS}.")
    else:
        flops = cuda + tensor
    return flops


def _precision_unit(by_prec: dict[str, np.ndarray], cuda: np.ndarray | None, tensor: np.ndarray | None,
                    tensor_prec: np.ndarray | None, tensor_used: np.ndarray, families: bool, n: int,
                    warnings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    # precision and unit
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    cc0 = np.nan_to_num(cuda) if cuda is not None else np.zeros(n)
    tc0 = np.nan_to_num(tensor) if tensor is not None else np.zeros(n)
    unknown_tc = tensor_used & np.isnan(tensor) if tensor is not None else np.zeros(n, dtype=bool)
    if by_prec:
        names_p = np.array(list(by_prec), dtype=object)
        stack = np.nan_to_num(np.vstack(list(by_prec.values())), nan=-1.0)
        vec = (cc0 > 0) & (cc0 >= tc0) & ~unknown_tc
        precision[vec] = names_p[stack.argmax(axis=0)][vec]
        unit[vec] = "vector"
    if tensor is not None:
        mat = tensor_used & ((tc0 > cc0) | unknown_tc)  # unknown tensor FLOPs: still tensor-core work
        prec_t = np.where(pd.isna(tensor_prec), "fp16", tensor_prec) if tensor_prec is not None else "fp16"
        precision[mat] = np.broadcast_to(prec_t, (n,))[mat]
        unit[mat] = "matrix"
        unknown_t = mat & pd.isna(tensor_prec) if families else np.zeros(n, dtype=bool)
        if unknown_t.any():
            warnings.append(f"{_plural(int(unknown_t.sum()), 'launch')}: tensor-op counter names give no input precision; "
                            "fp16 assumed.")

    return precision, unit


def _time(m: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Seconds per launch: the duration, else cycles / clock, else the details page's Duration."""
    time_s = None
    for alt in (("gpu__time_duration.sum",), ("sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
                ("smsp__cycles_elapsed.avg", "smsp__cycles_elapsed.avg.per_second"),
                ("sm__cycles_elapsed.avg", "gpc__cycles_elapsed.avg.per_second"), ("Duration",)):
        if not all(a in m for a in alt):
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            v = m[alt[0]] / m[alt[1]] if len(alt) == 2 else m[alt[0]]
        v = np.where(np.isfinite(v), v, np.nan)
        time_s = v if time_s is None else np.where(np.isnan(time_s), v, time_s)
    if time_s is None:
        time_s = np.full(n, np.nan)

    return time_s


def _bytes(m: dict[str, np.ndarray], time_s: np.ndarray, n: int, warnings: list[str]
           ) -> tuple[dict[str, object], np.ndarray | None]:
    # bytes: counters, else rate × duration (the details page prints DRAM traffic only as a rate)
    cols: dict[str, object] = {}
    hbm = _chain(m, ("dram__bytes.sum",), ("dram__bytes_read.sum", "dram__bytes_write.sum"),
                 ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"))
    if hbm is None:
        half = _chain(m, ("dram__bytes_read.sum",), ("dram__bytes_op_read.sum",), ("dram__bytes_write.sum",),
                      ("dram__bytes_op_write.sum",))
        if half is not None:
            hbm = half
            warnings.append("DRAM bytes are reads or writes only (the other direction is not in the export).")
    found = {"bytes_hbm": hbm, "bytes_l2": m.get("lts__t_bytes.sum"), "bytes_l1": m.get("l1tex__t_bytes.sum")}
    derived = []
    for col, alts in _RATES.items():
        rate = _chain(m, *alts)
        if rate is None:
            continue
        v = rate * time_s
        have = found[col]
        fill = np.isfinite(v) & (np.isnan(have) if have is not None else True)
        if fill.any():
            found[col] = np.where(fill, v, np.nan if have is None else have)
            derived.append(f"{_LEVEL_WORDS[col]} of {_plural(int(fill.sum()), 'launch')}")
    if derived:
        warnings.append(f"derived figures: {', '.join(derived)} = throughput (byte/s: dram__bytes.sum.per_second, "
                        "the details page's \"Memory Throughput\") × duration, rounded as the export rounds them; "
                        "collect dram__bytes.sum (lts__t_bytes.sum, l1tex__t_bytes.sum) for counted bytes.")
    hbm = found["bytes_hbm"]
    cols["bytes_hbm"] = hbm if hbm is not None else np.full(n, np.nan)
    for col in ("bytes_l2", "bytes_l1"):
        if found[col] is not None:
            cols[col] = found[col]

    return cols, hbm


def _checks(la: Launches, source: str, flops_known: bool, hbm: np.ndarray | None, cols: dict[str, object],
            time_s: np.ndarray, cc_text: str | None, n: int, warnings: list[str], meta: dict[str, str]) -> None:
    """The warnings (or the error) for what the export lacks, and for unreliable launches."""
    has_flops = flops_known
    has_bytes = hbm is not None or "bytes_l2" in cols or "bytes_l1" in cols
    has_time = not np.isnan(time_s).all()
    if not (has_flops or has_bytes or has_time):
        found_other = la.other[:3]
        more = f"e.g. {', '.join(found_other)}" if found_other else "none"
        raise InputError(where=source, text=f"no duration, FLOP or byte metric for a roofline in this export "
                         f"({len(la.other)} other metrics, {more}).", hint=f"profile with: {PROFILE_COMMAND}")
    if not has_flops and not has_bytes:
        meta["time_only"] = "true"
        warnings.append(f"no FLOP or byte counters in this export{_PCT_NOTE if _pct_only(la.other) else ''}: only "
                        "launch times are read (time only; join it with an inventory, or profile with: "
                        f"{PROFILE_COMMAND}).")
    else:
        if not has_flops:
            why = " (a roofline section prints no numbers on the details page)" if la.rules else ""
            if ncu_tensor.family(cc_text) == "none":  # no tensor cores; nvprof also profiles these GPUs
                what = (f"{FLOP_METRICS} (on this pre-Volta GPU, CC {cc_text}, nvprof --metrics flop_count_sp,"
                        "flop_count_dp,flop_count_hp counts them too)")
            else:
                what = f"{FLOP_METRICS},sm__inst_executed_pipe_tensor.sum"
            warnings.append(f"no FLOP counters in this export{why}: FLOPs unknown; add --metrics {what}.")
        if hbm is None:
            warnings.append("no DRAM byte counter (dram__bytes.sum, or dram__bytes_read.sum + dram__bytes_write.sum)"
                            f"{_PCT_NOTE if _pct_only(la.other) else ''}: off-chip bytes unknown.")
        if not has_time:
            warnings.append("no duration (gpu__time_duration.sum or sm__cycles_elapsed.avg[.per_second]): measured "
                            "time unknown.")
    if la.missing:
        items = sorted(la.missing.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{k} ({_plural(v, 'launch')}" + (f", unit {la.bad_units[k]!r}" if k in la.bad_units
                                                                 else "") + ")" for k, v in items[:6])
        warnings.append(f"n/a, empty, negative, non-numeric or wrong-unit values read as unknown: {shown}"
                        + (f" and {len(items) - 6} more metrics" if len(items) > 6 else "") + ".")
    if la.duplicates:
        warnings.append("a metric appears more than once for one launch ID; the last value was used.")
    if n and hbm is not None:
        t_ok = np.where(np.isnan(time_s), np.inf, time_s)
        tiny = int(((t_ok < 1e-6) | (np.nan_to_num(hbm, nan=np.inf) < 1e6)).sum())
        if tiny:
            warnings.append(f"{tiny:,} of {n:,} launches ran under 1 µs or moved under 1 MB of DRAM traffic: ncu replays "
                            "them with flushed caches at base clocks, so their DRAM bytes and intensity are unreliable.")


def derive(la: Launches, source: str, cc_text: str | None = None, device: str | None = None
            ) -> tuple[dict[str, object], list[str], dict[str, str]]:
    """Per-launch FLOPs, precision, unit, bytes and time (docs/formats.md), with warnings.

    ``cc_text`` and ``device`` (compute capability and device name from the export) pick the FLOPs of one
    tensor instruction where the kernel name does not say."""
    m = la.metrics
    n = len(la.ids)
    warnings: list[str] = []
    meta: dict[str, str] = {}
    by_prec, cuda = _cuda_flops(m, warnings)
    rates = ncu_rates.flop_rates(m, warnings) if cuda is None else {}  # the roofline sections' FLOP/s
    tensor, tensor_prec, tensor_used, families = _tensor_flops(la, n, cuda, cc_text, device, warnings)
    flops = _total_flops(cuda, tensor, n, warnings)
    time_s = _time(m, n)
    if rates:  # precision from the rates (FLOP/s, not FLOPs: only which precision dominates counts here)
        by_prec, cuda = rates, np.sum(list(rates.values()), axis=0)
    precision, unit = _precision_unit(by_prec, cuda, tensor, tensor_prec, tensor_used, families, n, warnings)
    cols, hbm = _bytes(m, time_s, n, warnings)
    if rates:
        flops = ncu_rates.apply(m, rates, flops, time_s, cols, warnings)
    _checks(la, source, cuda is not None or tensor is not None, hbm, cols, time_s, cc_text, n, warnings, meta)
    hz = ncu_rates.clock(m)
    if hz is not None:
        cols["sm_clock_hz"] = hz  # to compare exports of the same launch (ncu_merge)
    if la.pids is not None:
        cols["process_id"] = la.pids
    cols.update(flops=flops, time_s=time_s, precision=pd.Categorical(precision), unit=pd.Categorical(unit))
    return cols, warnings, meta
