""""Compare schedulers" (views/schedulers.js): the same program under PyTorch's ready queue
and under the topological order, side by side. Each column's order is exactly its trace's
steps (traced here by the engine, not typed in), the marks sit exactly where the two orders
part, and the lab's one step index moves both; axe-core finds nothing in light, dark and
at phone width."""

from __future__ import annotations

from typing import Any

import pytest

from app.trace import run_source
from app.trace.document import Trace

from .conftest import Watch, new_page, program_url, wait_done

pytestmark = pytest.mark.browser

# Two products summed, one of them used twice: the orders part at several steps.
DIAMOND = "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\nx = a * b\ny = c * d\nloss = (x + y) * x\n"
COLUMNS = ("ready_queue", "topological")


def traces(source: str) -> dict[str, Trace]:
    return {s: run_source(source, scheduler=s) for s in COLUMNS}  # type: ignore[arg-type]


def open_panel(page: Any, source: str) -> None:
    page.goto(program_url(page.server_url, source, step=0))
    wait_done(page)
    page.click("#compare-schedulers")
    page.wait_for_selector("#schedulers[data-loaded='1']", timeout=20_000)
    page.wait_for_timeout(100)


def column(page: Any, scheduler: str) -> Any:
    return page.locator(f".sched-col[data-scheduler='{scheduler}']")


def listed(page: Any, scheduler: str) -> list[int]:
    return [int(n) for n in column(page, scheduler).locator(".sched-step").evaluate_all(
        "items => items.map((li) => li.dataset.node)")]


def marked_steps(page: Any, scheduler: str) -> list[int]:
    return [int(j) for j in column(page, scheduler).locator(".sched-step").evaluate_all(
        "items => items.flatMap((li, j) => li.classList.contains('differs') ? [j] : [])")]


@pytest.fixture
def lab(page: Any, server_url: str) -> Any:
    page.server_url = server_url
    return page


def test_both_orders_are_their_traces_steps_and_the_marks_are_where_they_part(lab: Any) -> None:
    expected = traces(DIAMOND)
    open_panel(lab, DIAMOND)
    orders = {s: [step["node"] for step in expected[s].passes[0].steps] for s in COLUMNS}
    assert orders["ready_queue"] != orders["topological"], "this program must tell them apart"
    for s in COLUMNS:
        assert listed(lab, s) == orders[s]
    parted = [j for j, (a, b) in enumerate(zip(orders["ready_queue"], orders["topological"],
                                               strict=True)) if a != b]
    assert parted and all(marked_steps(lab, s) == parted for s in COLUMNS)
    assert "micrograd" in str(lab.locator(".sched-note").text_content())


def test_one_step_control_moves_both(lab: Any) -> None:
    expected = traces(DIAMOND)
    orders = {s: [step["node"] for step in expected[s].passes[0].steps] for s in COLUMNS}
    open_panel(lab, DIAMOND)
    for k in range(1, len(orders["topological"]) + 1):
        lab.click(".sched-forward")
        lab.wait_for_timeout(60)
        assert lab.locator("#counter").text_content().startswith(f"step {k} ")
        differ = orders["ready_queue"][k - 1] != orders["topological"][k - 1]
        for i, s in enumerate(COLUMNS):
            col = column(lab, s)
            current = col.locator(".sched-step.current")
            assert current.count() == 1 and int(current.get_attribute("data-node")) == \
                orders[s][k - 1]
            running = col.locator("g.node.running")
            assert int(running.get_attribute("data-id")) == orders[s][k - 1]
            caption = str(col.locator(".sched-caption").text_content())
            assert caption.startswith(f"Step {k} of {len(orders[s])}")
            here = col.locator("g.node[data-differs='here']")
            other = col.locator("g.node[data-differs='other']")
            if differ:
                assert int(here.get_attribute("data-id")) == orders[s][k - 1]
                assert int(other.get_attribute("data-id")) == orders[COLUMNS[1 - i]][k - 1]
            else:
                assert here.count() == 0 and other.count() == 0
        why = str(lab.locator(".sched-why").text_content())
        assert ("highest sequence number" in why) == differ
    lab.keyboard.press("ArrowLeft")          # the lab's own keys drive the panel too
    lab.wait_for_timeout(60)
    k = len(orders["topological"]) - 1
    for s in COLUMNS:
        assert int(column(lab, s).locator(".sched-step.current").get_attribute(
            "data-node")) == orders[s][k - 1]


def test_the_view_loads_only_when_asked(lab: Any) -> None:
    lab.goto(program_url(lab.server_url, DIAMOND, step=0))
    wait_done(lab)
    loaded = lab.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert not any("schedulers" in name for name in loaded)
    lab.click("#compare-schedulers")
    lab.wait_for_selector("#schedulers[data-loaded='1']", timeout=20_000)
    assert lab.get_attribute("#compare-schedulers", "aria-pressed") == "true"
    lab.click("#compare-schedulers")
    assert lab.locator("#schedulers").is_hidden()


RULES = {"runOnly": {"type": "tag",
                     "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
         "resultTypes": ["violations"]}


@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light"), (390, 844, "dark")])
def test_no_axe_violation(browser: Any, watch: Watch, server_url: str, width: int,
                          height: int, scheme: str) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="the accessibility check runs axe-core")
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    page.server_url = server_url
    try:
        open_panel(page, DIAMOND)
        for _ in range(4):                   # step 4: the orders part there
            page.click(".sched-forward")
        page.wait_for_timeout(150)
        assert page.locator("#schedulers[data-differs='1']").count() == 1
        results = axe.Axe().run(page, options=RULES)
        assert results.violations_count == 0, results.generate_report()
        box = page.locator(".sched-columns").bounding_box()
        assert box is not None and box["width"] <= width
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign
