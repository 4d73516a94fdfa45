"""The shortest regular expression that selects one kernel of a timeline in a profiler's kernel filter (Nsight
Compute ``--kernel-name regex:…`` with ``--kernel-name-base demangled``, rocprofv3 ``--kernel-include-regex``), for
the targeted commands of :mod:`.join_commands`.

The expression has to match the kernel as *another* tool prints it, so it is checked against the kernel's
spellings (:func:`spellings`): the name as the timeline gives it, Nsight Compute's demangled name (namespaces,
``std::``, casts and literal suffixes dropped), c++filt's (``false``/``true``, ``2ul``, ``{lambda()#1}``), rocprof's
(``… [clone .kd]``, ``….kd``) and the normalised key: every one that :func:`.join_names.normalise_kernel_name`
maps to the kernel's key. It must match all of them and no spelling of the timeline's other kernels.

Candidates go from few pieces to more, and within as many pieces from short to long; the first that holds is
taken:

1. the function's name alone: ``\\bgatherTopK\\b``;
2. ``\\bkernel<`` and up to three pieces of its template arguments, in their order, each allowed anything before
   it (``.*``): ``\\bkernel<.*\\b7\\D`` tells cuBLAS's ``gemvx::kernel<…, (int)7, …>`` from its ``(int)6``
   sibling. A piece is one word or number (``\\b7\\D`` takes ``(int)7``, ``7ul`` and ``, 7,`` alike, never ``17``
   or ``70``; ``0`` and ``1`` are also ``false`` and ``true``; a word of four letters or more stands alone, a
   shorter one in ``\\b…\\b``), one that closes a template (``float>``: ``rope_norm<…, float, float>`` and not
   ``rope_norm<…, float, __half>``), or two neighbours with what stands between them (``\\bint> ?, ?long``: the
   ``long`` argument, not ``unsigned long``), allowing blanks and, before the second, namespaces or a cast;
3. else the template arguments from the first, chained that way, until the kernel is told apart (at most
   :data:`MAX_TOKENS`; where even that does not, or a spelling breaks the chain, the expression also selects
   kernels of the same name).

A name with no template arguments longer than :data:`LONG_NAME` (Tensile's ``Cijk_Alik_Bljk_HSS_…_WG16_2_1``) is
told apart the same way by its ``_``-separated parts: ``\\bCijk.*_HSS_``. Lambdas are left out (tools spell them
too differently: ``[lambda(float) (instance 1)]``, ``{lambda(float)#1}``). Only what both tools' engines read alike
is used: ``\\b``, ``\\D``, ``.*``, ``?``, ``(a|b)``, ``[…]``, ``(?!…)`` (ECMAScript, as their regular expressions
are, and Python's with ``re.ASCII``).
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import NamedTuple

from .join_names import ANON, CAST, EDG_LAMBDA, QUALIFIER, SUFFIX, normalise_kernel_name, parse_name

#: template-argument words chained at most (fallback), and considered for the short candidates
MAX_TOKENS, SEARCH_TOKENS = 16, 40
#: ``_``-separated parts of a long name considered (three together only among the first :data:`SEARCH_TOKENS`)
LONG_SEARCH = 120
#: template-argument words in a short candidate at most (a neighbour pair counts two; three pieces are single words)
MAX_COMBINED = 3
#: a name without template arguments longer than this is told apart by its ``_``-separated parts
LONG_NAME = 40

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+")
_SEGMENT = re.compile(r"[^\W_]+")
_LAMBDA = re.compile(r"\{lambda\(.*?\)#\d+\}")
_SPECIAL = re.compile(r"([.^$*+?()\[\]{}|\\/])")
_BOOL_CAST = re.compile(r"\(bool\)\s*([01])\b")
_INT_CAST = re.compile(r"\((unsigned long long|unsigned long|unsigned int|unsigned|long long|long|int)\)\s*(-?\d+)\b")
_INT_SUFFIX = {"unsigned long long": "ull", "unsigned long": "ul", "unsigned int": "u", "unsigned": "u",
               "long long": "ll", "long": "l", "int": ""}
#: words that say little about a kernel: among candidates of as many pieces, those with fewer of them go first
_GENERIC = frozenset({"void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
                      "operator", "auto", "size_t", "array", "0", "1"})


def _escape(s: str) -> str:
    return _SPECIAL.sub(r"\\\1", s)


@lru_cache(maxsize=4096)
def spellings(name: str) -> tuple[str, ...]:
    """``name`` as the tools print it (module docstring): each one normalises to ``name``'s key."""
    s = " ".join(str(name).split())
    ncu = QUALIFIER.sub("", SUFFIX.sub(r"\1", CAST.sub("", ANON.sub("", s))))
    cxxfilt = _BOOL_CAST.sub(lambda m: "true" if m.group(1) == "1" else "false", s)
    cxxfilt = _INT_CAST.sub(lambda m: m.group(2) + _INT_SUFFIX[m.group(1)], cxxfilt)
    cxxfilt = ANON.sub("(anonymous namespace)::", EDG_LAMBDA.sub(r"{lambda\1#\2}", cxxfilt))
    p = parse_name(s)
    key = normalise_kernel_name(s)
    out = [s, ncu, cxxfilt, f"{s} [clone .kd]", f"{s}.kd", key]
    if p.args is not None and not p.partial_args:
        out.append(p.args)
    return tuple(v for v in dict.fromkeys(out) if normalise_kernel_name(v) == key)


