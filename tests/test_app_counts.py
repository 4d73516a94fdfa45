"""One count of kernels on every page (issue 23, point 7): the sidebar's "5 kernels (8 launches)", the sentences of
every page and the Kernels table agree, whether "Combine repeated launches" is on or off (rows are then launches),
and runtime or queue entries (``<barrier packet>``, ``hipMemcpyAsync``) count nowhere. And the Compare table says
"unknown" for what no one knows, never None or NaN.

Our own inputs (kernel names and numbers of our own); the t4 AMP trace of ../shared/samples where present.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from roofhelpers import sample
from test_app import goto, start, upload

import roofcore
from app.markdown import unescape_markdown
from roofcore import views

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

DATA = Path(__file__).resolve().parent / "data"
#: 5 kernels (8 launches): k_gemm ×3 launches, k_add in two groups (two kernels), k_mystery ×2 (FLOPs unknown), a
#: copy (0 FLOP); a barrier packet and a host API row, which are not kernels
INVENTORY = b"""name,count,flops,bytes,time_us,group
k_gemm,1,2e12,1e9,900,mlp
k_gemm,1,2e12,1e9,905,mlp
k_gemm,1,2e12,1e9,910,mlp
k_add,1,1e9,3e9,120,mlp
k_add,1,1e9,3e9,118,attn
k_mystery,1,,2e8,300,attn
k_mystery,1,,2e8,310,attn
k_copy,1,0,4e8,200,
<barrier packet>,1,,,50,
hipMemcpyAsync,1,,,20,
"""
PAGES = ["pages/overview.py", "pages/roofline.py", "pages/kernels.py", "pages/recommendations.py"]
#: "3 kernels", "3 kernel(s)", "1 kernel" — a count of kernels in a sentence (not "per kernel", "kernel names")
KERNELS = re.compile(r"(?<![\w.,])(\d[\d,]*) (?:of (\d[\d,]*) )?kernel(?:s|\(s\))?\b(?! name)")
LAUNCHES = re.compile(r"(\d[\d,]*) of (\d[\d,]*) launches")


def texts(at) -> list[str]:
    """Every sentence the page shows (main area and sidebar), Markdown escapes undone."""
    out = []
    for kind in ("caption", "markdown", "info", "warning", "error", "success", "subheader"):
        out += [unescape_markdown(str(e.value)) for e in getattr(at, kind)]
        out += [unescape_markdown(str(e.value)) for e in getattr(at.sidebar, kind)]
    out += [str(m.proto.help) for m in at.metric] + [str(m.value) for m in at.metric]
    return out


def number(text: str) -> int:
    return int(text.replace(",", ""))


def check_page(at, page: str, kernels: int, launches: int) -> list[str]:
    """Each count of kernels a page says: never more than the workload's, every "of N" the workload's; every
    "of N launches" its launches."""
    bad = []
    for text in texts(at):
        for m in KERNELS.finditer(text):
            part, whole = number(m.group(1)), m.group(2)
            if part > kernels or (whole is not None and number(whole) != kernels):
                bad.append(f"{page}: {m.group(0)!r} in {text[:160]!r}")
        for m in LAUNCHES.finditer(text):
            if number(m.group(2)) != launches:
                bad.append(f"{page}: {m.group(0)!r} in {text[:160]!r}")
    return bad


def walk(at, kernels: int, launches: int) -> list[str]:
    said = f"{kernels:,} kernel{'' if kernels == 1 else 's'}" + (f" ({launches:,} launches)" if launches != kernels
                                                                else "")
    sidebar = " ".join(unescape_markdown(c.value) for c in at.sidebar.caption)
    assert f" · {said} · " in sidebar, sidebar
    bad = []
    for page in PAGES:
        goto(at, page)
        bad += check_page(at, page, kernels, launches)
        if page == "pages/kernels.py":  # the table: its rows are these kernels (per device), launches summed
            t = next(d.value for d in at.dataframe if "Launches" in d.value.columns and "Bound" in d.value.columns)
            one = t[t["Device"] == t["Device"].iloc[0]]
            assert len(one[["Kernel", "Group", "Precision"]].drop_duplicates()) == kernels
            assert int(one["Launches"].sum()) == launches
            assert any(c.value.startswith(f"{kernels:,} of {said}") for c in at.caption), [c.value for c in at.caption]
    return bad


@pytest.mark.parametrize("combine", [True, False])
def test_every_page_counts_the_kernels_as_the_sidebar(combine):
    at = upload(start(), ("kernels.csv", INVENTORY))
    at.sidebar.toggle(key="combine").set_value(combine).run()
    assert walk(at, 5, 8) == []
    goto(at, "pages/overview.py")
    assert any("Roofline known for " in t and "(4 of 5 kernels)" in t for t in texts(at))  # k_mystery is unknown
    goto(at, "pages/recommendations.py")
    assert any(t.endswith(". Collect FLOPs and bytes for 1 kernel**") for t in texts(at))
    launches = "" if combine else "2 launches; "  # rows are launches: the sentence says them too
    assert any(t.startswith(f"1 kernel ({launches}610 µs") for t in texts(at))
    goto(at, "pages/planner.py")
    assert any("base: the 5 kernels (8 launches) of kernels.csv" in t for t in texts(at))


def test_runtime_entries_count_in_no_sentence():
    """A ROCm trace with barrier and marker packets among its GPU events: the import's note counts the kernels the
    sidebar counts, not the packets."""
    data = (DATA / "pseudo" / "rocm_gpu_only.pt.trace.json").read_bytes()
    w = roofcore.read(data, name="rocm.pt.trace.json")
    kernels, launches = views.kernel_counts(w)
    at = upload(start(), ("rocm.pt.trace.json", data))
    assert walk(at, kernels, launches) == []
    said = f"{views.count_of(w, w.frame['flops'].isna().to_numpy())} have unknown FLOPs"
    assert said == "2 of 3 kernels have unknown FLOPs" and any(said in t for t in texts(at))


@pytest.mark.samples
def test_a_real_trace_counts_alike_on_every_page():
    data = sample("pytorch_kineto_t4_amp_record_shapes.json").read_bytes()
    at = upload(start(), ("t4.json", data))
    at.sidebar.toggle(key="combine").set_value(False).run()  # 174 rows, one per launch
    assert walk(at, 38, 174) == []


def test_kernel_counts_are_the_same_combined_or_not():
    w = roofcore.read(INVENTORY, name="kernels.csv")
    combined = views.combine_launches(w)
    assert views.kernel_counts(w) == views.kernel_counts(combined) == (5, 8)
    assert views.count_text(w) == views.count_text(combined) == "5 kernels (8 launches)"
    unknown = w.frame["flops"].isna().to_numpy()
    assert views.count_of(w, unknown) == views.count_of(combined, combined.frame["flops"].isna().to_numpy()) \
        == "1 of 5 kernels"


# ------------------------------------------------------------------------------------------ Compare

BEFORE = b"name,count,flops,bytes,time_us\nk_a,1,1e9,1e8,50\nk_b,1,,1e8,30\nk_c,1,1e9,,20\nk_gone,1,,,\n"
AFTER = b"name,count,flops,bytes,time_us\nk_a,1,1e9,1e8,40\nk_b,1,,1e8,25\nk_c,1,1e9,,\nk_new,1,,,\n"


def missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) in ("None", "nan", "NaN",
                                                                                                  "–", "")


def test_compare_shows_unknown_never_none():
    at = goto(start(), "pages/compare.py")
    at.file_uploader(key="cmp_before").set_value(("before.csv", BEFORE, "text/csv")).run()
    at.file_uploader(key="cmp_after").set_value(("after.csv", AFTER, "text/csv")).run()
    assert not at.exception and not at.error
    frames = [d.value for d in at.dataframe]
    table = next(f for f in frames if "Bound before" in f.columns)
    rows = {k: dict(zip(table.columns, r, strict=True)) for k, r in zip(table["Kernel"], table.to_numpy(), strict=True)}
    assert rows["k_b"]["Bound before"] == rows["k_b"]["Bound after"] == "unknown"  # FLOPs unknown: no bound
    assert rows["k_c"]["After"] == rows["k_c"]["Speedup"] == "unknown"  # no time, no roof after
    assert rows["k_a"]["Speedup"] == "1.25×"
    for f in frames:
        cells = f.to_numpy(dtype=object).ravel()
        assert not [c for c in cells if missing(c)], f
    only = [f for f in frames if "Share" in f.columns]
    assert [list(f["Time"]) for f in only] == [["unknown"], ["unknown"]]
    assert not any("None" in t for t in texts(at))
    shown = {m.label: m.value for m in at.metric}
    assert not any(missing(v) for v in shown.values()), shown
    assert np.isfinite(float(shown["Speedup"].rstrip("×")))
