"""The architecture, and where the export says so the GPU, from what an export holds besides a device column.

Pure functions over kernel names, meta and the text around a table; :func:`infer` applies them to every workload
after its parse (:mod:`.reading`) and fills only what the parser left empty:

* ``w.device`` — only when the export names a GPU outright: a program's own line before or after the table
  (``Detected GPU: NVIDIA A100-PCIE-40GB (SM 8.0)``, ``device: NVIDIA GeForce RTX 5070 (sm_120), 48 SMs``,
  ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: …)``, deviceQuery's ``Device 0: "Tesla V100-SXM2-16GB"``, rocminfo's
  ``Marketing Name: AMD Instinct MI300X``, Julia's ``0: NVIDIA A100-SXM4-80GB (sm_80, …)``);
* ``meta`` keys :meth:`roofcore.catalog.Catalog.resolve` reads — ``gpu_arch`` (``gfx942``), ``arch`` (``sm_80``),
  ``compute_capability``, ``sm_count``, ``cu_per_gpu`` — set only from exact evidence: a gfx id anywhere in the text
  or the kernel names (AMD code objects are built per gfx target: Tensile's ``_ISA942_``, rocPRIM's
  ``(target_arch)942``, ``amdgcn-amd-amdhsa--gfx90a``), a compute capability or ``sm_XX`` on a device line, an NVIDIA
  chip code (``NVIDIA GA100`` → sm_80);
* ``arch_min`` — CUDA kernel-name tags (``cutlass_80_``, ``sm80_xmma``, ``sm90_xmma``, ``sm100``, ``ampere_``,
  ``volta_``, ``turing_``, ``cutlass::arch::Sm80``) say which architecture a kernel was *built* for; it runs on that
  one or a later one (a CUTLASS ``cutlass_80_`` kernel runs on an sm_86 RTX 3070, FlashAttention-2's Sm80 templates
  on an H100), so they give a lower bound, never a device; the highest tag counts;
* ``dram_peak_bytes_per_s`` — on an Nsight Compute page, the peak DRAM bandwidth implied by a launch's achieved
  bandwidth and its percentage of peak (``Memory Throughput`` 488.17 Gbyte/s at ``DRAM Throughput`` 23.97 % →
  2,037 GB/s, an 80 GB A100), which tells devices of one architecture apart (:func:`by_bandwidth`);
* ``device_evidence`` — one line saying what said so, shown by the CLI when the device came from it.

The catalog picks the device (``Catalog.resolve``); this module only supplies the evidence.
"""

from __future__ import annotations

import csv
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..models import Workload
from .readers import unit_factor

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..models import Hardware

# ------------------------------------------------------------------------------------------- tables

#: NVIDIA compute capabilities and their architecture names (CUDA C++ Programming Guide, compute capabilities)
FAMILY = {"5.0": "Maxwell", "5.2": "Maxwell", "5.3": "Maxwell", "6.0": "Pascal", "6.1": "Pascal", "6.2": "Pascal",
          "7.0": "Volta", "7.2": "Volta", "7.5": "Turing", "8.0": "Ampere", "8.6": "Ampere", "8.7": "Ampere",
          "8.9": "Ada", "9.0": "Hopper", "10.0": "Blackwell", "10.1": "Blackwell", "10.3": "Blackwell",
          "11.0": "Blackwell", "12.0": "Blackwell", "12.1": "Blackwell"}
#: cuBLAS / cuDNN kernel-name prefixes (``volta_sgemm``, ``ampere_s16816gemm``) -> the compute capability they target
_WORD_CC = {"maxwell": "5.0", "pascal": "6.0", "volta": "7.0", "turing": "7.5", "ampere": "8.0", "hopper": "9.0",
            "blackwell": "10.0"}
#: NVIDIA chip codes some tools print as the device (nsys: "NVIDIA GA100") -> compute capability (NVIDIA whitepapers)
_CHIP_CC = ((r"GP10[0]", "6.0"), (r"GP10[2-8]", "6.1"), (r"GV10[0]", "7.0"), (r"TU1[01]\d", "7.5"), (r"GA100", "8.0"),
            (r"GA10B", "8.7"), (r"GA10\d", "8.6"), (r"AD10\d", "8.9"), (r"GH100", "9.0"), (r"GB1[01]\d", "10.0"),
            (r"GB20\d", "12.0"))
