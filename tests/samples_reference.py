"""Reference numbers for the real exports in ../shared/samples, computed independently of roofcore's parsers.

Each function reads a sample with the standard library only (``csv``, ``json``, ``gzip``) and applies the
formula the docs give (docs/formats.md: NERSC's Nsight Compute method, rocprof-compute's
``calc_ai``, nsys' kernel summary, Kineto's event times, 2·M·N·K for a GEMM). It returns one record per launch
(or per summary row) in file order: ``name`` (as the file prints it), ``id`` (the launch id where the file has
one) and the fields it can compute, in base units (FLOP, byte, second): ``flops``, ``time_s``, ``count``,
``precision``, ``bytes_<level>``. A field it cannot compute is absent (never guessed); ``nan`` means "the file
holds this value but it is unusable, so it must be unknown" (a negative duration).

tests/samples_expected.yaml names these functions; tests/test_samples.py matches the records to the parsed
workload's rows. Nothing here imports roofcore: a parser bug cannot hide in its own reference.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import math
import re
from collections import defaultdict
from decimal import Decimal, InvalidOperation
from pathlib import Path

NAN = float("nan")

# ----------------------------------------------------------------------------------------------- helpers


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")


def _num(cell: str | None) -> float | None:
    """A number as profilers print it ("7,488", "1,759,000.00", "1787201.0"); None for n/a, empty, lists."""
    if cell is None:
        return None
    s = cell.strip().replace(",", "")
    if not s or ";" in s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _ns(cell: str | None) -> Decimal | None:
    """A timestamp in ns, exactly: rocprof's are up to 17 digits, beyond a float's 15-16 (fractional ns too)."""
    try:
        return Decimal(cell.strip()) if cell and cell.strip() else None
    except InvalidOperation:
        return None


def _span(begin: str | None, end: str | None) -> float | None:
    """end − begin in seconds; NaN for a negative or zero span (unusable: the time is unknown)."""
    b, e = _ns(begin), _ns(end)
    if b is None or e is None:
        return None
    return float(e - b) * 1e-9 if e > b else NAN


def _rows_from(text: str, header_start: str) -> list[list[str]]:
    """CSV rows from the first line starting with ``header_start`` (program output and ==PROF== lines before it)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    return [r for r in csv.reader(io.StringIO("\n".join(lines[start:]))) if r]


def _nth(records: list[dict]) -> list[dict]:
    """Number the records of each name in file order (``nth``), the key the test matches rows by."""
    seen: dict[str, int] = defaultdict(int)
    for r in records:
        r["nth"] = seen[r["name"]]
        seen[r["name"]] += 1
    return records


# docs/formats.md, Units: Nsight Compute unit strings -> base-unit factor
_TIME = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0,
         "second": 1.0}
_BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}


def _rate_factor(unit: str) -> float | None:
    """byte/s per unit for "Gbyte/s", "Gbyte/second", "byte/second"; None if not a byte rate."""
    num, _, den = unit.partition("/")
    if den not in ("s", "second") or num not in _BYTES:
        return None
    return _BYTES[num]


# ------------------------------------------------------------------------------------ Nsight Compute

_CC = {  # NERSC: CUDA-core FLOPs = 2·fma + mul + add per precision (thread-level instruction counts)
    "sm__sass_thread_inst_executed_op_dadd_pred_on.sum": 1, "sm__sass_thread_inst_executed_op_dmul_pred_on.sum": 1,
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum": 2, "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 1,
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 1, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 2,
    "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": 1, "sm__sass_thread_inst_executed_op_hmul_pred_on.sum": 1,
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": 2,
}
_TENSOR = "sm__inst_executed_pipe_tensor.sum"


def _ncu_point(metrics: list[tuple[str, str, str]]) -> dict:
    """docs/formats.md for one launch, from its (name, unit, value) metrics.

    Time: gpu__time_duration(.sum) → details-page "Duration" → sm__cycles_elapsed.avg / .per_second.
    Off-chip bytes: dram__bytes.sum → read + write (``_op_`` and legacy 2019 names) → "Memory Throughput"
    [byte/s] × time. L2 / L1: lts__t_bytes.sum / l1tex__t_bytes.sum. FLOPs: only where all nine CUDA-core
    counters are present and no tensor instruction ran (tensor FLOPs need the MMA shape: see ncu_tensor_gemm).
    """
    val: dict[str, tuple[str, float]] = {}
    rates: list[float] = []
    for name, unit, cell in metrics:
        v = _num(cell)
        if v is None:
            continue
        if name == "Memory Throughput" and _rate_factor(unit):
            rates.append(v * _rate_factor(unit))
        val.setdefault(name, (unit, v))
    out: dict = {}
    for name in ("gpu__time_duration.sum", "gpu__time_duration", "Duration"):
        if name in val and val[name][0] in _TIME:
            out["time_s"] = val[name][1] * _TIME[val[name][0]]
            break
    else:
        if "sm__cycles_elapsed.avg" in val and "sm__cycles_elapsed.avg.per_second" in val:
            out["time_s"] = val["sm__cycles_elapsed.avg"][1] / val["sm__cycles_elapsed.avg.per_second"][1]

    def nbytes(name: str) -> float | None:
        return val[name][1] * _BYTES[val[name][0]] if name in val and val[name][0] in _BYTES else None

    pairs = (("dram__bytes_read.sum", "dram__bytes_write.sum"), ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"),
             ("dram__read_bytes", "dram__write_bytes"))
    if nbytes("dram__bytes.sum") is not None:
        out["bytes_hbm"] = nbytes("dram__bytes.sum")
    else:
        for r, w in pairs:
            if nbytes(r) is not None and nbytes(w) is not None:
                out["bytes_hbm"] = nbytes(r) + nbytes(w)
                break
        else:
            if rates and "time_s" in out:
                out["bytes_hbm"] = rates[0] * out["time_s"]
    for name, level in (("lts__t_bytes.sum", "bytes_l2"), ("l1tex__t_bytes.sum", "bytes_l1")):
        if nbytes(name) is not None:
            out[level] = nbytes(name)
    if all(k in val for k in _CC) and val.get(_TENSOR, ("", 0.0))[1] == 0:
        out["flops"] = sum(w * val[k][1] for k, w in _CC.items())
    return out


def _ncu_details_launches(path: Path) -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """(id, kernel name, metrics) per launch of a details page; rule rows (no metric name) are left out."""
    rows = _rows_from(_text(path), '"ID","Process ID"')
    head = rows[0]
    i_id, i_name = head.index("ID"), head.index("Kernel Name")
    i_m, i_u, i_v = head.index("Metric Name"), head.index("Metric Unit"), head.index("Metric Value")
    launches: dict[str, tuple[str, list]] = {}
    for r in rows[1:]:
        r = r + [""] * (len(head) - len(r))  # metric rows may be shorter than the header
        if not r[i_id].strip().isdigit() or not r[i_m]:
            continue
        launches.setdefault(r[i_id], (r[i_name], []))[1].append((r[i_m], r[i_u], r[i_v]))
    return [(k, name, m) for k, (name, m) in launches.items()]


def ncu_details(path: Path) -> list[dict]:
    """Nsight Compute details page (``ncu --csv``): one record per launch ID (see :func:`_ncu_point`)."""
    return _nth([{"id": i, "name": name, **_ncu_point(m)} for i, name, m in _ncu_details_launches(path)])


def ncu_raw(path: Path) -> list[dict]:
    """Nsight Compute raw page (``--page raw``): header, units row, one row per launch."""
    rows = _rows_from(_text(path), '"ID","Process ID"')
    head, units = rows[0], rows[1]
    i_id, i_name = head.index("ID"), head.index("Kernel Name")
    out = []
    for r in rows[2:]:
        metrics = [(h, u, c) for h, u, c in zip(head, units, r, strict=False)]
        out.append({"id": r[i_id], "name": r[i_name], **_ncu_point(metrics)})
    return _nth(out)


def ncu_tensor_gemm(path: Path, m: int, n: int, k: int) -> list[dict]:
    """The launches that ran tensor instructions (``sm__inst_executed_pipe_tensor.sum`` > 0) of a details page
    whose GEMMs are all M×N×K (the run's own statement): each does 2·M·N·K FLOPs."""
    out = []
    for i, name, metrics in _ncu_details_launches(path):
        tensor = next((_num(v) for mn, _u, v in metrics if mn == _TENSOR), None)
        if tensor:
            out.append({"id": i, "name": name, "flops": 2.0 * m * n * k})
    all_ids = [(i, name) for i, name, _ in _ncu_details_launches(path)]
    nth = {i: sum(1 for j, nm in all_ids[:pos] if nm == name) for pos, (i, name) in enumerate(all_ids)}
    for r in out:
        r["nth"] = nth[r["id"]]  # occurrence among all launches of that name, not only the tensor ones
    return out


# ------------------------------------------------------------------------------------ Nsight Systems


