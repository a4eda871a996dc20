"""Round trips: every export is read back with a parser for its format and must give the
same questions and answers as the bank.

Moodle XML and QTI are read with an XML parser and checked for the structure Moodle's
and Canvas's importers require. No Python GIFT parser package is well kept (pygiftparser's
last release is from 2017; pygiftparserrgmf 0.0.5, from 2022, installs a top-level `tests`
package). npm's gift-pegjs is the parser that GIFT editors use, but it would bring a Node
toolchain into the Python test suite and CI for this one check; so GIFT is read by the
strict reader below, written from Moodle's own importer (question/format/gift/format.php):
its escapes, its name, format and feedback markers.
"""

from __future__ import annotations

import html
import io
import re
import xml.etree.ElementTree as ET
import zipfile
from typing import Any

import pytest

from app import questions as bank
from app.questions.export import render
from app.questions.model import ChoicePart, MatchPart, NumericPart, OrderPart, Part, Question

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"
Canon = dict[str, tuple[Any, ...]]


def questions() -> list[Question]:
    """Two sets covering every available kind and every part type."""
    return bank.practice_set(11, 14) + bank.practice_set(12, 7)


def ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def expected(qs: list[Question], ordering: bool) -> Canon:
    """What each LMS item must say, from the bank's own questions."""
    out: Canon = {}
    for q in qs:
        for i, p in enumerate(q.parts):
            out[f"{q.id} ({chr(ord('a') + i)})"] = _expect(p, ordering)
    return out


def _expect(p: Part, ordering: bool) -> tuple[Any, ...]:
    if isinstance(p, NumericPart):
        return ("numerical", p.answer, p.tolerance)
    if isinstance(p, OrderPart):
        texts = {i.id: i.text for i in p.items}
        if ordering:
            return ("ordering", [texts[a] for a in p.answer])
        return ("matching", {texts[a]: f"pops {ordinal(k)}" for k, a in enumerate(p.answer, 1)})
    if isinstance(p, ChoicePart):
        texts = {o.id: o.text for o in p.options}
        kind = "multianswer" if p.multiple else "multichoice"
        return (kind, sorted(texts[a] for a in p.answer), sorted(texts.values()))
    assert isinstance(p, MatchPart)
    options = {o.id: o.text for o in p.options}
    if len(p.stems) == 1:
        return ("multichoice", [options[p.answer[p.stems[0].id]]], sorted(options.values()))
    stems = {s.id: s.text for s in p.stems}
    return ("matching", {stems[s]: options[o] for s, o in p.answer.items()})


def test_every_part_type_is_exported() -> None:
    kinds = {v[0] for v in expected(questions(), ordering=True).values()}
    assert kinds == {"numerical", "ordering", "multichoice", "multianswer", "matching"}


# -- Moodle XML ------------------------------------------------------------------------------

def read_moodle(text: str) -> tuple[Canon, dict[str, str]]:
    root = ET.fromstring(text)
    assert root.tag == "quiz"
    first, *rest = list(root)
    assert first.get("type") == "category"
    assert first.findtext("category/text") == "$course$/top/Autograd Lab"
    out: Canon = {}
    bodies: dict[str, str] = {}
    for q in rest:
        assert q.tag == "question"
        name = q.findtext("name/text")
        body = q.find("questiontext")
        assert name and body is not None and body.get("format") == "html"
        assert q.findtext("generalfeedback/text")
        bodies[name] = body.findtext("text") or ""
        out[name] = _moodle_item(q)
    return out, bodies


def _moodle_item(q: ET.Element) -> tuple[Any, ...]:
    kind = q.get("type")
    answers = q.findall("answer")
    if kind == "numerical":
        (a,) = answers
        assert a.get("fraction") == "100"
        return ("numerical", float(a.findtext("text") or ""), float(a.findtext("tolerance") or ""))
    if kind == "ordering":
        for tag in ("layouttype", "selecttype", "selectcount", "gradingtype", "showgrading"):
            assert q.findtext(tag), tag
        assert q.findtext("selecttype") == "ALL"
        assert [a.get("fraction") for a in answers] == [str(i) for i in range(1, len(answers) + 1)]
        return ("ordering", [a.findtext("text") for a in answers])
    if kind == "matching":
        subs = [(s.findtext("text") or "", s.findtext("answer/text") or "")
                for s in q.findall("subquestion")]
        real = {stem: answer for stem, answer in subs if stem}
        assert len(real) >= 2 and len({a for _, a in subs}) >= 3
        return ("matching", real)
    assert kind == "multichoice"
    single = q.findtext("single") == "true"
    texts = sorted(a.findtext("text") or "" for a in answers)
    right = sorted(a.findtext("text") or "" for a in answers if float(a.get("fraction", 0)) > 0)
    total = sum(float(a.get("fraction", 0)) for a in answers if float(a.get("fraction", 0)) > 0)
    assert total == pytest.approx(100, abs=1e-3)
    return ("multichoice" if single else "multianswer", right, texts)


