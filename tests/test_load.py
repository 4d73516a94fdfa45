"""Eight sessions at once on loopback (issue #8): benchmarks/load_test.py, bounded to 8 sessions × 2 rounds.

Every session must complete every round with no error (no stException, no st.error, no page error, no console
error of the app) and the median page time under load must be within 3× of one session's (the same code on
the same server; ``load_test`` defines page time). The numbers go to tests/artifacts/load.json and the
pytest output; screenshots of a failed round to tests/artifacts/load-failed-*.png.

The ratio is not met on a machine with fewer cores than there are sessions: the eight Chromium instances that
play the visitors share those cores with the server and take most of them (the table printed says where the CPU
went; `python benchmarks/load_test.py --browsers 1` loads the server as much while only one browser runs). There
it is an expected failure, reported as such; with 8 cores or more it is enforced.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import browserkit as bk
import pytest

pytestmark = pytest.mark.browser
bk.require_chromium()

sys.path.insert(0, str(bk.ROOT / "benchmarks"))
import load_test  # noqa: E402 (benchmarks/ is not a package)

SESSIONS, ROUNDS, BASELINE_SESSIONS = 8, 2, 2
HARD_TIMEOUT_S = 240  # everything, warm-up and baseline included; it stops by itself well before


def test_a_unique_upload_reads_as_its_export(tmp_path):
    """load_test makes each upload unique with trailing blank lines: they must change nothing read."""
    import roofcore

    uploads = load_test.Uploads(load_test.exports(tmp_path), tmp_path)
    for export in uploads.files:
        plain = roofcore.read_many([(export.read_bytes(), export.name)])
        copy = uploads(0, uploads.files.index(export))
        assert copy.name == export.name and copy.read_bytes() != export.read_bytes()
        read = roofcore.read_many([(copy.read_bytes(), copy.name)])
        assert read.frame.equals(plain.frame) and read.warnings == plain.warnings, export.name
        assert len(read.skipped) == len(plain.skipped), export.name


@pytest.fixture(scope="module")
def result():
    with bk.streamlit_server(bk.ARTIFACTS / "load-streamlit.log") as server:
        r = asyncio.run(asyncio.wait_for(
            load_test.measure(server, SESSIONS, ROUNDS, BASELINE_SESSIONS, shots=bk.ARTIFACTS), HARD_TIMEOUT_S))
    (bk.ARTIFACTS / "load.json").write_text(json.dumps(r, indent=1))
    print("\n" + load_test.table(r))
    return r


def test_every_session_completes_without_errors(result):
    assert result["completed"] == f"{SESSIONS * ROUNDS}/{SESSIONS * ROUNDS}", load_test.table(result)
    assert result["single"]["n"] == BASELINE_SESSIONS * ROUNDS, load_test.table(result)
    assert not result["errors"], load_test.table(result)


@pytest.mark.xfail((os.cpu_count() or 1) < SESSIONS, strict=False,
                   reason=f"{os.cpu_count()} cores for {SESSIONS} Chromium sessions and the server: the browsers "
                          "take most of the CPU (benchmarks/load_test.py prints where it goes)")
def test_median_page_time_under_load_within_3x_of_one_session(result):
    assert result["ratio"] <= load_test.MAX_RATIO, load_test.table(result)
