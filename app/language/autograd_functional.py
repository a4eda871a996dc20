"""`torch.autograd.functional`: jacobian, hessian, vjp, jvp, vhp, hvp.

Ported from torch/autograd/functional.py step by step, so the ops they record (a
`view_as` per input, `reshape(-1)[j]` per output element, a `stack` per Jacobian) and the
sequence numbers those take are PyTorch's. Their `autograd.grad` calls are PyTorch's
internals, not the program's, so they are not passes of the trace (the recorder, too,
sees only the calls the program's text makes).
"""

from __future__ import annotations

from collections.abc import Callable
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


def _as_tuple(interp: Interpreter, value: Value, what: str, fn: str
              ) -> tuple[bool, tuple[Tensor, ...]]:
    """`_as_tuple(inp, arg_name, fn_name)`: only a tuple counts as several (a list is one
    value, refused as not a Tensor)."""
    from app.language.builtins import type_of
    from app.language.values import py_repr

    is_tuple = isinstance(value, tuple)
    items = value if isinstance(value, tuple) else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {what}"
            raise TorchError("TypeError", f"The {what} given to {fn} must be either a Tensor "
                             f"or a tuple of Tensors but the {where} has type "
                             f"{py_repr(type_of(t), interp.addresses)}.")
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


def _unpack(values: Any, to_unpack: tuple[bool, ...]) -> Any:
    """`_tuple_postprocess`: unwrap the tuples the caller did not pass in."""
    if len(to_unpack) == 2:
        if not to_unpack[1]:
            values = tuple(v[0] for v in values)
        if not to_unpack[0]:
            values = values[0]
        return values
    return values if to_unpack[0] else values[0]


