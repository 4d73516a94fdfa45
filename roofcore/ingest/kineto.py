"""PyTorch profiler traces: Kineto ``export_chrome_trace`` JSON, plain or gzip (FORMATS.md §6.2).

One row per GPU activity: every ``"cat": "kernel"`` launch, and ``gpu_memcpy`` / ``gpu_memset`` events kept as
kernels with FLOPs 0 and the bytes the trace records (group ``memcpy`` / ``memset``). Times are the events'
``dur`` (µs) × 1e-6 s. ``row`` is the launch's correlation id.

FLOPs and bytes come from the launching op's recorded input shapes (``record_shapes=True``: ``Input Dims``,
``Input type``, ``Concrete Inputs``). A kernel's ``args.correlation`` names its ``cuda_runtime`` / ``cuda_driver``
launch event; the launch lies inside (time containment, same pid/tid) the innermost enclosing ``cpu_op``, whose
formula gives the op's FLOPs and bytes (fallback for newer traces: the kernel's ``External id`` = the op's).
Formulas (FLOPs; bytes = input tensors read + output written, element sizes from ``Input type``):

* ``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``matmul``, ``linear``: 2·M·N·K per matrix product (bias adds not
  counted); unit ``matrix``, precision of the inputs (fp32 kernels whose name says TF32 — ``tf32``, ``s1688``,
  ``s16816`` — run as ``tf32``).
* convolutions (``conv1d/2d/3d``, ``convolution``, ``_convolution``, ``cudnn_convolution[_transpose]``,
  ``miopen_convolution``): 2·N·K·(C/groups)·R·S·P·Q (any number of spatial dims), output size
  ⌊(H + 2·pad − dil·(R−1) − 1)/stride⌋ + 1 from ``Concrete Inputs``; traces without them (PyTorch < 2.1) are read
  assuming a size-preserving convolution (P = H, exact for the common stride-1 "same" 1×1/3×3 layers) and warned
  about. ``convolution_backward``: forward FLOPs × (grad input + grad weight), sizes from the grad output.
* elementwise (``add``, ``mul``, ``sub``, ``div``, ``relu``, ``clamp_min``, ``gelu``, ``sigmoid``, ``tanh``,
  ``silu`` ... and in-place ``_`` forms): numel(broadcast output) FLOPs (1 per element whatever the function,
  as PyTorch's own counter); unit ``vector``. ``copy_`` / ``fill_`` / ``zero_``: 0 FLOPs, the bytes they move.

An op that launches several kernels (cuDNN layout transforms + the convolution, split-K GEMM + reduction) gives
its FLOPs and bytes to them in proportion to their durations (equal shares if all last 0 µs): sums over an op's
kernels equal the op's numbers and each kernel shows the op's intensity. Kernels without a formula, without
shapes, or whose launch is not found keep FLOPs and bytes **unknown (NaN), not zero**; a warning counts them.

Memory events: HtoD / DtoH copies move ``bytes`` over PCIe and to/from HBM (``bytes_pcie`` = ``bytes_hbm`` =
bytes); DtoD copies read and write HBM (``bytes_hbm`` = 2 × bytes); PtoP and unknown copies and memsets count
``bytes`` once at HBM; host-to-host copies touch no device memory (bytes unknown).

CUPTI range-profiler events (``cat: cuda_profiler_range``, ``experimental_config`` with ``profiler_metrics``) carry
per-kernel counters; their ``ts`` / ``dur`` are synthetic (Kineto splits the profiling span evenly). FLOPs by the
Nsight Compute / NERSC formulas (FORMATS.md §3.6a): 2·fma + mul + add per precision from
``smsp__sass_thread_inst_executed_op_<d|f|h><add|mul|fma>_pred_on.sum``, tensor FLOPs from
``sm__ops_path_tensor_*.sum`` or 512 × ``sm__inst_executed_pipe_tensor.sum`` (warned); bytes from ``dram__bytes*``
(hbm), ``lts__t_bytes.sum`` (l2), ``l1tex__t_bytes.sum`` (l1); time only from ``gpu__time_duration.sum`` (ns) or
``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second``. The n-th range of a kernel name is matched to the
n-th kernel event of that name; a trace of ranges only (the range profiler runs without kernel tracing) gives one
row per range, linked to its op through the n-th kernel launch as HolisticTraceAnalysis does.

The JSON is read event by event (the stdlib C scanner per event, one pass bucketing by ``cat`` into flat lists),
never as one tree, so memory stays near the file size; containment is a sort + ``searchsorted`` per thread.
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import re
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from .. import limits
from ..errors import InputError
from ..models import Skipped, Workload
from . import check_binary, make_frame, max_input_bytes, register_format, skip
from .compression import gunzip_chunks

FORMAT = "pytorch-trace"
GZIP_MAGIC = b"\x1f\x8b"

EXPORT_HINT = "export the trace again with prof.export_chrome_trace(path)."
SHAPES_HINT = ("profile with torch.profiler.profile(..., record_shapes=True) so each op's input shapes are "
               "recorded.")

# --------------------------------------------------------------------------------------------- gzip




# --------------------------------------------------------------------------------------------- dtypes

#: ``Input type`` strings (C++ type names as c10 prints them) → (bytes per element, our precision or None)
DTYPES: dict[str, tuple[float, str | None]] = {
    "float": (4, "fp32"), "double": (8, "fp64"), "c10::Half": (2, "fp16"), "c10::BFloat16": (2, "bf16"),
    "c10::Float8_e4m3fn": (1, "fp8"), "c10::Float8_e5m2": (1, "fp8"), "c10::Float8_e4m3fnuz": (1, "fp8"),
    "c10::Float8_e5m2fnuz": (1, "fp8"), "c10::Float8_e8m0fnu": (1, "fp8"),
    "long int": (8, None), "long": (8, None), "long long": (8, None), "int64_t": (8, None), "__int64": (8, None),
    "int": (4, None), "unsigned int": (4, None), "short int": (2, None), "short": (2, None),
    "unsigned short": (2, None), "signed char": (1, "int8"), "unsigned char": (1, None), "bool": (1, None),
    "c10::complex<float>": (8, None), "c10::complex<double>": (16, None), "c10::complex<c10::Half>": (4, None),
    "c10::qint8": (1, "int8"), "c10::quint8": (1, None), "c10::qint32": (4, None),
}

_TF32_KERNEL = re.compile(r"tf32|s1688|s16816|tensorop_s\d", re.IGNORECASE)


class _T:
    """A tensor argument: shape, element size (bytes), precision."""

    __slots__ = ("numel", "prec", "shape", "size")

    def __init__(self, shape: tuple[int, ...], size: float, prec: str | None) -> None:
        self.shape, self.size, self.prec = shape, size, prec
        self.numel = math.prod(shape)

    @property
    def bytes(self) -> float:
        return self.numel * self.size


def _tensors(dims: object, types: object) -> list[_T | None]:
    """Per argument, the tensor it is (dims of ints and a known dtype) or None (scalars, lists, None)."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return []
    out: list[_T | None] = []
    for d, t in zip(dims, types, strict=False):
        spec = DTYPES.get(t) if isinstance(t, str) else None
        if spec is None or not isinstance(d, list) or not all(type(x) is int and x >= 0 for x in d):
            out.append(None)
        else:
            out.append(_T(tuple(d), spec[0], spec[1]))
    return out


