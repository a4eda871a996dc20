"""The profiler timeline (views/timeline.js) and the call path (views/callpath.js) on the
lab page: each shows what the trace carries (traced here by the engine, never typed in),
follows the steps, links to the graph or to the engine's source, and is axe-clean at
1280×720, at phone width and in the dark theme."""

from __future__ import annotations

from typing import Any

import pytest

from app.trace import run_source

from .conftest import Watch, new_page, program_url, wait_done

pytestmark = pytest.mark.browser

NEURON = ("w = 3.0\nx = 2.0\nb = 1.0\ny = (w * x + b).tanh()\n")
GRAD = ("x = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
        "g = torch.autograd.grad(y, x)\n")
NON_SCALAR = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * x\ny.backward()\n"


@pytest.fixture
def lab(page: Any, server_url: str) -> Any:
    page.server_url = server_url
    return page


def open_at(page: Any, source: str, step: int = 0) -> None:
    page.goto(program_url(page.server_url, source, step=step))
    wait_done(page)
    page.wait_for_selector("body[data-lenses='ready']", timeout=20_000)
    page.wait_for_selector("#callpath:not([hidden])", timeout=20_000)
    page.wait_for_timeout(80)


def shown_events(page: Any) -> list[str]:
    return list(page.locator("#timeline .tl-event").evaluate_all(
        "els => els.map((e) => e.dataset.index)"))


def current(page: Any, selector: str) -> list[str]:
    return list(page.locator(selector).evaluate_all(
        "els => els.map((e) => e.dataset.index ?? e.dataset.phase)"))


def test_timeline_shows_the_trace_profile_and_follows_the_steps(lab: Any) -> None:
    trace = run_source(NEURON)
    open_at(lab, NEURON)
    assert sorted(int(i) for i in shown_events(lab)) == [e["index"] for e in trace.profile]
    names = lab.locator("#timeline .tl-block.depth-0 > .tl-event .tl-name").all_text_contents()
    assert names[:4] == ["aten::mul", "aten::add", "aten::tanh", "aten::ones_like"]
    for k in range(1, len(trace.passes[0].steps) + 1):
        lab.keyboard.press("ArrowRight")
        lab.wait_for_selector(f"#timeline[data-step='{k}']", state="attached")
        lit = sorted(int(i) for i in current(lab, "#timeline .tl-event.is-current"))
        assert lit == [e["index"] for e in trace.profile if e["step"] == k]


def test_hovering_links_events_and_nodes_both_ways(lab: Any) -> None:
    trace = run_source(NEURON)
    open_at(lab, NEURON, step=2)
    mul = next(e for e in trace.profile if e["name"] == "aten::mul" and e["kind"] == "forward")
    lab.locator(f"#timeline .tl-event[data-index='{mul['index']}']").hover()
    linked = lab.locator("#graph g.node[data-linked]")
    assert linked.count() == 1 and linked.get_attribute("data-id") == str(mul["node"])
    lab.locator(f"#timeline .tl-event[data-index='{mul['index']}']").focus()
    assert lab.locator("#graph g.node[data-linked]").get_attribute("data-id") == str(mul["node"])
    tanh = next(n for n in trace.passes[0].graph.nodes if n["name"] == "TanhBackward0")  # type: ignore[union-attr]
    lab.locator(f"#graph g.node[data-id='{tanh['id']}'] .node-box").hover(force=True)
    marked = sorted(int(i) for i in current(lab, "#timeline .tl-event.is-linked"))
    assert marked == [e["index"] for e in trace.profile if e["node"] == tanh["id"]]


def test_call_path_for_backward_lights_up_step_by_step(lab: Any) -> None:
    trace = run_source(NEURON)
    steps = len(trace.passes[0].steps)
    open_at(lab, NEURON)
    boxes = lab.locator("#callpath .cp-box").evaluate_all("els => els.map((e) => e.dataset.phase)")
    assert boxes == ["Tensor.backward", "torch.autograd.backward", "_make_grads",
                     "_engine_run_backward", "Engine::execute", "compute_dependencies",
                     "ready_queue", "evaluate_function", "hooks", "release_variables", ".grad"]
    assert current(lab, "#callpath .cp-box.is-current") == ["compute_dependencies"]
    lab.keyboard.press("ArrowRight")
    lab.wait_for_timeout(80)
    assert current(lab, "#callpath .cp-box.is-current") == [
        "ready_queue", "evaluate_function", "release_variables"]
    lab.keyboard.press("End")
    lab.wait_for_timeout(80)
    assert ".grad" in current(lab, "#callpath .cp-box.is-current")
    assert lab.locator("#callpath .cp-now").text_content() == \
        f"backward() at line 4, pop {steps} of {steps}"


