"""/compare in Chromium against the real server: the marks are exactly the differences
between the two traces (computed here from the documents the engine returns), the words
say them, and a program's two passes compare too; axe-core clean on a phone and in dark."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from app.trace import run_source

from .conftest import Watch, new_page
from .test_accessibility import violations

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

LEFT = "x = 2.0\ny = x * x\nloss = y + x\n"
RIGHT = "x = 2.0\ny = x * x * x\nloss = y + x\n"
TWICE = ("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\n"
         "y.backward(retain_graph=True)\nz = y * 3\nz.backward()\n")


def keys(source: str, p: int = 0) -> list[tuple[str, Any]]:
    steps = run_source(source).passes[p].steps
    return [(f"AccumulateGrad({s['leaf']})" if s["leaf"] is not None
             else f"{s['name']}#{s['seq']}", s["grad"]) for s in steps]


def marked(page: Any, side: str, cls: str) -> list[str]:
    return list(page.locator(f"#pops-{side} li.{cls}").evaluate_all(
        "els => els.map(e => e.dataset.key)"))


def compare(page: Any, left: str, right: str) -> None:
    page.fill("#source-a", left)
    page.fill("#source-b", right)
    page.click("#compare")
    page.wait_for_selector("body[data-compared='yes']")


def test_marks_are_the_traces_differences(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/compare")
    compare(page, LEFT, RIGHT)
    a, b = dict(keys(LEFT)), dict(keys(RIGHT))
    assert set(a) - set(b) and set(b) - set(a)       # the two programs do differ
    assert set(marked(page, "a", "removed")) == set(a) - set(b)
    assert set(marked(page, "b", "added")) == set(b) - set(a)
    differing = {k for k in set(a) & set(b) if a[k] != b[k]}
    assert set(marked(page, "a", "grad-differs")) == differing
    order_a = [k for k in a if k in b]
    order_b = [k for k in b if k in a]
    moved = {k for k, j in zip(order_a, order_b, strict=True) if k != j}
    assert set(marked(page, "a", "moved")) == moved
    text = page.locator("#differences").inner_text()
    for k in (set(b) - set(a)):
        assert k in text
    assert "x.grad ends as" in text


def test_same_program_says_so_and_two_passes(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/compare")
    compare(page, LEFT, LEFT)
    expect(page.locator("#differences")).to_have_text(
        "The two passes pop the same nodes in the same order with the same gradients.")
    assert page.locator("#pops-a li[class]:not([class=''])").count() == 0
    compare(page, TWICE, TWICE)                   # the page picks the second pass on the right
    first, second = dict(keys(TWICE, 0)), dict(keys(TWICE, 1))
    assert set(marked(page, "b", "added")) == set(second) - set(first)
    assert set(marked(page, "a", "removed")) == set(first) - set(second)


@pytest.mark.parametrize(("width", "height", "scheme"), [(1280, 720, "light"), (390, 844, "dark")])
def test_axe_clean(browser: Any, watch: Watch, server_url: str, width: int, height: int,
                   scheme: str) -> None:
    pytest.importorskip("axe_playwright_python.sync_playwright")
    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    page.goto(f"{server_url}/compare")
    page.wait_for_selector("body[data-compared='yes']")
    assert violations(page) == ""
    page.context.close()
    assert not watch.errors, watch.errors


def test_the_url_keeps_the_programs_and_the_pass_pair(page: Any, server_url: str) -> None:
    """Compare, pick passes, reload the URL in a fresh page: the same two programs, the same
    pass pair, the same marks; a hand-made link (the lab's base64url) opens the same way."""
    page.goto(f"{server_url}/compare")
    compare(page, TWICE, TWICE)
    page.select_option("#pass-a", "1")
    page.select_option("#pass-b", "0")
    page.wait_for_function("() => location.hash.includes('pa=1') && location.hash.includes('pb=0')")
    link = page.url
    first, second = dict(keys(TWICE, 0)), dict(keys(TWICE, 1))
    assert set(marked(page, "a", "removed")) == set(second) - set(first)
    other = page.context.new_page()
    other.goto(link)
    other.wait_for_selector("body[data-compared='yes']")
    assert other.input_value("#source-a") == TWICE and other.input_value("#source-b") == TWICE
    assert (other.input_value("#pass-a"), other.input_value("#pass-b")) == ("1", "0")
    assert set(marked(other, "a", "removed")) == set(second) - set(first)
    assert set(marked(other, "b", "added")) == set(first) - set(second)
    other.close()

    def b64(source: str) -> str:
        return base64.urlsafe_b64encode(source.encode()).decode().rstrip("=")

    page.goto(f"{server_url}/compare#a={b64(LEFT)}&b={b64(RIGHT)}")     # the hash alone changes
    page.wait_for_function("v => document.getElementById('source-b').value === v", arg=RIGHT)
    page.wait_for_selector("body[data-compared='yes']")
    assert page.input_value("#source-a") == LEFT and page.input_value("#source-b") == RIGHT
    a, b = dict(keys(LEFT)), dict(keys(RIGHT))
    assert set(marked(page, "b", "added")) == set(b) - set(a)
    # A hand-edited hash (a broken program) is ignored; the comparison still runs.
    page.goto(f"{server_url}/compare#a=%%%&b={b64(LEFT)}&pa=9")
    page.wait_for_function("v => document.getElementById('source-b').value === v", arg=LEFT)
    page.wait_for_selector("body[data-compared='yes']")
    assert page.input_value("#source-a") == LEFT and page.input_value("#pass-a") == "0"