def nsys_kern_sum(path: Path) -> list[dict]:
    """The ``cuda_gpu_kern_sum`` table of an ``nsys stats`` console output: Name, Instances, Total Time (ns).

    Column boundaries come from the dashed rule under the header (names contain spaces)."""
    lines = _text(path).split("\n")
    start = next(i for i, line in enumerate(lines) if "cuda_gpu_kern_sum" in line)
    head = next(i for i in range(start, len(lines)) if "Total Time" in lines[i] and "Instances" in lines[i])
    rule = lines[head + 1]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    names = [lines[head][a:b].strip() for a, b in spans]
    spans[-1] = (spans[-1][0], None)  # the name runs to the end of the line
    out = []
    for line in lines[head + 2:]:
        if not line.strip():
            break
        cells = dict(zip(names, (line[a:b].strip() for a, b in spans), strict=True))
        out.append({"name": cells["Name"], "count": _num(cells["Instances"]),
                    "time_s": _num(cells["Total Time (ns)"]) * 1e-9})
    return _nth(out)


def nsys_kern_sum_csv(path: Path) -> list[dict]:
    """``nsys stats --report cuda_gpu_kern_sum --format csv``: Name, Instances, Total Time (ns) by column name."""
    return _nth([{"name": row["Name"], "count": _num(row["Instances"]), "time_s": _num(row["Total Time (ns)"]) * 1e-9}
                 for row in csv.DictReader(io.StringIO(_text(path)))])


# ---------------------------------------------------------------------------------------- AMD rocprof


def _counter(row: dict, name: str) -> float | None:
    return _num(row.get(name))


def rocprof_compute(path: Path) -> list[dict]:
    """rocprof-compute ``pmc_perf.csv``, per dispatch, by rocprof-compute's ``calc_ai`` (docs/formats.md).

    FLOPs = VALU (64 lanes × (add + mul + 2·fma + trans) per F16/F32/F64) + 512 × MFMA MOPS (F16, BF16, F32,
    F64, F8) — only where every VALU per-type counter is there. Off-chip bytes by the MI300 formula where
    ``TCC_BUBBLE_sum`` and ``TCC_EA0_*`` are there, else the MI200 one; L1 = 64 × TCP_TOTAL_CACHE_ACCESSES_sum
    and L2 = 64 × TCP→TCC requests on the MI200 formula's devices (MI300 lines are 128 B: not asserted).
    Time = End_Timestamp − Start_Timestamp [ns]."""
    text = _text(path)
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        c = functools.partial(_counter, row)
        rec: dict = {"id": row["Dispatch_ID"], "name": row["Kernel_Name"]}
        span = _span(row.get("Start_Timestamp"), row.get("End_Timestamp"))
        if span is not None:
            rec["time_s"] = span
        valu = [f"SQ_INSTS_VALU_{op}_{p}" for p in ("F16", "F32", "F64") for op in ("ADD", "MUL", "FMA", "TRANS")]
        mops = [f"SQ_INSTS_VALU_MFMA_MOPS_{p}" for p in ("F16", "BF16", "F32", "F64", "F8")]
        if all(c(k) is not None for k in valu):
            v = sum(c(k) * (2 if "_FMA_" in k else 1) for k in valu) * 64
            rec["flops"] = v + 512 * sum(c(k) or 0.0 for k in mops)
        if c("TCC_BUBBLE_sum") is not None and c("TCC_EA0_RDREQ_sum") is not None:
            rec["bytes_hbm"] = (c("TCC_BUBBLE_sum") * 128 + c("TCC_EA0_RDREQ_32B_sum") * 32
                                + (c("TCC_EA0_RDREQ_sum") - c("TCC_BUBBLE_sum") - c("TCC_EA0_RDREQ_32B_sum")) * 64
                                + (c("TCC_EA0_WRREQ_sum") - c("TCC_EA0_WRREQ_64B_sum")) * 32
                                + c("TCC_EA0_WRREQ_64B_sum") * 64)
        elif c("TCC_EA_RDREQ_sum") is not None:
            rec["bytes_hbm"] = (c("TCC_EA_RDREQ_32B_sum") * 32 + (c("TCC_EA_RDREQ_sum") - c("TCC_EA_RDREQ_32B_sum")) * 64
                                + c("TCC_EA_WRREQ_64B_sum") * 64 + (c("TCC_EA_WRREQ_sum") - c("TCC_EA_WRREQ_64B_sum")) * 32)
            if c("TCP_TOTAL_CACHE_ACCESSES_sum") is not None:
                rec["bytes_l1"] = c("TCP_TOTAL_CACHE_ACCESSES_sum") * 64
            l2 = [c(k) for k in ("TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
                                 "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum", "TCP_TCC_READ_REQ_sum")]
            if all(x is not None for x in l2):
                rec["bytes_l2"] = 64 * sum(l2)
        out.append(rec)
    return _nth(out)


