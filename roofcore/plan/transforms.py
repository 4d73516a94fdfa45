"""What-if transformations of a workload: fuse a chain, change precision, scale the batch, shard over chips,
lower every roof by a fraction of communication.

Every transformation returns a **new** :class:`~roofcore.models.Workload` (a copied frame, through
``dataclasses.replace``); nothing here mutates its input (docs/architecture.md, "Nothing mutates its input").

Choices and formulas (the tests in ``tests/test_plan.py`` pin each one):

**Read/written split of the off-chip bytes.** A kernel's ``bytes_hbm`` is split into bytes read and
bytes written from the frame columns ``read_bytes`` / ``written_bytes`` (inventory ``bytes_read`` /
``bytes_written``; YAML ops derive them) where known, scaled so the two add up to ``bytes_hbm``; with
one of them known the other is the rest; with neither, the weights are reads and the rest is split
**half and half** (activation inputs : outputs = 1 : 1, right for a kernel that reads one tensor and
writes one of the same size): ``read = weight + (hbm − weight)/2``. ``weight_bytes`` is the part of
the reads that is weights (unknown: 0).

**fuse** (a chain, in the order given): FLOPs add up. Off-chip bytes = the chain's external reads +
its final writes: ``read₁ + Σᵢ₌₂ max(readᵢ − writtenᵢ₋₁, 0) + written_last`` — each kernel is
assumed to read its predecessor's whole output from on-chip memory, and whatever it reads beyond
that (a residual, weights) still comes from off-chip; intermediate outputs are assumed not to be
needed outside the chain. Bytes at on-chip levels and on links are kept (summed): fusion removes the
off-chip round trip, not the on-chip traffic (conservative). Precision and unit are the
largest-FLOPs kernel's, ``count`` the largest count, the group the common one (else the first's).

**change_precision** to ``dtype`` (``what`` = ``both`` | ``weights`` | ``activations``): with
``r = |new| / |old|`` per part, weights ``weight_bytes·r_w``; activations (reads other than weights,
all writes, on-chip levels and links) ``·r_a``. The compute ceiling follows the activations: the
``precision`` column changes for ``both`` and ``activations``, not for ``weights`` (int8 weights
with bf16 math run on the bf16 ceiling, seed §6.2); a ``weight_dtype`` column records the weights'
format. A kernel whose precision is unknown is left unchanged (and a note says so) unless
``from_dtype`` is given. Reducing precision never increases bytes.

**scale_batch** by ``factor``: FLOPs ``× factor``; off-chip ``(read − weight)·factor + weight +
written·factor``; on-chip levels and links ``× factor`` (activation traffic). ``weight_bytes`` fixed.

**shard** over ``N`` chips, per chip (the workload becomes one chip's view): FLOPs ``÷ N``; on-chip
levels ``÷ N``; off-chip by ``dim``: ``k`` (the contraction dimension, row-parallel; seed §4.3):
reads ``÷ N``, the output is a full-size partial sum (written bytes unchanged) and is all-reduced
over ``link``; ``m`` (rows / batch, data-parallel): activation reads and writes ``÷ N``, weights
read whole, no collective; ``n`` (output columns, column-parallel): weights and writes ``÷ N``,
activation reads whole, no collective. All-reduce bytes per chip for a buffer of ``S`` bytes (the
kernel's written bytes), on its busiest link direction: ring ``2·(N−1)/N·S``; tree
``2·⌈log₂N⌉·S`` (unpipelined binary tree: reduce, then broadcast). They are added to the kernel's
``bytes_<link>`` column, so compute and communication overlap in one kernel (the roofline's max),
as in §4.3: for 2 chips and bf16 the kernel flips from link- to compute-bound at ``D = 2·π/β``.

**comm_fraction** ``f``: a fraction of every kernel's time is communication that does not overlap,
so ``t_roof' = t_roof / (1 − f)``: equivalently every roof (ceilings, levels, links) is lowered to
``(1 − f)`` of its value — :func:`.projection.effective_hardware` — which is how :func:`.projection.evaluate` (and so
projections, scenarios and comparisons) applies it; the workload carries the fraction in
``meta["comm_fraction"]`` (two fractions combine as ``1 − (1 − f₁)(1 − f₂)``).

Transformed kernels have no measured time (``time_s`` NaN): a measurement does not survive a change
of the work; the workload's ``warnings`` say so.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import InputError, RoofcoreError
from ..models import DTYPE_SIZE, KNOWN_LINKS, OFFCHIP, Hardware, Workload, canonical_dtype

SPLIT = ("read_bytes", "written_bytes", "weight_bytes")
HBM = f"bytes_{OFFCHIP}"
ALGORITHMS = ("ring", "tree")
WHAT = ("both", "weights", "activations")
DIMS = {"k": "k", "contraction": "k", "reduction": "k", "d": "k", "m": "m", "batch": "m", "rows": "m",
        "data": "m", "n": "n", "columns": "n", "cols": "n", "f": "n"}
#: the note every transformation adds: measured times do not survive a change of the work
TIME_NOTE = "times of transformed kernels are unknown (a measurement does not survive a change of the work)"


# =============================================================================================== helpers


def _frame(w: Workload) -> pd.DataFrame:
    """A deep copy of the frame with object (not categorical) text columns, ready to edit."""
    f = w.frame.copy(deep=True)
    for col in ("precision", "unit"):
        if col in f and isinstance(f[col].dtype, pd.CategoricalDtype):
            f[col] = pd.Series(f[col].astype(object).where(f[col].notna(), None), dtype=object, index=f.index)
    return f


def _new(w: Workload, frame: pd.DataFrame, note: str | None = None, *, meta: Mapping[str, str] | None = None,
         name: str | None = None) -> Workload:
    notes = tuple(w.warnings)
    if note and note not in notes:
        notes += (note,)
    return replace(w, frame=frame.reset_index(drop=True), warnings=notes, meta={**w.meta, **(meta or {})},
                   name=name or w.name)


def _col(f: pd.DataFrame, name: str) -> np.ndarray:
    return f[name].to_numpy(dtype=np.float64) if name in f else np.full(len(f), np.nan)


def split_bytes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Off-chip ``(read, written, weight)`` bytes per kernel, by the documented split (module docstring)."""
    hbm = _col(frame, HBM)
    r, w = _col(frame, "read_bytes"), _col(frame, "written_bytes")
    with np.errstate(divide="ignore", invalid="ignore"):
        tot = r + w
        both = ~np.isnan(r) & ~np.isnan(w) & (tot > 0)
        read = np.where(both, hbm * r / tot, np.nan)
        only_r = np.isnan(read) & ~np.isnan(r)
        read = np.where(only_r, np.minimum(r, hbm), read)
        only_w = np.isnan(read) & ~np.isnan(w)
        read = np.where(only_w, hbm - np.minimum(w, hbm), read)
        weight = np.clip(np.nan_to_num(_col(frame, "weight_bytes")), 0.0, np.where(np.isnan(hbm), np.inf, hbm))
        read = np.where(np.isnan(read), weight + (hbm - weight) / 2.0, read)
    written = hbm - read
    weight = np.minimum(weight, np.where(np.isnan(read), np.inf, read))
    return read, written, weight


