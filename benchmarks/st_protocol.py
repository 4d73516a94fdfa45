"""A minimal Streamlit client without a browser: the websocket protocol the frontend speaks, for load tests.

It does what the browser does for the load test's flow (open the app, upload one file through the sidebar's
uploader, switch page) and waits for each script run to finish, so the time it measures is the server's (script
runs, serialisation, the network on loopback) without any rendering. ``load_test.py --clients protocol`` uses it
to tell the server's share of a slowdown from the browsers' when both share one machine.

Written against Streamlit 1.67's messages (streamlit.proto); an internal protocol, so a later Streamlit may need
changes here. Every rerun sends the widgets it has set so far (as the frontend sends its whole widget state);
every other widget keeps its default.
"""

from __future__ import annotations

import asyncio
import urllib.request
import uuid
from dataclasses import dataclass, field

import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

XSRF_COOKIE = "_streamlit_xsrf"
EARLY_FOR_RERUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")


@dataclass
class Run:
    """What one script run sent: its elements by type, the texts of its markdown, and what went wrong."""
    elements: dict[str, list] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # exceptions and st.error messages

    def add(self, element) -> None:
        kind = element.WhichOneof("type")
        self.elements.setdefault(kind, []).append(getattr(element, kind))
        if kind == "markdown":
            self.texts.append(element.markdown.body)
        elif kind == "exception":
            self.errors.append(f"exception: {element.exception.type}: {element.exception.message}")
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            self.errors.append(f"error: {element.alert.body}")


def _put(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body, headers=headers, method="PUT")
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status


def _xsrf_cookie(url: str) -> str | None:
    with urllib.request.urlopen(url + "/_stcore/health", timeout=30) as response:  # sets the XSRF cookie
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name.strip() == XSRF_COOKIE:
                return rest.split(";", 1)[0]
    return None


class Session:
    """One Streamlit session over one websocket (``async with Session(url) as s``)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.session_id = ""
        self.pages: dict[str, str] = {}  # page title -> page_script_hash
        self.page_hash = ""
        self.uploaders: list[str] = []  # widget ids of the file uploaders in the last run, in order
        self.widgets: dict[str, object] = {}  # widget id -> the WidgetState last set
        self._xsrf: str | None = None
        self._ws = None

    async def __aenter__(self) -> Session:
        self._xsrf = await asyncio.to_thread(_xsrf_cookie, self.url)
        headers = {"Cookie": f"{XSRF_COOKIE}={self._xsrf}"} if self._xsrf else {}
        self._ws = await websockets.connect(
            "ws" + self.url.removeprefix("http") + "/_stcore/stream", subprotocols=["streamlit"],
            origin=self.url, additional_headers=headers, max_size=None, open_timeout=60)
        return self

    async def __aexit__(self, *exc) -> None:
        await self._ws.close()

    async def _send(self, msg: BackMsg) -> None:
        await self._ws.send(msg.SerializeToString())

    async def _receive(self) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(await self._ws.recv())
        return msg

    async def rerun(self, page: str | None = None, widgets=()) -> Run:
        """Run the script (on ``page``, a title, else the current page) with these widget states added to those
        set before; wait for the run that finishes (not one cut short for a rerun, such as the app's first page
        switch)."""
        if page is not None:
            self.page_hash = self.pages[page]
        msg = BackMsg()
        state = msg.rerun_script
        state.page_script_hash = self.page_hash
        state.context_info.timezone, state.context_info.locale = "UTC", "en-US"
        state.context_info.url = self.url + "/"
        self.widgets |= {w.id: w for w in widgets}
        state.widget_states.widgets.extend(self.widgets.values())
        await self._send(msg)
        run = Run()
        while True:
            fwd = await self._receive()
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                run, self.uploaders = Run(), []
                self.session_id = fwd.new_session.initialize.session_id or self.session_id
            elif kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in fwd.navigation.app_pages}
                self.page_hash = fwd.navigation.page_script_hash or self.page_hash
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                run.add(element)
                if element.WhichOneof("type") == "file_uploader":
                    self.uploaders.append(element.file_uploader.id)
            elif kind == "script_finished" and fwd.script_finished != EARLY_FOR_RERUN:
                return run

    async def upload(self, name: str, data: bytes, uploader: int = 0) -> Run:
        """Upload one file to the run's ``uploader``-th file uploader (the sidebar's is the first), as the
        frontend does: ask for an upload URL, PUT the file, rerun with the uploader's new state."""
        msg = BackMsg()
        msg.file_urls_request.request_id = request_id = str(uuid.uuid4())
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        await self._send(msg)
        while True:
            fwd = await self._receive()
            if fwd.WhichOneof("type") == "file_urls_response" and fwd.file_urls_response.response_id == request_id:
                urls = fwd.file_urls_response.file_urls[0]
                break
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if self._xsrf:
            headers |= {"Cookie": f"{XSRF_COOKIE}={self._xsrf}", "X-Xsrftoken": self._xsrf}
        await asyncio.to_thread(_put, self.url + urls.upload_url, body, headers)
        widget = BackMsg().rerun_script.widget_states.widgets.add()
        widget.id = self.uploaders[uploader]
        info = widget.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(data), urls.file_id
        info.file_urls.CopyFrom(urls)
        return await self.rerun(widgets=[widget])
