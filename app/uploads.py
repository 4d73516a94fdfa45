"""Uploads without copies of their bytes: Streamlit deep-copies every widget's value on every script run (so that
code cannot change the stored value), and a deep copy of an ``UploadedFile`` copies the whole file (``BytesIO``'s
pickling state). For a 136 MB export that is 60 ms and 136 MB more on every run for as long as the file stays in
the uploader, on the upload's own run first. :func:`share_upload_bytes` gives ``UploadedFile`` a ``__deepcopy__``
that makes an independent file object (its own read position) over the same immutable bytes, as Streamlit itself
builds one from its stored record on each run.
"""

from __future__ import annotations

from streamlit.proto.Common_pb2 import FileURLs
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec


def _deepcopy(self: UploadedFile, memo: dict) -> UploadedFile:
    """A new file object over the same bytes (``getvalue`` of an unchanged ``BytesIO`` is its buffer, no copy), at
    the same position; the name, type, id and URLs are immutable strings and protobufs the copy may share."""
    twin = UploadedFile(UploadedFileRec(file_id=self.file_id, name=self.name, type=self.type, data=self.getvalue()),
                        self._file_urls)
    twin.seek(self.tell())
    memo[id(self)] = twin
    return twin


def share_upload_bytes() -> bool:
    """Install the copy above (Streamlit's own class, so every uploader of the app gains it); True once it is.
    Tried on a small file first: where this Streamlit builds its files otherwise (a later version), nothing
    changes and the stock copy stays."""
    if vars(UploadedFile).get("__deepcopy__") is _deepcopy:
        return True
    if "__deepcopy__" in vars(UploadedFile):  # Streamlit has its own now
        return False
    try:
        probe = UploadedFile(UploadedFileRec(file_id="probe", name="probe.csv", type="text/csv", data=b"a,b\n"),
                             FileURLs())
        probe.read(2)
        twin = _deepcopy(probe, {})
        ok = (twin.getvalue(), twin.tell(), twin.name, twin.file_id) == (b"a,b\n", 2, "probe.csv", "probe")
    except (AttributeError, TypeError, ValueError):
        return False
    if ok:
        UploadedFile.__deepcopy__ = _deepcopy
    return ok


__all__ = ["share_upload_bytes"]