def _arg(ts: list[_T | None], i: int) -> _T | None:
    return ts[i] if i < len(ts) else None


def _concrete(concrete: object, i: int) -> str | None:
    if isinstance(concrete, list) and i < len(concrete) and isinstance(concrete[i], str) and concrete[i].strip():
        return concrete[i].strip()
    return None


def _ints(text: str | None, n: int) -> list[int] | None:
    if text is None:
        return None
    vals = [int(v) for v in re.findall(r"-?\d+", text)]
    if len(vals) == 1:
        vals = vals * n
    return vals if len(vals) == n else None


def _truthy(text: str | None) -> bool | None:
    if text is None:
        return None
    low = text.lower()
    return True if low in ("true", "1") else False if low in ("false", "0") else None


#: an op result: (FLOPs, bytes, precision, unit, geometry assumed)
Result = tuple[float, float, str | None, str, bool]


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _matmul_like(a: _T | None, b: _T | None, extra: Sequence[_T | None] = ()) -> Result | None:
    """``a @ b`` with numpy/PyTorch broadcasting rules; ``extra`` tensors (bias) are read too."""
    if a is None or b is None or not a.shape or not b.shape:
        return None
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) == 1 and len(sb) == 1:
        if sa[0] != sb[0]:
            return None
        out_numel, flops = 1, 2 * sa[0]
    else:
        drop_m = len(sa) == 1
        drop_n = len(sb) == 1
        if drop_m:
            sa = [1, *sa]
        if drop_n:
            sb = [*sb, 1]
        m, k = sa[-2:]
        k2, n = sb[-2:]
        batch = _broadcast([tuple(sa[:-2]), tuple(sb[:-2])])
        if k != k2 or batch is None:
            return None
        flops = 2 * math.prod(batch) * m * n * k
        out_numel = math.prod(batch) * m * n
    nbytes = a.bytes + b.bytes + sum(t.bytes for t in extra if t is not None) + out_numel * a.size
    return float(flops), float(nbytes), a.prec, "matrix", False


def _mm(ts, concrete, name):
    a, b = _arg(ts, 0), _arg(ts, 1)
    if a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    return _matmul_like(a, b)


def _addmm(ts, concrete, name):
    a, b = _arg(ts, 1), _arg(ts, 2)
    if a is None or b is None or len(a.shape) != 2 or len(b.shape) != 2:
        return None
    return _matmul_like(a, b, [_arg(ts, 0)])


def _bmm(ts, concrete, name):
    a, b = _arg(ts, 0), _arg(ts, 1)
    if a is None or b is None or len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
        return None
    return _matmul_like(a, b)


def _baddbmm(ts, concrete, name):
    a, b = _arg(ts, 1), _arg(ts, 2)
    if a is None or b is None or len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
        return None
    return _matmul_like(a, b, [_arg(ts, 0)])


def _matmul(ts, concrete, name):
    return _matmul_like(_arg(ts, 0), _arg(ts, 1))


def _linear(ts, concrete, name):
    x, w = _arg(ts, 0), _arg(ts, 1)
    if x is None or w is None or not x.shape or len(w.shape) not in (1, 2):
        return None
    wt = _T(tuple(reversed(w.shape)), w.size, w.prec)  # y = x @ w.T
    r = _matmul_like(x, wt, [_arg(ts, 2)])
    return r


#: positions of (stride, padding, dilation, transposed, output_padding, groups) among an op's arguments
_CONV_ARGS = {
    "aten::conv1d": (3, 4, 5, None, None, 6), "aten::conv2d": (3, 4, 5, None, None, 6),
    "aten::conv3d": (3, 4, 5, None, None, 6),
    "aten::convolution": (3, 4, 5, 6, 7, 8), "aten::_convolution": (3, 4, 5, 6, 7, 8),
    "aten::cudnn_convolution": (3, 2, 4, None, None, 5),
    "aten::cudnn_convolution_transpose": (4, 2, 5, True, 3, 6),
    "aten::miopen_convolution": (4, 3, 5, None, None, 6),
    "aten::mkldnn_convolution": (4, 3, 5, None, None, 6),
}


def _conv(ts, concrete, name):
    x, w = _arg(ts, 0), _arg(ts, 1)
    if x is None or w is None or len(w.shape) < 3:
        return None
    nsp = len(w.shape) - 2
    if len(x.shape) == nsp + 2:
        batch, cin, in_sp = x.shape[0], x.shape[1], x.shape[2:]
    elif len(x.shape) == nsp + 1:  # unbatched input
        batch, cin, in_sp = 1, x.shape[0], x.shape[1:]
    else:
        return None
    st, pa, di, tr, op, gr = _CONV_ARGS[name]
    bias = _arg(ts, 2)
    if name == "aten::cudnn_convolution" and isinstance(bias, _T):
        st, pa, di, gr = 4, 3, 5, 6  # PyTorch ≤ 1.7: (self, weight, bias, padding, stride, dilation, groups, ...)
    if name in ("aten::cudnn_convolution", "aten::cudnn_convolution_transpose"):
        bias = bias if isinstance(bias, _T) and len(bias.shape) == 1 else None
    transposed = tr if isinstance(tr, bool) else (_truthy(_concrete(concrete, tr)) if tr is not None else False)
    kern = w.shape[2:]
    pad_text = _concrete(concrete, pa)
    stride, dil = _ints(_concrete(concrete, st), nsp), _ints(_concrete(concrete, di), nsp)
    groups = _ints(_concrete(concrete, gr), 1) if gr is not None else None
    g = groups[0] if groups and groups[0] > 0 else 1
    if pad_text is not None and pad_text.strip("'\"").lower() in ("same", "valid"):
        same = pad_text.strip("'\"").lower() == "same"
        pad = None if same else [0] * nsp
    else:
        same = False
        pad = _ints(pad_text, nsp)
    assumed = False
    if transposed:
        outpad = _ints(_concrete(concrete, op), nsp) if op is not None else None
        if transposed is None or stride is None or pad is None or dil is None:
            return None
        outpad = outpad or [0] * nsp
        cout = w.shape[1] * g
        out_sp = [(h - 1) * s - 2 * p + d * (k - 1) + o + 1
                  for h, s, p, d, k, o in zip(in_sp, stride, pad, dil, kern, outpad, strict=True)]
        flops = 2 * batch * math.prod(in_sp) * cin * w.shape[1] * math.prod(kern)
    else:
        cout = w.shape[0]
        if same:
            out_sp = list(in_sp)
        elif stride is not None and pad is not None and dil is not None:
            if any(s <= 0 for s in stride):
                return None
            out_sp = [(h + 2 * p - d * (k - 1) - 1) // s + 1
                      for h, s, p, d, k in zip(in_sp, stride, pad, dil, kern, strict=True)]
        else:
            out_sp, assumed = list(in_sp), True
        flops = 2 * batch * cout * math.prod(out_sp) * w.shape[1] * math.prod(kern)
    if any(v <= 0 for v in out_sp):
        return None
    out = batch * cout * math.prod(out_sp)
    nbytes = x.bytes + w.bytes + (bias.bytes if bias is not None else 0) + out * x.size
    return float(flops), float(nbytes), x.prec, "matrix", assumed


