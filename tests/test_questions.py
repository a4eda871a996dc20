"""The question bank without PyTorch: every kind over 200 seeds against the engine's own
trace (fields the answers were not read from), fresh variants for every seed, grading,
the routes and the command line."""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from typing import Any

import pytest

from app import questions as bank
from app.language.parse import parse
from app.questions import facts
from app.questions.grading import grade
from app.questions.kinds import KINDS, errors
from app.questions.model import (
    AnswerRequest,
    ChoicePart,
    MatchPart,
    NumericPart,
    OrderPart,
    Question,
    Response,
)
from app.questions.variants import Shape, Space

SEEDS = range(200)
AVAILABLE = [k for k in KINDS if KINDS[k].availability()[0]]


def perfect(q: Question) -> dict[str, Response]:
    """The model answer, written as a student's answers."""
    out: dict[str, Response] = {}
    for p in q.parts:
        if isinstance(p, NumericPart):
            out[p.id] = str(p.answer)
        elif isinstance(p, (OrderPart, ChoicePart)):
            out[p.id] = list(p.answer)
        else:
            out[p.id] = dict(p.answer)
    return out


@pytest.mark.parametrize("kind", AVAILABLE)
def test_every_seed_makes_a_plain_pytorch_program_the_lab_accepts(kind: str) -> None:
    for seed in SEEDS:
        q = bank.question(kind, seed)
        assert q.program.startswith("import torch\n")
        program = parse(q.program)
        assert program.kind == "plain"
        ast.parse(q.program)                  # and plain Python
        assert q.lab.url == facts.lab_url(q.program, q.lab.step)


@pytest.mark.parametrize("kind", AVAILABLE)
def test_no_two_seeds_give_the_same_question_before_the_space_is_used_up(kind: str) -> None:
    space = KINDS[kind].space
    texts = {(bank.question(kind, s).program, bank.question(kind, s).prompt) for s in SEEDS}
    assert len(texts) == min(len(SEEDS), space.size)


def test_a_small_space_is_visited_whole_before_a_seed_repeats() -> None:
    space = Space("t", (Shape("a", (("x", (1, 2, 3)), ("y", (1, 2)))), Shape("b", (("z", (7,)),))))
    seen = [_point(space, s) for s in range(14)]
    assert space.size == 7
    assert len(set(seen[:7])) == 7
    assert seen[7:] == seen[:7]


def _point(space: Space, seed: int) -> tuple[str, tuple[tuple[str, Any], ...]]:
    v = space.variant(seed)
    return v.shape, tuple(v.values.items())


@pytest.mark.parametrize("kind", AVAILABLE)
def test_the_model_answer_scores_full_marks_and_a_blank_scores_none(kind: str) -> None:
    for seed in range(40):
        q = bank.question(kind, seed)
        assert grade(q, AnswerRequest(answers=perfect(q))).score == 1.0
        blank = grade(q, AnswerRequest())
        assert all(not p.correct for p in blank.parts)


# -- every kind over 200 seeds against the engine's own trace (the torch-less harness; with
# torch installed, tests/test_questions_torch.py checks the same answers against PyTorch)

def check_pop_order(q: Question) -> None:
    document = facts.run(q.program)
    pass_ = document["passes"][0]
    assert q.facts["order"] == [facts.key(n) for n in facts.popped(pass_)]
    order = q.parts[0]
    assert isinstance(order, OrderPart)
    assert [q.facts["keys"][i] for i in order.answer] == q.facts["order"]
    position = {item: k for k, item in enumerate(order.answer)}
    assert all(position[a] < position[b] for a, b in order.before)
    by_seq = {n["seq"]: n for n in pass_["graph"]["nodes"] if not facts.is_acc(n)}
    sources = facts.node_sources(q.program)
    assert len(sources) == len(by_seq)      # one source text per recorded node


def check_gradients(q: Question) -> None:
    grads = facts.run(q.program)["grads"]
    flat = {f"{n}.grad" if not isinstance(g, list) else f"{n}.grad[{i}]": x
            for n, g in grads.items() for i, x in (enumerate(g) if isinstance(g, list)
                                                     else [(0, g)])}
    assert {p.id: p.answer for p in q.parts if isinstance(p, NumericPart)} == flat


