"""Small builders shared by the engine tests (hardware from YAML text, workloads from kernels)."""

from __future__ import annotations

import numpy as np
import yaml

from roofcore.catalog import load_bytes
from roofcore.ingest import make_frame
from roofcore.models import (
    Ceiling,
    DeviceKind,
    Figure,
    Hardware,
    Kernel,
    MemoryLevel,
    Precision,
    Unit,
    Workload,
)


def make_hw(peak: float = 100e12, bw: float = 2e12, *, precision: str = "bf16", unit: str = "matrix",
            levels: dict[str, float] | None = None, links: dict[str, float] | None = None,
            extra_ceilings: list[dict] | None = None, hw_id: str = "test-device", scope: str = "package") -> Hardware:
    """A device with one ceiling and an off-chip level, through the real loader (same validation)."""
    dev = {
        "id": hw_id, "name": "Test device", "vendor": "Test", "kind": "gpu", "scope": scope,
        "compute": [{"precision": precision, "unit": unit, "peak": peak, "source": "unit test fixture"}, *(extra_ceilings or [])],
        "memory": [{"level": "hbm", "bandwidth": bw, "source": "unit test fixture"}]
        + [{"level": k, "bandwidth": v, "source": "unit test fixture"} for k, v in (levels or {}).items()],
    }
    if links:
        dev["links"] = [{"link": k, "bandwidth": v, "source": "unit test fixture"} for k, v in links.items()]
    doc = {"schema_version": 1, "devices": [dev]}
    return load_bytes(yaml.safe_dump(doc).encode(), "test.yaml")[0][0]


def fast_hw(peak: float, bw: float, levels: dict[str, float] | None = None) -> Hardware:
    """The same device as :func:`make_hw` built straight from the dataclasses (for many-example property tests)."""
    fig = Figure(source="unit test fixture")
    return Hardware(
        id="prop-device", name="Property device", vendor="Test", kind=DeviceKind.GPU,
        ceilings=(Ceiling(precision=Precision.BF16, unit=Unit.MATRIX, peak=peak, figure=fig),),
        levels=(MemoryLevel(name="hbm", bandwidth=bw, figure=fig),
                *(MemoryLevel(name=k, bandwidth=v, figure=fig) for k, v in (levels or {}).items())),
    )


def workload_of(*kernels: Kernel, times: list[float | None] | None = None) -> Workload:
    names = sorted({k for kern in kernels for k in kern.bytes})
    cols: dict[str, object] = {
        "name": [k.name for k in kernels],
        "count": [k.count for k in kernels],
        "flops": [k.flops for k in kernels],
        "time_s": [np.nan if t is None else t for t in (times or [k.time_s for k in kernels])],
        "precision": [k.precision for k in kernels],
        "unit": [k.unit for k in kernels],
        "group": [k.group for k in kernels],
        "source": ["test"] * len(kernels),
        "row": [str(i + 1) for i in range(len(kernels))],
    }
    for n in names:
        cols[f"bytes_{n}"] = [k.bytes.get(n, np.nan) for k in kernels]
    return Workload(frame=make_frame(cols, len(kernels)), name="test", sources=("test",), formats=("test",))


def watch_tabulation(monkeypatch, who: str) -> list[int]:
    """From now on in the test: every ``Analysis.table`` call records its workload's row count in the returned
    list, and building any Altair object fails with ``who`` in the message (the roofline is written as a
    Vega-Lite dict; Altair objects cost more than the engine's whole analysis)."""
    from altair.utils.schemapi import SchemaBase

    from roofcore.analyze import Analysis

    rows: list[int] = []
    table = Analysis.table

    def counted(self, *args, **kwargs):
        rows.append(len(self.workload))
        return table(self, *args, **kwargs)

    def no_altair(*args, **kwargs):
        raise AssertionError(f"{who} built an Altair object")

    monkeypatch.setattr(Analysis, "table", counted)
    monkeypatch.setattr(SchemaBase, "__init__", no_altair)
    return rows