#: device-name patterns -> compute capability (device names that carry no CC: "NVIDIA A100-SXM4-40GB")
_DEVICE_CC = (
    (r"Xavier", "7.2"), (r"V100|TITAN V\b|GV100", "7.0"),
    (r"\bT4\b|RTX 20\d0|TITAN RTX|Quadro RTX|GTX 16\d0", "7.5"),
    (r"\bL4\b|\bL40|\bL20\b|RTX 40\d0|\bAda\b", "8.9"), (r"A100|A800|\bA30\b", "8.0"), (r"Orin", "8.7"),
    (r"\bA(?:10G?|16|40|2)\b|RTX A\d{4}|RTX 30\d0", "8.6"), (r"GH200|H100|H200|H800|\bH20\b", "9.0"),
    (r"GB300|\bB300\b", "10.3"), (r"GB200|\bB[12]00\b", "10.0"), (r"RTX 50\d0|RTX PRO \d{4}", "12.0"),
)
_VALID_SM = {"50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "89", "90", "100", "101", "103",
             "110", "120", "121"}
#: AMD gfx targets -> architecture (LLVM AMDGPU processor table)
GFX_FAMILY = {"gfx906": "GCN 5 (Vega 20)", "gfx908": "CDNA", "gfx90a": "CDNA 2", "gfx940": "CDNA 3",
              "gfx941": "CDNA 3", "gfx942": "CDNA 3", "gfx950": "CDNA 4", "gfx1030": "RDNA 2", "gfx1100": "RDNA 3",
              "gfx1101": "RDNA 3", "gfx1102": "RDNA 3", "gfx1151": "RDNA 3.5", "gfx1200": "RDNA 4", "gfx1201": "RDNA 4"}


def cc_of_device(device: str | None) -> str | None:
    """The compute capability a device name implies ("NVIDIA A100-SXM4-40GB" -> 8.0, "NVIDIA GA100" -> 8.0)."""
    for rx, cc in (*((rf"\b{c}\b", cc) for c, cc in _CHIP_CC), *_DEVICE_CC):
        if device and re.search(rx, device):
            return cc
    return None


def _cc_of_sm(sm: str) -> str:
    return f"{sm[:-1]}.{sm[-1]}"


# ------------------------------------------------------------------------------------------- evidence


@dataclass
class Evidence:
    """What an export says about its GPU: ``meta`` keys, a device it names outright, and phrases saying why."""

    meta: dict[str, str] = field(default_factory=dict)
    device: str | None = None
    said: list[str] = field(default_factory=list)

    def add(self, other: Evidence) -> None:
        """Take ``other``'s findings where this one has none (call in order of trust)."""
        fresh = {k: v for k, v in other.meta.items() if k not in self.meta}
        self.meta.update(fresh)
        self.device = self.device or other.device
        if fresh or (other.device and self.device == other.device):
            self.said.extend(s for s in other.said if s not in self.said)


# ------------------------------------------------------------------------------------------- kernel names

#: tags in kernel names, each a literal-led pattern (fast to search) -> (kind, how the tag is shown); a tag must not
#: follow a letter or digit (``asm80`` is no tag), checked on the match
_TAGS = (
    (re.compile(r"cutlass_(\d{2,3})_"), "cuda", "cutlass_{}_"),
    (re.compile(r"(?:cutlass3x_)?[Ss]m_?(\d{2,3})[af]?(?![A-Za-z0-9])"), "cuda", "sm{}_"),
    *((re.compile(f"{word}_"), "word", f"{word}_") for word in _WORD_CC),
    (re.compile(r"gfx(\d{2,3}[0-9a-f])(?![0-9a-z])"), "gfx", "gfx{}"),
    (re.compile(r"_ISA(\d{2,3}[0-9a-f])_"), "isa", "Tensile ISA{}"),
    (re.compile(r"target_arch\)(\d{3,4})\b"), "rp", "rocPRIM target_arch {}"),
)
_NAME_CHARS = 4096  # characters of each distinct name searched (rocPRIM's tag sits deep in 7 kB template names)
_NAMES_MAX = 20_000  # distinct names searched


