"""What the browser suites share: the Chromium rule, a `streamlit run` server, and page helpers.

Every browser test (tests/test_browser*.py, tests/test_isolation.py, tests/test_load.py) and
benchmarks/load_test.py use these. Importable without pytest (the benchmark runs outside it).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")  # Debian's Chromium; never `playwright install`
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 30_000

try:  # Playwright's `expect` waits 5 s by default: on a loaded 2-core machine a rerun after a save can take longer
    from playwright.sync_api import expect as _expect

    _expect.set_options(timeout=TIMEOUT_MS)
except ImportError:  # the benchmark and a machine without Playwright import this module too
    pass

#: Streamlit's own marks for a failed run: an uncaught exception, or an ``st.error``
ERROR_SELECTOR = '[data-testid="stException"], [data-testid="stAlertContentError"]'
#: true when no script run is in progress (Streamlit shows its status widget while one is, or while reconnecting)
NO_STATUS_JS = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
#: where a fresh session opens the app, as a person does: the root URL (with Streamlit 1.67 its first run gave the
#: sidebar's widgets other ids than every later run, so the first upload was dropped; the app now switches page
#: once before any widget exists). Not /overview: the default page has no path of its own, and only the first
#: session of a fresh server (still in the pages/ folder mode) finds it; later ones get "Page not found".
ENTRY = "/"


def require_chromium() -> None:
    """Skip the calling test module where Chromium or Playwright is missing; fail instead under
    ROOFCORE_REQUIRE_BROWSER=1 (CI). Call at module level."""
    import pytest

    strict = os.environ.get("ROOFCORE_REQUIRE_BROWSER") == "1"
    if not CHROMIUM.exists():
        if strict:
            pytest.fail(f"{CHROMIUM} is missing and ROOFCORE_REQUIRE_BROWSER=1: install Debian's chromium "
                        "(apt-get install chromium); never `playwright install`.", pytrace=False)
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium); set ROOFCORE_REQUIRE_BROWSER=1 to fail "
                    "instead of skipping.", allow_module_level=True)
    try:
        import playwright  # noqa: F401
    except ImportError:
        if strict:
            pytest.fail("playwright is not installed and ROOFCORE_REQUIRE_BROWSER=1 (pip install -e '.[dev]')",
                        pytrace=False)
        pytest.skip("playwright is not installed", allow_module_level=True)


def console_noise(text: str, url: str) -> str | None:
    """Why a browser console error is not the app's (None when it is). Two kinds are Streamlit's, not the app's:
    a deep link's frontend first probes ``/<page>/_stcore/health`` and ``host-config`` (404) to find the base
    path; and a page icon given as ``:material/...:`` is fetched from Google's font server, which a machine
    without internet cannot resolve."""
    if not text.startswith("Failed to load resource"):
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", None):
        return f"offline: {parts.hostname}"
    if re.fullmatch(r"/[^/]+(/[^/]+)*/_stcore/(health|host-config)", parts.path):
        return "base-path probe"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


@contextlib.contextmanager
def streamlit_server(log: Path, *, startup_s: float = 60, args: Sequence[str] = (),
                     script: str = "streamlit_app.py", cwd: Path = ROOT) -> Iterator[Server]:
    """`streamlit run streamlit_app.py` (or ``script``) in ``cwd`` (default: this checkout) on a free loopback
    port, its output in ``log``; stopped on exit.

    No file watcher (other work in the tree must not rerun the sessions under test) and no usage statistics
    (the browser would try to reach the network, and log the failure as a console error). ``args``: more
    `streamlit run` options (``--runner.postScriptGC=false``), to try a setting without editing the app."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false", *args],
            cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup_s
            while True:
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start (see {log})")
                time.sleep(0.2)
            yield Server(url, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def inventory_csv(prefix: str, kernels: int = 4) -> str:
    """An inventory whose kernel names all start with ``prefix`` (so another session's can be told apart);
    every kernel has a measured time, so the chart caption stops saying kernels sit on their roof."""
    rows = ["name,count,flops,bytes,time_s,precision"]
    for i in range(kernels):
        rows.append(f"{prefix}{i},{i + 1},{(i + 1) * 2.0e12:.3e},{(kernels - i) * 1.5e9:.3e},{(i + 1) * 4e-3:.4g},bf16")
    return "\n".join(rows) + "\n"


def settle(page) -> None:
    """Wait until the app has finished its run (Streamlit shows a status widget while running)."""
    page.wait_for_timeout(300)
    page.wait_for_function(NO_STATUS_JS, timeout=TIMEOUT_MS, polling=100)
    page.wait_for_timeout(300)


def is_timeout(e: BaseException) -> bool:
    """Whether ``e`` is Playwright's TimeoutError, told by its class name: this module imports without Playwright."""
    return "Timeout" in type(e).__name__


def navigate(page, name: str, *, exact: bool = False, tries: int = 3) -> None:
    """Click the sidebar's link to page ``name`` and wait for its heading. On a loaded 2-core machine (CI runs
    three servers and three browsers at once) a click that lands while the previous run is being torn down can
    be dropped, and a page can take longer than one timeout to draw: click again, as a person would, up to
    ``tries`` times, each wait one timeout long."""
    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=name, exact=exact)
    heading = page.locator('[data-testid="stMain"] h1').filter(
        has_text=re.compile(f"^{re.escape(name)}$") if exact else name)
    for attempt in range(tries):
        link.click()
        try:
            heading.wait_for(timeout=TIMEOUT_MS)
            return
        except Exception as e:
            if attempt == tries - 1 or not is_timeout(e):
                raise


def single(locator, timeout_ms: int = TIMEOUT_MS):
    """``locator`` once it matches at most one element: while a rerun is drawn Streamlit keeps the previous run's
    elements on screen (faded) beside the new ones, so a form or a table can be there twice for a moment."""
    deadline = time.monotonic() + timeout_ms / 1000
    while locator.count() > 1 and time.monotonic() < deadline:
        locator.page.wait_for_timeout(100)
    return locator


def open_page(page, name: str) -> None:
    navigate(page, name)
    settle(page)


def roofline_chart(page):
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    chart.locator("canvas, svg").first.wait_for()
    return chart


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
