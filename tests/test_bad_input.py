"""Hostile and wrong programs: each is refused or stopped cleanly, quickly, and says where.

Every row goes through `run_source` and through `POST /api/trace`: the answer is a trace
document (HTTP 200) whose `error` has the expected kind and type, the line and column of
the offending text, and a message a student can act on: the lab's advice, or PyTorch's own
words where PyTorch raises for the program (word for word, checked against live PyTorch
by `test_pytorch_raises_what_the_row_says`); never a traceback, an internal error or a 5xx.
Each of the lab's limits has a row just past it, and a program just inside it that runs.
"""

from __future__ import annotations

import ast
import builtins
import json
import threading
import traceback
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.limits import Limits
from app.trace import run_source
from app.web.app import create_app
from app.web.settings import Settings
from tests.bad_input_errors import ERRORS
from tests.bad_input_network import MODULES, NETWORK
from tests.bad_input_rows import LANGUAGE, LIMITS, SYNTAX, Bad, exactly_bytes
from tests.matching import ROOT

BAD: list[Bad] = [*SYNTAX, *LANGUAGE, *ERRORS, *NETWORK, *MODULES, *LIMITS]
LAB_TYPES = {"SyntaxError", "UnsupportedError"}
DEFAULT = Limits()
Clients = dict[tuple[tuple[str, float], ...], TestClient]      # one app per Limits override


def _params(rows: list[Bad]) -> list[Any]:
    return [pytest.param(b, id=b.id, marks=[pytest.mark.xfail(strict=True, reason=b.xfail)]
                         if b.xfail else []) for b in rows]


def test_the_table_is_big_enough() -> None:
    assert len({b.id for b in BAD}) == len(BAD), "row ids must be unique"
    assert len(LANGUAGE) + len(ERRORS) >= 100 and len(NETWORK) >= 40 and len(MODULES) >= 15
    assert all(b.kind in {"rejected", "forward", "backward", "limit"} for b in BAD)


# -- the lab's answer -------------------------------------------------------------------------

@cache
def _lab(bad: Bad) -> dict[str, Any]:
    """run_source's whole document for the row, once per row for both tests below."""
    limits = DEFAULT.with_values(**dict(bad.limits))
    trace: dict[str, Any] = run_source(bad.source, limits).model_dump(mode="json")
    return trace


def check(error: dict[str, Any] | None, bad: Bad) -> None:
    assert error is not None, f"{bad.id}: no error"
    got = (error["kind"], error["type"], error["line"], error["col"])
    assert got == (bad.kind, bad.type, bad.line, bad.col), error
    if bad.end is not None:
        assert (error["end_line"], error["end_col"]) == bad.end, error
    if bad.type in LAB_TYPES:
        assert bad.says in error["message"], error["message"]
    else:                                   # PyTorch's (or Python's) words, all of them
        assert error["message"] == bad.says
    assert "Traceback" not in error["message"]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("bad", _params(BAD))
def test_run_source_refuses_with_place(bad: Bad) -> None:
    trace = _lab(bad)
    check(trace["error"], bad)
    if bad.type == "SyntaxError":
        assert trace["passes"] == []


@pytest.fixture(scope="module")
def clients() -> Iterator[Clients]:
    """The apps the rows need, made as they ask (the one with the default limits first)."""
    made: Clients = {}
    yield made
    for c in made.values():
        c.__exit__(None, None, None)


def _client(made: Clients, limits: tuple[tuple[str, float], ...] = ()) -> TestClient:
    if limits not in made:
        made[limits] = TestClient(create_app(Settings().model_copy(update=dict(limits))))
        made[limits].__enter__()
    return made[limits]


def _post(client: TestClient, source: str) -> Any:
    """The source as JSON text (a lone surrogate goes as its \\u escape, as a page sends it)."""
    return client.post("/api/trace", content=_body(source),
                       headers={"content-type": "application/json"})


def _body(source: str) -> str:
    return json.dumps({"source": source})


