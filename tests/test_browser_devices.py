"""A second upload from another GPU, in a real browser (Debian's Chromium driven by Playwright against `streamlit
run`): an A100 Nsight Compute export, then a Radeon AI PRO R9700 rocprof export added to the uploader. The app does
not merge them: it asks (add, replace, compare), and "Compare the two" opens Compare with both files still in the
uploader. Screenshots go to tests/artifacts/ (git-ignored) for a person to look at.

Skipped where Chromium or ../shared/samples is missing (ROOFCORE_REQUIRE_BROWSER=1 makes a missing browser a
failure, as in tests/test_browser.py).
"""

from __future__ import annotations

import pytest
from browserkit import (
    ARGS,
    ARTIFACTS,
    CHROMIUM,
    ENTRY,
    TIMEOUT_MS,
    require_chromium,
    settle,
    shot,
    streamlit_server,
)
from roofhelpers import sample

pytestmark = [pytest.mark.browser, pytest.mark.samples]
require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

A100 = "ncu_details_a100_julia_set_full_rules_humanunits.csv"
R9700 = "rocprofv1_r9700_rdna4_llamacpp_results_multigpu_gpuid2.csv"


def test_a_second_upload_from_another_gpu_asks_then_compares():
    first, second = sample(A100), sample(R9700)
    with streamlit_server(ARTIFACTS / "streamlit-devices.log") as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(server.url + ENTRY)
        page.locator('[data-testid="stMain"] h1').first.wait_for()
        settle(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        files = sidebar.locator('input[type="file"]').first
        files.set_input_files(str(first))
        sidebar.get_by_text(f"{A100} · 6 kernels").wait_for()
        settle(page)
        shot(page, "devices-first-upload")
        files.set_input_files(str(second))  # a browser adds it beside the first
        question = sidebar.locator('[data-testid="stAlertContentWarning"]')
        sync_api.expect(question).to_contain_text(f"{R9700} was profiled on", timeout=TIMEOUT_MS)
        sync_api.expect(question).to_contain_text("Add it to this workload, replace the workload with it, or compare")
        settle(page)
        sync_api.expect(sidebar).to_contain_text(f"{A100} · 6 kernels")  # not merged while it asks
        for name in ("Add to this workload", "Replace"):
            sync_api.expect(sidebar.get_by_role("button", name=name)).to_be_visible()
        sidebar.get_by_role("link", name="Compare the two").scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        page.screenshot(path=str(ARTIFACTS / "devices-second-upload-asks.png"))  # the sidebar as scrolled
        sidebar.get_by_role("link", name="Compare the two").click()
        main = page.locator('[data-testid="stMain"]')
        main.locator("h1").filter(has_text="Compare").wait_for()
        sync_api.expect(main).to_contain_text(f"the new upload {R9700}", timeout=TIMEOUT_MS)
        settle(page)
        sync_api.expect(sidebar).to_contain_text(f"{A100} · 6 kernels")  # the sidebar's workload stays the first
        sync_api.expect(sidebar).to_contain_text(f"In the uploader but not analysed: {R9700}")
        assert sidebar.locator('[data-testid="stFileChip"]').count() == 2  # no file lost on the way
        shot(page, "devices-compare")
        browser.close()
