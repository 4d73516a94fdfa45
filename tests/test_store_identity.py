"""The run store's owners, protection and input checks (issue 23, points 10, 11 and 14), on SQLite and PostgreSQL.

- A run's owner is the OpenID Connect pair (issuer, subject) from the ID token (tests/fake_oidc.py issues per-user
  claims): two providers vouching for the same e-mail do not share runs; an unverified e-mail is never used; runs
  saved by roofcore's first schema (owner = an e-mail) are taken over once, by a verified e-mail.
- Protected runs (``roofline save --protect``) and a gate's baseline (``roofline check --baseline run:ID``) are
  refused deletion with a message.
- Names that are not UTF-8 or hold control characters get one line, the same on both databases; a database from a
  newer roofcore or another application gets one line and is left alone.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

pytest.importorskip("sqlalchemy", reason="the team extra (pip install -e '.[dev]')")
pytest.importorskip("joserfc", reason="the login support (pip install -e '.[dev]')")

import fake_oidc
import sqlalchemy as sa

from roofcore import InputError
from roofcore.cli import main
from roofcore.safetext import shown
from roofcore.store import EVERYONE, NotAllowed, Owner, Protected, RunNotFound, RunStore, Viewer, migrate

CSV = b"name,count,flops,bytes,time_s,precision\nid_gemm,1,2e12,1e9,0.01,bf16\nid_softmax,1,1e10,8e9,0.005,bf16\n"
DATA = [(CSV, "w.csv")]


@pytest.fixture(scope="module")
def two_providers():
    """Two providers that both vouch for ada@example.com (same subject text, even), and a third user of the second
    whose e-mail is ada's but not verified."""
    ada = {"sub": "ada", "email": "ada@example.com", "name": "Ada"}
    with fake_oidc.provider({"ada": ada}) as a, fake_oidc.provider(
            {"ada": ada, "eve": {"email": "ada@example.com", "email_verified": False, "name": "Eve"}}) as b:
        yield {"a": Viewer.signed_in(fake_oidc.sign_in(a, "ada")), "b": Viewer.signed_in(fake_oidc.sign_in(b, "ada")),
               "eve": Viewer.signed_in(fake_oidc.sign_in(b, "eve"))}


# ------------------------------------------------------------------------------------------------- identity


def test_the_owner_is_the_issuer_and_subject_not_the_email(two_providers):
    a, b, eve = two_providers["a"], two_providers["b"], two_providers["eve"]
    assert a.user.subject == b.user.subject == "ada" and a.user.issuer != b.user.issuer
    assert a.email == b.email == "ada@example.com" and a.user.label == "ada@example.com"
    assert eve.email is None  # email_verified false: the e-mail is not used, not even as the label
    assert eve.user.label == "Eve at 127.0.0.1" and "ada@example.com" not in eve.user.label
    assert Viewer.signed_in({"sub": "x", "iss": "https://i", "email": "x@y", "email_verified": "true"}).email == "x@y"
    assert Viewer.signed_in({"sub": "x", "provider": "google"}, provider="google").user.issuer == \
        "streamlit-provider:google"
    with pytest.raises(InputError, match="sent no subject"):
        Viewer.signed_in({"email": "ada@example.com", "email_verified": True, "iss": "https://i"})
    with pytest.raises(ValueError):
        Viewer(Owner(None, None, "ada@example.com"), login=True)  # a label is no identity


def test_two_providers_with_the_same_email_do_not_share_runs(store, two_providers):
    a, b, eve = two_providers["a"], two_providers["b"], two_providers["eve"]
    mine = store.save(DATA, name="a private", owner=a.user, visibility="private")
    shared = store.save(DATA, name="a shared", owner=a.user, visibility="project")
    theirs = store.save(DATA, name="b private", owner=b.user, visibility="private")
    assert {r.name for r in store.list(a)} == {"a private", "a shared"}
    assert {r.name for r in store.list(b)} == {"a shared", "b private"}
    assert {r.name for r in store.list(eve)} == {"a shared"}
    assert store.projects(b) == {"default": 2}
    for other in (b, eve):
        with pytest.raises(RunNotFound):
            store.open(mine.id, other)
        with pytest.raises(RunNotFound):
            store.delete(mine.id, other)
        with pytest.raises(NotAllowed, match="only its owner can delete it"):
            store.delete(shared.id, other)
    with pytest.raises(RunNotFound):
        store.open(theirs.id, a)
    info = store.info(mine.id, a)
    assert (info.owner.issuer, info.owner.subject, info.owner.label) == (a.user.issuer, "ada", "ada@example.com")
    assert info.to_json()["owner"] == {"label": "ada@example.com", "issuer": a.user.issuer, "subject": "ada"}
    store.delete(mine.id, a)
    assert {r.name for r in store.list(EVERYONE)} == {"a shared", "b private"}


