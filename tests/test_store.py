"""Saved runs (roofcore.store) against SQLite and a real PostgreSQL server (issue #18): migrations from an empty
database, save / list / open by id / delete, who sees what, history, nothing lost or mixed when eight sessions
save at once, and no password in any message or log line.

PostgreSQL is Debian's, started by tests/pgserver.py on a temporary data directory on 127.0.0.1; it skips where
PostgreSQL is absent unless ROOFCORE_REQUIRE_POSTGRES=1 (CI).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import multiprocessing
import sys
import threading
import types
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the team extra (pip install -e '.[dev]')")

import pgserver
from sqlalchemy import func, inspect, select, update

from roofcore import InputError, LimitError, load_catalogs
from roofcore.store import (
    EVERYONE,
    NotAllowed,
    Owner,
    RunNotFound,
    RunStore,
    StoreError,
    Viewer,
    database_url,
    default_path,
    migrate,
    redact,
)
from roofcore.store.history import kernel_history, project_history
from roofcore.store.schema import Base, FileRow, RunRow

ISSUER = "https://login.example.com"
ALICE = Viewer(Owner(ISSUER, "alice-sub", "alice@example.com"), login=True, email="alice@example.com")
BOB = Viewer(Owner(ISSUER, "bob-sub", "bob@example.com"), login=True, email="bob@example.com")


def user(i: int) -> Owner:
    return Owner(ISSUER, f"user{i}", f"user{i}@example.com")


def inventory(prefix: str, kernels: int = 3, scale: float = 1.0) -> bytes:
    """Our own small inventory: kernel names start with ``prefix``; times scaled by ``scale``."""
    rows = ["name,count,flops,bytes,time_s,precision"]
    for i in range(kernels):
        rows.append(f"{prefix}{i},1,{(i + 1) * 2e12:.6e},{(kernels - i) * 1.5e9:.6e},{(i + 1) * 4e-3 * scale:.9e},bf16")
    return ("\n".join(rows) + "\n").encode()


# ----------------------------------------------------------------------------------------------- databases


# ---------------------------------------------------------------------------------------------- migrations


def test_an_empty_database_is_migrated_to_head_on_open(url):
    from sqlalchemy import create_engine

    probe = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    assert migrate.current(probe) is None and not inspect(probe).get_table_names()
    s = RunStore(url)
    assert migrate.current(s.engine) == migrate.head() == "0002"
    assert {"runs", "run_files", "alembic_version"} <= set(inspect(probe).get_table_names())
    RunStore(url).close()  # opening again changes nothing
    assert migrate.current(s.engine) == "0002"
    migrate.downgrade(s.engine, "base")  # and the migration can be undone
    assert set(inspect(s.engine).get_table_names()) <= {"alembic_version"}
    migrate.upgrade(s.engine)
    assert migrate.current(s.engine) == "0002"
    s.close()
    probe.dispose()


def test_the_models_match_the_migrated_schema(store):
    """The SQLAlchemy models and the Alembic scripts describe the same tables (autogenerate finds nothing)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


# ------------------------------------------------------------------------------------------------ save, open


def test_save_then_open_gives_the_files_back_whole_and_compressed(store):
    first, second = inventory("rt_a_", 40), inventory("rt_b_", 5)
    info = store.save([(first, "a.csv"), (second, "b.csv")], name="nightly 42", project="llm", tags="ci, h100,ci",
                      devices=["h100-sxm"], options={"combine": False, "achievable": True, "page": "roofline"})
    assert len(info.id) == 22 and info.link == f"?run={info.id}"
    assert info.tags == ("ci", "h100") and info.kernels == 45 and info.formats == ("inventory-csv",)
    assert info.size == len(first) + len(second) and info.stored < info.size  # gzip-compressed
    run = store.open(info.id)
    assert run.files == ((first, "a.csv"), (second, "b.csv"))
    assert [f.sha256 for f in run.info.files] == [hashlib.sha256(first).hexdigest(),
                                                   hashlib.sha256(second).hexdigest()]
    assert run.info.devices == ("h100-sxm",) and run.info.options["page"] == "roofline"
    assert run.info.options["achievable"] is True and run.info.project == "llm" and run.info.name == "nightly 42"
    w = run.workload()  # read again from the stored files
    assert len(w) == 45 and set(w.frame["name"]) >= {"rt_a_0", "rt_b_4"}
    with store.engine.connect() as conn:  # stored as gzip: the bytes in the database are not the file's
        blob = conn.execute(select(FileRow.data).where(FileRow.run_id == info.id, FileRow.position == 0)).scalar()
    assert bytes(blob) != first and gzip.decompress(bytes(blob)) == first


