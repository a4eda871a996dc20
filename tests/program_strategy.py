"""Hypothesis strategies for random programs in the lab's language (CONTRACT.md §1).

Programs are built as `ast` trees and printed with `ast.unparse`, so operator precedence
and parentheses are exactly what Python (and therefore PyTorch) reads. Each program has
an opening block of leaves (the shorthand `a = 1.5`, `torch.tensor(...)` with and
without `requires_grad`, 0-d and small 1-d/2-d values that broadcast), a few
assignments built from `+ - * / **`, unary minus, numbers on either side, the nine
functions in both spellings and `sum`/`mean`, and an ending chosen from the categories
of the conformance corpus: implicit backward, explicit backward, retain_graph then a
second backward, a second backward through a freed graph, a re-forward, `gradient=` for
a non-scalar output, a non-scalar error, `.grad = None` between passes,
`create_graph=True`, and programs where nothing requires grad.

Values stay small (|x| <= 3, exponents <= 3) so float32 results stay comparable; nan and
infinities still occur (log of a negative, 1/0) and are compared as values.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

Shape = tuple[int, ...]
Draw = Callable[[st.SearchStrategy[Any]], Any]

FUNCTIONS = ("tanh", "exp", "log", "sin", "cos", "sigmoid", "relu", "sqrt", "abs")
REDUCTIONS = ("sum", "mean")
OPS: dict[str, type[ast.operator]] = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "**": ast.Pow,
}
VALUES = (-3.0, -2.5, -1.5, -1.0, -0.75, -0.5, -0.3, -0.1, 0.0, 0.1, 0.25, 0.3, 0.5, 0.7,
          1.0, 1.2, 1.5, 2.0, 2.5, 3.0)
NUMBERS: tuple[int | float, ...] = (1, 2, 3, 4, 10, -1, -2, 0.5, 0.1, 2.0, 1.5, -0.5, 0.25)
EXPONENTS: tuple[int | float, ...] = (2, 3, 0.5, -1, 2.0, -2, 0, 1.5, 1, 3.0)
BASES: tuple[int | float, ...] = (2, 0.5, 3, 2.0, 1.5)
SHAPE_FAMILIES: tuple[tuple[Shape, ...], ...] = (
    ((),),
    ((), (3,)),
    ((), (3,), (2, 3), (1, 3), (2, 1)),
    ((), (2,), (3,), (2, 3)),          # (2,) and (3,) do not broadcast: size errors
)
LEAF_NAMES = ("a", "b", "c", "w", "x", "v")
ENDINGS = ("implicit", "explicit", "retain", "twice", "reforward", "gradient", "nonscalar",
           "clear", "create_graph", "nograd")


@dataclass
class Env:
    """Variables defined so far: name -> shape (None for a plain Python number)."""

    shapes: dict[str, Shape | None] = field(default_factory=dict)
    leaves_with_grad: list[str] = field(default_factory=list)
    grad: set[str] = field(default_factory=set)      # names whose values require grad

    def tensors(self) -> list[str]:
        return [n for n, s in self.shapes.items() if s is not None]

    def pick(self, draw: Draw) -> str:
        """A variable, three times in four one that requires grad (if any does), so that
        most programs have a graph worth running."""
        names = self.tensors() or list(self.shapes)
        if self.grad and draw(st.integers(0, 3)):
            names = sorted(self.grad)
        elif len(self.shapes) > len(names) and draw(st.booleans()):
            names = sorted(self.shapes)           # now and then a plain number
        return str(draw(st.sampled_from(names)))

    def assign(self, name: str, value: ast.expr, shape: Shape | None) -> None:
        self.shapes[name] = shape
        used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        if used & self.grad:
            self.grad.add(name)
        else:
            self.grad.discard(name)


def _num(value: int | float) -> ast.expr:
    """A number literal; negative numbers as unary minus, as Python itself parses them."""
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _torch(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name("torch", ast.Load()), attr, ast.Load())


def _call(attr: str, arg: ast.expr, method: bool) -> ast.expr:
    if method:
        return ast.Call(ast.Attribute(arg, attr, ast.Load()), [], [])
    return ast.Call(_torch(attr), [arg], [])


def _data(draw: Draw, shape: Shape) -> Any:
    if not shape:
        return draw(st.sampled_from(VALUES))
    return [_data(draw, shape[1:]) for _ in range(shape[0])]


def _list_ast(data: Any) -> ast.expr:
    if isinstance(data, list):
        return ast.List([_list_ast(x) for x in data], ast.Load())
    return _num(data)


def tensor_call(data: Any, requires_grad: bool | None) -> ast.expr:
    keywords = [] if requires_grad is None else [
        ast.keyword("requires_grad", ast.Constant(requires_grad))]
    return ast.Call(_torch("tensor"), [_list_ast(data)], keywords)


def _broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None:
        return a if b is None else b
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return a       # the program will raise PyTorch's size error; the shape is moot


def expression(draw: Draw, env: Env, depth: int) -> tuple[ast.expr, Shape | None]:
    """A random expression over env's variables, and its shape (None: a number)."""
    kind = draw(st.sampled_from(
        ["var"] if depth <= 0 else
        ["var", "binary", "binary", "binary", "number_left", "neg", "function", "reduce",
         "twice"]))
    if kind == "var":
        name = env.pick(draw)
        return ast.Name(name, ast.Load()), env.shapes[name]
    if kind == "twice":                       # one variable used twice in one expression
        name = env.pick(draw)
        op = draw(st.sampled_from(["+", "*", "-", "/"]))
        right: ast.expr = ast.Name(name, ast.Load())
        if draw(st.booleans()):
            right = _call(draw(st.sampled_from(FUNCTIONS)), right, draw(st.booleans()))
        return (ast.BinOp(ast.Name(name, ast.Load()), OPS[op](), right), env.shapes[name])
    if kind == "neg":
        inner, shape = expression(draw, env, depth - 1)
        return ast.UnaryOp(ast.USub(), inner), shape
    if kind == "function":
        inner, shape = expression(draw, env, depth - 1)
        return _call(draw(st.sampled_from(FUNCTIONS)), inner, draw(st.booleans())), shape
    if kind == "reduce":
        inner, shape = expression(draw, env, depth - 1)
        return (_call(draw(st.sampled_from(REDUCTIONS)), inner, draw(st.booleans())),
                () if shape is not None else None)
    op = draw(st.sampled_from(list(OPS)))
    left, left_shape = expression(draw, env, depth - 1)
    if kind == "number_left":
        base = draw(st.sampled_from(BASES if op == "**" else NUMBERS))
        return ast.BinOp(_num(base), OPS[op](), left), left_shape
    # a plain number to a fractional power may be complex, which the lab refuses (a
    # limit, not a disagreement): plain numbers get integer powers
    exponents = EXPONENTS if left_shape is not None else tuple(
        e for e in EXPONENTS if float(e).is_integer())
    if draw(st.integers(0, 2)) == 0:
        number = draw(st.sampled_from(exponents if op == "**" else NUMBERS))
        return ast.BinOp(left, OPS[op](), _num(number)), left_shape
    right, right_shape = expression(draw, env, depth - 1)
    if op == "**" and left_shape is None and right_shape is None:
        op = "*"
    return ast.BinOp(left, OPS[op](), right), _broadcast(left_shape, right_shape)


