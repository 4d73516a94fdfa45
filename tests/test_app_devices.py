"""The device an upload was profiled on, in the app (AppTest): taken from the file while the devices are the app's
own choice (with a notice and a way back), offered when they were chosen by hand, the closest of the same silicon
for a device the catalog lacks (and the Hardware page's form filled in for it), and a second upload from another
GPU asked about (add, replace, compare) instead of merged.

The traces are small PyTorch profiler traces built here (a device name, compute capability, SM count and memory
size, as the profiler writes them); the real exports of ../shared/samples where they exist (skipped elsewhere).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from roofhelpers import sample
from streamlit.testing.v1 import AppTest
from test_app import APP, metrics, said

import roofcore
from app.devices import match
from app.workload import DEFAULT_DEVICE
from roofcore.cli.analysis import detected_devices
from roofcore.units import fmt_time

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

CATALOG = roofcore.load_catalogs()


def trace(device: str, cc: str, sms: int, mem_gb: float, kernels: tuple[str, ...] = ("gemm_kernel", "softmax"),
          dur_us: float = 50.0) -> bytes:
    """A GPU-only PyTorch profiler trace of ``kernels`` on ``device`` (what Kineto writes in deviceProperties)."""
    major, minor = (int(x) for x in cc.split("."))
    events = [{"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": 1000.0 + 200 * i,
               "dur": dur_us * (i + 1), "args": {"device": 0, "stream": 7, "correlation": i + 1}}
              for i, k in enumerate(kernels)]
    return json.dumps({"schemaVersion": 1, "deviceProperties": [
        {"id": 0, "name": device, "totalGlobalMem": int(mem_gb * 2**30), "computeMajor": major,
         "computeMinor": minor, "numSms": sms}], "traceEvents": events}).encode()


A100 = trace("NVIDIA A100-SXM4-80GB", "8.0", 108, 80)
A100_MORE = trace("NVIDIA A100-SXM4-80GB", "8.0", 108, 80, kernels=("layernorm",))
T4 = trace("Tesla T4", "7.5", 40, 15, dur_us=80.0)
UNLISTED = trace("NVIDIA RTX 4000 Ada Generation", "8.9", 48, 20)  # AD104: a GPU the catalog lacks


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def put(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    """The uploader holds ``files`` (all of them: a browser keeps the ones already there)."""
    return ok(at.sidebar.file_uploader[0].set_value([(n, d, "application/json") for n, d in files]).run())


def devices(at: AppTest) -> list[str]:
    return at.sidebar.multiselect(key="hw_ids").value


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def buttons(at: AppTest) -> dict[str, str]:
    return {b.key: b.label for b in at.sidebar.button if b.key}


def links(at: AppTest) -> dict[str, str]:
    """The sidebar's links: label -> page and query string."""
    return {el.value: f"{el.proto.page}?{el.proto.query_string}" for el in at.sidebar.get("page_link")}


def follow(at: AppTest, page: str, param: str, value: str) -> AppTest:
    """Follow a sidebar link (AppTest cannot click one): its page with its query parameter."""
    at.query_params[param] = value
    return ok(at.switch_page(page).run())


# ------------------------------------------------------------------------------------------ device from the file


def test_the_device_the_file_names_is_selected_with_a_notice_and_a_way_back():
    at = put(start(), ("a100.json", A100))
    assert devices(at) == ["a100-80gb-sxm"]
    assert said(at.sidebar.info) == [f"**Device from the file:** {CATALOG.get('a100-80gb-sxm').name} "
                                     "(`a100-80gb-sxm`)\nThe file names NVIDIA A100-SXM4-80GB."]
    at.sidebar.button(key="device_undo").click().run()
    assert devices(ok(at)) == [DEFAULT_DEVICE] and not at.sidebar.info
    assert buttons(at)["use_suggested"] == "Use a100-80gb-sxm"  # offered again, never imposed twice
    assert (f"Profiled on **NVIDIA A100-SXM4-80GB**; closest catalog device: **{CATALOG.get('a100-80gb-sxm').name}** "
            "(`a100-80gb-sxm`).") in captions(at)


