"""The question bank without PyTorch: every kind over 200 seeds against the engine's own
trace (fields the answers were not read from), fresh variants for every seed, grading,
the routes and the command line."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from app import questions as bank
from app.language.parse import parse
from app.questions import facts
from app.questions.grading import grade
from app.questions.kinds import KINDS
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


@pytest.mark.parametrize("seed", range(60))
def test_pop_order_answers_are_the_traced_pops_and_respect_the_dependencies(seed: int) -> None:
    q = bank.question("pop-order", seed)
    document = facts.run(q.program)
    pass_ = document["passes"][0]
    assert q.facts["order"] == [facts.key(n) for n in facts.popped(pass_)]
    order = q.parts[0]
    assert isinstance(order, OrderPart)
    position = {item: k for k, item in enumerate(order.answer)}
    assert all(position[a] < position[b] for a, b in order.before)
    by_seq = {n["seq"]: n for n in pass_["graph"]["nodes"] if not facts.is_acc(n)}
    sources = facts.node_sources(q.program)
    assert len(sources) == len(by_seq)      # one source text per recorded node


@pytest.mark.parametrize("seed", range(60))
def test_dependency_counts_agree_with_the_passes_own_counts(seed: int) -> None:
    q = bank.question("dependencies", seed)
    pass_ = facts.run(q.program)["passes"][0]
    assert facts.dependencies(pass_) == {int(k): v for k, v in pass_["dependencies"].items()}
    node = next(n for n in pass_["graph"]["nodes"] if facts.key(n) == q.facts["node"])
    j = facts.ready_at(pass_, node["id"])
    assert pass_["steps"][j]["dependencies"][str(node["id"])] == 0
    assert facts.key(facts.nodes(pass_)[pass_["steps"][j]["node"]]) == q.facts["ready_after"]


@pytest.mark.parametrize("seed", range(60))
def test_next_pop_answer_is_the_largest_number_in_the_queue(seed: int) -> None:
    q = bank.question("next-pop", seed)
    pass_ = facts.run(q.program)["passes"][0]
    j = q.facts["pop"]
    queue = [facts.nodes(pass_)[i] for i in facts.queue_before(pass_, j)]
    assert facts.key(queue[0]) == q.facts["answer"]        # the queue is in pop order
    assert queue[0]["seq"] == max(n["seq"] for n in queue)


@pytest.mark.parametrize("seed", range(60))
def test_gradient_answers_are_the_documents_grads(seed: int) -> None:
    q = bank.question("gradients", seed)
    grads = facts.run(q.program)["grads"]
    flat = {f"{n}.grad" if not isinstance(g, list) else f"{n}.grad[{i}]": x
            for n, g in grads.items() for i, x in (enumerate(g) if isinstance(g, list)
                                                     else [(0, g)])}
    assert {p.id: p.answer for p in q.parts if isinstance(p, NumericPart)} == flat


def test_second_backward_covers_both_outcomes_and_fixes_are_checked_by_the_engine() -> None:
    outcomes = {bank.question("second-backward", s).facts["fails_at"] == "nowhere"
                for s in SEEDS}
    assert outcomes == {True, False}
    q = next(bank.question("second-backward", s) for s in SEEDS
             if bank.question("second-backward", s).facts["fails_at"] != "nowhere")
    fix = next(p for p in q.parts if p.id == "fix")
    assert isinstance(fix, ChoicePart) and fix.multiple and len(fix.answer) == 2
    for option in fix.options:
        works = facts.run(q.facts["programs"][option.text])["error"] is None
        assert works == (option.id in fix.answer)


def test_saved_kind_reads_freeing_from_the_steps() -> None:
    for seed in range(60):
        q = bank.question("saved", seed)
        if "retain_graph=True" in q.program:
            assert q.facts["freed_at"] == {}
        else:
            holders = [k for k, v in q.facts["saved"].items() if v]
            assert sorted(q.facts["freed_at"]) == sorted(holders)


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


def test_kind_8_is_listed_unavailable_with_the_parsers_reason() -> None:
    info = {k.id: k for k in bank.kinds()}["tracking"]
    assert info.number == 8
    if info.available:
        pytest.skip("the language accepts kind 8's programs now")
    assert info.reason and "line" in info.reason
    with pytest.raises(bank.UnknownKind):
        bank.question("tracking", 0)


def test_kind_8_templates_are_plain_pytorch_for_the_new_language() -> None:
    from app.questions.kinds.tracking import program

    space = KINDS["tracking"].space
    programs = {program(space.variant(s)) for s in range(60)}
    assert len(programs) == 60
    joined = "".join(programs)
    for construct in ("with torch.no_grad():", ".detach()", "register_hook(lambda g:", ".mul_(2)"):
        assert construct in joined
    for text in programs:
        ast.parse(text)


def test_a_practice_set_mixes_kinds_and_is_one_seed() -> None:
    one = bank.practice_set(5, 14)
    again = bank.practice_set(5, 14)
    assert [q.id for q in one] == [q.id for q in again]
    assert {q.kind for q in one} == set(AVAILABLE)
    assert len({q.id for q in one}) == 14
    other = bank.practice_set(6, 14)
    assert not {q.id for q in one} & {q.id for q in other}
