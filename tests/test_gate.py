"""`roofline check`, the regression gate for CI (issue #18): exit 0 when nothing regressed, 1 when a matched
kernel got slower or further from its roof than --max-regression allows, 2 on bad input; output tested verbatim.

Real samples: the naive GEMM from Nsight Compute on an RTX 5070 (its tiled sibling is named in PROVENANCE.md but
not in ../shared/samples) judged against itself, and the A100 SGEMM export against a copy whose kernel times are
scaled (a synthetic regression). The copies are written to a temporary folder, never into the repository. A
small catalog of our own (``gate-gpu``) keeps the roofline figures in the expected text independent of the
shipped catalogs.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from roofhelpers import make_hw

from roofcore.cli import main
from roofcore.errors import InputError
from roofcore.gate import check, parse_threshold

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
NAIVE = "ncu_details_rtx5070_win_gemm_naive.csv"
SGEMM = "ncu_details_a100_interpolate_sgemm.csv"
FAILED = "ncu_failed_ERR_NVGPUCTRPERM.csv"
NAIVE_NAME = "unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)"
SPLITK = ("void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, "
          "float const*, float*, float const*, float const*, float const*)")
CATALOG = """schema_version: 1
vendor: Gatekeep
sources:
  S1: test figures for the regression gate
devices:
- id: gate-gpu
  name: Gatekeep G1
  kind: gpu
  compute:
  - precision: fp32
    unit: vector
    peak: 20 TFLOP/s
    source: S1
  - precision: bf16
    unit: matrix
    peak: 300 TFLOP/s
    source: S1
  memory:
  - level: hbm
    bandwidth: 1.5 TB/s
    source: S1
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def scaled(src: Path, dst: Path, factor: float) -> Path:
    """A copy of an Nsight Compute details export with every ``gpu__time_duration.sum`` multiplied by ``factor``."""

    def fix(m: re.Match) -> bytes:
        value = float(m.group(2).replace(b",", b"")) * factor
        return m.group(1) + f'"{value:,.0f}"'.encode()

    data, n = re.subn(rb'("gpu__time_duration\.sum","[a-z]+",)"([\d,.]+)"', fix, src.read_bytes())
    assert n >= 1
    dst.write_bytes(data)
    return dst


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder with the two real samples, a regressed copy of each and our catalog; the current directory."""
    if not (SAMPLES / NAIVE).exists() or not (SAMPLES / SGEMM).exists():
        pytest.skip("../shared/samples is absent (the real profiler exports)")
    for name in (NAIVE, SGEMM, FAILED):
        shutil.copy(SAMPLES / name, tmp_path / name)
    (tmp_path / "gate.yaml").write_text(CATALOG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------------------------------- exit 0


def test_the_naive_gemm_against_a_rerun_within_the_limit_passes(work, capsys):
    scaled(work / NAIVE, work / "naive_rerun.csv", 1.001)
    code, out, err = run(capsys, "check", "naive_rerun.csv", "--baseline", NAIVE, "--hardware", "gate-gpu",
                         "--catalog", "gate.yaml")
    assert (code, err) == (0, "")
    assert out == f"""roofline check on gate-gpu (Gatekeep G1), max regression 10%
baseline: {NAIVE}
current:  naive_rerun.csv
1 matched kernel, 1 judged (measured in both runs)

PASS: no judged kernel regressed past 10% (largest time change +0.1%: {NAIVE_NAME}).
"""


def test_the_naive_gemm_against_itself_is_refused(work, capsys):
    """Issue 23: the current profile as its own baseline compares nothing; it once passed."""
    code, out, err = run(capsys, "check", NAIVE, "--baseline", NAIVE, "--hardware", "gate-gpu", "--catalog", "gate.yaml")
    assert (code, out) == (2, "")
    assert err == (f"roofline: error: --baseline: the baseline is the current profile itself ({NAIVE}): nothing to "
                   "compare. Hint: give the profile of an earlier run (a file, or a saved run: run:ID) as --baseline.\n")


def test_exactly_the_limit_passes_and_one_percent_more_fails(work, capsys):
    scaled(work / NAIVE, work / "naive_x110.csv", 1.10)
    scaled(work / NAIVE, work / "naive_x111.csv", 1.11)
    code, out, _ = run(capsys, "check", "naive_x110.csv", "--baseline", NAIVE, "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml")
    assert code == 0 and out.endswith(f"PASS: no judged kernel regressed past 10% (largest time change +10.0%: "
                                      f"{NAIVE_NAME}).\n")
    code, out, _ = run(capsys, "check", "naive_x111.csv", "--baseline", NAIVE, "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml")
    assert code == 1
    assert out == f"""roofline check on gate-gpu (Gatekeep G1), max regression 10%
