"""Program text to `Program`: parsed once with `ast`, then checked against a whitelist.

Nothing the user typed is ever evaluated by Python: `ast.parse` only builds a tree, and
every node of that tree is either translated into the lab's own `Program` (program.py)
or rejected with a message that says what to write instead, and where. Names and
attributes are only ever looked up by the interpreter in its own tables.

CONTRACT §1: a program that imports torch is plain PyTorch; one that does not is in the
lab's shorthand, whose opening block's `name = NUMBER` lines are leaves that require grad
and which, without any backward() call, ends with one on its last assignment.
"""

from __future__ import annotations

import ast
import keyword
import re
import threading
import warnings
from typing import Any, Final

from app.language import messages
from app.language.export import leaf_expansion
from app.language.program import (
    Assert,
    Assign,
    Attribute,
    AugAssign,
    BinOp,
    BoolOp,
    Break,
    Call,
    ClassDef,
    Compare,
    Comprehension,
    Const,
    Continue,
    Delete,
    DictExpr,
    Expr,
    ExprStmt,
    For,
    FormattedValue,
    FString,
    FunctionDef,
    If,
    IfExp,
    Import,
    Keyword,
    Lambda,
    ListComp,
    ListExpr,
    Name,
    Param,
    Pass,
    Program,
    Return,
    ShorthandLeaf,
    SliceExpr,
    Span,
    Starred,
    Stmt,
    Subscript,
    Target,
    TupleExpr,
    TupleTarget,
    UnaryOp,
    While,
    With,
    WithItem,
)
from app.limits import DEFAULT_LIMITS, Limits

BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
          ast.BitXor: "^"}
UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}
COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
           ast.NotIn: "not in"}
MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.optim",
           "torch.autograd", "torch.autograd.functional", "torch.autograd.graph",
           "torch.autograd.function", "math")
FUNCTION_BASES = {"torch.autograd.Function", "autograd.Function", "Function"}
MODULE_BASES = {"torch.nn.Module", "nn.Module", "Module"}


class SourceError(Exception):
    """A program the lab rejects: `SyntaxError` or `UnsupportedError`, with its place.

    A plain class, not a dataclass: mypyc cannot make a dataclass of an Exception."""

    def __init__(self, type: str, message: str, line: int, col: int,
                 end_line: int | None = None, end_col: int | None = None,
                 limit: bool = False) -> None:
        super().__init__(type, message, line, col, end_line, end_col)
        self.limit = limit                # one of the lab's limits, not a rejected construct
        self.type = type
        self.message = message
        self.line = line
        self.col = col
        self.end_line = end_line          # where the offending text ends, when known
        self.end_col = end_col

    def __str__(self) -> str:
        return f"{self.type} at line {self.line}, column {self.col}: {self.message}"


def span_of(node: ast.AST) -> Span:
    positioned: Any = node      # statements, expressions, arguments, keywords ...
    try:
        line, col = positioned.lineno, positioned.col_offset + 1
    except AttributeError:      # ... but not the module or an operator
        return Span(1, 1, 1, 1)
    return Span(line, col, positioned.end_lineno or line,
                (positioned.end_col_offset or col - 1) + 1)


def unsupported(node: ast.AST | Span, message: str, limit: bool = False) -> SourceError:
    span = node if isinstance(node, Span) else span_of(node)
    return SourceError("UnsupportedError", message, span.line, span.col, span.end_line,
                       span.end_col, limit=limit)


# CPython 3.11's ast.parse is not safe in several threads at once (python/cpython#106905:
# "AST constructor recursion depth mismatch"), and the server parses in a thread pool.
_PARSER_LOCK = threading.Lock()


def _ast_parse(source: str) -> ast.Module:
    """ast.parse under the lock, the warnings it gives about the program's text dropped
    (`1if x`, an invalid escape such as a backslash-d in a string): they would be lines on
    the server's stderr, outside its JSON logs, one for every line a client cares to send."""
    with _PARSER_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, mode="exec")


