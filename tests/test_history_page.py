"""Saved runs in the app under AppTest (issue #18): saving from the sidebar, opening a share link (?run=<id>) with
the same workload, devices and page, the History page (runs, movers, charts, Compare in one click, deleting), and
the permission matrix with two signed-in users (``at.user``): B opens A's shared run by its link, never A's
private one, and neither sees the other's private runs in any list.

Each test has its own SQLite database (ROOFCORE_DB_URL); tests/test_store.py runs the same store on PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the team extra (pip install -e '.[dev]')")

from streamlit.testing.v1 import AppTest

from app import state
from roofcore.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "s3cret-for-tests",
        "client_id": "roofline", "client_secret": "x", "server_metadata_url":
        "https://login.example.com/.well-known/openid-configuration"}
ISSUER = "https://login.example.com"  # st.user carries the ID token's claims: the owner is (iss, sub)
ALICE = {"is_logged_in": True, "name": "Alice", "email": "alice@example.com", "email_verified": True,
         "iss": ISSUER, "sub": "alice-sub"}
BOB = {"is_logged_in": True, "name": "Bob", "email": "bob@example.com", "email_verified": True, "iss": ISSUER,
       "sub": "bob-sub"}


def owner(user: dict):
    """The store's owner for a signed-in user's claims."""
    from roofcore.store import owner_from_claims

    return owner_from_claims(user)[0]

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py


def inventory(prefix: str, scale: float = 1.0) -> bytes:
    return (f"name,count,flops,bytes,time_s,precision\n{prefix}gemm,1,2e12,1e9,{0.01 * scale:.6g},bf16\n"
            f"{prefix}softmax,1,1e10,8e9,{0.005 * scale:.6g},bf16\n").encode()


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    monkeypatch.setenv("ROOFCORE_DB_URL", url)
    store = RunStore(url)
    yield store
    store.close()


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def app(user: dict | None = None, run_id: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.secrets["auth"] = AUTH
        at.user = user
    if run_id is not None:
        at.query_params["run"] = run_id
    return run(at)


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(page)
    return run(at)


def save(at: AppTest, name: str, project: str = "default", visibility: str | None = None, tags: str = "") -> str:
    """Fill the sidebar's Save form and submit it; the saved run's id (from its link)."""
    at.sidebar.text_input(key="save_name").set_value(name)
    at.sidebar.text_input(key="save_project").set_value(project)
    at.sidebar.text_input(key="save_tags").set_value(tags)
    if visibility:
        at.sidebar.radio(key="save_visibility").set_value(visibility)
    next(b for b in at.sidebar.button if b.label == "Save run").click()
    run(at)
    assert not at.sidebar.error, [e.value for e in at.sidebar.error]
    link = at.sidebar.code[0].value
    assert link.startswith("?run=")
    return link.split("=", 1)[1]


def label(at: AppTest) -> str:
    """The sidebar's workload line ("**name** · 12 kernels · format")."""
    return next(c.value for c in at.sidebar.caption if " kernel" in c.value and c.value.startswith("**"))


def picked(at: AppTest, key: str) -> list[str]:
    """The run names a History picker offers (its options read "2025-05-01 00:00 · name")."""
    return [o.split(" · ", 1)[1] for o in at.selectbox(key=key).options]


def history_names(at: AppTest) -> list[str]:
    goto(at, "pages/history.py")
    return list(at.dataframe[0].value["Name"]) if at.dataframe else []


def every_list(at: AppTest) -> str:
    """Every list a user can see runs in on the History page: the runs table, the project picker, the Compare
    pickers and the delete picker, as one text."""
    goto(at, "pages/history.py")
    parts = [" ".join(map(str, at.dataframe[0].value["Name"]))] if at.dataframe else []
    for sb in at.selectbox:
        parts += [str(o) for o in sb.options]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------- save and open


