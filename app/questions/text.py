"""Questions as plain text, for `autograd-lab questions show` and the printed answer key."""

from __future__ import annotations

from app.questions.model import ChoicePart, MatchPart, NumericPart, OrderPart, Part, Question


def show(question: Question, answers: bool = False) -> str:
    lines = [f"{question.id}: {question.title} (kind {question.number}, seed {question.seed})",
             "", question.prompt, "", *("    " + line for line in question.program.splitlines()),
             ""]
    for i, part in enumerate(question.parts):
        lines.append(f"({chr(ord('a') + i)}) {part.prompt}")
        lines += [f"    {line}" for line in _choices(part)]
        if answers:
            lines += [f"    Answer: {line}" for line in answer_lines(part)]
    if answers:
        lines += ["", "Worked answer:", *(f"  {line}" for line in question.explanation),
                  "", f"In the lab: {question.lab.url}"]
    return "\n".join(lines) + "\n"


def _choices(part: Part) -> list[str]:
    if isinstance(part, OrderPart):
        return [f"- {i.text}" for i in part.items]
    if isinstance(part, ChoicePart):
        return [f"[{o.id}] {o.text}" for o in part.options]
    if isinstance(part, MatchPart):
        return ([f"- {s.text}" for s in part.stems]
                + ["choose from: " + "; ".join(o.text for o in part.options)])
    return []


def answer_lines(part: Part) -> list[str]:
    if isinstance(part, NumericPart):
        return [f"{part.answer:.8g} (± {part.tolerance:.2g})"]
    if isinstance(part, OrderPart):
        texts = {i.id: i.text for i in part.items}
        return [", ".join(texts[a] for a in part.answer)]
    if isinstance(part, ChoicePart):
        texts = {o.id: o.text for o in part.options}
        return [texts[a] for a in part.answer] or ["none of them"]
    stems = {s.id: s.text for s in part.stems}
    options = {o.id: o.text for o in part.options}
    return [f"{stems[s]} → {options[o]}" for s, o in part.answer.items()]


def answer_key(questions: list[Question]) -> str:
    """The model answers of a set, numbered as printed: one block per question."""
    blocks = []
    for n, q in enumerate(questions, 1):
        lines = [f"{n}. {q.id}: {q.title}"]
        for i, part in enumerate(q.parts):
            got = answer_lines(part)
            lines.append(f"   ({chr(ord('a') + i)}) {got[0]}")
            lines += [f"       {line}" for line in got[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
