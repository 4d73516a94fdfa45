"""The measurement as a catalog device (``catalogs/README.md`` grammar), every figure ``measured: true`` with
``peak`` = ``achievable`` = the measurement."""

from __future__ import annotations

from typing import Any

import yaml

from .results import MeasureResult


def _qty(value: float, unit: str) -> str:
    """A quantity string the catalog loader reads back, to 4 significant digits (e.g. "33.12 GB/s")."""
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


def _capacity(nbytes: int) -> str:
    for factor, prefix in ((2**30, "Gi"), (2**20, "Mi"), (2**10, "Ki")):
        if nbytes >= factor:
            return f"{nbytes / factor:.4g} {prefix}B"
    return f"{nbytes} B"


def _measured(value: str, source: str = "M1") -> dict[str, Any]:
    # a measured device has no datasheet peak: the measurement is its roof and its achievable value alike
    return {"peak": value, "achievable": value, "source": source, "measured": True}


def to_catalog_dict(result: MeasureResult, *, hw_id: str = "this-machine", name: str | None = None) -> dict[str, Any]:
    """The result as a catalog document (``catalogs/README.md`` grammar); see :func:`to_catalog_yaml`."""
    compute = []
    for c in result.ceilings:
        e = {"precision": c.precision, "unit": c.unit} | _measured(_qty(c.flops_per_s, "FLOP/s"))
        e["notes"] = c.how
        compute.append(e)
    memory = []
    for p in result.levels:
        bw = _qty(p.bandwidth, "B/s")
        e = {"level": p.level, "label": "DRAM" if p.level == "hbm" else f"{p.level.upper()} cache",
             "bandwidth": bw, "achievable": bw, "source": "M1", "measured": True}
        if p.level == "hbm":
            e["notes"] = (f"numpy copy, one thread, working sets {_capacity(p.smallest)} to {_capacity(p.largest)}; "
                          "bytes read + written (STREAM counting, write-allocate not counted)")
        else:
            e["capacity"] = _capacity(p.largest)
            os_note = f"; the OS reports {_capacity(p.os_cache)}" if p.os_cache else ""
            e["notes"] = (f"numpy copy, one thread, plateau over working sets {_capacity(p.smallest)} to "
                          f"{_capacity(p.largest)}; capacity = the largest working set on the plateau{os_note}")
        memory.append(e)
    model = result.description.split(",")[0]
    devices = [{
        "id": hw_id,
        "name": name or f"{model} (measured)",
        "vendor": result.vendor,
        "kind": "cpu",
        "config": (f"as measured: bandwidth and elementwise sweeps on one thread, matmul on numpy's BLAS "
                   f"with {result.cores} logical cores"),
        "default_ceiling": "fp64-vector",
        "notes": ("Measured by `roofline measure` (ERT-style, numpy). Peak and achievable are both the measured "
                  "value: there is no datasheet peak. On-chip levels are the bandwidth plateaus at small working "
                  "sets; numpy's per-call overhead hides the smallest cache."),
        "compute": compute,
        "memory": memory,
    }]
    g = result.gpu
    if g is not None and g.ceilings:
        gbw = _qty(g.bandwidth, "B/s")
        devices.append({
            "id": f"{hw_id}-gpu", "name": f"{g.name} (measured)", "vendor": _gpu_vendor(g.name),
            "kind": "gpu", "config": f"as measured with {g.backend}",
            "notes": "Measured by `roofline measure` with a device copy and matmuls; peak = achievable = measured.",
            "compute": [{"precision": c.precision, "unit": c.unit} | _measured(_qty(c.flops_per_s, "FLOP/s"))
                        | {"notes": c.how} for c in g.ceilings],
            "memory": [{"level": "hbm", "label": "device memory", "bandwidth": gbw, "achievable": gbw,
                        "source": "M1", "measured": True, "notes": "large device-to-device copy, bytes read + written"}],
        })
    return {
        "schema_version": 1,
        "sources": {"M1": f"roofline measure on {result.description}, {result.date}"},
        "devices": devices,
    }


def _gpu_vendor(name: str) -> str:
    low = name.lower()
    return "AMD" if ("amd" in low or "instinct" in low or "radeon" in low) else "NVIDIA"


def to_catalog_yaml(result: MeasureResult, *, hw_id: str = "this-machine", name: str | None = None) -> str:
    """A catalog YAML file with the measured device (and a ``-gpu`` one when a GPU was measured).

    Every figure is ``measured: true`` with ``peak`` = ``achievable`` = the measurement; it loads with
    :func:`roofcore.catalog.load_bytes` and goes next to the theoretical catalogs with ``--catalog``.
    """
    header = ("# Measured by `roofline measure` (roofcore.measure). Peak and achievable are both the measured value:\n"
              "# a measured device has no datasheet peak. Load it with `roofline --catalog FILE ...`.\n")
    body: str = yaml.safe_dump(to_catalog_dict(result, hw_id=hw_id, name=name), sort_keys=False,
                               allow_unicode=True, width=120)
    return header + body

