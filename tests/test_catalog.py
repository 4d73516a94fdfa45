"""Catalog loading: the shipped catalogs, user catalogs, and one broken fixture per promised message."""

import json
import os
from pathlib import Path

import jsonschema
import pytest
import yaml

from roofcore import CatalogError, UnknownHardwareError, load_catalogs
from roofcore.catalog import BUILTIN_DIR, SCHEMA_PATH, hardware_to_yaml, load_bytes, load_file

DATA = Path(__file__).parent / "data"
BAD = DATA / "bad_catalogs"
SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"

#: catalog id -> one device name a profiler printed for it in ../shared/samples (PROVENANCE.md)
SAMPLE_GPU_NAMES = {
    "v100-sxm2-16gb": "Tesla V100-SXM2-16GB", "v100-sxm2-32gb": "Tesla V100-DGXS-32GB", "t4": "Tesla T4",
    "rtx-2080-ti": "NVIDIA GeForce RTX 2080 Ti", "rtx-3070": "NVIDIA GeForce RTX 3070",
    "gtx-1080": "NVIDIA GeForce GTX 1080", "gtx-1060-6gb": "NVIDIA GeForce GTX 1060",
    "a100-40gb-pcie": "NVIDIA A100-PCIE-40GB", "rtx-5070": "NVIDIA GeForce RTX 5070", "mi100": "AMD Instinct MI100",
    "mi210": "AMD Instinct MI210", "mi300a": "AMD Instinct MI300A", "mi350x": "AMD Instinct MI350X",
}
#: NVIDIA and AMD GPUs whose L2 bandwidth has a source (theoretical or measured); the others say why in their notes
WITH_L2 = {"a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "h100-sxm", "h200-sxm", "v100-sxm2-16gb",
           "v100-sxm2-32gb", "mi100", "mi210", "mi250x-gcd", "mi250x", "mi300x", "mi325x", "mi300a", "mi350x",
           "a800-sxm", "h800-sxm", "mi355x", "mi50", "mi60"}
#: memory levels from the core outwards: each one's roof is at least the next one's where a device has both
LEVEL_ORDER = ("lds", "l1", "l2", "mall", "hbm")


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs(use_env=False)


def test_every_shipped_catalog_validates_against_the_schema():
    schema = json.loads(SCHEMA_PATH.read_text())
    files = sorted(BUILTIN_DIR.glob("*.yaml"))
    assert len(files) >= 5
    for f in files:
        jsonschema.validate(yaml.safe_load(f.read_text()), schema)
        assert load_file(f), f


def test_catalog_covers_the_product_list(catalog):
    ids = set(catalog.ids)
    required = {"a100-40gb-sxm", "a100-80gb-sxm", "h100-sxm", "h100-pcie", "h200-sxm", "b200", "l4", "l40s", "rtx-4090",
                "mi250x-gcd", "mi250x", "mi300x", "mi325x", "tpu-v1", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e",
                "tpu-v7x", "gaudi2", "gaudi3", "amd-epyc-9654", "intel-xeon-8480"}
    assert required <= ids
    assert set(SAMPLE_GPU_NAMES) <= ids  # the GPUs the real samples ran on
    assert len(ids) >= 22
    assert len({h.vendor for h in catalog}) >= 5
    assert all(h.unverified for h in catalog if h.vendor == "Apple")
    assert any(h.kind.value == "cpu" for h in catalog)


def test_every_figure_has_a_source_and_no_peak_is_sparse(catalog):
    for h in catalog:
        for c in h.ceilings:
            assert c.figure.source.strip(), (h.id, c.key)
            if c.sparse:
                assert c.peak < c.sparse and c.sparse == pytest.approx(2 * c.peak, rel=0.02), (h.id, c.key)
            if c.achievable:
                assert c.achievable_figure.source and c.achievable <= c.peak
        for res in (*h.levels, *h.links):
            assert res.figure.source.strip(), (h.id, res.name)
        assert h.levels[0].name == "hbm"