def _assign(name: str, value: ast.expr) -> ast.stmt:
    return ast.Assign([ast.Name(name, ast.Store())], value, lineno=0)


def _backward(name: str, **kwargs: ast.expr) -> ast.stmt:
    call = ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "backward", ast.Load()), [],
                    [ast.keyword(k, v) for k, v in kwargs.items()])
    return ast.Expr(call)


def _scalar(draw: Draw, value: ast.expr, shape: Shape | None) -> ast.expr:
    """Reduce a non-scalar to a 0-d tensor with sum or mean."""
    if shape:
        return _call(draw(st.sampled_from(REDUCTIONS)), value, draw(st.booleans()))
    return value


@st.composite
def programs(draw: Draw) -> str:
    """A random lab program, as source text."""
    ending = draw(st.sampled_from(ENDINGS))
    family = draw(st.sampled_from(SHAPE_FAMILIES))
    env = Env()
    body: list[ast.stmt] = []
    plain = draw(st.integers(0, 4)) == 0      # `import torch`: the shorthand is off
    if plain:
        body.append(ast.Import([ast.alias("torch")]))
    leaf_names = draw(st.lists(st.sampled_from(LEAF_NAMES), min_size=1, max_size=4,
                               unique=True))
    for i, name in enumerate(leaf_names):
        shape: Shape = draw(st.sampled_from(family))
        python_number = False
        styles = ["shorthand", "grad"] if i == 0 else ["shorthand", "grad", "grad", "nograd",
                                                       "int"]
        style = draw(st.sampled_from(styles))
        if ending == "nograd" and style in ("shorthand", "grad"):
            style = "nograd"
        if style == "shorthand" and plain and i == 0:
            style = "grad"
        if style == "shorthand" or (style == "int" and shape):
            shape = ()
            value: ast.expr = _num(draw(st.sampled_from((*VALUES, 2, -1, 1))))
            if style == "int":               # an int64 tensor without grad
                value = tensor_call(draw(st.sampled_from([2, 3, -1])), None)
            elif plain:                      # a Python number, as PyTorch reads it
                python_number = True
            else:
                env.leaves_with_grad.append(name)
                env.grad.add(name)
        elif style == "grad":
            value = tensor_call(_data(draw, shape), True)
            env.leaves_with_grad.append(name)
            env.grad.add(name)
        else:
            value = tensor_call(_data(draw, shape), draw(st.sampled_from([None, False])))
        env.shapes[name] = None if python_number else shape
        body.append(_assign(name, value))
    for i in range(draw(st.integers(0, 3))):
        value, shape_or_none = expression(draw, env, draw(st.integers(1, 3)))
        name = f"h{i}"
        body.append(_assign(name, value))
        env.assign(name, value, shape_or_none)
        if i == 0 and draw(st.integers(0, 5)) == 0:
            number = _num(draw(st.sampled_from(NUMBERS)))
            body.append(_assign("k", number))                  # a plain number
            env.assign("k", number, None)
    _ending(draw, env, body, ending)
    module = ast.fix_missing_locations(ast.Module(body, type_ignores=[]))
    return ast.unparse(module) + "\n"


