"""Honest programs (issue 10): the lab's shorthand is shown where it acts, and "Copy as
PyTorch" gives the server's runnable script (tests/test_presets.py runs that script in
PyTorch and compares its grads with the lab's)."""

from __future__ import annotations

from typing import Any

import pytest

from app.trace import run_source

from .conftest import Watch, new_page, program_url, wait_done

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"
PLAIN = ("import torch\nx = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
         "loss = (w * x) ** 2\nloss.backward()\n")


def notes(page: Any) -> dict[int, str]:
    """Each shorthand note and the line it is drawn beside (by its place on screen)."""
    found = page.evaluate("""() => {
        const area = document.querySelector('#source');
        const css = getComputedStyle(area);
        const lh = parseFloat(css.lineHeight);
        const top = area.getBoundingClientRect().top + parseFloat(css.paddingTop);
        return [...document.querySelectorAll('#marks .shorthand')].map((s) => {
            const r = s.getBoundingClientRect();
            return [Math.round((r.top - top + area.scrollTop) / lh) + 1, s.textContent.trim()];
        });
    }""")
    return {int(line): str(text) for line, text in found}


@pytest.mark.parametrize("width", [1440, 1920])
def test_the_shorthand_is_shown_where_it_acts(browser: Any, watch: Watch, server_url: str,
                                              width: int) -> None:
    trace = run_source(WORKED)
    assert trace.program is not None and trace.program.kind == "shorthand"
    page = new_page(browser, watch, width=width, height=900)
    try:
        page.goto(program_url(server_url, WORKED))
        wait_done(page)
        shown = notes(page)
        for leaf in trace.program.shorthand:
            assert shown.get(leaf.line) in (f"→ {leaf.expanded}", "→ requires_grad=True"), shown
        implicit = trace.program.implicit_output
        line = trace.passes[0].line
        assert implicit and shown[line].endswith(f"{implicit}.backward()")
        assert set(shown) == {s.line for s in trace.program.shorthand} | {line}
        first = trace.program.shorthand[0]
        kind = str(page.locator("#program-kind").text_content())
        assert f"{first.name} = {first.expanded}" in kind and f"{implicit}.backward()" in kind
        page.locator("#source").press("End")
        page.keyboard.type(" ")
        expect(page.locator("#marks .shorthand")).to_have_count(0)  # the text changed
    finally:
        page.context.close()
    assert not watch.errors


def test_a_plain_program_has_no_shorthand_notes(page: Any, server_url: str) -> None:
    trace = run_source(PLAIN)
    assert trace.program is not None and trace.program.kind == "plain"
    page.goto(program_url(server_url, PLAIN))
    wait_done(page)
    expect(page.locator("#marks .shorthand")).to_have_count(0)
    expect(page.locator("#program-kind")).to_have_text("Plain PyTorch: it runs exactly as written.")


def test_copy_as_pytorch(browser: Any, watch: Watch, server_url: str) -> None:
    trace = run_source(WORKED)
    assert trace.program is not None
    page = new_page(browser, watch)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    try:
        page.goto(program_url(server_url, WORKED))
        wait_done(page)
        page.click("#copy-pytorch")
        expect(page.locator("#status")).to_contain_text("Copied as PyTorch")
        assert page.evaluate("navigator.clipboard.readText()") == trace.program.as_pytorch
        page.fill("#source", WORKED + "z = loss * 2\n")
        expect(page.locator("#copy-pytorch")).to_be_disabled()  # not the program that ran
    finally:
        page.context.close()
    assert not watch.errors


def test_copy_as_pytorch_without_a_clipboard(page: Any, server_url: str) -> None:
    trace = run_source(WORKED)
    assert trace.program is not None
    page.add_init_script("navigator.clipboard.writeText = () => Promise.reject(new Error('no'))")
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.click("#copy-pytorch")
    expect(page.locator("#pytorch-copy")).to_be_visible()
    assert page.input_value("#pytorch-text") == trace.program.as_pytorch
    assert page.evaluate("document.activeElement.id") == "pytorch-text"