def _set_split(f: pd.DataFrame, read: np.ndarray, written: np.ndarray, weight: np.ndarray | None = None) -> None:
    f[HBM] = read + written
    f["read_bytes"] = read
    f["written_bytes"] = written
    if weight is not None and "weight_bytes" in f:
        f["weight_bytes"] = weight


def _other_bytes(f: pd.DataFrame) -> list[str]:
    """Byte columns other than the off-chip one (on-chip levels and links)."""
    return [c for c in f.columns if c.startswith("bytes_") and c != HBM]


def is_link(name: str, hws: Iterable[Hardware] = ()) -> bool:
    return name in KNOWN_LINKS or any(name in h.link_map for h in hws)


def _select(f: pd.DataFrame, kernels: Sequence[str | int] | str | int | None, where: str) -> np.ndarray:
    """Row positions named by kernel names or 0-based indices, in the order given (all rows for None)."""
    if kernels is None:
        return np.arange(len(f))
    if isinstance(kernels, str | int):
        kernels = [kernels]
    names = f["name"].astype(str).to_numpy()
    out: list[int] = []
    for i, k in enumerate(kernels):
        if isinstance(k, bool):
            raise InputError(where=f"{where}[{i}]", expected="a kernel name or index", found=repr(k))
        if isinstance(k, int | np.integer):
            if not 0 <= int(k) < len(f):
                raise InputError(where=f"{where}[{i}]", expected=f"a kernel index from 0 to {len(f) - 1}", found=str(k))
            hits = [int(k)]
        else:
            hits = np.flatnonzero(names == str(k)).tolist()
            if not hits:
                close = difflib.get_close_matches(str(k), list(dict.fromkeys(names)), n=1)
                raise InputError(where=f"{where}[{i}]", expected="the name of a kernel in the workload",
                                 found=repr(k), hint=f"did you mean {close[0]!r}?" if close else
                                 "kernel names are matched exactly; indices (0-based) work too.")
        out.extend(h for h in hits if h not in out)
    return np.array(out, dtype=np.int64)


def _mask(f: pd.DataFrame, kernels: Sequence[str | int] | str | int | None, where: str) -> np.ndarray:
    m = np.zeros(len(f), dtype=bool)
    m[_select(f, kernels, where)] = True
    return m


def _size(dtype: object) -> float:
    return float(DTYPE_SIZE[str(dtype)]) if dtype in DTYPE_SIZE else math.nan


def check_workload(w: Workload, what: str) -> None:
    if not isinstance(w, Workload):
        raise RoofcoreError(f"{what} needs a Workload, got {type(w).__name__}")
    if len(w) == 0:
        raise RoofcoreError(f"{what}: the workload has no kernels")


# =============================================================================================== transformations


def fuse(workload: Workload, kernels: Sequence[str | int], *, name: str | None = None) -> Workload:
    """A new workload where the chain ``kernels`` (names or 0-based indices, in chain order) is one kernel."""
    check_workload(workload, "fuse")
    f = _frame(workload)
    idx = _select(f, kernels, "fuse")
    if len(idx) < 2:
        raise InputError(where="fuse", expected="at least two kernels to fuse", found=f"{len(idx)}",
                         hint="name the chain's kernels in order, e.g. [gelu, residual_add_mlp].")
    read, written, weight = split_bytes(f)
    r, w = read[idx], written[idx]
    fused_read = r[0] + np.sum(np.maximum(r[1:] - w[:-1], 0.0))
    fused_written = w[-1]
    flops = f["flops"].to_numpy(dtype=np.float64)[idx]
    rows = f.iloc[idx]
    lead = int(idx[int(np.nanargmax(flops))]) if not np.isnan(flops).all() else int(idx[0])
    groups = [g for g in rows["group"].tolist() if g is not None and g == g]
    new = f.iloc[[int(idx[0])]].copy()
    label = name or "fused(" + " + ".join(map(str, rows["name"])) + ")"
    new["name"] = label
    new["flops"] = float(flops.sum())  # NaN if any part is unknown: unknown work is not zero work
    new["time_s"] = np.nan
    new["count"] = int(rows["count"].max())
    new["precision"] = f.at[f.index[lead], "precision"]
    new["unit"] = f.at[f.index[lead], "unit"]
    new["group"] = groups[0] if groups and len(set(groups)) == 1 else (groups[0] if groups else None)
    new["source"] = "plan:fuse"
    new["row"] = "fused rows " + ", ".join(str(x) for x in rows["row"])
    new[HBM] = fused_read + fused_written
    new["read_bytes"] = fused_read
    new["written_bytes"] = fused_written
    for c in _other_bytes(f):
        vals = f[c].to_numpy(dtype=np.float64)[idx]
        new[c] = np.nan if np.isnan(vals).all() else float(np.nansum(vals))
    if "weight_bytes" in f:
        new["weight_bytes"] = float(np.sum(weight[idx]))
    keep = np.ones(len(f), dtype=bool)
    keep[idx] = False
    _set_split(f, read, written)
    first = int(idx.min())
    out = pd.concat([f.iloc[:first][keep[:first]], new.astype(f.dtypes.to_dict(), errors="ignore"),
                     f.iloc[first:][keep[first:]]], ignore_index=True)
    return _new(workload, out, TIME_NOTE)


