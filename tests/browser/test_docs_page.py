"""/docs (issue 10): the API's description renders in Chromium from the lab's own files,
under the same strict CSP, with no console error and no request to another host (the
`page` fixture fails on either)."""

from __future__ import annotations

from typing import Any

import pytest

from app.web.app import CONTENT_SECURITY_POLICY, create_app

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.browser


def test_docs_renders_every_route_with_a_strict_csp(page: Any, server_url: str) -> None:
    schema = create_app().openapi()
    routes = [(method.upper(), path) for path, ops in schema["paths"].items() for method in ops]
    assert ("POST", "/api/trace") in routes
    response = page.goto(server_url + "/docs")
    assert response is not None and response.ok
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(schema["info"]["title"])
    blocks = page.locator(".opblock")
    expect(blocks).to_have_count(len(routes))
    shown = {(str(b.locator(".opblock-summary-method").text_content()),
              str(b.locator(".opblock-summary-path").get_attribute("data-path")))
             for b in blocks.all()}
    assert shown == set(routes)
    page.locator(".opblock-summary", has_text="/api/trace").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()


def test_docs_needs_no_inline_script(page: Any, server_url: str) -> None:
    page.goto(server_url + "/docs")
    expect(page.locator(".swagger-ui .info")).to_be_visible()
    inline = page.evaluate("""() => [...document.querySelectorAll('script')]
        .filter((s) => !s.src && s.textContent.trim()).length""")
    assert inline == 0
