"""Counters and the formulas on them: which columns hold a counter (``X_sum``, ``X`` or per-instance ``X[i]``),
cells to usable numbers, and rocprof-compute's ``calc_ai`` derivation of FLOPs, precision, unit and bytes per
level (docs/formats.md; the formulas are in the package docstring)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .table import to_floats

VALU_PRECISIONS = (("F16", "fp16"), ("F32", "fp32"), ("F64", "fp64"))

VALU_OPS = (("ADD", 1), ("MUL", 1), ("FMA", 2), ("TRANS", 1))  # FLOPs per lane per instruction

#: MFMA MOPS types; int8 last (integer ops, see :func:`derive`). ``F8`` exists on MI300 and later only: it is
#: counted where the file has it and never reported missing on older GPUs.
MFMA_TYPES = (("F16", "fp16"), ("BF16", "bf16"), ("F32", "fp32"), ("F64", "fp64"), ("F8", "fp8"), ("I8", "int8"))

MFMA_OPTIONAL = ("F8",)

#: matrix counters whose ops per count are not documented for calc_ai (gfx950): reported when non-zero, not counted
MFMA_UNCOUNTED = ("SQ_INSTS_VALU_MFMA_MOPS_F6F4", "SQ_INSTS_VALU_MFMA_MOPS_XF32")

LANES = 64  #: calc_ai's lanes per wavefront instruction (wave64, CDNA)

MOPS = 512  #: ops per SQ_INSTS_VALU_MFMA_MOPS_* count

L1_COUNTERS = ("TCP_TOTAL_CACHE_ACCESSES_sum",)

L2_COUNTERS = ("TCP_TCC_READ_REQ_sum", "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
               "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum")

LDS_COUNTERS = ("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT")

MI200_COUNTERS = ("TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "TCC_EA_WRREQ_sum", "TCC_EA_WRREQ_64B_sum")

MI300_COUNTERS = ("TCC_BUBBLE_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_EA0_WRREQ_sum",
                  "TCC_EA0_WRREQ_64B_sum")

#: legacy derived metrics in kilobytes; FetchSize/WriteSize are the rocprofv3 / GPUPerfAPI spellings (unverified)
LEGACY_COUNTERS = (("FETCH_SIZE", "FetchSize"), ("WRITE_SIZE", "WriteSize"))

#: the FLOP counters every CDNA GPU has (a file lacking some gives a lower bound, with a warning)
FLOP_COUNTERS = tuple(f"SQ_INSTS_VALU_{op}_{p}" for p, _ in VALU_PRECISIONS for op, _ in VALU_OPS) + tuple(
    f"SQ_INSTS_VALU_MFMA_MOPS_{t}" for t, _ in MFMA_TYPES if t not in MFMA_OPTIONAL)

ALL_COUNTERS = (FLOP_COUNTERS + tuple(f"SQ_INSTS_VALU_MFMA_MOPS_{t}" for t in MFMA_OPTIONAL) + MFMA_UNCOUNTED
                + L1_COUNTERS + L2_COUNTERS + LDS_COUNTERS + MI200_COUNTERS + MI300_COUNTERS
                + tuple(n for pair in LEGACY_COUNTERS for n in pair) + ("SQ_INSTS_VALU",))

_INSTANCE = re.compile(r"^(.+)\[(\d+)\]$")



def gpu_family(arch: str | None, series: str | None = None) -> str | None:
    """``MI200`` (gfx90a, gfx908: TCC_EA_* counters) or ``MI300`` (gfx94x, gfx95x: TCC_EA0_*, TCC_BUBBLE)."""
    a = (arch or "").strip().lower()
    if a.startswith(("gfx94", "gfx95")):
        return "MI300"
    if a.startswith(("gfx90a", "gfx908")):
        return "MI200"
    s = (series or "").strip().upper()
    if s.startswith(("MI300", "MI350", "MI355")):
        return "MI300"
    if s.startswith(("MI200", "MI210", "MI250", "MI100")):
        return "MI200"
    return None


class Counters:
    """Counter columns by name; ``get(name)`` resolves ``X_sum`` from ``X`` or from ``X[0]``, ``X[1]`` …"""

    def __init__(self, names: list[str]) -> None:
        self.index: dict[str, int] = {}
        self.instances: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            self.index.setdefault(n, i)
            m = _INSTANCE.match(n)
            if m:
                self.instances.setdefault(m.group(1), []).append(i)

    def plan(self, name: str) -> list[int] | None:
        """Column positions whose sum is counter ``name``, or None where the file lacks it."""
        if name in self.index:
            return [self.index[name]]
        base = name[:-4] if name.endswith("_sum") else name
        if base != name and base in self.index:
            return [self.index[base]]
        if base == name and f"{name}_sum" in self.index:
            return [self.index[f"{name}_sum"]]
        return self.instances.get(base)

    def needed(self) -> list[int]:
        out: set[int] = set()
        for n in ALL_COUNTERS:
            out.update(self.plan(n) or ())
        return sorted(out)


@dataclass
class Problems:
    """Cells that are not usable numbers, per counter: (count, first dispatch, first text)."""

    by_counter: dict[str, list[Any]] = field(default_factory=dict)  #: [count, first dispatch, first text]

    def add(self, counter: str, bad: np.ndarray, ids: np.ndarray, text: np.ndarray) -> None:
        where = np.flatnonzero(bad)
        if len(where):
            entry = self.by_counter.setdefault(counter, [0, ids[where[0]], str(text[where[0]]).strip()])
            entry[0] += len(where)

    def warnings(self, source: str) -> list[str]:
        return [f"{source}: {c}: {k} value(s) missing or not a non-negative number (first: dispatch {d}, {t!r}); "
                "what needs it is unknown for those dispatches." for c, (k, d, t) in self.by_counter.items()]


def numbers(values: np.ndarray, counter: str, ids: np.ndarray, problems: Problems) -> np.ndarray:
    """Counter cells to float64; missing, non-numeric, infinite or negative cells become NaN (recorded)."""
    num = to_floats(values)
    bad = ~np.isfinite(num) | (num < 0)
    problems.add(counter, bad, ids, values)
    num[bad] = np.nan
    return num


@dataclass
class Result:
    columns: dict[str, np.ndarray]
    warnings: list[str]
    meta: dict[str, str]


def _brace(names: list[str]) -> str:
    """``SQ_INSTS_VALU_{ADD,MUL}_F16, SQ_INSTS_VALU_MFMA_MOPS_{F16,I8}``: counter names grouped for a message."""
    groups: dict[tuple[str, str], list[str]] = {}
    for n in names:
        m = re.fullmatch(r"(SQ_INSTS_VALU_MFMA_MOPS_)(\w+)", n) or re.fullmatch(r"(SQ_INSTS_VALU_)(\w+?)(_\w+)", n)
        if m is None:
            groups.setdefault((n, ""), [])
            continue
        prefix, middle = m.group(1), m.group(2)
        suffix = m.group(3) if m.re.groups == 3 else ""
        groups.setdefault((prefix, suffix), []).append(middle)
    out = []
    for (prefix, suffix), middles in groups.items():
        if not middles:
            out.append(prefix)
        elif len(middles) == 1:
            out.append(f"{prefix}{middles[0]}{suffix}")
        else:
            out.append(f"{prefix}{{{','.join(middles)}}}{suffix}")
    return ", ".join(out)


def _sum_counters(get: Callable[[str], np.ndarray | None], names: tuple[str, ...]
                  ) -> tuple[list[np.ndarray | None], list[str]]:
    got = [get(n) for n in names]
    return got, [n for n, g in zip(names, got, strict=True) if g is None]


def _present(got: list[np.ndarray | None]) -> list[np.ndarray]:
    """The arrays of a set of counters :func:`_sum_counters` found complete (none missing)."""
    return [g for g in got if g is not None]



def derive(get: Callable[[str], np.ndarray | None], n: int, source: str, family: str | None,
           lds_banks: float | None, sysinfo_given: bool, quiet_lds: bool = False, bare: str | None = None) -> Result:
    """FLOPs, precision/unit and bytes per level by rocprof-compute's ``calc_ai`` (docs/formats.md).

    ``bare``: the hint for a file with no FLOP or byte counter at all (a trace, a per-pass file); it replaces the
    per-quantity warnings with one sentence.
    """
    cols: dict[str, np.ndarray] = {}
    warn: list[str] = []
    meta: dict[str, str] = {}
    flops, precision, unit, no_flops = _flops(get, n, source, warn)
    cols["flops"], cols["precision"], cols["unit"] = flops, precision, unit
    no_hbm = _offchip(get, n, source, family, sysinfo_given, cols, warn, meta)
    _on_chip(get, n, source, lds_banks, sysinfo_given, quiet_lds, cols, warn)
    for key in ("flops", *(k for k in cols if k.startswith("bytes_"))):
        huge = np.isinf(cols[key])  # counters near the float limit times 64 or 512: not a measurement
        if huge.any():
            warn.append(f"{source}: {int(huge.sum())} dispatch(es) have counters too large to be real for "
                        f"{key}: left unknown.")
            cols[key] = np.where(huge, np.nan, cols[key])
    if bare is not None and no_flops and no_hbm and not any(k in cols for k in ("bytes_l2", "bytes_l1", "bytes_lds")):
        warn = [f"{source}: no FLOP or byte counters in this file: the kernels' FLOPs and bytes are unknown, only "
                f"their times are read. Hint: {bare}"]
    return Result(cols, warn, meta)


def _flops(get: Callable[[str], np.ndarray | None], n: int, source: str,
           warn: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(flops, precision, unit, no FLOP counter at all) per dispatch from the VALU and MFMA counters."""
    valu = np.zeros((n, len(VALU_PRECISIONS)))
    mfma = np.zeros((n, len(MFMA_TYPES)))
    missing: list[str] = []
    for j, (p, _) in enumerate(VALU_PRECISIONS):
        for op, weight in VALU_OPS:
            a = get(f"SQ_INSTS_VALU_{op}_{p}")
            if a is None:
                missing.append(f"SQ_INSTS_VALU_{op}_{p}")
            else:
                valu[:, j] += LANES * weight * a
    found_optional = False
    for j, (t, _) in enumerate(MFMA_TYPES):
        a = get(f"SQ_INSTS_VALU_MFMA_MOPS_{t}")
        if a is None:
            if t not in MFMA_OPTIONAL:
                missing.append(f"SQ_INSTS_VALU_MFMA_MOPS_{t}")
        else:
            mfma[:, j] = MOPS * a
            found_optional |= t in MFMA_OPTIONAL
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    no_flops = len(missing) == len(FLOP_COUNTERS) and not found_optional
    if no_flops:
        total = get("SQ_INSTS_VALU")
        note = (" The file has SQ_INSTS_VALU, which counts every vector instruction (integer, moves and "
                "conversions too), not FLOPs." if total is not None else "")
        warn.append(f"{source}: no FLOP counters (SQ_INSTS_VALU_ADD|MUL|FMA|TRANS_F16|F32|F64, "
                    f"SQ_INSTS_VALU_MFMA_MOPS_*): FLOPs are unknown.{note} Hint: collect them (rocprof-compute "
                    "profiles them; with rocprof add them to --pmc), or load rocprof-compute's pmc_perf.csv.")
        return np.full(n, np.nan), precision, unit, True
    if missing:
        warn.append(f"{source}: FLOPs count only the counters present (a lower bound if the kernels ran the "
                    f"other instructions); missing: {_brace(missing)}. Hint: collect every SQ_INSTS_VALU_* counter "
                    "above for complete FLOPs.")
    flops = _classify(valu, mfma, precision, unit, source, warn)
    for name in MFMA_UNCOUNTED:
        a = get(name)
        if a is not None and (np.nan_to_num(a) > 0).any():
            warn.append(f"{source}: {int((np.nan_to_num(a) > 0).sum())} dispatch(es) ran {name} matrix ops, not "
                        "counted in their FLOPs (the ops per count of this type are not documented for "
                        "rocprof-compute's roofline): their FLOPs are a lower bound.")
    return flops, precision, unit, False


