"""Exports of a set of questions: the same variants and answers in every format. `render`
gives the text (or the zip, for QTI written to a file) and its media type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import orjson

from app.questions.export.gift import gift
from app.questions.export.moodle import moodle_xml
from app.questions.export.qti import assessment_xml, qti_zip
from app.questions.model import Question

Format = Literal["moodle-xml", "gift", "qti", "json"]
FORMATS: tuple[Format, ...] = ("moodle-xml", "gift", "qti", "json")


@dataclass(frozen=True)
class Rendered:
    body: bytes
    media_type: str
    filename: str


def render(questions: list[Question], fmt: Format, name: str, packaged: bool = True
           ) -> Rendered:
    """`packaged`: QTI as the zip Canvas imports (else the assessment XML alone)."""
    if fmt == "moodle-xml":
        return Rendered(moodle_xml(questions).encode(), "application/xml", f"{name}.moodle.xml")
    if fmt == "gift":
        return Rendered(gift(questions).encode(), "text/plain; charset=utf-8", f"{name}.gift.txt")
    if fmt == "qti":
        if packaged:
            return Rendered(qti_zip(questions), "application/zip", f"{name}.qti.zip")
        return Rendered(assessment_xml(questions).encode(), "application/xml", f"{name}.qti.xml")
    body = orjson.dumps([q.model_dump(mode="json") for q in questions],
                        option=orjson.OPT_INDENT_2)
    return Rendered(body + b"\n", "application/json", f"{name}.json")


__all__ = ["FORMATS", "Format", "Rendered", "render"]
