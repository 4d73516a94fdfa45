"""Pure helpers behind the Streamlit pages: device labels, summaries and display tables built from an
:class:`~roofcore.analyze.Analysis`. No Streamlit here (pages stay thin, and this stays testable).

Tables meant for ``st.dataframe`` keep numbers numeric (so columns sort) in one display unit per
column, named in :data:`KERNEL_COLUMNS`; the page turns that into column formats.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import yaml

from .analyze import Analysis, analyze
from .catalog import Catalog, hardware_to_json, load_bytes
from .ingest import aggregate
from .models import Hardware, Precision, Workload
from .resources import data_dir
from .roofline import FLAG_CODES, Flag
from .units import (fmt_bandwidth, fmt_bytes, fmt_factor, fmt_flops, fmt_intensity, fmt_money, fmt_pct, fmt_rate,
                    fmt_time)

#: the workload shown before anything is uploaded
BUNDLED_EXAMPLE = data_dir("examples") / "transformer_block.yaml"
BUNDLED_NAME = "examples/transformer_block.yaml"
DEFAULT_DEVICE = "h100-sxm"
#: most rows a kernels table sends to the browser (the CSV download has all)
TABLE_ROW_LIMIT = 5000

#: one sentence per flag code, for the Overview's grouping
FLAG_HELP = {
    "above-roof": "Faster than the roofline allows: an input (FLOPs, bytes, units, precision, scope) is wrong.",
    "far-below-roofs": "Under 10% of the roof: latency, launch overhead or occupancy dominate.",
    "tiny-kernel": "Under 1 µs per launch: launch-bound; batch or fuse rather than tune.",
    "missing-time": "No measured time: only the roofline bound is known.",
    "zero-time": "A measured time of zero or less: achieved rate left unknown.",
    "missing-flops": "FLOPs unknown (not zero): no roofline time or bound for these kernels.",
    "missing-bytes": "Off-chip bytes unknown (not zero): no roofline time or bound for these kernels.",
    "level-not-on-device": "Bytes at a level or link the device does not have.",
    "no-ceiling": "The device has no ceiling for the kernel's precision.",
}


# ----------------------------------------------------------------------------------------------- devices


def device_label(hw: Hardware) -> str:
    """``"NVIDIA · H100 SXM5 80GB (h100-sxm)"``: the vendor prefix is dropped from the name when repeated."""
    name = hw.name
    if name.lower().startswith(hw.vendor.lower() + " "):
        name = name[len(hw.vendor) + 1:]
    return f"{hw.vendor} · {name} ({hw.id})" + (" · unverified" if hw.unverified else "")


def device_order(devices: Iterable[Hardware]) -> list[str]:
    """Device ids grouped by vendor, then by name (what the hardware picker lists)."""
    return [h.id for h in sorted(devices, key=lambda h: (h.vendor.lower(), h.name.lower(), h.id))]


def effective_catalog(base: Catalog, custom: Iterable[tuple[Hardware, bool]]) -> Catalog:
    """The built-in catalog plus the session's custom devices (which may override an id they say so for)."""
    cat = base
    for hw, overrides in custom:
        cat = cat.with_device(hw, overrides=overrides)
    return cat


def parse_custom_devices(raw: bytes, file: str, builtin: Catalog,
                         session: dict[str, tuple[Hardware, bool]]) -> list[tuple[Hardware, bool]]:
    """Devices from catalog YAML (an upload, or the form's), validated like any catalog file.

    An id may replace one of this session's devices; a built-in id needs ``overrides: true``. Raises
    :class:`~roofcore.errors.CatalogError` naming the file, key path, expected, found and a hint.
    """
    devices = load_bytes(raw, file)
    new = {hw.id for hw, _ in devices}
    catalog = effective_catalog(builtin, [v for k, v in session.items() if k not in new])
    for hw, overrides in devices:
        catalog = catalog.with_device(hw, overrides=overrides)
    return devices


@dataclass(frozen=True)
class DeviceForm:
    """What the "add a device" form collects, in the units its fields show."""

    id: str
    name: str
    vendor: str
    kind: str
    ceilings: Sequence[tuple[str, str, float]]  #: (precision, unit, TFLOP/s)
    hbm_bandwidth: float  #: TB/s
    hbm_capacity: float = 0.0  #: GB, 0 = not given
    hbm_label: str = ""
    l2_bandwidth: float = 0.0  #: TB/s, 0 = no L2 roof
    l2_capacity: float = 0.0  #: MB
    link_name: str = ""
    link_bandwidth: float = 0.0  #: GB/s per direction
    source: str = "entered in the Roofline app"
    overrides: bool = False


def device_form_yaml(form: DeviceForm) -> str:
    """Catalog YAML for the form's device, so it passes through the catalog loader and its messages."""
    dev: dict = {"id": form.id.strip(), "name": form.name.strip() or form.id.strip(), "vendor": form.vendor.strip(),
                 "kind": form.kind}
    if form.overrides:
        dev["overrides"] = True
    dev["compute"] = [{"precision": p, "unit": u, "peak": f"{v:g} TFLOP/s", "source": "S1"}
                      for p, u, v in form.ceilings]
    hbm = {"level": "hbm", "bandwidth": f"{form.hbm_bandwidth:g} TB/s", "source": "S1"}
    if form.hbm_label.strip():
        hbm["label"] = form.hbm_label.strip()
    if form.hbm_capacity > 0:
        hbm["capacity"] = f"{form.hbm_capacity:g} GB"
    dev["memory"] = [hbm]
    if form.l2_bandwidth > 0:
        l2 = {"level": "l2", "bandwidth": f"{form.l2_bandwidth:g} TB/s", "source": "S1"}
        if form.l2_capacity > 0:
            l2["capacity"] = f"{form.l2_capacity:g} MB"
        dev["memory"].append(l2)
    if form.link_name.strip() and form.link_bandwidth > 0:
        dev["links"] = [{"link": form.link_name.strip().lower(), "bandwidth": f"{form.link_bandwidth:g} GB/s",
                         "source": "S1"}]
    doc = {"schema_version": 1, "sources": {"S1": form.source.strip() or "entered in the Roofline app"},
           "devices": [dev]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)


# ----------------------------------------------------------------------------------------------- workload


def content_key(files: Sequence[tuple[bytes, str]], fmt: str | None = None) -> str:
    """A key naming uploaded files by their content: SHA-256 of each name and its bytes, and the format
    override. The same files give the same key in every session (so their parse can be shared), different
    bytes never do."""
    h = hashlib.sha256()
    for data, name in files:
        h.update(len(name.encode()).to_bytes(8, "little") + name.encode() + len(data).to_bytes(8, "little"))
        h.update(data)
    h.update((fmt or "").encode())
    return "sha256:" + h.hexdigest()


