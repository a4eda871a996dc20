"""The lab page for networks (issues 14 and 17) in Chromium: every preset's tensors drawn as
the trace the server returned has them (shapes, heatmap cells, the numbers and printed text
they show), modules opening as backward reaches them and at a click, the optimizer's
frames with the trace's numbers, and the network views loaded only when a run needs them.
Every expected value comes from `run_source` (the engine), none is typed in."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from app.presets import MODELS, NETWORK, PRESETS, preset
from app.trace import run_source

from .conftest import Watch, new_page, program_url, wait_done

pytestmark = pytest.mark.browser

NETWORK_PRESETS = [p.id for p in PRESETS if p.topic in (NETWORK, MODELS)]
STEPS = 6                 # colour steps a side (static/js/views/network/heatmap.js: STEPS)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def source_of(preset_id: str) -> str:
    found = preset(preset_id)
    assert found is not None
    return found.source


def open_at(page: Any, base: str, source: str, step: int) -> None:
    page.goto(program_url(base, source, step=step))
    wait_done(page)
    page.wait_for_selector("body[data-network='ready']", timeout=20_000)
    page.wait_for_timeout(120)


def flat(value: Any) -> list[Any]:
    return [x for item in value for x in flat(item)] if isinstance(value, list) else [value]


def shape(value: Any) -> list[int]:
    out = []
    while isinstance(value, list):
        out.append(len(value))
        value = value[0]
    return out


def shape_text(dims: list[int]) -> str:
    return "×".join(map(str, dims)) if dims else "scalar"


def level_class(v: Any, m: float) -> str:
    """The colour step the page gives v on a scale of ±m (heatmap.js: level)."""
    if v == "nan":
        return "h-nan"
    if v in ("inf", "-inf"):
        k = STEPS if v == "inf" else -STEPS
    elif v == 0 or m == 0:
        k = 0
    else:
        k = max(1, min(STEPS, math.ceil(STEPS * abs(v) / m)))
        k = -k if v < 0 else k
    return f"h-n{-k}" if k < 0 else f"h-p{k}"


def expected_classes(value: Any) -> list[str]:
    values = flat(value)
    m = max((abs(v) for v in values if isinstance(v, float | int)), default=0.0)
    return [level_class(v, m) for v in values]


def close(shown: float, want: float) -> bool:
    """The page shows float32 values to 6 significant digits."""
    return abs(shown - want) <= 1e-5 * max(1.0, abs(want)) + 1e-12


def table_numbers(figure: Any) -> list[float]:
    """The numbers of a figure's table, which the page makes when its details open."""
    figure.locator("details.tensor-values").evaluate("d => { d.open = true; }")
    figure.locator("table.tensor-table").wait_for(state="attached")
    cells = figure.locator("table.tensor-table td:not(.corner)")
    return [float(t) for t in cells.all_text_contents()]


def assert_figure_is(figure: Any, value: Any, text: str | None) -> None:
    """A heatmap figure shows this value: its shape, one cell per element in the trace's
    colour step, the numbers in its table, and PyTorch's printed text."""
    assert figure.locator(".tensor-shape").first.text_content() == shape_text(shape(value))
    values = flat(value)
    if len(values) > 1:
        cells = figure.locator(".heat .cell")
        classes = [c.split()[1] for c in cells.evaluate_all("cs => cs.map(c => c.className)")]
        assert classes == expected_classes(value)
        shown = table_numbers(figure)
        assert len(shown) == len(values)
        assert all(close(s, float(v)) for s, v in zip(shown, values, strict=True))
    if text is not None:
        assert figure.locator("pre.tensor-text").text_content() == text


def frames(trace: Any) -> list[tuple[int, int, int | None]]:
    """The page's timeline (store.js: timeline) as (pass, pop index, optimizer step)."""
    out: list[tuple[int, int, int | None]] = []
    for p, pass_ in enumerate(trace.passes):
        out.append((p, -1, None))
        out += [(p, j, None) for j in range(len(pass_.steps))]
        out += [(p, len(pass_.steps) - 1, o.index) for o in trace.optimizer_steps
                if o.after_pass == p and pass_.graph is not None and not o.summarized]
    return out


# -- every preset's tensors ------------------------------------------------------------------------

