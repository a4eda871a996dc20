""""Which node pops next?" at every frame of every preset: the candidates, the answer and
its reason all come from the trace the engine recorded, never typed in here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.presets import PRESETS
from app.rooms.polls import MAX_READY, MAX_WAITING, UINT64_MAX, label, next_pop
from app.trace import run_source


def document(source: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run_source(source).model_dump_json())
    return doc


def frames(doc: dict[str, Any]) -> list[tuple[int, int]]:
    return [(p, s) for p, pass_ in enumerate(doc["passes"]) for s in range(len(pass_["steps"]))]


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_every_frame_with_a_next_pop_has_a_question(preset: Any) -> None:
    doc = document(preset.source)
    for p, s in frames(doc):
        asked = next_pop(doc, p, s, "id")
        assert asked is not None, (p, s)
        question, answer = asked
        steps = doc["passes"][p]["steps"]
        nodes = {n["id"]: n for n in doc["passes"][p]["graph"]["nodes"]}
        queue = [doc["passes"][p]["graph"]["root"]] if s == 0 else steps[s - 1]["queue"]
        assert answer.node == steps[s]["node"] == queue[0], "the engine's pop is the answer"
        assert answer.label == label(nodes[answer.node])
        ids = [c.node for c in question.candidates]
        assert ids == sorted(ids), "candidates in graph order: their order gives nothing away"
        ready = [c.node for c in question.candidates if c.ready]
        assert set(ready) == set(queue[:MAX_READY])
        waiting = [c.node for c in question.candidates if not c.ready]
        popped = {st["node"] for st in steps[:s]}
        assert len(waiting) <= MAX_WAITING
        assert not set(waiting) & (popped | set(queue)), "distractors still wait"
        assert answer.reason.endswith(".") and answer.label in answer.reason


def test_no_question_past_the_last_pop_or_outside_the_trace() -> None:
    doc = document(PRESETS[0].source)
    pops = len(doc["passes"][0]["steps"])
    assert next_pop(doc, 0, pops, "id") is None
    assert next_pop(doc, 1, 0, "id") is None
    assert next_pop(document("y = foo(\n"), 0, 0, "id") is None


def test_the_reason_gives_the_sequence_numbers() -> None:
    """mixed.py's second pop: two nodes ready at once, the larger number first."""
    source = next(p.source for p in PRESETS if p.id == "mixed")
    doc = document(source)
    question, answer = next_pop(doc, 0, 1, "id") or pytest.fail("no question")
    ready = [c for c in question.candidates if c.ready]
    assert len(ready) == 2
    nodes = {n["id"]: n for n in doc["passes"][0]["graph"]["nodes"]}
    other = next(c for c in ready if c.node != answer.node)
    assert nodes[answer.node]["seq"] > nodes[other.node]["seq"]
    assert f"#{nodes[answer.node]['seq']}, above #{nodes[other.node]['seq']}" in answer.reason
    assert "latest operation runs first" in answer.reason


def test_ties_between_accumulate_grads_are_said_so() -> None:
    source = next(p.source for p in PRESETS if p.id == "vector-broadcast")
    doc = document(source)
    tied = [(p, s) for p, s in frames(doc)
            if len([c for c in next_pop(doc, p, s, "x")[0].candidates  # type: ignore[index]
                    if c.ready]) == 2]
    assert tied
    for p, s in tied:
        _, answer = next_pop(doc, p, s, "x") or pytest.fail("no question")
        nodes = {n["id"]: n for n in doc["passes"][p]["graph"]["nodes"]}
        if nodes[answer.node]["seq"] == UINT64_MAX:
            assert "same sequence number (MAX)" in answer.reason
            assert answer.reason.startswith("Both ready nodes")


def test_nodes_still_waiting_are_offered_as_distractors() -> None:
    """The candidates are the ready queue's nodes and, as distractors, nodes still waiting
    for gradients: in a `.backward()` call that runs to its end, each of those pops later,
    none before (autograd.grad never runs the AccumulateGrad nodes it waits on)."""
    offered = 0
    for preset in PRESETS:
        doc = document(preset.source)
        for p, s in frames(doc):
            question, _ = next_pop(doc, p, s, "id") or pytest.fail("no question")
            steps = doc["passes"][p]["steps"]
            if doc["passes"][p]["kind"] != "backward" or any(st.get("error") for st in steps):
                continue
            later = {st["node"] for st in steps[s + 1:]}
            waiting = [c.node for c in question.candidates if not c.ready]
            assert set(waiting) <= later, (preset.id, p, s)
            offered += bool(waiting)
    assert offered, "no question ever offers a node that still waits"
