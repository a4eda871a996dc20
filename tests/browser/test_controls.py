"""Controls that work from anywhere (issue 10): shortcuts whatever has focus but a text field,
PageDown/PageUp, Run and a preset playing from step 0, step buttons that stay put on a phone,
preset titles that fit, retain_graph reset by a preset, and play after a failed run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.presets import PRESETS, preset
from app.trace import run_source

from .conftest import Watch, counter, new_page, program_url, wait_done

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"


def pops(source: str) -> int:
    return sum(len(p.steps) for p in run_source(source).passes)


def step_of(page: Any) -> int:
    return int(counter(page).split()[1])


# Where the step button is laid out in the page (not where it is painted: a pressed button
# is drawn 1px lower, :active).
PLACE = """() => {
    let x = 0, y = 0;
    for (let n = document.querySelector('#forward-step'); n; n = n.offsetParent) {
        x += n.offsetLeft; y += n.offsetTop;
    }
    return [x, y];
}"""


@pytest.fixture
def phone(browser: Any, watch: Watch) -> Iterator[Any]:
    p = new_page(browser, watch, width=390, height=844, touch=True)
    yield p
    p.context.close()
    assert not watch.errors, watch.errors


def test_shortcuts_after_picking_a_preset(page: Any, server_url: str) -> None:
    chosen = PRESETS[1]
    page.goto(server_url + "/")
    wait_done(page)
    page.locator("#preset").focus()
    page.select_option("#preset", chosen.id)
    wait_done(page)
    page.keyboard.press(" ")                # pause what the preset started
    expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
    page.keyboard.press("Home")
    expect(page.locator("#counter")).to_contain_text("step 0 of")
    assert page.evaluate("document.activeElement.id") == "preset"
    page.keyboard.press("ArrowRight")
    expect(page.locator("#counter")).to_contain_text("step 1 of")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#counter")).to_contain_text("step 2 of")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#counter")).to_contain_text("step 1 of")
    assert page.input_value("#preset") == chosen.id, "the arrows stepped, not the picker"
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Play")


@pytest.mark.parametrize("focus", ["#speed", "#scrub", "#forward-step", "#run"])
def test_arrows_step_whatever_has_focus(page: Any, server_url: str, focus: str) -> None:
    page.goto(program_url(server_url, WORKED, step=2))
    wait_done(page)
    expect(page.locator("#counter")).to_have_text(f"step 2 of {pops(WORKED)}")
    page.locator(focus).focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#counter")).to_have_text(f"step 3 of {pops(WORKED)}")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#counter")).to_have_text(f"step 1 of {pops(WORKED)}")
    assert page.input_value("#speed") == "1", "the arrows never change the speed"
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
    assert page.locator("#source").input_value() == WORKED, "Space did not press Run"


def test_keys_in_the_editor_stay_the_editors(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED, step=2))
    wait_done(page)
    page.locator("#source").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("PageDown")
    expect(page.locator("#counter")).to_have_text(f"step 2 of {pops(WORKED)}")


def test_page_down_and_page_up_step(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED, step=0))
    wait_done(page)
    page.locator("body").focus()
    for k in (1, 2, 3):
        page.keyboard.press("PageDown")
        expect(page.locator("#counter")).to_have_text(f"step {k} of {pops(WORKED)}")
    page.keyboard.press("PageUp")
    expect(page.locator("#counter")).to_have_text(f"step 2 of {pops(WORKED)}")
    assert page.evaluate("scrollY") == 0, "PageDown stepped instead of scrolling"


def record_counter(page: Any) -> None:
    """Every painted (counter, play button, graph drawn, run status), in order: a mutation
    observer sees each paint's changes, however quickly the run streams in."""
    page.evaluate("""() => {
        window.__seen = [];
        const look = () => {
            const text = document.querySelector('#counter').textContent;
            const play = document.querySelector('#play').getAttribute('aria-label');
            const graph = document.querySelectorAll('svg#graph .node').length > 0;
            const run = document.body.dataset.run;
            const last = window.__seen.at(-1);
            const now = [text, play, graph, run];
            if (!last || now.some((v, i) => v !== last[i])) window.__seen.push(now);
        };
        new MutationObserver(look).observe(document.body,
            { subtree: true, childList: true, characterData: true, attributes: true });
    }""")


