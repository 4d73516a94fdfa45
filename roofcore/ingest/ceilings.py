"""Measured ceilings (docs/formats.md): files that describe a machine, not a workload.

- ``rocprof-compute-roofline``: rocprof-compute's ``roofline.csv``, one row per GPU (``device,HBMBw,HBMBwLow,
  hbmBwHigh,…``; 3.x adds ``MALLBw`` and VALU/MFMA ceilings per type), GB/s and GFLOP/s from its micro-benchmark.
- ``ert-roofline``: the Empirical Roofline Toolkit's ``roofline.json`` (``empirical.gbytes.data`` =
  ``[["L1", GB/s], …, ["DRAM", GB/s]]``, ``empirical.gflops.data`` = ``[["FP64 GFLOPs", GFLOP/s]]``).

Both are *companions*: read with a workload (:func:`roofcore.ingest.read_many`) they give
``{"measured_hardware": [Hardware, …]}``, which becomes ``Workload.measured``; roofline.csv also keeps its table as
``rocprof_roofline`` (the ``measured_*`` meta of pmc_perf.csv). Given as a catalog (``--catalog FILE``,
:func:`measured_devices`) their devices are added to the catalog, to analyse any workload against. The reader
gives a device per GPU (``<model>-gpu<N>-measured``); :func:`~roofcore.ingest.read_many` and
:func:`measured_devices` make the GPUs of one model one device, their median with the spread
(:mod:`roofcore.measured`).

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
from typing import Any

import numpy as np
import pandas as pd

from ..errors import CatalogError, InputError, LocatedError
from ..measured import merge_measured
from ..models import Ceiling, DeviceKind, Figure, Hardware, MemoryLevel, Precision, Unit, canonical_level
from . import check_text, register_format
from .rocprof_common import (
    DIGITS,
    cell_text,
    context_dict,
    find_header,
    header_sniffer,
    header_with,
    load_json,
    no_header,
    position,
    read_table,
)

# --------------------------------------------------------------------------------------------- rocprof-compute

ROOFLINE_HEADER = header_with("device", "HBMBw")  # columns by name, in any order
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
def parse_roofline(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
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
    at_dev = position(table.header, ("device",))
    if table.n and at_dev is not None:
        dev = cell_text(table.columns[at_dev])
        ok = dev.str.fullmatch(DIGITS).to_numpy(dtype=bool)
        values = {}
        for j, name in ((j, c) for j, c in enumerate(cols) if j != at_dev):
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


def _gpu_model(source: str, info: dict[str, Any]) -> str:
    """The GPU's name for ids: the file's path or name (``…/MI200/roofline.csv``), else sysinfo's, else ``rocprof``."""
    hit = _GPU_TOKEN.search(source)
    if hit:
        return hit.group(1).lower()
    for key in ("gpu_model", "gpu_series", "gpu_arch"):
        if isinstance(info.get(key), str) and _slug(info[key]):
            return _slug(info[key])
    return "rocprof"