def device_key(hw: Hardware) -> str:
    """A device by its figures: two sessions' custom devices with the same id but other numbers differ."""
    doc = json.dumps(hardware_to_json(hw), sort_keys=True, default=str)
    return f"{hw.id}:{hashlib.sha256(doc.encode()).hexdigest()[:16]}"


def analysis_token(workload_key: str, hws: Sequence[Hardware], combine: bool, achievable: bool) -> str:
    """Names one analysis by its content: the workload's key, every device's figures and the options."""
    return "|".join([workload_key, *(device_key(h) for h in hws), f"combine={combine}", f"achievable={achievable}"])


def combine_launches(workload: Workload) -> Workload:
    """Repeated launches of one kernel (same name, precision, unit, group) summed into one row.

    A workload without repeats is returned unchanged, keeping each row's provenance.
    """
    f = workload.frame
    keys = [k for k in ("name", "precision", "unit", "group") if k in f.columns]
    if f.empty or f["name"].is_unique or not f.duplicated(subset=keys).any():  # unique names: no repeats
        return workload
    return aggregate(workload)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])|:(?=\S)")
#: what makes Markdown (and Streamlit's LaTeX, emoji and colour directives) of plain text: emphasis, code, math,
#: links and HTML, strike-through, tables, entities, and a colon before a word (``ns::a::b`` would show 🅰️)
_MSG_SPECIAL = re.compile(r"[\\`*\[\]<>~|$&#]|:(?=\S)|_+")
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))", re.M)  # a list item, a setext underline, "1." at a line start


def escape_markdown(text: str) -> str:
    """User text (kernel names, file names, profiler messages) shown literally in Streamlit markdown, on one line."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), " ".join(str(text).split()))


def escape_message(text: object) -> str:
    """A message from the engine (an error, a warning, a note) as Markdown that renders exactly as the text:
    ``$…$`` is not math, ``*``, ``_`` and backticks are not emphasis or code, ``ns::a::b`` is not an emoji.
    Line breaks are kept (as hard breaks). Fewer characters are escaped than :func:`escape_markdown` does, so
    the Markdown source stays close to the text: an underscore between two letters or digits (``ERR_NVGPUCTRPERM``,
    ``dram__bytes``) cannot start emphasis and stays as it is."""
    text = str(text).strip()

    def esc(m: re.Match) -> str:
        a, b = m.start(), m.end()
        if m.group(0)[0] == "_" and 0 < a and b < len(text) and text[a - 1].isalnum() and text[b].isalnum():
            return m.group(0)  # between two letters or digits: inert
        return "".join("\\" + c for c in m.group(0))

    out = _MSG_SPECIAL.sub(esc, text)
    out = _LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else
                                                  "\\" + m.group(2)), out)
    return "  \n".join(line.rstrip() for line in out.splitlines())


def unescape_markdown(text: str) -> str:
    """The text an :func:`escape_message` or :func:`escape_markdown` string shows (for tests and logs)."""
    return re.sub(r"\\(.)", r"\1", text.replace("  \n", "\n"))


def skipped_frame(workload: Workload) -> pd.DataFrame:
    """The input rows left out of ``workload`` and why."""
    return pd.DataFrame([{"file": s.source, "row": s.row, "reason": s.reason} for s in workload.skipped],
                        columns=["file", "row", "reason"])


def subset(analysis: Analysis, rows: Sequence[int] | np.ndarray) -> Analysis:
    """The same analysis for a few kernels (row positions): the engine run again on just them, cheap and exact."""
    w = analysis.workload
    sub = replace(w, frame=w.frame.iloc[np.asarray(rows, dtype=np.int64)].reset_index(drop=True))
    return analyze(sub, analysis.hardware, achievable=analysis.achievable)


def time_key(analysis: Analysis, hw_id: str) -> np.ndarray:
    """Seconds per kernel to rank by: measured time where known, else the roofline time (0 if neither)."""
    t = analysis.workload.frame["time_s"].to_numpy(dtype=np.float64)
    return np.nan_to_num(np.where(np.isnan(t), analysis.result(hw_id).t_roof, t), nan=0.0)


# ----------------------------------------------------------------------------------------------- overview


@dataclass(frozen=True)
class Metric:
    label: str
    value: str
    help: str


def kernel_counts(w: Workload) -> tuple[int, int]:
    """Distinct kernels (what combining repeated launches leaves) and launches, as the sidebar and Overview say."""
    f = w.frame
    keys = [k for k in ("name", "precision", "unit", "group") if k in f.columns]
    names = len(f[keys].astype(object).fillna("").drop_duplicates()) if len(f) else 0
    return names, int(f["count"].sum())


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 kernel"``, ``"1,545 kernels"``."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def count_text(w: Workload) -> str:
    """``"18 kernels (98 launches)"``, ``"1 kernel"``: the one way the sidebar and the Overview count a workload."""
    names, launches = kernel_counts(w)
    return plural(names, "kernel") + (f" ({plural(launches, 'launch', 'launches')})" if launches != names else "")


def bound_kind_shares(summary: dict) -> dict[str, float]:
    """Time share per bound kind (``memory``, ``compute``, ``link``, ``unknown``), fractions summing to 1."""
    out: dict[str, float] = {}
    for bound, share in summary["time_share_by_bound"].items():
        kind = bound.split(":")[0] if bound.split(":")[0] in ("memory", "compute", "link") else "unknown"
        out[kind] = out.get(kind, 0.0) + share
    return out


def overview_metrics(summary: dict) -> list[Metric]:
    """The Overview's headline numbers for one device, formatted with units."""
    basis = "measured time" if summary["share_basis"] == "measured" else "roofline time"
    kinds = bound_kind_shares(summary)
    cov = summary["coverage"]
    partial = cov["kernels_known"] < cov["kernels"]
    scope = (f" Over the {cov['kernels_known']:,} of {cov['kernels']:,} kernels whose roofline is known "
             "(FLOPs and bytes known); the others are left out, not counted as zero." if partial else "")
    out = [Metric("Roofline time", fmt_time(summary["t_roof_s"]),
                  "Σ t_roof: every kernel at its roof, perfect overlap of compute and memory (the lower bound)." + scope)]
    if summary["time_s"] is not None:
        out.append(Metric("Measured time", fmt_time(summary["time_s"]), "Σ measured time over the kernels that have one."))
        sp = summary["speedup_if_at_roof"]
        out.append(Metric("Speedup if at roof", fmt_factor(sp) if sp else "–",
                          "Measured ÷ time if every timed kernel reached its roof (Amdahl over the workload)." + scope))
    if partial:
        share = cov["time_share_known"]
        out.append(Metric("Roofline known", fmt_pct(share, 2) if share is not None else
                          f"{cov['kernels_known']:,} of {cov['kernels']:,}",
                          "Share of the measured time (else of the kernels) whose FLOPs and bytes are known, which "
                          "the headline numbers cover."))
    none = cov["kernels_known"] == 0  # no kernel has a bound: a 0% would read as a finding
    out.append(Metric("Memory-bound", "–" if none else fmt_pct(kinds.get("memory", 0.0) + kinds.get("link", 0.0)),
                      f"Share of {basis} in kernels bound by a memory level or a link."))
    out.append(Metric("Compute-bound", "–" if none else fmt_pct(kinds.get("compute", 0.0)),
                      f"Share of {basis} in kernels bound by a compute ceiling."))
    return out


