"""What each page shows and how it behaves with real-world inputs (issue 14), under Streamlit's AppTest: one count
in the sidebar and on the Overview, "Use <device>" replacing or asking, a partial chart that explains itself with
the profiler options, zero-FLOP copies judged by bandwidth, Compare with nothing matched and pairs made by hand,
the Planner's per-unit batch comparison and costs, and engine messages shown as the text they are.

Our own small inputs (kernel names and numbers of our own); the real exports are walked by
tests/test_samples_app.py and tests/test_browser_samples.py.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_app import DATA, charts, goto, metrics, said, start, upload

import roofcore
from app.markdown import escape_message, unescape_markdown
from app.workload import BUNDLED_EXAMPLE, BUNDLED_NAME
from roofcore import plan, views
from roofcore.errors import InputError
from roofcore.ingest import ncu
from roofcore.units import fmt_cost, fmt_money, fmt_time
from roofcore.whatif import batch_units

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

REPEATS = b"name,count,flops,bytes,time_us\nk_copy,1,1e9,1e8,50\nk_copy,1,1e9,1e8,52\nk_copy,1,1e9,1e8,48\nk_gemm,1,1e12,1e9,800\n"
ONE = b"name,flops,bytes,time_us\nk_only,1e9,1e8,50\n"
#: a host copy (0 FLOP, PCIe bytes) next to a GEMM
MOVES = b"name,count,flops,bytes_hbm,bytes_pcie,time_us\nk_h2d,4,0,0,4e8,20000\nk_gemm,1,2e12,1e9,,900\n"


def captions(at: AppTest, sidebar: bool = False) -> str:
    return unescape_markdown(" ".join(c.value for c in (at.sidebar.caption if sidebar else at.caption)))


# ------------------------------------------------------------------------------------------ first minute


def test_the_example_is_marked_and_the_app_says_what_it_is():
    at = start()
    main = " ".join(m.value for m in at.markdown)
    assert "**Roofline** · how close each GPU kernel" in main
    assert "Upload a profile" in main and "Nsight Compute CSV" in main and "rocprof-compute" in main
    assert "bundled example" in main and "Example" in captions(at, sidebar=True)
    upload(at, ("mine.csv", ONE))
    assert "Upload a profile" not in " ".join(m.value for m in at.markdown)  # a real upload: no call to action
    assert "Example" not in captions(at, sidebar=True)


@pytest.mark.parametrize("combine", [True, False])
def test_sidebar_and_overview_say_the_same_count(combine):
    at = upload(start(), ("repeats.csv", REPEATS))
    at.sidebar.toggle(key="combine").set_value(combine).run()
    assert "**repeats.csv** · 2 kernels (4 launches) · inventory-csv" in captions(at, sidebar=True)
    assert "· 2 kernels (4 launches) from repeats.csv" in captions(at)


def test_one_kernel_is_singular():
    at = upload(start(), ("one.csv", ONE))
    assert "· 1 kernel ·" in captions(at, sidebar=True) and "(1 launch" not in captions(at, sidebar=True)
    assert "· 1 kernel from one.csv · every kernel has a measured time" in captions(at)


def rocprof(at: AppTest) -> AppTest:
    data = DATA / "rocprof"
    return upload(at, ("pmc_perf.csv", (data / "pmc_perf_mi200.csv").read_bytes()),
                  ("sysinfo.csv", (data / "sysinfo_mi200.csv").read_bytes()))


def test_the_detected_device_replaces_the_untouched_default_and_the_default_comes_back():
    at = rocprof(start())
    assert at.sidebar.multiselect(key="hw_ids").value == ["mi250x-gcd"]  # taken from the file, not a second device
    assert not [b for b in at.sidebar.button if b.key in ("use_suggested", "add_suggested")]  # nothing left to ask
    at.sidebar.button(key="device_undo").click().run()
    assert at.sidebar.multiselect(key="hw_ids").value == ["h100-sxm"]
    assert not at.sidebar.info  # the notice went with the device
    button = at.sidebar.button(key="use_suggested")
    assert button.label == "Use mi250x-gcd"  # offered again, not imposed
    button.click().run()
    assert at.sidebar.multiselect(key="hw_ids").value == ["mi250x-gcd"]


@pytest.mark.parametrize(("key", "expected"), [("use_suggested", ["mi250x-gcd"]),
                                                ("add_suggested", ["h100-sxm", "mi300x", "mi250x-gcd"])])
def test_with_devices_chosen_by_hand_it_asks(key, expected):
    at = start()
    at.sidebar.multiselect(key="hw_ids").set_value(["h100-sxm", "mi300x"]).run()
    rocprof(at)
    assert {b.key: b.label for b in at.sidebar.button if b.key in ("use_suggested", "add_suggested")} == {
        "use_suggested": "Use mi250x-gcd instead", "add_suggested": "Add mi250x-gcd"}
    at.sidebar.button(key=key).click().run()
    assert at.sidebar.multiselect(key="hw_ids").value == expected


# ------------------------------------------------------------------------------------------ roofline page


def test_a_time_only_chart_says_what_is_missing_and_how_to_collect_it():
    raw = (DATA / "nsys" / "kern_sum.csv").read_bytes()
    at = goto(upload(start(), ("kern_sum.csv", raw)), "pages/roofline.py")
    notes = said(at.warning) + said(at.info)
    assert any(n.startswith("No kernel of 3 can be drawn: 3 have no roofline (FLOPs unknown for 3, off-chip bytes "
                            "unknown for 3: unknown, not zero). To collect what is missing:") for n in notes), notes
    commands = [c.value for c in at.code]
    metrics = ncu.PROFILE_COMMAND.split(" --metrics ", 1)[1].split()[0]
    assert any(f"METRICS={metrics}\n" in c for c in commands), commands  # the exact options, whole (targeted)
    assert at.get("vega_lite_chart")  # the roofs are still drawn


def test_the_targeted_commands_are_a_script_to_copy():
    """A timeline alone: the import notes and the Roofline page give the targeted commands as one code block, line
    by line, apart from the sentence that says what they are for."""
    raw = (DATA / "nsys" / "kern_sum.csv").read_bytes()
    at = goto(upload(start(), ("kern_sum.csv", raw)), "pages/roofline.py")
    scripts = [c for c in at.code if c.value.startswith("APP=./app  # your program and its arguments\nMETRICS=")]
    assert len(scripts) == 2 and all(c.language == "bash" for c in scripts)  # the import notes, the chart area
    lines = scripts[0].value.split("\n")
    assert lines[2].startswith("# 1) ") and lines[3].startswith("ncu --kernel-name-base demangled --kernel-name regex:")
    assert sum(line.startswith("METRICS=") for line in lines) == 1 and lines[-1].startswith("for i in ")
    intro = [c for c in said(at.caption) if c.startswith("No counters for 3 of 3 kernels")]
    assert intro and intro[0].endswith("together with this timeline:") and "\n" not in intro[0]
    # each in a popover, drawn when opened: a page's first code block cost the browser ~1 s before the chart
    assert _code_blocks_outside_popovers(at._tree) == 0 and len(at.code) >= 2


def _code_blocks_outside_popovers(node, inside: bool = False) -> int:
    kids = node.children.values() if isinstance(getattr(node, "children", None), dict) else ()
    return sum((type(k).__name__ == "Code" and not inside)
               + _code_blocks_outside_popovers(k, inside or getattr(k, "type", "") == "popover") for k in kids)


def test_a_partial_chart_counts_what_it_draws():
    part = b"name,flops,bytes,time_us\nk_known,1e9,1e8,50\nk_noflops,,1e8,40\nk_nobytes,1e9,,30\n"
    at = goto(upload(start(), ("part.csv", part)), "pages/roofline.py")
    notes = said(at.info)
    assert ("Drawn: 1 of 3 kernels. Not drawn: 2 have no roofline (FLOPs unknown for 1, off-chip bytes unknown for 1: "
            "unknown, not zero). To collect what is missing:") in notes, notes
    assert [c.value for c in at.code] == ["Give every row flops and bytes columns (or an op with its shapes)."]


def test_zero_flop_copies_are_judged_by_bandwidth():
    at = goto(upload(start(), ("moves.csv", MOVES)), "pages/roofline.py")
    notes = " ".join(said(at.info))
    assert "Drawn: 1 of 2 kernels. Not drawn: 1 moves data without arithmetic (0 FLOP)" in notes
    table = next(d.value for d in at.dataframe if "Achieved (GB/s)" in d.value.columns)
    row = table.set_index("Kernel").loc["k_h2d"]
    pcie = roofcore.load_catalogs().get("h100-sxm").link_map["pcie"]
    assert row["Moves over"] == f"{pcie.display} (link)"
    assert row["Achieved (GB/s)"] == pytest.approx(4e8 / 0.02 * 1e-9)  # 20 GB/s
    assert row["Roof (GB/s)"] == pytest.approx(pcie.bandwidth * 1e-9)
    assert row["Of roof (%)"] == pytest.approx(4e8 / 0.02 / pcie.bandwidth * 100)
    assert "k_gemm" not in set(table["Kernel"])
    goto(at, "pages/kernels.py")  # the copy in detail: bandwidths, not 0 FLOP/s
    choices = at.selectbox(key="k_detail").options
    at.selectbox(key="k_detail").set_value(next(i for i, c in enumerate(choices) if c.startswith("k_h2d"))).run()
    shown = metrics(at)
    assert shown["Roof"] == ["63 GB/s"] and shown["Achieved"] == ["20 GB/s"]


def test_the_recommendations_chart_names_the_roof_its_kernels_hit():
    at = goto(start(), "pages/recommendations.py")
    spec = charts(at)[0]
    title = spec["title"]
    assert isinstance(title, dict) and title["subtitle"].startswith("Ringed kernels bound by ")


def test_a_micro_kernel_speedup_says_it_is_not_a_promise():
    tiny = b"name,count,flops,bytes,time_us\nk_small_a,1,1.5e5,5e2,7.5\nk_small_b,1,16,1e3,4.2\n"
    at = upload(start(), ("tiny.csv", tiny))
    notes = " ".join(said(at.info))
    assert "2 kernels of a few microseconds per launch (11.7 µs in all) hold" in notes and "not a promise" in notes
    goto(at, "pages/recommendations.py")
    assert "not a promise" in " ".join(said(at.info))


# ------------------------------------------------------------------------------------------ messages


def test_a_message_with_dollars_is_shown_verbatim():
    """The Hardware form's error names the id it refused: ``$my$gpu`` must not become LaTeX (nor ``_`` italics)."""
    at = goto(start(), "pages/hardware.py")
    at.text_input(key="f_id").set_value("$my$_gpu_")
    at.text_input(key="f_vendor").set_value("Me")
    at.number_input(key="f_peak0").set_value(500.0)
    at.number_input(key="f_hbm").set_value(4.0)
    at.button(key="f_submit").click().run()
    assert len(at.error) == 1
    body = at.error[0].value
    assert "'$my$_gpu_'" in said(at.error)[0]  # the text, exactly
    assert "\\$my\\$\\_gpu\\_" in body and "$my$" not in body.replace("\\$", "")  # every $ and _ escaped