def test_the_apps_own_pick_follows_the_next_upload_but_a_choice_by_hand_stays():
    at = put(start(), ("a100.json", A100))
    next(b for b in at.sidebar.button if b.label == "Clear uploads").click().run()
    assert devices(at) == [DEFAULT_DEVICE]  # the file it came from is gone
    put(at, ("a100.json", A100))
    put(at, ("t4.json", T4))  # the a100 file removed from the uploader, a T4 one given
    assert devices(at) == ["t4"]  # a100 was the app's choice, not the user's
    put(at, ("inventory.csv", b"name,flops,bytes,time_ms\ngemm,1e12,1e9,2\n"))
    assert devices(at) == [DEFAULT_DEVICE] and not at.sidebar.info  # a file that names no device: the default
    next(b for b in at.sidebar.button if b.label == "Clear uploads").click().run()
    ok(at.sidebar.multiselect(key="hw_ids").set_value(["mi300x"]).run())
    put(at, ("a100.json", A100))
    assert devices(at) == ["mi300x"] and not at.sidebar.info  # chosen by hand: kept, and asked
    assert {k: buttons(at)[k] for k in ("use_suggested", "add_suggested")} == {
        "use_suggested": "Use a100-80gb-sxm instead", "add_suggested": "Add a100-80gb-sxm"}
    at.sidebar.button(key="add_suggested").click().run()
    assert devices(ok(at)) == ["mi300x", "a100-80gb-sxm"]


def test_a_profile_of_one_vendor_under_only_another_vendors_devices_says_so():
    """A rocprofv3 kernel trace names no GPU: the app kept its default NVIDIA device and drew AMD times against
    NVIDIA roofs with nothing said (the CLI refuses it without --hardware). The sidebar now says which vendor ran
    it and why, until a device of that vendor is among the chosen ones; a file of no known vendor says nothing."""
    v3 = (Path(__file__).parent / "data" / "rocprof" / "kernel_trace_v3.csv").read_bytes()
    at = put(start(), ("1_kernel_trace.csv", v3))
    assert devices(at) == [DEFAULT_DEVICE]
    assert said(at.sidebar.warning) == [
        "This profile ran on an AMD GPU (rocprof runs on AMD GPUs only); its times are read against the roofs of "
        f"{CATALOG.get(DEFAULT_DEVICE).name}. Choose the AMD GPU it ran on under Devices."]
    heading = ":orange[Not the GPU this profile ran on: it ran on an AMD GPU (see the sidebar).]"
    assert heading in [c.value for c in at.main.caption]  # under the Overview's device heading too
    ok(at.switch_page("pages/recommendations.py").run())
    assert heading in [c.value for c in at.main.caption]  # and the Recommendations', whose gains it bounds
    ok(at.switch_page("pages/overview.py").run())
    ok(at.sidebar.multiselect(key="hw_ids").set_value([DEFAULT_DEVICE, "mi300x"]).run())
    assert not at.sidebar.warning  # an AMD device beside the NVIDIA one: a comparison the user chose
    assert heading not in [c.value for c in at.main.caption]
    from app.devices import match, other_vendor

    w = roofcore.read(v3, name="1_kernel_trace.csv")
    from roofcore.ingest.ceilings import measured_devices

    path = Path(__file__).parent / "data" / "ceilings" / "roofline.json"
    (ert,) = measured_devices(path.read_bytes(), path.name) or ()  # an ERT measurement: a device of no known vendor
    assert ert.vendor == "unknown"
    assert other_vendor(CATALOG.with_device(ert), w, match(CATALOG, w), [ert.id]) is None  # chosen: no warning
    assert other_vendor(CATALOG, w, match(CATALOG, w), [DEFAULT_DEVICE]) is not None
    next(b for b in at.sidebar.button if b.label == "Clear uploads").click().run()
    put(at, ("inventory.csv", b"name,flops,bytes,time_ms\ngemm,1e12,1e9,2\n"))
    ok(at.sidebar.multiselect(key="hw_ids").set_value([DEFAULT_DEVICE]).run())
    assert not at.sidebar.warning  # an inventory says no vendor
    put(at, ("t4.json", T4))
    assert devices(at) == ["t4"] and not at.sidebar.warning  # a device the file names: taken, no warning


def test_a_file_that_names_no_gpu_says_the_default_stands_in():
    """An Nsight Systems kernel summary names no GPU (the CLI asks for --hardware): the sidebar says the default
    device's roofs are drawn, with what the file does say (kernel names built for sm_80), until devices are chosen
    by hand; the bundled example says nothing of it."""
    at = start()
    assert "names no" not in captions(at)
    kern_sum = (Path(__file__).parent / "data" / "nsys" / "kern_sum.csv").read_bytes()
    put(at, ("kern_sum.csv", kern_sum + b'0.1,1000,1,1000.0,1000.0,1000,1000,0.0,"ampere_sgemm_64x64_nn"\n'))
    assert devices(at) == [DEFAULT_DEVICE]
    assert ("The file names no one GPU: kernel names carry ampere_ tags (built for Ampere, sm_80: the GPU is sm_80 "
            "or a later one that runs them). The roofs are those of the default device, "
            f"{CATALOG.get(DEFAULT_DEVICE).name}; choose the GPU it ran on under Devices.") in said(at.sidebar.caption)
    stand_in = ":orange[The app's default device: the file names no GPU (see the sidebar).]"
    assert stand_in in [c.value for c in at.main.caption]  # under the Overview's device heading too
    ok(at.sidebar.multiselect(key="hw_ids").set_value(["a100-80gb-sxm"]).run())
    assert "names no" not in captions(at) and not at.sidebar.warning
    assert stand_in not in [c.value for c in at.main.caption]


def test_a_device_the_catalog_lacks_gets_the_closest_of_its_silicon_and_the_form_to_add_it():
    w = roofcore.read(UNLISTED, name="ada.json")
    m = match(CATALOG, w)
    assert m is not None and m.missing and m.device == "NVIDIA RTX 4000 Ada Generation"
    at = put(start(), ("ada.json", UNLISTED))
    label = "Add it on the Hardware page"
    assert links(at).get(label) == "hardware?add_device=1"
    if m.ids:  # the engine names the closest device of the same silicon: taken, with its note
        assert devices(at) == [m.ids[0]]
        notice = said(at.sidebar.info)[0]
        assert f"(`{m.ids[0]}`)" in notice and "not in the catalog" in notice and m.note.rstrip(". ") in notice
    else:  # nothing of the same silicon: the default stays, and the sidebar says why
        assert devices(at) == [DEFAULT_DEVICE]
        assert "Profiled on **NVIDIA RTX 4000 Ada Generation**, which is not in the catalog" in captions(at)
    follow(at, "pages/hardware.py", "add_device", "1")
    assert (at.text_input(key="f_name").value, at.text_input(key="f_id").value, at.text_input(key="f_vendor").value) \
        == ("NVIDIA RTX 4000 Ada Generation", "nvidia-rtx-4000-ada-generation", "NVIDIA")
    assert any("the device of your upload, is not in the catalog" in i.value for i in at.info)
    assert (at.number_input(key="f_peak0").value, at.number_input(key="f_hbm").value) == (None, None)  # no guess
    at.number_input(key="f_peak0").set_value(106.9)
    at.number_input(key="f_hbm").set_value(0.36)
    at.text_input(key="f_source").set_value("datasheet")
    at.button(key="f_submit").click().run()
    assert not ok(at).error and "nvidia-rtx-4000-ada-generation" in devices(at)
    assert not any("the device of your upload" in i.value for i in at.info)  # added: the form is the usual one


ROC = Path(__file__).parent / "data" / "rocprof"
EIGHT = Path(__file__).parent / "data" / "ceilings" / "roofline_mi200_8gpu.csv"  # 8 GPUs of one model