def parse(source: str, limits: Limits = DEFAULT_LIMITS) -> Program:
    """Parse and check a program; raises SourceError for anything outside the language."""
    _check_size(source, limits)
    try:
        tree = _ast_parse(source)
    except SyntaxError as e:
        named = _invalid_name(e)
        if named is not None:
            raise named from None
        raise SourceError("SyntaxError", _syntax_message(e), e.lineno or 1, _syntax_col(e),
                          e.end_lineno, e.end_offset) from None
    except (RecursionError, MemoryError):
        line, col = _too_deep(source)
        raise SourceError("UnsupportedError", f"this expression is nested more than "
                          f"{limits.max_depth} levels deep: split it into several lines",
                          line, col, limit=True) from None
    return _Translator(source, limits).program(tree, _survey(tree, limits))


class _Survey:
    """What the program text says as a whole, found in one walk over its tree."""

    __slots__ = ("own_names", "imports_torch", "calls_backward", "mentions_print")

    def __init__(self) -> None:
        # every name the program binds anywhere (assignments, parameters, defs, loop
        # targets): such a name is the program's variable, not the builtin it may shadow
        # (the docs' custom Functions take a parameter called `input`)
        self.own_names: set[str] = set()
        self.imports_torch = False      # CONTRACT §1: any import of torch makes it plain
        self.calls_backward = False     # `.backward(...)` or `torch.autograd.grad(...)`
        self.mentions_print = False


_LEAF_FIELDS: Final = frozenset({"ctx", "op", "ops"})


def _survey(tree: ast.Module, limits: Limits) -> _Survey:
    """Walk the whole tree once, without recursion: refuse an expression nested deeper
    than the limit, and note what `_Survey` holds. (One walk, not one per question, and
    not through `ast.walk`: MEASURED in Note [One walk over the tree].)"""
    survey = _Survey()
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            depth += 1
            if depth > limits.max_depth:
                raise unsupported(node, f"this expression is nested more than "
                                        f"{limits.max_depth} levels deep: split it into "
                                        "several lines", limit=True)
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    survey.own_names.add(node.id)
                if node.id == "print":
                    survey.mentions_print = True
            elif isinstance(node, ast.Call) and _is_backward_call(node):
                survey.calls_backward = True
        elif isinstance(node, ast.stmt):
            depth = 0
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                survey.own_names.add(node.name)
            elif _imports_torch(node):
                survey.imports_torch = True
        elif isinstance(node, ast.arg):
            survey.own_names.add(node.arg)
        for field in node._fields:          # ast.iter_child_nodes' children, in its order,
            if field in _LEAF_FIELDS:       # but for the operators and contexts, which
                continue                    # hold nothing (a third of the nodes)
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                stack.append((value, depth))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        stack.append((item, depth))
    return survey


# Note [One walk over the tree]
# The depth limit, the names a program binds, whether it imports torch, calls backward
# or mentions print were five walks over the tree, four of them by `ast.walk`, a Python
# generator that the compiled build calls through the interpreter; and the 131,000 spans
# and expressions that bench/programs.py's 10,000-line program makes went through the
# `__init__` that the dataclass decorator writes, which stays interpreted Python (Span
# was frozen too: slower still). Parsing took two thirds of that program's 650 ms trace
# (compiled, best of 3). With one walk, written `__init__`s for the classes a program has
# many of (program.py) and the lone-surrogate check as one regular expression: 380 ms,
# of which `ast.parse` itself is about 70 ms; `python -m bench engine`'s paired median
# 3.20 -> 1.67 (1.71 before the walk skipped operators and contexts).


def _too_deep(source: str) -> tuple[int, int]:
    """Where Python's parser gave up on depth (it does not say): the first line that is too
    deep on its own, at its first non-blank column; else the start of the program."""
    for number, text in enumerate(source.splitlines(), start=1):
        try:
            _ast_parse(text.strip())
        except (RecursionError, MemoryError):
            return number, len(text) - len(text.lstrip()) + 1
        except SyntaxError:
            continue
    return 1, 1


_LONE_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")   # (mypyc: no literal)


