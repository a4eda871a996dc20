"""Accessibility, measured (issue 10): axe-core's WCAG 2.1 A/AA and best-practice rules on the
page after a run, in light, dark and at phone width, and in the views a run leads to (an
error, a big graph with its overview, the expanded leaves), report no violation."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Watch, new_page, program_url, wait_done
from .test_graph_view import BIG

pytestmark = pytest.mark.browser
axe_playwright = pytest.importorskip("axe_playwright_python.sync_playwright",
                                     reason="the accessibility check runs axe-core")

WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"
RULES = {"runOnly": {"type": "tag",
                     "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
         "resultTypes": ["violations"]}
VIEWS = {
    "worked example, step 3": (WORKED, 3, None),
    "a rejected program": ("w = 3.0\ny = w + (lambda: 1)\n", 0, None),
    "a big graph and its overview": (BIG, 5, "#leaves-more"),
}


def violations(page: Any) -> str:
    results = axe_playwright.Axe().run(page, options=RULES)
    return "" if results.violations_count == 0 else results.generate_report()


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1440, 900, "light"), (1440, 900, "dark"), (390, 844, "light"), (390, 844, "dark")])
def test_no_axe_violation(browser: Any, watch: Watch, server_url: str, view: str,
                          width: int, height: int, scheme: str) -> None:
    source, step, click = VIEWS[view]
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    try:
        page.goto(program_url(server_url, source, step=step))
        wait_done(page)
        if click:
            page.click(click)
        page.wait_for_timeout(150)
        report = violations(page)
        assert not report, report
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign
