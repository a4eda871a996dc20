"""The lab page in Chromium, against the real server. Every expected order and value comes
from running the engine (`run_source`), except the numbers the issue itself states."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.presets import PRESETS, Preset, preset
from app.trace import Step, Trace, run_source

from .conftest import Watch, counter, new_page, program_url, wait_done

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

def chosen(preset_id: str) -> Preset:
    found = preset(preset_id)
    assert found is not None, preset_id
    return found


WORKED = chosen("worked-example")
# The page's status line for a program that stopped before any pop, by the error's kind.
NOTHING_RAN = {
    "rejected": "Not run: the lab refused the text.",
    "forward": "PyTorch raised in the forward pass: nothing ran backward.",
    "backward": "backward() raised before any pop.",
}


def short(text: str | None) -> str:
    """As the page writes a value: tensor(28.) → 28 (static/js/labels.js: short)."""
    if text is None:
        return "None"
    s = re.sub(r"\s+", " ", text).strip()
    m = re.fullmatch(r"tensor\((.*)\)", s)
    if m:
        s = m.group(1)
    return s[:-1] if re.fullmatch(r"-?\d+\.", s) else s


def label(step: Step) -> str:
    if step["leaf"]:
        return f"AccumulateGrad({step['leaf']})"
    return f"{step['name']} #{step['seq']}"


def steps(trace: Trace) -> list[Step]:
    return [s for p in trace.passes for s in p.steps]


def final_grads(page: Any) -> dict[str, str]:
    """Each leaf's .grad as the leaves panel shows it: a scalar's in its row; a tensor's
    (views/network/leaves.js: a row for its name, one for its heatmaps) by its printed text;
    a module's header row names no leaf."""
    page.wait_for_function("() => document.body.dataset.network !== 'loading'")
    rows = page.locator("#leaves > tbody > tr")
    out = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        kind = row.get_attribute("class") or ""
        if "band-row" in kind or "tensor-values-row" in kind:
            continue
        name = row.locator("th").first
        leaf = str(name.get_attribute("title") or name.text_content())
        if "tensor-leaf" in kind:
            printed = rows.nth(i + 1).locator("figure.tensor").filter(
                has=page.locator(".tensor-label", has_text=".grad")).locator("pre.tensor-text")
            out[leaf] = short(printed.text_content()) if printed.count() else "None"
            continue
        grad = str(row.locator("th, td").nth(2).text_content())
        out[leaf] = grad.replace("first write", "").replace("+=", "").strip()
    return out


def expected_final(trace: Trace) -> dict[str, str]:
    """Each leaf's .grad after the program, as the page prints it."""
    last: dict[str, Step] = {}
    for s in steps(trace):
        if s["leaf"] and s.get("error") is None:
            last[s["leaf"]] = s
    out = {}
    for leaf, value in trace.grads.items():
        if value is None:
            out[leaf] = "None"
        elif leaf in last:
            out[leaf] = short(last[leaf]["grad_after_text"])
    return out


def go_end(page: Any) -> None:
    page.locator("#stage").focus()
    page.keyboard.press("End")
    page.wait_for_function("""() => {
        const m = /step (\\d+) of (\\d+)/.exec(document.querySelector('#counter').textContent);
        return m && m[1] === m[2];
    }""")
    page.wait_for_timeout(50)


@pytest.mark.parametrize("preset_id", [p.id for p in PRESETS])
def test_every_preset_runs(page: Any, server_url: str, preset_id: str) -> None:
    chosen = preset(preset_id)
    assert chosen is not None
    trace = run_source(chosen.source)
    page.goto(server_url + "/")
    wait_done(page)
    page.select_option("#preset", preset_id)
    expect(page.locator("#goal")).to_have_text(chosen.goal)
    wait_done(page)
    assert page.input_value("#source") == chosen.source
    pops = len(steps(trace))
    grads = sum(p.kind == "grad" for p in trace.passes)
    kinds = [f"{n} {kind}" for n, kind in [(len(trace.passes) - grads, "backward"),
                                           (grads, "autograd.grad")] if n]
    status = (f"{pops} {'pop' if pops == 1 else 'pops'} in {' and '.join(kinds)} "
              f"{'call' if len(trace.passes) == 1 else 'calls'}")
    if trace.error and not trace.passes:
        status = NOTHING_RAN[trace.error.kind]
    assert page.locator("#status").text_content() == status
    go_end(page)
    if trace.passes:
        assert final_grads(page) == expected_final(trace)
        shown = page.locator("svg#graph .node").count()
        assert shown == len(trace.passes[-1].graph.nodes)  # type: ignore[union-attr]
    if trace.error:
        assert page.locator("#error").is_visible()
        assert trace.error.message.replace("`", "") in str(page.locator("#error").text_content())
        assert page.locator("#marks mark.err").count() == 1