# ------------------------------------------------------------------------------------------ pieces


class _Tok(NamedTuple):
    text: str
    closes: bool  #: a ``>`` follows it in the key
    joint: str | None  #: the punctuation between it and the next word (None: words, a lambda or nothing between)


class _Piece(NamedTuple):
    rx: str
    first: int  #: its first word's index
    last: int  #: its last word's index
    generic: bool  #: made of words that say little (:data:`_GENERIC`)
    word: bool = True  #: one word alone (not a closing, not a pair)


def _tokens(name: str) -> list[_Tok]:
    """The template arguments' words and numbers in order (lambdas, ``const`` and ``volatile`` left out), each with
    what follows it in the normalised key."""
    p = parse_name(name)
    if p.bare:
        return []
    inner = _LAMBDA.sub(" ", p.key[p.key.find("<") + 1:])
    found = [m for m in _TOKEN.finditer(inner) if m.group() not in ("const", "volatile")]
    out = []
    for m, nxt in itertools.zip_longest(found, found[1:]):
        between = inner[m.end():nxt.start()] if nxt is not None else ""
        out.append(_Tok(m.group(), inner[m.end():m.end() + 1] == ">",
                        between if between and not re.search(r"[\w\s]", between) else None))
    return out


def _num(t: str, bools: bool) -> str:
    """A number; ``0`` and ``1`` also ``false`` and ``true`` where the kernel has booleans (``bools``)."""
    return {"0": "(0|false)", "1": "(1|true)"}.get(t, t) if bools else t


def _bools(spelled: tuple[str, ...]) -> bool:
    return any(re.search(r"\(bool\)|\b(true|false)\b", s) for s in spelled)


def _word(t: str, bools: bool, bounded: bool = True) -> str:
    """A word or number where anything may precede it (``bounded``: it may not run on)."""
    if t.isdigit():
        return rf"\b{_num(t, bools)}\D" if bounded else rf"\b{_num(t, bools)}[ulUL]*"
    return t if len(t) >= 4 else rf"\b{t}" + (r"\b" if bounded else "")


def _next_word(t: str, spelled: tuple[str, ...]) -> str:
    """A word or number right after punctuation: a cast (``(int)``) allowed before a number (Nsight Systems prints
    them, other tools not), namespaces (``at::native::``) before a word where a spelling of the kernel has them."""
    if t.isdigit():
        return r"(\([\w ]+\))?" + _num(t, _bools(spelled)) + "[ulUL]*"
    qualified = any(re.search(rf"\w::{t}\b", s) for s in spelled)
    return (r"(\w+::)*" if qualified else "") + t


def _joint(punct: str) -> str:
    """Punctuation between two words as tools print it: blanks after each mark (``>, ``, ``> >``), and before
    ``*`` and ``&``."""
    return "".join((" ?" if c in "*&" else "") + _escape(c) + " ?" for c in punct)


def _template_pieces(toks: list[_Tok], spelled: tuple[str, ...]) -> list[_Piece]:
    out = []
    bools = _bools(spelled)
    for i, t in enumerate(toks):
        generic = t.text in _GENERIC
        out.append(_Piece(_word(t.text, bools), i, i, generic))
        if t.closes:
            out.append(_Piece(_word(t.text, bools, bounded=False) + ">", i, i, generic, False))
        if t.joint is not None and i + 1 < len(toks):
            nxt = toks[i + 1]
            rx = _word(t.text, bools, bounded=False) + _joint(t.joint) + _next_word(nxt.text, spelled) + \
                (r"\b" if not nxt.text.isdigit() and len(nxt.text) < 4 else "")
            out.append(_Piece(rx, i, i + 1, generic and nxt.text in _GENERIC, False))
    return out


def _chain(toks: list[_Tok], n: int, spelled: tuple[str, ...]) -> str:
    """The first ``n`` template arguments in their order, neighbours joined by their punctuation (else ``.*``)."""
    rx = _next_word(toks[0].text, spelled)
    for prev, t in itertools.pairwise(toks[:n]):
        rx += (_joint(prev.joint) if prev.joint is not None else ".*") + _next_word(t.text, spelled)
    return rx + (r"(?!\w)" if toks[n - 1].text.isdigit() else r"\b")


