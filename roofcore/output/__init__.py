"""The output layer: an analysis's columnar table as JSON and CSV, built over arrays (the flag messages are worded
by :mod:`roofcore.wording`, which the analysis uses too).

:meth:`Analysis.table` is the one columnar table (kernels × devices, every field in base units, flags as a
bitmask). Everything a user exports is a view of it, built here without a Python loop over kernels:

* numbers in messages are rounded in numpy and each distinct rounded value is formatted once by Python (a few
  thousand texts, whatever the number of kernels), so the text is exactly ``units.fmt_*``'s;
* flag messages, JSON objects and CSV lines are joined column by column with Arrow's string kernels from those
  texts, the numbers (orjson, one C pass per column) and each distinct string escaped once;
* the JSON writer and the CSV writer stream the kernels in pieces of :data:`CHUNK_ROWS` (in two threads where two
  cores are free): what needs the whole table (the flag messages' numbers formatted once, a row's template of JSON
  syntax and few-valued columns merged, :class:`~.columns.Rows`) is made once and each piece takes its rows of it;
  numbers keep the comma orjson wrote after them and rows of a flag are placed without copying their text.

The JSON is the README's contract, written by one function (:func:`.json_out.analysis_json_chunks`; a test
checks that nothing else builds it): ASCII-escaped as ``json.dumps`` writes it; :func:`.json_out.analysis_document`
is the same document decoded into Python values.

The package: :mod:`.columns` what the writers share (numbers, streaming), :mod:`.json_out` the JSON,
:mod:`.csv_out` the CSV; under them :mod:`roofcore.wording` (:mod:`~roofcore.wording.cells` text columns and Arrow
joins, :mod:`~roofcore.wording.formatting` the ``units.fmt_*`` texts over arrays, :mod:`~roofcore.wording.messages`
the flag messages). ``roofcore.output`` re-exports the flag messages and array formatters it always offered.
"""

from __future__ import annotations

from ..wording import Col, above_roof_messages, flag_lists, flag_messages, vfmt_pct, vfmt_si, vfmt_time  # noqa: F401
from ..wording.formatting import f0, g3, sig3  # noqa: F401 (the tests check them)
from .columns import CHUNK_ROWS, finite_or_none  # noqa: F401
from .csv_out import analysis_csv, analysis_csv_chunks, neutralise
from .json_out import KERNEL_KEYS, analysis_document, analysis_json, analysis_json_chunks  # noqa: F401

__all__ = ["above_roof_messages", "analysis_csv", "analysis_csv_chunks", "analysis_document", "analysis_json",
           "analysis_json_chunks",
           "flag_lists", "flag_messages", "neutralise", "vfmt_pct", "vfmt_si", "vfmt_time"]