def _conv_backward(ts, concrete, name):
    gout, x, w = _arg(ts, 0), _arg(ts, 1), _arg(ts, 2)
    if gout is None or x is None or w is None or len(w.shape) < 3 or len(gout.shape) != len(x.shape):
        return None
    nsp = len(w.shape) - 2
    if len(x.shape) not in (nsp + 1, nsp + 2):
        return None
    transposed = _truthy(_concrete(concrete, 7))
    mask_text = _concrete(concrete, 10)
    mask = [m.lower() == "true" for m in re.findall(r"[A-Za-z]+", mask_text)] if mask_text else [True, True, False]
    if len(mask) != 3:
        return None
    kern = math.prod(w.shape[2:])
    batch = x.shape[0] if len(x.shape) == nsp + 2 else 1
    if transposed:
        fwd = 2 * batch * math.prod(x.shape[-nsp:]) * x.shape[-nsp - 1] * w.shape[1] * kern
    else:
        fwd = 2 * batch * gout.shape[-nsp - 1] * math.prod(gout.shape[-nsp:]) * w.shape[1] * kern
    flops = fwd * (int(mask[0]) + int(mask[1]))
    nbytes = gout.bytes + x.bytes + w.bytes + mask[0] * x.bytes + mask[1] * w.bytes
    if mask[2]:
        nbytes += gout.shape[-nsp - 1] * gout.size
    return float(flops), float(nbytes), x.prec, "matrix", False


def _elementwise(ts, concrete, name):
    tensors = [t for t in ts if t is not None]
    if not tensors:
        return None
    shape = _broadcast([t.shape for t in tensors])
    if shape is None:
        return None
    out = math.prod(shape)
    size = max(t.size for t in tensors)
    nbytes = sum(t.bytes for t in tensors) + out * size
    return float(out), float(nbytes), tensors[0].prec, "vector", False


def _copy(ts, concrete, name):
    dst, src = _arg(ts, 0), _arg(ts, 1)
    if dst is None or src is None:
        return None
    return 0.0, float(dst.bytes + src.bytes), None, "vector", False


def _fill(ts, concrete, name):
    dst = _arg(ts, 0)
    if dst is None:
        return None
    return 0.0, float(dst.bytes), None, "vector", False


_ELEMENTWISE = (
    "add", "sub", "mul", "div", "relu", "gelu", "sigmoid", "tanh", "silu", "clamp", "clamp_min", "clamp_max",
    "neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "pow", "abs", "sin", "cos", "erf", "leaky_relu",
    "hardtanh", "elu", "maximum", "minimum", "where", "threshold", "threshold_backward", "gelu_backward",
    "sigmoid_backward", "tanh_backward", "silu_backward", "mish",
)
OPS: dict[str, object] = {
    "aten::mm": _mm, "aten::addmm": _addmm, "aten::bmm": _bmm, "aten::baddbmm": _baddbmm,
    "aten::matmul": _matmul, "aten::linear": _linear,
    **dict.fromkeys(_CONV_ARGS, _conv), "aten::convolution_backward": _conv_backward,
    **{f"aten::{n}": _elementwise for n in _ELEMENTWISE}, **{f"aten::{n}_": _elementwise for n in _ELEMENTWISE},
    "aten::copy_": _copy, "aten::fill_": _fill, "aten::zero_": _fill,
}


def op_cost(name: str, dims: object, types: object, concrete: object = None) -> Result | None:
    """FLOPs, bytes, precision and unit of one ``cpu_op`` from its recorded inputs (None: no formula fits)."""
    fn = OPS.get(name)
    if fn is None:
        return None
    try:
        return fn(_tensors(dims, types), concrete, name)  # type: ignore[operator]
    except (ValueError, TypeError, OverflowError, IndexError):
        return None


# --------------------------------------------------------------------------------------------- scanning

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_WINDOW = 1 << 22  # bytes decoded to text at a time

K_KERNEL, K_MEMCPY, K_MEMSET, K_RUNTIME, K_CPUOP, K_RANGE = range(6)
CATS = {
    "kernel": K_KERNEL, "Kernel": K_KERNEL, "gpu_memcpy": K_MEMCPY, "Memcpy": K_MEMCPY,
    "gpu_memset": K_MEMSET, "Memset": K_MEMSET,
    "cuda_runtime": K_RUNTIME, "Runtime": K_RUNTIME, "cuda_driver": K_RUNTIME, "xpu_runtime": K_RUNTIME,
    "privateuse1_runtime": K_RUNTIME, "privateuse1_driver": K_RUNTIME,
    "cpu_op": K_CPUOP, "Operator": K_CPUOP, "operator": K_CPUOP,
    "cuda_profiler_range": K_RANGE,
}


class _Truncated(Exception):  # internal control flow: the text ends inside a value
    def __init__(self, pos: int) -> None:
        self.pos = pos


class _Text:
    """The input decoded to text one window at a time, so the whole file never exists as one string.

    ``s`` is the current window; :meth:`more` drops what was consumed and appends the next decoded piece.
    ``offset`` / ``lines`` count the characters and newlines dropped so far (for error positions).
    """

    def __init__(self, chunks: Iterator[bytes], source: str) -> None:
        self.chunks = chunks
        self.source = source
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.s = ""
        self.final = False
        self.offset = 0
        self.lines = 0
        self.col0 = 0  # column (0-based) of s[0] on its line
        self.bytes_read = 0
        self.depth = limits.JsonDepth(source)  # ROOFCORE_MAX_JSON_DEPTH, checked on each piece before decoding

    def more(self, i: int) -> int:
        """Drop ``s[:i]``, decode the next piece; returns the new position of old ``i`` (0). No-op when final."""
        if self.final:
            return i
        limits.tick()
        piece = next(self.chunks, None)
        if piece is not None:
            self.depth.feed(piece)
        try:
            if piece is None:
                self.final = True
                new = self.decoder.decode(b"", final=True)
            else:
                new = self.decoder.decode(piece)
        except UnicodeDecodeError as e:
            at = self.bytes_read + e.start
            raise InputError(where=self.source, expected="UTF-8 text", found=f"byte 0x{piece[e.start]:02x} at "
                             f"offset {at}" if piece is not None and e.start < len(piece) else "a cut UTF-8 "
                             "character at the end", hint="save the file as UTF-8.") from None
        self.bytes_read += len(piece) if piece is not None else 0
        if i:
            dropped = self.s.count("\n", 0, i)
            self.lines += dropped
            self.col0 = i - (self.s.rfind("\n", 0, i) + 1) if dropped else self.col0 + i
            self.offset += i
        self.s = self.s[i:] + new
        return 0

    def error(self, pos: int, msg: str) -> InputError:
        s = self.s
        line = self.lines + s.count("\n", 0, pos) + 1
        nl = s.rfind("\n", 0, pos)
        col = pos - (nl + 1) + 1 if nl >= 0 else self.col0 + pos + 1
        where = f"{self.source}: line {line}, column {col}"
        return InputError(where=where, text=f"not valid JSON: {msg}.", hint=EXPORT_HINT)


class _Scan:
    """Flat lists of the events the parser needs, filled in one pass over the text."""

    def __init__(self) -> None:
        self.gpu: list[tuple] = []  # (index, kind, name, ts, dur, correlation, external id, device, bytes)
        self.runtime: list[tuple] = []  # (pid, tid, ts, correlation, name)
        self.ops: list[tuple] = []  # (pid, tid, ts, dur, name, external id, result index, has shapes)
        self.ranges: list[tuple] = []  # (index, name, args)
        self.results: list[Result | None] = []
        self.top: dict[str, object] = {}
        self.events = 0
        self.not_objects = 0
        self.truncated_at: int | None = None
        self.seen_events = False


