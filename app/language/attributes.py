"""Attribute access, the only way a program reaches into a value: `x.grad`,
`y.grad_fn.next_functions`, `torch.nn.functional`, `losses.append`...

Each kind of value has its table, and a name outside it is Python's AttributeError. No
attribute is ever looked up on a real Python object by the name the program wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.language import containers, nodes, pytorch_names, tensor_api
from app.language.size import Size
from app.language.values import (
    BoundMethod,
    Builtin,
    FunctionClass,
    LambdaFunction,
    Namespace,
    PyType,
    ReturnTypes,
    UserFunction,
    Value,
    type_name,
)
from engine.custom_function import FunctionNode
from engine.dtypes import DType
from engine.errors import TorchError
from engine.node import Node, RemovableHandle
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter


def no_attribute(obj: Value, name: str) -> TorchError:
    if isinstance(obj, Namespace):
        if pytorch_names.exists(obj.name, name):
            return not_in_lab(f"{obj.name}.{name}")
        return TorchError("AttributeError", f"module '{obj.name}' has no attribute '{name}'")
    if isinstance(obj, (FunctionClass, PyType)):
        return TorchError("AttributeError", f"type object '{obj.name}' has no attribute "
                          f"'{name}'")
    return TorchError("AttributeError", f"'{type_name(obj)}' object has no attribute '{name}'")


def not_in_lab(what: str) -> TorchError:
    """Something PyTorch has that the lab does not: refused with advice, not with an
    AttributeError PyTorch would never raise."""
    return TorchError("UnsupportedError", f"`{what}` is part of PyTorch but not of the lab, "
                      "which runs what autograd does on CPU tensors: tensors, their ops and "
                      "backward, torch.nn's layers and losses, torch.optim's SGD and Adam")


def get_attribute(interp: Interpreter, obj: Value, name: str) -> Value:
    if name == "__class__":                     # what type(obj) gives
        from app.language.builtins import type_of

        return type_of(obj)
    if isinstance(obj, Tensor):
        return tensor_api.get(interp, obj, name)
    if isinstance(obj, Namespace):
        if name in obj.members:
            return obj.members[name]
        raise no_attribute(obj, name)
    if isinstance(obj, Node):
        return nodes.get(interp, obj, name)
    method = containers.method(obj, name)
    if method is not None:
        return BoundMethod(obj, method)
    if isinstance(obj, ReturnTypes) and name in ("values", "indices"):
        return obj.values if name == "values" else obj.indices
    if isinstance(obj, FunctionClass):
        return _function_class(interp, obj, name)
    if isinstance(obj, DType):
        if name == "is_floating_point":
            return obj.is_floating_point
        if name == "itemsize":
            return int(obj.numpy.itemsize)
    if isinstance(obj, RemovableHandle) and name == "remove":
        return BoundMethod(obj, _REMOVE)
    if isinstance(obj, (UserFunction, LambdaFunction, PyType, Builtin)) and name == "__name__":
        if isinstance(obj, LambdaFunction):
            return "<lambda>"
        return obj.name.rsplit(".", 1)[-1]  # its own name, without its module or class
    getter = getattr(obj, "lab_getattr", None)
    if callable(getter):
        return getter(interp, name)
    raise no_attribute(obj, name)


def _remove(interp: Interpreter, args: list[Value], kwargs: dict[str, Value]) -> None:
    handle = args[0]
    assert isinstance(handle, RemovableHandle)
    handle.remove()


_REMOVE = Builtin("RemovableHandle.remove", _remove)


def _function_class(interp: Interpreter, cls: FunctionClass, name: str) -> Value:
    from app.language.classes import apply_builtin

    if name == "apply":
        return BoundMethod(cls, apply_builtin())
    if name in cls.methods:
        return cls.methods[name]
    if name in cls.attributes:
        return cls.attributes[name]
    if name == "__name__":
        return cls.name
    raise no_attribute(cls, name)


def set_attribute(interp: Interpreter, obj: Value, name: str, value: Value) -> None:
    if isinstance(obj, Tensor):
        tensor_api.set(interp, obj, name, value)
        return
    if isinstance(obj, FunctionNode) and name not in ("saved_tensors", "needs_input_grad"):
        obj.attributes[name] = value
        return
    if isinstance(obj, Node):
        nodes.set(interp, obj, name, value)
        return
    if isinstance(obj, FunctionClass):
        obj.attributes[name] = value
        return
    setter = getattr(obj, "lab_setattr", None)
    if callable(setter):
        setter(interp, name, value)
        return
    if isinstance(obj, (Size, tuple, list, dict, str, int, float, bool)) or obj is None:
        # Python 3.11's words (the corpora were recorded under 3.11; 3.13 adds "and no
        # __dict__ for setting new attributes").
        raise TorchError("AttributeError", f"'{type_name(obj)}' object has no attribute "
                         f"'{name}'")
    raise TorchError("AttributeError", f"cannot set attribute '{name}' of "
                     f"'{type_name(obj)}' object")
