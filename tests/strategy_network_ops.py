"""The steps of tests/strategy_network.py: each writes one new tensor from `x` (and
maybe others of a fitting shape) and returns its name, or None where it does not apply
to x's shape. Shapes stay at most 2-D; `net.mistakes` counts a step written not to fit
on purpose (seldom), so that PyTorch's shape errors are compared too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st

from tests.program_parts import Shape, chance, pick

if TYPE_CHECKING:
    from tests.strategy_network import Net

ACTIVATIONS = ("F.relu({x})", "F.gelu({x})", "F.silu({x})", "F.softplus({x})",
               "F.leaky_relu({x}, 0.1)", "torch.tanh({x})", "torch.sigmoid({x})",
               "torch.exp({x} * 0.5)", "{x}.relu()", "{x}.clamp(min=-0.5, max=0.5)")


def _mistake(net: Net) -> bool:
    if net.mistakes == 0 and chance(net.draw, 12):
        net.mistakes += 1
        return True
    return False


def activation(net: Net, x: str) -> str | None:
    return net.new("t", pick(net.draw, ACTIVATIONS).format(x=x), net.shapes[x], net.dtypes[x])


def arithmetic(net: Net, x: str) -> str | None:
    """x with a tensor of a shape that broadcasts (or, on purpose, one that does not)."""
    shape = net.shapes[x]
    options: list[Shape] = [shape, shape[-1:], ()]
    if len(shape) == 2:
        options.append((shape[0], 1))
    other = pick(net.draw, options)
    if shape and _mistake(net):
        other = (shape[-1] + 1,)
    y = net.with_shape(other)
    op = pick(net.draw, ["+", "-", "*"])
    text = f"{x} {op} {y}" if net.draw(st.booleans()) else f"{y} {op} {x}"
    try:
        result = tuple(np.broadcast_shapes(shape, other))
    except ValueError:
        result = shape
    return net.new("t", text, result, net.dtype_of(x, y))


def matmul(net: Net, x: str) -> str | None:
    """@, mm, mv, dot and matmul, with an operand of the fitting inner size."""
    shape = net.shapes[x]
    if not shape:
        return None
    k, dtype = shape[-1], net.dtypes[x]
    if _mistake(net):       # the inner size or the dtype
        if net.draw(st.booleans()):
            k += 1
        else:
            dtype = "float32" if dtype == "float64" else "float64"
    vector = net.draw(st.booleans())
    n = pick(net.draw, (2, 3))
    w = net.with_shape((k,) if vector else (k, n), grad=True, dtype=dtype)
    result: Shape
    if len(shape) == 2 and vector:
        text, result = pick(net.draw, [f"torch.mv({x}, {w})", f"{x} @ {w}"]), shape[:1]
    elif len(shape) == 2:
        text = pick(net.draw, [f"{x} @ {w}", f"torch.mm({x}, {w})", f"{x}.mm({w})",
                               f"torch.matmul({x}, {w})"])
        result = (shape[0], n)
    elif vector:
        text, result = pick(net.draw, [f"torch.dot({x}, {w})", f"{x} @ {w}"]), ()
    else:
        text, result = f"torch.matmul({x}, {w})", (n,)
    return net.new("t", text, result, net.dtype_of(x, w))


def reduction(net: Net, x: str) -> str | None:
    """sum, mean, amax, logsumexp, norm and max along a dim, with or without keepdim."""
    shape = net.shapes[x]
    if not shape:
        return None
    dim = net.draw(st.integers(-1, len(shape) - 1))
    keep = bool(net.draw(st.booleans()))
    form = pick(net.draw, ["{x}.sum(dim={d}, keepdim={k})", "{x}.mean({d}, keepdim={k})",
                           "{x}.amax(dim={d}, keepdim={k})", "{x}.logsumexp({d}, keepdim={k})",
                           "{x}.norm(dim={d}, keepdim={k})", "{x}.max(dim={d}, keepdim={k})[0]",
                           "torch.sum({x}, {d}, keepdim={k})"])
    result = list(shape)
    if keep:
        result[dim] = 1
    else:
        del result[dim]
    return net.new("t", form.format(x=x, d=dim, k=keep), tuple(result), net.dtypes[x])


def softmax(net: Net, x: str) -> str | None:
    shape = net.shapes[x]
    if not shape:
        return None
    dim = net.draw(st.integers(-1, len(shape) - 1))
    form = pick(net.draw, ["torch.softmax({x}, dim={d})", "torch.log_softmax({x}, dim={d})",
                           "F.softmax({x}, dim={d})", "{x}.log_softmax({d})"])
    return net.new("t", form.format(x=x, d=dim), shape, net.dtypes[x])


def index(net: Net, x: str) -> str | None:
    """Integers and slices: x[0], x[-1], x[1:], x[:, 1], x[0, 1:]."""
    shape = net.shapes[x]
    if not shape:
        return None
    options: list[tuple[str, Shape]] = [("[0]", shape[1:]), ("[-1]", shape[1:]),
                                        ("[1:]", (shape[0] - 1, *shape[1:]))]
    if len(shape) == 2:
        options += [("[:, 1]", shape[:1]), ("[0, 1:]", (shape[1] - 1,)),
                    ("[:, :2]", (shape[0], 2))]
    text, result = pick(net.draw, options)
    return net.new("t", x + text, result, net.dtypes[x])


def reshape(net: Net, x: str) -> str | None:
    """T, t(), transpose, reshape, view, flatten, unsqueeze, squeeze."""
    shape = net.shapes[x]
    size = int(np.prod(shape))
    options: list[tuple[str, Shape]] = [(".reshape(-1)", (size,)), (".flatten()", (size,)),
                                        (".unsqueeze(0)", (1, *shape))]
    if len(shape) == 2:
        m, k = shape
        options += [(".T", (k, m)), (".t()", (k, m)), (".transpose(0, 1)", (k, m)),
                    (f".reshape({k}, {m})", (k, m)), (f".view({size})", (size,))]
        if 1 in shape:
            options.append((".squeeze()", tuple(d for d in shape if d != 1)))
    elif len(shape) == 1:
        options += [(".unsqueeze(1)", (size, 1)), (f".view(1, {size})", (1, size))]
    text, result = pick(net.draw, [o for o in options if len(o[1]) <= 2])
    if _mistake(net):
        text, result = f".view({size + 1})", (size + 1,)
    return net.new("t", x + text, result, net.dtypes[x])


def join(net: Net, x: str) -> str | None:
    """torch.cat and torch.stack with a tensor of the same shape."""
    shape = net.shapes[x]
    y = net.with_shape(shape)
    if len(shape) <= 1 and net.draw(st.booleans()):
        return net.new("t", f"torch.stack([{x}, {y}])", (2, *shape), net.dtype_of(x, y))
    if not shape:
        return None
    dim = net.draw(st.integers(0, len(shape) - 1))
    result = list(shape)
    result[dim] *= 2
    return net.new("t", f"torch.cat([{x}, {y}], dim={dim})", tuple(result),
                   net.dtype_of(x, y))


def select(net: Net, x: str) -> str | None:
    """torch.where on a comparison, maximum, minimum, and int64 operands that promote."""
    shape = net.shapes[x]
    y = net.with_shape(shape)
    both, alone = net.dtype_of(x, y), net.dtypes[x]
    options = [(f"torch.where({x} > 0, {x}, {y} * 0.1)", both),
               (f"torch.maximum({x}, {y})", both), (f"torch.minimum({y}, {x})", both),
               (f"{x} * ({y} > 0.5)", alone)]
    if len(shape) == 1:
        options.append((f"{x} * torch.arange({shape[0]})", alone))
        options.append((f"{x} + torch.tensor({list(range(1, shape[0] + 1))})", alone))
    text, dtype = pick(net.draw, options)
    return net.new("t", text, shape, dtype)


def dtype_change(net: Net, x: str) -> str | None:
    to = pick(net.draw, [".double()", ".float()", ".to(torch.float64)"])
    dtype = "float32" if to == ".float()" else "float64"
    name = net.new("t", x + to, net.shapes[x], dtype)
    if net.draw(st.booleans()):
        net.code.add(f"print({name}.dtype, {name}.size(), {name}.dim(), {name}.numel())")
    return name


STEPS: tuple[Callable[[Net, str], str | None], ...] = (
    activation, arithmetic, arithmetic, matmul, matmul, reduction, softmax, index, reshape,
    join, select, dtype_change)
