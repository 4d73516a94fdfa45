"""Closed options are typed (``Literal``) and refused when misspelt (issue 25 point 6): a roofline's ``color_by``
and ``layout``, the kinds of app message."""

from typing import get_args

import pytest

from roofcore import charts


@pytest.mark.parametrize("kwargs", [{"color_by": "precision"}, {"layout": "facets"}, {"color_by": "Bound"}])
def test_a_misspelt_option_is_an_error_not_the_default(kwargs):
    with pytest.raises(ValueError, match=r"color_by is one of \('bound', 'group'\), layout one of \('overlay', 'facet'\)"):
        charts.roofline(None, **kwargs)  # refused before the analysis is read


def test_the_option_tuples_are_the_literals():
    assert charts.COLOR_BY == get_args(charts.ColorBy) == ("bound", "group")
    assert charts.LAYOUTS == get_args(charts.Layout) == ("overlay", "facet")


def test_every_message_kind_has_an_icon_and_a_streamlit_alert():
    st = pytest.importorskip("streamlit")
    from app.messages import ICONS, MessageKind

    assert set(ICONS) == set(get_args(MessageKind))
    assert all(callable(getattr(st, kind)) for kind in get_args(MessageKind))
