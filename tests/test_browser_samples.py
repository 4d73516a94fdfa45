"""Every real export of ../shared/samples through the app in a real browser, as a new user would drop it in:
one `streamlit run` server and one page; each sample group is uploaded in turn (the files of one run together),
the detected device taken with its "Use …" button where the app offers one, and its pages opened: the Overview and
the Roofline for every group, one of the other pages drawn from the workload's numbers and one of the rest in turn,
and every page for the four screenshot samples. No page may
show "Something went wrong" or an exception; a refused upload shows its message and the app goes on with the
example. Screenshots of every page for four samples of different formats go to tests/artifacts/ for a person.

Driven by tests/samples_expected.yaml (the same expectations as tests/test_samples_app.py): a "sample group" is
an entry listing several files (the largest where groups nest) or a file that belongs to no group. Skips without
../shared/samples, Chromium or Playwright (ROOFCORE_REQUIRE_BROWSER=1 makes a missing browser a failure).
"""

from __future__ import annotations

import re
import time

import pytest
from browserkit import ARGS, ARTIFACTS, CHROMIUM, TIMEOUT_MS, navigate, require_chromium, streamlit_server
from test_samples import ENTRIES, SAMPLES, words_in

pytestmark = [pytest.mark.browser, pytest.mark.samples]
require_chromium()

sync_api = pytest.importorskip("playwright.sync_api")

PAGES = ["Overview", "Roofline", "Kernels", "Recommendations", "Planner", "Compare", "History", "Hardware", "Report"]
#: opened for every group: the page an upload lands on and the chart the app is for
EVERY_GROUP = {"Overview", "Roofline"}
#: the other pages drawn from the workload's own numbers (a table, charts, the report's preview), one per group in
#: turn; tests/test_samples_app.py opens every page for every entry in-process, so the browser adds the front end
#: without walking 9 × 40 pages (each page a browser draws costs ~1.5 s of CPU on a 2-core machine, the suite's
#: largest share)
DATA_ROTATED = ["Kernels", "Recommendations", "Report"]
#: the rest, one per group in turn; every group of SHOTS opens every page
ROTATED = ["Planner", "Compare", "History", "Hardware"]
#: where a group is cleared, uploaded and given its device: a page that draws little, so the reruns those steps
#: cause do not draw a chart each (a refused upload's message shows on every page)
QUIET_PAGE = "History"
#: four samples of different formats whose every page is kept as a screenshot
SHOTS = {"ncu_details_a100_interpolate_sgemm.csv": "ncu", "nsys2025.3.2_stats_console_log_a100_julia.out": "nsys",
         "rocprof-compute vcopy MI200 with sysinfo and roofline": "rocprof-compute",
         "pytorch_kineto_t4_amp_record_shapes.json": "pytorch"}
CRASH = "Something went wrong"
PAGE_ERRORS: list[str] = []
#: true once the upload is read: the sidebar names another workload than the example, or the main area shows an
#: error that was not there before (``before``: an error the previous group left on screen does not count)
UPLOADED_JS = """before => {
  const sidebar = document.querySelector('[data-testid="stSidebar"]').innerText;
  if (!sidebar.includes('transformer_block.yaml · 12')) return true;
  const errors = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stAlertContentError"]')];
  return errors.some(e => !before.includes(e.innerText));
}"""
#: true once the app's run is over: no status widget, no spinner
IDLE_JS = ("!document.querySelector('[data-testid=\"stStatusWidget\"]') && "
           "!document.querySelector('[data-testid=\"stSpinner\"]')")


def sample_groups() -> list[str]:
    """Entry keys to upload: every group not inside a larger one, and every file in no group."""
    groups = {k: set(e["files"]) for k, e in ENTRIES.items() if len(e["files"]) > 1}
    maximal = [k for k, f in groups.items() if not any(f < g for g in groups.values())]
    grouped = set().union(*groups.values()) if groups else set()
    return maximal + [k for k, e in ENTRIES.items() if len(e["files"]) == 1 and e["files"][0] not in grouped]


