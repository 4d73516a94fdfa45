"""Compressed inputs (roofcore/ingest/compression.py) and the profilers' binary reports: a file compressed with
bzip2, xz or Zstandard reads as the file itself (every sample and fixture: tests/test_perturb.py, ``recompressed``),
within the input size limit, and damaged or cut data is one line; an Nsight or xprof report given instead of its
export is named, with the command that exports it."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
from pathlib import Path

import pytest
from roofhelpers import damaged

import roofcore
from roofcore.cli import main
from roofcore.errors import InputError, LimitError, RoofcoreError
from roofcore.ingest import compression

DATA = Path(__file__).parent / "data"
INVENTORY = DATA / "advise" / "measured_block.csv"


def zstd(data: bytes) -> bytes:
    import pyarrow as pa

    return pa.compress(data, codec="zstd", asbytes=True)


CODECS = {"bzip2": bz2.compress, "xz": lzma.compress, "Zstandard": zstd}


@pytest.mark.parametrize("codec", CODECS)
def test_each_codec_undoes_to_the_bytes_and_counts_every_stream(codec):
    """``cat a.xz b.xz > c.xz`` (and bzip2's and Zstandard's frames alike) is one file of both contents; xz's
    stream padding between them is skipped."""
    pack = CODECS[codec]
    raw = INVENTORY.read_bytes()
    assert compression.unpacked(pack(raw), 1 << 20) == raw
    two = pack(raw) + (b"\x00" * 4 if codec == "xz" else b"") + pack(b"tail\n")
    assert compression.unpacked(two, 1 << 20) == raw + b"tail\n"
    assert compression.peek(pack(raw), 10) == raw[:10]


@pytest.mark.parametrize("codec", CODECS)
def test_a_bomb_stops_at_the_limit_and_a_cut_file_is_one_line(codec):
    pack = CODECS[codec]
    bomb = pack(b"name,flops,bytes\n" + b"0" * 5_000_000)
    assert len(bomb) < 20_000
    with pytest.raises(LimitError, match=f"the {codec} data expands beyond the input size limit of 1 MB"):
        compression.unpacked(bomb, 1_000_000, "bomb")
    assert len(compression.unpacked(bomb, 5_000_017)) == 5_000_017  # exactly at the limit is fine
    data = pack(INVENTORY.read_bytes() * 20)
    with pytest.raises(InputError) as e:
        roofcore.read(data[: len(data) // 2], name="cut.csv")
    assert str(e.value).startswith(f"cut.csv: the {codec} data ends early") and "\n" not in str(e.value)


@pytest.mark.parametrize("codec", CODECS)
def test_damaged_data_is_an_input_error_never_a_crash(codec):
    """Bytes changed and the data cut at random (seeded): every outcome is a workload or a RoofcoreError."""
    for d in damaged(CODECS[codec](INVENTORY.read_bytes()), seed=11, n=150, most=6):
        with contextlib.suppress(RoofcoreError):
            roofcore.read(d, name="f.csv")


def test_the_cli_reads_compressed_files_by_their_content(tmp_path, capsys):
    """Whatever the name: a .bz2, an .xz and a .zst named .csv read as the inventory they hold."""
    raw = INVENTORY.read_bytes()
    docs = []
    for name, data in (("plain.csv", raw), ("a.csv.bz2", bz2.compress(raw)), ("a.csv.xz", lzma.compress(raw)),
                       ("renamed.csv", zstd(raw)), ("a.csv.gz", gzip.compress(raw))):
        (tmp_path / name).write_bytes(data)
        assert main(["analyze", "--json", "--hardware", "h100-sxm", str(tmp_path / name)]) == 0, name
        docs.append(capsys.readouterr().out)
    first = roofcore.read(INVENTORY)
    assert all(d.replace(n, "") == docs[0].replace("plain.csv", "") for d, n in
               zip(docs, ("plain.csv", "a.csv.bz2", "a.csv.xz", "renamed.csv", "a.csv.gz"), strict=True))
    assert len(first) > 0


@pytest.mark.parametrize(("name", "data", "said"), [
    ("my run.ncu-rep", b"\x00\x01NVIDIA\x00" * 40,
     "my run.ncu-rep: expected a profiler's text export (CSV or JSON), found an Nsight Compute report (binary). "
     "Hint: export it as CSV: ncu --import 'my run.ncu-rep' --csv --page raw --print-units base > 'my run.csv' "
     "(or --page details), and load that."),
    ("step.nsys-rep", b"\x00" * 64,
     "step.nsys-rep: expected a profiler's text export (CSV or JSON), found an Nsight Systems report (binary). "
     "Hint: export it as SQLite: nsys export --type sqlite -o step.sqlite step.nsys-rep, and load step.sqlite (every "
     "kernel launch, with its NVTX ranges)."),
    ("host.xplane.pb", b"\n\x00\x12\x00" * 10, "found an xprof (TensorBoard profiler) trace (binary)"),
    ("run.7z", b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 30,
     "run.7z: expected a text workload file (CSV or YAML), found binary data (a 7-Zip archive). Hint: extract it, "
     "or pack the files as .zip or .tar.gz (read as their folder)."),
    ("a.csv", b"\x28\xb5\x2f\xfd" + b"\x01" * 30, "a.csv: the Zstandard data"),
])
def test_a_binary_report_or_unread_archive_says_what_it_is_and_what_to_load(name, data, said):
    with pytest.raises(InputError) as e:
        roofcore.read(data, name=name)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_a_report_in_a_folder_is_left_out_by_name(tmp_path):
    """A folder holding the export and the report it came from: the report is left out, named as a report."""
    (tmp_path / "inventory.csv").write_bytes(INVENTORY.read_bytes())
    (tmp_path / "inventory.ncu-rep").write_bytes(b"\x00\x07" * 100)
    w = roofcore.read_many([tmp_path])
    assert len(w) == len(roofcore.read(INVENTORY))
    said = [x for x in w.warnings if x.startswith("Left out 1 file(s) of the folder")]
    assert len(said) == 1 and "inventory.ncu-rep (an Nsight Compute report (binary))" in said[0], w.warnings
