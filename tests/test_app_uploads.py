"""The app's upload handling: a deep copy of an uploaded file (Streamlit makes one of every widget value on every
run) shares the file's bytes, and the content key names the bytes exactly, however large."""

from __future__ import annotations

import copy

from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

from app import keys
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