baseline: {NAIVE}
current:  naive_x111.csv
1 matched kernel, 1 judged (measured in both runs)

REGRESSED {NAIVE_NAME}
  time:     9.59 ms -> 10.6 ms (+11.0%)  past the limit
  roofline: roofline unknown (FLOPs unknown): only the measured time is judged

FAIL: 1 of 1 judged kernel regressed past 10% (slower, or further from the roof).
"""
    code, _, _ = run(capsys, "check", "naive_x110.csv", "--baseline", NAIVE, "--hardware", "gate-gpu",
                     "--catalog", "gate.yaml", "--max-regression", "5%")
    assert code == 1
    code, _, _ = run(capsys, "check", "naive_x111.csv", "--baseline", NAIVE, "--hardware", "gate-gpu",
                     "--catalog", "gate.yaml", "--max-regression", "12")
    assert code == 0


def test_a_faster_run_passes(work, capsys):
    scaled(work / SGEMM, work / "faster.csv", 0.5)
    code, out, _ = run(capsys, "check", "faster.csv", "--baseline", SGEMM, "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml")
    assert code == 0 and "PASS: no judged kernel regressed past 10% (largest time change -50.0%" in out


# --------------------------------------------------------------------------------------------------- exit 1


def test_a_synthetic_regression_of_the_sgemm_fails_with_before_after_and_the_roofline_reason(work, capsys):
    scaled(work / SGEMM, work / "sgemm_slower.csv", 1.25)
    code, out, err = run(capsys, "check", "sgemm_slower.csv", "--baseline", SGEMM, "--hardware", "gate-gpu",
                         "--catalog", "gate.yaml")
    assert (code, err) == (1, "")
    assert out == f"""roofline check on gate-gpu (Gatekeep G1), max regression 10%
baseline: {SGEMM}
current:  sgemm_slower.csv
2 matched kernels, 2 judged (measured in both runs)

REGRESSED ampere_sgemm_32x32_sliced1x4_tn
  time:     7.49 µs -> 9.36 µs (+25.0%)  past the limit
  of roof:  0.0971% -> 0.0777% (-20.0%)  past the limit
  roofline: compute:fp32-vector-bound; same work (roofline time 7.27 ns); further from its roof (0.0971% -> 0.0777% of it)

REGRESSED {SPLITK}
  time:     4.22 µs -> 5.28 µs (+25.0%)  past the limit
  of roof:  0.00404% -> 0.00323% (-20.0%)  past the limit
  roofline: memory:hbm-bound; same work (roofline time 0.171 ns); further from its roof (0.00404% -> 0.00323% of it)