def distinct(names: Iterable[object] | np.ndarray) -> list[str]:
    """Distinct kernel names, each cut to :data:`_NAME_CHARS`, :data:`_NAMES_MAX` at most, 8 MB in all."""
    arr = np.asarray(names if isinstance(names, np.ndarray) else list(names), dtype=object)
    out, size = [], 0
    for n in pd.unique(arr)[:_NAMES_MAX] if len(arr) else ():
        out.append(str(n)[:_NAME_CHARS])
        size += len(out[-1])
        if size > 8_000_000:
            break
    return out


def gfx_of(token: str, kind: str) -> str | None:
    """``gfx942`` from a gfx id, a Tensile ``ISA942`` / ``ISA90a`` or a rocPRIM ``target_arch`` (gfx90a is 910)."""
    if kind == "rp":
        token = {"910": "90a"}.get(token, token)
        if not re.fullmatch(r"\d{3,4}|90a", token) or token in ("0",):
            return None
    gfx = f"gfx{token.lower()}"
    return gfx if re.fullmatch(r"gfx(?:[6-9]\d[0-9a-f]|1[0-2]\d[0-9a-f])", gfx) else None


def _tags(text: str) -> dict[str, dict[str, set[str]]]:
    """``{"gfx": {"gfx942": {"Tensile ISA942"}}, "sm": {"80": {"sm80_", "cutlass_80_"}}}`` found in ``text``."""
    found: dict[str, dict[str, set[str]]] = {"gfx": {}, "sm": {}}
    for rx, kind, shown in _TAGS:
        for m in rx.finditer(text):
            if m.start() and text[m.start() - 1].isalnum() and kind != "isa":
                continue
            if kind in ("gfx", "isa", "rp"):
                g = gfx_of(m.group(1), "rp" if kind == "rp" else "gfx")
                if g:
                    found["gfx"].setdefault(g, set()).add(shown.format(m.group(1)))
            else:
                sm = _WORD_CC[shown[:-1]].replace(".", "") if kind == "word" else m.group(1)
                if sm in _VALID_SM:
                    found["sm"].setdefault(sm, set()).add(shown.format(sm) if kind == "cuda" else shown)
    return found


def from_names(names: Iterable[object] | np.ndarray) -> Evidence:
    """Architecture tags in kernel names: AMD gfx targets (exact), CUDA build targets (a lower bound)."""
    found = _tags("\n".join(distinct(names)))
    ev = Evidence()
    gfx, tags = found["gfx"], found["sm"]
    if len(gfx) == 1:
        g, how = next(iter(gfx.items()))
        ev.meta["gpu_arch"] = g
        ev.said.append(f"kernel names carry {' / '.join(sorted(how))} ({g}, {GFX_FAMILY.get(g, 'AMD')})")
    elif len(gfx) > 1:
        ev.said.append(f"kernel names carry several AMD targets ({', '.join(sorted(gfx))}): architecture not set")
    if tags:
        top = max(tags, key=int)
        cc = _cc_of_sm(top)
        ev.meta["arch_min"] = f"sm_{top}"
        ev.said.append(f"kernel names carry {' / '.join(sorted(tags[top]))} tags (built for {FAMILY.get(cc, '?')}, "
                       f"sm_{top}: the GPU is sm_{top} or a later one that runs them)")
    return ev


# ------------------------------------------------------------------------------------------- text around a table

_LABEL = (r"detected\s+(?:gpu|device)|(?:cuda\s+|gpu\s+)?device(?:\s*#?\s*\d+)?(?:\s+name)?|gpu(?:\s+device)?"
          r"(?:\s*#?\s*\d+)?(?:\s+name)?|using\s+(?:cuda\s+|gpu\s+)?device(?:\s*#?\s*\d+)?|running\s+on(?:\s+device)?|"
          r"selected\s+(?:gpu|device)|\d+")
