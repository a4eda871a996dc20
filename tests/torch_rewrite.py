"""The conformance recorder's source rewriting, typed (no torch needed).

Adapted from ../shared/conformance/record_torch.py, which recorded the public corpora:
a lab program becomes top-level statements to run one by one, in which the leaf
shorthand is written out (shorthand programs only), every `X.backward(...)` and every
`torch.autograd.grad(...)` call, at any depth, goes through the recorder, and every
statement of a nested body is followed by a scan of its scope (to name leaves and hook
new nodes at once). tests/torch_recorder.py runs the result under live torch.

The contract's rules it needs (which name is the implicit backward's, whether a program
imports torch) are written here again rather than imported from app/language/parse.py:
this is the reference side, and a mistake in the lab's parser must not be mirrored in it.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import cast

RECORDER = "__record_backward__"
GRAD_RECORDER = "__record_grad__"
SCANNER = "__record_scan__"


def _number_literal(node: ast.expr) -> int | float | None:
    """The value of NUMBER, -NUMBER or +NUMBER, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number_literal(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)):
        return node.value
    return None


def _leaf_statement(name: str, value: float, like: ast.stmt) -> ast.stmt:
    """`name = torch.tensor(float(value), requires_grad=True)` at `like`'s position.

    (record_torch.py writes repr(float(value)), which for `a = 1e400` is the undefined
    name `inf`; float('inf') is what the shorthand means.)
    """
    number = float(value)
    text = f"float({str(number)!r})" if not math.isfinite(number) else repr(number)
    stmt = ast.parse(f"{name} = torch.tensor({text}, requires_grad=True)").body[0]
    return ast.copy_location(stmt, like)


def _is_torch_attr(node: ast.expr, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr
            and isinstance(node.value, ast.Name) and node.value.id == "torch")


def _is_grad_call(node: ast.Call) -> bool:
    """`torch.autograd.grad(...)`."""
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr == "grad" and _is_torch_attr(f.value,
                                                                                 "autograd")


def _scan_statement(like: ast.stmt) -> ast.stmt:
    call = ast.Call(ast.Name(SCANNER, ast.Load()),
                    [ast.Call(ast.Name("locals", ast.Load()), [], [])], [])
    return ast.fix_missing_locations(ast.copy_location(ast.Expr(call), like))


class _Instrument(ast.NodeTransformer):
    """Routes backward()/autograd.grad() calls through the recorder and adds a scan after
    every statement of nested bodies."""

    NO_SCAN_AFTER = (ast.Return, ast.Break, ast.Continue, ast.Raise)
    BODIES = ("body", "orelse", "finalbody")

    def __init__(self) -> None:
        self.calls_backward = False
        self.calls_grad = False
        self.mentions_print = False

    def body(self, statements: list[ast.stmt], scan: bool = True) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in statements:
            new = self.visit(stmt)
            out.extend(new if isinstance(new, list) else [cast(ast.stmt, new)])
            if scan and not isinstance(stmt, self.NO_SCAN_AFTER):
                out.append(_scan_statement(stmt))
        return out

    def _compound(self, node: ast.AST) -> ast.AST:
        for name, value in ast.iter_fields(node):
            if name in self.BODIES or name == "handlers":
                continue
            if isinstance(value, list):
                setattr(node, name, [self.visit(v) if isinstance(v, ast.AST) else v
                                     for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        for name in self.BODIES:
            if getattr(node, name, None):
                setattr(node, name, self.body(getattr(node, name)))
        for handler in getattr(node, "handlers", None) or []:
            handler.body = self.body(handler.body)
        return node

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)):
            return self._compound(node)
        result: ast.AST = super().visit(node)
        return result

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.bases = [cast(ast.expr, self.visit(b)) for b in node.bases]
        node.keywords = [cast(ast.keyword, self.visit(k)) for k in node.keywords]
        node.decorator_list = [cast(ast.expr, self.visit(d)) for d in node.decorator_list]
        node.body = self.body(node.body, scan=False)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "print":
            self.mentions_print = True
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            self.calls_backward = True
            text = ast.unparse(node.func.value)
            self.generic_visit(node)
            assert isinstance(node.func, ast.Attribute)
            new = ast.Call(ast.Name(RECORDER, ast.Load()),
                           [ast.Constant(text), node.func.value, *node.args], node.keywords)
            return ast.fix_missing_locations(ast.copy_location(new, node))
        if _is_grad_call(node):
            self.calls_grad = True
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "outputs"), None)
            text = ast.unparse(first) if first is not None else ""
            self.generic_visit(node)
            new = ast.Call(ast.Name(GRAD_RECORDER, ast.Load()),
                           [ast.Constant(text), *node.args], node.keywords)
            return ast.fix_missing_locations(ast.copy_location(new, node))
        return self.generic_visit(node)


def _last_assigned(statements: list[ast.stmt]) -> str | None:
    """The target of the last `name = ...` in the text, outside def/class bodies."""
    last = None
    for stmt in statements:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            last = stmt.targets[0].id
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                found = _last_assigned(inner)
                last = found if found is not None else last
    return last


def imports_torch(tree: ast.Module) -> bool:
    """CONTRACT §1: a program that imports torch in any form is plain PyTorch (no leaf
    shorthand, no implicit backward); one that does not is in the lab's shorthand."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
                a.name == "torch" or a.name.startswith("torch.") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            return True
    return False


@dataclass
class Program:
    """A rewritten lab program: one-statement modules to run one by one."""

    modules: list[ast.Module]
    calls_backward: bool
    calls_grad: bool
    mentions_print: bool
    last_assigned: str | None
    plain: bool

    @property
    def implicit_backward(self) -> bool:
        return (not self.plain and not (self.calls_backward or self.calls_grad)
                and self.last_assigned is not None)


def rewrite(source: str) -> Program:
    """Parse a lab program and rewrite it for the recorder (see the module docstring)."""
    tree = ast.parse(source)
    instrument = _Instrument()
    plain = imports_torch(tree)
    leading = not plain   # still in the opening block of leaf definitions (shorthand only)
    statements: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            statements.append(stmt)
            continue
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            value = _number_literal(stmt.value)
            if leading and value is not None:
                statements.append(_leaf_statement(stmt.targets[0].id, value, stmt))
                continue
            if leading and isinstance(stmt.value, ast.Call) and _is_torch_attr(
                    stmt.value.func, "tensor"):
                statements.append(cast(ast.stmt, instrument.visit(stmt)))
                continue
        leading = False
        statements.extend(instrument.body([stmt], scan=False))
    modules = [ast.fix_missing_locations(ast.Module([s], type_ignores=[]))
               for s in statements]
    return Program(modules, instrument.calls_backward, instrument.calls_grad,
                   instrument.mentions_print, _last_assigned(tree.body), plain)
