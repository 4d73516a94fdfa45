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
    # the dense numbers HARDWARE.md gives; the sparse headline would be twice these
    ("h100-sxm", "bf16-matrix", 989e12), ("h100-sxm", "fp8-matrix", 1979e12), ("b200", "fp8-matrix", 4500e12),
    ("b200", "fp4-matrix", 9000e12), ("a100-80gb-sxm", "bf16-matrix", 312e12), ("mi300x", "bf16-matrix", 1307.4e12),
    ("gaudi3", "bf16-matrix", 1677e12), ("tpu-v5e", "bf16-matrix", 197e12), ("tpu-v1", "int8-matrix", 92e12),
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