def check_second_backward(q: Question) -> None:
    document = facts.run(q.program)
    error = document["error"]
    assert q.facts["outcome"] == errors.of(document)
    last = document["passes"][-1]
    where = (facts.key(facts.nodes(last)[last["steps"][-1]["node"]]) if error is not None
             else "nowhere")
    assert q.facts["fails_at"] == where
    for part in q.parts:
        if part.id == "fix":
            assert isinstance(part, ChoicePart)
            works = {o.id for o in part.options
                     if facts.run(q.facts["programs"][o.text])["error"] is None}
            assert set(part.answer) == works
        elif isinstance(part, NumericPart):
            assert part.answer == document["grads"][part.id.removesuffix(".grad")]


def check_accumulation(q: Question) -> None:
    """The total is each step's own gradient (its AccumulateGrad pop) summed, and the
    first step alone gives the first of them."""
    document = facts.run(q.program)
    first = q.program.split("loss.backward()\n")[0] + "loss.backward()\n"
    after_one = facts.run(first)["grads"]
    for part in q.parts:
        assert isinstance(part, NumericPart)
        leaf = part.id.removesuffix(".grad")
        assert part.answer == document["grads"][leaf]
        g1, g2 = q.facts["steps"][leaf]
        assert g1 == after_one[leaf]
        assert part.answer == pytest.approx(g1 + g2, rel=1e-6, abs=1e-6)


def check_saved(q: Question) -> None:
    pass_ = facts.run(q.program)["passes"][0]
    saved = {facts.key(n): facts.saved_tensors(n) for n in pass_["graph"]["nodes"]
             if not facts.is_acc(n)}
    assert q.facts["saved"] == saved
    if "retain_graph=True" in q.program:
        assert q.facts["freed_at"] == {}
    else:
        holders = [k for k, v in saved.items() if v]
        assert sorted(q.facts["freed_at"]) == sorted(holders)
        popped = [facts.key(n) for n in facts.popped(pass_)]
        assert all(popped[j - 1] == k for k, j in q.facts["freed_at"].items())


def check_dependencies(q: Question) -> None:
    pass_ = facts.run(q.program)["passes"][0]
    assert facts.dependencies(pass_) == {int(k): v for k, v in pass_["dependencies"].items()}
    node = next(n for n in pass_["graph"]["nodes"] if facts.key(n) == q.facts["node"])
    assert q.facts["count"] == pass_["dependencies"][str(node["id"])]
    j = facts.ready_at(pass_, node["id"])
    assert pass_["steps"][j]["dependencies"][str(node["id"])] == 0
    assert facts.key(facts.nodes(pass_)[pass_["steps"][j]["node"]]) == q.facts["ready_after"]


def check_next_pop(q: Question) -> None:
    pass_ = facts.run(q.program)["passes"][0]
    j = q.facts["pop"]
    queue = [facts.nodes(pass_)[i] for i in facts.queue_before(pass_, j)]
    assert facts.key(queue[0]) == q.facts["answer"]        # the queue is in pop order
    assert queue[0]["seq"] == max(n["seq"] for n in queue)
    assert facts.key(facts.nodes(pass_)[pass_["steps"][j]["node"]]) == q.facts["answer"]


def check_tracking(q: Question) -> None:
    document = facts.run(q.program)
    grads = document["grads"]
    assert q.facts["grads"] == grads and q.facts["error"] == document["error"]
    part = q.parts[0]
    if isinstance(part, ChoicePart) and part.id == "grads":
        texts = {o.id: o.text.strip("`") for o in part.options}
        assert sorted(texts[a] for a in part.answer) == sorted(
            n for n, g in grads.items() if g is not None)
    elif isinstance(part, NumericPart):
        assert part.answer == grads[part.id.removesuffix(".grad")]
    else:
        last = document["passes"][-1]
        failed = document["error"] is not None
        assert q.facts["fails_at"] == (facts.key(facts.nodes(last)[last["steps"][-1]["node"]])
                                       if failed else "nowhere")
        assert failed == ("y.mul_" in q.program or "y.add_" in q.program)


ENGINE_CHECKS = {"pop-order": check_pop_order, "gradients": check_gradients,
                 "second-backward": check_second_backward, "accumulation": check_accumulation,
                 "saved": check_saved, "dependencies": check_dependencies,
                 "next-pop": check_next_pop, "tracking": check_tracking}


