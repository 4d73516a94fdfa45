"""Your own devices in the app: the Hardware page's form as catalog YAML, and catalog YAML (the form's or an
upload) read as the catalog loader reads any file, its errors and all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from roofcore.catalog import Catalog, load_bytes
from roofcore.models import Hardware
from roofcore.views import effective_catalog


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
