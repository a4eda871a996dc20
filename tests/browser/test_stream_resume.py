"""A trace stream that breaks mid-run resumes: the page asks again with Last-Event-ID and
the server runs the program again from the same seed (app/web/api.py `trace_stream`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import counter, program_url, wait_done

pytestmark = pytest.mark.browser

# Draws without manual_seed, so a run that did not replay the broken one's seed would
# print other values after the break.
DRAWS = ("import torch\nw = torch.randn(3, requires_grad=True)\n"
         "for i in range(3):\n    loss = (w * w).sum() * (i + 1)\n    loss.backward()\n"
         "print(w.grad)\n")
KEPT = 5        # events the broken stream delivers


def _events(body: str) -> list[str]:
    return [block for block in body.replace("\r\n", "\n").split("\n\n") if "event:" in block]


def test_a_stream_broken_mid_run_resumes_where_it_broke(page: Any, server_url: str) -> None:
    seen: list[dict[str, Any]] = []

    def handle(route: Any) -> None:
        headers = route.request.headers
        if not seen:                                 # the first stream breaks after KEPT
            response = route.fetch()
            whole = _events(response.text())
            seen.append({"whole": whole, "resumed_after": None})
            route.fulfill(status=200, headers={"content-type": "text/event-stream"},
                          body="\n\n".join(whole[:KEPT]) + "\n\n")
        else:
            seen.append({"resumed_after": headers.get("last-event-id")})
            route.continue_()

    page.goto(program_url(server_url, DRAWS))
    wait_done(page)
    unbroken = counter(page).split(" of ")[1]
    page.route("**/api/trace/stream", handle)
    page.click("#run")
    wait_done(page)
    whole = seen[0]["whole"]
    last_kept = next(line for line in whole[KEPT - 1].split("\n") if line.startswith("id:"))
    assert [s["resumed_after"] for s in seen[1:]] == [last_kept.removeprefix("id: ")]
    done = json.loads(next(line for line in whole[-1].split("\n")
                           if line.startswith("data:")).removeprefix("data: "))
    assert page.locator("#console").inner_text().strip().endswith(done["printed"][-1])
    assert counter(page).split(" of ")[1] == unbroken
    assert page.locator("body").get_attribute("data-run") == "done"