def test_worked_example_forward_and_back(page: Any, server_url: str) -> None:
    trace = run_source(WORKED.source)
    popped = steps(trace)
    page.goto(program_url(server_url, WORKED.source))
    wait_done(page)
    expect(page.locator("#counter")).to_have_text(f"step 0 of {len(popped)}")
    expect(page.locator("#sentence")).to_contain_text("MulBackward0")
    page.locator("#stage").focus()
    for k in [*range(1, len(popped) + 1), *range(len(popped) - 1, 0, -1)]:
        page.keyboard.press("ArrowRight" if k > int(counter(page).split()[1]) else "ArrowLeft")
        step = popped[k - 1]
        expect(page.locator("#counter")).to_have_text(f"step {k} of {len(popped)}")
        assert str(page.locator("#sentence").text_content()).startswith(label(step))
        running = page.locator("svg#graph .node.running")
        assert running.count() == 1
        assert running.locator(".node-name").text_content() == step["name"]
        seq = "MAX" if step["leaf"] else f"#{step['seq']}"
        assert running.locator(".node-seq").text_content() == seq
        assert page.locator("#queue .q-item.running .q-seq").text_content() == seq
        labels = page.locator("svg#graph .edge-label.current text").all_text_contents()
        assert sorted(labels) == sorted(short(s["text"]) for s in step["sent"])
        if step["leaf"]:
            assert f"{step['leaf']}.grad = {short(step['grad_after_text'])}" in str(
                page.locator("#sentence").text_content())
    page.keyboard.press("Home")
    expect(page.locator("#counter")).to_have_text(f"step 0 of {len(popped)}")
    assert page.locator("svg#graph .node.running").count() == 0


def test_worked_example_sentences_and_values(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED.source, step=3))
    wait_done(page)
    expect(page.locator("#counter")).to_have_text("step 3 of 5")
    sentence = str(page.locator("#sentence").text_content())
    assert sentence.startswith("AccumulateGrad(b) runs before MulBackward0 #0: both are ready")
    assert "b.grad = 14" in sentence
    assert page.locator("#queue .q-item").count() == 2
    page.locator("#stage").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#sentence")).to_contain_text("MulBackward0 #0 sends 14 × 2 = 28 to w")
    assert "other" in str(page.locator("svg#graph .node.running .saved.freed").text_content())
    page.keyboard.press("ArrowRight")
    expect(page.locator("#counter")).to_have_text("step 5 of 5")
    assert final_grads(page) == {"b": "14", "w": "28"}


def test_scrub_and_play(page: Any, server_url: str) -> None:
    chosen = preset("mixed")
    assert chosen is not None
    popped = steps(run_source(chosen.source))
    page.goto(program_url(server_url, chosen.source))
    wait_done(page)
    for k in (7, 2, len(popped)):
        page.locator("#scrub").fill(str(k))
        expect(page.locator("#counter")).to_have_text(f"step {k} of {len(popped)}")
        assert str(page.locator("#sentence").text_content()).startswith(label(popped[k - 1]))
        expect(page).to_have_url(re.compile(rf"[#&]s={k}(&|$)"))
    page.locator("#speed").select_option("0.5")     # slow: pausing mid-way is certain
    page.locator("#stage").focus()
    page.keyboard.press("Home")
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
    # Playing moves on: watched every frame, so no step is missed however busy the machine.
    page.wait_for_function("() => !/^step 0 /.test(document.querySelector('#counter')"
                           ".textContent)", polling="raf", timeout=10_000)
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
    page.locator("#play").click()
    expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
    page.locator("#play").click()
    expect(page.locator("#play")).to_have_attribute("aria-label", "Play")


