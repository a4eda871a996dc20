"""The read-only embed and the exports in Chromium, against the real server: the embed
shows the lab's own frame at the asked step and cannot edit; "Copy embed code" gives an
iframe that opens that view; the exported SVG and the zip of frames parse as SVG, with the
graph's nodes, one frame per step, each frame's running node the trace's."""

from __future__ import annotations

import base64
import io
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.etree import ElementTree

import pytest

from app.trace import run_source

from .conftest import Watch, counter, new_page, program_url, wait_done

pytestmark = pytest.mark.browser
SVG = "{http://www.w3.org/2000/svg}"
WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"


def embed_url(base: str, source: str, step: int, **query: str) -> str:
    p = base64.urlsafe_b64encode(source.encode()).decode().rstrip("=")
    extra = "".join(f"&{k}={v}" for k, v in query.items())
    return f"{base}/embed?p={p}&s={step}{extra}"


def lab_frame(page: Any, base: str, source: str, step: int) -> tuple[str, str]:
    page.goto(program_url(base, source, step=step))
    wait_done(page)
    return counter(page), str(page.locator("#sentence").text_content())


def test_embed_shows_the_labs_frame_and_cannot_edit(page: Any, server_url: str) -> None:
    want = lab_frame(page, server_url, WORKED, 3)
    page.goto(embed_url(server_url, WORKED, 3, panels="code,narration,queue,leaves"))
    wait_done(page)
    assert (counter(page), str(page.locator("#sentence").text_content())) == want
    assert page.locator("textarea, [contenteditable], #run, #source").count() == 0
    assert page.locator("input:not([type=range])").count() == 0
    lines = page.locator("#lines li").all_text_contents()
    assert lines == WORKED.splitlines()
    assert page.locator("#queue li").count() > 0 and page.locator("#leaves tbody tr").count() == 2
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("body[data-step='4']")
    assert counter(page) == "step 4 of 5"


def test_embed_without_controls_stays_at_its_step(page: Any, server_url: str) -> None:
    page.goto(embed_url(server_url, WORKED, 2, controls="none", panels="none"))
    wait_done(page)
    assert page.locator(".controls").is_hidden()
    assert page.locator("#sentence").is_hidden()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    page.wait_for_timeout(100)
    assert counter(page) == "step 2 of 5"