#: per-launch time under which a kernel is "a few microseconds": launch overhead (a few µs) and a profiler's
#: replay (flushed caches, base clocks) weigh as much as its work, so no roof promises its speedup
MICRO_KERNEL_S = 10e-6


def micro_kernel_note(analysis: Analysis, hw_id: str) -> str:
    """A caveat for a "× faster" headline whose gain comes mostly (half or more of the headroom) from kernels
    of under :data:`MICRO_KERNEL_S` per launch; empty otherwise. ``"2 kernels of a few µs per launch (11.7 µs
    in all) hold 100% of that gain: …"``."""
    r = analysis.result(hw_id)
    f = analysis.workload.frame
    t = f["time_s"].to_numpy(dtype=np.float64)
    count = np.maximum(f["count"].to_numpy(dtype=np.float64), 1.0)
    ok = ~np.isnan(t) & ~np.isnan(r.t_roof) & (t > 0)
    head = np.where(ok, np.maximum(t - r.t_roof, 0.0), 0.0)
    total = head.sum()
    small = ok & (t / count < MICRO_KERNEL_S)
    if total <= 0 or head[small].sum() < 0.5 * total:
        return ""
    n = int(small.sum())
    return (f"{plural(n, 'kernel')} of a few microseconds per launch ({fmt_time(float(t[small].sum()))} in all) "
            f"{'holds' if n == 1 else 'hold'} {fmt_pct(head[small].sum() / total, 2)} of that gain: at that size "
            "launch overhead and the profiler's replay weigh as much as the work, so the speedup is what the roofs "
            "allow, not a promise; batch or fuse such kernels before tuning them.")


def top_kernels(analysis: Analysis, hw_id: str, n: int = 10) -> tuple[pd.DataFrame, str]:
    """The kernels to look at first on one device, and what they are ranked by.

    With measured times: by headroom (measured − roofline seconds); without: by roofline time. Only the top
    rows are tabulated, so this stays fast for a million kernels.
    """
    r = analysis.result(hw_id)
    t = analysis.workload.frame["time_s"].to_numpy(dtype=np.float64)
    timed = ~np.isnan(t)
    if timed.any():
        key, basis = np.where(timed, t - r.t_roof, -np.inf), "headroom"
    else:
        key, basis = np.nan_to_num(r.t_roof, nan=-np.inf), "roofline time"
    k = min(n, len(key))
    idx = np.argpartition(-key, k - 1)[:k] if k < len(key) else np.arange(len(key))
    idx = idx[np.argsort(-key[idx], kind="stable")]
    tab = subset(analysis, idx).table(hw_id, messages=False)
    cols = {"Kernel": tab["name"], "Launches": tab["count"], "Bound": tab["bound"].fillna("unknown")}
    if basis == "headroom":
        cols |= {"Time": tab["time_s"].map(fmt_time), "Roofline time": tab["t_roof_s"].map(fmt_time),
                 "Headroom": tab["headroom_s"].map(fmt_time), "Of roof": tab["efficiency"].map(fmt_pct)}
    else:
        cols |= {"Roofline time": tab["t_roof_s"].map(fmt_time),
                 "Attainable": tab["attainable_flops_per_s"].map(fmt_rate),
                 "Intensity": tab[f"intensity_{analysis.result(hw_id).hardware.offchip.name}"].map(fmt_intensity)
                 if f"intensity_{analysis.result(hw_id).hardware.offchip.name}" in tab else "–"}
    return pd.DataFrame(cols), basis


@dataclass(frozen=True)
class FlagGroup:
    code: str
    count: int
    help: str
    examples: tuple[tuple[str, str], ...]  #: (kernel name, the engine's message), the longest-running first


def flag_groups(analysis: Analysis, hw_id: str, examples: int = 3) -> list[FlagGroup]:
    """Flags on one device grouped by code, with counts and the engine's messages for a few kernels each."""
    r = analysis.result(hw_id)
    key = time_key(analysis, hw_id)
    picks: dict[str, np.ndarray] = {}
    for bit, code in FLAG_CODES.items():
        rows = np.flatnonzero((r.flags & int(bit)) != 0)
        if len(rows):
            picks[code] = rows[np.argsort(-key[rows], kind="stable")][:examples]
    if not picks:
        return []
    order = np.unique(np.concatenate(list(picks.values())))
    tab = subset(analysis, order).table(hw_id, messages=True)
    pos = {int(row): i for i, row in enumerate(order)}
    out = []
    for bit, code in FLAG_CODES.items():
        if code not in picks:
            continue
        count = int(((r.flags & int(bit)) != 0).sum())
        ex = []
        for row in picks[code]:
            rec = tab.iloc[pos[int(row)]]
            msg = next((f["message"] for f in rec["flags"] if f["code"] == code), "")
            ex.append((str(rec["name"]), msg))
        out.append(FlagGroup(code, count, FLAG_HELP.get(code, ""), tuple(ex)))
    # attention first: wrong inputs, then performance problems, then missing data
    rank = {c: i for i, c in enumerate(["above-roof", "far-below-roofs", "tiny-kernel", "no-ceiling",
                                        "level-not-on-device", "missing-bytes", "missing-flops", "zero-time",
                                        "missing-time"])}
    return sorted(out, key=lambda g: rank.get(g.code, 99))


# ----------------------------------------------------------------------------------------------- roofline page

#: warnings that say FLOPs or bytes are unknown and how to collect them (the import's own, with the exact options)
_MISSING_NOTE = re.compile(r"unknown|no (CUDA-core )?(FLOP|byte|off-chip)", re.IGNORECASE)
_HOW_NOTE = re.compile(r"Hint:|--metrics|--pmc|profile with|record_shapes|collect ", re.IGNORECASE)


