"""The History page on a project of many runs and on runs of very many kernels, under Streamlit's AppTest (issue 23,
point 12). Measures, in a fresh SQLite database:

* **runs listed**: a project of ``--runs`` runs (default 620; one saved, the rest copied with plain INSERTs):
  how many ``RunStore.list`` gives, what the project picker says, and how many rows the runs table shows over
  all its pages;
* **parses while moving the window**: ``--window-runs`` runs (default 60), each with its own file, and the
  "Last runs" slider moved to 50, 2, 25, 50, 37, 10 and 50: how many times a run's files are parsed
  (``read_many``) and analysed (``evaluate``) in all, and the page's time for a first visit and a move;
* **options sent to the kernel picker**: two runs of ``--kernels`` kernels each (default 1,000,000, distinct
  names): how many options the "Kernels charted" picker sends, and the page's time (cold, then a rerun).

Run: ``python benchmarks/bench_history.py [--runs N] [--window-runs N] [--kernels N]``; results print and go to
benchmarks/out/history.json. It runs the checkout it lies in, so the same script measures an older one too (copy
it, bench_app.py and tests/runclones.py there).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).parent / "out"
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's app and roofcore; tests/runclones

from bench_app import patch_apptest_navigation  # noqa: E402
from runclones import clone_runs  # noqa: E402  (tests/: bulk copies of one saved run)


def inventory(prefix: str, kernels: int = 2, scale: float = 1.0) -> bytes:
    """``kernels`` kernels named ``prefix`` + a number, times scaled by ``scale``."""
    rows = [f"{prefix}{i:07d},1,{(i + 1) * 1e9:.6g},{(kernels - i) * 1e6:.6g},{(i + 1) * 1e-5 * scale:.6g},bf16"
            for i in range(kernels)]
    return ("name,count,flops,bytes,time_s,precision\n" + "\n".join(rows) + "\n").encode()


def fresh_app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=900)
    at.run()
    return at


def timed_run(at) -> float:
    t0 = time.perf_counter()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return time.perf_counter() - t0


def history(at) -> float:
    at.switch_page("pages/history.py")
    return timed_run(at)


def select_project(at, project: str) -> float:
    box = at.selectbox(key="hist_project")
    box.set_value(project)
    return timed_run(at)


def widget(at, kind: str, key: str):
    try:
        return getattr(at, kind)(key=key)
    except KeyError:
        return None


def runs_listed(store, n: int) -> dict:
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    first = store.save([(inventory("many_"), "w.csv")], name="run first", project="big", created_at=t0)
    clone_runs(store, first.id, n - 1, project="big", start=t0 + dt.timedelta(hours=1), name="run {i:05d}")
    at = fresh_app()
    page_s = history(at)
    page_s = select_project(at, "big") if at.selectbox(key="hist_project").value != "big" else page_s
    picker = next(o for o in at.selectbox(key="hist_project").options if o.startswith("big · "))
    names = list(at.dataframe[0].value["Name"])
    pages = 1
    if widget(at, "selectbox", "hist_page_size") is not None:  # paged: walk every page at the largest size
        at.selectbox(key="hist_page_size").set_value(max(int(o) for o in at.selectbox(key="hist_page_size").options))
        timed_run(at)
        names, number = list(at.dataframe[0].value["Name"]), 1
        while number < at.number_input(key="hist_page").max:
            number += 1
            at.number_input(key="hist_page").set_value(number)
            timed_run(at)
            names += list(at.dataframe[0].value["Name"])
        pages = number
    return {"runs_saved": n, "store_list_default": len(store.list(project="big")), "picker": picker,
            "table_rows_all_pages": len(names), "distinct_rows": len(set(names)), "pages": pages,
            "first_visit_s": round(page_s, 3)}


def window_parses(store, n: int) -> dict:
    import app.runs as app_runs
    import roofcore.store.history as store_history

    counts = {"parse": 0, "evaluate": 0}

    def counting(name, fn):
        def wrapped(*args, **kwargs):
            counts[name] += 1
            return fn(*args, **kwargs)
        return wrapped

    app_runs.read_many = counting("parse", app_runs.read_many)
    store_history.evaluate = counting("evaluate", store_history.evaluate)
    t0 = dt.datetime(2025, 2, 1, tzinfo=dt.UTC)
    first = store.save([(inventory("win_"), "w.csv")], name="first", project="win", created_at=t0)
    clone_runs(store, first.id, n - 1, project="win", start=t0 + dt.timedelta(hours=1),
               content=lambda i: inventory("win_", scale=1.0 + (i + 1) / 100))
    at = fresh_app()
    history(at)
    counts.update(parse=0, evaluate=0)  # count from the project's first visit (its default window: 10 runs)
    first_visit = select_project(at, "win")
    moves, after_first_50 = [], None
    for last in (50, 2, 25, 50, 37, 10, 50):
        at.slider(key="hist_last").set_value(last)
        moves.append(timed_run(at))
        if after_first_50 is None and last == 50:
            after_first_50 = dict(counts)
    return {"runs": n, "slider_moves": [50, 2, 25, 50, 37, 10, 50], "parses": counts["parse"],
            "analyses": counts["evaluate"], "after_first_move_to_50": after_first_50,
            "parses_beyond_first_visits": counts["parse"] - 50, "first_visit_s": round(first_visit, 3),
            "move_to_50_s": round(moves[0], 3), "later_moves_median_s": round(statistics.median(moves[1:]), 3)}


def kernel_picker(store, kernels: int) -> dict:
    t0 = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    t = time.perf_counter()
    for i, scale in enumerate([1.0, 2.0]):
        store.save([(inventory("k_", kernels, scale), "w.csv")], name=f"wide {i}", project="wide",
                   created_at=t0 + dt.timedelta(days=i))
    save_s = time.perf_counter() - t
    at = fresh_app()
    history(at)
    cold = select_project(at, "wide")
    options = len(at.multiselect(key="hist_kernels").options)
    rerun = timed_run(at)
    out = {"kernels_per_run": kernels, "picker_options": options, "save_two_runs_s": round(save_s, 3),
           "first_visit_s": round(cold, 3), "rerun_s": round(rerun, 3)}
    if widget(at, "text_input", "hist_kernels_find") is not None:
        at.text_input(key="hist_kernels_find").set_value("k_0000042")
        out["search_s"] = round(timed_run(at), 3)
        out["options_after_search"] = len(at.multiselect(key="hist_kernels").options)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=620)
    ap.add_argument("--window-runs", type=int, default=60)
    ap.add_argument("--kernels", type=int, default=1_000_000, help="kernels per run for the picker (0: skip)")
    ap.add_argument("--out", default=str(OUT / "history.json"))
    args = ap.parse_args()
    patch_apptest_navigation()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'runs.sqlite3'}"
        os.environ["ROOFCORE_DB_URL"] = url
        from roofcore.store import RunStore

        store = RunStore(url)
        result = {"runs_listed": runs_listed(store, args.runs)}
        print(json.dumps(result["runs_listed"]), flush=True)
        result["window"] = window_parses(store, args.window_runs)
        print(json.dumps(result["window"]), flush=True)
        if args.kernels:
            result["kernel_picker"] = kernel_picker(store, args.kernels)
            print(json.dumps(result["kernel_picker"]), flush=True)
        store.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
