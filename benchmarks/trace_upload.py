"""Where the time of an upload goes, phase by phase: one cold run of bench_browser_upload's measurement (fresh
`streamlit run` server, Chromium, the Roofline page, the sidebar's uploader given a file) with the app's timing
marks on (ROOFCORE_TRACE=1, app/trace.py) and Chromium's network events (the upload request, every websocket
frame with its size), all on one clock: seconds after the file was handed to the uploader.

Run: ``python benchmarks/trace_upload.py [FILE] [--launches N] [--runs R]`` (default: the generated 20,000-launch ncu export).
Prints the timeline; a diagnostic, not a benchmark (one run, no medians).
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from bench_browser_upload import OUT, open_roofline, wait_drawn
from bench_ncu import make_csv
from browserkit import ARGS, CHROMIUM, streamlit_server
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


def _what(data: bytes) -> str:
    """What a server frame carries: a ForwardMsg's kind, for a delta its element's type."""
    msg = ForwardMsg()
    try:
        msg.ParseFromString(data)
    except Exception:  # not a ForwardMsg: say nothing
        return ""
    kind = msg.WhichOneof("type")
    if kind == "delta":
        d = msg.delta
        part = d.WhichOneof("type")
        return f" ({d.new_element.WhichOneof('type')})" if part == "new_element" else f" (delta {part})"
    return f" ({kind})"


def _network(cdp, events: list) -> dict:
    """Collect Chromium's network events on ``events`` as (wall seconds, what); returns the clock mapping."""
    clock: dict = {}

    def wall(ts: float) -> float:
        return clock.get("offset", 0.0) + ts

    def sent(e):
        clock.setdefault("offset", e["wallTime"] - e["timestamp"])
        if "upload_file" in e["request"]["url"]:
            events.append((wall(e["timestamp"]), f"browser: upload request {e['request']['method']} sent"))
            clock["upload"] = e["requestId"]

    def finished(e):
        if e["requestId"] == clock.get("upload"):
            events.append((wall(e["timestamp"]), "browser: upload response received"))

    def frame(kind):
        def on(e):
            data = base64.b64decode(e["response"]["payloadData"])  # binary frames come base64-encoded
            events.append((wall(e["timestamp"]), f"ws {kind} {len(data):,} B{_what(data) if kind == 'received' else ''}"))
        return on

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.loadingFinished", finished)
    cdp.on("Network.webSocketFrameSent", frame("sent"))
    cdp.on("Network.webSocketFrameReceived", frame("received"))
    cdp.send("Network.enable")
    return clock


def _busy(cdp) -> dict[str, float]:
    """Seconds the page's main thread has spent so far: on tasks, script, layout, style (Chromium's metrics)."""
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
            if m["name"] in ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")}


def trace(browser, url: str, path: Path, log: Path) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(600_000)
    events: list = []
    before = open_roofline(page, url)
    cdp = context.new_cdp_session(page)
    _network(cdp, events)
    page.evaluate("1")  # let the network domain start
    cdp.send("Performance.enable")
    busy = _busy(cdp)
    skip = log.stat().st_size
    t0 = time.time()
    page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(path))
    events.append((time.time(), "browser: set_input_files returned"))
    at = wait_drawn(page, path, before, time.time)
    events.append((at, "browser: chart drawn (first of two equal looks)"))
    busy = {k: v - busy[k] for k, v in _busy(cdp).items()}
    events.append((at, "browser: main thread busy {:.3f} s (script {:.3f} s, layout and style {:.3f} s)".format(
        busy["TaskDuration"], busy["ScriptDuration"], busy["LayoutDuration"] + busy["RecalcStyleDuration"])))
    context.close()
    time.sleep(0.3)
    with open(log, encoding="utf-8", errors="replace") as fh:
        fh.seek(skip)
        for line in fh:
            if line.startswith("ROOFCORE_TRACE "):
                _, ts, cpu, label = line.rstrip("\n").split(" ", 3)
                events.append((float(ts), f"server: {label} [cpu {float(cpu):.3f} s]"))
    return [(ts - t0, what) for ts, what in sorted(events) if ts >= t0 - 1]


#: the phases, each from the first event naming its start to the first naming its end (after the start)
PHASES = [
    ("upload (browser PUT 136 MB to server)", "browser: upload request", "browser: upload response"),
    ("rerun request", "browser: upload response", "server: run start"),
    ("script up to the uploader's read", "server: run start", "server: load start"),
    ("read the upload, its content key (SHA-256)", "server: load start", "server: content key"),
    ("parse", "server: content key", "server: parsed"),
    ("rest of sidebar", "server: parsed", "server: sidebar done"),
    ("analysis", "server: sidebar done", "server: analysis done"),
    ("roofline page", "server: roofline page", "server: run end"),
    ("run end to the chart's frame in the browser", "server: run end", "(vega_lite_chart)"),
    ("chart's frame to chart drawn (render)", "(vega_lite_chart)", "browser: chart drawn"),
    ("total", "browser: set_input_files", "browser: chart drawn"),
]


def _cpu(events: list, start: str, end: str) -> float:
    """The server's CPU seconds (all its threads) from the first mark ``start`` to the next mark ``end``."""
    a = next((w for _, w in events if w.startswith(start)), None)
    b = next((w for _, w in events if w.startswith(end)), None)
    if a is None or b is None:
        return float("nan")
    return float(b.rsplit("[cpu ", 1)[1][:-3]) - float(a.rsplit("[cpu ", 1)[1][:-3])


def phases(events: list) -> dict[str, float]:
    out = {"server CPU, run start to run end": _cpu(events, "server: run start", "server: run end")}
    busy = next((w for _, w in events if "main thread busy" in w), None)
    out["browser main thread busy (upload to drawn)"] = float(busy.split()[4]) if busy else float("nan")
    for name, start, end in PHASES:
        a = next((t for t, w in events if start in w), None)
        b = next((t for t, w in events if end in w and a is not None and t >= a), None)
        out[name] = (b - a) if a is not None and b is not None else float("nan")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, help="a file to upload (default: the generated ncu export)")
    ap.add_argument("--launches", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=1, help="fresh servers; the timeline of the first is printed")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    os.environ["ROOFCORE_TRACE"] = "1"  # the server inherits it
    log = OUT / "trace_upload_server.log"
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / f"ncu_details_{args.launches}_launches.csv"
            make_csv(path, args.launches)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            rows = []
            for i in range(args.runs):
                with streamlit_server(log) as server:
                    events = trace(browser, server.url, path, log)
                if i == 0:
                    for t, what in events:
                        print(f"{t:8.3f} s  {what}")
                rows.append(phases(events))
            browser.close()
    print("\nphase" + " " * 40 + "  ".join(f"run {i + 1:<3}" for i in range(len(rows))) + "  median")
    for name in rows[0]:
        vals = [r[name] for r in rows]
        print(f"{name:<45}" + "  ".join(f"{v:7.3f}" for v in vals) + f"  {statistics.median(vals):6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
