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
from roofhelpers import mutated

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


FUZZ_JUNK = [b",", b'"', b"\n", b"n/a", b"-1", b"1e999", b"nan", b"\x00", b"{", b"]", b"1,234,567.00", b"==PROF==",
             b"\xef\xbb\xbf", b"'", b"\r\n"]
FUZZ_REPLACEMENTS = [b"0", b"-7", b"9" * 40, b"", b"x"]  # for a byte: often a digit of a number


def fuzzed(seeds: list[bytes]):
    return mutated(seeds, FUZZ_JUNK, FUZZ_REPLACEMENTS, raw_size=2048)


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
    @given(data=fuzzed(SEEDS[fmt]))
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
@given(data=fuzzed(CATALOG_SEEDS))
def test_catalog_loader_never_raises_anything_but_roofcore_errors(data):
    with contextlib.suppress(RoofcoreError):
        load_bytes(data, "fuzz.yaml")