def _check_size(source: str, limits: Limits) -> None:
    size = len(source.encode("utf-8", errors="replace"))
    if size > limits.max_source_bytes:
        raise SourceError("UnsupportedError", f"the program is {size} bytes long; the lab "
                          f"accepts at most {limits.max_source_bytes}", 1, 1, limit=True)
    for marker, what in (("\0", "a NUL byte (\\0)"),):
        if marker in source:
            before = source[: source.index(marker)]
            raise SourceError("SyntaxError", f"the program contains {what}",
                              before.count("\n") + 1, len(before.rsplit("\n", 1)[-1]) + 1)
    lone = _LONE_SURROGATE.search(source)     # (a scan in C, not a call per character)
    if lone is not None:
        before = source[:lone.start()]
        raise SourceError("SyntaxError", "the program contains a character that is not valid "
                          "text (a lone surrogate)", before.count("\n") + 1,
                          len(before.rsplit("\n", 1)[-1]) + 1)
    lines = len(source.splitlines())          # a final newline ends a line, adds none
    if lines > limits.max_lines:
        raise SourceError("UnsupportedError", f"the program has {lines} lines; the lab "
                          f"accepts at most {limits.max_lines}", limits.max_lines + 1, 1,
                          limit=True)
    if not source.strip():
        raise SourceError("UnsupportedError", "the program is empty: define a leaf such as "
                          "`w = torch.tensor(3.0, requires_grad=True)` and compute something "
                          "from it", 1, 1)


def _syntax_col(e: SyntaxError) -> int:
    """Python's column, except for indentation errors, whose offset varies with the
    whitespace: there the offending text is the statement that starts too far in."""
    if isinstance(e, IndentationError) and e.text and e.text.strip():
        return len(e.text) - len(e.text.lstrip()) + 1
    return e.offset or 1


_TARGET = re.compile(r"\s*([A-Za-z_0-9][\w-]*)\s*=(?!=)")


def _invalid_name(e: SyntaxError) -> SourceError | None:
    """An assignment to a word that cannot be a name: a keyword (`for = 3`), a hyphen
    (`my-var = 3`), a leading digit (`2w = 3`). Python says `invalid syntax` or suggests
    `==`, which does not say what is wrong; the lab says it, with the word underlined."""
    match = None if isinstance(e, IndentationError) else _TARGET.match(e.text or "")
    if match is None or not e.lineno:
        return None
    word = match.group(1)
    if keyword.iskeyword(word) and word not in ("True", "False", "None"):
        advice = (f"`{word}` is a Python keyword, so it cannot be a variable's name: "
                  f"choose another, such as `{word}_`")
    elif re.fullmatch(r"[A-Za-z_]\w*(-\w+)+", word):
        advice = (f"`{word}` is not a valid name: a name has only letters, digits and "
                  f"underscores, so write `{word.replace('-', '_')}`")
    elif re.fullmatch(r"\d+[A-Za-z_]\w*", word) and not _is_number(word):
        digits = word[:len(word) - len(word.lstrip("0123456789"))]
        advice = (f"`{word}` is not a valid name: a name cannot start with a digit, so "
                  f"write `{word[len(digits):]}{digits}`")
    else:
        return None
    return SourceError("SyntaxError", advice, e.lineno, match.start(1) + 1, e.lineno,
                       match.end(1) + 1)


def _is_number(word: str) -> bool:
    """`1e5` and `0x1f` are number literals (Python says it cannot assign to them)."""
    try:
        ast.literal_eval(word)
    except (ValueError, SyntaxError):
        return False
    return True


def _syntax_message(e: SyntaxError) -> str:
    msg = e.msg or "invalid syntax"
    if "too many nested parentheses" in msg:
        return "too many nested parentheses: the lab reads at most 200 levels"
    return msg[0].upper() + msg[1:] if msg else msg


def _imports_torch(stmt: ast.stmt) -> bool:
    """Whether this statement imports torch (or a module of it)."""
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        module = stmt.module or ""          # (None for `from . import x`)
        return module == "torch" or module.startswith("torch.")
    return False


def _number_literal(node: ast.AST) -> int | float | None:
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


def _is_tensor_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "tensor" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "torch")


def _is_backward_call(node: ast.Call) -> bool:
    """`X.backward(...)` or `torch.autograd.grad(...)`."""
    f = node.func
    if not isinstance(f, ast.Attribute):
        return False
    return f.attr == "backward" or (
        f.attr == "grad" and isinstance(f.value, ast.Attribute) and f.value.attr == "autograd"
        and isinstance(f.value.value, ast.Name) and f.value.value.id == "torch")