def _classify(valu: np.ndarray, mfma: np.ndarray, precision: np.ndarray, unit: np.ndarray, source: str,
              warn: list[str]) -> np.ndarray:
    """FLOPs per dispatch from the VALU and MFMA FLOPs per precision; sets ``precision`` and ``unit`` in place
    (``matrix`` where MFMA ops are at least the VALU FLOPs). int8 MFMA ops count only for int8 kernels."""
    v_tot = valu.sum(axis=1)
    m_float = mfma[:, :-1].sum(axis=1)
    i8 = mfma[:, -1]
    m_tot = m_float + i8
    known = np.isfinite(v_tot) & np.isfinite(m_tot)
    matrix = known & (m_tot > 0) & (m_tot >= v_tot)
    vector = known & (v_tot > 0) & ~matrix
    m_prec = np.array([p for _, p in MFMA_TYPES], dtype=object)[np.argmax(np.nan_to_num(mfma), axis=1)]
    v_prec = np.array([p for _, p in VALU_PRECISIONS], dtype=object)[np.argmax(np.nan_to_num(valu), axis=1)]
    precision[matrix] = m_prec[matrix]
    precision[vector] = v_prec[vector]
    unit[matrix] = "matrix"
    unit[vector] = "vector"
    int8 = matrix & (m_prec == "int8")
    left_out = ~int8 & (np.nan_to_num(i8) > 0)
    if left_out.any():
        warn.append(f"{source}: {int(left_out.sum())} dispatch(es) also ran int8 MFMA ops (512 × "
                    "SQ_INSTS_VALU_MFMA_MOPS_I8), not counted in their FLOPs: they are integer ops, counted only "
                    "for kernels whose main work is int8.")
    flops: np.ndarray = v_tot + m_float + np.where(int8, i8, 0.0)
    return flops


