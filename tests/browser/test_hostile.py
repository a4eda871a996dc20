"""Hostile text everywhere a program's words reach a page (issue 16): markup and script in
comments, strings a program prints, assertion and error messages, and in the query of the
pages that read one. Each page (the lab, the embed, a room's follower, the quiz, the join
form) shows it as text: no script runs, no dialog opens, no element the text describes
exists, and no request leaves for the image it names."""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any
from urllib.parse import quote

import pytest

from .conftest import Watch, new_page, program_url, wait_done

pytestmark = pytest.mark.browser
MARK = "__pwned"
IMG = f"<img src=x onerror=\"window.{MARK}=1\">"
SCRIPT = f"<script>window.{MARK}=1</script>"
SVG = f"<svg onload=\"window.{MARK}=1\"></svg>"
HOSTILE = (
    f"# {IMG} {SCRIPT}\n"
    "x = torch.tensor(2.0)\n"
    "w = 3.0\n"
    f"print('{SCRIPT}', '{IMG}')\n"
    "y = w * x\n"
    "y.backward()\n"
    f"assert w.grad > 100, '{SVG} {IMG}'\n"
)
WRONG_TYPE = f"w = 3.0\ny = w + '{IMG}'\n"
NOTHING_RAN = ("return [...document.querySelectorAll("
               "'img[src=\"x\"], svg[onload], script:not([src])')].length")


def untouched(page: Any, dialogs: list[str]) -> None:
    page.wait_for_timeout(200)
    assert page.evaluate(f"() => window.{MARK} === undefined"), "a script ran"
    assert page.evaluate(f"() => {{ {NOTHING_RAN}; }}") == 0, "hostile markup became elements"
    handlers = page.evaluate("() => [...document.querySelectorAll('*')].flatMap((e) => "
                             "[...e.attributes].filter((a) => a.name.startsWith('on'))"
                             ".map((a) => e.tagName + ' ' + a.name))")
    assert handlers == [], handlers
    assert dialogs == []


def opened(browser: Any, watch: Watch, url: str, dialogs: list[str], width: int = 1280) -> Any:
    page = new_page(browser, watch, width=width, height=800)

    def dialog(d: Any) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    page.goto(url)
    return page


@pytest.mark.parametrize("source", [HOSTILE, WRONG_TYPE], ids=["printed-and-asserted", "error"])
def test_the_lab_and_the_embed_show_hostile_text_as_text(browser: Any, watch: Watch,
                                                         server_url: str, source: str) -> None:
    dialogs: list[str] = []
    p = base64.urlsafe_b64encode(source.encode()).decode().rstrip("=")
    for url in (program_url(server_url, source, step=1),
                f"{server_url}/embed?p={p}&s=1&panels=code,narration,queue,leaves"):
        page = opened(browser, watch, url, dialogs)
        try:
            wait_done(page)
            page.keyboard.press("End")
            text = str(page.locator("body").inner_text())
            assert ("<img src=x" in text) or ("onerror" in text), "the text is shown, as text"
            untouched(page, dialogs)
        finally:
            page.context.close()
    assert not watch.errors, watch.errors
    assert not watch.foreign, watch.foreign


def test_a_rooms_follower_shows_the_presenters_hostile_program_as_text(
        browser: Any, watch: Watch, server_url: str) -> None:
    body = json.dumps({"state": {"source": HOSTILE, "pass": 0, "step": 1}}).encode()
    request = urllib.request.Request(f"{server_url}/api/rooms", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as r:
        code = json.loads(r.read())["code"]
    dialogs: list[str] = []
    page = opened(browser, watch, f"{server_url}/join/{code}", dialogs, width=390)
    try:
        page.wait_for_selector("body[data-follow='following'][data-run='done']", timeout=20_000)
        # The text area is filled when the page paints, a frame after data-run says done.
        page.wait_for_function("s => document.querySelector('#source').value.includes(s)",
                               arg=SCRIPT, timeout=10_000)
        untouched(page, dialogs)
    finally:
        page.context.close()
    assert not watch.errors, watch.errors


@pytest.mark.parametrize("path", [
    f"/quiz?kind={quote(IMG)}&seed={quote(SCRIPT)}",
    f"/quiz?seed=3&count=2&kind={quote(SVG)}",
    f"/join?code={quote(IMG)}",
    f"/join/{quote(SCRIPT, safe='')}",
    f"/present#p={base64.urlsafe_b64encode(HOSTILE.encode()).decode().rstrip('=')}",
])
def test_pages_that_read_a_query_show_it_as_text(browser: Any, watch: Watch, server_url: str,
                                                 path: str) -> None:
    dialogs: list[str] = []
    page = opened(browser, watch, server_url + path, dialogs)
    try:
        page.wait_for_load_state("networkidle")
        untouched(page, dialogs)
    finally:
        page.context.close()
    # A page may report the hostile query as wrong (a 404 for an unknown code, a refused
    # kind); it must not run it.
    watch.errors = [e for e in watch.errors if "404" not in e and "400" not in e
                    and "422" not in e]
    assert not watch.errors, watch.errors
    assert not watch.foreign, watch.foreign