def collect_commands(workload: Workload) -> list[str]:
    """What to run to collect the FLOPs and bytes a workload lacks, in the profiler's own options.

    The import's warnings say it where the format knows (the ncu metrics, the PyTorch profiler's arguments,
    the rocprof counters); a command for the format family is added where none of them gives it whole."""
    from .ingest import kineto, ncu

    out = [w for w in dict.fromkeys(workload.warnings) if _MISSING_NOTE.search(w) and _HOW_NOTE.search(w)]
    said = " ".join(out)
    fams = {f.split("-")[0] for f in workload.formats}
    metrics = ncu.PROFILE_COMMAND.split(" --metrics ", 1)[1].split()[0]
    if fams & {"ncu", "nsys", "nvprof"} and metrics not in said:
        out.append(("Nsight Systems records kernel times only; for FLOPs and bytes profile the same kernels with "
                    "Nsight Compute: " if "nsys" in fams else "Profile with Nsight Compute: ") + ncu.PROFILE_COMMAND)
    if "pytorch" in fams and "record_shapes=True" not in said:
        out.append("PyTorch profiler: " + kineto.SHAPES_HINT)
    if "rocprof" in fams and not re.search(r"--pmc|pmc:|pmc_perf", said):
        out.append("rocprof-compute profile -n run -- ./app, then upload the run's pmc_perf.csv with its sysinfo.csv "
                   "(and roofline.csv for measured roofs)")
    if "inventory" in fams and not out:
        out.append("Give every row flops and bytes columns (or an op with its shapes).")
    return out


@dataclass(frozen=True)
class ChartGaps:
    """Why kernels of an analysis are not on its roofline chart (counts over the whole workload, first device)."""

    total: int  #: kernels (rows) in the analysis
    drawn: int  #: kernels with a mark
    missing_flops: int  #: FLOPs unknown
    missing_bytes: int  #: off-chip bytes unknown
    unknown: int  #: either unknown: no roofline at all
    moves: int  #: 0 FLOP with a known roof: data movement, judged by bandwidth instead
    commands: tuple[str, ...]  #: how to collect what is missing

    @property
    def text(self) -> str:
        """One paragraph for the chart area: what is drawn, what is missing for the rest, where moves are."""
        if self.drawn == self.total:
            return ""
        head = (f"No kernel of {self.total:,} can be drawn" if not self.drawn else
                f"Drawn: {self.drawn:,} of {plural(self.total, 'kernel')}. Not drawn")
        parts = []
        if self.unknown:
            what = [f"FLOPs unknown for {self.missing_flops:,}" if self.missing_flops else "",
                    f"off-chip bytes unknown for {self.missing_bytes:,}" if self.missing_bytes else ""]
            parts.append(f"{self.unknown:,} {'has' if self.unknown == 1 else 'have'} no roofline "
                         f"({', '.join(w for w in what if w)}: unknown, not zero)")
        if self.moves:
            parts.append(f"{self.moves:,} {'moves' if self.moves == 1 else 'move'} data without arithmetic (0 FLOP), "
                         "which a log-log roofline cannot place: the achieved bandwidth against the memory or link "
                         "roof is in the data-movement table below")
        rest = self.total - self.drawn - self.unknown - self.moves
        if rest > 0:
            parts.append(f"{rest:,} left out by the top-kernels setting, or with no positive time or rate")
        return head + ": " + "; ".join(parts) + "." + (" To collect what is missing:" if self.commands else "")


def chart_gaps(analysis: Analysis, drawn: int) -> ChartGaps:
    """Counts of :class:`ChartGaps` for a chart that drew ``drawn`` kernels (``RooflineFigure.kernels``)."""
    r = analysis.results[0]
    flags = r.flags.astype(np.int64)
    flops = analysis.workload.frame["flops"].to_numpy(dtype=np.float64)
    known = ~np.isnan(r.t_roof)
    unknown = int((~known).sum())
    return ChartGaps(total=len(flops), drawn=int(drawn),
                     missing_flops=int(((flags & int(Flag.MISSING_FLOPS)) != 0).sum()),
                     missing_bytes=int(((flags & int(Flag.MISSING_BYTES)) != 0).sum()), unknown=unknown,
                     moves=int((known & (flops == 0)).sum()),
                     commands=tuple(collect_commands(analysis.workload)) if unknown else ())


def data_movement(analysis: Analysis, hw_ids: Sequence[str]) -> pd.DataFrame:
    """Kernels that move data without arithmetic (0 FLOP: copies, memsets, vcopy), judged where they can be:
    the bytes on the resource that binds them (a link for a host copy, off-chip memory for a device copy),
    that roof's bandwidth, the achieved bandwidth (bytes ÷ measured time) and its share of the roof.

    One row per kernel × device, longest first; bandwidths in GB/s, bytes in MB, time in ms (numbers, so the
    columns sort). Empty when there are none."""
    parts = []
    f = analysis.workload.frame
    flops = f["flops"].to_numpy(dtype=np.float64)
    t = f["time_s"].to_numpy(dtype=np.float64)
    for hw_id in hw_ids:
        r = analysis.result(hw_id)
        sel = np.flatnonzero((flops == 0) & ~np.isnan(r.t_roof) & (r.mem_idx > 0))
        if not len(sel):
            continue
        hw = r.hardware
        display = {**{lv.name: lv.display for lv in hw.levels}, **{lk.name: lk.display for lk in hw.links}}
        idx = r.mem_idx[sel].astype(np.int64)
        names = np.array(r.resources, dtype=object)[idx]
        beta = np.array(r.bandwidths, dtype=np.float64)[idx]
        moved = np.full(len(sel), np.nan)
        for name in set(names):
            on = names == name
            moved[on] = f[f"bytes_{name}"].to_numpy(dtype=np.float64)[sel[on]]
        ts = t[sel]
        with np.errstate(divide="ignore", invalid="ignore"):
            achieved = np.where(ts > 0, moved / ts, np.nan)
        kinds = np.array(r.resource_kinds, dtype=object)[idx]
        parts.append(pd.DataFrame({
            "Kernel": f["name"].to_numpy()[sel].astype(str), "Device": hw_id, "Launches": f["count"].to_numpy()[sel],
            "Moves over": [f"{display.get(n, n)} ({k})" for n, k in zip(names, kinds, strict=True)],
            "Bytes (MB)": moved * 1e-6, "Time (ms)": ts * 1e3, "Achieved (GB/s)": achieved * 1e-9,
            "Roof (GB/s)": beta * 1e-9, "Of roof (%)": achieved / beta * 100.0,
            "_key": np.nan_to_num(np.where(np.isnan(ts), r.t_roof[sel], ts), nan=0.0)}))
    if not parts:
        return pd.DataFrame(columns=["Kernel", "Of roof (%)", "Achieved (GB/s)", "Roof (GB/s)", "Moves over",
                                     "Bytes (MB)", "Time (ms)", "Launches", "Device"])
    out = pd.concat(parts, ignore_index=True).sort_values("_key", ascending=False, kind="stable")
    # the verdict first (share of the roof, achieved, roof), the amounts after: a narrow page keeps it in view
    order = ["Kernel", "Of roof (%)", "Achieved (GB/s)", "Roof (GB/s)", "Moves over", "Bytes (MB)", "Time (ms)",
             "Launches", "Device"]
    return out[order].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------- kernels

