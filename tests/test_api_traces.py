"""API-only traces (host-side calls, not kernels) are refused by name, in one line that names the kernel trace to
export instead: rocprofv3 and rocprofv2 API traces, API summaries, rocprofv3 JSON with API records only, Nsight
Systems' CUDA API reports, nvprof's API trace; in a folder beside the kernel trace they are left out with that line."""

import shutil
from pathlib import Path

import pytest
from roofhelpers import sample

import roofcore
from roofcore import ingest
from roofcore.errors import InputError

DATA = Path(__file__).parent / "data" / "api_traces"
V3_HINT = "rocprofv3 --kernel-trace --output-format csv -- ./app, and load <pid>_kernel_trace.csv"


@pytest.mark.parametrize("name, what, export", [
    ("238_hip_api_trace.csv", "this is a rocprofv3 HIP API trace (host-side calls: hipGetDevicePropertiesR0600, …), "
     "not a kernel trace.", V3_HINT),
    ("57_hsa_api_trace.csv", "this is a rocprofv3 HSA API trace (host-side calls: hsa_agent_get_info, …)", V3_HINT),
    # a marker trace with ROCTx ranges is context for the kernel trace of its run (roofcore.ingest.roctx)
    ("717_marker_api_trace.csv", "this is a rocprofv3 ROCTx marker trace (--marker-trace CSV)", "kernel_trace.csv"),
    ("1834151_rccl_api_trace.csv", "this is a rocprofv3 RCCL API trace (host-side calls: ncclCommInitAll, …)", V3_HINT),
    ("2414_memory_copy_trace.csv", "this is a rocprofv3 memory copy trace (copies, not kernels).", V3_HINT),
    ("816_memory_allocation_trace.csv", "this is a rocprofv3 memory allocation trace (allocations, not kernels).",
     V3_HINT),
    ("3140_hip_api_trace.txt", "this is a rocprofv2 HIP API trace (host-side records), not a kernel trace.",
     "rocprofv2 --kernel-trace --plugin file -d DIR ./app"),
    ("4242_hip_api_stats.csv", "this is an API call summary (host-side calls", "rocprofv3 --kernel-trace --stats"),
    ("4242_rccl_api_stats.csv", "this is an API call summary (host-side calls", "rocprofv3 --kernel-trace --stats"),
    ("api_only_results.json", "this is a rocprofv3 API trace (host-side calls: buffer_records.hip_api, "
     "buffer_records.marker_api), not a kernel trace.", "rocprofv3 --kernel-trace --output-format json -- ./app"),
])
def test_api_traces_are_refused_by_name(name, what, export):
    with pytest.raises(InputError) as e:
        roofcore.read(DATA / name)
    text = str(e.value)
    where, _, said = text.partition(": ")
    assert "\n" not in text and where.endswith(name) and said.startswith("this is ")
    assert what in text and export in text


def test_detected_not_mistaken_for_another_format():
    for name in ("238_hip_api_trace.csv", "57_hsa_api_trace.csv", "2414_memory_copy_trace.csv",
                 "3140_hip_api_trace.txt"):
        assert ingest.detect((DATA / name).read_bytes(), name).name == "host-api-trace"


def test_header_only_api_trace_names_its_domain_from_the_file_name():
    head = (DATA / "238_hip_api_trace.csv").read_text().split("\n")[0] + "\n"
    with pytest.raises(InputError, match=r"this is a rocprofv3 HIP API trace \(host-side calls\), not a kernel trace"):
        roofcore.read(head.encode(), name="99_hip_api_trace.csv")


@pytest.mark.parametrize("body, report", [
    ("Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
     "81.2,302123456,3,100707818.7,1234.0,1000,302000000,174000000.1,cudaMalloc\n"
     "10.1,37612345,1,37612345.0,37612345.0,37612345,37612345,0.0,cudaMemcpy\n", "CUDA API summary (cuda_api_sum)"),
    ("Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n"
     "301234567,302000000,cudaMalloc,0,1,4242,4242,20,vectoradd\n", "CUDA API trace (cuda_api_trace)"),
])
def test_nsys_cuda_api_reports_are_refused_by_name(body, report):
    with pytest.raises(InputError) as e:
        roofcore.read(body.encode(), name="report.csv")
    assert report in str(e.value) and "nsys stats --report cuda_gpu_kern_sum" in str(e.value)


