"""The Planner's "LLM serving" tab: a model (preset or uploaded config.json), precision, parallelism, batch and
lengths, devices; the plan as a table, the batch sweep on each device's roofline, latency against throughput, the
memory stack against capacity; the calibration used (the documented defaults, or fitted on the workload on screen).
The numbers are :mod:`roofcore.llm`'s, the tables and charts :mod:`app.llm_views`'."""

from __future__ import annotations

import json

import streamlit as st

from roofcore import RoofcoreError, views
from roofcore.analyze import Analysis
from roofcore.catalog import Catalog
from roofcore.llm import (
    KV_PRECISIONS,
    KV_READS,
    WEIGHT_PRECISIONS,
    Calibration,
    Lengths,
    Shape,
    cheapest,
    fit,
    from_hf,
    load_model,
    presets,
    quant,
    simulate,
)

from . import llm_views
from .memo import remember
from .messages import message

UPLOAD = "config.json (upload)"


@st.cache_resource(show_spinner=False, max_entries=64, ttl=3600)
def _results(key: tuple, _build) -> dict:
    """The tab's plan and charts for one set of inputs (``key`` names them all, the calibration's workload by its
    token), built once per server: every session opening the Planner with the same inputs reuses them. Shared,
    never changed: the charts are copied before Streamlit gets them."""
    return _build()


def _model():
    names = presets()
    choice = st.selectbox("Model", [*names, UPLOAD], index=names.index("llama-2-7b"), key="llm_model",
                          help="A bundled preset (each from its Hugging Face config.json) or your own config.json.")
    if choice != UPLOAD:
        return load_model(choice)
    up = st.file_uploader("config.json", type=["json"], key="llm_config")
    if up is None:
        st.info("Upload a Hugging Face config.json.", icon=":material/upload_file:")
        st.stop()
    try:
        doc = json.loads(up.getvalue())
    except ValueError as e:
        raise RoofcoreError(f"{up.name}: not JSON ({e})") from None
    return from_hf(doc, name=up.name.removesuffix(".json"), source=up.name)


def _shape() -> tuple:
    c = st.columns(4)
    w = c[0].selectbox("Weights", WEIGHT_PRECISIONS, key="llm_precision")
    kv = c[1].selectbox("KV cache", ["same", *KV_PRECISIONS], key="llm_kv")
    tp = c[2].selectbox("Tensor parallel", [1, 2, 4, 8], key="llm_tp")
    pp = c[3].selectbox("Pipeline parallel", [1, 2, 4], key="llm_pp")
    c = st.columns(4)
    batch = c[0].number_input("Batch", min_value=1, max_value=4096, value=8, step=1, key="llm_batch")
    lin = c[1].number_input("Input tokens", min_value=1, max_value=1_000_000, value=512, step=64, key="llm_input")
    lout = c[2].number_input("Output tokens", min_value=1, max_value=100_000, value=128, step=64, key="llm_output")
    reads = c[3].selectbox("K/V reads", KV_READS, key="llm_kv_reads", format_func=lambda v: v.replace("_", " "),
                           help="How the engine's attention reads a grouped-query cache: once per KV head (grouped: "
                                "FlashAttention, XQA) or once per query head (decode kernels without GQA sharing, "
                                "e.g. TensorRT-LLM before XQA).")
    q = quant(w, None if kv == "same" else kv)
    return q, Shape(tp=int(tp), pp=int(pp), batch=int(batch), input_len=int(lin), output_len=int(lout),
                    kv_reads=reads)


def _devices(catalog: Catalog, default: list[str]) -> tuple[list, dict[str, float]]:
    gpus = [h.id for h in catalog if h.kind.value in ("gpu", "accelerator")] or [h.id for h in catalog]
    order = [i for i in views.device_order(catalog) if i in gpus]
    start = [i for i in default if i in order] or [i for i in ("h100-sxm",) if i in order]
    labels = {h.id: views.device_label(h) for h in catalog}
    ids = st.multiselect("Devices", order, default=start, key="llm_devices", format_func=labels.__getitem__)
    prices = {}
    with st.expander("Price per GPU-hour (cost per million tokens)", icon=":material/payments:"):
        for hid in ids:
            v = st.number_input(f"{labels[hid]}: $/hour", min_value=0.0, value=None, step=0.5, key=f"llm_price_{hid}",
                                placeholder="unknown")
            if v is not None:
                prices[hid] = float(v)
    return [catalog.get(i) for i in ids], prices


def _calibration(a: Analysis | None, token: str | None) -> Calibration:
    timed = a is not None and bool(a.timed.any())
    use = st.toggle("Calibrate on the workload on screen", value=False, key="llm_calibrate", disabled=not timed,
                    help="Fit each op class's fraction of the roof and per-launch overhead on the loaded profile's "
                         "measured kernels (on the sidebar's first device, where it ran); otherwise the documented "
                         "defaults, each with its source.")
    if not (use and timed):
        return Calibration()
    hw = a.hardware[0].id
    return remember("llm", ("calibration", token, hw), lambda: fit(a, hw, label=f"workload {a.workload.name}"))


#: the results table's numbers as a reader takes them in (they showed four decimals: 1066.1149 tok/s)
_TABLE_FORMATS = {
    "TTFT (ms)": st.column_config.NumberColumn(format="%.1f"),
    "TPOT first (ms)": st.column_config.NumberColumn(format="%.2f"),
    "TPOT last (ms)": st.column_config.NumberColumn(format="%.2f"),
    "tok/s": st.column_config.NumberColumn(format="%.0f"),
    "tok/s per GPU": st.column_config.NumberColumn(format="%.0f"),
    "memory/GPU (GB)": st.column_config.NumberColumn(format="%.1f"),
    "capacity (GB)": st.column_config.NumberColumn(format="%.0f"),
    "max batch": st.column_config.NumberColumn(format="%d"),
    "all-reduce/step (ms)": st.column_config.NumberColumn(format="%.3f"),
    "$/M tok": st.column_config.NumberColumn(format="$%.3f"),
}


#: the serving simulation's tables (latency percentiles, throughput, the share of requests within the targets)
_SERVING_FORMATS = {
    **{f"{m} {p} (ms)": st.column_config.NumberColumn(format="%.1f" if m == "TTFT" else "%.2f")
       for m in ("TTFT", "TPOT") for p in ("p50", "p99")},
    "tok/s": st.column_config.NumberColumn(format="%.0f"),
    "goodput (req/s)": st.column_config.NumberColumn(format="%.2f"),
    "within targets": st.column_config.NumberColumn(format="percent"),
    "most running": st.column_config.NumberColumn(format="%d"),
    "$/M tok": st.column_config.NumberColumn(format="$%.3f"),
}


def render(catalog: Catalog, default_ids: list[str], a: Analysis | None = None, token: str | None = None) -> None:
    """The tab (see the module docstring); an input the planner refuses is shown as one message."""
    try:
        m = _model()
        q, s = _shape()
        hws, prices = _devices(catalog, default_ids)
        cal = _calibration(a, token)
        if not hws:
            st.info("Choose at least one device.", icon=":material/memory:")
            return
        key = (m, q, s, tuple(llm_views.device_key(h) for h in hws), tuple(sorted(prices.items())), cal.origin,
               cal.device, token)
        res = _results(key, lambda: llm_views.results(m, q, hws, s, cal, prices))
    except RoofcoreError as e:
        message("error", e)
        return
    p = res["plan"]
    st.caption(f"**{m.name}** · {m.params()['total'] / 1e9:,.2f} B parameters"
               + (f" ({m.params()['active'] / 1e9:,.2f} B active)" if m.moe else "")
               + (f" · [source]({m.source})" if m.source.startswith("http") else ""))
    st.dataframe(res["table"], hide_index=True, width="stretch", placeholder="–", key="llm_table",
                 column_config=_TABLE_FORMATS)
    cols = st.columns(2)
    for i, hw in enumerate(hws):
        # a copy of each kept spec: Streamlit may change the top level of what it is given
        cols[i % 2].vega_lite_chart(dict(res["rooflines"][hw.id]), theme=None, key=f"llm_roofline_{hw.id}")
    cols = st.columns(2)
    cols[0].vega_lite_chart(dict(res["latency"]), theme=None, key="llm_latency")
    cols[1].vega_lite_chart(dict(res["memory"]), theme=None, key="llm_memory")
    notes = list(dict.fromkeys(n for d in p.devices for n in d.notes))
    for n in notes:
        st.caption(n)
    st.caption("Not costed (listed, never counted as zero): " + "; ".join(p.uncosted))
    _serving(m, q, s, hws, cal, prices)
    st.markdown("**Calibration** — " + ("documented defaults (no profile)" if not cal.calibrated else cal.origin))
    st.dataframe(llm_views.calibration_frame(cal), hide_index=True, width="stretch", placeholder="–",
                 key="llm_calibration", column_config={
                     "efficiency": st.column_config.NumberColumn(format="%.2f"),
                     "overhead (µs)": st.column_config.NumberColumn(format="%.1f")})


def _serving(m, q, s: Shape, hws: list, cal: Calibration, prices: dict[str, float]) -> None:
    """Serving at a request rate: a continuous-batching simulation per device, and the cheapest device × TP."""
    with st.expander("Serve at a request rate (continuous batching)", icon=":material/speed:"):
        c = st.columns(4)
        rate = c[0].number_input("Requests/s", min_value=0.01, value=4.0, step=1.0, key="llm_rate")
        spread = c[1].number_input("Lengths ± (%)", min_value=0, max_value=90, value=50, step=10, key="llm_spread",
                                   help="Input and output lengths uniform within this share of the lengths above.")
        ttft = c[2].number_input("TTFT target (s)", min_value=0.01, value=2.0, step=0.5, key="llm_ttft_target")
        tpot = c[3].number_input("TPOT target (s)", min_value=0.001, value=0.1, step=0.01, key="llm_tpot_target")
        if not st.toggle("Simulate 1,000 requests", value=False, key="llm_serve"):
            return

        def lengths(n: int) -> Lengths:
            lo, hi = max(1, round(n * (1 - spread / 100))), max(1, round(n * (1 + spread / 100)))
            return Lengths("uniform", lo, hi)

        ins, outs = lengths(s.input_len), lengths(s.output_len)
        try:
            runs = [simulate(m, q, hw, s, cal, rate=rate, inputs=ins, outputs=outs, requests=1000,
                             ttft_target_s=ttft, tpot_target_s=tpot) for hw in hws]
            best = cheapest(m, q, hws, cal, rate=rate, inputs=ins, outputs=outs, prices=prices, requests=300,
                            ttft_target_s=ttft, tpot_target_s=tpot, kv_reads=s.kv_reads)
        except RoofcoreError as e:
            message("error", e)
            return
        st.dataframe(llm_views.serving_frame(runs), hide_index=True, width="stretch", placeholder="–",
                     key="llm_serving", column_config=_SERVING_FORMATS)
        st.caption("Cheapest device × tensor parallelism meeting both targets for 99% of requests (by cost where a "
                   "price is given, else by GPUs):")
        st.dataframe(llm_views.options_frame(best), hide_index=True, width="stretch", placeholder="–",
                     key="llm_options", column_config=_SERVING_FORMATS)
