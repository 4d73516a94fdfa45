"""The report: HTML and PDF for the bundled example and real samples (body pages, numbered points keyed to the
top-kernels table, no path of the machine, no e+0), escaping, the CSV export, and the PDF's directly drawn
appendix (layout, wrapping, page furniture, speed)."""

from __future__ import annotations

import html
import itertools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import roofcore
from roofcore import report
from roofcore.cli import analysis_csv
from roofcore.ingest import make_frame
from roofcore.report import appendix

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
EVIL = '<script>alert(1)</script>,=HYPERLINK("x")'

needs_pdf = pytest.mark.skipif(report.pdf_available() is not None, reason=f"{report.pdf_available()}")
needs_poppler = pytest.mark.skipif(not (shutil.which("pdftoppm") and shutil.which("pdftotext")),
                                   reason="poppler-utils (pdftoppm, pdftotext) is not installed")


@pytest.fixture(scope="module")
def catalog():
    return roofcore.load_catalogs()


def _evil_workload() -> roofcore.Workload:
    cols = {"name": [EVIL, "gemm"], "count": [1, 2], "flops": [1e9, 1e12], "bytes_hbm": [1e9, 1e9],
            "time_s": [1e-3, 2e-3], "precision": ["bf16", "bf16"], "unit": ["matrix", "matrix"],
            "group": ["=cmd|' /C calc'!A0", None], "source": ["evil.csv", "evil.csv"], "row": ["1", "2"]}
    return roofcore.Workload(frame=make_frame(cols, 2), name="<b>evil</b>", sources=("evil<1>.csv",),
                             formats=("test",))


def _pdf_text(pdf: bytes, tmp_path: Path, render: bool = True) -> tuple[str, int]:
    """The PDF's text (pages separated by form feeds) and its page count: pages rendered to PNG where
    ``render``, else counted in the text."""
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True,
                          timeout=120).stdout.decode("utf-8")
    if not render:
        return text, text.count("\f")
    subprocess.run(["pdftoppm", "-r", "50", "-png", str(path), str(tmp_path / "page")], check=True, timeout=120)
    pages = len(list(tmp_path.glob("page*.png")))
    return text, pages


def _pdf_words(pdf: bytes, tmp_path: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """Each page's width, height and words with their boxes (pt from the top-left), from ``pdftotext -bbox``."""
    import html as _html

    path = tmp_path / "words.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-bbox", str(path), "-"], check=True, capture_output=True,
                         timeout=120).stdout.decode("utf-8")
    pages = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out, re.S):
        words = [(float(x0), float(y0), float(x1), float(y1), _html.unescape(t)) for x0, y0, x1, y1, t in
                 re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
                            m.group(3))]
        pages.append((float(m.group(1)), float(m.group(2)), words))
    return pages


def _appendix_pages(text: str) -> list[str]:
    """The text of each PDF page from the appendix's first page on (pdftotext separates pages by form feeds)."""
    pages = text.split("\f")
    first = next(i for i, p in enumerate(pages) if "Appendix: " in p and "kernel" in p)
    return [p for p in pages[first:] if p.strip()]


def _body_pages(text: str) -> int:
    """Pages before the appendix (all of them without one)."""
    pages = [p for p in text.split("\f") if p.strip()]
    return next((i for i, p in enumerate(pages) if "Appendix: " in p), len(pages))


def _check_furniture(text: str, pages: int, title: str) -> None:
    """Every page has the title and "Page N of M" with the final M; every appendix page the column header."""
    sheets = [p for p in text.split("\f") if p.strip()]
    assert len(sheets) == pages
    for n, sheet in enumerate(sheets, 1):
        flat = " ".join(sheet.split())
        assert f"Page {n} of {pages}" in flat, (n, flat[-200:])
        assert title in flat, n
    for sheet in _appendix_pages(text):
        top = sheet.split()[:60]  # title and date, the heading on the first page, then the column header
        for label in ("#", "kernel", "count", "FLOPs", "off-chip", "bytes", "intensity", "t_roof", "time", "of",
                      "roof", "bound"):
            assert label in top, (label, top)


