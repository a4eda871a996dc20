"""The real server (uvicorn on a free localhost port, in a thread) and Debian's Chromium
driven by Playwright. Every page fails its test on a console error or on any request to a
host other than the server's."""

from __future__ import annotations

import base64
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn

from app.web.app import create_app
from app.web.settings import Settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}

pytestmark = pytest.mark.browser


@contextmanager
def live_server(settings: Settings | None = None) -> Iterator[str]:
    """The app served by uvicorn on a free loopback port, in a thread: its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    with live_server() as base:
        yield base


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: the browser tests drive Debian's Chromium "
                    "(apt-get install chromium); they never download a browser")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Watch:
    """What a page did that it must not: console errors, page errors, foreign requests."""

    errors: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


@pytest.fixture
def watch() -> Watch:
    return Watch()


def new_page(browser: Any, watch: Watch, width: int = 1440, height: int = 900,
             scheme: str = "light", touch: bool = False) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height},
                                  color_scheme=scheme, reduced_motion="reduce",
                                  has_touch=touch, is_mobile=touch)

    def guard(route: Any) -> None:
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            watch.foreign.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    def console(message: Any) -> None:
        if message.type in ("error", "warning"):
            watch.errors.append(f"console {message.type}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda e: watch.errors.append(f"page error: {e}"))
    return page


@pytest.fixture
def page(browser: Any, watch: Watch) -> Iterator[Any]:
    p = new_page(browser, watch)
    yield p
    p.context.close()
    assert not watch.errors, watch.errors
    assert not watch.foreign, f"requests to another host: {watch.foreign}"


def program_url(base: str, source: str, step: int | None = None) -> str:
    encoded = base64.urlsafe_b64encode(source.encode()).decode().rstrip("=")
    return f"{base}/#p={encoded}" + ("" if step is None else f"&s={step}")


def wait_done(page: Any) -> None:
    """The run is done and painted: <body data-run> changes at once, the views on the next
    animation frame, which a loaded machine can delay past any fixed wait; two frames later
    that paint has run."""
    page.wait_for_selector("body[data-run='done']", timeout=20_000)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_timeout(50)


def counter(page: Any) -> str:
    return str(page.locator("#counter").text_content())
