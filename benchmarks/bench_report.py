"""Time the report of a 10,000-kernel workload (appendix included): HTML, then PDF.

``html_s``: :func:`roofcore.report.build_html`; ``pdf_s``: :func:`roofcore.report.build_pdf` from the same
analysis (it builds its own page, charts included, and draws the appendix itself); ``total_s``: both, as the
Report page does (the preview, then the PDF when clicked). Each is the best of ``--repeat`` runs; the first
run of ``build_html`` also starts the chart renderer. ``pages``: the PDF's page count (pdfinfo, where
installed).

Run: python benchmarks/bench_report.py [N] [--repeat R]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from timing import best_of

import roofcore
from roofcore import report
from roofcore.advise import advise_all
from roofcore.ingest import make_frame


def workload(n: int, seed: int = 0) -> roofcore.Workload:
    rng = np.random.default_rng(seed)
    flops = rng.lognormal(20, 3, n)
    cols = {
        "name": [f"kernel_{i}_{'gemm' if i % 3 else 'elementwise'}<{i % 7}>" for i in range(n)],
        "count": [1] * n, "flops": flops, "bytes_hbm": flops / rng.lognormal(2, 2, n),
        "time_s": rng.lognormal(-10, 1.5, n), "precision": ["bf16"] * n, "unit": ["matrix"] * n,
        "group": [None] * n, "source": ["synthetic"] * n, "row": [str(i + 1) for i in range(n)]}
    return roofcore.Workload(frame=make_frame(cols, n), name=f"{n:,} synthetic kernels", sources=("synthetic",),
                             formats=("synthetic",))


def _pages(pdf: bytes) -> int | None:
    if not shutil.which("pdfinfo"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.pdf"
        path.write_bytes(pdf)
        info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def main(n: int = 10_000, repeat: int = 1) -> dict:
    cat = roofcore.load_catalogs()
    a = roofcore.analyze(workload(n), [cat.get("h100-sxm")])
    advice = advise_all(a)  # the Report page computes it once for both
    out: dict = {"kernels": n}
    page = ""

    def html() -> None:
        nonlocal page
        page = report.build_html(a, date="2025-01-01", advice=advice)

    out["html_s"] = best_of(html, repeat)
    out["html_bytes"] = len(page)
    if report.pdf_available() is None:
        pdf = b""

        def build() -> None:
            nonlocal pdf
            pdf = report.build_pdf(a, date="2025-01-01", advice=advice)

        out["pdf_s"] = best_of(build, repeat)
        out.update(total_s=out["html_s"] + out["pdf_s"], pages=_pages(pdf), pdf_bytes=len(pdf))
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=10_000, help="kernels (default 10,000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, best kept (default 1)")
    args = parser.parse_args()
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in main(args.n, args.repeat).items()})
