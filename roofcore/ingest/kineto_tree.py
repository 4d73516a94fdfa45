"""PyTorch traces: each GPU event's ancestry (roofcore.hierarchy) from the timeline's own nesting.

A kernel's ``args.correlation`` names its runtime launch (thread, time); the ranges open on that thread at that
time are its ancestors:

* ``module`` — the ``nn.Module: Name_N`` python_function events (``with_modules=True`` / ``with_stack=True``),
  nested: ``GptOssForCausalLM_0 › TransformerBlock_3 › OAIAttention_3``;
* ``nvtx`` — the ``user_annotation`` ranges (``record_function``, ``Optimizer.step#Adam.step``) other than steps;
* ``step`` — the ``ProfilerStep#N`` range (a user_annotation, or a cpu_op / ``Operator`` in 2021's schema) holding
  the launch on any thread of the trace (the backward pass launches from autograd's own thread); without steps, the
  outermost annotation. A kernel without a launch (a GPU-only trace) is placed by its GPU start in the
  ``gpu_user_annotation`` ranges of the same names;
* ``op`` — the launching op (the one whose formula gives the kernel's FLOPs: :mod:`.kineto_build`);
* ``phase`` — a phase an annotation names (forward, backward, optimizer, prefill, decode), else ``backward`` for
  kernels launched inside autograd's backward ops;
* ``start_s`` — the GPU start (``ts`` µs × 1e-6).

Kernels without an ancestor at a level get None there ("outside"); nothing is dropped.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .ancestry import SEP, containing, paths, range_paths
from .kineto_link import Values, as_int64, id_index, innermost, numbers, thread_codes, transpose, valid_ids

if TYPE_CHECKING:
    from .kineto_build import Events
    from .kineto_events import Scan

_STEP = re.compile(r"^ProfilerStep#\d+$")
_MODULE_PREFIX = "nn.Module: "
#: phase words in annotation names, tried innermost annotation first
_PHASES = (("prefill", re.compile(r"prefill", re.I)), ("decode", re.compile(r"decode", re.I)),
           ("backward", re.compile(r"backward", re.I)), ("optimizer", re.compile(r"optimi[sz]er", re.I)),
           ("forward", re.compile(r"forward", re.I)))
#: the phase of a training step's kernels no annotation names and no backward op holds: a guess, labelled so
FORWARD_GUESS = "forward (inferred)"
_BACKWARD_OP = re.compile(r"^autograd::engine::evaluate_function|Backward\d*$")


@functools.lru_cache(maxsize=4096)
def _segment_phase(seg: str) -> str | None:
    for name, rx in _PHASES:
        if rx.search(seg):
            return name
    return None


def _phase_of(path: str | None) -> str | None:
    """The phase the innermost annotation naming one gives (segments tested once each, memoised)."""
    if not path:
        return None
    for seg in reversed(path.split(SEP)):
        found = _segment_phase(seg)
        if found:
            return found
    return None


def ancestry_columns(sc: Scan, ev: Events) -> dict[str, np.ndarray]:
    """The ancestry columns (one value per GPU event of ``ev``) from the scan ``sc``: see the module docstring.
    Empty where the trace has neither ranges nor ops to nest in (only ``start_s`` then)."""
    n = ev.n
    out: dict[str, np.ndarray] = {"start_s": ev.ts / 1e6}
    marks = getattr(sc, "marks", None) or []
    if not n or not (marks or sc.ops):
        return out
    m_kind = [m[0] for m in marks]
    cpu_m = [k for k, x in enumerate(m_kind) if x != "gpu_annotation"]
    op_names = [o[4] for o in sc.ops]
    back = _backward_ops(op_names)
    r_pid, r_tid, r_ts, r_corr = _runtime_columns(sc)
    threads = thread_codes(_joined([marks[k][1] for k in cpu_m], [sc.ops[k][0] for k in back], r_pid),
                            _joined([marks[k][2] for k in cpu_m], [sc.ops[k][1] for k in back], r_tid))
    nm, nb = len(cpu_m), len(back)
    m_thr, b_thr, r_thr = threads[:nm], threads[nm:nm + nb], threads[nm + nb:]
    q_thr, q_time = _launches(ev, r_thr, r_ts, r_corr)
    m_start = numbers([marks[k][3] for k in cpu_m], "ts", None, negative_ok=True)
    m_end = m_start + np.nan_to_num(numbers([marks[k][4] for k in cpu_m], "dur", None))
    m_name = [marks[k][5] if type(marks[k][5]) is str else "" for k in cpu_m]
    kinds = np.array([m_kind[k] for k in cpu_m], dtype=object)
    is_step = np.array([bool(_STEP.match(s)) for s in m_name], dtype=bool)
    mod = np.flatnonzero(kinds == "module")
    ann = np.flatnonzero((kinds == "annotation") & ~is_step)
    if mod.size:
        out["module"] = paths(m_thr[mod], m_start[mod], m_end[mod],
                              [m_name[k].removeprefix(_MODULE_PREFIX) for k in mod], q_thr, q_time)
    nvtx = None
    if ann.size:
        nvtx = paths(m_thr[ann], m_start[ann], m_end[ann], [m_name[k] for k in ann], q_thr, q_time)
        out["nvtx"] = nvtx
    step = _steps(sc, ev, marks, m_start, m_end, m_name, is_step, kinds, m_thr, q_time, op_names)
    if step is not None:
        out["step"] = step
    if sc.ops:
        out["op"] = _op_column(ev, op_names)
        phase = _phases(sc, back, b_thr, nvtx, q_thr, q_time, step)
        if phase is not None:
            out["phase"] = phase
    return out


def _op_column(ev: Events, op_names: list[object]) -> np.ndarray:
    """Per GPU event its launching op's name (None: none found); one look-up per distinct op."""
    out = np.full(ev.n, None, dtype=object)
    has = np.flatnonzero(ev.op_of >= 0)
    if has.size:
        uniq, inv = np.unique(ev.op_of[has], return_inverse=True)
        names = np.array([op_names[k] if type(op_names[k]) is str else None for k in uniq.tolist()], dtype=object)
        out[has] = names[inv]
    return out


