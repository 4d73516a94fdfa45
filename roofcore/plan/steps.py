"""A scenario's parts as its YAML gives them: the document, the base workload (a file, a builder or kernels
inline) and each step's action applied to a workload, every mistake an :class:`~roofcore.errors.InputError`
located at its key (``scenario.yaml: $.steps[2].shard.chips``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..limits import load_yaml, yaml_input_error
from ..models import Workload, canonical_dtype
from .transforms import ALGORITHMS, DIMS, WHAT, change_precision, comm_fraction, fuse, scale_batch, shard


def step_error(where: str, expected: str, found: Any, hint: str | None = None) -> InputError:
    text = found if isinstance(found, str) and found.startswith("<") else repr(found)
    return InputError(where=where, expected=expected, found=text[:120], hint=hint)


def _kernel_list(v: Any, where: str) -> list[str | int]:
    if isinstance(v, str | int) and not isinstance(v, bool):
        return [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, str | int) and not isinstance(x, bool) for x in v):
        raise step_error(where, "a list of kernel names or 0-based indices", v)
    return v


def number(v: Any, where: str, *, lo: float = 0.0, strict: bool = True, hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or (
            v <= lo if strict else v < lo) or (hi is not None and v >= hi):
        rng = f"> {lo:g}" if strict else f"≥ {lo:g}"
        raise step_error(where, f"a number {rng}" + (f" and < {hi:g}" if hi is not None else ""), v)
    return float(v)


def load_doc(source: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], str, Path]:
    import yaml

    if isinstance(source, Mapping):
        return dict(source), str(source.get("name") or "scenario"), Path.cwd()
    path = Path(source)
    from ..catalog import display_path

    label = display_path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise InputError(where=label, text=f"cannot read the scenario ({e.strerror}).") from None
    except UnicodeDecodeError:
        raise InputError(where=label, expected="a UTF-8 YAML scenario", found="binary or non-UTF-8 data") from None
    try:
        doc = load_yaml(text, label)
    except yaml.YAMLError as e:
        raise yaml_input_error(e, label) from None
    if not isinstance(doc, dict):
        raise step_error(f"{label}: $", "a mapping with name, base, hardware and steps", f"<{type(doc).__name__}>")
    return doc, label, path.resolve().parent


def base_workload(base: Any, label: str, base_dir: Path, allow_files: bool) -> Workload:
    from ..ingest import aggregate, read

    where = f"{label}: $.base"
    if not isinstance(base, dict):
        raise step_error(where, "a mapping: {file: PATH}, {builder: NAME, params: {...}} or {kernels: [...]}",
                   f"<{type(base).__name__}>")
    kinds = [k for k in ("file", "builder", "kernels") if k in base]
    if len(kinds) != 1:
        raise step_error(where, "exactly one of file, builder or kernels", ", ".join(kinds) or "none",
                   "e.g. base: {file: ../transformer_block.yaml}")
    kind = kinds[0]
    extra = set(base) - {kind, "params", "aggregate", "name"}
    if extra:
        raise step_error(f"{where}.{sorted(extra)[0]}", f"a key of a {kind} base", sorted(extra)[0])
    if kind == "file":
        if not allow_files:
            raise InputError(where=f"{where}.file", text="files cannot be named by an uploaded scenario.",
                             hint="use inline kernels (base: {kernels: [...]}) or a builder.")
        p = base["file"]
        if not isinstance(p, str) or not p.strip():
            raise step_error(f"{where}.file", "a path to a workload file", p)
        cand = [Path(p)] if Path(p).is_absolute() else [base_dir / p, Path.cwd() / p]
        found = next((c for c in cand if c.is_file()), None)
        if found is None:
            raise step_error(f"{where}.file", "an existing workload file (relative to the scenario)", p,
                       f"looked in {base_dir}" + (" and the current folder" if len(cand) > 1 else "") + ".")
        w = read(found)
    elif kind == "builder":
        try:
            from ..builders import BUILDERS, build_workload
        except ImportError:
            raise InputError(where=f"{where}.builder", text="workload builders are not available in this version.",
                             hint="give the kernels inline or a file.") from None
        name = base["builder"]
        if name not in BUILDERS:
            raise step_error(f"{where}.builder", "one of " + ", ".join(sorted(BUILDERS)), name)
        params = base.get("params") or {}
        if not isinstance(params, dict):
            raise step_error(f"{where}.params", "a mapping of builder parameters", f"<{type(params).__name__}>")
        try:
            w = build_workload(name, params)
        except InputError as e:
            raise InputError(where=f"{where}.params" + (f" ({e.where})" if e.where else ""), text=e.text,
                             expected=e.expected, found=e.found, hint=e.hint) from None
    else:
        import yaml

        ks = base["kernels"]
        if not isinstance(ks, list) or not ks:
            raise step_error(f"{where}.kernels", "a non-empty list of kernels", f"<{type(ks).__name__}>")
        doc = {"name": str(base.get("name") or "inline kernels"), "kernels": ks}
        w = read(yaml.safe_dump(doc, sort_keys=False).encode(), name=f"{label} $.base", fmt="inventory-yaml")
        if w.skipped:
            s = w.skipped[0]
            raise InputError(where=f"{label}: $.base.{s.row.lstrip('$.')}", text=s.reason)
    if base.get("aggregate"):
        w = aggregate(w)
    return w


def apply(kind: str, value: Any, w: Workload, where: str) -> Workload:
    if kind == "fuse":
        if isinstance(value, dict):
            extra = set(value) - {"kernels", "name"}
            if extra or "kernels" not in value:
                raise step_error(where, "{kernels: [...], name: NAME} or a list of kernel names", sorted(extra or {"none"})[0])
            return fuse(w, _kernel_list(value["kernels"], f"{where}.kernels"), name=value.get("name"))
        return fuse(w, _kernel_list(value, where))
    if kind == "precision":
        if isinstance(value, str):
            value = {"dtype": value}
        if not isinstance(value, dict) or "dtype" not in value:
            raise step_error(where, "{dtype: fp8, what: both|weights|activations}", value)
        extra = set(value) - {"dtype", "what", "kernels", "from_dtype"}
        if extra:
            raise step_error(f"{where}.{sorted(extra)[0]}", "dtype, what, kernels or from_dtype", sorted(extra)[0])
        if value.get("what", "both") not in WHAT:
            raise step_error(f"{where}.what", " or ".join(WHAT), value.get("what"))
        ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
        return change_precision(w, canonical_dtype(value["dtype"], where=f"{where}.dtype"),
                                what=value.get("what", "both"), kernels=ks, from_dtype=value.get("from_dtype"))
    if kind == "batch":
        if isinstance(value, dict):
            extra = set(value) - {"factor", "kernels"}
            if extra or "factor" not in value:
                raise step_error(where, "a factor or {factor: F, kernels: [...]}", sorted(extra or {"none"})[0])
            ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
            return scale_batch(w, number(value["factor"], f"{where}.factor"), kernels=ks)
        return scale_batch(w, number(value, where))
    if kind == "shard":
        if not isinstance(value, dict) or "chips" not in value:
            raise step_error(where, "{chips: N, dim: k|m|n, link: ici, algorithm: ring|tree}", value)
        extra = set(value) - {"chips", "dim", "link", "algorithm", "kernels"}
        if extra:
            raise step_error(f"{where}.{sorted(extra)[0]}", "chips, dim, link, algorithm or kernels", sorted(extra)[0])
        c = value["chips"]
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise step_error(f"{where}.chips", "a whole number of chips ≥ 1", c)
        if value.get("algorithm", "ring") not in ALGORITHMS:
            raise step_error(f"{where}.algorithm", " or ".join(ALGORITHMS), value.get("algorithm"))
        if str(value.get("dim", "k")).lower() not in DIMS:
            raise step_error(f"{where}.dim", "k (contraction), m (rows/batch) or n (output columns)", value.get("dim"))
        ks = _kernel_list(value["kernels"], f"{where}.kernels") if "kernels" in value else None
        return shard(w, c, dim=str(value.get("dim", "k")), link=str(value.get("link", "ici")),
                     algorithm=value.get("algorithm", "ring"), kernels=ks)
    if kind == "comm_fraction":
        return comm_fraction(w, number(value, where, strict=False, hi=1.0))
    return w


def relocate(e: InputError, step_where: str, kind: str) -> InputError:
    """A transformation's error (``where`` like ``fuse[1]`` or ``shard.chips``) placed at its scenario step."""
    inner = e.where or ""
    if inner.startswith(step_where):
        return e
    at = f"{step_where}.{inner}" if inner.split(".")[0].split("[")[0] == kind else f"{step_where}.{kind}"
    return InputError(where=at, text=e.text, expected=e.expected, found=e.found, hint=e.hint)
