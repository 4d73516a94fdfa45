"""The hierarchy on real exports (issue 13): every ncu sample that carries L1 or L2 bytes, analysed on the device
it ran on from the catalog, has no level-not-on-device flag, and each kernel is bound by the level its numbers
say. The expected bound is worked out here from the export's cells (read with the csv module) and the catalog's
figures alone: the longest of FLOPs ÷ peak and bytes ÷ bandwidth per level. Skips where ../shared/samples is
absent."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import yaml

import roofcore
from roofcore import FLAG_CODES, Flag
from roofcore.analyze import analyze

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
EXPECTED = yaml.safe_load((Path(__file__).with_name("samples_expected.yaml")).read_text(encoding="utf-8"))["samples"]
#: the ncu samples that work, with the device each ran on (samples_expected.yaml)
NCU = {k: e["hardware"] for k, e in EXPECTED.items() if k.startswith("ncu_") and e["outcome"] == "works"
       and "files" not in e}
#: FLOPs of launches without CUDA-core counters, from MANIFEST.md: the 20480³ half-precision GEMMs, 2·20480³
#: each, on the launches that ran tensor instructions
TENSOR_ONLY_FLOPS = {"ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv": 2 * 20480**3}
BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
LEVELS = {"dram__bytes.sum": "hbm", "lts__t_bytes.sum": "l2", "l1tex__t_bytes.sum": "l1"}
OPS = {"dadd": ("fp64", 1), "dmul": ("fp64", 1), "dfma": ("fp64", 2), "fadd": ("fp32", 1), "fmul": ("fp32", 1),
       "ffma": ("fp32", 2), "hadd": ("fp16", 1), "hmul": ("fp16", 1), "hfma": ("fp16", 2)}


def _value(text: str, unit: str) -> float | None:
    try:
        return float(text.replace(",", "")) * BYTES.get(unit, 1.0)
    except ValueError:
        return None


def launches(path: Path) -> dict[str, dict[str, float]]:
    """Per launch ID: metric -> value in base units (bytes; counts as they are), from a details page (a row per
    metric) or a raw page (a column per metric, a units row under the header)."""
    text = path.read_text(encoding="utf-8-sig")
    rows = csv.DictReader(io.StringIO(text[text.index('"ID","Process ID"'):]))
    out: dict[str, dict[str, float]] = {}
    if "Metric Name" not in (rows.fieldnames or ()):
        units = next(rows)
        for r in rows:
            if (r.get("ID") or "").isdigit():
                out[r["ID"]] = {k: v for k, cell in r.items() if k and cell is not None
                                and (v := _value(cell, units.get(k) or "")) is not None}
        return out
    for r in rows:
        if not r.get("Metric Name") or not (r.get("ID") or "").isdigit():
            continue
        v = _value(r["Metric Value"], r["Metric Unit"])
        if v is not None:
            out.setdefault(r["ID"], {})[r["Metric Name"]] = v
    return out


def expected(sample: str, m: dict[str, float], hw) -> tuple[str, str | None]:
    """(bound, ceiling key) from the cells and the catalog: compute on the ceiling the FLOPs ran on, each level."""
    sass = {op: m[f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"] for op in OPS
            if f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" in m}
    if sass:
        by = {}
        for op, n in sass.items():
            prec, k = OPS[op]
            by[prec] = by.get(prec, 0.0) + k * n
        flops, key = sum(by.values()), f"{max(by, key=by.get)}-vector"
    elif m.get("sm__inst_executed_pipe_tensor.sum", 0) > 0 and sample in TENSOR_ONLY_FLOPS:
        flops, key = TENSOR_ONLY_FLOPS[sample], "fp16-matrix"
    else:
        return "unknown", None  # FLOPs unknown: no roofline, so no bound
    times = {"compute": flops / hw.ceiling_map[key].peak}
    for metric, level in LEVELS.items():
        if metric in m:
            times[level] = m[metric] / hw.level_map[level].bandwidth
    top = max(times, key=times.get)
    return ("compute:" + key if top == "compute" else "memory:" + top), key


@pytest.mark.samples
@pytest.mark.parametrize("sample", sorted(NCU))
def test_ncu_samples_with_on_chip_bytes_are_bound_by_the_level_their_numbers_say(sample):
    path = SAMPLES / sample
    if not path.is_file():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository)")
    cells = launches(path)
    if not any(k in m for m in cells.values() for k in ("lts__t_bytes.sum", "l1tex__t_bytes.sum")):
        pytest.skip(f"{sample} carries no L1 or L2 bytes")
    hw = roofcore.load_catalogs().get(NCU[sample])
    assert {"l2", "l1"} <= set(hw.level_map), f"{hw.id} has no on-chip roofs"
    a = analyze(roofcore.read(path), [hw])
    tab = a.table(hw.id)
    assert not (a.result(hw.id).flags & int(Flag.LEVEL_NOT_ON_DEVICE)).any(), FLAG_CODES[Flag.LEVEL_NOT_ON_DEVICE]
    assert not a.result(hw.id).lacking
    got = {row: (bound, ceiling) for row, bound, ceiling in zip(tab["row"], tab["bound"], tab["ceiling"], strict=True)}
    assert set(got) == set(cells)
    for launch, m in cells.items():
        bound, key = expected(sample, m, hw)
        assert (got[launch][0] or "unknown") == bound, (launch, got[launch], bound)
        if key:
            assert got[launch][1] == key, launch
