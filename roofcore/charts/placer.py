"""Where labels go: a placer that sets text along lines, and boxes in the plot, clear of each other, of the
roof and ceiling lines and of the kernel marks (all in pixel space, y up, obstacles as circles)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: label geometry in pixels (12 px text): average glyph width, line height, gap to the line
CHAR_PX, LINE_PX, _GAP_PX = 6.7, 14.0, 3.0


class Placer:
    """Places labels along lines so they overlap neither each other nor kernel marks (pixel space, y up).

    Obstacles are circles (x, y, r); a placed label adds circles along its box. A label goes at the first
    free spot scanning along its line from the preferred end; with none free it takes the spot that hides
    the fewest kernel marks (but never another label), or is left out.
    """

    def __init__(self, x_dom: tuple[float, float], y_dom: tuple[float, float], width: int,
                 height: int) -> None:
        self.lx0, self.ly0 = math.log10(x_dom[0]), math.log10(y_dom[0])
        self.px = width / math.log10(x_dom[1] / x_dom[0])
        self.py = height / math.log10(y_dom[1] / y_dom[0])
        self.width, self.height = width, height
        self.points = np.empty((0, 3))
        self.labels = np.empty((0, 3))
        self.lines = np.empty((0, 3))  # roof and ceiling lines alone: a roof's label never strikes through one
        self.below = 0.0  # px of keys set under the x axis so far (label_key_below)

    def xy(self, x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return ((np.log10(np.asarray(x, dtype=np.float64)) - self.lx0) * self.px,
                (np.log10(np.asarray(y, dtype=np.float64)) - self.ly0) * self.py)

    def add_segments(self, segs: pd.DataFrame) -> None:
        """Roof and ceiling lines as obstacles too (thin circles every few pixels), so no label crosses one."""
        if segs.empty:
            return
        (x0, y0), (x1, y1) = self.xy(segs["x"], segs["y"]), self.xy(segs["x2"], segs["y2"])
        n = np.maximum(2, (np.hypot(x1 - x0, y1 - y0) / 4).astype(int))
        t = np.concatenate([np.linspace(0, 1, k) for k in n])
        i = np.repeat(np.arange(len(n)), n)
        pts = np.column_stack([x0[i] + t * (x1 - x0)[i], y0[i] + t * (y1 - y0)[i], np.full(len(t), 1.5)])
        pts = pts[np.isfinite(pts).all(axis=1)]
        self.points = np.vstack([self.points, pts])
        self.lines = np.vstack([self.lines, pts])

    def add_points(self, x: ArrayLike, y: ArrayLike, r: ArrayLike) -> None:
        px, py = self.xy(x, y)
        ok = np.isfinite(px) & np.isfinite(py)
        self.points = np.vstack([self.points, np.column_stack([px[ok], py[ok], np.asarray(r, dtype=np.float64)[ok]])])

    def _box_circles(self, s0: float, s1: float, n_mid: float, theta: float) -> NDArray[np.float64]:
        ss = np.arange(s0, s1 + 1, LINE_PX / 2)
        c, sn = math.cos(theta), math.sin(theta)
        return np.column_stack([ss * c - n_mid * sn, ss * sn + n_mid * c, np.full(len(ss), LINE_PX / 2)])

    def _hit_counts(self, obs: NDArray[np.float64], theta: float, ts: NDArray[np.float64], length: float,
                    n_lo: float, n_hi: float) -> NDArray[np.intp]:
        """Per candidate start ``t`` along direction ``theta``: how many obstacles the box [t, t + length] ×
        [n_lo, n_hi] overlaps. Sorted ends and binary search: every candidate at once, no loop."""
        if not len(obs):
            return np.zeros(len(ts), dtype=np.int64)
        c, sn = math.cos(theta), math.sin(theta)
        s = obs[:, 0] * c + obs[:, 1] * sn
        n = -obs[:, 0] * sn + obs[:, 1] * c
        r = obs[:, 2]
        band = (n + r > n_lo) & (n - r < n_hi)
        lo, hi = np.sort((s - r)[band]), np.sort((s + r)[band])
        # overlap: s - r < t + length and s + r > t; as s - r <= s + r, the obstacles with s + r <= t are a
        # subset of those with s - r < t + length, so count the first set and take the second away
        return np.searchsorted(lo, ts + length, side="left") - np.searchsorted(hi, ts, side="right")

    def place(self, x0: float, y0: float, x1: float, y1: float, text: str, *, above: bool = True,
              start: float = 0.0, reverse: bool = False, strict: bool = True, avoid_lines: bool = False
              ) -> tuple[float, float] | None:
        """Anchor (data coordinates, the label's left end on the line) of ``text`` along the segment
        (x0, y0)-(x1, y1), scanning from ``start`` (a fraction of the way; from the far end if ``reverse``).

        ``strict``: only a spot that hides no kernel mark, else None; otherwise the spot hiding the fewest
        (the first such in scanning order). A spot overlapping another label or leaving the plot is never taken,
        nor, with ``avoid_lines``, one across a roof or ceiling line (with three devices overlaid the fewest-marks
        spot was often across another device's roof).
        """
        (X0, X1), (Y0, Y1) = self.xy([x0, x1], [y0, y1])
        theta = math.atan2(Y1 - Y0, X1 - X0)
        c, sn = math.cos(theta), math.sin(theta)
        s0, s1 = X0 * c + Y0 * sn, X1 * c + Y1 * sn
        n0 = -X0 * sn + Y0 * c
        length = len(text) * CHAR_PX + 4
        n_lo, n_hi = (n0 + _GAP_PX, n0 + _GAP_PX + LINE_PX) if above else (n0 - _GAP_PX - LINE_PX, n0 - _GAP_PX)
        first, last = s0 + start * (s1 - s0), s1 - length
        if last < first:
            return None
        cands = np.arange(first, last + 1, 6.0)
        if reverse:
            cands = cands[::-1]
        inside = np.ones(len(cands), dtype=bool)  # all four corners of the box within the plot (2 px slack)
        for t in (cands, cands + length):
            for n in (n_lo, n_hi):
                cx, cy = t * c - n * sn, t * sn + n * c
                inside &= (cx >= -2) & (cx <= self.width + 2) & (cy >= -2) & (cy <= self.height + 2)
        free = np.flatnonzero(inside)
        free = free[self._hit_counts(self.labels, theta, cands[free], length, n_lo, n_hi) == 0]
        if avoid_lines and len(free):
            free = free[self._hit_counts(self.lines, theta, cands[free], length, n_lo, n_hi) == 0]
        if not len(free):
            return None
        hits = self._hit_counts(self.points, theta, cands[free], length, n_lo, n_hi)
        k = int(np.argmin(hits))  # the first free spot hiding nothing, else the first hiding the fewest
        if strict and hits[k]:
            return None
        best = cands[free[k]]
        self.labels = np.vstack([self.labels, self._box_circles(best, best + length, (n_lo + n_hi) / 2, theta)])
        ax, ay = best * c - n0 * sn, best * sn + n0 * c  # on the line; the mark's dy lifts the text off it
        return 10 ** (ax / self.px + self.lx0), 10 ** (ay / self.py + self.ly0)

    def block(self, x: float, y: float, text: str, align: str) -> None:
        """Reserve the box of a fixed horizontal label (region and ridge annotations)."""
        (X,), (Y,) = self.xy([x], [y])
        length = len(text) * CHAR_PX
        s0 = X - length if align == "right" else X - length / 2 if align == "center" else X
        self.labels = np.vstack([self.labels, self._box_circles(s0, s0 + length, Y + LINE_PX / 2, 0.0)])

    def place_box(self, w: float, h: float) -> tuple[float, float] | None:
        """Top-left corner (px, y up) of a free ``w`` × ``h`` box, the highest then leftmost: first one that covers
        no line, label or kernel mark, else one that covers no line or label (hiding the fewest marks rather than
        striking through a roof); None when there is none (a chart too small)."""
        xs = np.arange(4.0, self.width - w - 4 + 1e-9, 6.0)
        ys = np.arange(self.height - 4.0, h + 4 - 1e-9, -6.0)
        if not len(xs) or not len(ys):
            return None
        hard = np.vstack([self.lines, self.labels])
        best: tuple[int, float, float] | None = None
        for yt in ys:  # one row of candidates at a time: the first row with a free box wins
            hard_hits = box_hits(hard, xs, xs + w, yt - h, yt)
            mark_hits = box_hits(self.points, xs, xs + w, yt - h, yt)
            ok = np.flatnonzero(hard_hits == 0)
            if not len(ok):
                continue
            k = ok[np.argmin(mark_hits[ok])]
            if mark_hits[k] == 0:
                return float(xs[k]), float(yt)
            if best is None or mark_hits[k] < best[0]:
                best = (int(mark_hits[k]), float(xs[k]), float(yt))
        return None if best is None else (best[1], best[2])


def box_hits(obs: NDArray[np.float64], x0: NDArray[np.float64], x1: NDArray[np.float64], y0: float, y1: float
              ) -> NDArray[np.intp]:
    """Per box [x0, x1] × [y0, y1] (px, one row of boxes, x0 <= x1): how many obstacle circles (x, y, r) it
    overlaps, i.e. lie nearer than r to the box.

    Only circles reaching into the row's band count (dy >= r never hits). Of those, a circle at vertical distance
    dy reaches e = sqrt(r² - dy²) across, so it overlaps a box when x0 < x + e and x1 > x - e: two sorted ends and
    a binary search per box instead of a boxes × circles matrix (place_box scans ~45 rows over thousands of line
    and mark circles)."""
    ox, oy, r = obs[:, 0], obs[:, 1], obs[:, 2]
    band = (y0 - oy < r) & (oy - y1 < r) & (r > 0)  # a circle of radius 0 overlaps nothing
    if not band.any():
        return np.zeros(len(x0), dtype=np.int64)
    ox, oy, r = ox[band], oy[band], r[band]
    dy = np.maximum(np.maximum(y0 - oy, oy - y1), 0.0)
    e = np.sqrt(r * r - dy * dy)
    # lo < hi for every circle, so those ending left of a box and those starting right of it are apart
    hits: NDArray[np.intp] = (np.searchsorted(np.sort(ox - e), x1, side="left")
                              - np.searchsorted(np.sort(ox + e), x0, side="right"))
    return hits


def overlaps(placer: Placer, box: tuple[float, float, float, float]) -> int:
    """How many of the placer's obstacles (marks, lines, labels: circles in px) overlap ``box``."""
    obs = np.vstack([placer.points, placer.labels])
    if not len(obs):
        return 0
    dx = np.maximum(np.maximum(box[0] - obs[:, 0], obs[:, 0] - box[2]), 0)
    dy = np.maximum(np.maximum(box[1] - obs[:, 1], obs[:, 1] - box[3]), 0)
    return int((dx * dx + dy * dy < obs[:, 2] ** 2).sum())


def annotation_height(placer: Placer, texts: Sequence[tuple[str, float, str, float]]) -> float | None:
    """The lowest height (px above the x axis, from 8 px up to mid-chart) where the region and ridge annotations
    (text, x, align, px above the others) cross no roof or ceiling line and no label; None when there is none."""
    boxes = []
    for text, tx, align, up in texts:
        (X,), _ = placer.xy([tx], [1.0])
        length = len(text) * CHAR_PX
        s0 = X - length if align == "right" else X - length / 2 if align == "center" else X
        boxes.append((s0, s0 + length, up))
    hard = np.vstack([placer.lines, placer.labels])
    for base in np.arange(8.0, placer.height / 2, 4.0):
        if all(box_hits(hard, np.array([a]), np.array([b]), base + up, base + up + LINE_PX)[0] == 0
               for a, b, up in boxes):
            return float(base)
    return None