def _ending(draw: Draw, env: Env, body: list[ast.stmt], ending: str) -> None:
    value, shape = expression(draw, env, draw(st.integers(1, 3)))
    if ending in ("gradient", "nonscalar"):
        if not shape and env.tensors():
            name = env.pick(draw)
            value, shape = ast.BinOp(value, ast.Mult(), ast.Name(name, ast.Load())), \
                _broadcast(shape, env.shapes[name])
        body.append(_assign("y", value))
        if ending == "nonscalar":
            body.append(_backward("y"))
            return
        grad_shape = shape or ()
        if draw(st.integers(0, 6)) == 0:
            grad_shape = draw(st.sampled_from([(), (2,), (3,), (1,)]))   # maybe a mismatch
        body.append(_backward("y", gradient=tensor_call(_data(draw, grad_shape), None)))
        return
    body.append(_assign("out", _scalar(draw, value, shape)))
    if ending == "implicit" or (ending == "nograd" and draw(st.booleans())):
        return
    if ending in ("explicit", "nograd"):
        body.append(_backward("out"))
    elif ending == "retain":
        body.append(_backward("out", retain_graph=ast.Constant(True)))
        body.append(_backward("out"))
    elif ending == "twice":
        body.append(_backward("out"))
        body.append(_backward("out"))
    elif ending == "reforward":
        body.append(_backward("out"))
        again, again_shape = expression(draw, env, draw(st.integers(1, 2)))
        body.append(_assign("out2", _scalar(draw, again, again_shape)))
        body.append(_backward("out2"))
    elif ending == "clear":
        body.append(_backward("out", retain_graph=ast.Constant(True)))
        if env.leaves_with_grad:
            leaf = draw(st.sampled_from(env.leaves_with_grad))
            target = ast.Attribute(ast.Name(leaf, ast.Load()), "grad", ast.Store())
            body.append(ast.Assign([target], ast.Constant(None), lineno=0))
        body.append(_backward("out"))
    elif ending == "create_graph":
        body.append(_backward("out", create_graph=ast.Constant(True)))
        again, again_shape = expression(draw, env, 1)
        body.append(_assign("out2", _scalar(draw, again, again_shape)))
        body.append(_backward("out2"))
