"""HTML and CSV injection through the app's own upload and download path, in a real browser (issue #8).

A kernel inventory whose names are markup and spreadsheet formulas is uploaded through the sidebar; the pages
show the names as text (no element is created and no script runs, in the app or in the report preview), and the
CSV and HTML downloaded from the Kernels and Report pages carry them escaped and neutralised.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from browserkit import (
    ARGS,
    ARTIFACTS,
    CHROMIUM,
    ENTRY,
    ERROR_SELECTOR,
    TIMEOUT_MS,
    open_page,
    require_chromium,
    settle,
    shot,
    streamlit_server,
)

pytestmark = pytest.mark.browser
require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = '<script>window.__pwned = "script"</script>,=HYPERLINK("http://x.example","click")'
IMG = '<img src=x onerror="window.__pwned = \'img\'">'
FORMULA = '@SUM(1+1)*cmd|" /C calc"!A0'
NAMES = [SCRIPT, IMG, FORMULA, "-2+3", "plain_gemm"]


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


INVENTORY = "name,count,flops,bytes,time_ms,precision\n" + "".join(
    f"{_csv_field(n)},{i + 1},{(i + 1) * 3e12:.3e},{(5 - i) * 2e9:.3e},{(i + 1) * 5.0},bf16\n"
    for i, n in enumerate(NAMES))


@pytest.fixture(scope="module")
def page():
    with streamlit_server(ARTIFACTS / "streamlit-injection.log") as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        dialogs: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pg.dialogs = dialogs
        pg.goto(f"{server.url}{ENTRY}")
        pg.locator('[data-testid="stMain"] h1').first.wait_for()
        settle(pg)
        yield pg
        context.close()
        browser.close()


def not_pwned(page) -> None:
    assert page.evaluate("window.__pwned === undefined"), "an uploaded kernel name ran as code"
    for frame in page.frames:
        assert frame.evaluate("window.__pwned === undefined"), f"a kernel name ran as code in {frame.url}"
    assert page.locator('img[src="x"]').count() == 0
    assert not page.dialogs


def test_upload_names_that_are_markup_and_formulas(page, tmp_path):
    f = tmp_path / "evil.csv"
    f.write_text(INVENTORY, encoding="utf-8")
    page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(f))
    page.locator('[data-testid="stSidebar"]').get_by_text("evil.csv · 5 kernels").wait_for()
    settle(page)
    assert page.locator(ERROR_SELECTOR).count() == 0
    not_pwned(page)


def test_pages_show_the_names_as_text(page):
    open_page(page, "Overview")  # the top kernels are written out as text here
    main = page.locator('[data-testid="stMain"]')
    sync_api.expect(main).to_contain_text("window.__pwned", timeout=TIMEOUT_MS)
    not_pwned(page)
    shot(page, "injection-overview")
    open_page(page, "Recommendations")
    not_pwned(page)
    open_page(page, "Kernels")
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    detail = page.locator('[data-testid="stSelectbox"]').filter(has_text="Kernel")
    detail.locator("input").click()
    option = page.get_by_role("option").filter(has_text="<img src=x")
    option.first.wait_for()
    option.first.click()
    settle(page)
    sync_api.expect(main).to_contain_text('<img src=x onerror="window.__pwned', timeout=TIMEOUT_MS)
    not_pwned(page)
    shot(page, "injection-kernels")
    assert page.locator(ERROR_SELECTOR).count() == 0


def test_csv_download_neutralises_formulas(page):
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text(encoding="utf-8"))))
    names = {r["name"] for r in rows}
    assert "'" + FORMULA in names and "'-2+3" in names and "plain_gemm" in names
    assert SCRIPT in names and IMG in names  # text, kept whole (commas and quotes survive the CSV)
    for r in rows:
        for cell in r.values():
            assert cell[:1] not in ("=", "+", "@", "\t", "\r") and not (cell[:1] == "-" and not _number(cell)), r


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_report_preview_and_download_escape_the_names(page):
    open_page(page, "Report")
    frame = page.frame_locator('[data-testid="stMain"] iframe').first
    frame.locator("h1").first.wait_for()
    sync_api.expect(frame.locator("body")).to_contain_text('<script>window.__pwned = "script"</script>',
                                                           timeout=TIMEOUT_MS)
    not_pwned(page)
    shot(page, "injection-report")
    with page.expect_download() as dl:
        page.locator('[data-testid="stMain"]').get_by_role("button", name="HTML", exact=True).click()
    html = Path(dl.value.path()).read_text(encoding="utf-8")
    assert "&lt;script&gt;window.__pwned" in html and "<script>window" not in html
    assert "&lt;img src=x onerror=" in html and "<img src=x" not in html
    assert "<script" not in html.lower()  # the report has no script at all
    settle(page)
    with page.expect_download() as dl:
        page.locator('[data-testid="stMain"]').get_by_role("button", name="CSV", exact=True).click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text(encoding="utf-8"))))
    assert "'" + FORMULA in {r["name"] for r in rows}
