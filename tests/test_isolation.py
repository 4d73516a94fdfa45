"""Two people on one server never see each other's work (issue #8): two browser contexts, one `streamlit run`.

Session A uploads an inventory whose kernels are all ``alpha_only_kernel_*`` and adds a device through the
Hardware page's form; session B uploads ``bravo_only_kernel_*`` (a file of the same name) and adds its device as
catalog YAML. Both devices
have the same id and the same figures (only the name, vendor and source differ), so a cache shared between
sessions and keyed on a device's id or numbers would hand one the other's. Their steps interleave (upload,
device, Kernels, Report, Roofline, reload), and after each step neither page — its HTML, the report preview's
frame, the chart's SVG download — holds any of the other's names. Screenshots of both sessions go to
tests/artifacts/isolation-*.png.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import browserkit as bk
import pytest

pytestmark = pytest.mark.browser
bk.require_chromium()

from playwright.sync_api import expect, sync_playwright  # noqa: E402 (after the Chromium check)

BUNDLED = "transformer_block.yaml · 12 kernels"
DEVICE_ID = "team-gpu"  # both people's device: the same id and figures as the form's defaults give
BRAVO_YAML = f"""schema_version: 1
vendor: BravoCorp
sources:
  S1: Bravo Corp datasheet rev 1
devices:
- id: {DEVICE_ID}
  name: Bravo Only GPU
  kind: gpu
  compute:
  - precision: bf16
    unit: matrix
    peak: 400 TFLOP/s
    source: S1
  memory:
  - level: hbm
    bandwidth: 2 TB/s
    source: S1
"""


class Person:
    """One browser context (so one Streamlit session at a time) and the names only it may ever see."""

    def __init__(self, browser, url: str, name: str, kernels: int) -> None:
        self.name, self.kernels = name, kernels
        self.prefix = f"{name}_only_kernel_"
        self.device_id, self.device_name = DEVICE_ID, f"{name.title()} Only GPU"
        self.vendor = f"{name.title()}Corp"
        self.label = f"{self.vendor} · {self.device_name} ({self.device_id})"
        self.context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        self.page = self.context.new_page()
        self.page.set_default_timeout(bk.TIMEOUT_MS)
        self.console: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console.append(f"page error: {exc}"))
        self.url = url

    @property
    def names(self) -> tuple[str, ...]:
        """What only this person may see (the device id is the same for both)."""
        return self.prefix, self.device_name, self.vendor

    def _console(self, msg) -> None:
        if msg.type == "error" and not bk.console_noise(msg.text, (msg.location or {}).get("url", "")):
            self.console.append(msg.text)

    def sidebar(self):
        return self.page.locator('[data-testid="stSidebar"]')

    def main(self):
        return self.page.locator('[data-testid="stMain"]')

    def everything(self) -> str:
        """The page's HTML and that of every frame in it (the report preview)."""
        texts = [self.page.content()]
        for frame in self.page.frames[1:]:
            with contextlib.suppress(Exception):  # a frame replaced while reading: the next check reads the new one
                texts.append(frame.content())
        return "\n".join(texts)

    def never_sees(self, other: Person, step: str) -> None:
        text = self.everything()
        leaked = [n for n in other.names if n in text]
        assert not leaked, f"{self.name} sees {other.name}'s {leaked} after {step}"
        assert not self.page.locator(bk.ERROR_SELECTOR).count(), f"{self.name}: an error on the page after {step}"

    def shot(self, step: str) -> None:
        bk.shot(self.page, f"isolation-{self.name}-{step}")


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    with bk.streamlit_server(bk.ARTIFACTS / "isolation-streamlit.log") as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(bk.CHROMIUM), args=bk.ARGS)
        a, b = Person(browser, server.url, "alpha", 4), Person(browser, server.url, "bravo", 4)
        yield a, b, tmp_path_factory.mktemp("isolation")
        browser.close()


def open_app(person: Person) -> None:
    person.page.goto(person.url + bk.ENTRY)
    person.main().locator("h1").filter(has_text="Overview").wait_for()
    bk.settle(person.page)


def upload(person: Person, folder: Path) -> None:
    """The same file name and size for both (a cache keyed on those would mix them up): only the kernel names
    differ ("alpha" and "bravo" have the same length)."""
    (folder / person.name).mkdir()
    csv = folder / person.name / "workload.csv"
    csv.write_text(bk.inventory_csv(person.prefix, person.kernels))
    person.sidebar().locator('input[type="file"]').first.set_input_files(str(csv))
    person.sidebar().get_by_text(f"{csv.name} · {person.kernels} kernels").wait_for()
    bk.settle(person.page)


def add_device_by_form(person: Person) -> None:
    bk.open_page(person.page, "Hardware")
    person.page.get_by_role("tab", name="Add a device").click()
    form = person.main().locator('[data-testid="stForm"]')
    form.get_by_label("Id", exact=True).fill(person.device_id)
    form.get_by_label("Name", exact=True).fill(person.device_name)
    form.get_by_label("Vendor", exact=True).fill(person.vendor)
    # the figures B's YAML repeats (the form starts empty: its placeholders are examples, not values)
    peak, hbm = form.get_by_label("Peak (TFLOP/s)").first, form.get_by_label("Off-chip bandwidth (TB/s)")
    assert (peak.input_value(), hbm.input_value()) == ("", "")
    peak.fill("400")
    hbm.fill("2")
    form.get_by_role("button", name="Add device").click()
    expect(person.main()).to_contain_text(f"Added {person.vendor} · {person.device_name}")
    bk.settle(person.page)


