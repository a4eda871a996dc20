"""The presenter view and a live session in Chromium, against the real server: a presenter
page and two student pages. What the students must show is what the presenter's page shows
(its own counter and sentence); the poll's answer is the engine's (run_source)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.lessons import load_lessons, shipped_dir
from app.presets import preset
from app.rooms.polls import next_pop
from app.trace import run_source

from .conftest import Watch, counter, new_page

BEAT_MS = 1600                  # static/js/player.js: one step a beat at speed 1

pytestmark = pytest.mark.browser
LESSON = load_lessons(shipped_dir())[0]


@pytest.fixture
def hall(browser: Any, watch: Watch, server_url: str) -> Iterator[dict[str, Any]]:
    """A presenter at 1280×720 live on the first lesson; two students at phone and laptop
    size, joined by the code the presenter's screen shows."""
    presenter = new_page(browser, watch, width=1280, height=720)
    presenter.goto(f"{server_url}/present?live=1")
    presenter.wait_for_selector("#room-code", timeout=20_000)
    code = str(presenter.locator("#room-code").text_content()).replace(" ", "")
    presenter.keyboard.press("j")               # hide the join screen
    students = []
    for width, height in ((390, 844), (1280, 800)):
        student = new_page(browser, watch, width=width, height=height)
        student.goto(f"{server_url}/join/{code}")
        student.wait_for_selector("body[data-follow='following'][data-run='done']",
                                  timeout=20_000)
        students.append(student)
    yield {"presenter": presenter, "students": students, "code": code, "url": server_url}
    for p in [presenter, *students]:
        p.context.close()
    assert not watch.errors, watch.errors
    assert not watch.foreign, f"requests to another host: {watch.foreign}"


def in_step(page: Any, presenter: Any) -> None:
    """Wait until the page shows the presenter's frame: its counter and its sentence."""
    want = counter(presenter), str(presenter.locator("#sentence").text_content())
    page.wait_for_function(
        "([c, s]) => document.querySelector('#counter').textContent === c"
        " && document.querySelector('#sentence').textContent === s", arg=list(want),
        timeout=10_000)


def shows(page: Any, selector: str, text: str) -> None:
    """Wait until the element's painted text is this (the pages paint on the next
    animation frame: reading it right after a key press reads the frame before)."""
    page.wait_for_function("([q, t]) => document.querySelector(q)?.textContent === t",
                           arg=[selector, text], timeout=10_000)


def step_to(page: Any, key: str, want: int) -> None:
    """Press a key and wait until the counter shows step `want`."""
    page.keyboard.press(key)
    page.wait_for_function(
        "k => document.querySelector('#counter').textContent.startsWith(`step ${k} of `)",
        arg=want, timeout=10_000)


def source_is(page: Any, source: str) -> None:
    """Wait until the program's text area holds `source` (set when the page paints)."""
    page.wait_for_function("s => document.querySelector('#source').value === s", arg=source,
                           timeout=10_000)


def test_steps_propagate_and_a_late_joiner_lands_on_the_current_one(
        hall: dict[str, Any], browser: Any, watch: Watch) -> None:
    presenter, students = hall["presenter"], hall["students"]
    shows(presenter, "#followers", "2 following")   # the presenter sees who follows
    for want, key in enumerate(("PageDown", "PageDown", "ArrowRight"), start=1):
        step_to(presenter, key, want)
        for student in students:
            in_step(student, presenter)
    late = new_page(browser, watch, width=1280, height=800)
    try:
        late.goto(f"{hall['url']}/join/{hall['code'].lower()}")
        late.wait_for_selector("body[data-follow='following'][data-run='done']")
        in_step(late, presenter)
        source_is(late, LESSON.programs[0].source)
        shows(presenter, "#followers", "3 following")
    finally:
        late.context.close()
    presenter.keyboard.press("n")               # the next program of the lesson
    shows(presenter, "#p-title", LESSON.programs[1].title)
    presenter.wait_for_selector("body[data-run='done']")
    for student in students:
        source_is(student, LESSON.programs[1].source)
        in_step(student, presenter)