def idle(page) -> None:
    """Wait for the app's run to be over: idle, and still idle a moment later (on a loaded machine the run a click
    starts can show its status widget only after the first look)."""
    page.wait_for_timeout(150)
    for _ in range(2):
        page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS * 4, polling=100)
        page.wait_for_timeout(150)


def problems(page, where: str) -> list[str]:
    main = page.locator('[data-testid="stMain"]')
    out = [f"{where}: exception: {e.inner_text()[:300]}" for e in main.locator('[data-testid="stException"]').all()]
    text = page.locator("body").inner_text()
    if CRASH in text:
        out.append(f"{where}: {CRASH}: {text[text.index(CRASH):][:300]}")
    return out


@pytest.fixture(scope="module")
def page():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository; CI has them)")
    with streamlit_server(ARTIFACTS / "streamlit-samples.log") as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1800})
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        PAGE_ERRORS.clear()  # uncaught script errors in the page: none expected
        pg.on("pageerror", lambda e: PAGE_ERRORS.append(str(e)))
        pg.goto(server.url + "/")
        pg.locator('[data-testid="stMain"] h1').first.wait_for()
        idle(pg)
        yield pg
        context.close()
        browser.close()


def current_page(page) -> str:
    """The heading of the page on screen."""
    heading = page.locator('[data-testid="stMain"] h1').first
    return heading.inner_text().strip() if heading.count() else ""


def open_page(page, name: str) -> None:
    navigate(page, name, exact=True)
    idle(page)


def upload(page, key: str) -> None:
    """Clear the previous upload (the uploader keeps adding files otherwise), then give this group's files."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    clear = sidebar.get_by_role("button", name="Clear uploads")
    if clear.is_enabled():
        clear.click()
        sidebar.get_by_text("transformer_block.yaml · 12 kernels").wait_for()
        # after a refused upload the example is on screen already: wait for the uploader itself to be empty (the
        # button is disabled while it holds no file)
        sync_api.expect(clear).to_be_disabled(timeout=TIMEOUT_MS)
        idle(page)
    before = [e.inner_text() for e in page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]').all()]
    sidebar.locator('input[type="file"]').first.set_input_files([str(SAMPLES / f) for f in ENTRIES[key]["files"]])
    # read: the sidebar names another workload than the example, or the main area says why not
    page.wait_for_function(UPLOADED_JS, arg=before, timeout=TIMEOUT_MS * 4, polling=100)
    idle(page)


def set_device(page, hw_id: str) -> None:
    """Make ``hw_id`` the only device in the sidebar's picker, by typing and clicking as a user does."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]')
    chips = box.locator(".react-aria-ComboBox [data-tag]")

    def mine(i: int) -> bool:
        return f"({hw_id})" in chips.nth(i).get_attribute("aria-label")  # "… (gtx-1080) · unverified" too

    for attempt in range(3):  # a rerun that lands while the list is open closes it: open it again, as a user would
        if any(mine(i) for i in range(chips.count())):
            break
        page.mouse.move(0, 0)
        box.locator("input").click()
        page.keyboard.type(hw_id)
        try:
            page.get_by_role("option", name=re.compile(rf"\({re.escape(hw_id)}\)")).first.click(timeout=10_000)
        except sync_api.TimeoutError:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            box.locator("input").fill("")
        page.keyboard.press("Escape")
        idle(page)
    for _ in range(10):  # remove the other chips; a rerun can redraw the list between counting and clicking
        others = [i for i in range(chips.count()) if not mine(i)]
        if not others:
            break
        chips.nth(others[0]).get_by_role("button").click()
        idle(page)


def test_the_first_minute(page):
    """A fresh session: the example, marked as one, the call to upload a profile, and device chips that show
    whole names (the default device's "NVIDIA · H100 SXM5 80GB (h100-sxm)", once cut to "NVIDIA · H100 S…")."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("transformer_block.yaml · 12 kernels").wait_for()
    main = page.locator('[data-testid="stMain"]')
    sync_api.expect(main).to_contain_text("Upload a profile")
    sync_api.expect(main).to_contain_text("bundled example")
    sync_api.expect(sidebar).to_contain_text("Example")
    chips = sidebar.locator('[data-testid="stMultiSelect"] .react-aria-ComboBox [data-tag] > span')
    sync_api.expect(chips).to_have_count(1)  # the picker is drawn a moment after the sidebar's caption
    assert chips.first.inner_text() == "NVIDIA · H100 SXM5 80GB (h100-sxm)"
    # the whole label is visible, nothing cut off with an ellipsis, once the page has settled: on a loaded machine
    # the chip can be drawn a moment before the sidebar's style reaches it (a CI run caught it cut at that moment)
    whole = ("() => [...document.querySelectorAll('[data-testid=\"stSidebar\"] [data-testid=\"stMultiSelect\"] "
             ".react-aria-ComboBox [data-tag] > span')].every(e => e.scrollWidth <= e.clientWidth + 1)")
    try:
        page.wait_for_function(whole, timeout=10_000, polling=100)
    except sync_api.TimeoutError:
        pytest.fail(f"a device chip stays cut off: {chips.first.inner_text()!r}")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "sample-first-minute.png"))


#: the walk is cut in this many parts, each a file of its own (this one, test_browser_samples_b.py, _c.py) with its
#: own server and browser, so pytest-xdist runs them on several workers at once
PARTS = 3


def test_every_sample_group_on_every_page(page):
    walk(page, 0)


def pages_for(key: str, index: int) -> list[str]:
    """The pages group number ``index`` opens, in the navigation's order: the data pages, one rotated page, or
    every page for the groups kept as screenshots."""
    if key in SHOTS:
        return PAGES
    turn = index // PARTS  # the group's place in its own part: each part turns through every page
    return [p for p in PAGES if p in EVERY_GROUP or p == DATA_ROTATED[turn % len(DATA_ROTATED)]
            or p == ROTATED[turn % len(ROTATED)]]


def test_every_page_is_opened_in_the_browser_walk():
    """Each page is opened for at least one group of every part of the walk, or for a screenshot group."""
    groups = sample_groups()
    for name in PAGES:
        for part in range(PARTS):
            assert any(name in pages_for(groups[i], i) for i in range(part, len(groups), PARTS)), (name, part)


def walk(page, part: int) -> None:
    """Part ``part`` of :data:`PARTS` of the sample groups (every ``PARTS``-th, from ``part``), each uploaded and
    taken through every page."""
    found: list[str] = []
    timings: list[str] = []
    groups = sample_groups()
    for index in range(part, len(groups), PARTS):
        key = groups[index]
        e = ENTRIES[key]
        t0 = time.monotonic()
        if current_page(page) != QUIET_PAGE:
            open_page(page, QUIET_PAGE)
        upload(page, key)
        found += problems(page, f"{key}: upload")
        main = page.locator('[data-testid="stMain"]')
        errors = [el.inner_text() for el in main.locator('[data-testid="stAlertContentError"]').all()]
        if e["outcome"] == "refused":
            if not any(not words_in(err, e["message"]) for err in errors):
                found.append(f"{key}: refused, but no message names {e['message']}: {errors}")
            open_page(page, "Overview")  # the app goes on with the example
            found += problems(page, f"{key}: Overview after the refusal")
            continue
        if errors:
            found.append(f"{key}: a working upload shows errors: {errors}")
        use = page.locator('[data-testid="stSidebar"]').get_by_role("button", name=re.compile(r"^Use \S+( instead)?$"))
        if use.count():  # as a user does: take the device the profile names
            page.mouse.move(0, 0)  # a help tooltip left open by the last hover (the Add button's) covers this one
            page.wait_for_timeout(400)
            use.first.click()
            idle(page)
        set_device(page, e["hardware"])  # the device it ran on (a profile that names none leaves the last one)
        for name in pages_for(key, index):
            open_page(page, name)
            found += problems(page, f"{key}: {name}")
            if key in SHOTS:
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"sample-{SHOTS[key]}-{name.lower()}.png"))
        timings.append(f"{key}: {time.monotonic() - t0:.1f} s")
    print("\n".join(timings))
    assert not PAGE_ERRORS, PAGE_ERRORS
    assert not found, "\n".join(found)