def _check_pdf(a: roofcore.Analysis, tmp_path: Path, scenario=None, **options) -> tuple[str, int, int]:
    """Render the HTML and the PDF and check what every report must hold; returns the PDF's flat text, its
    pages and its body's pages (before the appendix)."""
    page = report.build_html(a, date="2025-01-01", scenario=scenario, **options)
    assert "<svg" in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    pdf = report.build_pdf(a, date="2025-01-01", scenario=scenario, **options)
    assert pdf[:5] == b"%PDF-"
    text, pages = _pdf_text(pdf, tmp_path)
    assert pages > 0
    flat = " ".join(text.split())
    for heading in report.SECTIONS:
        if heading == "Planning results" and scenario is None:
            assert heading not in flat
            continue
        assert heading in flat, heading
    # the chart is vector: its axis titles are text in the PDF, not pixels of an image
    assert "Arithmetic intensity (FLOP/byte)" in flat
    assert b"/Subtype /Image" not in pdf
    _check_quotable(flat)
    _check_within_pages(pdf, tmp_path)
    _check_furniture(text, pages, " ".join(report.default_title(a).split())[:40])
    _check_no_overlap(pdf, tmp_path)
    _check_numbered_points(a, pdf, text, tmp_path)
    return flat, pages, _body_pages(text)


def _check_within_pages(pdf: bytes, tmp_path: Path) -> None:
    """No word runs off a page (a long unbreakable token in a warning once did)."""
    for n, (width, _, words) in enumerate(_pdf_words(pdf, tmp_path), 1):
        for w in words:
            assert w[0] >= 5 * appendix.MM and w[2] <= width - 5 * appendix.MM, (n, w)


def _check_quotable(flat: str) -> None:
    """No path of this machine, no scientific notation, percentages with at most two significant figures in
    the body's own sentences."""
    for where in (str(ROOT), str(ROOT.parent), "../shared", "..\\shared"):
        assert where not in flat, where
    assert not re.search(r"(?<![\w.])/(?:[\w.-]+/)+[\w.-]+", flat), re.search(r"(?<![\w.])/(?:[\w.-]+/)+[\w.-]+", flat)
    assert not re.search(r"\de[+-]?0\d", flat), re.search(r".{30}\de[+-]?0\d.{10}", flat)
    summary = flat.split("Executive summary", 1)[1].split("Roofline", 1)[0]
    for pct in re.findall(r"(\d+\.\d+)%", summary):  # "22.8%" has three figures, "0.43%" and "6.7%" two
        assert len(pct.replace(".", "").lstrip("0")) <= 2, (pct, summary)


def _check_numbered_points(a: roofcore.Analysis, pdf: bytes, text: str, tmp_path: Path) -> None:
    """Each chart's numbered points ("#n" beside a mark) are rows of the top-kernels table, and the kernels of
    the table that have a point (FLOPs and bytes known) are numbered in every chart."""
    pages = _pdf_words(pdf, tmp_path)
    charts = []  # per chart, the "#n" words inside its figure
    for _, _, words in pages:
        line = [w[4] for w in words]
        captions = [w for i, w in enumerate(words) if line[i:i + 5] == ["each", "kernel", "at", "its", "measured"]]
        heads = [w[3] for w in words if w[4] == "Roofline"] + [0.0]  # the section heading, the page's title
        for cap in sorted(captions, key=lambda w: w[1]):
            top = max([h for h in heads if h < cap[1]] + [c[3] for c in captions if c[3] < cap[1]])
            charts.append({int(w[4][1:]) for w in words if re.fullmatch(r"#\d+", w[4]) and top < w[1] < cap[1]})
    assert len(charts) == len(a.hardware), charts
    table = " ".join(text.split("\f")).split("Top kernels", 1)[1].split("Recommendations", 1)[0]
    rows = {int(n) for n in re.findall(r"^\s*(\d+)\s+\S", table, re.M)}
    top = min(len(a.workload), report.TOP)
    assert rows == set(range(1, top + 1)), rows
    drawn = _drawable_numbers(a)
    for numbers in charts:
        assert numbers <= rows and numbers == drawn, (numbers, drawn)


def _drawable_numbers(a: roofcore.Analysis) -> set[int]:
    """The top-table numbers whose kernel has a point on the chart (positive intensity and rate)."""
    r = report.build_report(a, None, report.TOP)
    f = a.workload.frame
    off = report.offchip_column(a)
    ok = (f["flops"] > 0) & (f[off] > 0 if off else False)
    return {int(r.number[i]) for i in r.top if ok.iloc[i]}


