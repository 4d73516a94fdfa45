"""Planner: the current workload projected onto other devices, what-if transformations, workload builders,
the crossover solvers and scenarios (upload one, or download the What-if steps as one). Thin: every number
comes from :mod:`roofcore.plan`; the tables are :mod:`roofcore.views`', the charts :mod:`roofcore.charts`'.

It plans on the workload as loaded, each launch its own row: combining repeated launches (the sidebar's toggle)
is for display; a plan's numbers never depend on it.
"""

import hashlib
import json

import streamlit as st
import yaml

from app import llm as llm_tab_view
from app import page, state, tables
from app.markdown import escape_markdown, escape_message
from app.memo import remember
from app.messages import message
from app.planner import BUILDER_DEFAULTS, scenario_base, scenario_examples
from app.sidebar import counted
from roofcore import RoofcoreError, charts, plan, views, whatif
from roofcore.builders import BUILDER_PARAMS, BUILDERS, build_workload
from roofcore.limits import load_yaml
from roofcore.models import DTYPE_SIZE
from roofcore.output import analysis_document
from roofcore.units import Dimension, fmt_si, parse

page.start("pages/planner.py", "Planner")
a = page.analysis()

catalog = state.catalog()
achievable = state.achievable()
entry = state.workload()
base = entry["workload"]  # as loaded, launches apart: the sidebar combines them for display only
hw_ids = [h.id for h in a.hardware]
token = state.token()  # names the workload's content, the devices' figures and the options: the memos key on it
DTYPES = list(DTYPE_SIZE)
PRICE_COLUMNS = 4  # price inputs per row


def cached(key: tuple, build):
    """``build()`` memoised per session (reruns and page changes cost nothing)."""
    return remember("planner", key, build)


st.caption(f"**{escape_message(base.name)}** · {counted(entry)} · devices: {', '.join(hw_ids)} · "
           + ("achievable roofs" if achievable else "theoretical roofs"))
project_tab, whatif_tab, build_tab, solver_tab, scenario_tab, llm_tab = st.tabs(
    ["Project", "What-if", "Build", "Solvers", "Scenario", "LLM serving"])

# ------------------------------------------------------------------------------------------------ project
with project_tab:
    options = views.device_order(catalog)
    labels = {h.id: views.device_label(h) for h in catalog}
    extra = st.multiselect("More target devices", [o for o in options if o not in hw_ids], key="plan_targets",
                           format_func=labels.__getitem__, placeholder="Add devices to project onto",
                           help="The sidebar's devices come first; add others to see the same workload there.")
    targets = [*hw_ids, *extra]
    timed = int(base.frame["time_s"].notna().sum())
    source = None
    if timed:
        source = st.selectbox("Measured on", targets, key="plan_source", format_func=labels.__getitem__,
                              help="The device the measured times come from: each measured kernel keeps its "
                                   "efficiency (roofline time ÷ measured time) on the other devices.")
    with st.expander("Price per hour (cost per run)", icon=":material/payments:"):
        prices = {}
        for row in range(0, len(targets), PRICE_COLUMNS):  # a row of columns at a time: the page's (and Tab's)
            cols = st.columns(PRICE_COLUMNS, vertical_alignment="bottom")  # order is the layout's, left to right
            for col, hid in zip(cols, targets[row:row + PRICE_COLUMNS], strict=False):
                v = col.number_input(f"{labels[hid]}: $/hour", min_value=0.0, value=None, step=0.5,
                                     key=f"plan_price_{hid}", placeholder="none")
                if v is not None:
                    prices[hid] = v
    try:
        pkey = (token, tuple(targets), source, tuple(sorted(prices.items())), achievable)
        proj = cached(("project", *pkey), lambda: plan.project(base, source, [catalog.get(h) for h in targets],
                                                               price_per_hour=prices, achievable=achievable))
        st.dataframe(views.projection_frame(proj), hide_index=True, width="stretch", placeholder="–",
                     key="plan_projection")
        # the chart's spec once per projection: st.altair_chart converts and validates it again on every run
        spec = cached(("project-chart", *pkey),
                      lambda: charts.projection_chart(views.projection_totals(proj)).to_dict(validate=False))
        st.vega_lite_chart(spec=dict(spec), theme=None, width="content")
        st.caption(f"Speedups are against **{proj.reference}** "
                   + ("(where the times were measured). " if proj.source else "(the first device). ")
                   + ("Estimate: each measured kernel's projected time (it keeps its measured efficiency); a kernel "
                      "with no measured time is left out, as its roofline time alone would be a lower bound. "
                      if any(t.coverage is not None for t in proj.totals)  # measured times projected
                      else "Estimate: each kernel's roofline time. ")
                   + "Across vendors only FLOPs, off-chip and link bytes carry over (on-chip cache "
                   "levels are dropped): a cross-vendor projection is a bound, not a port.")
        for note in proj.notes:
            st.caption(f"Note: {escape_markdown(note)}")
    except RoofcoreError as e:
        message("error", e)