@pytest.mark.parametrize("how", ["run", "preset"])
def test_run_and_a_preset_play_from_step_zero(page: Any, server_url: str, how: str) -> None:
    chosen = preset("two-losses")
    assert chosen is not None
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    record_counter(page)
    if how == "run":
        page.click("#run")
        n = pops(WORKED)
    else:
        page.select_option("#preset", chosen.id)
        n = pops(chosen.source) + len(run_source(chosen.source).passes) - 1
    page.wait_for_function("() => window.__seen.some((s) => /^step 1 /.test(s[0]))",
                           timeout=10_000)
    seen = page.evaluate("window.__seen")
    # the new run's first paint is before its graph is drawn, except that a cached trace
    # can clear the old graph and draw the new one within one task (one change observed)
    cleared = [i for i, s in enumerate(seen) if s[3] == "running" and not s[2]]
    start = cleared[0] if cleared else next(
        i for i, s in enumerate(seen) if s[3] == "running" and s[0].startswith("step 0 of "))
    after = seen[start:]
    first = next(s for s in after if s[2])
    assert first[0].startswith("step 0 of "), after      # the counts grow as steps stream in
    assert first[1] == "Pause", "it plays from step 0"
    assert f"step 0 of {n}" in [s[0] for s in after]


def test_step_zero_explains_the_counts(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.click("#run")
    wait_done(page)
    expect(page.locator("#counter")).to_have_text(f"step 0 of {pops(WORKED)}")
    expect(page.locator("#sentence")).to_contain_text("counts how many gradients")


def test_step_buttons_stay_in_place_on_a_phone(phone: Any, server_url: str) -> None:
    chosen = preset("two-losses")
    assert chosen is not None
    phone.goto(program_url(server_url, chosen.source, step=0))
    wait_done(phone)
    button = phone.locator("#forward-step")
    button.scroll_into_view_if_needed()
    phone.wait_for_timeout(200)
    where = phone.evaluate(PLACE)
    lengths = set()
    while not button.is_disabled():
        button.tap()
        phone.wait_for_timeout(60)
        lengths.add(len(str(phone.locator(".narration").text_content())))
        now = phone.evaluate(PLACE)
        assert now == where, f"moved at {counter(phone)}"
    assert len(lengths) > 3, "the narration changed length as it went"


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 720), (390, 844)])
def test_preset_titles_fit(browser: Any, server_url: str, watch: Watch, width: int,
                           height: int) -> None:
    page = new_page(browser, watch, width=width, height=height)
    try:
        page.goto(server_url + "/")
        wait_done(page)
        for p in PRESETS:
            page.select_option("#preset", p.id)
            room = page.evaluate("""() => {
                const s = document.querySelector('#preset');
                const css = getComputedStyle(s);
                const g = document.createElement('canvas').getContext('2d');
                g.font = `${css.fontWeight} ${css.fontSize} ${css.fontFamily}`;
                const text = g.measureText(s.selectedOptions[0].textContent).width;
                const inner = s.clientWidth - parseFloat(css.paddingLeft)
                    - parseFloat(css.paddingRight);
                return [text, inner - 20, s.getBoundingClientRect().right, innerWidth];
            }""")
            assert room[0] <= room[1], f"{p.title!r} is cut at {width}px: {room}"
            assert room[2] <= room[3], "the picker stays on the screen"
    finally:
        page.context.close()
    assert not watch.errors


def test_retain_graph_resets_with_another_preset(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.click("#again")
    wait_done(page)
    page.check("#retain")
    wait_done(page)
    assert "retain_graph=True" in page.input_value("#source")
    page.select_option("#preset", PRESETS[1].id)
    wait_done(page)
    expect(page.locator("#retain")).not_to_be_checked()
    assert "r=1" not in page.url
    page.click("#again")
    wait_done(page)
    assert "retain_graph=True" not in page.input_value("#source")


def test_play_after_a_failed_run(page: Any, server_url: str) -> None:
    source = "w = 3.0\ny = w + (lambda: 1)\n"
    assert run_source(source).error is not None
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.fill("#source", source)
    page.click("#run")
    # Read at the first paint after the run: no waiting for the player's next beat.
    shown = page.evaluate("""() => new Promise((resolve) => {
        const look = () => {
            if (document.body.dataset.run !== 'done') { requestAnimationFrame(look); return; }
            requestAnimationFrame(() => requestAnimationFrame(() => {
                const play = document.querySelector('#play');
                resolve([play.getAttribute('aria-label'), play.disabled,
                         play.querySelector('use').getAttribute('href')]);
            }));
        };
        look();
    })""")
    assert shown == ["Play", True, "#i-play"]