def test_copy_embed_code_opens_this_view(page: Any, server_url: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    want = lab_frame(page, server_url, WORKED, 4)
    page.click("#embed-code")
    page.wait_for_selector("#embed-copy:not([hidden]), #status:has-text('Embed code copied')")
    code = (page.locator("#embed-text").input_value() if page.locator("#embed-copy").is_visible()
            else str(page.evaluate("navigator.clipboard.readText()")))
    frame = ElementTree.fromstring(code)
    assert frame.tag == "iframe" and frame.get("title", "").startswith("Autograd Lab: ")
    src = str(frame.get("src"))
    assert urlsplit(src).path == "/embed" and parse_qs(urlsplit(src).query)["s"] == ["4"]
    page.goto(src)
    wait_done(page)
    assert (counter(page), str(page.locator("#sentence").text_content())) == want


@pytest.mark.parametrize(("width", "height", "scheme"), [
    (1280, 720, "light"), (1280, 720, "dark"), (390, 844, "light")])
def test_embed_has_no_axe_violation(browser: Any, watch: Watch, server_url: str, width: int,
                                    height: int, scheme: str) -> None:
    from .test_accessibility import violations

    page = new_page(browser, watch, width=width, height=height, scheme=scheme)
    try:
        page.goto(embed_url(server_url, WORKED, 3, panels="code,narration,queue,leaves",
                            controls="step,play,scrub,speed"))
        wait_done(page)
        page.wait_for_timeout(150)
        report = violations(page)
        assert not report, report
    finally:
        page.context.close()
    assert not watch.errors and not watch.foreign


# -- the network views in the embed ------------------------------------------------------------

def lab_counts(page: Any, base: str, source: str, step: int) -> dict[str, int]:
    """What the lab draws of the network views at this step (the embed must draw the same)."""
    from .test_network_page import open_at

    open_at(page, base, source, step)
    return network_counts(page)


def network_counts(page: Any) -> dict[str, int]:
    return {"bands": page.locator("svg#graph g.band").count(),
            "heatmaps": page.locator("svg#graph .mini-heat").count(),
            "gradients": page.locator(".tensors-panel:visible figure.tensor").count(),
            "optimizer": page.locator(".optimizer-panel:visible section.optimizer-param").count()}


@pytest.mark.parametrize(("preset_id", "step"), [("sequential", 1), ("two-layer-mlp", 4),
                                                 ("sgd-momentum", 6)])
def test_embed_panels_choose_the_network_views(page: Any, server_url: str, preset_id: str,
                                               step: int) -> None:
    """panels=modules,gradients,optimizer: the lab's module bands, heatmaps, gradients panel
    and optimizer step, as the lab draws them at that step; without them, none loads."""
    from .test_network_page import source_of

    source = source_of(preset_id)
    want = lab_counts(page, server_url, source, step)
    assert any(want.values()), want
    page.goto(embed_url(server_url, source, step, panels="code,modules,gradients,optimizer"))
    wait_done(page)
    page.wait_for_selector("body[data-network='ready']", timeout=20_000)
    page.wait_for_timeout(120)
    assert network_counts(page) == want
    assert page.locator("textarea, [contenteditable], input:not([type=range])").count() == 0
    # Only the heatmaps and bands: no side panel is added.
    page.goto(embed_url(server_url, source, step, panels="modules"))
    wait_done(page)
    page.wait_for_selector("body[data-network='ready']", timeout=20_000)
    page.wait_for_timeout(120)
    assert network_counts(page) == {**want, "gradients": 0, "optimizer": 0}
    assert page.locator(".tensors-panel, .optimizer-panel, aside").count() == 0
    # The default panels: the network module never loads, the graph is the plain one.
    page.goto(embed_url(server_url, source, step))
    wait_done(page)
    page.wait_for_timeout(150)
    assert page.locator("body[data-network]").count() == 0
    assert network_counts(page) == {"bands": 0, "heatmaps": 0, "gradients": 0, "optimizer": 0}


# -- exports -------------------------------------------------------------------------------

def downloaded(page: Any, button: str) -> bytes:
    with page.expect_download() as info:
        page.click(button)
    return Path(info.value.path()).read_bytes()


def svg_nodes(text: bytes) -> dict[int, ElementTree.Element]:
    root = ElementTree.fromstring(text)
    assert root.tag == f"{SVG}svg" and float(root.get("width", "0")) > 0
    return {int(g.get("data-id", "-1")): g for g in root.iter(f"{SVG}g")
            if "node" in (g.get("class") or "").split()}


def test_exported_svg_has_the_graphs_nodes(page: Any, server_url: str) -> None:
    graph = run_source(WORKED).passes[0].graph
    assert graph is not None
    lab_frame(page, server_url, WORKED, 3)
    nodes = svg_nodes(downloaded(page, "#export-svg"))
    assert set(nodes) == {n["id"] for n in graph.nodes}
    for n in graph.nodes:
        texts = "".join(nodes[n["id"]].itertext())
        assert n["name"] in texts
        box = nodes[n["id"]].find(f"{SVG}rect")
        assert box is not None and box.get("fill") and box.get("stroke"), "styles inlined"
    running = nodes[run_source(WORKED).passes[0].steps[2]["node"]]
    assert "running" in (running.get("class") or "").split(), "step 3's node runs"
    assert_opens_in_the_browser(page, server_url, downloaded(page, "#export-svg"))


def assert_opens_in_the_browser(page: Any, base: str, data: bytes) -> None:
    """The file opened as a standalone image/svg+xml document: Chromium's XML parser takes
    it (a broken file shows a parsererror), it draws with a size and asks for nothing."""
    url = f"{base}/exported-view.svg"
    requests: list[str] = []
    page.route(url, lambda route: route.fulfill(body=data, content_type="image/svg+xml"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    root = page.evaluate("[document.documentElement.namespaceURI, document.documentElement."
                         "localName, document.getElementsByTagName('parsererror').length]")
    assert root == ["http://www.w3.org/2000/svg", "svg", 0]
    box = page.evaluate("(() => { const b = document.documentElement.getBBox(); "
                        "return [b.width, b.height]; })()")
    assert box[0] > 0 and box[1] > 0
    assert requests == [url], requests
    page.unroute(url)


def test_frames_zip_has_one_svg_per_step(page: Any, server_url: str) -> None:
    steps = run_source(WORKED).passes[0].steps
    lab_frame(page, server_url, WORKED, 0)
    archive = zipfile.ZipFile(io.BytesIO(downloaded(page, "#export-frames")))
    assert archive.testzip() is None, "every CRC-32 matches"
    names = archive.namelist()
    assert names == [f"frame-{k:03d}.svg" for k in range(len(steps) + 1)]
    for k, name in enumerate(names):
        nodes = svg_nodes(archive.read(name))
        running = [i for i, g in nodes.items() if "running" in (g.get("class") or "").split()]
        assert running == ([] if k == 0 else [steps[k - 1]["node"]]), name