def _kind(v: object) -> str:
    return {dict: "a JSON object", list: "a JSON array", str: "a JSON string", bool: "a JSON boolean",
            type(None): "JSON null"}.get(type(v), "a JSON number")


def _value(tx: _Text, i: int) -> tuple[object, int]:
    """One JSON value at ``i`` (reading further windows while it is cut off by the window's end)."""
    scan = _DECODER.scan_once
    while True:
        try:
            value, j = scan(tx.s, i)
            if j < len(tx.s) or tx.final:
                return value, j
            i = tx.more(i)
            continue
        except StopIteration as e:
            pos, msg = e.value, "Expecting value"
        except json.JSONDecodeError as e:
            pos, msg = e.pos, e.msg
        if not tx.final:
            i = tx.more(i)
            continue
        if pos >= len(tx.s.rstrip()) or msg.startswith("Unterminated string"):
            raise _Truncated(tx.offset + pos)
        raise tx.error(pos, msg)


def _skip_ws(tx: _Text, i: int) -> int:
    """Position of the next non-blank character (reading further windows); ``len(tx.s)`` at the very end."""
    while True:
        i = _WS.match(tx.s, i).end()
        if i < len(tx.s) or tx.final:
            return i
        i = tx.more(i)


def _scan(chunks: Iterator[bytes], source: str) -> _Scan:
    out = _Scan()
    tx = _Text(chunks, source)
    i = _skip_ws(tx, 0)
    if i >= len(tx.s):
        raise InputError(where=source, expected="a PyTorch profiler trace (JSON)", found="an empty file",
                         hint=EXPORT_HINT)
    try:
        if tx.s[i] == "[":  # Chrome "JSON Array Format": the events alone
            out.seen_events = True
            i = _scan_events(tx, i + 1, out)
        elif tx.s[i] == "{":
            i = _scan_object(tx, i + 1, out)
        else:
            value, i = _value(tx, i)
            raise InputError(where=f"{source}: $", expected='a JSON object with "traceEvents" (a PyTorch profiler '
                             "trace)", found=_kind(value), hint=EXPORT_HINT)
        i = _skip_ws(tx, i)
        if i < len(tx.s):
            raise tx.error(i, "Extra data")
    except _Truncated as t:
        if not out.events:
            raise InputError(where=source, text=f"the file ends early, at character {t.pos}, before any trace event "
                             "(truncated?).", hint=EXPORT_HINT) from None
        out.truncated_at = t.pos
    return out


def _scan_object(tx: _Text, i: int, out: _Scan) -> int:
    """Top-level ``{...}`` after the brace: small values decoded whole, ``traceEvents`` event by event."""
    i = _skip_ws(tx, i)
    if i < len(tx.s) and tx.s[i] == "}":
        return i + 1
    while True:
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] != '"':
            raise tx.error(i, "Expecting property name enclosed in double quotes")
        key, i = _value(tx, i)
        i = _skip_ws(tx, i)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] != ":":
            raise tx.error(i, "Expecting ':' delimiter")
        i = _skip_ws(tx, i + 1)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if key == "traceEvents" and tx.s[i] == "[":
            out.seen_events = True
            i = _scan_events(tx, i + 1, out)
        else:
            value, i = _value(tx, i)
            if key == "traceEvents":
                raise InputError(where=f"{tx.source}: $.traceEvents", expected="a list of trace events",
                                 found=_kind(value), hint=EXPORT_HINT)
            out.top[key] = value
        i = _skip_ws(tx, i)
        if i >= len(tx.s):
            raise _Truncated(tx.offset + i)
        if tx.s[i] == ",":
            i = _skip_ws(tx, i + 1)
            continue
        if tx.s[i] == "}":
            return i + 1
        raise tx.error(i, "Expecting ',' delimiter")


def _scan_events(tx: _Text, i: int, out: _Scan) -> int:
    """The events of ``traceEvents`` (``i`` just after ``[``), each decoded alone and bucketed by category.

    The hot loop of the parser: one C-scanner call per event, a few dict look-ups, one tuple appended to a
    flat list; an event cut by the end of the window is decoded again once the next window is read.
    """
    scan = _DECODER.scan_once
    ws = _WS.match
    comma = _COMMA.match
    cats = CATS
    names: dict[str, str] = {}
    intern = names.setdefault
    gpu, runtime, ops, ranges = out.gpu.append, out.runtime.append, out.ops.append, out.ranges.append
    results = out.results
    memo: dict[str, int] = {}
    ops_table = OPS
    empty: dict = {}
    idx = out.events
    not_objects = 0
    i = _skip_ws(tx, i)
    s = tx.s
    n = len(s)
    if i < n and s[i] == "]":
        return i + 1
    want_value = True
    try:
        while True:
            if want_value:
                try:
                    e, j = scan(s, i)
                    if j >= n and not tx.final:  # may be cut by the window's end (a number): read on, decode again
                        i = tx.more(i)
                        s, n = tx.s, len(tx.s)
                        continue
                    i = j
                except (StopIteration, json.JSONDecodeError) as ex:
                    if not tx.final:
                        i = tx.more(i)
                        s, n = tx.s, len(tx.s)
                        i = ws(s, i).end()
                        continue
                    pos, msg = (ex.value, "Expecting value") if isinstance(ex, StopIteration) else (ex.pos, ex.msg)
                    if pos >= len(s.rstrip()) or msg.startswith("Unterminated string"):
                        raise _Truncated(tx.offset + pos) from None
                    raise tx.error(pos, msg) from None
                want_value = False
                if type(e) is dict:
                    cat = e.get("cat")
                    c = cats.get(cat) if type(cat) is str else None
                    if c is not None:
                        a = e.get("args")
                        if type(a) is not dict:
                            a = empty
                        nm = e.get("name")
                        if type(nm) is str:
                            nm = intern(nm, nm)
                        if c <= K_MEMSET:
                            if e.get("ph") == "X":
                                gpu((idx, c, nm, e.get("ts"), e.get("dur"), a.get("correlation"),
                                     a.get("External id"), a.get("device"), a.get("bytes") if c else None))
                        elif c == K_RUNTIME:
                            corr = a.get("correlation")
                            if corr is not None:
                                runtime((e.get("pid"), e.get("tid"), e.get("ts"), corr, nm))
                        elif c == K_CPUOP:
                            res = -1
                            shapes = "Input Dims" in a
                            if shapes and type(nm) is str and nm in ops_table:
                                dims, types, conc = a.get("Input Dims"), a.get("Input type"), a.get("Concrete Inputs")
                                key = repr((nm, dims, types, conc))
                                res = memo.get(key, -2)
                                if res == -2:
                                    results.append(op_cost(nm, dims, types, conc))
                                    res = memo[key] = len(results) - 1
                            ops((e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur"), nm, a.get("External id"), res,
                                 shapes))
                        else:
                            ranges((idx, nm, a))
                else:
                    not_objects += 1
                idx += 1
            m = comma(s, i)
            if m is not None:
                i = m.end()
                want_value = True
                continue
            i = ws(s, i).end()
            if i >= n:
                if tx.final:
                    raise _Truncated(tx.offset + i)
                i = tx.more(i)
                s, n = tx.s, len(tx.s)
                continue
            if s[i] == "]":
                return i + 1
            raise tx.error(i, "Expecting ',' delimiter")
    finally:
        out.events = idx
        out.not_objects += not_objects


