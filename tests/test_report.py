"""The report: HTML and PDF for the bundled example and a real sample, escaping, and the CSV export."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import roofcore
from roofcore import report
from roofcore.cli import analysis_csv
from roofcore.ingest import make_frame

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


def _pdf_text(pdf: bytes, tmp_path: Path) -> tuple[str, int]:
    path = tmp_path / "report.pdf"
    path.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "50", "-png", str(path), str(tmp_path / "page")], check=True, timeout=120)
    pages = len(list(tmp_path.glob("page*.png")))
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True,
                          timeout=120).stdout.decode("utf-8")
    return text, pages


def _check_pdf(a: roofcore.Analysis, tmp_path: Path, scenario=None) -> str:
    page = report.build_html(a, date="2025-01-01", scenario=scenario)
    assert "<svg" in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    pdf = report.build_pdf(page)
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
    assert "Arithmetic intensity (FLOP/byte)" in flat and "Share of time" in flat
    assert b"/Subtype /Image" not in pdf
    assert "Page 1 of" in flat
    return flat


def test_html_is_self_contained_and_escaped(catalog):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    page = report.build_html(a, title="<i>t</i>", date="2025-01-01")
    assert "<script>alert" not in page and "<b>evil</b>" not in page and "<i>t</i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;,=HYPERLINK(&quot;x&quot;)" in page
    assert "evil&lt;1&gt;.csv" in page
    assert "<link" not in page and "src=" not in page and "@import" not in page


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


def test_pdf_missing_says_what_to_install(monkeypatch):
    monkeypatch.setattr(report, "pdf_available", lambda: f"The PDF needs WeasyPrint: {report.PDF_INSTALL_HINT}.")
    with pytest.raises(roofcore.RoofcoreError, match=r'pip install "roofcore\[pdf\]".*libpango-1.0-0'):
        report.build_pdf("<p>x</p>")


@needs_pdf
@needs_poppler
def test_pdf_bundled_example_with_scenario(catalog, tmp_path):
    from roofcore.plan import run_scenario

    a = roofcore.analyze(roofcore.read(ROOT / "examples" / "transformer_block.yaml"), [catalog.get("h100-sxm")])
    sc = run_scenario(ROOT / "examples" / "scenarios" / "transformer_fuse_fp8_mi300x.yaml", catalog)
    flat = _check_pdf(a, tmp_path, scenario=sc)
    assert "ffn_up" in flat and "fp8 everywhere" in flat and "t_serial" in flat


@needs_pdf
@needs_poppler
def test_pdf_escaped_kernel_is_text(catalog, tmp_path):
    a = roofcore.analyze(_evil_workload(), [catalog.get("h100-sxm")])
    flat = _check_pdf(a, tmp_path)
    assert '<script>alert(1)</script>,=HYPERLINK("x")' in flat.replace("- ", "-") or "<script>alert(1)</script>" in flat


@pytest.mark.samples
@needs_pdf
@needs_poppler
def test_pdf_real_sample(catalog, tmp_path):
    src = SAMPLES / "ncu_details_a100_interpolate_sgemm.csv"
    if not src.exists():
        pytest.skip(f"{src} is absent")
    a = roofcore.analyze(roofcore.read(src), [catalog.get("a100-40gb-sxm")])
    _check_pdf(a, tmp_path)