def test_a_step_touches_only_the_call_path_boxes_that_change(lab: Any) -> None:
    """Stepping keeps the path's boxes (the same elements; only the boxes whose state
    changes are touched, and the caption): the path is built once per pass, not per step."""
    steps = len(run_source(NEURON).passes[0].steps)
    open_at(lab, NEURON, step=1)
    lab.evaluate("""() => {
        window.boxesAtStep1 = [...document.querySelectorAll('#callpath .cp-box')];
        window.touched = new Set();
        new MutationObserver((records) => records.forEach((r) => window.touched.add(
            r.type === 'attributes' ? r.target.closest('.cp-box').dataset.phase : 'rebuilt')))
            .observe(document.querySelector('#callpath .cp-body'),
                     { subtree: true, childList: true, attributes: true });
    }""")
    classes = "() => Object.fromEntries([...document.querySelectorAll('#callpath .cp-box')]" \
              ".map((b) => [b.dataset.phase, b.className]))"
    for key, caption in (("ArrowRight", "pop 2 "), ("End", f"pop {steps} of {steps}")):
        before = lab.evaluate(classes)
        lab.evaluate("() => window.touched.clear()")
        lab.keyboard.press(key)
        lab.wait_for_function("c => document.querySelector('#callpath .cp-now').textContent"
                              ".includes(c)", arg=caption)
        lab.evaluate("() => new Promise((r) => requestAnimationFrame("
                     "() => requestAnimationFrame(r)))")
        after = lab.evaluate(classes)
        assert lab.evaluate("() => [...document.querySelectorAll('#callpath .cp-box')]"
                            ".every((b, i) => b === window.boxesAtStep1[i])")
        changed = {phase for phase in after if after[phase] != before[phase]}
        assert set(lab.evaluate("() => [...window.touched]")) == changed
    assert ".grad" in current(lab, "#callpath .cp-box.is-current")


def test_call_path_for_grad_takes_its_own_branch(lab: Any) -> None:
    open_at(lab, GRAD)
    boxes = lab.locator("#callpath .cp-box").evaluate_all("els => els.map((e) => e.dataset.phase)")
    assert boxes[0] == "torch.autograd.grad" and boxes[-1] == "returned"
    assert "Tensor.backward" not in boxes and ".grad" not in boxes
    assert "accumulate_grad=False" in str(
        lab.locator("#callpath .cp-box[data-phase='_engine_run_backward']").text_content())


def test_call_path_for_the_non_scalar_error_stops_at_make_grads(lab: Any) -> None:
    trace = run_source(NON_SCALAR)
    assert trace.error is not None
    open_at(lab, NON_SCALAR)
    boxes = lab.locator("#callpath .cp-box").evaluate_all("els => els.map((e) => e.dataset.phase)")
    assert boxes == ["Tensor.backward", "torch.autograd.backward", "_make_grads"]
    error = lab.locator("#callpath .cp-box.is-error")
    assert error.get_attribute("data-phase") == "_make_grads"
    assert trace.error.message in str(error.text_content())
    assert lab.locator("#timeline").is_hidden()        # no pass: no profiler events


def test_each_box_opens_the_engine_code_that_does_it(lab: Any) -> None:
    open_at(lab, NEURON)
    links = lab.locator("#callpath .cp-link").evaluate_all(
        "els => els.map((a) => a.getAttribute('href'))")
    assert all(h.startswith("/source/engine/") for h in links)
    for href in sorted(set(links)):
        lab.goto(lab.server_url + href)
        target = lab.evaluate("document.querySelector(':target')?.id")
        assert target == href.split("#")[1], href
        assert lab.locator(":target .src-line").count() > 1


@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light"), (390, 844, "dark")])
def test_views_are_axe_clean(browser: Any, watch: Watch, server_url: str, width: int,
                             height: int, scheme: str) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="the accessibility check runs axe-core")
    from .test_accessibility import RULES

    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    page.server_url = server_url
    try:
        open_at(page, NEURON, step=3)
        assert page.locator("#timeline .tl-event").count() > 0
        results = axe.Axe().run(page, options={**RULES, "include": [["#timeline"], ["#callpath"]]})
        assert results.violations_count == 0, results.generate_report()
        page.goto(server_url + "/source/engine/graph_task.py#execute")
        results = axe.Axe().run(page, options=RULES)
        assert results.violations_count == 0, results.generate_report()
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign


def test_the_lit_pop_stays_in_view_of_a_long_timeline(lab: Any) -> None:
    """A long pass's timeline is wider than its box: stepping scrolls it so that the pop
    that runs shows (views/timeline.js keeps it in view, on the frame after the paint)."""
    source = "w = 0.5\nh0 = w * 1.5\n" + "".join(f"h{i} = h{i - 1} * 1.5\n" for i in range(1, 40))
    steps = len(run_source(source).passes[0].steps)
    open_at(lab, source)
    body = lab.locator("#timeline .tl-body")
    assert body.evaluate("(b) => b.scrollWidth > b.clientWidth + 200"), "it does not fit"
    lab.locator("#stage").focus()
    for k in (steps // 2, steps):
        lab.keyboard.press("Home")
        for _ in range(k):
            lab.keyboard.press("ArrowRight")
        lab.wait_for_selector(f"#timeline[data-step='{k}']", state="attached")
        lab.wait_for_function("""() => {
            const b = document.querySelector('#timeline .tl-body');
            const lit = document.querySelector('#timeline .tl-event.is-current');
            if (!lit) return false;
            const r = lit.getBoundingClientRect(), box = b.getBoundingClientRect();
            return r.left >= box.left - 1 && r.right <= box.right + 1;
        }""", timeout=5_000)
