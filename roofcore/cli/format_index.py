"""The built-in input formats as `roofline formats` lists them, without importing the readers (and pandas) that
register them: ``roofline formats`` starts at once. Generated from the registry (:data:`roofcore.ingest.FORMATS`);
tests/test_startup.py checks it matches. After adding or renaming a format, or changing a description, run
``python -m roofcore.cli.format_index`` to rewrite this file."""

from __future__ import annotations

from pathlib import Path

#: (name, description) of every built-in format, by name
BUILTIN: tuple[tuple[str, str], ...] = (
    ('ert-roofline', "The Empirical Roofline Toolkit's roofline.json: bandwidths and FLOP/s measured on one machine, a device to analyse a workload against"),
    ('host-api-trace', 'Host API traces and other non-kernel traces (rocprofv3 --hip-trace/--hsa-trace/--marker-trace CSV, memory copy/allocation traces, rocprofv2 API records): recognised and refused, naming the kernel trace to export'),
    ('inventory-csv', 'Kernel inventory CSV: name, count, flops, bytes[_<level>], time_s|ms|us, precision, unit, group'),
    ('inventory-yaml', 'Kernel inventory YAML: kernels with numbers, or ops with shapes (matmul, attention, conv2d, norms, collectives, ...: see the README)'),
    ('jax-cost-analysis', 'JAX compiled.cost_analysis() as JSON: flops and bytes accessed per program (XLA estimates; add time_ms per program for measured times)'),
    ('ncu-details', 'Nsight Compute CSV, details page (ncu --csv): one row per launch × metric'),
    ('ncu-raw', 'Nsight Compute CSV, raw page (ncu --csv --page raw): one row per launch, units row'),
    ('nsys-gpu-trace', 'Nsight Systems cuda_gpu_trace (CSV): time per kernel launch, no FLOPs'),
    ('nsys-kern-sum', 'Nsight Systems cuda_gpu_kern_sum (CSV or console table): time per kernel name, no FLOPs'),
    ('nsys-nvtx-kern-sum', "Nsight Systems nvtx_kern_sum (CSV): time per NVTX range × kernel name, the range as each kernel's nvtx ancestry, no FLOPs"),
    ('nsys-nvtx-proj', "an Nsight Systems nvtx_gpu_proj_trace (CSV): NVTX ranges projected on the GPU, context for a cuda_gpu_trace of the same report (each kernel's NVTX range)"),
    ('nsys-sqlite', 'Nsight Systems SQLite export (nsys export --type sqlite, or the .sqlite nsys stats writes): time per kernel launch with its NVTX ranges, no FLOPs'),
    ('nvprof', 'nvprof --csv --metrics (legacy CUDA profiler): FLOP and DRAM counts per kernel, no time'),
    ('nvprof-trace', 'nvprof --csv --print-gpu-trace or the default summary: kernel times, no counters'),
    ('pytorch-trace', 'PyTorch profiler trace (Kineto export_chrome_trace JSON, plain or .gz): GPU kernels, FLOPs/bytes from recorded shapes or CUPTI counters'),
    ('rocprof-compute', 'rocprof-compute (Omniperf) pmc_perf.csv: FLOPs, HBM/L2/L1/LDS bytes and time per dispatch (load sysinfo.csv and roofline.csv with it)'),
    ('rocprof-compute-dispatch-info', "rocprof-compute's list of dispatches (pmc_dispatch_info.csv: dispatch id, kernel name, GPU; no time or counters), context for pmc_perf.csv"),
    ('rocprof-compute-kernel-top', 'rocprof-compute pmc_kernel_top.csv: launches and total time per kernel name, no counters'),
    ('rocprof-compute-roofline', 'A table of measured ceilings (HBM, L2, L1, LDS bandwidth and FLOP/s per GPU) from rocprof-compute roofline.csv, context for pmc_perf.csv or a device to analyse against'),
    ('rocprof-compute-sysinfo', 'The system description rocprof-compute writes (sysinfo.csv: GPU model, arch, CUs, LDS banks), context for pmc_perf.csv'),
    ('rocprof-v1', 'rocprof v1 results.csv (Index,KernelName,gpu-id,…) and rocprof-compute per-pass CSVs (Dispatch_ID,Kernel_Name,GPU_ID,queue-id,…): counters per dispatch'),
    ('rocprof-v1-hiptrace', 'rocprof --hip-trace results.json (Chrome trace with string times, not Kineto): kernel times and copies with their bytes'),
    ('rocprof-v1-stats', 'rocprof --stats summary (results.stats.csv; rocprofv3 kernel_stats.csv): calls and total time per kernel name, no counters'),
    ('rocprof-v2', 'rocprofv2 file-plugin CSV (Dispatch_ID,GPU_ID,Queue_ID,…,Kernel_Name,Start_Timestamp,End_Timestamp,…): counters per dispatch'),
    ('rocprof-v3', 'rocprofv3 *_counter_collection.csv (long: one row per dispatch × counter)'),
    ('rocprof-v3-agent-info', "rocprofv3's agent_info.csv (the CPUs and GPUs of the run: name, arch, CUs), context for its kernel trace or counters"),
    ('rocprof-v3-db', "rocprofv3's rocpd SQLite database (--output-format rocpd, ROCm 7's default results.db): kernel dispatches with their times and counters, copies"),
    ('rocprof-v3-json', 'rocprofv3 --output-format json (rocprofiler-sdk-tool): kernel dispatches with their times and counters, copies'),
    ('rocprof-v3-markers', "a rocprofv3 ROCTx marker trace (--marker-trace CSV): ranges, context for the kernel_trace.csv of the same run (each kernel's ROCTx range)"),
    ('rocprof-v3-trace', 'rocprofv3 kernel_trace.csv (--kernel-trace): time per dispatch, no counters'),
    ('xprof-roofline', 'xprof Roofline Model tool CSV export: per-op time, FLOP rate and bandwidths (GiB/s)'),
)


def render() -> str:
    """This module's source with :data:`BUILTIN` taken from the registry (imports every reader)."""
    from ..ingest import FORMATS

    source = Path(__file__).read_text(encoding="utf-8")
    head, rest = source.split("BUILTIN: tuple[tuple[str, str], ...] = (\n", 1)
    tail = rest[rest.index("\n)\n") + 1:]
    rows = "".join(f"    ({f.name!r}, {f.description!r}),\n" for f in sorted(FORMATS.values(), key=lambda f: f.name))
    return f"{head}BUILTIN: tuple[tuple[str, str], ...] = (\n{rows}{tail}"


if __name__ == "__main__":
    Path(__file__).write_text(render(), encoding="utf-8")
