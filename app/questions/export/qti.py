"""QTI 1.2 as Canvas imports it (Settings → Import course content → QTI .zip file): a zip
with imsmanifest.xml, the assessment and Canvas's assessment_meta.xml. Items are Canvas's
numerical, multiple choice, multiple answers and matching questions; QTI 1.2 as Canvas
reads it has no ordering question, so an order is a matching of nodes to positions."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from itertools import count

from app.questions.export.items import (
    CATEGORY,
    Item,
    as_choice,
    as_matching,
    choice_prompt_suffix,
    feedback_html,
    items,
    lms_type,
    question_html,
)
from app.questions.model import ChoicePart, MatchPart, NumericPart, OrderPart, Question

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
TYPES = {"numerical": "numerical_question", "multichoice": "multiple_choice_question",
         "multianswer": "multiple_answers_question", "matching": "matching_question"}


def ident(questions: list[Question]) -> str:
    return "autograd-lab-" + "-".join(sorted({str(q.seed) for q in questions}))[:60]


def assessment_xml(questions: list[Question]) -> str:
    ET.register_namespace("", QTI_NS)
    root = ET.Element(f"{{{QTI_NS}}}questestinterop")
    assessment = ET.SubElement(root, "assessment", ident=ident(questions), title=CATEGORY)
    section = ET.SubElement(assessment, "section", ident="root_section")
    ids = count(1001)
    for item in items(questions):
        section.append(_item(item, ids))
    _qualify(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _qualify(root: ET.Element) -> None:
    for el in root.iter():
        if not el.tag.startswith("{"):
            el.tag = f"{{{QTI_NS}}}{el.tag}"


def _mattext(parent: ET.Element, text: str, html: bool = True) -> None:
    material = ET.SubElement(parent, "material")
    ET.SubElement(material, "mattext", texttype="text/html" if html else "text/plain").text = text


def _item(item: Item, ids: count[int]) -> ET.Element:
    part = item.part
    kind = lms_type(part, has_ordering=False)
    el = ET.Element("item", ident=f"i{next(ids)}", title=item.name)
    meta = ET.SubElement(ET.SubElement(el, "itemmetadata"), "qtimetadata")
    for label, entry in (("question_type", TYPES[kind]), ("points_possible", "1.0")):
        field = ET.SubElement(meta, "qtimetadatafield")
        ET.SubElement(field, "fieldlabel").text = label
        ET.SubElement(field, "fieldentry").text = entry
    presentation = ET.SubElement(el, "presentation")
    _mattext(presentation, question_html(item) + choice_prompt_suffix(part))
    processing = ET.SubElement(el, "resprocessing")
    outcomes = ET.SubElement(processing, "outcomes")
    ET.SubElement(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE",
                  vartype="Decimal")
    if isinstance(part, NumericPart):
        _numerical(presentation, processing, part)
    elif kind == "matching":
        assert isinstance(part, (OrderPart, MatchPart))
        _matching(presentation, processing, part, ids)
    else:
        assert isinstance(part, (ChoicePart, MatchPart))
        _choice(presentation, processing, part, ids)
    feedback = ET.SubElement(el, "itemfeedback", ident="general_fb")
    _mattext(ET.SubElement(feedback, "flow_mat"), feedback_html(item))
    return el


def _numerical(presentation: ET.Element, processing: ET.Element, part: NumericPart) -> None:
    response = ET.SubElement(presentation, "response_str", ident="response1",
                             rcardinality="Single")
    ET.SubElement(ET.SubElement(response, "render_fib", fibtype="Decimal"), "response_label",
                  ident="answer1")
    condition = ET.SubElement(processing, "respcondition", {"continue": "No"})
    either = ET.SubElement(ET.SubElement(condition, "conditionvar"), "or")
    ET.SubElement(either, "varequal", respident="response1").text = repr(part.answer)
    both = ET.SubElement(either, "and")
    ET.SubElement(both, "vargte", respident="response1").text = repr(part.answer - part.tolerance)
    ET.SubElement(both, "varlte", respident="response1").text = repr(part.answer + part.tolerance)
    ET.SubElement(condition, "setvar", action="Set", varname="SCORE").text = "100"


def _choice(presentation: ET.Element, processing: ET.Element, part: ChoicePart | MatchPart,
            ids: count[int]) -> None:
    options, right = as_choice(part)
    multiple = isinstance(part, ChoicePart) and part.multiple
    response = ET.SubElement(presentation, "response_lid", ident="response1",
                             rcardinality="Multiple" if multiple else "Single")
    render = ET.SubElement(response, "render_choice")
    label = {}
    for o in options:
        label[o.id] = str(next(ids))
        _mattext(ET.SubElement(render, "response_label", ident=label[o.id]), o.text, html=False)
    condition = ET.SubElement(processing, "respcondition", {"continue": "No"})
    test = ET.SubElement(ET.SubElement(condition, "conditionvar"), "and" if multiple else "or")
    for o in options:
        if o.id in right:
            ET.SubElement(test, "varequal", respident="response1").text = label[o.id]
        elif multiple:
            ET.SubElement(ET.SubElement(test, "not"), "varequal",
                          respident="response1").text = label[o.id]
    ET.SubElement(condition, "setvar", action="Set", varname="SCORE").text = "100"


def _matching(presentation: ET.Element, processing: ET.Element, part: OrderPart | MatchPart,
              ids: count[int]) -> None:
    stems, options, answer = as_matching(part)
    label = {o.id: str(next(ids)) for o in options}
    share = f"{100 / len(stems):.2f}"
    for stem in stems:
        respident = f"response_{next(ids)}"
        response = ET.SubElement(presentation, "response_lid", ident=respident)
        _mattext(response, stem.text, html=False)
        render = ET.SubElement(response, "render_choice")
        for o in options:
            _mattext(ET.SubElement(render, "response_label", ident=label[o.id]), o.text,
                     html=False)
        condition = ET.SubElement(processing, "respcondition")
        ET.SubElement(ET.SubElement(condition, "conditionvar"), "varequal",
                      respident=respident).text = label[answer[stem.id]]
        ET.SubElement(condition, "setvar", varname="SCORE", action="Add").text = share


def manifest_xml(questions: list[Question]) -> str:
    name = ident(questions)
    ET.register_namespace("", CP_NS)
    root = ET.Element(f"{{{CP_NS}}}manifest", identifier=f"{name}-manifest")
    meta = ET.SubElement(root, f"{{{CP_NS}}}metadata")
    ET.SubElement(meta, f"{{{CP_NS}}}schema").text = "IMS Content"
    ET.SubElement(meta, f"{{{CP_NS}}}schemaversion").text = "1.1.3"
    ET.SubElement(root, f"{{{CP_NS}}}organizations")
    resources = ET.SubElement(root, f"{{{CP_NS}}}resources")
    quiz = ET.SubElement(resources, f"{{{CP_NS}}}resource", identifier=name,
                         type="imsqti_xmlv1p2")
    ET.SubElement(quiz, f"{{{CP_NS}}}file", href=f"{name}/{name}.xml")
    ET.SubElement(quiz, f"{{{CP_NS}}}dependency", identifierref=f"{name}-meta")
    extra = ET.SubElement(resources, f"{{{CP_NS}}}resource", identifier=f"{name}-meta",
                          type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
                          href=f"{name}/assessment_meta.xml")
    ET.SubElement(extra, f"{{{CP_NS}}}file", href=f"{name}/assessment_meta.xml")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def meta_xml(questions: list[Question]) -> str:
    ET.register_namespace("", CANVAS_NS)
    root = ET.Element(f"{{{CANVAS_NS}}}quiz", identifier=ident(questions))
    for tag, value in (("title", CATEGORY), ("description", "Self-check questions from "
                       "Autograd Lab: every answer computed by its engine."),
                       ("shuffle_answers", "false"), ("quiz_type", "practice_quiz"),
                       ("points_possible", f"{len(items(questions)):.1f}")):
        ET.SubElement(root, f"{{{CANVAS_NS}}}{tag}").text = value
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# Every entry carries this time rather than the clock's, so that one set is one file:
# the download and `questions export -o` give the same bytes, today and next term.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def qti_zip(questions: list[Question]) -> bytes:
    name = ident(questions)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path, text in (("imsmanifest.xml", manifest_xml(questions)),
                           (f"{name}/{name}.xml", assessment_xml(questions)),
                           (f"{name}/assessment_meta.xml", meta_xml(questions))):
            z.writestr(zipfile.ZipInfo(path, ZIP_TIME), text, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()
