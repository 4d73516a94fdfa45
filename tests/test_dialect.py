"""Spreadsheet and shell re-saves (roofcore/ingest/dialect.py): UTF-16, lone ``\\r`` line ends, tabs or semicolons
between fields, decimal commas. The classes run over every sample and fixture in tests/test_perturb.py (mac_cr,
utf16, tabs_utf16, semicolons); these are the rules themselves and the cases a perturbation does not reach."""

from __future__ import annotations

from pathlib import Path

import pytest

import roofcore
from roofcore import filemap
from roofcore.errors import InputError
from roofcore.ingest import dialect
from roofcore.ingest.dialect import DECIMAL_COMMA_NOTE, LEGACY_NOTE, MAC_NOTE, canonical

HEADER = "name,count,flops,bytes,time_ms,precision,unit,group"
ROWS = [("gemm_a", 1, "8.8e12", "2.8e9", "12.25", "bf16", "matrix", "attention"),
        ("norm_b", 3, "2.7e9", "2.4e9", "4.5", "bf16", "vector", "norm")]


def inventory(sep: str = ",", number=str) -> str:
    lines = [HEADER.replace(",", sep)]
    lines += [sep.join(number(str(v)) if i else str(v) for i, v in enumerate(r)) for r in ROWS]
    return "\n".join(lines) + "\n"


def numbers(w: roofcore.Workload) -> list[tuple]:
    f = w.frame
    return list(zip(f["name"], f["count"], f["flops"], f["time_s"], f["bytes_hbm"], strict=True))


BASE = numbers(roofcore.read(inventory().encode(), name="inv.csv"))


@pytest.mark.parametrize(("token", "mark"), [
    ("0,25", ","), ("3,14159", ","), ("1.234,5", ","), ("1.234.567", ","), ("1,5E+06", ","), ("0,250", ","),
    ("1234,567", ","), ("0.25", "."), ("1,234.5", "."), ("1,234,567", "."), ("1.5e+06", "."), ("7,488", "?"),
    ("7.488", "?"), ("-12,345", "?"), ("1.2.3", ""), ("1,23,4", "")])
def test_what_a_number_says_of_the_decimal_mark(token, mark):
    assert dialect.mark_of(token) == mark


def test_the_parsers_own_dialect_is_passed_through_untouched():
    """Comma CSV, JSON, YAML, console text and binary data come back as the same object (a map stays a map)."""
    for data in (inventory().encode(), b'{"traceEvents": [{"ph": "X"}]}', b"kernels:\n  - name: a; b; c\n",
                 b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"Time (%)  Total Time (ns)  Name\n 50.0  100  a\n",
                 b"==PROF== a;b;c\nID,Process ID,Kernel Name\n1,2,k\n"):
        out, notes = canonical(data, "f")
        assert out is data and not notes


@pytest.mark.parametrize("sep", ["\t", ";"])
def test_a_table_split_by_tabs_or_semicolons_reads_as_its_comma_twin(sep):
    w = roofcore.read(inventory(sep).encode(), name="inv.txt")
    assert numbers(w) == BASE
    assert not any(DECIMAL_COMMA_NOTE in x for x in w.warnings)  # decimal points: nothing guessed, nothing said


def test_decimal_commas_are_read_and_labelled():
    text = inventory(";", lambda v: v.replace(".", ","))  # 12,25 ms, 8,8e12 FLOPs: a decimal-comma locale's CSV
    w = roofcore.read(text.encode(), name="inv.csv")
    assert numbers(w) == BASE
    assert [x for x in w.warnings if DECIMAL_COMMA_NOTE in x] == [f"inv.csv: {DECIMAL_COMMA_NOTE}."]


def test_grouping_points_in_a_decimal_comma_file():
    text = "name;count;flops;bytes;time_ms\nk;1;1.234.567.890;2.500.000,5;0,5\n"
    f = roofcore.read(text.encode(), name="inv.csv").frame
    assert f["flops"].iloc[0] == 1234567890.0 and f["bytes_hbm"].iloc[0] == 2500000.5 and f["time_s"].iloc[0] == 5e-4