#: display column -> (source column, scale to the display unit, printf format, help)
KERNEL_COLUMNS: dict[str, tuple[str, float, str, str]] = {
    "FLOPs (G)": ("flops", 1e-9, "%.4g", "GFLOP, total over launches"),
    "Off-chip bytes (MB)": ("bytes_off", 1e-6, "%.4g", "MB read and written off-chip (HBM/DRAM), total"),
    "Intensity (FLOP/B)": ("intensity_off", 1.0, "%.4g", "FLOPs per off-chip byte"),
    "Time (ms)": ("time_s", 1e3, "%.4g", "measured, total over launches"),
    "Roofline time (ms)": ("t_roof_s", 1e3, "%.4g", "the least time the roofs allow (perfect overlap)"),
    "Headroom (ms)": ("headroom_s", 1e3, "%.4g", "measured − roofline time: the most a fix can save"),
    "Achieved (TFLOP/s)": ("achieved_flops_per_s", 1e-12, "%.4g", "FLOPs ÷ measured time"),
    "Attainable (TFLOP/s)": ("attainable_flops_per_s", 1e-12, "%.4g", "FLOPs ÷ roofline time"),
    "Of roof (%)": ("efficiency", 100.0, "%.3g%%", "roofline time ÷ measured time"),
}


def flag_codes(mask: np.ndarray) -> np.ndarray:
    """Comma-separated flag codes per kernel from the engine's bitmask, vectorised."""
    out = pd.Series([""] * len(mask), dtype=object)
    m = np.asarray(mask, dtype=np.int64)
    for bit, code in FLAG_CODES.items():
        hit = (m & int(bit)) != 0
        if hit.any():
            out[hit] = out[hit] + np.where(out[hit] == "", code, ", " + code)
    return out.to_numpy()


def kernel_table(analysis: Analysis, hw_ids: Sequence[str]) -> pd.DataFrame:
    """One row per kernel × device with numeric columns in display units (see :data:`KERNEL_COLUMNS`).

    Hidden helper columns: ``_row`` (kernel position in the workload) and ``_flags`` (bitmask).
    """
    parts = []
    for hw_id in hw_ids:
        r = analysis.result(hw_id)
        off = r.hardware.offchip.name
        tab = analysis.table(hw_id, messages=False)
        part = pd.DataFrame({"Kernel": tab["name"].astype(str), "Device": hw_id, "Launches": tab["count"],
                             "Group": tab["group"].fillna(""), "Precision": tab["precision"].fillna(""),
                             "Bound": tab["bound"].fillna("unknown")})
        src = tab.assign(bytes_off=tab.get(f"bytes_{off}", np.nan), intensity_off=tab.get(f"intensity_{off}", np.nan))
        for col, (field, scale, _fmt, _help) in KERNEL_COLUMNS.items():
            part[col] = src[field].to_numpy(dtype=np.float64) * scale
        part["Flags"] = flag_codes(tab["flags_mask"].to_numpy())
        part["Source"] = tab["source"].astype(str) + ": " + tab["row"].astype(str)
        part["_row"] = np.arange(len(tab))
        part["_flags"] = tab["flags_mask"].to_numpy()
        part["_key"] = np.nan_to_num(np.where(np.isnan(tab["time_s"]), tab["t_roof_s"], tab["time_s"]), nan=0.0)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out = out.replace([np.inf, -np.inf], np.nan)
    return out


def filter_kernels(table: pd.DataFrame, *, bounds: Sequence[str] = (), flags: Sequence[str] = (),
                   groups: Sequence[str] = (), text: str = "") -> pd.DataFrame:
    """Rows of :func:`kernel_table` matching every given filter (any of the bounds/flags/groups; name substring)."""
    keep = np.ones(len(table), dtype=bool)
    if bounds:
        keep &= table["Bound"].isin(list(bounds)).to_numpy()
    if flags:
        bits = sum(int(b) for b, c in FLAG_CODES.items() if c in flags)
        keep &= (table["_flags"].to_numpy(dtype=np.int64) & bits) != 0
    if groups:
        keep &= table["Group"].isin(list(groups)).to_numpy()
    if text.strip():
        keep &= table["Kernel"].str.contains(text.strip(), case=False, regex=False).to_numpy()
    return table[keep]


#: most kernels the detail picker offers (longest-running first; the table's name filter finds the rest)
CHOICE_LIMIT = 1000


def kernel_choices(analysis: Analysis, hw_id: str, limit: int = CHOICE_LIMIT) -> dict[int, str]:
    """Kernels offered for the detail view, longest-running first: row position -> label ("name  [bf16, mlp]")."""
    key = time_key(analysis, hw_id)
    if len(key) > limit:
        idx = np.argpartition(-key, limit - 1)[:limit]
        idx = idx[np.argsort(-key[idx], kind="stable")]
    else:
        idx = np.argsort(-key, kind="stable")
    f = analysis.workload.frame.iloc[idx]
    labels = []
    for name, *parts in zip(f["name"].astype(str), f["precision"], f["group"], strict=True):
        shown = [p for p in parts if isinstance(p, str) and p]  # a missing precision may be NaN: not text
        labels.append(name + (f"  [{', '.join(shown)}]" if shown else ""))
    return dict(zip(idx.tolist(), labels, strict=True))


