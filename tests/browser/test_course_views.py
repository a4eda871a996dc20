"""The lab page's views for the course's programs (issue 11), in Chromium against the real
server: the pass picker (keys, URL), a summarized pass, the console's links to the editor,
a custom Function's backward lines, nodes a create_graph pass recorded, what autograd.grad
returned, version badges; and axe-core on each of these views. Expected texts come from the
trace the server returns."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.limits import DEFAULT_LIMITS, Limits
from app.presets import preset
from app.trace import Trace, run_source
from app.web.settings import Settings

from .conftest import Watch, counter, live_server, new_page, program_url, wait_done
from .test_lab_page import short

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser


def source(preset_id: str) -> str:
    found = preset(preset_id)
    assert found is not None, preset_id
    return found.source


def starts(trace: Trace) -> list[int]:
    """Each pass's first frame in the page's timeline (a summarized pass is one frame), for
    programs without an optimizer (its steps have frames of their own)."""
    assert not trace.optimizer_steps
    out, k = [], 0
    for p in trace.passes:
        out.append(k)
        k += 1 + (0 if p.summarized else len(p.steps))
    return out


def picked(page: Any) -> int:
    return int(page.input_value("#pass-pick"))


def test_pass_picker_labels_keys_and_url(page: Any, browser: Any, server_url: str,
                                         watch: Watch) -> None:
    text = source("training-loop")
    trace = run_source(text)
    page.goto(program_url(server_url, text, step=0))
    wait_done(page)
    n = len(trace.passes)
    labels = page.locator("#pass-pick option").all_text_contents()
    assert labels == [f"pass {i + 1} of {n} · backward() at line {p.line}, iteration "
                      f"{p.iteration[0]}" for i, p in enumerate(trace.passes)]
    page.select_option("#pass-pick", "2")
    expect(page.locator("#sentence")).to_contain_text("Backward call 3")
    third = int(counter(page).split()[1])
    expect(page).to_have_url(re.compile(rf"[#&]s={third}(&|$)"))
    other = new_page(browser, watch)
    try:
        other.goto(page.url)
        wait_done(other)
        assert picked(other) == 2 and counter(other) == counter(page)
    finally:
        other.context.close()
    page.locator("#pass-pick").focus()
    page.keyboard.press("ArrowUp")                 # the picker's own keys choose a pass
    expect(page.locator("#sentence")).to_contain_text("Backward call 2")
    assert picked(page) == 1
    page.locator("#stage").focus()
    page.keyboard.press("]")
    expect(page.locator("#counter")).to_have_text(re.compile(rf"^step {third} of"))
    page.keyboard.press("[")
    page.keyboard.press("[")
    expect(page.locator("#counter")).to_have_text(re.compile(r"^step 0 of"))  # painted next frame
    assert picked(page) == 0


def test_a_summarized_pass_says_so_and_lists_its_pops(page: Any, server_url: str) -> None:
    text = ("import torch\n\nw = torch.tensor(1.0, requires_grad=True)\n"
            f"for i in range({DEFAULT_LIMITS.max_full_passes + 2}):\n"
            "    loss = (w * 0.5) ** 2\n    loss.backward()\n")
    trace = run_source(text)
    assert trace.passes[-1].summarized and not trace.passes[0].summarized
    page.goto(program_url(server_url, text, step=0))
    wait_done(page)
    last = len(trace.passes) - 1
    assert page.locator("#pass-pick option").nth(last).text_content().endswith("· summarized")
    page.select_option("#pass-pick", str(last))
    expect(page.locator("#pass-summary")).to_be_visible()
    assert page.locator("#pass-summary li").all_text_contents() == [
        f"AccumulateGrad({s['leaf']})" if s["leaf"] else f"{s['name']} #{s['seq']}"
        for s in trace.passes[-1].steps]
    full = sum(not p.summarized for p in trace.passes)
    expect(page.locator("#sentence")).to_contain_text(f"is summarized: this trace keeps passes "
                                                      f"1–{full} step by step")
    expect(page.locator("#leaves tbody")).to_have_text("Not kept for a summarized pass.")
    page.select_option("#pass-pick", "0")
    expect(page.locator("#pass-summary")).to_be_hidden()
    assert page.locator("svg#graph .node").count() == len(trace.passes[0].graph.nodes)  # type: ignore[union-attr]


def test_a_long_pass_lists_the_pops_past_those_it_keeps_in_full(browser: Any, watch: Any) -> None:
    """Past max_full_steps, one frame lists the pass's later pops in order; the frame after
    it shows the .grad the whole pass left (Note [Steps kept in full])."""
    text = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
            "for t in range(40):\n    h = torch.tanh(a * h + 0.01)\nh.backward()\n")
    trace = run_source(text, Limits(max_full_steps=50))
    (p,) = trace.passes
    page = new_page(browser, watch)
    with live_server(Settings(max_full_steps=50)) as base:
        page.goto(program_url(base, text, step=0))
        wait_done(page)
        expect(page.locator("#counter")).to_have_text("step 0 of 52")   # start, 50 pops, list
        page.keyboard.press("End")
        expect(page.locator("#sentence")).to_contain_text(          # as PyTorch prints it
            f"a.grad = {short(p.steps[-1]['grad_after_text'])}.")
        page.keyboard.press("ArrowLeft")
        expect(page.locator("#pass-summary")).to_be_visible()
        assert page.locator("#pass-summary li").all_text_contents() == [
            f"AccumulateGrad({s['leaf']})" if s["leaf"] else f"{s['name']} #{s['seq']}"
            for s in p.steps[50:]]
        expect(page.locator("#sentence")).to_contain_text("popped 121 nodes; this trace keeps "
                                                          "its first 50 step by step")
        page.keyboard.press("ArrowLeft")                # the last step kept in full
        expect(page.locator("#pass-summary")).to_be_hidden()
        expect(page.locator("#sentence")).to_contain_text(p.steps[49]["name"])
    page.context.close()


def test_a_summarized_pass_can_be_stepped_through(page: Any, server_url: str) -> None:
    """'Step through pass N' traces the same run again kept from pass N on: the pass shows
    its graph and the gradients the engine computed for it; the URL keeps the window."""
    text = ("import torch\n\nw = torch.tensor([1.0, -2.0], requires_grad=True)\n"
            f"for i in range({DEFAULT_LIMITS.max_full_passes + 3}):\n"
            "    loss = (w * (i + 1)).pow(2).sum()\n    loss.backward()\n")
    last = DEFAULT_LIMITS.max_full_passes + 2
    window = run_source(text, passes_from=last)
    assert not window.passes[last].summarized and window.passes[0].summarized
    page.goto(program_url(server_url, text, step=0))
    wait_done(page)
    page.select_option("#pass-pick", str(last))
    page.locator("#pass-summary button.pass-load").click()
    wait_done(page)
    expect(page.locator("#pass-summary")).to_be_hidden()
    assert page.locator("#pass-pick").input_value() == str(last)
    nodes = window.passes[last].graph.nodes  # type: ignore[union-attr]
    expect(page.locator("svg#graph .node")).to_have_count(len(nodes))
    expect(page).to_have_url(re.compile(rf"[#&]f={last}(&|$)"))
    page.keyboard.press("End")                 # the pass's gradient into w, as PyTorch's
    expect(page.locator("#leaves")).to_contain_text(window.passes[last].steps[-1]["grad_after_text"])
    page.select_option("#pass-pick", "0")      # now the first pass is the summarized one
    expect(page.locator("#pass-summary button.pass-load")).to_have_text("Step through pass 1")


def test_console_lines_mark_the_editor_and_warnings_stand_apart(page: Any,
                                                                server_url: str) -> None:
    text = source("retain-grad")
    trace = run_source(text)
    warning = next(c for c in trace.console if c.kind == "warning")
    page.goto(program_url(server_url, text, step=0))
    wait_done(page)
    item = page.locator("#console li.warning")
    expect(item).to_have_count(1)
    assert item.locator(".out-tag").text_content() == "warning"
    assert page.locator("#error").is_hidden()      # a warning is no error
    item.locator(".line-link").click()
    gutter = page.locator(f"#gutter div:nth-child({warning.line})")
    expect(gutter).to_have_class(re.compile("marked"))
    band = page.locator("#marks .band.marked")
    expect(band).to_have_count(1)
    assert band.text_content() == text.splitlines()[warning.line - 1]
    row = trace.outside[0]
    page.locator("#outside .line-link").first.click()
    expect(page.locator("#marks .band.marked")).to_have_text(text.splitlines()[row.line - 1])


def test_custom_function_backward_lines_while_its_node_runs(page: Any, server_url: str) -> None:
    text = source("straight-through")
    trace = run_source(text)
    node = next(n for n in trace.passes[0].graph.nodes if n["code"])  # type: ignore[union-attr]
    first, last = node["code"]  # type: ignore[misc]
    at = next(j for j, s in enumerate(trace.passes[0].steps) if s["node"] == node["id"])
    page.goto(program_url(server_url, text, step=at + 1))
    wait_done(page)
    lines = [str(i) for i in range(first, last + 1)]
    assert page.locator("#gutter .code").all_text_contents() == lines
    expect(page.locator("#marks .band.code")).to_have_count(last - first + 1)
    expect(page.locator(".notes .tag.fn")).to_have_text(["autograd.Function"])
    expect(page.locator("#detail")).to_contain_text(f"lines {first}–{last}")
    page.locator("#stage").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#gutter .code")).to_have_count(0)


def test_nodes_a_create_graph_pass_recorded(page: Any, server_url: str) -> None:
    text = source("second-derivative")
    trace = run_source(text)
    first, second = trace.passes
    assert first.create_graph and first.graph and second.graph
    newest = max(n["seq"] for n in first.graph.nodes if n["leaf"] is None)
    made = [n for n in second.graph.nodes if n["leaf"] is None and n["seq"] > newest]
    assert made and all(n["line"] == first.line for n in made)
    page.goto(program_url(server_url, text, step=starts(trace)[1]))
    wait_done(page)
    expect(page.locator(".notes .tag.made")).to_have_text(["made by pass 1"] * len(made))
    expect(page.locator("#detail")).to_contain_text("create_graph=True")
    page.select_option("#pass-pick", "0")
    expect(page.locator(".notes .tag.made")).to_have_count(0)


def test_autograd_grad_returns_values_and_writes_no_grad(page: Any, server_url: str) -> None:
    text = source("grad-vs-backward")
    trace = run_source(text)
    grad = trace.passes[0]
    assert grad.kind == "grad" and grad.returned
    page.goto(program_url(server_url, text, step=len(grad.steps)))
    wait_done(page)
    card = page.locator(".notes .card.returned")
    expect(card).to_have_count(len(grad.returned))
    assert card.locator(".card-value").text_content() == short(grad.returned[0]["text"])
    leaf = grad.returned[0]["input"]
    expect(card).to_contain_text(f"{leaf}.grad stays None")
    expect(page.locator("#detail")).to_contain_text(f"returns ({grad.returned[0]['text']},)")
    assert "None" in str(page.locator("#leaves tbody tr").first.text_content())
    calls = re.compile(r"in 1 backward and 1 autograd\.grad calls$")
    expect(page.locator("#status")).to_have_text(calls)


def test_a_saved_tensor_changed_in_place_has_a_version_badge(page: Any, server_url: str) -> None:
    text = source("in-place-error")
    trace = run_source(text)
    stale = [(n["id"], s) for n in trace.passes[0].graph.nodes  # type: ignore[union-attr]
             for s in n["saved"] if s["is_tensor"] and s["saved_version"] != s["version"]]
    assert stale
    page.goto(program_url(server_url, text, step=0))
    wait_done(page)
    expect(page.locator(".notes .tag.version")).to_have_text(
        [f"{s['name']} v{s['saved_version']} → v{s['version']}" for _, s in stale])


axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                          reason="the accessibility check runs axe-core")
VIEWS = {"hooks, a warning and tensors outside": ("retain-grad", 3),
         "a custom Function's step": ("straight-through", 2),
         "the pass picker and create_graph's nodes": ("second-derivative", 3),
         "an in-place error": ("in-place-error", 1)}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1440, 900, "light"), (1440, 900, "dark"), (390, 844, "light"), (390, 844, "dark")])
def test_no_axe_violation_in_the_course_views(browser: Any, watch: Watch, server_url: str,
                                              view: str, width: int, height: int,
                                              scheme: str) -> None:
    from .test_accessibility import violations

    preset_id, step = VIEWS[view]
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    try:
        page.goto(program_url(server_url, source(preset_id), step=step))
        wait_done(page)
        page.wait_for_timeout(150)
        report = violations(page)
        assert not report, report
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign
