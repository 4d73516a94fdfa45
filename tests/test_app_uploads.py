"""The app's upload handling: a deep copy of an uploaded file (Streamlit makes one of every widget value on every
run) shares the file's bytes, and the content key names the bytes exactly, however large. Under AppTest: an upload
is never lost, whenever its run is stopped and after the uploader is emptied, and a reload says what it cleared."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec
from streamlit.testing.v1 import AppTest

from app import keys, reload, state
from app.markdown import unescape_markdown
from app.uploads import share_upload_bytes


def _file(data: bytes) -> UploadedFile:
    return UploadedFile(UploadedFileRec(file_id="f1", name="a.csv", type="text/csv", data=data), FileURLs())


def test_a_deep_copy_of_an_upload_shares_its_bytes_and_keeps_its_own_position():
    assert share_upload_bytes()
    assert share_upload_bytes()  # installing twice changes nothing
    data = b"name,flops\n" + b"k,1\n" * 1000
    f = _file(data)
    f.read(5)
    twin = copy.deepcopy([f])[0]
    assert twin is not f and twin.getvalue() is data  # the same bytes object: nothing copied
    assert (twin.name, twin.type, twin.file_id, twin.size, twin.tell()) == ("a.csv", "text/csv", "f1", len(data), 5)
    twin.read(3)
    assert (f.tell(), twin.tell()) == (5, 8)
    assert f.read() == data[5:]


def test_the_content_key_names_every_byte_of_a_large_upload(monkeypatch):
    monkeypatch.setattr(keys, "CHUNK", 64)  # several parts without a large test file
    data = bytes(range(256)) * 3
    key = keys.content_key([(data, "a.csv")])
    assert key.startswith("sha256:") and key == keys.content_key([(bytes(data), "a.csv")])
    for i in (0, 63, 64, 500, len(data) - 1):  # a byte changed in any part, at a part's edge too
        changed = bytearray(data)
        changed[i] ^= 1
        assert keys.content_key([(bytes(changed), "a.csv")]) != key
    assert keys.content_key([(data[:-1], "a.csv")]) != key
    assert keys.content_key([(data, "b.csv")]) != key
    assert keys.content_key([(data, "a.csv")], "ncu") != key
    assert keys.content_key([(data[:100], "a.csv"), (data[100:], "b.csv")]) != keys.content_key(
        [(data[:101], "a.csv"), (data[101:], "b.csv")])


# ------------------------------------------------------------------------------------------------ under AppTest
# A click on another page starts the next run while the upload's run still reads the file, and Streamlit stops that
# run at its next touch of the session state (tests/test_browser_uploads.py does it in a browser). Here the run is
# stopped right after each write of a load in turn: the next run must still show the upload.

INVENTORY = b"name,count,flops,bytes,time_ms,precision\ngemm,10,8.8e12,2.8e9,12.0,bf16\nsoftmax,4,2.1e10,1.7e10,6.5,bf16\n"
APP = str(Path(__file__).resolve().parents[1] / "streamlit_app.py")


def _start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _sidebar_text(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def _stop_after(monkeypatch, name: str) -> list[str]:
    """Stop the next run right after it writes the session key ``name`` (once); the list says whether it did."""
    write = state.Key.set
    stopped: list[str] = []

    def write_then_stop(self, value):
        write(self, value)
        if self.name == name and not stopped:
            stopped.append(self.name)
            raise StopException()  # as Streamlit stops a run at its next touch of the session state

    monkeypatch.setattr(state.Key, "set", write_then_stop)
    return stopped


@pytest.mark.usefixtures("navigation_only")
@pytest.mark.parametrize("stop_after", ["workload", "load_errors", "loaded_key"])
def test_a_run_stopped_after_any_write_of_a_load_leaves_the_upload_to_the_next_run(monkeypatch, stop_after):
    at = _start()
    stopped = _stop_after(monkeypatch, stop_after)
    at.sidebar.file_uploader[0].set_value([("clicked.csv", INVENTORY, "text/csv")]).run()
    assert stopped == [stop_after]
    at.switch_page("pages/kernels.py").run()  # the click's run, on another page
    assert not at.exception, [e.message for e in at.exception]
    assert "**clicked.csv** · 2 kernels" in _sidebar_text(at)
    assert "bundled example" not in _sidebar_text(at)
    assert len(at.dataframe[0].value) == 2


@pytest.mark.usefixtures("navigation_only")
@pytest.mark.parametrize("stop_after", ["upload_use", "upload_seen"])
def test_a_file_added_to_an_upload_joins_it_whenever_its_run_stops(monkeypatch, stop_after):
    at = _start()
    at.sidebar.file_uploader[0].set_value([("a.csv", INVENTORY, "text/csv")]).run()
    stopped = _stop_after(monkeypatch, stop_after)
    more = b"name,flops,bytes,time_us\nextra_kernel,1e9,1e8,50\n"
    at.sidebar.file_uploader[0].set_value([("a.csv", INVENTORY, "text/csv"), ("b.csv", more, "text/csv")]).run()
    assert stopped == [stop_after]
    at.switch_page("pages/kernels.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert "**a.csv + b.csv** · 3 kernels" in _sidebar_text(at)
    assert "not analysed" not in _sidebar_text(at)


@pytest.mark.usefixtures("navigation_only")
def test_after_emptying_the_uploader_the_next_pick_is_read():
    at = _start()
    uploader = at.sidebar.file_uploader[0]
    key = uploader.key
    uploader.set_value([("first.csv", INVENTORY, "text/csv")]).run()
    assert "**first.csv** · 2 kernels" in _sidebar_text(at)
    at.sidebar.file_uploader[0].set_value([]).run()  # × on the only file
    assert "transformer_block.yaml" in _sidebar_text(at)
    assert at.sidebar.file_uploader[0].key == key  # the same widget: the browser's next pick reaches the app
    at.sidebar.file_uploader[0].set_value([("second.csv", INVENTORY[:-38], "text/csv")]).run()
    assert "**second.csv** · 1 kernel " in _sidebar_text(at)


@pytest.mark.usefixtures("navigation_only")
def test_the_address_names_the_upload_on_screen_and_a_reload_says_it_is_gone():
    at = _start()
    assert reload.PARAM not in at.query_params
    at.sidebar.file_uploader[0].set_value([("kept.csv", INVENTORY, "text/csv")]).run()
    assert at.query_params[reload.PARAM] == "kept.csv"
    next(b for b in at.sidebar.button if b.label == "Clear uploads").click().run()
    assert reload.PARAM not in at.query_params  # the example: a reload has nothing to say

    fresh = AppTest.from_file(APP, default_timeout=60)  # the reload: a new session, the same address
    fresh.query_params[reload.PARAM] = "kept.csv"
    fresh.run()
    notes = [i.value for i in fresh.info if "Uploads live in this browser session" in i.value]
    assert len(notes) == 1 and "**kept.csv** is no longer here" in unescape_markdown(notes[0])
    assert "transformer_block.yaml" in _sidebar_text(fresh)
    fresh.switch_page("pages/roofline.py").run()  # said on every page while the example stands in
    assert any("Uploads live in this browser session" in i.value for i in fresh.info)
    fresh.sidebar.file_uploader[0].set_value([("again.csv", INVENTORY, "text/csv")]).run()
    assert not any("Uploads live in this browser session" in i.value for i in fresh.info)
    assert fresh.query_params[reload.PARAM] == "again.csv"


@pytest.mark.usefixtures("navigation_only")
def test_a_first_visit_says_nothing_of_uploads():
    at = _start()
    assert not any("Uploads live" in i.value for i in at.info)


@pytest.mark.usefixtures("navigation_only")
def test_a_file_dropped_twice_is_read_once():
    """Dropped again while the first copy is still read (the uploader takes both): its kernels are not counted
    twice, and the sidebar says so."""
    at = _start()
    at.sidebar.file_uploader[0].set_value([("twice.csv", INVENTORY, "text/csv"), ("twice.csv", INVENTORY, "text/csv")])
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert "**twice.csv** · 2 kernels (14 launches)" in _sidebar_text(at)
    assert "In the uploader more than once, read once: twice.csv." in _sidebar_text(at)
