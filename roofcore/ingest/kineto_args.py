"""The arguments of a PyTorch trace's ``cpu_op`` as the op cost models read them (:mod:`.kineto_ops` and its family
modules): each recorded input as a tensor (shape, element size, precision) or None, ``Concrete Inputs`` as
numbers, flags and lists, and an op's result tuple."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..models import OFFCHIP, Kernel

#: ``Input type`` strings (C++ type names as c10 prints them) → (bytes per element, our precision or None)
DTYPES: dict[str, tuple[float, str | None]] = {
    "float": (4, "fp32"), "double": (8, "fp64"), "c10::Half": (2, "fp16"), "c10::BFloat16": (2, "bf16"),
    "c10::Float8_e4m3fn": (1, "fp8"), "c10::Float8_e5m2": (1, "fp8"), "c10::Float8_e4m3fnuz": (1, "fp8"),
    "c10::Float8_e5m2fnuz": (1, "fp8"), "c10::Float8_e8m0fnu": (1, "fp8"),
    "c10::Float4_e2m1fn_x2": (1, "fp4"),  # two FP4 values per recorded element (byte): scaled GEMMs unpack K
    "long int": (8, None), "long": (8, None), "long long": (8, None), "int64_t": (8, None), "__int64": (8, None),
    "int": (4, None), "unsigned int": (4, None), "short int": (2, None), "short": (2, None),
    "unsigned short": (2, None), "signed char": (1, "int8"), "unsigned char": (1, None), "bool": (1, None),
    "c10::complex<float>": (8, None), "c10::complex<double>": (16, None), "c10::complex<c10::Half>": (4, None),
    "c10::qint8": (1, "int8"), "c10::quint8": (1, None), "c10::qint32": (4, None),
}


class TensorArg:
    """A tensor argument: shape, element size (bytes), precision."""

    __slots__ = ("numel", "prec", "shape", "size")

    def __init__(self, shape: tuple[int, ...], size: float, prec: str | None) -> None:
        self.shape, self.size, self.prec = shape, size, prec
        self.numel = math.prod(shape)

    @property
    def bytes(self) -> float:
        return self.numel * self.size


def tensor_args(dims: object, types: object) -> list[TensorArg | None]:
    """Per argument, the tensor it is (dims of ints and a known dtype) or None (scalars, lists, None)."""
    if not isinstance(dims, list) or not isinstance(types, list):
        return []
    out: list[TensorArg | None] = []
    for d, t in zip(dims, types, strict=False):
        spec = DTYPES.get(t) if isinstance(t, str) else None
        if spec is None or not isinstance(d, list) or not all(type(x) is int and x >= 0 for x in d):
            out.append(None)
        else:
            out.append(TensorArg(tuple(d), spec[0], spec[1]))
    return out


def arg_at(ts: list[TensorArg | None], i: int) -> TensorArg | None:
    return ts[i] if i < len(ts) else None


def concrete_at(concrete: object, i: int) -> str | None:
    v = concrete[i] if isinstance(concrete, list) and i < len(concrete) else None
    if isinstance(v, str) and v.strip():
        return v.strip()
    return None


def ints(text: str | None, n: int) -> list[int] | None:
    if text is None:
        return None
    vals = [int(v) for v in re.findall(r"-?\d+", text)]
    if len(vals) == 1:
        vals = vals * n
    return vals if len(vals) == n else None


def truthy(text: str | None) -> bool | None:
    if text is None:
        return None
    low = text.lower()
    return True if low in ("true", "1") else False if low in ("false", "0") else None


#: an op result: (FLOPs, bytes, precision, unit, assumed): ``assumed`` True is the convolution geometry guess
#: (stride 1, 'same' padding); a text is the warning that names another guess (e.g. a tensor list's dtype)
Result = tuple[float, float, str | None, str, bool | str] | tuple[float, float, str | None, str, bool | str,
                                                                 dict[str, float]]
#: a cost formula (:data:`.kineto_ops.OPS`): ``(tensors, concrete, name)``, or with ``(extra, ctx)`` after
#: them (``wants_context``), or ``(dims, types, concrete, name)`` (:data:`.kineto_ops.RAW_OPS`)
CostFn = Callable[..., Result | None]


def broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def result(k: Kernel, extra_bytes: float = 0.0, assumed: bool | str = False) -> Result:
    """A :class:`Kernel` from :mod:`roofcore.ops` as a result, with bytes its formula leaves out (a bias)."""
    return float(k.flops), float(k.bytes[OFFCHIP] + extra_bytes), k.precision, str(k.unit), assumed
