"""Limits on what reading one input may cost: size, rows, kernels, JSON nesting depth and parse time.

Each limit has a default and an environment variable, the host's knob (read when used, so a running
server follows a restart with a new value; ``0`` turns a limit off). Beyond a limit a
:class:`~roofcore.errors.LimitError` names the limit, what was found and how to raise it.

======================  ===========================  ===========  ==============================================
limit                   variable                     default      what counts
======================  ===========================  ===========  ==============================================
input size              ``ROOFCORE_MAX_INPUT_MB``    512 MB       bytes of one file, and of gzip data once
                                                                  decompressed (no zip bomb)
input rows              ``ROOFCORE_MAX_ROWS``        10,000,000   lines of one text file (CSV, YAML, console)
kernels                 ``ROOFCORE_MAX_KERNELS``     2,000,000    rows of the workload read from the inputs
JSON depth              ``ROOFCORE_MAX_JSON_DEPTH``  100          nesting of objects and arrays in a JSON file
parse time              ``ROOFCORE_PARSE_TIMEOUT_S`` 300 s        reading the inputs of one upload or command
======================  ===========================  ===========  ==============================================

The parse time is checked at points inside the parsers' loops (:func:`tick`), so a read stops within one
step of its deadline, not at the exact second. YAML is always read by :func:`load_yaml`: PyYAML's safe
loader (no Python tags), and a document whose aliases expand to far more values than it holds (a "billion
laughs": aliases of aliases) is refused before anything walks it (``MAX_YAML_EXPANSION``).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from . import filemap, settings
from .errors import InputError, LimitError

if TYPE_CHECKING:  # numpy and PyYAML are imported by the functions that use them: commands that need neither
    import numpy as np  # (`roofline --help`, `formats`, `hardware list`) start without them
    import yaml


@dataclass(frozen=True)
class Limit:
    key: str
    env: str
    default: float
    what: str  #: what is counted, for messages ("rows", "kernels", ...)
    unit: str = ""

    def value(self) -> float:
        """The configured value (``0`` = no limit); a malformed variable is an error that names it."""
        setting: settings.Setting[float] = settings.BY_NAME[self.env]
        return setting.value()

    def hint(self) -> str:
        cli = " or --max-input-mb (CLI)" if self.key == "input_mb" else ""
        return f"Hint: raise it with {self.env}=N{cli} (0 = no limit); on a shared server the host sets it."

    def error(self, where: str, found: str) -> LimitError:
        limit = self.value()
        shown = f"{limit:,.0f}{self.unit}" if limit >= 1 else f"{limit:g}{self.unit}"
        return LimitError(f"{where}: {found}, above the {self.what} limit of {shown} ({self.env}). {self.hint()}")

    def check(self, count: float, where: str, found: str | None = None) -> None:
        limit = self.value()
        if limit and count > limit:
            raise self.error(where, found or f"{count:,.0f} {self.what}")


# variables, defaults and parsing: roofcore.settings
INPUT_MB = Limit("input_mb", settings.MAX_INPUT_MB.name, settings.MAX_INPUT_MB.default, "input size", " MB")
ROWS = Limit("rows", settings.MAX_ROWS.name, settings.MAX_ROWS.default, "rows")
KERNELS = Limit("kernels", settings.MAX_KERNELS.name, settings.MAX_KERNELS.default, "kernels")
JSON_DEPTH = Limit("json_depth", settings.MAX_JSON_DEPTH.name, settings.MAX_JSON_DEPTH.default, "JSON depth")
PARSE_TIMEOUT = Limit("parse_s", settings.PARSE_TIMEOUT_S.name, settings.PARSE_TIMEOUT_S.default, "parse time", " s")

#: every limit, for documentation and the app's Hardware/Help text
LIMITS: tuple[Limit, ...] = (INPUT_MB, ROWS, KERNELS, JSON_DEPTH, PARSE_TIMEOUT)


def check_rows(data: bytes, where: str) -> int | None:
    """Refuse a text input with more lines than ``ROOFCORE_MAX_ROWS`` (counted without decoding it; a mapped
    file piece by piece, its pages let go as counted: :mod:`roofcore.filemap`); the count, where it was taken
    (None where the input is too small to pass the limit)."""
    limit = ROWS.value()
    if not limit or len(data) <= limit:  # fewer bytes than the limit: fewer lines too
        return None
    lines = filemap.count(data, b"\n") + (data[-1:] != b"\n")
    ROWS.check(lines, where)
    return lines


# ---------------------------------------------------------------------------------------------------- YAML

MAX_YAML_EXPANSION = 1_000_000  #: values a YAML document may reach through aliases beyond 10× its own nodes


def _expanded(root: yaml.Node) -> tuple[int, int]:
    """(values the node graph expands to when walked, nodes it holds): aliases make it a DAG."""
    import yaml

    weight: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in weight:
            continue
        kids = (node.value if isinstance(node, yaml.SequenceNode) else
                [x for kv in node.value for x in kv] if isinstance(node, yaml.MappingNode) else [])
        if done:
            weight[id(node)] = 1 + sum(weight[id(k)] for k in kids)
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in weight)
    return weight[id(root)], len(weight)


def load_yaml(text: str | bytes, where: str = "<yaml>") -> object:
    """One YAML document as plain data (safe: no Python objects). Raises ``yaml.YAMLError`` for malformed
    YAML (callers turn it into their located message) and :class:`LimitError` for a document whose aliases
    expand to more than ``MAX_YAML_EXPANSION`` values and 10× what it holds."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where installed; same rules
    try:
        return _load_yaml(text, where, fast)
    except yaml.YAMLError:
        if fast is yaml.SafeLoader:
            raise
    return _load_yaml(text, where, yaml.SafeLoader)  # the pure-Python parser's messages say more


