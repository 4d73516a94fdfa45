"""Time the report of a large inventory end to end (issue 17: 20,000 kernels in at most 10 s, body at most 4 pages).

``cli_s``: ``roofline report INVENTORY.csv --hardware ... -o report.pdf`` as a fresh process (start-up, imports,
reading the CSV, analysis, advice, charts, PDF: what a user waits for), best of ``--repeat`` runs;
``cli_cpu_s``: that process's CPU time (user + system; on a shared machine the wall time also counts other
programs). ``html_s`` / ``pdf_s``: :func:`roofcore.report.build_html` and :func:`~roofcore.report.build_pdf`
in this process from one analysis (the Report page's preview, then the PDF when clicked; the first run of
``build_html`` also starts the chart renderer). ``pages``: the PDF's pages; ``body_pages``: those before the
appendix (pdftotext, where installed). The inventory is benchmarks/bench_engine.py's, written to
benchmarks/out/.

Run: python benchmarks/bench_report.py [N] [--devices h100-sxm,mi300x] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_engine import make_csv
from timing import best_of

import roofcore
from roofcore import report
from roofcore.advise import advise_all

OUT = Path(__file__).parent / "out"


def _pages(pdf: Path) -> tuple[int | None, int | None]:
    """The PDF's pages and those before the appendix's heading."""
    if not shutil.which("pdftotext"):
        return None, None
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    pages = [p for p in text.split("\f") if p.strip()]
    body = next((i for i, p in enumerate(pages) if "Appendix: " in p), len(pages))
    return len(pages), body


def _cli(csv: Path, devices: list[str], pdf: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `roofline report` process."""
    argv = [sys.executable, "-m", "roofcore", "report", str(csv), *(a for d in devices for a in ("--hardware", d)),
            "-o", str(pdf)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(n: int = 20_000, devices: tuple[str, ...] = ("h100-sxm",), repeat: int = 1) -> dict:
    OUT.mkdir(exist_ok=True)
    csv = OUT / f"inventory_{n}.csv"
    if not csv.exists():
        make_csv(csv, n)
    out: dict = {"kernels": n, "devices": ",".join(devices)}
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "report.pdf"
        if report.pdf_available() is None:
            runs = [_cli(csv, list(devices), pdf) for _ in range(repeat)]
            out["cli_s"], out["cli_cpu_s"] = min(runs)
            out["pages"], out["body_pages"] = _pages(pdf)
            out["pdf_bytes"] = pdf.stat().st_size
    cat = roofcore.load_catalogs()
    a = roofcore.analyze(roofcore.read(csv), [cat.get(d) for d in devices])
    advice = advise_all(a)  # the Report page computes it once for both
    page = ""

    def html() -> None:
        nonlocal page
        page = report.build_html(a, date="2025-01-01", advice=advice)

    out["html_s"] = best_of(html, repeat)
    out["html_bytes"] = len(page)
    if report.pdf_available() is None:
        out["pdf_s"] = best_of(lambda: report.build_pdf(a, date="2025-01-01", advice=advice), repeat)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20_000, help="kernels (default 20,000)")
    parser.add_argument("--devices", default="h100-sxm", help="comma-separated device ids (default h100-sxm)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, best kept (default 1)")
    args = parser.parse_args()
    result = main(args.n, tuple(args.devices.split(",")), args.repeat)
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()})
