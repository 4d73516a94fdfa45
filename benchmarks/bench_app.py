"""The Roofline page on a large inventory, under Streamlit's AppTest (issue #3 acceptance).

Generates an N-kernel inventory CSV (default 100,000 distinct kernels, so aggregation by name cannot shrink
it: the worst case for the chart), then measures, best of 3 each:

* ``roofcore.ingest.read`` and ``roofcore.analyze`` on one device (the engine, the reference);
* the engine's full per-kernel table (``Analysis.table``) and ``summary``, for scale;
* the Roofline page under AppTest: the run that receives the upload (parse + analyse + chart, cold), and a
  rerun (what every later interaction or page revisit costs);
* ``roofcore.charts.roofline`` alone, and how many marks its spec sends to the browser (capped at 5,000).

Run: ``python benchmarks/bench_app.py [--kernels N]``; results print and go to benchmarks/out/app.json.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).parent / "out"
DEVICE = "h100-sxm"


def make_csv(kernels: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    flops = rng.lognormal(20, 3, kernels).round() + 1
    nbytes = (flops / rng.lognormal(2, 2, kernels)).round() + 1
    roof = np.maximum(flops / 989e12, nbytes / 3.35e12)
    frame = pd.DataFrame({
        "name": [f"kernel_{i}<float, {i % 7}>" for i in range(kernels)],
        "count": rng.integers(1, 100, kernels),
        "flops": flops,
        "bytes": nbytes,
        "bytes_l2": (nbytes * rng.uniform(1, 4, kernels)).round(),
        "time_us": (roof / rng.uniform(0.05, 1.0, kernels) * 1e6).round(3) + 0.001,
        "precision": rng.choice(["bf16", "fp32", "fp16", "int8"], kernels),
        "group": rng.choice([f"layer{i}" for i in range(48)], kernels),
    })
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()




def patch_apptest_navigation() -> None:
    """As in tests/test_app.py: keep AppTest running streamlit_app.py on every run (not the legacy pages mode)."""
    from streamlit.runtime import pages_manager
    from streamlit.testing.v1 import app_test

    class NavigationOnly(pages_manager.PagesManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pages_manager.PagesManager.uses_pages_directory = False

    app_test.PagesManager = NavigationOnly


def page_times(data: bytes) -> dict:
    """One AppTest session on the Roofline page: the upload run (cold) and a rerun (warm)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600).run()
    at.switch_page("pages/roofline.py").run()
    at.sidebar.file_uploader[0].set_value(("large.csv", data, "text/csv"))
    t0 = time.perf_counter()
    at.run()
    cold = time.perf_counter() - t0
    assert not at.exception and not at.error, [e.value for e in at.error]
    warm = best_of(at.run)
    el = at.get("vega_lite_chart")[0]
    spec = json.loads(el.proto.spec)
    sent_rows = sum(pa_rows(d.data.data) for d in el.proto.datasets)
    return {"upload_run_s": cold, "rerun_s": warm, "kernel_marks": spec["usermeta"]["roofcore"]["kernel_points"],
            "rows_sent_to_browser": sent_rows, "spec_bytes": len(el.proto.spec)}


def pa_rows(arrow: bytes) -> int:
    import pyarrow as pa

    return pa.ipc.open_stream(io.BytesIO(arrow)).read_all().num_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=100_000)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from roofcore import analyze, charts, ingest, load_catalogs

    data = make_csv(args.kernels)
    hw = load_catalogs().get(DEVICE)
    read_s = best_of(lambda: ingest.read(data, name="large.csv"))
    w = ingest.read(data, name="large.csv")
    analyze_s = best_of(lambda: analyze(w, [hw]))
    a = analyze(w, [hw])
    table_s = best_of(lambda: a.table(DEVICE, messages=False))
    summary_s = best_of(lambda: a.summary(DEVICE))
    chart_s = best_of(lambda: charts.roofline(a))
    spec_s = best_of(lambda: charts.roofline(a).chart.to_dict())
    patch_apptest_navigation()
    page = page_times(data)
    result = {
        "kernels": args.kernels, "csv_mb": len(data) / 1e6, "device": DEVICE,
        "read_s": read_s, "analyze_s": analyze_s, "table_s": table_s, "summary_s": summary_s,
        "chart_build_s": chart_s, "chart_build_and_spec_s": spec_s, **page,
        "rerun_over_analyze": page["rerun_s"] / analyze_s,
        "upload_run_over_read_plus_analyze": page["upload_run_s"] / (read_s + analyze_s),
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "app.json").write_text(json.dumps(result, indent=1))
    print(f"{args.kernels:,} kernels, {result['csv_mb']:.1f} MB CSV, one device ({DEVICE})")
    print(f"  engine: read {read_s:.3f} s, analyze {analyze_s:.4f} s (table {table_s:.3f} s, summary {summary_s:.3f} s)")
    print(f"  charts.roofline: {chart_s:.3f} s to build, {spec_s:.3f} s with the Vega-Lite spec")
    print(f"  Roofline page (AppTest): upload run {page['upload_run_s']:.3f} s "
          f"({result['upload_run_over_read_plus_analyze']:.1f}× read+analyze), rerun {page['rerun_s']:.3f} s "
          f"({result['rerun_over_analyze']:.1f}× analyze)")
    print(f"  marks: {page['kernel_marks']:,} kernel marks; {page['rows_sent_to_browser']:,} data rows in all sent "
          f"to the browser; spec {page['spec_bytes'] / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
