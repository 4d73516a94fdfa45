"""Short kernel names for tables, charts and recommendations; the full name stays in the appendix and hovers.

Profilers report demangled C++ names that run to hundreds or thousands of characters (a CUTLASS GEMM's
template arguments, a PyTorch elementwise kernel's lambda chain, its parameter list). A short name keeps
the qualified function name, drops the return type, the parameter list and the template arguments, and
keeps one informative token from those arguments: ``cutlass::Kernel<…gemm…>``,
``at::native::vectorized_elementwise_kernel<…GeluCUDAKernelImpl…>``. Long plain names (Tensile's
``Cijk_…``, Julia's ``…_FILE_…_L1011``, cuBLAS's ``sm90_xmma_gemm_…``) lose their middle, not their end,
where the distinguishing suffix usually is. :func:`short_names` makes them unique over a workload: distinct
names whose short forms collide get `` [1]``, `` [2]``, ... in the order given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

#: the longest short name, characters (the report's top-kernels table wraps it to at most two lines)
LIMIT = 64
#: the longest informative token kept from template arguments
TOKEN_LIMIT = 32

#: words that say what a kernel does: a template argument containing one is worth keeping
_VOCAB = (
    "gemm", "gemv", "matmul", "mma", "bmm", "conv", "wgrad", "dgrad", "fprop", "winograd", "im2col", "attention",
    "attn", "flash", "fmha", "sdpa", "softmax", "norm", "gelu", "relu", "silu", "swiglu", "sigmoid", "tanh",
    "dropout", "embedding", "reduce", "sum", "mean", "argmax", "topk", "sort", "scan", "copy", "cat", "transpose",
    "permute", "index", "gather", "scatter", "fill", "add", "plus", "minus", "mul", "div", "sub", "pow", "exp",
    "log", "sqrt", "clamp", "threshold", "lerp", "scale", "cast", "convert", "elementwise", "pointwise", "rope",
    "rotary", "quant", "pool", "loss", "adam", "allreduce", "all_reduce", "allgather", "nccl", "rccl",
)
#: identifiers in template arguments that never inform: namespaces, types, wrappers, keywords
_NOISE = frozenset((
    "std", "at", "native", "detail", "details", "cutlass", "cute", "cub", "thrust", "c10", "kernel", "kernels",
    "device", "host", "impl", "internal", "memory", "arch", "void", "bool", "char", "short", "int", "long",
    "unsigned", "signed", "float", "double", "half", "half_t", "bfloat16", "bfloat16_t", "__half", "__nv_bfloat16",
    "float2", "float4", "int2", "int4", "tfloat32_t", "float_e4m3_t", "float_e5m2_t", "__nv_fp8_e4m3",
    "__nv_fp8_e5m2", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
    "uint64_t", "ul", "ull", "const", "volatile", "true", "false", "lambda", "operator", "anonymous", "namespace",
    "unnamed", "array", "tuple", "layout", "rowmajor", "columnmajor", "type", "true_type", "false_type",
    "integral_constant", "gpu_kernel_impl", "gpu_kernel_impl_nocast", "gpu_kernel_with_scalars",
    "opmath_gpu_kernel_with_scalars", "launch_kernel", "elementwise_kernel", "unrolled_elementwise_kernel",
    "vectorized_elementwise_kernel", "func_wrapper_t", "binaryfunctor", "unaryfunctor", "bunaryfunctor", "functor",
    "offsetcalculator", "trivialoffsetcalculator", "loadwithoutcast", "storewithoutcast", "tensoriteratorbase",
    "tensoriterator",
))

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:<[^<>()]*>)?\(")
#: brackets, plus the spellings that contain one without opening or closing anything
_BRACKET = re.compile(r"operator\s*(?:<<=?|>>=?|<=|>=|->|\(\)|\[\]|<|>)|->|[<>()\[\]{}]")
_PAIR = {"<": ">", "(": ")", "[": "]", "{": "}"}
_OPENING = {c: o for o, c in _PAIR.items()}
_ANON = re.compile(r"\(anonymous namespace\)::|<unnamed>::|\{anonymous\}::|`anonymous namespace'::")
_CLONE = re.compile(r"\s*\[clone [^\]]*\]")
#: what may precede a kernel's name in a demangled signature (a __global__ function returns void)
_RETURN = re.compile(r"^(?:(?:__global__|static|extern \"C\"|inline)\s+)*void\s+")
#: Tensile (rocBLAS, hipBLASLt) GEMM names: Cijk_<layouts>_<types>..._MT<tile>..., hundreds of characters
_TENSILE = re.compile(r"^(Cijk_[A-Za-z]+_[A-Za-z]+_[A-Za-z0-9]+)_.*?_(MT\d+x\d+x\d+)(?:_|$)")


def _groups(s: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``s`` split at depth 0: the text between bracket groups, and each group as (opening bracket, content).

    ``texts[i]`` precedes ``groups[i]``; ``texts`` has one more item. A group left open (a name cut off by
    its profiler) runs to the end; a closing bracket with nothing open (its opening was cut off) drops the
    text before it."""
    texts: list[str] = []
    groups: list[tuple[str, str]] = []
    stack: list[str] = []
    start = 0  # where the current depth-0 text (or the outermost group's content) starts
    for m in _BRACKET.finditer(s):
        tok = m.group()
        if len(tok) > 1:  # operator<, ->: part of the text at any depth
            continue
        if tok in _PAIR:
            if not stack:
                texts.append(s[start:m.start()])
                start = m.end()
            stack.append(tok)
        elif stack and _PAIR[stack[-1]] == tok:
            stack.pop()
            if not stack:
                groups.append((_OPENING[tok], s[start:m.start()]))
                start = m.end()
        elif not stack and tok == ">":
            texts, groups, start = [], [], m.end()  # "unnamed>::f(...)": the start was cut off
        # else: a stray closer inside a group (a comparison in a template argument): ignore it
    if stack:
        groups.append((stack[0], s[start:]))
        texts.append("")
    else:
        texts.append(s[start:])
    return texts, groups


