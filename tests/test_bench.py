"""The benchmark's own parts: the PyTorch rewrite, the lab's side, the paired protocol.
(The timings themselves are printed by `make bench`, never asserted.)"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

import pytest

from app.trace import run_source
from bench import builds, engine, paired, sides


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


def _verdict_with(monkeypatch: pytest.MonkeyPatch, best: dict[str, dict[int, engine.Ratio]],
                  pairs: paired.Pairs | Exception) -> tuple[engine.Ratio | None, str]:
    def measure(n: int, build: str | None = None) -> paired.Pairs:
        if isinstance(pairs, Exception):
            raise pairs
        return pairs

    monkeypatch.setattr(builds, "deployed", lambda: builds.PURE)
    monkeypatch.setattr(paired, "measure", measure)
    out = io.StringIO()
    with redirect_stdout(out):
        verdict = engine._measure_verdict(best)
    return verdict, out.getvalue()


def test_verdict_is_the_median_of_the_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    best = {builds.PURE: {10_000: engine.Ratio(1.2)}}
    same = {"order": "x"}
    verdict, text = _verdict_with(monkeypatch, best, paired.Pairs([0.6, 0.7, 0.9], same, same))
    assert verdict == engine.Ratio(0.7) and verdict.passes()
    assert "median 0.70" in text and "best of all: 1.20 pure" in text
    assert text.rstrip().endswith(": PASS")
    slow = paired.Pairs([1.1, 1.3, 0.9], same, same)
    verdict, text = _verdict_with(monkeypatch, best, slow)
    assert verdict == engine.Ratio(1.1) and text.rstrip().endswith(": FAIL")
    differ = paired.Pairs([0.5, 0.5, 0.5], same, {"order": "y"})
    _, text = _verdict_with(monkeypatch, best, differ)
    assert "FAIL: the two sides popped different orders" in text


def test_verdict_fails_or_is_missing_when_the_lab_did_not_finish(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = paired.Pairs([0.5, 0.5, 0.5], {"order": "x"}, {"order": "x"})
    over = engine.Ratio(3.0, at_least=True)
    verdict, text = _verdict_with(monkeypatch, {builds.PURE: {10_000: over}}, pairs)
    assert verdict == over and not verdict.passes() and text.rstrip().endswith("FAIL")
    verdict, text = _verdict_with(monkeypatch, {builds.PURE: {}}, pairs)
    assert verdict is None and "no verdict" in text
    verdict, text = _verdict_with(monkeypatch, {builds.PURE: {10_000: engine.Ratio(0.8)}},
                                  RuntimeError("the lab child ended early (exit 1)"))
    assert verdict is None and "no verdict: the pairs of runs failed" in text
