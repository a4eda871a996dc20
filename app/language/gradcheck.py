"""`torch.autograd.gradcheck` / `gradgradcheck`: the analytical Jacobian (from backward)
against the numerical one (central differences), as PyTorch's checker compares them:
eps 1e-6, atol 1e-5, rtol 1e-3, inputs of double precision.

Note [the nodes gradcheck records]
----------------------------------
The checker is plain Python in PyTorch (torch/autograd/gradcheck.py, the default slow
mode), and it runs with grad mode on: the function's calls record their nodes, and so
does some of the checker's own arithmetic on the outputs. A program sees those nodes
through the sequence numbers of the nodes it records afterwards, so the lab takes the
same numbers, in the same order. With F the nodes of one call of the function, k the
outputs that require grad and n the elements of the inputs that require grad:

1. `func_out = func(*inputs)`: F.
2. The numerical Jacobian (`_get_numerical_jacobian`). For each element, the input's
   `.data` is set to x - eps and to x + eps and the function called each time through
   `wrapped_fn`, which clones every output (`a.clone()`: one CloneBackward0 per output
   that requires grad); `(b - a) / (2 * eps)` is then one SubBackward0 and one
   DivBackward0 per output. That is n * (2F + 4k).
3. The analytical Jacobian, output by output (`_check_analytical_jacobian_attributes`):
   `output.clone()` twice, for the two passes of the reentrancy check (2 per output).
   The rows come from `autograd.grad` without create_graph: no nodes. The first
   output whose Jacobians differ ends the check here.
4. `_test_backward_mul_by_grad_output`: one `autograd.grad` of all the outputs with
   zero grad_outputs; unless there is exactly one output the engine makes a GraphRoot.
5. `_test_undefined_backward_mode` (check_undefined_grad): the function is called
   again and each output wrapped in `torch._C._functions.UndefinedGrad()(o)`, which
   takes 3 numbers (the UndefinedGrad node, its UndefinedGradBackward, and one more
   taken while applying it: measured); with more than one output the function is
   called once more per output, with that one output wrapped. Each of those lists of
   outputs is then differentiated once (a GraphRoot each when k > 1). That is
   F + 3k, plus k * (F + 3) + (k + 1) when k > 1.

Each `autograd.grad` also makes an Identity node (one number) for each input that is
in no graph: a leaf with neither a grad_fn nor a gradient accumulator, such as an input
the function does not use (NOTE [ Autograd Unreachable Input ] in python_engine.cpp).
The lab's engine makes those itself in steps 3 and 4, which run its backward.

With one output of one element, F = 1, that is 1 + 6 + 2 + 0 + 4 = 13.

`gradgradcheck` is `gradcheck` of `new_func`: the function, then `autograd.grad` of its
outputs with create_graph=True (those backward nodes, and a GraphRoot when the function
has several outputs), at the inputs and one grad_output per output. Its own first call
of the function (to see the outputs' shapes) adds F before everything else, and the
grad_outputs are drawn by `torch.testing.make_tensor`: uniform_(-1, 1) from the default
generator, no nodes. So `gradgradcheck(lambda t: t * t, (x,))` of a 0-d x takes 38:
1 for the first call; new_func is 4 nodes (MulBackward0, then two MulBackward0 and an
AddBackward0 from its backward) with one output, over 2 input elements:
4 + 2 * (8 + 4) + 2 + 0 + (4 + 3) = 37.

Not modelled: `fast_mode=True` (PyTorch perturbs each input once along a random
direction from a fresh generator, so n counts inputs instead of elements, and a
failure recomputes the slow Jacobians for its message), `check_batched_grad` (vmap,
and two `randn_like` draws per output from the default generator) and
`check_forward_ad`; the lab runs the slow backward-mode check for those too.
"""

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
NOT_MULTIPLIED = "backward not multiplied by grad_output"
NOT_ZERO = "Numerical gradient for function expected to be zero"

# Sequence numbers taken by the checker's own operations (see the Note above)
CLONE_NODES = 1              # CloneBackward0
DIFFERENCE_NODES = 2         # (b - a) / (2 * eps): SubBackward0, DivBackward0
REENTRANCY_CLONES = 2        # output.clone() for each of the two analytical passes
UNDEFINED_GRAD_NODES = 3     # torch._C._functions.UndefinedGrad()(o)
GRAPH_ROOT = 1               # autograd.grad of no output or of several


def _outputs(value: Value) -> list[Tensor]:
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [t for t in items if isinstance(t, Tensor)]


def _differentiable(tensors: list[Tensor]) -> list[Tensor]:
    """`_differentiable_outputs`: the outputs that require grad."""
    return [t for t in tensors if t.requires_grad]


def _call(interp: Interpreter, fn: Value, inputs: list[Value]) -> list[Tensor]:
    return _outputs(interp.call(fn, list(inputs), {}))