def test_moodle_xml_round_trip() -> None:
    qs = questions()
    got, bodies = read_moodle(render(qs, "moodle-xml", "t").body.decode())
    assert got == expected(qs, ordering=True)
    for q in qs:
        assert html.escape(q.program.rstrip()) in bodies[f"{q.id} (a)"]


# -- GIFT ------------------------------------------------------------------------------------

ESCAPES = {"\\\\": "\\", "\\~": "~", "\\=": "=", "\\#": "#", "\\{": "{", "\\}": "}",
           "\\:": ":", "\\n": "\n"}


def unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        pair = text[i:i + 2]
        if pair in ESCAPES:
            out.append(ESCAPES[pair])
            i += 2
            continue
        assert text[i] not in "~={}#:\\", f"unescaped {text[i]!r}"
        out.append(text[i])
        i += 1
    return "".join(out)


def _split_unescaped(text: str, mark: str) -> list[str]:
    return re.split(r"(?<!\\)" + re.escape(mark), text)


def read_gift(text: str) -> tuple[Canon, dict[str, str]]:
    blocks = text.strip().split("\n\n")
    assert blocks[0] == "$CATEGORY: $course$/top/Autograd Lab"
    out: Canon = {}
    bodies: dict[str, str] = {}
    for block in blocks[1:]:
        m = re.fullmatch(r"::((?:[^:\\]|\\.)+)::\[html\]((?:[^{}\\]|\\.)*)\{\n(.*)\n\}", block,
                         re.S)
        assert m, block[:200]
        name, body, answers = unescape(m[1]), unescape(m[2]), m[3]
        assert "####[html]" in answers
        answers, feedback = answers.rsplit("\n####[html]", 1)
        assert unescape(feedback)
        bodies[name] = body
        out[name] = _gift_answers(answers)
    return out, bodies


def _gift_answers(text: str) -> tuple[Any, ...]:
    if text.startswith("#"):
        value, tolerance = _split_unescaped(text[1:], ":")
        return ("numerical", float(value), float(tolerance))
    lines = text.split("\n")
    if all(line.startswith("=") and " -> " in line for line in lines):
        pairs = [line[1:].split(" -> ") for line in lines]
        assert len(pairs) >= 2
        return ("matching", {unescape(a): unescape(b) for a, b in pairs})
    if all(line.startswith("~%") for line in lines):
        weights = [re.fullmatch(r"~%(-?[0-9.]+)%(.*)", line, re.S) for line in lines]
        assert all(weights)
        good = [(float(w[1]), unescape(w[2])) for w in weights if w and float(w[1]) > 0]
        assert sum(g for g, _ in good) == pytest.approx(100, abs=1e-3)
        return ("multianswer", sorted(t for _, t in good),
                sorted(unescape(w[2]) for w in weights if w))
    assert all(line[0] in "=~" for line in lines)
    right = [unescape(line[1:]) for line in lines if line[0] == "="]
    assert len(right) == 1
    return ("multichoice", right, sorted(unescape(line[1:]) for line in lines))


def test_gift_round_trip() -> None:
    qs = questions()
    got, bodies = read_gift(render(qs, "gift", "t").body.decode())
    assert got == expected(qs, ordering=False)
    for q in qs:
        assert html.escape(q.program.rstrip()) in bodies[f"{q.id} (a)"]


def test_gift_reader_is_strict() -> None:
    with pytest.raises(AssertionError):
        unescape("a = b")
    with pytest.raises(AssertionError):
        read_gift("$CATEGORY: $course$/top/Autograd Lab\n\n::x::[html]text {#1:0}")


# -- QTI 1.2 (Canvas) ------------------------------------------------------------------------

