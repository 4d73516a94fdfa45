"""The GPUs people profile on (issue 22, point 3): each in the catalog with dense peaks per precision and unit, the
names its profilers print, and its silicon, so that a card the catalog lacks finds the nearest one of the same chip."""

from __future__ import annotations

import pytest

from roofcore import load_catalogs
from roofcore.catalog.devices import UNITS
from roofcore.catalog.silicon import SILICON


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs(use_env=False)


#: issue 22's list -> catalog id
ISSUE_GPUS = {
    "GeForce RTX 5090": "rtx-5090", "GeForce RTX 5080": "rtx-5080", "GeForce RTX 4080": "rtx-4080",
    "GeForce RTX 3090": "rtx-3090", "GeForce RTX 3080": "rtx-3080", "RTX PRO 6000 Blackwell": "rtx-pro-6000-blackwell",
    "RTX 6000 Ada": "rtx-6000-ada", "A10": "a10", "A10G": "a10g", "A40": "a40", "RTX A6000": "rtx-a6000", "L20": "l20",
    "A800": "a800-sxm", "H800": "h800-sxm", "H20": "h20", "GB200": "gb200", "B300": "b300",
    "Jetson AGX Orin": "jetson-agx-orin-64gb", "MI355X": "mi355x", "MI60": "mi60", "MI50": "mi50",
    "Radeon AI PRO R9700": "radeon-ai-pro-r9700", "RX 9070 XT": "rx-9070-xt", "RX 7900 XTX": "rx-7900-xtx",
}


def test_every_gpu_of_the_issue_is_in_the_catalog_with_its_silicon_and_units(catalog):
    for name, hw_id in ISSUE_GPUS.items():
        hw = catalog.get(hw_id)
        assert hw.kind.value == "gpu", name
        assert hw_id in SILICON, hw_id  # "same silicon" can be computed for it
        assert hw_id in UNITS or hw_id == "b300", hw_id  # B300's SM count is not published
        assert any(c.unit.value == "matrix" for c in hw.ceilings) or hw_id in ("mi50", "mi60"), hw_id
        assert len(hw.levels) >= 2 and hw.levels[0].capacity, hw_id
        assert all(res.figure.source.strip() for res in (*hw.ceilings, *hw.levels, *hw.links)), hw_id
    assert len(catalog) >= 68


@pytest.mark.parametrize(("hw_id", "ceiling", "peak"), [
    ("rtx-5080", "bf16-matrix", 112.6e12), ("rtx-5080", "fp4-matrix", 900.4e12), ("rtx-4080", "bf16-matrix", 97.5e12),
    ("rtx-3090", "bf16-matrix", 71.2e12), ("rtx-3080", "fp32-vector", 29.77e12),
    ("rtx-pro-6000-blackwell", "bf16-matrix", 503.8e12), ("rtx-6000-ada", "bf16-matrix", 364.2e12),
    ("a10", "bf16-matrix", 125e12), ("a10g", "bf16-matrix", 70e12), ("a40", "bf16-matrix", 149.7e12),
    ("rtx-a6000", "bf16-matrix", 154.8e12), ("l20", "bf16-matrix", 119.5e12), ("a800-sxm", "bf16-matrix", 312e12),
    ("h800-sxm", "bf16-matrix", 989e12), ("h800-sxm", "fp64-vector", 1e12), ("h20", "bf16-matrix", 148e12),
    ("gb200", "bf16-matrix", 2500e12), ("gb200", "fp4-matrix", 10000e12), ("b300", "fp4-matrix", 13500e12),
    ("b300", "int8-matrix", 150e12), ("jetson-agx-orin-64gb", "fp16-matrix", 42.5e12),
    ("mi355x", "bf16-matrix", 2516.6e12), ("mi60", "fp32-vector", 14.7e12), ("mi50", "fp64-vector", 6.6e12),
    ("rx-9070-xt", "fp16-matrix", 194.6e12), ("rx-7900-xtx", "fp16-matrix", 122.8e12),
])
def test_dense_peaks(catalog, hw_id, ceiling, peak):
    c = catalog.get(hw_id).ceiling_map[ceiling]
    assert c.peak == pytest.approx(peak, rel=2e-3)
    assert c.sparse is None or c.sparse == pytest.approx(2 * c.peak, rel=0.02)  # never the sparse figure


def test_geforce_tensor_roofs_are_the_fp32_accumulate_rate(catalog):
    """GeForce (and the A10G) run FP16/BF16 with FP32 accumulate at half the rate professional cards of the same
    chip run: twice their FP32 vector rate where the professional cards have four times (the 4090 is the model)."""
    half = ["rtx-3080", "rtx-3090", "rtx-4080", "rtx-4090", "rtx-5080", "rtx-5090", "a10g"]
    full = ["rtx-a6000", "a40", "a10", "rtx-6000-ada", "rtx-pro-6000-blackwell"]
    for hw_id in half + full:
        m = catalog.get(hw_id).ceiling_map
        ratio = m["bf16-matrix"].peak / m["fp32-vector"].peak
        assert ratio == pytest.approx(2 if hw_id in half else 4, rel=0.02), (hw_id, ratio)
    for hw_id in half[:-1]:
        assert "FP32 accumulate" in catalog.get(hw_id).ceiling_map["bf16-matrix"].figure.notes, hw_id


