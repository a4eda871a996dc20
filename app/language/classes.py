"""The program's classes: custom `torch.autograd.Function`s and `nn.Module` subclasses.

A Function class is its static forward and backward; `Name.apply(...)` runs them through
the engine's custom-function node (engine/custom_function.py). A Module subclass makes
instances of the lab's nn.Module (nn_api.py) whose `__init__` and `forward` are the
program's own methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.language import program as ir
from app.language.values import (
    BoundMethod,
    Builtin,
    FunctionClass,
    UserFunction,
    Value,
    type_name,
)
from engine import custom_function
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Frame, Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def make_class(interp: Interpreter, definition: ir.ClassDef, frame: Frame) -> Value:
    methods = {m.name: interp.make_function(m, frame) for m in definition.methods}
    for method in methods.values():
        method.qualname = f"{definition.name}.{method.name}"
    attributes: dict[str, Value] = {}
    for assign in definition.attributes:
        value = interp.eval(assign.value, frame)
        for target in assign.targets:
            if isinstance(target, ir.Name):
                attributes[target.id] = value
    if definition.kind == "function":
        return FunctionClass(definition, methods, attributes)
    from app.language.nn_api import ModuleClass

    return ModuleClass(definition.name, methods, attributes)


def _apply(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`Name.apply(*args)`: see engine/custom_function.py."""
    kwargs.pop("__text__", None)
    cls, inputs = args[0], args[1:]
    assert isinstance(cls, FunctionClass)
    forward = cls.methods.get("forward")
    backward = cls.methods.get("backward")
    if forward is None:
        raise TorchError("NotImplementedError", "You must implement the forward function for "
                         "custom autograd.Function.")
    if kwargs and isinstance(forward, UserFunction):
        inputs = _keywords_in_place(forward, list(inputs), kwargs)

    def run_forward(ctx: custom_function.FunctionNode, values: list[Value]) -> Value:
        if isinstance(backward, UserFunction):     # the lines the page marks as it runs
            span = backward.definition.span
            ctx.backward_lines = (span.line, span.end_line)
        return interp.call(forward, [ctx, *values], {})

    def run_backward(ctx: custom_function.FunctionNode, grads: list[Tensor]) -> Value:
        if backward is None:
            raise TorchError("NotImplementedError", "You must implement either the backward or "
                             "vjp method for your custom autograd.Function to use it with "
                             "backward mode AD.")
        create_graph = interp.ctx.grad_mode
        result = interp.call_hook(backward, [ctx, *grads])
        if (isinstance(backward, UserFunction) and backward.once_differentiable
                and create_graph and any(g is not None and g.requires_grad for g in grads)):
            return custom_function.delayed_error(interp.ctx, result)
        return result

    return custom_function.apply(interp.ctx, cls.name, list(inputs), run_forward, run_backward)


def _keywords_in_place(forward: UserFunction, inputs: Args, kwargs: Kwargs) -> Args:
    """THPFunction_apply's keywords: each is put in its place among forward's positional
    parameters after ctx (so it is an input, counted by needs_input_grad), and every place
    before the last one given must be filled."""
    names = [p.name for p in forward.definition.params if p.kind == "positional"][1:]
    placed: dict[int, Value] = {}
    for key, value in kwargs.items():
        if key not in names:
            raise TorchError("TypeError", f"forward() got an unexpected keyword argument '{key}'")
        if names.index(key) < len(inputs):
            raise TorchError("TypeError", f"forward() got multiple values for argument '{key}'")
        placed[names.index(key)] = value
    for i in range(len(inputs), max(placed) + 1):
        if i not in placed:
            raise TorchError("TypeError", f"forward() missing required argument: '{names[i]}' "
                             f"(position {i})")
        inputs.append(placed[i])
    return inputs


_APPLY = Builtin("Function.apply", _apply)


def apply_builtin() -> Builtin:
    return _APPLY


_LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please "
           "use new-style autograd function with static forward method. (Example: "
           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


class FunctionInstance:
    """`Exp(x)`: an instance of a custom Function (PyTorch only warns that it is deprecated,
    whatever the arguments); calling it is the legacy call, which raises."""

    def __init__(self, cls: FunctionClass) -> None:
        self.cls = cls
        self.lab_type_name = cls.name

    def lab_repr(self, addresses: Any) -> str:
        return f"<{self.cls.name} object at {addresses.of(self)}>"     # module builtins

    def lab_call(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        raise TorchError("RuntimeError", _LEGACY)

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        from app.language.attributes import get_attribute

        return get_attribute(interp, self.cls, name)   # its methods are the class's


def call_object(interp: Interpreter, obj: Value, args: Args, kwargs: Kwargs) -> Value:
    """Calling anything that is not a function: a Module class or instance, a custom
    Function's class (which makes an instance)."""
    if isinstance(obj, FunctionClass):
        return FunctionInstance(obj)
    call = getattr(obj, "lab_call", None)
    if callable(call):
        kwargs.pop("__text__", None)
        return call(interp, args, kwargs)
    raise TorchError("TypeError", f"'{type_name(obj)}' object is not callable")


def super_of(interp: Interpreter) -> Value:
    """`super()` inside a Module subclass's method: its nn.Module methods."""
    from app.language.nn_api import Module, SuperModule

    frame = interp.frames[-1] if interp.frames else None
    first = frame.first if frame is not None else None
    if not isinstance(first, Module):
        raise TorchError("UnsupportedError", "super(): the lab takes super() inside the methods of "
                         "an nn.Module subclass")
    return SuperModule(first)


def name_parameters(interp: Interpreter, value: Value, name: str) -> None:
    """Note [Leaf names]: a top-level module's parameters are named `VAR.NAME`."""
    from app.language.nn_api import Module

    if isinstance(value, Module):
        for pname, param in value.named_parameters_list():
            interp.name_leaf(param, f"{name}.{pname}")
        for path, module in value.named_modules_list(name):
            if module.path is None:
                module.path = path


def bound_methods(obj: Any, methods: dict[str, UserFunction], name: str) -> Value:
    method = methods.get(name)
    if method is None:
        return None
    return BoundMethod(obj, Builtin(f"{type_name(obj)}.{name}",
                                    lambda i, a, k: i.call(method, a, k)))
