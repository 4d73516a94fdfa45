"""The Overview's communication line (issue 26 point 5): collectives' share of the measured time and of the link
roof, on our own small inventory (an NCCL all-reduce with its NVLink bytes beside a GEMM)."""

from __future__ import annotations

import pytest
from test_app import said, start, upload

pytestmark = pytest.mark.usefixtures("navigation_only")  # tests/conftest.py

#: 1 ms of all-reduce moving 450 MB per direction on NVLink (450 GB/s), 3 ms of GEMM
COMM = (b"name,flops,bytes_hbm,bytes_nvlink,time_us\nncclDevKernel_AllReduce_Sum_bf16_RING_LL,0,1e9,4.5e8,1000\n"
        b"k_gemm,2e12,1e9,,3000\n")


def test_overview_says_communication_and_its_link_roof_share():
    at = upload(start(), ("comm.csv", COMM))
    lines = [x for x in said(at.info) if x.startswith("Communication:")]
    assert len(lines) == 1 and "25% of the measured time (1 kernel)" in lines[0] and "roof" in lines[0]
