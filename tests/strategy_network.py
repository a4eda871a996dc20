"""Hypothesis strategy for CONTRACT §1c: the operations of a small network.

A program is a few leaves (literals, factories, seeded `randn`/`rand`, float32 or
float64), then steps that each make a new tensor from earlier ones: matrix products
(`@`, mm, mv, dot, matmul), broadcasting arithmetic, reductions with dim and keepdim,
softmax and log_softmax, F's activations, indexing and slicing, reshape/view/transpose/
cat/stack, where/clamp/maximum, int64 operands, then a loss (a reduction, mse_loss,
cross_entropy, nll_loss, binary_cross_entropy_with_logits) and its backward. Every
tensor's shape and dtype is tracked, so shapes fit; now and then one step is made not
to fit on purpose, so that PyTorch's shape errors are compared too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from tests.program_parts import (
    SMALL,
    Code,
    Draw,
    Shape,
    chance,
    pick,
    shape_text,
    tensor,
)
from tests.strategy_network_ops import STEPS

DIMS = (2, 3)


@dataclass
class Net:
    """The program so far: its code and every tensor's shape and dtype by name."""

    draw: Draw
    code: Code = field(default_factory=Code)
    shapes: dict[str, Shape] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    leaves: list[str] = field(default_factory=list)
    seeded: bool = False
    mistakes: int = 0                   # steps written not to fit, on purpose

    def new(self, prefix: str, text: str, shape: Shape, dtype: str = "float32") -> str:
        name = f"{prefix}{len(self.shapes)}"
        self.code.add(f"{name} = {text}")
        self.shapes[name], self.dtypes[name] = shape, dtype
        return name

    def with_shape(self, shape: Shape, grad: bool | None = None,
                   dtype: str | None = None) -> str:
        """A tensor of `shape` (and `dtype`, if given): an existing one now and then, else
        a new leaf."""
        same = [n for n, s in self.shapes.items()
                if s == shape and dtype in (None, self.dtypes[n])]
        if same and draw_bool(self.draw):
            return pick(self.draw, same)
        return self.leaf(shape, grad if grad is not None else draw_bool(self.draw), dtype)

    def leaf(self, shape: Shape, grad: bool, dtype: str | None = None) -> str:
        """A leaf of `shape`: a literal, a factory or a seeded random draw."""
        draw = self.draw
        if dtype is None:
            dtype = "float64" if chance(draw, 6) else "float32"
        like = [n for n, s in self.shapes.items() if s == shape and self.dtypes[n] == dtype]
        kind = pick(draw, ["literal", "literal", "random", "factory", "filled"]
                    + (["like"] if like else []))
        dtype_keyword = ", dtype=torch.float64" if dtype == "float64" else ""
        keywords = dtype_keyword + (", requires_grad=True" if grad else "")
        size = shape_text(shape) or "()"
        if kind in ("random", "filled"):
            self.seed()
        if kind == "random":
            text = f"torch.{pick(draw, ['randn', 'rand'])}({size}{keywords})"
        elif kind == "filled":          # torch.empty, filled in place before use
            fill = pick(draw, ["uniform_(-1.0, 1.0)", "normal_()", "normal_(0.0, 0.5)"])
            text = f"torch.empty({size}{dtype_keyword}).{fill}"
            text += ".requires_grad_()" if grad else ""
        elif kind == "like":
            text = f"torch.ones_like({pick(draw, like)}"
            text += (", requires_grad=True" if grad else "") + ")"
        elif kind == "factory":
            text = factory(draw, shape, keywords)
        else:
            text = tensor(draw, shape, grad=grad or None,
                          dtype="torch.float64" if dtype == "float64" else None)
        name = self.new("p" if grad else "c", text, shape, dtype)
        if grad:
            self.leaves.append(name)
        return name

    def seed(self) -> None:
        """`torch.manual_seed(S)` before the first random draw: programs stay repeatable."""
        if not self.seeded:
            self.code.add(f"torch.manual_seed({self.draw(st.integers(0, 999))})")
            self.seeded = True

    def dtype_of(self, *names: str) -> str:
        """PyTorch's promotion: a 0-d tensor takes part only when no operand has dims."""
        dimensioned = [n for n in names if self.shapes[n]] or list(names)
        return "float64" if any(self.dtypes[n] == "float64" for n in dimensioned) \
            else "float32"


def draw_bool(draw: Draw) -> bool:
    return bool(draw(st.booleans()))


def factory(draw: Draw, shape: Shape, keywords: str) -> str:
    """A factory call of `shape` with `keywords` (dtype, requires_grad)."""
    n = shape[0] if shape else 1
    # held back: torch.zeros (KNOWN: a matrix product's gradient against a zero operand
    # is +0 in PyTorch, -0 in the lab, and prints so)
    options = [f"torch.ones({shape_text(shape) or '()'}{keywords})",
               f"torch.full(({shape_text(shape)}{',' if len(shape) == 1 else ''}), "
               f"{pick(draw, SMALL)}{keywords})"]   # an int fill is int64: an error
    if len(shape) == 1:
        options.append(f"torch.linspace(-1.0, 1.0, {n}{keywords})")
        options.append(f"torch.arange(0.5, {n}, 1.0{keywords})")
    if len(shape) == 2 and shape[0] == shape[1]:
        options.append(f"torch.eye({n}{keywords})")
    return pick(draw, options)


def _loss(net: Net, x: str) -> str:
    """The last step: a scalar loss of x."""
    draw, shape = net.draw, net.shapes[x]
    kinds = ["sum", "mean", "mse"]
    if len(shape) == 2:
        kinds += ["cross_entropy", "nll", "bce"]
    kind = pick(draw, kinds)
    if kind == "sum":
        return f"({x} ** 2).sum()" if draw_bool(draw) else f"{x}.sum()"
    if kind == "mean":
        return f"{x}.mean()" if shape else f"{x} * 1.0"
    if kind == "mse":
        return f"F.mse_loss({x}, {tensor(draw, shape)})"
    if kind == "bce":    # of x's dtype (KNOWN: the loss takes the target's dtype)
        dtype = "torch.float64" if net.dtypes[x] == "float64" else None
        target = tensor(draw, shape, dtype=dtype, pool=(0.0, 1.0, 0.25))
        return f"F.binary_cross_entropy_with_logits({x}, {target})"
    rows, classes = shape
    if chance(draw, 12):
        rows += 1                                  # a batch size that does not match
        net.mistakes += 1
    target = f"torch.tensor({[draw(st.integers(0, classes - 1)) for _ in range(rows)]})"
    if draw(st.booleans()):
        net.seed()
        target = f"torch.randint(0, {classes}, ({rows},))"
    if kind == "nll":
        return f"F.nll_loss(torch.log_softmax({x}, dim=1), {target})"
    return f"F.cross_entropy({x}, {target})"


@st.composite
def network_programs(draw: Draw) -> str:
    """A small network's forward pass, its loss, backward and a few prints."""
    net = Net(draw)
    net.code.add("import torch")
    net.code.add("import torch.nn.functional as F")
    shape = tuple(draw(st.lists(st.sampled_from(DIMS), min_size=1, max_size=2)))
    x = net.leaf(shape, grad=True)
    for _ in range(draw(st.integers(1, 4))):
        step = pick(draw, STEPS)
        x = step(net, x) or x
    net.code.add(f"loss = {_loss(net, x)}")
    net.code.add("loss.backward()")
    net.code.add(f"print({x}.shape, loss)")
    for leaf in net.leaves[:3]:
        net.code.add(f"print({leaf}.grad)")
    return net.code.text()