def test_save_from_the_sidebar_then_open_the_link_in_a_new_session(db):
    a = app()
    a.sidebar.file_uploader[0].set_value([("mine.csv", inventory("sv_"), "text/csv")])
    run(a)
    a.sidebar.multiselect[0].set_value(["h100-sxm", "mi300x"])
    run(a)
    goto(a, "pages/roofline.py")
    run_id = save(a, "build 7", project="llm", tags="nightly, h100")
    assert "No login on this server: every saved run is visible to everyone who can reach the app." in [
        c.value for c in a.sidebar.caption]
    info = db.info(run_id)
    assert (info.name, info.project, info.tags, info.owner, info.visibility) == (
        "build 7", "llm", ("nightly", "h100"), None, "project")
    assert info.devices == ("h100-sxm", "mi300x") and info.options["page"] == "roofline"
    assert db.open(run_id).files == ((inventory("sv_"), "mine.csv"),)

    b = app(run_id=run_id)  # a colleague opens the link: the same workload, devices and page
    assert [t.value for t in b.title] == ["Roofline"]
    assert label(b).startswith("**build 7 (saved run)** · 2 kernels")
    assert b.session_state[state.HW_IDS.name] == ["h100-sxm", "mi300x"]
    goto(b, "pages/kernels.py")
    assert set(b.dataframe[0].value["Kernel"]) == {"sv_gemm", "sv_softmax"}
    run(b)  # later runs keep it (the link is opened once)
    assert label(b).startswith("**build 7 (saved run)**")


def test_a_run_whose_files_do_not_parse_is_not_saved(db):
    a = app()
    a.sidebar.file_uploader[0].set_value([("good.csv", inventory("ok_"), "text/csv"),
                                          ("bad.csv", b"name,count,flops\nk,1,oops\n", "text/csv")])
    run(a)
    at_sidebar = a.sidebar
    at_sidebar.text_input(key="save_name").set_value("half")
    next(b for b in at_sidebar.button if b.label == "Save run").click()
    run(a)
    assert any(e.value.startswith("Not saved: bad.csv") for e in a.sidebar.error)
    assert db.list() == []


def test_the_bundled_example_and_custom_devices_travel_with_the_link(db):
    a = app()
    goto(a, "pages/hardware.py")
    device = (ROOT / "tests" / "data" / "good_catalog.yaml").read_bytes()
    a.file_uploader(key="hw_upload_0").set_value(("acme.yaml", device, "application/x-yaml"))
    run(a)
    assert "acme-x1" in a.session_state[state.HW_IDS.name]
    run_id = save(a, "example on acme")
    b = app(run_id=run_id)
    assert [t.value for t in b.title] == ["Hardware"]
    assert "acme-x1" in b.session_state[state.CUSTOM.name] and "acme-x1" in b.session_state[state.HW_IDS.name]
    assert label(b).startswith("**example on acme (saved run)** · 12 kernels")


def test_an_unknown_link_says_so_and_keeps_the_example(db):
    b = app(run_id="A" * 22)
    assert [e.value for e in b.error] == [
        "This link's run cannot be opened: no saved run 'AAAAAAAAAAAAAAAAAAAAAA' that you can open: it was "
        "deleted, the id is wrong, or it is private to someone else."]
    assert "transformer_block.yaml" in label(b)
    b = app(run_id="../../etc/passwd")
    assert "no saved run in this link that you can open" in b.error[0].value


# ---------------------------------------------------------------------------------------------- permissions


@pytest.fixture
def team(db):
    """Four runs in one project: A's private and shared ones, B's private one, and one from CI (no owner)."""
    t0 = dt.datetime(2025, 5, 1, tzinfo=dt.UTC)
    ids = {}
    for i, (name, who, vis) in enumerate([("alice private", owner(ALICE), "private"),
                                          ("alice shared", owner(ALICE), "project"),
                                          ("bob private", owner(BOB), "private"), ("ci nightly", None, "project")]):
        ids[name] = db.save([(inventory(name.replace(" ", "_") + "_"), f"{name}.csv")], name=name, project="team",
                            owner=who, visibility=vis, created_at=t0 + dt.timedelta(hours=i)).id
    return ids


def test_permission_matrix_lists(team):
    a, b = app(ALICE), app(BOB)
    assert sorted(history_names(a)) == ["alice private", "alice shared", "ci nightly"]
    assert sorted(history_names(b)) == ["alice shared", "bob private", "ci nightly"]
    assert "bob private" not in every_list(a) and "alice private" not in every_list(b)
    assert a.selectbox(key="hist_project").options == ["team · 3 runs"]
    # deleting is offered for one's own runs and ownerless ones only
    assert sorted(picked(a, "hist_delete_pick")) == ["alice private", "alice shared", "ci nightly"]
    assert sorted(picked(b, "hist_delete_pick")) == ["bob private", "ci nightly"]
    assert sorted(picked(b, "hist_before")) == ["alice shared", "bob private", "ci nightly"]


