"""Which passes a trace keeps step by step (app/trace/kept.py, Note [Passes kept in full]):
a window from `passes_from` on, closed by max_full_passes or by max_full_values, its
first pass always kept; every view of the document (steps, graph, optimizer steps, the
profiler's timeline, the call path) follows the same window."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.limits import DEFAULT_LIMITS
from app.trace import run_source

# Each pass shows x (4 values) as received, sent and written into .grad: about 20 values.
LOOP = ("import torch\nx = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)\n"
        "opt = torch.optim.SGD([x], lr=0.1)\n"
        "for i in range(6):\n    opt.zero_grad()\n    (x * x).sum().backward()\n"
        "    opt.step()\n")


def kept(trace: object) -> list[bool]:
    return [not p.summarized for p in trace.passes]  # type: ignore[attr-defined]


def test_by_default_every_pass_of_a_small_loop_is_kept() -> None:
    trace = run_source(LOOP)
    assert kept(trace) == [True] * 6
    assert all(p.graph is not None and "sent" in p.steps[0] for p in trace.passes)
    assert [o.summarized for o in trace.optimizer_steps] == [False] * 6


def kept_with_budget(budget: int) -> list[bool]:
    return kept(run_source(LOOP, DEFAULT_LIMITS.with_values(max_full_values=budget)))


def test_the_values_budget_closes_the_window() -> None:
    """The budget is checked as each pass starts: a pass starts kept while the values
    shown before it are under the budget (so the pass that crosses it is still kept),
    and the passes after it are summarised, with the optimizer steps after them."""
    low, high = 1, 10_000                # the smallest budget that keeps a second pass
    assert kept_with_budget(high)[1] and not kept_with_budget(low)[1]
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if kept_with_budget(middle)[1] else (middle, high)
    first_pass = high - 1                # the values the first pass (and its update) showed
    assert first_pass > 20               # x, its gradients, .grad and the update
    assert kept_with_budget(high) == [True, True, False, False, False, False]
    assert kept_with_budget(low) == [True] + [False] * 5
    trace = run_source(LOOP, DEFAULT_LIMITS.with_values(max_full_values=high))
    assert [o.summarized for o in trace.optimizer_steps] == [False] * 2 + [True] * 4
    assert all(p.graph is None and set(p.steps[0]) == {"name", "seq", "leaf"}
               for p in trace.passes[2:])
    assert trace.grads == run_source(LOOP).grads       # the run is the same, only shown less


def test_the_first_pass_of_the_window_is_kept_however_big() -> None:
    trace = run_source(LOOP, DEFAULT_LIMITS.with_values(max_full_values=1))
    assert kept(trace) == [True] + [False] * 5


def test_passes_from_moves_the_window() -> None:
    limits = DEFAULT_LIMITS.with_values(max_full_passes=2)
    trace = run_source(LOOP, limits, passes_from=3)
    assert kept(trace) == [False, False, False, True, True, False]
    assert [o.summarized for o in trace.optimizer_steps] == [True] * 3 + [False] * 2 + [True]
    # the same pass, kept in either window, is the same document
    alone = run_source(LOOP, DEFAULT_LIMITS.with_values(max_full_passes=4))
    assert trace.passes[3].model_dump() == {**alone.passes[3].model_dump()}
    # the profiler's timeline and the call path follow the window
    assert sorted({e["pass"] for e in trace.profile}) == [3, 4]
    assert {phase["pass"] for phase in trace.callpath} == {3, 4}


def test_a_window_past_the_last_pass_keeps_none() -> None:
    assert kept(run_source(LOOP, passes_from=50)) == [False] * 6


def test_the_api_and_the_stream_take_passes_from(app_client: Any) -> None:
    client = app_client()
    body = {"source": LOOP, "passes_from": 4}
    document = client.post("/api/trace", json=body).json()
    assert [not p["summarized"] for p in document["passes"]] == [False] * 4 + [True] * 2
    events = [line for line in client.post("/api/trace/stream", json=body).text.splitlines()
              if line.startswith("event: pass")]
    assert len(events) == 6
    for bad in (-1, True, "2", 1.5):
        assert client.post("/api/trace", json={"source": LOOP, "passes_from": bad}
                           ).status_code == 422, bad


def test_the_command_line_takes_passes_from(tmp_path: Path) -> None:
    path = tmp_path / "loop.py"
    path.write_text(LOOP, encoding="utf-8")
    cli = Path(sys.executable).parent / "autograd-lab"
    if not cli.exists():
        pytest.skip(f"no autograd-lab command next to {sys.executable}")
    out = subprocess.run([str(cli), "trace", "--passes-from", "5", str(path)],
                         capture_output=True, text=True, check=True).stdout
    document = json.loads(out)
    assert [p["summarized"] for p in document["passes"]] == [True] * 5 + [False]
