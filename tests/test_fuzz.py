"""Fuzzing the way in (issue 16): arbitrary text, arbitrary Python (hypothesmith's grammar
and its syntax trees unparsed), and mutations of every public conformance program, posted
to /api/trace. Whatever arrives, the answer is never a 5xx and never a traceback: it is a
trace, or a document whose error says where (a line and, for a refused text, a column),
within the time limit. Examples are bounded so that `make test` stays quick; `make fuzz`
runs the coverage-guided harness in fuzz/ for longer."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.web.app import create_app
from app.web.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = sorted((ROOT / "tests" / "data" / "conformance").glob("*.jsonl"))
PROGRAMS = [(json.loads(line)["id"], json.loads(line)["source"])
            for path in CONFORMANCE for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
MAX_SECONDS = 2.0
SLACK_S = 3.0               # the request around the run: parsing JSON, writing the document
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
# What a mutation may put in: Python's and the lab's tokens, and some that break things.
TOKENS = ["(", ")", "[", "]", ":", ",", ".", "=", "+", "-", "*", "/", "**", "@", "\n", "    ",
          "#", "'", '"', "\\", "lambda", "def", "for", "in", "while True", "if", "return",
          "torch", "backward()", ".grad", "requires_grad=True", "1e308", "-0.0", "nan", "0",
          "9" * 80, "x", "w", "None", "import os", "__import__", "exec", "\x00", "\t", "é", "😀"]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(Settings(max_seconds=MAX_SECONDS, rate_trace=""))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def check(client: TestClient, source: str) -> dict[str, Any]:
    """POST the program and hold the answer to the rules above; the document."""
    start = time.monotonic()
    response = client.post("/api/trace", json={"source": source})
    elapsed = time.monotonic() - start
    assert response.status_code < 500, (source, response.text[:500])
    assert "Traceback (most recent call last)" not in response.text, source
    assert elapsed < MAX_SECONDS + SLACK_S, (source, elapsed)
    doc: dict[str, Any] = response.json()
    if response.status_code != 200:               # a request refused before any run (413)
        assert doc["detail"], doc
        return doc
    error = doc["error"]
    if error is not None:
        assert error["kind"] != "internal", (source, error)
        assert isinstance(error["line"], int) and error["line"] >= 1, (source, error)
        if error["kind"] == "rejected":
            assert isinstance(error["col"], int) and error["col"] >= 0, (source, error)
    else:
        assert "passes" in doc and "grads" in doc
    return doc


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text(client: TestClient, source: str) -> None:
    check(client, source)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=60).map(" ".join))
def test_arbitrary_token_soup(client: TestClient, source: str) -> None:
    check(client, source)


hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith generates Python "
                                   "programs from its grammar (the `test` extra)")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_arbitrary_python_from_the_grammar(client: TestClient, source: str) -> None:
    check(client, source)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_arbitrary_syntax_trees_unparsed(client: TestClient, source: str) -> None:
    check(client, source)


def mutate(source: str, rng: random.Random) -> str:
    """One edit a student (or an attacker) might make: cut, insert, repeat, swap, cut off."""
    lines = source.splitlines(keepends=True) or [""]
    at = rng.randrange(len(source) + 1)
    kind = rng.randrange(6)
    if kind == 0:
        return source[:at] + source[at + rng.randrange(1, 12):]
    if kind == 1:
        return source[:at] + rng.choice(TOKENS) + source[at:]
    if kind == 2:
        i = rng.randrange(len(lines))
        return "".join(lines[:i + 1] + lines[i:])
    if kind == 3 and len(lines) > 1:
        i, j = rng.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    if kind == 4:
        return source[:at]
    word = rng.choice([w for w in source.replace("(", " ").split() if w] or ["x"])
    return source.replace(word, rng.choice(TOKENS), 1)


@pytest.mark.parametrize("case", [c for c, _ in PROGRAMS])
def test_mutations_of_every_conformance_program(client: TestClient, case: str) -> None:
    source = dict(PROGRAMS)[case]
    rng = random.Random(case)
    for _ in range(3):
        source = mutate(source, rng)
        check(client, source)


@FUZZ
@given(st.sampled_from([s for _, s in PROGRAMS]), st.randoms(use_true_random=False),
       st.integers(1, 4))
def test_stacked_mutations(client: TestClient, source: str, rng: random.Random,
                           edits: int) -> None:
    for _ in range(edits):
        source = mutate(source, rng)
    check(client, source)


def test_the_conformance_programs_are_all_here() -> None:
    assert len(PROGRAMS) >= 170 and len(set(dict(PROGRAMS))) == len(PROGRAMS)


# -- what `make fuzz` found ------------------------------------------------------------------
# Each input fuzz/harness.py reported (build/fuzz-crashes/crash-*), as it was found, with
# the error Python gives for it; the lab must answer it with that error where Python does.
REGRESSIONS = [
    # A builtin called with no argument at all failed inside the lab (IndexError).
    ("import torch\ntorch.manual_seed(438)\nx = torch.rand(4, 3, requires_grad=True)\n"
     "corner = x[:2, 1:]\nrow = x[:, 0]\nlast = x[3, 2]\n"
     "loss = corner.sum() + row,sum() .sum() + row.sum() + last.sum()\n"
     "loss.backwa+ last.sum()\nloss.bacwkard()\nprint(x.grad)\nprint(corner.grad_fn.naoe())\n",
     "TypeError", "sum() takes at least 1 positional argument (0 given)", 7),
]


@pytest.mark.parametrize(("source", "kind", "message", "line"), REGRESSIONS)
def test_what_the_fuzzer_found(client: TestClient, source: str, kind: str, message: str,
                               line: int) -> None:
    error = check(client, source)["error"]
    assert (error["type"], error["message"], error["line"]) == (kind, message, line)


# The builtins it found, and their kin, called with too few, too many, named or unknown
# arguments: Python's answer (its value, or its TypeError word for word) is the lab's.
BUILTIN_CALLS = [
    f"{name}({arguments})"
    for name in ("sum", "abs", "round", "enumerate", "sorted", "reversed", "any", "all",
                 "filter", "pow", "divmod", "staticmethod", "math.isclose")
    for arguments in ("", "1", "1, 2", "1, 2, 3", "1, 2, 3, 4", "[1, 2]", "[1, 2], 1", "x=1",
                      "number=1.25", "number=1.25, ndigits=1", "1.25, number=2",
                      "base=2, exp=3", "2, exp=3", "2, 3, 5", "2, 3, mod=5", "2.0, 3, 5",
                      "2, 3, 0", "2, 3, None", "iterable=[1]", "[1], start=2", "start=1",
                      "a=1, b=1", "1, b=1", "1, 1.5, rel_tol=0.5", "1, 1, foo=2",
                      "None, [0, 1]", "[1], 2, start=3", "iterable=[1], start=1",
                      "start=1, iterable=[1]", "start=1, foo=2", "x=1, y=2, z=3",
                      "7.5, 2", "1.0, 0")
    if f"{name}({arguments})" != "reversed(1)"     # 'not reversible': not an argument check
]


def python_answer(call: str) -> tuple[str, str]:
    """What Python prints for `print(repr(call))`, or its error's type and message."""
    import math

    try:
        value = eval(call, {"math": math})  # the test's own fixed calls, never a program's
    except Exception as e:
        return type(e).__name__, str(e)
    if isinstance(value, staticmethod):
        return "ok", "<staticmethod>"
    return "ok", ADDRESS.sub("0x…", repr(value))     # enumerate, reversed, filter: objects


ADDRESS = re.compile(r"0x[0-9a-f]+")


@pytest.mark.parametrize("call", BUILTIN_CALLS)
def test_builtins_take_their_arguments_as_python_does(call: str) -> None:
    from app.limits import Limits
    from app.trace import run_source

    want = python_answer(call)
    result = run_source(f"import math\nprint(repr({call}))\n", Limits())
    if want == ("ok", "<staticmethod>"):
        assert result.error is None
        return
    got = (("ok", ADDRESS.sub("0x…", "".join(result.printed).strip())) if result.error is None
           else (result.error.type, result.error.message))
    assert got == want


@pytest.mark.parametrize("source", ["x = 1if True else 2\nprint(x)\n", 'print("\\d")\n'])
def test_a_programs_text_gives_no_python_warnings(source: str) -> None:
    """Python's parser warns about some texts (a number run into a keyword, an invalid
    escape); in the server each warning would be a line on stderr outside its JSON logs,
    one per line number a client sends. The lab drops them."""
    import warnings

    from app.limits import Limits
    from app.trace import run_source

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_source(source, Limits())
    assert result.error is None or result.error.kind != "internal"
    assert [str(w.message) for w in caught] == []