def test_numbers_that_could_mean_either_are_refused_not_guessed():
    """``7,488`` is 7.488 with a decimal comma, 7488 with a thousands separator: nothing else in the file tells."""
    text = "name;count;flops;bytes;time_ms\nk;1;1,500;2,250;7,488\n"
    with pytest.raises(InputError) as e:
        roofcore.read(text.encode(), name="inv.csv")
    msg = str(e.value)
    assert "'1,500'" in msg and "semicolon-separated" in msg and "\n" not in msg


def test_thousands_separators_in_a_tab_file_with_decimal_points():
    """A spreadsheet in an English locale: ``7,488`` beside ``0.25`` is seven thousand and some."""
    text = "name\tcount\tflops\tbytes\ttime_ms\nk\t1\t33,619,968\t7,488\t0.25\n"
    f = roofcore.read(text.encode(), name="inv.tsv").frame
    assert f["flops"].iloc[0] == 33619968.0 and f["bytes_hbm"].iloc[0] == 7488.0


def test_utf16_with_either_byte_order():
    for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        data = bom + inventory("\t").replace("\n", "\r\n").encode(encoding)
        assert numbers(roofcore.read(data, name="inv.txt")) == BASE


def test_utf16_that_does_not_decode_says_so():
    data = b"\xff\xfe" + "name,count\r\n".encode("utf-16-le") + b"\x00\xd8" + "x".encode("utf-16-le")  # a lone surrogate
    with pytest.raises(InputError) as e:
        roofcore.read(data, name="inv.csv")
    assert "UTF-16" in str(e.value) and "save the file again as UTF-8" in str(e.value)


@pytest.mark.parametrize(("sep", "hint", "number"), [
    (",", "sep=,", str), (";", "SEP=;", lambda v: v.replace(".", ",")), ("\t", "sep=\t", str), (",", "\ufeffsep=,", str)])
def test_a_spreadsheets_separator_hint_is_a_blank_line(sep, hint, number):
    """``sep=;`` above the table tells a spreadsheet the separator; it holds no data, so it becomes a blank line:
    the table reads as without it, and a message's line number is still the file's."""
    text = hint + "\r\n" + inventory(sep, number).replace("\n", "\r\n")
    assert numbers(roofcore.read(text.encode(), name="inv.csv")) == BASE
    out, _ = canonical(text.encode(), "inv.csv")
    assert out.decode().lstrip("\ufeff").split("\n")[0] in ("", "\r")


def test_after_a_separator_hint_line_numbers_are_the_files():
    table = (Path(__file__).parent / "data" / "nsys" / "kern_sum.csv").read_text() + "5.9,bad,50,1,1,1,1,1,oops\n"
    w = roofcore.read(("sep=,\n" + table).encode(), name="kern_sum.csv")
    assert len(w) == 3 and [s.row for s in w.skipped] == ["line 6"]


def test_a_sep_line_within_the_text_is_data():
    """Only the first line is a hint: ``sep=,`` further down is left to the parser."""
    data = ("# note\nsep=,\n" + inventory()).encode()
    out, notes = canonical(data, "f")
    assert out is data and not notes


@pytest.mark.parametrize(("sep", "name", "numbers"), [
    (",", "", ["0", "1"]), (",", '""', ["3", "17"]), (",", "Unnamed: 0", ["1", "0"]), (";", "", ["0", "1"]),
    ("\t", '"Unnamed: 0"', ["5", "2"])])
def test_a_pandas_index_column_is_dropped(sep, name, numbers):
    """``df.to_csv(path)`` writes pandas' index first: an empty (or ``Unnamed: 0``) name, a whole number on each
    row, in any order once filtered or sorted. The table reads as without it."""
    lines = inventory(sep).splitlines()
    text = "\n".join([name + sep + lines[0], *(n + sep + ln for n, ln in zip(numbers, lines[1:], strict=True))])
    assert numbers_of(text) == BASE


