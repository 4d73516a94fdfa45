"""Legacy summaries: units inside cells (``542.36ms``, ``47.79%``, ``1.2340us``) and kernel names left unquoted with
their commas (nvprof's console summary, nvprof and nsys CSV after a spreadsheet), read by one shared helper
(roofcore.ingest.readers) to the numbers of the quoted, unit-row originals."""

import csv
import io
import re
from pathlib import Path

import numpy as np
import pytest
from roofhelpers import sample

import roofcore
from roofcore.errors import InputError
from roofcore.ingest.readers import is_quantity, quantities, refit, seconds

NVPROF = Path(__file__).parent / "data" / "nvprof"
NSYS = Path(__file__).parent / "data" / "nsys"


def frame(w):
    return w.frame[["name", "count", "time_s"]].reset_index(drop=True)


def unquoted(text: str) -> str:
    """Every CSV line of ``text`` written back without any quoting (a spreadsheet's plain CSV): a name's commas spill."""
    out = []
    for line in text.split("\n"):
        if line.startswith("==") or '"' not in line:
            out.append(line)
        else:
            out.append(",".join(next(csv.reader(io.StringIO(line)))))
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ the helper


def test_quantities_split_number_and_unit():
    v, u = quantities(["542.36ms", "47.79%", "1.2340us", "12.3KB", "1,234", "n/a", ""])
    assert v[:5].tolist() == [542.36, 47.79, 1.234, 12.3, 1234.0] and np.isnan(v[5:]).all()
    assert u.tolist() == ["ms", "%", "us", "KB", "", "", ""]


def test_seconds_take_the_unit_inside_a_cell_over_the_column_unit():
    got = seconds(["542.36ms", "1.00000s", "2.7200us", "842ns", "3.5", "-1", "fast"], unit="ms")
    assert got[:5] == pytest.approx([0.54236, 1.0, 2.72e-6, 842e-9, 3.5e-3], rel=1e-12)
    assert np.isnan(got[5:]).all()  # never negative; text is unknown


def test_refit_puts_the_name_between_the_numbers():
    num = is_quantity
    assert refit(["90.0", "1000", "10", "void f<float", " 4>(float*", " int)"], [num, num, num, None]) == [
        "90.0", "1000", "10", "void f<float, 4>(float*, int)"]
    # two text columns, told apart by the count and the identifier between them
    row = ["V100 (0)", "k<2", " 3>(int", " int)", "7", "flop_count_sp", "Ops (add", " mul)", "1", "2", "3"]
    kinds = [lambda c: True, None, str.isdigit, str.isidentifier, None, num, num, num]
    assert refit(row, kinds) == ["V100 (0)", "k<2, 3>(int, int)", "7", "flop_count_sp", "Ops (add, mul)", "1", "2", "3"]
    assert refit(["a", "b", "c"], [num, None]) is None  # "a" is not a number: no split fits
    assert refit(["1", "x"], [num, None]) == ["1", "x"]  # the right width: as it is


# ------------------------------------------------------------------------------------------ nvprof


def test_nvprof_console_summary_units_in_cells_and_names_with_commas():
    w = roofcore.read(NVPROF / "console_summary.txt")
    assert w.formats == ("nvprof-trace",) and w.meta["nvprof_layout"] == "console summary"
    assert frame(w)["name"].tolist() == [
        "void matmul_tiled<float, 32>(float const *, float const *, float*, int, int, int)", "scale(float*, float, int)"]
    assert frame(w)["count"].tolist() == [1, 100]
    assert frame(w)["time_s"].tolist() == pytest.approx([542.36e-3, 123.40e-6], rel=1e-12)
    assert w.warnings[0] == "5 copy, memset or API rows left out (not kernels)."  # 2 copies, 3 API calls
    assert w.runtime is None  # API rows are told apart by their section, not by the runtime-entry rule