def _offchip(get: Callable[[str], np.ndarray | None], n: int, source: str, family: str | None, sysinfo_given: bool,
             cols: dict[str, np.ndarray], warn: list[str], meta: dict[str, str]) -> bool:
    """``bytes_hbm`` into ``cols`` by the formula of the GPU's family (else of the counters present), else from
    the legacy FETCH_SIZE + WRITE_SIZE; True when the file has no off-chip counter at all."""
    mi200, miss200 = _sum_counters(get, MI200_COUNTERS)
    mi300, miss300 = _sum_counters(get, MI300_COUNTERS)
    use = family
    if use == "MI300" and miss300 and not miss200:
        warn.append(f"{source}: the GPU is MI300-class but the file has the MI200 counters (TCC_EA_*), not "
                    "TCC_EA0_*/TCC_BUBBLE; off-chip bytes use the MI200 formula.")
        use = "MI200"
    elif use == "MI200" and miss200 and not miss300:
        warn.append(f"{source}: the GPU is MI200-class but the file has the MI300 counters (TCC_EA0_*, "
                    "TCC_BUBBLE); off-chip bytes use the MI300 formula.")
        use = "MI300"
    elif use is None:
        use = "MI300" if not miss300 else "MI200" if not miss200 else None
        if use and not sysinfo_given:
            meta["hbm_formula_from"] = "counters present"
    legacy = [next((a for a in (get(x) for x in pair) if a is not None), None) for pair in LEGACY_COUNTERS]
    no_hbm = False
    if use == "MI200" and not miss200:
        rd, rd32, wr, wr64 = _present(mi200)
        hbm = rd32 * 32 + (rd - rd32) * 64 + wr64 * 64 + (wr - wr64) * 32
        meta["hbm_formula"] = "MI200 (TCC_EA_RDREQ/WRREQ, calc_ai)"
    elif use == "MI300" and not miss300:
        bubble, rd, rd32, wr, wr64 = _present(mi300)
        hbm = bubble * 128 + rd32 * 32 + (rd - bubble - rd32) * 64 + (wr - wr64) * 32 + wr64 * 64
        meta["hbm_formula"] = "MI300 (TCC_BUBBLE, TCC_EA0_RDREQ/WRREQ, calc_ai)"
    elif legacy[0] is not None and legacy[1] is not None:
        hbm = (legacy[0] + legacy[1]) * 1024.0
        meta["hbm_formula"] = "FETCH_SIZE + WRITE_SIZE (KiB × 1024)"
    else:
        hbm = np.full(n, np.nan)
        if legacy[0] is not None or legacy[1] is not None:
            have, lack = ("FETCH_SIZE", "WRITE_SIZE") if legacy[0] is not None else ("WRITE_SIZE", "FETCH_SIZE")
            warn.append(f"{source}: {have} without {lack}: off-chip bytes are unknown (one direction only). "
                        f"Hint: collect {lack} as well.")
        else:
            no_hbm = True
            partial = [m for m, got in ((miss200, mi200), (miss300, mi300)) if len(m) < len(got)]
            lack = f" (missing {', '.join(sorted(partial, key=len)[0])})" if partial else ""
            warn.append(f"{source}: no off-chip counters{lack}: HBM bytes are unknown. Hint: collect "
                        "TCC_EA_RDREQ(_32B)_sum and TCC_EA_WRREQ(_64B)_sum (MI200; TCC_EA0_* and TCC_BUBBLE_sum on "
                        "MI300), or FETCH_SIZE and WRITE_SIZE.")
    cols["bytes_hbm"] = _non_negative(hbm, "HBM", source, warn)
    return no_hbm


