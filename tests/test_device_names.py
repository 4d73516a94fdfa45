"""Device names as profilers print them -> catalog ids (Catalog.closest / suggest): right or none, never wrong."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from roofcore import DeviceMatch, load_catalogs
from roofcore.catalog.resolve import memory_of

DATA = Path(__file__).parent / "data"


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
    m = catalog.resolve("AMD Instinct MI355X", {"arch": "gfx950"})  # the MI355X, or its silicon's MI350X with a note
    assert (m.ids, m.exact) == (["mi355x"], True) or (m.ids == ["mi350x"] and "same silicon (CDNA 4)" in m.note)
    assert catalog.suggest("MI200", {"arch": "gfx90a"}) == ["mi250x-gcd"]  # rocprof-compute's alias
    assert catalog.suggest(None, {"arch": "gfx942"}) == ["mi300x"]


# ------------------------------------------------------------------------------ Catalog.resolve: one class per test

def _without(catalog, pattern):
    """The catalog without the devices whose id matches ``pattern`` (as if it lacked them)."""
    keep = {i: hw for i, hw in catalog.devices.items() if not re.search(pattern, i)}
    return replace(catalog, devices=MappingProxyType(keep))


def test_resolve_the_catalogs_own_name_is_exact_without_a_note(catalog):
    assert catalog.resolve("NVIDIA A100-SXM4-40GB", {"sm_count": "108"}) == DeviceMatch(["a100-40gb-sxm"], True, None)
    assert catalog.resolve("NVIDIA GeForce RTX 5090", {"arch": "sm_120"}) == DeviceMatch(["rtx-5090"], True, None)
    assert catalog.suggest("AMD Instinct MI300X", {"arch": "gfx942"}) == ["mi300x"]


@pytest.mark.parametrize(("suffix", "what"), [("VF", "an SR-IOV virtual function"), ("OAM", "the OAM module form"),
                                              ("HF", "a variant ('HF')")])
def test_resolve_a_variant_suffix_is_the_base_device_with_a_note(catalog, suffix, what):
    m = catalog.resolve(f"AMD Instinct MI300X {suffix}", {"arch": "gfx942", "cu_per_gpu": "304"})
    assert m == DeviceMatch(["mi300x"], False, f"AMD Instinct MI300X {suffix} is {what} of the AMD Instinct MI300X: "
                                               "judged as mi300x.")


def test_resolve_a_marketing_name_by_gfx_id_cu_count_and_memory(catalog):
    m = catalog.resolve("AMD Radeon Graphics", {"gpu_arch": "gfx942", "cu_per_gpu": "304",
                                                "memory_bytes": str(192 * 2**30)})
    assert m == DeviceMatch(["mi300x"], True, "AMD Radeon Graphics is a marketing name; gfx942 with 304 CUs and 192 GiB "
                                              "is the AMD Instinct MI300X (mi300x).")
    # 104 CUs and 64 GB on gfx90a: an MI210 (one MI250 GCD has the same figures); 110 CUs: one MI250X GCD
    assert catalog.resolve("AMD Radeon Graphics", {"arch": "gfx90a", "cu_per_gpu": "104", "memory_gb": "64"}).ids \
        == ["mi210"]
    m = catalog.resolve("AMD Radeon Graphics", {"arch": "gfx90a", "cu_per_gpu": "110", "memory_gb": "64"})
    assert m.ids == ["mi250x-gcd"] and m.exact and "110 CUs and 64 GB" in m.note
    # 228 CUs is the APU, whose name the memory size alone also gives
    assert catalog.resolve("AMD Radeon Graphics", {"arch": "gfx942", "cu_per_gpu": "228"}).ids == ["mi300a"]
    assert catalog.resolve(None, {"gpu_arch": "gfx942", "memory_gb": "128"}).ids == ["mi300a"]
    # rocprof-compute's family name and a bare architecture: the first device, with what would tell them apart
    m = catalog.resolve("MI200", {"arch": "gfx90a"})
    assert m.ids == ["mi250x-gcd"] and not m.exact
    assert m.note.startswith("MI200 is a family name; gfx90a is taken as the AMD Instinct MI250X (one GCD) "
                             "(mi250x-gcd); the CU count and memory size would tell it from ")


def test_resolve_the_radeon_cards_of_one_gfx_id_by_memory_size(catalog):
    big = catalog.resolve("AMD Radeon Graphics", {"arch": "gfx1201", "cu_per_gpu": "64", "memory_gb": "32"})
    assert big.ids == ["radeon-ai-pro-r9700"] and big.exact
    small = catalog.resolve("AMD Radeon Graphics", {"arch": "gfx1201", "cu_per_gpu": "64", "memory_gb": "16"})
    assert small.ids == ["rx-9070-xt"] and small.exact
    # without the memory size the two 64-CU cards stay apart only by assumption, and the note says so
    m = catalog.resolve(None, {"arch": "gfx1201", "cu_per_gpu": "64"})
    assert m.ids == ["radeon-ai-pro-r9700"] and not m.exact and "memory size would tell it from rx-9070-xt" in m.note


def test_resolve_an_unknown_model_of_known_silicon_gets_the_closest_with_a_note(catalog):
    small = _without(catalog, r"^l20$")
    m = small.resolve("NVIDIA L20", {"compute_capability": "8.9", "sm_count": "92"})
    assert m == DeviceMatch(["l40s"], False, "NVIDIA L20 is not in the catalog; closest of the same silicon (AD102): "
                                             "l40s — add it on the Hardware page.")
    # a GeForce card is judged on the GeForce device of its chip, not on a data-centre one of the same SM count
    geforce = small.resolve("NVIDIA GeForce RTX 4090 D", {"compute_capability": "8.9", "sm_count": "114"})
    assert geforce.ids == ["rtx-4090"] and not geforce.exact
    # without an SM count, sm_89 spans five chips: no device
    m = small.resolve("NVIDIA L20", {"compute_capability": "8.9"})
    assert m.ids == [] and m.note.startswith("NVIDIA L20 is not in the catalog, and sm_89 does not say which silicon")


def test_resolve_unknown_silicon_is_no_device_with_a_note_saying_so(catalog):
    m = catalog.resolve("Intel Data Center GPU Max 1550", {})
    assert m.ids == [] and "no architecture" in m.note
    m = catalog.resolve(None, {"arch": "gfx1030", "cu_per_gpu": "80"})
    assert m.ids == [] and m.note == ("gfx1030 with 80 CUs is an architecture the catalog has no device of — add it "
                                      "on the Hardware page.")
    m = catalog.resolve("NVIDIA B300", {})
    assert m.ids in ([], ["b300"])


@pytest.mark.parametrize("meta", [{}, {"arch": "sm_70"}, {"arch": "sm_70", "sm_count": "80"},
                                  {"compute_capability": "7.0", "sm_count": "80", "memory_gb": "16"}])
def test_resolve_a_v100_never_becomes_an_a100(catalog, meta):
    small = _without(catalog, r"v100")
    for name in ("Tesla V100-SXM2-16GB", "Tesla V100-DGXS-32GB", None):
        m = small.resolve(name, meta)
        assert m.ids == [] and m.note, (name, meta, m)
        if meta.get("arch") or meta.get("compute_capability"):
            assert "sm_70" in m.note
    assert catalog.resolve("Tesla V100-SXM2-16GB", {"arch": "sm_70"}).ids == ["v100-sxm2-16gb"]


def test_resolve_a_count_that_contradicts_the_name_is_no_device(catalog):
    m = catalog.resolve("AMD Instinct MI300X", {"cu_per_gpu": "38", "compute_partition": "CPX"})
    assert m.ids == [] and m.note == ("AMD Instinct MI300X has 304 CUs in the catalog (mi300x) but the profile reports "
                                      "38 (compute partition CPX): a partition or another model.")


def test_resolve_an_architecture_spanning_several_chips_needs_the_sm_count(catalog):
    m = catalog.resolve(None, {"arch": "sm_120", "compute_capability": "12.0"})
    assert m.ids == [] and m.note.startswith("sm_120 could be any of ") and "rtx-5090" in m.note
    assert catalog.resolve(None, {"arch": "sm_120", "sm_count": "170"}).ids == ["rtx-5090"]


def test_memory_sizes_in_every_unit_a_parser_writes():
    gib = 2**30
    assert memory_of({"memory_bytes": str(192 * gib)}) == (192 * gib, "192 GiB")
    assert memory_of({"gpu_memory": str(64 * 2**20)}) == (64 * gib, "64 GiB")  # KiB
    assert memory_of({"total_memory": "32768"}) == (32 * gib, "32 GiB")  # MiB
    assert memory_of({"memory_gb": "64"}) == (64e9, "64 GB")
    assert memory_of({"memory_gb": "n/a"}) is None and memory_of(None) is None


def test_the_cli_prints_the_reasoning_on_the_device_line(capsys):
    from roofcore.cli import main

    assert main(["analyze", str(DATA / "kineto" / "radeon_graphics_gfx942.pt.trace.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("Profiled on: AMD Radeon Graphics (gfx942). AMD Radeon Graphics is a marketing name; gfx942 "
                        "with 304 CUs is taken as the AMD Instinct MI300X (mi300x); the memory size would tell it "
                        "from mi325x.")
    assert "== AMD Instinct MI300X (mi300x)" in "\n".join(lines)


def test_a_users_device_names_its_architecture_with_an_alias(catalog):
    from roofcore.catalog import load_bytes

    raw = (DATA / "good_catalog.yaml").read_text().replace("  name: Acme X1\n",
                                                           "  name: Acme X1\n  aliases: [\"Acme X1\", \"gfx1030\"]\n")
    hw = load_bytes(raw.encode(), "mine.yaml")[0][0]
    assert catalog.resolve(None, {"arch": "gfx1030"}).ids == []
    mine = catalog.with_device(hw)
    m = mine.resolve("AMD Radeon Graphics", {"arch": "gfx1030", "memory_gb": "96"})
    assert (m.ids, m.exact) == (["acme-x1"], True) and "gfx1030 with 96 GB is the Acme X1 (acme-x1)" in m.note


def test_the_device_line_names_an_architecture_told_only_by_kernel_names(catalog):
    """A file with no device column whose kernel names gave its gfx id (meta gpu_arch) still gets the device line
    with the reasoning: which catalog device that architecture is taken as, and what would tell it apart."""
    import roofcore
    from roofcore.cli.analysis import device_line, device_note

    w = roofcore.read(DATA / "kineto" / "radeon_graphics_gfx942.pt.trace.json")
    w = replace(w, device=None, meta={"gpu_arch": "gfx1201"})
    a = roofcore.analyze(w, [catalog.get("radeon-ai-pro-r9700")])
    assert device_line(a, device_note(catalog, a)) == (
        "Profiled on: gfx1201. gfx1201 is taken as the AMD Radeon AI PRO R9700 (radeon-ai-pro-r9700); the CU count "
        "and memory size would tell it from rx-9070-xt.")
