"""Program shapes for the questions: small graphs in the lab's language (CONTRACT §1),
each written as plain PyTorch (`import torch` first, every leaf in full), so that a
student can paste a question's program into Python and see the same answers.

A shape is a function of its axes' values; `SHAPES` gives each shape's axes. Values are
chosen so that every program is finite everywhere (no division by a value that can be
zero, no log or sqrt of a value that can be negative).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.questions.variants import Axis, Shape

VALUES = (-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 3.0)
SMALL = (-1.0, -0.5, 0.5, 1.0, 1.5, 2.0)
OPS = ("+", "-", "*")
FUNCS = ("tanh", "exp", "sin", "cos", "sigmoid", "relu")
NAMES = (("a", "b", "c"), ("w", "b", "c"), ("p", "q", "r"), ("u", "v", "k"))


@dataclass
class Program:
    """Leaves (name → value), tensors that need no grad, the forward lines, the output."""

    leaves: dict[str, float | list[float]]
    body: list[str]
    output: str = "loss"
    data: dict[str, float | list[float]] = field(default_factory=dict)

    def source(self, tail: Sequence[str] | None = None) -> str:
        """The whole program; `tail` replaces the default `loss.backward()`."""
        lines = ["import torch"]
        lines += [f"{n} = torch.tensor({_value(v)}, requires_grad=True)"
                  for n, v in self.leaves.items()]
        lines += [f"{n} = torch.tensor({_value(v)})" for n, v in self.data.items()]
        lines += self.body
        lines += list(tail) if tail is not None else [f"{self.output}.backward()"]
        return "\n".join(lines) + "\n"


def _value(v: float | list[float]) -> str:
    return "[" + ", ".join(repr(float(x)) for x in v) + "]" if isinstance(v, list) else repr(v)


def _fn(f: str, x: str) -> str:
    return f"torch.{f}({x})"


def neuron(v: dict[str, Any]) -> Program:
    a, b, _ = v["names"]
    return Program({a: v["v1"], b: v["v2"]}, [f"y = {a} * x + {b}", f"loss = {_fn(v['f'], 'y')}"],
                   data={"x": v["v3"]})


def product(v: dict[str, Any]) -> Program:
    a, b, c = v["names"]
    return Program({a: v["v1"], b: v["v2"], c: v["v3"]},
                   [f"loss = {a} {v['op1']} {b} {v['op2']} {c}"])


def reuse(v: dict[str, Any]) -> Program:
    a, b, c = v["names"]
    return Program({a: v["v1"], b: v["v2"], c: v["v3"]},
                   [f"h = {a} {v['op1']} {b}", f"loss = {_fn(v['f'], 'h')} {v['op2']} h * {c}"])


def twice(v: dict[str, Any]) -> Program:
    a, b, c = v["names"]
    return Program({a: v["v1"], b: v["v2"], c: v["v3"]},
                   [f"s = {a} {v['op1']} {b}", f"t = {a} {v['op2']} {c}", "loss = s * t"])


def square(v: dict[str, Any]) -> Program:
    a, b, _ = v["names"]
    out = "y * y" if v["sq"] == "y * y" else "y ** 2"
    return Program({a: v["v1"], b: v["v2"]}, [f"y = {a} * x {v['op1']} {b}", f"loss = {out}"],
                   data={"x": v["v3"]})


def two_inputs(v: dict[str, Any]) -> Program:
    a, b, c = v["names"]
    return Program({a: v["v1"], b: v["v2"], c: v["v3"]},
                   [f"n = x1 * {a} + x2 * {b} + {c}", f"loss = {_fn(v['f'], 'n')}"],
                   data={"x1": v["v4"], "x2": -v["v4"]})


def reciprocal(v: dict[str, Any]) -> Program:
    a, b, _ = v["names"]
    return Program({a: v["v1"], b: v["v2"]},
                   [f"loss = ({a} + {b}) * ({a} - {b}) + {v['k']} / {a}"])


def vector(v: dict[str, Any]) -> Program:
    a = v["names"][0]
    return Program({"x": list(v["vec"]), a: v["v1"]},
                   [f"loss = (x * {a} {v['op1']} {v['v2']}).{v['red']}()"])


def chain(v: dict[str, Any]) -> Program:
    a, b, c = v["names"]
    inner = f"{a} {v['op1']} {b}"
    return Program({a: v["v1"], b: v["v2"], c: v["v3"]},
                   [f"y = {_fn(v['f'], inner)}", f"loss = y {v['op2']} {c}"])


VECTORS = ((1.0, 2.0, 3.0), (0.5, -1.0, 2.0), (-1.0, 1.0), (2.0, 0.5), (1.5, -0.5, 1.0, 2.0))

_BUILD: dict[str, Callable[[dict[str, Any]], Program]] = {
    "neuron": neuron, "product": product, "reuse": reuse, "twice": twice, "square": square,
    "two-inputs": two_inputs, "reciprocal": reciprocal, "vector": vector, "chain": chain,
}

SHAPES: dict[str, tuple[Axis, ...]] = {
    "neuron": (("names", NAMES), ("f", FUNCS), ("v1", VALUES), ("v2", VALUES), ("v3", SMALL)),
    "product": (("names", NAMES), ("op1", OPS), ("op2", OPS), ("v1", VALUES), ("v2", VALUES),
                ("v3", VALUES)),
    "reuse": (("names", NAMES), ("f", FUNCS), ("op1", OPS), ("op2", ("+", "-")),
              ("v1", SMALL), ("v2", SMALL), ("v3", VALUES)),
    "twice": (("names", NAMES), ("op1", OPS), ("op2", OPS), ("v1", VALUES), ("v2", VALUES),
              ("v3", VALUES)),
    "square": (("names", NAMES), ("op1", ("+", "-")), ("sq", ("y * y", "y ** 2")),
               ("v1", VALUES), ("v2", VALUES), ("v3", SMALL)),
    "two-inputs": (("names", NAMES), ("f", FUNCS), ("v1", SMALL), ("v2", SMALL), ("v3", SMALL),
                   ("v4", (0.5, 1.0, 2.0))),
    "reciprocal": (("names", NAMES), ("k", (1, 2, 3)), ("v1", (-2.0, -1.0, 0.5, 1.0, 2.0, 3.0)),
                   ("v2", VALUES)),
    "vector": (("names", NAMES), ("op1", ("+", "-")), ("red", ("sum", "mean")),
               ("vec", VECTORS), ("v1", VALUES), ("v2", (1, 2, 0.5))),
    "chain": (("names", NAMES), ("f", FUNCS), ("op1", OPS), ("op2", OPS), ("v1", SMALL),
              ("v2", SMALL), ("v3", VALUES)),
}


def shapes(names: Sequence[str], extra: tuple[Axis, ...] = ()) -> tuple[Shape, ...]:
    """The named program shapes as variant shapes, each with `extra` axes of the kind's."""
    return tuple(Shape(n, SHAPES[n] + extra) for n in names)


def build(shape: str, values: dict[str, Any]) -> Program:
    return _BUILD[shape](values)
