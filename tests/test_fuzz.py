"""Fuzzing every registered parser and the catalog loader: any bytes end in a result or a RoofcoreError.

Seeds are the fixtures under tests/data (and ../shared/samples where present); each example mutates a
seed (truncation, byte flips, deleted or duplicated lines, spliced garbage) or is arbitrary bytes, and is
fed to the format's parser directly (bypassing detection) and to detection + parsing. The normal run
does a few hundred examples per format; ``ROOFCORE_FUZZ_LONG=1`` runs 10,000 per format.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofcore import RoofcoreError, ingest
from roofcore.catalog import load_bytes
from roofcore.models import Workload

ROOT = Path(__file__).parent
SHARED = ROOT.parent.parent / "shared" / "samples"
LONG = os.environ.get("ROOFCORE_FUZZ_LONG") == "1"
EXAMPLES = 10_000 if LONG else 150
SEED_LIMIT = 256 * 1024  # keep mutations of large seeds cheap


def _seed_files() -> list[Path]:
    files = [p for p in (ROOT / "data").rglob("*") if p.is_file()]
    if SHARED.is_dir():
        files += [p for p in SHARED.iterdir() if p.is_file() and p.suffix != ".md"]
    return sorted(files)


def _seeds_by_format() -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {name: [] for name in ingest.FORMATS}
    for p in _seed_files():
        data = p.read_bytes()[:SEED_LIMIT]
        try:
            fmt = ingest.detect(data, p.name).name
        except RoofcoreError:
            continue
        out[fmt].append(data)
    return out


SEEDS = _seeds_by_format()


@st.composite
def mutated(draw, seeds: list[bytes]):
    if not seeds or draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=2048))
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 5))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == 0:  # truncate
            data = data[:i]
        elif op == 1:  # flip a byte
            data[i] = draw(st.integers(0, 255))
        elif op == 2:  # delete a line
            lines = bytes(data).split(b"\n")
            j = draw(st.integers(0, len(lines) - 1))
            data = bytearray(b"\n".join(lines[:j] + lines[j + 1:]))
        elif op == 3:  # duplicate a line
            lines = bytes(data).split(b"\n")
            j = draw(st.integers(0, len(lines) - 1))
            data = bytearray(b"\n".join(lines[: j + 1] + lines[j:]))
        elif op == 4:  # splice in text that parsers find interesting
            junk = draw(st.sampled_from([b",", b'"', b"\n", b"n/a", b"-1", b"1e999", b"nan", b"\x00", b"{", b"]",
                                         b"1,234,567.00", b"==PROF==", b"\xef\xbb\xbf", b"'", b"\r\n"]))
            data[i:i] = junk
        else:  # replace a digit run
            data[i:i + 1] = draw(st.sampled_from([b"0", b"-7", b"9" * 40, b"", b"x"]))
    return bytes(data)


def _check(result) -> None:
    assert isinstance(result, Workload | dict)
    if isinstance(result, Workload):
        f = result.frame
        assert {"name", "flops", "time_s", "count"} <= set(f.columns)
        assert (f["count"] >= 0).all()


@pytest.mark.parametrize("fmt", sorted(ingest.FORMATS))
def test_parser_never_raises_anything_but_roofcore_errors(fmt):
    parser = ingest.FORMATS[fmt].parse

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=mutated(SEEDS[fmt]))
    def run(data):
        with contextlib.suppress(RoofcoreError):
            _check(parser(data, f"fuzz.{fmt}", {}))
        with contextlib.suppress(RoofcoreError):
            _check(ingest.read(data, name="fuzz-input"))

    run()


CATALOG_SEEDS = [p.read_bytes() for p in (ROOT.parent / "catalogs").glob("*.yaml")] + [
    (ROOT / "data" / "good_catalog.yaml").read_bytes()]


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutated(CATALOG_SEEDS))
def test_catalog_loader_never_raises_anything_but_roofcore_errors(data):
    with contextlib.suppress(RoofcoreError):
        load_bytes(data, "fuzz.yaml")
