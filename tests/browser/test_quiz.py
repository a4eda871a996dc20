"""The question bank in Chromium: a question of each kind answered right and wrong, the
model answer revealed, self-marks and the score by kind, the link into the lab at the
question's step, printing with and without answers, a phone's width, and the lab's
Predict mode. The right answers are the bank's own (the engine's), read in Python."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from app import questions as bank
from app.questions import facts
from app.questions.model import ChoicePart, MatchPart, NumericPart, OrderPart, Question
from tests.browser.conftest import Watch, counter, new_page, program_url, wait_done

pytestmark = pytest.mark.browser
KINDS = bank.available_kinds()


def open_question(page: Any, base: str, q: Question) -> Any:
    page.goto(f"{base}/quiz?kind={q.kind}&seed={q.seed}")
    page.wait_for_selector("body[data-state='ready']", timeout=20_000)
    return page.locator(f"article[data-id='{q.id}']")


def dom_id(q: Question, part_id: str) -> str:
    return re.sub(r"[^\w-]", "_", f"{q.id}-{part_id}")


def answer(card: Any, q: Question) -> None:
    """Type the engine's answer into every part, with the page's own controls."""
    for part in q.parts:
        box = card.locator(f".part[data-part='{part.id}']")
        if isinstance(part, NumericPart):
            box.locator("input.num").fill(repr(part.answer))
        elif isinstance(part, OrderPart):
            for target, item in enumerate(part.answer):
                while True:
                    ids = box.locator(".order-item").evaluate_all(
                        "items => items.map(i => i.dataset.id)")
                    if ids.index(item) == target:
                        break
                    box.locator(f".order-item[data-id='{item}'] .up").click()
        elif isinstance(part, ChoicePart):
            for option in part.answer:
                box.locator(f"input[value='{option}']").check()
        else:
            assert isinstance(part, MatchPart)
            for stem, option in part.answer.items():
                box.locator(f"select[data-stem='{stem}']").select_option(option)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_answered_right_scores_full_marks(page: Any, server_url: str,
                                                    kind: str) -> None:
    q = bank.question(kind, 21)
    card = open_question(page, server_url, q)
    assert card.locator(".q-program .t-keyword").first.text_content() == "import"
    if q.focus_line is not None:
        assert card.locator(".q-program .line.focus").get_attribute("data-n") == str(
            q.focus_line)
    answer(card, q)
    card.locator("button.check").click()
    page.wait_for_selector(f"article[data-id='{q.id}'] .part[data-result]")
    assert card.locator(".q-score").text_content() == "Checked: 100%"
    assert card.locator(".part[data-result='right']").count() == len(q.parts)
    assert card.locator(".model").is_visible()


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_answered_wrong_says_so_and_why(page: Any, server_url: str, kind: str) -> None:
    q = bank.question(kind, 22)
    card = open_question(page, server_url, q)
    first = q.parts[0]
    if isinstance(first, NumericPart):
        card.locator("input.num").first.fill(repr(first.answer + 10 * first.tolerance + 1.0))
    card.locator("button.check").click()
    page.wait_for_selector(f"article[data-id='{q.id}'] .part[data-result]")
    assert card.locator(".q-score").text_content() != "Checked: 100%"
    feedback = card.locator(".part").first.locator(".part-feedback").text_content() or ""
    assert feedback.startswith(("✗", "◐")) and len(feedback) > 10


def test_reveal_self_mark_and_score_by_kind_are_kept(page: Any, server_url: str) -> None:
    q = bank.question("gradients", 5)
    card = open_question(page, server_url, q)
    card.locator("button.reveal").click()
    page.wait_for_selector(f"article[data-id='{q.id}'] .model:not([hidden])")
    assert card.locator(".model .explain li").count() == len(q.explanation)
    card.locator("button.mark-partly").click()
    assert card.locator("button.mark-partly").get_attribute("aria-pressed") == "true"
    row = page.locator("#scores tr[data-kind='gradients']")
    assert row.locator("td").nth(3).text_content() == "1"            # partly
    page.reload()
    page.wait_for_selector("body[data-state='ready']")
    assert page.locator("#scores tr[data-kind='gradients'] td").nth(3).text_content() == "1"
    assert card.locator("button.mark-partly").get_attribute("aria-pressed") == "true"


def test_the_lab_link_opens_the_program_at_the_questions_step(page: Any,
                                                              server_url: str) -> None:
    q = bank.question("next-pop", 8)
    card = open_question(page, server_url, q)
    card.locator("button.reveal").click()
    link = card.locator("a.lab-link")
    link.wait_for()
    assert link.get_attribute("href") == q.lab.url
    link.click()
    wait_done(page)
    assert counter(page).startswith(f"step {q.lab.step} of ")
    assert page.locator("#source").input_value() == q.program
    # the lab shows the moment the question is about: the ready queue it asks to pop from
    shown = page.locator("#queue .q-item:not(.running)").evaluate_all(
        "items => items.map(i => [i.querySelector('.q-name').textContent,"
        " i.querySelector('.q-seq').textContent])")
    keys = [name if name.startswith("AccumulateGrad") else f"{name}{seq}" for name, seq in shown]
    assert q.facts["pop"] > 0 and sorted(keys) == q.facts["ready"]


def test_a_practice_set_is_one_link_with_its_downloads(page: Any, server_url: str) -> None:
    page.goto(f"{server_url}/quiz?seed=9&count=5")
    page.wait_for_selector("body[data-state='ready']")
    ids = page.locator("article.q").evaluate_all("cards => cards.map(c => c.dataset.id)")
    assert ids == [q.id for q in bank.practice_set(9, 5)]
    share = page.locator("#share-link").get_attribute("href") or ""
    assert "seed=9" in share and "count=5" in share
    assert "format=qti" in (page.locator("#dl-qti").get_attribute("href") or "")


def test_order_items_move_with_the_keyboard(page: Any, server_url: str) -> None:
    q = bank.question("pop-order", 3)
    card = open_question(page, server_url, q)
    items = card.locator(".order-item")
    second = items.nth(1).get_attribute("data-id")
    items.nth(1).locator(".up").focus()
    page.keyboard.press("Enter")
    assert items.nth(0).get_attribute("data-id") == second


def test_print_styles_hide_the_answers_unless_asked(page: Any, server_url: str) -> None:
    q = bank.question("dependencies", 4)
    card = open_question(page, server_url, q)
    card.locator("button.reveal").click()
    page.wait_for_selector(f"article[data-id='{q.id}'] .model:not([hidden])")
    page.emulate_media(media="print")
    assert not card.locator(".model").is_visible()
    assert not page.locator("#set-panel").is_visible()
    page.evaluate("document.body.classList.add('print-answers')")
    assert card.locator(".model").is_visible()


def test_readable_on_a_phone(browser: Any, server_url: str, watch: Watch) -> None:
    page = new_page(browser, watch, width=390, height=844, touch=True)
    try:
        q = bank.question("saved", 2)
        open_question(page, server_url, q)
        overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 1
    finally:
        page.context.close()
    assert not watch.errors, watch.errors


def test_predict_mode_asks_before_each_pop_and_keeps_score(page: Any, server_url: str) -> None:
    source = ("import torch\nw = torch.tensor(3.0, requires_grad=True)\n"
              "b = torch.tensor(1.0, requires_grad=True)\nx = torch.tensor(2.0)\n"
              "y = w * x + b\nloss = y * y\nloss.backward()\n")
    steps = facts.run(source)["passes"][0]["steps"]
    page.goto(program_url(server_url, source, 0))
    wait_done(page)
    page.locator("#predict").click()
    assert page.locator("#predict").get_attribute("aria-pressed") == "true"
    page.keyboard.press("Home")
    first = page.locator(f".predict-option[data-node='{steps[0]['node']}']")
    first.click()
    # the counter is painted on the next animation frame, the verdict at once
    expect(page.locator("#counter")).to_have_text(re.compile(r"^step 1 of"))
    assert "✓" in (page.locator(".predict-verdict").text_content() or "")
    wrong = page.locator(f".predict-option:not([data-node='{steps[1]['node']}'])").first
    wrong.click()
    expect(page.locator("#counter")).to_have_text(re.compile(r"^step 2 of"))
    assert "✗" in (page.locator(".predict-verdict").text_content() or "")
    assert page.locator(".predict-score").text_content() == "Score: 1 of 2"
    assert page.locator("#queue").evaluate("q => getComputedStyle(q).visibility") == "hidden"


@pytest.mark.parametrize(("width", "scheme"), [(1440, "light"), (1440, "dark"), (390, "light")])
def test_no_axe_violation_on_the_quiz_page_and_in_predict_mode(
        browser: Any, watch: Watch, server_url: str, width: int, scheme: str) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="the accessibility check runs axe-core")
    rules = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa",
                                                   "best-practice"]},
             "resultTypes": ["violations"]}
    page = new_page(browser, watch, width=width, height=900, scheme=scheme)
    try:
        page.goto(f"{server_url}/quiz?seed=2&count=7")
        page.wait_for_selector("body[data-state='ready']")
        page.locator("article.q button.check").first.click()
        page.locator("article.q button.reveal").nth(1).click()
        page.wait_for_selector("article.q .model:not([hidden])")
        results = axe.Axe().run(page, options=rules)
        assert results.violations_count == 0, results.generate_report()
        page.goto(program_url(server_url, "a = 2.0\nb = 3.0\nloss = a * b + a\n", 0))
        wait_done(page)
        page.locator("#predict").click()
        results = axe.Axe().run(page, options=rules)
        assert results.violations_count == 0, results.generate_report()
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign
