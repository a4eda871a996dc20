"""What a question reads from the engine's trace: pop order, producers, dependency counts,
the ready queue before a pop, saved tensors and when they were freed.

Only the trace's stable fields are read (each step's name, seq, leaf, node, grad, sent,
dependencies, ready, queue, released; each graph node's id, name, seq, next, saved,
variable, leaf; grads; error), from the JSON document the API sends, so that a question
sees exactly what any client of the lab sees.
"""

from __future__ import annotations

import ast
import base64
from typing import Any

import numpy as np
import orjson

from app.trace import document_bytes, run_source

UINT64_MAX = 2**64 - 1
Doc = dict[str, Any]
Node = dict[str, Any]


def run(source: str) -> Doc:
    """The engine's trace of a program, as the API would send it."""
    document: Doc = orjson.loads(document_bytes(run_source(source)))
    return document


def is_acc(node: Node) -> bool:
    return bool(node["name"] == "AccumulateGrad")


def key(node: Node) -> str:
    """A node's identity across the lab and PyTorch: `MulBackward0#2`, `AccumulateGrad(w)`."""
    return f"AccumulateGrad({node['leaf']})" if is_acc(node) else f"{node['name']}#{node['seq']}"


def seq_text(node: Node) -> str:
    return "MAX" if node["seq"] == UINT64_MAX else f"#{node['seq']}"


def label(node: Node) -> str:
    """As the lab page names a node: `MulBackward0 #2`, `AccumulateGrad(w)`."""
    return f"AccumulateGrad({node['leaf']})" if is_acc(node) else f"{node['name']} {seq_text(node)}"


def nodes(pass_: Doc) -> dict[int, Node]:
    return {n["id"]: n for n in pass_["graph"]["nodes"]}


def root(pass_: Doc) -> int:
    """The first node popped is the root (the output's grad_fn, or a leaf's accumulator)."""
    return int(pass_["steps"][0]["node"])


def popped(pass_: Doc) -> list[Node]:
    by_id = nodes(pass_)
    return [by_id[s["node"]] for s in pass_["steps"]]


def producers(pass_: Doc) -> dict[int, list[int]]:
    """For each node, the nodes that send it a gradient: one entry per edge."""
    out: dict[int, list[int]] = {n: [] for n in nodes(pass_)}
    for n in pass_["graph"]["nodes"]:
        for nxt in n["next"]:
            if nxt is not None:
                out[nxt].append(n["id"])
    return out


def dependencies(pass_: Doc) -> dict[int, int]:
    """How many gradients each node waits for before it can run: its incoming edges."""
    return {n: len(p) for n, p in producers(pass_).items()}


def before_pairs(pass_: Doc) -> list[tuple[int, int]]:
    """(a, b): a sends b a gradient, so every engine must run a before b."""
    return sorted({(p, n) for n, ps in producers(pass_).items() for p in ps})


def ready_at(pass_: Doc, node: int) -> int:
    """The step after which `node` entered the ready queue (-1 for the root)."""
    for j, step in enumerate(pass_["steps"]):
        if node in step["ready"]:
            return j
    return -1


def queue_before(pass_: Doc, j: int) -> list[int]:
    """The ready queue just before pop j, in pop order."""
    return [root(pass_)] if j == 0 else list(pass_["steps"][j - 1]["queue"])


def counts_before(pass_: Doc, j: int) -> dict[int, int]:
    """Each node's count of gradients still to come, before pop j."""
    counts = dependencies(pass_)
    for step in pass_["steps"][:j]:
        counts.update({int(k): v for k, v in step["dependencies"].items()})
    return counts


def saved_tensors(node: Node) -> list[str]:
    return [s["name"] for s in node["saved"] if s["is_tensor"]]


def timeline_step(document: Doc, pass_index: int, j: int) -> int:
    """The lab page's step index of pop j of a pass (j = -1: the pass's opening frame)."""
    before = sum(1 + len(p["steps"]) for p in document["passes"][:pass_index])
    return before + 1 + j


def lab_url(program: str, step: int) -> str:
    """The lab at this program and step, as static/js/url.js writes the hash."""
    encoded = base64.urlsafe_b64encode(program.encode()).decode().rstrip("=")
    return f"/#p={encoded}&s={step}"


def number(value: Any) -> str:
    """A gradient as a person writes it: float32's shortest digits, `28` for `28.0`."""
    if isinstance(value, list):
        return "[" + ", ".join(number(v) for v in value) + "]"
    if isinstance(value, str) or value is None:
        return str(value)
    text = str(np.float32(value))
    return text[:-2] if text.endswith(".0") else text


def node_sources(program: str) -> list[str]:
    """The source text of each node the forward pass records, in recording order (so the
    i-th entry is the node with sequence number i), for programs of the shapes in
    programs.py and kind 8's: an operation records a node when an operand requires grad
    (an in-place method too), `NUMBER / t` records two (reciprocal, then the product), and
    what runs under `no_grad` (a `with` block) records nothing."""
    grad: dict[str, bool] = {}
    out: list[str] = []

    def visit(e: ast.expr) -> bool:
        if isinstance(e, ast.Constant):
            return False
        if isinstance(e, ast.Name):
            return grad.get(e.id, False)
        if isinstance(e, ast.UnaryOp):
            needs = visit(e.operand)
        elif isinstance(e, ast.BinOp):
            left, right = visit(e.left), visit(e.right)
            needs = left or right
            number_over = isinstance(e.op, ast.Div) and isinstance(e.left, ast.Constant)
            if needs and number_over:
                out.append(ast.unparse(e))          # ReciprocalBackward0, then MulBackward0
        elif isinstance(e, ast.Call):
            if isinstance(e.func, ast.Attribute) and e.func.attr in RECORD_NOTHING:
                return False                    # a handle, or a tensor without a grad_fn
            receiver = e.func.value if isinstance(e.func, ast.Attribute) else None
            own = receiver is not None and not _is_torch(receiver) and visit(receiver)
            needs = any([visit(a) for a in e.args]) or own     # the receiver runs first
        else:
            return False
        if needs:
            out.append(ast.unparse(e))
        return needs

    for stmt in ast.parse(program).body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            value = stmt.value
            if isinstance(value, ast.Call) and _is_tensor_call(value):
                grad[name] = any(k.arg == "requires_grad" for k in value.keywords)
            else:
                grad[name] = visit(stmt.value)
        elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
              and isinstance(stmt.value.func, ast.Attribute)
              and stmt.value.func.attr.endswith("_")):
            visit(stmt.value)                   # `y.mul_(2)` records a node for y
    return out


# Methods whose call records no node: `detach()` gives a tensor without a grad_fn,
# `register_hook` a handle.
RECORD_NOTHING = frozenset({"detach", "register_hook", "retain_grad"})


def _is_torch(e: ast.expr) -> bool:
    return isinstance(e, ast.Name) and e.id == "torch"


def _is_tensor_call(e: ast.expr) -> bool:
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)
            and e.func.attr == "tensor" and _is_torch(e.func.value))


def describe(node: Node, sources: list[str]) -> str:
    """A node named by what recorded it, its number hidden: `MulBackward0 (w * x)`,
    `AccumulateGrad (w)`."""
    if is_acc(node):
        return f"AccumulateGrad ({node['leaf']})"
    seq = node["seq"]
    return f"{node['name']} ({sources[seq]})" if seq < len(sources) else node["name"]



def full_label(node: Node, sources: list[str]) -> str:
    """The lab's label with what recorded the node: `MulBackward0 #2 (w * x)`."""
    if is_acc(node) or node["seq"] >= len(sources):
        return label(node)
    return f"{label(node)} ({sources[node['seq']]})"
