"""Measured ceilings (FORMATS.md §5.1, §11): files that describe a machine, not a workload.

- ``rocprof-compute-roofline``: rocprof-compute's ``roofline.csv``, one row per GPU (``device,HBMBw,HBMBwLow,
  hbmBwHigh,…``; 3.x adds ``MALLBw`` and VALU/MFMA ceilings per type), GB/s and GFLOP/s from its micro-benchmark.
- ``ert-roofline``: the Empirical Roofline Toolkit's ``roofline.json`` (``empirical.gbytes.data`` =
  ``[["L1", GB/s], …, ["DRAM", GB/s]]``, ``empirical.gflops.data`` = ``[["FP64 GFLOPs", GFLOP/s]]``).

Both are *companions*: read with a workload (:func:`roofcore.ingest.read_many`) they give
``{"measured_hardware": [Hardware, …]}``, which becomes ``Workload.measured``; roofline.csv also keeps its table as
``rocprof_roofline`` (the ``measured_*`` meta of pmc_perf.csv). Given as a catalog (``--catalog FILE``,
:func:`measured_devices`) their devices are added to the catalog, to analyse any workload against.

Each device is "this machine as measured": every figure's peak *and* achievable value is the measured number
(there is no datasheet figure to put beside it), marked ``measured`` with the file and tool as its source. Memory
levels take the catalog's names (``hbm`` for DRAM/HBM off-chip, ``mall``, ``l2``, ``l1``, ``lds``), compute
ceilings the catalog's precision and unit keys (VALU = ``vector``, MFMA = ``matrix``). roofline.csv's Low/High
columns (the spread of the benchmark's runs) are kept in each figure's note; zeros (MI300X's FP6/FP4 columns) mean
"not measured" and are left out, as are precisions the catalog has no key for (FP6, I32, I64).
"""

from __future__ import annotations

import re
from pathlib import PurePath

import numpy as np
import pandas as pd

from ..errors import CatalogError, InputError, LocatedError
from ..models import Ceiling, DeviceKind, Figure, Hardware, MemoryLevel, Precision, Unit, canonical_level
from . import check_text, register_format
from .rocprof_common import (
    DIGITS,
    cell_text,
    context_dict,
    find_header,
    header_sniffer,
    load_json,
    no_header,
    read_table,
)

# --------------------------------------------------------------------------------------------- rocprof-compute

ROOFLINE_HEADER = re.compile(r"^[ \t]*\"?device\"?,\"?HBMBw\"?,", re.M | re.I)
#: header typos in rocprof-compute's roofline.csv, fixed on read
ROOFLINE_TYPOS = {"hbmBwHigh": "HBMBwHigh", "MFMAFI8OpsLow": "MFMAI8OpsLow"}
#: roofline.csv column -> (level name, label); off-chip first, then outward to inward
ROOFLINE_LEVELS = (("HBMBw", "hbm", "HBM"), ("MALLBw", "mall", "MALL (Infinity Cache)"), ("L2Bw", "l2", "L2"),
                   ("L1Bw", "l1", "vL1D"), ("LDSBw", "lds", "LDS"))
#: roofline.csv column -> (precision, unit); VALU columns are vector ceilings, MFMA columns matrix ones
ROOFLINE_CEILINGS = (
    ("FP64Flops", "fp64", "vector"), ("FP32Flops", "fp32", "vector"), ("FP16Flops", "fp16", "vector"),
    ("BF16Flops", "bf16", "vector"), ("FP8Flops", "fp8", "vector"), ("I8Ops", "int8", "vector"),
    ("MFMAF64Flops", "fp64", "matrix"), ("MFMAF32Flops", "fp32", "matrix"), ("MFMAF16Flops", "fp16", "matrix"),
    ("MFMABF16Flops", "bf16", "matrix"), ("MFMAF8Flops", "fp8", "matrix"), ("MFMAI8Ops", "int8", "matrix"),
    ("MFMAF4Flops", "fp4", "matrix"),
)
_GPU_TOKEN = re.compile(r"(?<![a-z0-9])(mi\d{2,3}[a-z]?|gfx\d{3}[a-z]?)(?![a-z0-9])", re.I)


@register_format("rocprof-compute-roofline", "A table of measured ceilings (HBM, L2, L1, LDS bandwidth and FLOP/s "
                 "per GPU) from rocprof-compute roofline.csv, context for pmc_perf.csv or a device to analyse against",
                 header_sniffer(ROOFLINE_HEADER), priority=20, companion=True)
def parse_roofline(data: bytes, source: str, context: dict | None = None) -> dict:
    """``{"rocprof_roofline": {device: {column: value}}, "measured_hardware": [Hardware per device]}``.

    The table is in B/s and FLOP/s (file: GB/s, GFLOP/s; × 1e9); header typos are fixed (``hbmBwHigh`` →
    ``HBMBwHigh``, ``MFMAFI8OpsLow`` → ``MFMAI8OpsLow``); a cell that is not a positive number is left out (unknown).
    """
    text = check_text(data, source)
    at = find_header(text, ROOFLINE_HEADER)
    if at is None:
        raise no_header(text, source, "a rocprof-compute roofline.csv header (device,HBMBw,…)",
                        "load roofline.csv from the workload folder rocprof-compute wrote.")
    table = read_table(text, at, source, lambda header: list(range(len(header))))
    cols = [ROOFLINE_TYPOS.get(h, h) for h in table.header]
    out: dict[int, dict[str, float]] = {}
    if table.n:
        dev = cell_text(table.columns[0])
        ok = dev.str.fullmatch(DIGITS).to_numpy(dtype=bool)
        values = {}
        for j, name in enumerate(cols[1:], start=1):
            v = pd.to_numeric(cell_text(table.columns[j]), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            values[name] = v * 1e9
        for i in np.flatnonzero(ok):
            row = {k: float(v[i]) for k, v in values.items() if np.isfinite(v[i]) and v[i] > 0}
            out.setdefault(int(dev.iloc[i]), row)
    if not out:
        raise InputError(where=source, expected="a row per GPU (device number, then GB/s and GFLOP/s)",
                         found="none" if not table.n else "no row with a device number",
                         hint="load roofline.csv as rocprof-compute wrote it.")
    info = context_dict(context, "rocprof_sysinfo") or {}
    model = _gpu_model(source, info)
    hardware = [hw for dev, row in out.items() if (hw := _rocprof_device(dev, row, model, source, info)) is not None]
    return {"rocprof_roofline": out, "measured_hardware": hardware}


def _gpu_model(source: str, info: dict) -> str:
    """The GPU's name for ids: the file's path or name (``…/MI200/roofline.csv``), else sysinfo's, else ``rocprof``."""
    hit = _GPU_TOKEN.search(source)
    if hit:
        return hit.group(1).lower()
    for key in ("gpu_model", "gpu_series", "gpu_arch"):
        if isinstance(info.get(key), str) and _slug(info[key]):
            return _slug(info[key])
    return "rocprof"


def _rocprof_device(dev: int, row: dict[str, float], model: str, source: str, info: dict) -> Hardware | None:
    base = PurePath(source).name
    src = f"{base}: rocprof-compute roofline.csv, empirical micro-benchmark of device {dev}"

    def fig(col: str, unit: str) -> Figure:
        low, high = row.get(f"{col}Low"), row.get(f"{col}High")
        note = f"measured range {low / 1e9:,.6g}–{high / 1e9:,.6g} {unit} over the benchmark's runs" if low and high \
            else None
        return Figure(source=src, measured=True, notes=note)

    levels = [MemoryLevel(name=name, bandwidth=row[col], figure=fig(col, "GB/s"), label=label, achievable=row[col],
                          achievable_figure=fig(col, "GB/s"))
              for col, name, label in ROOFLINE_LEVELS if col in row]
    ceilings = [Ceiling(precision=Precision(p), unit=Unit(u), peak=row[col], figure=fig(col, "GFLOP/s"),
                        achievable=row[col], achievable_figure=fig(col, "GFLOP/s"))
                for col, p, u in ROOFLINE_CEILINGS if col in row]
    if not levels or levels[0].name != "hbm" or not ceilings:
        return None  # no off-chip bandwidth or no compute figure: not a device a roofline can be drawn for
    keys = [c.key for c in ceilings]
    default = next((k for k in ("bf16-matrix", "fp16-matrix", "fp32-matrix", "fp32-vector") if k in keys), keys[0])
    label = str(info.get("gpu_model") or model).upper() if model != "rocprof" else "AMD"
    return Hardware(
        id=f"{model}-gpu{dev}-measured", name=f"{label} GPU {dev} (measured, {base})", vendor="AMD",
        kind=DeviceKind.GPU, ceilings=tuple(ceilings), levels=tuple(levels), default_ceiling=default,
        notes=(f"Ceilings measured by rocprof-compute's roofline micro-benchmark on device {dev} of this machine; each "
               "peak is the measured value (no datasheet figure)."),
        aliases=(), origin=source)


# --------------------------------------------------------------------------------------------- ERT

ERT_HINT = "load the roofline.json the Empirical Roofline Toolkit wrote (Results.<machine>/roofline.json)."
_ERT_PRECISION = re.compile(r"\b(FP64|FP32|FP16|BF16|FP8|INT8)\b", re.I)
_ERT_DROP = re.compile(r"^(?:ert\d*|roofline|results?|json|v?\d+)$", re.I)


def _ert_sniff(head: str, filename: str) -> bool:
    start = head.lstrip()[:1]
    return start == "{" and '"empirical"' in head and ('"gbytes"' in head or '"gflops"' in head)


@register_format("ert-roofline", "The Empirical Roofline Toolkit's roofline.json: bandwidths and FLOP/s measured on "
                 "one machine, a device to analyse a workload against", _ert_sniff, priority=25, companion=True)
def parse_ert(data: bytes, source: str, context: dict | None = None) -> dict:
    """``{"measured_hardware": [Hardware]}``: GB/s per memory level and GFLOP/s per precision (× 1e9)."""
    doc = load_json(data, source, ERT_HINT)
    emp = doc.get("empirical") if isinstance(doc, dict) else None
    if not isinstance(emp, dict):
        raise InputError(where=source, expected='an "empirical" object (gbytes, gflops)', found="none", hint=ERT_HINT)
    meta_text = " ".join(str(x) for part in ("gbytes", "gflops") for x in _metadata(emp.get(part)))
    version = re.search(r"ERT_VERSION\s+(\S+)", meta_text)
    tool = f"Empirical Roofline Toolkit {version.group(1)}" if version else "Empirical Roofline Toolkit"
    base = PurePath(source).name
    fig = Figure(source=f"{base}: {tool} roofline.json, measured on this machine", measured=True)
    levels: list[MemoryLevel] = []
    for name, value in _pairs(emp.get("gbytes"), f"{source}: $.empirical.gbytes.data"):
        level = canonical_level(name)
        if level in {lv.name for lv in levels}:
            continue
        levels.append(MemoryLevel(name=level, bandwidth=value, figure=fig, label=name, achievable=value,
                                  achievable_figure=fig))
    ceilings: list[Ceiling] = []
    for name, value in _pairs(emp.get("gflops"), f"{source}: $.empirical.gflops.data"):
        p = _ERT_PRECISION.search(name)
        if p is None or any(c.precision.value == p.group(1).lower() for c in ceilings):
            continue
        ceilings.append(Ceiling(precision=Precision(p.group(1).lower()), unit=Unit.VECTOR, peak=value, figure=fig,
                                achievable=value, achievable_figure=fig))
    offchip = [lv for lv in levels if lv.name == "hbm"]
    if not offchip:
        raise InputError(where=f"{source}: $.empirical.gbytes.data", expected="a DRAM (off-chip) bandwidth",
                         found=", ".join(lv.label or lv.name for lv in levels) or "none",
                         hint="ERT measures DRAM last; run it with a working set larger than the caches.")
    if not ceilings:
        raise InputError(where=f"{source}: $.empirical.gflops.data", expected='a FLOP rate such as ["FP64 GFLOPs", …]',
                         found="none", hint="run ERT with its FLOP sweep (ERT_FLOPS) enabled.")
    on_chip = sorted((lv for lv in levels if lv.name != "hbm"), key=lambda lv: lv.bandwidth)
    gpu = re.search(r"'ERT_GPU':\s*\[\s*True", meta_text) is not None
    threads = sorted({int(t) for t in re.findall(r"OPENMP_THREADS\s+(\d+)", meta_text)})
    slug = _ert_slug(source, meta_text)
    kind = DeviceKind.GPU if gpu else DeviceKind.CPU
    return {"measured_hardware": [Hardware(
        id=f"ert-{slug}-measured" if slug else "ert-measured", name=f"ERT {slug or 'machine'} (measured, {base})",
        vendor="unknown", kind=kind, ceilings=tuple(ceilings), levels=(offchip[0], *on_chip),
        config=(f"{tool}; best runs used {', '.join(map(str, threads))} OpenMP threads" if threads else tool),
        notes=("Ceilings measured by the Empirical Roofline Toolkit on the machine that wrote this file (the whole "
               "machine as ERT ran: every socket and thread it used); each peak is the measured value."),
        origin=source)]}


def _metadata(part: object) -> list:
    meta = part.get("metadata") if isinstance(part, dict) else None
    if not isinstance(meta, dict):
        return []
    return [x for v in meta.values() if isinstance(v, list) for x in v]


def _pairs(part: object, where: str) -> list[tuple[str, float]]:
    """``[[name, value], …]`` in base units (× 1e9); entries that are not a name and a positive number are skipped."""
    data = part.get("data") if isinstance(part, dict) else None
    if not isinstance(data, list):
        return []
    out = []
    for item in data:
        if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], int | float) and not isinstance(item[1], bool)):
            v = float(item[1]) * 1e9
            if np.isfinite(v) and v > 0:
                out.append((item[0].strip(), v))
    return out


