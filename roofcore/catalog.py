"""Hardware catalogs: YAML files -> validated :class:`Hardware`, with errors that say where and why.

Load order: the built-in ``catalogs/`` folder, then the folders/files in ``ROOFCORE_CATALOG_PATH``
(``os.pathsep``-separated), then each ``--catalog PATH``. A device id may appear once; a later file
may reuse an id only with ``overrides: true``. The grammar is in ``catalogs/README.md``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from .errors import CatalogError, UnitError, UnknownHardwareError
from .limits import load_yaml
from .models import (
    OFFCHIP,
    Ceiling,
    DeviceKind,
    Figure,
    Hardware,
    Link,
    MemoryLevel,
    Precision,
    Scope,
    Unit,
    canonical_level,
)
from .resources import data_dir
from .units import Dimension, fmt_si, parse

#: the catalogs shipped with the project
BUILTIN_DIR = data_dir("catalogs")
SCHEMA_PATH = BUILTIN_DIR / "schema.json"
ENV_VAR = "ROOFCORE_CATALOG_PATH"
SCHEMA_VERSION = 1

#: beyond these a figure is a prefix typo (torchao once listed a GPU at 1.792e15 B/s)
_PLAUSIBLE = {"peak": 1e17, "hbm": 5e13, "level": 1e15, "link": 1e13}
_SOURCE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


def display_path(path: Path | str) -> str:
    """A path as short as it can honestly be: relative to the working folder when inside it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _json_path(parts: Iterable[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _schema_error(file: str, err) -> CatalogError:
    """Turn a jsonschema error into our expected/found/hint message."""
    path = _json_path(err.absolute_path)
    where = f"{file}: {path}"
    inst = err.instance
    v = err.validator
    if v == "required":
        missing = [k for k in err.validator_value if isinstance(inst, dict) and k not in inst]
        return CatalogError(where=where, expected=f"key '{missing[0]}'", found="none",
                            hint=f"keys present: {', '.join(map(str, inst)) or 'none'}; see catalogs/README.md.")
    if v == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in inst if k not in allowed]
        close = difflib.get_close_matches(str(extra[0]), allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}."
        return CatalogError(where=f"{where}.{extra[0]}", expected="a known key", found=f"unknown key '{extra[0]}'",
                            hint=hint)
    if v == "enum":
        return CatalogError(where=where, expected="one of " + ", ".join(map(str, err.validator_value)),
                            found=repr(inst), hint="values are lower-case.")
    if v == "const":
        return CatalogError(where=where, expected=repr(err.validator_value), found=repr(inst),
                            hint=f"this roofcore reads schema version {SCHEMA_VERSION}.")
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return CatalogError(where=where, expected=f"a {want}", found=f"{type(inst).__name__} {inst!r}",
                            hint="check the indentation and the YAML syntax of this entry.")
    if v == "pattern":
        return CatalogError(where=where, expected=f"text matching {err.validator_value}", found=repr(inst),
                            hint="ids are kebab-case (h100-sxm); level and link names are lower_snake_case.")
    if v == "minItems":
        return CatalogError(where=where, expected=f"at least {err.validator_value} item(s)", found="an empty list")
    if v == "minLength":
        return CatalogError(where=where, expected="non-empty text", found=repr(inst))
    return CatalogError(where=where, expected="a value valid under catalogs/schema.json", found=repr(inst),
                        hint=err.message)


def _read_yaml(raw: bytes, file: str) -> Any:
    if not raw.strip():
        raise CatalogError(where=file, expected="a YAML catalog with schema_version and devices",
                           found="an empty file", hint="see catalogs/README.md for the shape.")
    if b"\x00" in raw[:4096]:
        raise CatalogError(where=file, expected="a YAML text file", found="binary data",
                           hint="is this the right file? Catalogs are UTF-8 YAML.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CatalogError(where=file, expected="UTF-8 text", found=f"a byte 0x{raw[e.start]:02x} at offset {e.start}",
                           hint="save the catalog as UTF-8.") from None
    try:
        data = load_yaml(text, str(file))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise CatalogError(where=f"{file}:{at}" if at else file, text=f"invalid YAML: {problem}.",
                           hint="check indentation and quoting (quote strings containing ':' or '#').") from None
    if not isinstance(data, dict):
        raise CatalogError(where=file, expected="a mapping with schema_version and devices",
                           found=f"a YAML {type(data).__name__}", hint="see catalogs/README.md for the shape.")
    return data


@dataclass
class _Ctx:
    file: str
    sources: Mapping[str, str]

    def source(self, value: str, path: str) -> str:
        if value in self.sources:
            return f"{value}: {self.sources[value]}"
        if _SOURCE_ID.match(value) and " " not in value and len(value) <= 12:
            raise CatalogError(where=f"{self.file}: {path}", expected="a source id declared under `sources`",
                               found=repr(value),
                               hint=f"declared ids: {', '.join(self.sources) or 'none'}; or write the document itself.")
        return value

    def qty(self, value: Any, dim: Dimension, path: str, *, positive: bool = True) -> float:
        try:
            return parse(value, dim, where=f"{self.file}: {path}", allow_zero=not positive)
        except UnitError as e:
            raise CatalogError(where=e.where, expected=e.expected, found=e.found, hint=e.hint) from None

    def figure(self, d: dict, path: str, *, key: str = "source") -> Figure:
        return Figure(source=self.source(d[key], f"{path}.{key}"), measured=bool(d.get("measured", False)),
                      unverified=bool(d.get("unverified", False)), derivation=d.get("derivation"),
                      notes=d.get("notes"))

    def achievable(self, d: dict, dim: Dimension, path: str, ceiling: float) -> tuple[float | None, Figure | None]:
        if "achievable" not in d:
            return None, None
        value = self.qty(d["achievable"], dim, f"{path}.achievable")
        if value > ceiling:
            raise CatalogError(where=f"{self.file}: {path}.achievable", expected="a measured value at most the peak",
                               found=f"{d['achievable']!r} above the peak",
                               hint="an achievable rate above the theoretical one means a unit or scope mix-up.")
        src = d.get("achievable_source", d["source"])
        fig = Figure(source=self.source(src, f"{path}.achievable_source"), measured=True)
        return value, fig

    def implausible(self, value: float, limit: float, path: str, raw: Any, unit: str) -> None:
        if value > limit:
            raise CatalogError(where=f"{self.file}: {path}", expected=f"a plausible figure (below {fmt_si(limit, unit)})",
                               found=repr(raw), hint="a prefix is probably wrong (T for G, P for T).")


def _ceiling(ctx: _Ctx, d: dict, path: str) -> Ceiling:
    fig = ctx.figure(d, path)
    raw = d["peak"]
    if isinstance(raw, str) and "spars" in raw.lower():
        raise CatalogError(where=f"{ctx.file}: {path}.peak", expected="a dense peak", found=f"{raw!r}, a sparse figure",
                           hint="put the sparse figure under `sparse:` and the dense one (half of it) under `peak:`.")
    peak = ctx.qty(raw, Dimension.FLOP_RATE, f"{path}.peak")
    ctx.implausible(peak, _PLAUSIBLE["peak"], f"{path}.peak", raw, "FLOP/s")
    sparse = None
    if "sparse" in d:
        sparse = ctx.qty(d["sparse"], Dimension.FLOP_RATE, f"{path}.sparse")
        if peak >= sparse:
            raise CatalogError(where=f"{ctx.file}: {path}.peak", expected=f"a dense peak below the sparse figure {d['sparse']!r}",
                               found=f"{raw!r}, which looks like the sparse figure",
                               hint="with 2:4 sparsity vendors quote twice the dense rate; the roof is the dense one.")
    ach, ach_fig = ctx.achievable(d, Dimension.FLOP_RATE, path, peak)
    return Ceiling(precision=Precision(d["precision"]), unit=Unit(d["unit"]), peak=peak, figure=fig,
                   sparse=sparse, achievable=ach, achievable_figure=ach_fig)


def _level(ctx: _Ctx, d: dict, path: str, first: bool) -> MemoryLevel:
    name = canonical_level(d["level"])
    if first and name != OFFCHIP:
        raise CatalogError(where=f"{ctx.file}: {path}.level", expected=f"the off-chip level '{OFFCHIP}' first",
                           found=repr(d["level"]),
                           hint="list off-chip memory first as `level: hbm` (give the technology in `label`).")
    if not first and name == OFFCHIP:
        raise CatalogError(where=f"{ctx.file}: {path}.level", expected="an on-chip level (l2, l1, smem, lds, vmem...)",
                           found=repr(d["level"]), hint="only the first memory level is off-chip.")
    fig = ctx.figure(d, path)
    bw = ctx.qty(d["bandwidth"], Dimension.BANDWIDTH, f"{path}.bandwidth")
    ctx.implausible(bw, _PLAUSIBLE["hbm" if first else "level"], f"{path}.bandwidth", d["bandwidth"], "B/s")
    cap, cap_fig = None, None
    if "capacity" in d:
        cap = ctx.qty(d["capacity"], Dimension.BYTES, f"{path}.capacity")
        cap_fig = Figure(source=ctx.source(d.get("capacity_source", d["source"]), f"{path}.capacity_source"))
    ach, ach_fig = ctx.achievable(d, Dimension.BANDWIDTH, path, bw)
    return MemoryLevel(name=name, bandwidth=bw, figure=fig, label=d.get("label"), capacity=cap,
                       capacity_figure=cap_fig, achievable=ach, achievable_figure=ach_fig)


def _link(ctx: _Ctx, d: dict, path: str) -> Link:
    fig = ctx.figure(d, path)
    bw = ctx.qty(d["bandwidth"], Dimension.BANDWIDTH, f"{path}.bandwidth")
    ctx.implausible(bw, _PLAUSIBLE["link"], f"{path}.bandwidth", d["bandwidth"], "B/s")
    ach, ach_fig = ctx.achievable(d, Dimension.BANDWIDTH, path, bw)
    return Link(name=d["link"], bandwidth=bw, figure=fig, label=d.get("label"), achievable=ach,
                achievable_figure=ach_fig)


def _unique(ctx: _Ctx, names: list[str], path: str, what: str) -> None:
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n in seen:
            raise CatalogError(where=f"{ctx.file}: {path}[{i}]", expected=f"each {what} once",
                               found=f"{n!r} again (also at [{seen[n]}])", hint=f"merge the two {what} entries.")
        seen[n] = i


def _device(ctx: _Ctx, d: dict, i: int, file_vendor: str | None) -> Hardware:
    path = f"$.devices[{i}]"
    vendor = d.get("vendor") or file_vendor
    if not vendor:
        raise CatalogError(where=f"{ctx.file}: {path}", expected="key 'vendor' (on the device or the file)",
                           found="none", hint="add `vendor: NAME` at the top of the file.")
    ceilings = tuple(_ceiling(ctx, c, f"{path}.compute[{j}]") for j, c in enumerate(d["compute"]))
    _unique(ctx, [c.key for c in ceilings], f"{path}.compute", "precision-unit ceiling")
    levels = tuple(_level(ctx, lv, f"{path}.memory[{j}]", j == 0) for j, lv in enumerate(d["memory"]))
    _unique(ctx, [lv.name for lv in levels], f"{path}.memory", "memory level")
    links = tuple(_link(ctx, lk, f"{path}.links[{j}]") for j, lk in enumerate(d.get("links", [])))
    _unique(ctx, [lk.name for lk in links], f"{path}.links", "link")
    clash = {lv.name for lv in levels} & {lk.name for lk in links}
    if clash:
        raise CatalogError(where=f"{ctx.file}: {path}.links", expected="link names distinct from memory level names",
                           found=", ".join(sorted(clash)), hint="rename one of them.")
    default = d.get("default_ceiling") or ceilings[0].key
    if default not in {c.key for c in ceilings}:
        raise CatalogError(where=f"{ctx.file}: {path}.default_ceiling", expected="one of the device's ceilings: "
                           + ", ".join(c.key for c in ceilings), found=repr(default),
                           hint="add that ceiling under `compute` or pick a listed one.")
    return Hardware(
        id=d["id"], name=d["name"], vendor=vendor, kind=DeviceKind(d["kind"]), ceilings=ceilings, levels=levels,
        links=links, default_ceiling=default, scope=Scope(d.get("scope", "package")), config=d.get("config"),
        notes=d.get("notes"), aliases=tuple(d.get("aliases", ())), unverified=bool(d.get("unverified", False)),
        origin=ctx.file, sources=MappingProxyType(dict(ctx.sources)),
    )


def load_file(path: Path | str) -> list[tuple[Hardware, bool]]:
    """Parse and validate one catalog file; returns ``(hardware, overrides)`` pairs in file order."""
    file = display_path(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise CatalogError(where=file, text=f"cannot read the file ({e.strerror}).") from None
    return load_bytes(raw, file)


def load_bytes(raw: bytes, file: str = "uploaded.yaml") -> list[tuple[Hardware, bool]]:
    """Parse and validate catalog YAML given as bytes (an upload); ``file`` names it in messages.

    A file of measured ceilings (rocprof-compute ``roofline.csv``, the Empirical Roofline Toolkit's
    ``roofline.json``) is accepted too: its devices, as measured, are added."""
    from .ingest.ceilings import measured_devices

    measured = measured_devices(raw, file)
    if measured is not None:
        return [(hw, False) for hw in measured]
    data = _read_yaml(raw, file)
    errors = sorted(_validator().iter_errors(data), key=lambda e: (len(e.absolute_path) == 0, list(map(str, e.absolute_path))))
    if errors:
        # report the deepest, first-listed problem: it names the precise key
        deepest = max(errors, key=lambda e: len(e.absolute_path))
        first = next(e for e in errors if len(e.absolute_path) == len(deepest.absolute_path))
        raise _schema_error(file, first)
    sources = data.get("sources", {})
    for key in sources:  # YAML reads `2:` or `+2:` as a number, which JSON Schema's property rules do not see
        if not isinstance(key, str):
            raise CatalogError(where=f"{file}: $.sources", expected="source ids that are text (S1, S2, ...)",
                               found=f"the {type(key).__name__} {key!r}",
                               hint="quote it, or start it with a letter: S2 rather than 2.")
    ctx = _Ctx(file=file, sources=sources)
    out: list[tuple[Hardware, bool]] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(data["devices"]):
        if d["id"] in seen:
            raise CatalogError(where=f"{file}: $.devices[{i}].id", expected="an id not used before",
                               found=f"{d['id']!r}, also at $.devices[{seen[d['id']]}]",
                               hint="ids are unique; rename one of the two devices.")
        seen[d["id"]] = i
        out.append((_device(ctx, d, i, data.get("vendor")), bool(d.get("overrides", False))))
    return out


def _expand(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if path.is_file():
        return [path]
    raise CatalogError(where=display_path(path), expected="a catalog file or folder", found="nothing at that path",
                       hint=f"check --catalog and {ENV_VAR}.")


# ------------------------------------------------------------------- profiler device names -> catalog ids

#: words that name a vendor or a product line, not the model ("NVIDIA", "Tesla", "AMD Instinct", "(R)")
_BRAND_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "amd", "instinct", "radeon", "intel", "apple",
                          "google", "r", "tm", "gpu", "vf"})
#: form-factor words: the same model in another form has other peaks (an A100 PCIe is not an A100 SXM4)
_FORM_WORDS = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm", "sxm6": "sxm",
               "pcie": "pcie", "nvl": "nvl", "oam": "oam", "gcd": "gcd", "dgxs": "dgxs", "mezzanine": "sxm"}
