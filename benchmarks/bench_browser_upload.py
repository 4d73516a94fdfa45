"""The app's speed as a person sees it, in a real browser (issues 14 and 24): Debian's Chromium driven by
Playwright against `streamlit run`.

* **Cold open to the first chart drawn** (issue 24 point 4: at most 1.5 s): a fresh server (nothing imported
  yet, nothing cached), a new browser context opens the root URL, and the time runs until the Overview's chart is
  drawn (a chart's pixels that hold still over two looks 20 ms apart; the time of the first). The same for a
  trivial Streamlit app with one bar chart (``st.title`` + ``st.vega_lite_chart``), alternated with it: the floor
  that Streamlit and Chromium alone cost on this machine.
* **Upload to chart drawn** (issue 24 point 4: at most 1.0 s): each run starts a fresh server (so the upload is
  parsed, analysed and charted cold, not served from the app's content-keyed caches), opens the Roofline page on
  the bundled example, then gives the file to the sidebar's uploader and times until the chart of the new
  workload is drawn: the sidebar names the file, the app's run is over (no status widget) and the chart's pixels
  differ from the example's and hold still (the time is taken at the first of two identical looks, 50 ms apart).
  A second session then uploads the same bytes (warm: the parse and the analysis are shared by content). The
  engine alone (read + analyze of the same bytes, in this process) is timed beside it, for scale, and so is a
  floor: a one-uploader Streamlit app that charts the file's size once it has arrived. The files: a
  generated rocprofv3 ``--output-format json`` of 44,000 kernel dispatches (benchmarks/rocprofv3_json.py, ~42 MB)
  and a generated 20,000-launch Nsight Compute details export (benchmarks/bench_ncu.make_csv, ~136 MB), or
  samples named with ``--files``.

Run: ``python benchmarks/bench_browser_upload.py [--runs R] [--cold C] [--launches N] [--dispatches D] [--files
NAME ...] [--only cold,upload]``; medians print against the targets and go to benchmarks/out/browser_upload.json.
Numbers, not assertions: the test suite times nothing. On a shared machine compare with the floor of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
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


#: a trivial Streamlit app with one chart: what Streamlit and Chromium alone cost to open (the floor)
FLOOR_APP = """import streamlit as st
st.set_page_config(page_title="floor", layout="wide")
st.title("Floor")
st.vega_lite_chart({"data": {"values": [{"a": "x", "b": 1}, {"a": "y", "b": 2}]}, "mark": "bar",
                    "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b", "type": "quantitative"}}},
                   theme=None, width=300)
"""
#: the same for an upload: the file's size charted once it has arrived (what Streamlit and Chromium cost to move it)
FLOOR_UPLOAD_APP = """import streamlit as st
f = st.sidebar.file_uploader("File")
st.sidebar.caption(f.name if f else "nothing uploaded")
st.title("Floor")
st.vega_lite_chart({"data": {"values": [{"a": "bytes", "b": len(f.getvalue()) if f else 0}]}, "mark": "bar",
                    "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b", "type": "quantitative"}}},
                   theme=None, width=300)
"""
TARGET_COLD_S = 1.5
TARGET_UPLOAD_S = 1.0


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) the server process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cold_open(browser, server) -> tuple[float, float, float]:
    """Opening the server's root URL in a new browser context: seconds to its first chart drawn (pixels that
    hold still over two looks 20 ms apart: the time of the first), the server's CPU seconds meanwhile, and the
    seconds the page's main thread was busy (Chromium's TaskDuration): the two steadier on a busy machine."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    try:
        c0 = server_cpu(server.pid)
        t0 = time.perf_counter()
        page.goto(server.url + "/")
        last, at = None, None
        while True:
            now = page.evaluate(DRAWN_JS)
            if now is not None and now == last:
                busy = next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                            if m["name"] == "TaskDuration")
                return at - t0, server_cpu(server.pid) - c0, busy
            last, at = now, time.perf_counter()
            page.wait_for_timeout(20)
    finally:
        context.close()


def cold_opens(browser, runs: int, tmp: Path, baseline: Path | None = None) -> list[dict]:
    """The app's cold open and the floor app's (and a ``baseline`` checkout's app), alternated, each on a fresh
    server."""
    floor = tmp / "floor_app.py"
    floor.write_text(FLOOR_APP, encoding="utf-8")
    servers = {"app": {}, "floor": {"script": str(floor)}}
    if baseline is not None:
        servers["baseline"] = {"cwd": baseline}
    got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in servers}
    for _ in range(runs):
        for key, how in servers.items():
            with streamlit_server(OUT / f"browser_cold_{key}_server.log", **how) as server:
                got[key].append(cold_open(browser, server))
    rows = []
    for key, what, target in (("app", "cold open to first chart drawn", TARGET_COLD_S),
                              ("baseline", f"before ({baseline}): cold open to first chart drawn", None),
                              ("floor", "floor: a one-chart Streamlit app, cold open", None)):
        if key not in got:
            continue
        walls = [w for w, _, _ in got[key]]
        row = {"what": what, "runs_s": walls, "median_s": statistics.median(walls), "target_s": target,
               "server_cpu_median_s": statistics.median(c for _, c, _ in got[key]),
               "browser_busy_median_s": statistics.median(b for _, _, b in got[key])}
        rows.append(row)
        _say(what, row["median_s"], walls, target, f"; server CPU {row['server_cpu_median_s']:.2f} s, browser main "
             f"thread busy {row['browser_busy_median_s']:.2f} s (medians)")
    return rows