@pytest.mark.parametrize("hw_id,ceiling,peak", [
    # the vendors' dense numbers; the sparse headline would be twice these
    ("h100-sxm", "bf16-matrix", 989e12), ("h100-sxm", "fp8-matrix", 1979e12), ("b200", "fp8-matrix", 4500e12),
    ("b200", "fp4-matrix", 9000e12), ("a100-80gb-sxm", "bf16-matrix", 312e12), ("mi300x", "bf16-matrix", 1307.4e12),
    ("gaudi3", "bf16-matrix", 1677e12), ("tpu-v5e", "bf16-matrix", 197e12), ("tpu-v1", "int8-matrix", 92e12),
    ("v100-sxm2-16gb", "fp16-matrix", 125e12), ("t4", "fp16-matrix", 65e12), ("a100-40gb-pcie", "bf16-matrix", 312e12),
    ("mi100", "bf16-matrix", 92.3e12), ("mi210", "fp64-matrix", 45.3e12), ("mi300a", "bf16-matrix", 980.6e12),
    # GeForce Blackwell: the FP32-accumulate tensor rate (half the FP16-accumulate one), never the sparse figure
    ("rtx-5090", "bf16-matrix", 209.5e12), ("rtx-5090", "fp8-matrix", 419e12), ("rtx-5090", "fp4-matrix", 1676e12),
    ("radeon-ai-pro-r9700", "fp16-matrix", 191e12), ("radeon-ai-pro-r9700", "fp32-vector", 47.8e12),
])
def test_known_dense_peaks(catalog, hw_id, ceiling, peak):
    assert catalog.get(hw_id).ceiling_map[ceiling].peak == pytest.approx(peak)


def test_units_are_converted_once(catalog):
    h = catalog.get("h100-sxm")
    assert h.offchip.bandwidth == 3.35e12 and h.offchip.capacity == 80e9
    assert catalog.get("tpu-v5p").offchip.capacity == 95 * 2**30
    assert h.link_map["nvlink"].bandwidth == 450e9  # per direction


def test_unknown_id_lists_the_closest(catalog):
    with pytest.raises(UnknownHardwareError) as e:
        catalog.get("h100")
    # the model's own devices come first; the third is the nearest spelling (mi100 once the MI100 was catalogued)
    assert str(e.value).startswith("unknown hardware id 'h100'; closest: h100-sxm, h100-pcie, ")
    assert catalog.closest("NVIDIA H100 80GB HBM3") == ["h100-sxm"]


