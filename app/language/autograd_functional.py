"""`torch.autograd.functional`: jacobian, hessian, vjp, jvp, vhp, hvp.

Ported from torch/autograd/functional.py step by step, so the ops they record (a
`view_as` per input, `reshape(-1)[j]` per output element, a `stack` per Jacobian) and the
sequence numbers those take are PyTorch's. Their `autograd.grad` calls are PyTorch's
internals, not the program's, so they are not passes of the trace (the recorder, too,
sees only the calls the program's text makes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import engine.backward as engine_backward
from app.language.values import Builtin, Value
from engine import functions
from engine.errors import TorchError
from engine.functions import factories
from engine.tensor import Tensor, set_requires_grad

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def _as_tuple(value: Value, what: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TorchError("TypeError", f"The {what} given to {fn} must be either a Tensor "
                             f"or a tuple of Tensors but the value at index {i} has type "
                             f"{type(t).__name__}.")
    return is_tuple, items


def _preprocess(inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool
                ) -> tuple[Tensor, ...]:
    from app.language.tensor_api import detach

    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(functions.view(t, t.shape))          # `inp.view_as(inp)`
        else:
            d = detach(t)
            if need_graph:
                set_requires_grad(d, True)
            out.append(d)
    return tuple(out)


def _postprocess(values: Any, create_graph: bool) -> Any:
    from app.language.tensor_api import detach

    if isinstance(values, Tensor):
        return values if create_graph else detach(values)
    return tuple(_postprocess(v, create_graph) for v in values)


def _autograd_grad(outputs: tuple[Tensor | None, ...], inputs: tuple[Tensor, ...],
                   grad_outputs: tuple[Any, ...] | None, create_graph: bool,
                   retain_graph: bool | None = None) -> tuple[Tensor | None, ...]:
    """`autograd.grad` with allow_unused, on the outputs that require grad (a missing one,
    None, is left out as one that does not); silent."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    result = engine_backward.GradResult()
    for _ in engine_backward.grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                                  retain_graph, create_graph, True, False, result):
        pass
    return result.values


def _fill_in_zeros(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...]
                   ) -> tuple[Tensor, ...]:
    return tuple(g if g is not None else factories.like(r, 0) for g, r in
                 zip(grads, refs, strict=True))


def _unpack(values: Any, to_unpack: tuple[bool, ...]) -> Any:
    """`_tuple_postprocess`: unwrap the tuples the caller did not pass in."""
    if len(to_unpack) == 2:
        if not to_unpack[1]:
            values = tuple(v[0] for v in values)
        if not to_unpack[0]:
            values = values[0]
        return values
    return values if to_unpack[0] else values[0]


def _outputs_require_grad(outs: tuple[Tensor, ...], strict: bool) -> None:
    """_check_requires_grad(outputs, "outputs", strict): in strict mode every output must
    come from the inputs, before any gradient is taken."""
    for i, out in enumerate(outs):
        if strict and not out.requires_grad:
            raise TorchError("RuntimeError", f"Output {i} of the user-provided function does "
                             "not require gradients. The outputs must be computed in a "
                             "differentiable manner from the input when running in strict "
                             "mode.")


def jacobian(interp: Interpreter, func: Value, inputs: Value, create_graph: bool = False,
             strict: bool = False) -> Any:
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _preprocess(ins, create_graph, True)
        outputs = interp.call(func, list(ins), {})
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function",
                                           "jacobian")
        _outputs_require_grad(outs, strict)
        result: list[tuple[Tensor, ...]] = []
        for out in outs:
            columns: list[list[Tensor]] = [[] for _ in ins]
            for j in range(out.numel()):
                element = functions.getitem(functions.reshape(out, (-1,)), j)
                vj = _autograd_grad((element,), ins, None, create_graph, True)
                for k, (value, inp) in enumerate(zip(vj, ins, strict=True)):
                    if value is None:
                        if strict:
                            raise TorchError("RuntimeError", f"Output {len(result)} of the "
                                             f"user-provided function is independent of input "
                                             f"{k}. This is not allowed in strict mode.")
                        value = factories.like(inp, 0)
                    columns[k].append(value)
            result.append(tuple(
                functions.view(functions.stack(col, 0), out.shape + ins[k].shape)
                for k, col in enumerate(columns)))
        return _unpack(_postprocess(tuple(result), create_graph),
                       (is_outputs_tuple, is_inputs_tuple))
    finally:
        interp.ctx.grad_mode = mode