_LEAD = " \t>*#-"  # what may come before a label
_LINE = re.compile(rf"(?i)[{_LEAD}]*(?:{_LABEL})\s*[:=]\s*(?P<value>[^\n]{{2,200}})$")
_DATA_ROW = re.compile(r"\s*[\d.]+\s*[,;\t]")  # a table's row: a number, then a separator
_GFX = re.compile(r"gfx(\d{2,3}[0-9a-f])(?![0-9a-z])")
_GPU_NAME = re.compile(r"(?i)\b(?:NVIDIA|Tesla|GeForce|Quadro|TITAN|AMD|Radeon|Instinct)\b[^\n(,;\"']*")
_MODEL = re.compile(r"(?i)\b(?:[a-z]{1,3}\d{1,4}[a-z]{0,3}|\d{3,4}\s?(?:ti|xt|xtx|super)?|rtx\s?(?:a|pro)\s?\d{3,4}|"
                    r"v\d{3}|mi\d{2,3}[a-z]?)\b")
_CC_IN_LINE = re.compile(r"(?i)(?:compute\s+capability|\bcc|\bsm)\s*[:=]?\s*(\d{1,2})\.(\d)\b|\bsm_?(\d{2,3})[af]?\b")
_SMS_IN_LINE = re.compile(r"(?i)\b(\d{1,3})\s*(?:SMs|multiprocessors|compute units|CUs)\b")
_HEAD_CHARS = 1 << 20


def _names_a_gpu(value: str) -> str | None:
    """The GPU name in a device line's value, when it names a model (not "cuda:0", not "AMD Radeon Graphics")."""
    m = _GPU_NAME.search(value.replace('"', " "))
    if not m or re.search(r"(?i)\b(?:ryzen|epyc|xeon|threadripper|core\(tm\)|cpu|processor)\b", value):
        return None
    name = re.sub(r"^general metrics for\s+", "", m.group(0), flags=re.I).strip(" -:")
    name = re.sub(r"\s+(?:with|at|on|\d+\s*(?:SMs|MHz|GHz)\b).*$", "", name, flags=re.I).strip()
    words = [w for w in re.split(r"[\s_-]+", name) if not re.fullmatch(r"(?i)nvidia|tesla|geforce|quadro|amd|radeon|instinct|"
                                                          r"graphics|gpu|\(r\)|\(tm\)", w)]
    return name if any(_MODEL.fullmatch(w) for w in words) or cc_of_device(name) else None


def from_text(text: str) -> Evidence:
    """Device lines of a program's output and gfx ids in the text around a table (a preamble, a trailer, sysinfo)."""
    ev = Evidence()
    candidates = (ln for ln in text.splitlines() if len(ln) < 300 and (":" in ln or "=" in ln)
                  and ln.lstrip(_LEAD)[:1].isalnum() and not _DATA_ROW.match(ln))  # a label starts [a-z0-9]
    for m in filter(None, map(_LINE.match, candidates)):
        value = m.group("value").strip()
        name = _names_a_gpu(value)
        cc = _CC_IN_LINE.search(value)
        if not (name or cc):
            continue
        line = " ".join(m.group(0).split())[:160]
        if cc:
            ev.meta["compute_capability"] = f"{cc.group(1)}.{cc.group(2)}" if cc.group(1) else _cc_of_sm(cc.group(3))
            ev.meta["arch"] = "sm_" + ev.meta["compute_capability"].replace(".", "")
        sms = _SMS_IN_LINE.search(value)
        if sms:
            ev.meta["cu_per_gpu" if name and re.search(r"(?i)amd|radeon|instinct", name) else "sm_count"] = sms.group(1)
        ev.device = name
        ev.said.append(f"the program's output names the GPU: {line!r}" if name else f"the program's output says: {line!r}")
        break
    gfx = {g for g in (gfx_of(m.group(1), "gfx") for m in _GFX.finditer(text) if "gfx" in text
                       and not (m.start() and text[m.start() - 1].isalnum())) if g}
    if len(gfx) == 1 and "compute_capability" not in ev.meta:
        g = next(iter(gfx))
        ev.meta["gpu_arch"] = g
        ev.said.append(f"the file names the target {g} ({GFX_FAMILY.get(g, 'AMD')})")
    return ev


_AGENT_KEY = re.compile(r'(?im)^\s*"?Agent\s*(\d+)[.:]?\s*(Name|Marketing\s*Name|Compute\s*Unit|Device\s*Type)"?\s*[:=]\s*'
                        r'"?([^"\n,]*)')
