"""Load on loopback (issue #8): several sessions at once against one `streamlit run`, in real browsers.

Each session is a Chromium context of its own (one browser for all, driven at once from one asyncio loop) that
repeats a fixed number of rounds of: open the app at its root URL (a new Streamlit session; the context's cache
is cold in its first round only), upload a small real-format export from tests/data (ncu, rocprof, PyTorch trace,
xprof roofline CSV, an inventory CSV: session i starts at export i and moves one on each round; each upload's
bytes made unique so that no round is answered from another's server-side cache, see ``Uploads``), then open
the Roofline page. The single-session baseline is the same code on the same server: a few such sessions (the same
rounds) one after the other, after a warm-up (not counted) that takes every export through the server once.

* **page time**: from the export being set on the sidebar uploader to the Roofline page being done: the upload
  named in the sidebar and that run finished, then after the click on Roofline its title, the chart drawn (its
  SVG laid out with marks in it), the page's last element (Download PNG) present and no status widget (the run
  has ended).
* **load time** (reported, not judged): from ``goto`` to the first page's title with no status widget.
* **errors**: a round that did not complete (timeout, crash), an ``stException`` or ``st.error`` on the page, an
  uncaught page error, or a console error of the app. Streamlit's own 404 base-path probes and the page icon that
  a machine without internet cannot fetch are counted apart as noise (``browserkit.console_noise``).

Criteria: every round completes, no errors, under-load median page time ≤ 3× the single-session median.

Where the time goes: the CPU seconds of the server, each kind of Chromium process and the drivers are sampled
from /proc while under load. ``--browsers N`` lets only N sessions be browsers and the others speak Streamlit's
websocket protocol (st_protocol.py: the same load on the server, next to nothing on this machine), so the
server's share can be told from the browsers'; ``--server-arg`` tries a `streamlit run` option without editing
the app.

Run from the repository root: ``python benchmarks/load_test.py --sessions 8 --rounds 3``; prints a table and
writes benchmarks/out/load.json; exit status 1 when a criterion fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import browserkit as bk  # noqa: E402 (the shared server and browser helpers live with the tests)

OUT = Path(__file__).parent / "out"
DATA = ROOT / "tests" / "data"
EXPORTS = ("ncu/details_20col_rules.csv", "rocprof/results_v2.csv", "kineto/shapes.pt.trace.json",
           "xla/roofline_model_gpu_steps.csv")
MAX_RATIO = 3.0
FLOW_TIMEOUT_MS = 60_000

SIDEBAR = '[data-testid="stSidebar"]'
#: the chart is drawn: Streamlit's Vega renders SVG (canvas where configured so) with a size and its marks
CHART_DRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks, '
                                                 + '[data-testid="stVegaLiteChart"] canvas')]
    .some(e => e.getBoundingClientRect().width > 0 && (e.tagName === 'CANVAS' || e.querySelector('path')))"""


def exports(folder: Path) -> list[Path]:
    """The real-format exports, plus an inventory CSV written to ``folder``."""
    inventory = folder / "inventory.csv"
    inventory.write_text(bk.inventory_csv("load_kernel_", kernels=40))
    return [DATA / name for name in EXPORTS] + [inventory]


class Uploads:
    """Which file a round uploads: session i's round r takes export (i + r) mod n. Unless ``same_bytes``, each
    upload is a copy made unique by trailing blank lines (every reader ignores them, as tests/test_load.py
    checks), so no two rounds share the server's content-keyed caches: each upload is parsed, analysed and
    drawn afresh, as different people's profiles are. With ``same_bytes`` every round of an export sends the
    same bytes (after the warm-up, the caches' best case)."""

    def __init__(self, files: list[Path], folder: Path, same_bytes: bool = False) -> None:
        self.files, self.folder, self.same_bytes, self.made = files, folder, same_bytes, 0

    def __call__(self, index: int, r: int) -> Path:
        export = self.files[(index + r) % len(self.files)]
        if self.same_bytes:
            return export
        self.made += 1
        copy = self.folder / f"upload-{self.made}" / export.name
        copy.parent.mkdir()
        copy.write_bytes(export.read_bytes() + b"\n" * self.made)
        return copy


