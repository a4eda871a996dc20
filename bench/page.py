"""Page benchmark: first-load transfer size, Run → the first frame (step 0: the graph and
its dependency counts), and frames per second on a ~300-node graph while it plays and while
it is stepped by key (the view following the running node, with the page's paint time
per step and the local-derivative requests the steps made); the same for a network (a
36-node nn.Sequential with a weight penalty: bands, heatmaps, the views loaded on demand).
It drives Debian's Chromium (never a downloaded browser) against the real server on a free
loopback port, and prints; it asserts nothing.

The page marks `run-pressed` when Run is pressed and `first-frame` when it first paints the
graph, and measures `run-to-first-frame` between them (static/js/app.js).
"""

from __future__ import annotations

import base64
import itertools
import os
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from app.presets import PRESETS
from app.web.app import create_app

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
FIRST_LOAD_BUDGET = 150_000
RUNS = 5
FPS_SECONDS = 4.0


def big_program(target_nodes: int = 300) -> str:
    """Leaves, then statements of one or two ops each on recent values (some fan-out), then
    a loss: about `target_nodes` backward nodes."""
    lines = ["a = 0.5", "b = -0.25", "c = 0.75", "d = 0.1"]
    names = ["a", "b", "c", "d"]
    forms = ["{x} * {y}", "torch.tanh({x}) + {y}", "{x} - {y} * 0.5", "torch.sigmoid({x} * {y})"]
    k = 0
    while 1.7 * k < target_nodes - 8:
        x, y = names[-1], names[-3 if k % 3 else -5 if len(names) > 5 else -2]
        lines.append(f"h{k} = " + forms[k % len(forms)].format(x=x, y=y))
        names.append(f"h{k}")
        k += 1
    lines.append(f"loss = {names[-1]} + {names[-2]}")
    return "\n".join(lines) + "\n"


# A network's page: tensors on every edge, a band per module (tests/test_layout.py's
# "sequential-penalty" graph).
NETWORK = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                      nn.Linear(32, 4))
x = torch.randn(8, 16)
y = torch.randint(0, 4, (8,))
out = model(x)
loss = nn.CrossEntropyLoss()(out, y) + 1e-3 * sum([(p ** 2).sum() for p in model.parameters()])
loss.backward()
"""


def link(base: str, source: str) -> str:
    return f"{base}/#p={base64.urlsafe_b64encode(source.encode()).decode().rstrip('=')}"


@contextmanager
def serve() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def first_load(browser: Any, base: str) -> tuple[int, int]:
    """Bytes transferred by a cold load: the static files alone, and with the API calls."""
    page = browser.new_page()
    page.goto(base + "/")
    page.wait_for_selector("body[data-run='done']")
    entries = page.evaluate("""() => [
        ...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')
    ].map((e) => [e.name, e.transferSize])""")
    page.close()
    total = sum(size for _, size in entries)
    static = sum(size for name, size in entries if "/api/" not in name)
    return static, total


def run_to_first_frame(browser: Any, base: str, source: str) -> float:
    page = browser.new_page()
    page.goto(link(base, source))
    page.wait_for_selector("body[data-run='done']")
    page.click("#run")
    page.wait_for_function("() => performance.getEntriesByName('run-to-first-frame').length > 0")
    ms = float(page.evaluate("() => performance.getEntriesByName('run-to-first-frame')[0]"
                             ".duration"))
    page.close()
    return ms


STEP_EVERY_MS = 100


def fps_while_stepping(browser: Any, base: str,
                       source: str) -> tuple[float, float, float, int, int]:
    """Frames per second over FPS_SECONDS of pressing → every STEP_EVERY_MS ms (the view
    pans to each running node that is out of sight) with every panel loaded (the local
    derivative, the timeline, the call path), the longest frame in ms, the median of the
    page's paint() per step in ms (its `paint` measures), the steps, and the
    /api/derivative requests they made."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/api/derivative")
            else None)
    page.goto(link(base, source))
    page.wait_for_selector("body[data-run='done']")
    page.wait_for_selector("svg#graph .node")
    page.wait_for_selector("body[data-derivative='ready'][data-lenses='ready']")
    page.locator("#stage").focus()
    page.wait_for_timeout(300)
    asked.clear()
    frames, paints, steps = page.evaluate("""([seconds, every]) => new Promise((resolve) => {
        const times = [];
        const start = performance.now();
        const press = { key: 'ArrowRight', bubbles: true };
        let steps = 0;
        const key = () => {
            document.dispatchEvent(new KeyboardEvent('keydown', press));
            steps += 1;
        };
        performance.clearMeasures('paint');
        const timer = setInterval(key, every);
        function tick(now) {
            times.push(now);
            if (now - start < seconds * 1000) requestAnimationFrame(tick);
            else {
                clearInterval(timer);
                resolve([times, performance.getEntriesByName('paint').map((e) => e.duration),
                         steps]);
            }
        }
        requestAnimationFrame(tick);
    })""", [FPS_SECONDS, STEP_EVERY_MS])
    page.wait_for_timeout(500)                   # the request for where the steps stopped
    page.close()
    gaps = [b - a for a, b in itertools.pairwise(frames)]
    return ((len(frames) - 1) / ((frames[-1] - frames[0]) / 1000), max(gaps),
            statistics.median(paints) if paints else 0.0, steps, len(asked))