@pytest.mark.parametrize(("name", "hw_id"), [
    ("NVIDIA GeForce RTX 5090", "rtx-5090"), ("NVIDIA GeForce RTX 5080", "rtx-5080"),
    ("NVIDIA GeForce RTX 4080", "rtx-4080"), ("NVIDIA GeForce RTX 3090", "rtx-3090"),
    ("NVIDIA GeForce RTX 3080", "rtx-3080"), ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"), ("NVIDIA A10", "a10"), ("NVIDIA A10G", "a10g"),
    ("NVIDIA A40", "a40"), ("NVIDIA RTX A6000", "rtx-a6000"), ("NVIDIA L20", "l20"),
    ("NVIDIA A800-SXM4-80GB", "a800-sxm"), ("NVIDIA H800", "h800-sxm"), ("NVIDIA H20", "h20"),
    ("NVIDIA GB200", "gb200"), ("NVIDIA B300", "b300"), ("Orin", "jetson-agx-orin-64gb"),
    ("AMD Instinct MI355X", "mi355x"), ("AMD Radeon Instinct MI60", "mi60"), ("AMD Instinct MI50", "mi50"),
    ("AMD Radeon AI PRO R9700", "radeon-ai-pro-r9700"), ("AMD Radeon RX 9070 XT", "rx-9070-xt"),
    ("AMD Radeon RX 7900 XTX", "rx-7900-xtx"),
])
def test_the_names_profilers_print(catalog, name, hw_id):
    m = catalog.resolve(name, {})
    assert (m.ids, m.exact, m.note) == ([hw_id], True, None)


@pytest.mark.parametrize("name", [
    "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 4080 SUPER",
    "NVIDIA A800 80GB PCIe", "NVIDIA H800 PCIe", "NVIDIA RTX 6000", "NVIDIA GeForce RTX 3090 Ti",
])
def test_a_near_name_of_another_product_is_not_its_neighbour(catalog, name):
    assert catalog.closest_by_name(name) == [], name


@pytest.mark.parametrize(("meta", "hw_id", "exact"), [
    ({"arch": "gfx906", "cu_per_gpu": "60"}, "mi50", True),
    ({"arch": "gfx906", "cu_per_gpu": "64"}, "mi60", True),
    ({"arch": "gfx1100", "cu_per_gpu": "96", "memory_gb": "24"}, "rx-7900-xtx", True),
    ({"arch": "gfx1201", "cu_per_gpu": "64", "memory_gb": "32"}, "radeon-ai-pro-r9700", True),
    ({"arch": "gfx1201", "cu_per_gpu": "64", "memory_gb": "16"}, "rx-9070-xt", True),
    ({"arch": "gfx950", "cu_per_gpu": "256"}, "mi350x", False),  # same CUs: only the name tells an MI355X
    ({"arch": "sm_120", "sm_count": "84"}, "rtx-5080", True),
    ({"arch": "sm_87", "sm_count": "16"}, "jetson-agx-orin-64gb", True),
])
def test_marketing_names_resolve_by_gfx_id_units_and_memory(catalog, meta, hw_id, exact):
    m = catalog.resolve("AMD Radeon Graphics" if meta["arch"].startswith("gfx") else None, meta)
    assert (m.ids, m.exact) == ([hw_id], exact), m
    assert m.note and hw_id in m.note


def test_a_card_of_known_silicon_gets_the_same_line_first(catalog):
    m = catalog.resolve("NVIDIA GeForce RTX 3090 Ti", {"compute_capability": "8.6", "sm_count": "84"})
    assert m.ids == ["rtx-3090"] and not m.exact  # a GeForce card, not the A40 or RTX A6000 of the same 84 SMs
    assert m.note == ("NVIDIA GeForce RTX 3090 Ti is not in the catalog; closest of the same silicon (GA102): "
                      "rtx-3090 — add it on the Hardware page.")
    m = catalog.resolve("NVIDIA RTX A5000", {"compute_capability": "8.6", "sm_count": "64"})
    assert m.ids[0] in ("rtx-a6000",) and "GA102" in m.note  # a workstation card judged on the workstation one
    m = catalog.resolve("AMD Radeon PRO W7900", {"arch": "gfx1100", "cu_per_gpu": "96", "memory_gb": "48"})
    assert m.ids == ["rx-7900-xtx"] and not m.exact and "Navi 31" in m.note
    # the W7900 through a marketing name: 48 GB matches no catalog device, so the same silicon's closest, with a note
    m = catalog.resolve("AMD Radeon Graphics", {"arch": "gfx1100", "cu_per_gpu": "96", "memory_gb": "48"})
    assert m.ids == ["rx-7900-xtx"] and not m.exact and "matches no catalog device" in m.note
