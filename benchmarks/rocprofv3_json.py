"""A large rocprofv3 ``--output-format json`` file (rocprofiler-sdk-tool), for the reader and upload benchmarks.

Written in the shape rocprofv3 writes (docs: rocprofiler-sdk "rocprofv3 output formats"; the layout of
tests/data/rocprof/rocprofv3_results.json): ``{"rocprofiler-sdk-tool": [{metadata, agents, counters, strings,
code_objects, kernel_symbols, host_functions, callback_records, buffer_records}]}`` pretty-printed (two spaces by
default: ``--indent``); ``buffer_records.kernel_dispatch[]`` holds one record per dispatch (``size``,
``kind``, ``operation``, ``thread_id``, ``correlation_id``, ``start_timestamp``/``end_timestamp`` in ns and
``dispatch_info`` with agent, queue, kernel id, dispatch id, segment sizes, workgroup and grid sizes), named by
``kernel_symbols[]`` (mangled, demangled, formatted and truncated names); a copy per 500 dispatches goes to
``buffer_records.memory_copy``. The default, 44,000 dispatches, is about 42 MB (issue #24: a real one of 44,000
dispatches, ~37 MB, took 3.3 s from upload to chart).

Run: ``python benchmarks/rocprofv3_json.py OUT.json [--dispatches N] [--counters] [--indent N]``; ``make_json(path,
n)`` from
Python. ``--counters`` adds ``callback_records.counter_collection`` (SQ_WAVES, SQ_INSTS_VALU, FETCH_SIZE,
WRITE_SIZE per dispatch) for the counter path.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

GPU = {"size": 1, "id": {"handle": 30723504}, "type": 2, "cpu_cores_count": 0, "simd_count": 1216,
       "mem_banks_count": 1, "caches_count": 4, "io_links_count": 1, "cpu_core_id_base": 0, "simd_id_base": 2147487744,
       "max_waves_per_simd": 8, "lds_size_in_kb": 64, "gds_size_in_kb": 0, "num_gws": 64, "wave_front_size": 64,
       "num_xcc": 8, "cu_count": 304, "array_count": 32, "num_shader_banks": 32, "simd_arrays_per_engine": 1,
       "cu_per_simd_array": 10, "simd_per_cu": 4, "max_slots_scratch_cu": 32, "gfx_target_version": 90402,
       "vendor_id": 4098, "device_id": 29857, "location_id": 49408, "domain": 0, "drm_render_minor": 128,
       "num_sdma_engines": 2, "num_sdma_xgmi_engines": 6, "num_sdma_queues_per_engine": 8, "num_cp_queues": 24,
       "max_engine_clk_ccompute": 2100, "max_engine_clk_fcompute": 2100, "family_id": 148, "node_id": 2,
       "logical_node_id": 1, "logical_node_type_id": 0, "name": "gfx942", "vendor_name": "AMD",
       "product_name": "AMD Instinct MI300X", "model_name": ""}
CPU = {"size": 1, "id": {"handle": 30723200}, "type": 1, "cpu_cores_count": 96, "simd_count": 0, "wave_front_size": 0,
       "cu_count": 0, "node_id": 0, "logical_node_id": 0, "logical_node_type_id": 0,
       "name": "AMD EPYC 9654 96-Core Processor", "vendor_name": "CPU",
       "product_name": "AMD EPYC 9654 96-Core Processor", "model_name": ""}

KERNELS = [
    ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
     "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
     "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0",
     "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0"),
    ("_ZN2at6native43_GLOBAL__N__softmax_warp_forwardIN3c108BFloat16ES3_fLi11ELb0ELb0EEEvPT0_PKT_iiiPKbib",
     "void at::native::(anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, "
     "false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)"),
    ("_Z25flash_fwd_splitkv_kernelI23Flash_fwd_kernel_traitsILi128ELi64ELi128ELi4EEEEv16Flash_fwd_params",
     "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4> >(Flash_fwd_params)"),
    ("_ZN4vllm15rms_norm_kernelIN3c108BFloat16ELi8ELi4EEEvPT_PKS3_S6_fii",
     "void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, "
     "float, int, int)"),
    ("_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIN3c108BFloat16ES5_"
     "S5_NS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
     "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<"
     "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::"
     "TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::"
     "binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, {lambda(int)#1})"),
    ("ncclDevKernel_Generic", "ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)"),
    ("_Z10vector_addPKfS0_Pfi", "vector_add(float const*, float const*, float*, int)"),
]
COUNTERS = ("SQ_WAVES", "SQ_INSTS_VALU", "FETCH_SIZE", "WRITE_SIZE")


def _symbols() -> list[dict]:
    out = []
    for k, (mangled, demangled) in enumerate(KERNELS, start=1):
        out.append({"size": 1, "kernel_id": k, "code_object_id": 1 + k % 2, "kernel_name": mangled + ".kd",
                    "kernel_object": 140245312 + 256 * k, "kernarg_segment_size": 96, "kernarg_segment_alignment": 8,
                    "group_segment_size": 0, "private_segment_size": 0, "sgpr_count": 48, "arch_vgpr_count": 64,
                    "accum_vgpr_count": 0, "formatted_kernel_name": demangled.split("(")[0].removeprefix("void "),
                    "demangled_kernel_name": demangled, "truncated_kernel_name": demangled.split("<")[0]})
    return out


def _dispatch(k: int, t: int, dur: int, kernel: int, rng: random.Random) -> dict:
    wg = rng.choice((64, 128, 256, 512))
    return {"size": 96, "kind": 11, "operation": 1, "thread_id": 51234,
            "correlation_id": {"internal": k + 1, "external": 0}, "start_timestamp": t, "end_timestamp": t + dur,
            "dispatch_info": {"size": 64, "agent_id": {"handle": GPU["id"]["handle"]}, "queue_id": {"handle": 1},
                              "kernel_id": kernel, "dispatch_id": k + 1, "private_segment_size": 0,
                              "group_segment_size": rng.choice((0, 4096, 16384)),
                              "workgroup_size": {"x": wg, "y": 1, "z": 1},
                              "grid_size": {"x": wg * rng.randint(1, 4096), "y": 1, "z": 1}}}


def make_json(path: Path, dispatches: int = 44_000, counters: bool = False, seed: int = 0, indent: int = 2) -> int:
    """Write the file (see the module docstring); returns its size in bytes."""
    rng = random.Random(seed)
    t = 2_431_000_000_000_000
    kd, copies, cc = [], [], []
    for k in range(dispatches):
        kernel = rng.randint(1, len(KERNELS))
        dur = rng.randint(2_000, 400_000)
        kd.append(_dispatch(k, t, dur, kernel, rng))
        if counters:
            cc.append({"size": 1, "dispatch_data": {"size": 1, "correlation_id": {"internal": k + 1, "external": 0},
                                                     "dispatch_info": kd[-1]["dispatch_info"]},
                       "records": [{"counter_id": {"handle": 1 + j}, "value": float(rng.randint(1, 1 << 30))}
                                   for j in range(len(COUNTERS))], "thread_id": 51234, "arch_vgpr_count": 64,
                       "sgpr_count": 48})
        if k % 500 == 0:
            copies.append({"size": 1, "kind": 12, "operation": 1, "thread_id": 51234,
                           "correlation_id": {"internal": dispatches + k, "external": 0},
                           "start_timestamp": t, "end_timestamp": t + 9_000, "dst_agent_id": GPU["id"],
                           "src_agent_id": CPU["id"], "bytes": 1 << 22})
        t += dur + rng.randint(500, 5_000)
    tool = {
        "metadata": {"pid": 51234, "init_time": 2_430_999_000_000_000, "fini_time": t + 1_000,
                     "config": {"kernel_trace": True, "memory_copy_trace": True, "output_format": "json"},
                     "command": ["python3", "bench.py"]},
        "agents": [CPU, GPU],
        "counters": [{"id": {"handle": 1 + j}, "is_constant": 0, "is_derived": 0, "name": c,
                      "description": c, "block": "SQ", "expression": "", "dimension_ids": [1]}
                     for j, c in enumerate(COUNTERS)] if counters else [],
        "strings": {"callback_records": [], "buffer_records": [{"kind": "KERNEL_DISPATCH", "operations": [
            "KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_COMPLETE"]}], "marker_api": [], "counters": {}},
        "code_objects": [{"size": 1, "code_object_id": c, "rocp_agent": GPU["id"], "hsa_agent": {"handle": 1},
                          "uri": f"file:///opt/app/lib/libkernels.so#offset=0&size={1 << 20}", "load_base": 0,
                          "load_size": 1 << 20, "load_delta": 0, "storage_type": 1} for c in (1, 2)],
        "kernel_symbols": _symbols(),
        "host_functions": [],
        "callback_records": {"counter_collection": cc},
        "buffer_records": {"kernel_dispatch": kd, "memory_copy": copies},
    }
    with path.open("w") as f:
        json.dump({"rocprofiler-sdk-tool": [tool]}, f, indent=indent)
    return path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--dispatches", type=int, default=44_000)
    ap.add_argument("--counters", action="store_true")
    ap.add_argument("--indent", type=int, default=2)
    args = ap.parse_args()
    size = make_json(args.out, args.dispatches, args.counters, indent=args.indent)
    print(f"{args.out}: {args.dispatches:,} dispatches, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