def yaml_input_error(e: yaml.YAMLError, where: str) -> InputError:
    """A malformed YAML input as an :class:`InputError` located at the line and column PyYAML points to."""
    mark = getattr(e, "problem_mark", None)
    at = f": line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return InputError(where=f"{where}{at}", text=f"invalid YAML: {getattr(e, 'problem', None) or e}.",
                      hint="check indentation and quoting.")


def _load_yaml(text: str | bytes, where: str, loader_class: type) -> object:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in (text if isinstance(text, str) else text.decode("utf-8", "replace")):  # anchors: maybe aliases
            expanded, held = _expanded(node)
            if expanded > MAX_YAML_EXPANSION and expanded > 10 * held:
                raise LimitError(f"{where}: its aliases (*name references) expand to {expanded:,} values from "
                                 f"{held:,} written (aliases of aliases); at most {MAX_YAML_EXPANSION:,} are read. "
                                 "Hint: write the values out instead of referencing them.")
        return loader.construct_document(node)
    finally:
        loader.dispose()


# ---------------------------------------------------------------------------------------------- parse time

DEADLINE: contextvars.ContextVar[tuple[float, float, str] | None] = contextvars.ContextVar("roofcore_deadline",
                                                                                          default=None)


@contextlib.contextmanager
def deadline(what: str, seconds: float | None = None) -> Iterator[None]:
    """Within the block, :func:`tick` raises :class:`LimitError` once ``seconds`` (default: the configured
    parse timeout) have passed. Per thread and task (a context variable), so sessions do not share it; an
    outer deadline that ends sooner stays in force."""
    s = PARSE_TIMEOUT.value() if seconds is None else seconds
    outer = DEADLINE.get()
    if not s or (outer is not None and outer[0] <= time.monotonic() + s):
        yield
        return
    token = DEADLINE.set((time.monotonic() + s, s, what))
    try:
        yield
    finally:
        DEADLINE.reset(token)