def _slug(text: str) -> str:
    return "-".join(t for t in re.split(r"[^a-z0-9]+", text.lower()) if t)


def _ert_slug(source: str, meta_text: str) -> str:
    """A readable id part: the file name's words (``ert1.1.0_skylake_roofline.json`` → ``skylake``), else the
    ``-march`` ERT compiled for; never the host name (ids are shown and shared)."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", PurePath(source).stem) if w and not _ERT_DROP.match(w)]
    if words:
        return _slug("-".join(words))
    march = re.search(r"-march=([A-Za-z0-9_-]+)", meta_text)
    return _slug(march.group(1)) if march else ""


# --------------------------------------------------------------------------------------------- as a catalog


def measured_devices(raw: bytes, file: str) -> list[Hardware] | None:
    """The devices of a measured-ceilings file given as a catalog (``--catalog roofline.csv``), or None when the
    file is not one (then it is read as catalog YAML)."""
    try:
        head = raw[:65536].decode("utf-8-sig", errors="ignore").replace("\r\n", "\n")
    except ValueError:  # pragma: no cover - errors="ignore" decodes anything
        return None
    if _ert_sniff(head, file):
        parse = parse_ert
    elif ROOFLINE_HEADER.search(head):
        parse = parse_roofline
    else:
        return None
    try:
        hardware = parse(raw, file, {})["measured_hardware"]
    except LocatedError as e:  # the reader's message, as a catalog error
        raise CatalogError(where=e.where or file, text=e.text, expected=e.expected, found=e.found,
                           hint=e.hint) from None
    if not hardware:
        raise CatalogError(where=file, expected="at least one device with an off-chip bandwidth and a FLOP rate",
                           found="none", hint="check that the measurement finished.")
    return hardware