@pytest.mark.parametrize("text", ["price $3.50 and $x^2$", "a *b* _c_ `d` ns::a::b :x:", "- one\n1. two\n# three",
                                  "<b>x</b> [l](http://e.vil) ~~s~~ |t| &amp; \\\\ done"])
def test_escape_message_round_trips(text):
    shown = escape_message(text)
    assert unescape_markdown(shown) == text
    assert "$" not in shown.replace("\\$", "") and "`" not in shown.replace("\\`", "")


def test_escape_message_leaves_inner_underscores():
    assert escape_message("ERR_NVGPUCTRPERM dram__bytes.sum") == "ERR_NVGPUCTRPERM dram__bytes.sum"
    assert escape_message("_x_ a_ ns::k") == "\\_x\\_ a\\_ ns\\:\\:k"


# ------------------------------------------------------------------------------------------ compare

BEFORE = b"name,flops,bytes,time_ms\nk_naive_gemm,8e12,2e10,40.0\nk_softmax_v1,2e10,1.6e10,8.0\n"
AFTER = b"name,flops,bytes,time_ms\nk_tiled_gemm,8e12,2e9,10.0\nk_softmax_v2,2e10,8e9,5.0\n"


def compare_page(before: bytes | list, after: bytes) -> AppTest:
    at = goto(start(), "pages/compare.py")
    files = before if isinstance(before, list) else [("before.csv", before, "text/csv")]
    at.file_uploader(key="cmp_before").set_value(files).run()
    at.file_uploader(key="cmp_after").set_value([("after.csv", after, "text/csv")]).run()
    assert not at.exception and not at.error, said(at.error)
    return at


def test_compare_with_nothing_matched_shows_no_speedup_then_pairs_by_hand():
    at = compare_page(BEFORE, AFTER)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Speedup"] == "unknown" and shown["Matched kernels"] == "0"
    assert any(w.startswith("No kernel of the two runs has the same name") for w in said(at.warning))
    assert not at.get("vega_lite_chart")
    only = [d.value for d in at.dataframe if "Share" in d.value.columns]
    assert [list(f["Kernel"]) for f in only] == [["k_naive_gemm", "k_softmax_v1"], ["k_tiled_gemm", "k_softmax_v2"]]
    at.selectbox(key="cmp_pair_old").set_value("k_naive_gemm")
    at.selectbox(key="cmp_pair_new").set_value("k_tiled_gemm")
    at.button(key="cmp_pair_submit").click().run()
    shown = {m.label: m.value for m in at.metric}
    assert shown["Matched kernels"] == "1 (1 by hand)" and shown["Speedup"] == f"{48 / 15:.2f}×"
    table = next(d.value for d in at.dataframe if "Bound before" in d.value.columns)
    assert list(table["Kernel"]) == ["k_naive_gemm → k_tiled_gemm"] and list(table["Speedup"]) == ["4.00×"]
    assert "The matched kernels hold 83% of the time before and 67% after" in captions(at)
    assert at.get("vega_lite_chart")
    at.button(key="cmp_pairs_clear").click().run()
    assert {m.label: m.value for m in at.metric}["Matched kernels"] == "0"


