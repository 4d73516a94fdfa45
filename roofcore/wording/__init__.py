"""How an analysis's numbers and flags are worded, over arrays: the layer below the analysis and the writers.

* :mod:`.cells`: text columns built once per distinct value (:class:`Col`), escaped per destination and joined
  row-wise with Arrow's string kernels;
* :mod:`.formatting`: ``units.fmt_*``'s texts for whole arrays (each distinct rounded value formatted once);
* :mod:`.messages`: each flag's message per kernel (:func:`flag_lists` for :meth:`Analysis.table
  <roofcore.analyze.Analysis.table>`, :func:`above_roof_messages` for the advice), and the segments the JSON and
  CSV writers of :mod:`roofcore.output` place them with.

It imports :mod:`roofcore.roofline` (flags and their codes) and nothing above, so :mod:`roofcore.analyze` and
:mod:`roofcore.advise` word their flags here while :mod:`roofcore.output` writes the analysis (docs/architecture.md).
"""

from __future__ import annotations

from .cells import Col, merge_runs
from .formatting import vfmt_pct, vfmt_si, vfmt_time
from .messages import above_roof_messages, flag_cells, flag_lists, flag_messages, flag_segments

__all__ = ["Col", "above_roof_messages", "flag_cells", "flag_lists", "flag_messages", "flag_segments", "merge_runs",
           "vfmt_pct", "vfmt_si", "vfmt_time"]
