"""The peer as NERSC publishes it: the post-processing step of the "Roofline on NVIDIA GPUs" hands-on, as its
public scripts do it with an ``ncu --csv`` export, written here from their description.

Find the header line (the first one naming ``Host Name``), read the whole table with pandas (``thousands=","``),
``groupby(['Kernel Name', 'Metric Name']).sum()`` (every column, text columns too, summed over the launches of a
kernel), ``pivot_table`` the sums to one row per kernel name, count each kernel's launches
(``groupby('Kernel Name').count()['ID']`` over the number of metrics), and compute the time (cycles ÷ the clock
averaged back over the launches), the CUDA-core and tensor FLOPs, the DRAM/L2/L1 bytes and the arithmetic
intensity at each level; print them. It aggregates per kernel name where ``roofline`` keeps each launch; it is
the recipe people run, so it is the time they know.

Run: ``python benchmarks/peers/nersc_ncu_published.py FILE.csv`` (bench_ncu.py times it as a whole process).
"""

from __future__ import annotations

import sys

import pandas as pd


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        skip = 0
        for line in fh:
            if "Host Name" in line:
                break
            skip += 1
    df = pd.read_csv(path, skiprows=skip, thousands=",")
    summed = df.groupby(["Kernel Name", "Metric Name"]).sum()
    k = pd.pivot_table(summed, index="Kernel Name", columns="Metric Name", values="Metric Value")
    k["Count"] = df.groupby(["Kernel Name"]).count()["ID"].div(k.shape[1])

    def m(name: str) -> pd.Series:
        return k[name] if name in k else pd.Series(0.0, index=k.index)

    k["Time"] = m("sm__cycles_elapsed.avg") / (m("sm__cycles_elapsed.avg.per_second") / k["Count"])
    cc = 0.0
    for p in "dfh":
        cc = cc + 2 * m(f"sm__sass_thread_inst_executed_op_{p}fma_pred_on.sum") + \
            m(f"sm__sass_thread_inst_executed_op_{p}mul_pred_on.sum") + \
            m(f"sm__sass_thread_inst_executed_op_{p}add_pred_on.sum")
    k["CC FLOPs"] = cc
    k["TC FLOPs"] = 512 * m("sm__inst_executed_pipe_tensor.sum")
    k["all FLOPs"] = k["CC FLOPs"] + k["TC FLOPs"]
    for level, metric in (("L1", "l1tex__t_bytes.sum"), ("L2", "lts__t_bytes.sum"), ("HBM", "dram__bytes.sum")):
        k[f"AI {level}"] = k["all FLOPs"] / m(metric)
    k["GFLOP/s"] = k["all FLOPs"] / k["Time"] / 1e9
    print(k[["Count", "Time", "CC FLOPs", "TC FLOPs", "AI L1", "AI L2", "AI HBM", "GFLOP/s"]].to_string())


if __name__ == "__main__":
    main(sys.argv[1])
