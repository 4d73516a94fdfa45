"""Every real export in ../shared/samples behaves as MANIFEST.md says, through every surface but the app
(tests/test_samples_app.py): detection without --format, reading (alone or with the files it belongs with),
the numbers against an independent computation (tests/samples_reference.py), `roofline analyze`, `advise`
and `report` (in-process, and one real process per format family), and the rule that unknown stays unknown
(on every sample and on generated inventories with holes).

Driven by tests/samples_expected.yaml: a new sample needs a line there, not new code; a sample with no line
fails. Skips where ../shared/samples is absent (a fresh clone); CI has it.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import samples_reference
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from roofhelpers import make_hw

import roofcore
from roofcore.cli import main as cli_main
from roofcore.errors import RoofcoreError
from roofcore.ingest import detect, make_frame
from roofcore.models import Workload

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
EXPECTED_FILE = Path(__file__).with_name("samples_expected.yaml")
DEFAULT_HW = "h100-sxm"  # where an entry names none (a refusal)


def load_entries() -> dict[str, dict]:
    """The expectations, each with its ``files`` (a file's own entry lists just it)."""
    doc = yaml.safe_load(EXPECTED_FILE.read_text(encoding="utf-8"))["samples"]
    return {key: {"files": [key], **entry} if "files" not in entry else dict(entry) for key, entry in doc.items()}


ENTRIES = load_entries()
WORKS = [k for k, e in ENTRIES.items() if e["outcome"] == "works"]
REFUSED = [k for k, e in ENTRIES.items() if e["outcome"] == "refused"]
SINGLE = [k for k, e in ENTRIES.items() if len(e["files"]) == 1]
REFERENCES = [(k, i) for k, e in ENTRIES.items() for i in range(len(e.get("reference", ())))]

def sample_paths(key: str) -> list[Path]:
    """The entry's files; skip without the samples folder, fail if the folder lacks a file the entry names."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository; CI has them)")
    paths = [SAMPLES / f for f in ENTRIES[key]["files"]]
    missing = [p.name for p in paths if not p.is_file()]
    assert not missing, f"samples_expected.yaml names files that ../shared/samples lacks: {missing}"
    return paths


@functools.cache
def workload(key: str) -> Workload:
    """The entry's files read together (cached: several tests look at the same workload)."""
    return roofcore.read_many(sample_paths(key))


@functools.lru_cache(maxsize=1)
def catalog() -> roofcore.Catalog:
    return roofcore.load_catalogs()


def words_in(text: str, words: list[str]) -> list[str]:
    """The words missing from ``text`` (case-insensitive)."""
    return [w for w in words if w.lower() not in text.lower()]


# ------------------------------------------------------------------------------------- the file list


@pytest.mark.samples
def test_every_sample_has_an_expectation():
    """A file dropped into ../shared/samples without a line in samples_expected.yaml is untested: fail."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples is not here (the real exports live outside the repository; CI has them)")
    listed = {f for e in ENTRIES.values() for f in e["files"]}
    files = {p.name for p in SAMPLES.iterdir() if p.is_file() and p.suffix != ".md"}
    assert not files - listed, f"no entry in tests/samples_expected.yaml for: {sorted(files - listed)}"
    assert not listed - files, f"samples_expected.yaml names files not in ../shared/samples: {sorted(listed - files)}"
    alone = {e["files"][0] for e in ENTRIES.values() if len(e["files"]) == 1}
    assert not files - alone, f"each file needs an entry of its own (alone): {sorted(files - alone)}"


def test_expectations_are_well_formed():
    keys = {"files", "outcome", "format", "message", "hardware", "kernels", "launches", "known", "device",
            "suggest", "group_words", "warns", "warning_words", "as_catalog", "measured", "reference"}
    for key, e in ENTRIES.items():
        assert set(e) <= keys, f"{key}: unknown keys {sorted(set(e) - keys)}"
        assert e["outcome"] in ("works", "refused"), key
        if e["outcome"] == "works":
            assert "hardware" in e, f"{key}: a working sample names the device to analyse it on"
            assert catalog().get(e["hardware"])
        else:
            assert e.get("message"), f"{key}: a refusal names words its message must contain"
        assert set(e.get("known", {})) <= {"flops", "bytes", "time"}, key
        assert set(e.get("known", {}).values()) <= {"all", "some", "none"}, key
        for ref in e.get("reference", ()):
            assert callable(getattr(samples_reference, ref["fn"], None)), f"{key}: no reference {ref['fn']!r}"


# ----------------------------------------------------------------------------------------- detection


@pytest.mark.samples
@pytest.mark.parametrize("key", [k for k in SINGLE if "format" in ENTRIES[k]])
def test_detected_without_format(key):
    (path,) = sample_paths(key)
    assert detect(path.read_bytes(), path.name).name == ENTRIES[key]["format"]


# -------------------------------------------------------------------------------------------- reading


@pytest.mark.samples
@pytest.mark.parametrize("key", REFUSED)
def test_refused_with_a_message(key):
    paths = sample_paths(key)
    with pytest.raises(RoofcoreError) as err:
        roofcore.read_many(paths)
    text = str(err.value)
    assert not words_in(text, ENTRIES[key]["message"]), f"{text!r} lacks {words_in(text, ENTRIES[key]['message'])}"


def _share(known: np.ndarray) -> str:
    return "none" if not known.any() else "all" if known.all() else "some"


@pytest.mark.samples
@pytest.mark.parametrize("key", WORKS)
def test_reads_as_the_manifest_says(key):
    e = ENTRIES[key]
    w = workload(key)
    f = w.frame
    problems = []
    if "kernels" in e and len(w) != e["kernels"]:
        problems.append(f"{len(w)} rows, expected {e['kernels']}")
    if "launches" in e and int(f["count"].sum()) != e["launches"]:
        problems.append(f"{int(f['count'].sum())} launches, expected {e['launches']}")
    if "format" in e:
        want = e["format"] if isinstance(e["format"], list) else [e["format"]]
        if set(want) - set(w.formats):
            problems.append(f"formats {w.formats}, expected {want}")
    known = {"flops": f["flops"].notna().to_numpy(), "time": f["time_s"].notna().to_numpy(),
             "bytes": (f[w.byte_columns].notna().any(axis=1).to_numpy() if w.byte_columns
                       else np.zeros(len(f), dtype=bool))}
    for what, share in e.get("known", {}).items():
        if _share(known[what]) != share:
            problems.append(f"{what} known for {int(known[what].sum())} of {len(f)} rows, expected {share}")
    if "device" in e and (not w.device or words_in(w.device, e["device"])):
        problems.append(f"device {w.device!r}, expected it to name {e['device']}")
    if "suggest" in e:
        got = catalog().suggest(w.device, w.meta)
        if (got[:1] or [None])[0] != e["suggest"]:
            problems.append(f"suggested devices {got} for {w.device!r} ({dict(w.meta)}), expected {e['suggest']}")
    if "group_words" in e:
        groups = " ".join(str(g) for g in f["group"].dropna().unique())
        if words_in(groups, e["group_words"]):
            problems.append(f"groups {groups[:200]!r} lack {e['group_words']}")
    off = f["bytes_hbm"].isna().any() if "bytes_hbm" in f.columns else True
    if (e.get("warns") or f["flops"].isna().any() or off) and not w.warnings:
        problems.append("no warning (unknown FLOPs or bytes need one saying what to collect next time)")
    if "warning_words" in e and words_in(" ".join(w.warnings), e["warning_words"]):
        problems.append(f"warnings lack {words_in(' '.join(w.warnings), e['warning_words'])}: {w.warnings}")
    if e.get("measured") and not w.measured:
        problems.append("no measured ceilings carried with the workload")
    assert not problems, "; ".join(problems)


# ----------------------------------------------------------------------------------- reference numbers


def _norm(name: object) -> str:
    return " ".join(str(name).split())


class Rows:
    """Finds a workload's rows by kernel name (exact, else one name containing the other: a parser may trim a
    suffix such as `` [clone .kd]``), then by occurrence (``nth``) or by measured time (``match: time``)."""

    def __init__(self, w: Workload):
        self.frame = w.frame
        self.columns = {c: w.frame[c].to_numpy() for c in w.frame.columns}  # fast cell access
        self.names = [_norm(n) for n in w.frame["name"]]
        self.by_name: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(self.names):
            self.by_name[n].append(i)
        self.time = w.frame["time_s"].to_numpy(dtype=np.float64)
        self.by_time: dict[tuple[str, int], list[int]] = defaultdict(list)  # (name, whole ns): traces' launches
        for i, (n, t) in enumerate(zip(self.names, self.time, strict=True)):
            if not math.isnan(t):
                self.by_time[n, round(t * 1e9)].append(i)

    def find(self, rec: dict) -> list[int]:
        want = _norm(rec["name"])
        exact = want in self.by_name
        if rec.get("match") == "time" and exact:
            idx = self.by_time.get((want, round(rec["time_s"] * 1e9)), [])
        else:
            idx = self.by_name[want] if exact else [i for i, n in enumerate(self.names) if n and (want in n or n in want)]
        if rec.get("match") == "time":
            return [i for i in idx if math.isclose(self.time[i], rec["time_s"], rel_tol=1e-9, abs_tol=1e-12)]
        return [idx[rec["nth"]]] if rec["nth"] < len(idx) else []


CHECKED = ("flops", "time_s", "count", "precision")


def _mismatch(columns: dict, i: int, rec: dict, rel: float) -> list[str]:
    out = []
    for field, want in rec.items():
        if field not in CHECKED and not field.startswith("bytes_"):
            continue
        if field not in columns:
            out.append(f"{field}: no such column, expected {want}")
            continue
        got = columns[field][i]
        if field == "precision":
            if got != want:
                out.append(f"precision {got!r}, expected {want!r}")
        elif isinstance(want, float) and math.isnan(want):
            if not (got is None or (isinstance(got, float) and math.isnan(got))):
                out.append(f"{field} {got}, expected unknown (NaN)")
        elif got is None or math.isnan(float(got)) or not math.isclose(float(got), want, rel_tol=rel, abs_tol=1e-12):
            out.append(f"{field} {got}, expected {want:.6g}")
    return out


def _reference(key: str, i: int) -> tuple[dict, list[dict]]:
    e = ENTRIES[key]
    ref = e["reference"][i]
    paths = sample_paths(key)
    path = SAMPLES / ref["file"] if "file" in ref else paths[0]
    return ref, getattr(samples_reference, ref["fn"])(path, **ref.get("args", {}))


@pytest.mark.samples
@pytest.mark.parametrize(("key", "i"), REFERENCES, ids=[f"{k}-{ENTRIES[k]['reference'][i]['fn']}" for k, i in REFERENCES])
def test_numbers_match_an_independent_computation(key, i):
    ref, records = _reference(key, i)
    rel = ref.get("rel", 1e-6)
    assert records, f"{ref['fn']} found nothing in the file"
    # the reference computation itself reproduces PROVENANCE.md's numbers
    for want in ref.get("expect", ()):
        sel = [r for r in records if ("id" in want and r.get("id") == want["id"])
               or ("id" not in want and r["name"] == want["name"] and r.get("nth", 0) == want.get("nth", 0))]
        assert len(sel) == 1, f"reference record {want} not found"
        for field, v in want.items():
            if field in ("id", "name", "nth"):
                continue
            got = sel[0].get(field)
            assert got is not None, f"{ref['fn']} gives no {field} for {want}"
            assert (math.isnan(v) and math.isnan(got)) or math.isclose(got, v, rel_tol=1e-6), (field, got, v)
    if ENTRIES[key]["outcome"] != "works":
        return
    rows = Rows(workload(key))
    problems = []
    for rec in records:
        found = rows.find(rec)
        if not found:
            problems.append(f"{_norm(rec['name'])[:80]!r} (#{rec.get('nth', rec.get('time_s'))}): no such row")
            continue
        first = _mismatch(rows.columns, found[0], rec, rel)
        if first and all(_mismatch(rows.columns, j, rec, rel) for j in found[1:]):  # launches of equal time: any
            problems.append(f"{_norm(rec['name'])[:80]!r} (#{rec.get('nth', '')}, row {found[0]}): " + ", ".join(first))
    assert not problems, f"{len(problems)} of {len(records)} records differ:\n" + "\n".join(problems[:12])


# -------------------------------------------------------------------------------- unknown stays unknown


def assert_unknown_stays_unknown(w: Workload, a: roofcore.Analysis) -> None:
    """No kernel whose FLOPs or off-chip bytes are unknown gets a bound or a roofline time, in the table and in
    the labels every page uses; a copy (0 FLOPs) with link bytes on the device is bound by its link."""
    f = w.frame
    n = len(f)
    flops = f["flops"].to_numpy(dtype=np.float64)
    for r in a.results:
        hw = r.hardware
        col = f"bytes_{hw.offchip.name}"
        off = f[col].to_numpy(dtype=np.float64) if col in f.columns else np.full(n, np.nan)
        link_cols = {f"bytes_{lk.name}" for lk in hw.links} & set(f.columns)
        link_known = np.zeros(n, dtype=bool)
        link_moved = np.zeros(n, dtype=bool)
        for c in link_cols:
            b = f[c].to_numpy(dtype=np.float64)
            link_known |= ~np.isnan(b)
            link_moved |= b > 0
        other_known = f[[c for c in w.byte_columns if c not in link_cols]].notna().any(axis=1).to_numpy()
        copy = (flops == 0) & np.isnan(off)
        unknown = np.isnan(flops) | (np.isnan(off) & ~(copy & link_known))
        tab = a.table(hw.id, messages=False)
        bound = tab["bound"].to_numpy(dtype=object)
        idx, labels = a.bound_labels(hw.id)
        bad = [i for i in np.flatnonzero(unknown)
               if bound[i] not in (None, "unknown") or labels[idx[i]] != "unknown" or not np.isnan(r.t_roof[i])]
        assert not bad, (f"{len(bad)} kernels with unknown FLOPs or off-chip bytes are bound on {hw.id}, e.g. "
                         f"{f['name'].iloc[bad[0]]!r}: flops {flops[bad[0]]}, {col} {off[bad[0]]}, "
                         f"bound {bound[bad[0]]!r}, t_roof {r.t_roof[bad[0]]}")
        # a copy moving bytes over a link: bound by that link (or by an on-chip level the kernel also loads
        # for longer), never unknown, never compute
        moves = np.flatnonzero(copy & link_moved)
        wrong = [i for i in moves if not isinstance(bound[i], str) or bound[i].startswith("compute")
                 or (not other_known[i] and not bound[i].startswith("link:"))]
        assert not wrong, f"a copy with link bytes is bound by {bound[wrong[0]]!r}, not its link, on {hw.id}"


@pytest.mark.samples
@pytest.mark.parametrize("key", WORKS)
def test_unknown_stays_unknown_on_every_sample(key):
    w = workload(key)
    hws = [catalog().get(ENTRIES[key]["hardware"]), catalog().get(DEFAULT_HW)]
    assert_unknown_stays_unknown(w, roofcore.analyze(w, hws))


finite = st.floats(min_value=1.0, max_value=1e15)


def holes(values, nan_share: float = 0.3):
    """A value, zero or unknown (NaN)."""
    return st.one_of(st.just(np.nan), st.just(0.0), values) if nan_share else values


@functools.lru_cache(maxsize=1)
def prop_devices():
    return (make_hw(1e15, 3e12, levels={"l2": 1e13}, links={"pcie": 6.4e10, "nvlink": 4.5e11}, hw_id="prop-links"),
            make_hw(1e14, 1e12, hw_id="prop-plain"))


kernel = st.tuples(holes(finite), holes(finite), holes(finite), holes(finite), holes(st.floats(1e-9, 10.0)),
                   st.sampled_from([None, "bf16", "fp32", "fp8"]))


@settings(max_examples=120, deadline=None)
@given(kernels=st.lists(kernel, min_size=1, max_size=25), with_l2=st.booleans(), with_pcie=st.booleans())
def test_unknown_stays_unknown_on_generated_inventories(kernels, with_l2, with_pcie):
    """Inventories with holes (NaN FLOPs, bytes, times; zero FLOPs beside link bytes, i.e. copies)."""
    flops, hbm, l2, pcie, times, precision = (list(x) for x in zip(*kernels, strict=True))
    cols = {"name": [f"k{i}" for i in range(len(flops))], "flops": flops, "bytes_hbm": hbm, "time_s": times,
            "precision": precision, "source": ["generated"] * len(flops), "row": [str(i) for i in range(len(flops))]}
    if with_l2:
        cols["bytes_l2"] = l2
    if with_pcie:
        cols["bytes_pcie"] = pcie
    w = Workload(frame=make_frame(cols, len(flops)), name="generated", sources=("generated",), formats=("test",))
    assert_unknown_stays_unknown(w, roofcore.analyze(w, list(prop_devices())))


def test_a_copy_with_link_bytes_is_bound_by_its_link():
    cols = {"name": ["copy", "no bytes", "no flops"], "flops": [0.0, 0.0, np.nan], "bytes_hbm": [np.nan] * 3,
            "bytes_pcie": [1e9, np.nan, 1e9], "time_s": [0.1, 0.1, 0.1]}
    w = Workload(frame=make_frame(cols, 3), name="copies", sources=("t",), formats=("test",))
    a = roofcore.analyze(w, [prop_devices()[0]])
    assert list(a.table()["bound"]) == ["link:pcie", None, None]
    assert_unknown_stays_unknown(w, a)


# --------------------------------------------------------------------------------------------- the CLI


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli_main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.samples
@pytest.mark.parametrize("key", list(ENTRIES))
def test_cli_analyze_advise_report(key, capsys, tmp_path):
    """Exit 0 for a working sample, 2 with the one-line message for a refused one; never a traceback or an
    internal error. The JSON output keeps unknown kernels unbound."""
    e = ENTRIES[key]
    files = [str(p) for p in sample_paths(key)]
    hw = ["--hardware", e.get("hardware", DEFAULT_HW)]
    html = tmp_path / "report.html"
    runs = {"analyze": ["analyze", *hw, *files], "analyze --json": ["analyze", "--json", *hw, *files],
            "advise": ["advise", *hw, *files], "report": ["report", *hw, *files, "-o", str(html)]}
    for what, argv in runs.items():
        rc, out, err = run_cli(capsys, *argv)
        assert "internal error" not in err and "Traceback" not in err, f"{what}: {err}"
        if e["outcome"] == "refused":
            assert rc == 2, f"{what}: exit {rc}, expected 2 (refused); stderr {err!r}"
            line = err.strip()
            assert "\n" not in line and line.startswith("roofline: error:"), f"{what}: {err!r}"
            assert not words_in(line, e["message"]), f"{what}: {line!r} lacks {words_in(line, e['message'])}"
            continue
        assert rc == 0, f"{what}: exit {rc}: {err}"
        if what == "analyze":
            assert out.startswith("Workload:"), out[:200]
        elif what == "analyze --json":
            doc = json.loads(out)
            if "kernels" in e:
                assert doc["workload"]["kernels"] == e["kernels"]
            for k in doc["kernels"]:
                if k["flops"] is None:
                    assert k["bound"] in (None, "unknown"), f"{k['name']!r}: FLOPs unknown, bound {k['bound']!r}"
                    assert k["t_roof_s"] is None, f"{k['name']!r}: FLOPs unknown, t_roof {k['t_roof_s']}"
        elif what == "report":
            text = html.read_text(encoding="utf-8")
            assert "<html" in text[:500].lower() and len(text) > 1000


def _families() -> list[str]:
    """One sample per format family (ncu, nsys, rocprof, pytorch, ...: a format name's first word) and one
    refusal, each run as a real `roofline` process."""
    seen: dict[str, str] = {}
    for key in SINGLE:
        e = ENTRIES[key]
        seen.setdefault(e["format"].split("-")[0] if e["outcome"] == "works" else "refused", key)
    return list(seen.values())


@pytest.mark.samples
@pytest.mark.parametrize("key", _families())
def test_the_installed_command(key):
    e = ENTRIES[key]
    files = [str(p) for p in sample_paths(key)]
    # the command installed beside the interpreter running the tests (a virtual environment's own), else on PATH
    beside = Path(sys.executable).with_name("roofline")
    exe = str(beside) if beside.is_file() else shutil.which("roofline")
    cmd = [exe] if exe else [sys.executable, "-m", "roofcore"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("ROOFCORE_DEBUG", None)
    p = subprocess.run([*cmd, "analyze", "--hardware", e.get("hardware", DEFAULT_HW), *files], capture_output=True,
                       text=True, encoding="utf-8", env=env, timeout=300, check=False)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    assert p.returncode == (0 if e["outcome"] == "works" else 2), p.stderr
    if e["outcome"] == "refused":
        assert not words_in(p.stderr, e["message"]), p.stderr


# ----------------------------------------------------------------------------------- measured ceilings


@pytest.mark.samples
@pytest.mark.parametrize("key", [k for k in SINGLE if ENTRIES[k].get("as_catalog")])
def test_measured_ceilings_become_a_device(key):
    """ERT's roofline.json and rocprof-compute's roofline.csv, given as --catalog, add measured devices."""
    (path,) = sample_paths(key)
    built_in = {h.id for h in catalog()}
    added = [h for h in roofcore.load_catalogs([path]) if h.id not in built_in]
    assert added, f"--catalog {path.name} adds no device"