def rocprof_times(path: Path) -> list[dict]:
    """Per-dispatch time of a rocprof trace CSV (v1 ``results.csv``, rocprof-compute per-pass files,
    rocprofv3 ``kernel_trace.csv``): end − begin in ns; a negative span (clock-domain glitch) is unknown."""
    out = []
    for row in csv.DictReader(io.StringIO(_text(path))):
        name = row.get("KernelName") or row.get("Kernel_Name")
        span = _span(row.get("BeginNs") or row.get("Start_Timestamp"), row.get("EndNs") or row.get("End_Timestamp"))
        rec = {"id": row.get("Index") or row.get("Dispatch_ID") or row.get("Dispatch_Id"), "name": name}
        out.append(rec if span is None else {**rec, "time_s": span})
    return _nth(out)


def rocprof_summary(path: Path) -> list[dict]:
    """A per-kernel time summary: rocprof ``--stats`` (Name, Calls, TotalDurationNs) or rocprof-compute's
    ``pmc_kernel_top.csv`` (Kernel_Name, Count, Sum(ns), with fractional ns)."""
    out = []
    for row in csv.DictReader(io.StringIO(_text(path))):
        name = row.get("Name") or row.get("Kernel_Name")
        calls = _num(row.get("Calls") or row.get("Count"))
        total = _num(row.get("TotalDurationNs") or row.get("Sum(ns)"))
        out.append({"name": name, "count": calls, "time_s": total * 1e-9})
    return _nth(out)


def rocprof_hip_trace(path: Path) -> list[dict]:
    """rocprof v1 ``--hip-trace`` results.json: GPU kernel events (on a process named "GPU<n>"), time from
    the ``DurationNs`` string in their args."""
    doc = json.loads(_text(path))
    events = doc["traceEvents"]
    gpu = {str(e["pid"]) for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
           and str(e.get("args", {}).get("name", "")).startswith("GPU")}
    out = [{"name": e["name"], "time_s": int(e["args"]["DurationNs"]) * 1e-9}
           for e in events if e.get("ph") == "X" and str(e.get("pid")) in gpu]
    return _nth(out)


# ------------------------------------------------------------------------------------- PyTorch (Kineto)

_KERNEL_CATS = {"kernel", "Kernel"}
_COPY_CATS = {"gpu_memcpy", "Memcpy"}


def _kineto_events(path: Path) -> list[dict]:
    return [e for e in json.loads(_text(path))["traceEvents"] if isinstance(e, dict)]


def kineto_events(path: Path) -> list[dict]:
    """Every GPU kernel and copy of a Kineto trace: time = ``dur`` [µs]; a host↔device copy moves
    ``args.bytes`` over the host link (``bytes_pcie``) and does no arithmetic (0 FLOPs). Records are matched
    by name and time (traces are not in time order)."""
    out = []
    for e in _kineto_events(path):
        cat = e.get("cat")
        if cat not in _KERNEL_CATS | _COPY_CATS or e.get("ph") != "X":
            continue
        rec = {"name": e["name"], "time_s": float(e["dur"]) * 1e-6, "match": "time"}
        if cat in _COPY_CATS and re.search(r"\b(HtoD|DtoH)\b", e["name"]) and "bytes" in e.get("args", {}):
            rec["bytes_pcie"] = float(e["args"]["bytes"])
            rec["flops"] = 0.0
        out.append(rec)
    return out


_HALF = {"c10::Half": "fp16", "c10::BFloat16": "bf16", "float": "fp32", "double": "fp64"}


def kineto_gemm_ops(path: Path) -> list[dict]:
    """aten::mm / aten::addmm / aten::bmm ops recorded with shapes (``record_shapes``) that launched exactly
    one kernel: that kernel does 2·M·N·K FLOPs (·batch for bmm) in the op's input dtype (``Input type``;
    under autocast the half-precision copy). The bias add of addmm (M·N) is within the test's tolerance."""
    events = _kineto_events(path)
    kernels: dict[object, list[dict]] = defaultdict(list)
    for e in events:
        if e.get("cat") in _KERNEL_CATS:
            args = e.get("args", {})
            kernels[args.get("External id", args.get("external id"))].append(e)
    out = []
    for e in events:
        if e.get("cat") != "cpu_op" or e.get("name") not in ("aten::mm", "aten::addmm", "aten::bmm"):
            continue
        args = e.get("args", {})
        dims, types = args.get("Input Dims"), args.get("Input type")
        ks = kernels.get(args.get("External id"), [])
        if not dims or len(ks) != 1:
            continue
        a, b = (dims[1], dims[2]) if e["name"] == "aten::addmm" else (dims[0], dims[1])
        dtype = types[1] if e["name"] == "aten::addmm" else types[0]
        flops = 2.0 * a[0] * a[1] * a[2] * b[2] if e["name"] == "aten::bmm" else 2.0 * a[0] * a[1] * b[1]
        k = ks[0]
        rec = {"name": k["name"], "time_s": float(k["dur"]) * 1e-6, "match": "time", "flops": flops}
        if dtype in _HALF:
            rec["precision"] = _HALF[dtype]
        out.append(rec)
    return out
