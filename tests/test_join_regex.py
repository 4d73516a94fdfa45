"""The targeted commands' kernel regexes (roofcore.ingest.join_regex) and how the hint reads: each regex the
shortest that matches the kernel as every tool spells it and no other kernel of the timeline, the metric list
said once, and the real RTX 5090 timeline's hint short enough to read."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from roofhelpers import sample
from test_join import GEMV6_NSYS, GEMV_NCU, GEMV_NSYS, SAME

import roofcore
from roofcore.ingest.join_commands import kernel_times, targeted_commands
from roofcore.ingest.join_names import normalise_kernel_name
from roofcore.ingest.join_regex import kernel_regex, spellings
from roofcore.ingest.ncu_metrics import ROOFLINE_METRICS

#: what ECMAScript (Nsight Compute's and rocprofv3's regular expressions) reads otherwise or not at all
NOT_ECMASCRIPT = ("(?:", "(?<", "(?P", "(?i", "\\A", "\\Z", "\\d")


def selected(rx: str, names: list[str]) -> list[str]:
    return [n for n in names if re.search(rx, n, re.ASCII)]


def test_spellings_are_the_tools_spellings_of_one_kernel():
    # Nsight Compute's name of the RTX 5090 GEMV (its details page) is among those made from Nsight Systems' name
    assert GEMV_NCU in spellings(GEMV_NSYS)
    assert "void (anonymous namespace)::softmax_warp_forward<float, float, float, 6, false, false>(T2 *, const T1 *, " \
        "int)" in spellings(SAME[-1][1])  # c++filt's booleans, casts and anonymous namespace
    for a, _ in SAME:
        assert len(spellings(a)) >= 3
        assert {normalise_kernel_name(s) for s in spellings(a)} == {normalise_kernel_name(a)}


#: one kernel as two tools spell it, and the change that makes its sibling (another instantiation) in each
SIBLINGS = [
    (SAME[1][0], SAME[1][1], ("Array<char*, 2>", "Array<char*, 3>"), ("Array<char *, (int)2>", "Array<char *, (int)3>")),
    (SAME[2][0], SAME[2][1], ("<__half, float>", "<float, __half>"), ("<__half, float>", "<float, __half>")),
    (SAME[4][0], SAME[4][1], ("8u>", "4u>"), ("(unsigned int)8>", "(unsigned int)4>")),
    (SAME[5][0], SAME[5][1], ("false, false>", "false, true>"), ("(bool)0, (bool)0>", "(bool)0, (bool)1>")),
    (GEMV6_NSYS, GEMV_NCU.replace(" 7, 0,", " 6, 0,"), ("(int)6", "(int)7"), (" 6, 0,", " 7, 0,")),
]


@pytest.mark.parametrize(("a", "b", "sib_a", "sib_b"), SIBLINGS)
def test_regex_matches_the_other_tools_spelling_and_not_the_sibling(a, b, sib_a, sib_b):
    a2, b2 = a.replace(*sib_a), b.replace(*sib_b)
    assert a2 != a and b2 != b and normalise_kernel_name(a2) == normalise_kernel_name(b2)
    for name, timeline, other, rival in ((a, [a, a2], b, b2), (b, [b, b2], a, a2)):
        rx = kernel_regex(name, timeline)
        assert re.search(rx, other, re.ASCII) and not re.search(rx, rival, re.ASCII), rx
        assert len(rx) < 70 and not any(x in rx for x in NOT_ECMASCRIPT)


def test_regex_pieces_that_close_a_template_or_join_two_arguments():
    rope = "void rope_norm<true, false, float, {0}>(float const*, {0}*, int, float, float, float) [clone .kd]"
    f, h = rope.format("float"), rope.format("__half")
    assert kernel_regex(f, [f, h]) == r"\brope_norm<.*float>"  # "float, float" is also in both parameter lists
    fill = ("void thrust::hip_rocprim::__parallel_for::kernel<256u, thrust::hip_rocprim::__fill::functor<thrust::"
            "device_ptr<int>, int>, long, 1u>(thrust::hip_rocprim::__fill::functor<thrust::device_ptr<int>, int>, "
            "long, long) [clone .kd]")
    ufill = fill.replace("__fill", "__uninitialized_fill").replace("long", "unsigned long")
    rx = kernel_regex(fill, [fill, ufill])  # every word of fill's key is in ufill's, in the same order
    assert rx == r"\bkernel<.*\bint> ?, ?long" and selected(rx, [fill, ufill]) == [fill]
    assert all(re.search(rx, s, re.ASCII) for s in spellings(fill))


def test_long_names_without_templates_by_their_parts():
    hss = "Cijk_Alik_Bljk_HSS_BH_Bias_HA_S_SAV_UserArgs_MT16x128x32_MI16x16x1_SN_LDSB1_AFC1_ISA1201_WG16_2_1.kd"
    hhs = "Cijk_Alik_Bljk_HHS_BH_Bias_HA_S_SAV_UserArgs_MT64x64x32_MI16x16x1_SN_LDSB0_AFC1_ISA1201_WG32_4_1.kd"
    assert kernel_regex(hss, [hss, hhs]) == r"\bCijk.*_HSS_"
    assert kernel_regex("short_kernel_name_0", ["short_kernel_name_0", "short_kernel_name_1"]) == \
        r"\bshort_kernel_name_0\b"  # short enough to read whole


def test_fallback_chains_the_arguments_and_still_matches_the_kernel():
    """Two kernels whose keys agree in every word and order: the arguments chained from the first, which matches
    the kernel's own spellings even where it cannot leave its namesake out."""
    a = "void k<int, long>(int)"
    b = "void k<long, int, long>(int)"
    rx = kernel_regex(a, [a, b])
    assert selected(rx, [a, b]) == [a] and all(re.search(rx, s, re.ASCII) for s in spellings(a))


