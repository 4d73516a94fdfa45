"""Catalog files: where they are found (built-in, ``ROOFCORE_CATALOG_PATH``, ``--catalog``), read as YAML and
validated against ``catalogs/schema.json``, each problem as a :class:`CatalogError` that says where and why."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import settings
from ..errors import CatalogError
from ..limits import load_yaml
from ..models import Hardware
from ..resources import data_dir
from . import compiled
from .entries import Ctx, device

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

#: the catalogs shipped with the project
BUILTIN_DIR = data_dir("catalogs")

SCHEMA_PATH = BUILTIN_DIR / "schema.json"

ENV_VAR = settings.CATALOG_PATH.name

SCHEMA_VERSION = 1

#: a reader of measured-ceiling files (bytes, file name) -> their devices, or None when the file is not one: the
#: readers live in :mod:`roofcore.ingest.ceilings`, above this package; :mod:`roofcore.catalog_files` passes them
MeasuredReader = Callable[[bytes, str], "list[Hardware] | None"]



def display_path(path: Path | str) -> str:
    """A path as short as it can honestly be: relative to the working folder when inside it; a name whose bytes are
    not UTF-8 (:func:`printable`) with U+FFFD for each such byte."""
    p = Path(path)
    try:
        return printable(str(p.resolve().relative_to(Path.cwd().resolve())))
    except ValueError:
        return printable(str(p))


_CONTROLS = dict.fromkeys([*range(32), 127], "\ufffd")


def printable(name: str) -> str:
    """``name`` as text every output takes: the file system gives a name whose bytes are not UTF-8 (a Latin-1 name
    from an old system, an archive unpacked with the wrong code page) as lone surrogates, which no UTF-8 writer,
    table or database accepts, and a name may hold a line break or a tab (legal in a file or archive member name)
    that would split a one-line message; each such byte or character becomes U+FFFD, the rest stays as it was."""
    if name.isprintable():
        return name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        try:
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # surrogates that stand for no byte
            name = name.encode("utf-8", "replace").decode("utf-8")
    return name.translate(_CONTROLS)


@lru_cache(maxsize=1)
def _validator() -> Any:  # a jsonschema validator (jsonschema is untyped here)
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _json_path(parts: Iterable[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _schema_error(file: str, err: ValidationError) -> CatalogError:
    """Turn a jsonschema error into our expected/found/hint message."""
    path = _json_path(err.absolute_path)
    where = f"{file}: {path}"
    inst = err.instance
    v = err.validator
    if v == "required":
        missing = [k for k in err.validator_value if isinstance(inst, dict) and k not in inst]
        return CatalogError(where=where, expected=f"key '{missing[0]}'", found="none",
                            hint=f"keys present: {', '.join(map(str, inst)) or 'none'}; see catalogs/README.md.")
    if v == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in inst if k not in allowed]
        close = difflib.get_close_matches(str(extra[0]), allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}."
        return CatalogError(where=f"{where}.{extra[0]}", expected="a known key", found=f"unknown key '{extra[0]}'",
                            hint=hint)
    if v == "enum":
        return CatalogError(where=where, expected="one of " + ", ".join(map(str, err.validator_value)),
                            found=repr(inst), hint="values are lower-case.")
    if v == "const":
        return CatalogError(where=where, expected=repr(err.validator_value), found=repr(inst),
                            hint=f"this roofcore reads schema version {SCHEMA_VERSION}.")
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return CatalogError(where=where, expected=f"a {want}", found=f"{type(inst).__name__} {inst!r}",
                            hint="check the indentation and the YAML syntax of this entry.")
    if v == "pattern":
        return CatalogError(where=where, expected=f"text matching {err.validator_value}", found=repr(inst),
                            hint="ids are kebab-case (h100-sxm); level and link names are lower_snake_case.")
    if v == "minItems":
        return CatalogError(where=where, expected=f"at least {err.validator_value} item(s)", found="an empty list")
    if v == "minLength":
        return CatalogError(where=where, expected="non-empty text", found=repr(inst))
    return CatalogError(where=where, expected="a value valid under catalogs/schema.json", found=repr(inst),
                        hint=err.message)


def read_yaml(raw: bytes, file: str) -> Any:
    import yaml  # here: the shipped catalogs are read from their compact form (:mod:`.compiled`)

    if not raw.strip():
        raise CatalogError(where=file, expected="a YAML catalog with schema_version and devices",
                           found="an empty file", hint="see catalogs/README.md for the shape.")
    if b"\x00" in raw[:4096]:
        raise CatalogError(where=file, expected="a YAML text file", found="binary data",
                           hint="is this the right file? Catalogs are UTF-8 YAML.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CatalogError(where=file, expected="UTF-8 text", found=f"a byte 0x{raw[e.start]:02x} at offset {e.start}",
                           hint="save the catalog as UTF-8.") from None
    try:
        data = load_yaml(text, str(file))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise CatalogError(where=f"{file}:{at}" if at else file, text=f"invalid YAML: {problem}.",
                           hint="check indentation and quoting (quote strings containing ':' or '#').") from None
    if not isinstance(data, dict):
        raise CatalogError(where=file, expected="a mapping with schema_version and devices",
                           found=f"a YAML {type(data).__name__}", hint="see catalogs/README.md for the shape.")
    return data


def load_file(path: Path | str, *, measured: MeasuredReader | None = None) -> list[tuple[Hardware, bool]]:
    """Parse and validate one catalog file; returns ``(hardware, overrides)`` pairs in file order (``measured``:
    as :func:`load_bytes`)."""
    file = display_path(path)
    builtin = Path(path).resolve().parent == BUILTIN_DIR.resolve()
    if builtin:  # read once per process while the file is unchanged (devices are immutable, so they are shared)
        try:
            st = Path(path).stat()
        except OSError as e:
            raise CatalogError(where=file, text=f"cannot read the file ({e.strerror}).") from None
        return list(load_builtin(str(Path(path).resolve()), file, st.st_mtime_ns, st.st_size))
    return load_bytes(_read_bytes(path, file), file, validate=True, measured=measured)


@lru_cache(maxsize=64)
def load_builtin(path: str, file: str, mtime_ns: int, size: int) -> tuple[tuple[Hardware, bool], ...]:
    # the shipped catalogs are checked against the schema by the test suite: every run need not import jsonschema
    # and walk them again (a tenth of a second of each `roofline analyze`); they are catalog YAML, never measured
    # ceilings (asking the readers imports every one, and pandas); their parsed form is read from the compact
    # copy while it matches the file (:mod:`.compiled`: YAML parsing was most of `roofline hardware list`)
    raw = _read_bytes(path, file)
    data = compiled.lookup(Path(path), raw)
    return tuple(catalog_devices(read_yaml(raw, file) if data is None else data, file, validate=False))


def _read_bytes(path: Path | str, file: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise CatalogError(where=file, text=f"cannot read the file ({e.strerror}).") from None


def load_bytes(raw: bytes, file: str = "uploaded.yaml", *, validate: bool = True,
               measured: MeasuredReader | None = None) -> list[tuple[Hardware, bool]]:
    """Parse and validate catalog YAML given as bytes (an upload); ``file`` names it in messages.

    With ``measured`` (a reader of measured-ceiling files: rocprof-compute ``roofline.csv``, the Empirical Roofline
    Toolkit's ``roofline.json``), a file it recognises gives its devices, as measured; :mod:`roofcore.catalog_files`
    loads catalogs that way. ``validate=False`` skips the JSON Schema check (for the shipped catalogs, which the
    tests validate); the checks of each entry still run."""
    devices = measured(raw, file) if measured is not None else None
    if devices is not None:
        return [(hw, False) for hw in devices]
    return catalog_devices(read_yaml(raw, file), file, validate=validate)


def catalog_devices(data: Any, file: str, *, validate: bool) -> list[tuple[Hardware, bool]]:
    """The devices of one catalog's parsed content, checked (against the schema too when ``validate``)."""
    _keys_are_text(data, file, "$")
    errors = sorted(_validator().iter_errors(data), key=lambda e: (len(e.absolute_path) == 0, list(map(str, e.absolute_path)))
                    ) if validate else []
    if errors:
        # report the deepest, first-listed problem: it names the precise key
        deepest = max(errors, key=lambda e: len(e.absolute_path))
        first = next(e for e in errors if len(e.absolute_path) == len(deepest.absolute_path))
        raise _schema_error(file, first)
    sources = data.get("sources", {})
    ctx = Ctx(file=file, sources=sources)
    out: list[tuple[Hardware, bool]] = []
    seen: dict[str, int] = {}
    for i, d in enumerate(data["devices"]):
        if d["id"] in seen:
            raise CatalogError(where=f"{file}: $.devices[{i}].id", expected="an id not used before",
                               found=f"{d['id']!r}, also at $.devices[{seen[d['id']]}]",
                               hint="ids are unique; rename one of the two devices.")
        seen[d["id"]] = i
        out.append((device(ctx, d, i, data.get("vendor")), bool(d.get("overrides", False))))
    return out


def _keys_are_text(node: object, file: str, where: str) -> None:
    """YAML reads `2:` or `+2:` as a number; JSON Schema's property rules do not see such keys (and some
    jsonschema releases fail sorting them), so every key must be text before the schema is asked."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str):
                is_source = where == "$.sources"
                raise CatalogError(where=f"{file}: {where}",
                                   expected="source ids that are text (S1, S2, ...)" if is_source
                                   else "keys that are text",
                                   found=f"the {type(key).__name__} {key!r}",
                                   hint="quote it, or start it with a letter: S2 rather than 2." if is_source
                                   else "quote it; keys are the field names the catalog schema lists.")
            _keys_are_text(value, file, f"{where}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _keys_are_text(item, file, f"{where}[{i}]")


def _expand(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if path.is_file():
        return [path]
    raise CatalogError(where=display_path(path), expected="a catalog file or folder", found="nothing at that path",
                       hint=f"check --catalog and {ENV_VAR}.")


def catalog_paths(extra: Iterable[str | Path] = (), *, use_env: bool = True) -> list[Path]:
    """Every catalog file to load, in order: built-in, then ``ROOFCORE_CATALOG_PATH``, then ``extra``."""
    roots: list[Path] = [BUILTIN_DIR]
    if use_env:
        roots += settings.CATALOG_PATH.value()
    roots += [Path(p) for p in extra]
    files: list[Path] = []
    for r in roots:
        for f in _expand(r):
            if f.resolve() not in {x.resolve() for x in files}:
                files.append(f)
    return files

