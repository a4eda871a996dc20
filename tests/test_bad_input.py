"""Hostile and wrong programs: each is refused or fails cleanly, quickly, and says where.

Every row goes through `run_source` and through `POST /api/trace`: the answer is a trace
document (HTTP 200) whose `error` has the expected type, a message, and the exact line
and column of the offending text; never a traceback, an internal error or a 5xx.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.trace import run_source
from app.web.app import create_app
from tests.matching import ROOT

LEAF = "a = 2.0\n"


@dataclass(frozen=True)
class Bad:
    id: str
    source: str
    type: str
    line: int
    col: int
    says: str          # a fragment the message must contain


def _elements(n: int) -> str:
    return ", ".join(["1.0"] * n)


BAD = [
    # -- not Python --------------------------------------------------------------------
    Bad("unclosed-paren", LEAF + "b = (a +\n", "SyntaxError", 2, 5, "never closed"),
    Bad("invalid-syntax", LEAF + "b = a +* 2\n", "SyntaxError", 2, 8, "syntax"),
    Bad("unexpected-indent", LEAF + "  b = a\n", "SyntaxError", 2, 3, "indent"),
    Bad("invalid-character", LEAF + "b = a × 2\n", "SyntaxError", 2, 7, "U+00D7"),
    Bad("nul-byte", LEAF + "b = a\0 * 2\n", "SyntaxError", 2, 6, "NUL"),
    Bad("10000-nested-parens", LEAF + "b = " + "(" * 10_000 + "a" + ")" * 10_000 + "\n",
        "SyntaxError", 2, 205, "nested parentheses"),
    # -- statements outside the language ------------------------------------------------
    Bad("while", LEAF + "while True:\n    a = a * 2\n", "UnsupportedError", 2, 1, "while"),
    Bad("for", LEAF + "for i in [1, 2]:\n    a = a * 2\n", "UnsupportedError", 2, 1, "for"),
    Bad("if", LEAF + "if a:\n    b = a\n", "UnsupportedError", 2, 1, "if"),
    Bad("def", LEAF + "def f(x):\n    return x\n", "UnsupportedError", 2, 1, "functions"),
    Bad("class", LEAF + "class C:\n    pass\n", "UnsupportedError", 2, 1, "classes"),
    Bad("with-no-grad", LEAF + "with torch.no_grad():\n    b = a * 2\n",
        "UnsupportedError", 2, 1, "with"),
    Bad("try", LEAF + "try:\n    b = a\nexcept Exception:\n    pass\n",
        "UnsupportedError", 2, 1, "try"),
    Bad("import-os", "import os\n" + LEAF, "UnsupportedError", 1, 1, "import os"),
    Bad("from-torch-import-star", "from torch import *\n" + LEAF, "UnsupportedError", 1, 1,
        "import torch"),
    Bad("print", LEAF + "print(a)\n", "UnsupportedError", 2, 1, "print"),
    Bad("exec-statement", LEAF + "exec('import os')\n", "UnsupportedError", 2, 1, "exec"),
    Bad("augmented-assign", LEAF + "b = a * 2\nb += 1\n", "UnsupportedError", 3, 1, "+="),
    Bad("chained-assign", LEAF + "b = c = a * 2\n", "UnsupportedError", 2, 1, "one name"),
    Bad("del", LEAF + "del a\n", "UnsupportedError", 2, 1, "del"),
    Bad("assign-attribute", LEAF + "a.data = 3\n", "UnsupportedError", 2, 1, "plain name"),
    # -- expressions outside the language -----------------------------------------------
    Bad("lambda", LEAF + "f = lambda x: x\n", "UnsupportedError", 2, 5, "lambda"),
    Bad("list-comprehension", LEAF + "b = [a for _ in range(3)]\n", "UnsupportedError", 2, 5,
        "comprehension"),
    Bad("generator-in-tensor", LEAF + "b = torch.tensor(x for x in [1.0])\n",
        "UnsupportedError", 2, 17, "list"),
    Bad("f-string", LEAF + 'b = f"{a}"\n', "UnsupportedError", 2, 5, "strings"),
    Bad("subscript", "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = a[0]\n",
        "UnsupportedError", 2, 5, "indexing"),
    Bad("dunder-import", LEAF + "b = __import__('os')\n", "UnsupportedError", 2, 5,
        "__import__"),
    Bad("class-bases", LEAF + "b = ().__class__.__bases__\n", "UnsupportedError", 2, 5,
        "underscore"),
    Bad("dunder-attribute", LEAF + "b = a.__class__\n", "UnsupportedError", 2, 5, "__class__"),
    Bad("private-attribute", LEAF + "b = a._version\n", "UnsupportedError", 2, 5, "_version"),
    Bad("eval-call", LEAF + "b = eval('a')\n", "UnsupportedError", 2, 5, "eval"),
    Bad("other-torch-function", LEAF + "b = torch.matmul(a, a)\n", "UnsupportedError", 2, 5,
        "torch.matmul"),
    Bad("torch-attribute", LEAF + "b = torch.os\n", "UnsupportedError", 2, 5, "attributes"),
    Bad("walrus", LEAF + "b = (c := a)\n", "UnsupportedError", 2, 6, ":="),
    Bad("matmul-operator", LEAF + "b = a @ a\n", "UnsupportedError", 2, 5, "@"),
    Bad("comparison", LEAF + "b = a > 1\n", "UnsupportedError", 2, 5, "comparisons"),
    Bad("star-args", LEAF + "b = torch.tensor(*[1.0])\n", "UnsupportedError", 2, 18, "*"),
    Bad("double-star-kwargs", LEAF + "b = torch.tensor(1.0, **{'requires_grad': True})\n",
        "UnsupportedError", 2, 23, "**kwargs"),
    Bad("backward-inputs", LEAF + "a.backward(inputs=[a])\n", "UnsupportedError", 2, 12,
        "inputs="),
    Bad("backward-as-value", LEAF + "b = a * 2\nc = b.backward()\n", "UnsupportedError", 3, 5,
        "own"),
    Bad("bool-operand", LEAF + "b = a * True\n", "UnsupportedError", 2, 9, "True"),
    Bad("complex", LEAF + "b = a * 1j\n", "UnsupportedError", 2, 9, "complex"),
    Bad("torch-rebound", "torch = 2.0\n", "UnsupportedError", 1, 1, "torch"),
    Bad("tensor-of-string", 'a = torch.tensor("abc")\n', "UnsupportedError", 1, 18, "str"),
    Bad("undefined-name", LEAF + "b = c * 2\n", "UnsupportedError", 2, 5, "`c` is not defined"),
    # -- nothing to run ---------------------------------------------------------------
    Bad("empty", "", "UnsupportedError", 1, 1, "empty"),
    Bad("only-blank-lines", "  \n\n\t\n", "UnsupportedError", 1, 1, "empty"),
    Bad("only-a-comment", "# nothing here\n", "UnsupportedError", 1, 1, "no statements"),
    Bad("no-tensor", "import torch\n", "UnsupportedError", 1, 1, "no statements"),
    Bad("numbers-only", "x = 1 + 2\n", "AttributeError", 1, 1,
        "'int' object has no attribute 'backward'"),
    # -- too big ------------------------------------------------------------------------
    Bad("power-tower", LEAF + "b = 2 ** 10 ** 10\n", "UnsupportedError", 2, 5, "256-bit"),
    Bad("huge-list", LEAF + "b = torch.tensor([1.0] * 10**9)\n", "UnsupportedError", 2, 18,
        "list arithmetic"),
    Bad("huge-integer-literal", LEAF + "b = a * " + "9" * 100 + "\n", "UnsupportedError", 2, 9,
        "too large"),
    Bad("one-megabyte", LEAF + "# " + "x" * 1_000_000 + "\n", "UnsupportedError", 1, 1,
        "bytes"),
    Bad("2001-lines", LEAF * 2001, "UnsupportedError", 2001, 1, "2001 lines"),
    Bad("5000-term-sum", LEAF + "b = " + " + ".join(["a"] * 5000) + "\n", "UnsupportedError",
        2, 1, "nested"),
    Bad("100-term-sum", LEAF + "b = " + " + ".join(["a"] * 100) + "\n", "UnsupportedError",
        2, 5, "nested more than 60"),
    Bad("5000-unary-minus", LEAF + "b = " + "-" * 5000 + "a\n", "UnsupportedError", 2, 1,
        "nested"),
    Bad("10001-element-tensor", f"a = torch.tensor([{_elements(10_001)}])\n",
        "UnsupportedError", 1, 18, "10000 elements"),
    # 9 nodes a line from line 2: the 5001st node (number 5000) is recorded on line 557
    Bad("more-than-max-nodes", "b = 1.0\n" + "b = b * b * b * b * b * b * b * b * b * b\n" * 600,
        "UnsupportedError", 557, 1, "5000 backward nodes"),
    Bad("broadcast-over-max-elements",
        f"a = torch.tensor([{_elements(101)}], requires_grad=True)\n"
        f"b = torch.tensor([{', '.join(['[2.0]'] * 101)}])\nc = a * b\n",
        "UnsupportedError", 3, 1, "10201 elements"),
    # -- wrong in PyTorch too: PyTorch's own exception ----------------------------------
    Bad("tanh-of-float", LEAF + "b = torch.tanh(2.0)\n", "TypeError", 2, 1,
        "tanh(): argument 'input' (position 1) must be Tensor, not float"),
    Bad("method-on-float", LEAF + "b = (2.0).tanh()\n", "AttributeError", 2, 1,
        "'float' object has no attribute 'tanh'"),
    Bad("integer-requires-grad", "a = torch.tensor(2, requires_grad=True)\n", "RuntimeError",
        1, 1, "Only Tensors of floating point and complex dtype can require gradients"),
    Bad("ragged-list", LEAF + "b = torch.tensor([[1.0, 2.0], [3.0]])\n", "ValueError", 2, 1,
        "expected sequence of length 2 at dim 1 (got 1)"),
    Bad("division-by-zero", LEAF + "b = 1 / 0\n", "ZeroDivisionError", 2, 1, "division by zero"),
    Bad("float-overflow", LEAF + "b = 10.0 ** 400\n", "OverflowError", 2, 1, "out of range"),
    Bad("gradient-as-list", LEAF + "b = a * 2\nb.backward(gradient=[1.0])\n", "TypeError", 3, 1,
        "gradients can be either Tensors or None, but got float"),
    Bad("size-mismatch", "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "b = torch.tensor([1.0, 2.0, 3.0])\nc = a * b\n", "RuntimeError", 3, 1,
        "The size of tensor a (2) must match the size of tensor b (3)"),
]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def check(error: Any, bad: Bad) -> None:
    assert error is not None, f"{bad.id}: no error"
    assert (error["type"], error["line"], error["col"]) == (bad.type, bad.line, bad.col), error
    assert bad.says in error["message"], error["message"]
    assert "Traceback" not in error["message"]


def test_the_table_is_big_enough() -> None:
    assert len(BAD) >= 30
    assert len({b.id for b in BAD}) == len(BAD)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_run_source_refuses_with_place(bad: Bad) -> None:
    trace = run_source(bad.source).model_dump(mode="json")
    check(trace["error"], bad)
    assert trace["passes"] == []


@pytest.mark.timeout(10)
@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_api_answers_with_an_error_document(bad: Bad, client: TestClient) -> None:
    response = client.post("/api/trace", json={"source": bad.source})
    assert response.status_code == 200, response.text[:500]
    check(response.json()["error"], bad)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("source", ["a = 2.0\n" * 2000, "a = 2.0\nb = a" +
                                    " * 1.0" * 60 + "\n"],
                         ids=["2000-lines", "61-term-product"])
def test_just_inside_the_limits_runs(source: str) -> None:
    assert run_source(source).error is None


# -- nothing the user types is executed by Python ----------------------------------------

FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "execfile", "runpy"}


def _sources() -> list[Path]:
    return sorted(p for d in ("app", "engine") for p in (ROOT / d).rglob("*.py"))


def test_no_eval_exec_or_compile_in_the_code() -> None:
    """No call of eval/exec/compile/__import__ (by name or as an attribute, such as
    builtins.exec) anywhere in app/ or engine/; ast.parse is the only reader."""
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name in FORBIDDEN_CALLS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}(...)")
    assert not found
    assert _sources(), "found no sources to check"


def test_running_programs_never_calls_eval_exec_or_code_compile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """During real runs, eval and exec are never called, and compile only ever builds an
    ast (ast.parse is compile with PyCF_ONLY_AST), never code."""
    real_compile = builtins.compile
    calls: list[str] = []

    def forbidden(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called")
        return call

    def only_ast(source: Any, filename: Any, mode: str, flags: int = 0, *args: Any,
                 **kwargs: Any) -> Any:
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile to code")
            raise AssertionError("compile to code")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", forbidden("eval"))
    monkeypatch.setattr(builtins, "exec", forbidden("exec"))
    monkeypatch.setattr(builtins, "compile", only_ast)
    programs = [b.source for b in BAD if len(b.source) < 5000] + [
        "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n",
        "a = 1.5\ny = a * a\ny.backward(create_graph=True)\nz = a * 3\nz.backward()\n",
        "v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (v.exp() / 2 - 1) ** 2\n"
        "y.backward(gradient=torch.tensor([1.0, 0.5]))\n",
    ]
    for source in programs:
        run_source(source)
    assert calls == []


# -- programs at the limits are accepted and still quick ---------------------------------

AT_THE_LIMITS = {
    "2000-line-chain": "b = 1.0\nc = b * 1.0\n" + "c = c * 1.0\n" * 1998,
    "4995-nodes": "b = 1.0\n" + "b = b * b * b * b * b * b * b * b * b * b\n" * 555,
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("source", AT_THE_LIMITS.values(), ids=AT_THE_LIMITS.keys())
def test_programs_at_the_limits_trace_quickly(source: str) -> None:
    trace = run_source(source)
    assert trace.error is None, trace.error
    assert trace.passes and trace.passes[0].graph is not None


WIDE = "x = torch.tensor([" + ", ".join(["[" + ", ".join(["0.5"] * 100) + "]"] * 100) + \
    "], requires_grad=True)\ny = x\n"


# Each once took minutes: layout was far from linear in a node's parents, and every
# step embedded 10,000-element gradients in full.
@pytest.mark.timeout(5)
def test_a_leaf_used_300_times_traces_quickly() -> None:
    test_programs_at_the_limits_trace_quickly("a = 2.0\nb = a\n" + "b = b + a\n" * 300)


@pytest.mark.timeout(5)
def test_ten_thousand_element_tensors_trace_quickly() -> None:
    source = WIDE + "y = (y * x).tanh() + x.sin()\n" * 50 + "y = y.sum()\n"
    test_programs_at_the_limits_trace_quickly(source)