def test_a_student_steps_away_and_back(hall: dict[str, Any]) -> None:
    presenter, (phone, laptop) = hall["presenter"], hall["students"]
    step_to(presenter, "PageDown", 1)
    in_step(laptop, presenter)
    laptop.locator("#stage").focus()
    laptop.keyboard.press("ArrowRight")
    laptop.keyboard.press("ArrowRight")
    laptop.wait_for_selector("body[data-follow='away']")
    # The counter is painted on the next animation frame: wait for the second step's.
    shown = int(counter(presenter).split()[1])
    laptop.wait_for_function(
        "k => document.querySelector('#counter').textContent.startsWith(`step ${k} of `)",
        arg=shown + 2, timeout=10_000)
    mine = counter(laptop)
    assert mine != counter(presenter)
    step_to(presenter, "PageDown", 2)
    in_step(phone, presenter)
    assert counter(laptop) == mine, "away, the student keeps their own step"
    laptop.click("#follow-back")
    laptop.wait_for_selector("body[data-follow='following']")
    in_step(laptop, presenter)
    laptop.locator("#source").fill("a = 2.0\nb = a * a\n")      # their own edit
    laptop.wait_for_selector("body[data-follow='away']")
    laptop.click("#follow-back")
    source_is(laptop, LESSON.programs[0].source)
    in_step(laptop, presenter)


def test_a_poll_is_answered_and_counted(hall: dict[str, Any]) -> None:
    presenter, students = hall["presenter"], hall["students"]
    step_to(presenter, "PageDown", 1)
    for student in students:
        in_step(student, presenter)
    presenter.keyboard.press("q")
    for student in students:
        student.wait_for_selector(".follow-poll .poll-choice")
    doc = json.loads(run_source(LESSON.programs[0].source).model_dump_json())
    asked = next_pop(doc, 0, 1, "x")
    assert asked is not None
    question, answer = asked
    labels = [c.label for c in question.candidates]
    assert students[0].locator(".poll-choice").all_text_contents() == labels
    wrong = next(c.label for c in question.candidates if c.node != answer.node)
    students[0].get_by_role("button", name=answer.label, exact=True).click()
    students[1].get_by_role("button", name=wrong, exact=True).click()
    students[1].get_by_role("button", name=answer.label, exact=True).click()   # changes it
    presenter.wait_for_selector("#p-poll[data-answers='2']", timeout=10_000)
    presenter.keyboard.press("ArrowRight")      # frozen while the room answers: it says so
    presenter.wait_for_selector("#p-goal.notice")
    assert counter(presenter).startswith("step 1 ")
    right = presenter.locator(f"#p-poll .p-choice[data-node='{answer.node}'] .p-count")
    assert right.text_content() == "2"
    presenter.keyboard.press("r")
    presenter.wait_for_selector("#p-poll[data-revealed='1']")
    assert presenter.locator(".p-poll-reason").text_content() == answer.reason
    for student in students:
        student.wait_for_selector(".follow-poll .poll-answer")
        assert f"The engine pops {answer.label}." in str(
            student.locator(".poll-answer").text_content())
        assert student.locator(".poll-reason").text_content() == answer.reason
        assert student.locator(".p-count").count() == 0, "no student sees the distribution"
    step_to(presenter, "ArrowRight", 2)         # revealed: the presenter moves on
    for student in students:
        student.wait_for_selector(".follow-poll", state="detached")


