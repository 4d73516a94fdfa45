"""The app on every real export in ../shared/samples (AppTest): upload the files of an entry of
tests/samples_expected.yaml together through the sidebar, analyse them on the entry's device, then open every
page. No exception and no "Something went wrong" anywhere; a refused upload shows its message instead.

One AppTest session per entry, shared by its pages (about a second per entry). Skips where ../shared/samples is
absent (a fresh clone); CI has it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from roofhelpers import unformatted_numbers
from test_samples import ENTRIES, sample_paths, words_in

import roofcore
from roofcore import views
from roofcore.ingest import make_frame
from roofcore.models import Workload

APP = Path(__file__).resolve().parents[1] / "streamlit_app.py"
#: every page the app's navigation lists (read from streamlit_app.py, so a new page is visited too): path -> title
PAGES = dict(re.findall(r'st\.Page\("(pages/\w+\.py)", title="([^"]+)"', APP.read_text(encoding="utf-8")))
CRASH = "Something went wrong"


def test_every_page_is_visited():
    assert len(PAGES) >= 8 and "pages/kernels.py" in PAGES, PAGES


def problems(at: AppTest, where: str) -> list[str]:
    """Exceptions and unexpected-error messages on the page just run."""
    out = [f"{where}: exception {e.message[:300]}" for e in at.exception]
    out += [f"{where}: {e.value[:300]}" for e in at.error if CRASH in e.value]
    return out


def bound_problems(at: AppTest) -> list[str]:
    """The Kernels table shows no bound for a kernel whose FLOPs, or off-chip bytes (a copy aside), are unknown."""
    tables = [d.value for d in at.dataframe if "Bound" in getattr(d.value, "columns", ())]
    if not tables:
        return ["Kernels: no table with a Bound column"]
    t = tables[0]
    flops, off = t["FLOPs (G)"].astype(float), t["Off-chip bytes (MB)"].astype(float)
    unknown = flops.isna() | (off.isna() & (flops != 0))
    bad = t[unknown & (t["Bound"] != "unknown")]
    return [f"Kernels: {len(bad)} kernels without FLOPs or bytes shown as bound, e.g. {bad.iloc[0]['Kernel']!r} "
            f"{bad.iloc[0]['Bound']!r}"] if len(bad) else []


@pytest.mark.samples
@pytest.mark.usefixtures("navigation_only")
@pytest.mark.parametrize("key", list(ENTRIES))
def test_upload_then_every_page(key):
    e = ENTRIES[key]
    paths = sample_paths(key)
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.sidebar.file_uploader[0].set_value([(p.name, p.read_bytes(), "text/plain") for p in paths]).run()
    found = problems(at, "upload")
    assert not found, found
    errors = [re.sub(r"\\(.)", r"\1", el.value) for el in at.error]  # as shown: Markdown escapes removed
    if e["outcome"] == "refused":
        assert errors, "a refused upload shows no error"
        assert any(not words_in(err, e["message"]) for err in errors), (
            f"no message names {e['message']}: {errors}")
        return
    assert not errors, f"a working upload shows errors: {errors}"
    caption = " ".join(c.value for c in at.sidebar.caption)
    if "launches" in e:  # the sidebar counts distinct kernels and, when launches repeat, the launches
        n = e["launches"]
        assert f"({n:,} launches)" in caption or f"· {n:,} kernel" in caption, caption
    devices = [e["hardware"]]
    if e.get("measured"):  # the measured ceilings read with the profile are devices to choose
        devices.append(roofcore.read_many(paths).measured[0].id)
    at.sidebar.multiselect[0].set_value(devices).run()
    found = problems(at, "device")
    for page, title in PAGES.items():
        at.switch_page(page).run()
        found += problems(at, page)
        if not at.exception:
            assert at.title and at.title[0].value == title, f"{page} did not run: {[t.value for t in at.title]}"
            found += [f"{page}: {el.value[:300]}" for el in at.error if CRASH not in el.value]
            found += [f"{page}: {x}" for x in unformatted_numbers(at)]
        if page == "pages/kernels.py":
            found += bound_problems(at)
    assert not found, "\n".join(found)


def test_kernel_pages_take_a_workload_without_precisions():
    """A profile that names no precision has a float NaN column (not None): the Kernels page's table, its
    picker labels and the detail view treat it as absent (it crashed joining NaN into a label)."""
    n = 3
    cols = {"name": ["a", "b", "c"], "flops": [1e9, np.nan, 0.0], "bytes_hbm": [1e6, 1e6, np.nan],
            "time_s": [1e-3, 2e-3, np.nan], "precision": np.full(n, np.nan), "group": np.full(n, np.nan)}
    w = Workload(frame=make_frame(cols, n), name="no precisions", sources=("t",), formats=("test",))
    assert w.frame["precision"].isna().all()
    a = roofcore.analyze(w, [roofcore.load_catalogs().get("h100-sxm")])
    assert list(views.kernel_choices(a, "h100-sxm").values()) == ["b", "a", "c"]
    table = views.kernel_table(a, ["h100-sxm"])
    assert list(table["Precision"]) == ["", "", ""] and list(table["Bound"])[1:] == ["unknown", "unknown"]
    assert views.kernel_detail(a, 1)["h100-sxm"]["bound"] == "unknown"
