"""The floor for reading an Nsight Compute details CSV in Python: a compiled, multi-threaded CSV reader on the five
columns a roofline needs (launch, kernel, metric, unit, value), the values cast to numbers (thousands separators
stripped), pivoted to one row per launch × metric, a few figures per launch computed; no checks, no units, no
output beyond a line. ``arrow``: pyarrow's reader and compute functions (a roofcore dependency); ``polars``:
polars' reader and pivot (not a dependency; skipped where it is not installed). roofcore reads with pyarrow: on the
20,000-launch export, the reader's job (six columns, values cast, codes) took 0.43 s of CPU with pyarrow against
0.50 s with polars (medians of 10, alternated, 2 cores), and polars would add its own import to every command.

Run: ``python benchmarks/peers/floor_ncu.py arrow|polars FILE.csv`` (bench_ncu.py times it as a whole process).
"""

from __future__ import annotations

import sys

COLUMNS = ["ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"]


def arrow(path: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    text = pa.dictionary(pa.int32(), pa.string())
    t = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
        include_columns=COLUMNS, column_types={"ID": pa.int64(), "Kernel Name": text, "Metric Name": text,
                                               "Metric Unit": text, "Metric Value": pa.string()}))
    value = pc.cast(pc.replace_substring(t["Metric Value"], ",", ""), pa.float64()).to_numpy()
    ids = t["ID"].to_numpy()
    metric = t["Metric Name"].combine_chunks()
    launch = np.cumsum(np.r_[True, ids[1:] != ids[:-1]]) - 1
    wide = np.full((launch[-1] + 1, len(metric.dictionary)), np.nan)
    wide[launch, metric.indices.to_numpy()] = value
    names = metric.dictionary.to_pylist()
    col = {n: wide[:, i] for i, n in enumerate(names)}
    time = col["sm__cycles_elapsed.avg"] / col["sm__cycles_elapsed.avg.per_second"]
    print(len(time), np.nansum(col["dram__bytes.sum"]) / np.nansum(time))


def polars(path: str) -> None:
    import polars as pl

    df = pl.read_csv(path, columns=COLUMNS, schema_overrides={
        "ID": pl.Int64, "Kernel Name": pl.Categorical, "Metric Name": pl.String, "Metric Unit": pl.String,
        "Metric Value": pl.String})
    df = df.with_columns(pl.col("Metric Value").str.replace_all(",", "", literal=True).cast(pl.Float64))
    wide = df.pivot(on="Metric Name", index=["ID", "Kernel Name"], values="Metric Value", aggregate_function="first")
    time = wide["sm__cycles_elapsed.avg"] / wide["sm__cycles_elapsed.avg.per_second"]
    print(wide.height, wide["dram__bytes.sum"].sum() / time.sum())


if __name__ == "__main__":
    {"arrow": arrow, "polars": polars}[sys.argv[1]](sys.argv[2])