def _take_nodes(interp: Interpreter, count: int) -> None:
    """Sequence numbers of nodes PyTorch's checker records and the lab does not build."""
    interp.ctx.next_sequence_nr += count


def _grad_nodes(interp: Interpreter, roots: int, inputs: list[Tensor]) -> None:
    """`autograd.grad` run as a count only (it records nothing else without create_graph):
    the engine's GraphRoot unless there is exactly one root, and an Identity node for
    each input with neither a grad_fn nor a gradient accumulator (engine/backward.py)."""
    if roots != 1:
        _take_nodes(interp, GRAPH_ROOT)
    _take_nodes(interp, sum(1 for t in inputs
                            if t.grad_fn is None and t._grad_accumulator is None))


def _wrapped_call(interp: Interpreter, fn: Value, inputs: list[Value]) -> list[Tensor]:
    """`wrapped_fn`: the function, then a clone of each output."""
    outputs = _call(interp, fn, inputs)
    _take_nodes(interp, CLONE_NODES * len(_differentiable(outputs)))
    return outputs


def _numerical(interp: Interpreter, fn: Value, inputs: list[Value], diff: list[int],
               outputs: list[Tensor], eps: float) -> dict[tuple[int, int], np.ndarray]:
    """`_get_numerical_jacobian`: central differences, input by input and element by
    element, for every output (keyed by output and input index); the input's values are
    changed in place, so the calls record their nodes on the inputs themselves."""
    numerical = {(o, i): np.zeros((inputs[i].numel(), out.numel()))
                 for o, out in enumerate(outputs) for i in diff}
    for i in diff:
        t = inputs[i]
        flat = t.data.reshape(-1)
        for k in range(t.numel()):
            original = flat[k].copy()
            flat[k] = original - eps
            low = _wrapped_call(interp, fn, inputs)
            flat[k] = original + eps
            high = _wrapped_call(interp, fn, inputs)
            flat[k] = original
            for o in range(len(outputs)):
                if high[o].requires_grad:
                    _take_nodes(interp, DIFFERENCE_NODES)
                numerical[o, i][k] = ((high[o].data.astype(np.float64) - low[o].data.astype(
                    np.float64)) / (2 * eps)).reshape(-1)
    return numerical


def _analytical(interp: Interpreter, out: Tensor, inputs: list[Tensor]) -> list[np.ndarray]:
    """`_check_analytical_jacobian_attributes` for one output: one backward per element of
    the output, seeded with that element's one-hot vector, done twice (PyTorch compares
    the two for reentrancy, which the lab's deterministic backward always passes)."""
    _take_nodes(interp, REENTRANCY_CLONES)
    jacobians = [np.zeros((t.numel(), out.numel())) for t in inputs]
    for _ in range(2):
        for j in range(out.numel()):
            seed = np.zeros(out.shape, dtype=out.data.dtype)
            seed.reshape(-1)[j] = 1
            result = engine_backward.GradResult()
            for _event in engine_backward.grad([out], inputs, [Tensor(seed, out.ctx)], True,
                                               False, True, False, result):
                pass
            for jacobian, g in zip(jacobians, result.values, strict=True):
                jacobian[:, j] = 0 if g is None else g.data.astype(np.float64).reshape(-1)
    return jacobians


def _mul_by_grad_output(interp: Interpreter, outputs: list[Tensor], inputs: list[Tensor]
                        ) -> None:
    """`_test_backward_mul_by_grad_output`: zero grad_outputs must give zero gradients."""
    if not outputs:
        _grad_nodes(interp, 0, inputs)
        return
    zeros = [Tensor(np.zeros(o.shape, dtype=o.data.dtype), o.ctx) for o in outputs]
    result = engine_backward.GradResult()
    for _event in engine_backward.grad(outputs, inputs, zeros, None, False, True, False,
                                       result):
        pass
    for g in result.values:
        if g is not None and np.any(g.data != 0):
            raise TorchError("GradcheckError", NOT_MULTIPLIED)


def _undefined_grad_check(interp: Interpreter, fn: Value, items: list[Value],
                          outputs: int) -> None:
    """`_test_undefined_backward_mode`, as far as a program can see it: the calls of the
    function and the nodes of its UndefinedGrad wrappers, and of the `autograd.grad` of
    each list of outputs (the lab has no undefined gradients; PyTorch's backward of
    undefined and zero gradients records nothing)."""
    inputs = [t for t in items if isinstance(t, Tensor) and t.requires_grad]
    wrapped = len(_differentiable(_call(interp, fn, items)))
    _take_nodes(interp, UNDEFINED_GRAD_NODES * wrapped)
    checks = [wrapped]
    if wrapped > 1:
        for _ in range(outputs):
            checks.append(len(_differentiable(_call(interp, fn, items))))
            _take_nodes(interp, UNDEFINED_GRAD_NODES)
    for roots in checks:
        _grad_nodes(interp, roots, inputs)