def fps_while_animating(browser: Any, base: str, source: str,
                        play: bool = True) -> tuple[float, int, float]:
    """Frames per second over FPS_SECONDS of playing at 4× (or of the same page standing
    still, as the reference), the graph's node count, and the longest frame in ms."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(link(base, source))
    page.wait_for_selector("body[data-run='done']")
    page.wait_for_selector("svg#graph .node")       # drawn on the next animation frame
    nodes = page.locator("svg#graph .node").count()
    page.select_option("#speed", "4")
    if play:
        page.click("#play")
    frames = page.evaluate("""(seconds) => new Promise((resolve) => {
        const times = [];
        const start = performance.now();
        function tick(now) {
            times.push(now);
            if (now - start < seconds * 1000) requestAnimationFrame(tick); else resolve(times);
        }
        requestAnimationFrame(tick);
    })""", FPS_SECONDS)
    page.close()
    gaps = [b - a for a, b in itertools.pairwise(frames)]
    return (len(frames) - 1) / ((frames[-1] - frames[0]) / 1000), nodes, max(gaps)


def main() -> None:
    print("Page (Chromium, real server on loopback)")
    if not os.path.exists(CHROMIUM):
        print(f"  skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return
    from playwright.sync_api import sync_playwright

    worked = PRESETS[0].source
    big = big_program()
    with serve() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        static, total = first_load(browser, base)
        flag = "under" if static < FIRST_LOAD_BUDGET else "OVER"
        print(f"  first load: {static / 1000:.1f} kB static (HTML, CSS, JS, icon), "
              f"{total / 1000:.1f} kB with the API calls; {flag} the "
              f"{FIRST_LOAD_BUDGET // 1000} kB budget")
        for name, source in (("worked example", worked), ("~300-node program", big),
                             ("36-node network", NETWORK)):
            times = [run_to_first_frame(browser, base, source) for _ in range(RUNS)]
            print(f"  Run → first frame (step 0), {name}: median "
                  f"{statistics.median(times):.0f} ms (min {min(times):.0f}, "
                  f"max {max(times):.0f}, {RUNS} runs)")
        idle, _, _ = fps_while_animating(browser, base, big, play=False)
        fps, nodes, worst = fps_while_animating(browser, base, big)
        print(f"  animating {nodes} nodes at 4×: {fps:.0f} frames/s over {FPS_SECONDS:.0f} s, "
              f"longest frame {worst:.0f} ms; the same page standing still: {idle:.0f} "
              f"frames/s (this browser's ceiling here)")
        stepping, worst, paint, steps, asked = fps_while_stepping(browser, base, big)
        print(f"  stepping {nodes} nodes by key every {STEP_EVERY_MS} ms, the view following, "
              f"every panel on: {stepping:.0f} frames/s, longest frame {worst:.0f} ms; the "
              f"page's paint per step: median {paint:.1f} ms; {asked} /api/derivative "
              f"requests for {steps} steps")
        fps, nodes, worst = fps_while_animating(browser, base, NETWORK)
        stepping, worst_step, _, _, _ = fps_while_stepping(browser, base, NETWORK)
        print(f"  a {nodes}-node network at 4×: {fps:.0f} frames/s, longest frame {worst:.0f} ms; "
              f"stepped by key: {stepping:.0f} frames/s, longest frame {worst_step:.0f} ms")
        browser.close()


if __name__ == "__main__":
    main()