def _last_assigned(statements: list[ast.stmt]) -> str | None:
    """The target of the last `name = ...` in the text, outside def and class bodies."""
    last = None
    for stmt in statements:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            last = stmt.targets[0].id
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                found = _last_assigned(inner)
                last = found if found is not None else last
    return last


def _bound_names(body: list[ast.stmt]) -> set[str]:
    """The names a function body binds: Python's local variables of that function."""
    names: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp)):
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        stack.extend(ast.iter_child_nodes(node))
    return names


class _Translator:
    """Walks the ast once, building the Program and rejecting everything else."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.in_function = 0
        self.function_names: list[str] = []     # the defs being read, innermost last
        self.in_loop = 0
        self.own_names: set[str] = set()

    def program(self, tree: ast.Module, survey: _Survey) -> Program:
        self.own_names = survey.own_names
        plain = survey.imports_torch
        body: list[Stmt] = []
        shorthand: list[ShorthandLeaf] = []
        opening = not plain          # still in the opening block of leaf definitions
        for stmt in tree.body:
            if opening and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                number = _number_literal(stmt.value)
                if number is not None:
                    leaf = ShorthandLeaf(stmt.targets[0].id, span_of(stmt),
                                         leaf_expansion(number))
                    shorthand.append(leaf)
                    body.append(Assign([self._name(stmt.targets[0])],
                                       Const(float(number), span_of(stmt.value)),
                                       span_of(stmt), shorthand=True))
                    continue
                if not _is_tensor_call(stmt.value):
                    opening = False
            elif not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                opening = False
            body.extend(self.statements([stmt], docstrings=True))
        implicit = None
        if not plain and not survey.calls_backward:
            implicit = _last_assigned(tree.body)
        return Program(body, "plain" if plain else "shorthand", shorthand, implicit,
                       survey.mentions_print, self.source.splitlines())

    # -- statements ------------------------------------------------------------------
    def statements(self, stmts: list[ast.stmt], docstrings: bool = False) -> list[Stmt]:
        out: list[Stmt] = []
        for i, stmt in enumerate(stmts):
            if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str) and (docstrings or i == 0)):
                continue                                   # a docstring does nothing
            out.append(self.statement(stmt))
        return out

    def statement(self, stmt: ast.stmt) -> Stmt:
        span = span_of(stmt)
        if isinstance(stmt, ast.Assign):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                raise unsupported(stmt.value, messages.STRING_MESSAGE)
            return Assign([self.target(t) for t in stmt.targets], self.expr(stmt.value), span)
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return Pass(span)
            return Assign([self.target(stmt.target)], self.expr(stmt.value), span)
        if isinstance(stmt, ast.AugAssign):
            op = BINARY.get(type(stmt.op))
            if op is None:
                raise unsupported(stmt, messages.operator_message(stmt.op))
            return AugAssign(self.target(stmt.target), op, self.expr(stmt.value), span)
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                raise unsupported(stmt, messages.statement_message(stmt))
            return ExprStmt(self.expr(stmt.value), span)
        if isinstance(stmt, ast.If):
            return If(self.expr(stmt.test), self.block(stmt.body), self.block(stmt.orelse),
                      span)
        if isinstance(stmt, (ast.For, ast.While)):
            self.in_loop += 1
            try:
                body, orelse = self.block(stmt.body), self.block(stmt.orelse)
            finally:
                self.in_loop -= 1
            if isinstance(stmt, ast.For):
                return For(self.target(stmt.target), self.expr(stmt.iter), body, orelse, span)
            return While(self.expr(stmt.test), body, orelse, span)
        if isinstance(stmt, (ast.Break, ast.Continue)):
            if not self.in_loop:
                word = "break" if isinstance(stmt, ast.Break) else "continue"
                raise SourceError("SyntaxError", f"'{word}' outside loop", span.line, span.col)
            return Break(span) if isinstance(stmt, ast.Break) else Continue(span)
        if isinstance(stmt, ast.Pass):
            return Pass(span)
        if isinstance(stmt, ast.With):
            items = [WithItem(self.expr(i.context_expr),
                              self.target(i.optional_vars) if i.optional_vars else None)
                     for i in stmt.items]
            return With(items, self.block(stmt.body), span)
        if isinstance(stmt, ast.FunctionDef):
            return self.function(stmt)
        if isinstance(stmt, ast.ClassDef):
            return self.class_def(stmt)
        if isinstance(stmt, ast.Return):
            if not self.in_function:
                raise SourceError("SyntaxError", "'return' outside function", span.line,
                                  span.col)
            # a module's extra_repr returns the text its print shows
            text = self.function_names[-1:] == ["extra_repr"]
            return Return(self.expr(stmt.value, strings=text) if stmt.value else None, span)
        if isinstance(stmt, ast.Assert):
            return Assert(self.expr(stmt.test),
                          self.expr(stmt.msg, strings=True) if stmt.msg else None, span)
        if isinstance(stmt, ast.Delete):
            return Delete([self.target(t) for t in stmt.targets], span)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return self.import_(stmt)
        raise unsupported(stmt, messages.statement_message(stmt))

    def block(self, stmts: list[ast.stmt]) -> list[Stmt]:
        return self.statements(stmts)

    def import_(self, stmt: ast.Import | ast.ImportFrom) -> Import:
        bindings: list[tuple[str, str, str | None]] = []
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name not in MODULES:
                    raise unsupported(stmt, messages.IMPORT_MESSAGE)
                if alias.asname:
                    bindings.append((alias.asname, alias.name, None))
                else:
                    top = alias.name.split(".")[0]
                    bindings.append((top, top, None))
        else:
            module = stmt.module or ""
            if module not in MODULES or stmt.level:
                raise unsupported(stmt, messages.IMPORT_MESSAGE)
            for alias in stmt.names:
                if alias.name == "*":
                    raise unsupported(stmt, "`import *` is not supported: import the names "
                                            "you use, as in `from torch import nn`")
                bindings.append((alias.asname or alias.name, module, alias.name))
        return Import(bindings, span_of(stmt))

    def function(self, stmt: ast.FunctionDef, method: bool = False) -> FunctionDef:
        decorators = [self.decorator(d, method) for d in stmt.decorator_list]
        params = self.params(stmt.args)
        self.in_function += 1
        self.function_names.append(stmt.name)
        loops, self.in_loop = self.in_loop, 0
        try:
            body = self.statements(stmt.body)
        finally:
            self.in_function -= 1
            self.function_names.pop()
            self.in_loop = loops
        local = _bound_names(stmt.body) | {p.name for p in params}
        return FunctionDef(stmt.name, params, body, decorators, frozenset(local),
                           span_of(stmt))

    def decorator(self, node: ast.expr, method: bool) -> Expr:
        text = ast.unparse(node)
        allowed = {"torch.no_grad()", "torch.enable_grad()", "torch.inference_mode()",
                   "no_grad()", "enable_grad()", "inference_mode()"}
        if method:
            allowed |= {"staticmethod", "once_differentiable",
                        "torch.autograd.function.once_differentiable"}
        if text not in allowed and not text.startswith("torch.set_grad_enabled("):
            raise unsupported(node, messages.DECORATOR_MESSAGE)
        return self.expr(node)

    def params(self, args: ast.arguments) -> list[Param]:
        out: list[Param] = []
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        for a, d in zip(positional, defaults, strict=True):
            out.append(Param(a.arg, self.expr(d) if d is not None else None))
        if args.vararg:
            out.append(Param(args.vararg.arg, None, "varargs"))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            out.append(Param(a.arg, self.expr(d) if d is not None else None, "kwonly"))
        if args.kwarg:
            out.append(Param(args.kwarg.arg, None, "varkw"))
        return out

    def class_def(self, stmt: ast.ClassDef) -> ClassDef:
        if len(stmt.bases) != 1 or stmt.keywords:
            raise unsupported(stmt, messages.CLASS_MESSAGE)
        base = ast.unparse(stmt.bases[0])
        if base in FUNCTION_BASES:
            kind = "function"
        elif base in MODULE_BASES:
            kind = "module"
        else:
            raise unsupported(stmt.bases[0], messages.CLASS_MESSAGE)
        if stmt.decorator_list:
            raise unsupported(stmt.decorator_list[0], messages.DECORATOR_MESSAGE)
        methods: list[FunctionDef] = []
        attributes: list[Assign] = []
        for i, item in enumerate(stmt.body):
            if isinstance(item, ast.FunctionDef):
                methods.append(self.function(item, method=True))
            elif isinstance(item, ast.Assign):
                attributes.append(Assign([self.target(t) for t in item.targets],
                                         self.expr(item.value), span_of(item)))
            elif isinstance(item, ast.Pass) or (
                    isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str) and i == 0):
                continue
            else:
                raise unsupported(item, "a class body holds its methods (`def ...`) and "
                                        "plain attributes here")
        return ClassDef(stmt.name, kind, methods, attributes, span_of(stmt))

    # -- targets ---------------------------------------------------------------------
    def _name(self, node: ast.Name) -> Name:
        if node.id in messages.FORBIDDEN_NAMES and node.id not in self.own_names:
            raise unsupported(node, messages.FORBIDDEN_NAMES[node.id])
        if node.id.startswith("__") and node.id.endswith("__"):
            raise unsupported(node, f"`{node.id}`: names with double underscores are not "
                                    "available in the lab's programs")
        return Name(node.id, span_of(node))

    def target(self, node: ast.expr) -> Target:
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            if node.attr == "__class__":           # read as type(x), never assigned
                raise unsupported(node, messages.attribute_message(node.attr))
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return Subscript(self.expr(node.value), self.index(node.slice), span_of(node))
        if isinstance(node, (ast.Tuple, ast.List)):
            items: list[Target] = []
            starred = -1
            for i, elt in enumerate(node.elts):
                if isinstance(elt, ast.Starred):
                    starred = i
                    items.append(self.target(elt.value))
                else:
                    items.append(self.target(elt))
            return TupleTarget(items, span_of(node), starred)
        raise unsupported(node, "assign to a name, an attribute (`x.grad = None`), an item "
                                "(`x[0] = ...`) or several names (`a, b = ...`)")

    # -- expressions -----------------------------------------------------------------
    def expr(self, node: ast.expr, strings: bool = False) -> Expr:
        span = span_of(node)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str) and not strings:
                raise unsupported(node, messages.STRING_MESSAGE)
            if isinstance(value, (bytes, complex)):
                raise unsupported(node, "bytes and complex numbers are not supported")
            return Const(value, span)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, strings)
        if isinstance(node, ast.Call):
            return self.call(node, strings)
        if isinstance(node, ast.BinOp):
            op = BINARY.get(type(node.op))
            if op is None:
                raise unsupported(node, messages.operator_message(node.op))
            if op == "%" and isinstance(node.left, ast.Constant) and isinstance(
                    node.left.value, str):
                raise unsupported(node, "`%` formatting is not supported: use an f-string, "
                                        "as in `f\"{x:.4f}\"`")
            return BinOp(op, self.expr(node.left, strings), self.expr(node.right, strings), span)
        if isinstance(node, ast.UnaryOp):
            return UnaryOp(UNARY[type(node.op)], self.expr(node.operand, strings), span)
        if isinstance(node, ast.BoolOp):
            return BoolOp("and" if isinstance(node.op, ast.And) else "or",
                          [self.expr(v, strings) for v in node.values], span)
        if isinstance(node, ast.Compare):
            return Compare(self.expr(node.left, True), [COMPARE[type(o)] for o in node.ops],
                           [self.expr(c, True) for c in node.comparators], span)
        if isinstance(node, ast.IfExp):
            return IfExp(self.expr(node.test), self.expr(node.body, strings),
                         self.expr(node.orelse, strings), span)
        if isinstance(node, ast.Subscript):
            return Subscript(self.expr(node.value, strings), self.index(node.slice), span)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.element(e, strings) for e in node.elts]
            return TupleExpr(items, span) if isinstance(node, ast.Tuple) else ListExpr(items,
                                                                                         span)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise unsupported(node, "`**` in a dict is not supported: write the items out")
            return DictExpr([self.expr(k, True) for k in node.keys if k is not None],
                            [self.expr(v, True) for v in node.values], span)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            kind = "list" if isinstance(node, ast.ListComp) else "generator"
            return ListComp(self.expr(node.elt, True), self.generators(node.generators),
                            span, kind)
        if isinstance(node, ast.DictComp):
            pair = TupleExpr([self.expr(node.key, True), self.expr(node.value, True)], span)
            return ListComp(pair, self.generators(node.generators), span, "dict")
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node)
        if isinstance(node, ast.Lambda):
            raise unsupported(node, messages.LAMBDA_MESSAGE)
        if isinstance(node, ast.Starred):
            raise unsupported(node, "`*` unpacking is only allowed in calls and in "
                                    "assignments (`a, *rest = ...`)")
        raise unsupported(node, messages.expression_message(node))

    def element(self, node: ast.expr, strings: bool) -> Expr:
        if isinstance(node, ast.Starred):
            return Starred(self.expr(node.value), span_of(node))
        return self.expr(node, True)

    def attribute(self, node: ast.Attribute, strings: bool = False) -> Attribute:
        attr = node.attr
        if attr.startswith("_") and attr not in messages.ALLOWED_DUNDERS and \
                attr not in messages.ALLOWED_PRIVATE and not attr.startswith("_saved_"):
            raise unsupported(node, messages.attribute_message(attr))
        return Attribute(self.expr(node.value, strings), attr, span_of(node))

    def call(self, node: ast.Call, strings: bool = False) -> Call:
        func = self.expr(node.func, strings)
        args: list[Expr] = []
        for a in node.args:
            args.append(self.argument(a))
        keywords: list[Keyword] = []
        for k in node.keywords:
            keywords.append(Keyword(k.arg, self.argument(k.value)))
        text = ""
        if isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            text = ast.unparse(node.func.value)
        elif isinstance(node.func, (ast.Attribute, ast.Name)) and (
                node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        ) == "grad":
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "outputs"), None)
            text = ast.unparse(first) if first is not None else ""
        return Call(func, args, keywords, span_of(node), text)

    def argument(self, node: ast.expr) -> Expr:
        """A call's argument: strings and lambdas are allowed here."""
        if isinstance(node, ast.Lambda):
            return self.lambda_(node)
        if isinstance(node, ast.Starred):
            return Starred(self.expr(node.value), span_of(node))
        return self.expr(node, strings=True)

    def lambda_(self, node: ast.Lambda) -> Lambda:
        params = self.params(node.args)
        self.in_function += 1
        try:
            body = self.argument(node.body) if isinstance(node.body, ast.Lambda) else \
                self.expr(node.body, strings=True)
        finally:
            self.in_function -= 1
        return Lambda(params, body, span_of(node))

    def index(self, node: ast.expr) -> Expr:
        if isinstance(node, ast.Slice):
            return self.slice(node)
        if isinstance(node, ast.Tuple):
            return TupleExpr([self.slice(e) if isinstance(e, ast.Slice) else self.expr(e, True)
                              for e in node.elts], span_of(node))
        return self.expr(node, strings=True)

    def slice(self, node: ast.Slice) -> SliceExpr:
        return SliceExpr(self.expr(node.lower) if node.lower else None,
                         self.expr(node.upper) if node.upper else None,
                         self.expr(node.step) if node.step else None, span_of(node))

    def generators(self, gens: list[ast.comprehension]) -> list[Comprehension]:
        out = []
        for g in gens:
            if g.is_async:
                raise unsupported(g.iter, "async comprehensions are not supported")
            out.append(Comprehension(self.target(g.target), self.expr(g.iter),
                                     [self.expr(c) for c in g.ifs]))
        return out

    def fstring(self, node: ast.JoinedStr) -> FString:
        parts: list[str | FormattedValue] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                conversion = {-1: "", 115: "s", 114: "r", 97: "a"}[value.conversion]
                spec = None
                if value.format_spec is not None:
                    assert isinstance(value.format_spec, ast.JoinedStr)
                    spec = self.fstring(value.format_spec)
                parts.append(FormattedValue(self.expr(value.value, True), conversion, spec))
        return FString(parts, span_of(node))
