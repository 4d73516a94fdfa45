"""Device names as profilers print them -> catalog ids (Catalog.closest / suggest): right or none, never wrong."""

from __future__ import annotations

import re

import pytest

from roofcore import load_catalogs


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs(use_env=False)


#: (name a profiler printed, catalog id, or None: no device unless the catalog has that very model, whose id then
#: holds every word of the third field); the names are real: deviceProperties, nvidia-smi, rocm-smi
NAMES = [
    ("NVIDIA A100-SXM4-40GB", "a100-40gb-sxm", ""),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm", ""),
    ("A100-SXM4-80GB", "a100-80gb-sxm", ""),  # older drivers print no "NVIDIA"
    ("NVIDIA A100-PG509-200", "a100-40gb-sxm", ""),  # a board code: the A100 SXM4 40GB board
    ("A100-PG509-200", "a100-40gb-sxm", ""),
    ("NVIDIA A100-PCIE-40GB", None, "a100 pcie"),  # not an SXM4 A100
    ("NVIDIA A100 80GB PCIe", None, "a100 pcie"),
    ("NVIDIA GA100", None, "ga100"),  # the chip (nsys --gpu-metrics-device): 40 or 80 GB unknown
    ("NVIDIA H100 80GB HBM3", "h100-sxm", ""),
    ("H100 80GB HBM3", "h100-sxm", ""),
    ("NVIDIA H100 PCIe", "h100-pcie", ""),
    ("NVIDIA H100 NVL", None, "h100 nvl"),
    ("NVIDIA H100", None, "unsure"),  # SXM5 or PCIe: unsure
    ("NVIDIA H200", "h200-sxm", ""),
    ("NVIDIA H200 NVL", None, "h200 nvl"),
    ("NVIDIA B200", "b200", ""),
    ("NVIDIA GB200", None, "gb200"),
    ("NVIDIA L4", "l4", ""),
    ("NVIDIA L40S", "l40s", ""),
    ("NVIDIA L40", None, "l40"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090", ""),
    ("NVIDIA GeForce RTX 4090 D", None, "4090 d"),
    ("Tesla V100-DGXS-32GB", None, "v100 32gb"),  # a V100 never becomes an A100
    ("Tesla V100-SXM2-16GB", None, "v100 16gb"),
    ("Tesla T4", None, "t4"),
    ("AMD Instinct MI300X", "mi300x", ""),
    ("AMD Instinct MI300X VF", "mi300x", ""),  # an SR-IOV function of the whole GPU
    ("AMD Instinct MI300A", None, "mi300a"),
    ("AMD Instinct MI210", None, "mi210"),
    ("AMD Instinct MI250X", "mi250x-gcd", ""),  # ROCm reports one GCD
    ("AMD Instinct MI250X/MI250", None, "unsure"),  # rocm-smi's name for either
    ("gfx942", "mi300x", ""),
    ("NVIDIA GeForce RTX 5090", "rtx-5090", ""),
    ("AMD Radeon AI PRO R9700", "radeon-ai-pro-r9700", ""),
    ("gfx942:sramecc+:xnack-", "mi300x", ""),
    ("sm_90", None, "unsure"),
    ("", None, "unsure"),
]


@pytest.mark.parametrize(("name", "expected", "model"), NAMES)
def test_profiler_device_names(catalog, name, expected, model):
    hits = catalog.closest(name)
    if expected:
        assert hits == [expected]
    else:
        assert hits == [] or (len(hits) == 1 and all(w in hits[0] for w in model.split())), hits


def test_a_missing_model_is_none_in_a_catalog_without_it(catalog):
    """With the catalog as it ships today (no V100, T4, MI210, PCIe A100): none of these names a device."""
    from dataclasses import replace
    from types import MappingProxyType

    keep = {i: hw for i, hw in catalog.devices.items() if not re.search(r"v100|t4|mi210|a100-.*pcie", i)}
    small = replace(catalog, devices=MappingProxyType(keep))
    for name in ("Tesla V100-DGXS-32GB", "Tesla V100-SXM2-16GB", "Tesla T4", "AMD Instinct MI210",
                 "NVIDIA A100-PCIE-40GB"):
        assert small.closest(name) == [], name


def test_compute_unit_count_confirms_or_refuses(catalog):
    assert catalog.closest("gfx942", units=304) == ["mi300x"]
    assert catalog.closest("gfx942", units=228) in ([], ["mi300a"])  # an MI300A: never the MI300X
    assert catalog.closest("gfx942", units=104) == []
    assert catalog.closest("AMD Instinct MI300X", units=228) == []
    assert catalog.closest("gfx90a", units=104) in ([], ["mi210"])  # an MI210 or MI250 GCD, not an MI250X GCD (110)
    assert catalog.closest("gfx90a", units=110) == ["mi250x-gcd"]
    assert catalog.closest("NVIDIA A100-SXM4-40GB", units=108) == ["a100-40gb-sxm"]


def test_id_typos_still_get_near_ids(catalog):
    assert catalog.closest("h100")[:2] == ["h100-sxm", "h100-pcie"]
    assert catalog.closest("a100")[:2] == ["a100-40gb-sxm", "a100-80gb-sxm"]


def test_suggest_never_falls_back_to_a_shared_architecture(catalog):
    assert catalog.suggest("AMD Instinct MI210", {"arch": "gfx90a"}) in ([], ["mi210"])  # never the MI250X
    assert catalog.suggest("AMD Instinct MI355X", {"arch": "gfx950"}) in ([], ["mi355x"])  # never the MI350X
    assert catalog.suggest("MI200", {"arch": "gfx90a"}) == ["mi250x-gcd"]  # rocprof-compute's alias
    assert catalog.suggest(None, {"arch": "gfx942"}) == ["mi300x"]