def _too_big(source: str) -> bool:
    """A body the server refuses as it reads it (413), before any program is parsed: the
    engine's own limit on a program's bytes is the run_source rows' to check."""
    return len(_body(source).encode()) > Settings().max_body_bytes


@pytest.mark.timeout(10)
@pytest.mark.parametrize("bad", _params(BAD))
def test_api_answers_with_an_error_document(
        bad: Bad, clients: Clients) -> None:
    response = _post(_client(clients, bad.limits), bad.source)
    if _too_big(bad.source):
        assert response.status_code == 413, response.text[:500]
        assert "larger than this server takes" in response.json()["detail"]
        return
    assert response.status_code == 200, response.text[:500]
    error = response.json()["error"]
    check(error, bad)
    assert error == _lab(bad)["error"]


WORKED_EXAMPLE = "x = torch.tensor(2.0)\nw = 3.0\nb = 1.0\ny = w * x + b\nloss = y * y\n"


@pytest.mark.timeout(30)
def test_the_server_still_serves_after_the_table(clients: Clients) -> None:
    """After the worst rows (and, as the module runs in order, after the whole table), the
    same app still traces the worked example."""
    client = _client(clients)
    for bad in BAD:
        if bad.id in ("lone-surrogate", "10000-nested-parens", "one-megabyte", "nul-byte"):
            assert _post(client, bad.source).status_code == (413 if _too_big(bad.source)
                                                              else 200)
    document = _post(client, WORKED_EXAMPLE).json()
    assert document["error"] is None
    assert document["grads"] == {"w": 28.0, "b": 14.0}


# -- PyTorch says what the rows say -----------------------------------------------------------

def _pytorch_raises(source: str) -> tuple[str, str, int | None] | None:
    """What live PyTorch raises for the program, and on which line of it: the program runs
    in a fresh thread and, as shared/conformance/record_torch.py runs it, in a namespace
    without `__name__` (so its functions' module is builtins and Python's messages name
    them bare: `f() argument after *`). This is the reference, not the lab."""
    box: list[tuple[str, str, int | None] | None] = []

    def work() -> None:
        try:
            exec(compile(source, "<lab program>", "exec"), {})
        except Exception as e:  # the program's own error is what is compared
            frames = [f for f in traceback.extract_tb(e.__traceback__)
                      if f.filename == "<lab program>"]
            box.append((type(e).__name__, str(e), frames[-1].lineno if frames else None))
        else:
            box.append(None)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = threading.Thread(target=work, name="bad-input-torch")
        thread.start()
        thread.join()
    return box[0]


PYTORCH_ROWS = [b for b in BAD if b.type not in LAB_TYPES and b.plain]
# PyTorch checks what forward saved once forward has returned, in `apply`; the lab points at
# the call that saved it.
PYTORCH_LINE = {"save-for-backward-of-an-int": 8}


@pytest.mark.torch
@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", PYTORCH_ROWS, ids=[b.id for b in PYTORCH_ROWS])
def test_pytorch_raises_what_the_row_says(bad: Bad, torch: Any) -> None:
    line = PYTORCH_LINE.get(bad.id, bad.line)
    assert _pytorch_raises(bad.source) == (bad.type, bad.says, line)


# -- programs just inside the limits run ------------------------------------------------------

def _calls(depth: int) -> str:
    return ("import torch\ndef f(n):\n    if n == 1:\n        return 1\n    return f(n - 1)\n"
            f"v = f({depth})\n")


# Each runs with the limit at the value given (the default where it is cheap) and stops at
# the limit one lower: the program is at the limit, not somewhere inside it.
INSIDE: dict[str, tuple[str, str, float]] = {
    "64000-bytes": (exactly_bytes(64_000), "max_source_bytes", DEFAULT.max_source_bytes),
    "2000-lines": ("a = 2.0\n" * 2000, "max_lines", DEFAULT.max_lines),
    "60-levels-deep": ("a = 2.0\nb = a" + " * 1.0" * 59 + "\n", "max_depth", DEFAULT.max_depth),
    "2000-nodes": ("b = 1.0\nc = b * 1.0\n" + "c = c * 1.0\n" * 1998, "max_nodes", 2_000),
    "100000-element-tensor": ("import torch\nx = torch.ones(100000)\n", "max_elements",
                              DEFAULT.max_elements),
    "100000-item-list": ("import torch\nl = [0] * 100000\n", "max_elements",
                         DEFAULT.max_elements),
    "broadcast-to-100000": ("import torch\nc = torch.ones(400, 1) * torch.ones(1, 250)\n",
                            "max_elements", DEFAULT.max_elements),
    "256-bit-number": ("import torch\nn = 2 ** 255\nm = n + (n - 1)\n", "max_number_bits",
                       DEFAULT.max_number_bits),
    "200-statements": ("import torch\nfor i in range(198):\n    a = i\n", "max_statements", 200),
    "100-iterations": ("import torch\nfor i in range(10):\n    for j in range(9):\n"
                       "        pass\n", "max_iterations", 100),
    "40-calls-deep": (_calls(40), "max_call_depth", DEFAULT.max_call_depth),
    "16-hooks": ("import torch\nx = torch.tensor(1.0, requires_grad=True)\nfor i in range(16):\n"
                 "    h = x.register_hook(lambda g: g)\n", "max_hooks", DEFAULT.max_hooks),
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("source, name, value", INSIDE.values(), ids=INSIDE.keys())
def test_just_inside_the_limits_runs(source: str, name: str, value: float) -> None:
    trace = run_source(source, DEFAULT.with_values(**{name: value}))
    assert trace.error is None, trace.error
    error = run_source(source, DEFAULT.with_values(**{name: value - 1})).error
    assert error is not None and error.kind == "limit", error


def test_passes_past_max_full_passes_are_summarized() -> None:
    """Past max_full_passes the run succeeds and the later passes keep only their summary."""
    source = ("import torch\nx = torch.tensor(1.0, requires_grad=True)\nfor i in range(62):\n"
              "    y = x * 2\n    y.backward()\n")
    trace = run_source(source)
    assert trace.error is None
    assert [p.summarized for p in trace.passes] == [False] * 60 + [True] * 2
    assert [[s["seq"] for s in p.steps] for p in trace.passes] == [
        [i, 2**64 - 1] for i in range(62)]                   # every pass, in order
    assert all(p.graph is not None and "sent" in p.steps[0] for p in trace.passes[:60])
    assert all(p.graph is None and "sent" not in p.steps[0] for p in trace.passes[60:])
    assert trace.grads == {"x": 2.0 * 62}                    # d(2x)/dx, accumulated 62 times



def test_a_long_pass_keeps_its_first_max_full_steps_steps_in_full() -> None:
    """A pass of more pops than max_full_steps keeps the first ones in full and lists the
    rest (name, seq, leaf), in PyTorch's order; its graph and the final .grad stay whole."""
    source = ("import torch\na = torch.tensor(0.9, requires_grad=True)\nh = torch.tensor(0.1)\n"
              "for t in range(40):\n    h = torch.tanh(a * h + 0.01)\nh.backward()\n")
    whole = run_source(source)
    cut = run_source(source, Limits(max_full_steps=50))
    assert cut.error is None and whole.error is None
    (p,), (q,) = cut.passes, whole.passes
    assert (p.steps_kept, q.steps_kept) == (50, Limits().max_full_steps)
    assert p.steps[:50] == q.steps[:50]
    keys = ("name", "seq", "leaf", "grad_after", "grad_after_text")   # AccumulateGrad's write
    assert p.steps[50:] == [{k: v for k, v in s.items() if k in keys} for s in q.steps[50:]]
    assert p.steps[-1]["leaf"] == "a" and "grad_after_text" in p.steps[-1]
    assert len(p.steps) == 121 and p.graph == q.graph
    assert cut.grads == whole.grads and cut.grads["a"] != 0

# -- nothing the user types is executed by Python ---------------------------------------------

# Python's ways to run text or load code; `ast.parse`, `ast.literal_eval`, `re.compile` and the
# lab's own methods named eval (the interpreter's `self.eval`, nn.Module.eval) are not among them.
CODE_RUNNERS = {"eval", "exec", "compile", "__import__", "execfile", "breakpoint"}
CODE_MODULES = {"builtins", "__builtins__", "importlib", "runpy", "code", "codeop", "pickle",
                "marshal"}
CODE_BUILDERS = {"CodeType", "FunctionType"}          # types' ways to make code objects


def code_runners(tree: ast.AST) -> list[str]:
    """Every use of a code runner in the tree: the builtin by its name (called or passed
    on), as an attribute of `builtins`, or an import of a module that runs or loads code."""
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in CODE_RUNNERS | CODE_BUILDERS:
            found.append(f"{line} {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in CODE_BUILDERS:
            found.append(f"{line} .{node.attr}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in ("builtins", "__builtins__") and node.attr in CODE_RUNNERS:
            found.append(f"{line} {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Import):
            found += [f"{line} import {a.name}" for a in node.names
                      if a.name.split(".")[0] in CODE_MODULES and a.name != "importlib.resources"]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level and (
                node.module.split(".")[0] in CODE_MODULES and node.module != "importlib.resources"):
            found.append(f"{line} from {node.module} import ...")
    return found


def _sources() -> list[Path]:
    return sorted(p for d in ("app", "engine") for p in (ROOT / d).rglob("*.py"))


def test_the_code_runner_check_finds_what_it_should() -> None:
    caught = ("exec(text)", "f = eval", "builtins.compile(s, 'f', 'exec')", "import runpy",
              "from importlib import import_module", "x = __import__('os')",
              "types.FunctionType(code, {})")
    for line in caught:
        assert code_runners(ast.parse(line)), line
    fine = ("re.compile('a+')", "self.eval(expr, frame)", "model.eval()", "ast.literal_eval(t)",
            "ast.parse(source)", "from importlib.resources import files",
            "from types import MappingProxyType",
            "from app.language import builtins\nbuiltins.BUILTINS")
    for line in fine:
        assert not code_runners(ast.parse(line)), line


def test_no_eval_exec_or_compile_in_the_code() -> None:
    """No eval/exec/compile/__import__ (by name, or as builtins.exec) anywhere in app/ or
    engine/, and no module that runs or loads code: ast.parse is the only reader."""
    sources = _sources()
    assert len(sources) > 50, "found too few sources to check"
    found = [f"{p.relative_to(ROOT)}:{hit}" for p in sources
             for hit in code_runners(ast.parse(p.read_text(encoding="utf-8")))]
    assert not found


def test_running_programs_never_calls_eval_exec_or_code_compile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While programs run, eval and exec are never called, and compile only ever builds an
    ast (ast.parse is compile with PyCF_ONLY_AST), never code. Each program runs once before
    the check, so that modules the lab imports on first use are loaded (importing compiles
    their source) before the builtins are watched."""
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

    programs = [b.source for b in BAD if len(b.source) < 5000 and b.kind != "limit"] + [
        WORKED_EXAMPLE,
        "a = 1.5\ny = a * a\ny.backward(create_graph=True)\nz = a * 3\nz.backward()\n",
        "v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (v.exp() / 2 - 1) ** 2\n"
        "y.backward(gradient=torch.tensor([1.0, 0.5]))\n",
    ]
    first = [run_source(source).model_dump(mode="json") for source in programs]
    monkeypatch.setattr(builtins, "eval", forbidden("eval"))
    monkeypatch.setattr(builtins, "exec", forbidden("exec"))
    monkeypatch.setattr(builtins, "compile", only_ast)
    again = [run_source(source).model_dump(mode="json") for source in programs]
    assert calls == []
    assert [d["error"] for d in again] == [d["error"] for d in first]
