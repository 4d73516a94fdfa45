"""The output layer writes the same JSON and CSV as the standard library and pandas would, column-wise."""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from roofhelpers import make_hw, workload_of

import roofcore
from roofcore.models import Kernel
from roofcore.output import analysis_csv, analysis_json, vfmt_pct, vfmt_si, vfmt_time
from roofcore.units import fmt_pct, fmt_si, fmt_time

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
CATALOG = roofcore.load_catalogs()
DEVICES = [CATALOG.get("h100-sxm"), CATALOG.get("mi300x")]


def same(a, b, path="$"):
    """Equal in meaning: the same keys in the same order, the same nulls, the same numbers."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b and (a is None) == (b is None), (path, a, b)


def stdlib_csv(a) -> pd.DataFrame:
    tab = a.table()
    tab["flags"] = ["; ".join(f"{f['code']}: {f['message']}" for f in fl) for fl in tab["flags"]]
    for c in tab.columns:  # what a spreadsheet would run as a formula gets a leading quote
        if tab[c].dtype == object or pd.api.types.is_string_dtype(tab[c].dtype):
            tab[c] = tab[c].map(lambda v: "'" + v if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r") else v)
    return pd.read_csv(io.StringIO(tab.drop(columns=["flags_mask"]).to_csv(index=False)))


def _num(v):
    x = float(v)
    return x if np.isfinite(x) else None


def stdlib_json(a) -> dict:
    """The analysis JSON built the plain way, as a reference for the column-wise writer: one dict per row of
    :meth:`Analysis.table` (the contract's keys and nulls), around :meth:`Analysis.json_fields`."""
    names = a.workload.byte_names
    tab = a.table()
    records = []
    for rec in tab.to_dict("records"):
        records.append({
            "name": rec["name"], "hardware": rec["hardware"], "group": rec["group"], "count": int(rec["count"]),
            "precision": rec["precision"], "unit": rec["unit"], "ceiling": rec["ceiling"] or None,
            "flops": _num(rec["flops"]), "bytes": {n: _num(rec[f"bytes_{n}"]) for n in names},
            "time_s": _num(rec["time_s"]), "intensity": {n: _num(rec[f"intensity_{n}"]) for n in names},
            **{k: _num(rec[k]) for k in ("t_roof_s", "t_serial_s", "attainable_flops_per_s")},
            "bound": rec["bound"], "binding_level": rec["binding_level"],
            **{k: _num(rec[k]) for k in ("achieved_flops_per_s", "efficiency", "pct_peak_compute",
                                         "pct_peak_bandwidth", "headroom_s")},
            "flags": rec["flags"], "source": rec["source"], "row": rec["row"],
        })
        for k in ("group", "precision", "unit", "binding_level", "bound"):
            if not isinstance(records[-1][k], str):
                records[-1][k] = None
    doc = {}
    for k, v in a.json_fields().items():
        doc[k] = v
        if k == "hardware":
            doc["kernels"] = records
    return json.loads(json.dumps(doc, allow_nan=False))


def check(a) -> None:
    same(stdlib_json(a), json.loads(analysis_json(a)))
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(analysis_csv(a))), stdlib_csv(a))


def sample_analyses():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is absent (a fresh clone): the real exports are not here")
    out = []
    for f in sorted(SAMPLES.iterdir()):
        if f.suffix == ".md":
            continue
        try:
            w = roofcore.read_many([f])
        except roofcore.RoofcoreError:
            continue  # refused files have no analysis to write
        out.append((f.name, roofcore.analyze(w, DEVICES)))
    return out


@pytest.mark.samples
def test_json_and_csv_of_every_sample_match_the_standard_writers():
    analyses = sample_analyses()
    assert analyses
    for name, a in analyses:
        try:
            check(a)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