def test_a_gzip_upload_is_stored_as_it_came(store):
    data = gzip.compress(inventory("gz_"))
    info = store.save([(data, "trace.csv.gz")], name="gz")
    assert info.stored == info.size == len(data)
    assert store.open(info.id).files == ((data, "trace.csv.gz"),)


def test_a_run_whose_files_do_not_parse_is_not_saved(store):
    good = (inventory("ok_"), "good.csv")
    bad = (b"name,count,flops\nk,1,not-a-number\n", "bad.csv")
    with pytest.raises(InputError) as e:
        store.save([good, bad], name="half")
    assert "bad.csv" in str(e.value)
    with pytest.raises(InputError):
        store.save([(b"\x89PNG\r\n\x1a\n....", "plot.png")], name="png")
    assert store.list() == []
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(FileRow)).scalar() == 0


def test_a_run_with_its_api_trace_is_saved_and_read_back_as_uploaded(store):
    """A rocprofv3 run's kernel trace uploaded with its HIP API trace reads in the app (the API trace a note): it
    saves, and reads back the same, rather than "Not saved: this is a rocprofv3 HIP API trace"."""
    data = Path(__file__).parent / "data"
    files = [((data / "rocprof" / "kernel_trace_v3.csv").read_bytes(), "238_kernel_trace.csv"),
             ((data / "api_traces" / "238_hip_api_trace.csv").read_bytes(), "238_hip_api_trace.csv")]
    info = store.save(files, name="sys-trace")
    w = store.open(info.id).workload()
    assert w.formats == ("rocprof-v3-trace",) and info.kernels == len(w) > 0
    assert any(m.startswith("Left out 1 file(s) of the upload") for m in w.warnings)