def _on_chip(get: Callable[[str], np.ndarray | None], n: int, source: str, lds_banks: float | None,
             sysinfo_given: bool, quiet_lds: bool, cols: dict[str, np.ndarray], warn: list[str]) -> None:
    """``bytes_l2``, ``bytes_l1`` and ``bytes_lds`` into ``cols`` where the file has their counters (LDS bytes need
    ``lds_banks_per_cu`` from sysinfo.csv too)."""
    got, lack = _sum_counters(get, L2_COUNTERS)
    if len(lack) < len(L2_COUNTERS):
        if lack:
            warn.append(f"{source}: L2 bytes need {', '.join(L2_COUNTERS)}; missing {', '.join(lack)}: L2 bytes are "
                        "unknown.")
            cols["bytes_l2"] = np.full(n, np.nan)
        else:
            tcp = _present(got)
            cols["bytes_l2"] = 64.0 * (tcp[0] + tcp[1] + tcp[2] + tcp[3])
    l1 = get(L1_COUNTERS[0])
    if l1 is not None:
        cols["bytes_l1"] = 64.0 * l1
    got, lack = _sum_counters(get, LDS_COUNTERS)
    if len(lack) < len(LDS_COUNTERS):
        if lack:
            warn.append(f"{source}: LDS bytes need SQ_LDS_IDX_ACTIVE and SQ_LDS_BANK_CONFLICT; missing "
                        f"{', '.join(lack)}: LDS bytes are unknown.")
            cols["bytes_lds"] = np.full(n, np.nan)
        elif lds_banks is None:
            if sysinfo_given:
                warn.append(f"{source}: LDS bytes need lds_banks_per_cu, which the sysinfo.csv read with it does not "
                            "give (Omniperf 1.x does not record it): LDS bytes are unknown.")
            elif not quiet_lds:
                warn.append(f"{source}: LDS bytes need lds_banks_per_cu from rocprof-compute's sysinfo.csv: LDS "
                            "bytes are unknown. Hint: load sysinfo.csv from the same workload folder together with "
                            "this file.")
            cols["bytes_lds"] = np.full(n, np.nan)
        else:
            active, conflict = _present(got)
            cols["bytes_lds"] = _non_negative((active - conflict) * 4.0 * lds_banks, "LDS", source, warn)


def _non_negative(values: np.ndarray, what: str, source: str, warn: list[str]) -> np.ndarray:
    neg = values < 0
    if neg.any():
        warn.append(f"{source}: {int(neg.sum())} dispatch(es) give negative {what} bytes from their counters "
                    "(counter noise or a garbled file): left unknown.")
        values = np.where(neg, np.nan, values)
    return values