_AGENT_HEAD = re.compile(r"(?im)^\s*\**\s*Agent\s+(\d+)\s*\**\s*$|^\s*(Name|Marketing Name|Compute Unit|Device Type):"
                         r"[ \t]*([^\n]*)$")


def _agents(text: str) -> dict[str, dict[str, str]]:
    """rocminfo's agents (as printed, or as ``"Agent5.MarketingName": "…"`` keys in rocprof's JSON): per agent, its
    name (gfx id), marketing name, compute units and device type."""
    agents: dict[str, dict[str, str]] = {}
    if "Agent" not in text:
        return agents
    for a, key, value in _AGENT_KEY.findall(text):
        agents.setdefault(a, {})[re.sub(r"\s+", "", key).lower()] = value.strip()
    if not agents:
        current = None
        for m in _AGENT_HEAD.finditer(text):
            if m.group(1):
                current = m.group(1)
            elif current:
                agents.setdefault(current, {}).setdefault(re.sub(r"\s+", "", m.group(2)).lower(), m.group(3).strip())
    return agents


def from_agents(text: str) -> Evidence:
    """The GPU agent(s) rocminfo lists: gfx id, compute units, and the marketing name where it names a model."""
    ev = Evidence()
    gpus = {(a.get("name", ""), a.get("computeunit", ""), a.get("marketingname", ""))
            for a in _agents(text).values()
            if a.get("devicetype", "").upper() == "GPU" or a.get("name", "").lower().startswith("gfx")}
    if len(gpus) != 1:
        return ev
    name, cus, marketing = next(iter(gpus))
    gfx = gfx_of(name.lower().removeprefix("gfx").split(":")[0], "gfx")
    if gfx:
        ev.meta["gpu_arch"] = gfx
    if cus.isdigit():
        ev.meta["cu_per_gpu"] = cus
    spaced = re.sub(r"^AMD\s*Instinct\s*(?=MI)", "AMD Instinct ", re.sub(r"^AMD\s*Radeon\s*", "AMD Radeon ", marketing))
    ev.device = _names_a_gpu(spaced)
    said = ", ".join(x for x in (gfx, f"{cus} CUs" if cus.isdigit() else "", spaced) if x)
    if said:
        ev.said.append(f"the file's rocminfo agent list gives the GPU: {said}")
    return ev


def from_device(device: str | None, meta: Mapping[str, str]) -> Evidence:
    """The compute capability a device name implies, for an export that gives the name without a CC."""
    ev = Evidence()
    if device and not meta.get("compute_capability") and not meta.get("gpu_arch") and not meta.get("arch"):
        cc = cc_of_device(device)
        if cc:
            ev.meta.update(compute_capability=cc, arch="sm_" + cc.replace(".", ""))
            ev.said.append(f"the device name {device!r} is {FAMILY.get(cc, '?')} (sm_{cc.replace('.', '')})")
    return ev


# ------------------------------------------------------------------------------------------- ncu pages

