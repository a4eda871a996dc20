"""The presenter's pages (`/present`, its speaker view `/present/notes`), the join pages
(`/join`, `/join/CODE`) and the lessons the presenter steps through (`/api/lessons`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.lessons import Lesson, load_lessons, shipped_dir
from app.rooms import codes
from app.web.pages import TEMPLATES, StaticTree
from app.web.settings import Settings

_templates = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape())


def lessons_of(app: FastAPI) -> list[Lesson]:
    """The shipped lessons and those of `LAB_LESSONS_DIR`, loaded once (at startup, so a
    broken lesson file stops the server with its path and the field at fault)."""
    if getattr(app.state, "lessons", None) is None:
        settings: Settings = app.state.settings
        app.state.lessons = load_lessons(shipped_dir(), settings.lessons_dir)
    lessons: list[Lesson] = app.state.lessons
    return lessons


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    lessons_of(app)
    yield


router = APIRouter(tags=["pages"], lifespan=lifespan)
lessons_router = APIRouter(prefix="/api/lessons", tags=["lessons"])


def _page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    tree: StaticTree = request.app.state.static_tree
    html = _templates.get_template(template).render(static=tree.url, **values)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-cache"})


@router.get("/present", response_class=HTMLResponse, include_in_schema=False)
async def present(request: Request) -> HTMLResponse:
    return _page(request, "present.html")


@router.get("/present/notes", response_class=HTMLResponse, include_in_schema=False)
async def speaker_notes(request: Request) -> HTMLResponse:
    return _page(request, "notes.html")


@router.get("/join", response_class=HTMLResponse, include_in_schema=False)
async def join_form(request: Request, code: str | None = Query(None)) -> Response:
    """The page to type a code on; a typed code goes on to /join/CODE."""
    if code is not None and codes.normalize(code) is not None:
        return RedirectResponse(request.url_for("join", code=codes.normalize(code)), 303)
    return _page(request, "join.html", status=200 if code is None else 404,
                 code=code or "", wrong=code is not None)


@router.get("/join/{code}", response_class=HTMLResponse, include_in_schema=False, name="join")
async def join(request: Request, code: str) -> Response:
    """A student's way in: the lab page, following the room (`/?room=CODE`)."""
    from app.ops.ratelimit import count_miss, lookup_allowed
    from app.web.rooms import rooms_of

    await lookup_allowed(request)           # a wrong code counts, as on /api/rooms/CODE
    normal = codes.normalize(code)
    if normal is not None and await rooms_of(request).exists(normal):
        return RedirectResponse(f"/?room={normal}", 303)
    await count_miss(request)
    return _page(request, "join.html", status=404, code=code, wrong=True)


@lessons_router.get("", response_model=list[Lesson])
async def lessons(request: Request) -> list[Lesson]:
    """Every lesson: its programs, each with a title, a goal and the instructor's notes."""
    return lessons_of(request.app)


@lessons_router.get("/{lesson_id}", response_model=Lesson,
                    responses={404: {"description": "no lesson has that id"}})
async def lesson(lesson_id: str, request: Request) -> Lesson:
    found = next((x for x in lessons_of(request.app) if x.id == lesson_id), None)
    if found is None:
        raise HTTPException(404, f"no lesson has the id {lesson_id!r}")
    return found