def change_precision(workload: Workload, dtype: str, *, what: str = "both",
                     kernels: Sequence[str | int] | None = None, from_dtype: str | None = None) -> Workload:
    """A new workload with ``dtype`` for the weights, the activations or both (bytes and compute ceiling)."""
    check_workload(workload, "change_precision")
    new = canonical_dtype(dtype, where="precision.dtype")
    if what not in WHAT:
        raise InputError(where="precision.what", expected=" or ".join(WHAT), found=repr(what))
    f = _frame(workload)
    sel = _mask(f, kernels, "precision.kernels")
    prec = f["precision"].to_numpy(dtype=object)
    if from_dtype is not None:
        prec = np.array([canonical_dtype(from_dtype, where="precision.from_dtype")] * len(f), dtype=object)
    old_a = np.array([_size(p) for p in prec])
    wd = f["weight_dtype"].to_numpy(dtype=object) if "weight_dtype" in f else prec
    old_w = np.array([_size(p) if p is not None and p == p else math.nan for p in wd])
    old_w = np.where(np.isnan(old_w), old_a, old_w)
    unknown = sel & np.isnan(old_a)
    sel &= ~np.isnan(old_a)
    s = DTYPE_SIZE[new]
    ra = np.where(sel & (what != "weights"), s / old_a, 1.0)
    rw = np.where(sel & (what != "activations"), s / old_w, 1.0)
    read, written, weight = split_bytes(f)
    _set_split(f, (read - weight) * ra + weight * rw, written * ra, weight * rw)
    for c in _other_bytes(f):
        f[c] = f[c].to_numpy(dtype=np.float64) * ra
    if what != "weights":
        f.loc[sel, "precision"] = new
    if what != "activations":
        if "weight_dtype" not in f:
            f["weight_dtype"] = pd.Series([None] * len(f), dtype=object, index=f.index)
        f.loc[sel, "weight_dtype"] = new
    f.loc[sel, "time_s"] = np.nan
    out = _new(workload, f, TIME_NOTE)
    notes = []
    if unknown.any():
        notes.append(f"{int(unknown.sum())} kernel(s) without a known precision left unchanged by the precision "
                     "change (give from_dtype to convert them).")
    if what != "activations" and "weight_bytes" not in workload.frame:
        notes.append("no weight_bytes known: a weights-only change moves no bytes (give weight_bytes per kernel).")
    return replace(out, warnings=out.warnings + tuple(n for n in notes if n not in out.warnings))


def scale_batch(workload: Workload, factor: float, *, kernels: Sequence[str | int] | None = None) -> Workload:
    """A new workload with the batch × ``factor``: FLOPs and activation bytes scale, weight bytes do not."""
    check_workload(workload, "scale_batch")
    factor = float(factor)
    if not (factor > 0 and math.isfinite(factor)):
        raise InputError(where="batch", expected="a positive factor", found=repr(factor))
    f = _frame(workload)
    sel = _mask(f, kernels, "batch.kernels")
    k = np.where(sel, factor, 1.0)
    read, written, weight = split_bytes(f)
    _set_split(f, (read - weight) * k + weight, written * k, weight)
    f["flops"] = f["flops"].to_numpy(dtype=np.float64) * k
    for c in _other_bytes(f):
        f[c] = f[c].to_numpy(dtype=np.float64) * k
    f.loc[sel, "time_s"] = np.nan
    return _new(workload, f, TIME_NOTE)