def _ends_name(text: str, i: int) -> bool:
    """Whether the depth-0 ``text`` before group ``i`` ends a name (a template's ">" counts: empty after a group)."""
    return bool(text[-1:].strip()) and text[-1:] != ":" if text else i > 0


def _token(args: Iterable[str], base: str) -> str:
    """The first identifier in ``args`` that names an operation the base name does not already say."""
    low_base = base.lower()
    ident: str
    for text in args:
        for ident in _IDENT.findall(text):
            low = ident.lower()
            if len(ident) < 3 or low in _NOISE:
                continue
            if any(w in low and w not in low_base for w in _VOCAB):
                return ident
    for text in args:  # no operation word: a function named inside the arguments (a PyTorch lambda's host)
        for m in _CALLED.finditer(text):
            if m.group(1).lower() not in _NOISE and len(m.group(1)) >= 3:
                return m.group(1)
    return ""


def _elide_middle(s: str, limit: int) -> str:
    """``s`` cut to ``limit`` characters by dropping its middle: the head up to a separator, "…", the last part."""
    if len(s) <= limit:
        return s
    tail = re.split(r"[_:.\s]", s)[-1]
    if not tail or len(tail) > limit // 3:
        tail = ""
    room = limit - 1 - len(tail)
    head = s[:room]
    cut = max(head.rfind(c) for c in "_:. ")
    if cut >= room * 2 // 3:
        head = head[:cut + 1]
    return head + "…" + tail


@lru_cache(maxsize=65536)
def short_name(name: str, limit: int = LIMIT) -> str:
    """One kernel name, short (at most ``limit`` characters; not made unique: see :func:`short_names`)."""
    s = " ".join(str(name).split())
    if len(s) <= limit and not any(c in s for c in "<([{"):
        return s
    m = _TENSILE.match(s)
    if m:
        return _elide_middle(f"{m.group(1)}…{m.group(2)}", limit)
    s = _CLONE.sub("", _ANON.sub("", s))
    s = _RETURN.sub("", s)
    texts, groups = _groups(s)
    # the function's own name ends at its parameter list: the first group in parentheses right after a name
    # ("Memcpy DtoH (Device -> Pinned)" has none: a space before "(" is prose, kept)
    end = next((i for i, (o, _) in enumerate(groups) if o == "(" and _ends_name(texts[i], i)), len(groups))
    if end == len(groups) and len(s) <= limit and not any(o == "<" for o, _ in groups):
        return s
    texts, groups = texts[:end + 1], groups[:end]
    base = "".join(texts)
    token = _token([inner for o, inner in groups if o == "<"], base)
    if len(token) > TOKEN_LIMIT:
        cut = token.rfind("_", TOKEN_LIMIT // 2, TOKEN_LIMIT)
        token = token[:cut if cut > 0 else TOKEN_LIMIT]
    last = max((i for i, (o, _) in enumerate(groups) if o == "<"), default=-1)
    out = []
    for i, t in enumerate(texts):
        out.append(t)
        if i < len(groups):
            o, inner = groups[i]
            if o == "<":
                out.append(f"<…{token}…>" if i == last and token else "<…>")
            elif o in "([":  # prose in brackets before the parameter list; {lambda()#1} groups are dropped
                out.append(o + inner + _PAIR[o])
    short = re.sub(r"(?:::)+", "::", "".join(out)).strip(": ")  # a dropped {lambda} group leaves "::::"
    if not short:
        return _elide_middle(" ".join(str(name).split()), limit)
    if len(short) > limit and "::" in short:
        # drop the namespaces: the function and its token matter more than where it lives
        depth, cut = 0, -1
        for i, c in enumerate(short):
            depth += (c == "<") - (c == ">")
            if depth == 0 and short.startswith("::", i):
                cut = i + 2
        if cut > 0:
            short = short[cut:]
    return _elide_middle(short, limit)


def short_names(names: Iterable[str], limit: int = LIMIT) -> dict[str, str]:
    """Each distinct name → its short name, unique: where distinct names share a short name, each gets
    `` [k]`` (k = 1, 2, ... in the order of ``names``) and no suffixed name equals another short name."""
    order = list(dict.fromkeys(str(n) for n in names))
    short = {n: short_name(n, limit) for n in order}
    by_short: dict[str, list[str]] = {}
    for n, s in short.items():
        by_short.setdefault(s, []).append(n)
    taken = set(by_short)
    for s, fulls in by_short.items():
        if len(fulls) < 2:
            continue
        k = 0
        for n in fulls:
            k += 1
            while f"{s} [{k}]" in taken:
                k += 1
            short[n] = f"{s} [{k}]"
            taken.add(short[n])
    return short


__all__ = ["LIMIT", "short_name", "short_names"]