def vjp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _preprocess(ins, create_graph, True)
        outputs = interp.call(func, list(ins), {})
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function",
                                           "vjp")
        _outputs_require_grad(outs, strict)
        if v is not None:
            _, vs = _as_tuple(v, "v", "vjp")
            vs = _preprocess(vs, create_graph, False)
        else:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise TorchError("RuntimeError", "The vector v can only be None if the "
                                 "user-provided function returns a single Tensor with a "
                                 "single element.")
            vs = None
        interp.ctx.grad_mode = True if create_graph else mode
        grads = _fill_in_zeros(_autograd_grad(outs, ins, vs, create_graph), ins)
        return (_unpack(_postprocess(outs, create_graph), (is_outputs_tuple,)),
                _unpack(_postprocess(grads, create_graph), (is_inputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


def hessian(interp: Interpreter, func: Value, inputs: Value, create_graph: bool = False,
            strict: bool = False) -> Any:
    """The Jacobian of the Jacobian, as PyTorch nests them."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def single_output(i: Interpreter, args: Args, kwargs: Kwargs) -> Tensor:
        out = interp.call(func, list(args), {})
        if not isinstance(out, Tensor):
            raise TorchError("RuntimeError", "The function given to hessian should return a "
                             "single Tensor")
        if out.numel() != 1:
            raise TorchError("RuntimeError", "The Tensor returned by the function given to "
                             "hessian should contain a single element")
        return functions.squeeze(out)

    def jac_func(i: Interpreter, args: Args, kwargs: Kwargs) -> Any:
        return jacobian(interp, Builtin("hessian.single", single_output), tuple(args),
                        create_graph=True)

    result = jacobian(interp, Builtin("hessian.jac", jac_func), ins,
                      create_graph=create_graph, strict=strict)
    return _unpack(result, (is_inputs_tuple, is_inputs_tuple))


def _functional(name: str, impl: Any, spec: tuple[str, ...]) -> Builtin:
    def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        kwargs.pop("__text__", None)
        bound = dict(zip(spec, args, strict=False))
        bound.update(kwargs)
        return impl(interp, **bound)

    return Builtin(f"torch.autograd.functional.{name}", call)


def jvp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    """jvp by the double-backward trick, as PyTorch computes it."""
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        _, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _preprocess(ins, create_graph, True)
        vs = None if v is None else _preprocess(_as_tuple(v, "v", "jvp")[1], create_graph,
                                                False)
        outputs = interp.call(func, list(ins), {})
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function",
                                           "jvp")
        _outputs_require_grad(outs, strict)
        grad_outputs = tuple(factories.like(o, 0, requires_grad=True) for o in outs)
        grad_inputs = _autograd_grad(outs, ins, grad_outputs, True)
        grads = _fill_in_zeros(_autograd_grad(grad_inputs, grad_outputs, vs,
                                              create_graph), outs)
        return (_unpack(_postprocess(outs, create_graph), (is_outputs_tuple,)),
                _unpack(_postprocess(grads, create_graph), (is_outputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


def vhp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "vhp")
        ins = _preprocess(ins, create_graph, True)
        vs = None if v is None else _preprocess(_as_tuple(v, "v", "vhp")[1], create_graph,
                                                False)
        out = interp.call(func, list(ins), {})
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise TorchError("RuntimeError", "The function given to vhp should return a single "
                             "Tensor with a single element.")
        jac = _autograd_grad((out,), ins, None, True)
        grads = _fill_in_zeros(_autograd_grad(jac, ins, vs, create_graph), ins)
        return (_postprocess(out, create_graph),
                _unpack(_postprocess(grads, create_graph), (is_inputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


MEMBERS: dict[str, Value] = {
    "jacobian": _functional("jacobian", jacobian, ("func", "inputs", "create_graph", "strict")),
    "hessian": _functional("hessian", hessian, ("func", "inputs", "create_graph", "strict")),
    "vjp": _functional("vjp", vjp, ("func", "inputs", "v", "create_graph", "strict")),
    "jvp": _functional("jvp", jvp, ("func", "inputs", "v", "create_graph", "strict")),
    "vhp": _functional("vhp", vhp, ("func", "inputs", "v", "create_graph", "strict")),
    "hvp": _functional("hvp", vhp, ("func", "inputs", "v", "create_graph", "strict")),
}