def collective_bytes(kind: str, message_bytes: float, chips: int, algorithm: str = "ring") -> float:
    """Bytes one chip moves over its busiest link direction (same formulas as the ops' collectives).

    all_reduce ring ``2·(N−1)/N·S``, tree ``2·⌈log₂N⌉·S``; all_gather, reduce_scatter, all_to_all ``(N−1)/N·S``.
    """
    n = int(chips)
    if n <= 1:
        return 0.0
    if kind == "all_reduce":
        return 2.0 * (n - 1) / n * message_bytes if algorithm == "ring" else 2.0 * math.ceil(math.log2(n)) * message_bytes
    return (n - 1) / n * message_bytes


def shard(workload: Workload, chips: int, *, dim: str = "k", link: str = "ici", algorithm: str = "ring",
          kernels: Sequence[str | int] | None = None) -> Workload:
    """One chip's view of the workload sharded over ``chips`` along ``dim`` (module docstring)."""
    check_workload(workload, "shard")
    if isinstance(chips, bool) or not isinstance(chips, int | float) or chips < 1 or int(chips) != chips:
        raise InputError(where="shard.chips", expected="a whole number of chips ≥ 1", found=repr(chips))
    n = int(chips)
    d = DIMS.get(str(dim).strip().lower())
    if d is None:
        raise InputError(where="shard.dim", expected="k (contraction), m (rows/batch) or n (output columns)",
                         found=repr(dim))
    if algorithm not in ALGORITHMS:
        raise InputError(where="shard.algorithm", expected=" or ".join(ALGORITHMS), found=repr(algorithm))
    link = str(link).strip().lower()
    if not link or link in ("hbm", "dram") or not link.replace("_", "").isalnum():
        raise InputError(where="shard.link", expected="an interconnect name such as ici, nvlink or xgmi",
                         found=repr(link))
    f = _frame(workload)
    sel = _mask(f, kernels, "shard.kernels")
    k = np.where(sel, 1.0 / n, 1.0)
    read, written, weight = split_bytes(f)
    act = read - weight
    if d == "k":
        new_r, new_w, new_wt = read * k, written, weight * k
    elif d == "m":
        new_r, new_w, new_wt = act * k + weight, written * k, weight
    else:
        new_r, new_w, new_wt = act + weight * k, written * k, weight * k
    f["flops"] = f["flops"].to_numpy(dtype=np.float64) * k
    for c in _other_bytes(f):
        if not is_link(c[len("bytes_"):]):
            f[c] = f[c].to_numpy(dtype=np.float64) * k
    _set_split(f, new_r, new_w, new_wt)
    if d == "k" and n > 1:
        coll = np.array([collective_bytes("all_reduce", s, n, algorithm) for s in written])
        col = f"bytes_{link}"
        prev = _col(f, col)
        f[col] = np.where(sel, np.nan_to_num(prev) + coll, prev)
    f.loc[sel, "time_s"] = np.nan
    note = (f"per-chip view of {n} chips sharded on {d}" + (f" ({algorithm} all-reduce of each output on {link})"
                                                            if d == "k" else "") + ": totals are per chip")
    out = _new(workload, f, TIME_NOTE, meta={"chips": str(n * int(workload.meta.get("chips", "1") or 1))})
    return replace(out, warnings=(*out.warnings, note))


def comm_fraction(workload: Workload, fraction: float) -> Workload:
    """A new workload whose every roof is lowered by ``fraction`` of communication: ``t_roof' = t_roof / (1 − f)``."""
    check_workload(workload, "comm_fraction")
    fr = float(fraction)
    if not (0 <= fr < 1):
        raise InputError(where="comm_fraction", expected="a fraction from 0 up to (not including) 1", found=repr(fraction))
    prev = float(workload.meta.get("comm_fraction", 0) or 0)
    total = 1.0 - (1.0 - prev) * (1.0 - fr)
    note = f"{total:.0%} of each kernel's time is non-overlapped communication: roofs lowered to {1 - total:.0%}"
    out = _new(workload, workload.frame.copy(deep=True), meta={"comm_fraction": repr(total)})
    return replace(out, warnings=(*tuple(x for x in out.warnings if "non-overlapped communication" not in x), note))
