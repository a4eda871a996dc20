"""The benchmark's own parts: the PyTorch rewrite, the lab's side, the paired protocol.
(The timings themselves are printed by `make bench`, never asserted.)"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

import pytest

from app.trace import run_source
from bench import paired, sides


def test_torch_source_makes_the_opening_numbers_leaves_and_hooks_backward() -> None:
    program = "a = 2.0\nb = -1\ny = a * b\nc = 3.0\ny.backward(retain_graph=True)\n"
    text = sides.torch_source(program)
    assert text.splitlines() == [
        "a = torch.tensor(2.0, requires_grad=True)",
        "b = torch.tensor(-1.0, requires_grad=True)",
        "y = a * b",
        "c = 3.0",                                   # after an operation: a plain number
        "__backward__(y, retain_graph=True)",
    ]


def test_lab_side_runs_the_program_and_reports_its_pops() -> None:
    source = "x = torch.tensor(2.0, requires_grad=True)\ny = x * x + x\ny.backward()\n"
    lab = sides.LabSide(source)
    assert lab.run() > 0
    result = lab.result()
    steps = [(s["name"], s["seq"]) for p in run_source(source).passes for s in p.steps]
    assert result["pops"] == len(steps) == 3
    assert result["order"] == sides.digest(steps)
    assert result["error"] is None


class _FakeSide:
    def __init__(self) -> None:
        self.runs = 0

    def run(self) -> float:
        self.runs += 1
        return 0.25 * self.runs

    def result(self) -> dict[str, Any]:
        return {"pops": self.runs, "order": "abc"}


def test_paired_child_answers_each_run_then_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeSide()
    monkeypatch.setattr(sides, "side", lambda kind, source: fake)
    out = io.StringIO()
    with redirect_stdout(out):
        paired.child_main("lab", 10, io.StringIO("run\nrun\n"))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies == [{"ready": "lab"}, {"seconds": 0.25}, {"seconds": 0.5},
                       {"pops": 2, "order": "abc"}]


def test_pairs_median_quartiles_and_order() -> None:
    pairs = paired.Pairs([0.5, 0.9, 0.7, 0.6, 0.8], {"order": "x"}, {"order": "x"})
    assert pairs.median == 0.7
    q1, q3 = pairs.quartiles()
    assert q1 < pairs.median < q3
    assert pairs.same_order()
    assert not paired.Pairs([1.0], {"order": "x"}, {"order": "y"}).same_order()
