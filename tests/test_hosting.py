"""Hosting for a team (issue #8) under AppTest: no tracebacks, the login gate, limits in the app, nothing on disk.

The browser-level checks (two sessions side by side, the load test, injection through real downloads) are in
tests/test_isolation.py and tests/test_browser_injection.py.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import state

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "streamlit_app.py")

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

INVENTORY = b"name,count,flops,bytes,time_ms,precision\nzeta_gemm,1,8.8e12,2.8e9,12.0,bf16\n"
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "s3cret-for-tests",
        "client_id": "roofline", "client_secret": "x", "server_metadata_url":
        "https://login.example.com/.well-known/openid-configuration"}


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [t.value for t in at.title] + [b.label for b in at.button]
    return "\n".join(str(p) for p in parts)


# --------------------------------------------------------------------------------------------- errors


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_unexpected_error_shows_a_reference_that_is_in_the_server_log(monkeypatch):
    from roofcore import charts

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug in the chart")

    monkeypatch.setattr(charts, "roofline", broken)
    import streamlit as st

    st.cache_resource.clear()  # charts are shared between sessions: an earlier test's would be reused
    capture = _Capture()
    logger = logging.getLogger("roofline.app")
    logger.addHandler(capture)
    try:
        at = run(AppTest.from_file(APP, default_timeout=60))
        at.switch_page("pages/roofline.py")
        run(at)
    finally:
        logger.removeHandler(capture)
    assert not at.exception  # no traceback element for the user
    msg = next(e.value for e in at.error if "Something went wrong" in e.value)
    ref = msg.split("reference `")[1].split("`")[0]
    assert len(ref) == 10 and "ZeroDivisionError" not in msg and "Traceback" not in msg
    logged = [r for r in capture.records if ref in r.getMessage()]
    assert logged and logged[0].exc_info[0] is ZeroDivisionError  # the host finds the traceback by reference
    at.switch_page("pages/overview.py")  # the rest of the app keeps working
    run(at)
    assert not [e for e in at.error if "Something went wrong" in e.value]
    assert any(m.label == "Roofline time" for m in at.metric)


def test_the_shipped_config_hides_error_details_and_statistics():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["server"]["fileWatcherType"] == "none"
    assert cfg["server"]["maxUploadSize"] >= 1 and cfg["server"]["maxMessageSize"] >= 1
    assert cfg["client"]["toolbarMode"] in ("minimal", "viewer")


# ---------------------------------------------------------------------------------------------- login


def test_without_auth_configured_there_is_no_login_gate():
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": False}  # ignored: no [auth] section
    run(at)
    assert not [b for b in at.button if b.label.startswith("Sign in")]
    assert at.sidebar.file_uploader and any(m.label == "Roofline time" for m in at.metric)


def test_with_auth_configured_a_signed_out_user_sees_only_the_sign_in():
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": False}
    run(at)
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.sidebar.file_uploader and not at.metric and not at.get("vega_lite_chart")
    assert "sign in" in texts(at)
    at.switch_page("pages/kernels.py")  # a deep link does not get around it
    run(at)
    assert not at.dataframe and [b.label for b in at.button] == ["Sign in"]


def test_with_auth_configured_a_signed_in_user_gets_the_app_and_a_sign_out():
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "name": "Ada Lovelace", "email": "ada@example.com"}
    run(at)
    assert "Signed in as **Ada Lovelace**" in [c.value for c in at.sidebar.caption]
    assert "Sign out" in [b.label for b in at.sidebar.button]
    assert any(m.label == "Roofline time" for m in at.metric)


def test_named_providers_get_one_button_each():
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": "x",
                          "google": {"client_id": "a"}, "microsoft": {"client_id": "b"}}
    at.user = {"is_logged_in": False}
    run(at)
    assert [b.label for b in at.button] == ["Sign in with Google", "Sign in with Microsoft"]


# --------------------------------------------------------------------------------------- limits, sessions


def test_a_limit_in_the_app_is_a_message_naming_it(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "1")
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.sidebar.file_uploader[0].set_value([("rows.csv", INVENTORY, "text/csv")])
    run(at)
    err = " ".join(e.value for e in at.error)
    assert "above the rows limit of 1 (ROOFCORE_MAX_ROWS)" in err and "raise it with ROOFCORE_MAX_ROWS=N" in err
    assert any(m.label == "Roofline time" for m in at.metric)  # the example stays, the app works


def test_two_sessions_do_not_share_uploads_or_custom_devices():
    a = run(AppTest.from_file(APP, default_timeout=60))
    b = run(AppTest.from_file(APP, default_timeout=60))
    a.sidebar.file_uploader[0].set_value([("mine.csv", INVENTORY, "text/csv")])
    run(a)
    a.switch_page("pages/hardware.py")
    run(a)
    device = (ROOT / "tests" / "data" / "good_catalog.yaml").read_bytes()
    a.file_uploader(key="hw_upload_0").set_value(("mine.yaml", device, "application/x-yaml"))
    run(a)
    custom_a = set(a.session_state[state.CUSTOM.name])
    assert custom_a
    run(b)
    assert not b.session_state[state.CUSTOM.name]
    assert "mine.csv" not in " ".join(c.value for c in b.sidebar.caption)
    assert not set(b.session_state[state.CATALOG.name].ids) & custom_a
    b.switch_page("pages/kernels.py")
    run(b)
    assert "zeta_gemm" not in set(b.dataframe[0].value["Kernel"])


def test_nothing_uploaded_is_written_to_disk(tmp_path, monkeypatch):
    marker = b"disk_marker_kernel_7f3a"
    before = time.time() - 1
    monkeypatch.chdir(tmp_path)
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.sidebar.file_uploader[0].set_value([("m.csv", INVENTORY.replace(b"zeta_gemm", marker), "text/csv")])
    run(at)
    for page in ("pages/kernels.py", "pages/report.py"):
        at.switch_page(page)
        run(at)
    roots = [ROOT, Path(tempfile.gettempdir()), tmp_path, Path.home() / ".streamlit"]
    written = []
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", "node_modules", "artifacts")]
            for f in filenames:
                p = Path(dirpath) / f
                try:
                    if p.stat().st_mtime >= before and p.stat().st_size < 50_000_000 and marker in p.read_bytes():
                        written.append(p)
                except OSError:
                    continue
    assert written == []


def test_a_shared_read_only_catalog_folder_reaches_every_session(monkeypatch, tmp_path):
    import streamlit as st

    shared = tmp_path / "team-catalogs"
    shared.mkdir()
    (shared / "acme.yaml").write_bytes((ROOT / "tests" / "data" / "good_catalog.yaml").read_bytes())
    shared.chmod(0o555)
    monkeypatch.setenv("ROOFCORE_CATALOG_PATH", str(shared))
    st.cache_resource.clear()  # the built-in catalog is loaded once per server: this is a new server
    try:
        for _ in range(2):  # two sessions
            at = run(AppTest.from_file(APP, default_timeout=60))
            assert "Acme · X1 (acme-x1)" in at.sidebar.multiselect[0].options
            assert "acme-x1" not in at.session_state[state.CUSTOM.name]  # shared, not the session's own
    finally:
        shared.chmod(0o755)
        monkeypatch.delenv("ROOFCORE_CATALOG_PATH")
        st.cache_resource.clear()
    assert sorted(p.name for p in shared.iterdir()) == ["acme.yaml"]  # nothing written there


# ------------------------------------------------------------------------ identity: issuer and subject (#23, 10)


def test_two_providers_vouching_for_one_email_do_not_share_runs(tmp_path, monkeypatch):
    """Two OpenID providers (tests/fake_oidc.py) both sign in ada@example.com, verified, under the same subject
    text: the user of one saves a private run; the user of the other sees nothing of it, in no list, by no link.
    An e-mail the provider did not verify is not shown as the user's."""
    pytest.importorskip("sqlalchemy", reason="the team extra (pip install -e '.[dev]')")
    pytest.importorskip("joserfc", reason="the login support (pip install -e '.[dev]')")
    import fake_oidc

    monkeypatch.setenv("ROOFCORE_DB_URL", f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    ada = {"sub": "ada", "email": "ada@example.com", "name": "Ada"}
    with fake_oidc.provider({"ada": ada}) as idp_a, fake_oidc.provider(
            {"ada": ada, "eve": {"email": "ada@example.com", "email_verified": False, "name": "Eve"}}) as idp_b:
        users = {who: {**fake_oidc.sign_in(idp, login), "is_logged_in": True, "provider": p}
                 for who, idp, login, p in (("a", idp_a, "ada", "corp"), ("b", idp_b, "ada", "partner"),
                                            ("eve", idp_b, "eve", "partner"))}
    auth = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": "x",
            "corp": {"client_id": "roofline-tests", "server_metadata_url": idp_a.metadata_url},
            "partner": {"client_id": "roofline-tests", "server_metadata_url": idp_b.metadata_url}}

    def signed_in(who: str, run_id: str | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.secrets["auth"] = auth
        at.user = users[who]
        if run_id:
            at.query_params["run"] = run_id
        return run(at)

    a = signed_in("a")
    a.sidebar.text_input(key="save_name").set_value("ada's private run")
    a.sidebar.radio(key="save_visibility").set_value("private")
    next(b for b in a.sidebar.button if b.label == "Save run").click()
    run(a)
    run_id = a.sidebar.code[0].value.split("=", 1)[1]
    a.switch_page("pages/history.py")
    run(a)
    assert list(a.dataframe[0].value["Name"]) == ["ada's private run"]
    assert list(a.dataframe[0].value["Owner"]) == ["ada@example.com"]
    for who in ("b", "eve"):
        other = signed_in(who)
        other.switch_page("pages/history.py")
        run(other)
        assert not other.dataframe and any("No saved runs yet" in i.value for i in other.info)
        opened = signed_in(who, run_id)
        assert opened.error and "private to someone else" in opened.error[0].value
    eve = signed_in("eve")
    caption = next(c for c in eve.sidebar.caption if c.value.startswith("Signed in as"))
    assert caption.value == "Signed in as **Eve**" and "not verified, so not used" in caption.help
