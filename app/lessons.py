"""Lessons: an ordered list of programs, each with a title, a teaching goal and the
instructor's notes, for the presenter view (`/present`).

A lesson is a TOML file (`lessons/*.toml`; more from the directory `LAB_LESSONS_DIR`
names). Each program gives either `preset` (an id from app/presets.py, whose source and
goal it takes) or its own `source`:

    id = "backward-basics"
    title = "Backward, one pop at a time"
    summary = "What a student should leave with."

    [[programs]]
    preset = "worked-example"
    notes = "Ask what w.grad will be before stepping."

    [[programs]]
    title = "A program of your own"
    goal = "The one thing it teaches."
    source = "a = 2.0\\nloss = a * a\\n"
    notes = "..."

A file that breaks these rules is refused with its path and the field at fault.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.presets import preset

ROOT = Path(__file__).resolve().parents[1]
MAX_PROGRAMS = 20        # keys 1-9 reach the first nine; N and Shift+N every one


def shipped_dir() -> Path:
    """The repository's lessons/, beside static/ (which a compiled build links to)."""
    here = ROOT / "lessons"
    if here.is_dir():
        return here
    packaged = Path(__file__).resolve().parent / "shipped_lessons"   # an installed copy's
    return packaged if packaged.is_dir() else (ROOT / "static").resolve().parent / "lessons"


class LessonError(ValueError):
    """A lesson file that cannot be used, said with its path and the field at fault."""


class LessonProgram(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field("", max_length=120)
    goal: str = Field("", max_length=400, description="the one thing this program teaches")
    notes: str = Field("", max_length=4000, description="for the speaker view only")
    preset: str | None = Field(None, description="an id of app/presets.py")
    source: str = Field("", max_length=64_000)

    @model_validator(mode="before")
    @classmethod
    def _from_preset(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("preset") is None:
            if isinstance(data, dict) and not str(data.get("source", "")).strip():
                raise ValueError("give `preset` (a preset's id) or a non-empty `source`")
            return data
        if data.get("source"):
            raise ValueError("give either `preset` or `source`, not both")
        found = preset(str(data["preset"]))
        if found is None:
            raise ValueError(f"no preset has the id {data['preset']!r}")
        return {"title": found.title, "goal": found.goal, **data, "source": found.source}


class Lesson(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,60}$")
    title: str = Field(min_length=1, max_length=120)
    summary: str = Field("", max_length=600)
    programs: list[LessonProgram] = Field(min_length=1, max_length=MAX_PROGRAMS)


def load_lesson(path: Path) -> Lesson:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise LessonError(f"{path}: not a readable TOML file: {e}") from e
    try:
        return Lesson.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(f"{_where(err['loc'])}: {err['msg']}" for err in e.errors())
        raise LessonError(f"{path}: {problems}") from e


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part + 1}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "the file"


def load_lessons(*directories: Path | None) -> list[Lesson]:
    """Every lesson in these directories, by file name within each; an id used twice is
    an error naming both files."""
    lessons: list[Lesson] = []
    seen: dict[str, Path] = {}
    for directory in directories:
        if directory is None:
            continue
        if not directory.is_dir():
            raise LessonError(f"{directory}: the lessons directory does not exist")
        for path in sorted(directory.glob("*.toml")):
            lesson = load_lesson(path)
            if lesson.id in seen:
                raise LessonError(f"{path}: the id {lesson.id!r} is taken by {seen[lesson.id]}")
            seen[lesson.id] = path
            lessons.append(lesson)
    return lessons
