"""Nsight Compute (ncu) CSV exports → one row per profiled launch (docs/formats.md).

Two formats: ``ncu-details`` (``ncu --csv``, long: one row per launch × metric, the 12-, 14-, 15- and
20-column headers and the ``--nvtx`` variant) and ``ncu-raw`` (``ncu --csv --page raw``, wide: a header, a
units row, one row per launch), whatever the file is called (``--log-file x.log`` output included). Noise
(``==PROF==`` lines, application stdout, a BOM, CRLF) is stripped, the header is found by pattern
(``^"ID","Process ID",``) and columns are read by name with a real CSV parser (pyarrow's, multi-threaded,
reading only the columns needed; noise lines inside the table and repeated headers are cut out first when
pyarrow stumbles on them; the ``csv`` module line by line when rows are ragged or a second table has other
columns). Details-page metric rows shorter than the header (the trailing rule columns absent, docs/formats.md)
are padded with empty fields. Values lose their thousands separators; ``n/a``, empty, ``inf``, ``nan``,
negative and text values are unknown (NaN, with a warning), never zero; a European decimal comma is refused
with a message. Units go through one table (:func:`unit_factor`, docs/formats.md, Units), per row: time → s, bytes → B
(``Kbyte``/``Mbyte``/``Gbyte`` taken as SI powers of 1000 — what NVIDIA appears to use, unverified;
``--print-units base`` avoids the question), byte/s → B/s, frequencies → Hz. Rule rows (empty metric) are kept
aside in ``meta["ncu_rules"]``. Nsight Compute 2019.x names (``gpu__time_duration``, ``dram__read_bytes``,
``sm__elapsed_cycles_avg``, ``..._sum``) are read as their current names; details-page labels count only with a
unit of the right dimension (``Memory Throughput`` in byte/s is DRAM bandwidth, in % it is not used).

Per launch (docs/formats.md, the NERSC method):

* CUDA-core FLOPs = 2·dfma + dmul + dadd + 2·ffma + fmul + fadd + 2·hfma + hmul + hadd, from
  ``sm__sass_thread_inst_executed_op_<op>_pred_on.sum`` (the ``smsp__`` totals are accepted instead).
  Counters absent from the export are left out of the sum (with a warning); a counter present but
  ``n/a`` makes that launch's FLOPs unknown.
* Tensor FLOPs: the ``sm__ops_path_tensor_*.sum`` op counters when present (already FLOPs; per counter
  family the plain total, else ``_sparsity_off`` + ``_sparsity_on``, so on/off pairs are not counted
  twice; distinct families are assumed disjoint), else ``sm__inst_executed_pipe_tensor.sum`` × the FLOPs of
  one MMA instruction, 2·M·N·K, from the shape the kernel name carries or the architecture's default
  (:mod:`.ncu_tensor`), unknown where neither says — with a warning naming the factor used for how many
  launches. Without CUDA-core counters, a launch's FLOPs are its tensor FLOPs where it ran tensor
  instructions, else unknown.
* Precision: tensor FLOPs dominate → unit ``matrix``, precision from the counter name (``src_bf16`` …) or
  the kernel name, fp16 with a warning when neither says; otherwise unit ``vector`` and the precision of
  the largest of the fp64/fp32/fp16 FLOPs. No FLOPs at all → precision unknown.
* Bytes: ``bytes_hbm`` = ``dram__bytes.sum``, else ``dram__bytes_read.sum + dram__bytes_write.sum``, else
  the ``_op_`` names (sm_120), else DRAM throughput (``dram__bytes.sum.per_second``, the details page's
  ``Memory Throughput`` in byte/s) × duration — a derived figure, said so in a warning; a throughput given only
  as a % of peak leaves bytes unknown. ``bytes_l2`` = ``lts__t_bytes.sum``; ``bytes_l1`` = ``l1tex__t_bytes.sum``
  (or their ``.per_second`` × duration).
* Time: ``gpu__time_duration.sum``, else ``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second``
  (or ``smsp__``; 2019.x: ``sm__elapsed_cycles_avg / gpc__frequency``), else the details-page label "Duration".
* Group: the NVTX range the launch ran in (``--nvtx`` columns; nested push/pop ranges joined with "/").

Launches under 1 µs or 1 MB of DRAM traffic are counted in a warning: ncu replays them with flushed caches
at base clocks, so their DRAM intensity is unreliable (docs/formats.md).

An export with a time but no FLOP or byte counter at all (e.g. ``../shared/samples/ncu_raw_b200_torch_sdpa_flash.csv``)
is read as *time only* (``meta["time_only"] = "true"``, FLOPs/bytes NaN, a warning naming the ``--metrics``
to collect), so it can still be joined to an inventory like an Nsight Systems profile; an export with no
time, FLOP or byte metric at all is an error naming that list.

``workload.device`` is the device name when the export carries it (``device__attribute_display_name``;
the ``Device`` column is only an index in current versions; program output is never read),
``meta["compute_capability"]`` the ``CC`` column (or the ``device__attribute_compute_capability_*``
metrics) and ``meta["arch"]`` ``sm_<major><minor>``, all from the first launch (an export spanning several
GPUs keeps the first). No hardware id is suggested here (that needs the catalog): callers use
``roofcore.load_catalogs().closest(workload.device)``.

The reader in modules: :mod:`.ncu_metrics` the metric names, legacy names and labels, sniffing and messages;
:mod:`.ncu_read` values and the CSV table (preambles, noise, ragged rows); :mod:`.ncu_pages` the details and raw
pages into launches; :mod:`.ncu_build` the workload and its warnings; :mod:`.ncu_tensor` tensor FLOPs per MMA
shape; :mod:`.ncu_rates` the roofline sections' rates (FP instructions per cycle × SM clock, DRAM bandwidth: a
launch without a duration is placed by its achieved FLOP/s and intensity); :mod:`.ncu_merge` exports of the same
launches (ID, process, kernel name) read together, one launch each; units from :mod:`.readers`. This module
registers the two formats.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .. import filemap
from ..errors import InputError
from ..models import Hardware, Skipped, Workload
from . import arch, check_binary, make_frame, register_format, skip
from .ancestry import nvtx_path
from .columns import is_open
from .ncu_build import derive
from .ncu_canon import canonical, requoted
from .ncu_metrics import (
    FLOP_METRICS,
    HEADER,
    LABELS,
    LEGACY,
    OPS,
    PROFILE_COMMAND,
    ROOFLINE_METRICS,
    WANTED,
    failure,
    rule_only,
    sniff_details,
    sniff_raw,
)
from .ncu_pages import (
    details_launches,
    nvtx_range,
    raw_launches,
)
from .ncu_read import cut_row, release_arrow_memory, split_header, table_span
from .readers import UNITS, unit_factor

# ------------------------------------------------------------------------------------------ parsing


def _parse(data: bytes, source: str) -> Workload:
    """The workload of an ncu export; one that another program wrote back (quotes only where needed, columns moved,
    kernel names left unquoted) is rewritten as ncu writes it (:mod:`.ncu_canon`) and read the same way."""
    check_binary(data, source)
    if table_span(data) is None:
        quick = requoted(data)  # a table saved back as plain CSV, rewritten at pyarrow's speed when it can be
        if quick is not None:
            try:
                w = _read(quick, [], source)
            except InputError:
                w = None  # the line-by-line rewrite below says what is wrong, where
            if w is not None and not _spilled(w):
                return w
        fixed = canonical(data[:len(data)])
        if fixed is None:
            raise failure(data[: 4 << 20].decode("utf-8", errors="replace"), source)
        return _read(*fixed, source)
    try:
        w = _read(data, [], source)
    except InputError:
        fixed = canonical(data[:len(data)]) if _SPILL.search(data[: 16 << 20]) else None
        if fixed is None:
            raise
        return _read(*fixed, source)
    if _spilled(w):
        fixed = canonical(data[:len(data)])
        if fixed is not None:
            return _read(*fixed, source)
    return w


def _spilled(w: Workload) -> bool:
    """Whether a kernel name may have held unquoted commas: a name cut inside its brackets, or rows skipped for
    holding more fields than the header."""
    if any(is_open(str(n)) for n in w.frame["name"].unique()):
        return True
    longer = (m for s in w.skipped if (m := _LONGER.match(s.reason)))
    return any(int(m.group(2)) > int(m.group(1)) for m in longer)


_LONGER = re.compile(r"expected (\d+) fields, found (\d+)")


#: a field separator with a quote on one side only: ncu quotes every field, a name left unquoted leaves this
_SPILL = re.compile(rb'(?m)^"[^\n]*?(?:",[^"\r\n]|[^"\r\n,],")')


def _read(data: bytes, unread: list[tuple[int, str]], source: str) -> Workload:
    """The workload of an export as ncu writes it; ``unread``: rows the rewrite (:mod:`.ncu_canon`) left out, and why."""
    block = table_span(data)
    if block is None:
        raise failure(data[: 4 << 20].decode("utf-8", errors="replace"), source)
    start, end, line = block
    nl = data.find(b"\n", start, end)
    names = split_header(data[start: nl if nl >= 0 else end])
    skipped: list[Skipped] = [skip(source, f"line {n}", why) for n, why in unread]
    cut = cut_row(data, start, end)
    if cut is not None:  # the file ends inside its last row
        block = (start, cut[0], line)
        skipped.append(skip(source, f"line {cut[1]}", "the file ends inside this row (a truncated copy?)"))
    details = "Metric Name" in names and "Metric Value" in names
    need = ("Kernel Name", "Metric Unit") if details else ("Kernel Name",)
    for col in need:
        if col not in names:
            raise InputError(where=f"{source}: line {line}", expected=f"column {col!r} in the ncu header", found="none",
                             hint="export again with ncu --csv (details page) or ncu --csv --page raw; columns are "
                             "read by name: ID, Kernel Name, Metric Name, Metric Unit, Metric Value.")
    la = (details_launches if details else raw_launches)(data, block, names, source, skipped)
    release_arrow_memory()  # the table and its conversions are gone: their pages, kept by pyarrow's pool
    outside = data[:start] + b"\n" + data[max(end, len(data) - 65536):]
    notes = list(dict.fromkeys(ln[:200] for ln in re.findall(r"^==(?:ERROR|ERR|WARNING)==.*$",
                                                             outside.decode("utf-8", "replace"), re.M)))
    if len(la.ids) == 0:
        if la.rules:
            raise rule_only(source, la.rules)
        if unread:  # every row left out by the rewrite: why
            raise InputError(where=f"{source}: line {unread[0][0]}", text=f"no launch row could be read: "
                             f"{unread[0][1].split(';')[0]}.", hint=unread[0][1].split("; ", 1)[-1] + ".")
        raise InputError(where=source, expected="at least one launch row under the ncu header", found="a header only",
                         hint="the run measured no kernel: check the ncu output for ==WARNING== or ==ERROR== lines "
                         "and the --kernel-name / --launch-skip / --launch-count filters.")
    device = la.text.get("device__attribute_display_name") or None
    dev_col = la.first.get("Device", "").strip()
    if not device and dev_col and not dev_col.isdigit():
        device = dev_col
    cc = la.first.get("CC", "").strip()
    major, minor = (la.metrics.get(f"device__attribute_compute_capability_{k}") for k in ("major", "minor"))
    if not cc and major is not None and minor is not None and len(major) and np.isfinite([major[0], minor[0]]).all():
        cc = f"{int(major[0])}.{int(minor[0])}"  # 12-column exports have no CC column
    cc = cc if re.fullmatch(r"\d{1,2}\.\d", cc) else ""
    said = arch.from_text(outside.decode("utf-8", "replace")) if not (cc and device) else arch.Evidence()
    # the program's own "Detected GPU: …" line fixes the tensor instruction and the peak it is checked against
    cols, warnings, meta = derive(la, source, cc or said.meta.get("compute_capability"), device or said.device)
    n = len(la.ids)
    cols.update(name=la.names, source=np.full(n, source, dtype=object),
                row=la.ids.astype(np.int64).astype(str).astype(object), count=np.ones(n, dtype=np.int64))
    if la.groups is not None:
        cols["group"] = la.groups  # the NVTX range the launch ran in
        cols["nvtx"] = nvtx_path(la.groups, "/")  # the same ranges as a path (roofcore.hierarchy)
    frame = make_frame(cols, n)
    meta.update(profiler="Nsight Compute", ncu_page="details" if details else "raw")
    if cc:
        meta["compute_capability"] = cc
        meta["arch"] = "sm_" + cc.replace(".", "")  # cc: one dot (checked above)
    if la.rules:
        meta["ncu_rules"] = "; ".join(la.rules)[:1000]
    warnings = [*(f"ncu reported: {x}" for x in notes[:3]), *warnings]
    return Workload(frame=frame, name=source, sources=(source,), formats=("ncu-details" if details else "ncu-raw",),
                    skipped=tuple(skipped[:1000]), warnings=tuple(warnings), device=device, meta=meta,
                    measured=_export_devices(data, source, device, cc or None))


def _export_devices(data: bytes, source: str, device: str | None, cc: str | None) -> tuple[Hardware, ...]:
    """The device the export describes itself (its per-cycle peaks × clocks, a raw page's device attributes), as
    :func:`roofcore.ingest.ceilings.ncu_export_devices` builds it; reads only the first launch, and nothing past the
    header when the export carries none of those metrics."""
    from .ceilings import ncu_export_devices  # ceilings reads ncu's unit table: imported here, not at the top

    at = data.find(HEADER)
    window = slice(at, at + (16 << 20)) if at >= 0 else slice(0, 0)
    # most exports: no per-cycle peak or device attribute (a find is ~20x faster than a regex here)
    found = any(data.find(marker, window.start, window.stop) >= 0 for marker in _SELF_ROOF_MARKERS)
    devices = tuple(ncu_export_devices(data, source, device, cc)) if found else ()
    filemap.release(data, window.start, window.stop)  # a mapped file: the pages just searched
    return devices


#: names (as quoted in the CSV) of the metrics an export describes its own device with
_SELF_ROOF_MARKERS = (b'.peak_sustained"', b'"device__attribute_clock_rate"')


@register_format("ncu-details", "Nsight Compute CSV, details page (ncu --csv): one row per launch × metric",
                 sniff_details, priority=20, mapped=True, role="counters")
def parse_details(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an ``ncu --csv`` details export (or explain a failed run); one row per launch."""
    return _parse(data, source)


@register_format("ncu-raw", "Nsight Compute CSV, raw page (ncu --csv --page raw): one row per launch, units row",
                 sniff_raw, priority=20, mapped=True, role="counters")
def parse_raw(data: bytes, source: str, context: dict[str, Any] | None = None) -> Workload:
    """Read an ``ncu --csv --page raw`` export; one row per launch."""
    return _parse(data, source)


__all__ = ["FLOP_METRICS", "LABELS", "LEGACY", "OPS", "PROFILE_COMMAND", "ROOFLINE_METRICS", "UNITS", "WANTED",
           "nvtx_range", "parse_details", "parse_raw", "unit_factor"]