def _check_no_overlap(pdf: bytes, tmp_path: Path) -> None:
    """On the appendix pages, every word lies inside the page's margins and no two words overlap."""
    pages = _pdf_words(pdf, tmp_path)
    first = next(i for i, (_, _, words) in enumerate(pages) if any(w[4] == "Appendix:" for w in words))
    g = appendix.PAPERS["letter" if abs(pages[first][0] - appendix.PAPERS["letter"].width) < 1 else "a4"]
    for n, (width, height, words) in enumerate(pages[first:], first + 1):
        assert abs(width - g.width) < 1 and abs(height - g.height) < 1
        body = [w for w in words if g.top - 1 <= w[1] and w[3] <= g.height - g.bottom + 1]
        furniture = [w for w in words if w not in body]
        assert all(w[3] < g.top or w[1] > g.height - g.bottom for w in furniture), n  # only the margin boxes
        for w in words:
            assert g.left - 1 <= w[0] and w[2] <= g.width - g.right + 1, (n, w)
        boxes = sorted(body, key=lambda w: (w[1], w[0]))
        for i, u in enumerate(boxes):
            for v in boxes[i + 1:]:
                if v[1] >= u[3] - 0.5:  # sorted by top: nothing further down can reach u
                    break
                assert u[2] <= v[0] + 0.5 or v[2] <= u[0] + 0.5, (n, u, v)


def test_html_is_self_contained_and_escaped(catalog):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    page = report.build_html(a, title="<i>t</i>", date="2025-01-01")
    assert "<script>alert" not in page and "<b>evil</b>" not in page and "<i>t</i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;,=HYPERLINK(&quot;x&quot;)" in page
    assert "evil&lt;1&gt;.csv" in page
    assert "<link" not in page and "src=" not in page and "@import" not in page


def test_the_inputs_say_whether_the_file_named_its_gpu(catalog):
    """A profile that names no GPU says so in the report's inputs, with what it does say, so a reader of the PDF
    knows the devices were chosen, not read; a file naming its device says which; an inventory (no profile) says
    neither."""
    data = ROOT / "tests" / "data"
    kern_sum = (data / "nsys" / "kern_sum.csv").read_bytes() + b'0.1,1000,1,1000.0,1000.0,1000,1000,0.0,"ampere_sgemm"\n'
    rows = {"kern_sum.csv": roofcore.read(kern_sum, name="kern_sum.csv"),
            "example": roofcore.read(ROOT / "examples" / "transformer_block.yaml")}
    got = {k: report.build_html(roofcore.analyze(w, [catalog.get("a100-80gb-sxm")]), date="2026-01-01")
           for k, w in rows.items()}
    assert ("<th>Profiled on</th><td>not named; the file says: kernel names carry ampere_ tags (built for Ampere, "
            "sm_80: the GPU is sm_80 or a later one that runs them)</td>") in got["kern_sum.csv"]
    assert "Profiled on" not in got["example"]


def test_csv_neutralises_formulas(catalog):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    csv = analysis_csv(a)
    assert "'=cmd" in csv
    # the name starts with '<', so it is quoted as text; the cell that starts with '=' is neutralised
    assert '"<script>alert(1)</script>,=HYPERLINK(""x"")"' in csv
    cols = {"name": ['=HYPERLINK("x")'], "count": [1], "flops": [1.0], "bytes_hbm": [1.0], "time_s": [1e-6],
            "precision": ["bf16"], "unit": ["matrix"], "group": [None], "source": ["s"], "row": ["1"]}
    w = roofcore.Workload(frame=make_frame(cols, 1), name="w", sources=("s",), formats=("test",))
    assert "'=HYPERLINK" in analysis_csv(roofcore.analyze(w, [catalog.get("h100-sxm")]))


def test_pdf_missing_says_what_to_install(monkeypatch, catalog):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    monkeypatch.setattr(report, "pdf_available", lambda: f"The PDF needs WeasyPrint: {report.PDF_INSTALL_HINT}.")
    with pytest.raises(roofcore.RoofcoreError, match=r'pip install "roofcore\[pdf\]".*libpango-1.0-0'):
        report.build_pdf(a)


@needs_pdf
@needs_poppler
def test_pdf_bundled_example_with_scenario(catalog, tmp_path):
    from roofcore.plan import run_scenario

    a = roofcore.analyze(roofcore.read(ROOT / "examples" / "transformer_block.yaml"), [catalog.get("h100-sxm")])
    sc = run_scenario(ROOT / "examples" / "scenarios" / "transformer_fuse_fp8_mi300x.yaml", catalog)
    flat, pages, body = _check_pdf(a, tmp_path, scenario=sc)
    assert "ffn_up" in flat and "fp8 everywhere" in flat and "t_serial" in flat
    assert pages <= 5 and 2 <= body <= 4, (pages, body)
    # on Letter too, and without the scenario
    _, pages, body = _check_pdf(a, tmp_path, scenario=sc, paper="letter")
    assert pages <= 5 and body <= 4, (pages, body)


