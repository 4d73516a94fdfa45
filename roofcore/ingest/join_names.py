"""Kernel names across profilers: one normalised key per name, and the matching of a timeline's kernels to a
counter export's (:mod:`roofcore.ingest.join`).

Two tools print the same kernel differently. From one RTX 5090 run, Nsight Systems (``cuda_gpu_kern_sum``) and
Nsight Compute (details page) give::

    std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, …, (bool)0, (int)7, …>(T13)
    enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, …, 0, 7, …>(T13)

:func:`normalise_kernel_name` maps both to ``kernel<int,int,__nv_bfloat16,…,0,7,…>``. The rules, in order:

1. rocprof's suffixes go: ``… [clone .kd]``, ``__amd_rocclr_copyBuffer.kd`` → ``__amd_rocclr_copyBuffer``.
2. A name cut by its profiler (ending ``…`` or ``...``: nsys's console tables, ``gpu_broadcast_kernel_cartesian(
   CompilerMetadata<…, CartesianIndices<(…``) is cut back to its last whole template argument; its key then ends
   in ``…`` and matches by prefix. A cut inside the parameter list loses nothing: parameters are dropped anyway.
3. Anonymous namespaces (``(anonymous namespace)::``, ``<unnamed>::``) go; lambdas get one spelling
   (``[lambda(float) (instance 1)]``, nsys / EDG → ``{lambda(float)#1}``, CUPTI / Itanium).
4. The parameter list (the first ``(`` right after the name, at template depth 0) and the return type (everything
   before the last blank at depth 0: ``void ``, ``std::enable_if<!T7, void>::type ``) are dropped: tools print
   parameters differently (nsys ``(int, T2, T3)``, CUPTI the full types).
5. Inside what is left: casts before numbers go (``(int)7``, ``(unsigned long)2``, ``(ggml_type)2`` → the number),
   integer suffixes go (``2ul``, ``64u``), ``true``/``false`` become ``1``/``0``, ``const T`` becomes ``T const``,
   namespace qualifiers go (``at::native::BinaryFunctor`` → ``BinaryFunctor``, ``internal::gemvx::kernel`` →
   ``kernel``), and blanks go except between two words (``char *`` and ``char*``, ``> >`` and ``>>`` agree).

Matching (:func:`match_kernels`) goes from strict to loose, each kernel taking the first rule that finds it: a pair
given by hand; the same name; the same key with the same parameters; the same key; a cut key as a prefix; and the
function name alone where one tool printed only that (Nsight Compute's ``--print-kernel-base function`` gives
``kernel`` for cuBLAS's ``internal::gemvx::kernel<…>``). A kernel that finds several different counter kernels,
or shares one with another kernel, stays unmatched and is reported: a guess would put one kernel's work on another.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd

_CLONE = re.compile(r"\s*\[clone [^\]]*\]\s*$")
_KD = re.compile(r"\.kd\s*$")
ANON = re.compile(r"\(anonymous namespace\)::|<unnamed>::|\{anonymous\}::|`anonymous namespace'::")
EDG_LAMBDA = re.compile(r"\[lambda(\(.*?\)) \(instance (\d+)\)\]")
_BRACKET = re.compile(r"operator\s*(?:<<=?|>>=?|<=|>=|->|\(\)|\[\]|<|>)|->|[<>()\[\]{}]")
_PAIR = {"<": ">", "(": ")", "[": "]", "{": "}"}
CAST = re.compile(r"\([A-Za-z_][\w:]*(?:\s+[A-Za-z_][\w:]*)*\s*\)\s*(?=-?\d)")
SUFFIX = re.compile(r"(?<![\w.])(-?\d+)(?:ull|ul|ll|lu|u|l)\b", re.IGNORECASE)
_BOOL = {"true": "1", "false": "0"}
_BOOLS = re.compile(r"\b(true|false)\b")
_CONST = re.compile(r"(?:(?<=[<,(])|^)\s*const\s+([A-Za-z_]\w*)")
QUALIFIER = re.compile(r"\b(?!const::|volatile::)[A-Za-z_]\w*::")
_BLANK_RUN = re.compile(r"\s+")
_LOOSE_BLANK = re.compile(r"(?<=\W) | (?=\W)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
#: how a cut name may end
_ELLIPSIS = ("…", "...")


class Parsed(NamedTuple):
    """A kernel name's keys: ``key`` (normalised, parameters dropped), ``args`` (the key with its normalised
    parameters; None where the name was cut before them), ``partial`` (``key`` is a prefix: the name was cut inside
    it), ``partial_args`` (``args`` is a prefix), ``base`` (the function's own name), ``bare`` (no template
    arguments)."""

    key: str
    args: str | None
    partial: bool
    partial_args: bool
    base: str
    bare: bool


def _scan(s: str) -> tuple[int | None, int | None, list[int]]:
    """Where the parameter list starts (the first ``(`` at depth 0 right after a name; None: none) and ends (None:
    left open, the name was cut), and the blanks at depth 0 before it."""
    depth = 0
    blanks: list[int] = []
    pos = 0
    for m in _BRACKET.finditer(s):
        if depth == 0:
            blanks += [i for i in range(pos, m.start()) if s[i] == " "]
        pos = m.end()
        tok = m.group()
        if len(tok) > 1:  # operator<, ->: text at any depth
            continue
        if tok in _PAIR:
            at = m.start()
            if depth == 0 and tok == "(" and at > 0 and (s[at - 1].isalnum() or s[at - 1] in "_>"):
                return at, _close(s, at), blanks
            depth += 1
        elif depth:
            depth -= 1
    if depth == 0:
        blanks += [i for i in range(pos, len(s)) if s[i] == " "]
    return None, None, blanks


def _close(s: str, start: int) -> int | None:
    """The end of the bracket group opening at ``start`` (None: left open, the name was cut)."""
    depth = 0
    for m in _BRACKET.finditer(s, start):
        tok = m.group()
        if len(tok) > 1:
            continue
        if tok in _PAIR:
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def _tidy(s: str) -> str:
    """Rule 5: casts, literal suffixes, booleans, const, namespaces and blanks."""
    s = CAST.sub("", s)
    s = SUFFIX.sub(r"\1", s)
    s = _BOOLS.sub(lambda m: _BOOL[m.group(1)], s)
    s = QUALIFIER.sub("", s)
    s = _CONST.sub(r"\1 const", s)
    s = _BLANK_RUN.sub(" ", s).strip()
    return _LOOSE_BLANK.sub("", s)


def _cut_back(s: str) -> str:
    """A cut template argument list back to its last whole argument (keeps the ``,`` or ``<`` it ends at)."""
    i = max(s.rfind(","), s.rfind("<"))
    return s[:i + 1] if i >= 0 else s


@lru_cache(maxsize=65536)
def parse_name(name: str) -> Parsed:
    """The keys of one kernel name (rules in the module docstring)."""
    s = _BLANK_RUN.sub(" ", str(name)).strip()
    s = _KD.sub("", _CLONE.sub("", s))
    cut = s.endswith(_ELLIPSIS)
    if cut:
        s = s.removesuffix("…").removesuffix("...").rstrip()
    s = EDG_LAMBDA.sub(r"{lambda\1#\2}", ANON.sub("", s))
    start, end, blanks = _scan(s)
    decl = s if start is None else s[:start]
    partial = cut and start is None
    if partial:
        decl = _cut_back(decl)
    blanks = [b for b in blanks if b < len(decl)]
    # a C++ signature's return type ends at its last blank; prose ("Memcpy HtoD (Pageable -> Device)") is kept
    if blanks and (start is not None or "<" in decl) and _IDENT.match(decl, blanks[-1] + 1):
        decl = decl[blanks[-1] + 1:]
    key = _tidy(decl)
    partial_args = cut and start is not None and end is None
    if start is None:
        args = None if partial else key
    else:
        raw_args = s[start:end] if end is not None else _cut_back(s[start:])
        args = key + _tidy(raw_args)
    head = key.split("<", 1)[0]
    base = head.rsplit("::", 1)[-1] if head else key
    return Parsed(key, args, partial, partial_args, base, "<" not in key)


def normalise_kernel_name(name: str) -> str:
    """The key two tools' spellings of one kernel share (``std::`` and namespaces, casts, return type and
    parameters dropped; module docstring); a name cut by its profiler gives its prefix, ending in ``…``."""
    p = parse_name(name)
    return p.key + ("…" if p.partial else "")


def normalise_names(names: Iterable[str]) -> np.ndarray:
    """:func:`normalise_kernel_name` of every name, computed once per distinct name."""
    codes, uniq = pd.factorize(pd.Series(list(names), dtype=object), use_na_sentinel=False)
    keys = np.array([normalise_kernel_name(str(u)) for u in uniq], dtype=object)
    return keys[codes] if len(codes) else np.array([], dtype=object)


# ------------------------------------------------------------------------------------------ matching

#: how a pair was found, strictest first
HOW = ("by hand", "same name", "same key and parameters", "same key", "cut name", "function name")


@dataclass
class Matching:
    """Timeline kernel → the counter kernels that measured it, and what could not be matched."""

    pairs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    #: timeline kernel → the different counter kernels it could be (left unmatched)
    ambiguous: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unused: list[str] = field(default_factory=list)  #: counter kernels no timeline kernel took
    bad_pairs: list[str] = field(default_factory=list)  #: hand pairs naming a kernel neither side has


def match_kernels(timeline: Iterable[str], counters: Iterable[str], pairs: Mapping[str, str] | None = None
                  ) -> Matching:
    """Match distinct timeline kernel names to distinct counter kernel names (module docstring)."""
    t_names = list(dict.fromkeys(str(t) for t in timeline))
    c_names = list(dict.fromkeys(str(c) for c in counters))
    tp = {t: parse_name(t) for t in t_names}
    cp = {c: parse_name(c) for c in c_names}
    out = Matching()
    taken: set[str] = set()
    for t, c in (pairs or {}).items():
        if t in tp and c in cp:
            out.pairs[t], out.how[t] = (c,), HOW[0]
            taken.add(c)
        else:
            out.bad_pairs.append(f"{t} → {c}")
    for how, propose in zip(HOW[1:], (_same_name, _same_args, _same_key, _cut, _function), strict=True):
        free = [c for c in c_names if c not in taken]
        todo = [t for t in t_names if t not in out.pairs and t not in out.ambiguous]
        if not free or not todo:
            break
        found = propose(todo, free, tp, cp)
        _settle(found, how, tp, cp, out, taken)
    out.unused = [c for c in c_names if c not in taken]
    return out


#: kernel name -> its parse (:func:`parse_name`), one side's
_Parses = dict[str, Parsed]


def _index(names: list[str], key: Callable[[str], str | None]) -> dict[str, list[str]]:
    idx: dict[str, list[str]] = {}
    for n in names:
        k = key(n)
        if k is not None:
            idx.setdefault(k, []).append(n)
    return idx


def _same_name(todo: list[str], free: list[str], tp: _Parses, cp: _Parses) -> dict[str, list[str]]:
    have = set(free)
    return {t: [t] for t in todo if t in have}


def _same_args(todo: list[str], free: list[str], tp: _Parses, cp: _Parses) -> dict[str, list[str]]:
    idx = _index(free, lambda c: cp[c].args if cp[c].args is not None and not cp[c].partial_args else None)
    return {t: idx[a] for t in todo if not tp[t].partial_args and (a := tp[t].args) is not None and a in idx}


def _same_key(todo: list[str], free: list[str], tp: _Parses, cp: _Parses) -> dict[str, list[str]]:
    idx = _index(free, lambda c: None if cp[c].partial else cp[c].key)
    out: dict[str, list[str]] = {}
    for t in todo:
        p = tp[t]
        cands = idx.get(p.key) if not p.partial else None
        if cands and len(cands) > 1 and p.partial_args:  # parameters cut: those that begin alike
            narrowed = [c for c in cands if (cp[c].args or "").startswith(p.args or "")]
            cands = narrowed or cands
        if cands:
            out[t] = cands
    return out


def _cut(todo: list[str], free: list[str], tp: _Parses, cp: _Parses) -> dict[str, list[str]]:
    """A cut key is a prefix of the other side's key."""
    whole = sorted((cp[c].key, c) for c in free if not cp[c].partial)
    keys = [k for k, _ in whole]
    cut_c = [(cp[c].key, c) for c in free if cp[c].partial and cp[c].key]
    out: dict[str, list[str]] = {}
    for t in todo:
        p = tp[t]
        if p.partial and p.key:
            i = bisect.bisect_left(keys, p.key)
            cands: list[str] = []
            while i < len(keys) and keys[i].startswith(p.key):
                cands.append(whole[i][1])
                i += 1
        elif not p.partial:
            cands = [c for k, c in cut_c if p.key.startswith(k)]
        else:
            cands = []
        if cands:
            out[t] = cands
    return out


