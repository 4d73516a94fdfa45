"""The main flows in a real browser: Debian's Chromium driven by Playwright against `streamlit run`.

Screenshots of every page go to tests/artifacts/ (git-ignored) for a person to look at. Skipped where
/usr/bin/chromium is missing, unless ROOFCORE_REQUIRE_BROWSER=1 (CI), where that is a failure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browserkit import (
    ARGS,
    ARTIFACTS,
    CHROMIUM,
    ROOT,
    TIMEOUT_MS,
    open_page,
    require_chromium,
    roofline_chart,
    settle,
    shot,
    streamlit_server,
)

pytestmark = pytest.mark.browser
require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server():
    with streamlit_server(ARTIFACTS / "streamlit.log") as s:
        yield s.url


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        # the server's first request is a deep link: the page must still come up inside the app (sidebar and all)
        pg.goto(f"{server}/roofline")
        yield pg
        context.close()
        browser.close()


def chart_caption(page):
    """The caption under the roofline chart (the main area's last caption)."""
    return page.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"]').last


def test_1_loads_with_the_bundled_example_and_a_roofline(page):
    page.locator('[data-testid="stMain"] h1').filter(has_text="Roofline").wait_for()
    settle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sync_api.expect(sidebar).to_contain_text("transformer_block.yaml · 12 kernels")
    sync_api.expect(sidebar.locator('[data-testid="stMultiSelect"]')).to_contain_text("NVIDIA · H100 SXM5")
    chart = roofline_chart(page)
    assert chart.bounding_box()["width"] > 700
    sync_api.expect(chart_caption(page)).to_contain_text("placed on their roof")
    shot(page, "roofline")
    open_page(page, "Overview")
    main = page.locator('[data-testid="stMain"]')
    sync_api.expect(main).to_contain_text("NVIDIA · H100 SXM5 80GB (h100-sxm)")
    sync_api.expect(main).to_contain_text("40.5 ms")  # the engine's roofline time for the example
    shot(page, "overview")
    open_page(page, "Roofline")


def test_2_upload_an_inventory_and_the_chart_follows(page, tmp_path):
    csv = tmp_path / "measured.csv"
    csv.write_text("name,count,flops,bytes,time_ms,precision,group\n"
                   "gemm_big,10,8.8e12,2.8e9,12.0,bf16,mlp\n"
                   "softmax,4,2.1e10,1.7e10,6.5,bf16,attention\n"
                   "layernorm,2,2.7e9,1.6e9,0.9,bf16,norm\n")
    before = roofline_chart(page).screenshot()
    page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(csv))
    page.locator('[data-testid="stSidebar"]').get_by_text("measured.csv · 3 kernels").wait_for()
    # every kernel now has a measured time: the caption stops saying they sit on their roof
    sync_api.expect(chart_caption(page)).not_to_contain_text("placed on their roof", timeout=TIMEOUT_MS)
    settle(page)
    assert roofline_chart(page).screenshot() != before
    shot(page, "roofline-uploaded")
    open_page(page, "Overview")
    sync_api.expect(page.locator('[data-testid="stMain"]')).to_contain_text("Measured time")
    shot(page, "overview-uploaded")