#: NVIDIA board codes some drivers print instead of the product name: (form, memory GB)
_BOARDS = {"pg509-200": ("sxm", 40)}
#: SMs / CUs per built-in device, to refuse a name match a profile's own count contradicts (an MI210 or an
#: MI250 GCD, 104 CUs, is not an MI250X GCD, 110)
_UNITS = {"a100-40gb-sxm": 108, "a100-80gb-sxm": 108, "a100-40gb-pcie": 108, "h100-sxm": 132, "h100-pcie": 114,
          "h200-sxm": 132, "b200": 148, "l4": 58, "l40s": 142, "rtx-4090": 128, "v100-sxm2-16gb": 80,
          "v100-sxm2-32gb": 80, "t4": 40, "gtx-1080": 20, "gtx-1060-6gb": 10, "rtx-2080-ti": 68, "rtx-3070": 46,
          "rtx-5070": 48, "mi100": 120, "mi210": 104, "mi250x-gcd": 110, "mi250x": 220, "mi300a": 228,
          "mi300x": 304, "mi325x": 304, "mi350x": 256}
_ARCH = re.compile(r"^(gfx[0-9a-f]{3,4}|sm_?\d{2,3}[a-z]?)(?::.*)?$")
_MODEL_WORD = re.compile(r"^[a-z]{1,3}\d{1,4}[a-z]{0,3}$")  # a100, h100, v100, t4, l40s, mi300x, gh200, b200