FAIL: 2 of 2 judged kernels regressed past 10% (slower, or further from the roof).
"""


def test_json_gives_the_verdicts(work, capsys):
    scaled(work / SGEMM, work / "sgemm_slower.csv", 1.25)
    code, out, _ = run(capsys, "check", "sgemm_slower.csv", "--baseline", SGEMM, "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "fail" and doc["exit_code"] == 1
    assert (doc["matched"], doc["judged"], doc["max_regression"], doc["hardware"]) == (2, 2, 0.1, "gate-gpu")
    first = doc["regressions"][0]
    assert first["name"] == "ampere_sgemm_32x32_sliced1x4_tn" and first["failed"] == ["time", "efficiency"]
    assert first["time_before_s"] == pytest.approx(7.488e-6) and first["time_after_s"] == pytest.approx(9.36e-6)
    assert first["time_change"] == pytest.approx(0.25) and first["efficiency_change"] == pytest.approx(-0.2)
    assert first["bound_before"] == first["bound_after"] == "compute:fp32-vector"
    scaled(work / SGEMM, work / "sgemm_faster.csv", 0.9)
    code, out, _ = run(capsys, "check", "sgemm_faster.csv", "--baseline", SGEMM, "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "pass" and doc["regressions"] == [] and len(doc["kernels"]) == 2


def test_less_work_in_the_same_time_is_an_efficiency_regression(tmp_path, capsys):
    """Our own inventories: the kernel's FLOPs halve (say a smarter algorithm) but its time stays: it now runs at
    half its former fraction of the roof."""
    base = tmp_path / "base.csv"
    base.write_text("name,count,flops,bytes,time_s,precision\nk_gemm,1,4e12,1e9,0.1,bf16\nk_copy,1,0,8e9,0.01,bf16\n")
    cur = tmp_path / "cur.csv"
    cur.write_text("name,count,flops,bytes,time_s,precision\nk_gemm,1,2e12,1e9,0.1,bf16\nk_copy,1,0,8e9,0.0105,bf16\n")
    (tmp_path / "gate.yaml").write_text(CATALOG)
    code, out, _ = run(capsys, "check", str(cur), "--baseline", str(base), "--hardware", "gate-gpu", "--catalog",
                       str(tmp_path / "gate.yaml"))
    assert code == 1
    assert """REGRESSED k_gemm
  time:     100 ms -> 100 ms (+0.0%)
  of roof:  13.3% -> 6.67% (-50.0%)  past the limit
  roofline: compute:bf16-matrix-bound; less work: roofline time 13.3 ms -> 6.67 ms (-50.0%; FLOPs -50.0%); further from its roof (13.3% -> 6.67% of it)
