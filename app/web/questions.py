"""The question bank's routes: the `/quiz` page, the questions without their answers,
grading, model answers, and the exports as downloads (the same variants and answers as
`autograd-lab questions export`). Routes are plain functions, so FastAPI runs them in
its thread pool: building a question runs the engine, never on the event loop."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app import questions as bank
from app.questions.export import Format, render
from app.questions.grading import grade
from app.questions.model import (
    AnswerRequest,
    Grade,
    KindInfo,
    ModelAnswer,
    Question,
    QuestionSet,
    QuestionView,
    model_answer,
    view,
)
from app.web.pages import TEMPLATES, StaticTree

router = APIRouter(tags=["questions"])
UNKNOWN_KIND: dict[int | str, dict[str, Any]] = {404: {"description": "no such kind"}}
EXPORTED: dict[int | str, dict[str, Any]] = {**UNKNOWN_KIND, 200: {
    "description": "the file, by format",
    "content": {**{media: {"schema": {"type": "string", "format": "binary"}} for media in (
        "application/xml", "text/plain", "application/zip")},
        "application/json": {"schema": {}}}}}
_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())

Seed = Annotated[int, Query(ge=0, le=bank.MAX_SEED, description="the same seed, the same set")]
Count = Annotated[int, Query(ge=1, le=bank.MAX_COUNT, description="questions in the set")]
Kinds = Annotated[list[str] | None, Query(alias="kind", description="kinds to mix (ids or "
                                          "numbers; repeat the parameter); default: all")]
KindPath = Annotated[str, Path(description="a kind's id (pop-order) or number (1)")]
SeedPath = Annotated[int, Path(ge=0, le=bank.MAX_VARIANT_SEED,
                                description="a variant's seed (a set's j-th question of a "
                                            "kind from seed S is variant S*64 + j)")]


def _question(kind: str, seed: int) -> Question:
    try:
        return bank.question(kind, seed)
    except bank.UnknownKind as e:
        raise HTTPException(404, str(e)) from None


def _set(seed: int, count: int, kinds: list[str] | None) -> list[Question]:
    names = [k for entry in kinds or [] for k in entry.split(",") if k] or None
    try:
        return bank.practice_set(seed, count, names)
    except bank.UnknownKind as e:
        raise HTTPException(404, str(e)) from None


@router.get("/quiz", response_class=HTMLResponse)
def quiz_page(request: Request) -> HTMLResponse:
    """The question bank: `?seed=S&count=N&kind=K` is a practice set (one link to hand
    out), `?kind=K&seed=S` one question; `&order=dependencies` accepts any order the
    dependencies allow in pop-order questions."""
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template("quiz.html").render(static=tree.url)
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


@router.get("/api/questions/kinds", response_model=list[KindInfo])
def question_kinds() -> list[KindInfo]:
    """Every kind of question; an unavailable one says why."""
    return bank.kinds()


@router.get("/api/questions/set", response_model=QuestionSet, responses=UNKNOWN_KIND)
def question_set(seed: Seed = 0, count: Count = 7, kind: Kinds = None) -> QuestionSet:
    """A practice set mixed across kinds, without its answers."""
    questions = _set(seed, count, kind)
    return QuestionSet(seed=seed, count=len(questions),
                       kinds=list(dict.fromkeys(q.kind for q in questions)),
                       questions=[view(q) for q in questions])


@router.get("/api/questions/export", response_class=Response, responses=EXPORTED)
def question_export(format: Annotated[Format, Query(description="moodle-xml, gift, qti (a "
                                                    "zip for Canvas) or json")] = "moodle-xml",
                    seed: Seed = 0, count: Count = 7, kind: Kinds = None) -> Response:
    """The set as a file for an LMS: the same questions and answers in every format."""
    rendered = render(_set(seed, count, kind), format, f"autograd-lab-questions-{seed}")
    return Response(rendered.body, media_type=rendered.media_type, headers={
        "Content-Disposition": f'attachment; filename="{rendered.filename}"'})


@router.get("/api/questions/{kind}/{seed}", response_model=QuestionView,
            responses=UNKNOWN_KIND)
def one_question(kind: KindPath, seed: SeedPath) -> QuestionView:
    """One question, without its answers."""
    return view(_question(kind, seed))


@router.get("/api/questions/{kind}/{seed}/answer", response_model=ModelAnswer,
            responses=UNKNOWN_KIND)
def reveal(kind: KindPath, seed: SeedPath) -> ModelAnswer:
    """The model answer and its worked explanation, from the engine."""
    return model_answer(_question(kind, seed))


@router.post("/api/questions/{kind}/{seed}/answer", response_model=Grade,
             responses=UNKNOWN_KIND)
def mark(kind: KindPath, seed: SeedPath, body: AnswerRequest) -> Grade:
    """Mark an answer: each part's score (partial credit where the format allows), why,
    and the model answer."""
    return grade(_question(kind, seed), body)