def _name_key(text: str) -> str:
    """A name compared without case, brand words, parentheses or separators ("NVIDIA A100-SXM4-40GB" -> "a100 sxm4 40gb")."""
    low = re.sub(r"\([^)]*\)", " ", text.lower().replace("(r)", " ").replace("(tm)", " "))
    return " ".join(w for w in re.split(r"[^a-z0-9+]+", low) if w and w not in _BRAND_WORDS)


def _model(text: str) -> tuple[str, int | None, str | None]:
    """(model words, memory GB or None, form factor or None) of a device name."""
    words = _name_key(text).split()
    model, mem, form = [], None, None
    i = 0
    while i < len(words):
        w = words[i]
        board = f"{w}-{words[i + 1]}" if i + 1 < len(words) else ""
        if board in _BOARDS:
            form, mem = _BOARDS[board]
            i += 2
            continue
        if re.fullmatch(r"pg\d{3}", w):  # an unknown board code: form and memory unknown
            i += 2
            continue
        m = re.fullmatch(r"(\d+)gb", w)
        if m:
            mem = int(m.group(1))
        elif w in _FORM_WORDS:
            form = _FORM_WORDS[w]
        elif not re.fullmatch(r"hbm\d*e?|gddr\d*x?|\d+w|hgx|dgx", w):  # memory type and power do not name a model
            model.append(w)
        i += 1
    return " ".join(model), mem, form