def add_device_by_yaml(person: Person, folder: Path) -> None:
    bk.open_page(person.page, "Hardware")
    person.page.get_by_role("tab", name="Add a device").click()
    yaml_file = folder / f"{person.name}.yaml"
    yaml_file.write_text(BRAVO_YAML)
    person.main().locator('input[type="file"]').first.set_input_files(str(yaml_file))
    expect(person.main()).to_contain_text(f"Added {person.vendor} · {person.device_name}")
    bk.settle(person.page)


def device_picker_lacks(person: Person, other: Person) -> None:
    """The sidebar's device picker has the person's own device selected and offers nothing of the other's."""
    picker = person.sidebar().locator('[data-testid="stMultiSelect"]')
    expect(picker).to_contain_text(person.device_name)
    picker.locator("input").click()
    person.page.keyboard.type(other.vendor)
    person.page.wait_for_timeout(300)
    offered = person.page.get_by_role("option").all_inner_texts()
    assert not [o for o in offered if other.vendor in o or other.device_name in o], (person.name, offered)
    person.page.keyboard.press("Escape")
    person.main().locator("h1").click()  # leave the picker; what was typed is dropped with the focus
    expect(picker).to_contain_text(person.device_name)


def test_two_sessions_never_see_each_other(people):
    a, b, folder = people
    both = ((a, b), (b, a))
    open_app(a)
    open_app(b)

    upload(a, folder)
    upload(b, folder)
    for me, other in both:
        expect(me.sidebar()).to_contain_text(f"workload.csv · {me.kernels} kernels")
        me.never_sees(other, "the uploads")

    add_device_by_form(a)
    add_device_by_yaml(b, folder)
    for me, other in both:
        expect(me.main()).to_contain_text("This session's devices")
        expect(me.main()).to_contain_text(me.device_name)
        me.never_sees(other, "adding devices")
        me.shot("hardware")
        device_picker_lacks(me, other)

    for me, _ in both:
        bk.open_page(me.page, "Kernels")
    for me, other in both:
        table = me.main().locator('[data-testid="stDataFrame"]').first
        table.wait_for()
        # own kernels on 2 devices: each kernel once, a row per kernel and device
        expect(me.main()).to_contain_text(re.compile(
            rf"{me.kernels} of {me.kernels} kernels( \(\d+ launches\))?, in {2 * me.kernels} rows"))
        # the grid fills its accessible copy of the cells after the caption is drawn: wait for its own rows
        expect(table).to_contain_text(me.prefix)
        html = table.inner_html()  # the grid's accessible copy of its cells
        assert me.prefix in html and other.prefix not in html, (me.name, "Kernels table")
        me.never_sees(other, "the Kernels page")
        me.shot("kernels")

    for me, _ in both:
        bk.open_page(me.page, "Report")
    for me, other in both:
        report = me.page.frame_locator('[data-testid="stIFrame"]').locator("body")
        # the preview is built, charts and all: on a loaded machine (CI runs four workers on two cores) that takes
        # longer than one timeout
        expect(report).to_contain_text(me.prefix, timeout=bk.TIMEOUT_MS * 4)
        expect(report).to_contain_text(me.device_name)
        text = report.inner_text()
        assert not [n for n in other.names if n in text], (me.name, "report preview")
        me.never_sees(other, "the Report page")
        me.shot("report")

    for me, _ in both:
        bk.open_page(me.page, "Roofline")
    for me, other in both:
        bk.roofline_chart(me.page)
        with me.page.expect_download() as svg:
            me.page.get_by_role("button", name="Download SVG").click()
        assert svg.value.suggested_filename == f"roofline-h100-sxm-{me.device_id}.svg"
        drawing = Path(svg.value.path()).read_text(encoding="utf-8")
        assert me.device_name in drawing and not [n for n in other.names if n in drawing], (me.name, "chart SVG")
        me.never_sees(other, "the Roofline page")
        me.shot("roofline")

    # both back on the bundled example: the same workload, the same device id and figures in both sessions;
    # only their names differ, and each must still see its own
    for me, _ in both:
        me.sidebar().get_by_role("button", name="Clear uploads").click()
        me.sidebar().get_by_text(BUNDLED).wait_for()
        bk.settle(me.page)
        bk.open_page(me.page, "Report")
    for me, other in both:
        report = me.page.frame_locator('[data-testid="stIFrame"]').locator("body")
        expect(report).to_contain_text("transformer_block")
        expect(report).to_contain_text(me.device_name)
        me.never_sees(other, "the same workload and device id in both sessions")
        me.shot("report-bundled")

    # a reload is a new Streamlit session: it starts from the bundled example, with nothing of either person
    for me, _ in both:
        me.page.reload()
    for me, other in both:
        me.main().locator("h1").first.wait_for()
        bk.settle(me.page)
        expect(me.sidebar()).to_contain_text(BUNDLED)
        me.never_sees(other, "a reload")
        me.shot("reloaded")

    for me, _ in both:
        assert not me.console, f"{me.name}: browser console errors {me.console}"
        me.context.close()
