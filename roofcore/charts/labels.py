"""The text on a roofline: labels along the roofs and ceilings (or, where lines run too close, a key of them),
the kernels' numbers beside their marks, each drawn over a white halo; placed by :class:`.placer._Placer`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .look import DIGIT_PX, NUMBER_FONT_PX
from .placer import CHAR_PX, LINE_PX, Placer, overlaps
from .points import radius_px
from .spec import BUILD, TEXT, X2, Y2, src

#: key rows: a dash for the line, then its label
KEY_DASH = "— "


def label_key(entries: pd.DataFrame, title: str, placer: Placer) -> pd.DataFrame | None:
    """A key of line labels (``entries``: device, kind, text, in the order the lines run top to bottom) set as a
    block of rows at a free spot of the plot, for lines too close together to carry a label each: one row per
    line, the first row the title. Rows: x, y (data; the row's left end and middle), text, device, kind, title.
    None when the chart has no room for it."""
    texts = [title, *(KEY_DASH + t for t in entries["text"])]
    w = max(len(t) for t in texts) * CHAR_PX + 6
    h = len(texts) * LINE_PX + 4
    at = placer.place_box(w, h)
    if at is None:
        return None
    x0, yt = at
    rows = []
    for i, text in enumerate(texts):
        cy = yt - 2 - (i + 0.5) * LINE_PX
        placer.labels = np.vstack([placer.labels, placer._box_circles(x0, x0 + len(text) * CHAR_PX + 4, cy, 0.0)])
        e = entries.iloc[i - 1] if i else None
        rows.append({"x": 10 ** ((x0 + 2) / placer.px + placer.lx0), "y": 10 ** (cy / placer.py + placer.ly0),
                     "text": text, "device": "" if e is None else e["device"], "kind": "" if e is None else e["kind"],
                     "title": e is None, "shared": False if e is None else bool(e.get("shared", False))})
    return pd.DataFrame(rows)


#: px from the plot's bottom edge to the first key row set under the x axis (below its labels and title)
_BELOW_AXIS_PX = 52.0


def label_key_below(entries: pd.DataFrame, title: str, placer: Placer) -> pd.DataFrame:
    """The key of :func:`label_key` set under the x axis, where there is always room: the title on a row of its
    own, then the entries in as many columns as fit the plot's width, read down each column (top to bottom of the
    chart's lines). Keys set here before stack downwards. Same rows as :func:`label_key`."""
    texts = [KEY_DASH + t for t in entries["text"]]
    col_w = max(len(t) for t in texts) * CHAR_PX + 14
    cols = max(1, min(len(texts), int(placer.width // col_w)))
    per = math.ceil(len(texts) / cols)
    top = -_BELOW_AXIS_PX - placer.below

    def data(px: float, py: float) -> tuple[float, float]:
        return 10 ** (px / placer.px + placer.lx0), 10 ** (py / placer.py + placer.ly0)

    x0, y0 = data(2.0, top - LINE_PX / 2)
    rows = [{"x": x0, "y": y0, "text": title, "device": "", "kind": "", "title": True, "shared": False}]
    for i, (text, (_, e)) in enumerate(zip(texts, entries.iterrows(), strict=True)):
        xd, yd = data(2.0 + (i // per) * col_w, top - (i % per + 1.5) * LINE_PX)
        rows.append({"x": xd, "y": yd, "text": text, "device": e["device"], "kind": e["kind"], "title": False,
                     "shared": bool(e.get("shared", False))})
    placer.below += (per + 1) * LINE_PX + 6
    return pd.DataFrame(rows)


def ceiling_labels(segs: pd.DataFrame, placer: Placer, first: frozenset[str] = frozenset(),
                   groups: pd.DataFrame | None = None) -> pd.DataFrame:
    """One label per distinct theoretical ceiling value (ceilings with the same peak share it) where it hides
    no kernel mark and no other label. ``first``: bounds ("compute:bf16-matrix") whose ceilings are placed
    before the others (those binding the highlighted kernels: they must get a label); ``groups``: the
    :func:`ceiling_groups` of ``segs`` and ``first`` when the caller has them."""
    cols = ["device", "device_id", "x", "y", "text", "below", "shared"]
    g = ceiling_groups(segs, first) if groups is None else groups
    if g.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    x_left = 10 ** placer.lx0
    # "first" ones first, then from the top down (a stable sort: equal keys keep the groups' order)
    for r in sorted(g.to_dict("records"), key=lambda r: (not r["first"], -r["y"])):
        # first choice: left of where the ceiling meets the roofs, above it, where no kernel can be (it would
        # be above its roof); then along the ceiling, then below it; last, the spot hiding the fewest kernels
        tries = [dict(x0=x_left, x1=r["x"], reverse=True), dict(x0=r["x"], x1=r["x2"]),
                 dict(x0=r["x"], x1=r["x2"], above=False), dict(x0=x_left, x1=r["x"], reverse=True, above=False),
                 dict(x0=x_left, x1=r["x"], reverse=True, strict=False), dict(x0=r["x"], x1=r["x2"], strict=False)]
        for kw in tries:
            x0, x1 = kw.pop("x0"), kw.pop("x1")
            at = placer.place(x0, r["y"], x1, r["y"], r["text"], avoid_lines=True, **kw)
            if at:
                rows.append({"device": r["device"], "device_id": r["device_id"], "x": at[0], "y": r["y"],
                             "text": r["text"], "below": not kw.get("above", True), "shared": r["shared"]})
                break
        else:
            _unlabelled(r["device"], r["text"])
    return pd.DataFrame(rows, columns=cols)


def ceiling_groups(segs: pd.DataFrame, first: frozenset[str] = frozenset()) -> pd.DataFrame:
    """The ceiling labels to place: one per device and distinct theoretical peak (ceilings with the same peak
    share it, "bf16 matrix / fp16 matrix · 989 TFLOP/s"), and one for a label several devices would repeat (the
    same ceilings at the same peak: ``shared``, said once, :func:`shared_text`); ``first`` marks those of the
    given bounds."""
    cols = ["device_id", "y", "device", "x", "x2", "text", "first", "shared"]
    if not len(segs):
        return pd.DataFrame(columns=cols)
    c = segs[(segs["kind"] == "compute") & ~segs["achievable"]]
    if c.empty:
        return pd.DataFrame(columns=cols)
    # by device and peak, in order of appearance (a few rows: plain lists, no groupby)
    groups: dict[tuple[str, float], dict[str, Any]] = {}
    for dev, dev_id, x, x2, y, label, value, name in zip(*(c[k].tolist() for k in (
            "device", "device_id", "x", "x2", "y", "label", "value", "name")), strict=True):
        g = groups.setdefault((dev_id, y), {"device_id": dev_id, "y": y, "device": dev, "x": x, "x2": x2,
                                            "labels": [], "value": value, "first": False})
        if label not in g["labels"]:
            g["labels"].append(label)
        g["first"] = g["first"] or f"compute:{name}" in first
    # one label per text: devices with the same ceilings at the same peak share it
    by_text: dict[str, dict[str, Any]] = {}
    for v in groups.values():
        text = " / ".join(v["labels"]) + " · " + v["value"]
        got = by_text.setdefault(text, {**v, "text": text, "devices": []})
        got["first"] = got["first"] or v["first"]
        got["devices"] = list(dict.fromkeys([*got["devices"], v["device_id"]]))
    return pd.DataFrame([{"device_id": v["device_id"], "y": v["y"], "device": v["device"], "x": v["x"],
                          "x2": v["x2"], "text": shared_text(v["text"], len(v["devices"])),
                          "first": v["first"], "shared": len(v["devices"]) > 1}
                         for v in by_text.values()], columns=cols)


def shared_text(text: str, devices: int) -> str:
    """A line label said once for ``devices`` devices whose roofs coincide: ``"PCIe 5.0 x16 63 GB/s (2
    devices)"``."""
    return text if devices < 2 else f"{text} ({devices} devices)"


def distinct_roofs(segs: pd.DataFrame) -> pd.DataFrame:
    """The theoretical diagonal roofs to label, top to bottom: one per label text (several devices with the same
    roof at the same bandwidth share one, ``shared``, said once with :func:`shared_text`), ``text`` the label."""
    d = segs[(segs["kind"] != "compute") & ~segs["achievable"]] if len(segs) else segs
    if d.empty:
        return d.assign(text=pd.Series(dtype=object), shared=pd.Series(dtype=bool))
    # a few rows: plain records. Steepest first (a stable sort: equal bandwidths keep their order), one per label
    recs = sorted(d.to_dict("records"), key=lambda r: -r["beta"])
    devices: dict[str, set[str]] = {}
    for r in recs:
        devices.setdefault(r["label"], set()).add(r["device_id"])
    rows, seen = [], set()
    for r in recs:
        if r["label"] not in seen:
            seen.add(r["label"])
            n = len(devices[r["label"]])
            rows.append({**r, "text": shared_text(r["label"], n), "shared": n > 1})
    return pd.DataFrame(rows, columns=[*d.columns, "text", "shared"])


def _unlabelled(device: str, text: str) -> None:
    """Note a roof or ceiling left without a label (no room that crosses no line): the caption names it."""
    build = BUILD.get()
    if build is not None:
        build.unlabelled.append(f"{device}: {text}")


def roof_labels(segs: pd.DataFrame, placer: Placer, first: frozenset[str] = frozenset(),
                roofs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Labels along each theoretical diagonal roof, rotated to its slope, where they hide nothing; the roofs
    of the bounds in ``first`` ("memory:hbm") placed before the others; ``roofs``: the :func:`distinct_roofs` of
    ``segs`` when the caller has them."""
    d = distinct_roofs(segs) if roofs is None else roofs
    cols = ["device", "device_id", "x", "y", "text", "angle"]
    if d.empty:
        return pd.DataFrame(columns=[*cols, "below", "shared"])
    angle = -math.degrees(math.atan(placer.py / placer.px))
    rows = []
    # "first" ones first, then the steepest (a stable sort: equal keys keep the roofs' order)
    for r in sorted(d.to_dict("records"), key=lambda r: (f"{r['kind']}:{r['name']}" not in first, -r["beta"])):
        # above the line, else below it; only then a spot that hides the fewest kernel marks and lines
        for kw in ({}, {"above": False}, {"strict": False}, {"strict": False, "above": False}):
            at = placer.place(r["x"], r["y"], r["x2"], r["y2"], r["text"], start=0.04, avoid_lines=True, **kw)
            if at:
                rows.append({"device": r["device"], "device_id": r["device_id"], "x": at[0], "y": at[1],
                             "text": r["text"], "angle": angle, "below": kw.get("above") is False,
                             "shared": r["shared"]})
                break
        else:
            _unlabelled(r["device"], r["text"])
    return pd.DataFrame(rows, columns=[*cols, "below", "shared"])


def halo_labels(data: pd.DataFrame, enc: dict[str, Any], role: str, **mark: Any) -> list[dict[str, Any]]:
    """Text drawn twice: a white halo underneath keeps it readable over lines and kernel marks."""
    data = src(data)
    halo = {"data": data, "mark": {"type": "text", "stroke": "white", "strokeWidth": 3, "strokeJoin": "round",
                                   "opacity": 0.9, **mark},
            "encoding": {k: v for k, v in enc.items() if k != "color"}}
    return [halo, {"data": data, "mark": {"type": "text", **mark}, "description": role, "encoding": enc}]


def number_labels(points: pd.DataFrame, placer: Placer, size_dom: tuple[float, float], x: dict[str, Any],
                  y: dict[str, Any]) -> list[dict[str, Any]]:
    """Layers that print each numbered kernel's number (``points["number"] > 0``) beside its mark, as "#n".

    Each number takes the first spot around its mark, nearest first, that overlaps no other number and
    stays inside the plot, preferring one that hides no mark, line or label; a number set further out
    than touching its mark gets a thin leader line. The spots join the placer's labels, so roof and
    ceiling labels placed afterwards avoid them."""
    sel = points[points["number"].to_numpy(dtype=np.float64) > 0].sort_values("number", kind="stable")
    if sel.empty:
        return []
    px, py = placer.xy(sel["intensity"], sel["perf"])
    radius = radius_px(sel["size_s"].to_numpy(dtype=np.float64), size_dom)
    h = NUMBER_FONT_PX + 1.0
    dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
    taken: list[tuple[float, float, float, float]] = []
    rows, leaders = [], []
    for X, Y, r, n in zip(px, py, radius, sel["number"].astype(int), strict=True):
        text = f"#{n}"
        w = (len(text) + 0.2) * DIGIT_PX + 2  # "#" is a little wider than a digit
        best, best_cost = None, math.inf
        for ring, gap in enumerate((1.5, 8.0, 16.0, 28.0)):
            for ux, uy in dirs:
                d = r + gap
                cx = X + ux * (d + w / 2) / (math.sqrt(2) if ux and uy else 1)
                cy = Y + uy * (d + h / 2) / (math.sqrt(2) if ux and uy else 1)
                box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                if box[0] < 0 or box[1] < 0 or box[2] > placer.width or box[3] > placer.height:
                    continue
                clash = sum(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken)
                cost = 1000 * clash + overlaps(placer, box) + 0.5 * ring
                if cost < best_cost:
                    best, best_cost = (cx, cy, ring), cost
            if best is not None and best_cost < 1:  # a clean spot on this ring: nearer beats cleaner further out
                break
        if best is None:  # a mark in a corner of a tiny plot: on the mark itself
            best = (X, Y, 0)
        cx, cy, ring = best
        taken.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        placer.labels = np.vstack([placer.labels, placer._box_circles(cx - w / 2, cx + w / 2, cy, 0.0)])
        rows.append((10 ** (cx / placer.px + placer.lx0), 10 ** (cy / placer.py + placer.ly0), text))
        if ring:
            leaders.append((10 ** (X / placer.px + placer.lx0), 10 ** (Y / placer.py + placer.ly0), *rows[-1][:2]))
    out: list[dict[str, Any]] = []
    if leaders:
        lines = pd.DataFrame(leaders, columns=["x", "y", "x2", "y2"])
        out.append({"data": src(lines), "mark": {"type": "rule", "strokeWidth": 0.8, "color": "#475569"},
                    "description": "kernel_number_leaders", "encoding": {"x": x, "y": y, "x2": X2, "y2": Y2}})
    labels = pd.DataFrame(rows, columns=["x", "y", "text"])
    out += halo_labels(labels, {"x": x, "y": y, "text": TEXT}, "kernel_numbers", align="center", baseline="middle",
                   fontSize=NUMBER_FONT_PX, fontWeight="bold", color="#0f172a")
    return out