def _units_of(meta: Mapping[str, str] | None) -> int | None:
    """The SM or CU count a profile reports (``cu_per_gpu``, ``sm_count``), which tells devices of one
    architecture apart (a 104-CU gfx90a is an MI210, a 110-CU one an MI250X GCD)."""
    for key in ("cu_per_gpu", "sm_count"):
        try:
            v = int(float((meta or {}).get(key) or 0))
        except ValueError:
            continue
        if v > 0:
            return v
    return None


def _is_family(name: str) -> bool:
    """A family name rocprof-compute prints (``MI200``, ``MI300``) rather than one product: its architecture
    and CU count then say which device it is."""
    return bool(re.fullmatch(r"(?i)\s*(amd\s+)?(instinct\s+)?mi[123]00\s*", name))


def _names_gpu_model(text: str) -> bool:
    """Whether a device name names a GPU model (a100, mi300x, rtx 4090), as opposed to an id typo or nothing."""
    return any(_MODEL_WORD.match(w) for w in _model(text)[0].split())


@dataclass(frozen=True)
class Catalog:
    """Loaded devices by id, in load order; ``replaced`` records which ids a user catalog overrode."""

    devices: Mapping[str, Hardware]
    replaced: Mapping[str, str] = field(default_factory=dict)  #: id -> origin of the device it replaced

    def __iter__(self) -> Iterator[Hardware]:
        return iter(self.devices.values())

    def __len__(self) -> int:
        return len(self.devices)

    def __contains__(self, hw_id: object) -> bool:
        return hw_id in self.devices

    @property
    def ids(self) -> list[str]:
        return list(self.devices)

    def get(self, hw_id: str) -> Hardware:
        if hw_id in self.devices:
            return self.devices[hw_id]
        close = self.closest(hw_id)
        hint = f"closest: {', '.join(close)}" if close else "see `roofline hardware list`"
        raise UnknownHardwareError(f"unknown hardware id {hw_id!r}; {hint}.")

    def closest(self, text: str, n: int = 3, *, units: int | None = None) -> list[str]:
        """Ids for ``text``: the device a profiler's device name reports, else ids near an id typo.

        A device name maps to one id only when the model matches and nothing contradicts it: memory size,
        form factor (``NVIDIA A100-PCIE-40GB`` is no SXM4 A100), board code (``A100-PG509-200`` is the SXM4
        40GB board) or the profile's SM/CU count ``units``; a V100 never becomes an A100. An architecture
        (``gfx942``, ``sm_90``) maps through the catalog's aliases: with ``units``, to the device of that count
        only; without, to the catalog's first device of that architecture. ``[]`` when unsure. Near ids by spelling
        (``h100`` -> h100-sxm, h100-pcie, h200-sxm) only for lower-case id-like text, for "did you mean".
        """
        raw = text.strip()
        needle = _name_key(raw)
        devices = list(self)

        def fits(hw: Hardware) -> bool:
            return units is None or _UNITS.get(hw.id) in (None, units)

        exact = [hw.id for hw in devices
                 if raw.lower() == hw.id or (needle and needle in {_name_key(a) for a in (hw.name, *hw.aliases)})]
        if exact:
            return [i for i in exact if fits(self.devices[i])][:1]
        arch = _ARCH.match(raw.lower())
        if arch:  # several devices share one (gfx942: MI300X, MI300A): the CU count tells them apart
            same = [hw.id for hw in devices if arch.group(1) in {a.lower() for a in hw.aliases}]
            if units is not None:
                same = [i for i in same if _UNITS.get(i) == units]
            return same[:1]  # without a count: the catalog's first device of that architecture
        model, mem, form = _model(raw)
        found = []
        for hw in devices:
            sigs = [_model(x) for x in (hw.id, hw.name, *hw.aliases)]
            if not model or model not in {s[0] for s in sigs}:
                continue
            forms = {s[2] for s in sigs if s[2]}
            mems = {s[1] for s in sigs if s[1]} or ({round(hw.offchip.capacity / 1e9)} if hw.offchip.capacity else set())
            if (form and forms and form not in forms) or (mem and mems and mem not in mems) or not fits(hw):
                continue
            found.append(hw.id)
        if len(found) == 1:
            return found
        if not re.fullmatch(r"[a-z0-9][a-z0-9._+-]*", raw):
            return []  # a profiler's name the catalog lacks, or matches ambiguously: no guess
        names = {hw.id: hw.id for hw in devices}
        for hw in devices:
            for alias in (hw.name, *hw.aliases):
                names[alias.lower()] = hw.id
        hits = difflib.get_close_matches(raw.lower(), list(names), n=n * 3, cutoff=0.5)
        out: list[str] = list(found)  # the model's devices first ("a100": both A100s), then near spellings
        for h in hits:
            if names[h] not in out:
                out.append(names[h])
        return out[:n]

    def suggest(self, device: str | None, meta: Mapping[str, str] | None = None) -> list[str]:
        """Catalog ids for the device a profile ran on: by its name, else by its architecture (gfx90a, sm_90).

        A name that names a GPU model the catalog lacks (``AMD Instinct MI210``) gets none: its architecture
        (gfx90a, shared with the MI250X) would name another device."""
        units = _units_of(meta)
        if device and (hits := self.closest(str(device), units=units)):
            return hits
        if device and _names_gpu_model(str(device)) and not (units and _is_family(str(device))):
            return []
        for text in ((meta or {}).get(k) for k in ("gpu_arch", "arch")):
            if text:
                hits = self.closest(str(text), units=units)
                if hits:
                    return hits
        return []

    def with_device(self, hw: Hardware, *, overrides: bool = False) -> Catalog:
        """A new catalog with ``hw`` added (e.g. a custom device from the app)."""
        if hw.id in self.devices and not overrides:
            raise CatalogError(where=hw.origin or hw.id, expected="a new id, or `overrides: true`",
                               found=f"id {hw.id!r}, already defined in {self.devices[hw.id].origin}",
                               hint="pick another id, or say `overrides: true` to replace the built-in device.")
        devices = dict(self.devices)
        replaced = dict(self.replaced)
        if hw.id in devices:
            replaced[hw.id] = devices[hw.id].origin
        devices[hw.id] = hw
        return Catalog(devices=MappingProxyType(devices), replaced=MappingProxyType(replaced))