def test_3_switch_device_in_the_sidebar(page):
    box = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]')
    box.locator("input").click()
    page.keyboard.type("mi300x")
    page.get_by_role("option", name="AMD · Instinct MI300X (mi300x)").click()
    page.keyboard.press("Escape")
    page.locator('[data-testid="stMain"]').get_by_text("AMD · Instinct MI300X (mi300x)").wait_for()
    settle(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "NVIDIA · H100 SXM5 80GB (h100-sxm)" in main and "AMD · Instinct MI300X (mi300x)" in main
    shot(page, "overview-two-devices")
    open_page(page, "Roofline")
    roofline_chart(page)
    shot(page, "roofline-two-devices")


def test_4_download_the_chart(page):
    with page.expect_download() as svg:
        page.get_by_role("button", name="Download SVG").click()
    path = svg.value.path()
    assert svg.value.suggested_filename == "roofline-h100-sxm-mi300x.svg"
    assert Path(path).read_text(encoding="utf-8").startswith("<svg")
    with page.expect_download() as png:
        page.get_by_role("button", name="Download PNG").click()
    assert Path(png.value.path()).read_bytes().startswith(b"\x89PNG")


def test_5_kernels_recommendations_and_hardware_pages(page):
    open_page(page, "Kernels")
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    shot(page, "kernels")
    open_page(page, "Recommendations")
    sync_api.expect(page.locator('[data-testid="stMain"]')).to_contain_text("saves", timeout=TIMEOUT_MS)
    roofline_chart(page)
    settle(page)
    shot(page, "recommendations")
    open_page(page, "Hardware")
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    shot(page, "hardware")
    page.get_by_role("tab", name="Add a device").click()
    page.wait_for_timeout(500)
    shot(page, "hardware-add")


def test_6_profiler_export_with_its_companion(page, tmp_path):
    """A rocprof-compute pmc_perf.csv with its sysinfo.csv: format detected, device suggested and taken."""
    data = ROOT / "tests" / "data" / "rocprof"
    pmc, sysinfo = tmp_path / "pmc_perf.csv", tmp_path / "sysinfo.csv"
    pmc.write_bytes((data / "pmc_perf_mi200.csv").read_bytes())
    sysinfo.write_bytes((data / "sysinfo_mi200.csv").read_bytes())
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("button", name="Clear uploads").click()
    sidebar.get_by_text("transformer_block.yaml · 12 kernels").wait_for()
    sidebar.locator('input[type="file"]').first.set_input_files([str(pmc), str(sysinfo)])
    sync_api.expect(sidebar).to_contain_text("rocprof-compute", timeout=TIMEOUT_MS)
    sync_api.expect(sidebar).to_contain_text("closest catalog device")
    sidebar.get_by_role("button", name="Use mi250x-gcd").click()
    sync_api.expect(sidebar.locator('[data-testid="stMultiSelect"]')).to_contain_text("AMD · Instinct MI250X (one GCD)",
                                                                                     timeout=TIMEOUT_MS)
    open_page(page, "Roofline")
    roofline_chart(page)
    settle(page)
    shot(page, "roofline-rocprof")


def test_7_planner_and_compare(page, tmp_path):
    open_page(page, "Planner")
    main = page.locator('[data-testid="stMain"]')
    main.locator('[data-testid="stDataFrame"]').first.wait_for()
    sync_api.expect(main).to_contain_text("Across vendors")
    page.get_by_role("tab", name="Solvers").click()
    main.locator('[data-testid="stVegaLiteChart"]:visible').first.wait_for()
    settle(page)
    shot(page, "planner-solvers")
    page.get_by_role("tab", name="Project").click()
    settle(page)
    shot(page, "planner")
    before, after = tmp_path / "before.csv", tmp_path / "after.csv"
    before.write_text("name,count,flops,bytes,time_ms,precision\ngemm,1,8e12,2e9,20.0,bf16\n"
                      "softmax,1,2e10,1.6e10,8.0,bf16\n")
    after.write_text("name,count,flops,bytes,time_ms,precision\ngemm,1,8e12,2e9,10.0,bf16\n"
                     "softmax,1,2e10,8e9,5.0,bf16\n")
    open_page(page, "Compare")
    uploads = main.locator('input[type="file"]')
    uploads.nth(0).set_input_files(str(before))
    settle(page)
    uploads.nth(1).set_input_files(str(after))
    sync_api.expect(main).to_contain_text("1.87×", timeout=TIMEOUT_MS)  # 28 ms -> 15 ms
    roofline_chart(page)
    settle(page)
    shot(page, "compare")


def test_8_planner_price_inputs_tab_in_the_order_they_are_laid_out(page):
    """Six devices make two rows of price inputs: Tab walks the first row left to right, then the second (it went
    down each column before), and each input is labelled with its device."""
    open_page(page, "Planner")
    main = page.locator('[data-testid="stMain"]')
    picker = main.locator('[data-testid="stMultiSelect"]').filter(has_text="More target devices").locator("input")
    devices = ["mi300x", "tpu-v5e", "a100-80gb-sxm", "l4", "mi250x"]
    for hid in devices:
        picker.click()
        picker.fill(hid)
        page.get_by_role("option", name=f"({hid})").first.click()
        settle(page)
    main.get_by_text("Price per hour (cost per run)").click()
    prices = main.locator('[data-testid="stExpander"]').filter(has_text="Price per hour (cost per run)")
    inputs = prices.locator('[data-testid="stNumberInput"] input')  # the LLM tab's expanders have inputs too
    sync_api.expect(inputs).to_have_count(1 + len(devices))
    boxes = [inputs.nth(i).bounding_box() for i in range(inputs.count())]
    labels = [inputs.nth(i).get_attribute("aria-label") for i in range(inputs.count())]
    laid_out = [lab for _, lab in sorted(zip(boxes, labels, strict=True), key=lambda bl: (round(bl[0]["y"]), bl[0]["x"]))]
    settle(page)  # a rerun that lands now (the address is updated on each) would take the focus away again
    if not inputs.first.is_visible():  # a late rerun under load closed the expander: open it again, as a user would
        main.get_by_text("Price per hour (cost per run)").click()
        settle(page)
    inputs.first.click()
    page.wait_for_function("(document.activeElement?.getAttribute('aria-label') || '').endsWith('$/hour')",
                           timeout=TIMEOUT_MS)
    tabbed = []
    for _ in range(3 * len(labels)):  # a number input's step buttons may take a Tab stop of their own
        label = page.evaluate("document.activeElement.getAttribute('aria-label')")
        if label in labels and label not in tabbed:
            tabbed.append(label)
        page.keyboard.press("Tab")
    assert tabbed == laid_out
    assert len(laid_out) == 1 + len(devices)
    # first the sidebar's device (whichever the earlier steps left selected), then those added here, in order
    assert re.search(r"\([a-z0-9-]+\): \$/hour$", laid_out[0]), laid_out
    assert all(f"({hid}): $/hour" in label for hid, label in zip(devices, laid_out[1:], strict=True)), laid_out
    shot(page, "planner-prices")