def tick() -> None:
    """Raise :class:`LimitError` when the current :func:`deadline` has passed (cheap: call it in loops)."""
    d = DEADLINE.get()
    if d is not None and time.monotonic() > d[0]:
        _end, s, what = d
        raise LimitError(f"{what}: reading took longer than the parse time limit of {s:g} s "
                         f"({PARSE_TIMEOUT.env}). {PARSE_TIMEOUT.hint()}")


# ---------------------------------------------------------------------------------------------- JSON depth

_QUOTE, _BACKSLASH = 34, 92


@lru_cache(maxsize=1)
def _kinds() -> np.ndarray:
    """Per byte value: 1 opens a level, -1 closes one, 2 is a quote, 0 anything else."""
    import numpy as np

    kind = np.zeros(256, np.int8)
    kind[[ord("{"), ord("[")]] = 1
    kind[[ord("}"), ord("]")]] = -1
    kind[_QUOTE] = 2
    return kind


class JsonDepth:
    """The nesting depth of JSON text fed in pieces (bytes), without decoding it: brackets inside strings do
    not count. Vectorised (one table look-up over each piece); raises :class:`LimitError` as soon as the depth
    passes ``ROOFCORE_MAX_JSON_DEPTH``. Malformed JSON is not judged here (the parser reports it)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.limit = JSON_DEPTH.value()
        self.depth = 0
        self.max = 0
        self.in_string = False
        self.trailing_backslashes = 0  # at the end of the previous piece

    def feed(self, piece: bytes | memoryview) -> None:
        import numpy as np

        a = np.frombuffer(piece, np.uint8)
        if not a.size:
            return
        kind = _kinds()[a]
        pos = np.flatnonzero(kind)
        if not pos.size:
            self._carry(a)
            return
        k = kind[pos]
        quotes = pos[k == 2]
        if quotes.size:  # a quote after an odd run of backslashes is escaped (only inside a string, but the
            maybe = quotes[(quotes > 0) & (a[np.maximum(quotes - 1, 0)] == _BACKSLASH)]  # run decides, and rare)
            escaped = [q for q in maybe.tolist() if self._run(a, q) % 2]
            if quotes[0] == 0 and self.trailing_backslashes % 2:
                escaped.append(0)
            if escaped:
                quotes = np.setdiff1d(quotes, np.array(escaped, dtype=quotes.dtype), assume_unique=True)
        brackets = pos[k != 2]
        if brackets.size:
            inside = (np.searchsorted(quotes, brackets) + self.in_string) % 2 == 1
            steps = kind[brackets[~inside]].astype(np.int64)
            if steps.size:
                path = np.cumsum(steps) + self.depth
                self.max = max(self.max, int(path.max()))
                self.depth = int(path[-1])
                if self.limit and self.max > self.limit:
                    raise JSON_DEPTH.error(self.where, f"JSON nested {self.max:,} levels deep")
        self.in_string = bool((self.in_string + quotes.size) % 2)
        self._carry(a)

    def _run(self, a: np.ndarray, q: int) -> int:
        """Backslashes just before position ``q`` (continuing into the previous piece)."""
        j = q
        while j > 0 and a[j - 1] == _BACKSLASH:
            j -= 1
        return q - j + (self.trailing_backslashes if j == 0 else 0)

    def _carry(self, a: np.ndarray) -> None:
        run = self._run(a, a.size) if a[-1] == _BACKSLASH else 0
        self.trailing_backslashes = run


def check_json_depth(data: bytes | memoryview, where: str) -> int:
    """The nesting depth of one JSON text; :class:`LimitError` beyond ``ROOFCORE_MAX_JSON_DEPTH``."""
    meter = JsonDepth(where)
    meter.feed(data)
    return meter.max


__all__ = [
    "INPUT_MB",
    "JSON_DEPTH",
    "KERNELS",
    "LIMITS",
    "MAX_YAML_EXPANSION",
    "PARSE_TIMEOUT",
    "ROWS",
    "JsonDepth",
    "Limit",
    "check_json_depth",
    "check_rows",
    "deadline",
    "load_yaml",
    "tick",
    "yaml_input_error",
]