def read_qti(data: bytes) -> tuple[Canon, dict[str, str]]:
    z = zipfile.ZipFile(io.BytesIO(data))
    manifest = ET.fromstring(z.read("imsmanifest.xml"))
    assert manifest.tag == f"{CP}manifest"
    (quiz,) = [r for r in manifest.iter(f"{CP}resource") if r.get("type") == "imsqti_xmlv1p2"]
    href = quiz.find(f"{CP}file")
    assert href is not None
    for r in manifest.iter(f"{CP}file"):
        assert r.get("href") in z.namelist()
    root = ET.fromstring(z.read(href.get("href") or ""))
    assert root.tag == f"{QTI}questestinterop"
    section = root.find(f"{QTI}assessment/{QTI}section")
    assert section is not None
    out: Canon = {}
    bodies: dict[str, str] = {}
    for item in section.findall(f"{QTI}item"):
        name = item.get("title") or ""
        meta = {f.findtext(f"{QTI}fieldlabel"): f.findtext(f"{QTI}fieldentry")
                for f in item.iter(f"{QTI}qtimetadatafield")}
        bodies[name] = item.findtext(f"{QTI}presentation/{QTI}material/{QTI}mattext") or ""
        out[name] = _qti_item(item, meta["question_type"] or "")
    return out, bodies


def _labels(response: ET.Element) -> dict[str, str]:
    return {lab.get("ident") or "": lab.findtext(f"{QTI}material/{QTI}mattext") or ""
            for lab in response.iter(f"{QTI}response_label")}


def _qti_item(item: ET.Element, kind: str) -> tuple[Any, ...]:
    presentation = item.find(f"{QTI}presentation")
    processing = item.find(f"{QTI}resprocessing")
    assert presentation is not None and processing is not None
    assert processing.find(f"{QTI}outcomes/{QTI}decvar") is not None
    if kind == "numerical_question":
        condition = processing.find(f"{QTI}respcondition/{QTI}conditionvar/{QTI}or")
        assert condition is not None
        exact = float(condition.findtext(f"{QTI}varequal") or "")
        low = float(condition.findtext(f"{QTI}and/{QTI}vargte") or "")
        high = float(condition.findtext(f"{QTI}and/{QTI}varlte") or "")
        assert low <= exact <= high
        return ("numerical", exact, pytest.approx((high - low) / 2, rel=1e-9, abs=1e-15))
    if kind == "matching_question":
        chosen = {}
        for c in processing.findall(f"{QTI}respcondition"):
            v = c.find(f"{QTI}conditionvar/{QTI}varequal")
            assert v is not None and c.findtext(f"{QTI}setvar")
            chosen[v.get("respident")] = v.text or ""
        pairs = {}
        for response in presentation.findall(f"{QTI}response_lid"):
            stem = response.findtext(f"{QTI}material/{QTI}mattext") or ""
            pairs[stem] = _labels(response)[chosen[response.get("ident")]]
        return ("matching", pairs)
    (response,) = presentation.findall(f"{QTI}response_lid")
    labels = _labels(response)
    test = processing.find(f"{QTI}respcondition/{QTI}conditionvar")
    assert test is not None
    if kind == "multiple_answers_question":
        assert response.get("rcardinality") == "Multiple"
        right = [v.text or "" for v in test.findall(f"{QTI}and/{QTI}varequal")]
        wrong = [v.text or "" for v in test.findall(f"{QTI}and/{QTI}not/{QTI}varequal")]
        assert sorted(right + wrong) == sorted(labels)
        return ("multianswer", sorted(labels[r] for r in right), sorted(labels.values()))
    assert kind == "multiple_choice_question"
    right = [v.text or "" for v in test.iter(f"{QTI}varequal")]
    return ("multichoice", sorted(labels[r] for r in right), sorted(labels.values()))


def test_qti_round_trip() -> None:
    qs = questions()
    got, bodies = read_qti(render(qs, "qti", "t").body)
    assert got == expected(qs, ordering=False)
    for q in qs:
        assert html.escape(q.program.rstrip()) in bodies[f"{q.id} (a)"]


def test_qti_without_a_file_is_the_assessment_alone() -> None:
    qs = bank.practice_set(3, 3)
    text = render(qs, "qti", "t", packaged=False).body
    assert ET.fromstring(text).tag == f"{QTI}questestinterop"
