"""Short kernel names (roofcore.names): template arguments and parameter lists elided, one telling token kept,
long plain names cut in the middle, and a number where two short names would read the same."""

from __future__ import annotations

import pytest

from roofcore.names import LIMIT, short_name, short_names

GELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
        "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
        "{lambda(float)#1}, at::detail::Array<char*, 2>)")
CUTLASS = ("void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::half_t, cutlass::layout::RowMajor, "
           "cutlass::half_t, cutlass::layout::ColumnMajor, float, cutlass::arch::Sm80, "
           "cutlass::gemm::GemmShape<(int)128, (int)256, (int)64>> >(cutlass::gemm::kernel::GemmUniversal<"
           "cutlass::half_t>::Params)")


@pytest.mark.parametrize(("name", "short"), [
    (CUTLASS, "cutlass::Kernel<…gemm…>"),
    (GELU, "at::native::vectorized_elementwise_kernel<…GeluCUDAKernelImpl…>"),
    # the base name already says "reduce": the token is the next operation word, MeanOps
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, "
     "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)",
     "at::native::reduce_kernel<…MeanOps…>"),
    # no operation word: the function named inside the arguments (a lambda's host); too long with its
    # namespaces, so they go
    ("void at::native::vectorized_elementwise_kernel<2, at::native::reciprocal_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda()#1}::operator()() const::{lambda(double)#1}, std::array<char*, 2ul> >(int, double*)",
     "vectorized_elementwise_kernel<…reciprocal_kernel_cuda…>"),
    # only types and numbers in the arguments: nothing kept
    ("void softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)",
     "softmax_warp_forward<…>"),
    # anonymous namespaces, a clone suffix, a plain parameter list
    ("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
     "at::native::max_pool_forward_nchw<…>"),
    ("vecCopy(double*, double*, double*, int, int) [clone .kd]", "vecCopy"),
    ("vector_add(float*, float*, float*, int)", "vector_add"),
    # a name whose start the profiler cut off ("<unnamed>" lost its "<")
    ("unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", "gemm_naive_kernel"),
    # prose in brackets after a space is not a parameter list
    ("Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH (Device -> Pinned)"),
    # short plain names stay as they are
    ("triton_poi_fused__unsafe_view_mul_silu_2", "triton_poi_fused__unsafe_view_mul_silu_2"),
    ("", ""),
])
def test_short_name(name, short):
    assert short_name(name) == short


def test_long_plain_names_keep_their_end():
    name = "set_tendency_cache__FILE_Model_jl_src_cache_microphysics_cache_and_more_words_jl_L1011"
    short = short_name(name)
    assert len(short) <= LIMIT and short.endswith("…L1011") and short.startswith("set_tendency_cache__FILE_")
    # a Tensile GEMM: its problem and types, and its macro tile
    tensile = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_" + "_".join(
        f"X{i}" for i in range(80)) + "_WG64_4_1"
    assert short_name(tensile) == "Cijk_Alik_Bljk_BBS…MT256x192x64"


def test_every_short_name_is_short():
    names = [CUTLASS * 3, GELU, "x" * 500, "a::" * 60 + "f<int>(int)", "k<" * 40, "f(" * 40, ">" * 10 + "g(int)"]
    for n in names:
        assert 0 < len(short_name(n)) <= LIMIT, n[:40]


def test_whitespace_is_collapsed():
    assert short_name("  my   kernel\t(int)") == "my kernel (int)"  # a space before "(": prose, kept
    assert short_name("my\n kernel(int,\n int)") == "my kernel"
    assert short_name("void  foo<float,\n 4>(int)") == "foo<…>"


def test_short_names_are_unique_and_numbered_in_order():
    a, b = "void k<float, 4>(float*)", "void k<double, 4>(double*)"
    m = short_names([b, a, b, "plain", "k<…> [1]"])
    # the first listed gets [1]; a name that already reads "k<…> [1]" is kept and the numbering steps past it
    assert m == {b: "k<…> [2]", a: "k<…> [3]", "plain": "plain", "k<…> [1]": "k<…> [1]"}
    assert len(set(m.values())) == len(m)
    assert short_names([CUTLASS, CUTLASS.replace("(int)64", "(int)32")]) == {
        CUTLASS: "cutlass::Kernel<…gemm…> [1]", CUTLASS.replace("(int)64", "(int)32"): "cutlass::Kernel<…gemm…> [2]"}


def test_many_names_quickly_enough_to_be_vectorised_elsewhere():
    # 20,000 distinct templated names (what a large inventory holds) go through without error, all unique
    names = [f"void kernel_{i}<float, {i % 7}>(float*)" for i in range(20_000)]
    m = short_names(names)
    assert len(set(m.values())) == 20_000 and m[names[5]] == "kernel_5<…>"