""" in out
    assert "REGRESSED k_copy" not in out and out.endswith("FAIL: 1 of 2 judged kernels regressed past 10% (slower, "
                                                          "or further from the roof).\n")


# --------------------------------------------------------------------------------------------------- exit 2


def test_bad_input_exits_2_with_one_line(work, capsys):
    code, out, err = run(capsys, "check", FAILED, "--baseline", NAIVE, "--hardware", "gate-gpu", "--catalog",
                         "gate.yaml")
    assert (code, out) == (2, "") and err.startswith(f"roofline: error: {FAILED}: ") and "ERR_NVGPUCTRPERM" in err
    assert err.count("\n") == 1
    code, _, err = run(capsys, "check", "missing.csv", "--baseline", NAIVE, "--hardware", "gate-gpu", "--catalog",
                       "gate.yaml")
    assert code == 2 and err == "roofline: error: missing.csv: cannot read the file (No such file or directory).\n"
    code, _, err = run(capsys, "check", NAIVE, "--baseline", NAIVE, "--max-regression", "ten")
    assert code == 2 and err == ("roofline: error: --max-regression: expected a percentage such as 10% or 2.5 "
                                 "(0 to 1000), found 'ten'.\n")
    code, _, err = run(capsys, "check", NAIVE, "--baseline", NAIVE, "--hardware", "no-such-gpu")
    assert code == 2 and err.startswith("roofline: error: unknown hardware id 'no-such-gpu'")


def test_nothing_to_judge_is_an_error_not_a_pass(work, capsys):
    code, _, err = run(capsys, "check", NAIVE, "--baseline", SGEMM, "--hardware", "gate-gpu", "--catalog", "gate.yaml")
    assert code == 2 and err == (
        f"roofline: error: roofline check: no kernel of the current run ({NAIVE}) matches one of the baseline "
        f"({SGEMM}) by name: nothing to judge. Hint: compare runs of the same program; `roofline compare` lists "
        "both sides' kernels.\n")
    (work / "inv.csv").write_text("name,count,flops,bytes,precision\nk,1,1e12,1e9,bf16\n")  # no times
    (work / "inv_before.csv").write_text("name,count,flops,bytes,precision\nk,1,2e12,1e9,bf16\n")
    code, _, err = run(capsys, "check", "inv.csv", "--baseline", "inv_before.csv", "--hardware", "gate-gpu",
                       "--catalog", "gate.yaml")
    assert code == 2 and err == (
        "roofline: error: roofline check: none of the 1 matched kernel(s) has a measured time in both runs: nothing "
        "to judge (a roofline bound is not a measurement). Hint: give profiles with kernel times (Nsight Compute, "
        "nsys, rocprof, a PyTorch trace).\n")


def test_a_run_that_names_no_gpu_points_at_its_vendors_devices(work, capsys):
    """`roofline check` of two rocprofv3 kernel traces (no GPU named) asks for --hardware and lists AMD's devices:
    rocprof runs on AMD GPUs only (the whole list came NVIDIA first)."""
    src = Path(__file__).parent / "data" / "rocprof" / "kernel_trace_v3.csv"
    shutil.copy(src, work / "now_kernel_trace.csv")
    (work / "before_kernel_trace.csv").write_text(src.read_text().replace(",5000000000002000,", ",5000000000001500,"))
    code, _, err = run(capsys, "check", "now_kernel_trace.csv", "--baseline", "before_kernel_trace.csv")
    assert code == 2 and err == (
        "roofline: error: name the device both runs are judged on with --hardware ID (see `roofline hardware list "
        "--vendor AMD`: rocprof runs on AMD GPUs only): the profile does not say which device it ran on.\n")


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", "a.csv"])  # --baseline is required
    assert e.value.code == 2
    assert "the following arguments are required: --baseline" in capsys.readouterr().err


def test_thresholds():
    assert parse_threshold("10%") == parse_threshold("10") == pytest.approx(0.10)
    assert parse_threshold("2.5%") == pytest.approx(0.025) and parse_threshold("0") == 0
    for bad in ("", "-1%", "abc", "nan", "1e9"):
        with pytest.raises(InputError, match="--max-regression"):
            parse_threshold(bad)


def test_the_library_call(tmp_path):
    import roofcore

    base = roofcore.read(b"name,count,flops,bytes,time_s,precision\nk,1,1e12,1e9,0.01,bf16\n", name="b.csv")
    cur = roofcore.read(b"name,count,flops,bytes,time_s,precision\nk,1,1e12,1e9,0.0125,bf16\n", name="c.csv")
    g = check(cur, base, make_hw(), max_regression=0.15)
    assert g.exit_code == 1 and [v.reasons for v in g.regressions] == [("time", "efficiency")]
    assert check(cur, base, make_hw(), max_regression=0.25).exit_code == 0


# ------------------------------------------------------------------------------------------- saved runs, --db


def test_check_and_save_with_a_database(work, capsys):
    pytest.importorskip("sqlalchemy")
    db = f"sqlite:///{work / 'runs.sqlite3'}"
    code, out, err = run(capsys, "save", SGEMM, "--project", "gemm", "--name", "main@abc123", "--db", db,
                         "--tags", "ci,nightly", "--hardware", "a100-40gb-sxm")
    run_id = out.strip()
    assert code == 0 and len(run_id) == 22
    assert err.startswith(f"roofline save: saved run {run_id} (main@abc123, project gemm: 1 file, 2 kernels, ")
    assert err.rstrip().endswith(f"in {db}; open it with ?run={run_id}")
    scaled(work / SGEMM, work / "sgemm_slower.csv", 1.25)
    code, out, _ = run(capsys, "check", "sgemm_slower.csv", "--baseline", run_id, "--db", db, "--hardware",
                       "gate-gpu", "--catalog", "gate.yaml")
    assert code == 1 and f"baseline: saved run {run_id} (main@abc123, project gemm, " in out
    scaled(work / SGEMM, work / "sgemm_faster.csv", 0.9)
    code, out, _ = run(capsys, "check", "sgemm_faster.csv", "--baseline", f"run:{run_id}", "--db", db)  # its device
    assert code == 0 and out.startswith("roofline check on a100-40gb-sxm ")
    code, _, err = run(capsys, "check", SGEMM, "--baseline", "run:AAAAAAAAAAAAAAAAAAAAAA", "--db", db)
    assert code == 2 and "no saved run 'AAAAAAAAAAAAAAAAAAAAAA' that you can open" in err
    code, _, err = run(capsys, "save", FAILED, "--project", "gemm", "--name", "broken", "--db", db)
    assert code == 2 and "ERR_NVGPUCTRPERM" in err  # not saved
    code, out, _ = run(capsys, "save", SGEMM, "--project", "gemm", "--name", "again", "--db", db, "--json",
                       "--app-url", "https://roofline.example.com/")
    doc = json.loads(out)
    assert doc["link"] == f"https://roofline.example.com/?run={doc['id']}" and doc["kernels"] == 2

    from roofcore.store import RunStore

    assert [r.name for r in RunStore(db).list(project="gemm")] == ["again", "main@abc123"]
