"""Small builders shared by the engine tests (hardware from YAML text, workloads from kernels)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
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


# ---------------------------------------------------------------------------------------------------- fuzzing


def mutated(seeds: list[bytes], junk: list[bytes], replacements: list[bytes] = (), raw_size: int = 0):
    """A hypothesis strategy: one of ``seeds`` mutated 1 to 4 times (truncated, a byte flipped, a line deleted or
    doubled, a piece of ``junk`` spliced in, and, given ``replacements``, a byte replaced by one of them); with
    ``raw_size``, one example in ten is instead random bytes of at most that size (or there are no seeds)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw) -> bytes:
        if raw_size and (not seeds or draw(st.integers(0, 9)) == 0):
            return draw(st.binary(max_size=raw_size))
        data = bytearray(draw(st.sampled_from(seeds)))
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, max(len(data) - 1, 0)))
            op = draw(st.integers(0, 5 if replacements else 4))
            if op == 0:  # truncate
                data = data[:i]
            elif op == 1:  # flip a byte
                if data:
                    data[i] = draw(st.integers(0, 255))
            elif op in (2, 3):  # delete or double a line
                lines = bytes(data).split(b"\n")
                j = draw(st.integers(0, len(lines) - 1))
                data = bytearray(b"\n".join(lines[:j] + lines[j + 1:] if op == 2 else lines[: j + 1] + lines[j:]))
            elif op == 4:  # splice in text that parsers find interesting
                data[i:i] = draw(st.sampled_from(junk))
            else:
                data[i:i + 1] = draw(st.sampled_from(replacements))
        return bytes(data)

    return strategy()


def damaged(base: bytes, seed: int, n: int, most: int = 8):
    """``n`` seeded copies of ``base`` with 1 to ``most`` bytes changed at random, three in ten of them also cut at
    a random length: what a bad disk, a partial download or a corrupt archive gives a reader."""
    import random

    rng = random.Random(seed)
    for _ in range(n):
        d = bytearray(base)
        for _ in range(rng.randint(1, most)):
            d[rng.randrange(len(d))] = rng.randrange(256)
        yield bytes(d[:rng.randrange(len(d))] if rng.random() < 0.3 else d)


#: the real exports (../shared/samples beside the repository; absent in a fresh clone, present in CI)
SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def sample(name: str) -> Path:
    """A real export from ../shared/samples; the test skips, saying why, where that folder is absent."""
    path = SAMPLES / name
    if not path.is_file():
        pytest.skip(f"real sample {name} not found: ../shared/samples is absent (a fresh clone); CI has it")
    return path


def col(w: Workload, key: str) -> list:
    """A workload column as a list, unknown (NaN) as None."""
    return [None if isinstance(v, float) and math.isnan(v) else v for v in w.frame[key].tolist()]


def unformatted_numbers(at) -> list[str]:
    """The tables of an AppTest run whose float columns have no number format: Streamlit writes such a cell with
    every digit it has (the LLM tab's 1066.1149 tok/s, the module tree's 40.6267 %)."""
    import json

    out = []
    for d in at.dataframe:
        shown = json.loads(d.proto.columns or "{}")
        v = d.value
        bare = [c for c in getattr(v, "columns", ()) if v[c].dtype.kind == "f"
                and not shown.get(c, {}).get("type_config", {}).get("format")]
        if bare:
            out.append(f"table {d.proto.id or ''} shows {bare} unformatted")
    return out