def _rocprof_device(dev: int, row: dict[str, float], model: str, source: str, info: dict[str, Any]
                    ) -> Hardware | None:
    base = PurePath(source).name
    src = f"{base}: rocprof-compute roofline.csv, empirical micro-benchmark"  # the device: in its id and name

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
def parse_ert(data: bytes, source: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
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


def _metadata(part: object) -> list[Any]:
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
    return list(merge_measured(hardware))  # the GPUs of one model: one device, their median (roofcore.measured)



# --------------------------------------------------------------------------------------------- Nsight Compute

#: per-cycle peaks an ncu export may carry (``--section SpeedOfLight_HierarchicalSingleRooflineChart`` and the
#: other roofline sections put them on the raw page; ``--metrics`` on either page): metric -> (kind, name, label
#: or precision, FLOP per instruction). Memory levels in bytes per cycle, FLOP rates in thread instructions per
#: cycle (an FMA is 2 FLOP, counted as the export's FLOPs count it: docs/formats.md).
NCU_PEAKS = {
    "dram__bytes.sum.peak_sustained": ("level", "hbm", "DRAM", 1.0),
    "lts__t_bytes.sum.peak_sustained": ("level", "l2", "L2", 1.0),
    "l1tex__t_bytes.sum.peak_sustained": ("level", "l1", "L1/TEX", 1.0),
    **{f"{p}__sass_thread_inst_executed_op_{op}_pred_on.sum.peak_sustained": ("ceiling", op, prec, 2.0)
       for p in ("sm", "smsp") for op, prec in (("ffma", "fp32"), ("dfma", "fp64"), ("hfma", "fp16"))},
}
#: the clock each unit's peak is multiplied by: ``<unit>__cycles_elapsed.avg.per_second``, else these
_CLOCK_FALLBACK = {"l1tex": "sm", "smsp": "sm"}
#: FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, "Arithmetic Instructions": 32-bit
#: floating-point add, multiply, multiply-add results per clock cycle per multiprocessor)
FP32_LANES = {"5.0": 128, "5.2": 128, "5.3": 128, "6.0": 64, "6.1": 128, "6.2": 128, "7.0": 64, "7.2": 64,
              "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128, "10.3": 128,
              "11.0": 128, "12.0": 128, "12.1": 128}
#: raw-page device attributes used, in CUDA's units (kHz for clocks, bits for the bus) when the units row is empty
_ATTR = "device__attribute_"
_NCU_ROWS = 20_000  # details-page rows of the first launch read at most (a --set full launch has ~1,000)
_NCU_WINDOW = 16 << 20  # bytes after the header searched for the per-cycle peaks


def ncu_export_devices(data: bytes, source: str, device: str | None, cc: str | None) -> list[Hardware]:
    """The device an Nsight Compute export describes itself, as it ran: ``[]`` when the export says too little.

    Two sources, each figure marked theoretical with its derivation (the clocks are this machine's, measured
    by ncu during the first profiled launch, or its attributes' maximum):

    * the per-cycle peaks of :data:`NCU_PEAKS` × the matching ``<unit>__cycles_elapsed.avg.per_second`` (what
      Nsight Compute's own roofline sections draw): DRAM, L2, L1/TEX bandwidth and the FP32, FP64, FP16 FMA
      rates; tensor peaks are left out (their FLOPs per instruction depend on the instruction);
    * a raw page's device attributes, where those peaks are absent: DRAM = 2 transfers per clock × the memory
      clock × the bus width, FP32 = SMs × FP32 lanes per SM (:data:`FP32_LANES`, by compute capability) × 2 ×
      the SM clock, FP64 = FP32 ÷ ``single_to_double_precision_perf_ratio``.

    A device needs a DRAM figure and a FLOP rate; an export spanning several GPUs is described by its first
    launch's. ``device`` and ``cc`` are what the ncu reader found (the display name, ``8.0``)."""
    cells = _ncu_first_launch(data)
    if not cells:
        return []
    base = PurePath(source).name
    levels: dict[str, MemoryLevel] = {}
    ceilings: dict[str, Ceiling] = {}
    for metric, (kind, name, label, per) in NCU_PEAKS.items():
        if metric not in cells or (kind == "level" and name in levels) or (kind == "ceiling" and label in ceilings):
            continue
        per_cycle = _per_cycle(*cells[metric])
        unit = metric.split("__", 1)[0]
        clock_metric = f"{unit}__cycles_elapsed.avg.per_second"
        if clock_metric not in cells and unit in _CLOCK_FALLBACK:
            clock_metric = f"{_CLOCK_FALLBACK[unit]}__cycles_elapsed.avg.per_second"
        hz = _hertz(*cells[clock_metric], assume=1.0) if clock_metric in cells else None
        if not per_cycle or not hz:
            continue
        value = per_cycle * per * hz
        what = "B" if kind == "level" else "inst"
        fig = Figure(source=f"{base}: Nsight Compute {metric} × {clock_metric} (first launch)",
                     derivation=(f"{per_cycle:,.6g} {what}/cycle" + (f" × {per:g} FLOP/inst" if kind != "level" else "")
                                 + f" × {hz / 1e9:.4g} GHz = {_si(value, 'B/s' if kind == 'level' else 'FLOP/s')}"),
                     notes="the clock ncu measured during the launch (base clocks unless --clock-control none)")
        if kind == "level":
            levels[name] = MemoryLevel(name=name, bandwidth=value, figure=fig, label=label)
        else:
            ceilings[label] = Ceiling(precision=Precision(label), unit=Unit.VECTOR, peak=value, figure=fig)
    _attribute_figures(cells, cc, base, levels, ceilings)
    if "hbm" not in levels or not ceilings:
        return []
    words = [w for w in re.split(r"[^a-z0-9]+", (device or "").lower()) if w and w not in ("nvidia", "geforce", "tesla")]
    slug = "-".join(words) or "nvidia-gpu"
    order = [levels[k] for k in ("hbm", "l2", "l1") if k in levels]
    keys = [c.key for c in ceilings.values()]
    return [Hardware(
        id=f"{slug}-ncu-measured", name=f"{device or 'NVIDIA GPU'} (from the ncu export, {base})", vendor="NVIDIA",
        kind=DeviceKind.GPU, ceilings=tuple(ceilings.values()), levels=tuple(order),
        default_ceiling="fp32-vector" if "fp32-vector" in keys else keys[0],
        config=f"compute capability {cc}" if cc else None,
        notes=("Roofs this export gives itself: Nsight Compute's per-cycle peaks times the clocks it measured, or the "
               "device attributes' clocks, SM count and memory bus; each figure says which. Theoretical at this "
               "machine's clocks, not a benchmark."),
        origin=source)]


def _attribute_figures(cells: dict[str, tuple[str, str]], cc: str | None, base: str,
                       levels: dict[str, MemoryLevel], ceilings: dict[str, Ceiling]) -> None:
    """DRAM bandwidth and FP32/FP64 peaks from a raw page's device attributes, where the peaks lack them."""
    def num(name: str) -> float | None:
        cell = cells.get(_ATTR + name)
        return _number(cell[0]) if cell else None

    def khz(name: str) -> float | None:
        cell = cells.get(_ATTR + name)
        return _hertz(*cell, assume=1e3) if cell else None

    src = f"{base}: Nsight Compute device attributes (raw page)"
    mem, bus = khz("memory_clock_rate") or khz("max_mem_frequency_khz"), num("global_memory_bus_width")
    if "hbm" not in levels and mem and bus:
        bw = 2 * mem * bus / 8
        levels["hbm"] = MemoryLevel(name="hbm", bandwidth=bw, label="DRAM", figure=Figure(
            source=src, derivation=(f"2 transfers per clock × {mem / 1e9:.4g} GHz memory_clock_rate × "
                                    f"{bus:,.0f}-bit global_memory_bus_width / 8 = {_si(bw, 'B/s')}")))
    sms, clock = num("multiprocessor_count"), khz("clock_rate") or khz("max_gpu_frequency_khz")
    lanes = FP32_LANES.get(cc or "")
    if "fp32" not in ceilings and sms and clock and lanes:
        fp32 = sms * lanes * 2 * clock
        ceilings["fp32"] = Ceiling(precision=Precision.FP32, unit=Unit.VECTOR, peak=fp32, figure=Figure(
            source=f"{src}; FP32 lanes per SM for compute capability {cc} from the CUDA C++ Programming Guide",
            derivation=(f"{sms:,.0f} SMs × {lanes} FP32 lanes × 2 FLOP/FMA × {clock / 1e9:.4g} GHz clock_rate = "
                        f"{_si(fp32, 'FLOP/s')}")))
        ratio = num("single_to_double_precision_perf_ratio")
        if "fp64" not in ceilings and ratio:
            ceilings["fp64"] = Ceiling(precision=Precision.FP64, unit=Unit.VECTOR, peak=fp32 / ratio, figure=Figure(
                source=src, derivation=(f"FP32 {_si(fp32, 'FLOP/s')} ÷ single_to_double_precision_perf_ratio "
                                        f"{ratio:g} = {_si(fp32 / ratio, 'FLOP/s')}")))


def _ncu_first_launch(data: bytes) -> dict[str, tuple[str, str]]:
    """``{metric: (value text, unit text)}`` of the first profiled launch, or ``{}`` when the export carries none
    of the metrics :func:`ncu_export_devices` reads (most exports: then nothing past the header is parsed)."""
    import csv
    import io

    at = data.find(b'"ID","Process ID",')
    if at < 0:
        return {}
    start = data.rfind(b"\n", 0, at) + 1
    stop = start + _NCU_WINDOW
    if data.find(b'.peak_sustained"', start, stop) < 0 and data.find(b'"device__attribute_clock_rate"', start, stop) < 0:
        return {}  # two scans without a copy: most exports end here
    window = data[start:stop]
    lines = (ln.decode("utf-8", "replace").lstrip("\ufeff") for ln in io.BytesIO(window))
    rows = csv.reader(lines)
    header = next(rows, [])
    wanted = set(NCU_PEAKS) | {c for c in header if c.endswith("cycles_elapsed.avg.per_second")} | {
        _ATTR + a for a in ("memory_clock_rate", "max_mem_frequency_khz", "global_memory_bus_width",
                            "multiprocessor_count", "clock_rate", "max_gpu_frequency_khz",
                            "single_to_double_precision_perf_ratio")}
    out: dict[str, tuple[str, str]] = {}
    if "Metric Name" in header and "Metric Value" in header:  # details page: the first launch's rows
        i_id, i_name, i_value = header.index("ID"), header.index("Metric Name"), header.index("Metric Value")
        i_unit = header.index("Metric Unit") if "Metric Unit" in header else None
        first = None
        for n, row in enumerate(rows):
            if n >= _NCU_ROWS:
                break
            if len(row) <= max(i_id, i_name, i_value) or row[0].startswith("=="):
                continue  # program output or a rule row cut short
            if first is None:
                first = row[i_id]
            elif row[i_id] != first:
                break
            name = _LABEL_METRIC.sub(r"\1", row[i_name].strip())
            if name in wanted or name.endswith("cycles_elapsed.avg.per_second"):
                out.setdefault(name, (row[i_value], row[i_unit] if i_unit is not None else ""))
        return out
    units = next(rows, [])
    launch = units
    if units and units[0] == "":  # the units row (ncu 2020+); without it, base units
        launch = next(rows, [])
    else:
        units = [""] * len(header)
    for j, name in enumerate(header):
        if name in wanted and j < len(launch):
            out[name] = (launch[j], units[j] if j < len(units) else "")
    return out


#: ``Label (metric)`` cells of ``--print-metric-name label-name``: the metric inside
_LABEL_METRIC = re.compile(r"^.+?\s[(\[]([a-z0-9]+__[\w.]+)[)\]]$")


def _number(text: str) -> float | None:
    """A positive finite number from an ncu cell (thousands separators removed), else None."""
    try:
        v = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return v if np.isfinite(v) and v > 0 else None


def _per_cycle(text: str, unit: str) -> float | None:
    """Per-cycle value in bytes or instructions: ``byte/cycle``, ``Kbyte/cycle``, ``inst/cycle`` or no unit."""
    v = _number(text)
    u = unit.strip()
    m = re.fullmatch(r"([KMG]?)(byte|B|inst|)(?:/cycle)?", u)
    if v is None or m is None:
        return None
    return v * {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(1)]


def _hertz(text: str, unit: str, *, assume: float) -> float | None:
    """A clock in Hz: through the ncu unit table when a unit is given (``cycle/second``, ``Ghz``), else the value
    × ``assume`` (CUDA's device attributes are in kHz, the raw page's rates in base units)."""
    v = _number(text)
    if v is None:
        return None
    if not unit.strip():
        return v * assume
    from .readers import unit_factor  # the one unit table of the ingest package

    found = unit_factor(unit)
    return v * found[1] if found and found[0] == "frequency" else None


def _si(value: float, unit: str) -> str:
    from ..units import fmt_si

    return fmt_si(value, unit)
