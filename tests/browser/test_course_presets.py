"""Issue 11's presets on the lab page, in Chromium against the real server: every frame of
every pass shows the node the engine popped, the gradients it sent, the hooks that fired in
that pop and PyTorch's message where it raised; the console shows what the program printed
and the warnings, line by line; the tensors outside the graph are listed. Every expected
text comes from the trace the server returns (`run_source`), never typed in."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.presets import GRAD_OFF, HOOKS, LOOPS, PRESETS, VALUES
from app.trace import Trace, run_source

from .conftest import counter, program_url, wait_done
from .test_lab_page import expected_final, final_grads, go_end, label, short

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

COURSE = [p for p in PRESETS if p.topic in {GRAD_OFF, LOOPS, HOOKS, VALUES}]


def test_the_course_presets_are_all_here() -> None:
    assert len(COURSE) == 12
    assert all(run_source(p.source).program.kind == "plain" for p in COURSE)  # type: ignore[union-attr]


def values(text: str | None) -> str:
    """As the page writes a hook's value: a tuple's tensors shortened one by one."""
    if text is not None and text.startswith("("):
        return re.sub(r"tensor\([^()]*\)", lambda m: short(m.group(0)), text)
    return short(text)


def check_hooks(page: Any, step: Any) -> None:
    """The hook card beside the running node: one row per hook in firing order, each with
    what it got and returned; the replacing ones marked; the sentence names them too."""
    hooks = step.get("hooks") or []
    rows = page.locator(".notes .card.hooks .hook")
    expect(rows).to_have_count(len(hooks))
    sentence = str(page.locator("#sentence").text_content())
    for i, h in enumerate(hooks):
        effect = str(rows.nth(i).locator(".hook-effect").text_content())
        assert values(h["before"]) in effect
        assert f"on {h['label']}" in str(rows.nth(i).text_content())
        if h["after"] is not None:
            assert values(h["after"]) in effect
        assert ("replaced" in (rows.nth(i).get_attribute("class") or "")) == h["replaced"]
        assert values(h["before"]) in sentence
    if any(h["replaced"] for h in hooks):
        assert "which replaces it" in sentence


def check_step(page: Any, trace: Trace, p: int, step: Any) -> None:
    running = page.locator("svg#graph .node.running, svg#graph .node.error")
    expect(running).to_have_count(1)
    assert running.locator(".node-name").text_content() == step["name"]
    assert str(page.locator("#sentence").text_content()).startswith(label(step))
    shown = page.locator("svg#graph .edge-label.current text").all_text_contents()
    assert sorted(shown) == sorted(short(s["text"]) for s in step["sent"])
    check_hooks(page, step)
    error = step.get("error")
    if error is not None:
        assert error.message in str(page.locator("#detail").text_content())
        card = str(page.locator(".notes .card.failed").text_content())
        assert error.type in card and error.message[:40] in card
    if len(trace.passes) > 1:
        assert page.input_value("#pass-pick") == str(p)


@pytest.mark.parametrize("preset_id", [p.id for p in COURSE])
def test_every_frame_of_a_course_preset(page: Any, server_url: str, preset_id: str) -> None:
    chosen = next(p for p in COURSE if p.id == preset_id)
    trace = run_source(chosen.source)
    page.goto(program_url(server_url, chosen.source, step=0))
    wait_done(page)
    expect(page.locator("#program-kind")).to_have_text("Plain PyTorch: it runs exactly as written.")
    frames = sum(1 + len(p.steps) for p in trace.passes)
    last = int(counter(page).split()[3])
    assert last >= frames - 1                    # (and frames after a pass's pops: an
    for p, pass_ in enumerate(trace.passes):     # optimizer step, the program's end)
        if p:
            page.select_option("#pass-pick", str(p))
        expect(page.locator("#sentence")).to_contain_text("starts: the engine counts")
        k = int(counter(page).split()[1])
        assert page.locator("svg#graph .node").count() == len(pass_.graph.nodes)  # type: ignore[union-attr]
        page.locator("#stage").focus()
        for step in pass_.steps:
            page.keyboard.press("ArrowRight")
            k += 1
            expect(page.locator("#counter")).to_have_text(f"step {k} of {last}")
            check_step(page, trace, p, step)
    go_end(page)
    assert final_grads(page) == expected_final(trace)
    check_console(page, trace)
    check_outside(page, trace)


def check_console(page: Any, trace: Trace) -> None:
    items = page.locator("#console li")
    expect(items).to_have_count(len(trace.console))
    assert page.locator("#console").is_visible() == bool(trace.console)
    for i, out in enumerate(trace.console):
        item = items.nth(i)
        assert item.locator("pre").text_content() == out.text
        assert item.locator(".line-link").text_content() == f"line {out.line}"
        assert ("warning" in (item.get_attribute("class") or "")) == (out.kind == "warning")


def check_outside(page: Any, trace: Trace) -> None:
    rows = page.locator("#outside li")
    expect(rows).to_have_count(len(trace.outside))
    for i, row in enumerate(trace.outside):
        assert rows.nth(i).locator("code").text_content() == row.name
        assert rows.nth(i).locator(".line-link").text_content() == f"line {row.line}"
