"""The `roofline` command as a user runs it (in-process through main(), and once as a subprocess)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from roofcore.cli import main

ROOT = Path(__file__).parent.parent
EXAMPLE = str(ROOT / "examples" / "transformer_block.yaml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hardware_list(capsys):
    code, out, _ = run(capsys, "hardware", "list")
    assert code == 0
    assert "h100-sxm" in out and "tpu-v5e" in out and "mi300x" in out
    tail = out.strip().splitlines()[-1]
    assert tail.startswith("Ridge = default ceiling") or "devices from" in out
    code, out, _ = run(capsys, "hardware", "list", "--json")
    devices = json.loads(out)
    assert len(devices) >= 22 and len({d["vendor"] for d in devices}) >= 5
    for d in devices:
        assert all(c["source"] for c in d["ceilings"]) and all(lv["source"] for lv in d["levels"])


def test_hardware_show(capsys):
    code, out, _ = run(capsys, "hardware", "show", "h100-sxm")
    assert code == 0
    assert "bf16-matrix (default)" in out and "989 TFLOP/s" in out and "3.35 TB/s" in out and "295.2" in out
    assert "Sources" in out and "S1:" in out
    code, out, _ = run(capsys, "hardware", "show", "tpu-v5e", "--json")
    d = json.loads(out)
    assert d["ridge"]["hbm"] == pytest.approx(240.5, rel=1e-3)
    assert {"id", "name", "ceilings", "levels", "links", "ridge"} <= set(d)


def test_unknown_hardware_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "hardware", "show", "h100")
    assert code == 2 and out == ""
    assert err == "roofline: error: unknown hardware id 'h100'; closest: h100-sxm, h100-pcie, h800-sxm.\n"


def test_analyze_text(capsys):
    code, out, _ = run(capsys, "analyze", EXAMPLE, "--hardware", "h100-sxm")
    assert code == 0
    assert "ffn_up" in out and "compute:bf16-matrix" in out and "memory:hbm" in out
    assert "Total: roofline 40.5 ms" in out  # the two layer norms read their input once (issue 26)


def test_analyze_json_contract(capsys, tmp_path):
    out_file = tmp_path / "a.json"
    code, _, _ = run(capsys, "analyze", EXAMPLE, "--hardware", "h100-sxm", "--hardware", "tpu-v5e", "--json",
                     "-o", str(out_file))
    assert code == 0
    doc = json.loads(out_file.read_text())
    assert [h["id"] for h in doc["hardware"]] == ["h100-sxm", "tpu-v5e"]
    for h in doc["hardware"]:
        assert {"id", "name", "ceilings", "levels", "links", "ridge"} <= set(h)
    assert len(doc["kernels"]) == 24
    k = next(k for k in doc["kernels"] if k["name"] == "gelu" and k["hardware"] == "h100-sxm")
    required = {"name", "hardware", "count", "flops", "bytes", "time_s", "intensity", "t_roof_s", "t_serial_s",
                "attainable_flops_per_s", "bound", "achieved_flops_per_s", "efficiency", "pct_peak_compute",
                "pct_peak_bandwidth", "headroom_s", "flags"}
    assert required <= set(k)
    assert k["bytes"] == {"hbm": 2 * 1073741824 * 2} and k["intensity"]["hbm"] == pytest.approx(2.0)
    assert k["time_s"] is None and k["efficiency"] is None and k["bound"] == "memory:hbm"
    assert k["t_roof_s"] == pytest.approx(4294967296 / 3.35e12)
    s = doc["summary"][0]
    assert {"hardware", "time_s", "t_roof_s", "speedup_if_at_roof", "time_share_by_bound"} <= set(s)
    assert sum(s["time_share_by_bound"].values()) == pytest.approx(1.0)


def test_analyze_csv_with_measured_times(capsys, tmp_path):
    inv = tmp_path / "k.csv"
    inv.write_text("name,count,flops,bytes,time_us,precision\n"
                   "=HYPERLINK(\"x\"),1,1e12,1e9,2000,bf16\n"
                   "fast,1,1e12,1e9,1,bf16\n")
    code, out, _ = run(capsys, "analyze", str(inv), "--hardware", "h100-sxm", "--csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("name,hardware,count")
    assert lines[1].startswith("\"'=HYPERLINK(\"\"x\"\")\"")  # neutralised for spreadsheets
    assert "above-roof: Measured 1 µs beats the roofline minimum" in out


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    png = tmp_path / "image.csv"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    code, out, err = run(capsys, "analyze", str(png), "--hardware", "h100-sxm")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("roofline: error: ") and "binary data (a PNG image)" in err
    code, _, err = run(capsys, "analyze", EXAMPLE)
    assert code == 2 and err == ("roofline: error: the input does not say which device it ran on; name at least one "
                                 "device with --hardware ID (see `roofline hardware list`).\n")


def test_a_profile_of_one_vendor_without_a_device_gets_that_vendors_list(capsys):
    """A rocprofv3 kernel trace names no GPU: the CLI asks for --hardware, pointing at AMD's devices (rocprof runs
    on AMD GPUs only), which the list command filters to; an NVIDIA tool's file points at NVIDIA's."""
    trace = str(Path(__file__).parent / "data" / "rocprof" / "kernel_trace_v3.csv")
    code, _, err = run(capsys, "analyze", trace)
    assert code == 2 and err == ("roofline: error: the input does not say which device it ran on; name at least one "
                                 "device with --hardware ID (see `roofline hardware list --vendor AMD`: rocprof runs "
                                 "on AMD GPUs only).\n")
    code, out, _ = run(capsys, "hardware", "list", "--vendor", "AMD")
    assert code == 0 and "mi300x" in out and "h100-sxm" not in out
    code, _, err = run(capsys, "analyze", str(Path(__file__).parent / "data" / "nsys" / "kern_sum.csv"))
    assert code == 2 and "(see `roofline hardware list --vendor NVIDIA`: nsys runs on NVIDIA GPUs only)" in err


def test_formats(capsys):
    code, out, _ = run(capsys, "formats")
    assert code == 0 and "inventory-csv" in out and "inventory-yaml" in out


def test_module_entry_point():
    p = subprocess.run([sys.executable, "-m", "roofcore", "hardware", "show", "tpu-v1"], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert p.returncode == 0 and "Google TPU v1" in p.stdout


def test_the_entry_point_leaves_without_teardown_once_pyarrow_is_loaded(monkeypatch, capsys):
    """Arrow's C++ thread pool can abort a finished process at interpreter teardown (apache/arrow#34314): once
    pyarrow is loaded, the entry point flushes, runs the exit handlers and leaves with main()'s status at once."""
    import atexit
    import tomllib

    import pyarrow  # noqa: F401  (loaded, as every Nsight Compute read loads it)

    import roofcore.cli as cli

    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["roofline"] == "roofcore.cli:run"
    ran, left = [], []

    class Left(Exception):
        pass

    def fake_exit(code):
        left.append(code)
        raise Left

    atexit.register(ran.append, "handler")
    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    monkeypatch.setattr(sys, "argv", ["roofline", "hardware", "show", "no-such-device"])
    try:
        with pytest.raises(Left):
            cli.run()
    finally:
        atexit.unregister(ran.append)
    assert left == [2] and ran == ["handler"]
    assert "roofline: error" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["roofline", "--help"])
    with pytest.raises(Left):
        cli.run()
    assert left == [2, 0]


