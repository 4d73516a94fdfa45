"""The bandwidth curve cut into plateaus: main memory, then each on-chip level, named after the caches the OS
reports (see the package docstring)."""

from __future__ import annotations

import statistics
from pathlib import Path

from .results import BandwidthPoint, Plateau

#: an on-chip level must be at least this many times faster than the level below it
LEVEL_RATIO = 1.3

#: points whose bandwidths are all within this factor of each other form one run
_RUN_TOL = 1.25



def _os_caches() -> list[tuple[int, int]]:
    """(level, size in bytes) of the data caches the OS reports for CPU 0 (Linux sysfs; [] elsewhere)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    out = []
    try:
        for d in sorted(base.glob("index*")):
            kind = (d / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            level = int((d / "level").read_text().strip())
            size_text = (d / "size").read_text().strip().upper()
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size_text[-1:], 1)
            out.append((level, int(size_text.rstrip("KMG")) * mult))
    except (OSError, ValueError):
        return []
    return sorted(set(out))


def find_plateaus(points: tuple[BandwidthPoint, ...], *, ratio: float = LEVEL_RATIO,
                  os_caches: list[tuple[int, int]] | None = None) -> tuple[Plateau, ...]:
    """Main memory first, then on-chip levels from the largest working set to the smallest (see module doc)."""
    pts = sorted((p for p in points if p.reliable), key=lambda p: p.working_set)
    if not pts:
        raise ValueError("no bandwidth point was long enough to measure; use larger working sets")
    # runs of similar bandwidth, walking from the largest working set down
    runs: list[list[BandwidthPoint]] = []
    i = len(pts) - 1
    while i >= 0:
        run = [pts[i]]
        j = i - 1
        while j >= 0:
            values = [p.bytes_per_s for p in run] + [pts[j].bytes_per_s]
            if max(values) / min(values) > _RUN_TOL:
                break
            run.append(pts[j])
            j -= 1
        runs.append(run)
        i = j
    main_run = runs[0]
    largest = sorted(main_run, key=lambda p: p.working_set)[-3:]
    main = Plateau(level="hbm", bandwidth=max(p.bytes_per_s for p in largest),
                   smallest=min(p.working_set for p in main_run), largest=max(p.working_set for p in main_run))
    # candidate on-chip plateaus, smallest working set first; a lone point between two plateaus is a transition
    wide = [run for run in reversed(runs[1:]) if len(run) >= 2]
    cands = [Plateau(level="", bandwidth=statistics.median(p.bytes_per_s for p in run),
                     smallest=min(p.working_set for p in run), largest=max(p.working_set for p in run))
             for run in wide]
    caches = sorted(os_caches if os_caches is not None else _os_caches(), key=lambda c: (c[1], c[0]))
    if caches:
        # name each plateau after the smallest cache the OS reports that holds its working sets; where several
        # plateaus land on one cache, the widest (most sizes; then the fastest) is that cache's plateau, the
        # others are transitions
        best: dict[int, tuple[Plateau, int]] = {}
        for run, cand in zip(wide, cands, strict=True):
            cache = next((c for c in caches if c[1] >= cand.largest), None)
            if cache is None:
                continue
            named = Plateau(level=f"l{cache[0]}", bandwidth=cand.bandwidth, smallest=cand.smallest,
                            largest=cand.largest, os_cache=cache[1])
            old = best.get(cache[0])
            if old is None or (len(run), named.bandwidth) > (old[1], old[0].bandwidth):
                best[cache[0]] = (named, len(run))
        cands = sorted((p for p, _ in best.values()), key=lambda p: p.largest)
    # keep, from main memory upwards, each plateau at least `ratio` times faster than the level below it
    kept: list[Plateau] = []
    for cand in reversed(cands):
        if cand.bandwidth >= ratio * (kept[-1] if kept else main).bandwidth:
            kept.append(cand)
    if not caches:
        kept = [Plateau(level=f"l{len(kept) - i}", bandwidth=p.bandwidth, smallest=p.smallest, largest=p.largest)
                for i, p in enumerate(kept)]
    # catalog order: main memory first, then on-chip levels from the largest (slowest) to the smallest
    return (main, *kept)