def test_compare_reads_several_files_per_side():
    more = b"name,flops,bytes,time_ms\nk_tiled_gemm,8e12,2e9,12.0\n"
    at = compare_page([("a.csv", BEFORE, "text/csv"), ("b.csv", more, "text/csv")], AFTER)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Before"] == fmt_time(0.060) and shown["Matched kernels"] == "1"


def test_engine_pairs_are_checked():
    hw = roofcore.load_catalogs().get("h100-sxm")
    old, new = roofcore.read(BEFORE, name="b.csv"), roofcore.read(AFTER, name="a.csv")
    c = plan.compare(old, new, hw)
    assert c.totals["speedup"] is None and c.totals["matched"] == 0 and "No kernel matched" in c.notes[0]
    c = plan.compare(old, new, hw, pairs={"k_naive_gemm": "k_tiled_gemm"})
    assert c.totals["matched"] == c.totals["paired"] == 1 and c.only_old == ("k_softmax_v1",)
    assert c.totals["matched_share_old"] == pytest.approx(40 / 48) and c.totals["speedup"] == pytest.approx(48 / 15)
    assert list(c.table["name_new"]) == ["k_tiled_gemm"]
    with pytest.raises(InputError, match="a kernel of the new run"):
        plan.compare(old, new, hw, pairs=[("k_naive_gemm", "k_nope")])
    with pytest.raises(InputError, match="each kernel in one pair at most"):
        plan.compare(old, new, hw, pairs=[("k_naive_gemm", "k_tiled_gemm"), ("k_softmax_v1", "k_tiled_gemm")])
    both = roofcore.read(AFTER.replace(b"k_softmax_v2", b"k_softmax_v1"), name="a2.csv")
    with pytest.raises(InputError, match="matches nothing by name"):
        plan.compare(old, both, hw, pairs=[("k_softmax_v1", "k_tiled_gemm")])


# ------------------------------------------------------------------------------------------ planner


def test_a_batch_step_is_compared_per_unit_of_work():
    at = goto(start(), "pages/planner.py")
    at.number_input(key="wi_batch").set_value(8.0).run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "Variant Σ t_roof" in d.value.columns)
    assert "Speedup per unit" in table.columns and "Speedup" not in table.columns
    cat = roofcore.load_catalogs()
    base = views.combine_launches(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME))
    tb = plan.evaluate(base, [cat.get("h100-sxm")]).summary("h100-sxm")["t_roof_s"]
    tv = plan.evaluate(plan.scale_batch(base, 8.0), [cat.get("h100-sxm")]).summary("h100-sxm")["t_roof_s"]
    assert tv > tb  # a run of the variant takes longer ...
    assert table["Speedup per unit"].iloc[0] == f"{tb * 8 / tv:.2f}×"  # ... but each sample is faster
    assert table["Variant per unit"].iloc[0] == fmt_time(tv / 8)
    assert any("per sample or per token" in c.value for c in at.caption)


