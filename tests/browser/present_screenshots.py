"""`make docs`: the presenter view's screenshots in the projector theme at 1280×720, in
Chromium against the real server: the worked example at step 2, and "Ask the room" with
two students' answers revealed. Run by `make docs` only (no test writes into docs/).

    python -m tests.browser.present_screenshots [DIRECTORY]
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from .conftest import CHROMIUM, CHROMIUM_ARGS, Watch, live_server, new_page

DOCS = Path(__file__).resolve().parents[2] / "docs"


def main(directory: Path = DOCS) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    watch = Watch()
    with live_server() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        presenter = new_page(browser, watch, width=1280, height=720)
        presenter.goto(f"{base}/present?live=1")
        presenter.wait_for_selector("#room-code", timeout=20_000)
        presenter.screenshot(path=str(directory / "present-join.png"))
        code = str(presenter.locator("#room-code").text_content()).replace(" ", "")
        presenter.keyboard.press("j")
        students = []
        for _ in range(2):
            student = new_page(browser, watch, width=390, height=844)
            student.goto(f"{base}/join/{code}")
            student.wait_for_selector("body[data-follow='following'][data-run='done']")
            students.append(student)
        for _ in range(2):
            presenter.keyboard.press("PageDown")
        presenter.wait_for_function(
            "() => document.querySelector('#counter').textContent.startsWith('step 2 of ')")
        presenter.wait_for_timeout(600)
        presenter.screenshot(path=str(directory / "present-projector.png"))
        presenter.keyboard.press("q")
        for i, student in enumerate(students):
            student.wait_for_selector(".poll-choice")
            student.locator(".poll-choice").nth(i).click()
        presenter.wait_for_selector("#p-poll[data-answers='2']")
        presenter.keyboard.press("r")
        presenter.wait_for_selector("#p-poll[data-revealed='1']")
        students[0].wait_for_selector(".poll-answer")
        presenter.wait_for_timeout(400)
        presenter.screenshot(path=str(directory / "present-poll.png"))
        students[0].screenshot(path=str(directory / "present-student-phone.png"))
        for name in ("present-join.png", "present-projector.png", "present-poll.png",
                     "present-student-phone.png"):
            print(directory / name)
        browser.close()
    if watch.errors or watch.foreign:
        raise SystemExit(f"the page misbehaved: {watch.errors} {watch.foreign}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS)