def catalog_paths(extra: Iterable[str | Path] = (), *, use_env: bool = True) -> list[Path]:
    """Every catalog file to load, in order: built-in, then ``ROOFCORE_CATALOG_PATH``, then ``extra``."""
    roots: list[Path] = [BUILTIN_DIR]
    if use_env and os.environ.get(ENV_VAR):
        roots += [Path(p) for p in os.environ[ENV_VAR].split(os.pathsep) if p.strip()]
    roots += [Path(p) for p in extra]
    files: list[Path] = []
    for r in roots:
        for f in _expand(r):
            if f.resolve() not in {x.resolve() for x in files}:
                files.append(f)
    return files


def load_catalogs(extra: Iterable[str | Path] = (), *, use_env: bool = True) -> Catalog:
    """Load the built-in catalogs and the user's, checking every file; see the module docstring."""
    catalog = Catalog(devices=MappingProxyType({}))
    for f in catalog_paths(extra, use_env=use_env):
        for hw, overrides in load_file(f):
            if hw.id in catalog and not overrides:
                raise CatalogError(where=f"{hw.origin}: device {hw.id!r}", expected="an id not used before",
                                   found=f"{hw.id!r}, already defined in {catalog.get(hw.id).origin}",
                                   hint="rename it, or add `overrides: true` to replace the earlier device.")
            catalog = catalog.with_device(hw, overrides=True)
    return catalog


