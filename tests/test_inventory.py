"""Kernel inventories (CSV, YAML with ops): parsing, partial skips, and one broken fixture per message."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from roofcore import OPS, InputError, ingest
from roofcore.ingest import aggregate

BAD = Path(__file__).parent / "data" / "bad_inventories"


def test_csv_with_units_quotes_bom_crlf_and_bad_rows():
    text = ('\ufeffname,count,flops,bytes,bytes_l2,time_ms,precision,unit,group\r\n'
            '"gemm<float>(a, b) <script>x</script>",2,2.1 GFLOP,80 MB,,3,bfloat16,matrix,attn\r\n'
            'ln,1,"1,000,000",4e6,8e6,0.01,bf16,,norm\r\n'
            'bad,1,abc,4e6,,0.01,,,\r\n'
            'neg,1,5,-4,,0.01,,,\r\n')
    w = ingest.read(text.encode(), name="k.csv")
    f = w.frame
    assert list(f["name"]) == ["gemm<float>(a, b) <script>x</script>", "ln"]
    assert f["flops"].tolist() == [2.1e9, 1e6]
    assert f["bytes_hbm"].tolist() == [80e6, 4e6]
    assert np.isnan(f["bytes_l2"][0]) and f["bytes_l2"][1] == 8e6
    assert f["time_s"].tolist() == pytest.approx([3e-3, 1e-5])
    assert f["precision"].tolist() == ["bf16", "bf16"]
    assert f["unit"][0] == "matrix" and pd.isna(f["unit"][1])
    assert f["count"].tolist() == [2, 1]
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("3", 'flops: expected a non-negative quantity in FLOP such as "2.1 GFLOP", found \'abc\''),
        ("4", "bytes: expected a non-negative number, found '-4'"),
    ]


def test_yaml_ops_are_per_launch_times_count():
    text = b"""
name: demo
kernels:
  - {name: qk, op: matmul, m: 2048, n: 2048, k: 128, dtype: bf16, count: 4, time_ms: 2}
  - {name: add, op: elementwise, elements: 1000, inputs: 2, outputs: 1, dtype: fp32}
  - {name: ln, op: layernorm, rows: 8, hidden: 1024, dtype: fp16, group: norm}
  - {name: d, op: dot, n: 1000, dtype: bf16}
  - {name: raw, flops: 2 GFLOP, bytes: 1 GB, bytes_l2: 3 GB, time: 1.5 ms, precision: fp32, unit: vector}
"""
    w = ingest.read(text, name="w.yaml")
    f = w.frame.set_index("name")
    assert w.name == "demo"
    assert f.loc["qk", "flops"] == 4 * 2 * 2048 * 2048 * 128
    assert f.loc["qk", "bytes_hbm"] == 4 * (2048 * 128 + 128 * 2048 + 2048 * 2048) * 2
    assert f.loc["qk", "time_s"] == pytest.approx(2e-3)
    assert (f.loc["qk", "precision"], f.loc["qk", "unit"]) == ("bf16", "matrix")
    assert f.loc["add", "bytes_hbm"] == 3 * 1000 * 4 and f.loc["add", "flops"] == 1000
    assert f.loc["ln", "flops"] == 7 * 8 * 1024 and f.loc["ln", "bytes_hbm"] == (2 * 8 * 1024 + 2 * 1024) * 2
    assert f.loc["d", "flops"] == 1999 and f.loc["d", "bytes_hbm"] == 2001 * 2
    assert f.loc["raw", "bytes_l2"] == 3e9 and f.loc["raw", "time_s"] == pytest.approx(1.5e-3)


def test_yaml_bad_kernel_is_skipped_with_its_path():
    text = b"kernels:\n  - {name: ok, flops: 1e9, bytes: 1e6}\n  - {name: bad, op: matmul, m: 1, n: 1, dtype: bf16}\n"
    w = ingest.read(text, name="w.yaml")
    assert len(w) == 1
    assert [(s.row, s.reason) for s in w.skipped] == [
        ("$.kernels[1]", "expected parameter 'k' for op matmul, found none. Hint: matmul takes m, n, k, dtype; "
                         "optional a_dtype, b_dtype, out_dtype, acc_dtype.")]


def test_bundled_example_parses():
    w = ingest.read(Path(__file__).parent.parent / "examples" / "transformer_block.yaml")
    assert len(w) == 12 and w.skipped == ()
    assert w.frame["flops"].gt(0).all()


def test_aggregate_sums_launches():
    text = b"name,flops,bytes,time_us\na,1,10,1\nb,5,50,5\na,2,20,3\n"
    w = aggregate(ingest.read(text, name="x.csv"))
    f = w.frame.set_index("name")
    assert f.loc["a", "count"] == 2 and f.loc["a", "flops"] == 3 and f.loc["a", "bytes_hbm"] == 30
    assert f.loc["a", "time_s"] == pytest.approx(4e-6)
    assert f.loc["b", "count"] == 1 and w.warnings == ()


def test_aggregate_keeps_launches_with_an_unknown_value_apart():
    """A launch whose time (or FLOPs, or bytes) is unknown is never summed with launches that have it: the sum
    would be a bound, and a rate of the FLOPs of three launches over the time of two. The known launches keep
    their sum, the others a row of their own, and a warning says so; a kernel's count of launches is unchanged."""
    text = b"name,flops,bytes,time_us\na,1,10,1\nb,5,50,5\na,2,20,\na,4,40,3\nb,,50,5\n"
    w = aggregate(ingest.read(text, name="x.csv"))
    rows = sorted(w.frame[["name", "count", "flops", "time_s"]].itertuples(index=False), key=str)
    assert [(r.name, r.count) for r in rows] == [("a", 1), ("a", 2), ("b", 1), ("b", 1)]
    a_known = next(r for r in rows if r.name == "a" and r.count == 2)
    assert a_known.flops == 5 and a_known.time_s == pytest.approx(4e-6)
    a_untimed = next(r for r in rows if r.name == "a" and r.count == 1)
    assert a_untimed.flops == 2 and math.isnan(a_untimed.time_s)
    assert w.warnings == ("combining repeated launches: 2 kernel(s) keep more than one row, their launches whose "
                          "FLOPs, bytes or time are unknown apart from those that have them (summed together the "
                          "kernel's total would be unknown, or a bound without them)",)