MESSAGES = [
    ('bad_default.yaml',
     "bad_default.yaml: $.devices[0].default_ceiling: expected one of the device's ceilings: bf16-matrix, found 'fp8-matrix'. Hint: add that ceiling under `compute` or pick a listed one."),
    ('bad_enum.yaml',
     "bad_enum.yaml: $.devices[0].compute[0].precision: expected one of fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4, found 'bfloat16'. Hint: values are lower-case."),
    ('binary.yaml',
     'binary.yaml: expected a YAML text file, found binary data. Hint: is this the right file? Catalogs are UTF-8 YAML.'),
    ('bits.yaml',
     'bits.yaml: $.devices[0].memory[0].bandwidth: expected a non-negative quantity in B/s such as "3.35 TB/s", found \'16 Tb/s\'. Hint: a lowercase b means bits; write bytes with a capital B (e.g. GB/s).'),
    ('dup_id.yaml',
     "dup_id.yaml: $.devices[1].id: expected an id not used before, found 'acme-x1', also at $.devices[0]. Hint: ids are unique; rename one of the two devices."),
    ('empty.yaml',
     'empty.yaml: expected a YAML catalog with schema_version and devices, found an empty file. Hint: see catalogs/README.md for the shape.'),
    ('implausible.yaml',
     "implausible.yaml: $.devices[0].memory[0].bandwidth: expected a plausible figure (below 50 TB/s), found '2 PB/s'. Hint: a prefix is probably wrong (T for G, P for T)."),
    ('invalid.yaml',
     "invalid.yaml: line 4, column 1: invalid YAML: expected ',' or ']', but got '<stream end>'. Hint: check indentation and quoting (quote strings containing ':' or '#')."),
    ('list.yaml',
     'list.yaml: expected a mapping with schema_version and devices, found a YAML list. Hint: see catalogs/README.md for the shape.'),
    ('missing_key.yaml',
     "missing_key.yaml: $.devices[0].memory[0]: expected key 'bandwidth', found none. Hint: keys present: level, capacity, source; see catalogs/README.md."),
    ('negative.yaml',
     'negative.yaml: $.devices[0].compute[0].peak: expected a positive quantity in FLOP/s such as "989 TFLOP/s" (or TOPS for integer ops), found \'-400 TFLOP/s\'. Hint: figures are magnitudes; a zero or negative value is a typo.'),
    ('non_numeric.yaml',
     'non_numeric.yaml: $.devices[0].memory[0].capacity: expected a non-negative quantity in B such as "80 GB" or "96 GiB", found \'lots\'. Hint: write a number, then a unit, e.g. "80 GB" or "96 GiB".'),
    ('not_hbm_first.yaml',
     "not_hbm_first.yaml: $.devices[0].memory[0].level: expected the off-chip level 'hbm' first, found 'l2'. Hint: list off-chip memory first as `level: hbm` (give the technology in `label`)."),
    ('sparse_equal.yaml',
     "sparse_equal.yaml: $.devices[0].compute[0].peak: expected a dense peak below the sparse figure '800 TFLOP/s', found '800 TFLOP/s', which looks like the sparse figure. Hint: with 2:4 sparsity vendors quote twice the dense rate; the roof is the dense one."),
    ('sparse_text.yaml',
     "sparse_text.yaml: $.devices[0].compute[0].peak: expected a dense peak, found '800 TFLOP/s with sparsity', a sparse figure. Hint: put the sparse figure under `sparse:` and the dense one (half of it) under `peak:`."),
    ('undeclared_source.yaml',
     "undeclared_source.yaml: $.devices[0].memory[0].source: expected a source id declared under `sources`, found 'S9'. Hint: declared ids: S1; or write the document itself."),
    ('unknown_key.yaml',
     "unknown_key.yaml: $.devices[0].memory[0].bandwith: expected a known key, found unknown key 'bandwith'. Hint: did you mean 'bandwidth'?"),
    ('version.yaml',
     'version.yaml: $.schema_version: expected 1, found 2. Hint: this roofcore reads schema version 1.'),
    ('wrong_unit.yaml',
     'wrong_unit.yaml: $.devices[0].memory[0].bandwidth: expected a non-negative quantity in B/s such as "3.35 TB/s", found \'2 TFLOP/s\', a quantity in FLOP/s. Hint: this field takes B/s; check the field and the unit.'),
]


@pytest.mark.parametrize("name,message", MESSAGES)
def test_bad_catalog_messages(name, message, monkeypatch):
    monkeypatch.chdir(BAD)
    with pytest.raises(CatalogError) as e:
        load_file(name)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


def test_every_bad_fixture_has_a_pinned_message():
    assert {p.name for p in BAD.glob("*.yaml")} == {n for n, _ in MESSAGES}


def test_user_catalog_from_flag_and_environment(tmp_path, monkeypatch):
    good = (DATA / "good_catalog.yaml").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "acme.yaml").write_text(good)
    cat = load_catalogs([tmp_path / "a"], use_env=False)
    assert cat.get("acme-x1").offchip.capacity == 96 * 2**30
    other = tmp_path / "b.yaml"
    other.write_text(good.replace("acme-x1", "acme-x2"))
    monkeypatch.setenv("ROOFCORE_CATALOG_PATH", os.pathsep.join([str(tmp_path / "a"), str(other)]))
    cat = load_catalogs()
    assert {"acme-x1", "acme-x2"} <= set(cat.ids)