@dataclass
class Session:
    """One browser context: its flows' timings and everything that went wrong in it."""
    index: int
    flows: list[dict] = field(default_factory=list)
    console: list[str] = field(default_factory=list)  # the app's console errors and page errors
    noise: list[str] = field(default_factory=list)  # console errors that are not the app's (see module doc)


async def _idle(page) -> None:
    await page.wait_for_function(bk.NO_STATUS_JS)


async def flow(page, url: str, export: Path) -> dict:
    """One round: open the app, upload, open Roofline; the timings (seconds) and error elements seen."""
    main_h1 = page.locator('[data-testid="stMain"] h1')
    t0 = time.perf_counter()
    await page.goto(url + bk.ENTRY)
    await main_h1.filter(has_text="Overview").wait_for()
    await _idle(page)
    t1 = time.perf_counter()
    await page.locator(f'{SIDEBAR} input[type="file"]').first.set_input_files(str(export))
    await page.locator(f'{SIDEBAR} [data-testid="stCaptionContainer"]').filter(
        has_text=f"{export.name} · ").wait_for()
    await _idle(page)
    await page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Roofline").click()
    await main_h1.filter(has_text="Roofline").wait_for()
    await page.get_by_role("button", name="Download PNG").wait_for()
    await page.wait_for_function(CHART_DRAWN)
    await _idle(page)
    t2 = time.perf_counter()
    app_errors = await page.locator(bk.ERROR_SELECTOR).all_inner_texts()
    return {"export": export.name, "load_s": t1 - t0, "page_s": t2 - t1, "app_errors": app_errors}


async def protocol_flow(url: str, export: Path) -> dict:
    """The same round without a browser (st_protocol): the server's share of the page time."""
    import st_protocol  # websockets: Streamlit's own dependency since its server moved to Starlette

    t0 = time.perf_counter()
    async with st_protocol.Session(url) as st:
        first = await st.rerun()
        t1 = time.perf_counter()
        uploaded = await st.upload(export.name, export.read_bytes())
        roofline = await st.rerun("Roofline")
        t2 = time.perf_counter()
    problems = first.errors + uploaded.errors + roofline.errors
    if not any(f"{export.name}** · " in text for text in uploaded.texts):
        problems.append("the upload is not named in the sidebar")
    if not {"vega_lite_chart", "download_button"} <= roofline.elements.keys():
        problems.append("the Roofline page came without its chart or downloads")
    return {"export": export.name, "load_s": t1 - t0, "page_s": t2 - t1, "app_errors": problems}


async def _round(s: Session, r: int, export: Path, run, progress: bool, on_failure=None) -> None:
    try:
        s.flows.append(await run(export))
        if progress:
            print(f"  session {s.index} round {r}: {export.name} page {s.flows[-1]['page_s']:.2f} s", file=sys.stderr)
    except Exception as e:  # a timeout, a crashed page, a closed connection: the flow did not complete
        s.flows.append({"export": export.name, "failed": f"{type(e).__name__}: {str(e).splitlines()[0]}"})
        if progress:
            print(f"  session {s.index} round {r}: {export.name} FAILED {s.flows[-1]['failed']}", file=sys.stderr)
        if on_failure is not None:
            await on_failure(r)