def _function(todo: list[str], free: list[str], tp: _Parses, cp: _Parses) -> dict[str, list[str]]:
    """One side printed the function's name alone: it stands for that side's only kernel of that name."""
    bare = _index(free, lambda c: cp[c].base if cp[c].bare and not cp[c].partial else None)
    full = _index(free, lambda c: cp[c].base if not cp[c].partial else None)
    out: dict[str, list[str]] = {}
    for t in todo:
        p = tp[t]
        if p.partial:
            continue
        cands = full.get(p.base) if p.bare else bare.get(p.base)
        if cands:
            out[t] = cands
    return out


def _settle(found: dict[str, list[str]], how: str, tp: _Parses, cp: _Parses, out: Matching, taken: set[str]) -> None:
    """Accept the proposals that are one kernel on each side; the rest become ambiguous."""
    claims: dict[str, set[str]] = {}
    for t, cands in found.items():
        for c in cands:
            claims.setdefault(c, set()).add(tp[t].key)
    for t, cands in found.items():
        distinct = {cp[c].args or cp[c].key for c in cands}
        shared = any(len(claims[c]) > 1 for c in cands)  # kernels with other keys want the same counters
        if len(distinct) > 1 or shared:
            out.ambiguous[t] = tuple(cands)
            continue
        out.pairs[t], out.how[t] = tuple(cands), how
    for t, cands in found.items():
        if t in out.pairs:
            taken.update(cands)
