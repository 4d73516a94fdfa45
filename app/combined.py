"""Launches above their roof that combining repeated launches hides (roofcore.views.combined_away): the Overview
lists them first among the flags; the Kernels and Roofline pages, which show the combined rows, say so above them."""

from __future__ import annotations

import roofcore
from roofcore import views
from roofcore.views import FlagGroup

from . import state
from .memo import shared
from .workload import launch_analysis


def hidden(a: roofcore.Analysis, hw_id: str) -> FlagGroup | None:
    """The launches above their roof on ``hw_id`` that ``a``'s combined rows hide; None where ``a`` does not
    combine launches or hides none. Once per analysis and device for every session (app.memo.shared)."""
    loaded = state.workload()["workload"]
    if loaded is a.workload:
        return None
    return shared("combined.hidden", hw_id, lambda: views.combined_away(
        launch_analysis(state.token(), loaded, tuple(a.hardware), a.achievable), a, hw_id))


def note(a: roofcore.Analysis) -> str | None:
    """One line per device where combining hides launches above their roof, with how to see them; None where it
    hides none."""
    lines = [f"{views.device_label(h)}: {g.help}" for h in a.hardware if (g := hidden(a, h.id)) is not None]
    if not lines:
        return None
    return (" ".join(lines) + " Turn off Combine repeated launches in the sidebar to see them; the Overview lists "
            "them under Flags needing attention.")


__all__ = ["hidden", "note"]