@needs_pdf
@needs_poppler
def test_pdf_escaped_kernel_is_text(catalog, tmp_path):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    flat, _, _ = _check_pdf(a, tmp_path)
    assert '<script>alert(1)</script>,=HYPERLINK("x")' in flat.replace("- ", "-") or "<script>alert(1)</script>" in flat
    # the drawn appendix has the name as text too, whole, and its parentheses and quotes came through
    text, _ = _pdf_text(report.build_pdf(a, date="2025-01-01"), tmp_path)
    assert EVIL in "".join(_appendix_pages(text))


@pytest.mark.samples
@needs_pdf
@needs_poppler
@pytest.mark.parametrize(("sample", "device"), [
    ("ncu_details_a100_interpolate_sgemm.csv", "a100-40gb-sxm"),
    # CUTLASS names of 4,808 characters, one of them six times; a warning with a 500-character metric list
    ("ncu_details_a100pcie_cutlass_hgemm_20480_no_fp_counters.csv", "a100-40gb-pcie"),
])
def test_pdf_real_sample(catalog, tmp_path, sample, device):
    src = SAMPLES / sample
    if not src.exists():
        pytest.skip(f"{src} is absent")
    a = roofcore.analyze(roofcore.read(src), [catalog.get(device)])
    _, pages, body = _check_pdf(a, tmp_path)
    assert 2 <= body <= 4 and pages <= 8, (body, pages)


@pytest.mark.samples
@needs_pdf
@needs_poppler
def test_pdf_of_a_pytorch_trace_on_two_devices_is_short(catalog, tmp_path):
    """Issue 17: a torch.compile trace (12 kernels, Tensile GEMMs with 700-character names) on two devices was
    17 pages (25 for the trace it was filed with); now the body is at most 4 and the whole at most 8, on A4
    and on Letter, with the names short in the body and whole in the appendix."""
    src = SAMPLES / "pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz"
    if not src.exists():
        pytest.skip(f"{src} is absent")
    w = roofcore.read(src)
    a = roofcore.analyze(w, [catalog.get("mi300x"), catalog.get("h100-sxm")])
    for paper in report.PAPERS:
        flat, pages, body = _check_pdf(a, tmp_path, paper=paper)
        assert body <= 4 and pages <= 8, (paper, body, pages)
        assert "Roofline report: pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz" in flat
        # short, numbered where they collide
        assert "Cijk_Alik_Bljk_BBS…MT256x192x64 [2]" in flat and "MT256x192x64 [1]" in flat
        assert re.search(r"\d× faster", flat)
    # the appendix has the full names, the HTML the full name on hover
    tensile = next(n for n in w.frame["name"] if n.startswith("Cijk_"))
    path = tmp_path / "names.pdf"
    path.write_bytes(report.build_pdf(a, date="2025-01-01"))
    raw = subprocess.run(["pdftotext", "-raw", str(path), "-"], check=True, capture_output=True,
                         timeout=120).stdout.decode("utf-8")  # drawing order: a name's lines one after another
    assert "".join(tensile.split()) in "".join("".join(_appendix_pages(raw)).split())
    assert f'title="{tensile}"' in report.build_html(a, date="2025-01-01", charts=False)


# ------------------------------------------------------------------------------------------------ PDF appendix

LONG = ("void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::half_t, cutlass::layout::RowMajor, "
        "<b>bold</b>, =SUM(A1:A9), (x\\y)>>" * 20)[:2048]


def _layout_cells(lay: appendix.Layout) -> list[tuple[int, float, float, bytes]]:
    """Every drawn line (page, x, y, text), in drawing order (names first within a row: see ``_mono``)."""
    return [(i, x, y, t) for i, page in enumerate(lay.pages)
            for x, y, t in sorted(page.texts + page.mono, key=lambda c: (c[1], c[0]))]


def _mono(lay: appendix.Layout) -> set[bytes]:
    return {t for page in lay.pages for _, _, t in page.mono}


