"""Lessons: the shipped ones load and are built from the presets; a broken lesson file is
refused with its path and the field at fault; more come from LAB_LESSONS_DIR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.lessons import LessonError, load_lesson, load_lessons, shipped_dir
from app.presets import PRESETS, preset


def test_the_shipped_lessons_load_and_use_the_presets() -> None:
    lessons = load_lessons(shipped_dir())
    assert len(lessons) >= 3
    used = set()
    for lesson in lessons:
        assert lesson.title and lesson.summary
        for program in lesson.programs:
            assert program.preset is not None, "shipped lessons are built from the presets"
            found = preset(program.preset)
            assert found is not None
            assert (program.source, program.title, program.goal) == \
                (found.source, found.title, found.goal)
            assert program.notes.strip()
            used.add(program.preset)
    assert used == {p.id for p in PRESETS}, "every preset is in some lesson"


def write(tmp_path: Path, text: str, name: str = "lesson.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '''id = "mine"
title = "Mine"
[[programs]]
title = "One"
goal = "A goal"
source = "a = 2.0\\nb = a * a\\n"
notes = "Say this."
'''


def test_a_lesson_of_ones_own(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, GOOD))
    assert lesson.programs[0].source == "a = 2.0\nb = a * a\n"
    assert lesson.programs[0].preset is None


@pytest.mark.parametrize(("text", "said"), [
    ("id = 'x'\ntitle = 'T'\n[[programs]]\npreset = 'worked-example'\nsource = 'a = 1.0'\n",
     "programs[1]: Value error, give either `preset` or `source`, not both"),
    ("id = 'x'\ntitle = 'T'\n[[programs]]\npreset = 'nope'\n",
     "programs[1]: Value error, no preset has the id 'nope'"),
    ("id = 'x'\ntitle = 'T'\n[[programs]]\ntitle = 'empty'\n",
     "programs[1]: Value error, give `preset` (a preset's id) or a non-empty `source`"),
    ("id = 'x'\n[[programs]]\npreset = 'neuron'\n", "title: Field required"),
    ("id = 'Not An Id'\ntitle = 'T'\n[[programs]]\npreset = 'neuron'\n", "id: String should match"),
    ("id = 'x'\ntitle = 'T'\nprograms = []\n", "programs: List should have at least 1 item"),
    ("id = 'x'\ntitle = 'T'\n[[programs]]\npreset = 'neuron'\ncolour = 'red'\n",
     "programs[1].colour: Extra inputs are not permitted"),
    ("id = 'x'\ntitle = \n", "not a readable TOML file"),
])
def test_a_broken_lesson_is_refused_with_where(tmp_path: Path, text: str, said: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LessonError) as refused:
        load_lesson(path)
    assert str(refused.value).startswith(f"{path}: ")
    assert said in str(refused.value)


def test_an_id_used_twice_names_both_files(tmp_path: Path) -> None:
    first = write(tmp_path, GOOD, "a.toml")
    second = write(tmp_path, GOOD, "b.toml")
    with pytest.raises(LessonError, match=f"{second}: the id 'mine' is taken by {first}"):
        load_lessons(tmp_path)
    with pytest.raises(LessonError, match="does not exist"):
        load_lessons(tmp_path / "missing")


def test_lessons_from_the_settings_directory_are_served(
        tmp_path: Path, app_client: Callable[..., Any]) -> None:
    write(tmp_path, GOOD)
    client = app_client(lessons_dir=tmp_path)
    ids = [lesson["id"] for lesson in client.get("/api/lessons").json()]
    assert ids[-1] == "mine" and len(ids) == len(load_lessons(shipped_dir())) + 1
    assert client.get("/api/lessons/mine").json()["programs"][0]["notes"] == "Say this."
    assert client.get("/api/lessons/nope").status_code == 404


def test_a_broken_lessons_directory_stops_the_server(tmp_path: Path,
                                                      app_client: Callable[..., Any]) -> None:
    write(tmp_path, "id = 'x'\n")
    with pytest.raises(LessonError, match="title: Field required"):
        app_client(lessons_dir=tmp_path)