def test_permission_matrix_links(team):
    b = app(BOB, run_id=team["alice shared"])  # B opens A's shared run by its link
    assert not b.error and label(b).startswith("**alice shared (saved run)**")
    goto(b, "pages/kernels.py")
    assert set(b.dataframe[0].value["Kernel"]) == {"alice_shared_gemm", "alice_shared_softmax"}
    b = app(BOB, run_id=team["alice private"])  # ... never A's private one
    assert b.error[0].value.startswith("This link's run cannot be opened: no saved run") and \
        "private to someone else" in b.error[0].value
    assert "transformer_block.yaml" in label(b) and "alice" not in " ".join(c.value for c in b.sidebar.caption)
    goto(b, "pages/kernels.py")
    assert not [k for k in b.dataframe[0].value["Kernel"] if k.startswith("alice")]
    a = app(ALICE, run_id=team["bob private"])
    assert a.error and "transformer_block.yaml" in label(a)
    a = app(ALICE, run_id=team["alice private"])  # the owner does open it
    assert not a.error and label(a).startswith("**alice private (saved run)**")


def test_delete_through_the_ui(team, db):
    b = app(BOB)
    goto(b, "pages/history.py")
    pick = b.selectbox(key="hist_delete_pick")
    pick.set_value(team["bob private"])
    run(b)
    assert b.button(key="hist_delete").disabled  # asks for a confirmation first
    b.checkbox(key="hist_delete_confirm").check()
    run(b)
    b.button(key="hist_delete").click()
    run(b)
    assert any("Deleted" in s.value and "bob private" in s.value for s in b.success)
    assert sorted(r.name for r in db.list()) == ["alice private", "alice shared", "ci nightly"]
    assert sorted(history_names(b)) == ["alice shared", "ci nightly"]


def test_saving_signed_in_records_the_owner_and_private_stays_private(db):
    a = app(ALICE)
    a.sidebar.file_uploader[0].set_value([("a.csv", inventory("own_"), "text/csv")])
    run(a)
    private = save(a, "mine only", visibility="private")
    shared = save(a, "for the team", visibility="project")
    assert db.info(private).owner == owner(ALICE) and db.info(private).visibility == "private"
    assert (db.info(private).owner.issuer, db.info(private).owner.subject) == (ISSUER, "alice-sub")
    assert db.info(shared).visibility == "project"
    b = app(BOB)
    assert history_names(b) == ["for the team"]
    assert app(BOB, run_id=private).error


# -------------------------------------------------------------------------------------------------- history


def test_history_movers_charts_and_compare_in_one_click(db):
    t0 = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)
    for i, scale in enumerate([1.0, 1.2, 2.0]):
        db.save([(inventory("hi_", scale), "w.csv")], name=f"build {i}", project="p",
                created_at=t0 + dt.timedelta(days=i))
    a = goto(app(), "pages/history.py")
    assert list(a.dataframe[0].value["Name"]) == ["build 2", "build 1", "build 0"]
    movers = a.dataframe[1].value
    assert set(movers["Kernel"]) == {"hi_gemm", "hi_softmax"}
    assert list(movers["Time change (%)"]) == pytest.approx([100.0, 100.0])
    assert list(movers["First"]) in (["10 ms", "5 ms"], ["5 ms", "10 ms"])
    charts = a.get("vega_lite_chart")
    assert len(charts) == 2  # time and fraction of roof, one facet per kernel
    assert a.selectbox(key="hist_before").value == db.list()[1].id  # the run before the latest
    a.button(key="hist_compare").click()
    run(a)
    assert [t.value for t in a.title] == ["Compare"]
    assert any("Saved runs:" in i.value and "build 1" in i.value and "build 2" in i.value for i in a.info)
    metrics = {m.label: m.value for m in a.metric}
    assert metrics["Matched kernels"] == "2" and metrics["Speedup"] == "0.60×"  # 1.2 -> 2.0 times as long


def test_history_without_runs_says_how_to_save_one(db):
    a = goto(app(), "pages/history.py")
    assert any("No saved runs yet" in i.value for i in a.info)


# ------------------------------------------------------------------------------- many runs, many kernels (#23)


def many_kernels(n: int, scale: float = 1.0) -> bytes:
    """An inventory of ``n`` kernels named k_00000, k_00001, ..."""
    rows = [f"k_{i:05d},1,{(i + 1) * 1e9:.6g},{(n - i) * 1e6:.6g},{(i + 1) * 1e-5 * scale:.6g},bf16" for i in range(n)]
    return ("name,count,flops,bytes,time_s,precision\n" + "\n".join(rows) + "\n").encode()