def test_a_student_cannot_drive_end_or_poll_the_room(hall: dict[str, Any], watch: Watch) -> None:
    student, code = hall["students"][0], hall["code"]
    statuses = student.evaluate("""async (code) => {
        const body = JSON.stringify({ source: 'a = 1.0\\n', pass: 0, step: 0 });
        const json = { 'Content-Type': 'application/json' };
        const forged = { ...json, Authorization: 'Bearer ' + 'A'.repeat(43) };
        const out = [];
        const status = async (path, init) =>
          (await fetch(`/api/rooms/${code}${path}`, init)).status;
        for (const headers of [json, forged]) {
          out.push(await status('/state', { method: 'PUT', headers, body }));
          out.push(await status('', { method: 'DELETE', headers }));
          out.push(await status('/polls', { method: 'POST', headers, body: '{}' }));
        }
        return out;
    }""", code)
    assert statuses == [403] * 6
    refused = [e for e in watch.errors if "status of 403" in e]
    assert len(refused) == 6, watch.errors      # Chromium logs each refusal: expected here
    watch.errors[:] = [e for e in watch.errors if e not in refused]
    assert student.locator("body[data-follow='following']").count() == 1


def test_ending_the_session_tells_the_students(hall: dict[str, Any]) -> None:
    presenter, students = hall["presenter"], hall["students"]
    presenter.click("#end")
    presenter.wait_for_selector("#live")        # back to "Start live session"
    for student in students:
        student.wait_for_selector("body[data-follow='ended']", timeout=10_000)
        assert "The presenter has ended the live session." in str(
            student.locator(".follow-bar").text_content())
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(f"{hall['url']}/api/rooms/{hall['code']}")
    assert gone.value.code == 404


def test_the_presenters_keys(hall: dict[str, Any]) -> None:
    presenter = hall["presenter"]
    steps = len(run_source(LESSON.programs[0].source).passes[0].steps)
    for key, want in [("PageDown", 1), ("ArrowRight", 2), (" ", 3), ("PageUp", 2),
                      ("ArrowLeft", 1), ("End", steps), ("Home", 0)]:
        step_to(presenter, key, want)
    presenter.keyboard.press("b")
    presenter.wait_for_selector("#p-blank", state="visible")
    presenter.keyboard.press("b")
    presenter.wait_for_selector("#p-blank", state="hidden")
    presenter.keyboard.press("f")
    presenter.wait_for_function("() => document.fullscreenElement !== null")
    presenter.keyboard.press("f")
    presenter.wait_for_function("() => document.fullscreenElement === null")
    presenter.keyboard.press("3")
    shows(presenter, "#p-title", LESSON.programs[2].title)
    presenter.keyboard.press("Shift+N")
    shows(presenter, "#p-title", LESSON.programs[1].title)
    presenter.wait_for_selector("body[data-run='done']")
    presenter.keyboard.press("p")               # play: the steps move on their own
    presenter.wait_for_selector("body[data-playing='1']")
    presenter.wait_for_function("() => /^step [1-9]/.test(document.querySelector('#counter')"
                                ".textContent)", timeout=10_000)
    presenter.keyboard.press("p")               # pause: they stop
    presenter.wait_for_selector("body[data-playing='']")
    presenter.wait_for_timeout(100)
    paused = counter(presenter)
    presenter.wait_for_timeout(BEAT_MS + 200)
    assert counter(presenter) == paused


def test_a_chosen_lesson_or_a_run_program_gives_the_keys_back(hall: dict[str, Any]) -> None:
    """A clicker's PageDown after picking a lesson, or after running an edited program,
    steps (it does not change the lesson or scroll the program)."""
    presenter = hall["presenter"]
    second = load_lessons(shipped_dir())[1]
    presenter.focus("#lesson")
    presenter.select_option("#lesson", second.id)
    shows(presenter, "#p-title", second.programs[0].title)
    presenter.wait_for_selector("body[data-run='done']")
    step_to(presenter, "PageDown", 1)
    assert presenter.locator("#lesson").input_value() == second.id
    presenter.keyboard.press("e")               # the editor, folded away until needed
    presenter.wait_for_selector("#source", state="visible")
    mine = "a = 5.0\nb = a * a * a\n"
    presenter.locator("#source").fill(mine)
    presenter.keyboard.press("Control+Enter")
    presenter.wait_for_selector("#source", state="hidden")
    presenter.wait_for_selector("body[data-run='done']")
    pops = len(run_source(mine).passes[0].steps)
    shows(presenter, "#counter", f"step 0 of {pops}")
    step_to(presenter, "PageDown", 1)


