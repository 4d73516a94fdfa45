"""The JSON of every real sample stays the same across refactors: a SHA-256 per sample of its analysis on a fixed
test device (not a catalog device, so catalog edits do not move it), kept in tests/data/sample_json_sha256.json.

A change that is meant to change an analysis regenerates the file (``ROOFCORE_UPDATE_GOLDENS=1 pytest
tests/test_sample_goldens.py``) and says why in its commit; any other change must leave every hash alone.
"""

import hashlib
import json
import os
from pathlib import Path

import pytest
from roofhelpers import make_hw
from test_samples import ENTRIES, SAMPLES, WORKS, workload

import roofcore
from roofcore.output import analysis_json

GOLDENS = Path(__file__).parent / "data" / "sample_json_sha256.json"
#: one device with every level and link the samples carry, figures fixed here
DEVICE = make_hw(500e12, 3e12, levels={"l2": 10e12, "l1": 30e12, "lds": 40e12, "mall": 15e12},
                 links={"pcie": 32e9, "nvlink": 450e9}, hw_id="golden-device",
                 extra_ceilings=[{"precision": p, "unit": u, "peak": r, "source": "unit test fixture"}
                                 for p, u, r in (("fp32", "vector", 50e12), ("fp64", "vector", 25e12),
                                                 ("fp16", "matrix", 500e12), ("fp32", "matrix", 100e12),
                                                 ("fp64", "matrix", 50e12), ("int8", "matrix", 1000e12),
                                                 ("fp8", "matrix", 1000e12), ("fp16", "vector", 100e12),
                                                 ("bf16", "vector", 100e12), ("tf32", "matrix", 250e12))])


def rounded(value):
    """Floats to 12 significant digits, everywhere in a JSON document: a sum taken in another order by another
    numpy (0.5962310167374137 beside ...139 with numpy 1.26) is the same analysis, not a change."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def digest(key: str) -> str:
    a = roofcore.analyze(workload(key), [DEVICE])
    doc = json.loads(analysis_json(a))
    doc.pop("hardware")  # the fixed device's own figures
    text = json.dumps(rounded(doc), sort_keys=True)
    for folder in sorted({str(SAMPLES), str(SAMPLES.resolve())}, key=len, reverse=True):
        text = text.replace(json.dumps(folder)[1:-1], "<samples>")  # where the samples folder sits
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.samples
def test_every_sample_analyses_as_it_did():
    got = {key: digest(key) for key in WORKS}
    if os.environ.get("ROOFCORE_UPDATE_GOLDENS") == "1":
        GOLDENS.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDENS.read_text(encoding="utf-8"))
    assert set(want) <= set(ENTRIES), f"goldens for entries that no longer exist: {set(want) - set(ENTRIES)}"
    changed = sorted(k for k in got if want.get(k) != got[k])
    assert not changed, (f"the analysis of {len(changed)} sample(s) changed: {changed}. If that is intended, run "
                         "ROOFCORE_UPDATE_GOLDENS=1 pytest tests/test_sample_goldens.py and say why in the commit.")