def test_left_out_of_a_folder_beside_the_kernel_trace(tmp_path):
    for name in ("238_hip_api_trace.csv", "2414_memory_copy_trace.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    (tmp_path / "238_kernel_trace.csv").write_bytes((DATA.parent / "rocprof" / "kernel_trace_v3.csv").read_bytes())
    w = roofcore.read_many([tmp_path])
    assert w.formats == ("rocprof-v3-trace",) and len(w) > 0
    note = next(x for x in w.warnings if x.startswith("Left out 2 file(s)"))
    assert "238_hip_api_trace.csv (this is a rocprofv3 HIP API trace" in note
    assert "2414_memory_copy_trace.csv (this is a rocprofv3 memory copy trace" in note


def test_named_beside_a_kernel_trace_it_is_one_of_the_runs_files(capsys):
    """``roofline analyze 238_kernel_trace.csv 238_hip_api_trace.csv``: the files of one run named one by one read as
    the folder holding them does (the API trace left out with a note, its calls there for ROCTx ranges); it was
    refused, though the same files dropped in the app or given as their folder were read. Alone it is refused, and
    API traces only say what to add."""
    from roofcore.cli import main

    kernels, api = DATA.parent / "rocprof" / "kernel_trace_v3.csv", DATA / "238_hip_api_trace.csv"
    w = roofcore.read_many([kernels, api])
    assert w.formats == ("rocprof-v3-trace",) and len(w) == len(roofcore.read_many([kernels]))
    note = next(x for x in w.warnings if x.startswith("Left out 1 file(s) of the inputs that are not profiles"))
    assert "238_hip_api_trace.csv (this is a rocprofv3 HIP API trace" in note
    assert main(["analyze", "--hardware", "mi300x", str(kernels), str(api)]) == 0
    assert "238_hip_api_trace.csv (this is a rocprofv3 HIP API trace" in capsys.readouterr().out  # its warnings
    with pytest.raises(InputError, match="HIP API trace"):
        roofcore.read_many([api])
    with pytest.raises(InputError, match=r"no profile among the inputs' files: .*Hint: export the kernel trace"):
        roofcore.read_many([api, DATA / "57_hsa_api_trace.csv"])


def test_uploaded_together_with_a_kernel_trace_it_is_a_note_not_an_error():
    """The app uploads a run's CSVs together (read_many(..., together=True)): a host API trace among them is left
    out with the folder's note rather than reported as an error telling the user to export the kernel trace they
    uploaded beside it; alone it is still refused by name."""
    kernels = ((DATA.parent / "rocprof" / "kernel_trace_v3.csv").read_bytes(), "238_kernel_trace.csv")
    api = ((DATA / "238_hip_api_trace.csv").read_bytes(), "238_hip_api_trace.csv")
    errors: list[str] = []
    w = roofcore.read_many([kernels, api], on_error=lambda name, e: errors.append(str(e)), together=True)
    assert not errors and w.formats == ("rocprof-v3-trace",)
    note = next(x for x in w.warnings if x.startswith("Left out 1 file(s) of the upload that are not profiles"))
    assert "238_hip_api_trace.csv (this is a rocprofv3 HIP API trace" in note
    with pytest.raises(InputError, match="HIP API trace"):
        roofcore.read_many([api], together=True)
    hsa = ((DATA / "57_hsa_api_trace.csv").read_bytes(), "57_hsa_api_trace.csv")
    with pytest.raises(InputError, match=r"no profile among the upload's files: .*Hint: export the kernel trace"):
        roofcore.read_many([api, hsa], together=True)  # API traces only: what to upload with them


def test_real_kernel_traces_are_not_taken_for_api_traces():
    for name in ("rocprofv3_0.x_kernel_trace.csv", "rocprofv1_mi300a_vecadd_hiptrace_results.json",
                 "rocprofv3_0.x_counter_collection.csv"):
        path = sample(name)
        assert ingest.detect(path.read_bytes(), path.name).name != "host-api-trace"