def test_every_available_kind_has_an_engine_check() -> None:
    assert set(AVAILABLE) <= set(ENGINE_CHECKS)


@pytest.mark.parametrize("kind", AVAILABLE)
def test_model_answers_agree_with_the_engines_trace_over_200_seeds(kind: str) -> None:
    failures = []
    for seed in SEEDS:
        q = bank.question(kind, seed)
        try:
            ENGINE_CHECKS[kind](q)
        except AssertionError as e:
            failures.append(f"seed {seed}: {e!r}\n{q.program}")
    assert not failures, f"{len(failures)} of {len(SEEDS)} differ:\n" + "\n".join(failures[:3])


def test_second_backward_covers_both_outcomes_and_offers_the_two_fixes() -> None:
    outcomes = {bank.question("second-backward", s).facts["fails_at"] == "nowhere"
                for s in SEEDS}
    assert outcomes == {True, False}
    q = next(bank.question("second-backward", s) for s in SEEDS
             if bank.question("second-backward", s).facts["fails_at"] != "nowhere")
    fix = next(p for p in q.parts if p.id == "fix")
    assert isinstance(fix, ChoicePart) and fix.multiple and len(fix.answer) == 2


def test_order_mode_dependencies_accepts_any_order_the_gradients_allow() -> None:
    q = next(bank.question("pop-order", s) for s in SEEDS
             if _other_valid_order(bank.question("pop-order", s)) is not None)
    order = q.parts[0]
    assert isinstance(order, OrderPart)
    other = _other_valid_order(q)
    answers: dict[str, Response] = {"order": other}
    exact = grade(q, AnswerRequest(answers=answers)).parts[0]
    loose = grade(q, AnswerRequest(answers=answers, order_mode="dependencies")).parts[0]
    assert not exact.correct and 0 < exact.score < 1
    assert loose.correct and "differs at pop" in loose.feedback
    backwards: dict[str, Response] = {"order": list(reversed(order.answer))}
    wrong = grade(q, AnswerRequest(answers=backwards, order_mode="dependencies")).parts[0]
    assert wrong.score == 0 and "cannot run before" in wrong.feedback


def _other_valid_order(q: Question) -> list[str] | None:
    """A topological order of the dependencies other than the engine's, if one exists."""
    order = q.parts[0]
    assert isinstance(order, OrderPart)
    for k in range(len(order.answer) - 1):
        swapped = list(order.answer)
        swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
        position = {item: i for i, item in enumerate(swapped)}
        if all(position[a] < position[b] for a, b in order.before):
            return swapped
    return None


def test_partial_credit_for_numbers_choices_and_matchings() -> None:
    q = bank.question("second-backward", next(
        s for s in SEEDS if bank.question("second-backward", s).facts["fails_at"] != "nowhere"))
    fix = next(p for p in q.parts if p.id == "fix")
    assert isinstance(fix, ChoicePart)
    half = grade(q, AnswerRequest(answers={"fix": fix.answer[:1]})).parts
    assert next(p for p in half if p.id == "fix").score == 0.5
    s = bank.question("saved", 1)
    match = s.parts[0]
    assert isinstance(match, MatchPart)
    one = dict(list(match.answer.items())[:1])
    assert grade(s, AnswerRequest(answers={"saved": one})).parts[0].score == pytest.approx(
        1 / len(match.answer))
    g = bank.question("gradients", 0)
    num = g.parts[0]
    assert isinstance(num, NumericPart)
    near = grade(g, AnswerRequest(answers={num.id: num.answer + num.tolerance / 2}))
    far = grade(g, AnswerRequest(answers={num.id: num.answer + 10 * num.tolerance + 1e-3}))
    assert near.parts[0].correct and not far.parts[0].correct


def test_kind_8_is_offered_now_that_the_language_accepts_its_programs() -> None:
    info = {k.id: k for k in bank.kinds()}["tracking"]
    assert (info.number, info.available, info.reason) == (8, True, None)
    assert "tracking" in AVAILABLE
    assert {q.kind for q in bank.practice_set(1, 8)} == set(AVAILABLE)


