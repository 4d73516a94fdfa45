"""Archives read as the folders they hold (roofcore/ingest/archive.py): the CLI, ``read``, ``read_many`` and the
app's uploader take ``run.zip`` and ``run.tar.gz`` (any of tar's compressions) as their files, an archive inside
one too, within the input size limit, and refuse a damaged, encrypted or empty archive in one line."""

from __future__ import annotations

import bz2
import contextlib
import io
import json
import lzma
import random
import tarfile
import zipfile
from pathlib import Path

import pytest
from roofhelpers import damaged
from test_perturb import differences

import roofcore
from roofcore.cli import main
from roofcore.errors import InputError, LimitError, RoofcoreError
from roofcore.ingest.archive import MAX_MEMBERS, is_archive, members

DATA = Path(__file__).parent / "data"
#: a rocprof-compute workload folder: counters, the GPU and its measured roofs
FOLDER = {"workloads/vcopy/MI200/pmc_perf.csv": DATA / "rocprof" / "pmc_perf_mi200.csv",
          "workloads/vcopy/MI200/sysinfo.csv": DATA / "rocprof" / "sysinfo_mi200.csv",
          "workloads/vcopy/MI200/roofline.csv": DATA / "rocprof" / "roofline.csv"}


def zipped(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip archive of ``files``, the same bytes whenever it is made (a fixed date: pytest-xdist's workers
    collect the parameters built from it, and must see the same ones)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in files.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data, compress_type=method)
    return buf.getvalue()


def tarred(files: dict[str, bytes], compress=None, prefix: str = "./", links: dict[str, str] | None = None) -> bytes:
    """A tar archive as ``tar czf run.tgz .`` writes it: the folders too, names under ``./``; ``links``: symbolic
    links (name → target) after the files."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for folder in sorted({n.rsplit("/", 1)[0] for n in files if "/" in n}):
            info = tarfile.TarInfo(prefix + folder)
            info.type = tarfile.DIRTYPE
            t.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(prefix + name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            t.addfile(info)
    return compress(buf.getvalue()) if compress else buf.getvalue()


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    return pa.compress(data, codec="zstd", asbytes=True)


#: tar's compressions, by the ending `tar -a` picks them from
TARS = {"run.tar": None, "run.tgz": lambda d: __import__("gzip").compress(d, mtime=0), "run.tar.bz2": bz2.compress,
        "run.tar.xz": lzma.compress, "run.tar.zst": _zstd}


@pytest.mark.parametrize("name", TARS)
def test_a_tar_archive_of_a_run_folder_reads_as_its_files_read_together(name, tmp_path):
    """``tar caf run.tar.xz workloads/``, plain or compressed: the same numbers and measured devices as the files
    named one by one, the leading ``./`` dropped from the names, links and the Mac's ``._`` copies skipped."""
    files = {n: p.read_bytes() for n, p in FOLDER.items()}
    data = tarred({**files, "workloads/vcopy/MI200/._pmc_perf.csv": b"\x00\x05\x16\x07",
                   "workloads/vcopy/MI200/log.txt": b"rocprof-compute 2.0 profile mode\n"}, TARS[name],
                  links={"workloads/latest.csv": "vcopy/MI200/pmc_perf.csv"})
    assert is_archive(data)
    alone = roofcore.read_many(list(FOLDER.values()))
    for got in (roofcore.read_many([(data, name)]), roofcore.read(data, name=name)):
        assert not differences(alone, got)
        assert [h.id for h in got.measured] == [h.id for h in alone.measured]
        assert got.sources[0] == f"{name}/workloads/vcopy/MI200/pmc_perf.csv"
        said = [w for w in got.warnings if w.startswith("Left out 1 file(s) of the tar archive")]
        assert len(said) == 1 and f"{name}/workloads/vcopy/MI200/log.txt" in said[0], got.warnings
    (tmp_path / "shared.bin").write_bytes(data)  # the content decides, not the name
    assert not differences(alone, roofcore.read(tmp_path / "shared.bin"))


def test_an_archive_in_an_archive_is_opened_one_level_deep():
    """A job's per-rank archives packed together: the ranks' files read; an archive nested one level deeper is
    left out, named, as any file that is no profile."""
    trace = (DATA / "kineto" / "shapes.pt.trace.json").read_bytes()
    inner = zipped({"rank1.json": trace})
    deeper = zipped({"rank3.zip": zipped({"rank3.json": trace})})
    outer = zipped({"rank0.tgz": tarred({"rank0.json": trace}, TARS["run.tgz"]), "rank1.zip": inner,
                    "old.zip": deeper})
    w = roofcore.read(outer, name="job.zip")
    assert len(w) == 2 * len(roofcore.read(DATA / "kineto" / "shapes.pt.trace.json"))
    assert sorted(set(w.frame["source"])) == ["job.zip/rank0.tgz/rank0.json", "job.zip/rank1.zip/rank1.json"]
    said = [x for x in w.warnings if x.startswith("Left out 1 file(s) of the zip archive")]
    assert len(said) == 1 and "job.zip/old.zip/rank3.zip (binary data (a zip archive))" in said[0], w.warnings


def test_nested_archives_share_the_limits():
    """Files inflated from the archives inside count against the one input limit and the one file count."""
    inner = zipped({"a.csv": b"name,flops,bytes\n" + b"0" * 600_000})
    with pytest.raises(LimitError, match="expand beyond the input size limit of 1 MB"):
        members(zipped({"x.zip": inner, "y.zip": inner}), "two.zip", 1_000_000)
    many = zipped({f"{i}.csv": b"" for i in range(MAX_MEMBERS // 2 + 1)}, zipfile.ZIP_STORED)
    with pytest.raises(LimitError, match="the archive, with the archives in it, holds"):
        members(zipped({"x.zip": many, "y.zip": many}, zipfile.ZIP_STORED), "many.zip", 10**9)


@pytest.mark.parametrize(("data", "said"), [
    (tarred({"sub/.keep": b""}), "the tar archive holds no files to read"),
    (tarred({"a.csv": (DATA / "advise" / "measured_block.csv").read_bytes() * 50})[:5000],
     "not a readable tar archive (unexpected end of data: a truncated or partial copy?)"),
    (TARS["run.tgz"](tarred({"a.csv": random.Random(3).randbytes(20_000)}))[:5000], "the gzip data ends early"),
], ids=["no-files", "cut", "cut-gzip"])
def test_a_bad_tar_archive_is_one_line(data, said):
    with pytest.raises(InputError) as e:
        roofcore.read_many([(data, "run.tar")])
    assert said in str(e.value) and "\n" not in str(e.value)


def test_a_damaged_tar_archive_is_an_input_error_never_a_crash():
    for d in damaged(tarred({n: p.read_bytes() for n, p in FOLDER.items()}), seed=5, n=300):
        with contextlib.suppress(RoofcoreError):
            roofcore.read_many([(d, "f.tar")])


def test_an_archive_of_a_run_folder_reads_as_its_files_read_together(tmp_path):
    """The archive's files in name order, the non-profile ones left out with a warning, the Mac's and hidden
    copies skipped: the same numbers and measured devices as the files named one by one."""
    files = {name: path.read_bytes() for name, path in FOLDER.items()}
    extra = {"workloads/vcopy/MI200/log.txt": b"rocprof-compute 2.0 profile mode\n",
             "__MACOSX/workloads/._pmc_perf.csv": b"\x00\x05\x16\x07", "workloads/.DS_Store": b"\x00\x00\x00\x01"}
    data = zipped({**extra, **files})
    alone = roofcore.read_many(list(FOLDER.values()))
    for got in (roofcore.read_many([(data, "run.zip")]), roofcore.read(data, name="run.zip")):
        assert not differences(alone, got)
        assert [h.id for h in got.measured] == [h.id for h in alone.measured]
        assert got.sources[0] == "run.zip/workloads/vcopy/MI200/pmc_perf.csv"
        said = [w for w in got.warnings if w.startswith("Left out 1 file(s) of the zip archive")]
        assert len(said) == 1 and "run.zip/workloads/vcopy/MI200/log.txt" in said[0]
    path = tmp_path / "shared-by-a-colleague.bin"  # the content decides, not the name
    path.write_bytes(data)
    assert not differences(alone, roofcore.read(path))


def test_an_archive_in_a_folder_is_read_as_part_of_the_folder(tmp_path):
    """A job's traces, some zipped or tarred: the folder's files and the archives' together, and what is no profile
    in them left out with one warning that names the kinds of holder it came from."""
    trace = (DATA / "kineto" / "shapes.pt.trace.json").read_bytes()
    (tmp_path / "rank0.json").write_bytes(trace)
    (tmp_path / "rank1.zip").write_bytes(zipped({"rank1.json": trace, "notes.txt": b"run 7\n"}))
    (tmp_path / "rank2.tar.xz").write_bytes(tarred({"rank2.json": trace}, lzma.compress))
    (tmp_path / "README.md").write_text("# traces\n")
    w = roofcore.read_many([tmp_path])
    assert len(w) == 3 * len(roofcore.read(DATA / "kineto" / "shapes.pt.trace.json"))
    assert sorted(set(w.frame["source"])) == [str(tmp_path / "rank0.json"), f"{tmp_path / 'rank1.zip'}/rank1.json",
                                              f"{tmp_path / 'rank2.tar.xz'}/rank2.json"]
    said = [x for x in w.warnings if x.startswith("Left out 2 file(s) of the folder or zip archive")]
    assert len(said) == 1 and "README.md" in said[0] and "rank1.zip/notes.txt" in said[0], w.warnings


def test_the_cli_reads_an_archive(tmp_path, capsys):
    trace = DATA / "kineto" / "shapes.pt.trace.json"
    (tmp_path / "trace.zip").write_bytes(zipped({"rank0/trace.json": trace.read_bytes()}, zipfile.ZIP_STORED))
    docs = []
    for path in (tmp_path / "trace.zip", trace):
        assert main(["analyze", "--json", "--hardware", "h100-sxm", str(path)]) == 0
        docs.append(json.loads(capsys.readouterr().out))
    assert docs[0]["summary"] == docs[1]["summary"] and len(docs[0]["kernels"]) == len(docs[1]["kernels"])


def _encrypted(data: bytes) -> bytes:
    """The archive with its first member marked encrypted (bit 0 of the flags, in its local and central headers),
    as a password-protected zip marks it."""
    out = bytearray(data)
    for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = out.index(sig)
        out[i + at] |= 1
    return bytes(out)


@pytest.mark.parametrize(("data", "said"), [
    (b"PK\x05\x06" + b"\x00" * 18, "the zip archive holds no files to read"),
    (zipped({"empty-folder/": b""}), "the zip archive holds no files to read"),
    (zipped({"a.csv": (DATA / "advise" / "measured_block.csv").read_bytes() * 50})[:300], "a truncated or partial"),
    (_encrypted(zipped({"a.csv": b"name,flops,bytes\nk,1,1\n"})), "cannot be read from the archive"),
], ids=["empty", "only-a-folder", "cut", "encrypted"])
def test_a_bad_archive_is_one_line(data, said):
    with pytest.raises(InputError) as e:
        roofcore.read_many([(data, "run.zip")])
    assert said in str(e.value) and "\n" not in str(e.value)


def test_an_archive_that_inflates_past_the_limit_stops_there():
    bomb = zipped({"a.csv": b"name,flops,bytes\n" + b"0" * 5_000_000})
    assert len(bomb) < 20_000
    with pytest.raises(LimitError, match="expand beyond the input size limit of 1 MB"):
        members(bomb, "bomb.zip", 1_000_000)
    with pytest.raises(LimitError, match="more than the"):
        members(zipped({f"{i}.csv": b"" for i in range(MAX_MEMBERS + 1)}, zipfile.ZIP_STORED), "many.zip", 10**9)


def test_a_damaged_archive_is_an_input_error_never_a_crash():
    """Bytes changed and the archive cut at random (seeded): every outcome is the files or a RoofcoreError (zipfile
    raises zlib.error, ValueError and NotImplementedError on such data)."""
    for d in damaged(zipped({n: p.read_bytes() for n, p in FOLDER.items()}), seed=7, n=400):
        with contextlib.suppress(RoofcoreError):
            members(d, "f.zip", 10**7)


def test_members_come_in_name_order_with_numbers_counted():
    data = zipped({"rank10.json": b"{}", "rank2.json": b"{}", "Rank1.json": b"{}", "sub/": b""})
    assert [n for _, n in members(data, "r.zip", 10**6)] == ["r.zip/Rank1.json", "r.zip/rank2.json",
                                                              "r.zip/rank10.json"]


@pytest.mark.usefixtures("navigation_only")
@pytest.mark.parametrize("name", ["run.zip", "run.tar.xz"])
def test_the_app_reads_an_uploaded_archive(name):
    """The sidebar's uploader takes a zip or a compressed tar (a browser uploads files, not folders): the workload
    is its files. The uploader lets the browser pick every kind the reader takes, and the profilers' binary
    reports, which get the command that exports them: it takes any file (the content decides)."""
    from test_app import goto, start, upload

    files = {n: p.read_bytes() for n, p in FOLDER.items()}
    at = start()
    assert not at.sidebar.file_uploader[0].proto.type  # no list of endings: the browser refuses nothing
    at = goto(upload(at, (name, zipped(files) if name.endswith(".zip") else tarred(files, lzma.compress))),
              "pages/overview.py")
    assert not at.error, [e.value for e in at.error]
    caption = at.caption[0].value
    n = len(roofcore.read_many(list(FOLDER.values())))
    assert f"{name}/workloads/vcopy/MI200/pmc_perf.csv" in caption and f" {n} kernels from" in caption, caption


def test_member_names_with_line_breaks_or_odd_bytes_stay_one_line():
    """A member name may hold a line break or a tab (legal in zip and tar), which would split the one-line messages
    and warnings that name it: such characters show as U+FFFD."""
    data = zipped({"notes\nfor\tbob.txt": b"run 7\n", "k.csv": (DATA / "advise" / "measured_block.csv").read_bytes()})
    w = roofcore.read(data, name="run.zip")
    said = [x for x in w.warnings if x.startswith("Left out 1 file(s) of the zip archive")]
    assert len(said) == 1 and "run.zip/notes\ufffdfor\ufffdbob.txt" in said[0] and "\n" not in said[0], w.warnings


def test_a_damaged_archive_among_readable_files_is_left_out_and_named(tmp_path):
    """A job folder whose rank archives include one cut in transfer, an archive holding such a one, and a zip one of
    whose members is damaged: the readable files are read, what is not is left out and named in one warning (it
    failed the whole read); a damaged archive given alone is still its own one-line error."""
    trace = (DATA / "kineto" / "shapes.pt.trace.json").read_bytes()
    one = len(roofcore.read(DATA / "kineto" / "shapes.pt.trace.json"))
    cut = zipped({"rank1.json": trace})[:-300]
    (tmp_path / "rank0.json").write_bytes(trace)
    (tmp_path / "rank1.zip").write_bytes(cut)
    w = roofcore.read_many([tmp_path])
    assert len(w) == one
    said = [x for x in w.warnings if x.startswith("Left out 1 unreadable file(s) or archive(s) of the folder")]
    assert len(said) == 1 and "rank1.zip (not a readable zip archive" in said[0], w.warnings
    w = roofcore.read(zipped({"rank0.json": trace, "rank1.zip": cut}), name="job.zip")
    assert len(w) == one and any("of the zip archive, the rest read: job.zip/rank1.zip" in x for x in w.warnings)
    good = zipped({"rank0.json": trace, "rank1.json": trace})
    at = good.index(b"rank1.json", 100) + len("rank1.json") + 40  # inside the second member's deflated data
    bad_member = good[:at] + bytes(b ^ 0xFF for b in good[at:at + 16]) + good[at + 16:]
    w = roofcore.read(bad_member, name="two.zip")
    assert len(w) == one and any("two.zip/rank1.json (cannot be read from the archive" in x for x in w.warnings)
    with pytest.raises(InputError, match=r"^rank1.zip: not a readable zip archive"):
        roofcore.read_many([(cut, "rank1.zip")])
    (tmp_path / "rank0.json").unlink()
    with pytest.raises(InputError, match=r"rank1.zip: not a readable zip archive"):
        roofcore.read_many([tmp_path])


def test_a_tar_archive_cut_short_gives_the_files_before_the_cut():
    """A job's traces packed with `tar czf` and cut in transfer: the ranks before the cut are read, and the warning
    names the cut; cut inside the first file, nothing is readable and the archive is its one-line error."""
    trace = (DATA / "kineto" / "shapes.pt.trace.json").read_bytes()
    one = len(roofcore.read(DATA / "kineto" / "shapes.pt.trace.json"))
    whole = tarred({f"rank{i}.json": trace for i in range(3)})
    cut = whole[: 3 * 512 + 2 * len(trace) + 1000]  # inside the third file's data
    for data, name in ((cut, "job.tar"), (TARS["run.tgz"](cut), "job.tgz")):
        w = roofcore.read(data, name=name)
        assert len(w) == 2 * one and sorted(set(w.frame["source"])) == [f"{name}/rank0.json", f"{name}/rank1.json"]
        said = [x for x in w.warnings if x.startswith("Left out")]
        assert len(said) == 1 and f"{name}/rank2.json (the file ends early in the tar archive" in said[0], w.warnings
    with pytest.raises(InputError) as e:
        roofcore.read(whole[:1500], name="job.tar")
    assert str(e.value).startswith("job.tar") and "\n" not in str(e.value)