def _check_layout(lay: appendix.Layout) -> None:
    """Every line lies inside one column (padding kept) and inside the page's body, below the header."""
    g = lay.geometry
    cols = lay.columns
    assert abs(cols[0].x - g.left) < 1e-6 and abs(cols[-1].x + cols[-1].width - (g.width - g.right)) < 1e-6
    for a, b in itertools.pairwise(cols):
        assert abs(a.x + a.width - b.x) < 1e-6 and a.width >= appendix.MIN_COLUMN
    mono = {(i, x, y, t) for i, page in enumerate(lay.pages) for x, y, t in page.mono}
    for i, x, y, t in _layout_cells(lay) + [(0, x, y + lay.top(0), t) for x, y, t in lay.header]:
        col = next(c for c in cols if c.x <= x < c.x + c.width)
        bold = y < lay.top(i) + lay.header_height
        w = appendix.text_width(t, bold=bold, mono=(i, x, y, t) in mono)
        assert col.x + appendix.HPAD - 1e-6 <= x and x + w <= col.x + col.width - appendix.HPAD + 1e-6, (t, col)
        top = lay.top(i) + (0 if bold else lay.header_height)
        assert top < y - appendix.SIZE * 0.7 and y + appendix.SIZE * 0.25 <= g.height - g.bottom, (i, y, t)


def test_appendix_wrap_keeps_every_character():
    text = appendix.encode(LONG)
    assert len(text) == 2048
    for width in (30.0, 95.5, 200.0):
        lines = appendix.wrap(text, width)
        assert b"".join(lines) == text and len(lines) > 1
        assert all(appendix.text_width(line.rstrip(b" ")) <= width + 1e-6 for line in lines)
    # a name with no separator breaks anywhere; one that fits stays whole
    assert b"".join(appendix.wrap(b"x" * 500, 40.0)) == b"x" * 500
    assert appendix.wrap(b"gemm", 40.0) == [b"gemm"]
    # breaks fall after separators where there are some
    assert appendix.wrap(b"aaaa, bbbb, cccc", appendix.text_width(b"aaaa, bbbb, ")) == [b"aaaa, bbbb, ", b"cccc"]
    # Courier: every character 0.6 em, so a line holds width / (0.6 size) characters
    lines = appendix.wrap(b"x" * 100, 60 * 0.6 * appendix.MONO_SIZE, mono=True)
    assert [len(line) for line in lines] == [60, 40]
    assert appendix.text_width(b"iii", mono=True) == pytest.approx(3 * 0.6 * appendix.MONO_SIZE)


def test_appendix_text_is_winansi_and_escaped():
    assert appendix.encode("µs – 3×, é") == "µs – 3×, é".encode("cp1252")
    assert appendix.encode("核\tx\x85") == b"??x?"  # outside the encoding, or a control character: "?"
    assert appendix.pdf_string(b"f(a\\b)") == b"(f\\(a\\\\b\\))"
    lay = appendix.layout([("kernel", False), ("count", True)], [[EVIL], ["1"]])
    stream = appendix.page_stream(lay, 0)
    assert b'(<script>alert\\(1\\)</script>,=HYPERLINK\\("x"\\)) Tj' in stream
    # in Courier where the name column is monospaced
    lay = appendix.layout([("#", True), ("kernel", False)], [["1"], [EVIL]], flex=1, mono=(1,))
    stream = appendix.page_stream(lay, 0)
    tail = stream[stream.index(b"/RcCourier"):]
    assert b'(<script>alert\\(1\\)</script>,=HYPERLINK\\("x"\\)) Tj' in tail and b"(1) Tj" not in tail


def test_appendix_layout_fits_columns_and_pages():
    names = [f"kernel_{i}" for i in range(300)] + [LONG, "x" * 700, EVIL]
    n = len(names)
    headers = [("kernel", False), ("device", False), ("count", True), ("FLOPs", True), ("off-chip bytes", True),
               ("intensity", True), ("t_roof", True), ("time", True), ("of roof", True), ("bound", "t")]
    cols = [names, ["a-rather-long-device-identifier-x9"] * n, ["1,000,000"] * n, ["3.31 GFLOP"] * n,
            ["8.63 MB"] * n, ["0.00391 FLOP/B"] * n, ["2.58 µs"] * n, ["8.01 µs"] * n, ["0.00698%"] * n,
            ["compute:bf16-matrix"] * n]
    lay = appendix.layout(headers, cols)
    _check_layout(lay)
    assert lay.columns[0].width >= appendix.KERNEL_SHARE * 0.99 * (lay.columns[-1].x + lay.columns[-1].width
                                                                  - lay.columns[0].x)
    # as the report lays it out: a number column first, the names (monospaced) taking the rest
    mono = appendix.layout([("#", True), *headers], [[str(i) for i in range(n)], *cols], flex=1, mono=(1,))
    _check_layout(mono)
    assert mono.columns[1].width == max(c.width for c in mono.columns)
    names_drawn = b"".join(t for _, _, _, t in _layout_cells(mono) if t in _mono(mono))
    assert names_drawn.replace(b" ", b"") == b"".join(appendix.encode(s) for s in names).replace(b" ", b"")
    # numbers are not wrapped: one line each, and every row has one rule
    assert sum(len(p.rules) for p in lay.pages) == n
    assert sum(t == b"0.00391 FLOP/B" for _, _, _, t in _layout_cells(lay)) == n
    # the kernel column's lines, joined, are the names in order
    kernel = b"".join(t for _, x, _, t in _layout_cells(lay) if x < lay.columns[1].x)
    assert kernel.replace(b" ", b"") == b"".join(appendix.encode(s) for s in names).replace(b" ", b"")