def test_the_speaker_view_stays_in_step_and_drives(browser: Any, watch: Watch,
                                                    server_url: str) -> None:
    presenter = new_page(browser, watch, width=1280, height=720)
    try:
        presenter.goto(f"{server_url}/present")
        presenter.wait_for_selector("body[data-run='done']")
        with presenter.context.expect_page() as opened:
            presenter.keyboard.press("s")
        notes = opened.value
        notes.wait_for_selector("body[data-ready='1']")
        assert notes.locator("#n-title").text_content() == LESSON.programs[0].title
        first_note = LESSON.programs[0].notes.split("\n")[0]
        assert first_note in str(notes.locator("#n-notes").text_content())
        step_to(presenter, "PageDown", 1)
        notes.wait_for_function("(c) => document.querySelector('#n-step').textContent === c",
                                arg=counter(presenter))
        notes.keyboard.press("n")               # keys pressed in the speaker view drive
        presenter.wait_for_function("(t) => document.querySelector('#p-title').textContent === t",
                                    arg=LESSON.programs[1].title)
        notes.wait_for_function("(t) => document.querySelector('#n-title').textContent === t",
                                arg=LESSON.programs[1].title)
    finally:
        presenter.context.close()
    assert not watch.errors, watch.errors


def test_the_lab_page_leads_to_the_presenter(page: Any, server_url: str) -> None:
    neuron = preset("neuron")
    assert neuron is not None
    page.goto(server_url)
    page.wait_for_selector("body[data-run='done']")
    page.select_option("#preset", neuron.id)
    page.wait_for_selector("body[data-run='done']")
    page.click("#go-live")
    page.wait_for_selector("#room-code", timeout=20_000)
    assert page.locator("#p-title").text_content() == "From the lab"
    page.wait_for_selector("body[data-run='done']")
    assert page.locator("#source").input_value() == neuron.source
    code = str(page.locator("#room-code").text_content()).replace(" ", "")
    info = page.evaluate("async (c) => (await fetch(`/api/rooms/${c}`)).json()", code)
    assert info["state"]["source"] == neuron.source


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG's contrast ratio of two sRGB colours (1 to 21)."""
    def luminance(rgb: list[float]) -> float:
        c = [x / 255 for x in rgb]
        lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_projector_theme_at_1280x720(hall: dict[str, Any], tmp_path: Path) -> None:
    presenter = hall["presenter"]
    step_to(presenter, "PageDown", 1)
    step_to(presenter, "PageDown", 2)
    assert presenter.locator("#source").is_hidden(), "the editor is folded away"
    size = presenter.evaluate(r"""() => {
        const g = document.querySelector('#graph-wrap').getBoundingClientRect();
        const s = getComputedStyle(document.querySelector('#sentence'));
        const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
        return { w: g.width, h: g.height, font: parseFloat(s.fontSize),
                 width: document.documentElement.scrollWidth, ink: rgb(s.color),
                 paper: rgb(getComputedStyle(document.body).backgroundColor) };
    }""")
    assert size["width"] <= 1280, "nothing sticks out sideways"
    assert size["w"] >= 1200 and size["h"] >= 400, "the graph fills the screen"
    assert size["font"] >= 24, "the caption reads from the back of the hall"
    assert contrast(size["ink"], size["paper"]) >= 15, "a projector washes out pale text"
    shot = tmp_path / "present-projector.png"
    presenter.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


