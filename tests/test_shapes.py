"""The fast parse (app/language/shapes.py) gives exactly what the full parse gives, and is taken.

`parse(source, fast=True)` translates each distinct line shape once and leaves anything it
is unsure of to the full parse. For every program the two must agree: the same Program
(every statement, span, name, number and flag) or the same error (type, message, line,
column, end). Hypothesis draws valid programs from tests/program_strategy.py and wrecks
them line by line with hostile text; `HYPOTHESIS_PROFILE=ci` (or CI=1) makes the examples
the same on every run, and `LAB_SHAPES_EXAMPLES=N` asks for more.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.language import shapes
from app.language.parse import SourceError, parse, translate_line
from app.language.program import Program
from app.limits import DEFAULT_LIMITS, Limits
from app.presets import PRESETS
from bench.programs import chain, limits_for, realistic
from tests.matching import load_cases
from tests.program_strategy import Draw, programs

# Wrecked programs such as `q = 1if w` make Python's own parser warn; that is not news here.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("HYPOTHESIS_PROFILE") == "ci" or os.environ.get("CI"):
    settings.load_profile("ci")
EXAMPLES = int(os.environ.get("LAB_SHAPES_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LIMITS = [DEFAULT_LIMITS, Limits(max_depth=2), Limits(max_number_bits=4),
          Limits(max_elements=2), Limits(max_lines=6, max_source_bytes=200)]

# Text that a lab program might contain by mistake or by malice: each is inserted as a
# line, in place of a line, or inside a line.
HOSTILE_LINES = [
    "", "   ", "# a comment", "   # indented comment", "import torch", "import os",
    "import torch as torch", "import numpy as torch", "from torch import tensor",
    "w.grad = None", "x.grad = None", "(w).grad = None", "w.grad = 0",
    "loss.backward()", "(loss).backward()", "(a + b).backward()",
    "loss.backward(retain_graph=True)",
    "loss.backward(create_graph=True, retain_graph=False)", "loss.backward(inputs=[w])",
    "loss.backward(None, True)", "loss.backward(gradient=torch.tensor([1.0, 2.0]))",
    "t = torch.tensor([1.0, 2.0], requires_grad=True)", "t = torch.tensor([[1.0], [2.0]])",
    "t = torch.tensor([[1.0, -2], [3e1, .5]], requires_grad=False)", "t = torch.tensor(2)",
    "t = torch.tensor(-(1.5))", "t = torch.tensor([1.0] * 3)", "t = torch.tensor((1.0, 2.0))",
    "q = -(2.0)", "q = +-2", "q = - - 3.5", "q = (3)", "q = -0", "q = -0.0", "q = 1.e5", "q = 00",
    "q = 0e0", "q = 9" + "9" * 90, "q = 2 ** 300", "q = w ** -1", "q = (w)", "q = ((w))",
    "q = w.tanh().exp()", "q = torch.relu(w) + w.abs()", "q = w.sum", "q = w.__class__",
    "q = a.b.c()", "q = w.tanh(1)", "q = torch.sum(w, w)", "q = torch.tanh", "q = torch.os",
    "q = print(w)", "q = lambda: w", "q = w if w else w", "q = True", "q = None", "q = w == w",
    "q = 1j", "q = 0x10", "q = 1_000", "q = 01", "q = w; r = w", "q = w:", "q = 'w'",
    "q = \"w\"  # it's", "q = w  # it's \"fine\"", "q = w \\", "q = w\t* 2", "q = w\r",
    "q = w\x0c", "q = w \u00d7 2", "q = w @ w", "q = w % 2", "q = w < 2", "q = (w",
    "q = w)", "q = [w", "q = w]", "q = (w,)", "q = [w]", "q = {}", "q = w[0]",
    "torch = 2.0", "__x = 1.0", "q = __x", "_x = 1.0", "x_ = w", "q = undefined_name",
    "q = q", "match = w", "_ = w", "case = 1.0", "if w:", "    q = w", "q = r = w",
    "q += w", "q: float = 1.0", "del w", "pass", "w", "w * 2", "q = w.backward()",
]
HOSTILE_TOKENS = [
    " ", "  ", "(", ")", "[", "]", ",", ".", "=", "==", "**", "*", "-", "+", "/", "#",
    "# x", "lambda", "if", "True", "None", "not", "and", "torch", "torch.", "1j", "0x10",
    "1_000", "01", "1.e5", ".5", "1e-3", "2", "2.5", "99999999999999999999999999999999999999"
    "9999999999999999999999999999999999999999999999999999", "__class__", ".__class__",
    "__x", "_", "w", "undefined", "'", '"', ";", ":", "\\", "\t", "\r", "\x0c", "\x0b",
    "\u00e9", "@", "%", "<", "!", "$", "?", "{", "}", ".backward()", ".grad", ".tanh()",
    "retain_graph=True", "requires_grad=True", "\n", "\n  ", "\n(", ")\n",
]


@st.composite
def mutated_programs(draw: Draw) -> str:
    """A valid program, then one to three edits: a hostile line inserted or replacing a
    line, a hostile token inside a line, two lines swapped, a line indented."""
    lines: list[str] = draw(programs()).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines)))
        edit = draw(st.sampled_from(["insert", "replace", "token", "token", "swap", "indent"]))
        if edit == "insert" or not lines:
            lines.insert(at, draw(st.sampled_from(HOSTILE_LINES)))
            continue
        at = min(at, len(lines) - 1)
        line = lines[at]
        if edit == "replace":
            lines[at] = draw(st.sampled_from(HOSTILE_LINES))
        elif edit == "token":
            col = draw(st.integers(0, len(line)))
            lines[at] = line[:col] + draw(st.sampled_from(HOSTILE_TOKENS)) + line[col:]
        elif edit == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], line
        else:
            lines[at] = " " + line
    end: str = draw(st.sampled_from(["\n", "", "\n\n", "  \n"]))
    return "\n".join(lines) + end


def outcome(source: str, limits: Limits, fast: bool) -> Program | tuple[Any, ...]:
    """What parse makes of the source: the Program, or the error it raises, field by field."""
    try:
        return parse(source, limits, fast=fast)
    except SourceError as e:
        return (e.type, e.message, e.line, e.col, e.end_line, e.end_col)
    except Exception as e:        # not expected; the two paths must still agree
        return (type(e).__name__, str(e))


def taken(source: str, limits: Limits = DEFAULT_LIMITS) -> bool:
    """Whether the fast path answered by itself, without the full parse."""
    def translate(text: str, opening: bool) -> Any:
        return translate_line(text, opening, limits)
    return shapes.parse_by_shapes(source, limits, translate) is not None


def assert_same(source: str, limits: Limits = DEFAULT_LIMITS) -> bool:
    """Both paths agree; returns whether the source is a valid program."""
    fast, full = outcome(source, limits, True), outcome(source, limits, False)
    assert fast == full, f"{source!r}\nfast: {fast}\nfull: {full}"
    return isinstance(full, Program)


@FUZZ
@given(programs(), st.sampled_from(LIMITS))
def test_valid_programs_parse_the_same_and_fast(source: str, limits: Limits) -> None:
    if assert_same(source, limits) and limits == DEFAULT_LIMITS:
        assert taken(source), source


@FUZZ
@given(mutated_programs(), st.sampled_from(LIMITS))
def test_wrecked_programs_parse_the_same(source: str, limits: Limits) -> None:
    assert_same(source, limits)


def test_every_ascii_character_anywhere_in_a_small_program() -> None:
    """Each character 1-127 inserted at, or in place of, each position; and each deletion."""
    base = "w = 2.0\ny = torch.tanh(w) * -3e1  # c\ny.backward()\n"
    for pos in range(len(base) + 1):
        assert_same(base[:pos] + base[pos + 1:])
        for c in map(chr, range(1, 128)):
            assert_same(base[:pos] + c + base[pos:])
            assert_same(base[:pos] + c + base[pos + 1:])


@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_each_hostile_line_in_the_middle_of_a_program(line: str) -> None:
    for source in (f"w = 2.0\n{line}\nloss = w * 3\n", f"a = 1.0\nb = 2.0\n{line}\n",
                   f"import torch\n{line}\n# end\n", f"w = 2.0\nb = w\n{line}"):
        for limits in LIMITS:
            assert_same(source, limits)


EDGE_CASES = {
    "opening-block": "a = 1.0\nb = -2\nimport torch\nt = torch.tensor(1.0)\nc = 3.0\n"
                     "y = a * b\nd = 4.0\ny.backward()\n",
    "numbers-in-the-body": "a = 1.0\ny = a * 2\nk = -3\nz = y * k + 1.e5 - .5 + 00 * 0e0\n",
    "clear-grad": "w = 2.0\ny = w * w\ny.backward(retain_graph=True)\nw.grad = None\n"
                  "y.backward()\n",
    "comments-and-blanks": "# leaves\n\nw = 2.0  # it's a leaf\n   \n  # indented comment\n"
                           "y = w*w# no spaces\n\n",
    "spacing": "w=2.0\ny = ( w+w )*w\nz=torch . tanh(y)\nz . backward( )\n",
    "same-layout-other-digits": "a1 = 1.5\na2 = 2.5\nb1 = a1 * a2\nb2 = a2 * a1\nb3 = b1 + b2\n",
    "reassigned": "w = 2.0\nw = w * 3\nw = w.exp()\n",
    "no-final-newline": "w = 2.0\ny = w * 3",
    "nested-data": "t = torch.tensor([[1.0, 2.0], [3.0, -4.5]], requires_grad=True)\ny = t.sum()\n",
    "gradient": "t = torch.tensor([1.0, 2.0], requires_grad=True)\ny = t * 2\n"
                "y.backward(gradient=torch.tensor([1.0, 1.0]))\n",
    "positional-backward-args": "w = 2.0\ny = w * w\ny.backward(None, True, False)\n",
    "soft-keywords-as-names": "match = 2.0\n_ = match * 2\ncase = _ + match\n",
}


@pytest.mark.parametrize("line", ["y = w * 01", "y = w * 00", "y = w * 0100", "y = w * 0000",
                                  "y = w ** 09", "t = torch.tensor([01, 2.0])"])
def test_a_mask_hides_a_leading_zero(line: str) -> None:
    """Every digit masks as 1, so `y = w * 10` teaches the mask of `y = w * 01`, which is a
    SyntaxError (`00` is 0): the same result as the full parse, error and position alike."""
    for teacher in ("y = w * 10", "y = w * 1000", "y = w ** 19", "t = torch.tensor([11, 2.0])"):
        for limits in LIMITS:
            assert_same(f"w = 2.0\nz = w * 3\n{teacher}\n{line}\n", limits)
            assert_same(f"w = 2.0\nz = w * 3\n{teacher}\nz = w\n{line}\n{teacher}\n", limits)


@pytest.mark.parametrize("source", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_valid_edge_cases_take_the_fast_path(source: str) -> None:
    assert_same(source)
    assert taken(source), source


def test_the_benchmark_program_takes_the_fast_path_and_parses_few_shapes() -> None:
    source = realistic(10_000)
    limits = limits_for(source)
    parsed: list[tuple[str, bool]] = []

    def translate(text: str, opening: bool) -> Any:
        parsed.append((text, opening))
        return translate_line(text, opening, limits)

    shapes.clear_cache()
    program = shapes.parse_by_shapes(source, limits, translate)
    assert program is not None
    assert program == parse(source, limits, fast=False)
    assert len(parsed) == len(set(parsed)) <= 20        # each shape parsed once
    assert shapes.parse_by_shapes(source, limits, translate) == program
    assert len(parsed) <= 20                            # and never again


@pytest.mark.parametrize("source", [chain(500), realistic(300, seed=7)], ids=["chain", "seed7"])
def test_generated_programs_take_the_fast_path(source: str) -> None:
    assert_same(source, limits_for(source))
    assert taken(source, limits_for(source))


def test_presets_and_conformance_programs_take_the_fast_path() -> None:
    sources = [p.source for p in PRESETS] + [c["source"] for c in load_cases()]
    for source in sources:
        if assert_same(source):
            assert taken(source), source


def test_threads_sharing_the_tables_get_the_same_programs() -> None:
    """The server parses in a thread pool; the tables are shared and may be emptied."""
    sources = [realistic(200, seed=seed) for seed in range(8)] + list(EDGE_CASES.values())
    expected = [parse(source, limits_for(source), fast=False) for source in sources]

    def parse_all(_: int) -> list[Program]:
        return [parse(source, limits_for(source)) for source in sources]

    shapes.clear_cache()
    with ThreadPoolExecutor(4) as pool:
        for programs_parsed in pool.map(parse_all, range(8)):
            assert programs_parsed == expected


def test_unsure_lines_fall_back_to_the_full_parse() -> None:
    for source in ["w = 2.0\n(w * 2).backward()\n", "w = 2.0\n  y = w\n",
                   "w = 2.0\ny = w \u00d7 2\n", "w = 2.0\ny = z\n", "w = 2.0\r\ny = w\n",
                   "w = 2.0\ny = w * " + "9" * 80 + "\n", "__w = 2.0\n"]:
        assert not taken(source), source
        assert_same(source)


def test_full_tables_are_emptied_and_refilled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shapes, "_MAX_ENTRIES", 3)
    monkeypatch.setattr(shapes, "_MAX_LIMITS", 1)
    shapes.clear_cache()
    for limits in LIMITS[:2]:
        for source in (realistic(100), EDGE_CASES["opening-block"]):
            assert_same(source, limits_for(source) if limits == DEFAULT_LIMITS else limits)
    [tables] = shapes._TABLES.values()
    assert max(len(tables.opening), len(tables.body), len(tables.shapes)) <= 3