def test_add_the_measured_roofs_of_eight_gpus_adds_one_device_with_their_spread():
    """rocprof-compute measured the 8 GPUs of the node: "Add the measured roofs" adds one device, their median,
    whose spread the Hardware page shows."""
    at = put(start(), *((p.name, p.read_bytes()) for p in (ROC / "pmc_perf_mi200.csv", ROC / "sysinfo_mi200.csv",
                                                           EIGHT)))
    before = devices(at)
    assert "The upload carries measured ceilings of 1 device (`mi200-measured`)." in captions(at)
    assert buttons(at)["use_measured"] == "Add the measured roofs"
    at.sidebar.button(key="use_measured").click().run()
    assert devices(ok(at)) == [*before, "mi200-measured"]  # one device, not eight
    assert "use_measured" not in buttons(at)  # every measured device is chosen: nothing left to add
    ok(at.switch_page("pages/hardware.py").run())
    ok(at.selectbox(key="hw_detail").set_value("mi200-measured").run())
    shown = " ".join(c.value for c in at.caption)
    assert "The median of 8 GPUs of one model (devices 0–7 of roofline_mi200_8gpu.csv)" in shown
    assert "Spread, lowest–highest: HBM 1.39–1.43 TB/s;" in shown
    levels = next(d.value for d in at.dataframe if "Level" in d.value.columns)
    assert levels.set_index("Level").loc["hbm", "Derivation"] == "median of 8 GPUs (devices 0–7): 1.39–1.43 TB/s"


@pytest.mark.samples
@pytest.mark.parametrize(("name", "expected"), [
    ("pytorch_kineto_t4_amp_record_shapes.json", "t4"),
    ("pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz", "mi210"),
    ("ncu_raw_b200_torch_sdpa_flash.csv", "b200"),
    ("ncu_raw_ncu2019.4_gtx1080_legacy_metric_names.csv", "gtx-1080"),
    # a CC column and no device name: the implied DRAM peak (2,035 GB/s) picks the 80 GB A100
    ("ncu_details_a100_julia_set_full_rules_humanunits.csv", "a100-80gb-sxm"),
    ("ncu_rtx5090_deepseekocr_gemv_details_na_legacy_metrics.csv", "rtx-5090"),  # CC 12.0, 1,757 GB/s implied
    ("rocprofv1_r9700_rdna4_llamacpp_results_multigpu_gpuid2.csv", "radeon-ai-pro-r9700"),  # Tensile ISA1201 names
])
def test_every_format_selects_the_device_the_engine_resolves(name, expected):
    """Whatever format says it (a device column, deviceProperties, a CC column, kernel-name tags), the device the
    engine resolves for the file is selected, with why; where the engine resolves none, the default stays and
    nothing is claimed."""
    path = sample(name)
    w = roofcore.read_many([path])
    m = match(CATALOG, w)
    if expected:
        assert m is not None and m.top == expected
    # the app and the CLI (no --hardware) take the same device
    assert [hw.id for hw in detected_devices(CATALOG, w)] == ([m.top] if m is not None and m.top else [])
    at = put(start(), (path.name, path.read_bytes()))
    if m is not None and m.top:
        assert devices(at) == [m.top]
        assert said(at.sidebar.info)[0].startswith(f"**Device from the file:** {CATALOG.get(m.top).name} "
                                                   f"(`{m.top}`)")
    else:
        assert devices(at) == [DEFAULT_DEVICE] and not at.sidebar.info


# ------------------------------------------------------------------------------------- a second upload, other GPU


def asked(at: AppTest) -> str:
    texts = said(at.sidebar.warning)
    assert len(texts) == 1, texts
    return texts[0]


def test_a_second_upload_from_another_gpu_is_asked_about_not_merged():
    at = put(start(), ("a100.json", A100))
    put(at, ("a100.json", A100), ("t4.json", T4))
    assert asked(at) == ("**t4.json** was profiled on **Tesla T4**, this workload on **NVIDIA A100-SXM4-80GB**. "
                         "Add it to this workload, replace the workload with it, or compare the two?")
    assert captions(at).startswith("**a100.json** · 2 kernels")  # not merged
    assert {k: buttons(at)[k] for k in ("upload_add", "upload_replace")} == {
        "upload_add": "Add to this workload", "upload_replace": "Replace"}
    assert links(at)["Compare the two"] == "compare?compare=upload"
    assert devices(at) == ["a100-80gb-sxm"]
    assert [f.name for f in at.sidebar.file_uploader[0].value] == ["a100.json", "t4.json"]  # every file kept


