"""Keys that name content, so that sessions holding the same files, devices and options share one parse and one
analysis (Streamlit's resource caches) and different bytes never do."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from roofcore.catalog import hardware_to_json
from roofcore.models import Hardware


def content_key(files: Sequence[tuple[bytes, str]], fmt: str | None = None) -> str:
    """A key naming uploaded files by their content: SHA-256 of each name and its bytes, and the format
    override. The same files give the same key in every session (so their parse can be shared), different
    bytes never do."""
    h = hashlib.sha256()
    for data, name in files:
        h.update(len(name.encode()).to_bytes(8, "little") + name.encode() + len(data).to_bytes(8, "little"))
        h.update(data)
    h.update((fmt or "").encode())
    return "sha256:" + h.hexdigest()


def device_key(hw: Hardware) -> str:
    """A device by its figures: two sessions' custom devices with the same id but other numbers differ."""
    doc = json.dumps(hardware_to_json(hw), sort_keys=True, default=str)
    return f"{hw.id}:{hashlib.sha256(doc.encode()).hexdigest()[:16]}"


def analysis_token(workload_key: str, hws: Sequence[Hardware], combine: bool, achievable: bool) -> str:
    """Names one analysis by its content: the workload's key, every device's figures and the options."""
    return "|".join([workload_key, *(device_key(h) for h in hws), f"combine={combine}", f"achievable={achievable}"])