def test_history_lists_every_run_page_by_page(db):
    """620 runs: the table shows all of them over its pages (no cap at 500), as many as the project picker says."""
    from runclones import clone_runs

    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    first = db.save([(inventory("many_"), "w.csv")], name="copy first", project="big", created_at=t0)
    clone_runs(db, first.id, 619, project="big", start=t0 + dt.timedelta(hours=1), name="copy {i:03d}")
    a = goto(app(), "pages/history.py")
    assert a.selectbox(key="hist_project").options == ["big · 620 runs"]
    a.selectbox(key="hist_page_size").set_value(200)
    names = []
    for number in range(1, 5):
        if number > 1:
            a.number_input(key="hist_page").set_value(number)
        run(a)
        names += list(a.dataframe[0].value["Name"])
        assert any(f"of 620, newest first (page {number} of 4)" in c.value for c in a.caption)
    assert len(names) == len(set(names)) == 620
    assert names[:2] == ["copy 618", "copy 617"] and names[-1] == "copy first"
    assert picked(a, "hist_before") == names[600:]  # Compare offers the runs of the page shown


def test_moving_the_window_re_parses_and_re_analyses_nothing(db, monkeypatch):
    """60 runs, each its own content: moving "Last runs" anywhere from 2 to 50 parses and analyses every run once."""
    from runclones import clone_runs

    from app import history as app_history
    from app import runs as app_runs
    from roofcore.store import history as store_history

    counts = {"parse": 0, "evaluate": 0}

    def counting(name, fn):
        def wrapped(*args, **kwargs):
            counts[name] += 1
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(app_runs, "read_many", counting("parse", app_runs.read_many))
    monkeypatch.setattr(store_history, "evaluate", counting("evaluate", store_history.evaluate))
    for cached in (app_runs.parse_files, app_runs.run_files, app_history.history_rows, app_history.history_window):
        cached.clear()  # other tests of this process may have read runs of the same content
    t0 = dt.datetime(2025, 2, 1, tzinfo=dt.UTC)
    first = db.save([(inventory("win_"), "w.csv")], name="first", project="win", created_at=t0)
    clone_runs(db, first.id, 59, project="win", start=t0 + dt.timedelta(hours=1),
               content=lambda i: inventory("win_", 1.0 + (i + 1) / 100))
    a = goto(app(), "pages/history.py")
    assert counts == {"parse": 10, "evaluate": 10}
    slider = a.slider(key="hist_last")
    assert (slider.min, slider.max) == (2, app_runs.HISTORY_WINDOW)
    for last in (50, 2, 25, 50, 10):
        a.slider(key="hist_last").set_value(last)
        run(a)
        assert any(f"of the last {last} runs" in c.value for c in a.caption)
    assert counts == {"parse": 50, "evaluate": 50}  # the first visit of each run only


def test_the_kernel_picker_searches_instead_of_listing_every_kernel(db, monkeypatch):
    """1,000 kernels in two runs: the picker offers at most PICK_LIMIT of them besides those picked, says how many
    more match, and a search finds any; the movers table says how many of them it shows."""
    from app import tables
    from app.search_pick import PICK_LIMIT

    monkeypatch.setattr(tables, "TABLE_ROW_LIMIT", 300)

    t0 = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    for i, scale in enumerate([1.0, 2.0]):
        db.save([(many_kernels(1000, scale), "w.csv")], name=f"wide {i}", project="wide",
                created_at=t0 + dt.timedelta(days=i))
    a = goto(app(), "pages/history.py")
    assert len(a.dataframe[1].value) == 300
    assert any(c.value.startswith("1,000 kernels in two or more of the last 2 runs") and
               c.value.endswith("; the table shows the first 300.") for c in a.caption)
    pick = a.multiselect(key="hist_kernels")
    assert len(pick.value) == 6 and len(pick.options) == 6 + PICK_LIMIT
    assert any(f"{1000 - 6 - PICK_LIMIT:,} more kernels match" in c.value for c in a.caption)
    a.text_input(key="hist_kernels_find").set_value("K_0042")  # any case
    run(a)
    pick = a.multiselect(key="hist_kernels")
    found = {f"k_{i:05d}" for i in range(420, 430)}
    assert pick.options[:6] == pick.value  # what is picked stays offered, then the matches in the movers' order
    assert set(pick.options) == found | set(pick.value) and len(pick.options) == len(set(pick.options))
    pick.set_value([*pick.value, "k_00427"] if "k_00427" not in pick.value else pick.value)
    run(a)
    a.text_input(key="hist_kernels_find").set_value("")
    run(a)
    pick = a.multiselect(key="hist_kernels")
    assert "k_00427" in pick.value and len(pick.options) == len(pick.value) + PICK_LIMIT
    charted = a.get("vega_lite_chart")[0].proto.spec
    assert "k_00427" in charted
    for i, scale in enumerate([1.0, 3.0]):  # another project: its own biggest movers are picked
        db.save([(inventory("nar_", scale), "n.csv")], name=f"narrow {i}", project="xnarrow",
                created_at=t0 + dt.timedelta(days=i))
    run(a)
    a.selectbox(key="hist_project").set_value("xnarrow")
    run(a)
    assert sorted(a.multiselect(key="hist_kernels").value) == ["nar_gemm", "nar_softmax"]