def test_error_underlines_line_and_column(page: Any, server_url: str) -> None:
    source = "x = torch.tensor(2.0)\nw = 3.0\ny = w + (lambda: 1)\n"
    error = run_source(source).error
    assert error is not None and error.line and error.col
    page.goto(server_url + "/")
    wait_done(page)
    page.fill("#source", source)
    page.click("#run")
    page.wait_for_selector("#marks mark.err")
    wait_done(page)
    line = source.splitlines()[error.line - 1]
    assert error.end_col is not None
    assert page.locator("#marks mark.err").text_content() == line[error.col - 1:error.end_col - 1]
    assert page.locator("#gutter .err").text_content() == str(error.line)
    text = str(page.locator("#error").text_content())
    assert f"Line {error.line}, column {error.col}" in text
    assert error.message.replace("`", "") in text
    page.locator("#source").press("End")
    page.keyboard.type(" ")
    expect(page.locator("#marks mark.err")).to_have_count(0)  # the text changed: no stale mark


def test_backward_again_retain_new_forward_and_zero_grad(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED.source))
    wait_done(page)
    page.click("#again")
    wait_done(page)
    again = run_source(page.input_value("#source"))
    assert again.error is not None and again.error.type == "RuntimeError"
    go_end(page)
    assert again.error.message in str(page.locator("#detail").text_content())
    assert page.locator("svg#graph .node.error").count() == 1
    failed = next(s for s in steps(again) if s.get("error"))
    expect(page.locator("#note")).to_contain_text(f"stopped at {label(failed)}")
    assert final_grads(page) == expected_final(again) == {"b": "14", "w": "28"}

    page.check("#retain")
    wait_done(page)
    assert "retain_graph=True" in page.input_value("#source")
    retained = run_source(page.input_value("#source"))
    assert retained.error is None and retained.grads["w"] == 56.0
    go_end(page)
    assert final_grads(page)["w"] == "56"
    expect(page.locator("#note")).to_contain_text("w.grad 28 → 56")

    page.uncheck("#retain")
    # A fresh load: the same page at a new hash would load it only after a hashchange
    # (and not at all while the page's own URL still says the same thing).
    page.goto("about:blank")
    page.goto(program_url(server_url, WORKED.source))
    wait_done(page)
    page.click("#forward")
    wait_done(page)
    forward = run_source(page.input_value("#source"))
    assert forward.grads["w"] == 56.0
    first = {s["seq"] for s in forward.passes[0].steps if s["leaf"] is None}
    seqs = {s["seq"] for s in forward.passes[1].steps if s["leaf"] is None}
    assert min(seqs) == max(first) + 1, "sequence numbers continue"
    go_end(page)
    assert final_grads(page) == expected_final(forward)
    assert final_grads(page)["w"] == "56"
    shown = set(page.locator("svg#graph .node-seq").all_text_contents())
    assert {f"#{s}" for s in seqs} <= shown
    expect(page.locator("#note")).to_contain_text("sequence numbers continue")

    page.click("#zero")
    wait_done(page)
    assert page.input_value("#source").rstrip().endswith("w.grad = None\nb.grad = None") or \
        page.input_value("#source").rstrip().endswith("b.grad = None\nw.grad = None")
    zeroed = run_source(page.input_value("#source"))
    assert set(zeroed.grads.values()) == {None}
    go_end(page)
    assert final_grads(page) == expected_final(zeroed) == {"b": "None", "w": "None"}
    expect(page.locator("#note")).to_contain_text("forgets the gradients")


def test_share_link_round_trip(page: Any, browser: Any, server_url: str, watch: Watch) -> None:
    chosen = preset("two-losses")
    assert chosen is not None
    page.goto(server_url + "/")
    wait_done(page)
    page.select_option("#preset", chosen.id)
    wait_done(page)
    page.locator("#scrub").fill("3")
    page.locator("#speed").select_option("2")
    page.click("#theme")
    page.click("#theme")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page).to_have_url(re.compile(r"#p=.*&s=3&v=2&t=dark"))
    link = page.url
    sentence = page.locator("#sentence").text_content()
    other = new_page(browser, watch)
    try:
        other.goto(link)
        wait_done(other)
        assert other.input_value("#source") == chosen.source
        expect(other.locator("#counter")).to_have_text(counter(page))
        assert other.locator("#sentence").text_content() == sentence
        expect(other.locator("html")).to_have_attribute("data-theme", "dark")
        assert other.input_value("#speed") == "2"
        assert other.input_value("#preset") == chosen.id
    finally:
        other.context.close()


def test_typed_text_stays_text(page: Any, server_url: str) -> None:
    source = "w = 3.0\nimg = w * 2  # <img src=x onerror=alert(1)>\n"
    page.goto(program_url(server_url, source))
    wait_done(page)
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("svg#graph text.var-tag").first.text_content() == "img"