def test_every_flag_and_awkward_text_survive_the_column_writer():
    hw = make_hw(100e12, 2e12, levels={"l2": 10e12})
    kernels = [
        Kernel('na"me, with =HYPERLINK("x") and \u00e9\n', 1e12, {"hbm": 1e9}, time_s=1e-9),  # above the roof
        Kernel("=cmd|' /C calc'!A0", 1e6, {"hbm": 1e6}, time_s=1.0),  # far below
        Kernel("tiny", 1.0, {"hbm": 1.0}, count=10, time_s=1e-6),
        Kernel("no flops", float("nan"), {"hbm": 1e9, "sram": 5.0}, time_s=0.01),  # lacking level, missing flops
        Kernel("no time", 1e9, {"hbm": float("nan")}),
        Kernel("zero time", 1e9, {"hbm": 1e6}, time_s=0.0, precision="fp64"),  # no fp64 ceiling
        Kernel("fp64 too", 1e9, {"hbm": 1e6, "sram": 0.0}, time_s=1e-3, precision="fp64"),  # flags on other rows
    ]
    a = roofcore.analyze(workload_of(*kernels), [hw])
    codes = {f["code"] for fl in a.table()["flags"] for f in fl}
    assert {"above-roof", "far-below-roofs", "tiny-kernel", "missing-flops", "missing-bytes", "level-not-on-device",
            "zero-time", "no-ceiling", "missing-time"} <= codes
    check(a)
    assert "'=cmd" in analysis_csv(a) and "'=HYPERLINK" not in analysis_csv(a)  # only a leading = is a formula


def test_vectorised_formatters_agree_with_the_scalar_ones():
    values = np.array([0.0, 1e-10, 9.996e-4, 1.0, 999.6, 1.5e3, 123.456, -2e-3, np.nan, np.inf, 5e20, 4e-22, -0.0, 1.125,
                       2.675e-6, 999.5, 9.995e-7])
    finite = values[np.isfinite(values) | np.isnan(values)]
    assert vfmt_time(finite) == [fmt_time(float(v)) for v in finite]
    assert vfmt_si(values, "B") == [fmt_si(float(v), "B") for v in values]
    assert vfmt_pct(values[:9]) == [fmt_pct(float(v)) for v in values[:9]]


def test_cli_streams_json_and_csv(tmp_path, capsys):
    from roofcore.cli import main

    inv = ROOT / "examples" / "transformer_block.yaml"
    assert main(["analyze", str(inv), "--hardware", "h100-sxm", "--json", "-o", str(tmp_path / "a.json")]) == 0
    doc = json.loads((tmp_path / "a.json").read_text())
    assert len(doc["kernels"]) == 12 and doc["summary"][0]["hardware"] == "h100-sxm"
    assert main(["analyze", str(inv), "--hardware", "h100-sxm", "--csv"]) == 0
    assert pd.read_csv(io.StringIO(capsys.readouterr().out)).shape[0] == 12


def test_three_significant_digits_are_pythons_on_awkward_values():
    """Messages round in numpy and format each distinct value once: the text must still be Python's exactly, at
    rounding ties, next to powers of ten, for zeros of either sign, NaN, ±inf and subnormal values."""
    from roofcore.output import f0, g3, sig3
    from roofcore.units import sig

    rng = np.random.default_rng(3)
    ties = [float(f"{m}.{d}5") * 10.0 ** k for m in range(1, 1000, 37) for d in range(10) for k in range(-6, 6)]
    powers = [10.0 ** k for k in range(-300, 300)]
    near = [np.nextafter(p, side) for p in powers[250:350] for side in (0.0, np.inf)]
    special = [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e-320, 1.7e308, 999.5, 99.95, 1.125, 2.675, 0.5, 1.5, 2.5]
    x = np.array([*10.0 ** rng.uniform(-30, 30, 5000), *-(10.0 ** rng.uniform(-9, 9, 500)), *ties, *powers, *near,
                  *special])
    assert g3(x).tolist() == [f"{v:.3g}" for v in x.tolist()]
    assert sig3(x).tolist() == [sig(v) for v in x.tolist()]
    assert f0(x).tolist() == [f"{v:.0f}" for v in x.tolist()]


def test_the_cli_writes_the_writers_bytes(tmp_path):
    from roofcore.cli import main

    inv = ROOT / "examples" / "transformer_block.yaml"
    a = roofcore.analyze(roofcore.read(inv), [CATALOG.get("h100-sxm")])
    for flag, writer in (("--json", analysis_json), ("--csv", analysis_csv)):
        out = tmp_path / f"a{flag}"
        assert main(["analyze", str(inv), "--hardware", "h100-sxm", flag, "-o", str(out)]) == 0
        assert out.read_bytes().decode("utf-8") == writer(a).rstrip("\n") + "\n"
