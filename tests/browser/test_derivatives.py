"""The local-derivative panel (static/js/views/derivative.js) in Chromium against the real
server: it follows the running node, draws the server's samples and tangent, prints the
server's numbers, is driven from the keyboard, and is clean under axe-core at 1280×720,
on a phone and in the dark theme. Expected numbers come from app/trace/derivatives.py."""

from __future__ import annotations

from typing import Any

import pytest

from app.trace import run_source
from app.trace.derivatives import derivative

from .conftest import Watch, counter, new_page, program_url, wait_done
from .test_accessibility import violations

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

SOURCE = ("import torch\nx = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\n"
          "w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
          "y = torch.tanh(x) * w\nloss = y.sum()\nloss.backward()\n")


def frame_of(name: str) -> tuple[int, Any]:
    """The page's frame at which `name` pops (frame 0 is before the first pop)."""
    trace = run_source(SOURCE)
    for j, step in enumerate(trace.passes[0].steps):
        if step["name"] == name:
            return j + 1, step
    raise AssertionError(name)


def numbers(page: Any, selector: str) -> list[float]:
    return [float(v) for v in page.locator(selector).evaluate_all(
        "els => els.map(e => e.getAttribute('value'))")]


def test_plot_follows_the_running_node_with_the_servers_numbers(page: Any,
                                                                server_url: str) -> None:
    k, step = frame_of("TanhBackward0")
    page.goto(program_url(server_url, SOURCE, step=k))
    wait_done(page)
    panel = page.locator("#derivative")
    expect(panel.locator(".derivative-plot")).to_be_visible()
    d = derivative(SOURCE, 0, step["node"], 0)
    assert d.plot is not None
    assert numbers(page, "#derivative figcaption data") == [d.plot.x, d.plot.slope, d.plot.y]
    eq = "#derivative .derivative-eq data"
    assert numbers(page, eq) == [d.incoming, d.inputs[0].local, d.inputs[0].outgoing]
    curve = panel.locator("path.curve")
    assert int(str(curve.get_attribute("data-samples"))) == sum(
        1 for _, y in d.plot.samples if y is not None)
    assert float(str(panel.locator("line.tangent").get_attribute("data-slope"))) == d.plot.slope
    # The element picker, from the keyboard: the second element's numbers.
    page.focus("#derivative-element")
    page.keyboard.press("ArrowDown")
    d1 = derivative(SOURCE, 0, step["node"], 1)
    assert d1.plot is not None
    page.wait_for_function("x => Number(document.querySelector('#derivative figcaption data.x')"
                           "?.getAttribute('value')) === x", arg=d1.plot.x)
    assert numbers(page, eq) == [d1.incoming, d1.inputs[0].local, d1.inputs[0].outgoing]


def test_follows_steps_and_a_picked_node(page: Any, server_url: str) -> None:
    k, mul = frame_of("MulBackward0")
    page.goto(program_url(server_url, SOURCE, step=k))
    wait_done(page)
    panel = page.locator("#derivative")
    expect(panel.locator(".derivative-what")).to_contain_text("MulBackward0 · mul")
    d = derivative(SOURCE, 0, mul["node"], 0)
    first = panel.locator(".derivative-eq[data-edge='0'] data")
    expect(first).to_have_count(4)
    assert numbers(page, "#derivative .derivative-eq[data-edge='0'] data")[:3] == [
        d.incoming, d.inputs[0].local, d.inputs[0].outgoing]
    assert panel.locator(".derivative-plot").count() == 0
    page.keyboard.press("ArrowRight")            # the next pop: TanhBackward0 or AccumulateGrad
    tanh_k, _ = frame_of("TanhBackward0")
    if tanh_k == k + 1:
        expect(panel.locator(".derivative-plot")).to_be_visible()
    # A picked node stays while the steps move.
    page.select_option("#derivative-node", str(mul["node"]))
    page.keyboard.press("End")
    expect(panel.locator(".derivative-what")).to_contain_text("MulBackward0")


@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light")])
def test_axe_clean_and_fits(browser: Any, watch: Watch, server_url: str, width: int,
                            height: int, scheme: str) -> None:
    pytest.importorskip("axe_playwright_python.sync_playwright")
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    k, _ = frame_of("TanhBackward0")
    page.goto(program_url(server_url, SOURCE, step=k))
    wait_done(page)
    plot = page.locator("#derivative .derivative-plot")
    expect(plot).to_be_visible()
    box = plot.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    assert violations(page) == ""
    page.context.close()
    assert not watch.errors, watch.errors


LINEAR = ("import torch\nimport torch.nn.functional as F\n"
          "x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)\n"
          "w = torch.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 1.5]], requires_grad=True)\n"
          "b = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)\n"
          "y = F.softmax(F.linear(x, w, b), dim=1)\nloss = (y * y).sum()\nloss.backward()\n")