@pytest.mark.parametrize("preset_id", NETWORK_PRESETS)
def test_each_preset_draws_its_tensors_as_the_trace_has_them(page: Any, server_url: str,
                                                            preset_id: str) -> None:
    """At the last pop of the first backward call: each node's shape tag, each edge that
    carried a tensor labelled with its shape and a cell per element in the trace's colour
    step; then at every pop of that call the panel of the step's gradients."""
    source = source_of(preset_id)
    trace = run_source(source)
    first = trace.passes[0]
    assert first.graph is not None
    open_at(page, server_url, source, len(first.steps))
    for n in first.graph.nodes:
        tag = page.locator(f"svg#graph g.node[data-id='{n['id']}'] text.shape-tag")
        if n["shape"]:
            assert tag.text_content() == shape_text(n["shape"])
        else:
            assert tag.count() == 0
    carried = 0
    for step in first.steps:
        for sent in step["sent"]:
            if not isinstance(sent["value"], list):
                continue
            carried += 1
            key = f"{step['node']}:{sent['edge']}"
            label = page.locator(f"svg#graph g.edge-label[data-edge='{key}']")
            assert label.locator("text").text_content() == shape_text(shape(sent["value"]))
            cells = label.locator(".mini-heat rect:not(.mini-frame)")
            if cells.count():
                got = cells.evaluate_all("cs => cs.map(c => c.getAttribute('class'))")
                assert got == expected_classes(sent["value"])
    assert carried, "a network preset sends tensors"
    page.locator("#stage").focus()
    page.keyboard.press("Home")
    for step in first.steps:
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(40)
        panel = page.locator(".tensors-panel")
        figures = panel.locator("figure.tensor")
        expected: list[tuple[Any, str | None]] = (
            [(step["grad"], step["grad_text"])] if isinstance(step["grad"], list) else [])
        expected += [(s["value"], s["text"]) for s in step["sent"] if isinstance(s["value"], list)]
        if isinstance(step.get("grad_after"), list):
            expected.append((step["grad_after"], step["grad_after_text"]))
        assert figures.count() == len(expected), step["name"]
        for k, (value, text) in enumerate(expected):
            assert_figure_is(figures.nth(k), value, text)


@pytest.mark.parametrize("preset_id", NETWORK_PRESETS)
def test_the_leaves_panel_shows_values_and_grads_as_heatmaps(page: Any, server_url: str,
                                                             preset_id: str) -> None:
    """At the end: each tensor leaf's value (the graph's leaf data) and its final .grad."""
    source = source_of(preset_id)
    trace = run_source(source)
    open_at(page, server_url, source, len(frames(trace)))
    leaves = {n["leaf"]: n for n in trace.passes[-1].graph.nodes if n["leaf"]}  # type: ignore[union-attr]
    checked = 0
    for name, node in leaves.items():
        if not isinstance(node["data"], list):
            continue
        row = values_row(page, name)
        assert row.count() == 1, name
        value = row.locator("figure.tensor").nth(0)
        assert_figure_is(value, node["data"], node["value"])
        grad = trace.grads[name]
        if isinstance(grad, list):
            assert_figure_is(row.locator("figure.tensor").nth(1), grad, None)
        checked += 1
    assert checked


def values_row(page: Any, leaf: str) -> Any:
    """The row of a tensor leaf's heatmaps: the one after the row that names it."""
    return page.locator(f"#leaves > tbody > tr.tensor-leaf:has(> th[title='{leaf}']) + tr")


def test_a_heatmap_reads_each_value_on_focus_and_hover(page: Any, server_url: str) -> None:
    source = source_of("linear-layer")
    trace = run_source(source)
    w = trace.grads["W"]
    open_at(page, server_url, source, len(frames(trace)))
    row = values_row(page, "W").locator("figure.tensor").nth(1)
    heat = row.locator(".heat")
    heat.focus()
    readout = row.locator("output.readout")
    assert readout.text_content().startswith("[0, 0] = ")
    assert isinstance(w, list)
    assert close(float(readout.text_content().split("= ")[1]), w[0][0])
    page.keyboard.press("ArrowDown")
    assert readout.text_content().startswith("[1, 0] = ")
    assert close(float(readout.text_content().split("= ")[1]), w[1][0])
    assert page.locator("#counter").text_content().startswith(f"step {len(frames(trace)) - 1} ")
    heat.locator(".cell").nth(3).hover()
    assert readout.text_content().startswith("[1, 1] = ")


# -- modules -----------------------------------------------------------------------------------

def reached(trace: Any, k: int) -> set[int]:
    """Nodes backward has reached at frame k of the first pass: popped, or ready."""
    steps = trace.passes[0].steps
    if k == 0:
        return {trace.passes[0].graph.root}
    return {s["node"] for s in steps[:k]} | set(steps[k - 1]["queue"])


def closed_boxes(trace: Any, k: int) -> set[str]:
    """The collapsed boxes shown at frame k: bands no node of which backward has reached,
    inside no other such band."""
    graph = trace.passes[0].graph
    parent = {b["id"]: b["parent"] for b in graph.bands}
    members: dict[str, set[int]] = {b["id"]: set() for b in graph.bands}
    for n in graph.nodes:
        b = n["band"]
        while b is not None:
            members[b].add(n["id"])
            b = parent[b]
    closed = {b for b, ids in members.items() if not ids & reached(trace, k)}

    def covered(b: str) -> bool:
        p = parent[b]
        while p is not None:
            if p in closed:
                return True
            p = parent[p]
        return False

    return {b for b in closed if not covered(b)}


def shown_boxes(page: Any) -> set[str]:
    return set(page.locator("svg#graph g.band-box.shown").evaluate_all(
        "gs => gs.map(g => g.dataset.band)"))


@pytest.mark.parametrize("preset_id", ["sequential", "custom-module", "two-layer-mlp"])
def test_modules_open_as_backward_reaches_them(page: Any, server_url: str, preset_id: str) -> None:
    source = source_of(preset_id)
    trace = run_source(source)
    graph = trace.passes[0].graph
    assert graph is not None and graph.bands
    open_at(page, server_url, source, 0)
    assert page.locator("svg#graph g.band").count() == len(graph.bands)
    page.locator("#stage").focus()
    for k in range(len(trace.passes[0].steps) + 1):
        assert shown_boxes(page) == closed_boxes(trace, k), f"frame {k}"
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(30)


def test_a_module_closes_and_opens_at_a_click(page: Any, server_url: str) -> None:
    source = source_of("sequential")
    trace = run_source(source)
    open_at(page, server_url, source, len(trace.passes[0].steps))
    assert shown_boxes(page) == set()
    toggle = page.locator("#leaves button.band-toggle", has_text="model.0")
    assert toggle.get_attribute("aria-expanded") == "true"
    toggle.click()
    page.wait_for_timeout(60)
    assert shown_boxes(page) == {"model.0"}
    toggle = page.locator("#leaves button.band-toggle", has_text="model.0")
    assert toggle.get_attribute("aria-expanded") == "false"
    box = page.locator("svg#graph g.band-box.shown")
    params = box.locator("text.band-box-param").all_text_contents()
    data = {n["leaf"]: n["data"] for n in trace.passes[0].graph.nodes if n["leaf"]}  # type: ignore[union-attr]
    assert params == [f"{leaf.removeprefix('model.0.')} {shape_text(shape(data[leaf]))}"
                      for leaf in ("model.0.bias", "model.0.weight")]
    box.click()
    page.wait_for_timeout(60)
    assert shown_boxes(page) == set()
    # Back to frame 1, the top of the graph in view: the choice for model.0 stays (open).
    open_at(page, server_url, source, 1)
    assert shown_boxes(page) == closed_boxes(trace, 1) - {"model.0"}
    page.locator("svg#graph g.band[data-band='model.2'] rect.band-hit").click()
    page.wait_for_timeout(60)
    assert shown_boxes(page) == (closed_boxes(trace, 1) - {"model.0"}) | {"model.2"}


# -- the optimizer -----------------------------------------------------------------------------

def numbers_in(text: str) -> list[float]:
    return [float(x) for x in NUMBER.findall(text.replace("−", "-"))]


def has(text: str, want: float) -> bool:
    return any(close(x, want) for x in numbers_in(text))


