"""Marking a student's answers against the engine's: numbers within float32's tolerance,
orders exactly or by the dependencies alone, choices and matchings with partial credit.
Each mark comes with a sentence saying why, in the terms of the model answer."""

from __future__ import annotations

import math

from app.questions.model import (
    AnswerRequest,
    ChoicePart,
    Grade,
    MatchPart,
    NumericPart,
    OrderMode,
    OrderPart,
    Part,
    PartGrade,
    Question,
    Response,
    model_answer,
)


def grade(question: Question, request: AnswerRequest) -> Grade:
    marks = [grade_part(p, request.answers.get(p.id), request.order_mode)
             for p in question.parts]
    score = sum(m.score for m in marks) / len(marks) if marks else 0.0
    return Grade(id=question.id, score=score, parts=marks, model=model_answer(question))


def grade_part(part: Part, response: Response, mode: OrderMode = "exact") -> PartGrade:
    if isinstance(part, NumericPart):
        return numeric(part, response)
    if isinstance(part, OrderPart):
        return order(part, response, mode)
    if isinstance(part, ChoicePart):
        return choice(part, response)
    return match(part, response)


def _mark(part: Part, score: float, feedback: str) -> PartGrade:
    return PartGrade(id=part.id, score=round(score, 4), correct=score >= 1.0, feedback=feedback)


def as_number(response: Response) -> float | None:
    if isinstance(response, bool) or response is None:
        return None
    if isinstance(response, (int, float)):
        return float(response)
    if isinstance(response, str):
        try:
            value = float(response.strip().replace("−", "-"))
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None


def numeric(part: NumericPart, response: Response) -> PartGrade:
    value = as_number(response)
    if value is None:
        return _mark(part, 0.0, "No number given.")
    off = abs(value - part.answer)
    if off <= part.tolerance:
        return _mark(part, 1.0, f"Right: the engine's value is {part.answer:.8g}.")
    return _mark(part, 0.0, f"The engine's value is {part.answer:.8g}; yours is {off:.3g} off "
                 f"(accepted: within {part.tolerance:.2g}).")


def order(part: OrderPart, response: Response, mode: OrderMode) -> PartGrade:
    ids = [i.id for i in part.items]
    got = response if isinstance(response, list) else []
    if sorted(got) != sorted(ids):
        return _mark(part, 0.0, "List every node exactly once.")
    names = {i.id: i.text for i in part.items}
    position = {item: k for k, item in enumerate(got)}
    if mode == "dependencies":
        kept = [(a, b) for a, b in part.before if position[a] < position[b]]
        broken = [(a, b) for a, b in part.before if position[a] > position[b]]
        score = len(kept) / len(part.before) if part.before else 1.0
        if broken:
            a, b = broken[0]
            return _mark(part, score, f"{len(kept)} of {len(part.before)} dependencies hold; "
                         f"{names[b]} cannot run before {names[a]}, which sends it a gradient.")
        if got == part.answer:
            return _mark(part, 1.0, "Right: the engine's order.")
        k = next(i for i, (x, y) in enumerate(zip(got, part.answer, strict=True)) if x != y)
        return _mark(part, 1.0, f"Every dependency holds, so this order is possible; the "
                     f"engine's differs at pop {k + 1}: it pops {names[part.answer[k]]} rather "
                     f"than {names[got[k]]}, the ready node with the largest sequence number.")
    pairs = [(a, b) for i, a in enumerate(part.answer) for b in part.answer[i + 1:]]
    same = sum(position[a] < position[b] for a, b in pairs)
    score = same / len(pairs) if pairs else 1.0
    if got == part.answer:
        return _mark(part, 1.0, "Right: exactly the engine's order.")
    k = next(i for i, (x, y) in enumerate(zip(got, part.answer, strict=True)) if x != y)
    return _mark(part, score, f"{same} of {len(pairs)} pairs are in the engine's order; the "
                 f"first difference is pop {k + 1}: the engine pops {names[part.answer[k]]}.")


def choice(part: ChoicePart, response: Response) -> PartGrade:
    chosen = set(response if isinstance(response, list) else
                 [response] if isinstance(response, str) else [])
    right = set(part.answer)
    texts = {o.id: o.text for o in part.options}
    wanted = "; ".join(texts[a] for a in part.answer) or "none of them"
    if not part.multiple:
        score = 1.0 if chosen == right else 0.0
        return _mark(part, score, "Right." if score else f"The engine's answer: {wanted}.")
    hits, misses = len(chosen & right), len(chosen - right)
    score = max(0.0, (hits - misses) / len(right)) if right else float(not chosen)
    if chosen == right:
        return _mark(part, 1.0, "Right.")
    return _mark(part, score, f"{hits} of {len(right)} correct options chosen, {misses} wrong "
                 f"ones; the engine's answer: {wanted}.")


def match(part: MatchPart, response: Response) -> PartGrade:
    got = response if isinstance(response, dict) else {}
    right = sum(got.get(stem) == option for stem, option in part.answer.items())
    score = right / len(part.answer) if part.answer else 1.0
    if right == len(part.answer):
        return _mark(part, 1.0, "Right.")
    stems = {s.id: s.text for s in part.stems}
    options = {o.id: o.text for o in part.options}
    wrong = next(s for s, o in part.answer.items() if got.get(s) != o)
    return _mark(part, score, f"{right} of {len(part.answer)} right; {stems[wrong]}: "
                 f"{options[part.answer[wrong]]}.")