async def run_session(browser, url: str, index: int, files: Uploads, rounds: int,
                      shots: Path | None = None, progress: bool = False, busy: asyncio.Event | None = None
                      ) -> Session:
    """One visitor: a new browser context (its own cookies and cache, so its own Streamlit sessions) that runs
    ``rounds`` flows, each opening the app afresh (a new Streamlit session, the browser cache now warm).
    Without a browser (None), the same rounds over the websocket protocol, then more (not counted) until
    ``busy`` is set."""
    s = Session(index)
    if browser is None:
        for r in range(rounds):
            await _round(s, r, files(index, r), lambda export: protocol_flow(url, export), progress)
        r = rounds
        while busy is not None and not busy.is_set():  # keep the server loaded until the browsers are done
            filler = await protocol_flow(url, files(index, r))
            s.console += [f"extra round: {e}" for e in filler["app_errors"]]
            r += 1
        return s
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = await context.new_page()
        page.set_default_timeout(FLOW_TIMEOUT_MS)

        def on_console(msg) -> None:
            if msg.type == "error":
                url_ = (msg.location or {}).get("url", "")
                why = bk.console_noise(msg.text, url_)
                (s.noise if why else s.console).append(f"{why + ': ' if why else ''}{msg.text} ({url_})")

        async def screenshot(r: int) -> None:
            if shots is not None:
                await page.screenshot(path=str(shots / f"load-failed-s{index}-r{r}.png"), full_page=True)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: s.console.append(f"page error: {exc}"))
        for r in range(rounds):
            await _round(s, r, files(index, r), lambda export: flow(page, url, export), progress,
                         screenshot)
        if shots is not None and index == 0:
            await page.screenshot(path=str(shots / "load-roofline.png"), full_page=True)
    finally:
        await context.close()
    return s