_PCT = ("DRAM Throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
_RATE = ("Memory Throughput", "dram__bytes.sum.per_second")
_BYTES = ("dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes_op_read.sum",
          "dram__bytes_op_write.sum")
_DUR = ("gpu__time_duration.sum", "Duration")
_SMS = ("# SMs", "device__attribute_multiprocessor_count", "launch__sm_count")
_WANTED = (*_PCT, *_RATE, *_BYTES, *_DUR, *_SMS)
_NCU_HEADER = re.compile(r'^\ufeff?"?ID"?,"?Process ID"?,.*$', re.M)


def _ncu_values(text: str) -> dict[str, dict[str, float]]:
    """Per launch ID, the metrics :func:`from_ncu` needs, in base units (% stays %), from a details or raw page."""
    m = _NCU_HEADER.search(text)
    if not m:
        return {}
    head = next(csv.reader([m.group(0).lstrip("\ufeff")]))
    rest = text[m.end() + 1:].splitlines()
    out: dict[str, dict[str, float]] = {}

    def put(launch: str, name: str, unit: str, value: str) -> None:
        try:
            v = float(value.replace(",", ""))
        except ValueError:
            return
        if name in _SMS:
            out.setdefault(launch, {})[name] = v
            return
        found = ("pct", 1.0) if unit.strip() == "%" else unit_factor(unit)
        if found is None or (name in _PCT) != (found[0] == "pct") or (name in _RATE and found[0] != "bandwidth"):
            return
        out.setdefault(launch, {})[name] = v * found[1]

    if "Metric Name" in head:
        at = head.index("ID") if "ID" in head else 0
        for row in csv.reader(ln for ln in rest if any(w in ln for w in _WANTED)):
            j = next((i for i, c in enumerate(row) if c in _WANTED), None)
            if j is not None and j + 2 < len(row):  # name, unit, value: found by the name, whatever the quoting
                put(row[at] if len(row) == len(head) else row[0], row[j], row[j + 1], row[j + 2])
        return out
    rows = list(csv.reader(rest[:2000]))
    if not rows:
        return out
    units, cols = rows[0], [(i, c) for i, c in enumerate(head) if c in _WANTED]
    for row in rows[1:]:
        if len(row) == len(head):
            for i, c in cols:
                put(row[0], c, units[i] if i < len(units) else "", row[i])
    return out


def from_ncu(text: str) -> Evidence:
    """The SM count and the peak DRAM bandwidth an Nsight Compute page implies (achieved ÷ its % of peak)."""
    ev = Evidence()
    best = None
    for launch, v in _ncu_values(text).items():
        if sms := v.get("# SMs") or v.get("device__attribute_multiprocessor_count") or v.get("launch__sm_count"):
            ev.meta.setdefault("sm_count", str(int(sms)))
        pct = next((v[k] for k in _PCT if k in v), None)
        rate = next((v[k] for k in _RATE if k in v), None)
        dur = next((v[k] for k in _DUR if k in v), None)
        if rate is None and dur:
            parts = [v["dram__bytes.sum"]] if "dram__bytes.sum" in v else [
                v[f"dram__bytes{op}_{d}.sum"] for op in ("", "_op") for d in ("read", "write")
                if f"dram__bytes{op}_{d}.sum" in v]
            rate = sum(parts) / dur if parts and all(p is not None for p in parts) and len(parts) in (1, 2) else None
        if pct and rate and pct >= 10 and (best is None or pct > best[0]):
            best = (pct, rate, launch)
    if best:
        pct, rate, launch = best
        peak = rate / (pct / 100)
        ev.meta["dram_peak_bytes_per_s"] = f"{peak:.4g}"
        ev.said.append(f"peak DRAM bandwidth ≈ {peak / 1e9:,.0f} GB/s ({rate / 1e9:,.1f} GB/s at {pct:g} % of peak, "
                       f"launch {launch})")
    if "sm_count" in ev.meta:
        ev.said.insert(0, f"{ev.meta['sm_count']} SMs")
    return ev


# ------------------------------------------------------------------------------------------- applying it


def _text_of(data: bytes | bytearray | memoryview | None) -> str:
    """The first and last part of an input as text, gzip undone on the head."""
    if data is None:
        return ""
    head = bytes(data[:_HEAD_CHARS * 4]) if bytes(data[:2]) == b"\x1f\x8b" else bytes(data[:_HEAD_CHARS])
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _HEAD_CHARS)
        except zlib.error:
            head = b""
        return head.decode("utf-8", "replace")
    tail = bytes(data[max(len(data) - 65536, len(head)):]) if len(data) > len(head) else b""
    return head.decode("utf-8", "replace") + "\n" + tail.decode("utf-8", "replace")


def evidence(w: Workload, data: bytes | bytearray | memoryview | None = None) -> Evidence:
    """Everything the export says about its GPU beyond what its parser read, most trusted first."""
    text = _text_of(data)
    ev = Evidence()
    if w.meta.get("compute_capability") and not w.device:
        ev.said.append(f"compute capability {w.meta['compute_capability']} "
                       f"({FAMILY.get(w.meta['compute_capability'], '?')}) from the export")
    ev.add(from_text(text))
    ev.add(from_agents(text))
    if any(f.startswith("ncu") for f in w.formats):
        ev.add(from_ncu(text))
    ev.add(from_device(w.device or ev.device, {**ev.meta, **w.meta}))
    if "name" in w.frame.columns and len(w.frame):
        ev.add(from_names(w.frame["name"].to_numpy()))
    return ev


