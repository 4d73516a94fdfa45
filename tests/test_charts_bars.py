"""The Overview's time-per-bound bars as a plain Vega-Lite spec (roofcore.charts.bars): the same spec Altair
makes, built without importing Altair (the app's first chart, issue 24 point 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from roofcore import charts
from roofcore.charts.bars import bound_share_spec

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("share", [
    {"compute:bf16-matrix": 0.659, "memory:hbm": 0.341},
    {"memory:hbm": 0.5, "memory:l2": 0.2, "compute:fp32-vector": 0.296, "link:nvlink": 0.004},
    {"unknown": 1.0},
    {},
])
@pytest.mark.parametrize("width", [300, 320])
def test_bars_spec_is_altairs(share, width):
    made = charts.bound_share_chart(share, width=width).to_dict()
    made.pop("$schema")
    assert by_content(bound_share_spec(share, width=width)) == by_content(made)


def by_content(spec: dict) -> tuple[dict, object]:
    """The spec with its dataset taken by content: Altair names a dataset by a hash whose recipe changed between
    releases (5.2 and the newest name the same rows differently)."""
    spec = dict(spec)
    sets, name = spec.pop("datasets", {}), spec.pop("data", {}).get("name")
    return spec, sets.get(name)


def test_bars_spec_needs_no_altair():
    code = ("import sys; from roofcore.charts import bound_share_spec; bound_share_spec({'memory:hbm': 1.0}); "
            "print(sorted(m for m in ('altair', 'pandas', 'numpy', 'jsonschema') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "[]"


def test_charts_names_resolve_lazily():
    assert set(charts.__all__) <= set(dir(charts))
    for name in charts.__all__:
        assert getattr(charts, name) is not None, name
    with pytest.raises(AttributeError):
        charts.no_such_chart  # noqa: B018