def _grad_outputs(outputs: list[Tensor], non_contiguous: bool) -> list[Value]:
    """gradgradcheck's grad_outputs, as torch.testing.make_tensor draws them: uniform_(-1,
    1) from the default generator, in each output's dtype, a leaf that requires grad.
    `gen_non_contig_grad_outputs` draws twice the last dimension and keeps every other
    value from the second (`result[..., 1::2]`) when there is more than one element."""
    drawn: list[Value] = []
    for out in outputs:
        shape = out.shape
        spread = non_contiguous and out.numel() > 1
        if spread:
            shape = (*shape[:-1], 2 * shape[-1])
        values = random.uniform_(out.ctx.generator, shape, -1.0, 1.0, out.data.dtype)
        if spread:
            values = np.ascontiguousarray(values[..., 1::2])
        drawn.append(Tensor(values, out.ctx, requires_grad=True))
    return drawn


def _first_derivatives(interp: Interpreter, fn: Value, items: list[Value],
                       given: Value, non_contiguous: bool) -> tuple[Builtin, list[Value]]:
    """gradgradcheck's function and inputs (torch/autograd/gradcheck.py): the inputs and one
    grad_output per output (the given ones, or random leaves that require grad), mapped
    to the first derivatives taken with create_graph. A custom backward receives those
    leaves (the recorder names them after its parameter)."""
    n = len(items)
    if given is None:
        grad_outputs = _grad_outputs(_differentiable(_call(interp, fn, items)), non_contiguous)
    else:
        grad_outputs = list(given) if isinstance(given, (tuple, list)) else [given]

    def first(_: Interpreter, args: list[Value], kwargs: dict[str, Value]) -> Value:
        inputs, seeds = list(args[:n]), list(args[n:])
        diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
        result = engine_backward.GradResult()
        mode, interp.ctx.grad_mode = interp.ctx.grad_mode, True    # also while differencing
        try:
            outputs = _differentiable(_call(interp, fn, inputs))
            for _event in engine_backward.grad(outputs, diff, seeds, True, True, True, False,
                                               result):
                pass
        finally:
            interp.ctx.grad_mode = mode
        return tuple(g for g in result.values if g is not None)

    return Builtin("new_func", first), [*items, *grad_outputs]


def _shown(jacobian: np.ndarray, like: Tensor) -> str:
    """A Jacobian as the message prints it: a tensor of the input's dtype."""
    return repr(Tensor(jacobian.astype(like.data.dtype), like.ctx))


def _check(interp: Interpreter, fn: Value, items: list[Value], eps: float, atol: float,
           rtol: float, check_undefined: bool) -> None:
    """`_gradcheck_helper` with `_slow_gradcheck`, in PyTorch's order (see the Note)."""
    diff = [i for i, t in enumerate(items) if isinstance(t, Tensor) and t.requires_grad]
    inputs = [t for t in items if isinstance(t, Tensor) and t.requires_grad]
    func_out = _call(interp, fn, items)
    outputs = _differentiable(func_out)
    numerical = _numerical(interp, fn, items, diff, func_out, eps)
    if not outputs and any(np.any(jacobian != 0) for jacobian in numerical.values()):
        raise TorchError("GradcheckError", NOT_ZERO)     # `_check_no_differentiable_outputs`
    differentiable = [o for o, out in enumerate(func_out) if out.requires_grad]
    for o, index in enumerate(differentiable):
        for i, ana in enumerate(_analytical(interp, func_out[index], inputs)):
            num = numerical[index, diff[i]]
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                raise TorchError("GradcheckError", f"Jacobian mismatch for output {o} with "
                                 f"respect to input {i},\nnumerical:{_shown(num, inputs[i])}"
                                 f"\nanalytical:{_shown(ana, inputs[i])}\n")
    _mul_by_grad_output(interp, outputs, inputs)
    if check_undefined:
        _undefined_grad_check(interp, fn, items, len(outputs))


def gradcheck(interp: Interpreter, fn: Value, inputs: Value, second: bool,
              options: dict[str, Any]) -> bool:
    items = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    if second:
        fn, items = _first_derivatives(
            interp, fn, items, options.get("grad_outputs"),
            bool(options.get("gen_non_contig_grad_outputs", False)))
    if not any(isinstance(t, Tensor) and t.requires_grad for t in items):
        raise TorchError("ValueError", "gradcheck expects at least one input tensor to "
                         "require gradient, but none of them have requires_grad=True.")
    for i, t in enumerate(items):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            interp.ctx.warnings.append(DOUBLE_WARNING.format(i=i))
    try:
        _check(interp, fn, items, float(options.get("eps", 1e-6)),
               float(options.get("atol", 1e-5)), float(options.get("rtol", 1e-3)),
               bool(options.get("check_undefined_grad", True)))
    except TorchError as error:
        if error.type_name == "GradcheckError" and not options.get("raise_exception", True):
            return False
        raise
    return True
