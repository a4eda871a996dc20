"""Faults on loopback (issue 16): a program that runs into the time limit is stopped and
answered with the limit's error, and meanwhile the same server answers other clients
promptly (traces run off the event loop, in LAB_TRACE_WORKERS threads)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

SLOW = ("x = torch.ones(100000)\n"          # no graph: only the clock can stop it
        "for i in range(190000):\n    x = x * 1.0\n")
WORKED = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"
MAX_SECONDS = 2.0


def post(url: str, source: str) -> tuple[float, dict[str, Any]]:
    request = urllib.request.Request(url + "/api/trace", method="POST",
                                     data=json.dumps({"source": source}).encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        doc: dict[str, Any] = json.loads(response.read())
    return time.monotonic() - start, doc


def test_a_program_at_the_time_limit_delays_no_one_else(app_server: Any) -> None:
    url = app_server(max_seconds=str(MAX_SECONDS))
    slow: dict[str, Any] = {}

    def run_slow() -> None:
        slow["s"], slow["doc"] = post(url, SLOW)

    worker = threading.Thread(target=run_slow)
    worker.start()
    time.sleep(0.3)                       # the slow program is running
    others: list[float] = []
    while worker.is_alive() and len(others) < 40:
        seconds, doc = post(url, WORKED)
        assert doc["error"] is None and doc["grads"] == {"w": 28.0, "b": 14.0}
        others.append(seconds)
    worker.join(timeout=60)
    assert slow["doc"]["error"]["kind"] == "limit", slow["doc"]["error"]
    assert MAX_SECONDS <= slow["s"] < MAX_SECONDS + 3
    assert len(others) >= 3, "the others were answered while it ran"
    assert max(others) < 1.0, others