# --------------------------------------------------------------------------------------------- numbers


def _numbers(values: Sequence[object], what: str, reasons: dict[int, str] | None, *, negative_ok: bool = False
             ) -> np.ndarray:
    """Floats (NaN for missing); a present but non-numeric, non-finite or negative value records a reason."""
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        arr = None
    if arr is not None and arr.shape == (len(values),):
        with np.errstate(invalid="ignore"):
            if not np.isinf(arr).any() and (negative_ok or not (arr < 0).any()):
                return arr
    arr = np.full(len(values), np.nan)
    want = "a number" if negative_ok else "a non-negative number"
    for k, v in enumerate(values):
        if v is None:
            continue
        x = _as_float(v)
        if x is not None and math.isnan(x):
            continue
        if x is not None and math.isfinite(x) and (negative_ok or x >= 0):
            arr[k] = x
        elif reasons is not None and k not in reasons:
            shown = json.dumps(v)[:40] if isinstance(v, (str, list, dict, bool)) else repr(v)[:40]
            reasons[k] = f"{what}: expected {want}, found {shown}"
    return arr


def _as_float(v: object) -> float | None:
    """A JSON number or numeric string as a float (None: anything else, or too large for a float)."""
    if type(v) not in (int, float, str):
        return None
    try:
        return float(v)  # type: ignore[arg-type]
    except (ValueError, OverflowError):
        return None


def _ids(values: Sequence[object]) -> pd.Index:
    """Correlation / External ids as an index (ints stay ints; anything unhashable becomes missing)."""
    clean = [v if type(v) in (int, str) else None for v in values]
    try:
        return pd.Index(np.array(clean, dtype=np.int64))
    except (TypeError, ValueError, OverflowError):
        return pd.Index(pd.array(clean, dtype=object))


# --------------------------------------------------------------------------------------------- linking


def innermost(op_group: np.ndarray, op_start: np.ndarray, op_end: np.ndarray, q_group: np.ndarray,
              q_time: np.ndarray) -> np.ndarray:
    """Per query (thread, time), the index of the innermost op on that thread whose [start, end] holds it, or -1.

    Ops sorted by (thread, start, longest first); each op's parent (the innermost op holding its start) found by
    pointer jumping, vectorised; a query starts at the last op starting at or before it and climbs parents
    until one ends at or after it. Properly nested intervals assumed (as profiler ranges on one thread are).
    """
    res = np.full(len(q_time), -1, dtype=np.int64)
    usable = np.flatnonzero(~np.isnan(op_start) & ~np.isnan(op_end))
    n = len(usable)
    if n == 0 or len(q_time) == 0:
        return res
    op_group, op_start, op_end = op_group[usable], op_start[usable], op_end[usable]
    sort = np.lexsort((np.arange(n), -op_end, op_start, op_group))
    order = usable[sort]
    g, s, e = op_group[sort], op_start[sort], op_end[sort]
    par = np.arange(-1, n - 1, dtype=np.int64)
    par[np.r_[True, g[1:] != g[:-1]]] = -1
    active = np.flatnonzero(par >= 0)
    while active.size:
        bad = e[par[active]] < s[active]
        active = active[bad]
        par[active] = par[par[active]]
        active = active[par[active] >= 0]
    valid = ~np.isnan(q_time)
    groups, lo = np.unique(g, return_index=True)
    hi = np.r_[lo[1:], n]
    qpos = np.searchsorted(groups, q_group)
    qpos_c = np.minimum(qpos, len(groups) - 1)
    known = valid & (qpos < len(groups)) & (groups[qpos_c] == q_group)
    cand = np.full(len(q_time), -1, dtype=np.int64)
    qi = np.flatnonzero(known)
    qi = qi[np.argsort(qpos_c[qi], kind="stable")]
    ks = qpos_c[qi]
    cuts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1], True]) if len(qi) else np.zeros(1, dtype=np.int64)
    for a, b in itertools.pairwise(cuts):  # one searchsorted per thread
        k, sel = ks[a], qi[a:b]
        pos = lo[k] + np.searchsorted(s[lo[k]:hi[k]], q_time[sel], side="right") - 1
        cand[sel] = np.where(pos >= lo[k], pos, -1)
    active = np.flatnonzero(cand >= 0)
    while active.size:
        bad = e[cand[active]] < q_time[active]
        active = active[bad]
        cand[active] = par[cand[active]]
        active = active[cand[active] >= 0]
    hit = cand >= 0
    res[hit] = order[cand[hit]]
    return res


def _valid_ids(values: Sequence[object]) -> np.ndarray:
    """Which ids are usable for linking (JSON integers or strings)."""
    return np.array([type(v) in (int, str) for v in values], dtype=bool)


def _thread_codes(pids: Sequence[object], tids: Sequence[object]) -> np.ndarray:
    def codes(vals: Sequence[object]) -> np.ndarray:
        clean = np.array([v if type(v) in (int, str) else None for v in vals], dtype=object)
        c, _ = pd.factorize(clean, use_na_sentinel=False)
        return c.astype(np.int64)

    pc, tc = codes(pids), codes(tids)
    return pc * (int(tc.max(initial=0)) + 1) + tc


# --------------------------------------------------------------------------------------------- counters

_FLOP_INSTS = {f"{p}{op}": (prec, 2 if op == "fma" else 1)
               for p, prec in (("d", "fp64"), ("f", "fp32"), ("h", "fp16")) for op in ("add", "mul", "fma")}
#: FLOPs per tensor-pipe instruction when only ``sm__inst_executed_pipe_tensor.sum`` is given (NVIDIA's
#: ``derived__sm__inst_executed_pipe_tensor_x512``, NERSC; architecture dependent)
TENSOR_FLOPS_PER_INST = 512


def _counter(vals: dict[str, float], *names: str) -> float | None:
    for name in names:
        for prefix in ("", "smsp__", "sm__"):
            v = vals.get(prefix + name)
            if v is not None:
                return v
    return None


#: tensor-core precision guessed from a kernel name when the counters do not say (cuBLAS / CUTLASS / cuDNN names)
_NAME_PRECISION = (("bf16", "bf16"), ("tf32", "tf32"), ("s1688", "tf32"), ("s16816", "tf32"), ("e4m3", "fp8"),
                   ("e5m2", "fp8"), ("fp8", "fp8"), ("f16", "fp16"), ("h1688", "fp16"), ("h16816", "fp16"),
                   ("hmma", "fp16"), ("int8", "int8"), ("i8i8", "int8"), ("imma", "int8"))


def name_precision(name: str) -> str | None:
    """The tensor-core precision a kernel name announces (``..._bf16bf16_...`` → bf16), or None."""
    low = name.lower()
    return next((prec for key, prec in _NAME_PRECISION if key in low), None)