def _backward_ops(op_names: list[object]) -> np.ndarray:
    """The indices of autograd's backward ops (``autograd::engine::evaluate_function: ...``, ``...Backward0``)."""
    if not op_names:
        return np.zeros(0, dtype=np.int64)
    # a name that is not text (a damaged trace's list or object) is no backward op, and is not hashable either
    text = [nm if type(nm) is str else None for nm in op_names]
    codes, uniq = pd.factorize(pd.Series(text, dtype=object), use_na_sentinel=True)
    hit = np.array([bool(_BACKWARD_OP.search(nm)) for nm in uniq] + [False], dtype=bool)
    return np.flatnonzero(hit[codes])


def _runtime_columns(sc: Scan) -> tuple[Values, Values, Values, Values]:
    """The launches' pid, tid, ts and correlation: the decoder's arrays where it made them, else from the tuples."""
    arrays = getattr(sc, "arrays", None) or {}
    if all(k in arrays for k in ("rt_pid", "rt_tid", "rt_ts", "rt_corr")):
        return arrays["rt_pid"], arrays["rt_tid"], arrays["rt_ts"], arrays["rt_corr"]
    if not sc.runtime:
        return [], [], [], []
    pid, tid, ts, corr = transpose(sc.runtime, 4)
    return pid, tid, ts, corr


def _joined(*parts: Values) -> np.ndarray | list[object]:
    """Columns one after the other: one int64 array where every part is integers, else one list."""
    ints = [p if isinstance(p, np.ndarray) and p.dtype == np.int64 else as_int64(p) if len(p) else
            np.zeros(0, dtype=np.int64) for p in parts]
    arrays = [x for x in ints if x is not None]
    if len(arrays) == len(ints):
        return np.concatenate(arrays)
    return [v for p in parts for v in (p.tolist() if isinstance(p, np.ndarray) else p)]


def _launches(ev: Events, r_thr: np.ndarray, r_ts: Values, r_corr: Values) -> tuple[np.ndarray, np.ndarray]:
    """Per GPU event the thread and time of its runtime launch (time NaN where none is found)."""
    q_thr = np.full(ev.n, -1, dtype=np.int64)
    q_time = np.full(ev.n, np.nan)
    if not len(r_corr):
        return q_thr, q_time
    k_corr = ev.corr_raw
    r_int, k_int = as_int64(r_corr), ev.corr_ids
    if r_int is not None and k_int is not None:  # numeric correlation ids (every Kineto trace): in numpy
        r_index = pd.Index(r_int)
        first = np.flatnonzero(~r_index.duplicated())
        at = r_index[first].get_indexer(k_int)
    else:
        r_index = id_index(r_corr)
        first = np.flatnonzero(~r_index.duplicated())
        at = r_index[first].get_indexer(id_index(k_corr))
        at[~valid_ids(k_corr)] = -1
    hit = at >= 0
    pos = first[at[hit]]
    r_time = r_ts if isinstance(r_ts, np.ndarray) and r_ts.dtype == np.float64 else \
        numbers(r_ts, "ts", None, negative_ok=True)
    q_thr[hit], q_time[hit] = r_thr[pos], r_time[pos]
    return q_thr, q_time