def test_appendix_row_taller_than_a_page_continues():
    name = "n" * 60_000
    lay = appendix.layout([("kernel", False), ("count", True)], [[name, "next"], ["1", "2"]])
    _check_layout(lay)
    assert len(lay.pages) > 2
    assert b"".join(t for _, _, _, t in _layout_cells(lay) if t.startswith(b"n")) == name.encode() + b"next"


def test_appendix_layout_of_no_rows():
    lay = appendix.layout([("kernel", False), ("count", True)], [[], []])
    assert len(lay.pages) == 1 and [t for _, _, t in lay.pages[0].texts] == [b"none"]


def test_appendix_geometry_is_style_css():
    """The drawn appendix's pages are style.css's ``@page appendix``: A4 landscape, and Letter landscape where
    the report overrides the size; the body's pages are portrait."""
    css = (ROOT / "roofcore" / "report" / "style.css").read_text(encoding="utf-8")
    assert re.search(r"size:\s*A4\s*;", re.search(r"@page\s*\{(.*?)@", css, re.S).group(1))
    page = re.search(r"@page appendix\s*\{(.*?)\}", css, re.S).group(1)
    assert re.search(r"size:\s*A4 landscape\s*;", page)
    top, right, bottom, left = (float(v) for v in re.search(
        r"margin:\s*([\d.]+)mm\s+([\d.]+)mm\s+([\d.]+)mm\s+([\d.]+)mm", page).groups())
    mm = appendix.MM
    for paper, (w, h) in {"a4": (297 * mm, 210 * mm), "letter": (11 * 72, 8.5 * 72)}.items():
        g = appendix.PAPERS[paper]
        assert (g.width, g.height) == pytest.approx((w, h))
        assert (g.top, g.right, g.bottom, g.left) == pytest.approx((top * mm, right * mm, bottom * mm, left * mm))
    assert "@page appendix { size: letter landscape; }" in report.PAPER_CSS["letter"]


def _synthetic(n: int, names: list[str] | None = None) -> roofcore.Workload:
    names = names or [f"void kernel_{i}<{'gemm' if i % 3 else 'elementwise'}, {i % 7}>(float*)" for i in range(n)]
    cols = {"name": names, "count": [1 + i % 4 for i in range(n)], "flops": [1e6 * (1 + i % 97) for i in range(n)],
            "bytes_hbm": [1e5 * (1 + i % 89) for i in range(n)], "time_s": [1e-6 * (1 + i % 83) for i in range(n)],
            "precision": ["bf16"] * n, "unit": ["matrix"] * n, "group": [None] * n, "source": ["s"] * n,
            "row": [str(i + 1) for i in range(n)]}
    return roofcore.Workload(frame=make_frame(cols, n), name=f"{n} kernels", sources=("s",), formats=("test",))


@needs_pdf
@needs_poppler
def test_pdf_long_kernel_name_wrapped_whole(catalog, tmp_path):
    w = _synthetic(40, [LONG, *(f"k{i}" for i in range(38)), EVIL])
    a = roofcore.analyze(w, [catalog.get("h100-sxm"), catalog.get("mi300x")])
    pdf = report.build_pdf(a, date="2025-01-01", charts=False)
    text, pages = _pdf_text(pdf, tmp_path)
    _check_furniture(text, pages, "Roofline report: 40 kernels")
    _check_no_overlap(pdf, tmp_path)
    assert {"h100-sxm", "mi300x"} <= set(_appendix_pages(text)[0].split()[:60])  # a column group per device
    # in drawing order (-raw), a row's kernel lines come one after another: each name is whole, in order
    path = tmp_path / "long.pdf"
    path.write_bytes(pdf)
    raw = subprocess.run(["pdftotext", "-raw", str(path), "-"], check=True, capture_output=True,
                         timeout=120).stdout.decode("utf-8")
    flat = "".join("".join(_appendix_pages(raw)).split())
    assert flat.count("".join(LONG.split())) == 1  # one row per kernel, its devices side by side
    assert flat.count("".join(EVIL.split())) == 1


