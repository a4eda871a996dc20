"""Graphs bigger than their box (issue 10): fitted on load, zoom and pan by wheel, drag,
pinch, keys and buttons, readable text with an overview when a graph does not fit, the view
following the running node without jumping, and the leaves in program order, collapsible.
Every graph, order and value comes from running the engine."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.trace import run_source

from .conftest import Watch, new_page, program_url, wait_done

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"
MIN_TEXT_PX = 8.5                   # static/js/camera.js: the smallest text the page draws


def network(hidden: int = 7) -> str:
    """A one-hidden-layer scalar network in shorthand: 2 inputs, `hidden` tanh units
    (7 units: 50 operations, 78 backward nodes)."""
    lines = ["x1 = torch.tensor(0.5)", "x2 = torch.tensor(-1.0)"]
    for j in range(hidden):
        lines += [f"w{j}a = {0.35 - 0.08 * j:.2f}", f"w{j}b = {0.2 + 0.05 * j:.2f}",
                  f"b{j} = {0.1 * (j % 3) - 0.1:.2f}", f"v{j} = {0.4 - 0.15 * j:.2f}"]
    for j in range(hidden):
        lines.append(f"h{j} = torch.tanh(w{j}a * x1 + w{j}b * x2 + b{j})")
    lines.append("out = " + " + ".join(f"v{j} * h{j}" for j in range(hidden)))
    lines.append("loss = (out - 1.0) ** 2")
    return "\n".join(lines) + "\n"


BIG = network()

GEOMETRY = """() => {
    const wrap = document.querySelector('#graph-wrap').getBoundingClientRect();
    const nodes = [...document.querySelectorAll('svg#graph .node')].map((g) => {
        const r = g.querySelector('.node-box').getBoundingClientRect();
        return { id: Number(g.dataset.id), x: r.x, y: r.y, w: r.width, h: r.height,
                 running: g.classList.contains('running') };
    });
    const grad = document.querySelector('svg#graph .node-grad');
    const text = parseFloat(getComputedStyle(grad).fontSize);
    const scale = Number(document.querySelector('#graph-wrap').dataset.scale);
    const map = document.querySelector('#minimap');
    const m = map.hidden ? null : map.getBoundingClientRect();
    const zoom = document.querySelector('.zoom').getBoundingClientRect();
    return { wrap: { x: wrap.x, y: wrap.y, w: wrap.width, h: wrap.height }, nodes, scale,
             text: text * scale, minimap: m && { x: m.x, y: m.y, w: m.width, h: m.height },
             zoom: { x: zoom.x, y: zoom.y, w: zoom.width, h: zoom.height },
             transform: document.querySelector('.graph-canvas').style.transform };
}"""


def geometry(page: Any) -> dict[str, Any]:
    return dict(page.evaluate(GEOMETRY))


def inside(r: dict[str, float], box: dict[str, float], margin: float = 0) -> bool:
    return (r["x"] >= box["x"] + margin - 0.5 and r["y"] >= box["y"] + margin - 0.5
            and r["x"] + r["w"] <= box["x"] + box["w"] - margin + 0.5
            and r["y"] + r["h"] <= box["y"] + box["h"] - margin + 0.5)


def overlaps(a: dict[str, float], b: dict[str, float] | None) -> bool:
    return b is not None and not (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                                  or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])


def grown(r: dict[str, float], margin: float) -> dict[str, float]:
    return {"x": r["x"] - margin, "y": r["y"] - margin, "w": r["w"] + 2 * margin,
            "h": r["h"] + 2 * margin}


def sized(browser: Any, watch: Watch, width: int, height: int, **kw: Any) -> Any:
    return new_page(browser, watch, width=width, height=height, **kw)


@pytest.fixture
def big(browser: Any, watch: Watch, server_url: str) -> Iterator[Any]:
    page = sized(browser, watch, 1440, 900)
    page.goto(program_url(server_url, BIG, step=0))
    wait_done(page)
    page.wait_for_selector("svg#graph .node")
    yield page
    page.context.close()
    assert not watch.errors, watch.errors


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 720), (390, 844)])
def test_a_small_graph_fits_on_load(browser: Any, watch: Watch, server_url: str,
                                    width: int, height: int) -> None:
    page = sized(browser, watch, width, height)
    try:
        for step in (0, 3):
            page.goto("about:blank")
            page.goto(program_url(server_url, WORKED, step=step))
            wait_done(page)
            g = geometry(page)
            assert len(g["nodes"]) == len(run_source(WORKED).passes[0].graph.nodes)  # type: ignore[union-attr]
            for n in g["nodes"]:
                assert inside(n, g["wrap"]), f"node {n['id']} is cut off at {width}×{height}"
                assert not overlaps(n, g["zoom"]), "the zoom buttons cover a node"
            assert g["text"] >= MIN_TEXT_PX - 0.01
            assert g["minimap"] is None, "no overview when everything is in view"
    finally:
        page.context.close()
    assert not watch.errors


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 720), (390, 844)])
def test_a_big_graph_keeps_its_text_and_follows_the_running_node(
        browser: Any, watch: Watch, server_url: str, width: int, height: int) -> None:
    page = sized(browser, watch, width, height)
    try:
        page.goto(program_url(server_url, BIG, step=0))
        wait_done(page)
        page.wait_for_selector("svg#graph .node")
        page.locator("#graph-wrap").scroll_into_view_if_needed()
        follows_the_running_node(page)
    finally:
        page.context.close()
    assert not watch.errors, watch.errors


def follows_the_running_node(big: Any) -> None:
    """Step through BIG by key: the running node is always whole in the box, never under
    the overview or the zoom buttons, and the view moves only for a node out of sight."""
    trace = run_source(BIG)
    popped = [s for p in trace.passes for s in p.steps]
    graph = trace.passes[0].graph
    assert graph is not None and len(graph.nodes) >= 73
    g = geometry(big)
    assert g["text"] >= MIN_TEXT_PX - 0.01, "readable text, not a shrunk graph"
    assert g["minimap"] is not None, "an overview for a graph that does not fit"
    assert sum(inside(n, g["wrap"]) for n in g["nodes"]) < len(g["nodes"])
    big.locator("#stage").focus()
    moves = 0
    for k, step in enumerate(popped, start=1):
        before = geometry(big)
        upcoming = next(n for n in before["nodes"] if n["id"] == step["node"])
        # well in view: 56 px from the box's edges, from the overview and the zoom buttons
        clear = grown(upcoming, 56)
        was_visible = (inside(upcoming, before["wrap"], margin=56)
                       and not overlaps(clear, before["minimap"])
                       and not overlaps(clear, before["zoom"]))
        big.keyboard.press("ArrowRight")
        expect(big.locator("#counter")).to_have_text(f"step {k} of {len(popped)}")
        after = geometry(big)
        running = [n for n in after["nodes"] if n["running"]]
        assert [n["id"] for n in running] == [step["node"]]
        assert inside(running[0], after["wrap"]), f"step {k}: the running node is cut off"
        assert not overlaps(running[0], after["minimap"]), f"step {k}: under the overview"
        assert not overlaps(running[0], after["zoom"]), f"step {k}: under the zoom buttons"
        assert after["scale"] == before["scale"], "following never zooms"
        if was_visible:
            assert after["transform"] == before["transform"], f"step {k}: a needless jump"
        moves += after["transform"] != before["transform"]
    assert moves > 0, "a graph this wide needs the view to move"


def test_wheel_zooms_around_the_pointer(big: Any) -> None:
    g = geometry(big)
    target = next(n for n in g["nodes"] if inside(n, g["wrap"], margin=40))
    px, py = target["x"] + target["w"] / 2, target["y"] + target["h"] / 2
    big.mouse.move(px, py)
    big.mouse.wheel(0, -200)
    big.wait_for_function(f"() => Number(document.querySelector('#graph-wrap')"
                          f".dataset.scale) > {g['scale']}")
    after = geometry(big)
    moved = next(n for n in after["nodes"] if n["id"] == target["id"])
    assert abs(moved["x"] + moved["w"] / 2 - px) < 2 and abs(moved["y"] + moved["h"] / 2 - py) < 2
    big.mouse.wheel(0, 400)
    big.wait_for_function(f"() => Number(document.querySelector('#graph-wrap')"
                          f".dataset.scale) < {after['scale']}")


def scale_becomes(page: Any, test: str) -> float:
    """Wait for the next paint's scale to pass `test` (a JS expression in `s`)."""
    page.wait_for_function(f"() => {{ const s = Number(document.querySelector('#graph-wrap')"
                           f".dataset.scale); return {test}; }}")
    return float(geometry(page)["scale"])