def test_a_kind_whose_programs_the_language_rejects_is_unavailable_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mechanism kind 8 waited behind: a kind whose `needs` the parser rejects is
    listed with the parser's line and message, is left out of sets and cannot be asked."""
    future = dataclasses.replace(KINDS["tracking"], id="future", number=9,
                                 needs="import torch\nglobal x\n")
    monkeypatch.setitem(KINDS, "future", future)
    info = {k.id: k for k in bank.kinds()}["future"]
    assert not info.available and info.reason and "(line 2:" in info.reason
    assert "future" not in bank.available_kinds()
    with pytest.raises(bank.UnknownKind, match="unavailable"):
        bank.question("future", 0)
    with pytest.raises(bank.UnknownKind):
        bank.practice_set(0, 3, ["future"])


def test_kind_8_covers_no_grad_detach_a_hook_and_both_in_place_outcomes() -> None:
    from app.questions.kinds.tracking import program

    space = KINDS["tracking"].space
    programs = {program(space.variant(s)) for s in range(60)}
    assert len(programs) == 60
    joined = "".join(programs)
    for construct in ("with torch.no_grad():", ".detach()", "register_hook(lambda g:",
                      "y.mul_(2)", "y.add_(1)", "q.mul_(2)"):
        assert construct in joined
    shapes = Counter(space.variant(s).shape for s in SEEDS)
    assert set(shapes) == {"no-grad", "hook", "in-place"}
    assert min(shapes.values()) >= len(SEEDS) // 5        # a set meets each about as often
    failed = {bank.question("tracking", s).facts["fails_at"] not in (None, "nowhere")
              for s in SEEDS if space.variant(s).shape == "in-place"}
    assert failed == {True, False}


def test_kind_8_explanations_are_worked_from_the_trace() -> None:
    """Each leaf's fate with its number, the hook's replacement at the pop it happens,
    and the saved versions against the failing node."""
    space = KINDS["tracking"].space
    for seed in range(60):
        q = bank.question("tracking", seed)
        text = "\n".join(q.explanation)
        shape = space.variant(seed).shape
        if shape == "no-grad":
            for leaf, g in q.facts["grads"].items():
                assert (f"`{leaf}.grad` stays None" if g is None
                        else f"`{leaf}.grad` = {facts.number(g)}") in text
        elif shape == "hook":
            pass_ = facts.run(q.program)["passes"][0]
            (hook,) = [h for step in pass_["steps"] for h in step.get("hooks") or []
                       if h["replaced"]]
            assert f"the hook on `y` returns `{hook['after']}`" in text
            assert q.explanation[-1].startswith(f"So {q.parts[0].id} = ")
        elif q.facts["fails_at"] != "nowhere":
            assert q.facts["error"]["message"] in text and "(now 1)" in text
        else:
            assert "runs to the end" in text and "(now 1)" not in text


def test_node_sources_skip_calls_that_record_nothing_and_count_in_place_ones() -> None:
    """`detach()` and `register_hook` record no node, `y.mul_(2)` records one: the i-th
    source is still the node numbered i, which labels and walkthroughs rely on."""
    ops = {"MulBackward0": (ast.Mult,), "AddBackward0": (ast.Add,)}
    space = KINDS["tracking"].space
    for seed in range(60):
        q = bank.question("tracking", seed)
        sources = facts.node_sources(q.program)
        for p in facts.run(q.program)["passes"]:
            for n in p["graph"]["nodes"]:
                if facts.is_acc(n):
                    continue
                tree = ast.parse(sources[n["seq"]], mode="eval").body
                assert isinstance(tree, ast.BinOp), (seed, n, sources)
                assert isinstance(tree.op, ops[n["name"]]), (seed, n, sources)
        if space.variant(seed).shape == "in-place":
            assert sources[-1].startswith(("y.", "q."))


def test_a_practice_set_mixes_kinds_and_is_one_seed() -> None:
    one = bank.practice_set(5, 14)
    again = bank.practice_set(5, 14)
    assert [q.id for q in one] == [q.id for q in again]
    assert {q.kind for q in one} == set(AVAILABLE)
    assert len({q.id for q in one}) == 14
    other = bank.practice_set(6, 14)
    assert not {q.id for q in one} & {q.id for q in other}