# ------------------------------------------------------------------ owners, protection, names (#23: 10, 11, 14)


def test_a_protected_run_and_a_gate_baseline_are_refused_deletion_with_a_message(db):
    t0 = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
    release = db.save([(inventory("rel_"), "r.csv")], name="release", project="ci", protected=True, created_at=t0)
    base = db.save([(inventory("base_"), "b.csv")], name="gate base", project="ci",
                   created_at=t0 + dt.timedelta(hours=1))
    db.used_as_baseline(base.id, t0 + dt.timedelta(days=1))
    b = goto(app(BOB), "pages/history.py")
    for rid, why in ((release.id, "it is protected (saved with `roofline save --protect`)"),
                     (base.id, f"it is the baseline of a CI gate (`roofline check --baseline run:{base.id}` used it "
                               "on 2025-07-02 00:00 UTC)")):
        b.selectbox(key="hist_delete_pick").set_value(rid)
        run(b)
        b.checkbox(key="hist_delete_confirm").check()
        run(b)
        b.button(key="hist_delete").click()
        run(b)
        errors = " ".join(e.value for e in b.error).replace("\\", "")  # the message's Markdown escapes dropped
        assert "is not deleted" in errors and why in errors, errors
        assert not [s for s in b.success if "Deleted" in s.value]
    assert sorted(r.name for r in db.list()) == ["gate base", "release"]


def test_names_with_bidi_overrides_are_shown_escaped(db):
    rid = db.save([(inventory("rtl_"), "w.csv")], name="invoice\u202egpj.exe", project="p\u202eq", tags="t\u2066").id
    a = goto(app(), "pages/history.py")
    table = a.dataframe[0].value
    assert list(table["Name"]) == ["invoice\\u202egpj.exe"] and list(table["Tags"]) == ["t\\u2066"]
    assert a.selectbox(key="hist_project").options == ["p\\u202eq · 1 run"]
    assert all("\u202e" not in o for o in a.selectbox(key="hist_after").options)
    b = app(run_id=rid)
    assert "u202egpj.exe (saved run)" in label(b) and "\u202e" not in label(b)


def test_a_newer_database_is_one_message_on_the_history_page(tmp_path, monkeypatch):
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'newer.sqlite3'}"
    RunStore(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = 'ffff0001'"))
    engine.dispose()
    monkeypatch.setenv("ROOFCORE_DB_URL", url)
    a = goto(app(), "pages/history.py")
    errors = [e.value for e in a.error]
    assert len(errors) == 1 and "created by a newer roofcore (revision ffff0001) or another application" in errors[0]
    assert "Something went wrong" not in errors[0]


def test_runs_saved_under_an_email_are_taken_over_by_a_verified_sign_in_only(db):
    """A run saved by roofcore's first schema had the e-mail as its owner: a user whose provider did not verify that
    e-mail does not get it; the first whose provider did, does (and keeps it)."""
    from sqlalchemy import update

    from roofcore.store.schema import RunRow

    old = db.save([(inventory("old_"), "o.csv")], name="old private", owner=owner(ALICE), visibility="private").id
    with db.engine.begin() as conn:  # as the first schema kept it: an e-mail, no issuer or subject
        conn.execute(update(RunRow).where(RunRow.id == old).values(owner="alice@example.com", owner_issuer=None,
                                                                   owner_subject=None))
    unverified = {**ALICE, "sub": "mallory", "iss": "https://other.example.com", "email_verified": False}
    assert history_names(app(unverified)) == [] and app(unverified, run_id=old).error
    assert history_names(app(ALICE)) == ["old private"]
    assert db.info(old).owner == owner(ALICE)
    verified_elsewhere = {**ALICE, "sub": "alice-at-b", "iss": "https://other.example.com"}
    assert history_names(app(verified_elsewhere)) == []  # the same e-mail at another provider: not hers