def test_batch_units_counts_whole_workload_batch_steps_only():
    assert batch_units([{"batch": 8.0}, {"precision": {"dtype": "fp8"}}, {"batch": {"factor": 2}}]) == 16.0
    assert batch_units([{"batch": {"factor": 4, "kernels": ["k"]}}]) == 1.0


@pytest.mark.parametrize(("value", "runs", "text"), [
    (0.00356, 1, "< $0.01 per run"), (0.00356, 1000, "$3.56 per 1,000 runs"), (3.557e-06, None, "$3.56 per million runs"),
    (12.345, 1, "$12.35 per run"), (1234.5, 1, "$1,234 per run"), (0.0999, 1, "$0.10 per run"), (0.0, 1, "$0 per run"),
    (None, 1, "–")])
def test_costs_print_in_units_a_reader_quotes(value, runs, text):
    assert fmt_cost(value, runs) == text
    assert "e-" not in fmt_money(value)


def test_projection_costs_per_run_and_per_readable_runs():
    at = goto(start(), "pages/planner.py")
    at.number_input(key="plan_price_h100-sxm").set_value(3.0).run()
    table = next(d.value for d in at.dataframe if "Cross-vendor" in d.value.columns)
    cat = roofcore.load_catalogs()
    cost = plan.project(roofcore.read(BUNDLED_EXAMPLE, name=BUNDLED_NAME), None, [cat.get("h100-sxm")],
                        price_per_hour={"h100-sxm": 3.0}).totals[0].cost_per_run
    assert cost == pytest.approx(3.0 * 0.04046 / 3600, rel=1e-3)  # the example's 40.5 ms at $3/hour: $0.000034
    assert table["Cost per run"].iloc[0] == fmt_money(cost) == "< $0.01"
    assert table["Cost at scale"].iloc[0] == f"${cost * 1e6:.2f} per million runs" == "$33.72 per million runs"


def test_solver_shapes_print_without_thousands_separators():
    at = goto(start(), "pages/planner.py")
    text = " ".join(c.value for c in at.caption)
    assert "X[B, 8192] @ W[8192, 8192]" in text and "8,192" not in text


# ------------------------------------------------------------------------------------------ chart labels


def test_no_roof_label_strikes_through_a_line():
    """Three devices overlaid with every ceiling: each placed label's box is clear of every roof and ceiling line
    (other than its own); those with no such room are said elsewhere (the caption, a key), not drawn across."""
    from roofcore import charts as rc

    cat = roofcore.load_catalogs()
    w = views.combine_launches(roofcore.read(BUNDLED_EXAMPLE))
    a = roofcore.analyze(w, [cat.get(h) for h in ("h100-sxm", "mi300x", "b200")])
    fig = rc.roofline(a, all_ceilings=True)
    spec = fig.to_dict()
    roofs = [r for lay in spec["layer"] if lay.get("description") == "roofs" for r in spec["datasets"][lay["data"]["name"]]]
    placer = rc.Placer(fig.x_domain, fig.y_domain, 760, 440)
    for role in ("roof_labels", "roof_labels_below", "ceiling_labels", "ceiling_labels_below"):
        for lay in (x for x in spec["layer"] if x.get("description") == role):
            for r in spec["datasets"][lay["data"]["name"]]:
                (x,), (y,) = placer.xy([r["x"]], [r["y"]])
                own = [s for s in roofs if s["device_id"] == r["device_id"] and r["text"].startswith(s["label"])]
                others = [s for s in roofs if s not in own and not s.get("achievable")]
                for s in others:  # sample each other line and check it misses the label's box
                    (x0, x1), (y0, y1) = placer.xy([s["x"], s["x2"]], [s["y"], s["y2"]])
                    for t in [i / 200 for i in range(201)]:
                        px, py = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
                        if role.startswith("ceiling"):
                            below = role.endswith("below")
                            lo, hi = (y - 17, y - 3) if below else (y + 3, y + 17)
                            inside = x + 2 <= px <= x + 2 + len(r["text"]) * 6.7 and lo < py < hi
                        else:
                            import math

                            th = math.radians(-r["angle"])
                            s_, n_ = (px - x) * math.cos(th) + (py - y) * math.sin(th), \
                                -(px - x) * math.sin(th) + (py - y) * math.cos(th)
                            lo, hi = (-17, -3) if role.endswith("below") else (3, 17)
                            inside = 1 < s_ < len(r["text"]) * 6.7 - 1 and lo + 1 < n_ < hi - 1
                        assert not inside, (r["text"], s["label"], s["device_id"])