def test_format_override_and_unknown_format():
    with pytest.raises(InputError) as e:
        ingest.read(b"name,flops,bytes\na,1,2\n", name="x.csv", fmt="inventory-csvv")
    assert str(e.value) == (f"--format: expected one of {', '.join(sorted(ingest.FORMATS))}, found 'inventory-csvv'. "
                            "Hint: did you mean 'inventory-csv'?")


MESSAGES = [
    ('bad_precision.csv',
     "bad_precision.csv: row 1: no usable rows; the first problem: precision: expected fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4, found 'bfloat17'. Hint: fix the values (numbers ≥ 0, units matching the column) and load again."),
    ('empty.csv',
     'empty.csv: expected a workload file (CSV or YAML), found an empty file. Hint: export again, or check that the right file was chosen.'),
    ('header_only.csv',
     'header_only.csv: expected at least one kernel row, found a header only.'),
    ('image.csv',
     'image.csv: expected a text workload file (CSV or YAML), found binary data (a PNG image). Hint: is this the right file? A renamed file keeps its content.'),
    ('missing_bytes_column.csv',
     'missing_bytes_column.csv: header: expected an off-chip bytes column (bytes, bytes_hbm or bytes_dram), found none. Hint: the off-chip roof needs the bytes each kernel moves to and from DRAM/HBM.'),
    ('missing_name_column.csv',
     "missing_name_column.csv: header: expected column 'name', found none. Hint: columns present: kernel, flops, bytes; an inventory needs name, flops and bytes."),
    ('negative.csv',
     'negative.csv: row 1: no usable rows; the first problem: flops: expected a non-negative number, found -1e+09. Hint: fix the values (numbers ≥ 0, units matching the column) and load again.'),
    ('no_kernels.yaml',
     'no_kernels.yaml: $.kernels: expected a list of kernels, found an empty list. Hint: each kernel has a name and flops/bytes, or an op with its shapes.'),
    ('non_numeric.csv',
     'non_numeric.csv: row 1: no usable rows; the first problem: flops: expected a non-negative quantity in FLOP such as "2.1 GFLOP", found \'lots\'. Hint: fix the values (numbers ≥ 0, units matching the column) and load again.'),
    ('op_and_numbers.yaml',
     'op_and_numbers.yaml: $.kernels[0]: no usable kernels; the first problem: expected either an op or flops/bytes, found both. Hint: an op derives FLOPs and bytes from its shapes; drop one of the two.'),
    ('op_missing_param.yaml',
     "op_missing_param.yaml: $.kernels[0]: no usable kernels; the first problem: expected parameter 'k' for op matmul, found none. Hint: matmul takes m, n, k, dtype; optional a_dtype, b_dtype, out_dtype, acc_dtype."),
    ('op_negative.yaml',
     'op_negative.yaml: $.kernels[0].m: no usable kernels; the first problem: expected a non-negative number, found -4.'),
    ('two_time_columns.csv',
     'two_time_columns.csv: header: expected one time column, found time_ms, time_us. Hint: keep one of time_s, time_ms, time_us.'),
    ('unknown_column.csv',
     "unknown_column.csv: header: expected known columns (name, count, flops, bytes, bytes_<level>, time_s|time_ms|time_us, precision, unit, group), found unknown column 'latency'. Hint: rename or remove it."),
    ('unknown_op.yaml',
     f"unknown_op.yaml: $.kernels[0].op: no usable kernels; the first problem: expected one of {', '.join(sorted(OPS))}, "
     "found 'matmull'. Hint: did you mean 'matmul'?"),
    ('wrong_unit.csv',
     'wrong_unit.csv: row 1: no usable rows; the first problem: bytes: expected a non-negative quantity in B such as "80 GB" or "96 GiB", found \'3 ms\', a quantity in s. Hint: fix the values (numbers ≥ 0, units matching the column) and load again.'),
    ('yaml_unknown_key.yaml',
     "yaml_unknown_key.yaml: $.kernels[0].colour: no usable kernels; the first problem: expected a kernel key (name, count, flops, bytes, bytes_<level>, time_s|time_ms|time_us, precision, unit, group) or op, found unknown key 'colour'. Hint: op parameters (m, n, k, ...) need `op:` on the same kernel."),
    ('yaml_wrong_unit.yaml',
     'yaml_wrong_unit.yaml: $.kernels[0].bytes: no usable kernels; the first problem: expected a non-negative quantity in B such as "80 GB" or "96 GiB", found \'1 GFLOP\', a quantity in FLOP. Hint: this field takes B; check the field and the unit.'),
    ('zero_count.csv',
     'zero_count.csv: row 1: no usable rows; the first problem: count: expected a whole number of launches ≥ 1, found 0. Hint: fix the values (numbers ≥ 0, units matching the column) and load again.'),
]


@pytest.mark.parametrize("name,message", MESSAGES)
def test_bad_inventory_messages(name, message, monkeypatch):
    monkeypatch.chdir(BAD)
    with pytest.raises(InputError) as e:
        ingest.read(name)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)


def test_every_bad_fixture_has_a_pinned_message():
    assert {p.name for p in BAD.iterdir()} == {n for n, _ in MESSAGES}