_INDEPENDENT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
}
_UNUSED = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _check_requires_grad(values: tuple[Tensor | None, ...], kind: str, strict: bool) -> None:
    """`_check_requires_grad`: strict mode's checks, with PyTorch's message for each kind."""
    for i, t in enumerate(values if strict else ()):
        if t is None:
            raise TorchError("RuntimeError", f"The output of the user-provided function is "
                             f"independent of input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise TorchError("RuntimeError", _INDEPENDENT[kind].format(i=i))


def _fill_in_zeros(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool,
                   create_graph: bool, stage: str) -> tuple[Tensor, ...]:
    """`_fill_in_zeros`: zeros for a gradient that is None, or strict mode's error."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs, strict=True)):
        if g is None and strict:
            raise TorchError("RuntimeError", _UNUSED[stage].format(i=i))
        if g is not None and strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise TorchError("RuntimeError", f"The {what} of the user-provided function is "
                             f"independent of input {i}. This is not allowed in strict mode "
                             "when create_graph=True.")
        out.append(factories.like(ref, 0) if g is None else g)
    return tuple(out)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_tuple: bool) -> None:
    from engine.errors import torch_size

    if len(other) != len(v):
        raise TorchError("RuntimeError", f"v is a tuple of invalid length: should be "
                         f"{len(other)} but got {len(v)}." if is_tuple else
                         "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if a.shape != b.shape:
            raise TorchError("RuntimeError", f"{f'Entry {i} in ' if is_tuple else ''}v has "
                             f"invalid size: should be {torch_size(b.shape)} but got "
                             f"{torch_size(a.shape)}.")


def _v_or_none(interp: Interpreter, v: Value, others: tuple[Tensor, ...], is_tuple: bool,
               create_graph: bool, fn: str, of_output: bool) -> tuple[Tensor, ...] | None:
    """v prepared and checked against `others`; None only for a single one-element one."""
    if v is not None:
        vs = _preprocess(_as_tuple(interp, v, "v", fn)[1], create_graph, False)
        _validate_v(vs, others, is_tuple)
        return vs
    if len(others) != 1 or others[0].numel() != 1:
        raise TorchError("RuntimeError", "The vector v can only be None if the " + (
            "user-provided function returns a single Tensor with a single element." if
            of_output else "input to the user-provided function is a single Tensor with a "
            "single element."))
    return None


def _call(interp: Interpreter, func: Value, ins: tuple[Tensor, ...], fn: str, strict: bool
          ) -> tuple[bool, tuple[Tensor, ...]]:
    outputs = interp.call(func, list(ins), {})
    is_tuple, outs = _as_tuple(interp, outputs, "outputs of the user-provided function", fn)
    _check_requires_grad(outs, "outputs", strict)
    return is_tuple, outs


def _single(outs: tuple[Tensor, ...], is_tuple: bool, fn: str) -> Tensor:
    """hessian's, vhp's and hvp's function must give one Tensor of one element."""
    if is_tuple:
        raise TorchError("RuntimeError", f"The function given to {fn} should return a single "
                         "Tensor")
    if outs[0].numel() != 1:
        raise TorchError("RuntimeError", f"The Tensor returned by the function given to {fn} "
                         "should contain a single element")
    return outs[0]


def jacobian(interp: Interpreter, func: Value, inputs: Value, create_graph: bool = False,
             strict: bool = False) -> Any:
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(interp, inputs, "inputs", "jacobian")
        ins = _preprocess(ins, create_graph, True)
        is_outputs_tuple, outs = _call(interp, func, ins, "jacobian", strict)
        result: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(outs):
            columns: list[list[Tensor]] = [[] for _ in ins]
            for j in range(out.numel()):
                element = functions.getitem(functions.reshape(out, (-1,)), j)
                vj = _autograd_grad((element,), ins, None, create_graph, True)
                for k, (value, inp) in enumerate(zip(vj, ins, strict=True)):
                    if value is not None and strict and create_graph and not \
                            value.requires_grad:
                        raise TorchError("RuntimeError", "The jacobian of the user-provided "
                                         f"function is independent of input {i}. This is not "
                                         "allowed in strict mode when create_graph=True.")
                    if value is None and strict:
                        raise TorchError("RuntimeError", f"Output {i} of the user-provided "
                                         f"function is independent of input {k}. This is not "
                                         "allowed in strict mode.")
                    columns[k].append(factories.like(inp, 0) if value is None else value)
            result.append(tuple(
                functions.view(functions.stack(col, 0), out.shape + ins[k].shape)
                for k, col in enumerate(columns)))
        return _unpack(_postprocess(tuple(result), create_graph),
                       (is_outputs_tuple, is_inputs_tuple))
    finally:
        interp.ctx.grad_mode = mode


def hessian(interp: Interpreter, func: Value, inputs: Value, create_graph: bool = False,
            strict: bool = False) -> Any:
    """The Jacobian of the Jacobian, as PyTorch nests them."""
    is_inputs_tuple, ins = _as_tuple(interp, inputs, "inputs", "hessian")

    def single_output(i: Interpreter, args: Args, kwargs: Kwargs) -> Tensor:
        is_tuple, outs = _call(interp, func, tuple(args), "hessian", strict)
        return functions.squeeze(_single(outs, is_tuple, "hessian"))

    def jac_func(i: Interpreter, args: Args, kwargs: Kwargs) -> Any:
        jac = jacobian(interp, Builtin("hessian.single", single_output), tuple(args),
                       create_graph=True)
        _check_requires_grad(jac if isinstance(jac, tuple) else (jac,), "jacobian", strict)
        return jac

    result = jacobian(interp, Builtin("hessian.jac", jac_func), ins,
                      create_graph=create_graph, strict=strict)
    return _unpack(result, (is_inputs_tuple, is_inputs_tuple))


def vjp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(interp, inputs, "inputs", "vjp")
        ins = _preprocess(ins, create_graph, True)
        is_outputs_tuple, outs = _call(interp, func, ins, "vjp", strict)
        vs = _v_or_none(interp, v, outs, is_outputs_tuple, create_graph, "vjp", True)
        interp.ctx.grad_mode = True if create_graph else mode
        grads = _fill_in_zeros(_autograd_grad(outs, ins, vs, create_graph), ins, strict,
                               create_graph, "back")
        return (_unpack(_postprocess(outs, create_graph), (is_outputs_tuple,)),
                _unpack(_postprocess(grads, create_graph), (is_inputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


def jvp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    """jvp by the double-backward trick, as PyTorch computes it."""
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(interp, inputs, "inputs", "jvp")
        ins = _preprocess(ins, create_graph, True)
        vs = _v_or_none(interp, v, ins, is_inputs_tuple, create_graph, "jvp", False)
        is_outputs_tuple, outs = _call(interp, func, ins, "jvp", strict)
        grad_outputs = tuple(factories.like(o, 0, requires_grad=True) for o in outs)
        grad_inputs = _autograd_grad(outs, ins, grad_outputs, True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        interp.ctx.grad_mode = True if create_graph else mode
        grads = _fill_in_zeros(_autograd_grad(grad_inputs, grad_outputs, vs, create_graph),
                               outs, strict, create_graph, "back_trick")
        return (_unpack(_postprocess(outs, create_graph), (is_outputs_tuple,)),
                _unpack(_postprocess(grads, create_graph), (is_outputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


def _hessian_product(interp: Interpreter, fn: str, func: Value, inputs: Value, v: Value,
                     create_graph: bool, strict: bool) -> Any:
    """vhp: the gradient of the Jacobian along v. hvp: PyTorch's double-backward trick, the
    gradient of `grad(jac, inputs, grad_jac)` with respect to `grad_jac`, new leaves of
    zeros (its passes record nodes that vhp's do not, so later sequence numbers differ)."""
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = True
    try:
        is_inputs_tuple, ins = _as_tuple(interp, inputs, "inputs", fn)
        ins = _preprocess(ins, create_graph, True)
        vs = _v_or_none(interp, v, ins, is_inputs_tuple, create_graph, fn, False)
        is_outputs_tuple, outs = _call(interp, func, ins, fn, strict)
        out = _single(outs, is_outputs_tuple, fn)
        jac = _autograd_grad((out,), ins, None, True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn == "hvp":
            grad_jac = tuple(factories.like(t, 0, requires_grad=True) for t in ins)
            double_back = _autograd_grad(jac, ins, grad_jac, True)
            _check_requires_grad(jac, "hessian", strict)
            interp.ctx.grad_mode = True if create_graph else mode
            grads = _fill_in_zeros(_autograd_grad(double_back, grad_jac, vs, create_graph),
                                   ins, strict, create_graph, "double_back_trick")
        else:
            grads = _fill_in_zeros(_autograd_grad(jac, ins, vs, create_graph), ins, strict,
                                   create_graph, "double_back")
        return (_postprocess(out, create_graph),
                _unpack(_postprocess(grads, create_graph), (is_inputs_tuple,)))
    finally:
        interp.ctx.grad_mode = mode


def vhp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    return _hessian_product(interp, "vhp", func, inputs, v, create_graph, strict)


def hvp(interp: Interpreter, func: Value, inputs: Value, v: Value = None,
        create_graph: bool = False, strict: bool = False) -> Any:
    return _hessian_product(interp, "hvp", func, inputs, v, create_graph, strict)


# Each function's parameters after (func, inputs), with their defaults, as Python binds them.
_PRODUCT = (("v", None), ("create_graph", False), ("strict", False))
_JACOBIAN = (("create_graph", False), ("strict", False), ("vectorize", False))
_SIGNATURES: dict[str, tuple[tuple[str, Any], ...]] = {
    "jacobian": (*_JACOBIAN, ("strategy", "reverse-mode")),
    "hessian": (*_JACOBIAN, ("outer_jacobian_strategy", "reverse-mode")),
    "vjp": _PRODUCT, "jvp": _PRODUCT, "vhp": _PRODUCT, "hvp": _PRODUCT}
_IMPLS: dict[str, Callable[..., Any]] = {
    "jacobian": jacobian, "hessian": hessian, "vjp": vjp, "jvp": jvp, "vhp": vhp, "hvp": hvp}


def _bind(name: str, args: Args, kwargs: Kwargs) -> dict[str, Any]:
    """Python's binding of the arguments, with its TypeErrors."""
    names = ["func", "inputs", *(n for n, _ in _SIGNATURES[name])]
    if len(args) > len(names):
        raise TorchError("TypeError", f"{name}() takes from 2 to {len(names)} positional "
                         f"arguments but {len(args)} were given")
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in names:
            raise TorchError("TypeError", f"{name}() got an unexpected keyword argument "
                             f"'{key}'")
        if key in bound:
            raise TorchError("TypeError", f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    missing = [f"'{n}'" for n in ("func", "inputs") if n not in bound]
    if missing:
        raise TorchError("TypeError", f"{name}() missing {len(missing)} required positional "
                         f"argument{'s' if len(missing) > 1 else ''}: {' and '.join(missing)}")
    return bound


def _functional(name: str) -> Builtin:
    def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        from app.language.attributes import not_in_lab

        kwargs.pop("__text__", None)
        bound = _bind(name, args, kwargs)
        strategy = bound.pop("strategy", bound.pop("outer_jacobian_strategy", "reverse-mode"))
        if strategy not in ("forward-mode", "reverse-mode"):
            raise TorchError("AssertionError", 'Expected strategy to be either "forward-mode" '
                             'or "reverse-mode".' + (_HINT if name == "jacobian" else ""))
        if bound.pop("vectorize", False) or strategy != "reverse-mode":
            raise not_in_lab(f"torch.autograd.functional.{name}(..., vectorize=True) or a "
                             "forward-mode strategy")
        return _IMPLS[name](interp, **bound)

    return Builtin(f"torch.autograd.functional.{name}", call)


_HINT = (' Hint: If your function has more outputs than inputs, "forward-mode" tends to be '
         'more performant. Otherwise, prefer to use "reverse-mode".')
MEMBERS: dict[str, Value] = {name: _functional(name) for name in _IMPLS}
