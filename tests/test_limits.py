"""Limits (issue #8): each one refuses with a message that names it and how to raise it; YAML is safe."""

from __future__ import annotations

import gzip
import json
import random
import time

import pytest
import yaml

import roofcore
from roofcore import LimitError, limits
from roofcore.catalog import load_bytes
from roofcore.cli import main
from roofcore.ingest import kineto

CSV = b"name,count,flops,bytes,time_s,precision\n" + b"".join(
    b"k%d,1,1e9,1e6,1e-5,bf16\n" % i for i in range(50))


def test_row_limit(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "20")
    with pytest.raises(LimitError) as e:
        roofcore.read(CSV, name="big.csv")
    assert str(e.value) == ("big.csv: 51 rows, above the rows limit of 20 (ROOFCORE_MAX_ROWS). Hint: raise it with "
                            "ROOFCORE_MAX_ROWS=N (0 = no limit); on a shared server the host sets it.")
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "0")  # off
    assert len(roofcore.read(CSV, name="big.csv")) == 50


def test_kernel_limit_counts_every_file_together(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_KERNELS", "60")
    assert len(roofcore.read(CSV, name="a.csv")) == 50
    with pytest.raises(LimitError) as e:
        roofcore.read_many([(CSV, "a.csv"), (CSV, "b.csv")])
    assert str(e.value).startswith("a.csv, b.csv: 100 kernels read from these files, above the kernels limit of 60 "
                                   "(ROOFCORE_MAX_KERNELS).")
    monkeypatch.setenv("ROOFCORE_MAX_KERNELS", "10")
    with pytest.raises(LimitError, match=r"^a.csv: 50 kernels read, above the kernels limit of 10"):
        roofcore.read(CSV, name="a.csv")


def test_size_limit_read_when_called(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_INPUT_MB", "0.001")  # 1 kB
    with pytest.raises(LimitError) as e:
        roofcore.read(CSV, name="a.csv")
    assert str(e.value) == ("a.csv: the input is 0.0 MB, above the input size limit of 0 MB (ROOFCORE_MAX_INPUT_MB). "
                            "Hint: raise it with ROOFCORE_MAX_INPUT_MB=N or --max-input-mb (CLI) (0 = no limit); on "
                            "a shared server the host sets it.")


def test_gzip_bomb_stops_at_the_size_limit(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_INPUT_MB", "1")
    bomb = gzip.compress(b"name,count,flops,bytes,time_s\n" + b"0" * 50_000_000)  # 50 MB from ~50 kB
    assert len(bomb) < 100_000
    with pytest.raises(LimitError, match="expands beyond the input size limit of 1 MB"):
        roofcore.read(bomb, name="bomb.csv.gz")


def test_json_depth_limit_in_both_json_readers(monkeypatch):
    deep = b'{"traceEvents": [' + b"[" * 150 + b"]" * 150 + b"]}"
    with pytest.raises(LimitError, match=r"^t.json: JSON nested 152 levels deep, above the JSON depth limit of 100"):
        kineto.parse(deep, "t.json")
    cost = b'{"flops": 1, "bytes accessed": 2, "x": ' + b"[" * 300 + b"]" * 300 + b"}"
    with pytest.raises(LimitError, match=r"JSON nested 301 levels deep"):
        roofcore.read(cost, name="cost.json", fmt="jax-cost-analysis")
    monkeypatch.setenv("ROOFCORE_MAX_JSON_DEPTH", "400")
    assert len(roofcore.read(cost, name="cost.json", fmt="jax-cost-analysis")) == 1


def test_json_depth_ignores_brackets_in_strings_and_pieces_agree():
    assert limits.check_json_depth(b'{"a": "[[[{{{", "b": [1, {"c": "\\"]]"}]}', "x") == 3
    rng = random.Random(1)
    doc = json.dumps([{"name": 'a\\"b[{' * i + "\\", "v": [[i]] * 3} for i in range(300)]).encode()
    whole = limits.check_json_depth(doc, "x")
    assert whole == 4
    for _ in range(100):
        meter, prev = limits.JsonDepth("x"), 0
        for cut in [*sorted(rng.sample(range(1, len(doc)), 7)), len(doc)]:
            meter.feed(doc[prev:cut])
            prev = cut
        assert (meter.max, meter.depth, meter.in_string) == (whole, 0, False)


def test_parse_timeout_stops_a_slow_read(monkeypatch):
    monkeypatch.setenv("ROOFCORE_PARSE_TIMEOUT_S", "0.05")
    events = ",".join(f'{{"ph": "X", "cat": "kernel", "name": "k{i}", "ts": {i}, "dur": 1}}' for i in range(300_000))
    data = ('{"traceEvents": [' + events + "]}").encode()
    with pytest.raises(LimitError) as e:
        roofcore.read(data, name="slow.json")
    assert str(e.value) == ("slow.json: reading took longer than the parse time limit of 0.05 s "
                            "(ROOFCORE_PARSE_TIMEOUT_S). Hint: raise it with ROOFCORE_PARSE_TIMEOUT_S=N (0 = no limit); "
                            "on a shared server the host sets it.")


def test_deadline_is_per_thread_and_nests():
    with limits.deadline("outer", 0.01):
        time.sleep(0.02)
        with pytest.raises(LimitError, match="outer"):
            limits.tick()
        # a later, looser deadline does not lift the outer one
        with limits.deadline("inner", 100), pytest.raises(LimitError, match="outer"):
            limits.tick()
    limits.tick()  # none outside

    import threading

    seen = []
    with limits.deadline("main thread", 0.001):
        time.sleep(0.01)
        t = threading.Thread(target=lambda: seen.append(limits.DEADLINE.get()))
        t.start()
        t.join()
    assert seen == [None]  # another thread (another app session) has its own


def test_a_malformed_variable_is_named(monkeypatch):
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "lots")
    with pytest.raises(LimitError, match=r"^ROOFCORE_MAX_ROWS='lots': expected a number ≥ 0"):
        roofcore.read(CSV, name="a.csv")


def test_cli_exits_2_with_one_line_on_a_limit(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("ROOFCORE_MAX_ROWS", "5")
    f = tmp_path / "k.csv"
    f.write_bytes(CSV)
    assert main(["analyze", str(f), "--hardware", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ROOFCORE_MAX_ROWS" in err


def test_cli_exits_2_with_one_line_on_a_bug(monkeypatch, capsys, tmp_path):
    f = tmp_path / "k.csv"
    f.write_bytes(CSV)

    def broken(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr("roofcore.cli.analysis.analyze", broken)
    monkeypatch.delenv("ROOFCORE_DEBUG", raising=False)
    assert main(["analyze", str(f), "--hardware", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("roofline: internal error: ZeroDivisionError: boom")


# ---------------------------------------------------------------------------------------------------- YAML

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


@pytest.mark.parametrize("load", [
    lambda text: limits.load_yaml(text, "bomb.yaml"),
    lambda text: roofcore.read((text + "kernels: *i\n").encode(), name="bomb.yaml", fmt="inventory-yaml"),
    lambda text: load_bytes(("schema_version: 1\n" + text).encode(), "bomb.yaml"),
])
def test_yaml_alias_bomb_is_refused_before_expanding(load):
    with pytest.raises(LimitError, match=r"aliases \(\*name references\) expand to [\d,]+ values from \d+ written"):
        load(BOMB)


def test_yaml_is_safe_and_plain_aliases_still_work():
    with pytest.raises(yaml.YAMLError):
        limits.load_yaml("!!python/object/apply:os.system ['echo owned']")
    assert limits.load_yaml("a: &x {p: 1}\nb: *x\n") == {"a": {"p": 1}, "b": {"p": 1}}
    assert limits.load_yaml("") is None
    with pytest.raises(roofcore.InputError, match="invalid YAML"):  # the inventory reader's located message
        roofcore.read(b"kernels:\n  - !!python/name:os.system\n", name="evil.yaml", fmt="inventory-yaml")
