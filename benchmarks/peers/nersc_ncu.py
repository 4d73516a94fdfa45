"""The peer for `roofline analyze` on an Nsight Compute details CSV: the NERSC roofline post-processing recipe.

What NERSC's "Roofline on NVIDIA GPUs" hands-on does with an ``ncu --csv`` export, written here from its
description: read the CSV with pandas, keep the metric rows, pivot them to one row per launch, turn the values
into numbers, and compute per launch the time, the FP64/FP32/FP16 FLOPs (add + mul + 2·fma per precision, 512
per tensor instruction), the DRAM/L2/L1 bytes and the arithmetic intensity at each level; print a summary.

Run: ``python benchmarks/peers/nersc_ncu.py FILE.csv`` (bench_commands.py times it as a whole process).
"""

from __future__ import annotations

import sys

import pandas as pd


def main(path: str) -> None:
    df = pd.read_csv(path, thousands=",")
    df = df[df["Metric Name"].notna()]
    wide = df.pivot_table(index=["ID", "Kernel Name"], columns="Metric Name", values="Metric Value",
                          aggfunc="first")
    wide = wide.apply(pd.to_numeric, errors="coerce")

    def m(name: str) -> pd.Series:
        return wide[name] if name in wide else pd.Series(0.0, index=wide.index)

    time = m("sm__cycles_elapsed.avg") / m("sm__cycles_elapsed.avg.per_second")
    flops = 0.0
    for p in "dfh":
        flops = flops + m(f"sm__sass_thread_inst_executed_op_{p}add_pred_on.sum") + \
            m(f"sm__sass_thread_inst_executed_op_{p}mul_pred_on.sum") + \
            2 * m(f"sm__sass_thread_inst_executed_op_{p}fma_pred_on.sum")
    flops = flops + 512 * m("sm__inst_executed_pipe_tensor.sum")
    out = pd.DataFrame({"time_s": time, "flops": flops, "dram": m("dram__bytes.sum"), "l2": m("lts__t_bytes.sum"),
                        "l1": m("l1tex__t_bytes.sum")})
    for level in ("dram", "l2", "l1"):
        out[f"ai_{level}"] = out["flops"] / out[level]
    out["gflops"] = out["flops"] / out["time_s"] / 1e9
    print(out.describe().to_string())


if __name__ == "__main__":
    main(sys.argv[1])