def numbers_of(text: str) -> list[tuple]:
    return numbers(roofcore.read(text.encode(), name="inv.csv"))


def test_an_empty_first_name_over_rows_that_do_not_start_with_a_number_is_no_index():
    data = b",name,count\nx,gemm,1\n"
    out, notes = canonical(data, "f")
    assert out is data and not notes


def test_lone_carriage_returns_end_lines():
    w = roofcore.read(inventory().replace("\n", "\r").encode(), name="inv.csv")
    assert numbers(w) == BASE


def test_a_windows_code_page_is_read_and_said():
    """A semicolon CSV saved by a spreadsheet on Windows: Windows-1252 (``µ`` is 0xB5), decimal commas; read, and
    both conversions said."""
    text = inventory(";", lambda v: v.replace(".", ",")).replace("gemm_a", "gemm_µ_é")
    w = roofcore.read(text.encode("cp1252"), name="inv.csv")
    assert list(w.frame["name"]) == ["gemm_µ_é", "norm_b"]
    assert [x[:9] for x in w.warnings] == ["inv.csv: "] * 2
    assert LEGACY_NOTE in w.warnings[0] and "2 characters outside ASCII, the first 'µ' on line 2" in w.warnings[0]
    assert DECIMAL_COMMA_NOTE in w.warnings[1]


def test_a_classic_mac_file_is_read_in_mac_roman():
    """Lines ended by ``\\r`` alone are a classic Mac's "CSV (Macintosh)", saved in Mac OS Roman, where ``é`` is 0x8E
    (``Ž`` in Windows-1252): the line ends decide the code page, and the warning names it and the line."""
    data = inventory().replace("gemm_a", "gemm_µ_é").encode("mac_roman")
    w = roofcore.read(data.replace(b"\n", b"\r"), name="inv.csv")
    assert list(w.frame["name"]) == ["gemm_µ_é", "norm_b"]
    assert MAC_NOTE in w.warnings[0] and "the first 'µ' on line 2" in w.warnings[0]
    windows = roofcore.read(data.replace(b"\n", b"\r\n"), name="inv.csv")  # the same bytes, Windows line ends
    assert list(windows.frame["name"]) == ["gemm_µ_Ž", "norm_b"] and LEGACY_NOTE in windows.warnings[0]


@pytest.mark.parametrize(("data", "said"), [
    ("name,count\nk✓,1\n".encode() + b"k\xe9,1\n", "0xe9"),  # UTF-8 beside a bad byte: damaged, not a code page
    (b'{"traceEvents": [{"ph": "X", "name": "k\xe9"}]}', ""),  # JSON is UTF-8 by definition
    (b"name,count,flops,bytes,time_ms\nk\x81,1,1,1,1\n", "0x81"),  # a byte Windows-1252 leaves undefined
])
def test_bytes_that_are_no_code_page_keep_their_message(data, said):
    with pytest.raises(InputError) as e:
        roofcore.read(data, name="inv.csv")
    assert said in str(e.value) and LEGACY_NOTE not in str(e.value)


def test_text_and_utf8_pass_untouched_and_a_cut_last_letter_is_no_code_page():
    for data in ("name,count\nk_µ_✓,1\n".encode(), b"name,count\nk,1\n"):
        assert canonical(data, "f") == (data, ())
    cut = "name,count,flops,bytes,time_ms\nk,1,1,1,1\né".encode()[:-1]  # a truncated file: its last letter cut
    assert canonical(cut, "f") == (cut, ())


def test_a_large_mapped_file_in_a_code_page_past_its_head(tmp_path, monkeypatch):
    """The letter outside ASCII far past the 64 kB the detection looks at, in a mapped file: read and said."""
    monkeypatch.setattr(filemap, "MAP_MIN_BYTES", 4096)
    rows = "".join(f"k{i},1,{i}.5,{i * 2},0.25\n" for i in range(20_000))
    path = tmp_path / "big.csv"
    path.write_bytes(("name,count,flops,bytes,time_ms\n" + rows + "last_µ,1,1,1,1\n").encode("cp1252"))
    w = roofcore.read(path)
    assert len(w.frame) == 20_001 and w.frame["name"].iloc[-1] == "last_µ"
    assert LEGACY_NOTE in w.warnings[0] and "line 20,002" in w.warnings[0]