@needs_pdf
@needs_poppler
def test_pdf_of_2000_kernels_draws_its_appendix(catalog, tmp_path):
    """WeasyPrint laid the appendix out cell by cell (23 s for 2,000 kernels); drawn, it is a small part (the
    time is benchmarks/bench_report.py's to measure, not a test's)."""
    a = roofcore.analyze(_synthetic(2000), [catalog.get("h100-sxm")])
    pdf = report.build_pdf(a, date="2025-01-01", charts=False)
    text, pages = _pdf_text(pdf, tmp_path, render=False)
    lay = report.appendix_layout(report.build_report(a, None, report.TOP), "all", "a4")
    assert len(_appendix_pages(text)) == len(lay.pages) > 20
    assert 2000 / len(lay.pages) >= 35  # kernels per landscape page
    _check_furniture(text, pages, "Roofline report: 2000 kernels")
    flat = " ".join(text.split())
    assert "void kernel_1999<gemm, 4>(float*)" in flat and "Every kernel (2,000)" in flat


@needs_pdf
def test_pdf_refuses_to_draw_over_the_heading(catalog, monkeypatch):
    """Were the room left for the heading too small (style.css changed), the PDF fails rather than overlap."""
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    monkeypatch.setattr(appendix, "HEAD", 2 * appendix.MM)
    with pytest.raises(roofcore.RoofcoreError, match="appendix pages are not where they were laid out"):
        report.build_pdf(a, charts=False)


# ------------------------------------------------------------------------------------------------ body, options


def test_no_paths_keeps_base_names_and_units():
    assert report.no_paths("../shared/samples/trace.json.gz") == "trace.json.gz"
    assert report.no_paths("read /home/me/runs/a.csv, C:\\Users\\me\\b.csv and ./c.csv") == "read a.csv, b.csv and c.csv"
    assert report.no_paths("data/run1.csv: 3.35 TB/s, 989 TFLOP/s, 12 FLOP/B") == "run1.csv: 3.35 TB/s, 989 TFLOP/s, 12 FLOP/B"
    w = roofcore.Workload(frame=_synthetic(2).frame, name="/srv/data/profile.ncu-rep.csv", sources=("/srv/data/x.csv",),
                          formats=("test",))
    a = roofcore.analyze(w, [roofcore.load_catalogs().get("h100-sxm")])
    assert report.default_title(a) == "Roofline report: profile.ncu-rep.csv"
    page = report.build_html(a, charts=False)
    assert "/srv" not in page and "x.csv" in page


def test_numbers_follow_their_rows_through_the_chart_selection(catalog):
    """roofline(numbers=...) prints "#n" beside the kernel of that row, also when only the top kernels are drawn
    (the selection reorders them)."""
    from roofcore import charts

    w = _synthetic(50)
    a = roofcore.analyze(w, [catalog.get("h100-sxm")])
    numbers = [0] * 50
    numbers[7], numbers[30] = 2, 1
    fig = charts.roofline(a, numbers=numbers, top_n=20)
    spec = fig.to_dict()
    layers = [lay for lay in spec["layer"] if lay.get("description") == "kernel_numbers"]
    assert len(layers) == 1
    rows = spec["datasets"][layers[0]["data"]["name"]]
    drawn = fig.datasets
    kernels = next(lay for lay in spec["layer"] if lay.get("description") == "kernels")
    points = drawn[kernels["data"]["name"]]
    key = w.frame["time_s"]
    top20 = set(key.sort_values(ascending=False, kind="stable").index[:20])
    expect = {f"#{n}" for i, n in ((7, 2), (30, 1)) if i in top20}
    assert {r["text"] for r in rows} == expect and expect
    # each label sits beside its own kernel's mark: nearer to it than to any other numbered kernel's
    import math
    for r in rows:
        i = 7 if r["text"] == "#2" else 30
        name = w.frame["name"][i]
        p = points[points["name"] == name].iloc[0]
        d = math.hypot(math.log10(r["x"] / p["x"]), math.log10(r["y"] / p["y"]))
        assert d < 0.5, (r, name)
    with pytest.raises(ValueError, match="one per kernel"):
        charts.roofline(a, numbers=[1, 2])


