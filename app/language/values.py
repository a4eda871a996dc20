"""The values a lab program handles besides Python's numbers, strings and containers, and
how `print` writes every value, as Python and PyTorch write it.

A program never touches a real Python object it did not make itself: modules such as
`torch` are `Namespace` tables, functions are `Builtin`s or the program's own
`UserFunction`s, and attribute access goes through the interpreter's tables only.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.language.size import Size
from engine.custom_function import FunctionNode
from engine.dtypes import DType
from engine.node import Node, RemovableHandle
from engine.printing import tensor_repr
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Frame, Interpreter
from app.language.program import ClassDef, FunctionDef, Lambda

Value = Any
Args = list[Value]
Kwargs = dict[str, Value]
Impl = Callable[["Interpreter", Args, Kwargs], Value]


class Namespace:
    """A module of names: `torch`, `torch.nn.functional`, `math`..."""

    __slots__ = ("name", "members")

    def __init__(self, name: str, members: dict[str, Value]) -> None:
        self.name = name
        self.members = members


class Builtin:
    """A function the lab implements: `torch.tanh`, `print`, `range`..."""

    __slots__ = ("name", "impl")

    def __init__(self, name: str, impl: Impl) -> None:
        self.name = name
        self.impl = impl


class ClassBuiltin(Builtin):
    """A class of PyTorch's that the lab makes with a function (`nn.Linear`,
    `torch.optim.SGD`): it prints as the class (`<class 'torch.nn.modules.linear.Linear'>`),
    `type()` of an instance gives it, and isinstance() takes it."""

    __slots__ = ("qualname", "check")

    def __init__(self, name: str, impl: Impl, qualname: str,
                 check: Callable[[Value], bool]) -> None:
        super().__init__(name, impl)
        self.qualname = qualname
        self.check = check


class BoundMethod:
    """`x.tanh` before it is called: the receiver and the method."""

    __slots__ = ("receiver", "method")

    def __init__(self, receiver: Value, method: Builtin) -> None:
        self.receiver = receiver
        self.method = method


class PyType:
    """`int`, `float`, `list`, `torch.Tensor`, `nn.Module`...: callable (to convert or make
    one) and usable with isinstance."""

    __slots__ = ("name", "check", "make")

    def __init__(self, name: str, check: Callable[[Value], bool], make: Impl | None) -> None:
        self.name = name
        self.check = check
        self.make = make


class UserFunction:
    """A `def` of the program, with the frame it was defined in."""

    __slots__ = ("definition", "closure", "grad_mode", "static", "qualname",
                 "once_differentiable", "defaults")

    def __init__(self, definition: FunctionDef, closure: Frame | None,
                 grad_mode: str | None = None, static: bool = False,
                 defaults: dict[str, Value] | None = None) -> None:
        self.definition = definition
        self.closure = closure
        self.defaults = defaults or {}    # evaluated once, where the def ran (as Python)
        self.grad_mode = grad_mode        # "no_grad", "enable_grad", "inference_mode"
        self.static = static
        self.qualname = definition.name   # `Net.forward` for a method: Python's messages
        self.once_differentiable = False  # a custom backward under @once_differentiable

    @property
    def name(self) -> str:
        return self.definition.name


class LambdaFunction:
    """A `lambda` given as an argument (a hook, a pack/unpack function...)."""

    __slots__ = ("definition", "closure", "defaults")

    def __init__(self, definition: Lambda, closure: Frame,
                 defaults: dict[str, Value] | None = None) -> None:
        self.definition = definition
        self.closure = closure
        self.defaults = defaults or {}    # `lambda g, i=i: ...` keeps the i of its loop


def function_name(fn: object) -> str:
    """`fn.__name__`: how PyTorch's hook messages name a hook."""
    if isinstance(fn, LambdaFunction):
        return "<lambda>"
    if isinstance(fn, UserFunction):
        return fn.name
    name = getattr(fn, "name", None)
    return str(name).rsplit(".", 1)[-1] if name else "hook"