def counter_point(args: dict, name: str = "", tensor_factor: float = TENSOR_FLOPS_PER_INST) -> dict[str, object]:
    """FLOPs, bytes, time, precision and unit of one CUPTI range from its counters (FORMATS.md §3.6a).

    Tensor precision from ``sm__ops_path_tensor_src_<p>_*`` counter names, else from the kernel name.
    """
    vals = {k: float(v) for k, v in args.items()
            if isinstance(k, str) and type(v) in (int, float) and math.isfinite(v) and v >= 0}
    by_prec: dict[str, float] = {}
    for op, (prec, weight) in _FLOP_INSTS.items():
        v = _counter(vals, f"sass_thread_inst_executed_op_{op}_pred_on.sum")
        if v is not None:
            by_prec[prec] = by_prec.get(prec, 0.0) + weight * v
    paths = {k: v for k, v in vals.items() if re.match(r"^(sm|smsp)__ops_path_tensor\w*\.sum$", k)}
    tensor, tensor_prec, estimated = None, None, False
    if paths:
        tensor = sum(paths.values())
        srcs = {m.group(1) for k in paths if (m := re.search(r"src_([a-z0-9]+)", k))}
        tensor_prec = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp64": "fp64", "fp8": "fp8",
                       "int8": "int8", "fp4": "fp4"}.get(next(iter(srcs))) if len(srcs) == 1 else None
    else:
        inst = _counter(vals, "inst_executed_pipe_tensor.sum")
        if inst is not None:
            tensor, estimated = tensor_factor * inst, True
    flops = (sum(by_prec.values()) + (tensor or 0.0)) if (by_prec or tensor is not None) else np.nan
    if tensor is not None and tensor > sum(by_prec.values()):
        precision, unit = tensor_prec or name_precision(name), "matrix"
    elif by_prec and max(by_prec.values()) > 0:
        precision, unit = max(by_prec, key=lambda p: by_prec[p]), "vector"
    else:
        precision, unit = None, None
    hbm = vals.get("dram__bytes.sum")
    if hbm is None:
        for rd, wr in (("dram__bytes_read.sum", "dram__bytes_write.sum"),
                       ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum")):
            if rd in vals and wr in vals:
                hbm = vals[rd] + vals[wr]
                break
    t_ns = vals.get("gpu__time_duration.sum")
    cycles, hz = vals.get("sm__cycles_elapsed.avg"), vals.get("sm__cycles_elapsed.avg.per_second")
    time_s = t_ns / 1e9 if t_ns is not None else (cycles / hz if cycles is not None and hz else np.nan)
    return {"flops": flops, "bytes_hbm": np.nan if hbm is None else hbm,
            "bytes_l2": vals.get("lts__t_bytes.sum", np.nan), "bytes_l1": vals.get("l1tex__t_bytes.sum", np.nan),
            "time_s": time_s, "precision": precision, "unit": unit, "estimated": estimated}


# --------------------------------------------------------------------------------------------- parse


def _sniff(head: str, name: str) -> bool:
    """A JSON trace: an object with ``traceEvents``, or Chrome's bare event array (``[{"ph": ..., "cat": ...``)."""
    start = head.lstrip()[:1]
    if start == "{":
        return '"traceEvents"' in head
    return start == "[" and bool(re.search(r'"ph"\s*:', head)) and bool(re.search(r'"cat"\s*:', head))


def _chunks(data: bytes, source: str, context: dict) -> Iterator[bytes]:
    """The input as byte pieces: gzip decompressed as a stream (bounded), plain data as views of ``data``."""
    if data[:2] == GZIP_MAGIC:
        limit = int(context.get("max_bytes") or max_input_bytes())
        return gunzip_chunks(data, limit, source)
    _check_head(data, source)
    view = memoryview(data)
    return (view[k:k + _WINDOW] for k in range(0, len(data), _WINDOW))


def _check_head(data: bytes, source: str) -> None:
    """Refuse binary files (magic bytes, NULs at the start) without copying the whole input."""
    head = data[:8192]
    if head.strip():
        check_binary(head, source)


@register_format(FORMAT, "PyTorch profiler trace (Kineto export_chrome_trace JSON, plain or .gz): GPU kernels, "
                 "FLOPs/bytes from recorded shapes or CUPTI counters", _sniff, priority=20, gzip=True)
def parse(data: bytes, source: str, context: dict | None = None) -> Workload:
    """One row per GPU kernel, memcpy and memset event (or CUPTI range); see the module docstring.

    ``context``: ``max_bytes`` bounds gzip decompression (default: the input limit);
    ``tensor_flops_per_inst`` replaces the ×512 tensor-instruction factor for CUPTI counters.
    """
    context = context or {}
    chunks = _chunks(data, source, context)
    if data[:2] == GZIP_MAGIC:  # binary content inside the gzip: checked on the first decompressed piece
        first = next(chunks, b"")
        _check_head(first, source)
        chunks = _chain(first, chunks)
    try:
        sc = _scan(chunks, source)
    except RecursionError:
        raise InputError(where=source, text="the input is nested too deeply to read.", hint=EXPORT_HINT) from None
    limits.ROWS.check(sc.events, source, f"{sc.events:,} trace events")
    if not sc.seen_events:
        keys = ", ".join(list(sc.top)[:8]) or "none"
        raise InputError(where=f"{source}: $", expected='key "traceEvents"', found=f"keys {keys}",
                         hint="is this a PyTorch profiler trace? Export one with prof.export_chrome_trace(path).")
    return _build(sc, source, context)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _build(sc: _Scan, source: str, context: dict) -> Workload:
    warnings: list[str] = []
    kernels = sc.gpu
    n_kern = sum(1 for r in kernels if r[1] == K_KERNEL)
    if not kernels and not sc.ranges:
        raise InputError(where=source, expected='GPU kernel events ("cat": "kernel")',
                         found=f"none among {sc.events} events ({len(sc.ops)} cpu_op, {len(sc.runtime)} "
                         "cuda_runtime)",
                         hint="profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CPU-only "
                         "trace has no kernels to place on a roofline.")
    reasons: dict[int, str] = {}
    n = len(kernels)
    cols = list(zip(*kernels, strict=True)) if kernels else [()] * 9
    ev_idx, kind, names, ts_raw, dur_raw, corr_raw, ext_raw, dev_raw, bytes_raw = cols
    kind = np.array(kind, dtype=np.int64)
    for k, nm in enumerate(names):
        if type(nm) is not str or not nm.strip():
            reasons[k] = f"name: expected a kernel name, found {json.dumps(nm)[:40]}"
    names = [nm if type(nm) is str else "" for nm in names]
    dev_raw = [d if type(d) is int else None for d in dev_raw]
    ts = _numbers(ts_raw, "ts", reasons, negative_ok=True)
    dur = _numbers(dur_raw, "dur", reasons)
    nbytes = _numbers(bytes_raw, "args.bytes", None)
    corr = _ids(corr_raw)
    ext = _ids(ext_raw)

    # --- the launching op of every kernel: correlation → runtime launch → innermost enclosing cpu_op
    op_of = np.full(n, -1, dtype=np.int64)
    ops = sc.ops
    n_ops = len(ops)
    if ops and n:
        o_pid, o_tid, o_ts, o_dur, o_name, o_ext, o_res, _ = zip(*ops, strict=True)
        o_start = _numbers(o_ts, "ts", None, negative_ok=True)
        o_end = o_start + np.nan_to_num(_numbers(o_dur, "dur", None))
        runtime = sc.runtime
        if runtime:
            r_pid, r_tid, r_ts, r_corr, _ = zip(*runtime, strict=True)
            threads = _thread_codes(list(o_pid) + list(r_pid), list(o_tid) + list(r_tid))
            r_time = _numbers(r_ts, "ts", None, negative_ok=True)
            launch_op = innermost(threads[:n_ops], o_start, o_end, threads[n_ops:], r_time)
            r_index = _ids(r_corr)
            first = ~r_index.duplicated()
            r_index, launch_op = r_index[first], launch_op[first]
            at = r_index.get_indexer(corr)
            at[~_valid_ids(corr_raw)] = -1
            op_of = np.where(at >= 0, launch_op[np.maximum(at, 0)], -1)
        # fallback (newer traces): the kernel's External id is its op's External id, not its correlation
        ext_differs = _valid_ids(ext_raw) & np.array([e != c for e, c in zip(ext_raw, corr_raw, strict=True)],
                                                     dtype=bool)
        need = (op_of < 0) & ext_differs
        if need.any():
            o_index = _ids(o_ext)
            keep = ~o_index.duplicated()
            pos = o_index[keep].get_indexer(ext[need])
            op_ids = np.flatnonzero(keep)
            op_of[need] = np.where(pos >= 0, op_ids[np.maximum(pos, 0)], -1)
        res_of_op = np.array(o_res, dtype=np.int64)
        op_names = np.array([nm if type(nm) is str else None for nm in o_name], dtype=object)
    else:
        res_of_op = np.zeros(0, dtype=np.int64)
        op_names = np.zeros(0, dtype=object)
    any_shapes = any(r[7] for r in ops)

    # --- FLOPs / bytes from the op's formula, shared among its kernels by duration
    results = sc.results
    r_flops = np.array([r[0] if r else np.nan for r in results] + [np.nan])
    r_bytes = np.array([r[1] if r else np.nan for r in results] + [np.nan])
    r_prec = np.array([r[2] if r else None for r in results] + [None], dtype=object)
    r_unit = np.array([r[3] if r else None for r in results] + [None], dtype=object)
    r_assumed = np.array([bool(r and r[4]) for r in results] + [False])
    is_kernel = kind == K_KERNEL
    has_op = op_of >= 0
    res = np.full(n, -1, dtype=np.int64)
    res[has_op] = res_of_op[op_of[has_op]]
    costed = is_kernel & (res >= 0)
    flops = np.full(n, np.nan)
    b_hbm = np.full(n, np.nan)
    b_pcie = np.full(n, np.nan)
    precision = np.full(n, None, dtype=object)
    unit = np.full(n, None, dtype=object)
    if costed.any():
        w = np.where(np.isnan(dur) | (dur < 0), 0.0, dur)
        ops_k = op_of[costed]
        tot = np.bincount(ops_k, weights=w[costed], minlength=n_ops)
        cnt = np.bincount(ops_k, minlength=n_ops)
        share = np.where(tot[ops_k] > 0, w[costed] / np.where(tot[ops_k] > 0, tot[ops_k], 1.0), 1.0 / cnt[ops_k])
        rk = res[costed]
        flops[costed] = r_flops[rk] * share
        b_hbm[costed] = r_bytes[rk] * share
        precision[costed] = r_prec[rk]
        unit[costed] = r_unit[rk]
        ok = ~np.isnan(flops)
        costed_ok = np.flatnonzero(costed)[ok[costed]]
        fp32_mx = costed_ok[(precision[costed_ok] == "fp32") & (unit[costed_ok] == "matrix")]
        if fp32_mx.size:  # fp32 matmuls that ran on tensor cores as TF32 (the kernel name says so)
            tf32 = pd.Series([names[k] for k in fp32_mx], dtype=object).str.contains(_TF32_KERNEL).to_numpy(bool)
            precision[fp32_mx[tf32]] = "tf32"
        n_assumed = np.unique(op_of[costed_ok][r_assumed[res[costed_ok]]]).size
        if n_assumed:
            warnings.append(f"{_n(n_assumed, 'convolution op')} recorded no stride or padding (no 'Concrete "
                            "Inputs'; PyTorch < 2.1): the output size was assumed equal to the input size (stride 1, "
                            "'same' padding), which overcounts strided convolutions. Hint: profile with a newer "
                            "PyTorch for exact convolution FLOPs.")

    # --- memcpy / memset: the bytes the trace records
    group = np.full(n, None, dtype=object)
    group[has_op & is_kernel] = op_names[op_of[has_op & is_kernel]]
    mem = ~is_kernel
    if mem.any():
        flops[mem] = 0.0
        group[kind == K_MEMCPY] = "memcpy"
        group[kind == K_MEMSET] = "memset"
        mk = np.flatnonzero(mem)
        low = pd.Series([names[k] for k in mk], dtype=object).str.lower()
        copy = kind[mk] == K_MEMCPY
        host = copy & low.str.contains("htod|dtoh|hosttodevice|devicetohost", regex=True).to_numpy(bool)
        d2d = copy & ~host & low.str.contains("dtod|devicetodevice", regex=True).to_numpy(bool)
        h2h = copy & ~host & ~d2d & low.str.contains("htoh|hosttohost", regex=True).to_numpy(bool)
        b = nbytes[mk]
        b_hbm[mk] = np.where(d2d, 2 * b, np.where(h2h, np.nan, b))
        b_pcie[mk[host]] = b[host]

    time_s = dur / 1e6
    rows = np.array([str(c) if c is not None else f"event {i}" for c, i in zip(corr_raw, ev_idx, strict=True)],
                    dtype=object)

    # --- CUPTI range counters
    extra: dict[str, np.ndarray] = {}
    range_frame = None
    if sc.ranges:
        factor = float(context.get("tensor_flops_per_inst") or TENSOR_FLOPS_PER_INST)
        r_names = [nm if type(nm) is str else str(nm) for _, nm, _ in sc.ranges]
        points = [counter_point(a, nm, factor) for (_, _, a), nm in zip(sc.ranges, r_names, strict=True)]
        if any(p["estimated"] for p in points):
            warnings.append(f"tensor-core FLOPs estimated as {factor:g} × sm__inst_executed_pipe_tensor.sum (the "
                            "factor depends on the architecture and instruction). Hint: add the "
                            "sm__ops_path_tensor_* counters to profiler_metrics for exact tensor FLOPs.")
        if n_kern:
            kern_pos = np.flatnonzero(is_kernel)
            kframe = pd.DataFrame({"name": [names[k] for k in kern_pos], "pos": kern_pos, "ts": ts[kern_pos]})
            kframe = kframe.sort_values(["ts", "pos"], kind="stable")
            kframe["nth"] = kframe.groupby("name", sort=False).cumcount()
            rframe = pd.DataFrame({"name": r_names, "r": np.arange(len(points))})
            rframe["nth"] = rframe.groupby("name", sort=False).cumcount()
            m = rframe.merge(kframe, on=["name", "nth"], how="inner")
            for r, k in zip(m["r"].to_numpy(), m["pos"].to_numpy(), strict=True):
                p = points[r]
                flops[k], b_hbm[k] = p["flops"], p["bytes_hbm"]
                precision[k], unit[k] = p["precision"], p["unit"]
                for lvl in ("bytes_l2", "bytes_l1"):
                    extra.setdefault(lvl, np.full(n, np.nan))[k] = p[lvl]
            if len(m) < len(points):
                warnings.append(f"{len(points) - len(m)} of {_n(len(points), 'CUPTI counter range')} match no "
                                "kernel event of the same name and order; their counters were not used.")
        else:
            range_frame = _range_rows(sc, points, r_names, source, warnings)

    # --- rows left out
    skipped: list[Skipped] = []
    keep = np.ones(n, dtype=bool)
    if reasons:
        keep[list(reasons)] = False
        skipped = [skip(source, rows[k], reasons[k]) for k in sorted(reasons)]
    kept = int(keep.sum()) + (len(range_frame) if range_frame is not None else 0)
    if not kept:
        first = skipped[0]
        where = first.row if first.row.startswith("event ") else f"correlation {first.row}"
        raise InputError(where=f"{source}: {where}", text=f"no usable kernel events; the first problem: "
                         f"{first.reason}.", hint=EXPORT_HINT)

    unknown = int((is_kernel & keep & np.isnan(flops)).sum())
    n_kernels = int((is_kernel & keep).sum())
    if unknown:
        if not any_shapes and not sc.ranges:
            why = "the trace has no input shapes. Hint: " + SHAPES_HINT
        else:
            miss = pd.Series(group[is_kernel & keep & np.isnan(flops)]).fillna("(no launching op found)")
            top = ", ".join(f"{k} ×{v}" for k, v in miss.value_counts().head(4).items())
            why = f"their op has no shapes or no FLOP formula here ({top})."
        verb = "has" if unknown == 1 else "have"
        warnings.append(f"{unknown} of {_n(n_kernels, 'kernel')} {verb} unknown FLOPs and bytes (left empty, not "
                        f"zero): {why}")
    zero = int((keep & (dur == 0)).sum())
    if zero:
        warnings.append(f"{_n(zero, 'event')} {'lasts' if zero == 1 else 'last'} 0 µs (the trace rounds to whole "
                        "µs): achieved rates are unknown for them.")
    if sc.truncated_at is not None:
        warnings.append(f"the file ends early, at character {sc.truncated_at} (truncated?): the {sc.events} events "
                        "before the break were read, the rest is missing.")
    if sc.not_objects:
        warnings.append(f"{_n(sc.not_objects, 'entry', 'entries')} of traceEvents {'is' if sc.not_objects == 1 else 'are'} "
                        "not a JSON object and ignored.")

    columns: dict[str, object] = {
        "name": np.array(names, dtype=object), "flops": flops, "time_s": time_s,
        "precision": precision, "unit": unit, "group": group, "source": np.full(n, source, dtype=object),
        "row": rows, "bytes_hbm": b_hbm,
    }
    if not np.isnan(b_pcie).all():
        columns["bytes_pcie"] = b_pcie
    columns.update(extra)
    frame = make_frame(columns, n)
    if not keep.all():
        frame = frame[keep].reset_index(drop=True)
    if range_frame is not None:
        frame = pd.concat([frame, range_frame], ignore_index=True, sort=False) if len(frame) else range_frame
    for col in ("precision", "unit"):
        frame[col] = pd.Categorical(frame[col].astype(object).where(frame[col].notna(), None))
    device, meta = _device(sc, np.array(dev_raw, dtype=object)[keep] if n else np.zeros(0, dtype=object), warnings)
    meta["profiler"] = "PyTorch profiler (Kineto trace)"
    meta["record_shapes"] = "true" if any_shapes else "false"
    return Workload(frame=frame, name=source, sources=(source,), formats=(FORMAT,), skipped=tuple(skipped),
                    warnings=tuple(warnings), device=device, meta=meta)


def _n(k: int, word: str, plural: str | None = None) -> str:
    """``3 kernels``, ``1 kernel``."""
    return f"{k:,} {word if k == 1 else (plural or word + ('es' if word.endswith('ch') else 's'))}"


def _range_rows(sc: _Scan, points: list[dict], r_names: list[str], source: str, warnings: list[str]) -> pd.DataFrame:
    """Rows from CUPTI ranges alone (range profiler without kernel tracing)."""
    m = len(points)
    group = np.full(m, None, dtype=object)
    launches = sorted((r for r in sc.runtime if isinstance(r[4], str) and "LaunchKernel" in r[4]),
                      key=lambda r: r[2] if type(r[2]) in (int, float) else math.inf)
    if launches and len(launches) == m and sc.ops:
        o_pid, o_tid, o_ts, o_dur, o_name, *_ = zip(*sc.ops, strict=True)
        l_pid, l_tid, l_ts = [r[0] for r in launches], [r[1] for r in launches], [r[2] for r in launches]
        threads = _thread_codes(list(o_pid) + l_pid, list(o_tid) + l_tid)
        start = _numbers(o_ts, "ts", None, negative_ok=True)
        end = start + np.nan_to_num(_numbers(o_dur, "dur", None))
        at = innermost(threads[: len(o_pid)], start, end, threads[len(o_pid):],
                       _numbers(l_ts, "ts", None, negative_ok=True))
        op_names = np.array([nm if type(nm) is str else None for nm in o_name], dtype=object)
        group = np.where(at >= 0, op_names[np.maximum(at, 0)], None)
    elif launches:
        warnings.append(f"{_n(m, 'CUPTI counter range')} but {_n(len(launches), 'kernel launch')}: ranges are not "
                        "linked to their ops (user-defined ranges?).")
    times = np.array([p["time_s"] for p in points], dtype=np.float64)
    if np.isnan(times).any():
        k = int(np.isnan(times).sum())
        warnings.append(f"{_n(k, 'CUPTI counter range')} {'has' if k == 1 else 'have'} no time (range ts/dur are "
                        "synthetic). Hint: add gpu__time_duration.sum to profiler_metrics to measure each kernel's "
                        "time.")
    columns = {
        "name": np.array(r_names, dtype=object), "flops": np.array([p["flops"] for p in points], dtype=np.float64),
        "time_s": times, "precision": np.array([p["precision"] for p in points], dtype=object),
        "unit": np.array([p["unit"] for p in points], dtype=object), "group": group,
        "source": np.full(m, source, dtype=object), "row": np.array([f"range {k}" for k in range(m)], dtype=object),
    }
    for lvl in ("bytes_hbm", "bytes_l2", "bytes_l1"):
        columns[lvl] = np.array([p[lvl] for p in points], dtype=np.float64)
    return make_frame(columns, m)


def _device(sc: _Scan, dev_ids: np.ndarray, warnings: list[str]) -> tuple[str | None, dict[str, str]]:
    """The device the kernels ran on (``deviceProperties``), its compute capability or architecture."""
    props = sc.top.get("deviceProperties")
    by_id = {}
    if isinstance(props, list):
        for p in props:
            if isinstance(p, dict) and type(p.get("id")) is int:
                by_id.setdefault(p["id"], p)
    used = pd.Series([d for d in dev_ids if type(d) is int], dtype=object).value_counts()
    meta: dict[str, str] = {}
    if len(used) > 1:
        meta["devices"] = ",".join(str(d) for d in sorted(used.index))
        names = {str(by_id[d].get("name")) for d in used.index if d in by_id}
        if len(names) > 1:
            warnings.append(f"kernels ran on devices of different models ({', '.join(sorted(names))}); the "
                            "workload is labelled with the most used one.")
    dev_id = used.index[0] if len(used) else (next(iter(by_id)) if len(by_id) == 1 else None)
    p = by_id.get(dev_id) if dev_id is not None else None
    if p is None:
        return None, meta
    name = p.get("name")
    major, minor = p.get("computeMajor"), p.get("computeMinor")
    if type(major) is int and type(minor) is int:
        meta["compute_capability"] = f"{major}.{minor}"
    arch = p.get("gcnArchName")
    if isinstance(arch, str) and arch:
        meta["arch"] = arch.split(":")[0]
    return (str(name).strip() or None) if name is not None else None, meta