def _legacy_database(url: str) -> None:
    """roofcore's first schema (revision 0001) with runs owned by e-mail text, as the app saved them then."""
    engine = RunStore(url, migrate_schema=False).engine
    migrate.upgrade(engine, "0001")
    runs = sa.Table("runs", sa.MetaData(), autoload_with=engine)
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    rows = [("L" * 21 + str(i), name, owner, vis) for i, (name, owner, vis) in enumerate([
        ("ada old private", "Ada@Example.com", "private"), ("ada old shared", "ada@example.com", "project"),
        ("bob old private", "bob@example.com", "private"), ("ci old", None, "project")])]
    with engine.begin() as conn:
        conn.execute(sa.insert(runs), [
            {"id": rid, "project": "old", "name": name, "tags": [], "owner": owner, "visibility": vis,
             "created_at": t0, "devices": [], "custom_devices": {}, "options": {}, "kernels": 2, "formats": [],
             "profiled_on": None, "size": 1, "stored": 1} for rid, name, owner, vis in rows])
    engine.dispose()


def test_an_old_database_upgrades_and_a_verified_email_takes_over_its_runs_once(url, two_providers):
    a, b, eve = two_providers["a"], two_providers["b"], two_providers["eve"]
    _legacy_database(url)
    store = RunStore(url)  # upgrades 0001 -> 0002
    assert migrate.current(store.engine) == migrate.head() == "0002"
    old = {r.name: r for r in store.list(EVERYONE)}
    assert old["ada old private"].owner.legacy and old["ada old private"].owner.label == "Ada@Example.com"
    assert old["ci old"].owner is None
    assert {r.name for r in store.list(a)} == {"ada old shared", "ci old"}  # nobody's until claimed
    assert store.claim(eve) == 0  # an unverified e-mail takes nothing
    assert store.claim(a) == 2  # both of ada's (the case of an address does not matter)
    assert {r.name for r in store.list(a)} == {"ada old private", "ada old shared", "ci old"}
    assert store.claim(b) == 0  # bound to provider A now: the same e-mail at B gets nothing
    assert {r.name for r in store.list(b)} == {"ada old shared", "ci old"}
    taken = store.info(old["ada old private"].id, a)
    assert (taken.owner.issuer, taken.owner.subject, taken.owner.legacy) == (a.user.issuer, "ada", False)
    store.delete(taken.id, a)
    store.close()


# ----------------------------------------------------------------------------------------------- protection


def test_protected_runs_and_gate_baselines_are_not_deleted(store):
    kept = store.save(DATA, name="release 1.0", protected=True)  # by CI: no owner
    plain = store.save(DATA, name="nightly")
    assert kept.protected and not plain.protected and kept.to_json()["protected"] is True
    for viewer in (EVERYONE, Viewer(Owner("https://i", "u"), login=True)):
        with pytest.raises(Protected, match=r"\(release 1.0\) is not deleted: it is protected \(saved with "
                                            r"`roofline save --protect`\)"):
            store.delete(kept.id, viewer)
    when = dt.datetime(2025, 5, 1, 12, 30, tzinfo=dt.UTC)
    assert store.used_as_baseline(plain.id, when).baseline_used_at == when
    with pytest.raises(Protected, match=rf"it is the baseline of a CI gate \(`roofline check --baseline "
                                        rf"run:{plain.id}` used it on 2025-05-01 12:30 UTC\)"):
        store.delete(plain.id)
    assert {r.id for r in store.list()} == {kept.id, plain.id}
    store.protect(plain.id, False)  # the host releases it
    store.delete(plain.id)
    with pytest.raises(RunNotFound):
        store.protect("A" * 22)


def test_save_protect_and_check_baseline_from_the_cli(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    (tmp_path / "w.csv").write_bytes(CSV)
    assert main(["save", str(tmp_path / "w.csv"), "--project", "ci", "--name", "v1.0", "--protect", "--db", db]) == 0
    release = capsys.readouterr().out.strip()
    assert main(["save", str(tmp_path / "w.csv"), "--project", "ci", "--name", "nightly", "--db", db,
                 "--owner", "https://login.example.com", "ada-sub", "--owner-label", "ada@example.com"]) == 0
    nightly = capsys.readouterr().out.strip()
    (tmp_path / "rerun.csv").write_bytes(CSV.replace(b",0.01,", b",0.0101,"))  # a run is never its own baseline
    assert main(["check", str(tmp_path / "rerun.csv"), "--baseline", f"run:{nightly}", "--db", db,
                 "--hardware", "h100-sxm"]) == 0
    store = RunStore(db)
    assert store.info(release).protected and store.info(release).baseline_used_at is None
    info = store.info(nightly)
    assert info.baseline_used_at is not None and not info.protected
    assert (info.owner.issuer, info.owner.subject, info.owner.label) == ("https://login.example.com", "ada-sub",
                                                                        "ada@example.com")
    for rid in (release, nightly):
        with pytest.raises(Protected):
            store.delete(rid)
    store.close()


# ------------------------------------------------------------------------------------------------ bad input

BAD = [("name", "nul\x00name", "save: name: expected text without control characters, found U+0000 at character 4"),
       ("name", "bell\x07", "save: name: expected text without control characters, found U+0007 at character 5"),
       ("name", "c1\x85x", "save: name: expected text without control characters, found U+0085 at character 3"),
       ("project", "p\x00", "save: project: expected text without control characters, found U+0000"),
       ("tags", ["ok", "t\x1b[31m"], "save: tag: expected text without control characters, found U+001B"),
       ("name", "a\udcffb", r"save: name: expected UTF-8 text, found bytes that are not UTF-8 (a\xffb)"),
       ("name", b"caf\xe9", "save: name: expected UTF-8 text, found bytes that are not UTF-8 (byte 0xe9 at "
                            "position 4")]


@pytest.mark.parametrize(("field", "value", "message"), BAD, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(BAD)])
def test_bad_names_get_one_line_the_same_on_both_databases(store, field, value, message):
    kwargs = {"name": "ok", field: value}
    with pytest.raises(InputError) as e:
        store.save(DATA, **kwargs)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)
    assert store.list() == []


