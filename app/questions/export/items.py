"""Questions flattened into LMS items: one item per part, each carrying the whole question
(its prompt and program) so that it stands alone in a quiz bank, named `ID (a)`, `ID (b)`.

Each format has its own types; `lms_type` says which one a part becomes. Ordering parts
become Moodle's ordering questions; GIFT and Canvas's QTI have no ordering type, so there
they are matchings of each node to its position (Canvas's own importer turns QTI ordering
interactions into matchings too). A matching with a single stem is a plain choice.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal

from app.questions.model import (
    ChoicePart,
    MatchPart,
    NumericPart,
    Option,
    OrderPart,
    Part,
    Question,
)

LmsType = Literal["numerical", "multichoice", "multianswer", "matching", "ordering"]
CATEGORY = "Autograd Lab"


@dataclass(frozen=True)
class Item:
    name: str
    question: Question
    part: Part

    @property
    def letter(self) -> str:
        return self.name.rsplit("(", 1)[1].rstrip(")")


def items(questions: list[Question]) -> list[Item]:
    return [Item(f"{q.id} ({chr(ord('a') + i)})", q, p) for q in questions
            for i, p in enumerate(q.parts)]


def lms_type(part: Part, has_ordering: bool) -> LmsType:
    if isinstance(part, NumericPart):
        return "numerical"
    if isinstance(part, OrderPart):
        return "ordering" if has_ordering else "matching"
    if isinstance(part, ChoicePart):
        return "multianswer" if part.multiple else "multichoice"
    return "matching" if len(part.stems) > 1 else "multichoice"


def code_html(text: str) -> str:
    """Text with `code` spans, as HTML."""
    parts = re.split(r"`([^`\n]+)`", text)
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p)
                   for i, p in enumerate(parts))


def question_html(item: Item) -> str:
    q = item.question
    return (f"<p>{code_html(q.prompt)}</p>\n<pre><code>{html.escape(q.program.rstrip())}"
            f"</code></pre>\n<p><strong>({item.letter})</strong> {code_html(item.part.prompt)}</p>")


def feedback_html(item: Item) -> str:
    why = item.part.why
    lines = ([why] if why else []) + [x for x in item.question.explanation if x != why]
    return "".join(f"<p>{code_html(line)}</p>" for line in lines)


def positions(part: OrderPart) -> tuple[list[Option], dict[str, str]]:
    """An order as a matching: the options `pops 1st`, `pops 2nd`, ... and item → option."""
    options = [Option(id=f"p{k}", text=f"pops {_ordinal(k)}") for k in
               range(1, len(part.items) + 1)]
    return options, {item: f"p{k}" for k, item in enumerate(part.answer, 1)}


def as_matching(part: OrderPart | MatchPart) -> tuple[list[Option], list[Option], dict[str, str]]:
    """(stems, options, stem → option) of a matching part or of an order shown as one."""
    if isinstance(part, OrderPart):
        options, answer = positions(part)
        return part.items, options, answer
    return part.stems, part.options, part.answer


def as_choice(part: ChoicePart | MatchPart) -> tuple[list[Option], list[str]]:
    """(options, correct ids) of a choice, or of a one-stem matching shown as one."""
    if isinstance(part, ChoicePart):
        return part.options, part.answer
    return part.options, [part.answer[part.stems[0].id]]


def choice_prompt_suffix(part: Part) -> str:
    """A one-stem matching asks about its stem."""
    return f" {part.stems[0].text}" if isinstance(part, MatchPart) and len(part.stems) == 1 else ""


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def fraction(k: int) -> str:
    """100 / k as Moodle writes grade fractions (five decimals)."""
    return f"{100 / k:.5f}".rstrip("0").rstrip(".")
