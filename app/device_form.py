"""Your own devices in the app: the Hardware page's form as catalog YAML, and catalog YAML (the form's or an
upload) read as the catalog loader reads any file, its errors and all."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from roofcore.catalog import Catalog
from roofcore.catalog_files import load_bytes
from roofcore.errors import LocatedError
from roofcore.models import Hardware
from roofcore.views import effective_catalog

#: the form's fields as it labels them (pages/hardware.py uses these labels; errors name them, never a key path)
LABELS = {
    "id": "Id", "name": "Name", "vendor": "Vendor", "kind": "Kind", "compute": "Compute ceilings",
    "peak": "Peak (TFLOP/s)", "hbm_bandwidth": "Off-chip bandwidth (TB/s)", "hbm_capacity": "Off-chip capacity (GB)",
    "hbm_label": "Memory label", "l2_bandwidth": "L2 bandwidth (TB/s)", "l2_capacity": "L2 capacity (MB)",
    "link_name": "Link", "link_bandwidth": "Link bandwidth (GB/s, one way)", "source": "Source of these figures",
    "overrides": "Replace a built-in device with the same id",
}
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_LINK = re.compile(r"^[a-z][a-z0-9_]*$")
#: a catalog key path the form's YAML can fail at → the field it came from (memory[0] is off-chip, [1] the L2)
_PATHS = (
    (r"\.id$", "id"), (r"\.name$", "name"), (r"\.vendor$", "vendor"), (r"\.kind$", "kind"),
    (r"\.compute\[\d+\]\.peak$", "peak"), (r"\.compute(\[\d+\])?", "compute"),
    (r"\.memory\[0\]\.capacity$", "hbm_capacity"), (r"\.memory\[0\]\.label$", "hbm_label"),
    (r"\.memory\[0\]", "hbm_bandwidth"), (r"\.memory\[1\]\.capacity$", "l2_capacity"),
    (r"\.memory\[1\]", "l2_bandwidth"), (r"\.links\[0\]\.link$", "link_name"), (r"\.links", "link_bandwidth"),
    (r"\.sources|\.source$", "source"),
)


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
    ceilings: Sequence[tuple[str, str, float]]  #: (precision, unit, TFLOP/s), the rows given (a peak > 0)
    hbm_bandwidth: float | None  #: TB/s; None = left empty
    hbm_capacity: float | None = None  #: GB; None or 0 = not given
    hbm_label: str = ""
    l2_bandwidth: float | None = None  #: TB/s; None or 0 = no L2 roof
    l2_capacity: float | None = None  #: MB
    link_name: str = ""
    link_bandwidth: float | None = None  #: GB/s per direction
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
    hbm = {"level": "hbm", "bandwidth": f"{form.hbm_bandwidth or 0:g} TB/s", "source": "S1"}
    if form.hbm_label.strip():
        hbm["label"] = form.hbm_label.strip()
    if form.hbm_capacity:
        hbm["capacity"] = f"{form.hbm_capacity:g} GB"
    dev["memory"] = [hbm]
    if form.l2_bandwidth:
        l2 = {"level": "l2", "bandwidth": f"{form.l2_bandwidth:g} TB/s", "source": "S1"}
        if form.l2_capacity:
            l2["capacity"] = f"{form.l2_capacity:g} MB"
        dev["memory"].append(l2)
    if form.link_name.strip() and form.link_bandwidth:
        dev["links"] = [{"link": form.link_name.strip().lower(), "bandwidth": f"{form.link_bandwidth:g} GB/s",
                         "source": "S1"}]
    doc = {"schema_version": 1, "sources": {"S1": form.source.strip() or "entered in the Roofline app"},
           "devices": [dev]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120)


def form_problems(form: DeviceForm, builtin: Catalog | None = None) -> list[str]:
    """What is wrong with the form, one line per field, named as the form labels it ("Vendor: required",
    "Off-chip bandwidth (TB/s): must be a number > 0"); empty when the catalog loader may take it."""
    out = []
    dev_id = form.id.strip()
    if not dev_id:
        out.append(f"{LABELS['id']}: required (lowercase letters, digits and dashes, e.g. my-gpu)")
    elif not _ID.match(dev_id):
        out.append(f"{LABELS['id']}: use lowercase letters, digits and single dashes (e.g. my-gpu); found {dev_id!r}")
    elif builtin is not None and dev_id in builtin and not form.overrides:
        out.append(f"{LABELS['id']}: {dev_id!r} is a built-in device ({builtin.get(dev_id).origin}); pick another id, "
                   f"or tick \"{LABELS['overrides']}\"")
    if not form.vendor.strip():
        out.append(f"{LABELS['vendor']}: required")
    if not form.ceilings:
        out.append(f"{LABELS['compute']}: give at least one {LABELS['peak']} > 0")
    seen = [f"{p} {u}" for p, u, _ in form.ceilings]
    for twice in dict.fromkeys(k for k in seen if seen.count(k) > 1):
        out.append(f"{LABELS['compute']}: {twice} is given twice; keep one row")
    out += _positive("hbm_bandwidth", form.hbm_bandwidth, required=True)
    out += _positive("hbm_capacity", form.hbm_capacity)
    out += _positive("l2_bandwidth", form.l2_bandwidth)
    out += _positive("l2_capacity", form.l2_capacity)
    if form.l2_capacity and not form.l2_bandwidth:
        out.append(f"{LABELS['l2_capacity']}: needs an {LABELS['l2_bandwidth']} (the L2 roof)")
    link = form.link_name.strip()
    if link and not _LINK.match(link.lower()):
        out.append(f"{LABELS['link_name']}: use lowercase letters, digits and underscores (e.g. nvlink); found {link!r}")
    if link and not form.link_bandwidth:
        out.append(f"{LABELS['link_bandwidth']}: required with a {LABELS['link_name']}, a number > 0")
    if form.link_bandwidth and not link:
        out.append(f"{LABELS['link_name']}: required with a {LABELS['link_bandwidth']} (e.g. nvlink, pcie)")
    return out


def _positive(field: str, value: float | None, *, required: bool = False) -> list[str]:
    if value is None:
        return [f"{LABELS[field]}: required, a number > 0"] if required else []
    if value < 0 or (required and value == 0):
        return [f"{LABELS[field]}: must be a number > 0"]
    return []


def form_message(e: LocatedError) -> str:
    """A catalog loader's error about the form's YAML, in the form's words: the field's label instead of the key
    path (``"Off-chip bandwidth (TB/s): expected …"``, never ``$.devices[0].memory[0].bandwidth``)."""
    where = e.where or ""
    path = where.split(": ", 1)[1] if ": " in where else ""
    field = next((f for pattern, f in _PATHS if re.search(pattern, path)), None)
    body = e.text or ""
    if e.expected is not None:
        body = (body + " " if body else "") + f"expected {e.expected}, found {e.found}"
    body = body.rstrip(".") + "." + (f" Hint: {e.hint}" if e.hint else "")
    return f"{LABELS[field] if field else 'The form'}: {body}"