def test_nvprof_cuda8_console_summary_api_calls_under_their_own_line():
    w = roofcore.read(NVPROF / "console_summary_cuda8.txt")
    assert frame(w).to_dict("list") == {"name": ["add(int, float*, float*)"], "count": [1],
                                        "time_s": [pytest.approx(463.25e-3, rel=1e-12)]}
    assert w.warnings[0] == "2 copy, memset or API rows left out (not kernels)."
    assert w.runtime is None


def test_nvprof_api_summary_is_refused_by_name():
    with pytest.raises(InputError) as e:
        roofcore.read(NVPROF / "console_api_summary.txt")
    assert str(e.value).endswith("console_api_summary.txt: this is an nvprof API summary (host-side CUDA calls), not "
                                 "GPU kernels. Hint: export the kernels: nvprof --print-gpu-summary ./app (or nvprof "
                                 "--csv --print-gpu-trace ./app for every launch).")
    csv_api = ('"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
               '"API calls",80.0,1000.0,3,333.3,0.004567,999.0,"cudaMalloc"\n')
    with pytest.raises(InputError, match="this is an nvprof API summary"):
        roofcore.read(csv_api.encode(), name="api_summary.csv")


def test_nvprof_csv_with_units_in_cells_reads_as_with_a_units_row():
    quoted = roofcore.read(NVPROF / "summary.csv")
    cells = roofcore.read(NVPROF / "summary_units_in_cells.csv")
    assert frame(cells)["name"].tolist() == frame(quoted)["name"].tolist()
    assert frame(cells)["count"].tolist() == frame(quoted)["count"].tolist()
    assert frame(cells)["time_s"].tolist() == pytest.approx(frame(quoted)["time_s"].tolist(), rel=1e-12)


@pytest.mark.parametrize("name", ["summary.csv", "gpu_trace.csv", "metrics_flops_dram.csv"])
def test_nvprof_csv_with_names_left_unquoted_reads_as_quoted(name):
    # nvprof's own descriptions hold commas too: two text columns, told apart by the count and metric name between
    text = (NVPROF / name).read_text(encoding="utf-8").replace(
        "Floating Point Operations(Double Precision)", "Double-precision operations (add, multiply, and fma)")
    plain = unquoted(text)
    assert plain != text and re.search(r"\(double const \*, double\*, int\)", plain)
    before, after = roofcore.read(text.encode(), name=name), roofcore.read(plain.encode(), name=name)
    assert frame(after).equals(frame(before))
    cols = [c for c in before.frame.columns if c.startswith("bytes_") or c == "flops"]
    assert after.frame[cols].equals(before.frame[cols])


def test_nvprof_unquoted_summary_fixture():
    w = roofcore.read(NVPROF / "summary_unquoted_names.csv")
    assert frame(w).equals(frame(roofcore.read(NVPROF / "summary.csv")))


# ------------------------------------------------------------------------------------------ nsys


def test_nsys_csv_with_names_left_unquoted_keeps_whole_names():
    text = (NSYS / "kern_sum.csv").read_text(encoding="utf-8")
    plain = unquoted(text)
    assert plain != text
    assert frame(roofcore.read(plain.encode(), name="k.csv")).equals(frame(roofcore.read(text.encode(), name="k.csv")))


def test_real_nsys_summary_with_names_left_unquoted():
    path = sample("nsys_rtx5090_deepseekocr_decode_cuda_gpu_kern_sum_unquoted.csv")
    text = path.read_text(encoding="utf-8")
    before, after = roofcore.read(path), roofcore.read(unquoted(text).encode(), name=path.name)
    assert len(before) == 46 and frame(after).equals(frame(before))
    assert any("," in n for n in frame(after)["name"])


def test_real_nvprof_metrics_left_unquoted_is_refused_as_the_original():
    path = sample("nvprof_csv_metrics_gtx1060.csv")
    text = path.read_text(encoding="utf-8")
    with pytest.raises(InputError) as a:
        roofcore.read(path)
    with pytest.raises(InputError) as b:
        roofcore.read(unquoted(text).encode(), name=str(path))
    assert str(b.value).split(": ", 1)[1] == str(a.value).split(": ", 1)[1]
