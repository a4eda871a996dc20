"""Fuzzing the way in (issue 16): arbitrary text, arbitrary Python (hypothesmith's grammar
and its syntax trees unparsed), and mutations of every public conformance program, posted
to /api/trace. Whatever arrives, the answer is never a 5xx and never a traceback: it is a
trace, or a document whose error says where (a line and, for a refused text, a column),
within the time limit. Examples are bounded so that `make test` stays quick; `make fuzz`
runs the coverage-guided harness in fuzz/ for longer."""

from __future__ import annotations

import json
import random
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
