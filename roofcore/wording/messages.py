"""Flag messages: one sentence per flag with the numbers behind it, written per segment of rows from
:class:`~.cells.Col` pieces and escaped for their destination (plain text, JSON, CSV)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..roofline import FLAG_CODES, DeviceResult, Flag
from .cells import Col, Esc, Part, const, escape_all, join_parts, merge_runs, needs_quotes, scatter, strs
from .formatting import f0, g3, pct, si, time_text

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ..models import Hardware

#: the rows of one device's table a message recipe is for (ascending), and the parts of those rows' messages
Segment: TypeAlias = "tuple[NDArray[np.int64], list[Part]]"
#: a part of a message as a recipe writes it: constant text, a :class:`~.cells.Col`, or the levels a row lacks
Piece: TypeAlias = "str | Col | _Listed"
#: a segment of a recipe: its rows, and the pieces of their messages (a :data:`Segment` once escaped)
Recipe: TypeAlias = "tuple[NDArray[np.int64], list[Piece]]"


def flag_recipes(tab: pd.DataFrame, r: DeviceResult) -> dict[Flag, list[Recipe]]:
    """Per flag set on some rows of ``tab`` (one device's rows), how its messages are written: segments of rows
    with the parts of their messages. Each message is one sentence with the numbers behind the flag; the numbers
    are formatted once per distinct value, and nothing is joined yet (the destination escapes and joins)."""
    mask = np.asarray(tab["flags_mask"].to_numpy(), dtype=np.int64)
    hw = r.hardware
    out: dict[Flag, list[Recipe]] = {}

    def rows(bit: Flag) -> np.ndarray:
        return np.flatnonzero(mask & int(bit))

    def col(name: str, idx: np.ndarray) -> np.ndarray:
        values: NDArray[Any] = tab[name].to_numpy()[idx]
        return values

    if len(i := rows(Flag.ABOVE_ROOF)):
        out[Flag.ABOVE_ROOF] = _above_roof(tab, i, hw)
    if len(i := rows(Flag.FAR_BELOW)):
        eff = col("efficiency", i).astype(np.float64)
        with np.errstate(divide="ignore"):
            ratio = 1 / eff
        out[Flag.FAR_BELOW] = [(i, [
            "Measured ", time_text(col("time_s", i)), " is ", f0(ratio), "× the roofline time ", time_text(col("t_roof_s", i)),
            " (efficiency ", pct(eff), "): latency, launch overhead, synchronisation or occupancy dominate, which the "
            "roofline cannot diagnose."])]
    if len(i := rows(Flag.TINY)):
        t, tr = col("time_s", i).astype(np.float64), col("t_roof_s", i).astype(np.float64)
        per = np.where(np.isnan(t), tr, t) / np.maximum(col("count", i).astype(np.float64), 1)
        out[Flag.TINY] = [(i, [time_text(per), " per launch is under 1 µs: launch-bound, and replaying profilers (cache "
                                           "flush, base clocks) distort such kernels; batch or fuse them rather than "
                                           "tuning them."])]
    if len(i := rows(Flag.MISSING_TIME)):
        out[Flag.MISSING_TIME] = [(i, ["No measured time: only the roofline bound is known for this kernel."])]
    if len(i := rows(Flag.ZERO_TIME)):
        out[Flag.ZERO_TIME] = [(i, ["The measured time is zero or negative (a corrupt timestamp?): achieved rate and "
                                    "efficiency are left unknown rather than divided by zero."])]
    if len(i := rows(Flag.MISSING_FLOPS)):
        out[Flag.MISSING_FLOPS] = [(i, ["FLOPs are unknown (not zero): this kernel's roofline time and bound are "
                                        "unknown."])]
    if len(i := rows(Flag.MISSING_BYTES)):
        out[Flag.MISSING_BYTES] = [(i, [f"Off-chip ({hw.offchip.display}) bytes are unknown (not zero): this "
                                        "kernel's roofline time and bound are unknown."])]
    if len(i := rows(Flag.LEVEL_NOT_ON_DEVICE)):
        has = [col(f"bytes_{lv}", i).astype(np.float64) for lv in r.lacking]
        out[Flag.LEVEL_NOT_ON_DEVICE] = [(i, [
            "Bytes at ", _Listed(r.lacking, has, lambda lv, b: [lv]), " (",
            _Listed(r.lacking, has, lambda lv, b: [g3(b), " B"]),
            f") are not on any roof: {hw.id} has no such memory level or link in its catalog."])]
    if len(i := rows(Flag.NO_CEILING)):
        out[Flag.NO_CEILING] = [(i, [f"{hw.id} publishes no ", strs(col("precision", i)),
                                     " ceiling: the compute time is unknown and the bound uses memory and links only."])]
    return out


class _Listed:
    """A part of a message: per row, the lacking levels that hold bytes, each written by ``pieces`` (of the level and
    its bytes) and joined with ", "; built for its destination when the message is joined."""

    __slots__ = ("has", "levels", "pieces")

    def __init__(self, levels: tuple[str, ...], has: list[NDArray[np.float64]],
                 pieces: Callable[[str, NDArray[np.float64]], list[Part]]) -> None:
        self.levels, self.has, self.pieces = levels, has, pieces

    def slice(self, lo: int, hi: int) -> _Listed:
        return _Listed(self.levels, [b[lo:hi] for b in self.has], self.pieces)

    def __call__(self, esc: Esc) -> pa.Array:
        m = len(self.has[0]) if self.has else 0
        seen = np.zeros(m, dtype=bool)
        arrays: list[pa.Array] = []
        for lv, b in zip(self.levels, self.has, strict=True):
            here = b > 0
            sep = Col(["", ", "], seen.astype(np.int64))
            arrays.append(pc.if_else(pa.array(here), join_parts([sep, *self.pieces(lv, b)], m, esc), ""))
            seen |= here
        if not arrays:
            return const("", m)
        return arrays[0] if len(arrays) == 1 else pc.binary_join_element_wise(*arrays, "")


def _above_roof(tab: pd.DataFrame, i: NDArray[np.int64], hw: Hardware) -> list[Recipe]:
    """Why a kernel beats its roof, most likely cause first (FLOPs, bytes, units, precision, scope):
    one segment per cause."""
    n = len(i)
    eff = tab["efficiency"].to_numpy(dtype=np.float64)[i]
    bcodes, buniq = pd.factorize(tab["bound"].to_numpy()[i], use_na_sentinel=True)
    compute = np.array([isinstance(b, str) and b.startswith("compute") for b in buniq] + [False])[bcodes]
    lcodes, luniq = pd.factorize(tab["binding_level"].to_numpy()[i], use_na_sentinel=True)
    level = Col([u if isinstance(u, str) and u else hw.offchip.name for u in luniq] + [hw.offchip.name],
                np.where(lcodes < 0, len(luniq), lcodes).astype(np.int64))
    t = tab["time_s"].to_numpy(dtype=np.float64)[i]
    bw = np.full(n, np.nan)
    for k, lv in enumerate(level.texts):
        sel = level.codes == k
        if sel.any() and f"bytes_{lv}" in tab.columns:
            b = tab[f"bytes_{lv}"].to_numpy(dtype=np.float64)[i][sel]
            with np.errstate(divide="ignore", invalid="ignore"):
                bw[sel] = np.where(t[sel] > 0, b / t[sel], np.nan)
    ceiling = strs(tab["ceiling"].to_numpy()[i])
    head: list[Piece] = [
        "Measured ", time_text(t), " beats the roofline minimum ", time_text(tab["t_roof_s"].to_numpy()[i]), " (",
        g3(eff), "× the roof), so an input is wrong: "]
    with np.errstate(invalid="ignore"):
        two = (eff >= 1.8) & (eff <= 2.2)
        case = np.where(compute, np.where(two, 0, 1),
                        np.where(eff >= 500, 2, np.where(two & (hw.scope.value == "die"), 3, 4)))
    causes: list[list[Piece]] = [
        ["most likely the precision or unit (", ceiling, " assumed; a 2× gap is the next precision, FP16 accumulate, "
         "or a 2:4-sparse rate) or FLOPs counted twice."],
        ["most likely the FLOP count or its unit, or the precision (", ceiling, " assumed)."],
        ["most likely the units: the bytes look about 1000× too small (KB or MB read as bytes?)."],
        ["most likely per-die vs per-package scope: the time or bytes cover both dies of the package."],
        ["most likely the ", level, " bytes are undercounted (traffic counted at another level, or bytes per launch "
         "with time over all launches) — achieved ", si(bw, "B/s"), " vs the roof."],
    ]
    out: list[Recipe] = []
    for c, cause in enumerate(causes):
        sub = np.flatnonzero(case == c)
        if len(sub):
            out.append((i[sub], [p.take(sub) if isinstance(p, Col) else p for p in (*head, *cause)]))
    return out


def _plain(segments: list[Recipe]) -> tuple[NDArray[np.int64], pa.Array]:
    """One flag's messages as plain text: the rows (ascending) and their messages."""
    if len(segments) == 1:
        idx, parts = segments[0]
        return idx, join_parts(parts, len(idx))
    idx = np.concatenate([s[0] for s in segments])
    order = np.argsort(idx, kind="stable")
    msgs = pa.concat_arrays([join_parts(parts, len(rows)) for rows, parts in segments])
    return idx[order], msgs.take(pa.array(order))


def flag_messages(tab: pd.DataFrame, r: DeviceResult) -> dict[Flag, np.ndarray]:
    """Per flag, an object array aligned with ``tab`` (one device's rows): the message where the flag is set, else
    None (``Analysis.table(..)["flags"]``)."""
    out: dict[Flag, np.ndarray] = {}
    for bit, segments in flag_recipes(tab, r).items():
        idx, msgs = _plain(segments)
        arr = np.full(len(tab), None, dtype=object)
        arr[idx] = msgs.to_numpy(zero_copy_only=False)
        out[bit] = arr
    return out


def above_roof_messages(tab: pd.DataFrame, i: NDArray[np.int64], hw: Hardware) -> list[str]:
    """The above-roof message of rows ``i`` of one device's table, in the order of ``i``."""
    i = np.asarray(i, dtype=np.int64)
    order = np.argsort(i, kind="stable")
    _, msgs = _plain(_above_roof(tab, i[order], hw))
    out = np.empty(len(i), dtype=object)
    out[order] = msgs.to_numpy(zero_copy_only=False)
    texts: list[str] = out.tolist()
    return texts


def flag_lists(tab: pd.DataFrame, r: DeviceResult) -> list[list[dict[str, str]]]:
    """``[{code, message}]`` per row, flags in :class:`Flag` order (the app's and ``to_json()``'s shape)."""
    msgs = flag_messages(tab, r)
    out: list[list[dict[str, str]]] = [[] for _ in range(len(tab))]
    for bit in Flag:
        if bit in msgs:
            code = FLAG_CODES[bit]
            arr = msgs[bit]
            for k in np.flatnonzero(arr != None).tolist():  # noqa: E711 (elementwise on an object array)
                out[k].append({"code": code, "message": arr[k]})
    return out


class _Built:
    """A :class:`_Listed` part built for one destination (``esc``), cut like the others."""

    __slots__ = ("esc", "listed")

    def __init__(self, listed: _Listed, esc: Esc) -> None:
        self.listed, self.esc = listed, esc

    def slice(self, lo: int, hi: int) -> _Built:
        return _Built(self.listed.slice(lo, hi), self.esc)

    def __call__(self, esc: Esc) -> pa.Array:
        return self.listed(self.esc)


def _escaped(p: Piece, esc: Esc) -> str | Col | _Built:
    if isinstance(p, _Listed):
        return _Built(p, esc)
    if esc is None:
        return p
    return esc(p) if isinstance(p, str) else Col(escape_all(p.texts, esc), p.codes)


def flag_segments(recipes: dict[Flag, list[Recipe]], n: int, esc: Esc, before: Callable[[Flag], str],
                  after: str, sep: str) -> list[Segment]:
    """The flag messages of ``n`` rows readied for one destination: per segment (in :class:`Flag` order), its rows
    and the parts of their texts, the message escaped with ``esc`` between ``before(flag)`` and ``after`` (text as
    it is written) and ``sep`` before a row's second and later flags; constant texts merged into the columns beside
    them (:func:`merge_runs`), so each piece joins a few long parts. Made once for a table, cut by :func:`flag_cells`."""
    earlier = np.zeros(n, dtype=bool)  # rows where a flag was already written: the next one starts with sep
    out: list[Segment] = []
    for bit in (b for b in Flag if b in recipes):
        for idx, parts in recipes[bit]:
            items: list[Part] = [Col(["", sep], earlier[idx].astype(np.int64)), before(bit),
                                 *(_escaped(p, esc) for p in parts), after]
            out.append((idx, merge_runs(items, len(idx), limit=4096)))
        for idx, _ in recipes[bit]:
            earlier[idx] = True
    return out


def flag_cells(segments: list[Segment], lo: int, hi: int, *, csv: bool = False) -> tuple[list[pa.Array], np.ndarray]:
    """Rows ``lo:hi`` of :func:`flag_segments`: per segment with rows there, its texts joined and placed on its rows
    (row-aligned, "" where the segment's flag is absent; the caller joins them into its rows); and (for ``csv``)
    whether a row's text needs CSV quotes (the separators and codes hold no character that needs them)."""
    n = hi - lo
    pieces: list[pa.Array] = []
    special = np.zeros(n, dtype=bool)
    for idx, items in segments:
        a, b = (int(k) for k in np.searchsorted(idx, (lo, hi)))
        if b <= a:
            continue
        rows = idx[a:b] - lo
        parts = [p.slice(a, b) if isinstance(p, Col | _Built) else p for p in items]
        pieces.append(scatter(join_parts(parts, b - a), rows, n))
        if csv:
            special[rows] |= needs_quotes(parts, b - a)
    return pieces, special
