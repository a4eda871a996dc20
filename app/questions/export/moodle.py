"""Moodle XML (question/format/xml): numerical, multichoice, matching and ordering
questions (qtype_ordering, in Moodle's core since 4.4), one per part, in one category."""

from __future__ import annotations

import xml.etree.ElementTree as ET

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


def _text(parent: ET.Element, tag: str, value: str, fmt: str | None = "html") -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = value
    return el


def moodle_xml(questions: list[Question]) -> str:
    quiz = ET.Element("quiz")
    category = ET.SubElement(quiz, "question", type="category")
    _text(category, "category", f"$course$/top/{CATEGORY}", None)
    for item in items(questions):
        quiz.append(_question(item))
    ET.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, "unicode") + "\n"


def _question(item: Item) -> ET.Element:
    part = item.part
    kind = lms_type(part, has_ordering=True)
    q = ET.Element("question", type=kind if kind != "multianswer" else "multichoice")
    _text(q, "name", item.name, None)
    _text(q, "questiontext", question_html(item) + choice_prompt_suffix(part))
    _text(q, "generalfeedback", feedback_html(item))
    ET.SubElement(q, "defaultgrade").text = "1"
    ET.SubElement(q, "penalty").text = "0"
    ET.SubElement(q, "hidden").text = "0"
    if isinstance(part, NumericPart):
        answer = ET.SubElement(q, "answer", fraction="100")
        ET.SubElement(answer, "text").text = repr(part.answer)
        ET.SubElement(answer, "tolerance").text = repr(part.tolerance)
        _text(answer, "feedback", "")
    elif isinstance(part, OrderPart):
        for tag, value in (("layouttype", "VERTICAL"), ("selecttype", "ALL"),
                           ("selectcount", str(len(part.items))),
                           ("gradingtype", "RELATIVE_ALL_PREVIOUS_AND_NEXT"),
                           ("showgrading", "SHOW")):
            ET.SubElement(q, tag).text = value
        texts = {i.id: i.text for i in part.items}
        for position, item_id in enumerate(part.answer, 1):
            answer = ET.SubElement(q, "answer", fraction=str(position), format="html")
            ET.SubElement(answer, "text").text = texts[item_id]
    elif kind == "matching":
        assert isinstance(part, MatchPart)
        _matching(q, part)
    else:
        assert isinstance(part, (ChoicePart, MatchPart))
        _choice(q, part)
    return q


def _choice(q: ET.Element, part: ChoicePart | MatchPart) -> None:
    options, right = as_choice(part)
    single = not (isinstance(part, ChoicePart) and part.multiple)
    ET.SubElement(q, "single").text = "true" if single else "false"
    ET.SubElement(q, "shuffleanswers").text = "true"
    ET.SubElement(q, "answernumbering").text = "abc"
    for o in options:
        good = o.id in right
        value = "100" if single and good else "0" if single else (
            fraction(len(right)) if good else "-" + fraction(len(right)))
        answer = ET.SubElement(q, "answer", fraction=value, format="html")
        ET.SubElement(answer, "text").text = o.text
        _text(answer, "feedback", "")


def _matching(q: ET.Element, part: MatchPart) -> None:
    stems, options, answer = as_matching(part)
    ET.SubElement(q, "shuffleanswers").text = "true"
    texts = {o.id: o.text for o in options}
    for stem in stems:
        sub = _text(q, "subquestion", stem.text)
        ET.SubElement(ET.SubElement(sub, "answer"), "text").text = texts[answer[stem.id]]
    used = set(answer.values())
    for o in options:                  # the options no stem takes: distractors
        if o.id not in used:
            sub = _text(q, "subquestion", "")
            ET.SubElement(ET.SubElement(sub, "answer"), "text").text = o.text