def _steps(sc: Scan, ev: Events, marks: list[tuple[Any, ...]], m_start: np.ndarray, m_end: np.ndarray,
           m_name: list[str], is_step: np.ndarray, kinds: np.ndarray, m_thr: np.ndarray, q_time: np.ndarray,
           op_names: list[object]) -> np.ndarray | None:
    """Per GPU event its step: the ProfilerStep range (annotation, or 2021's Operator) holding its launch, else
    (no steps in the trace) the outermost annotation; events without a launch by their GPU time."""
    names = np.array([*m_name, None], dtype=object)
    starts, ends = m_start, m_end
    sel = np.flatnonzero(is_step & (kinds == "annotation"))
    op_steps = _op_steps(op_names) if not sel.size else []
    if op_steps:  # 2021's schema: ProfilerStep#N is an Operator
        names = np.array([sc.ops[k][4] for k in op_steps] + [None], dtype=object)
        starts = numbers([sc.ops[k][2] for k in op_steps], "ts", None, negative_ok=True)
        ends = starts + np.nan_to_num(numbers([sc.ops[k][3] for k in op_steps], "dur", None))
        sel = np.arange(len(op_steps))
    step_names: re.Pattern[str] | None = _STEP
    if not sel.size:  # no steps: the outermost annotations
        ann = np.flatnonzero(kinds == "annotation")
        if not ann.size:
            return None
        roots = [k for k, p in zip(ann, range_paths(m_thr[ann], m_start[ann], m_end[ann], [m_name[k] for k in ann]),
                                   strict=True) if SEP not in p]
        sel = np.array(roots, dtype=np.int64)
        step_names = None
    at = containing(starts[sel], ends[sel], q_time)
    step: np.ndarray = names[sel[np.maximum(at, 0)]]  # a copy (fancy indexing)
    step[at < 0] = None
    gpu = [m for m in marks if m[0] == "gpu_annotation" and type(m[5]) is str
           and (step_names.match(m[5]) if step_names else True)]
    lost = np.flatnonzero(np.isnan(q_time))
    if gpu and lost.size:
        g_start = numbers([m[3] for m in gpu], "ts", None, negative_ok=True)
        g_end = g_start + np.nan_to_num(numbers([m[4] for m in gpu], "dur", None))
        g_at = containing(g_start, g_end, ev.ts[lost])
        g_names = np.array([m[5] for m in gpu], dtype=object)
        step[lost[g_at >= 0]] = g_names[g_at[g_at >= 0]]
    return step if (step != None).any() else None  # noqa: E711


def _op_steps(op_names: list[object]) -> list[int]:
    """The indices of the ops named ``ProfilerStep#N`` (2021's schema), one regex test per distinct name."""
    if not op_names:
        return []
    text = [nm if type(nm) is str else None for nm in op_names]  # a damaged trace's list or object is unhashable
    codes, uniq = pd.factorize(pd.Series(text, dtype=object), use_na_sentinel=True)
    hit = np.array([bool(_STEP.match(nm)) for nm in uniq] + [False], dtype=bool)
    return np.flatnonzero(hit[codes]).tolist()


def _phases(sc: Scan, back: np.ndarray, b_thr: np.ndarray, nvtx: np.ndarray | None, q_thr: np.ndarray,
            q_time: np.ndarray, step: np.ndarray | None) -> np.ndarray | None:
    """Per GPU event the phase its annotations name, else ``backward`` inside autograd's backward ops, else (in a
    step with backward kernels) :data:`FORWARD_GUESS`."""
    n = len(q_time)
    phase = np.full(n, None, dtype=object)
    if nvtx is not None:
        cache: dict[str, str | None] = {}
        for k in np.flatnonzero(nvtx != None):  # noqa: E711 (object array)
            p = nvtx[k]
            phase[k] = cache[p] if p in cache else cache.setdefault(p, _phase_of(p))
    if len(back):
        start = numbers([sc.ops[k][2] for k in back], "ts", None, negative_ok=True)
        end = start + np.nan_to_num(numbers([sc.ops[k][3] for k in back], "dur", None))
        inside = innermost(b_thr, start, end, q_thr, q_time) >= 0
        phase = np.where((phase == None) & inside, "backward", phase)  # noqa: E711
        if step is not None:  # a training step: what is neither backward nor named is its forward pass (a guess)
            trained = set(step[(phase == "backward") & (step != None)])  # noqa: E711
            guess = (phase == None) & np.array([s in trained for s in step], dtype=bool)  # noqa: E711
            phase[guess] = FORWARD_GUESS
    return phase if (phase != None).any() else None  # noqa: E711


def keep_both(extra: dict[str, np.ndarray], rows: np.ndarray, formula: dict[str, np.ndarray],
              counters: dict[str, np.ndarray]) -> None:
    """Where CUPTI counters replaced an op formula's FLOPs or bytes (``rows``), both kept as ``formula_<col>`` and
    ``counter_<col>`` columns (roofcore.hierarchy.sources compares them per op); nothing where no row has both."""
    for col, f in formula.items():
        c = counters[col]
        both = rows[~np.isnan(f[rows]) & ~np.isnan(c[rows])]
        if both.size:
            fo = extra.setdefault(f"formula_{col}", np.full(len(f), np.nan))
            co = extra.setdefault(f"counter_{col}", np.full(len(f), np.nan))
            fo[both], co[both] = f[both], c[both]