def _proc_cpu() -> dict[int, tuple[str, float]]:
    """Name and CPU seconds (utime + stime) of this process and each living descendant (Linux /proc; empty
    elsewhere)."""
    if not Path("/proc/self/stat").exists():
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[str, list[str]]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            text = entry.joinpath("stat").read_text()
        except OSError:
            continue
        stats[int(entry.name)] = (text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split())
    children: dict[int, list[int]] = {}
    for pid, (_, rest) in stats.items():
        children.setdefault(int(rest[1]), []).append(pid)
    found, todo = {os.getpid()}, [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return {pid: (stats[pid][0], (int(stats[pid][1][11]) + int(stats[pid][1][12])) / tick)
            for pid in found if pid in stats}


class CpuSampler:
    """Where the CPU goes while sessions run: samples /proc every 0.2 s (renderers come and go with their
    contexts), then sums by kind: the Streamlit server, Chromium, the Playwright driver, this process."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.start = {pid: cpu for pid, (_, cpu) in _proc_cpu().items()}
        self.last: dict[int, float] = {}
        self.kind: dict[int, str] = {}

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.sample()
            await asyncio.sleep(0.2)
        self.sample()

    def sample(self) -> None:
        for pid, (name, cpu) in _proc_cpu().items():
            if self.kind.get(pid, "chromium zygote") == "chromium zygote":  # a renderer starts as a zygote's fork
                self.kind[pid] = self._kind(pid, name)
            self.last[pid] = cpu

    def _kind(self, pid: int, name: str) -> str:
        if pid == self.server_pid:
            return "streamlit server"
        if pid == os.getpid():
            return "load driver (python)"
        if "chrom" in name:
            try:  # Chromium rewrites its children's command lines: NULs may have become spaces
                found = re.search(rb"--type=([a-z-]+)", Path(f"/proc/{pid}/cmdline").read_bytes())
            except OSError:
                found = None
            return f"chromium {found.group(1).decode() if found else 'browser'}"
        return "playwright driver (node)" if name.startswith("node") else f"other ({name})"

    def by_kind(self) -> dict[str, float]:
        kinds: dict[str, float] = {}
        for pid, cpu in self.last.items():
            kind = self.kind[pid]
            kinds[kind] = round(kinds.get(kind, 0.0) + cpu - self.start.get(pid, 0.0), 2)
        kinds["chromium (all)"] = round(sum(v for k, v in kinds.items() if k.startswith("chromium ")), 2)
        return kinds


def _stats(times: list[float]) -> dict:
    if not times:
        return {"n": 0}
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered) + 0.5) - 1))]  # nearest rank
    return {"n": len(times), "median_s": statistics.median(times), "p90_s": p90, "max_s": ordered[-1],
            "min_s": ordered[0]}


def _errors(sessions: list[Session]) -> list[str]:
    out = []
    for s in sessions:
        for i, f in enumerate(s.flows):
            if "failed" in f:
                out.append(f"session {s.index} round {i} ({f['export']}): {f['failed']}")
            out += [f"session {s.index} round {i} ({f['export']}): on the page: {t}" for t in f.get("app_errors", [])]
        out += [f"session {s.index}: console: {c}" for c in s.console]
    return out


async def measure(server: bk.Server, sessions: int = 8, rounds: int = 3, baseline_sessions: int = 3,
                  browsers: int | None = None, shots: Path | None = None, progress: bool = False,
                  same_bytes: bool = False) -> dict:
    """Warm-up, single-session baseline, then ``sessions`` at once; the numbers and the verdict.

    ``browsers``: how many of the sessions Chromium drives (default: all, the criterion); the others speak the
    websocket protocol (st_protocol), which loads the server as a browser does but costs this machine almost
    nothing, and go on (uncounted) until the browsers are done. The baseline and the judged page times are the
    browsers' (the protocol's when there are none)."""
    browsers = sessions if browsers is None else min(browsers, sessions)
    async with contextlib.AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        originals = exports(folder)
        files = Uploads(originals, folder, same_bytes)
        browser = None
        if browsers:
            from playwright.async_api import async_playwright

            p = await stack.enter_async_context(async_playwright())
            browser = await p.chromium.launch(executable_path=str(bk.CHROMIUM), args=bk.ARGS)
            stack.push_async_callback(browser.close)
        # warm-up, not counted: every export through the server once (over the protocol: it is the server that
        # warms; a browser context's cache is its own anyway), then one browser round (Chromium's own start)
        warm = [await run_session(None, server.url, 0, files, len(originals))]
        if browser is not None:
            warm.append(await run_session(browser, server.url, 0, files, 1))
        single = [await run_session(browser, server.url, i, files, rounds, shots, progress)
                  for i in range(baseline_sessions)]
        sampler, stop = CpuSampler(server.pid), asyncio.Event()
        sampling = asyncio.create_task(sampler.run(stop))
        t0 = time.perf_counter()
        busy = asyncio.Event() if 0 < browsers < sessions else None

        async def browser_session(i: int) -> Session:
            return await run_session(browser, server.url, i, files, rounds, shots, progress)

        tasks = [asyncio.create_task(browser_session(i)) for i in range(browsers)]
        tasks += [asyncio.create_task(run_session(None, server.url, i, files, rounds, shots, progress, busy))
                  for i in range(browsers, sessions)]
        if busy is not None:
            await asyncio.gather(*tasks[:browsers])
            busy.set()
        loaded = await asyncio.gather(*tasks)
        wall = time.perf_counter() - t0
        stop.set()
        await sampling
    judged = loaded[:browsers] or loaded
    base_pages = [f["page_s"] for s in single for f in s.flows if "page_s" in f]
    load_pages = [f["page_s"] for s in judged for f in s.flows if "page_s" in f]
    completed = sum("page_s" in f for s in loaded for f in s.flows)
    result = {
        "sessions": sessions, "browsers": browsers, "rounds": rounds, "baseline_sessions": baseline_sessions,
        "cores": os.cpu_count(), "exports": [f.name for f in originals], "same_bytes": same_bytes,
        "single": _stats(base_pages), "under_load": _stats(load_pages),
        "under_load_protocol": _stats([f["page_s"] for s in loaded[browsers:] for f in s.flows if "page_s" in f]),
        "single_load_s": _stats([f["load_s"] for s in single for f in s.flows if "load_s" in f]),
        "under_load_load_s": _stats([f["load_s"] for s in judged for f in s.flows if "load_s" in f]),
        "load_wall_s": wall,
        "cpu_s_under_load": sampler.by_kind(),
        "errors": _errors([*warm, *single, *loaded]),
        "noise": sorted({n for s in [*warm, *single, *loaded] for n in s.noise}),
        "flows": {"warm_up": [s.flows for s in warm], "single": [s.flows for s in single],
                  "under_load": [s.flows for s in loaded]},
    }
    ratio = (result["under_load"]["median_s"] / result["single"]["median_s"]
             if base_pages and load_pages else float("inf"))
    result["ratio"] = ratio
    result["completed"] = f"{completed}/{sessions * rounds}"
    result["ok"] = (completed == sessions * rounds and len(base_pages) == baseline_sessions * rounds
                    and not result["errors"] and ratio <= MAX_RATIO)
    return result


def table(r: dict) -> str:
    s, u = r["single"], r["under_load"]
    kind = ("all in Chromium" if r["browsers"] == r["sessions"] else "none in a browser (protocol)"
            if not r["browsers"] else f"{r['browsers']} in Chromium, {r['sessions'] - r['browsers']} over the protocol")

    def cell(d: dict, k: str) -> str:
        return f"{d[k]:.2f}" if k in d else "–"

    lines = [
        f"{r['sessions']} sessions ({kind}) × {r['rounds']} rounds, {r['cores']} cores"
        + (f", server {' '.join(r['server_args'])}" if r.get("server_args") else ""),
        f"exports: {', '.join(r['exports'])}"
        + (" (the same bytes every round)" if r["same_bytes"] else " (each upload's bytes unique)"),
        f"{'page time (s)':<28}{'n':>4}{'median':>9}{'p90':>8}{'max':>8}",
        f"{'single session':<28}{s['n']:>4}{cell(s, 'median_s'):>9}{cell(s, 'p90_s'):>8}{cell(s, 'max_s'):>8}",
        f"{'under load':<28}{u['n']:>4}{cell(u, 'median_s'):>9}{cell(u, 'p90_s'):>8}{cell(u, 'max_s'):>8}",
    ]
    p = r["under_load_protocol"]
    if p["n"] and r["browsers"]:
        lines.append(f"{'  (protocol sessions)':<28}{p['n']:>4}{cell(p, 'median_s'):>9}{cell(p, 'p90_s'):>8}"
                     f"{cell(p, 'max_s'):>8}")
    cpu = sorted(r["cpu_s_under_load"].items(), key=lambda kv: -kv[1])
    lines += [
        f"load time (open → idle) median: single {cell(r['single_load_s'], 'median_s')} s, "
        f"under load {cell(r['under_load_load_s'], 'median_s')} s",
        f"ratio (median under load / single): {r['ratio']:.2f}× (limit {MAX_RATIO:.0f}×); completed "
        f"{r['completed']}; errors: {len(r['errors'])}",
        f"CPU seconds under load ({r['load_wall_s']:.1f} s × {r['cores']} cores = "
        f"{r['load_wall_s'] * (r['cores'] or 1):.1f} available): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu),
    ]
    lines += [f"  error: {e}" for e in r["errors"][:20]]
    if r["noise"]:
        lines.append(f"not the app's (ignored): {len(r['noise'])} kind(s), e.g. {r['noise'][0]}")
    lines.append("PASS" if r["ok"] else "FAIL")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline-sessions", type=int, default=3,
                    help="single sessions run one after the other, each as one loaded session (its rounds)")
    ap.add_argument("--browsers", type=int, default=None,
                    help="how many sessions Chromium drives (default: all, the criterion); the rest speak the "
                         "websocket protocol without a browser (benchmarks/st_protocol.py): 0 measures the server "
                         "alone, 1 one browser's page time with the server as loaded as by all the sessions")
    ap.add_argument("--same-bytes", action="store_true",
                    help="upload the very same bytes every round (the server's content caches then answer); "
                         "default: each upload unique, as different people's profiles are")
    ap.add_argument("--server-arg", action="append", default=[], metavar="OPTION",
                    help="a `streamlit run` option for the server, e.g. --server-arg=--runner.postScriptGC=false "
                         "(repeatable): to try a setting without editing the app")
    ap.add_argument("--timeout", type=float, default=600, help="stop everything after this many seconds")
    ap.add_argument("--quiet", action="store_true", help="no line per flow on stderr")
    args = ap.parse_args()
    if args.browsers != 0 and not bk.CHROMIUM.exists():
        print(f"{bk.CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    print("warm-up, single session, then all sessions at once ...", file=sys.stderr)
    with bk.streamlit_server(OUT / "load-streamlit.log", args=args.server_arg) as server:
        result = asyncio.run(asyncio.wait_for(
            measure(server, args.sessions, args.rounds, args.baseline_sessions, args.browsers,
                    progress=not args.quiet, same_bytes=args.same_bytes), args.timeout))
    result["server_args"] = args.server_arg
    (OUT / "load.json").write_text(json.dumps(result, indent=1))
    print(table(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