class FunctionClass:
    """`class Name(torch.autograd.Function)`: its forward and backward."""

    __slots__ = ("definition", "methods", "attributes")

    def __init__(self, definition: ClassDef, methods: dict[str, UserFunction],
                 attributes: dict[str, Value]) -> None:
        self.definition = definition
        self.methods = methods
        self.attributes = attributes

    @property
    def name(self) -> str:
        return self.definition.name


class ContextManager:
    """What `with` takes: grad modes, inference mode and saved-tensors hooks."""

    __slots__ = ("kind", "enabled", "hooks", "previous", "label")

    def __init__(self, kind: str, enabled: bool = True, hooks: Any = None,
                 label: str = "") -> None:
        self.kind = kind                  # grad_mode, inference_mode, saved_tensors_hooks
        self.enabled = enabled
        self.hooks = hooks
        self.previous: list[Any] = []
        self.label = label                # its class path, for its repr


class ReturnTypes:
    """`torch.return_types.max(values=..., indices=...)`: a named pair that unpacks and
    indexes like a tuple."""

    __slots__ = ("kind", "values", "indices")

    def __init__(self, kind: str, values: Value, indices: Value) -> None:
        self.kind = kind
        self.values = values
        self.indices = indices

    def items(self) -> tuple[Value, Value]:
        return (self.values, self.indices)


# -- printing --------------------------------------------------------------------------

class Addresses:
    """Memory addresses for reprs (`<MulBackward0 object at 0x7f...>`): one per object,
    stable within a run; the conformance checker does not compare them."""

    __slots__ = ("known",)

    def __init__(self) -> None:
        self.known: dict[int, str] = {}

    def of(self, obj: object) -> str:
        key = id(obj)
        if key not in self.known:
            self.known[key] = f"0x7f{0x3a0000 + 0x70 * len(self.known):08x}"
        return self.known[key]


def tensor_text(t: Tensor) -> str:
    grad_fn = t.grad_fn
    return tensor_repr(t.data, grad_fn=None if grad_fn is None else grad_fn.type_name,
                       requires_grad=t.requires_grad and grad_fn is None,
                       parameter=t.is_parameter)