# ----------------------------------------------------------------------------------------------- output


def _q(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")):
        if value >= factor:
            return f"{value / factor:.6g} {prefix}{unit}"
    return f"{value:.6g} {unit}"


def _fig(f: Figure) -> dict:
    out: dict[str, Any] = {"source": f.source}
    for k in ("measured", "unverified"):
        if getattr(f, k):
            out[k] = True
    for k in ("derivation", "notes"):
        if getattr(f, k):
            out[k] = getattr(f, k)
    return out


def hardware_to_yaml_dict(hw: Hardware) -> dict:
    """The device in the catalog grammar (quantities as unit strings), for download and editing."""
    dev: dict[str, Any] = {"id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": hw.kind.value,
                           "scope": hw.scope.value}
    for k in ("config", "notes"):
        if getattr(hw, k):
            dev[k] = getattr(hw, k)
    if hw.aliases:
        dev["aliases"] = list(hw.aliases)
    if hw.unverified:
        dev["unverified"] = True
    dev["default_ceiling"] = hw.default_ceiling
    dev["compute"] = []
    for c in hw.ceilings:
        e: dict[str, Any] = {"precision": c.precision.value, "unit": c.unit.value, "peak": _q(c.peak, "FLOP/s")}
        if c.sparse:
            e["sparse"] = _q(c.sparse, "FLOP/s")
        if c.achievable:
            e["achievable"] = _q(c.achievable, "FLOP/s")
            e["achievable_source"] = c.achievable_figure.source
        dev["compute"].append(e | _fig(c.figure))
    dev["memory"] = []
    for lv in hw.levels:
        e = {"level": lv.name, "bandwidth": _q(lv.bandwidth, "B/s")}
        if lv.label:
            e["label"] = lv.label
        if lv.capacity:
            e["capacity"] = _q(lv.capacity, "B")
        if lv.achievable:
            e["achievable"] = _q(lv.achievable, "B/s")
            e["achievable_source"] = lv.achievable_figure.source
        dev["memory"].append(e | _fig(lv.figure))
    if hw.links:
        dev["links"] = []
        for lk in hw.links:
            e = {"link": lk.name, "bandwidth": _q(lk.bandwidth, "B/s")}
            if lk.label:
                e["label"] = lk.label
            if lk.achievable:
                e["achievable"] = _q(lk.achievable, "B/s")
                e["achievable_source"] = lk.achievable_figure.source
            dev["links"].append(e | _fig(lk.figure))
    return dev


def hardware_to_yaml(hw: Hardware) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "devices": [hardware_to_yaml_dict(hw)]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)


def hardware_to_json(hw: Hardware) -> dict:
    """The stable JSON shape of a device (base units: FLOP/s, B/s, B; ridge in FLOP/B)."""

    def fig(f: Figure | None) -> dict | None:
        return None if f is None else {"source": f.source, "measured": f.measured, "unverified": f.unverified,
                                       "derivation": f.derivation}

    return {
        "id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": hw.kind.value, "scope": hw.scope.value,
        "config": hw.config, "notes": hw.notes, "unverified": hw.unverified, "origin": hw.origin,
        "default_ceiling": hw.default_ceiling,
        "ceilings": [{"key": c.key, "precision": c.precision.value, "unit": c.unit.value, "peak_flops_per_s": c.peak,
                      "sparse_flops_per_s": c.sparse, "achievable_flops_per_s": c.achievable,
                      **fig(c.figure), "achievable_figure": fig(c.achievable_figure)} for c in hw.ceilings],
        "levels": [{"name": lv.name, "label": lv.display, "bandwidth_bytes_per_s": lv.bandwidth,
                    "capacity_bytes": lv.capacity, "achievable_bytes_per_s": lv.achievable,
                    **fig(lv.figure), "achievable_figure": fig(lv.achievable_figure)} for lv in hw.levels],
        "links": [{"name": lk.name, "label": lk.display, "bandwidth_bytes_per_s_per_direction": lk.bandwidth,
                   "achievable_bytes_per_s": lk.achievable, **fig(lk.figure),
                   "achievable_figure": fig(lk.achievable_figure)} for lk in hw.links],
        "ridge": hw.ridge(),
        "ridge_by_ceiling": {c.key: hw.ridge(c.key) for c in hw.ceilings},
    }
