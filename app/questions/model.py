"""The question documents: what a student sees (`QuestionView`), what the engine answered
(`ModelAnswer`), and how an answer was marked (`Grade`). One `Question` holds all three
sides; routes and exports choose which side to show.

A question has one or more parts, each of one answer format: a number, an order, a
choice (one or several) or a matching. Every answer in here was computed by running the
engine on the question's programs (see app/questions/kinds/); none is typed in.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

OrderMode = Literal["exact", "dependencies"]


class Option(BaseModel):
    id: str = Field(description="stable within its question; an answer names options by it")
    text: str


class NumericPart(BaseModel):
    type: Literal["numeric"] = "numeric"
    id: str
    prompt: str
    answer: float = Field(description="the engine's value (float32 widened to a double)")
    tolerance: float = Field(description="accepted distance from the answer")
    why: str = ""


class OrderPart(BaseModel):
    """Put every item in order. `answer` is the engine's pop order; `before` lists the pairs
    (a, b) in which a must run before b because a sends b a gradient, the only order any
    correct engine must respect."""

    type: Literal["order"] = "order"
    id: str
    prompt: str
    items: list[Option] = Field(description="in the order shown (shuffled by the seed)")
    answer: list[str]
    before: list[tuple[str, str]]
    why: str = ""


class ChoicePart(BaseModel):
    type: Literal["choice"] = "choice"
    id: str
    prompt: str
    options: list[Option]
    multiple: bool = Field(False, description="select every correct option")
    answer: list[str] = Field(description="the correct options' ids")
    why: str = ""


class MatchPart(BaseModel):
    type: Literal["match"] = "match"
    id: str
    prompt: str
    stems: list[Option]
    options: list[Option]
    answer: dict[str, str] = Field(description="stem id → option id")
    why: str = ""


Part = Annotated[NumericPart | OrderPart | ChoicePart | MatchPart, Field(discriminator="type")]


class LabLink(BaseModel):
    """Where the lab opens: this program at this step of its timeline (`/#p=...&s=...`)."""

    program: str
    step: int
    url: str


class Question(BaseModel):
    id: str = Field(description="KIND-SEED, e.g. pop-order-17")
    kind: str
    number: int = Field(description="the kind's number in issue 13's list (1-8)")
    seed: int
    title: str
    prompt: str
    program: str = Field(description="plain PyTorch: it runs unchanged under torch 2.13")
    focus_line: int | None = Field(None, description="the line the question is about")
    parts: list[Part]
    explanation: list[str] = Field(description="the worked model answer, one step a line")
    lab: LabLink
    facts: dict[str, Any] = Field(
        default_factory=dict, description="what the answers were read from (node keys, "
        "pop order, programs of the choices): for tests and the JSON export")


# -- the student's side --------------------------------------------------------------------

class NumericView(BaseModel):
    type: Literal["numeric"] = "numeric"
    id: str
    prompt: str


class OrderView(BaseModel):
    type: Literal["order"] = "order"
    id: str
    prompt: str
    items: list[Option]


class ChoiceView(BaseModel):
    type: Literal["choice"] = "choice"
    id: str
    prompt: str
    options: list[Option]
    multiple: bool


class MatchView(BaseModel):
    type: Literal["match"] = "match"
    id: str
    prompt: str
    stems: list[Option]
    options: list[Option]


PartView = Annotated[NumericView | OrderView | ChoiceView | MatchView,
                     Field(discriminator="type")]


class QuestionView(BaseModel):
    """A question without its answers: what the page shows before "Show model answer"."""

    id: str
    kind: str
    number: int
    seed: int
    title: str
    prompt: str
    program: str
    focus_line: int | None
    parts: list[PartView]


class ModelAnswer(BaseModel):
    id: str
    parts: list[Part]
    explanation: list[str]
    lab: LabLink


Response = float | str | list[str] | dict[str, str] | None


class AnswerRequest(BaseModel):
    """A student's answers by part id: a number (or its text) for a numeric part, item ids
    in order for an order part, option ids for a choice, stem id → option id for a match."""

    answers: dict[str, Response] = {}
    order_mode: OrderMode = Field("exact", description="exact: only the engine's order "
                                  "scores full marks; dependencies: any order the "
                                  "gradients' dependencies allow does")


class PartGrade(BaseModel):
    id: str
    score: float = Field(description="0 to 1; partial credit where the format allows")
    correct: bool
    feedback: str


class Grade(BaseModel):
    id: str
    score: float = Field(description="the mean of the parts' scores, 0 to 1")
    parts: list[PartGrade]
    model: ModelAnswer


class KindInfo(BaseModel):
    id: str
    number: int
    title: str
    available: bool
    reason: str | None = Field(None, description="why a kind is unavailable")


class QuestionSet(BaseModel):
    seed: int
    count: int
    kinds: list[str]
    questions: list[QuestionView]


def view(question: Question) -> QuestionView:
    """The student's side of a question: every answer left out."""
    parts: list[NumericView | OrderView | ChoiceView | MatchView] = []
    for p in question.parts:
        if isinstance(p, NumericPart):
            parts.append(NumericView(id=p.id, prompt=p.prompt))
        elif isinstance(p, OrderPart):
            parts.append(OrderView(id=p.id, prompt=p.prompt, items=p.items))
        elif isinstance(p, ChoicePart):
            parts.append(ChoiceView(id=p.id, prompt=p.prompt, options=p.options,
                                    multiple=p.multiple))
        else:
            parts.append(MatchView(id=p.id, prompt=p.prompt, stems=p.stems, options=p.options))
    return QuestionView(id=question.id, kind=question.kind, number=question.number,
                        seed=question.seed, title=question.title, prompt=question.prompt,
                        program=question.program, focus_line=question.focus_line, parts=parts)


def model_answer(question: Question) -> ModelAnswer:
    return ModelAnswer(id=question.id, parts=question.parts, explanation=question.explanation,
                       lab=question.lab)
