"""The benchmark's own parts: the PyTorch rewrite, the lab's side, the paired protocol.
(The timings themselves are printed by `make bench`, never asserted.)"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

import pytest

try:
    import torch
except ImportError:
    torch = None  # type: ignore[assignment]

from app.trace import run_source
from bench import builds, courses, engine, paired, programs, sides


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


def test_torch_source_hooks_backward_in_loops_and_blocks_and_leaves_plain_programs_be() -> None:
    program = ("import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor i in range(2):\n"
               "    with torch.no_grad():\n        pass\n    (w * w).backward()\n"
               "    if i:\n        w.sum().backward(retain_graph=True)\n")
    lines = sides.torch_source(program).splitlines()
    assert lines[1] == "w = torch.tensor(1.0, requires_grad=True)"
    assert "    __backward__(w * w)" in lines
    assert "        __backward__(w.sum(), retain_graph=True)" in lines
    assert not any(".backward(" in line for line in lines)


def test_course_programs_take_their_steps_and_warm_up_shorter() -> None:
    for name, (make, steps) in programs.COURSES.items():
        source, warm_up = programs.program(f"course:{name}")
        assert source == make(steps) and warm_up == make(programs.WARM_UP_STEPS)
        assert f"range({steps})" in source and source != warm_up
    assert programs.program("realistic:50")[0] == programs.realistic(50)
    assert programs.program("chain:5")[0] == programs.chain(5)


def test_lab_side_runs_the_program_and_reports_its_pops() -> None:
    source = "x = torch.tensor(2.0, requires_grad=True)\ny = x * x + x\ny.backward()\n"
    lab = sides.side("lab", source)
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
    monkeypatch.setattr(sides, "side", lambda kind, source, warm_up: fake)
    out = io.StringIO()
    with redirect_stdout(out):
        paired.child_main("lab", "realistic:10", io.StringIO("run\nrun\n"))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    peak = replies[-1].pop("peak")
    assert replies == [{"ready": "lab"}, {"seconds": 0.25}, {"seconds": 0.5},
                       {"pops": 2, "order": "abc"}]
    assert isinstance(peak, int) and peak >= 0


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


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="torch is not installed: the course programs' pop "
                    "orders are compared with live PyTorch only where it is")
@pytest.mark.parametrize("name", list(programs.COURSES))
def test_both_sides_pop_a_course_program_in_the_same_order(name: str) -> None:
    """The digests the course benchmark compares, on each program at 3 steps: equal, and
    over every pop of every pass (the lab keeps a summarised pass's names and seqs)."""
    source = programs.COURSES[name][0](programs.WARM_UP_STEPS)
    lab, theirs = sides.side("lab", source, source), sides.side("torch", source, source)
    lab.run()
    theirs.run()
    mine, reference = lab.result(), theirs.result()
    assert mine["error"] is None
    assert mine["pops"] == reference["pops"] > 0
    assert mine["order"] == reference["order"]


def test_course_verdict_needs_the_ratio_the_order_and_no_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builds, "deployed", lambda: builds.PURE)
    ran = {"order": "x", "build": builds.PURE, "error": None}
    fast = paired.Pairs([0.4, 0.5, 0.6], ran, {"order": "x"})
    verdict = courses._verdict("mlp", fast)
    assert verdict.met() and verdict.ratio == engine.Ratio(0.5)
    assert "lab/torch = 0.50" in verdict.summary() and "below 1.0? yes (aim 0.5: yes)" in \
        verdict.summary()
    slow = courses._verdict("mlp", paired.Pairs([1.2, 1.1, 1.3], ran, {"order": "x"}))
    assert not slow.met() and "below 1.0? NO" in slow.summary()
    other = courses._verdict("mlp", paired.Pairs([0.5], ran, {"order": "y"}))
    assert not other.met() and "different orders" in other.summary()
    failed = courses._verdict("mlp", paired.Pairs([0.5], {**ran, "error": "E: m"}, ran))
    assert not failed.met() and "reports E: m" in failed.summary()
    assert not courses._verdict("mlp", "the lab child ended early").met()
    compiled = courses._verdict("mlp", paired.Pairs([0.5], {**ran, "build": "compiled"}, ran))
    assert compiled.ratio is None and not compiled.met()
