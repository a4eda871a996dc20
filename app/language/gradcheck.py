"""`torch.autograd.gradcheck` / `gradgradcheck`: the analytical Jacobian (from backward)
against the numerical one (central differences), as PyTorch's checker compares them:
eps 1e-6, atol 1e-5, rtol 1e-3, inputs of double precision."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import engine.backward as engine_backward
from app.language.values import Builtin, Value
from engine import random
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

DOUBLE_WARNING = ("Input #{i} requires gradient and is not a double precision floating point "
                  "or complex. This check will likely fail if all the inputs are not of double "
                  "precision floating point or complex. ")


def _outputs(value: Value) -> list[Tensor]:
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [t for t in items if isinstance(t, Tensor)]


def _call(interp: Interpreter, fn: Value, inputs: list[Value]) -> list[Tensor]:
    return _outputs(interp.call(fn, list(inputs), {}))


def _jacobians(interp: Interpreter, fn: Value, inputs: list[Value], eps: float
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _call(interp, fn, inputs)
    # PyTorch perturbs the inputs themselves, grad mode on: each call records its nodes
    numerical = {(o, i): np.zeros((inputs[i].numel(), out.numel()))
                 for o, out in enumerate(outputs) for i in diff}
    for i in diff:
        t = inputs[i]
        flat = t.data.reshape(-1)
        for k in range(t.numel()):
            original = flat[k].copy()
            flat[k] = original - eps
            low = _call(interp, fn, inputs)
            flat[k] = original + eps
            high = _call(interp, fn, inputs)
            flat[k] = original
            for o in range(len(outputs)):
                numerical[o, i][k] = ((high[o].data.astype(np.float64) - low[o].data.astype(
                    np.float64)) / (2 * eps)).reshape(-1)
    analytical: list[np.ndarray] = []
    for o, out in enumerate(outputs):
        for i in diff:
            t = inputs[i]
            ana = np.zeros_like(numerical[o, i])
            for j in range(out.numel()):
                seed = np.zeros(out.shape, dtype=out.data.dtype)
                seed.reshape(-1)[j] = 1
                result = engine_backward.GradResult()
                for _ in engine_backward.grad([out], [t], [Tensor(seed, out.ctx)], True, False,
                                              True, False, result):
                    pass
                g = result.values[0]
                if g is not None:
                    ana[:, j] = g.data.astype(np.float64).reshape(-1)
            analytical.append(ana)
    return [numerical[o, i] for o in range(len(outputs)) for i in diff], analytical


def _undefined_grad_check(interp: Interpreter, fn: Value, inputs: list[Value],
                          check_undefined: bool) -> None:
    """The rest of PyTorch's checks for one output, as far as a program can see them: its
    check of undefined gradients calls the function once more, and with the numerical
    Jacobian's arithmetic on tensors that require grad the whole check records
    4 nodes per input element and 5 more (2 without that check: measured on PyTorch 2.13
    for 1-4 elements, one and two inputs, functions of 1 and 2 nodes, custom Functions)."""
    elements = sum(t.numel() for t in inputs if isinstance(t, Tensor) and t.requires_grad)
    if check_undefined:
        _call(interp, fn, inputs)
    interp.ctx.next_sequence_nr += 4 * elements + (5 if check_undefined else 2)


def _first_derivatives(interp: Interpreter, fn: Value, items: list[Value]
                       ) -> tuple[Builtin, list[Value]]:
    """gradgradcheck's function and inputs (torch/autograd/gradcheck.py): the inputs and one
    grad_output per output, a leaf that requires grad, mapped to the first derivatives
    taken with create_graph. A custom backward receives those leaves (the recorder names
    them after its parameter). They are drawn as torch.testing.make_tensor draws them:
    uniform_(-1, 1) from the default generator, in each output's dtype."""
    n = len(items)
    outputs = _call(interp, fn, items)
    grad_outputs: list[Value] = [
        Tensor(random.uniform_(out.ctx.generator, out.shape, -1.0, 1.0, out.data.dtype),
               out.ctx, requires_grad=True) for out in outputs]

    def first(_: Interpreter, args: list[Value], kwargs: dict[str, Value]) -> Value:
        inputs, seeds = list(args[:n]), list(args[n:])
        diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
        result = engine_backward.GradResult()
        mode, interp.ctx.grad_mode = interp.ctx.grad_mode, True    # also while differencing
        try:
            for _event in engine_backward.grad(_call(interp, fn, inputs), diff, seeds, True,
                                               True, True, False, result):
                pass
        finally:
            interp.ctx.grad_mode = mode
        return tuple(g for g in result.values if g is not None)

    return Builtin("new_func", first), [*items, *grad_outputs]


def _shown(jacobian: np.ndarray, like: Tensor) -> str:
    """A Jacobian as the message prints it: a tensor of the input's dtype."""
    return repr(Tensor(jacobian.astype(like.data.dtype), like.ctx))


def gradcheck(interp: Interpreter, fn: Value, inputs: Value, second: bool,
              options: dict[str, Any]) -> bool:
    items = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    if not any(isinstance(t, Tensor) and t.requires_grad for t in items):
        raise TorchError("ValueError", "gradcheck expects at least one input tensor to "
                         "require gradient, but none of them have requires_grad=True.")
    if second:
        fn, items = _first_derivatives(interp, fn, items)
    eps = float(options.get("eps", 1e-6))
    atol = float(options.get("atol", 1e-5))
    rtol = float(options.get("rtol", 1e-3))
    raise_exception = bool(options.get("raise_exception", True))
    for i, t in enumerate(items):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            interp.ctx.warnings.append(DOUBLE_WARNING.format(i=i))
    numerical, analytical = _jacobians(interp, fn, items, eps)
    diff = [t for t in items if isinstance(t, Tensor) and t.requires_grad]
    single = len(analytical) == len(diff)
    for k, (num, ana) in enumerate(zip(numerical, analytical, strict=True)):
        if not np.allclose(ana, num, rtol=rtol, atol=atol):
            if raise_exception:
                t = diff[k % len(diff)]      # the Jacobians go by output, then by input
                raise TorchError("GradcheckError", f"Jacobian mismatch for output "
                                 f"{k // len(diff)} with respect to input {k % len(diff)},\n"
                                 f"numerical:{_shown(num, t)}\nanalytical:{_shown(ana, t)}\n")
            return False
    if single and not second:          # several outputs: PyTorch's count is not pinned
        _undefined_grad_check(interp, fn, items, bool(options.get("check_undefined_grad", True)))
    return True