def kernel_detail(analysis: Analysis, row: int) -> dict[str, dict]:
    """Everything about one kernel on each device: headline numbers, per-resource times and its flags.

    Per resource: the bytes (or FLOPs) it moves, the kernel's intensity against it, its rate, and the time it
    needs (``bytes / β``, ``FLOPs / π``); the largest is the roofline time and names the bound.
    """
    sub = subset(analysis, [row])
    out = {}
    for r in sub.results:
        hw = r.hardware
        rec = sub.table(hw.id, messages=True).iloc[0]
        flops = rec["flops"]
        peak = rec["peak_flops_per_s"]
        rows = [{"Resource": f"compute ({rec['ceiling'] or 'no ceiling'})", "Amount": fmt_flops(flops),
                 "Intensity": "", "Rate": fmt_rate(peak),
                 "Time": fmt_time(flops / peak if peak and not math.isnan(peak) else float("nan"))}]
        for res in (*hw.levels, *hw.links):
            col = f"bytes_{res.name}"
            if col not in rec.index:
                continue
            b = rec[col]
            beta = (res.achievable or res.bandwidth) if sub.achievable else res.bandwidth
            rows.append({"Resource": f"{res.display} ({res.name})", "Amount": fmt_bytes(b),
                         "Intensity": fmt_intensity(rec.get(f"intensity_{res.name}")),
                         "Rate": fmt_bandwidth(beta), "Time": fmt_time(b / beta if not math.isnan(b) else float("nan"))})
        lacking = [n for n in sub.workload.byte_names if n not in hw.level_map and n not in hw.link_map]
        for n in lacking:
            rows.append({"Resource": f"{n} (not on this device)", "Amount": fmt_bytes(rec[f"bytes_{n}"]),
                         "Intensity": fmt_intensity(rec.get(f"intensity_{n}")), "Rate": "–", "Time": "–"})
        headline = [
            Metric("Roofline time", fmt_time(rec["t_roof_s"]), "the largest of the per-resource times"),
            Metric("Measured time", fmt_time(rec["time_s"]), "total over launches"),
            Metric("Of roof", fmt_pct(rec["efficiency"]), "roofline time ÷ measured time"),
            Metric("Attainable", fmt_rate(rec["attainable_flops_per_s"]), "FLOPs ÷ roofline time"),
            Metric("Achieved", fmt_rate(rec["achieved_flops_per_s"]), "FLOPs ÷ measured time"),
            Metric("No-overlap time", fmt_time(rec["t_serial_s"]),
                   "the sum of the per-resource times: compute and memory traffic never overlapping"),
        ]
        bound = rec["bound"] if isinstance(rec["bound"], str) else "unknown"  # None or NaN: no bound
        kind, _, res_name = bound.partition(":")
        if flops == 0 and kind in ("memory", "link") and f"bytes_{res_name}" in rec.index:
            # data movement: FLOP/s are zero by definition; its bandwidth against the roof is the measure
            res = (hw.level_map if kind == "memory" else hw.link_map)[res_name]
            beta = (res.achievable or res.bandwidth) if sub.achievable else res.bandwidth
            moved, t = rec[f"bytes_{res_name}"], rec["time_s"]
            headline[3] = Metric("Roof", fmt_bandwidth(beta), f"{res.display} bandwidth: the roof that binds it")
            headline[4] = Metric("Achieved", fmt_bandwidth(moved / t if t and t == t and t > 0 else float("nan")),
                                 f"{res.display} bytes ÷ measured time (0 FLOP: data movement)")
        out[hw.id] = {"hardware": hw, "metrics": headline, "bound": bound, "resources": pd.DataFrame(rows),
                      "flags": list(rec["flags"]),
                      "source": f"{rec['source']}: {rec['row']}"}
    return out


# ----------------------------------------------------------------------------------------------- hardware


def _tags(fig) -> str:
    tags = [t for t, on in (("measured", fig.measured), ("derived", bool(fig.derivation)),
                            ("unverified", fig.unverified)) if on]
    return ", ".join(tags)


def ceilings_frame(hw: Hardware) -> pd.DataFrame:
    ridge_off = {c.key: c.peak / hw.offchip.bandwidth for c in hw.ceilings}
    return pd.DataFrame([{
        "Ceiling": c.key + (" (default)" if c.key == hw.default_ceiling else ""),
        "Peak (dense)": fmt_rate(c.peak), "Achievable": fmt_rate(c.achievable) if c.achievable else "–",
        "Sparse (reference only)": fmt_rate(c.sparse) if c.sparse else "–",
        f"Ridge vs {hw.offchip.display}": fmt_intensity(ridge_off[c.key]),
        "Marks": _tags(c.figure), "Source": c.figure.source} for c in hw.ceilings])


def levels_frame(hw: Hardware) -> pd.DataFrame:
    ridge = hw.ridge()
    return pd.DataFrame([{
        "Level": lv.name, "Label": lv.display, "Bandwidth": fmt_bandwidth(lv.bandwidth),
        "Achievable": fmt_bandwidth(lv.achievable) if lv.achievable else "–",
        "Capacity": fmt_bytes(lv.capacity) if lv.capacity else "–",
        f"Ridge ({hw.default_ceiling})": fmt_intensity(ridge[lv.name]), "Marks": _tags(lv.figure),
        "Source": lv.figure.source} for lv in hw.levels])


def links_frame(hw: Hardware) -> pd.DataFrame:
    ridge = hw.ridge()
    return pd.DataFrame([{
        "Link": lk.name, "Label": lk.display, "Bandwidth (per direction)": fmt_bandwidth(lk.bandwidth),
        "Achievable": fmt_bandwidth(lk.achievable) if lk.achievable else "–",
        f"Ridge ({hw.default_ceiling})": fmt_intensity(ridge[lk.name]), "Marks": _tags(lk.figure),
        "Source": lk.figure.source} for lk in hw.links],
        columns=["Link", "Label", "Bandwidth (per direction)", "Achievable", f"Ridge ({hw.default_ceiling})", "Marks",
                 "Source"])