def test_the_module_entry_point_delivers_the_whole_output():
    """`python -m roofcore` through run(): an Nsight Compute CSV (read with pyarrow) gives its whole JSON and 0."""
    csv = ROOT / "tests" / "data" / "ncu" / "details_12col_sm80_tags.csv"
    p = subprocess.run([sys.executable, "-m", "roofcore", "analyze", "--hardware", "a100-80gb-sxm", "--json",
                        str(csv)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["workload"]["formats"] == ["ncu-details"] and len(doc["kernels"]) == doc["workload"]["kernels"] == 2


def test_aggregate_says_when_combining_hides_a_launch_above_its_roof(capsys, tmp_path):
    """`--aggregate` sums a kernel's launches; a launch faster than its roofline (an input is wrong) hidden by the
    sum is said in a warning, with how to see it."""
    path = tmp_path / "hidden.csv"  # 3.35 MB at the H100's 3.35 TB/s is 1 µs; measured 0.5 µs; the other launch is slow
    path.write_bytes(b"name,count,flops,bytes,time_us\nk,1,1e6,3.35e6,0.5\nk,1,1e9,3.35e9,2000\n")
    code, out, err = run(capsys, "analyze", "--aggregate", "--hardware", "h100-sxm", str(path))
    assert code == 0, err
    said = out + err
    assert "h100-sxm: 1 kernel(s) with 1 single launch(es) faster than the roofline allows" in said
    assert "Combine repeated launches" not in said and "Run without --aggregate to see them." in said
    code, out, err = run(capsys, "analyze", "--hardware", "h100-sxm", str(path))
    assert "single launch(es)" not in out + err and "above-roof" in out


def test_a_file_name_that_is_not_utf8_is_shown_with_replacement_marks(tmp_path):
    """A Latin-1 file name (an old system's, an archive unpacked with the wrong code page) comes from the file system
    as lone surrogates, which no UTF-8 output takes: the CLI printed "internal error" for such a file, a folder
    holding one, or a tar archive naming one. Each unreadable byte is shown as U+FFFD, and the numbers are those of
    the file under a plain name."""
    import io
    import os
    import tarfile

    data = (Path(__file__).parent / "data" / "advise" / "measured_block.csv").read_bytes()
    folder = tmp_path / "run"
    folder.mkdir()
    odd = os.fsencode(folder) + b"/k\xe9rnels.csv"
    with open(odd, "wb") as fh:
        fh.write(data)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, encoding="latin-1") as t:
        info = tarfile.TarInfo("caf\xe9/k\xe9rnels.csv")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    (tmp_path / "run.tar").write_bytes(buf.getvalue())
    (tmp_path / "plain.csv").write_bytes(data)
    docs = {}
    for what in (os.fsdecode(odd), str(folder), str(tmp_path / "run.tar"), str(tmp_path / "plain.csv")):
        proc = subprocess.run([sys.executable, "-m", "roofcore", "analyze", what, "--json", "--hardware", "h100-sxm"],
                              capture_output=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        docs[what] = json.loads(proc.stdout)
    names = [d["workload"]["name"] for d in docs.values()]
    assert names[:3] == ["run/k\ufffdrnels.csv"] * 2 + ["run.tar/caf\ufffd/k\ufffdrnels.csv"]  # relative to cwd
    kernels = [[(k["name"], k["flops"]) for k in d["kernels"]] for d in docs.values()]
    assert kernels[0] == kernels[1] == kernels[2] == kernels[3]


def test_the_vendor_a_file_implies_and_why():
    """roofcore.ingest.vendor: a device name or architecture first (cut short where a file names its device at
    length), else the profiler; profilers of two vendors among the files say nothing."""
    import roofcore
    from roofcore.ingest import make_frame
    from roofcore.ingest.vendor import vendor_of

    def w(device=None, formats=(), **meta):
        return roofcore.Workload(frame=make_frame({"name": ["k"]}, 1), name="w", device=device, formats=formats,
                                 meta=meta)

    assert vendor_of(w("Tesla T4")) == ("NVIDIA", "the file names Tesla T4")
    assert vendor_of(w(gpu_arch="gfx942", formats=("ncu-details",))) == ("AMD", "the file names gfx942")
    assert vendor_of(w(formats=("rocprof-v3-trace", "rocprof-v3"))) == ("AMD", "rocprof runs on AMD GPUs only")
    assert vendor_of(w(formats=("ncu-details", "nsys-kern-sum"))) == ("NVIDIA", "ncu and nsys run on NVIDIA GPUs only")
    assert vendor_of(w(formats=("ncu-details", "rocprof-v3"))) is None and vendor_of(w()) is None
    long = vendor_of(w("AMD Instinct " + "<b>x</b>, " * 200))
    assert long is not None and long[0] == "AMD" and len(long[1]) <= len("the file names ") + 60
