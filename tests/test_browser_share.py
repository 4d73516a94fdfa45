"""Share links in a real browser with two signed-in users (issue #18): one `streamlit run` with the login on,
signing in through a local OpenID Connect provider (tests/fake_oidc.py) by Streamlit's own st.login flow, and a
SQLite run database in a temporary folder.

Alice uploads a workload and saves it twice, once for everyone in the app and once for herself only. Bob, in his
own browser context, opens the shared run by its link (same workload, devices and page), cannot open the private
one (the link says it cannot be opened, and nothing of Alice's reaches his page), and saves a private run of his
own; neither sees the other's private run on the History page. Screenshots go to tests/artifacts/share-*.png.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import browserkit as bk
import pytest

pytestmark = pytest.mark.browser
bk.require_chromium()
pytest.importorskip("sqlalchemy", reason="the team extra (pip install -e '.[dev]')")
pytest.importorskip("authlib", reason="the login support (pip install -e '.[dev]')")

import fake_oidc  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

USERS = {"alice@example.com": "Alice Example", "bob@example.com": "Bob Example"}


@contextlib.contextmanager
def app_with_login(folder: Path, idp: fake_oidc.Provider):
    """`streamlit run` on a free loopback port with [auth] pointing at ``idp`` and its own run database."""
    port = bk.free_port()
    url = f"http://127.0.0.1:{port}"
    secrets_file = folder / "secrets.toml"
    secrets_file.write_text(idp.auth_secrets(url, "cookie-secret-for-the-share-test"))
    env = {**os.environ, "ROOFCORE_DB_URL": f"sqlite:///{folder / 'runs.sqlite3'}"}
    log = bk.ARTIFACTS / "share-streamlit.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false", "--secrets.files", str(secrets_file)],
            cwd=bk.ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start (see {log})")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class User:
    def __init__(self, browser, url: str, email: str) -> None:
        self.email, self.name, self.url = email, USERS[email], url
        self.first = self.name.split()[0].lower()
        self.prefix = f"{self.first}_only_kernel_"
        self.context = browser.new_context(viewport={"width": 1440, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(bk.TIMEOUT_MS)
        self.console: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console.append(f"page error: {exc}"))

    def _console(self, msg) -> None:
        if msg.type == "error" and not bk.console_noise(msg.text, (msg.location or {}).get("url", "")):
            self.console.append(f"{msg.text} ({(msg.location or {}).get('url', '')})")

    def sidebar(self):
        return self.page.locator('[data-testid="stSidebar"]')

    def main(self):
        return self.page.locator('[data-testid="stMain"]')

    def sign_in(self) -> None:
        self.page.goto(self.url + bk.ENTRY)
        self.page.get_by_role("button", name="Sign in").click()
        self.page.get_by_role("link", name=f"Sign in as {self.name}").click()  # the provider's page
        expect(self.sidebar()).to_contain_text(f"Signed in as {self.name}")
        bk.settle(self.page)

    def upload(self, folder: Path) -> None:
        csv = folder / f"{self.first}.csv"
        csv.write_text(bk.inventory_csv(self.prefix, 4))
        self.sidebar().locator('input[type="file"]').first.set_input_files(str(csv))
        self.sidebar().get_by_text(f"{csv.name} · 4 kernels").wait_for()
        bk.settle(self.page)

    def save(self, name: str, only_me: bool) -> str:
        """Save the current run from the sidebar; its share link."""
        saved = self.sidebar().get_by_text(f"Saved {name} in project team").first
        # On a loaded 2-core machine a submit can land while the previous run is still being drawn and be
        # dropped: once the app is idle with no answer, nothing was saved, so fill the form and submit again.
        for attempt in range(3):
            form = bk.single(self.sidebar().locator('[data-testid="stForm"]'))
            if not form.is_visible():
                self.sidebar().get_by_text("Save this run").click()
            form.get_by_label("Name").fill(name)
            form.get_by_label("Project").fill("team")
            form.get_by_text("Only me" if only_me else "Everyone in the app").click()
            expect(form.get_by_label("Name")).to_have_value(name)
            form.get_by_role("button", name="Save run").click()
            try:
                saved.wait_for(timeout=bk.TIMEOUT_MS)
                break
            except Exception as e:
                if not bk.is_timeout(e):
                    raise
                bk.settle(self.page)
                if attempt == 2 or saved.count():
                    break
        expect(self.sidebar()).to_contain_text(f"Saved {name} in project team")
        bk.settle(self.page)
        link = self.sidebar().locator('[data-testid="stCode"]').last.inner_text().strip()
        assert link.startswith(self.url) and "?run=" in link, link
        return link

    def history(self) -> str:
        bk.open_page(self.page, "History")
        table = self.main().locator('[data-testid="stDataFrame"]').first
        table.wait_for()
        for _ in range(bk.TIMEOUT_MS // 200):  # the grid fills its accessible copy of the cells after it appears:
            if f"{self.first} " in table.inner_html():  # every user has runs of their own, named "<first> ..."
                break  # 10 s was not always enough on a loaded 2-core machine (CI saw only the toolbar)
            self.page.wait_for_timeout(200)
        return table.inner_html()

    def shot(self, step: str) -> None:
        bk.shot(self.page, f"share-{self.first}-{step}")


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    folder = tmp_path_factory.mktemp("share")
    with fake_oidc.provider(USERS) as idp, app_with_login(folder, idp) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(bk.CHROMIUM), args=bk.ARGS)
        yield User(browser, url, "alice@example.com"), User(browser, url, "bob@example.com"), folder
        browser.close()


def test_bob_opens_alices_shared_run_by_its_link_but_never_her_private_one(people):
    alice, bob, folder = people
    alice.sign_in()
    bob.sign_in()

    alice.upload(folder)
    bk.open_page(alice.page, "Roofline")
    shared = alice.save("alice shared run", only_me=False)
    private = alice.save("alice private run", only_me=True)
    assert shared != private
    alice.shot("saved")

    # B opens A's shared run by its link: the same workload, device and page (Roofline)
    bob.page.goto(shared)
    bob.main().locator("h1").filter(has_text="Roofline").wait_for()
    bk.settle(bob.page)
    expect(bob.sidebar()).to_contain_text("alice shared run (saved run) · 4 kernels")
    bk.roofline_chart(bob.page)
    bk.open_page(bob.page, "Kernels")
    expect(bob.main()).to_contain_text(re.compile(r"4 of 4 kernels( \(\d+ launches\))?, in 4 rows"))
    table = bob.main().locator('[data-testid="stDataFrame"]').first
    for _ in range(bk.TIMEOUT_MS // 200):  # the grid fills its accessible copy of the cells after it appears
        if alice.prefix in table.inner_html():
            break
        bob.page.wait_for_timeout(200)
    assert alice.prefix in table.inner_html()
    bob.shot("shared")

    # ... but not A's private one: the link says so and nothing of A's reaches B's page
    bob.page.goto(private)
    expect(bob.main()).to_contain_text("This link's run cannot be opened")
    expect(bob.main()).to_contain_text("private to someone else")
    bk.settle(bob.page)
    expect(bob.sidebar()).to_contain_text("transformer_block.yaml · 12 kernels")
    html = bob.page.content()
    assert "alice private run" not in html and alice.prefix not in html
    bob.shot("private-refused")

    # B saves a private run of his own; neither sees the other's private run in the History list
    bob.upload(folder)
    bob_private = bob.save("bob private run", only_me=True)
    alice_sees, bob_sees = alice.history(), bob.history()
    assert "alice shared run" in alice_sees and "alice private run" in alice_sees and "bob private run" not in alice_sees
    assert "alice shared run" in bob_sees and "bob private run" in bob_sees and "alice private run" not in bob_sees
    alice.shot("history")
    bob.shot("history")

    alice.page.goto(bob_private)  # and A cannot open B's private run by its link either
    expect(alice.main()).to_contain_text("This link's run cannot be opened")
    assert bob.prefix not in alice.page.content()

    for user in (alice, bob):
        assert not user.console, f"{user.first}: browser console errors {user.console}"
        user.context.close()