def hardware_comparison(hws: Sequence[Hardware]) -> pd.DataFrame:
    """Devices side by side (one column each): identity, every ceiling (theoretical / achievable), every
    level and link (bandwidth, capacity), ridge points against the default ceiling, and unverified marks."""
    rows: dict[str, dict[str, str]] = {}

    def put(key: str, hw: Hardware, value: str) -> None:
        rows.setdefault(key, {})[device_label(hw)] = value

    for hw in hws:
        put("Vendor", hw, hw.vendor)
        put("Kind · scope", hw, f"{hw.kind.value} · {hw.scope.value}")
        put("Default ceiling", hw, f"{hw.default_ceiling} {fmt_rate(hw.default.peak)}")
        put("Unverified figures", hw, "yes" if hw.unverified or any(
            f.unverified for f in (*(c.figure for c in hw.ceilings), *(lv.figure for lv in hw.levels))) else "no")
    keys = sorted({c.key for h in hws for c in h.ceilings},
                  key=lambda k: ([p.value for p in Precision].index(k.split("-")[0]), k))
    for key in keys:
        for hw in hws:
            c = hw.ceiling_map.get(key)
            put(f"Compute {key}", hw, "–" if c is None else fmt_rate(c.peak) + (
                f" (achievable {fmt_rate(c.achievable)})" if c.achievable else ""))
    levels = list(dict.fromkeys(lv.name for h in hws for lv in h.levels))
    for name in levels:
        for hw in hws:
            lv = hw.level_map.get(name)
            put(f"Memory {name}", hw, "–" if lv is None else f"{lv.display} {fmt_bandwidth(lv.bandwidth)}" + (
                f", {fmt_bytes(lv.capacity)}" if lv.capacity else "") + (
                f" (achievable {fmt_bandwidth(lv.achievable)})" if lv.achievable else ""))
    for name in dict.fromkeys(lk.name for h in hws for lk in h.links):
        for hw in hws:
            lk = hw.link_map.get(name)
            put(f"Link {name}", hw, "–" if lk is None else f"{lk.display} {fmt_bandwidth(lk.bandwidth)}")
    for hw in hws:
        put("Ridge, off-chip (default ceiling)", hw, fmt_intensity(hw.ridge()[hw.offchip.name]))
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "Figure"
    return frame.fillna("–")


def sources_frame(hw: Hardware) -> pd.DataFrame:
    """The documents behind the device's figures (declared ids first, then any quoted inline)."""
    used = {}
    for f in (*(c.figure for c in hw.ceilings), *(lv.figure for lv in hw.levels), *(lk.figure for lk in hw.links)):
        sid = f.source.split(":", 1)[0]
        used[sid if sid in hw.sources else f.source] = hw.sources.get(sid, f.source)
    return pd.DataFrame([{"Id": k if k in hw.sources else "", "Source": v} for k, v in used.items()])


__all__ = [
    "BUNDLED_EXAMPLE",
    "DEFAULT_DEVICE",
    "ChartGaps",
    "MICRO_KERNEL_S",
    "chart_gaps",
    "micro_kernel_note",
    "collect_commands",
    "count_text",
    "data_movement",
    "escape_message",
    "plural",
    "unescape_markdown",
    "FLAG_HELP",
    "KERNEL_COLUMNS",
    "TABLE_ROW_LIMIT",
    "DeviceForm",
    "FlagGroup",
    "Metric",
    "bound_kind_shares",
    "ceilings_frame",
    "combine_launches",
    "device_form_yaml",
    "device_label",
    "device_order",
    "effective_catalog",
    "escape_markdown",
    "filter_kernels",
    "flag_codes",
    "flag_groups",
    "hardware_comparison",
    "kernel_choices",
    "kernel_counts",
    "kernel_detail",
    "kernel_table",
    "levels_frame",
    "links_frame",
    "overview_metrics",
    "parse_custom_devices",
    "skipped_frame",
    "sources_frame",
    "subset",
    "time_key",
    "top_kernels",
]


# ----------------------------------------------------------------------------------------------- planner

#: example builder parameters the Planner's Build tab starts from (a Llama-7B-class decode; one attention layer)
BUILDER_DEFAULTS: dict[str, dict[str, object]] = {
    "transformer": {"layers": 32, "hidden": 4096, "heads": 32, "ffn": 11008, "vocab": 32000, "batch": 1,
                    "seq": 2048, "phase": "decode"},
    "attention": {"batch": 8, "heads": 32, "q_len": 2048, "kv_len": 2048, "head_dim": 128},
}
#: a What-if scenario inlines the current workload's kernels up to this many; beyond it the base must be a file
INLINE_LIMIT = 2000
#: the example scenarios offered for download on the Planner
SCENARIO_EXAMPLES = data_dir("examples") / "scenarios"
#: the What-if steps in the order the Planner applies them
WHATIF_KINDS = ("fuse", "precision", "batch", "shard", "comm_fraction")


def _fmt_x(v: float | None) -> str:
    return f"{v:.2f}×" if v is not None and v == v and math.isfinite(v) else "–"


def _costs(v: float | None) -> dict[str, str]:
    """A cost per run as two columns a reader can quote: "$0.0036" per run and "$3.56" per 1,000 runs."""
    return {"Cost per run": fmt_money(v), "Cost per 1,000 runs": fmt_money(v * 1000 if v is not None else None)}


def projection_frame(p) -> pd.DataFrame:
    """A :class:`roofcore.plan.Projection`'s per-device totals for display (times, speedups and cost formatted)."""
    rows = []
    for t in p.totals:
        top = next(iter(t.bound_share), None)
        rows.append({"Device": t.hardware, "Name": t.name, "Σ t_roof": fmt_time(t.t_roof_s),
                     "Estimate": fmt_time(t.estimate_s),
                     "Speedup": _fmt_x(t.speedup), "Speedup (roof)": _fmt_x(t.speedup_roof),
                     **_costs(t.cost_per_run),
                     "Mostly bound by": f"{top} ({t.bound_share[top]:.0%})" if top else "–",
                     "Cross-vendor": "yes" if t.cross_vendor else ""})
    return pd.DataFrame(rows)


def projection_totals(p) -> pd.DataFrame:
    """Per device the Σ t_roof and estimate in seconds (numbers, for the Planner's bar chart)."""
    return pd.DataFrame([{"device": t.hardware, "t_roof_s": t.t_roof_s, "estimate_s": t.estimate_s}
                         for t in p.totals])


def apply_steps(workload: Workload, steps: Sequence[dict]) -> Workload:
    """``workload`` through What-if ``steps`` in order; each step is a scenario step (``{"name": ..., KIND: value}``
    with KIND one of :data:`WHATIF_KINDS`), parsed exactly as :func:`roofcore.plan.run_scenario` parses it."""
    from . import plan

    w = workload
    for i, step in enumerate(steps):
        kind = next(k for k in WHATIF_KINDS if k in step)
        w = plan._apply(kind, step[kind], w, f"steps[{i}].{kind}")
    return w


def variant_totals(base: Analysis, variant: Analysis, units: float = 1.0) -> pd.DataFrame:
    """Per device: Σ t_roof of the base and of the variant, and the speedup (formatted).

    ``units``: how many times the base's work one run of the variant does (a batch step of ×8: 8). The speedup
    then compares work per unit (per sample, per token): the variant's time ÷ ``units`` against the base's, so
    a batch of 8 that takes 3× as long is 2.67× faster per sample, not 0.33× per run."""
    rows = []
    per_unit = units != 1.0
    for hw in base.hardware:
        tb, tv = base.summary(hw.id)["t_roof_s"], variant.summary(hw.id)["t_roof_s"]
        row = {"Device": hw.id, "Base Σ t_roof": fmt_time(tb), "Variant Σ t_roof": fmt_time(tv)}
        if per_unit:
            row |= {"Base per unit": fmt_time(tb), "Variant per unit": fmt_time(tv / units if tv else None),
                    "Speedup per unit": _fmt_x(tb * units / tv if tb and tv else None)}
        else:
            row["Speedup"] = _fmt_x(tb / tv if tb and tv else None)
        row["Kernels"] = f"{len(base.workload)} → {len(variant.workload)}"
        rows.append(row)
    return pd.DataFrame(rows)


