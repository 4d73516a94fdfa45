"""Property tests of the roofline math (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from roofhelpers import fast_hw as make_hw

from roofcore.analyze import inputs
from roofcore.ingest import make_frame
from roofcore.models import Workload
from roofcore.roofline import Flag, attainable, evaluate

rates = st.floats(min_value=1e9, max_value=1e16)
bws = st.floats(min_value=1e8, max_value=1e14)
amounts = st.floats(min_value=1.0, max_value=1e15)


def _wl(flops, hbm, l2=None, times=None):
    n = len(flops)
    cols = {"name": [f"k{i}" for i in range(n)], "flops": flops, "bytes_hbm": hbm,
            "time_s": times if times is not None else [np.nan] * n,
            "source": ["p"] * n, "row": [str(i) for i in range(n)]}
    if l2 is not None:
        cols["bytes_l2"] = l2
    return Workload(frame=make_frame(cols, n))


def _eval(w, hw):
    inp = inputs(w)
    return inp, evaluate(inp, hw)


@settings(max_examples=200, deadline=None)
@given(pi=rates, b1=bws, b2=bws, kernels=st.lists(st.tuples(amounts, amounts, amounts), min_size=1, max_size=20))
def test_attainable_is_below_every_roof(pi, b1, b2, kernels):
    hw = make_hw(pi, b1, {"l2": b2})
    flops, hbm, l2 = (list(x) for x in zip(*kernels, strict=True))
    inp, r = _eval(_wl(flops, hbm, l2), hw)
    att = attainable(inp.flops, r.t_roof)
    tol = 1 + 1e-9
    assert np.all(att <= pi * tol)
    assert np.all(att <= b1 * inp.flops / inp.byte_cols["hbm"] * tol)
    assert np.all(att <= b2 * inp.flops / inp.byte_cols["l2"] * tol)
    # and it equals the lowest of them (the roofline is tight)
    lowest = np.minimum(pi, np.minimum(b1 * inp.flops / inp.byte_cols["hbm"], b2 * inp.flops / inp.byte_cols["l2"]))
    assert np.allclose(att, lowest, rtol=1e-9)
    assert np.all(r.t_roof <= r.t_serial * tol) and np.all(r.t_serial <= 3 * r.t_roof * tol)


@settings(max_examples=200, deadline=None)
@given(pi=rates, beta=bws, flops=amounts, intensities=st.lists(st.floats(1e-4, 1e6), min_size=2, max_size=30))
def test_attainable_is_monotone_in_intensity(pi, beta, flops, intensities):
    hw = make_hw(pi, beta)
    xs = np.sort(np.array(intensities))
    inp, r = _eval(_wl([flops] * len(xs), list(flops / xs)), hw)
    att = attainable(inp.flops, r.t_roof)
    assert np.all(np.diff(att) >= -1e-9 * att[1:])


@settings(max_examples=200, deadline=None)
@given(pi=rates, beta=bws, k=st.floats(0.01, 100))
def test_roofs_meet_at_the_ridge_and_scaling_bandwidth_moves_it(pi, beta, k):
    hw = make_hw(pi, beta)
    ridge = hw.ridge()["hbm"]
    assert np.isclose(ridge * beta, pi)  # the memory roof reaches the compute roof exactly there
    inp, r = _eval(_wl([ridge * 1e6], [1e6]), hw)
    assert np.isclose(attainable(inp.flops, r.t_roof)[0], pi)
    scaled = make_hw(pi, beta * k)
    assert np.isclose(scaled.ridge()["hbm"], ridge / k)


@settings(max_examples=200, deadline=None)
@given(pi=rates, beta=bws, kernels=st.lists(st.tuples(amounts, amounts, st.floats(1e-9, 1e3)), min_size=1, max_size=20))
def test_efficiency_at_most_one_unless_flagged_above_the_roof(pi, beta, kernels):
    hw = make_hw(pi, beta)
    flops, hbm, times = (list(x) for x in zip(*kernels, strict=True))
    inp, r = _eval(_wl(flops, hbm, times=times), hw)
    eff = r.t_roof / inp.time_s
    above = (r.flags & Flag.ABOVE_ROOF) != 0
    assert np.all(eff[~above] <= 1 + 1e-6)
    assert np.all(eff[above] > 1)