def test_a_large_tab_file_read_from_its_path(tmp_path, monkeypatch):
    """A file large enough to be detected on its head and mapped: the head converted to detect it, the whole
    converted to parse it."""
    monkeypatch.setattr(filemap, "MAP_MIN_BYTES", 4096)
    rows = "".join(f"k{i}\t1\t{i}.5\t{i * 2}\t0.25\n" for i in range(20_000))
    path = tmp_path / "big.tsv"
    path.write_text("name\tcount\tflops\tbytes\ttime_ms\n" + rows, encoding="utf-8")
    f = roofcore.read(path).frame
    assert len(f) == 20_000 and f["flops"].iloc[-1] == 19999.5


def test_a_table_with_exactly_a_spreadsheets_row_limit_says_it_was_likely_cut():
    """1,048,576 lines: what Excel or LibreOffice keeps of a longer table; one line fewer or more says nothing."""
    body = "".join(f"k{i % 7},1,{i}.5,{i},0.25\n" for i in range(1, 65_536))
    for extra, cut in (("", True), ("k1,1,2.5,2,0.25\n", False)):
        w = roofcore.read(f"name,count,flops,bytes,time_ms\n{body}{extra}".encode(), name="inv.csv")
        said = [x for x in w.warnings if "65,536 lines, a spreadsheet's row limit" in x]
        assert bool(said) == cut, w.warnings
    assert dialect.spreadsheet_cut(b"[" + b"{},\n" * 1_048_575 + b"{}]") is None  # JSON is no spreadsheet's


def test_empty_fields_right_of_the_table_are_dropped_and_nothing_else():
    """Only bare empty fields beyond the header's names go: a quoted "" and the pieces of a name that held
    unquoted commas stay, and a row's own empty last value stays."""
    text = ('name,count,flops,bytes,time_ms,,\n'
            'gemm,1,8.8e12,2.8e9,12.0,,\n'
            'f(int, float),1,1.0e6,4.0e6,,,\n'
            'g,1,1.0e6,4.0e6,"",,\n')
    out = canonical(text.encode(), "inv.csv")[0].decode()
    assert out.splitlines() == ['name,count,flops,bytes,time_ms', 'gemm,1,8.8e12,2.8e9,12.0',
                                'f(int, float),1,1.0e6,4.0e6,', 'g,1,1.0e6,4.0e6,""']


def test_zero_bytes_ending_a_file_are_dropped_and_said():
    """What a crash or an interrupted copy leaves: the rows before read, and the workload says the end is lost; a
    UTF-16 file's own last zero byte and a file of zero bytes alone are not such an end."""
    text = inventory().encode()
    w = roofcore.read(text + b"\x00" * 5000, name="inv.csv")
    assert numbers(w) == BASE
    said = [x for x in w.warnings if "zero bytes" in x]
    assert said == ["inv.csv: " + dialect.ZERO_TAIL_NOTE.format(n=5000) + "."], w.warnings
    assert canonical(text, "inv.csv") == (text, ())
    utf16 = b"\xff\xfe" + inventory().encode("utf-16-le")
    assert utf16.endswith(b"\n\x00") and numbers(roofcore.read(utf16, name="u.csv")) == BASE
    with pytest.raises(InputError, match="binary data"):
        roofcore.read(b"\x00" * 9000, name="zeros.csv")
    with pytest.raises(InputError, match=r"binary data \(a PNG image\)"):  # not UTF-8 before its zeros: binary
        roofcore.read(b"\x89PNG\r\n\x1a\n\x00\x00", name="image.csv")