def test_reusing_a_builtin_id_needs_overrides(tmp_path):
    doc = yaml.safe_load((DATA / "good_catalog.yaml").read_text())
    doc["devices"][0]["id"] = "h100-sxm"
    f = tmp_path / "mine.yaml"
    f.write_text(yaml.safe_dump(doc))
    with pytest.raises(CatalogError) as e:
        load_catalogs([f], use_env=False)
    assert str(e.value).startswith(f"{f}: device 'h100-sxm': expected an id not used before, found 'h100-sxm', "
                                   "already defined in ")
    assert str(e.value).endswith("Hint: rename it, or add `overrides: true` to replace the earlier device.")
    doc["devices"][0]["overrides"] = True
    f.write_text(yaml.safe_dump(doc))
    cat = load_catalogs([f], use_env=False)
    assert cat.get("h100-sxm").name == "Acme X1"
    assert "h100-sxm" in cat.replaced


def test_missing_catalog_path(tmp_path):
    with pytest.raises(CatalogError) as e:
        load_catalogs([tmp_path / "nope"], use_env=False)
    assert str(e.value).endswith("expected a catalog file or folder, found nothing at that path. "
                                 "Hint: check --catalog and ROOFCORE_CATALOG_PATH.")


def test_device_yaml_round_trips(catalog):
    for h in catalog:
        again = load_bytes(hardware_to_yaml(h).encode(), "roundtrip.yaml")[0][0]
        assert again.ceiling_map.keys() == h.ceiling_map.keys()
        for k, c in h.ceiling_map.items():
            assert again.ceiling_map[k].peak == pytest.approx(c.peak, rel=1e-6)
        assert [lv.bandwidth for lv in again.levels] == pytest.approx([lv.bandwidth for lv in h.levels], rel=1e-6)


def test_a_numeric_source_id_is_a_catalog_error():
    """Found by the long fuzz run: YAML reads `+2:` as the number 2, which the JSON Schema does not check."""
    from roofcore.catalog import load_bytes

    raw = (Path(__file__).parent / "data" / "good_catalog.yaml").read_bytes().replace(b"  S1: Acme", b"  +2: x\n  S1: Acme")
    with pytest.raises(CatalogError) as e:
        load_bytes(raw, "x.yaml")
    assert str(e.value) == ("x.yaml: $.sources: expected source ids that are text (S1, S2, ...), found the int 2. "
                            "Hint: quote it, or start it with a letter: S2 rather than 2.")


def test_numeric_keys_inside_a_device_are_a_catalog_error():
    """Found by the fuzz run at the lower bounds: jsonschema 4.18 fails sorting a mix of number and text extras;
    every key is checked for text before the schema is asked."""
    from roofcore.catalog import load_bytes

    raw = (Path(__file__).parent / "data" / "good_catalog.yaml").read_bytes()
    raw = raw.replace(b"- id: ", b"- 1: 2\n  234: 3\n  '567.00link': 4\n  id: ", 1)
    with pytest.raises(CatalogError) as e:
        load_bytes(raw, "x.yaml")
    assert str(e.value) == ("x.yaml: $.devices[0]: expected keys that are text, found the int 1. "
                            "Hint: quote it; keys are the field names the catalog schema lists.")


# --------------------------------------------------------------------------------------------- on-chip levels

def test_the_sample_gpus_carry_the_names_their_profilers_print(catalog):
    for hw_id, name in SAMPLE_GPU_NAMES.items():
        assert name in catalog.get(hw_id).aliases, hw_id
    assert {"gfx908", "gfx90a", "gfx942", "gfx950"} <= {a for h in catalog for a in h.aliases}


def test_every_gpu_with_off_chip_memory_has_an_l2_roof_or_says_why_not(catalog):
    assert WITH_L2 <= set(catalog.ids)
    for h in catalog:
        if h.kind.value != "gpu" or h.vendor not in ("NVIDIA", "AMD"):
            continue
        assert len(h.levels) >= 2, f"{h.id} has no on-chip roof"
        has_l2 = "l2" in {lv.name for lv in h.levels}
        assert has_l2 == (h.id in WITH_L2), h.id
        if not has_l2:  # a reader must learn why L2 bytes find no roof on this device
            assert "no L2 roof" in (h.notes or ""), h.id


