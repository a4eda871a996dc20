"""What the lab says about Python it does not take: one sentence per construct, saying
what to write instead. The parser raises them with the construct's line and column."""

from __future__ import annotations

import ast

_STATEMENTS: dict[type, str] = {
    ast.Try: "`try` blocks are not supported: the lab shows PyTorch's error where it happens, "
             "so let it stop the program",
    ast.Raise: "`raise` is not supported: the lab stops at PyTorch's own errors; use "
               "`assert condition, \"message\"` to check something",
    ast.Global: "`global` is not supported: pass the value in as an argument and return the "
                "new one",
    ast.Nonlocal: "`nonlocal` is not supported: pass the value in as an argument and return "
                  "the new one",
    ast.AsyncFunctionDef: "`async def` is not supported: write a plain `def`",
    ast.AsyncFor: "`async for` is not supported: write a plain `for` loop",
    ast.AsyncWith: "`async with` is not supported",
    ast.Match: "`match` statements are not supported: write `if` / `elif` / `else`",
}


def statement_message(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
            stmt.value.value, str):
        return "a string on a line of its own does nothing here: use a `#` comment"
    return _STATEMENTS.get(type(stmt), f"`{type(stmt).__name__}` statements are not "
                                       "supported in the lab")


_EXPRESSIONS: dict[type, str] = {
    ast.Set: "sets are not supported: use a list `[...]` or a tuple `(...)`",
    ast.SetComp: "set comprehensions are not supported: use a list comprehension `[...]`",
    ast.NamedExpr: "`:=` is not supported: assign the value on its own line first",
    ast.Await: "`await` is not supported",
    ast.Yield: "`yield` is not supported: build a list and return it",
    ast.YieldFrom: "`yield from` is not supported: build a list and return it",
}


def expression_message(node: ast.expr) -> str:
    return _EXPRESSIONS.get(type(node), f"`{type(node).__name__}` is not supported in the lab")


def operator_message(op: ast.AST) -> str:
    symbols: dict[type, str] = {ast.LShift: "<<", ast.RShift: ">>"}
    symbol = symbols.get(type(op), type(op).__name__)
    return f"the `{symbol}` operator is not supported: autograd has no use for bit shifts"


FORBIDDEN_NAMES = {
    "eval": "`eval` is not available: the lab never runs text as code; write the expression "
            "out",
    "exec": "`exec` is not available: the lab never runs text as code",
    "compile": "`compile` is not available: the lab never runs text as code",
    "open": "`open` is not available: a lab program cannot read or write files",
    "input": "`input` is not available: put the value in the program",
    "__import__": "`__import__` is not available: write `import torch` at the top",
    "getattr": "`getattr` is not available: write the attribute out, as in `x.grad`",
    "setattr": "`setattr` is not available: assign the attribute, as in `x.grad = None`",
    "delattr": "`delattr` is not available",
    "hasattr": "`hasattr` is not available: the lab's objects have the attributes PyTorch "
               "documents",
    "globals": "`globals` is not available",
    "locals": "`locals` is not available",
    "vars": "`vars` is not available",
    "dir": "`dir` is not available",
    "breakpoint": "`breakpoint` is not available: step through backward with the lab's "
                  "controls instead",
    "exit": "`exit` is not available: the program ends after its last line",
    "quit": "`quit` is not available: the program ends after its last line",
    "help": "`help` is not available: see PyTorch's documentation",
    "memoryview": "`memoryview` is not available",
    "object": "`object` is not available",
}

# `m.__class__.__name__`; `print(torch.__version__)` opens many tutorials
ALLOWED_DUNDERS = {"__init__", "__name__", "__class__", "__version__"}
ALLOWED_PRIVATE = {"_version", "_sequence_nr", "_base", "_is_view"}


def attribute_message(attr: str) -> str:
    if attr.startswith("__"):
        return (f"`.{attr}`: attributes with double underscores are not available in the "
                "lab's programs")
    return (f"`.{attr}`: of the attributes that start with an underscore the lab has only "
            "`_version`, `_sequence_nr()` and a node's `_saved_*` values")


STRING_MESSAGE = ("a string here does nothing for autograd: the lab takes strings in print(...) "
                  "and f-strings, in comparisons and as PyTorch's string arguments such as "
                  "`reduction=\"sum\"`")
LAMBDA_MESSAGE = ("a `lambda` is only allowed as an argument that PyTorch calls, such as a "
                  "hook: `y.register_hook(lambda g: g * 2)`; for a function of your own use "
                  "`def`")
CLASS_MESSAGE = ("a class must subclass `torch.autograd.Function` (a custom op with forward "
                 "and backward) or `nn.Module` (a model); other classes are not supported")
DECORATOR_MESSAGE = ("the lab takes `@staticmethod` (in an autograd.Function) and "
                     "`@torch.no_grad()`, `@torch.enable_grad()`, `@torch.inference_mode()` on "
                     "functions; other decorators are not supported")
IMPORT_MESSAGE = ("the lab can import torch, torch.nn (as nn), torch.nn.functional (as F), "
                  "torch.optim, torch.autograd and math; other modules are not available")
