"""Third part of the walk of every sample group through every page in a real browser (test_browser_samples.py
says what it checks): a file of its own, with its own server and browser, so another pytest-xdist worker runs it
beside the first part."""

import pytest
import test_browser_samples as samples
from test_browser_samples import page  # noqa: F401 (the walk's fixture: per module, so this file's own server)

pytestmark = [pytest.mark.browser, pytest.mark.samples]


def test_every_sample_group_on_every_page_part_3(page):  # noqa: F811 (the fixture imported above)
    samples.walk(page, 2)
