"""Program text to `Program`: parsed with `ast`, then checked against a whitelist.

Nothing the user typed is ever evaluated by Python: `ast.parse` only builds a tree, and
every node of that tree is either translated into the lab's own `Program` or rejected
with a message that says what to write instead, and where. Plain programs take a faster
road to the same Program (`app.language.shapes`: each distinct line shape is parsed once), which
leaves every doubtful program, and so every error, to the full parse here.
"""

from __future__ import annotations

import ast
import threading

from app.language.messages import expression_message, op_text, statement_message
from app.language.program import (
    Assign,
    Backward,
    BinOp,
    Bool,
    Call,
    ClearGrad,
    Expr,
    ListExpr,
    Num,
    Program,
    Span,
    Statement,
    TensorCall,
    UnaryOp,
    Var,
)
from app.language.shapes import parse_by_shapes
from app.limits import DEFAULT_LIMITS, Limits

FUNCTIONS = ("tanh", "exp", "log", "sin", "cos", "sigmoid", "relu", "sqrt", "abs")
REDUCTIONS = ("sum", "mean")
BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
BACKWARD_ARGS = ("gradient", "retain_graph", "create_graph")
KNOWN = ", ".join(f"torch.{f}" for f in (*FUNCTIONS, *REDUCTIONS))


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


def unsupported(node: ast.AST | Span, message: str) -> SourceError:
    span = node if isinstance(node, Span) else _span(node)
    return SourceError("UnsupportedError", message, span.line, span.col, span.end_line,
                       span.end_col)


def _span(node: ast.AST) -> Span:
    if isinstance(node, (ast.expr, ast.stmt)):       # these always carry positions
        return Span(node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                    (node.end_col_offset or node.col_offset) + 1)
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0) + 1
    return Span(line, col, getattr(node, "end_lineno", None) or line,
                (getattr(node, "end_col_offset", None) or col - 1) + 1)


# CPython 3.11's ast.parse is not safe in several threads at once (python/cpython#106905:
# "AST constructor recursion depth mismatch"), and the server parses in a thread pool.
_PARSER_LOCK = threading.Lock()


def parse(source: str, limits: Limits = DEFAULT_LIMITS, fast: bool = True) -> Program:
    """Parse and check a program; raises SourceError for anything outside the language.

    `fast` first tries `app.language.shapes`, which translates each distinct line shape once and
    leaves anything it is not sure of to the full parse below: the result is the same.
    """
    _check_size(source, limits)
    if fast:
        program = parse_by_shapes(
            source, limits, lambda text, opening: translate_line(text, opening, limits))
        if program is not None:
            return program
    try:
        with _PARSER_LOCK:
            tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise SourceError("SyntaxError", _syntax_message(e), e.lineno or 1,
                          _syntax_col(e)) from None
    except (RecursionError, MemoryError):
        line, col = _too_deep(source)
        raise SourceError("UnsupportedError", f"this expression is nested more than "
                          f"{limits.max_depth} levels deep: split it into several lines",
                          line, col, limit=True) from None
    return _Translator(source, limits).program(tree)


def translate_line(text: str, opening: bool, limits: Limits) -> tuple[Statement, ...] | None:
    """A program of this one line, every name in it taken as defined: its statements (none
    for `import torch`), or None if the lab rejects it. This is what `app.language.shapes` asks once
    per line shape, so the fast path and the full one share this module's whitelist."""
    try:
        with _PARSER_LOCK:
            tree = ast.parse(text, mode="exec")
        if len(tree.body) != 1:
            return None
        translator = _Translator(text, limits)
        translator.defined = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        stmt = tree.body[0]
        if isinstance(stmt, ast.Import):
            translator._import(stmt)
            return ()
        return (translator._statement(stmt, opening),)
    except (SourceError, SyntaxError, RecursionError, MemoryError, ValueError):
        return None