def batch_units(steps: Sequence[dict]) -> float:
    """How many times the base's work a run of the What-if ``steps`` does: the product of their whole-workload
    batch factors (a batch step limited to some kernels changes no unit)."""
    units = 1.0
    for step in steps:
        b = step.get("batch")
        if isinstance(b, int | float) and not isinstance(b, bool):
            units *= float(b)
        elif isinstance(b, dict) and not b.get("kernels") and isinstance(b.get("factor"), int | float):
            units *= float(b["factor"])
    return units


def _clean_value(v):
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    return v


def inline_kernels(workload: Workload) -> list[dict]:
    """The workload's kernels as inventory YAML entries (totals over launches; unknown values left out)."""
    f = workload.frame
    cols = ["name", "count", "flops", *workload.byte_columns,
            *(c for c in ("read_bytes", "written_bytes", "weight_bytes", "time_s") if c in f),
            "precision", "unit", "group"]
    out = []
    for rec in f[[c for c in cols if c in f]].to_dict("records"):
        k = {}
        for c, v in rec.items():
            v = _clean_value(v)
            if v is None or (isinstance(v, float) and v != v):
                continue
            k[c] = v
        out.append(k)
    return out


def scenario_base(entry: dict) -> tuple[dict | None, str]:
    """The ``base:`` of a scenario for the app's current workload entry, and a sentence saying what it is.

    A built workload (the Build tab) is its builder and parameters; another workload of at most
    :data:`INLINE_LIMIT` kernels is inlined (``base: {kernels: [...]}``: FLOPs, bytes, the read/written/weight
    split and measured times, totals over launches); a larger one cannot be inlined (``None``): the scenario
    must name its file (``base: {file: PATH}``), which only the CLI reads."""
    if entry.get("builder"):
        return ({"builder": entry["builder"], "params": dict(entry.get("params") or {})},
                f"base: the {entry['builder']} builder with its parameters.")
    w = entry["workload"]
    if len(w) > INLINE_LIMIT:
        return None, (f"{len(w):,} kernels are too many to inline (at most {INLINE_LIMIT:,}): write "
                      "`base: {file: PATH}` by hand and run the scenario with `roofline plan`.")
    return ({"name": w.name, "kernels": inline_kernels(w)},
            f"base: the {len(w):,} kernels of {w.name}, inline (FLOPs and bytes as analysed).")


def scenario_yaml(name: str, base: dict, hardware: Sequence[str], steps: Sequence[dict], *,
                  measured_on: str | None = None, price_per_hour: dict[str, float] | None = None) -> str:
    """A scenario document (``roofline plan`` and the Planner's Scenario tab read it back)."""
    doc: dict = {"name": name, "base": base, "hardware": list(hardware)}
    if measured_on:
        doc["measured_on"] = measured_on
    if price_per_hour:
        doc["price_per_hour"] = {k: float(v) for k, v in price_per_hour.items()}
    doc["steps"] = [dict(s) for s in steps]
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)


def scenario_frame(result) -> pd.DataFrame:
    """A :class:`roofcore.plan.ScenarioResult` as one row per variant × device (formatted)."""
    rows = []
    for v in result.variants:
        for t in v.projection.totals:
            rows.append({"Variant": v.name, "Step": v.kind, "Device": t.hardware, "Σ t_roof": fmt_time(t.t_roof_s),
                         "Estimate": fmt_time(t.estimate_s), "vs base": _fmt_x(v.speedup_vs_base.get(t.hardware)),
                         **_costs(t.cost_per_run)})
    return pd.DataFrame(rows)


def comparison_frame(c) -> pd.DataFrame:
    """A :class:`roofcore.plan.Comparison`'s matched kernels, most time saved first (times formatted)."""
    t = c.table.assign(saved=(c.table["time_old"] - c.table["time_new"]).abs())
    t = t.sort_values("saved", ascending=False, kind="stable")
    names = t["name"].astype(str)
    if "name_new" in t:  # a pair made by hand shows both names
        names = names.where(t["name_new"] == t["name"], names + " → " + t["name_new"].astype(str))
    return pd.DataFrame({"Kernel": names.to_numpy(), "Before": t["time_old"].map(fmt_time).to_numpy(),
                         "After": t["time_new"].map(fmt_time).to_numpy(),
                         "Speedup": t["speedup"].map(_fmt_x).to_numpy(), "Basis": t["basis"].to_numpy(),
                         "Bound before": t["bound_old"].to_numpy(), "Bound after": t["bound_new"].to_numpy()})


def unmatched_frames(c) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The kernels of a :class:`roofcore.plan.Comparison` found in one run only (before, after), each with its
    time (measured, else roofline) and share of its run's time, longest first: what pairing by hand would add."""
    out = []
    for a, names, total in ((c.old, c.only_old, c.totals["old_time_s"]), (c.new, c.only_new, c.totals["new_time_s"])):
        f = a.workload.frame
        sel = f["name"].astype(str).isin(set(names)).to_numpy()
        t = f["time_s"].to_numpy(dtype=np.float64)[sel]
        timed = ~np.isnan(t) & (t > 0)
        tt = np.where(timed, t, a.result(c.hardware).t_roof[sel])
        frame = pd.DataFrame({"Kernel": f["name"].astype(str).to_numpy()[sel], "_t": tt,
                              "Time": [fmt_time(v) for v in tt], "Basis": np.where(timed, "measured", "roofline"),
                              "Share": [fmt_pct(v / total, 2) if total and v == v else "–" for v in tt]})
        out.append(frame.sort_values("_t", ascending=False, kind="stable").drop(columns="_t").reset_index(drop=True))
    return out[0], out[1]


__all__ += ["BUILDER_DEFAULTS", "INLINE_LIMIT", "SCENARIO_EXAMPLES", "WHATIF_KINDS", "apply_steps",
            "batch_units", "comparison_frame", "inline_kernels", "unmatched_frames", "projection_frame", "projection_totals", "scenario_base",
            "scenario_frame", "scenario_yaml", "variant_totals"]