def test_files_beyond_the_upload_limits_are_not_saved(store, monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_INPUT_MB", "0.0001")  # 100 bytes
    with pytest.raises(LimitError, match="ROOFCORE_MAX_INPUT_MB"):
        store.save([(inventory("big_", 20), "big.csv")], name="too big")
    assert store.list() == []


def test_bad_fields_are_refused_with_a_message(store):
    data = [(inventory("f_"), "f.csv")]
    with pytest.raises(InputError, match="save: name: expected some text, found nothing"):
        store.save(data, name="  ")
    with pytest.raises(InputError, match="save: visibility: expected private or project, found 'public'"):
        store.save(data, name="x", visibility="public")
    with pytest.raises(InputError, match="a private run needs an owner"):
        store.save(data, name="x", visibility="private")
    with pytest.raises(InputError, match="no files to save"):
        store.save([], name="x")


def test_list_is_newest_first_and_projects_count_runs(store):
    import datetime as dt

    t0 = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    ids = [store.save([(inventory(f"l{i}_"), "w.csv")], name=f"run {i}", project="p" if i < 3 else "q",
                      created_at=t0 + dt.timedelta(days=i)).id for i in range(4)]
    assert [r.id for r in store.list()] == ids[::-1]
    assert [r.name for r in store.list(project="p")] == ["run 2", "run 1", "run 0"]
    assert store.projects() == {"p": 3, "q": 1}
    assert store.list(project="p")[0].files[0].name == "w.csv"
    assert store.list()[0].created_at == t0 + dt.timedelta(days=3)


def test_history_lists_every_run_in_pages_past_500(store):
    """No silent cap: 620 runs are listed whole and page by page, and the count agrees with the projects' count
    for every viewer (issue 23, point 12)."""
    import datetime as dt

    from runclones import clone_runs

    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    first = store.save([(inventory("pg_"), "w.csv")], name="run 0", project="big", created_at=t0 - dt.timedelta(1))
    clone_runs(store, first.id, 619, project="big", start=t0, name="copy {i}")
    for i in range(3):
        store.save([(inventory(f"bob{i}_"), "b.csv")], name=f"bob {i}", project="big", owner=BOB.user,
                   visibility="private", created_at=t0 + dt.timedelta(days=30 + i))
    every = store.list(project="big")
    assert len(every) == 623 == store.count(project="big") == store.projects()["big"]
    assert all(r.files and r.files[0].name == "w.csv" for r in every[3:])  # files past the first 500 too
    assert [r.created_at for r in every] == sorted((r.created_at for r in every), reverse=True)
    for viewer, n in ((ALICE, 620), (BOB, 623)):
        pages = [store.list(viewer, project="big", limit=50, offset=o) for o in range(0, 700, 50)]
        ids = [r.id for page in pages for r in page]
        assert len(ids) == len(set(ids)) == n == store.count(viewer, project="big") == store.projects(viewer)["big"]
        assert ids == [r.id for r in store.list(viewer, project="big")]
        assert [len(p) for p in pages][-3:] == [50, n - 600, 0]
    assert [r.name for r in store.list(ALICE, project="big", limit=2)] == ["copy 618", "copy 617"]
    assert store.count(project="none") == 0 and store.list(project="none", limit=5, offset=5) == []
    with pytest.raises(ValueError, match="must not be negative"):
        store.list(offset=-1)


def test_delete_removes_the_run_and_its_files(store):
    keep = store.save([(inventory("keep_"), "k.csv")], name="keep")
    gone = store.save([(inventory("gone_"), "g.csv"), (inventory("gone2_"), "g2.csv")], name="gone")
    store.delete(gone.id)
    with pytest.raises(RunNotFound):
        store.open(gone.id)
    with store.engine.connect() as conn:
        left = conn.execute(select(FileRow.run_id)).scalars().all()
    assert left == [keep.id]
    with pytest.raises(RunNotFound):
        store.delete(gone.id)


def test_a_damaged_file_is_reported_not_returned(store):
    info = store.save([(inventory("dmg_"), "d.csv")], name="d")
    with store.engine.begin() as conn:
        conn.execute(update(FileRow).where(FileRow.run_id == info.id).values(data=gzip.compress(b"name\nx\n")))
    with pytest.raises(StoreError, match="is damaged"):
        store.open(info.id)


# ---------------------------------------------------------------------------------------------- who sees what


def test_permission_matrix(store):
    data = [(inventory("perm_"), "p.csv")]
    a_private = store.save(data, name="a private", owner=ALICE.user, visibility="private")
    a_shared = store.save(data, name="a shared", owner=ALICE.user, visibility="project")
    b_private = store.save(data, name="b private", owner=BOB.user, visibility="private")
    pipeline = store.save(data, name="from CI")  # no owner: a pipeline's run, shared
    every = {a_private.id, a_shared.id, b_private.id, pipeline.id}
    assert {r.id for r in store.list(ALICE)} == {a_private.id, a_shared.id, pipeline.id}
    assert {r.id for r in store.list(BOB)} == {a_shared.id, b_private.id, pipeline.id}
    assert {r.id for r in store.list(EVERYONE)} == every  # no login: everything, for everyone
    assert store.projects(BOB) == {"default": 3}
    # B opens A's shared run by its id, never A's private one: the same message as a run that does not exist
    assert store.open(a_shared.id, BOB).info.name == "a shared"
    with pytest.raises(RunNotFound) as hidden:
        store.open(a_private.id, BOB)
    with pytest.raises(RunNotFound) as missing:
        store.open("A" * 22, BOB)
    assert str(hidden.value).replace(a_private.id, "ID") == str(missing.value).replace("A" * 22, "ID")
    assert store.open(a_private.id, ALICE).info.name == "a private"
    assert store.open(a_private.id, EVERYONE).info.name == "a private"
    # deleting: only one's own (and ownerless) runs; another's private run is not even there
    with pytest.raises(NotAllowed, match="only its owner can delete it"):
        store.delete(a_shared.id, BOB)
    with pytest.raises(RunNotFound):
        store.delete(a_private.id, BOB)
    assert {r.id for r in store.list(EVERYONE)} == every
    store.delete(a_private.id, ALICE)
    store.delete(pipeline.id, BOB)
    assert {r.id for r in store.list(EVERYONE)} == {a_shared.id, b_private.id}


def test_ids_are_unguessable_and_odd_ids_are_not_found(store):
    ids = {store.save([(inventory(f"g{i}_"), "g.csv")], name=f"g{i}").id for i in range(5)}
    assert len(ids) == 5 and all(len(i) == 22 for i in ids)  # 128 random bits each (secrets.token_urlsafe(16))
    for odd in ["", "1", "../etc/passwd", "x' OR '1'='1", "A" * 65, None, 42]:
        with pytest.raises(RunNotFound, match="no saved run in this link that you can open"):
            store.open(odd)


# ---------------------------------------------------------------------------------------------------- history


def test_history_recomputes_every_run_and_puts_the_biggest_movers_first(store):
    import datetime as dt

    from roofhelpers import make_hw

    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    for i, (scale_0, scale_2) in enumerate([(1.0, 1.0), (1.5, 1.0), (2.0, 0.9)]):
        text = inventory("h_", 3).decode().splitlines()
        for row, s in ((1, scale_0), (3, scale_2)):
            cells = text[row].split(",")
            cells[4] = f"{float(cells[4]) * s:.9e}"
            text[row] = ",".join(cells)
        store.save([(("\n".join(text) + "\n").encode(), "h.csv")], name=f"build {i}", project="hist",
                   created_at=t0 + dt.timedelta(hours=i))
    store.save([(inventory("other_"), "o.csv")], name="elsewhere", project="other")
    hw = load_catalogs().get("h100-sxm")
    h = project_history(store, "hist", hw)
    assert list(h.runs["run"]) == ["build 0", "build 1", "build 2"]  # oldest first
    assert len(h.kernels) == 9 and set(h.kernels["kernel"]) == {"h_0", "h_1", "h_2"}
    m = h.movers.set_index("kernel")
    assert list(h.movers["kernel"]) == ["h_0", "h_2", "h_1"]  # x2.0, x0.9, unchanged
    assert m.loc["h_0", "time_change"] == pytest.approx(1.0) and m.loc["h_0", "basis"] == "measured"
    assert m.loc["h_0", "efficiency_change"] == pytest.approx(-0.5)
    assert m.loc["h_2", "time_change"] == pytest.approx(-0.1) and m.loc["h_1", "time_change"] == pytest.approx(0)
    # recomputed with the device given now, not frozen at save time: another device, other roofline times
    slow = make_hw(peak=10e12, bw=0.5e12, hw_id="slow-gpu")
    h2 = project_history(store, "hist", slow)
    assert h2.hardware == "slow-gpu"
    assert (h2.kernels["t_roof_s"].to_numpy() > h.kernels["t_roof_s"].to_numpy()).all()
    assert project_history(store, "hist", hw, last=2).runs["run"].tolist() == ["build 1", "build 2"]
    assert kernel_history([], hw).movers.empty


def test_a_run_with_no_roofline_has_an_unknown_roofline_total(store):
    """A run of kernel times alone (an Nsight Systems summary: no FLOPs, no bytes): its roofline total in the
    history is unknown, never 0 s."""
    path = Path(__file__).parent / "data" / "nsys" / "kern_sum.csv"
    store.save([(path.read_bytes(), path.name)], name="times only", project="noroof")
    runs = project_history(store, "noroof", load_catalogs().get("h100-sxm")).runs
    assert runs["time_s"].iloc[0] > 0 and runs["t_roof_s"].isna().all()


def test_history_shows_only_what_the_viewer_may_see(store):
    store.save([(inventory("hv_"), "a.csv")], name="alice's", project="p", owner=ALICE.user, visibility="private")
    store.save([(inventory("hv_"), "b.csv")], name="bob's", project="p", owner=BOB.user, visibility="project")
    hw = load_catalogs().get("h100-sxm")
    assert project_history(store, "p", hw, BOB).runs["run"].tolist() == ["bob's"]
    assert sorted(project_history(store, "p", hw, ALICE).runs["run"]) == ["alice's", "bob's"]


# ------------------------------------------------------------------------------------------- concurrent saves

SESSIONS = 8


def _save_one(url: str, i: int, barrier=None) -> str:
    s = RunStore(url)
    files = [(inventory(f"s{i}_", 20 + i), f"session{i}.csv"), (inventory(f"s{i}x_", 2), f"extra{i}.csv")]
    if barrier is not None:
        barrier.wait(timeout=60)
    return s.save(files, name=f"session {i}", project="load", owner=user(i),
                  visibility="private" if i % 2 else "project").id


def _check_whole(store: RunStore, ids: dict[int, str]) -> None:
    """Every session's run is there, once, with its own files and nothing of another's."""
    runs = store.list(project="load")
    assert len(runs) == SESSIONS and {r.id for r in runs} == set(ids.values())
    for i, rid in ids.items():
        run = store.open(rid)
        assert run.info.name == f"session {i}" and run.info.owner == user(i)
        assert run.files == ((inventory(f"s{i}_", 20 + i), f"session{i}.csv"), (inventory(f"s{i}x_", 2), f"extra{i}.csv"))
        assert run.info.kernels == 22 + i
        names = set(run.workload().frame["name"])
        assert all(n.startswith((f"s{i}_", f"s{i}x_")) for n in names)
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(FileRow)).scalar() == 2 * SESSIONS
        assert conn.execute(select(func.count()).select_from(RunRow)).scalar() == SESSIONS