# ------------------------------------------------------------------------------------------ matching


@lru_cache(maxsize=65536)
def _compiled(piece: str) -> re.Pattern[str]:
    return re.compile(piece, re.ASCII)


def _hits(pieces: tuple[str, ...], text: str) -> bool:
    """Whether ``pieces[0] + ".*" + pieces[1] + …`` finds a match in ``text``: each piece's earliest match after
    the previous one's end, which finds one exactly where backtracking would (and never backtracks)."""
    pos = 0
    for piece in pieces:
        m = _compiled(piece).search(text, pos)
        if m is None:
            return False
        pos = m.end()
    return True


def pattern(pieces: tuple[str, ...]) -> str:
    """The regular expression of ``pieces``, each preceded by anything."""
    return ".*".join(pieces)


def _selects(pieces: tuple[str, ...], own: tuple[str, ...], rivals: list[str]) -> bool:
    return all(_hits(pieces, s) for s in own) and not any(_hits(pieces, r) for r in rivals)


def kernel_regex(name: str, others: list[str] | tuple[str, ...] = ()) -> str:
    """The shortest regular expression (module docstring) that matches every spelling of kernel ``name`` and no
    spelling of the kernels in ``others`` (the timeline's kernel names; ``name`` itself may be among them)."""
    p = parse_name(name)
    own = spellings(name)
    if not p.base:
        return _escape(" ".join(str(name).split()))
    rivals = [s for o in dict.fromkeys(map(str, others)) if o != name for s in spellings(o)]
    head = r"\b" + _escape(p.base)
    whole = head + (r"\b" if re.search(r"\w$", p.base) else "")
    segs = _SEGMENT.findall(p.base)
    if p.bare and len(p.base) > LONG_NAME and len(segs) > 1 and re.fullmatch(r"[\w]+", p.base):
        start = r"\b" + p.base[:p.base.index(segs[0]) + len(segs[0])]
        pieces = [_Piece(f"_{g}" + (r"\b" if i == len(segs) - 1 else "_"), i, i, g.isdigit() or len(g) < 3)
                  for i, g in enumerate(segs[:LONG_SEARCH]) if i]
        found = _shortest(start, pieces, own, [r for r in rivals if _hits((start,), r)])
        if found and len(pattern(found)) < len(whole):
            return pattern(found)
    first = [whole] + ([head + r"(?![\w<])"] if p.bare else [head + "<"])
    for cand in first:
        if _selects((cand,), own, rivals):
            return cand
    if p.bare:
        return whole
    start = head + "<"
    live = [r for r in rivals if _hits((start,), r)]
    toks = _tokens(name)
    found = _shortest(start, _template_pieces(toks[:SEARCH_TOKENS], own), own, live)
    if found:
        return pattern(found)
    best = start
    for n in range(1, min(len(toks), MAX_TOKENS) + 1):
        rx = start + _chain(toks, n, own)
        if not _selects((rx,), own, []):
            break
        best = rx
        if _selects((rx,), own, live):
            break
    return best


def _shortest(start: str, pieces: list[_Piece], own: tuple[str, ...], live: list[str]) -> tuple[str, ...] | None:
    """The first candidate (module docstring) of ``start`` and pieces of at most :data:`MAX_COMBINED` words, in
    their order, that selects the kernel among ``live`` (the rivals ``start`` lets through), or None."""
    after: list[int] = []  # where each rival's function name ends
    for r in live:
        m = _compiled(start).search(r)
        assert m is not None  # the rivals start lets through
        after.append(m.end())
    through: dict[str, int] = {}

    def passes(rx: str) -> int:
        """Which live rivals the piece alone lets through (bits): a candidate lets through at most those all its
        pieces do. Found once per piece, when a candidate first needs it."""
        if rx not in through:
            pat = _compiled(rx)
            through[rx] = sum(1 << i for i, (r, at) in enumerate(zip(live, after, strict=True)) if pat.search(r, at))
        return through[rx]

    for k in range(1, MAX_COMBINED + 1):
        cands: dict[tuple[str, ...], tuple[int, int]] = {}
        for n in range(1, k + 1):
            pool = pieces if n < 3 else [q for q in pieces[:SEARCH_TOKENS] if q.word]
            for combo in itertools.combinations(pool, n):
                if sum(q.last - q.first + 1 for q in combo) == k and \
                        all(b.first > a.last for a, b in itertools.pairwise(combo)):
                    key = tuple(q.rx for q in combo)
                    cands.setdefault(key, (sum(q.generic for q in combo), len(pattern((start, *key)))))
        for key in sorted(cands, key=cands.__getitem__):
            mask = -1
            for rx in key:
                mask &= passes(rx)
                if not mask:
                    break
            if _selects((start, *key), own, [live[i] for i in range(len(live)) if mask >> i & 1]):
                return (start, *key)
    return None