# ------------------------------------------------------------------------------------------------ what-if
with whatif_tab:
    names = [str(n) for n in base.frame["name"]]
    st.caption("Pick transformations of the current workload; they apply in this order (fuse → precision → batch → "
               "shard → communication) and give a new variant (the workload itself is unchanged)."
               + ("" if len(set(names)) == len(names) else " Repeated launches are listed one by one: fuse the "
                  "launches you mean."))
    steps: list[dict] = []
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        # a chain is picked by its first and last launch (no "Select all" can fuse the workload into one kernel)
        f1, f2 = st.columns(2)
        first = f1.selectbox("Fuse a chain from", range(len(names)), index=None, key="wi_fuse_first",
                             format_func=lambda i: f"{i}: {names[i]}", placeholder="first launch",
                             on_change=state.FUSE_LAST.pop,
                             help="The chain's launches become one kernel: the intermediate reads and writes "
                                  "leave off-chip memory (roofcore/plan/transforms.py documents the split).")
        last = f2.selectbox("through", range(first + 1, min(len(names), first + whatif.FUSE_MAX))
                            if first is not None else [], index=None, key=state.FUSE_LAST.name,
                            format_func=lambda i: f"{i}: {names[i]}", disabled=first is None,
                            placeholder="last launch", help=f"Up to {whatif.FUSE_MAX} consecutive launches.")
        if first is not None:
            chain = list(range(first, (last if last is not None else first) + 1))
            if last is None:
                st.caption("Pick the chain's last launch to fuse.")
            elif why := whatif.fuse_problem(base, chain):
                st.warning(escape_markdown(why), icon=":material/link_off:")
            else:
                kernels = [names[i] for i in chain]
                steps.append({"name": "fuse " + (" + ".join(kernels) if len(chain) <= 3 else
                                                 f"{kernels[0]} … {kernels[-1]} ({len(chain)} launches)"),
                              "fuse": {"kernels": kernels if len(set(names)) == len(names) else chain}})
        p1, p2 = st.columns(2)
        dtype = p1.selectbox("Precision", ["(unchanged)", *DTYPES], key="wi_dtype")
        what = p2.selectbox("Of", list(plan.WHAT), key="wi_what", disabled=dtype == "(unchanged)",
                            help="Weights only: bytes shrink, the math stays at the activations' precision.")
        if dtype != "(unchanged)":
            steps.append({"name": f"{dtype} {what}", "precision": {"dtype": dtype, "what": what}})
        factor = st.number_input("Batch factor", min_value=0.01, value=1.0, step=1.0, key="wi_batch",
                                 help="FLOPs and activation bytes scale; weight bytes do not.")
        if factor != 1.0:
            steps.append({"name": f"batch x{factor:g}", "batch": float(factor)})
    with c2:
        s1, s2 = st.columns(2)
        chips = s1.number_input("Shard over chips", min_value=1, value=1, step=1, key="wi_chips")
        dim = s2.selectbox("Dimension", ["k", "m", "n"], key="wi_dim", disabled=chips == 1,
                           format_func={"k": "k (contraction)", "m": "m (rows / batch)", "n": "n (columns)"}.get)
        s3, s4 = st.columns(2)
        link = s3.text_input("Link", value="ici", key="wi_link", disabled=chips == 1,
                             help="The interconnect the all-reduce crosses (ici, nvlink, xgmi…).")
        algorithm = s4.selectbox("All-reduce", list(plan.ALGORITHMS), key="wi_algo", disabled=chips == 1)
        if chips > 1:
            steps.append({"name": f"shard {int(chips)} chips on {dim}",
                          "shard": {"chips": int(chips), "dim": dim, "link": link.strip(), "algorithm": algorithm}})
        frac = st.slider("Non-overlapped communication fraction", 0.0, 0.9, 0.0, 0.05, key="wi_comm",
                         help="Every roof is lowered to (1 − f) of its value.")
        if frac > 0:
            steps.append({"name": f"comm {frac:.0%}", "comm_fraction": float(frac)})
    state.WHATIF_STEPS.set(steps)
    if not steps:
        st.info("No transformation picked: the variant is the workload itself.", icon=":material/tune:")
        state.WHATIF_VARIANT.pop()
    else:
        try:
            key = ("variant", token, json.dumps(steps, sort_keys=True))
            variant, va, ba = cached(key, lambda: (
                (v := whatif.apply_steps(base, steps)),
                plan.evaluate(v, a.hardware, achievable=achievable),
                plan.evaluate(base, a.hardware, achievable=achievable)))
            state.WHATIF_VARIANT.set(variant)
            units = whatif.batch_units(steps)
            st.dataframe(views.variant_totals(ba, va, units), hide_index=True, width="stretch", placeholder="–",
                         key="wi_totals")
            if units != 1.0:
                st.caption(f"A run of the variant does {units:g}× the base's work (the batch step), so times are "
                           "compared per unit of work, per sample or per token: the variant's Σ t_roof ÷ "
                           f"{units:g} against the base's.")
            hw_pick = st.selectbox("Roofline on", hw_ids, key="wi_hw", format_func=labels.__getitem__) \
                if len(hw_ids) > 1 else hw_ids[0]
            fig = cached((*key, hw_pick, "chart"), lambda: charts.roofline_compare(
                plan.evaluate(plan.by_name(base), a.hardware, achievable=achievable),
                plan.evaluate(plan.by_name(variant), a.hardware, achievable=achievable), hw_pick,
                width=720, height=400))
            st.vega_lite_chart(spec=fig.spec(arrow=True), theme=None, width="content", key="wi_chart")
            st.caption(fig.caption + " A fused kernel has a new name, so it has no arrow.")
            for note in dict.fromkeys(variant.warnings):
                st.caption(f"Note: {escape_markdown(note)}")
        except RoofcoreError as e:
            state.WHATIF_VARIANT.pop()
            message("error", e)

# ------------------------------------------------------------------------------------------------ build
with build_tab:
    builder = st.selectbox("Builder", sorted(BUILDERS), key="b_name",
                           index=sorted(BUILDERS).index("transformer") if "transformer" in BUILDERS else 0)
    spec = BUILDER_PARAMS[builder]
    defaults = BUILDER_DEFAULTS.get(builder, {})
    params: dict = {}
    cols = st.columns(4)
    for i, (pname, (kind, required)) in enumerate(spec.items()):
        col, k = cols[i % 4], f"b_{builder}_{pname}"
        label = pname + ("" if required else " (optional)")
        if kind == "int":
            v = col.number_input(label, min_value=1, value=defaults.get(pname, 1 if required else None), step=1,
                                 key=k, placeholder="default")
        elif kind == "bool":
            v = col.selectbox(label, ["default", "true", "false"], key=k)
            v = None if v == "default" else v == "true"
        elif kind == "dtype":
            v = col.selectbox(label, ["default", *DTYPES], key=k)
            v = None if v == "default" else v
        elif isinstance(kind, tuple):
            opts = ["default", *kind]
            v = col.selectbox(label, opts, key=k, index=opts.index(defaults[pname]) if pname in defaults else 0)
            v = None if v == "default" else v
        else:
            v = col.text_input(label, key=k, placeholder="default").strip() or None
        if v is not None:
            params[pname] = int(v) if kind == "int" else v
    try:
        built = cached(("build", builder, json.dumps(params, sort_keys=True)), lambda: build_workload(builder, params))
        st.caption(f"**{escape_markdown(built.name)}**: {len(built):,} kernels.")

        def use_built(w, name: str, p: dict) -> None:
            digest = hashlib.sha1(json.dumps(p, sort_keys=True).encode()).hexdigest()[:12]
            state.WORKLOAD.set({"workload": w, "label": f"{name} builder: {w.name}",
                                "key": f"builder:{name}:{digest}", "builder": name, "params": p})

        st.button("Use as workload", on_click=use_built, args=(built, builder, dict(params)), type="primary", icon=":material/input:", key="b_use",
                  help="Every page then analyses this built workload (until you upload or clear).")
        with st.expander("Kernels"):
            listed = whatif.inline_kernels(built)
            st.dataframe(listed, hide_index=True, width="stretch", placeholder="–",
                         column_config=tables.inventory_columns(sorted({c for k in listed for c in k})))
    except RoofcoreError as e:
        message("error", e)

# ------------------------------------------------------------------------------------------------ solvers
with solver_tab:
    st.markdown("**Where a matmul becomes compute-bound**")
    d1, d2 = st.columns(2)
    d_in = d1.number_input("D (contraction)", min_value=1, value=8192, step=1024, key="sv_d")
    f_in = d2.number_input("F (output columns)", min_value=1, value=8192, step=1024, key="sv_f")
    try:
        table = cached(("cross", tuple(hw_ids), d_in, f_in),
                       lambda: plan.crossover_table(a.hardware, d=float(d_in), f=float(f_in)))
        st.dataframe(table, hide_index=True, width="stretch", placeholder="–", key="sv_table", column_config={
            "hardware": "Device",
            "ridge_bf16": st.column_config.NumberColumn("Ridge bf16 (FLOP/B)", format="%.1f"),
            "square_n_bf16": st.column_config.NumberColumn("Square N (bf16)", format="%.0f"),
            "batch_bf16": st.column_config.NumberColumn("Batch, bf16", format="%.1f"),
            "batch_int8_weights": st.column_config.NumberColumn("Batch, int8 weights + bf16", format="%.1f"),
            "batch_int8": st.column_config.NumberColumn("Batch, full int8", format="%.1f")})
        st.caption(f"Batch B at which X[B, {d_in}] @ W[{d_in}, {f_in}] reaches the device's ridge (≈ ridge in "
                   "bf16, ≈ ridge/2 with int8 weights); square N at which N×N×N does (N = 3 × ridge in bf16). "
                   "Empty: the device publishes no such ceiling.")
        spec = cached(("mi-chart", tuple(hw_ids)),
                      lambda: charts.matmul_intensity_chart(a.hardware).to_dict(validate=False))
        st.vega_lite_chart(spec=dict(spec), theme=None, width="content")
    except RoofcoreError as e:
        message("error", e)
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**2-chip sharded matmul: link- or compute-bound?**")
        sv_hw = st.selectbox("Device", hw_ids, key="sv_hw", format_func=labels.__getitem__,
                             help="The rate and link below start from this device's figures.")
        sv_flops, sv_link, sv_link_name = plan.shard_defaults(next(h for h in a.hardware if h.id == sv_hw),
                                                                  achievable=achievable)
        if state.SOLVER_FOR.get() != [sv_hw, achievable] or not state.SOLVER_FLOPS.present():
            state.SOLVER_FOR.set([sv_hw, achievable])  # a new device: its figures, as "197 TFLOP/s"
            state.SOLVER_FLOPS.set(fmt_si(sv_flops, "FLOP/s", digits=6))
            state.SOLVER_LINK.set(fmt_si(sv_link, "B/s", digits=6) if sv_link else "")
        r1, r2 = st.columns(2)
        flops_text = r1.text_input("FLOP/s per chip", key=state.SOLVER_FLOPS.name,
                                   help=f"{sv_hw}'s bf16 matrix rate to start with; type any, e.g. 197 TFLOP/s.")
        link_text = r2.text_input("Link B/s (per direction)", key=state.SOLVER_LINK.name, placeholder=f"{sv_hw} publishes none",
                                  help=f"{sv_hw}'s {sv_link_name} to start with; type any, e.g. 45 GB/s."
                                  if sv_link_name else f"{sv_hw} publishes no link: type one, e.g. 45 GB/s.")
        r3, r4 = st.columns(2)
        b_in = r3.number_input("B (rows)", min_value=1, value=128, key="sv_b")
        f2_in = r4.number_input("F (columns)", min_value=1, value=8192, key="sv_f2")
        if not link_text.strip():  # nothing is wrong: the device publishes no link and none was typed yet
            st.info(f"{sv_hw} publishes no link: type a link bandwidth (e.g. 45 GB/s) to see where the sharded "
                    "matmul turns compute-bound.")
        else:
            try:
                flops = parse(flops_text, Dimension.FLOP_RATE, where="FLOP/s per chip", allow_zero=False)
                bw = parse(link_text, Dimension.BANDWIDTH, where="Link B/s", allow_zero=False)
                dcross = plan.shard_crossover(flops, bw, float(b_in), float(f2_in))
                st.metric("Compute-bound from D =", f"{dcross:,.0f}",
                          help="X[B,D] @ W[D,F] sharded on D over 2 chips, bf16, ring all-reduce of the B×F partial "
                               "sums: D = |bf16|·π/β.")
            except RoofcoreError as e:
                message("error", e)
    with right:
        st.markdown("**Tile size for a target intensity**")
        t1, t2, t3 = st.columns(3)
        target = t1.number_input("Target FLOP/B", min_value=0.1, value=300.0, key="sv_target")
        ratio = t2.number_input("bn / bm", min_value=0.1, value=1.0, key="sv_ratio")
        multiple = t3.number_input("Multiple of", min_value=1, value=16, key="sv_multiple")
        try:
            bm, bn = plan.tile_for_intensity(target, ratio=ratio, multiple=int(multiple))
            st.metric("Smallest tile (bm × bn)", f"{bm:,} × {bn:,}",
                      help=f"bm·bn/(bm+bn) = {plan.tiled_intensity(bm, bn):,.1f} FLOP/byte (writes ignored).")
        except RoofcoreError as e:
            message("error", e)

# ------------------------------------------------------------------------------------------------ scenario
with scenario_tab:
    up = st.file_uploader("Run a scenario (YAML)", type=["yaml", "yml"], key="sc_upload",
                          help="A base (builder or inline kernels; uploaded scenarios cannot name files), devices "
                               "and steps: see the README's Scenarios section or the examples below.")
    if up is not None:
        try:
            def run_uploaded(data: bytes, name: str):
                try:
                    doc = load_yaml(data, name)
                except yaml.YAMLError as e:
                    raise RoofcoreError(f"{name}: invalid YAML: {getattr(e, 'problem', None) or e}") from None
                if not isinstance(doc, dict):
                    raise RoofcoreError(f"{name}: expected a mapping with name, base, hardware and steps")
                doc.setdefault("name", name)
                return plan.run_scenario(doc, catalog, allow_files=False)

            result = cached(("scenario", up.file_id), lambda: run_uploaded(up.getvalue(), up.name))
            st.subheader(escape_markdown(result.name))
            if result.description:
                st.caption(escape_markdown(result.description))
            st.dataframe(views.scenario_frame(result), hide_index=True, width="stretch", placeholder="–",
                         key="sc_table")
            for note in result.notes[:8]:
                st.caption(f"Note: {escape_markdown(note)}")
            st.download_button("Download result JSON", lambda: json.dumps(result.to_json(analysis_document), indent=1),
                               file_name="scenario-result.json", mime="application/json", icon=":material/download:")
        except RoofcoreError as e:
            message("error", e)
    st.markdown("**The What-if steps as a scenario**")
    wsteps = state.WHATIF_STEPS.get() or []
    sbase, note = scenario_base(entry)
    st.caption(escape_markdown(note) + f" Steps: {len(wsteps)} from the What-if tab; devices: the sidebar's.")
    if sbase is not None:
        # written when clicked: the base carries every kernel inline, and dumping it was a third of this page's run
        scenario_args = (f"What-if on {base.name}", sbase, hw_ids, list(wsteps))
        scenario_kw = {"measured_on": source if timed and not entry.get("builder") else None,
                       "price_per_hour": {k: v for k, v in prices.items() if k in hw_ids}}
        st.download_button("Download scenario YAML", lambda: whatif.scenario_yaml(*scenario_args, **scenario_kw),
                           file_name="whatif-scenario.yaml", mime="application/x-yaml", icon=":material/download:",
                           key="sc_download", on_click="ignore")
    st.markdown("**Example scenarios**")
    ecols = st.columns(2)
    for i, (path, text, files_base) in enumerate(scenario_examples()):
        ecols[i % 2].download_button(path.name, text, file_name=path.name, mime="application/x-yaml",
                                     icon=":material/description:", key=f"sc_example_{path.stem}",
                                     help="Names a workload file: run it with `roofline plan` (an upload here cannot "
                                          "read files)." if files_base else "Upload it above to run it here.")

# ------------------------------------------------------------------------------------------------ LLM serving
with llm_tab:
    llm_tab_view.render(catalog, hw_ids, a, token)