@pytest.mark.parametrize("preset_id", ["sgd-momentum", "adam", "forgot-opt-zero-grad"])
def test_each_optimizer_step_shows_the_traces_numbers(page: Any, server_url: str,
                                                      preset_id: str) -> None:
    source = source_of(preset_id)
    trace = run_source(source)
    assert trace.optimizer_steps
    timeline = frames(trace)
    for o in trace.optimizer_steps:
        assert o.after_pass is not None
        k = timeline.index((o.after_pass, len(trace.passes[o.after_pass].steps) - 1, o.index))
        page.mouse.move(0, 0)       # not over a cell: the rule shows element 0 until hovered
        open_at(page, server_url, source, k)
        panel = page.locator(".optimizer-panel")
        assert panel.is_visible()
        assert page.locator(".tensors-panel").is_hidden()
        assert f"line {o.line}" in str(panel.locator(".optimizer-where").text_content())
        assert f"step() on line {o.line}" in str(page.locator("#sentence").text_content())
        blocks = panel.locator("section.optimizer-param")
        assert blocks.count() == len(o.params)
        for block, p in zip([blocks.nth(i) for i in range(blocks.count())], o.params, strict=True):
            assert block.locator("h3 code").text_content() == p["name"]
            shown = {"before": p["before"], ".grad consumed": p["grad"], "after": p["after"],
                     **{k: v for k, v in p["state"].items() if isinstance(v, list)}}
            for label, value in shown.items():
                fig = block.locator("figure.tensor, .optimizer-scalar").filter(
                    has=page.locator(f".tensor-label:text-is('{label}')"))
                assert fig.count() == 1, label
                if len(flat(value)) > 1:
                    assert_figure_is(fig, value, None)
                else:
                    assert close(numbers_in(str(fig.text_content()))[-1], flat(value)[0])
            rule = str(block.locator(".rule-numbers").text_content())
            for value in (p["before"], p["grad"], p["after"]):
                assert has(rule, flat(value)[0]), (label, rule)
            for key in ("momentum_buffer", "exp_avg", "exp_avg_sq", "bias_correction1",
                        "bias_correction2"):
                if key in p["state"]:
                    assert has(rule, flat(p["state"][key])[0]), (key, rule)
            assert has(rule, float(str(o.hyper["lr"])))
            if len(flat(p["after"])) > 1:
                after = block.locator("figure.tensor").filter(
                    has=page.locator(".tensor-label:text-is('after')"))
                after.locator(".heat .cell").nth(1).hover()
                rule = str(block.locator(".rule-numbers").text_content())
                assert "[0, 1]" in rule and has(rule, flat(p["after"])[1])


# -- loading -----------------------------------------------------------------------------------

def test_the_network_views_load_only_when_a_run_needs_them(browser: Any, server_url: str,
                                                          watch: Watch) -> None:
    page = new_page(browser, watch)
    try:
        fetched: list[str] = []
        page.on("request", lambda r: fetched.append(r.url))
        page.goto(program_url(server_url, "a = 2.0\nloss = a * a\n"))
        wait_done(page)
        page.wait_for_timeout(200)
        assert not [u for u in fetched if "/views/network/" in u or "network.css" in u]
        assert page.evaluate("document.body.dataset.network") is None
        page.select_option("#preset", "linear-layer")
        page.wait_for_selector("body[data-network='ready']")
        assert any(u.endswith("/views/network/index.js") for u in fetched)
        assert any(u.endswith("/css/network.css") for u in fetched)
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign


# -- accessibility -----------------------------------------------------------------------------

NETWORK_VIEWS = {
    "bands and a collapsed module": ("sequential", 1, None),
    "the gradients panel and the leaves' heatmaps": ("two-layer-mlp", 4, "#leaves details summary"),
    "an optimizer step": ("sgd-momentum", 6, ".optimizer-panel details summary"),
}


@pytest.mark.parametrize("view", list(NETWORK_VIEWS))
@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1440, 900, "light"), (1440, 900, "dark"), (390, 844, "light")])
def test_no_axe_violation_in_the_network_views(browser: Any, watch: Watch, server_url: str,
                                               view: str, width: int, height: int,
                                               scheme: str) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="the accessibility check runs axe-core")
    from .test_accessibility import RULES

    preset_id, step, click = NETWORK_VIEWS[view]
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    try:
        open_at(page, server_url, source_of(preset_id), step)
        if click:
            page.locator(click).first.click()
        page.wait_for_timeout(150)
        results = axe.Axe().run(page, options=RULES)
        assert results.violations_count == 0, results.generate_report()
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign
