"""A backward node as a program sees it (`y.grad_fn`, and `ctx` in a custom Function):
`name()`, `next_functions`, `register_hook`, `register_prehook`, `_saved_*`,
`_sequence_nr()`, and ctx's `save_for_backward`, `saved_tensors`, `needs_input_grad`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.language.tensor_api import check_hook_count
from app.language.values import BoundMethod, Builtin, Value, function_name, type_name
from engine import hooks
from engine.accumulate_grad import AccumulateGrad
from engine.custom_function import FunctionNode
from engine.errors import TorchError
from engine.node import Node
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def _plain(kwargs: Kwargs) -> Kwargs:
    kwargs.pop("__text__", None)
    return kwargs


def _name(interp: Interpreter, args: Args, kwargs: Kwargs) -> str:
    if len(args) > 1 or _plain(kwargs):
        raise TorchError("TypeError", f"{args[0].type_name}.name() takes no arguments "
                         f"({len(args) - 1 + len(kwargs)} given)")
    return str(args[0].node_name)


def _sequence_nr(interp: Interpreter, args: Args, kwargs: Kwargs) -> int:
    return int(args[0].sequence_nr)


def _register_prehook(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    node, fn = args[0], (args[1] if len(args) > 1 else _plain(kwargs).get("hook"))

    check_hook_count(interp, len(node.pre_hooks or ()), "a node")

    def hook(grad_outputs: tuple[Any, ...]) -> Any:
        return interp.call_hook(fn, [grad_outputs])

    return hooks.register_prehook(node, hooks.Hook(hook, function_name(fn)))


def _register_hook(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    node, fn = args[0], (args[1] if len(args) > 1 else _plain(kwargs).get("hook"))

    check_hook_count(interp, len(node.post_hooks or ()), "a node")

    def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        return interp.call_hook(fn, [grad_inputs, grad_outputs])

    return hooks.register_node_hook(node, hooks.Hook(hook, function_name(fn)))


def _save_for_backward(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    ctx = args[0]
    for i, t in enumerate(args[1:]):
        if t is not None and not isinstance(t, Tensor):
            raise TorchError("TypeError", f"save_for_backward can only save variables, but "
                             f"argument {i} is of type {type_name(t)}")
    ctx.save_for_backward(tuple(args[1:]))


def _mark_non_differentiable(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    args[0].non_differentiable.extend(t for t in args[1:] if isinstance(t, Tensor))


def _set_materialize_grads(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    args[0].materialize_grads = bool(args[1])


def _mark_dirty(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    args[0].dirty.extend(t for t in args[1:] if isinstance(t, Tensor))


_METHODS = {
    "name": Builtin("Node.name", _name),
    "_sequence_nr": Builtin("Node._sequence_nr", _sequence_nr),
    "register_prehook": Builtin("Node.register_prehook", _register_prehook),
    "register_hook": Builtin("Node.register_hook", _register_hook),
}
_CTX_METHODS = {
    "save_for_backward": Builtin("ctx.save_for_backward", _save_for_backward),
    "mark_non_differentiable": Builtin("ctx.mark_non_differentiable",
                                       _mark_non_differentiable),
    "set_materialize_grads": Builtin("ctx.set_materialize_grads", _set_materialize_grads),
    "mark_dirty": Builtin("ctx.mark_dirty", _mark_dirty),
}


def get(interp: Interpreter, node: Node, name: str) -> Value:
    if name in _METHODS:
        return BoundMethod(node, _METHODS[name])
    if name == "next_functions":
        return tuple((e.function, e.input_nr) if e is not None else (None, 0)
                     for e in node.next_edges)
    if name == "metadata":
        return {}
    if isinstance(node, AccumulateGrad) and name == "variable":
        return node.variable
    if isinstance(node, FunctionNode):
        if name in _CTX_METHODS:
            return BoundMethod(node, _CTX_METHODS[name])
        if name == "saved_tensors":
            return node.saved_tensors()
        if name == "needs_input_grad":
            return node.input_needs_grad
        if name in node.attributes:
            return node.attributes[name]
    if name.startswith("_saved_"):
        saved = name[len("_saved_"):]
        if saved in node.saved_names:
            var = node.saved.get(saved)
            if var is None:
                return None
            value = var.unpack(node)
            if saved in _DIMS:      # int64 dims as given; Python reads them as unsigned
                return _unsigned(value)
            if isinstance(value, tuple) and not isinstance(value, Tensor):
                return tuple(value)
            return value
    raise TorchError("AttributeError", f"'{type_name(node)}' object has no attribute '{name}'")


_DIMS = frozenset({"dims"})     # saved as written (FlipBackward0's); others normalise theirs


def _unsigned(value: Any) -> Any:
    """A saved int64 dim as `_saved_dims` shows it: -1 is 18446744073709551615."""
    if isinstance(value, tuple):
        return tuple(_unsigned(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return value + 2**64
    return value


def set(interp: Interpreter, node: Node, name: str, value: Value) -> None:
    raise TorchError("AttributeError", f"attribute '{name}' of '{type_name(node)}' objects is "
                     "not writable")