def _say(what: str, median: float, runs: list[float], target: float | None, extra: str = "") -> None:
    verdict = "" if target is None else f" [target {target:g} s: {'ok' if median <= target else 'OVER'}]"
    print(f"{what}: {median:.2f} s (median of {len(runs)}: {', '.join(f'{t:.2f}' for t in runs)}){verdict}{extra}",
          flush=True)


def upload_cases(args, tmp: Path) -> list[tuple[Path, str]]:
    """The files to upload, with their labels: named samples, else the two generated exports."""
    if args.files:
        return [(SAMPLES / f, f) for f in args.files]
    from rocprofv3_json import make_json

    rocprof = tmp / f"rocprofv3_{args.dispatches}_dispatches.json"
    make_json(rocprof, args.dispatches)
    ncu = tmp / f"ncu_details_{args.launches}_launches.csv"
    make_csv(ncu, args.launches)
    return [(rocprof, f"generated rocprofv3 JSON ({args.dispatches:,} dispatches)"),
            (ncu, f"generated ncu details ({args.launches:,} launches)")]


def floor_upload(browser, url: str, path: Path) -> float:
    """Seconds from handing ``path`` to the floor app's uploader to its chart of the file's size drawn."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url + "/")
        page.locator('[data-testid="stVegaLiteChart"]').first.wait_for()
        page.wait_for_function(IDLE_JS)
        page.wait_for_timeout(500)
        before = page.evaluate(DRAWN_JS)
        t0 = time.perf_counter()
        page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(path))
        return wait_drawn(page, path, before, time.perf_counter) - t0
    finally:
        context.close()


def uploads(browser, cases: list[tuple[Path, str]], runs: int, tmp: Path) -> list[dict]:
    floor_app = tmp / "floor_upload_app.py"
    floor_app.write_text(FLOOR_UPLOAD_APP, encoding="utf-8")
    results = []
    for path, label in cases:
        cold, warm, floor = [], [], []
        for _ in range(runs):
            with streamlit_server(OUT / "browser_upload_server.log") as server:
                cold.append(upload_to_chart(browser, server.url, path))
                warm.append(upload_to_chart(browser, server.url, path))
            with streamlit_server(OUT / "browser_floor_upload_server.log", script=str(floor_app)) as server:
                floor.append(floor_upload(browser, server.url, path))
        eng = min(engine(path) for _ in range(runs))
        row = {"file": label, "bytes": path.stat().st_size, "rows": len(roofcore.read(path)), "cold_s": cold,
               "warm_s": warm, "cold_median_s": statistics.median(cold), "warm_median_s": statistics.median(warm),
               "engine_best_s": eng, "target_s": TARGET_UPLOAD_S, "floor_s": floor,
               "floor_median_s": statistics.median(floor)}
        results.append(row)
        _say(f"{label}, {row['bytes'] / 1e6:.1f} MB, {row['rows']:,} rows: upload to chart drawn",
             row["cold_median_s"], cold, TARGET_UPLOAD_S,
             f"; warm {row['warm_median_s']:.2f} s; read + analyze alone {eng:.2f} s; floor (a one-uploader app "
             f"charting the file's size) {row['floor_median_s']:.2f} s")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh servers per uploaded file (default 3)")
    ap.add_argument("--cold", type=int, default=5, help="fresh servers for the cold open, and for the floor (default 5)")
    ap.add_argument("--launches", type=int, default=20_000, help="launches of the generated ncu export")
    ap.add_argument("--dispatches", type=int, default=44_000, help="dispatches of the generated rocprofv3 JSON")
    ap.add_argument("--files", nargs="+", help="sample file names (../shared/samples) instead of the generated two")
    ap.add_argument("--only", default="cold,upload", help="cold, upload or both (default)")
    ap.add_argument("--baseline", type=Path, metavar="DIR", help="an earlier checkout (git archive REV | tar -x -C "
                    "DIR) whose app's cold open runs alternated with this one's")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium (never `playwright install`)", file=sys.stderr)
        return 2
    only = set(args.only.split(","))
    report: dict = {"load_average": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        if "cold" in only:
            report["cold_open"] = cold_opens(browser, args.cold, Path(tmp), args.baseline)
        if "upload" in only:
            report["results"] = uploads(browser, upload_cases(args, Path(tmp)), args.runs, Path(tmp))
        browser.close()
    report["load_average_end"] = os.getloadavg()[0]
    print(f"load average {report['load_average']:.1f} at the start, {report['load_average_end']:.1f} at the end")
    OUT.mkdir(exist_ok=True)
    (OUT / "browser_upload.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
