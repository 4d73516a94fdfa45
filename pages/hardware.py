"""Hardware: compare devices, read one in detail (with sources), add your own by form or YAML, download YAML."""

import streamlit as st

from app import page, state
from app.device_form import LABELS as L
from app.device_form import DeviceForm, device_form_yaml, form_message, form_problems, parse_custom_devices
from app.markdown import escape_message
from app.messages import message
from roofcore import RoofcoreError, hardware_to_yaml, views
from roofcore.errors import LocatedError
from roofcore.models import DTYPE_SIZE

page.start("pages/hardware.py", "Hardware")
catalog = state.catalog()
custom = state.CUSTOM.setdefault({})
selected = [catalog.get(h) for h in state.hw_ids() if h in catalog]
labels = {h.id: views.device_label(h) for h in catalog}

if state.HW_FLASH.get():
    message("success", state.HW_FLASH.pop())


def add_devices(devices) -> None:
    """Keep the devices in this session, select them, and rerun so the sidebar lists them."""
    for hw, overrides in devices:
        custom[hw.id] = (hw, overrides)
    state.HW_PREFILL.pop()
    state.SELECT_NEXT.set([hw.id for hw, _ in devices])
    state.HW_FLASH.set("Added " + ", ".join(views.device_label(hw) for hw, _ in devices)
                       + " to this session's devices and selected it in the sidebar.")
    st.rerun()


prefill = state.HW_PREFILL.get()  # a device an upload names that the catalog lacks (see app.device_pick)
if prefill and not prefill.get("applied"):
    for field, value in prefill.items():
        if field in state.HW_FORM:
            state.HW_FORM[field].set(value)
    state.HW_PREFILL.set({**prefill, "applied": True})
compare, detail, add = st.tabs(["Compare", "Details", "Add a device"], default="Add a device" if prefill else None)

with compare:
    if not selected:
        st.info("Select devices in the sidebar to compare them.")
    else:
        comparison = views.hardware_comparison(selected)
        st.dataframe(comparison, width="stretch", placeholder="–", height=35 * (len(comparison) + 1) + 3)
        st.caption("Dense peaks (sparse figures never make a roof). Ridge = default ceiling ÷ off-chip bandwidth, in "
                   "FLOP per byte: kernels below it are memory-bound. Links are per direction.")

with detail:
    options = views.device_order(catalog)
    default = options.index(selected[0].id) if selected else 0
    hw_id = st.selectbox("Device", options, index=default, format_func=labels.__getitem__, key="hw_detail")
    hw = catalog.get(hw_id)
    head = f"**{escape_message(hw.name)}** — {escape_message(hw.vendor)} {hw.kind.value}, {hw.scope.value} scope"
    if hw.unverified:
        head += " · :orange[unverified: check the datasheet before relying on these figures]"
    st.markdown(head)
    meta = [f"Catalog: {escape_message(hw.origin)}" + (" (this session)" if hw.id in custom else "")]
    if hw.config:
        meta.append(f"Configuration: {escape_message(hw.config)}")
    st.caption(" · ".join(meta))
    if hw.notes:
        st.caption(escape_message(hw.notes))
    st.markdown("**Compute ceilings** (dense peak; achievable = measured sustained)")
    st.dataframe(views.ceilings_frame(hw), hide_index=True, width="stretch", placeholder="–")
    st.markdown("**Memory levels** (off-chip first)")
    st.dataframe(views.levels_frame(hw), hide_index=True, width="stretch", placeholder="–")
    if hw.links:
        st.markdown("**Links** (bandwidth per direction)")
        st.dataframe(views.links_frame(hw), hide_index=True, width="stretch", placeholder="–")
    with st.expander("Sources"):
        st.dataframe(views.sources_frame(hw), hide_index=True, width="stretch", placeholder="–")
    b1, b2, _ = st.columns([1, 1, 4])
    b1.download_button("Download YAML", hardware_to_yaml(hw), file_name=f"{hw.id}.yaml", mime="application/x-yaml",
                       icon=":material/download:", on_click="ignore")
    if hw.id in custom and b2.button("Remove from session", icon=":material/delete:"):
        del custom[hw.id]
        state.HW_FLASH.set(f"Removed {hw.id}.")
        st.rerun()

with add:
    if prefill:
        st.info(f"**{escape_message(prefill['name'])}**, the device of your upload, is not in the catalog: the form "
                "starts from what the file says (name, id, vendor). Fill in its peaks and bandwidths from its "
                "datasheet, and name that source.", icon=":material/add_circle:")
    left, right = st.columns(2, gap="large")
    with left, st.form("add_device"):
        st.markdown("**Describe a device**")
        st.caption("Figures from the device's datasheet (or your measurement). Empty fields are not given; "
                   "the grey text in a field is only an example.")
        c1, c2 = st.columns(2)
        dev_id = c1.text_input(L["id"], placeholder="e.g. my-gpu", key="f_id",
                               help="Lowercase letters, digits and dashes: how the CLI and the YAML name the device.")
        name = c2.text_input(L["name"], placeholder="e.g. My GPU 96GB", key="f_name", help="Empty: the id.")
        vendor = c1.text_input(L["vendor"], placeholder="e.g. Acme", key="f_vendor")
        kind = c2.selectbox(L["kind"], ["gpu", "tpu", "npu", "cpu"], key="f_kind")
        st.markdown(f"{L['compute']} (dense peaks; a row left empty is left out)")
        ceilings = []
        for i, (p0, u0) in enumerate((("bf16", "matrix"), ("fp32", "vector"), ("fp8", "matrix"))):
            a1, a2, a3 = st.columns(3)
            p = a1.selectbox("Precision", list(DTYPE_SIZE), index=list(DTYPE_SIZE).index(p0), key=f"f_prec{i}",
                             label_visibility="visible" if i == 0 else "collapsed")
            u = a2.selectbox("Unit", ["matrix", "vector"], index=["matrix", "vector"].index(u0), key=f"f_unit{i}",
                             label_visibility="visible" if i == 0 else "collapsed")
            v = a3.number_input(L["peak"], min_value=0.0, value=None, step=1.0, key=f"f_peak{i}",
                                placeholder="e.g. 989" if i == 0 else "optional",
                                label_visibility="visible" if i == 0 else "collapsed")
            ceilings.append((p, u, v))
        m1, m2, m3 = st.columns(3)
        hbm_bw = m1.number_input(L["hbm_bandwidth"], min_value=0.0, value=None, step=0.1, key="f_hbm",
                                 placeholder="e.g. 3.35")
        hbm_cap = m2.number_input(L["hbm_capacity"], min_value=0.0, value=None, step=8.0, key="f_hbm_cap",
                                  placeholder="optional")
        hbm_label = m3.text_input(L["hbm_label"], placeholder="e.g. HBM3 (optional)", key="f_hbm_label")
        l1, l2c, _ = st.columns(3)
        l2_bw = l1.number_input(L["l2_bandwidth"], min_value=0.0, value=None, step=0.5, key="f_l2",
                                placeholder="optional")
        l2_cap = l2c.number_input(L["l2_capacity"], min_value=0.0, value=None, step=1.0, key="f_l2_cap",
                                  placeholder="optional")
        k1, k2, _ = st.columns(3)
        link = k1.text_input(L["link_name"], placeholder="e.g. nvlink (optional)", key="f_link")
        link_bw = k2.number_input(L["link_bandwidth"], min_value=0.0, value=None, step=10.0, key="f_link_bw",
                                  placeholder="optional")
        source = st.text_input(L["source"], placeholder="e.g. datasheet rev 3, or our measurement", key="f_source",
                               help="Empty: \"entered in the Roofline app\".")
        overrides = st.checkbox(L["overrides"], key="f_overrides")
        submitted = st.form_submit_button("Add device", type="primary", key="f_submit")
    if submitted:
        form = DeviceForm(id=dev_id, name=name, vendor=vendor, kind=kind,
                          ceilings=[c for c in ceilings if c[2]], hbm_bandwidth=hbm_bw, hbm_capacity=hbm_cap,
                          hbm_label=hbm_label, l2_bandwidth=l2_bw, l2_capacity=l2_cap, link_name=link,
                          link_bandwidth=link_bw, source=source or "entered in the Roofline app",
                          overrides=overrides)
        problems = form_problems(form, state.BUILTIN.read())
        text = device_form_yaml(form)
        try:
            devices = [] if problems else parse_custom_devices(text.encode(), "the form", state.BUILTIN.read(), custom)
        except RoofcoreError as e:  # what the form's own checks let through: the loader's words, by field
            problems = [form_message(e) if isinstance(e, LocatedError) else str(e)]
            with left.expander("The catalog YAML this form produced"):
                st.code(text, language="yaml")
        for problem in problems:
            message("error", problem, where=left)
        if not problems:
            add_devices(devices)
    with right:
        st.markdown("**Or upload catalog YAML**")
        st.caption("The same grammar as the built-in catalogs (catalogs/README.md); start from any device's "
                   "Download YAML. Devices stay in this session only.")
        up = st.file_uploader("Catalog YAML", type=["yaml", "yml"], key=f"hw_upload_{state.HW_UPLOAD_GEN.get(0)}")
        if up is not None and up.file_id != state.HW_UPLOAD_DONE.get():
            try:
                devices = parse_custom_devices(up.getvalue(), up.name, state.BUILTIN.read(), custom)
            except RoofcoreError as e:
                message("error", e)
            else:
                state.HW_UPLOAD_DONE.set(up.file_id)
                add_devices(devices)
        if custom:
            st.markdown("**This session's devices**")
            for hw_id in list(custom):
                st.markdown(f"- {escape_message(labels.get(hw_id, hw_id))}")
