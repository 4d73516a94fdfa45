"""A tiny OpenID Connect provider for browser tests of the login: discovery, an authorization page with one
"Sign in as ..." link per test user, a token endpoint issuing RS256-signed ID tokens (Authlib's JOSE), and the
JWKS. It runs in a thread on 127.0.0.1 on a free port and is reachable from nowhere else.

Streamlit's real login flow (st.login -> /auth/login -> this provider -> /oauth2callback -> signed cookie) runs
against it unchanged, so a browser context signed in here is a signed-in user of the app, as with Google or Okta.

Each user's claims can be set (``sub``, ``email``, ``email_verified``, ``name``): two providers may vouch for the
same e-mail under different subjects, or send an e-mail they did not verify. :func:`sign_in` runs the
authorization-code flow over HTTP without a browser and returns the ID token's claims, checked against the JWKS.
"""

from __future__ import annotations

import contextlib
import html
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Provider:
    url: str
    client_id: str
    client_secret: str

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    def auth_secrets(self, app_url: str, cookie_secret: str) -> str:
        """The ``[auth]`` section of a ``secrets.toml`` for an app at ``app_url`` using this provider."""
        return (f'[auth]\nredirect_uri = "{app_url}/oauth2callback"\ncookie_secret = "{cookie_secret}"\n'
                f'client_id = "{self.client_id}"\nclient_secret = "{self.client_secret}"\n'
                f'server_metadata_url = "{self.metadata_url}"\n')


def _claims(login: str, user: str | Mapping[str, object]) -> dict:
    """A user's own claims: ``user`` is a display name (sub and e-mail are ``login``, verified) or a mapping of
    claims, each defaulting the same way."""
    given = {"name": user} if isinstance(user, str) else dict(user)
    return {"sub": login, "email": login, "email_verified": True, "name": login} | given


@contextlib.contextmanager
def provider(users: Mapping[str, str | Mapping[str, object]]) -> Iterator[Provider]:
    """Serve a provider whose sign-in page offers ``users`` (login -> display name, or -> claims: see _claims)."""
    from joserfc import jwt  # Authlib's own JOSE library (authlib.jose is deprecated)
    from joserfc.jwk import RSAKey

    key = RSAKey.generate_key(2048)
    kid = secrets.token_hex(8)
    public = {**key.as_dict(private=False), "kid": kid, "use": "sig", "alg": "RS256"}
    client_id, client_secret = "roofline-tests", secrets.token_urlsafe(16)
    codes: dict[str, dict] = {}
    lock = threading.Lock()
    state: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json", headers: dict | None = None):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(url.query))
            base = state["url"]
            if url.path == "/.well-known/openid-configuration":
                doc = {"issuer": base, "authorization_endpoint": f"{base}/authorize",
                       "token_endpoint": f"{base}/token", "jwks_uri": f"{base}/jwks",
                       "response_types_supported": ["code"], "subject_types_supported": ["public"],
                       "id_token_signing_alg_values_supported": ["RS256"],
                       "scopes_supported": ["openid", "email", "profile"],
                       "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]}
                self._send(200, json.dumps(doc).encode())
            elif url.path == "/jwks":
                self._send(200, json.dumps({"keys": [public]}).encode())
            elif url.path == "/authorize":
                links = []
                for login, user in users.items():
                    pick = urllib.parse.urlencode({**q, "user": login})
                    name = str(_claims(login, user)["name"])
                    links.append(f'<p><a href="/choose?{html.escape(pick)}">Sign in as {html.escape(name)}</a></p>')
                page = ('<html><head><link rel="icon" href="data:,"></head><body><h1>Test identity provider</h1>'
                        + "".join(links) + "</body></html>")  # no favicon request: no 404 in the console
                self._send(200, page.encode(), "text/html; charset=utf-8")
            elif url.path == "/choose" and q.get("user") in users and q.get("client_id") == client_id:
                code = secrets.token_urlsafe(16)
                with lock:
                    codes[code] = {"user": q["user"], "nonce": q.get("nonce"), "redirect_uri": q["redirect_uri"]}
                back = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
                self._send(302, b"", "text/plain", {"Location": back})
            else:
                self._send(404, b"{}")

        def do_POST(self) -> None:
            if urllib.parse.urlsplit(self.path).path != "/token":
                self._send(404, b"{}")
                return
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()))
            with lock:
                grant = codes.pop(form.get("code", ""), None)
            if grant is None or form.get("redirect_uri") != grant["redirect_uri"]:
                self._send(400, json.dumps({"error": "invalid_grant"}).encode())
                return
            now = int(time.time())
            claims = {"iss": state["url"], "aud": client_id, "iat": now, "exp": now + 600,
                      **{k: v for k, v in _claims(grant["user"], users[grant["user"]]).items() if v is not None}}
            if grant["nonce"]:
                claims["nonce"] = grant["nonce"]
            id_token = jwt.encode({"alg": "RS256", "kid": kid}, claims, key)
            body = {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "expires_in": 600,
                    "id_token": id_token, "scope": "openid email profile"}
            self._send(200, json.dumps(body).encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Provider(state["url"], client_id, client_secret)
    finally:
        server.shutdown()
        server.server_close()


def sign_in(idp: Provider, login: str, redirect_uri: str = "http://127.0.0.1:9/oauth2callback") -> dict:
    """Sign ``login`` in at ``idp`` as an app would (authorize, choose, exchange the code) and return the ID
    token's claims, verified with the provider's JWKS: what Streamlit's ``st.user`` carries after ``st.login``."""
    from joserfc import jwt
    from joserfc.jwk import KeySet

    nonce = secrets.token_urlsafe(8)
    query = urllib.parse.urlencode({"client_id": idp.client_id, "redirect_uri": redirect_uri, "state": "s",
                                    "nonce": nonce, "response_type": "code", "scope": "openid email profile",
                                    "user": login})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        urllib.request.build_opener(NoRedirect).open(f"{idp.url}/choose?{query}", timeout=10)
        raise AssertionError("the provider did not redirect back")
    except urllib.error.HTTPError as e:
        back = urllib.parse.urlsplit(e.headers["Location"])
    code = dict(urllib.parse.parse_qsl(back.query))["code"]
    form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                                   "client_id": idp.client_id, "client_secret": idp.client_secret}).encode()
    with urllib.request.urlopen(f"{idp.url}/token", data=form, timeout=10) as r:
        id_token = json.loads(r.read())["id_token"]
    with urllib.request.urlopen(f"{idp.url}/jwks", timeout=10) as r:
        keys = KeySet.import_key_set(json.loads(r.read()))
    claims = jwt.decode(id_token, keys).claims
    assert claims["iss"] == idp.url and claims["aud"] == idp.client_id and claims["nonce"] == nonce
    return dict(claims)