@pytest.mark.parametrize("name", ["AddmmBackward0", "SoftmaxBackward0"])
def test_a_sum_of_products_node(page: Any, server_url: str, name: str) -> None:
    """addmm and softmax: each input's gradient at the picked element as the server's
    products grad[j] × ∂out[j]/∂in, summed to what the pop sent."""
    trace = run_source(LINEAR)
    k, step = next((j + 1, s) for j, s in enumerate(trace.passes[0].steps) if s["name"] == name)
    page.goto(program_url(server_url, LINEAR, step=k))
    wait_done(page)
    panel = page.locator("#derivative")
    expect(panel.locator(".derivative-what")).to_contain_text(name)
    d = derivative(LINEAR, 0, step["node"], 0)
    assert d.kind == "jacobian"
    for term in d.inputs:
        assert term.terms
        want = [v for pair in term.terms for v in pair] + [term.outgoing]
        assert numbers(page, f"#derivative .derivative-eq[data-edge='{term.edge}'] data")[
            :len(want)] == want
    # Another element of the inputs, from the keyboard: the server's numbers for it.
    page.focus("#derivative-element")
    page.keyboard.press("ArrowDown")
    d1 = derivative(LINEAR, 0, step["node"], 1)
    last = d1.inputs[-1]
    assert last.terms and last.outgoing is not None
    page.wait_for_function(
        "([e, v]) => [...document.querySelectorAll(`#derivative .derivative-eq[data-edge='${e}']"
        " data.outgoing`)].some((n) => Number(n.getAttribute('value')) === v)",
        arg=[last.edge, last.outgoing])
    expect(panel.locator("p.sub", has_text="one-hot gradient")).to_have_count(1)


# Twelve one-input functions in a row: every pop from 1 to 12 is a node the panel explains.
CHAIN = "x = 0.3\nh0 = torch.sin(x)\n" + "".join(
    f"h{i} = torch.{f}(h{i - 1})\n" for i, f in enumerate(
        ["cos", "tanh", "sigmoid", "exp", "sin", "tanh", "cos", "sigmoid", "sin", "tanh", "exp"],
        start=1)) + "loss = h11\n"


def test_stepping_fast_asks_only_where_the_student_stops(page: Any, server_url: str) -> None:
    """Ten steps in quick succession (a key every 60 ms) with the panel following the
    running node: a few /api/derivative requests (on a quiet machine two: the first step's,
    asked at once, and the last one's, once the steps stop), not one per node passed over;
    the answer that arrives redraws the panel alone (no page paint), and it is the last
    step's node with the server's numbers."""
    steps = run_source(CHAIN).passes[0].steps
    assert all(s["name"] in {"SinBackward0", "CosBackward0", "TanhBackward0",
                             "SigmoidBackward0", "ExpBackward0"} for s in steps[:12])
    page.goto(program_url(server_url, CHAIN, step=1))
    wait_done(page)
    panel = page.locator("#derivative")
    expect(panel.locator(".derivative-what")).to_contain_text(f"{steps[0]['name']} ·")
    page.wait_for_selector("body[data-lenses='ready']")    # no late view repaints the page
    asked: list[int] = []
    page.on("request", lambda r: asked.append(r.post_data_json["node"])
            if r.url.endswith("/api/derivative") else None)
    page.locator("#stage").focus()
    page.evaluate("""() => new Promise((resolve) => {
        let n = 0;
        const timer = setInterval(() => {      // a key every 60 ms: each step is painted
            const key = { key: 'ArrowRight', bubbles: true };
            document.dispatchEvent(new KeyboardEvent('keydown', key));
            n += 1;
            if (n === 10) { clearInterval(timer); resolve(); }
        }, 60);
    })""")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert counter(page).startswith("step 11 ")
    page.evaluate("() => performance.clearMeasures('paint')")
    last = steps[10]
    d = derivative(CHAIN, 0, last["node"], 0)
    assert d.plot is not None
    page.wait_for_function("x => Number(document.querySelector('#derivative figcaption data.x')"
                           "?.getAttribute('value')) === x", arg=d.plot.x)
    expect(panel.locator(".derivative-what")).to_contain_text(f"{last['name']} ·")
    assert numbers(page, "#derivative figcaption data") == [d.plot.x, d.plot.slope, d.plot.y]
    # Two on a quiet machine; a loaded one that paints the steps 250 ms apart asks for
    # those it stood on. One request per step (ten) is what it must not do.
    assert asked and asked[-1] == last["node"] and len(asked) <= 4, asked
    assert page.evaluate("() => performance.getEntriesByName('paint').length") == 0
    # Stepping back to a node already answered asks nothing more: the answer is kept.
    made = len(asked)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    expect(panel.locator(".derivative-what")).to_contain_text(f"{steps[0]['name']} ·")
    page.wait_for_timeout(400)
    assert len(asked) == made, asked
