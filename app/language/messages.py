"""What the lab says about Python it does not take: one sentence per construct, saying
what to write instead. `source.py` raises them with the construct's line and column."""

from __future__ import annotations

import ast


def op_text(op: ast.operator) -> str:
    return {ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<",
            ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}.get(
                type(op), type(op).__name__)


_STATEMENTS: dict[type, str] = {
    ast.While: "`while` loops are not supported here: write the steps out one line at a time",
    ast.For: "`for` loops are not supported here: write the steps out one line at a time",
    ast.If: "`if` statements are not supported here: the lab runs straight-line code",
    ast.FunctionDef: "defining functions is not supported here: write the computation "
                     "out line by line",
    ast.AsyncFunctionDef: "defining functions is not supported here",
    ast.ClassDef: "defining classes is not supported here",
    ast.With: "`with` blocks are not supported here",
    ast.Try: "`try` blocks are not supported here",
    ast.ImportFrom: "only `import torch` is allowed here",
    ast.AugAssign: "in-place updates (`x += ...`) are not supported here: write `x = x + ...`",
    ast.AnnAssign: "annotated assignments are not supported here: write `name = value`",
    ast.Delete: "`del` is not supported here",
    ast.Global: "`global` is not supported here",
    ast.Nonlocal: "`nonlocal` is not supported here",
    ast.Return: "`return` is only meaningful inside a function, which the lab does not have",
    ast.Raise: "`raise` is not supported here",
    ast.Assert: "`assert` is not supported here",
    ast.Pass: "`pass` does nothing here: remove it",
}


def statement_message(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id == "print":
                return "`print(...)` is not needed here: the lab shows every value for you"
            return f"`{value.func.id}(...)` is not supported here"
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return "strings are not supported here: use a `#` comment instead"
        return ("a value on a line of its own does nothing: assign it, as in `y = ...`, or "
                "call `.backward()` on it")
    return _STATEMENTS.get(type(stmt), f"`{type(stmt).__name__}` statements are not "
                                       f"supported here")


_EXPRESSIONS: dict[type, str] = {
    ast.Lambda: "`lambda` is not supported here: write the computation out",
    ast.ListComp: "list comprehensions are not supported here",
    ast.SetComp: "set comprehensions are not supported here",
    ast.DictComp: "dict comprehensions are not supported here",
    ast.GeneratorExp: "generator expressions are not supported here",
    ast.Subscript: "indexing (`x[0]`) is not supported here",
    ast.Compare: "comparisons are not supported here",
    ast.BoolOp: "`and` / `or` are not supported here",
    ast.IfExp: "conditional expressions are not supported here",
    ast.Attribute: "attributes are not supported here, except tensor methods such as "
                   "`x.tanh()`",
    ast.List: "lists are only allowed inside torch.tensor(...) and as gradient=",
    ast.Tuple: "tuples are not supported here",
    ast.Dict: "dicts are not supported here",
    ast.Set: "sets are not supported here",
    ast.NamedExpr: "`:=` is not supported here",
    ast.Await: "`await` is not supported here",
    ast.Yield: "`yield` is not supported here",
    ast.JoinedStr: "strings are not supported here",
    ast.Starred: "`*` unpacking is not supported here",
}


def expression_message(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        return f"`.{node.attr}`: attributes starting with an underscore are not allowed"
    return _EXPRESSIONS.get(type(node), f"`{type(node).__name__}` is not supported here")
