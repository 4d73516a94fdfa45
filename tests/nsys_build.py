"""Nsight Systems SQLite exports for the tests, written with our own DDL: the tables and columns roofcore reads, as
nsys's SQLite export schema names them (docs/formats.md). ``current``: names as ``StringIds`` ids, GPUs in
``TARGET_INFO_GPU``; ``old``: names stored inline, GPUs in ``TARGET_INFO_CUDA_GPU`` (keyed by ``deviceId``)."""

from __future__ import annotations

import csv
import io
import sqlite3
from dataclasses import dataclass
from pathlib import Path

PID_SHIFT = 1 << 24  #: nsys's global ids: the process id above 24 bits, the thread id below


def global_tid(pid: int, tid: int) -> int:
    return pid * PID_SHIFT + tid


@dataclass
class Launch:
    start: int | None
    end: int | None
    name: str
    corr: int
    device: int = 0
    pid: int = 4242
    call: tuple[int, int] | None = None  #: the launch call's start and end on the CPU (thread = pid)


@dataclass
class Range:
    start: int
    end: int | None
    name: str
    pid: int = 4242
    kind: int = 59  #: 59 push/pop, 60 start/end, 70/71 the same from NVTXT, 34 a mark, 75 a domain's creation
    domain: int = 0  #: 0 the default domain
    end_pid: int | None = None  #: the thread (= process here) that ended a start/end range on another thread


def build(launches: list[Launch], ranges: list[Range] = (), copies: list[tuple[int, int]] = (), *,
          gpus: dict[int, str] | None = None, layout: str = "current") -> bytes:
    con = sqlite3.connect(":memory:")
    current = layout == "current"
    name_type = "INTEGER" if current else "TEXT"
    con.executescript(f"""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, "end" INT, deviceId INT, contextId INT, streamId INT,
            correlationId INT, globalPid INT, demangledName {name_type}, shortName {name_type}, gridX INT, blockX INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, "end" INT, eventClass INT, globalTid INT,
            correlationId INT, nameId INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, "end" INT, deviceId INT, bytes INT, copyKind INT);
        CREATE TABLE NVTX_EVENTS (start INT, "end" INT, eventType INT, text TEXT, globalTid INT, textId INT,
            domainId INT, endGlobalTid INT);
    """)
    if current:
        con.execute("CREATE TABLE TARGET_INFO_GPU (id INT, name TEXT, busLocation TEXT)")
    else:
        con.execute("CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INT, name TEXT)")
    for dev, name in (gpus if gpus is not None else {0: "NVIDIA H100 80GB HBM3"}).items():
        con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?, ?, '0000:1b:00.0')" if current else
                    "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (?, ?)", (dev, name))
    ids: dict[str, int] = {}

    def sid(text: str) -> int:
        if text not in ids:
            ids[text] = len(ids) + 1
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    for k in launches:
        name = sid(k.name) if current else k.name
        short = sid(k.name.split("<")[0].split("(")[0]) if current else k.name.split("(")[0]
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, 7, ?, ?, ?, ?, 128, 256)",
                    (k.start, k.end, k.device, k.corr, k.pid * PID_SHIFT, name, short))
        if k.call is not None:
            con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?)",
                        (*k.call, global_tid(k.pid, k.pid), k.corr, sid("cudaLaunchKernel")))
    for r in ranges:  # the name inline (text) in the old layout, registered (textId) in the current one
        text, text_id = (None, sid(r.name)) if current else (r.name, None)
        end_tid = None if r.end_pid is None else global_tid(r.pid, r.end_pid)
        con.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (r.start, r.end, r.kind, text, global_tid(r.pid, r.pid), text_id, r.domain, end_tid))
    for start, end in copies:
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 4096, 1)", (start, end))
    con.commit()
    return con.serialize()


def from_gpu_trace(path: Path) -> tuple[list[Launch], list[tuple[int, int]], dict[int, str]]:
    """The launches, copies and GPU names of an nsys cuda_gpu_trace CSV (from its header on; a name whose commas were
    left unquoted keeps them), as its SQLite export holds them."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Start (ns),"))
    rows = list(csv.reader(io.StringIO("\n".join(lines[at:]))))
    header = rows[0]
    launches, copies, gpus = [], [], {}
    for r in rows[1:]:
        if not r:
            continue
        r = [*r[:len(header) - 1], ",".join(r[len(header) - 1:])]
        f = dict(zip(header, r, strict=True))
        start, dur = int(f["Start (ns)"]), int(f["Duration (ns)"])
        if f["Name"].startswith("[CUDA mem"):
            copies.append((start, start + dur))
            continue
        name, _, index = f["Device"].rpartition(" (")
        gpus[int(index.rstrip(")"))] = name
        launches.append(Launch(start, start + dur, f["Name"], int(f["CorrId"]), device=int(index.rstrip(")"))))
    return launches, copies, gpus
