"""`torch.autograd`: grad, backward, Function, graph.saved_tensors_hooks, the grad-mode
managers, and gradcheck."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import engine.backward as engine_backward
from app.language.events import GradReturned
from app.language.torch_api import TORCH_MEMBERS, function
from app.language.values import (
    Builtin,
    ContextManager,
    FunctionClass,
    Namespace,
    PyType,
    Value,
)
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Kwargs = dict[str, Value]
MEMBERS: dict[str, Value] = {}
GRAPH: dict[str, Value] = {}


def implicit_seeds(outputs: Value, grads: Value) -> int:
    """How many outputs `_make_grads` gives a ones seed (no gradient given for an output
    that requires grad): the profiler's `aten::ones_like` events."""
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    given = (list(grads) if isinstance(grads, (list, tuple)) else [grads]) \
        if grads is not None else [None] * len(outs)
    return sum(1 for o, g in zip(outs, given, strict=False)
               if g is None and getattr(o, "requires_grad", False))


@function("grad", "outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, "
          "only_inputs=True, allow_unused=None, is_grads_batched=False, "
          "materialize_grads=False", MEMBERS, "autograd")
def _grad(interp: Interpreter, a: Kwargs) -> Value:
    """`torch.autograd.grad(...)`: a pass of kind "grad"; returns the captured gradients."""
    if a["is_grads_batched"]:
        raise TorchError("UnsupportedError", "the lab does not batch grad_outputs "
                         "(is_grads_batched=True)")
    for key in ("outputs", "inputs"):      # any iterable, as tuple(inputs) takes it
        if not isinstance(a[key], (Tensor, list, tuple, dict, int, float, str)) and \
                a[key] is not None:        # (what is not, the backward refuses as PyTorch's)
            a[key] = tuple(interp.iterate(a[key]))
    result = engine_backward.GradResult()
    create = bool(a["create_graph"])
    keep = create if a["retain_graph"] is None else bool(a["retain_graph"])
    events = engine_backward.grad(a["outputs"], a["inputs"], a["grad_outputs"],
                                  a["retain_graph"], create, a["allow_unused"],
                                  bool(a["materialize_grads"]), result)
    interp.run_pass("grad", a.get("__text__", ""), events, keep, create,
                    seeds=implicit_seeds(a["outputs"], a["grad_outputs"]))
    inputs = a["inputs"]
    listed = list(inputs.values()) if isinstance(inputs, dict) else (
        list(inputs) if isinstance(inputs, (list, tuple)) else [inputs])
    interp.emit(GradReturned([getattr(t, "name", None) for t in listed],
                             [None if v is None else v.data for v in result.values]))
    if isinstance(a["inputs"], dict):
        return dict(zip(a["inputs"].keys(), result.values, strict=True))
    return result.values


@function("backward", "tensors, grad_tensors=None, retain_graph=None, create_graph=False, "
          "grad_variables=None, inputs=None", MEMBERS, "autograd")
def _backward(interp: Interpreter, a: Kwargs) -> None:
    grads = a["grad_tensors"] if a["grad_tensors"] is not None else a["grad_variables"]
    create = bool(a["create_graph"])
    keep = create if a["retain_graph"] is None else bool(a["retain_graph"])
    events = engine_backward.backward(a["tensors"], grads, a["retain_graph"], create,
                                      a["inputs"])
    interp.run_pass("backward", a.get("__text__", "") or "torch.autograd", events, keep, create,
                    seeds=implicit_seeds(a["tensors"], grads), direct=True)


_PACK_IN_PLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")


def _saved_tensors_hooks(interp: Interpreter, args: list[Value], kwargs: Kwargs) -> Value:
    kwargs.pop("__text__", None)
    pack = args[0] if args else kwargs.get("pack_hook")
    unpack = args[1] if len(args) > 1 else kwargs.get("unpack_hook")

    def packed(t: Tensor) -> Any:
        version = t.version
        result = interp.call(pack, [t], {})
        if t.version != version:        # SavedVariable::set_hooks_and_pack_data's check
            raise TorchError("RuntimeError", _PACK_IN_PLACE)
        return result, t                # the tensor whose place in the graph it keeps

    def unpacked(x: Any) -> Any:
        result, t = x
        value = interp.call_hook(unpack, [result])
        if not isinstance(value, Tensor):
            raise TorchError("TypeError", "Output of saved tensor unpack_hook expected to be a "
                             f"Tensor but got result of type {type(value).__name__}")
        # SavedVariable::unpack: a new tensor with the hook's data on the saved tensor's
        # place in the graph (its grad_fn, or a leaf's AccumulateGrad), never `value` itself
        var = Tensor(value.data, value.ctx, requires_grad=t.requires_grad, grad_fn=t._grad_fn,
                     output_nr=t.output_nr)
        var._grad_accumulator = t._grad_accumulator
        return var

    return ContextManager("saved_tensors_hooks", hooks=(packed, unpacked),
                          label="torch.autograd.graph.saved_tensors_hooks")


def _save_on_cpu(interp: Interpreter, args: list[Value], kwargs: Kwargs) -> Value:
    """Every saved tensor kept as it is (the lab has only the CPU), unpacked unchanged."""
    return ContextManager("saved_tensors_hooks", hooks=(lambda t: t, lambda t: t),
                          label="torch.autograd.graph.save_on_cpu")


def _anomaly(interp: Interpreter, args: list[Value], kwargs: Kwargs) -> Value:
    return ContextManager("nothing", label="torch.autograd.anomaly_mode.detect_anomaly")


GRAPH["saved_tensors_hooks"] = Builtin("torch.autograd.graph.saved_tensors_hooks",
                                       _saved_tensors_hooks)
GRAPH["save_on_cpu"] = Builtin("torch.autograd.graph.save_on_cpu", _save_on_cpu)


def _gradcheck(second: bool) -> Builtin:
    """`gradcheck(fn, inputs)`: analytical against numerical derivatives, as PyTorch's
    checker compares them (central differences, eps 1e-6, atol 1e-5, rtol 1e-3)."""
    name = "gradgradcheck" if second else "gradcheck"

    def impl(interp: Interpreter, args: list[Value], kwargs: Kwargs) -> Value:
        kwargs.pop("__text__", None)
        from app.language.gradcheck import gradcheck

        fn = args[0]
        inputs = args[1] if len(args) > 1 else kwargs.pop("inputs")
        if second and len(args) > 2:        # gradgradcheck(func, inputs, grad_outputs)
            kwargs["grad_outputs"] = args[2]
        return gradcheck(interp, fn, inputs, second, kwargs)

    return Builtin(f"torch.autograd.{name}", impl)


FUNCTION_TYPE = PyType("torch.autograd.Function", lambda v: isinstance(v, FunctionClass), None)
MEMBERS.update({
    "Function": FUNCTION_TYPE,
    "graph": Namespace("torch.autograd.graph", GRAPH),
    "no_grad": TORCH_MEMBERS["no_grad"], "enable_grad": TORCH_MEMBERS["enable_grad"],
    "set_grad_enabled": TORCH_MEMBERS["set_grad_enabled"],
    "inference_mode": TORCH_MEMBERS["inference_mode"],
    "set_detect_anomaly": Builtin("torch.autograd.set_detect_anomaly", _anomaly),
    "detect_anomaly": Builtin("torch.autograd.detect_anomaly", _anomaly),
    "gradcheck": _gradcheck(False), "gradgradcheck": _gradcheck(True),
    "function": Namespace("torch.autograd.function", {
        "once_differentiable": Builtin("once_differentiable", lambda i, a, k: a[0]),
        "Function": FUNCTION_TYPE}),
})


def _functional() -> Namespace:
    from app.language import autograd_functional

    return Namespace("torch.autograd.functional", autograd_functional.MEMBERS)


MEMBERS["functional"] = _functional()
AUTOGRAD = Namespace("torch.autograd", MEMBERS)
TORCH_MEMBERS["autograd"] = AUTOGRAD
_ = np