def test_keys_and_buttons_zoom_and_fit(big: Any) -> None:
    start = geometry(big)["scale"]
    big.locator("#stage").focus()
    big.keyboard.press("+")
    zoomed = scale_becomes(big, f"s > {start}")
    big.keyboard.press("-")
    big.keyboard.press("-")
    scale_becomes(big, f"s < {start}")
    big.keyboard.press("0")
    assert scale_becomes(big, f"Math.abs(s - {start}) < 1e-4") == pytest.approx(start)
    big.click("#zoom-in")
    assert scale_becomes(big, f"s > {start}") == pytest.approx(zoomed)
    big.click("#zoom-fit")
    scale_becomes(big, f"Math.abs(s - {start}) < 1e-4")
    for _ in range(12):
        big.click("#zoom-out")
    scale_becomes(big, f"s < {start} / 2")
    whole = geometry(big)
    assert all(inside(n, whole["wrap"]) for n in whole["nodes"]), "zoomed out, all of it shows"
    expect(big.locator("#minimap")).to_be_hidden()


def test_drag_pans(big: Any) -> None:
    g = geometry(big)
    cx, cy = g["wrap"]["x"] + g["wrap"]["w"] / 2, g["wrap"]["y"] + g["wrap"]["h"] / 2
    first = g["nodes"][0]
    big.mouse.move(cx, cy)
    big.mouse.down()
    big.mouse.move(cx - 150, cy - 90, steps=6)
    big.mouse.up()
    after = geometry(big)
    moved = next(n for n in after["nodes"] if n["id"] == first["id"])
    assert after["scale"] == g["scale"]
    assert (moved["x"], moved["y"]) != (first["x"], first["y"])
    assert abs(moved["x"] - first["x"] + 150) < 1 or abs(moved["y"] - first["y"] + 90) < 1