# The start of a page script that imports the page's follow.js and store.js as the page does.
FOLLOW_AND_STORE = """async (sources) => {
        const app = document.querySelector('script[type="module"]').src;
        const base = app.replace(/js\\/app\\.js$/, '');
        const follow = await import(base + 'js/follow.js');
        const store = await import(base + 'js/store.js');
"""


def test_follow_js_maps_room_frames_to_the_lab_timeline(page: Any, server_url: str) -> None:
    """static/js/follow.js, in the page: a whole /api/trace document folds into the same run
    the stream makes (passes, pops), and (pass, step) ↔ timeline index is a round trip for
    every frame of every preset."""
    from app.presets import PRESETS

    page.goto(server_url)
    page.wait_for_selector("body[data-run='done']")
    got = page.evaluate(FOLLOW_AND_STORE + """
        const out = [];
        for (const source of sources) {
          const doc = await (await fetch('/api/trace', {
            method: 'POST', headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ source }) })).json();
          const run = follow.runOf(store.emptyRun('running', source), doc);
          const t = store.timeline(run);
          const frames = [];
          for (let k = 0; k < t.count; k++) {
            const f = follow.passStep(run, k);
            frames.push([f.pass, f.step, follow.globalStep(run, f.pass, f.step)]);
          }
          out.push({ status: run.status, pops: run.passes.map((p) => p.steps.length), frames,
                     end: t.end });
        }
        return out;
    }""", [p.source for p in PRESETS])
    for p, result in zip(PRESETS, got, strict=True):
        trace = run_source(p.source)
        pops = [len(x.steps) for x in trace.passes]
        assert result["status"] == "done" and result["pops"] == pops, p.id
        frames = result["frames"]
        assert [k for _, _, k in frames] == list(range(len(frames))), p.id
        if not pops:                            # nothing popped: one frame, the start
            assert frames == [[0, 0, 0]], p.id
            continue
        # past a call's pops: one frame per optimizer.step() that consumed its gradients
        steps = [len([o for o in trace.optimizer_steps if o.after_pass == i]) for i in
                 range(len(pops))]
        for pass_, step, _ in frames[:len(frames) - (1 if result["end"] else 0)]:
            assert 0 <= step <= pops[pass_] + steps[pass_], (p.id, pass_, step)
        if result["end"]:
            assert frames[-1][:2] == [len(pops) - 1, pops[-1] + steps[-1] + 1], p.id


def test_follow_js_maps_the_frame_of_a_long_pass_listed_pops(page: Any, server_url: str) -> None:
    """A pass longer than max_full_steps has one frame for its listed pops (Note [Steps kept
    in full]): a room follower's (pass, step) for it is one past the last full step, and
    every frame still makes the round trip."""
    from app.limits import DEFAULT_LIMITS

    full = DEFAULT_LIMITS.max_full_steps
    source = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
              f"for t in range({full // 3 + 10}):\n    h = torch.tanh(a * h + 0.01)\n"
              "h.backward()\n")
    pops = len(run_source(source).passes[0].steps)
    assert pops > full
    page.goto(server_url)
    page.wait_for_selector("body[data-run='done']")
    got = page.evaluate(FOLLOW_AND_STORE + """
        const source = sources[0];
        const doc = await (await fetch('/api/trace', {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ source }) })).json();
        const run = follow.runOf(store.emptyRun('running', source), doc);
        const t = store.timeline(run);
        const tail = t.places.findIndex((place) => place.tail);
        const trips = [];
        for (let k = 0; k < t.count; k++) {
          const f = follow.passStep(run, k);
          if (follow.globalStep(run, f.pass, f.step) !== k) trips.push(k);
        }
        return { count: t.count, tail, at: follow.passStep(run, tail), trips };
    }""", [source])
    assert got["count"] == full + 3                 # start, the full steps, the list, the end
    assert got["tail"] == full + 1 and got["at"] == {"pass": 0, "step": full + 1}
    assert got["trips"] == []
