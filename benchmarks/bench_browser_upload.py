"""Upload to chart drawn, in a real browser (issue 14): Debian's Chromium driven by Playwright against
`streamlit run`, for the largest real sample of ../shared/samples and a generated 20,000-launch Nsight Compute
details export (benchmarks/bench_ncu.make_csv, ~136 MB).

Each run starts a fresh server (so the upload is parsed, analysed and charted cold, not served from the app's
content-keyed caches), opens the Roofline page on the bundled example, then gives the file to the sidebar's
uploader and times until the chart of the new workload is drawn: the sidebar names the file, the app's run is
over (no status widget) and the chart's pixels differ from the example's and hold still (the time is taken at
the first of two identical looks, 50 ms apart). A second session then uploads the
same bytes (warm: the parse and the analysis are shared by content). The engine alone (read + analyze of the
same bytes, in this process) is timed beside it, for scale.

Run: ``python benchmarks/bench_browser_upload.py [--runs R] [--launches N] [--files NAME ...]``; results print
and go to benchmarks/out/browser_upload.json. Numbers, not assertions: the test suite times nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # browserkit: the server and the Chromium rule the browser tests use
sys.path.insert(0, str(Path(__file__).parent))

from bench_ncu import make_csv  # noqa: E402
from browserkit import ARGS, CHROMIUM, streamlit_server  # noqa: E402

import roofcore  # noqa: E402

OUT = Path(__file__).parent / "out"
SAMPLES = ROOT.parent / "shared" / "samples"
TIMEOUT_MS = 600_000
IDLE_JS = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
#: what the roofline shows, in short: its canvas's pixels (or its svg's markup), hashed in the page
DRAWN_JS = """() => {
  const el = document.querySelector('[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg');
  if (!el) return null;
  const text = el.tagName === 'CANVAS' ? el.toDataURL() : el.outerHTML;
  let h = 0;
  for (let i = 0; i < text.length; i += 7) h = (h * 31 + text.charCodeAt(i)) | 0;
  return text.length + ':' + h;
}"""


def largest_sample() -> Path:
    files = [p for p in SAMPLES.iterdir() if p.is_file() and p.suffix not in (".md",)]
    return max(files, key=lambda p: p.stat().st_size)


def open_roofline(page, url: str) -> str | None:
    """The Roofline page on the bundled example, its chart drawn and the app idle: what the chart shows."""
    page.goto(url + "/")
    page.locator('[data-testid="stMain"] h1').first.wait_for()
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Roofline", exact=True).click()
    page.locator('[data-testid="stMain"] h1').filter(has_text="Roofline").wait_for()
    page.wait_for_function(IDLE_JS)
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
    page.wait_for_timeout(500)
    return page.evaluate(DRAWN_JS)


def wait_drawn(page, path: Path, before: str | None, clock: Callable[[], float]) -> float:
    """After ``path`` was given to the uploader: ``clock()`` when the new chart was drawn, i.e. the sidebar names
    the file, the app is idle, and the chart differs from ``before`` and stays the same over two looks 50 ms apart
    (the time of the first of them)."""
    page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]').filter(
        has_text=path.name).first.wait_for()
    page.wait_for_function(IDLE_JS)
    last, at = None, None
    while True:
        now = page.evaluate(DRAWN_JS)
        if now is not None and now != before and now == last:
            return at
        last, at = now, clock()
        page.wait_for_timeout(50)


def upload_to_chart(browser, url: str, path: Path) -> float:
    """Seconds from handing ``path`` to the uploader to the new workload's roofline painted, in a new session."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        before = open_roofline(page, url)
        t0 = time.perf_counter()
        page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(path))
        at = wait_drawn(page, path, before, time.perf_counter)
        elapsed = at - t0
        errors = page.locator('[data-testid="stMain"] [data-testid="stAlertContentError"]').all_inner_texts()
        if errors:
            raise RuntimeError(f"{path.name}: the app shows errors: {errors}")
        return elapsed
    finally:
        context.close()


def engine(path: Path) -> float:
    """read + analyze of the same bytes on the default device (the engine alone, for scale)."""
    data = path.read_bytes()
    hw = roofcore.load_catalogs().get("h100-sxm")
    t0 = time.perf_counter()
    roofcore.analyze(roofcore.read(data, name=path.name), [hw])
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh servers per file (default 3)")
    ap.add_argument("--launches", type=int, default=20_000, help="launches of the generated ncu export")
    ap.add_argument("--files", nargs="*", help="sample file names instead of the largest one (none: only the "
                    "generated export)")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium (never `playwright install`)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if args.files is not None:
            cases = [SAMPLES / f for f in args.files]
        else:
            cases = [largest_sample()] if SAMPLES.is_dir() else []
        generated = Path(tmp) / f"ncu_details_{args.launches}_launches.csv"
        make_csv(generated, args.launches)
        cases.append(generated)
        results = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            for path in cases:
                cold, warm = [], []
                for _ in range(args.runs):
                    with streamlit_server(OUT / "browser_upload_server.log") as server:
                        cold.append(upload_to_chart(browser, server.url, path))
                        warm.append(upload_to_chart(browser, server.url, path))
                eng = min(engine(path) for _ in range(args.runs))
                w = roofcore.read(path)
                row = {"file": path.name if path != generated else f"generated ncu details ({args.launches:,} launches)",
                       "bytes": path.stat().st_size, "rows": len(w), "cold_s": cold, "warm_s": warm,
                       "cold_median_s": statistics.median(cold), "warm_median_s": statistics.median(warm),
                       "engine_best_s": eng}
                results.append(row)
                print(f"{row['file']}: {row['bytes'] / 1e6:.1f} MB, {row['rows']:,} rows: upload to chart "
                      f"{row['cold_median_s']:.2f} s cold (median of {args.runs}: "
                      f"{', '.join(f'{t:.2f}' for t in cold)}), {row['warm_median_s']:.2f} s warm; "
                      f"read + analyze alone {eng:.2f} s", flush=True)
            browser.close()
    OUT.mkdir(exist_ok=True)
    (OUT / "browser_upload.json").write_text(json.dumps({"results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