def test_every_on_chip_figure_is_theoretical_with_a_derivation_or_measured_never_both(catalog):
    n = 0
    for h in catalog:
        for lv in h.levels[1:]:
            f, n = lv.figure, n + 1
            theoretical = bool((f.derivation or "").strip()) and not f.measured
            measured = f.measured and not (f.derivation or "").strip()
            assert theoretical != measured, (h.id, lv.name)
            assert f.source.strip(), (h.id, lv.name)
            if theoretical:  # bytes per clock x units x clock, written out
                assert "B/clk" in f.derivation, (h.id, lv.name, f.derivation)
            if lv.achievable is not None:  # a measurement sits beside a theoretical roof, never on a measured one
                assert theoretical and lv.achievable_figure.measured and lv.achievable_figure.source.strip()
                assert lv.achievable <= lv.bandwidth, (h.id, lv.name)
    assert n >= 45  # every NVIDIA and AMD GPU has at least one on-chip level


def test_on_chip_bandwidths_shrink_from_the_core_outwards(catalog):
    for h in catalog:
        bw = {lv.name: lv.bandwidth for lv in h.levels}
        chain = [(name, bw[name]) for name in LEVEL_ORDER if name in bw]
        for (inner, b_in), (outer, b_out) in zip(chain, chain[1:]):
            assert b_in >= b_out, f"{h.id}: {inner} {b_in:.3g} B/s below {outer} {b_out:.3g} B/s"


@pytest.mark.parametrize("hw_id,level,units,bytes_per_clock,clock_hz", [
    ("a100-40gb-sxm", "l2", 1, 5120, 1.41e9),   # A100 whitepaper: 5,120 B/clk of L2 read bandwidth at 1,410 MHz
    ("a100-40gb-sxm", "l1", 108, 128, 1.41e9),  # 108 SMs x 32 banks x 4 B per clock
    ("v100-sxm2-16gb", "l2", 1, 2048, 1.53e9),  # the same whitepaper's V100 figure, at 1,530 MHz
    ("mi300x", "l2", 128, 128, 2.1e9),          # 128 L2 channels x 128 B/clk (rocprof-compute's gfx942 peak)
    ("mi210", "lds", 104, 128, 1.7e9),          # 104 CUs x 128 B/clk of LDS
])
def test_theoretical_on_chip_roofs_recomputed(catalog, hw_id, level, units, bytes_per_clock, clock_hz):
    lv = {lv.name: lv for lv in catalog.get(hw_id).levels}[level]
    assert lv.bandwidth == pytest.approx(units * bytes_per_clock * clock_hz, rel=1e-3)
    assert not lv.figure.measured and lv.figure.derivation


def test_the_a100_sgemm_sample_lands_its_l2_and_l1_bytes_on_roofs(catalog):
    """Issue 13: the A100 SGEMM was 'memory:l2' on H100 but judged on compute alone on the A100 it ran on."""
    if not SAMPLES.is_dir():
        pytest.skip(f"{SAMPLES} is absent (a fresh clone)")
    import roofcore

    w = roofcore.read_many([SAMPLES / "ncu_details_a100_interpolate_sgemm.csv"])
    assert w.frame["bytes_l2"].notna().all() and w.frame["bytes_l1"].notna().all()
    a = roofcore.analyze(w, [catalog.get("a100-40gb-sxm"), catalog.get("h100-sxm")])
    for hw_id in ("a100-40gb-sxm", "h100-sxm"):
        t = a.table(hw_id)
        codes = {f["code"] for flags in t["flags"] for f in flags}
        assert "level-not-on-device" not in codes, hw_id
        assert list(t["bound"]) == ["memory:l2", "memory:l2"], hw_id