def test_bad_file_names_owners_and_filters_are_refused_too(store):
    with pytest.raises(InputError, match=r"save: file name: expected text without control characters, found U\+0000"):
        store.save([(CSV, "w\x00.csv")], name="x")
    with pytest.raises(InputError, match=r"save: owner's subject: expected text without control"):
        store.save(DATA, name="x", owner=Owner("https://i", "s\x00"))
    with pytest.raises(InputError, match="an e-mail is not an identity"):
        store.save(DATA, name="x", owner="ada@example.com")
    with pytest.raises(InputError, match=r"list: project: expected text without control characters"):
        store.list(project="p\x00")
    assert store.list() == []


def test_bidi_overrides_are_kept_and_shown_escaped(store):
    name = "invoice\u202egpj.exe"
    info = store.save(DATA, name=name, project="p\u2066x\u2069")
    assert store.info(info.id).name == name and info.project == "p\u2066x\u2069"  # stored as given
    assert shown(name) == "invoice\\u202egpj.exe" and shown("p\u2066x\u2069") == "p\\u2066x\\u2069"
    assert shown("tab\there") == "tab\there" and shown(None) == ""


def test_a_newer_or_foreign_database_gets_one_line_and_is_left_alone(url):
    RunStore(url).close()
    engine = RunStore(url, migrate_schema=False).engine
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '9f3e1c2d4b5a'"))
    with pytest.raises(InputError) as e:
        RunStore(url)
    msg = str(e.value)
    assert "this database was created by a newer roofcore (revision 9f3e1c2d4b5a) or another application" in msg
    assert "\n" not in msg and msg.startswith("the run database ") and "knows revisions 0001 to 0002" in msg
    assert migrate.current(engine) == "9f3e1c2d4b5a"
    with engine.begin() as conn:  # another application's database: its own alembic_version, no runs table
        conn.execute(sa.text("DROP TABLE run_files"))
        conn.execute(sa.text("DROP TABLE runs"))
        conn.execute(sa.text("UPDATE alembic_version SET version_num = 'ae1027a6acf'"))
    with pytest.raises(InputError, match=r"newer roofcore \(revision ae1027a6acf\) or another application"):
        RunStore(url)
    assert set(sa.inspect(engine).get_table_names()) == {"alembic_version"}  # nothing created
    engine.dispose()


def test_the_cli_says_one_line_for_bad_names_and_newer_databases(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'runs.sqlite3'}"
    (tmp_path / "w.csv").write_bytes(CSV)
    save = ["save", str(tmp_path / "w.csv"), "--project", "p", "--db", db, "--name"]
    assert main([*save, "build\udcff7"]) == 2  # what Python makes of argv bytes that are not UTF-8
    err = capsys.readouterr().err
    assert err == "roofline: error: save: name: expected UTF-8 text, found bytes that are not UTF-8 (build\\xff7). " \
                  "Hint: the terminal or file system gave bytes in another encoding; type the text again in UTF-8.\n"
    assert main([*save, "nul\x00"]) == 2 and "internal error" not in capsys.readouterr().err
    assert main([*save, "rtl\u202eevil"]) == 0
    out = capsys.readouterr()
    assert "(rtl\\u202eevil, project p: 1 file, 2 kernels" in out.err and "\u202e" not in out.err  # shown escaped
    assert RunStore(db).info(out.out.strip()).name == "rtl\u202eevil"  # kept as given
    assert main([*save, "rtl\u202eevil", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "rtl\u202eevil"
    newer = f"sqlite:///{tmp_path / 'newer.sqlite3'}"  # (a process opens each database once: a fresh one)
    RunStore(newer).close()
    engine = sa.create_engine(newer)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0099'"))
    engine.dispose()
    assert main([*save, "again", "--db", newer]) == 2
    err = capsys.readouterr().err
    assert err.startswith("roofline: error: the run database sqlite:///") and err.count("\n") == 1
    assert "created by a newer roofcore (revision 0099)" in err and "internal error" not in err
