"""`make docs`: the README's screenshots of the worked example at step 3, in Chromium against
the real server, at 1440×900, 1280×720 and 390×844 (the phone's whole page) and in dark.
Run by `make docs` only: no test writes into docs/, so `make test` leaves the tree clean.

    python -m tests.browser.screenshots [DIRECTORY]
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from app.presets import preset

from .conftest import CHROMIUM, CHROMIUM_ARGS, Watch, live_server, new_page, program_url, wait_done

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = [("worked-example-step3-light.png", 1440, 900, "light"),
         ("worked-example-step3-dark.png", 1440, 900, "dark"),
         ("worked-example-step3-laptop.png", 1280, 720, "light"),
         ("worked-example-step3-phone.png", 390, 844, "light")]


def main(directory: Path = DOCS) -> None:
    worked = preset("worked-example")
    assert worked is not None
    directory.mkdir(parents=True, exist_ok=True)
    watch = Watch()
    with live_server() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, width, height, scheme in SHOTS:
            page = new_page(browser, watch, width=width, height=height, scheme=scheme)
            page.goto(program_url(base, worked.source, step=3))
            wait_done(page)
            page.wait_for_timeout(300)
            page.screenshot(path=str(directory / name), full_page=width < 600)
            page.context.close()
            print(directory / name)
        browser.close()
    if watch.errors or watch.foreign:
        raise SystemExit(f"the page misbehaved: {watch.errors} {watch.foreign}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS)