@pytest.mark.parametrize(("names", "page"), [
    (["Größe_gemm", "café_norm", "ação_copy", "über_softmax"], "cp1252"),  # accents alone between ASCII letters
    (["внимание_gemm", "норма", "слой_1"], "cp1251"),  # words: runs of letters outside ASCII
    (["gemm_a", "gemm_b", "gemm_c", "gemm_d", "норма"], "cp1251"),  # one Cyrillic word among ASCII names
])
def test_the_code_page_is_told_by_how_its_letters_stand(names, page):
    """Windows-1251 puts every Cyrillic letter at 0xC0-0xFF, where Windows-1252 has its accented Latin letters; a
    Cyrillic word is a run of such bytes, a Western word holds one now and then."""
    text = HEADER + "\n" + "".join(f"{n},1,1e9,1e6,1.0,bf16,matrix,g\n" for n in names)
    w = roofcore.read(text.encode(page), name="inv.csv")
    assert list(w.frame["name"]) == names
    said = [x for x in w.warnings if "not UTF-8" in x]
    assert len(said) == 1 and ("Windows-1251" in said[0]) == (page == "cp1251"), said


@pytest.mark.parametrize(("names", "page", "said"), [
    (["注意力层_gemm", "前馈网络", "嵌入", "输出层_1"], "gbk", "GBK (Simplified Chinese)"),
    (["注意力", "输出"], "gbk", "GBK (Simplified Chinese)"),
    (["注意層_gemm", "フィードフォワード", "埋め込み"], "cp932", "Shift_JIS (Japanese)"),
    (["주의_gemm", "피드포워드", "임베딩", "출력"], "cp949", "Unified Hangul Code (Korean)"),
    (["注意力層_gemm", "前饋網絡", "嵌入", "輸出層"], "big5", "Big5 (Traditional Chinese)"),
    # bytes that also decode in a double-byte page, and stay what they are: accents before ASCII letters
    (["Größe_gemm", "über_softmax", "Maßstab_norm", "Straße_copy", "k µs·é"], "cp1252", "Windows-1252"),
    (["café_norm", "ação_copy", "élève_gemm", "déjà_vu", "k µs"], "cp1252", "Windows-1252"),
    (["внимание_gemm", "норма", "слой_1", "выход"], "cp1251", "Windows-1251"),
    (["увага", "шар", "вихід", "ї", "є"], "cp1251", "Windows-1251"),
])
def test_east_asian_code_pages_are_read_and_western_letters_are_not_taken_for_them(names, page, said):
    """A spreadsheet's "CSV" on a Chinese, Japanese or Korean Windows is in a double-byte code page: read in it and
    said; Western and Cyrillic names whose bytes would also decode in one (an accent before an ASCII letter is a
    valid pair) keep their single-byte page."""
    text = HEADER + "\n" + "".join(f"{n},1,1e9,1e6,1.0,bf16,matrix,g\n" for n in names)
    w = roofcore.read(text.encode(page), name="inv.csv")
    assert list(w.frame["name"]) == names
    notes = [x for x in w.warnings if "not UTF-8" in x]
    assert len(notes) == 1 and f"read as {said}," in notes[0], notes


def test_a_few_characters_that_could_be_korean_or_chinese_are_not_guessed():
    """Three Hangul syllables lead within 0xB0-0xC8, as some Chinese characters do: too few to tell, refused as
    before rather than read as the wrong script."""
    text = HEADER + "\n" + "".join(f"{n},1,1e9,1e6,1.0,bf16,matrix,g\n" for n in ["주의", "출력"])
    with pytest.raises(InputError, match="UTF-8"):
        roofcore.read(text.encode("cp949"), name="inv.csv")


def test_damaged_utf8_chinese_is_not_read_as_gbk():
    """UTF-8 Chinese with a damaged byte also decodes as GBK (the mojibake of old): it keeps the one-line refusal."""
    text = (HEADER + "\n" + "".join(f"{n},1,1e9,1e6,1.0,bf16,matrix,g\n" for n in ["注意力层", "前馈网络", "输出层"]))
    data = bytearray(text.encode())
    data[len(HEADER) + 2] = 0x41
    with pytest.raises(InputError, match="UTF-8"):
        roofcore.read(bytes(data), name="inv.csv")
