"""Hierarchy rooflines on real exports (issue 27 point 7): each sample with modules, steps or NVTX ranges gives a
hierarchy whose sums hold, checked against an independent walk of the raw events here (plain json / csv, brute
force containment, no roofcore code). Skips where ../shared/samples is absent."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter, defaultdict

import numpy as np
import pytest
from roofhelpers import sample

from roofcore import ingest
from roofcore.analyze import analyze
from roofcore.catalog import load_catalogs
from roofcore.hierarchy import OUTSIDE, SEP, group

GPU = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime"}


def _events(path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _walk(path, ranges_of) -> list[tuple[str, float, str | None]]:
    """Per GPU event (ph X): (name, dur µs, path of the ranges ``ranges_of`` picks holding its launch), the
    launch found through ``args.correlation`` among the runtime events, containment tested one range at a time."""
    ev = _events(path)
    launch = {}
    for e in ev:
        corr = (e.get("args") or {}).get("correlation")
        if e.get("cat") in RUNTIME and corr is not None and corr not in launch:
            launch[corr] = e
    ranges = sorted(ranges_of(ev), key=lambda r: (r[1], -r[2]))
    out = []
    for e in ev:
        if e.get("cat") not in GPU or e.get("ph") != "X":
            continue
        lc = launch.get((e.get("args") or {}).get("correlation"))
        names = []
        if lc is not None:
            t = lc["ts"]
            names = [nm for (key, s, d, nm) in ranges if key(lc) and s <= t <= s + d]
        out.append((e["name"], float(e["dur"]), SEP.join(names) or None))
    return out


def _analysis(name: str, hw_id: str):
    w = ingest.read(sample(name))
    return analyze(w, load_catalogs(()).get(hw_id))


def _check_sums(a, level: str, walked: list[tuple[str, float, str | None]], depth_one: bool = False) -> None:
    """The groups' self times equal the walk's per path; the top nodes' totals equal the walk's per first name;
    every kernel is in one group (sums equal the kernel totals)."""
    rows = group(a, level)
    f = a.workload.frame
    assert rows["self_launches"].sum() == len(f)
    assert rows["self_time_s"].sum() == pytest.approx(f["time_s"].sum())
    want = defaultdict(float)
    for _, dur, p in walked:
        want[p or OUTSIDE] += dur * 1e-6
    got = rows[rows["self_launches"] > 0].set_index("group")["self_time_s"].to_dict()
    assert set(got) == set(want)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
    if depth_one:
        top = defaultdict(float)
        for _, dur, p in walked:
            top[p.split(SEP)[0] if p else OUTSIDE] += dur * 1e-6
        totals = rows[rows["depth"] <= 1].set_index("group")["time_s"].to_dict()
        assert totals == pytest.approx(dict(top))


def test_b200_modules_from_nn_module_events():
    """436 nn.Module events: every kernel's module path (the nn.Module ranges holding its launch on its thread)."""
    name = "pytorch_kineto_b200_cuda12.9_eager.json.gz"
    a = _analysis(name, "b200")

    def modules(ev):
        return [((lambda lc, p=e["pid"], t=e["tid"]: lc["pid"] == p and lc["tid"] == t), e["ts"], e["dur"],
                 e["name"].removeprefix("nn.Module: ")) for e in ev
                if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ")]

    walked = _walk(sample(name), modules)
    f = a.workload.frame
    assert Counter(zip(f["name"], f["module"].where(f["module"].notna(), None), strict=True)) == \
        Counter((n, p) for n, _, p in walked)
    assert sum(p is not None for *_, p in walked) > 900  # nearly every kernel has a module
    _check_sums(a, "module", walked, depth_one=True)
    assert group(a, "module:3")["self_time_s"].sum() == pytest.approx(f["time_s"].sum())


@pytest.mark.parametrize(("name", "hw_id", "steps"), [
    ("pytorch_kineto_t4_amp_record_shapes.json", "t4", 3),
    ("pytorch_kineto_v100_pytorch1.9_old_schema_resnet50.json.gz", "v100-sxm2-32gb", 6),
])
def test_resnet_steps_from_profiler_step_ranges(name, hw_id, steps):
    """ProfilerStep#N ranges (a user_annotation, or a 2021 Operator) holding each kernel's launch, on any thread."""
    a = _analysis(name, hw_id)

    def step_ranges(ev):
        return [((lambda lc, p=e["pid"]: lc["pid"] == p), e["ts"], e["dur"], e["name"]) for e in ev
                if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") in ("user_annotation",
                                                                                            "Operator", "cpu_op")]

    walked = _walk(sample(name), step_ranges)
    f = a.workload.frame
    assert Counter(f["step"].dropna()) == Counter(p for *_, p in walked if p)
    assert len({p for *_, p in walked if p}) == steps
    _check_sums(a, "step", walked)
    rows = group(a, "step")
    assert list(rows["group"][:steps]) == sorted({p for *_, p in walked if p}, key=lambda s: int(s.split("#")[1]))