def test_real_rtx5090_hint_is_short_and_selects_each_kernel():
    nsys = sample("nsys_rtx5090_deepseekocr_decode_cuda_gpu_kern_sum_unquoted.csv")
    ncu = roofcore.read(sample("ncu_rtx5090_deepseekocr_gemv_details_na_legacy_metrics.csv"))
    w = roofcore.read_many([nsys])
    names = [str(n) for n in kernel_times(w).index]
    cmds = targeted_commands(w)
    assert len(cmds) == 5 and all(c.startswith("ncu ") for _, _, c in cmds)
    for name, _, cmd in cmds:
        rx = re.search(r"regex:'([^']*)'", cmd).group(1)
        assert len(rx) < 50 and not any(x in rx for x in NOT_ECMASCRIPT), rx
        assert selected(rx, names) == [name]  # exactly its kernel among the timeline's 46
        assert all(re.search(rx, s, re.ASCII) for s in spellings(name))
    # the (int)7 GEMV's regex matches Nsight Compute's own name for it, the (int)6 one's does not
    gemv = str(ncu.frame["name"].iloc[0])
    hits = [bool(re.search(re.search(r"regex:'([^']*)'", c).group(1), gemv, re.ASCII)) for _, _, c in cmds]
    assert hits == [True, False, False, False, False]
    note = next(x for x in w.warnings if x.startswith("No counters for 46 of 46 kernels"))
    assert note.count(ROOFLINE_METRICS[3]) == 1 and note.count('--metrics "$METRICS"') == 5
    assert len(note) < 2500  # 6,088 characters when each command spelled out its metrics and every argument
    lines = note.split("\n")
    assert lines[1] == "APP=./app  # your program and its arguments" and lines[2].startswith("METRICS=")
    assert max(len(line) for line in lines[3:]) < 200


def test_report_keeps_the_script_line_by_line():
    from roofcore.analyze import analyze
    from roofcore.catalog import load_catalogs
    from roofcore.report import build_html

    w = roofcore.read_many([Path(__file__).parent / "data" / "join" / "kern_sum.csv"])
    html = build_html(analyze(w, [load_catalogs().get("h100-sxm")]))
    item = re.search(r"<li>No counters for 5 of 5 kernels[^<]*<pre class=\"script\">([^<]*)</pre></li>", html)
    assert item and unescape(item.group(1)) == w.meta["counter_commands"]  # verbatim: ./app, $METRICS, quotes


def test_rdna_timeline_asks_for_counters_rdna_has():
    """The GPU told by the kernel names (Tensile ISA1201: gfx1201, RDNA 4) picks the counters: no matrix-core (MFMA)
    counters, which RDNA lacks; one kernel holds most of the time."""
    w = roofcore.read_many([sample("rocprofv1_r9700_rdna4_llamacpp_results.stats.csv")])
    lines = w.meta["counter_commands"].split("\n")
    pmc = next(x for x in lines if x.startswith("PMC="))
    assert "MFMA" not in pmc and "SQ_INSTS_VALU_FMA_F32" in pmc and pmc.endswith(",FETCH_SIZE,WRITE_SIZE")
    assert not any(x.startswith(("METRICS=", "ncu ")) for x in lines)
    note = next(x for x in w.warnings if x.startswith("No counters for 20 of 20 kernels"))
    assert "Hint: collect them for the kernel that holds most of it, with the commands below" in note
    assert lines[-1] == """rocprofv3 --kernel-include-regex '\\bmul_mat_q\\b' --pmc "$PMC" --output-format csv -- $APP"""
