"""Fixtures shared by the AppTest suites."""

import functools
import os
import sys
from pathlib import Path

import pytest

# PYTHONDONTWRITEBYTECODE=1 (this machine and CI set it) made every test process compile its modules again: each
# xdist worker rewrote and compiled the 100 test files (20 s of CPU each) and every child the tests start (a
# `roofline` command, a `streamlit run` server, a forked import check) compiled roofcore from source. The suite
# keeps its bytecode (in __pycache__, ignored by git), for itself and for its children.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# the app's own package (app/, beside streamlit_app.py) is not installed: tests import it from the repository root,
# as `streamlit run streamlit_app.py` does
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


# Property and fuzz tests draw the same examples on every CI run (`.ci/run` sets CI=true), as Hypothesis 6.12x and
# later do by themselves when they see CI: a run on the oldest supported Hypothesis (.ci/lower_bounds) would otherwise
# draw new inputs each time, so a stop could fail on an example no earlier run had met. Outside CI each run draws
# anew, and ROOFCORE_FUZZ_LONG=1 runs the long fuzz, to find such examples before CI.
if os.environ.get("CI", "").lower() not in ("", "0", "false"):
    from hypothesis import HealthCheck, settings

    # no deadline or too-slow check either: a shared 2-core machine makes any time limit a random failure
    settings.register_profile("roofcore-ci", derandomize=True, database=None, print_blob=True, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("roofcore-ci")


def _scan_installed_components_once() -> None:
    """Every new AppTest scans the metadata of every installed distribution for Streamlit v2 component manifests
    (streamlit.components.v2.manifest_scanner, 0.14-0.26 s of CPU each time on a 2-core machine), and the suite
    creates hundreds of them. Nothing is installed while the tests run, so the first scan's answer is the answer:
    keep it for the process. A server (`streamlit run`) scans once at start, as before."""
    from streamlit.components.v2 import manifest_scanner

    scan = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(scan(max_workers))


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: twice the usable cores on a small machine (at most 8 workers). A third of the suite's time is
    waiting — on a `streamlit run` server, a browser, a database, a child process — which a second worker per core
    fills; beyond four cores, one worker each."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores * 2 if cores <= 4 else cores


#: the files that take longest (their own server, browser or every sample), run first: with a whole file per
#: worker, one of them started last would run on alone while the other workers sit idle
SLOW_FIRST = ("test_browser_samples.py", "test_browser_samples_b.py", "test_browser_samples_c.py",
              "test_samples_app.py", "test_samples.py", "test_load.py", "test_isolation.py", "test_store.py",
              "test_fuzz.py", "test_report.py", "test_browser.py", "test_perturb.py", "test_browser_share.py",
              "test_meta.py", "test_history_page.py")


def pytest_collection_modifyitems(config, items):
    if "streamlit.testing.v1" in sys.modules:  # a collected file runs AppTests (no Streamlit import for the others)
        _scan_installed_components_once()
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file keeps its own order


@pytest.fixture(scope="module")
def navigation_only():
    """Run streamlit_app.py on every AppTest run, as a server does.

    AppTest (1.67) resets ``PagesManager.uses_pages_directory`` before each run; with a folder named
    ``pages/`` next to the app that routes every rerun through the legacy pages-directory mode, which runs
    the page file alone (no sidebar, no uploads). A server leaves that mode at the app's first
    ``st.navigation`` call and stays out; this does the same for AppTest.
    """
    from streamlit.runtime import pages_manager
    from streamlit.testing.v1 import app_test

    class NavigationOnly(pages_manager.PagesManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pages_manager.PagesManager.uses_pages_directory = False

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(app_test, "PagesManager", NavigationOnly)
        yield


# ------------------------------------------------------------------------------------ the run store's databases


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of the module's own (tests/pgserver.py), for the run store's tests."""
    import pgserver

    with pgserver.postgres_server() as pg:
        yield pg


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """An empty run database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    return request.getfixturevalue("postgres").new_database()


@pytest.fixture
def store(url):
    """A RunStore open on an empty database of each kind."""
    from roofcore.store import RunStore

    s = RunStore(url)
    yield s
    s.close()
