"""Messages that say what happened (issue 10): the underline sits under the offending text
however the program is scrolled and ends where the server says; the wording comes from the
error's kind, never from PyTorch's message; backticks are code; the note after zero_grad()
says None → 14. Every expected position and value comes from running the engine."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.trace import run_source

from .conftest import Watch, program_url, wait_done

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser

WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"
LAMBDA = "y = w + (lambda: 1)"          # a lambda outside a hook: rejected (CONTRACT §1b)


def long_program(bad_line: int, lines: int = 60) -> str:
    body = ["w = 3.0"] + [f"h{i} = w * {i + 1}.0" for i in range(1, lines)]
    body[bad_line - 1] = LAMBDA
    return "\n".join(body) + "\n"


def text_box(page: Any, line: int, col: int) -> dict[str, float]:
    """Where the textarea draws (line, col): from its own metrics and scroll."""
    return dict(page.evaluate("""([line, col]) => {
        const a = document.querySelector('#source');
        const css = getComputedStyle(a);
        const r = a.getBoundingClientRect();
        const g = document.createElement('canvas').getContext('2d');
        g.font = `${css.fontSize} ${css.fontFamily}`;
        const ch = g.measureText('0'.repeat(50)).width / 50;
        const lh = parseFloat(css.lineHeight);
        return { x: r.left + parseFloat(css.paddingLeft) + (col - 1) * ch - a.scrollLeft,
                 y: r.top + parseFloat(css.paddingTop) + (line - 1) * lh - a.scrollTop, lh, ch };
    }""", [line, col]))


@pytest.mark.parametrize("scroll", ["down", "down-and-right"])
def test_underline_follows_a_scrolled_long_program(page: Any, server_url: str,
                                                   scroll: str) -> None:
    source = long_program(bad_line=47)
    error = run_source(source).error
    assert error is not None and error.kind == "rejected" and error.line == 47
    assert error.end_line == 47 and error.end_col is not None and error.col is not None
    page.goto(program_url(server_url, source))
    wait_done(page)
    mark = page.locator("#marks mark.err")
    expect(mark).to_have_count(1)
    line = source.splitlines()[error.line - 1]
    assert mark.text_content() == line[error.col - 1:error.end_col - 1]
    assert line[error.col - 1:error.end_col - 1] != line.strip(), "the span is part of the line"
    area = page.locator("#source")
    area.evaluate("(a, wide) => { a.scrollTop = 600; if (wide) a.scrollLeft = 30; }",
                  scroll == "down-and-right")
    page.wait_for_timeout(100)
    assert area.evaluate("(a) => a.scrollTop") > 0
    want = text_box(page, error.line, error.col)
    box = mark.bounding_box()
    assert abs(box["y"] - want["y"]) < want["lh"] / 3, (box, want)
    assert abs(box["x"] - want["x"]) < want["ch"] / 2, (box, want)
    assert abs(box["width"] - (error.end_col - error.col) * want["ch"]) < want["ch"]
    gutter = page.locator("#gutter .err")
    assert gutter.text_content() == str(error.line)
    assert abs(gutter.bounding_box()["y"] - want["y"]) < want["lh"] / 3


def test_underline_spans_the_lines_the_server_gives(page: Any, server_url: str) -> None:
    source = 'w = 3.0\ny = w * {\n    1, 2}\nz = y\n'
    error = run_source(source).error
    assert error is not None and error.kind == "rejected"
    assert error.line is not None and error.col is not None
    assert error.end_line is not None and error.end_col is not None
    assert error.end_line > error.line, "the construct spans two lines"
    page.goto(program_url(server_url, source))
    wait_done(page)
    lines = source.splitlines()
    want = [lines[error.line - 1][error.col - 1:]]
    want += [lines[n - 1].strip() for n in range(error.line + 1, error.end_line)]
    want.append(lines[error.end_line - 1][:error.end_col - 1].strip())
    assert page.locator("#marks mark.err").all_text_contents() == want
    assert page.locator("#gutter .err").all_text_contents() == [
        str(n) for n in range(error.line, error.end_line + 1)]


def test_backticks_in_messages_are_code(page: Any, server_url: str) -> None:
    source = f"w = 3.0\n{LAMBDA}\n"
    error = run_source(source).error
    assert error is not None and error.kind == "rejected"
    quoted = re.findall(r"`([^`]+)`", error.message)
    assert quoted, "this construct's advice quotes code"
    page.goto(program_url(server_url, source))
    wait_done(page)
    message = page.locator("#error .message")
    assert message.locator("code").all_text_contents() == quoted
    assert "`" not in str(message.text_content())
    assert message.text_content() == error.message.replace("`", "")
    assert page.locator("#error code img, #error script").count() == 0


@pytest.mark.parametrize("line", ["for = w * 2", "my-var = w * 2", "2b = w * 2"])
def test_a_word_that_cannot_be_a_name_gets_advice(page: Any, server_url: str,
                                                  line: str) -> None:
    """Python says `invalid syntax` (or suggests `==`) for these; the lab says why the word
    is no name, quotes it as code and underlines exactly the word."""
    source = f"w = 3.0\n{line}\n"
    error = run_source(source).error
    assert error is not None and error.kind == "rejected" and error.type == "SyntaxError"
    word = line.split(" =")[0]
    assert (error.line, error.col, error.end_line, error.end_col) == (2, 1, 2, len(word) + 1)
    page.goto(program_url(server_url, source))
    wait_done(page)
    expect(page.locator("#marks mark.err")).to_have_text(word)
    codes = page.locator("#error .message code").all_text_contents()
    assert codes[0] == word and codes == re.findall(r"`([^`]+)`", error.message)
    assert "`" not in str(page.locator("#error .message").text_content())


@pytest.mark.parametrize(("source", "kind"), [
    ("x = torch.tensor(3, requires_grad=True)\n", "forward"),
    ("v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = v * 2\ny.backward()\n", "backward"),
    (f"w = 3.0\n{LAMBDA}\n", "rejected"),
    ("x = torch.tensor(1.0)\nn = 2 ** 256\n", "limit"),
])
def test_wording_follows_the_errors_kind(page: Any, server_url: str, source: str,
                                         kind: str) -> None:
    error = run_source(source).error
    assert error is not None and error.kind == kind
    page.goto(program_url(server_url, source))
    wait_done(page)
    sentence = str(page.locator("#sentence").text_content())
    hint = str(page.locator("#error .hint").text_content())
    if kind == "forward":
        assert "backward() raised" not in sentence
        assert "forward pass" in sentence and f"line {error.line}" in sentence
        assert "before any backward() call" in hint
    elif kind == "backward":
        assert sentence.startswith(f"backward() on line {error.line} raised {error.type}")
    elif kind == "limit":
        assert "lab's limits" in sentence and f"line {error.line}" in sentence
        assert "PyTorch" not in sentence + hint and "lab\u2019s limits" in hint
    else:
        assert sentence.startswith("The lab did not run this program")
        assert "PyTorch" not in hint
    assert error.message.replace("`", "") in str(page.locator("#error").text_content())
    assert page.locator("#error").get_attribute("data-kind") == kind


def test_wording_never_depends_on_the_message(page: Any, server_url: str) -> None:
    """The same kind with another message says the same: the page reads `kind` only."""
    source = "x = torch.tensor(3, requires_grad=True)\n"
    page.goto(program_url(server_url, source))
    wait_done(page)
    said = page.locator("#sentence").text_content()
    page.evaluate("""() => {
        const original = window.fetch;
        window.fetch = async (...args) => {
            const response = await original(...args);
            if (!String(args[0]).includes('/api/trace/stream')) return response;
            const text = (await response.text()).replace(/"message":"[^"]*"/g,
                '"message":"backward() raised RuntimeError: Trying to backward through '
                + 'the graph a second time"');
            return new Response(text, { headers: response.headers });
        };
    }""")
    page.click("#run")
    wait_done(page)
    expect(page.locator("#error .message")).to_contain_text("Trying to backward")
    assert page.locator("#sentence").text_content() == said


def test_unreachable_server_is_not_a_pytorch_error(page: Any, server_url: str,
                                                  watch: Watch) -> None:
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.route("**/api/trace/stream", lambda route: route.abort())
    page.click("#run")
    page.wait_for_selector("body[data-run='failed']")
    page.wait_for_timeout(100)
    sentence = str(page.locator("#sentence").text_content())
    assert "could not be reached" in sentence and "PyTorch" in sentence
    assert "not an error of PyTorch" in sentence
    assert "PyTorch raises" not in str(page.locator("#error").text_content())
    assert page.locator("#error").get_attribute("data-kind") == "unreachable"
    assert page.locator("#status").text_content() == "Could not reach the server."
    play = page.locator("#play")
    assert play.get_attribute("aria-label") == "Play" and play.is_disabled()
    # The one console error is the browser's own report of the refused request.
    assert all("ERR_FAILED" in e for e in watch.errors), watch.errors
    watch.errors.clear()


def test_note_after_zero_grad_and_a_new_forward_pass(page: Any, server_url: str) -> None:
    page.goto(program_url(server_url, WORKED))
    wait_done(page)
    page.click("#zero")
    wait_done(page)
    page.click("#forward")
    wait_done(page)
    trace = run_source(page.input_value("#source"))
    assert trace.error is None
    last = [s for s in trace.passes[-1].steps if s["leaf"]]
    assert last and all(s["grad_before"] is None for s in last), "zero_grad() set them to None"
    note = str(page.locator("#note").text_content())
    for step in last:
        after = re.sub(r"^tensor\((.*?)\.?\)$", r"\1", str(step["grad_after_text"]))
        assert f"{step['leaf']}.grad None → {after}" in note, note
    assert " 14 → 14" not in note and " 28 → 28" not in note
    assert "afresh" in note