def test_replace_reads_the_new_file_alone_and_keeps_the_other_in_the_uploader():
    at = put(put(start(), ("a100.json", A100)), ("a100.json", A100), ("t4.json", T4))
    at.sidebar.button(key="upload_replace").click().run()
    assert "**t4.json** · 2 kernels ·" in captions(ok(at))
    assert devices(at) == ["t4"]  # the app's own pick follows the workload
    assert "In the uploader but not analysed: a100.json." in captions(at) and not at.sidebar.warning
    at.sidebar.button(key="upload_all").click().run()
    assert "**a100.json + t4.json** · 2 kernels (4 launches)" in captions(ok(at))
    assert "not analysed" not in captions(at)


def test_add_reads_both_as_one_workload_on_both_devices():
    at = put(put(start(), ("a100.json", A100)), ("a100.json", A100), ("t4.json", T4))
    at.sidebar.button(key="upload_add").click().run()
    assert "**a100.json + t4.json** · 2 kernels (4 launches)" in captions(ok(at))
    assert devices(at) == ["a100-80gb-sxm", "t4"]
    assert "Read as one workload from files profiled on NVIDIA A100-SXM4-80GB and Tesla T4." in captions(at)
    assert not at.sidebar.warning and not at.sidebar.info


def test_compare_the_two_opens_compare_with_the_workload_before_and_the_new_file_after():
    at = put(put(start(), ("a100.json", A100)), ("a100.json", A100), ("t4.json", T4))
    follow(at, "pages/compare.py", "compare", "upload")
    assert at.title[0].value == "Compare"
    assert any("**a100.json** → the new upload **t4.json**" in i.value for i in at.info)
    old, new = (roofcore.read(d, name=n) for n, d in (("a100.json", A100), ("t4.json", T4)))
    shown = metrics(at)
    assert shown["Before"] == [fmt_time(old.frame["time_s"].sum())] and shown["After"] == [
        fmt_time(new.frame["time_s"].sum())]
    assert shown["Matched kernels"] == ["2"]  # the same kernel names on both GPUs
    assert devices(at) == ["a100-80gb-sxm", "t4"] and at.selectbox(key="cmp_hw").value == "a100-80gb-sxm"
    assert "**a100.json** · 2 kernels ·" in captions(at)  # the sidebar's workload is unchanged
    assert "In the uploader but not analysed: t4.json." in captions(at)
    assert [f.name for f in at.sidebar.file_uploader[0].value] == ["a100.json", "t4.json"]


def test_a_second_upload_from_the_same_gpu_joins_the_workload():
    at = put(put(start(), ("a100.json", A100)), ("a100.json", A100), ("more.json", A100_MORE))
    assert not at.sidebar.warning
    assert captions(at).startswith("**a100.json + more.json** · 3 kernels")
    assert devices(at) == ["a100-80gb-sxm"]


@pytest.mark.samples
@pytest.mark.parametrize(("first", "second"), [
    ("pytorch_kineto_t4_amp_record_shapes.json", "pytorch_kineto_mi210_rocm6.4_gpu_only.json.gz"),
    ("ncu_details_a100_julia_set_full_rules_humanunits.csv",
     "rocprofv1_r9700_rdna4_llamacpp_results_multigpu_gpuid2.csv"),
])
def test_real_exports_from_two_gpus_are_asked_about(first, second):
    a, b = sample(first), sample(second)
    at = put(start(), (a.name, a.read_bytes()))
    label = captions(at)
    put(at, (a.name, a.read_bytes()), (b.name, b.read_bytes()))
    assert asked(at).startswith(f"**{b.name}** was profiled on ")
    assert captions(at) == label  # the workload is the first file's until the user answers