def test_the_overview_moves_the_view(big: Any) -> None:
    g = geometry(big)
    m = g["minimap"]
    assert m is not None
    big.mouse.click(m["x"] + m["w"] * 0.5, m["y"] + m["h"] * 0.9)
    big.wait_for_function("(t) => document.querySelector('.graph-canvas').style.transform !== t",
                          arg=g["transform"])
    after = geometry(big)
    assert after["transform"] != g["transform"] and after["scale"] == g["scale"]
    assert after["minimap"] is not None


def test_pinch_zooms_on_a_phone(browser: Any, watch: Watch, server_url: str) -> None:
    page = sized(browser, watch, 390, 844, touch=True)
    try:
        page.goto(program_url(server_url, BIG, step=0))
        wait_done(page)
        page.locator("#graph-wrap").scroll_into_view_if_needed()
        g = geometry(page)
        cx, cy = g["wrap"]["x"] + g["wrap"]["w"] / 2, g["wrap"]["y"] + g["wrap"]["h"] / 2
        cdp = page.context.new_cdp_session(page)

        def touch(kind: str, spread: float) -> None:
            points = [] if kind == "touchEnd" else [
                {"x": cx - spread, "y": cy, "id": 1}, {"x": cx + spread, "y": cy, "id": 2}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        touch("touchStart", 30)
        for spread in range(40, 121, 10):
            touch("touchMove", spread)
        touch("touchEnd", 0)
        page.wait_for_timeout(100)
        assert geometry(page)["scale"] > g["scale"] * 2.5
    finally:
        page.context.close()
    assert not watch.errors


def test_leaves_in_program_order_and_collapsible(big: Any) -> None:
    trace = run_source(BIG)
    order = list(trace.grads)
    assert len(order) > 10
    rows = big.locator("#leaves tbody tr th")
    more = big.locator("#leaves-more")
    expect(more).to_be_visible()
    shown = rows.all_text_contents()
    assert shown == order[:len(shown)] and len(shown) < len(order)
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(rows).to_have_text(order)
    expect(more).to_have_attribute("aria-expanded", "true")
    more.click()
    expect(rows).to_have_text(shown)


def test_a_short_leaf_list_is_in_program_order(page: Any, server_url: str) -> None:
    trace = run_source(WORKED)
    page.goto(program_url(server_url, WORKED, step=3))
    wait_done(page)
    assert page.locator("#leaves tbody tr th").all_text_contents() == list(trace.grads)
    expect(page.locator("#leaves-more")).to_be_hidden()


PULSES = """({ glows: document.querySelectorAll('#graph-wrap .pulses .glow').length,
              dots: document.querySelectorAll('#graph-wrap .pulses .pulse').length,
              current: document.querySelectorAll('svg#graph path.edge.current').length,
              running: document.querySelectorAll('svg#graph .node.running').length })"""


def test_a_step_glows_and_sends_its_dots_but_a_quick_one_does_not(big: Any) -> None:
    """With motion allowed, a step that comes after a pause lights its node and sends a dot
    along each edge it fills; one that comes before a dot could travel (a key pressed
    quickly) shows the step by its classes only: animations cut short by the next step
    would keep the browser walking the whole graph on every frame."""
    big.emulate_media(reduced_motion="no-preference")
    big.locator("#stage").focus()
    trace = run_source(BIG)
    popped = [s for p in trace.passes for s in p.steps]
    for k in (1, 2):
        big.wait_for_timeout(1000)
        big.keyboard.press("ArrowRight")
        expect(big.locator("#counter")).to_have_text(f"step {k} of {len(popped)}")
        seen = big.evaluate(f"() => {PULSES}")
        sent = len(popped[k - 1]["sent"])
        assert seen == {"glows": 1, "dots": sent, "current": sent, "running": 1}, (k, seen)
    quick = big.evaluate("""() => new Promise((resolve) => {
        const key = () => document.dispatchEvent(new KeyboardEvent('keydown',
                                                 { key: 'ArrowRight', bubbles: true }));
        const frames = (n, then) => requestAnimationFrame(
            () => n > 1 ? frames(n - 1, then) : then());
        key();
        frames(3, () => { key(); frames(3, () => resolve(PULSES)); });
    })""".replace("PULSES", PULSES))
    expect(big.locator("#counter")).to_have_text(f"step 4 of {len(popped)}")
    assert quick["glows"] == 0 and quick["dots"] == 0, quick
    assert quick["running"] == 1 and quick["current"] == len(popped[3]["sent"]), quick


def test_a_vast_graph_draws_the_nodes_near_the_view(browser: Any, watch: Watch,
                                                    server_url: str) -> None:
    """Note [Vast graphs]: a recurrence of 700 steps records 2,101 nodes; the view draws
    those near it, the running node among them, and more where the overview sends it."""
    text = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
            "for t in range(700):\n    h = torch.tanh(a * h + 0.01)\nh.backward()\n")
    trace = run_source(text)
    (p,) = trace.passes
    assert p.graph is not None
    ids = {n["id"] for n in p.graph.nodes}
    assert len(ids) == 2101
    page = sized(browser, watch, 1440, 900)
    try:
        page.goto(program_url(server_url, text, step=0))
        wait_done(page)
        page.wait_for_selector("svg#graph .node")
        g = geometry(page)
        drawn = {n["id"] for n in g["nodes"]}
        assert 0 < len(drawn) < 300 and drawn <= ids
        assert int(page.locator("svg#graph").get_attribute("data-drawn") or 0) == len(drawn)
        assert any(inside(n, g["wrap"]) for n in g["nodes"])
        page.locator("#stage").focus()
        for k, step in enumerate(p.steps[:4], start=1):
            page.keyboard.press("ArrowRight")
            expect(page.locator("#counter")).to_have_text(f"step {k} of {len(p.steps)}")
            running = [n for n in geometry(page)["nodes"] if n["running"]]
            assert [n["id"] for n in running] == [step["node"]]
            assert inside(running[0], g["wrap"])
        m = geometry(page)["minimap"]           # (where it is now: the text above it grew)
        assert m is not None
        page.mouse.click(m["x"] + m["w"] * 0.5, m["y"] + m["h"] * 0.95)   # near the leaf
        page.wait_for_function(
            "(n) => Number(document.querySelector('svg#graph').dataset.drawn) > n", arg=len(drawn))
        later = geometry(page)
        assert {n["id"] for n in later["nodes"]} > drawn
        assert any(inside(n, later["wrap"]) for n in later["nodes"] if n["id"] not in drawn)
        for _ in range(40):                          # zoomed out to the whole graph: the
            page.keyboard.press("-")                 # 1,500 nodes nearest the view's centre
        expect(page.locator("svg#graph")).to_have_attribute("data-drawn", "1500")
        page.keyboard.press("0")                     # fitted back around the root: drawn
        expect(page.locator(f'svg#graph g.node[data-id="{p.graph.root}"]')).to_have_count(1)
        assert int(page.locator("svg#graph").get_attribute("data-drawn") or 0) < 300
    finally:
        page.context.close()
    assert not watch.errors, watch.errors
