"""Report: a preview of the HTML report and its downloads (HTML, PDF built only when clicked, CSV, JSON)."""

import streamlit as st
import yaml

from app import levels, page, state
from app.memo import remember
from app.messages import message
from roofcore import RoofcoreError, report
from roofcore.advise import advise_all
from roofcore.limits import load_yaml
from roofcore.output import analysis_csv, analysis_json
from roofcore.plan import run_scenario

page.start("pages/report.py", "Report")
a = page.analysis()
token = state.token()

try:
    up = st.file_uploader("Attach a planning scenario (YAML, optional)", type=["yaml", "yml"], key="report_scenario",
                          help="Its variants are tabled in the report. The base must be inline or a builder "
                               "(files are not read from the server).")
    scenario = None
    if up is not None:
        try:
            scenario = run_scenario(load_yaml(up.getvalue(), up.name), state.catalog(), allow_files=False)
        except (RoofcoreError, yaml.YAMLError) as e:
            message("error", f"Scenario not attached: {e}")
    title = st.text_input("Title", value=report.default_title(a), key="report_title")
    opts = st.columns(3)
    top = opts[0].number_input("Top kernels", min_value=1, max_value=50, value=report.TOP, step=1, key="report_top",
                               help="Rows of the top-kernels table; their points are numbered in the charts.")
    modes = {"auto": None, "every kernel": "all", "top kernels": "top", "none": "none"}
    mode = modes[opts[1].selectbox(
        "Appendix", list(modes), key="report_appendix",
        help=f"Kernels listed with their full names: 'auto' lists every kernel up to {report.APPENDIX_ALL_MAX:,}, "
             "else the top ones (the CSV has them all).")]
    paper = opts[2].selectbox("Paper", report.PAPERS, key="report_paper", format_func=str.upper)
    key = (token, title, up.file_id if up is not None and scenario is not None else None, top, mode, paper)
    # combined launches sum their modules and steps away: the hierarchy section reads the launch-by-launch analysis
    options = {"title": title, "scenario": scenario, "top": int(top), "appendix": mode, "paper": paper,
               "levels": levels.per_launch(a)}

    def build() -> tuple[str, dict]:
        advice = advise_all(a)
        return report.build_html(a, advice=advice, **options), advice

    html, advice = remember("report", key, build, keep=1)

    cols = st.columns(4)
    cols[0].download_button("HTML", html.encode("utf-8"), "roofline-report.html", "text/html",
                            icon=":material/description:", on_click="ignore")  # no rerun: nothing changes
    missing = report.pdf_available()
    if missing:
        cols[1].button("PDF", disabled=True, help=missing, icon=":material/picture_as_pdf:")
        st.caption(missing)
    else:
        cols[1].download_button("PDF", lambda: report.build_pdf(a, advice=advice, **options),
                                "roofline-report.pdf", "application/pdf",
                                icon=":material/picture_as_pdf:", on_click="ignore")
    cols[2].download_button("CSV", lambda: analysis_csv(a).encode("utf-8"), "roofline-analysis.csv", "text/csv",
                            icon=":material/table_rows:", on_click="ignore")
    cols[3].download_button(
        "JSON", lambda: analysis_json(a, {"advice": [x.to_json() for x in advice.values()]}).encode("utf-8"),
        "roofline-analysis.json", "application/json", icon=":material/data_object:", on_click="ignore")
    st.iframe(html, height=900)  # the page is escaped and has no script
except RoofcoreError as e:
    message("error", e)