def test_top_table_short_names_with_the_full_name_on_hover(catalog):
    names = [*(f"k{i}" for i in range(10)), CUTLASS_B, CUTLASS_A]  # the last rows take the most time
    a = roofcore.analyze(_synthetic(12, names), [catalog.get("h100-sxm")])
    page = report.build_html(a, charts=False, top=3, date="2025-01-01")
    top = page.split('<table class="top">', 1)[1].split("</table>", 1)[0]
    assert top.count("<tr>") == 1 + 3  # the header and three kernels
    # numbered by time where they collide: the longest first
    assert "cutlass::Kernel&lt;…gemm…&gt; [1]" in top and "cutlass::Kernel&lt;…gemm…&gt; [2]" in top
    assert top.index("[1]") < top.index("[2]")
    assert f'title="{html.escape(CUTLASS_A, quote=True)}"' in page
    # the appendix has the full names; --top sizes the table only
    appendix_html = page.split("Appendix: every kernel", 1)[1]
    assert html.escape(CUTLASS_A) in appendix_html and html.escape(CUTLASS_B) in appendix_html


CUTLASS_A = ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::GemmShape<(int)128, (int)128, (int)32>, "
             "cutlass::half_t> >(cutlass::gemm::kernel::Gemm<cutlass::half_t>::Params)")
CUTLASS_B = CUTLASS_A.replace("(int)32", "(int)64")


def test_appendix_modes(catalog):
    a = roofcore.analyze(_synthetic(30), [catalog.get("h100-sxm")])
    assert report.appendix_mode(a) == "all"
    full = report.build_html(a, charts=False)
    assert "Appendix: every kernel" in full and "void kernel_29&lt;gemm, 1&gt;(float*)" in full
    top = report.build_html(a, charts=False, appendix="top", top=5)
    assert "Appendix: top kernels" in top and "CSV (roofline report INPUT --csv" in top
    assert top.split("Appendix: top kernels", 1)[1].count("<tr>") == 1 + 5
    none = report.build_html(a, charts=False, appendix="none")
    assert "Appendix" not in none
    with pytest.raises(roofcore.RoofcoreError, match="appendix must be one of all, top, none, not 'some'"):
        report.build_html(a, appendix="some")
    with pytest.raises(roofcore.RoofcoreError, match="paper must be one of a4, letter, not 'a5'"):
        report.build_html(a, paper="a5")
    # beyond APPENDIX_ALL_MAX kernels the default is the top kernels, with a sentence pointing to the CSV
    big = roofcore.analyze(_synthetic(report.APPENDIX_ALL_MAX + 1), [catalog.get("h100-sxm")])
    assert report.appendix_mode(big) == "top"
    assert f"The workload has {report.APPENDIX_ALL_MAX + 1:,} kernels" in report.build_html(big, charts=False)


def test_cli_report_options(tmp_path, capsys):
    from roofcore.cli import main

    inv = tmp_path / "inv.csv"
    inv.write_text("name,flops,bytes,time_us\n" + "".join(f"k{i},{1e9 * (i + 1)},{1e8},{10 + i}\n" for i in range(12)),
                   encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(inv), "--hardware", "h100-sxm", "--top", "3", "--appendix", "none", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Appendix" not in page and page.split('<table class="top">', 1)[1].split("</table>")[0].count("<tr>") == 4
    assert str(tmp_path) not in page and "Roofline report: inv.csv" in page
    assert main(["report", str(inv), "--hardware", "h100-sxm", "--paper", "letter", "-o", str(out)]) == 0
    assert "size: letter landscape" in out.read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["report", str(inv), "--hardware", "h100-sxm", "--appendix", "some"])
    capsys.readouterr()


@needs_pdf
@needs_poppler
def test_pdf_of_20000_kernels_keeps_a_short_body(catalog, tmp_path):
    """20,000 kernels (the issue's 546 pages): the body stays at most 4 pages, charts included, and the appendix
    lists the top kernels with a sentence pointing to the CSV."""
    n = 20_000
    a = roofcore.analyze(_synthetic(n), [catalog.get("h100-sxm"), catalog.get("mi300x")])
    pdf = report.build_pdf(a, date="2025-01-01")
    text, pages = _pdf_text(pdf, tmp_path, render=False)
    assert _body_pages(text) <= 4 and pages <= 6, (pages, _body_pages(text))
    flat = " ".join(text.split())
    assert "Appendix: top kernels" in flat and "The workload has 20,000 kernels" in flat and "CSV" in flat
    assert "Showing the top 600 of 20,000 kernels by time" in flat
    _check_quotable(flat)