def py_repr(value: Value, addresses: Addresses) -> str:
    """`repr(value)` as Python and PyTorch write it."""
    if value is None or isinstance(value, (bool, int, float, str, range)):
        return repr(value)
    if isinstance(value, Tensor):
        return tensor_text(value)
    if isinstance(value, Size):
        return "torch.Size([" + ", ".join(str(d) for d in value) + "])"
    if isinstance(value, ReturnTypes):
        return (f"torch.return_types.{value.kind}(\nvalues={py_repr(value.values, addresses)},"
                f"\nindices={py_repr(value.indices, addresses)})")
    if isinstance(value, list):
        return "[" + ", ".join(py_repr(v, addresses) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(py_repr(v, addresses) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, defaultdict):          # an optimizer's `state`
        return "defaultdict(<class 'dict'>, " + py_repr(dict(value), addresses) + ")"
    if isinstance(value, OrderedDict):         # a state_dict, as Python 3.11 writes it
        return "OrderedDict(" + (py_repr(list(value.items()), addresses) if value else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_repr(k, addresses)}: {py_repr(v, addresses)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, DType):
        return repr(value)
    if isinstance(value, FunctionNode):
        return f"<{value.qualified_name} object at {addresses.of(value)}>"
    if isinstance(value, Node):
        return f"<{value.type_name} object at {addresses.of(value)}>"
    return other_repr(value, addresses)


def other_repr(value: Value, addresses: Addresses) -> str:
    """The reprs of the lab's own objects (functions, classes, handles, modules)."""
    at = addresses.of(value)
    if isinstance(value, UserFunction):
        return f"<function {value.qualname} at {at}>"
    if isinstance(value, LambdaFunction):
        return f"<function <lambda> at {at}>"
    if isinstance(value, FunctionClass):   # the program runs as the recorder runs it: in a
        return f"<class '{value.name}'>"    # namespace without __name__, module builtins
    if isinstance(value, ClassBuiltin):
        return f"<class '{value.qualname}'>"
    if isinstance(value, Builtin):
        return builtin_repr(value, addresses)
    if isinstance(value, BoundMethod):
        return method_repr(value, addresses)
    if isinstance(value, PyType):
        return f"<class '{value.name}'>"
    if isinstance(value, Namespace):
        return f"<module '{value.name}'>"
    if isinstance(value, RemovableHandle):
        return f"<torch.utils.hooks.RemovableHandle object at {at}>"
    if isinstance(value, ContextManager):
        return f"<{value.label} object at {at}>"
    text = getattr(value, "lab_repr", None)
    if callable(text):
        return str(text(addresses))
    if _is_generator(value):
        return f"<generator object <genexpr> at {at}>"
    if isinstance(value, Iterator):         # zip, map, enumerate, list_iterator ...
        return f"<{type(value).__name__} object at {at}>"
    return f"<object at {at}>"


# What a function of the lab is in PyTorch 2.13, which decides how it prints: the ones
# written in Python (`<function relu at 0x…>`) and the classes; the rest are C functions:
# `torch.X` methods of the C type _VariableFunctionsClass (`<built-in method tanh of type
# object at 0x…>`), the others built-in functions (`F.linear`, `math.sqrt`, `len`).
PYTHON_FUNCTIONS = frozenset({
    "torch.is_tensor", "torch.manual_seed", "torch.initial_seed", "torch.seed", "torch.norm",
    "torch.cuda.is_available", "torch.cuda.device_count", "autograd.grad", "autograd.backward",
    "torch.autograd.gradcheck", "torch.autograd.gradgradcheck", "once_differentiable",
    "torch.autograd.functional.jacobian", "torch.autograd.functional.hessian",
    "torch.autograd.functional.vjp", "torch.autograd.functional.jvp",
    "torch.autograd.functional.vhp", "torch.autograd.functional.hvp",
    "torch.nn.functional.relu", "torch.nn.functional.sigmoid", "torch.nn.functional.tanh",
    "torch.nn.functional.silu", "torch.nn.functional.leaky_relu", "torch.nn.functional.elu",
    "torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
    "torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss",
    "torch.nn.functional.smooth_l1_loss", "torch.nn.functional.huber_loss",
    "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
    "torch.nn.functional.binary_cross_entropy_with_logits",
    "torch.nn.functional.binary_cross_entropy", "torch.nn.functional.dropout",
    "torch.nn.utils.clip_grad_norm_", "torch.nn.init.uniform_", "torch.nn.init.normal_",
    "torch.nn.init.zeros_", "torch.nn.init.ones_", "torch.nn.init.constant_",
    "torch.nn.init.xavier_uniform_", "torch.nn.init.xavier_normal_",
    "torch.nn.init.kaiming_uniform_", "torch.nn.init.kaiming_normal_"})
CLASSES = {
    "torch.no_grad": "torch.autograd.grad_mode.no_grad",
    "torch.enable_grad": "torch.autograd.grad_mode.enable_grad",
    "torch.inference_mode": "torch.autograd.grad_mode.inference_mode",
    "torch.set_grad_enabled": "torch.autograd.grad_mode.set_grad_enabled",
    "torch.device": "torch.device",
    "torch.autograd.graph.saved_tensors_hooks": "torch.autograd.graph.saved_tensors_hooks",
    "torch.autograd.graph.save_on_cpu": "torch.autograd.graph.save_on_cpu",
    "torch.autograd.set_detect_anomaly": "torch.autograd.anomaly_mode.set_detect_anomaly",
    "torch.autograd.detect_anomaly": "torch.autograd.anomaly_mode.detect_anomaly",
    "range": "range", "zip": "zip", "enumerate": "enumerate", "type": "type",
    "reversed": "reversed", "map": "map", "filter": "filter", "super": "super",
    "staticmethod": "staticmethod"}
# torch._C's functions that torch re-exports: built-in functions, not methods of a type
TORCH_C_FUNCTIONS = frozenset({"torch.is_grad_enabled", "torch.is_inference_mode_enabled",
                               "torch.get_default_dtype"})
# Tensor methods written in Python (torch/_tensor.py): bound methods, not built-in ones
TENSOR_PYTHON_METHODS = frozenset({"backward", "norm", "register_hook",
                                   "register_post_accumulate_grad_hook"})


def builtin_repr(value: Builtin, addresses: Addresses) -> str:
    """`print(torch.tanh)`, `print(F.relu)`, `print(len)`, as PyTorch 2.13 prints them."""
    short = value.name.rsplit(".", 1)[-1]
    if value.name in CLASSES:
        return f"<class '{CLASSES[value.name]}'>"
    if value.name in PYTHON_FUNCTIONS:
        return f"<function {short} at {addresses.of(value)}>"
    if value.name.startswith("torch.") and value.name.count(".") == 1 and \
            value.name not in TORCH_C_FUNCTIONS:
        return f"<built-in method {short} of type object at {addresses.of(Namespace)}>"
    return f"<built-in function {short}>"


def method_owner(value: BoundMethod) -> str | None:
    """The class that defines a bound method written in Python (`Module` for
    `lin.parameters`, `Linear` for `lin.forward`), or None for a C method (`x.sum`)."""
    receiver, short = value.receiver, value.method.name.rsplit(".", 1)[-1]
    if isinstance(receiver, Tensor):
        return "Tensor" if short in TENSOR_PYTHON_METHODS else None
    if isinstance(receiver, RemovableHandle):
        return "RemovableHandle"
    if isinstance(receiver, FunctionClass):         # MyFn.apply, a classmethod
        return "Function"
    owner = getattr(receiver, "lab_method_owner", None)
    return str(owner(value.method.name)) if callable(owner) else None


def method_repr(value: BoundMethod, addresses: Addresses) -> str:
    """`print(x.sum)`: a C method names its receiver's type; a Python one is
    `<bound method Class.name of repr(receiver)>`."""
    short = value.method.name.rsplit(".", 1)[-1]
    owner = method_owner(value)
    if owner is None:
        return (f"<built-in method {short} of {type_name(value.receiver)} object at "
                f"{addresses.of(value.receiver)}>")
    return f"<bound method {owner}.{short} of {py_repr(value.receiver, addresses)}>"


def py_str(value: Value, addresses: Addresses) -> str:
    """`str(value)`: a string is itself, a value with a `lab_str` (a device: `cpu`) that;
    everything else prints as its repr."""
    if isinstance(value, str):
        return value
    text = getattr(value, "lab_str", None)
    return text() if callable(text) else py_repr(value, addresses)


def type_name(value: Value) -> str:
    """What Python's messages call a value's type (`'float' object ...`)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Tensor):
        return "Parameter" if value.is_parameter else "Tensor"
    if isinstance(value, Size):             # a C type's tp_name, as Python's messages write it
        return "torch.Size"
    if isinstance(value, (int, float, str, list, tuple, dict, range)) or value is None:
        return type(value).__name__
    if isinstance(value, FunctionNode):
        return value.node_name
    if isinstance(value, Node):
        return value.type_name
    if isinstance(value, (UserFunction, LambdaFunction)):
        return "function"
    if isinstance(value, Builtin):
        if value.name in CLASSES:
            return "type"
        return "function" if value.name in PYTHON_FUNCTIONS else "builtin_function_or_method"
    if isinstance(value, BoundMethod):      # C methods of tensors and lists, else Python's
        return "builtin_function_or_method" if method_owner(value) is None else "method"
    if isinstance(value, Namespace):
        return "module"
    if isinstance(value, DType):
        return "torch.dtype"
    name = getattr(value, "lab_type_name", None)
    if name == "device":
        return "torch.device"
    return str(name) if name else type(value).__name__


def _is_generator(value: object) -> bool:
    """A generator expression's value: a Python generator, or in the compiled build the
    interpreter's compiled generator, which is no `types.GeneratorType` but has its
    methods."""
    return all(callable(getattr(value, m, None)) for m in ("__next__", "send", "throw"))
