"""A tiny OpenID Connect provider for browser tests of the login: discovery, an authorization page with one
"Sign in as ..." link per test user, a token endpoint issuing RS256-signed ID tokens (Authlib's JOSE), and the
JWKS. It runs in a thread on 127.0.0.1 on a free port and is reachable from nowhere else.

Streamlit's real login flow (st.login -> /auth/login -> this provider -> /oauth2callback -> signed cookie) runs
against it unchanged, so a browser context signed in here is a signed-in user of the app, as with Google or Okta.
"""

from __future__ import annotations

import contextlib
import html
import json
import secrets
import threading
import time
import urllib.parse
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


@contextlib.contextmanager
def provider(users: Mapping[str, str]) -> Iterator[Provider]:
    """Serve a provider whose sign-in page offers ``users`` (e-mail -> display name)."""
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
                for email, name in users.items():
                    pick = urllib.parse.urlencode({**q, "user": email})
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
            claims = {"iss": state["url"], "sub": grant["user"], "aud": client_id, "iat": now, "exp": now + 600,
                      "email": grant["user"], "email_verified": True, "name": users[grant["user"]]}
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
