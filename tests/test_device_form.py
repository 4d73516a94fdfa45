"""The Hardware page's "add a device" form speaks in its own field names (issue 23, point 8): "Vendor: required",
"Off-chip bandwidth (TB/s): must be a number > 0", never a catalog key path ("$.devices[0].vendor",
"['memory'][0]['bandwidth']"); its fields start empty, and the grey text in a field is marked as an example
("e.g. …") or as optional, never a figure that reads as entered."""

from __future__ import annotations

import re

import pytest
from test_app import goto, said, start

import roofcore
from app.device_form import (
    LABELS,
    DeviceForm,
    device_form_yaml,
    form_message,
    form_problems,
    parse_custom_devices,
)

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py
#: what a catalog key path looks like in a message
PATH = re.compile(r"\$\.|\[\d+\]|\['")


@pytest.fixture(scope="module")
def builtin() -> roofcore.Catalog:
    return roofcore.load_catalogs()


def form(**kw) -> DeviceForm:
    base = {"id": "lab-gpu", "name": "Lab GPU", "vendor": "Lab", "kind": "gpu", "ceilings": [("bf16", "matrix", 500.0)],
            "hbm_bandwidth": 4.0}
    return DeviceForm(**{**base, **kw})


@pytest.mark.parametrize(("change", "expected"), [
    ({"vendor": ""}, ["Vendor: required"]),
    ({"vendor": "  "}, ["Vendor: required"]),
    ({"hbm_bandwidth": None}, ["Off-chip bandwidth (TB/s): required, a number > 0"]),
    ({"hbm_bandwidth": 0.0}, ["Off-chip bandwidth (TB/s): must be a number > 0"]),
    ({"id": ""}, ["Id: required (lowercase letters, digits and dashes, e.g. my-gpu)"]),
    ({"id": "My GPU"}, ["Id: use lowercase letters, digits and single dashes (e.g. my-gpu); found 'My GPU'"]),
    ({"ceilings": []}, ["Compute ceilings: give at least one Peak (TFLOP/s) > 0"]),
    ({"ceilings": [("bf16", "matrix", 500.0), ("bf16", "matrix", 400.0)]},
     ["Compute ceilings: bf16 matrix is given twice; keep one row"]),
    ({"link_name": "nvlink"}, ["Link bandwidth (GB/s, one way): required with a Link, a number > 0"]),
    ({"link_bandwidth": 400.0}, ["Link: required with a Link bandwidth (GB/s, one way) (e.g. nvlink, pcie)"]),
    ({"link_name": "my link", "link_bandwidth": 400.0},
     ["Link: use lowercase letters, digits and underscores (e.g. nvlink); found 'my link'"]),
    ({"l2_capacity": 50.0}, ["L2 capacity (MB): needs an L2 bandwidth (TB/s) (the L2 roof)"]),
    ({"id": "h100-sxm"}, ["Id: 'h100-sxm' is a built-in device (catalogs/nvidia.yaml); pick another id, or tick "
                          "\"Replace a built-in device with the same id\""]),
])
def test_each_problem_is_named_by_its_field(builtin, change, expected):
    assert form_problems(form(**change), builtin) == expected


def test_a_complete_form_has_no_problem_and_loads(builtin):
    f = form(l2_bandwidth=10.0, l2_capacity=50.0, link_name="nvlink", link_bandwidth=400.0, hbm_capacity=96.0)
    assert form_problems(f, builtin) == []
    (hw, _), = parse_custom_devices(device_form_yaml(f).encode(), "the form", builtin, {})
    assert hw.offchip.bandwidth == 4e12 and hw.link_map["nvlink"].bandwidth == 400e9
    assert form_problems(form(id="h100-sxm", overrides=True), builtin) == []  # replacing a built-in on purpose


@pytest.mark.parametrize(("change", "label"), [
    ({"vendor": ""}, "Vendor"), ({"hbm_bandwidth": 0.0}, "Off-chip bandwidth (TB/s)"), ({"id": "No Id"}, "Id"),
    ({"ceilings": []}, "Compute ceilings"), ({"link_name": "a b", "link_bandwidth": 5.0}, "Link"),
])
def test_the_loaders_own_errors_are_told_by_field_too(builtin, change, label):
    """What the form's checks would let through reaches the catalog loader: its error names the field, not the
    key path of the YAML the form produced."""
    with pytest.raises(roofcore.RoofcoreError) as e:
        parse_custom_devices(device_form_yaml(form(**change)).encode(), "the form", builtin, {})
    assert "$.devices" in str(e.value)  # what the loader says of the YAML
    text = form_message(e.value)
    assert text.startswith(label + ": ") and not PATH.search(text), text


def test_the_page_names_the_fields_and_starts_empty():
    at = goto(start(), "pages/hardware.py")
    at.button(key="f_submit").click().run()  # nothing filled in
    errors = said(at.error)
    assert errors == ["Id: required (lowercase letters, digits and dashes, e.g. my-gpu)", "Vendor: required",
                      "Compute ceilings: give at least one Peak (TFLOP/s) > 0",
                      "Off-chip bandwidth (TB/s): required, a number > 0"]
    assert not any(PATH.search(e) for e in errors)
    numbers = [n for n in at.number_input if n.key and n.key.startswith("f_")]
    assert numbers and all(n.value is None for n in numbers)  # no figure the user did not enter
    for el in [*numbers, *(t for t in at.text_input if t.key and t.key.startswith("f_"))]:
        hint = el.proto.placeholder
        assert not hint or hint.startswith("e.g. ") or hint == "optional", (el.key, hint)
    labels = {el.proto.label for el in [*at.text_input, *at.number_input]}
    assert {LABELS[k] for k in ("id", "vendor", "hbm_bandwidth", "peak", "link_bandwidth")} <= labels


def test_the_page_adds_the_device_once_the_problem_is_fixed():
    at = goto(start(), "pages/hardware.py")
    at.text_input(key="f_id").set_value("lab-gpu")
    at.number_input(key="f_peak0").set_value(500.0)
    at.number_input(key="f_hbm").set_value(0.0)
    at.button(key="f_submit").click().run()
    assert said(at.error) == ["Vendor: required", "Off-chip bandwidth (TB/s): must be a number > 0"]
    at.text_input(key="f_vendor").set_value("Lab")
    at.number_input(key="f_hbm").set_value(4.0)
    at.button(key="f_submit").click().run()
    assert not at.error and "lab-gpu" in at.sidebar.multiselect[0].value
