"""Time the report of a 10,000-kernel workload (appendix included): HTML, then PDF.

Run: python benchmarks/bench_report.py [N]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import roofcore
from roofcore import report
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


def main(n: int = 10_000) -> dict:
    cat = roofcore.load_catalogs()
    a = roofcore.analyze(workload(n), [cat.get("h100-sxm")])
    t0 = time.perf_counter()
    page = report.build_html(a, date="2025-01-01")
    t1 = time.perf_counter()
    out = {"kernels": n, "html_s": t1 - t0, "html_bytes": len(page)}
    if report.pdf_available() is None:
        pdf = report.build_pdf(page)
        out.update(pdf_s=time.perf_counter() - t1, pdf_bytes=len(pdf), total_s=time.perf_counter() - t0)
    return out


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
