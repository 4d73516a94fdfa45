"""Closed-form planning answers from a device's roofs: the batch or size at which a matmul becomes compute-bound,
the sharded dimension at which communication stops binding, and the tile that reaches a target intensity."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from ..errors import InputError
from ..models import DTYPE_SIZE, Hardware, canonical_dtype
from .transforms import collective_bytes


def _ceiling(hw: Hardware, dtype: str, achievable: bool = False) -> float:
    c = hw.resolve_ceiling(dtype, "matrix")
    if c is None:
        raise InputError(where=hw.id, expected=f"a {dtype} compute ceiling", found="none",
                         hint=f"{hw.id} publishes: {', '.join(hw.ceiling_map)}.")
    return c.rate(achievable)


def matmul_crossover(hw: Hardware, *, dtype: str = "bf16", weight_dtype: str | None = None, d: float,
                     f: float, achievable: bool = False) -> float:
    """Batch ``B`` at which ``X[B,d] @ W[d,f]`` becomes compute-bound on ``hw`` (``inf``: never).

    FLOPs ``2BDF``; bytes ``BD·|a| + DF·|w| + BF·|a|`` (activations and output in ``dtype``, weights in
    ``weight_dtype``); the ceiling is ``dtype``'s. With ``r = π/β``: ``2BDF ≥ r·bytes`` ⇔
    ``B ≥ r·D·F·|w| / (2DF − r·(D + F)·|a|)`` → ``r·|w|/2`` for large D, F (bf16 ≈ r, int8 weights ≈ r/2).
    """
    a = DTYPE_SIZE[canonical_dtype(dtype)]
    w = DTYPE_SIZE[canonical_dtype(weight_dtype or dtype)]
    r = _ceiling(hw, canonical_dtype(dtype), achievable) / hw.offchip.rate(achievable)
    denom = 2.0 * d * f - r * (d * a + f * a)
    return r * d * f * w / denom if denom > 0 else math.inf


def square_matmul_crossover(hw: Hardware, dtype: str = "bf16", *, achievable: bool = False) -> float:
    """Size ``N`` at which an ``N×N×N`` matmul becomes compute-bound: ``2N³/π = 3N²·|dtype|/β`` ⇒ ``N = 1.5·|dtype|·π/β``."""
    dt = canonical_dtype(dtype)
    beta = hw.offchip.rate(achievable)
    return 1.5 * DTYPE_SIZE[dt] * _ceiling(hw, dt, achievable) / beta


def shard_crossover(flops_per_s: float, link_bytes_per_s: float, b: float, f: float, dtype: str = "bf16", *,
                    chips: int = 2, algorithm: str = "ring") -> float:
    """Sharded dimension ``D`` above which ``X[b,D] @ W[D,f]`` sharded on D over ``chips`` is compute-bound.

    Per chip FLOPs ``2bDf/N``, link bytes = all-reduce of the ``b×f`` output; 2 chips, ring:
    ``bDf/π = 2bf/β`` ⇒ ``D = |dtype|·π/β`` (seed §4.3: 8,755 for 1.97e14 FLOP/s and 4.5e10 B/s).
    """
    s = b * f * DTYPE_SIZE[canonical_dtype(dtype)]
    link = collective_bytes("all_reduce", s, chips, algorithm)
    if link == 0:
        return 0.0
    return chips * flops_per_s * link / (2.0 * b * f * link_bytes_per_s)


def shard_defaults(hw: Hardware, *, achievable: bool = False) -> tuple[float | None, float | None, str | None]:
    """What the sharded-matmul solver starts from on ``hw``: its bf16 matrix rate (else its default ceiling's),
    and its fastest link's bandwidth per direction and name (``None``, ``None`` where it publishes no link)."""
    c = hw.resolve_ceiling("bf16", "matrix") or hw.default
    link = max(hw.links, key=lambda lk: lk.rate(achievable), default=None)
    return (c.rate(achievable), link.rate(achievable) if link else None, link.display if link else None)


def tiled_intensity(bm: float, bn: float) -> float:
    """Approximate HBM intensity of a tiled matmul, writes ignored (seed §4.4): ``bm·bn / (bm + bn)``."""
    return bm * bn / (bm + bn)


def tile_for_intensity(target: float, *, ratio: float = 1.0, multiple: int = 1) -> tuple[int, int]:
    """The smallest tile ``(bm, bn)`` with ``bn ≈ ratio·bm`` (multiples of ``multiple``) and ``bm·bn/(bm+bn) ≥ target``."""
    if not (target > 0 and ratio > 0 and multiple >= 1):
        raise InputError(where="tile", expected="a positive target intensity and ratio", found=f"{target}, {ratio}")
    m = int(multiple)

    def up(x: float) -> int:
        return max(m, math.ceil(x / m - 1e-9) * m)

    bm = up(target * (1.0 + ratio) / ratio)
    while True:
        bn = up(ratio * bm)
        if tiled_intensity(bm, bn) >= target:
            return bm, bn
        bm += m


def crossover_table(hws: Iterable[Hardware], *, d: float = 8192, f: float = 8192) -> pd.DataFrame:
    """Per device: ridge, square-matmul N (bf16) and the batch thresholds (bf16, int8 weights, full int8)."""
    rows = []
    for hw in hws:
        def safe(fn: Callable[..., float], hw: Hardware = hw, **kw: Any) -> float:
            try:
                return fn(hw, **kw)
            except InputError:
                return math.nan
        rows.append({
            "hardware": hw.id, "ridge_bf16": safe(lambda h: _ceiling(h, "bf16") / h.offchip.rate()),
            "square_n_bf16": safe(square_matmul_crossover, dtype="bf16"),
            "batch_bf16": safe(matmul_crossover, dtype="bf16", d=d, f=f),
            "batch_int8_weights": safe(matmul_crossover, dtype="bf16", weight_dtype="int8", d=d, f=f),
            "batch_int8": safe(matmul_crossover, dtype="int8", d=d, f=f) if "int8-matrix" in hw.ceiling_map else math.nan,
        })
    return pd.DataFrame(rows)