def _too_deep(source: str) -> tuple[int, int]:
    """Where Python's parser gave up on depth (it does not say): the first line that is too
    deep on its own, at its first non-blank column; else the start of the program."""
    for number, text in enumerate(source.splitlines(), start=1):
        try:
            with _PARSER_LOCK:
                ast.parse(text.strip())
        except (RecursionError, MemoryError):
            return number, len(text) - len(text.lstrip()) + 1
        except SyntaxError:
            continue
    return 1, 1


def _check_size(source: str, limits: Limits) -> None:
    size = len(source.encode("utf-8", errors="replace"))
    if size > limits.max_source_bytes:
        raise SourceError("UnsupportedError", f"the program is {size} bytes long; the lab "
                          f"accepts at most {limits.max_source_bytes}", 1, 1, limit=True)
    if "\0" in source:
        before = source[: source.index("\0")]
        raise SourceError("SyntaxError", "the program contains a NUL byte (\\0)",
                          before.count("\n") + 1, len(before.rsplit("\n", 1)[-1]) + 1)
    lines = len(source.splitlines())          # a final newline ends a line, adds none
    if lines > limits.max_lines:
        raise SourceError("UnsupportedError", f"the program has {lines} lines; the lab "
                          f"accepts at most {limits.max_lines}", limits.max_lines + 1, 1,
                          limit=True)
    if not source.strip():
        raise SourceError("UnsupportedError", "the program is empty: define a leaf such as "
                          "`w = 3.0` and compute something from it", 1, 1)


def _syntax_col(e: SyntaxError) -> int:
    """Python's column, except for indentation errors, whose offset varies with the
    whitespace: there the offending text is the statement that starts too far in."""
    if isinstance(e, IndentationError) and e.text and e.text.strip():
        return len(e.text) - len(e.text.lstrip()) + 1
    return e.offset or 1


def _syntax_message(e: SyntaxError) -> str:
    msg = e.msg or "invalid syntax"
    if "too many nested parentheses" in msg:
        return "too many nested parentheses: the lab reads at most 200 levels"
    return msg[0].upper() + msg[1:] if msg else msg