def test_eight_sessions_saving_at_once_in_one_server(url):
    """Eight threads (one server's sessions) share one store and save together, released by a barrier."""
    store = RunStore(url)
    barrier, ids, errors = threading.Barrier(SESSIONS), {}, []

    def session(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            files = [(inventory(f"s{i}_", 20 + i), f"session{i}.csv"), (inventory(f"s{i}x_", 2), f"extra{i}.csv")]
            ids[i] = store.save(files, name=f"session {i}", project="load", owner=user(i),
                                visibility="private" if i % 2 else "project").id
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    _check_whole(store, ids)
    store.close()


def test_eight_processes_open_an_empty_database_and_save_at_once(url, monkeypatch):
    """Eight processes (app replicas, CI jobs) on one empty database: they race to migrate it, then save."""
    # A spawned child re-runs the parent's __main__ from its path; after an AppTest in the same pytest run that is
    # streamlit_app.py, which cannot run outside Streamlit. The children need only this module's _save_one.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(SESSIONS)
    with ctx.Pool(SESSIONS) as pool:
        ids = dict(enumerate(pool.starmap(_save_one, [(url, i, barrier) for i in range(SESSIONS)])))
    store = RunStore(url)
    assert migrate.current(store.engine) == migrate.head()
    _check_whole(store, ids)
    store.close()


# ---------------------------------------------------------------------------------------------- no passwords


def test_the_password_never_appears_in_messages_or_logs(postgres, caplog):
    caplog.set_level(logging.DEBUG)
    url = postgres.new_database()
    store = RunStore(url)
    assert postgres.password not in repr(store) and "***" in store.safe_url
    store.save([(inventory("pw_"), "p.csv")], name="pw")
    store.list()
    wrong = "Wr0ng-S3cret-Passw0rd"
    with pytest.raises(StoreError) as e:
        RunStore(postgres.url(password=wrong))
    assert wrong not in str(e.value) and "password authentication failed" in str(e.value)
    assert str(e.value).startswith(f"the run database postgresql://{postgres.user}:***@127.0.0.1:{postgres.port}/")
    closed = postgres.url(password=wrong).replace(f":{postgres.port}/", f":{pgserver.free_port()}/")
    with pytest.raises(StoreError) as e:
        RunStore(closed)
    assert wrong not in str(e.value) and "***" in str(e.value)
    logged = "\n".join(r.getMessage() + str(r.args) for r in caplog.records)
    assert postgres.password not in logged and wrong not in logged
    store.close()


def test_urls_and_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("ROOFCORE_DB_URL", raising=False)
    monkeypatch.setenv("ROOFCORE_DB_PATH", str(tmp_path / "team" / "runs.db"))
    assert default_path() == tmp_path / "team" / "runs.db"
    assert database_url() == f"sqlite:///{tmp_path / 'team' / 'runs.db'}"
    s = RunStore()  # the folder is made on first use
    assert (tmp_path / "team" / "runs.db").exists()
    s.close()
    monkeypatch.delenv("ROOFCORE_DB_PATH")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "roofline" / "runs.sqlite3"
    monkeypatch.setenv("ROOFCORE_DB_URL", "postgresql://ci:s3cret@db.internal:5432/runs")
    assert database_url() == "postgresql://ci:s3cret@db.internal:5432/runs"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"
    assert redact(database_url()) == "postgresql://ci:***@db.internal:5432/runs"
    with pytest.raises(StoreError, match="cannot be parsed") as e:
        RunStore("not a url :: s3cret")
    assert "s3cret" not in str(e.value)
    assert Path(default_path()).name == "runs.sqlite3"