def test_ncu_2020_nvtx_columns():
    """The NVTX columns of the Nsight Compute 2020.2 export (push/pop empty, start/stop ``Id:Domain:Range:...``):
    each launch's range, times summed per range."""
    path = sample("ncu_details_ncu2020.2_rtx3070_nvtx_columns.csv")
    text = path.read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO(text[text.index('"ID","Process ID"'):]))
    push = next(c for c in rows.fieldnames if "Push/Pop_Range" in c)
    start = next(c for c in rows.fieldnames if "Start/Stop_Range" in c)
    per: dict[str, float] = defaultdict(float)
    for r in rows:
        if r["Metric Name"] == "gpu__time_duration.sum":
            assert r["Metric Unit"] == "nsecond"
            assert not r[push].strip()
            cell = r[start].strip().strip('"')  # '"0:<default domain>:linear_nvtx:none:none"'
            per[cell.split(":")[2] if cell else OUTSIDE] += float(r["Metric Value"].replace(",", "")) * 1e-9
    a = _analysis(path.name, "rtx-3070")
    got = group(a, "nvtx").set_index("group")["time_s"].to_dict()
    assert got == pytest.approx(dict(per))
    assert group(a, "step").set_index("group")["time_s"].to_dict() == pytest.approx(dict(per))  # outermost range


def test_no_ancestry_all_outside():
    """A GPU-only ROCm trace (no CPU ops, no annotations): every kernel outside, none dropped; windows still work."""
    a = _analysis("pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz", "mi210")
    rows = group(a, "module")
    assert list(rows["group"]) == [OUTSIDE] and rows.loc[0, "launches"] == len(a.workload.frame)
    win = group(a, window=1e-3)
    assert win["launches"].sum() == len(a.workload.frame) and len(win) > 1
    assert np.isclose(win["self_time_s"].sum(), a.workload.frame["time_s"].sum())


def test_rocm_annotations_from_user_annotation_ranges():
    """A ROCm trace (MI300X, torch.compile): the record_function annotation holding each kernel's HIP launch gives
    its NVTX-level path and, with no ProfilerStep, its step."""
    name = "pytorch_kineto_mi300x_rocm7.2_torch_compile.json.gz"
    a = _analysis(name, "mi300x")

    def annotations(ev):
        return [((lambda lc, p=e["pid"], t=e["tid"]: lc["pid"] == p and lc["tid"] == t), e["ts"], e["dur"], e["name"])
                for e in ev if e.get("cat") == "user_annotation"]

    walked = _walk(sample(name), annotations)
    f = a.workload.frame
    assert Counter(zip(f["name"], f["nvtx"].where(f["nvtx"].notna(), None), strict=True)) == \
        Counter((n, p) for n, _, p in walked)
    _check_sums(a, "nvtx", walked, depth_one=True)
    assert group(a, "step")["self_time_s"].sum() == pytest.approx(f["time_s"].sum())