def infer(w: Workload, data: bytes | bytearray | memoryview | None = None) -> Workload:
    """``w`` with the evidence of :func:`evidence` in ``meta`` (keys the parser left empty) and ``device`` where the
    export names the GPU outright; ``meta["device_evidence"]``: one line saying what said so."""
    ev = evidence(w, data)
    parsed = any(w.meta.get(k) for k in _ARCH_KEYS)  # the parser's own reading of the architecture wins
    fresh = {k: v for k, v in ev.meta.items() if not w.meta.get(k) and not (parsed and k in _ARCH_KEYS)}
    device = w.device or ev.device
    if not fresh and device == w.device:
        return w
    meta = {**w.meta, **fresh}
    if not w.device and ev.said and not w.meta.get("device_evidence"):
        meta["device_evidence"] = "; ".join(ev.said)  # shown where the device comes from this, not from the file
    return replace(w, meta=meta, device=device)


_ARCH_KEYS = ("gpu_arch", "arch", "compute_capability", "arch_min")


def by_bandwidth(devices: Iterable[Hardware], meta: Mapping[str, str], rel: float = 0.05) -> list[str]:
    """The ids of ``devices`` (catalog :class:`~roofcore.models.Hardware`) of the profile's compute capability whose
    off-chip bandwidth is within ``rel`` of the peak the profile implies (``dram_peak_bytes_per_s``), closest first;
    ``[]`` when the profile gives no such peak or no device fits. A second device within ``rel`` that is not clearly
    farther (its error under twice the first's) makes the answer ambiguous: ``[]``."""
    try:
        peak = float(meta.get("dram_peak_bytes_per_s") or "nan")
    except ValueError:
        return []
    cc = meta.get("compute_capability") or (_cc_of_sm(str(meta["arch"])[3:]) if str(meta.get("arch", "")).startswith(
        "sm_") else None)
    if not (peak > 0 and cc):
        return []
    fits = [(abs(hw.offchip.bandwidth / peak - 1), hw.offchip.bandwidth, hw.id) for hw in devices
            if str(getattr(hw.kind, "value", hw.kind)) == "gpu" and cc_of_device(hw.name) == cc
            and abs(hw.offchip.bandwidth / peak - 1) <= rel]
    fits.sort(key=lambda f: f[0])  # stable: devices of equal error keep the catalog's order
    # another device of (almost) the same bandwidth has the same memory roof (an A800 beside an A100): no matter
    others = [f for f in fits[1:] if abs(f[1] / fits[0][1] - 1) > 0.01]
    if others and others[0][0] < 2 * fits[0][0]:
        return []
    return [f[2] for f in fits[:1]]


def catalog_match(catalog: Catalog, device: str | None, meta: Mapping[str, str]) -> tuple[list[str], str | None]:
    """The catalog device a profile ran on, and a note when its DRAM bandwidth picked it: the catalog's own answer
    (``Catalog.resolve``, else ``suggest``) where it is sure of it, else the one device of the profile's compute
    capability whose DRAM bandwidth the profile's implied peak picks out (:func:`by_bandwidth`), else the catalog's
    best guess."""
    if hasattr(catalog, "resolve"):
        found = catalog.resolve(device, meta)
        ids, sure = list(found.ids), bool(found.exact)
    else:
        ids = catalog.suggest(device, meta)
        sure = bool(ids and device)
    picked = [] if sure else by_bandwidth(catalog, meta)
    if not picked:
        return ids, None
    hw = catalog.get(picked[0])
    cc = meta.get("compute_capability") or str(meta.get("arch", ""))
    peak = float(meta["dram_peak_bytes_per_s"])
    return picked, (f"The implied peak DRAM bandwidth (≈ {peak / 1e9:,.0f} GB/s) is the {hw.name}'s ({hw.id}, "
                    f"{hw.offchip.bandwidth / 1e9:,.0f} GB/s): the catalog's one device of compute capability {cc} "
                    "that fits it.")


def catalog_ids(catalog: Catalog, device: str | None, meta: Mapping[str, str]) -> list[str]:
    """The ids of :func:`catalog_match`."""
    return catalog_match(catalog, device, meta)[0]
