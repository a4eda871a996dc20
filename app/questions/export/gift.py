"""GIFT (Moodle's text format): one question per part, separated by blank lines, text in
[html] with GIFT's special characters escaped. GIFT has no ordering type: an order is a
matching of each node to its position."""

from __future__ import annotations

from app.questions.export.items import (
    CATEGORY,
    Item,
    as_choice,
    as_matching,
    choice_prompt_suffix,
    feedback_html,
    fraction,
    items,
    lms_type,
    question_html,
)
from app.questions.model import ChoicePart, MatchPart, NumericPart, OrderPart, Question

SPECIAL = "\\~=#{}:"


def escape(text: str) -> str:
    """GIFT's escapes (a backslash before ~ = # { } : and itself); newlines as \\n, so that
    no blank line can end the question early."""
    out = "".join(f"\\{c}" if c in SPECIAL else c for c in text)
    return out.replace("\n", "\\n")


def gift(questions: list[Question]) -> str:
    blocks = [f"$CATEGORY: $course$/top/{CATEGORY}"]
    blocks += [_question(item) for item in items(questions)]
    return "\n\n".join(blocks) + "\n"


def _question(item: Item) -> str:
    part = item.part
    head = (f"::{escape(item.name)}::[html]"
            f"{escape(question_html(item) + choice_prompt_suffix(part))}")
    feedback = f"####[html]{escape(feedback_html(item))}"
    kind = lms_type(part, has_ordering=False)
    if isinstance(part, NumericPart):
        body = f"#{part.answer!r}:{part.tolerance!r}"
    elif kind == "matching":
        assert isinstance(part, (OrderPart, MatchPart))
        stems, options, answer = as_matching(part)
        texts = {o.id: o.text for o in options}
        body = "\n".join(f"={escape(s.text)} -> {escape(texts[answer[s.id]])}" for s in stems)
    else:
        assert isinstance(part, (ChoicePart, MatchPart))
        body = _choices(part)
    return f"{head}{{\n{body}\n{feedback}\n}}"


def _choices(part: ChoicePart | MatchPart) -> str:
    options, right = as_choice(part)
    if not (isinstance(part, ChoicePart) and part.multiple):
        return "\n".join(f"{'=' if o.id in right else '~'}{escape(o.text)}" for o in options)
    good, bad = fraction(len(right)), "-" + fraction(len(right))
    return "\n".join(f"~%{good if o.id in right else bad}%{escape(o.text)}" for o in options)
