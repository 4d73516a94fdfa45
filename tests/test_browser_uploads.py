"""Uploads under a user who clicks around, in a real browser (Debian's Chromium driven by Playwright against
`streamlit run`; issue 23 points 1 and 2): a file in the uploader is either the workload on screen or reported with
its error, whatever the user clicks while it is read, after removing a file with × too; and a reload says that
uploads live in the browser session instead of silently showing the example.

One server and one page for the module. Skipped where /usr/bin/chromium is missing, unless
ROOFCORE_REQUIRE_BROWSER=1 (CI), where that is a failure.
"""

from __future__ import annotations

import json

import pytest
from browserkit import (
    ARGS,
    ARTIFACTS,
    CHROMIUM,
    ENTRY,
    ERROR_SELECTOR,
    TIMEOUT_MS,
    inventory_csv,
    require_chromium,
    settle,
    shot,
    streamlit_server,
)

pytestmark = pytest.mark.browser
require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

SIDEBAR = '[data-testid="stSidebar"]'
EXAMPLE = "transformer_block.yaml ·"
#: once the upload's run has started (the app's script state turns "running"), follow the navigation link to
#: ``name`` after ``delay`` ms: while the file is still being read, as a user who clicks on at once
CLICK_WHILE_RUNNING = """([name, delay]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const watch = new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') !== 'running') return;
    watch.disconnect();
    setTimeout(() => {
      const links = [...document.querySelectorAll('[data-testid="stSidebarNav"] a')];
      links.find(a => a.innerText.trim().endsWith(name)).click();
    }, delay);
  });
  watch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def kineto_trace(kernels: int) -> str:
    """A PyTorch profiler (Kineto) trace of ``kernels`` GEMM launches recorded with shapes: an op, its launch and
    its kernel each (about 600 bytes a launch, so 3,600 launches make a 2 MB file that takes a second to read)."""
    events = [{"name": "process_name", "ph": "M", "ts": 0, "pid": 1, "tid": 0, "args": {"name": "python3"}}]
    for i in range(kernels):
        ext, corr, ts, m = 10 + i, 100_000 + i, 1000.0 + 30 * i, 64 * (1 + i % 8)
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 20.0,
             "args": {"External id": ext, "Input Dims": [[m, 1024], [1024, 1024]],
                      "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
             "dur": 3.0, "args": {"External id": ext, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": f"sm90_gemm_bf16_{i % 40}", "pid": 0, "tid": 7, "ts": ts + 5,
             "dur": 8.0, "args": {"External id": ext, "device": 0, "stream": 7, "correlation": corr,
                                  "grid": [128, 1, 1], "block": [256, 1, 1]}},
        ]
    return json.dumps({"schemaVersion": 1, "record_shapes": 1, "traceEvents": events,
                       "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9,
                                             "computeMinor": 0, "numSms": 132}]})


@pytest.fixture(scope="module")
def page():
    with streamlit_server(ARTIFACTS / "streamlit-uploads.log") as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.goto(server.url + ENTRY)
        pg.locator('[data-testid="stMain"] h1').first.wait_for()
        settle(pg)
        yield pg
        context.close()
        browser.close()


def in_uploader(page, name: str) -> None:
    """The uploader holds this one file (a chip shortens a long name: its title is the whole name)."""
    chips = page.locator(SIDEBAR).locator('[data-testid="stFileChipName"]')
    sync_api.expect(chips).to_have_count(1)
    sync_api.expect(chips).to_have_attribute("title", name)


def example_on_screen(page) -> None:
    """Start from the bundled example with an empty uploader (whatever a test before left)."""
    sidebar = page.locator(SIDEBAR)
    clear = sidebar.get_by_role("button", name="Clear uploads")
    if clear.is_enabled():
        clear.click()
    sync_api.expect(sidebar).to_contain_text(EXAMPLE)
    settle(page)


def test_an_upload_survives_a_page_click_while_it_is_read(page, tmp_path):
    """The page is followed at once, while the 2 MB trace is being read: before, a second run started by the click
    found the upload marked as read and kept the example (in 6 of 6 tries), with the file in the uploader."""
    example_on_screen(page)
    trace = tmp_path / "clicked_away.pt.trace.json"
    trace.write_text(kineto_trace(3600))
    assert 1.8e6 < trace.stat().st_size < 2.6e6
    page.evaluate(CLICK_WHILE_RUNNING, ["Kernels", 100])
    sidebar = page.locator(SIDEBAR)
    sidebar.locator('input[type="file"]').first.set_input_files(str(trace))
    page.locator('[data-testid="stMain"] h1').filter(has_text="Kernels").wait_for()
    settle(page)
    in_uploader(page, trace.name)
    sync_api.expect(sidebar).to_contain_text(f"{trace.name} · 40 kernels", timeout=10_000)
    sync_api.expect(sidebar).not_to_contain_text(EXAMPLE)
    shot(page, "uploads-clicked-away")
    assert page.locator(ERROR_SELECTOR).all_inner_texts() == []


def test_after_removing_a_file_with_x_the_next_pick_is_read(page, tmp_path):
    """× empties the uploader; the file chosen next is the workload at once (before, that pick was dropped: the
    removal gave the uploader a new key, so the browser's next pick went to a widget the app no longer drew)."""
    example_on_screen(page)
    first, second = tmp_path / "first_pick.csv", tmp_path / "second_pick.csv"
    first.write_text(inventory_csv("first_pick_"))
    second.write_text(inventory_csv("second_pick_", kernels=3))
    sidebar = page.locator(SIDEBAR)
    sidebar.locator('input[type="file"]').first.set_input_files(str(first))
    sync_api.expect(sidebar).to_contain_text("first_pick.csv · 4 kernels")
    settle(page)
    sidebar.get_by_role("button", name=f"Remove {first.name}").click()
    sync_api.expect(sidebar).to_contain_text(EXAMPLE)
    settle(page)
    sidebar.locator('input[type="file"]').first.set_input_files(str(second))
    settle(page)
    sync_api.expect(sidebar).to_contain_text("second_pick.csv · 3 kernels", timeout=10_000)
    in_uploader(page, second.name)


def test_a_reload_says_uploads_live_in_the_browser_session(page, tmp_path):
    """A reload starts a new session without the upload: the page says so and offers the saved runs, instead of
    showing the example as if nothing had been uploaded. The address named the upload (``?upload=``), and names it
    no longer once the example is on screen: a second reload has nothing to say."""
    example_on_screen(page)
    csv = tmp_path / "before_reload.csv"
    csv.write_text(inventory_csv("before_reload_"))
    sidebar = page.locator(SIDEBAR)
    sidebar.locator('input[type="file"]').first.set_input_files(str(csv))
    sync_api.expect(sidebar).to_contain_text("before_reload.csv · 4 kernels")
    settle(page)
    assert "upload=before_reload.csv" in page.url
    page.reload()
    main = page.locator('[data-testid="stMain"]')
    sync_api.expect(main).to_contain_text("Uploads live in this browser session")
    sync_api.expect(main).to_contain_text("before_reload.csv is no longer here")
    # the link's code is fetched by the browser after a reload: seconds on a busy machine
    sync_api.expect(main.get_by_role("link", name="Open a saved run")).to_be_visible(timeout=TIMEOUT_MS)
    sync_api.expect(sidebar).to_contain_text(EXAMPLE)
    settle(page)
    assert "upload=" not in page.url
    shot(page, "uploads-after-reload")