class _Translator:
    """Walks the ast once, building the Program and rejecting everything else."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.defined: set[str] = set()

    def program(self, tree: ast.Module) -> Program:
        statements: list[Statement] = []
        opening = True           # still in the opening block of leaf definitions
        has_backward = False
        last_assigned: str | None = None
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                self._import(stmt)
                continue
            translated = self._statement(stmt, opening)
            if isinstance(translated, Assign):
                last_assigned = translated.name
                if translated.leaf_shorthand or (
                        opening and isinstance(translated.value, TensorCall)):
                    statements.append(translated)
                    continue
            has_backward = has_backward or isinstance(translated, Backward)
            opening = False
            statements.append(translated)
        if not statements:
            raise SourceError("UnsupportedError", "the program has no statements: define a "
                              "leaf such as `w = 3.0` and compute something from it", 1, 1)
        implicit = None if has_backward else last_assigned
        imports = any(isinstance(stmt, ast.Import) for stmt in tree.body)
        return Program(tuple(statements), implicit, self.source.splitlines(), imports)

    # -- statements ------------------------------------------------------------------
    def _import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            if alias.name != "torch" or alias.asname not in (None, "torch"):
                raise unsupported(stmt, f"only `import torch` is allowed here, not "
                                        f"`import {alias.name}`")

    def _statement(self, stmt: ast.stmt, opening: bool) -> Statement:
        if isinstance(stmt, ast.Assign):
            return self._assign(stmt, opening)
        if isinstance(stmt, ast.Expr) and _is_method_call(stmt.value, "backward"):
            return self._backward(stmt.value)  # type: ignore[arg-type]
        raise unsupported(stmt, statement_message(stmt))

    def _assign(self, stmt: ast.Assign, opening: bool) -> Statement:
        if len(stmt.targets) != 1:
            raise unsupported(stmt, "assign one name at a time (`a = b = ...` is not "
                                    "supported here)")
        target = stmt.targets[0]
        if (isinstance(target, ast.Attribute) and target.attr == "grad"
                and isinstance(target.value, ast.Name)
                and isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
            self._use(target.value)
            return ClearGrad(target.value.id, _span(stmt))
        if not isinstance(target, ast.Name):
            raise unsupported(target, "assign to a plain name, as in `y = w * x`")
        name = self._name(target)
        number = _number_literal(stmt.value)
        if opening and number is not None:
            value: Expr = Num(number, _span(stmt.value))
            self.defined.add(name)
            return Assign(name, value, _span(stmt), leaf_shorthand=True)
        value = self._expr(stmt.value, 0)
        self.defined.add(name)
        return Assign(name, value, _span(stmt))

    def _backward(self, call: ast.Call) -> Backward:
        func = call.func
        assert isinstance(func, ast.Attribute)
        receiver = self._expr(func.value, 0)
        if len(call.args) > len(BACKWARD_ARGS):
            raise unsupported(call, "backward() takes gradient, retain_graph and "
                                    "create_graph")
        values: dict[str, Expr] = {}
        for name, arg in zip(BACKWARD_ARGS, call.args, strict=False):
            values[name] = self._expr(arg, 0, keyword=True)
        for kw in call.keywords:
            if kw.arg not in BACKWARD_ARGS:
                what = "**kwargs" if kw.arg is None else f"`{kw.arg}=`"
                raise unsupported(kw, f"backward() here accepts gradient=, retain_graph= and "
                                      f"create_graph=, not {what}")
            if kw.arg in values:
                raise unsupported(kw, f"backward() got `{kw.arg}` twice")
            values[kw.arg] = self._expr(kw.value, 0, keyword=True)
        return Backward(receiver, ast.unparse(func.value),
                        values.get("gradient"), values.get("retain_graph"),
                        values.get("create_graph"), _span(call))

    # -- expressions -----------------------------------------------------------------
    def _expr(self, node: ast.expr, depth: int, keyword: bool = False) -> Expr:
        if depth > self.limits.max_depth:
            raise unsupported(node, f"this expression is nested more than "
                                    f"{self.limits.max_depth} levels deep: split it into "
                                    f"several lines")
        span = _span(node)
        if isinstance(node, ast.Constant):
            return self._constant(node, keyword)
        if isinstance(node, ast.Name):
            return Var(self._use(node), span)
        if isinstance(node, ast.BinOp):
            op = BINARY.get(type(node.op))
            if op is None:
                raise unsupported(node, f"the `{op_text(node.op)}` operator is not supported "
                                        f"here: use + - * / **")
            return BinOp(op, self._expr(node.left, depth + 1),
                         self._expr(node.right, depth + 1), span)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, (ast.USub, ast.UAdd)):
                return UnaryOp("-" if isinstance(node.op, ast.USub) else "+",
                               self._expr(node.operand, depth + 1), span)
            raise unsupported(node, "only unary minus (`-x`) is supported here")
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.List) and keyword:
            return ListExpr(tuple(self._expr(e, depth + 1) for e in node.elts), span)
        raise unsupported(node, expression_message(node))

    def _constant(self, node: ast.Constant, keyword: bool) -> Expr:
        value = node.value
        if isinstance(value, bool) or value is None:
            if keyword:
                return Bool(value, _span(node))
            raise unsupported(node, f"`{value}` can only be a keyword value here, as in "
                                    f"`retain_graph=True`")
        if isinstance(value, int):
            if value.bit_length() > self.limits.max_number_bits:
                raise unsupported(node, "this number is too large for the lab")
            return Num(value, _span(node))
        if isinstance(value, float):
            return Num(value, _span(node))
        if isinstance(value, complex):
            raise unsupported(node, "complex numbers are not supported here")
        raise unsupported(node, f"{type(value).__name__} values are not supported here: "
                                f"the lab computes with numbers and tensors")

    def _call(self, node: ast.Call, depth: int) -> Expr:
        func = node.func
        span = _span(node)
        if isinstance(func, ast.Attribute) and _is_torch(func.value):
            self._check_attribute(func)
            if func.attr == "tensor":
                return self._tensor_call(node, depth)
            if func.attr in FUNCTIONS + REDUCTIONS:
                if len(node.args) != 1 or node.keywords:
                    raise unsupported(node, f"torch.{func.attr}() takes one tensor here, as "
                                            f"in `torch.{func.attr}(x)`")
                return Call(func.attr, self._expr(node.args[0], depth + 1), False, span)
            raise unsupported(func, f"`torch.{func.attr}` is not supported here; the lab "
                                    f"knows torch.tensor, {KNOWN}")
        if isinstance(func, ast.Attribute):
            self._check_attribute(func)
            if func.attr in FUNCTIONS + REDUCTIONS:
                if node.args or node.keywords:
                    raise unsupported(node, f"`.{func.attr}()` takes no arguments here")
                return Call(func.attr, self._expr(func.value, depth + 1), True, span)
            if func.attr == "backward":
                raise unsupported(node, "backward() returns None: call it on a line of its "
                                        "own, as in `loss.backward()`")
            raise unsupported(func, f"the method `.{func.attr}()` is not supported here; "
                                    f"the lab knows " + ", ".join(
                                        f".{f}()" for f in (*FUNCTIONS, *REDUCTIONS)))
        if isinstance(func, ast.Name):
            raise unsupported(func, f"`{func.id}(...)` is not supported here; the lab knows "
                                    f"torch.tensor, {KNOWN}")
        raise unsupported(node, "only torch functions and tensor methods can be called here")

    def _tensor_call(self, node: ast.Call, depth: int) -> TensorCall:
        if len(node.args) != 1:
            raise unsupported(node, "torch.tensor() takes one value here, as in "
                                    "`torch.tensor([1.0, 2.0], requires_grad=True)`")
        requires_grad = None
        for kw in node.keywords:
            if kw.arg != "requires_grad":
                what = "**kwargs" if kw.arg is None else f"`{kw.arg}=`"
                raise unsupported(kw, f"torch.tensor() here accepts requires_grad=, not {what}")
            requires_grad = self._expr(kw.value, depth + 1, keyword=True)
        return TensorCall(self._data(node.args[0], depth + 1), requires_grad, _span(node))

    def _data(self, node: ast.expr, depth: int) -> Expr:
        """The data of torch.tensor(...): numbers, number expressions, nested lists."""
        if isinstance(node, ast.List):
            if depth > self.limits.max_depth:
                raise unsupported(node, "these lists are nested too deeply")
            if len(node.elts) > self.limits.max_elements:
                raise unsupported(node, f"a tensor may have at most "
                                        f"{self.limits.max_elements} elements here")
            return ListExpr(tuple(self._data(e, depth + 1) for e in node.elts), _span(node))
        if isinstance(node, ast.BinOp) and any(isinstance(n, ast.List)
                                               for n in ast.walk(node)):
            raise unsupported(node, "list arithmetic (`[1.0] * n`) is not supported here: "
                                    "write the values out, as in `torch.tensor([1.0, 1.0])`")
        if isinstance(node, (ast.Tuple, ast.ListComp, ast.GeneratorExp)):
            raise unsupported(node, "write the tensor's values as a list, as in "
                                    "`torch.tensor([1.0, 2.0])`")
        return self._expr(node, depth)

    # -- names and attributes --------------------------------------------------------
    def _name(self, node: ast.Name) -> str:
        if node.id.startswith("__"):
            raise unsupported(node, "names starting with two underscores are not allowed")
        if node.id == "torch":
            raise unsupported(node, "`torch` is the PyTorch module: pick another name")
        return node.id

    def _use(self, node: ast.Name) -> str:
        name = self._name(node)
        if name not in self.defined:
            raise unsupported(node, f"`{name}` is not defined: assign it on an earlier line, "
                                    f"as in `{name} = 1.0`")
        return name

    def _check_attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            raise unsupported(node, f"`.{node.attr}`: attributes starting with an underscore "
                                    f"are not allowed")


def _is_torch(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "torch"


def _is_method_call(node: ast.expr, method: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == method)


def _number_literal(node: ast.expr) -> int | float | None:
    """NUMBER, -NUMBER or +NUMBER (the leaf shorthand's right-hand side), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number_literal(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)):
        return node.value
    return None
