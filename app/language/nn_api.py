"""`torch.nn` and `torch.optim` as course code uses them: nn.Module (and the program's
subclasses of it), nn.Parameter, Linear, Sequential, the activations and the losses as
modules, and SGD and Adam.

A module keeps its parameters and submodules in registration order, as nn.Module does,
so `named_parameters()` gives PyTorch's names (`0.weight`, `fc1.bias`) and its repr is
PyTorch's. nn.Linear draws its initial weights from the run's generator exactly as
`reset_parameters` does (engine/init.py).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from app.language import module_state
from app.language.args import Signature
from app.language.events import OptimizerStepped, ParamUpdate
from app.language.functional_api import F, dropout, linear, mse_loss
from app.language.tensor_api import dtype_arg
from app.language.values import (
    BoundMethod,
    Builtin,
    ClassBuiltin,
    Namespace,
    PyType,
    UserFunction,
    Value,
    py_repr,
    py_str,
    type_name,
)
from engine import dtypes, functions, init, op_errors, optim
from engine.dtypes import DType
from engine.errors import TorchError
from engine.functions import binary_cross_entropy, classification, loss
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def make_parameter(interp: Interpreter, data: Tensor | None, requires_grad: bool = True
                   ) -> Tensor:
    """`nn.Parameter(t)`: a new leaf sharing t's values, marked as a parameter."""
    if data is None:
        data = Tensor(np.zeros((0,), dtype=np.float32), interp.ctx)
    if not isinstance(data, Tensor):
        raise TorchError("UnsupportedError", f"the lab's nn.Parameter takes a tensor, not "
                         f"{type_name(data)}")
    param = Tensor(data.data, interp.ctx)
    param.is_parameter = True
    if requires_grad:
        from engine.tensor import set_requires_grad

        set_requires_grad(param, True)
    interp.requires_grad_changed()
    return param


def _parameter(interp: Interpreter, args: Args, kwargs: Kwargs) -> Tensor:
    kwargs.pop("__text__", None)
    bound = Signature("Parameter", "data=None, requires_grad=True").bind(args, kwargs)
    return make_parameter(interp, bound["data"], bool(bound["requires_grad"]))


class _Parameters:
    """What `model.parameters()` returns: an iterator that prints as a generator."""

    lab_type_name = "generator"

    def __init__(self, items: list[Value], what: str) -> None:
        self.items = items
        self.what = what

    def lab_iter(self) -> list[Value]:
        items, self.items = self.items, []
        return items

    def lab_next(self) -> Value:
        if not self.items:
            raise StopIteration
        return self.items.pop(0)

    def lab_repr(self, addresses: Any) -> str:
        return f"<generator object Module.{self.what} at {addresses.of(self)}>"


class Module:
    """nn.Module: parameters, submodules and plain attributes, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parameters: dict[str, Tensor | None] = {}
        self.modules: dict[str, Module | None] = {}
        self.buffers: dict[str, Tensor | None] = {}
        self.non_persistent: set[str] = set()       # buffers left out of state_dict()
        self.attributes: dict[str, Value] = {}
        self.training = True
        self.backward_hooks: list[Value] = []
        self.backward_pre_hooks: list[Value] = []
        self.forward_hooks: list[Value] = []
        self.forward_pre_hooks: list[Value] = []
        self.initialized = True
        self.path: str | None = None     # `model.0`: its name in the program, for the views

    @property
    def lab_type_name(self) -> str:
        return self.kind

    def lab_method_owner(self, method: str) -> str:
        """The class that defines a bound method (`print(lin.forward)`): the layer's own
        forward, nn.Module's others (`Module.parameters`), Sequential's append..."""
        owner, _, name = method.rpartition(".")
        return self.kind if name == "forward" else owner

    # -- the module's state --------------------------------------------------------------
    def named_parameters_list(self, prefix: str = "", table: str = "parameters"
                              ) -> list[tuple[str, Tensor]]:
        """`named_parameters()` (or, with table="buffers", `named_buffers()`): each tensor
        once, depth first through the submodules, in registration order."""
        out: list[tuple[str, Tensor]] = []
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        order: list[tuple[str, Module]] = []
        while stack:                         # depth first, in registration order
            name, module = stack.pop()
            module.check_initialized("_parameters")
            order.append((name, module))
            stack.extend(reversed([(f"{name}{k}.", m) for k, m in module.modules.items()
                                   if m is not None]))
        for name, module in order:
            tensors = module.parameters if table == "parameters" else module.buffers
            for key, param in tensors.items():
                if param is not None and id(param) not in seen:
                    seen.add(id(param))
                    out.append((f"{name}{key}", param))
        return out

    def check_initialized(self, attribute: str) -> None:
        """A subclass whose __init__ never called `super().__init__()` has none of
        nn.Module's state: PyTorch's error names the first table it looks for."""
        if not self.initialized:
            raise TorchError("AttributeError", f"'{self.kind}' object has no attribute "
                             f"'{attribute}'")

    def named_modules_list(self, prefix: str) -> list[tuple[str, Module]]:
        """This module and every submodule, depth first, named as `named_modules()`
        names them under `prefix`."""
        out: list[tuple[str, Module]] = []
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            out.append((name, module))
            stack.extend(reversed([(f"{name}.{k}", m) for k, m in module.modules.items()
                                   if m is not None]))
        return out

    def named_children_list(self) -> list[tuple[str, Module]]:
        """`named_children()`: the submodules that are set, each once."""
        self.check_initialized("_modules")
        out: list[tuple[str, Module]] = []
        for name, module in self.modules.items():
            if module is not None and all(module is not m for _, m in out):
                out.append((name, module))
        return out

    def children_list(self) -> list[Module]:
        return [m for _, m in self.named_children_list()]

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        raise TorchError("NotImplementedError", f'Module [{self.kind}] is missing the required '
                         '"forward" function')

    def extra_repr(self) -> str:
        return ""

    def lab_repr(self, addresses: Any) -> str:
        """nn.Module.__repr__: the extra_repr's lines, then each child's, indented."""
        extra = self.extra_repr()
        self.check_initialized("_modules")
        children = [f"({name}): " + py_repr(module, addresses).replace("\n", "\n  ")
                    for name, module in self.modules.items()]
        extra_lines = extra.split("\n") if extra else []
        if len(extra_lines) == 1 and not children:
            return f"{self.kind}({extra})"
        lines = extra_lines + children
        return f"{self.kind}(" + ("\n  " + "\n  ".join(lines) + "\n" if lines else "") + ")"

    # -- calling ---------------------------------------------------------------------
    def lab_call(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        """`module(x)`: forward, wrapped in the full-backward-hook nodes when hooked. The
        nodes it records carry its path (`model.0`), so the graph can group them."""
        ctx = interp.ctx
        outer = ctx.scope
        if self.path is not None:
            ctx.scope = self.path
        self.check_initialized("_backward_hooks")
        try:
            if not (self.backward_hooks or self.backward_pre_hooks or self.forward_hooks or
                    self.forward_pre_hooks):
                return self.forward(interp, args, kwargs)
            from app.language.module_hooks import call_with_hooks

            return call_with_hooks(interp, self, args, kwargs)
        finally:
            ctx.scope = outer

    # -- attributes ------------------------------------------------------------------
    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        for table in (self.parameters, self.buffers, self.modules, self.attributes):
            if name in table:
                return table[name]  # type: ignore[attr-defined]
        if name == "training":
            return self.training
        method = MODULE_METHODS.get(name)
        if method is not None:
            return BoundMethod(self, method)
        from app.language import pytorch_names
        from app.language.attributes import not_in_lab

        if pytorch_names.exists("Module", name):
            raise not_in_lab(f"nn.Module.{name}")
        raise TorchError("AttributeError", f"'{self.kind}' object has no attribute '{name}'")

    def lab_setattr(self, interp: Interpreter, name: str, value: Value) -> None:
        """nn.Module.__setattr__: a Parameter registers as a parameter, a Module as a
        submodule, anything else is a plain attribute; PyTorch's checks, in its order."""
        is_parameter = isinstance(value, Tensor) and value.is_parameter
        if not self.initialized and (is_parameter or isinstance(value, Module)):
            what = "parameters" if is_parameter else "module"
            raise TorchError("AttributeError", f"cannot assign {what} before "
                             "Module.__init__() call")
        shown = (f"torch.{op_errors.legacy_name(value.dtype)}Tensor"     # torch.typename
                 if isinstance(value, Tensor) else type_name(value))
        if name in self.parameters and not is_parameter and value is not None:
            raise TorchError("TypeError", f"cannot assign '{shown}' as parameter '{name}' "
                             "(torch.nn.Parameter or None expected)")
        if name in self.modules and not isinstance(value, Module) and value is not None:
            raise TorchError("TypeError", f"cannot assign '{shown}' as child module "
                             f"'{name}' (torch.nn.Module or None expected)")
        if name in self.buffers and value is not None and not isinstance(value, Tensor):
            raise TorchError("TypeError", f"cannot assign '{type_name(value)}' as buffer "
                             f"'{name}' (torch.nn.Buffer, torch.Tensor or None expected)")
        if value is None and name in self.parameters:      # the name stays registered
            self.parameters[name] = None
            return
        if not is_parameter and not isinstance(value, Module) and name in self.modules:
            self.modules[name] = None
            return
        if not is_parameter and name in self.buffers:
            self.buffers[name] = value  # type: ignore[assignment]
            return
        into = self.parameters if is_parameter else \
            self.modules if isinstance(value, Module) else self.attributes
        for table in (self.parameters, self.buffers, self.modules, self.attributes):
            if table is not into:                # a name set again keeps its place
                table.pop(name, None)  # type: ignore[attr-defined]
        if isinstance(value, Tensor) and value.is_parameter:
            self.parameters[name] = value
            interp.requires_grad_changed()
        elif isinstance(value, Module):
            self.modules[name] = value
            interp.requires_grad_changed()
        elif name == "training":
            self.training = bool(value)
        else:
            self.attributes[name] = value


class SuperModule:
    """`super()` in a Module subclass: nn.Module's own `__init__` and methods."""

    lab_type_name = "super"

    def __init__(self, module: Module) -> None:
        self.module = module

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        if name == "__init__":
            def init(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
                self.module.initialized = True

            return Builtin("Module.__init__", init)
        method = MODULE_METHODS.get(name)
        if method is not None:
            return BoundMethod(self.module, method)
        raise TorchError("AttributeError", f"'super' object has no attribute '{name}'")


class UserModule(Module):
    """An instance of the program's `class Net(nn.Module)`."""

    def __init__(self, cls: ModuleClass, interp: Interpreter) -> None:
        super().__init__(cls.name)
        self.cls = cls
        self.interp = interp             # to call the class's own extra_repr when printed

    def extra_repr(self) -> str:
        method = self.cls.methods.get("extra_repr")
        if method is None:
            return ""
        text = self.interp.call(method, [self], {})
        if not isinstance(text, str):
            raise TorchError("AttributeError", f"'{type_name(text)}' object has no attribute "
                             "'split'")
        return text

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        method = self.cls.methods.get("forward")
        if method is None:
            return super().forward(interp, args, kwargs)
        return interp.call(method, [self, *args], kwargs)

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        if name in self.cls.methods and name not in self.parameters and \
                name not in self.modules and name not in self.attributes:
            method = self.cls.methods[name]
            if method.static:
                return method
            return BoundMethod(self, Builtin(f"{self.kind}.{name}",
                                             lambda i, a, k: i.call(method, a, k)))
        if name in self.cls.attributes and name not in self.attributes:
            return self.cls.attributes[name]
        return super().lab_getattr(interp, name)


class ModuleClass:
    """The program's `class Net(nn.Module)`: calling it makes an instance."""

    lab_type_name = "type"

    def __init__(self, name: str, methods: dict[str, UserFunction],
                 attributes: dict[str, Value]) -> None:
        self.name = name
        self.methods = methods
        self.attributes = attributes

    def lab_call(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        instance = UserModule(self, interp)
        init_method = self.methods.get("__init__")
        if init_method is not None:
            instance.initialized = False          # until it calls super().__init__()
            interp.call(init_method, [instance, *args], kwargs)
        elif args or kwargs:
            raise TorchError("TypeError", f"{self.name}() takes no arguments")
        return instance

    def lab_repr(self, addresses: Any) -> str:
        return f"<class '{self.name}'>"     # module builtins, as for a Function's class

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        """`Net.__name__` (reports print `type(model).__name__`), `Net.forward`, and the
        class's own attributes."""
        if name == "__name__":
            return self.name
        if name in self.methods:
            return self.methods[name]
        if name in self.attributes:
            return self.attributes[name]
        raise TorchError("AttributeError", f"type object '{self.name}' has no attribute "
                         f"'{name}'")


# -- the layers ---------------------------------------------------------------------------

class Linear(Module):
    def __init__(self, interp: Interpreter, in_features: int, out_features: int,
                 bias: bool = True, dtype: DType | None = None) -> None:
        super().__init__("Linear")
        self.in_features, self.out_features = in_features, out_features
        # readable as PyTorch's (fine-tuning reads `model.fc.in_features`)
        self.attributes.update(in_features=in_features, out_features=out_features)
        weight, b = init.linear_parameters(interp.ctx.generator, in_features, out_features,
                                           bias, (dtype or dtypes.DEFAULT_FLOAT).numpy)
        self.parameters["weight"] = make_parameter(interp, Tensor(weight, interp.ctx))
        self.parameters["bias"] = (make_parameter(interp, Tensor(b, interp.ctx))
                                   if b is not None else None)
        for param in self.parameters.values():   # reset_parameters fills them in place
            if param is not None:
                param.bump_version()

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        x = _input(self, args, kwargs)
        weight = self.parameters["weight"]
        assert weight is not None
        return linear(x, weight, self.parameters["bias"])

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.parameters['bias'] is not None}")


_FORWARDS: dict[tuple[str, str], Signature] = {}


def forward_args(module: Module, spec: str, args: Args, kwargs: Kwargs) -> dict[str, Value]:
    """A built-in layer's forward arguments, with Python's errors for its signature
    (`Linear.forward() takes 2 positional arguments but 3 were given`)."""
    key = (module.kind, spec)
    if key not in _FORWARDS:
        _FORWARDS[key] = Signature(f"{module.kind}.forward", spec, python=True)
    return _FORWARDS[key].bind(list(args), {k: v for k, v in kwargs.items() if k != "__text__"})


def _input(module: Module, args: Args, kwargs: Kwargs) -> Tensor:
    x = forward_args(module, "input", args, kwargs)["input"]
    if not isinstance(x, Tensor):
        raise TorchError("TypeError", f"{module.kind}.forward() expects a tensor, not "
                         f"{type_name(x)}")
    return x


class Sequential(Module):
    def __init__(self, modules: list[Value]) -> None:   # checked here, as PyTorch does
        super().__init__("Sequential")
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TorchError("TypeError", f"{_typename(m)} is not a Module subclass")
            self.modules[str(i)] = m

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        value = forward_args(self, "input", args, kwargs)["input"]
        for module in self.modules.values():
            if module is None:                  # Python's error for calling None
                raise TorchError("TypeError", "'NoneType' object is not callable")
            value = module.lab_call(interp, [value], {})
        return value

    def lab_getitem(self, interp: Interpreter, index: Value) -> Value:
        if isinstance(index, slice):        # a Sequential's slice keeps the names
            part = Sequential([])
            part.modules = dict(list(self.modules.items())[index])
            return part
        return self.modules[self._key(index)]

    def lab_setitem(self, interp: Interpreter, index: Value, module: Value) -> None:
        """`model[2] = nn.Linear(3, 5)`: setattr under the name at that position, so the
        new module keeps the old one's name and place (`Sequential.__setitem__`)."""
        self.lab_setattr(interp, self._key(index), module)

    def _key(self, index: Value) -> str:
        """`_get_item_by_idx`: the name at position `operator.index(index)`."""
        if isinstance(index, Tensor) and index.ndim == 0 and not index.dtype.is_floating_point:
            index = int(index.item())                        # operator.index takes it
        if not isinstance(index, int):
            raise TorchError("TypeError", f"'{type_name(index)}' object cannot be interpreted "
                             "as an integer")
        names = list(self.modules)
        if not -len(names) <= index < len(names):
            raise TorchError("IndexError", f"index {index} is out of range")
        return names[index]

    def lab_len(self) -> int:
        return len(self.modules)

    def lab_iter(self) -> list[Module | None]:
        return list(self.modules.values())

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        method = _SEQUENTIAL_METHODS.get(name)
        if method is not None and name not in self.modules:
            return BoundMethod(self, method)
        return super().lab_getattr(interp, name)


def _append(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    module_state.add_module(interp, args[0], str(len(args[0].modules)), args[1])
    return args[0]


def _extend(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    for layer in list(interp.iterate(args[1])):
        _append(interp, [args[0], layer], {})
    return args[0]


def _insert(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`insert(index, module)`: the modules after it move up one name."""
    seq, index, module = args[0], args[1], args[2]
    if not isinstance(module, Module):
        raise TorchError("AssertionError", "module should be of type: <class "
                         "'torch.nn.modules.module.Module'>")
    n = len(seq.modules)
    if not -n <= index <= n:
        raise TorchError("IndexError", f"Index out of range: {index}")
    index += n if index < 0 else 0
    for i in range(n, index, -1):
        if str(i - 1) not in seq.modules:       # names that are not numbers: Python's error
            raise TorchError("KeyError", repr(str(i - 1)))
        seq.modules[str(i)] = seq.modules[str(i - 1)]
    seq.modules[str(index)] = module
    interp.requires_grad_changed()
    return seq


_SEQUENTIAL_METHODS = {n: Builtin(f"Sequential.{n}", f) for n, f in {
    "append": _append, "extend": _extend, "insert": _insert}.items()}


class ModuleList(Sequential):
    def __init__(self, modules: list[Value]) -> None:
        """add_module's rule: a module or None (a slice of a ModuleList may hold None)."""
        super().__init__([m for m in modules if m is not None])
        self.modules = {str(i): m for i, m in enumerate(modules)}
        self.kind = "ModuleList"

    def lab_getitem(self, interp: Interpreter, index: Value) -> Value:
        if isinstance(index, slice):        # a ModuleList's slice is numbered afresh
            return ModuleList(list(self.modules.values())[index])
        return super().lab_getitem(interp, index)

    def lab_repr(self, addresses: Any) -> str:
        """ModuleList.__repr__: a run of equal reprs is written once (`(0-2): 3 x Linear(...)`)."""
        reprs = [py_repr(m, addresses) for m in self.modules.values()]
        if not reprs:
            return "ModuleList()"
        runs: list[list[Any]] = []
        for i, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [(f"({a}): {t}" if a == b else f"({a}-{b}): {b - a + 1} x {t}"
                  ).replace("\n", "\n  ") for a, b, t in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class Elementwise(Module):
    """An activation as a module: ReLU(), Tanh(), Sigmoid(), LeakyReLU(0.1)..."""

    def __init__(self, kind: str, fn: Callable[[Tensor], Tensor], extra: str = "") -> None:
        super().__init__(kind)
        self.fn = fn
        self.extra = extra

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        return self.fn(_input(self, args, kwargs))

    def extra_repr(self) -> str:
        return self.extra


class Loss(Module):
    """A loss as a module: MSELoss(), CrossEntropyLoss(), ..."""

    def __init__(self, kind: str, fn: Callable[..., Tensor], reduction: str,
                 options: dict[str, Value]) -> None:
        super().__init__(kind)
        self.fn = fn
        self.reduction = reduction
        self.options = options

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        a = forward_args(self, "input, target", args, kwargs)
        x, target = a["input"], a["target"]
        if not isinstance(x, Tensor) or not isinstance(target, Tensor):
            raise TorchError("TypeError", f"{self.kind} takes two tensors")
        return self.fn(x, target, reduction=self.reduction, **self.options)


# The classes whose __init__ a layer inherits (Python's argument errors name it), and the
# files that PyTorch 2.13 defines the layers in (torch.typename names the class by them).
_INITS = {"MSELoss": "_Loss", "L1Loss": "_Loss", "BCELoss": "_WeightedLoss",
          "Dropout": "_DropoutNd"}
_FILES = {"Linear": "linear", "Identity": "linear", "Flatten": "flatten",
          "Dropout": "dropout", "Sequential": "container", "ModuleList": "container"}


def _layer_path(kind: str) -> str:
    """A layer class's `__module__.__qualname__`: `torch.nn.modules.linear.Linear`."""
    where = _FILES.get(kind, "loss" if kind.endswith("Loss") else "activation")
    return f"torch.nn.modules.{where}.{kind}"


def _typename(value: Value) -> str:
    """`torch.typename(value)`: a layer's class (`torch.nn.modules.activation.ReLU`,
    written without its parentheses) or instance, the program's own module class (its bare
    name: the program runs without `__name__`, so its classes have no `__module__`), a
    tensor's type."""
    if isinstance(value, UserModule):
        return value.cls.name
    if isinstance(value, Module):
        return _layer_path(value.kind)
    if isinstance(value, UserFunction):
        return value.qualname
    if isinstance(value, Builtin) and value.name.startswith("torch.nn.") and \
            value.name.count(".") == 2:
        return _layer_path(value.name[len("torch.nn."):])
    if isinstance(value, Builtin) and value.name.count(".") == 1 and \
            value.name.startswith("torch."):
        return "torch._VariableFunctionsClass." + value.name[len("torch."):]
    if isinstance(value, Tensor):
        return f"torch.{value.dtype.legacy}"
    return type_name(value)


def _layer(name: str, spec: str, make: Callable[[Interpreter, dict[str, Value]], Module],
           python: bool = True) -> Builtin:
    """A layer's constructor; its argument errors are Python's (PyTorch writes every
    layer's `__init__` in Python), named by the class that defines that `__init__`."""
    signature = Signature(f"{_INITS.get(name, name)}.__init__", spec, python=True) if python \
        else Signature(name, spec)

    def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        kwargs.pop("__text__", None)
        return make(interp, signature.bind(args, kwargs))

    return Builtin(f"torch.nn.{name}", call)


def _activation(kind: str, fn: Callable[[Tensor], Tensor], spec: str = "inplace=False"
                ) -> Builtin:
    return _layer(kind, spec, lambda interp, a: Elementwise(kind, fn), python=True)


def _relu_in_place(x: Tensor) -> Tensor:
    from engine.functions import inplace

    return inplace.inplace(x, functions.relu)


def _relu_layer(interp: Interpreter, a: dict[str, Value]) -> Module:
    """nn.ReLU(inplace=True) applies relu_ to its input (its version moves on, a leaf
    that requires grad refuses it), as F.relu(x, inplace=True) does."""
    module = Elementwise("ReLU", _relu_in_place, "inplace=True") if a["inplace"] else \
        Elementwise("ReLU", functions.relu)
    module.attributes.update(a)
    return module


def _loss(kind: str, fn: Callable[..., Tensor], spec: str = "",
          options: tuple[str, ...] = (), full: str = "") -> Builtin:
    """`full`: the parameters in PyTorch's order where they are not _Loss's and `spec`."""
    full = full or "size_average=None, reduce=None, reduction='mean'" + (
        ", " + spec if spec else "")

    def make(interp: Interpreter, a: dict[str, Value]) -> Module:
        from app.language.functional_api import _reduction

        return Loss(kind, fn, _reduction(a), {k: a[k] for k in options})

    return _layer(kind, full, make)


def _check_features(n: Value, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TorchError("TypeError", f"Linear(): {what} must be an int, not {type_name(n)}")
    return n


# Layers with settings: each applies a function of its settings `a` and the input. (Plain
# functions, not lambdas in lambdas, which mypyc cannot compile.)
def _gelu(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.gelu(x, a["approximate"])


def _leaky_relu(a: dict[str, Value], x: Tensor) -> Tensor:
    if a["inplace"]:
        return functions.leaky_relu_(x, a["negative_slope"])
    return functions.leaky_relu(x, a["negative_slope"])


def _softplus(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.softplus(x, a["beta"], a["threshold"])


def _elu(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.elu_(x, a["alpha"]) if a["inplace"] else functions.elu(x, a["alpha"])


def _in_place(a: dict[str, Value]) -> str:
    """The end of an activation's repr: `, inplace=True` when set."""
    return ", inplace=True" if a["inplace"] else ""


def _silu_layer(interp: Interpreter, a: dict[str, Value]) -> Module:
    module = Elementwise("SiLU", functions.silu_, "inplace=True") if a["inplace"] else \
        Elementwise("SiLU", functions.silu, "")
    module.attributes.update(a)
    return module


def _softmax(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.softmax(x, a["dim"])


def _log_softmax(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.log_softmax(x, a["dim"])


def _identity(a: dict[str, Value], x: Tensor) -> Tensor:
    return x


def _flatten(a: dict[str, Value], x: Tensor) -> Tensor:
    return functions.flatten(x, a["start_dim"], a["end_dim"])


def _configured(kind: str, spec: str, apply: Callable[[dict[str, Value], Tensor], Tensor],
                extra: Callable[[dict[str, Value]], str]) -> Builtin:
    def make(interp: Interpreter, a: dict[str, Value]) -> Module:
        module = Elementwise(kind, functools.partial(apply, a), extra(a))
        module.attributes.update(a)         # `m.negative_slope`, `m.inplace`, as PyTorch's
        return module

    return _layer(kind, spec, make)


NN_MEMBERS: dict[str, Value] = {
    "Module": PyType("torch.nn.modules.module.Module", lambda v: isinstance(v, Module), None),
    "Parameter": PyType("torch.nn.parameter.Parameter",
                        lambda v: isinstance(v, Tensor) and v.is_parameter, _parameter),
    "Linear": _layer("Linear", "in_features, out_features, bias=True, device=None, dtype=None",
                     lambda interp, a: Linear(interp, _check_features(a["in_features"],
                                                                      "in_features"),
                                              _check_features(a["out_features"],
                                                              "out_features"),
                                              bool(a["bias"]), dtype_arg(a["dtype"]))),
    "Sequential": Builtin("torch.nn.Sequential",
                          lambda interp, args, kwargs: Sequential(list(args))),
    "ModuleList": Builtin("torch.nn.ModuleList", lambda interp, args, kwargs: ModuleList(
        list(interp.iterate(args[0])) if args else [])),
    "ReLU": _layer("ReLU", "inplace=False", _relu_layer),
    "Tanh": _activation("Tanh", functions.tanh, ""),
    "Sigmoid": _activation("Sigmoid", functions.sigmoid, ""),
    "SiLU": _layer("SiLU", "inplace=False", _silu_layer),
    "GELU": _configured("GELU", "approximate='none'", _gelu,
                        lambda a: f"approximate='{a['approximate']}'"),
    "LeakyReLU": _configured("LeakyReLU", "negative_slope=0.01, inplace=False", _leaky_relu,
                             lambda a: f"negative_slope={a['negative_slope']}{_in_place(a)}"),
    "Softplus": _configured("Softplus", "beta=1.0, threshold=20.0", _softplus,
                            lambda a: f"beta={a['beta']}, threshold={a['threshold']}"),
    "ELU": _configured("ELU", "alpha=1.0, inplace=False", _elu,
                       lambda a: f"alpha={a['alpha']}{_in_place(a)}"),
    "Softmax": _configured("Softmax", "dim=None", _softmax, lambda a: f"dim={a['dim']}"),
    "LogSoftmax": _configured("LogSoftmax", "dim=None", _log_softmax,
                              lambda a: f"dim={a['dim']}"),
    # `nn.Identity(*args, **kwargs)` takes any arguments and ignores them (its docs' example)
    "Identity": Builtin("torch.nn.Identity", lambda interp, args, kwargs: Elementwise(
        "Identity", functools.partial(_identity, {}), "")),
    "Flatten": _configured("Flatten", "start_dim=1, end_dim=-1", _flatten,
                           lambda a: f"start_dim={a['start_dim']}, end_dim={a['end_dim']}"),
    "Dropout": _layer("Dropout", "p=0.5, inplace=False", lambda interp, a: _Dropout(a["p"])),
    "MSELoss": _loss("MSELoss", mse_loss),
    "L1Loss": _loss("L1Loss", loss.l1_loss),
    "SmoothL1Loss": _loss("SmoothL1Loss", loss.smooth_l1_loss, "beta=1.0", ("beta",)),
    "CrossEntropyLoss": _loss("CrossEntropyLoss", classification.cross_entropy, "",
                              ("weight", "ignore_index", "label_smoothing"),
                              "weight=None, size_average=None, ignore_index=-100, reduce=None, "
                              "reduction='mean', label_smoothing=0.0"),
    "NLLLoss": _loss("NLLLoss", classification.nll_loss, "", ("weight", "ignore_index"),
                     "weight=None, size_average=None, ignore_index=-100, reduce=None, "
                     "reduction='mean'"),
    "BCEWithLogitsLoss": _loss("BCEWithLogitsLoss",
                               binary_cross_entropy.binary_cross_entropy_with_logits,
                               "", ("weight", "pos_weight"), "weight=None, size_average=None, "
                               "reduce=None, reduction='mean', pos_weight=None"),
    "BCELoss": _loss("BCELoss", binary_cross_entropy.binary_cross_entropy, "", ("weight",),
                     "weight=None, size_average=None, reduce=None, reduction='mean'"),
    "functional": F,
}


class _Dropout(Module):
    def __init__(self, p: float) -> None:
        super().__init__("Dropout")
        self.p = p

    def forward(self, interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        return dropout(_input(self, args, kwargs), float(self.p), self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace=False"


# -- the methods every module has ------------------------------------------------------------

def _parameters_method(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    module = args[0]
    return _Parameters([p for _, p in module.named_parameters_list()], "parameters")


def _named_parameters(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    module = args[0]
    return _Parameters([(n, p) for n, p in module.named_parameters_list()], "named_parameters")


def _children(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return _Parameters(args[0].children_list(), "children")


def _named_modules_of(module: Module) -> list[tuple[str, Module]]:
    """`named_modules()`: the module, then its submodules depth first, each once."""
    out: list[tuple[str, Module]] = []
    seen: set[int] = set()
    stack: list[tuple[str, Module]] = [("", module)]
    while stack:
        name, m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        out.append((name, m))
        stack.extend(reversed([(f"{name}.{k}" if name else k, sub)
                               for k, sub in m.modules.items() if sub is not None]))
    return out


def _modules(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return _Parameters([m for _, m in _named_modules_of(args[0])], "modules")


def _named_modules(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return _Parameters(list(_named_modules_of(args[0])), "named_modules")


def _zero_grad(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    kwargs.pop("__text__", None)
    set_to_none = kwargs.get("set_to_none", args[1] if len(args) > 1 else True)
    optim.zero_grad([p for _, p in args[0].named_parameters_list()], bool(set_to_none))


def _train(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    mode = bool(args[1]) if len(args) > 1 else bool(kwargs.get("mode", True))
    stack = [args[0]]
    while stack:
        m = stack.pop()
        m.training = mode
        stack.extend(m.modules.values())
    return args[0]


def _eval(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return _train(interp, [args[0], False], {})


def _module_forward(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    kwargs.pop("__text__", None)
    return args[0].forward(interp, args[1:], kwargs)


def _requires_grad_(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from engine.tensor import set_requires_grad

    flag = bool(args[1]) if len(args) > 1 else bool(kwargs.get("requires_grad", True))
    for _, p in args[0].named_parameters_list():
        set_requires_grad(p, flag)
    interp.requires_grad_changed()
    return args[0]


def _itself(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return args[0]


def _converted(module: Module, dtype: DType) -> Module:
    """`module.double()`, `.float()`, `.to(dtype)`: every floating parameter (and its grad)
    takes the dtype in place, as `param.data = param.data.to(dtype)` does: the same
    Parameter objects, their versions unchanged."""
    for _, p in module.named_parameters_list():
        for t in (p, p.grad):
            if t is not None and t.dtype.is_floating_point and t.dtype is not dtype:
                t.data = t.data.astype(dtype.numpy)
                t.dtype = dtype
    return module


def _to(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`module.to(device)`, `.to(dtype)`, `.to(device, dtype)`: only the dtype changes
    anything on the CPU."""
    kwargs.pop("__text__", None)
    dtype = kwargs.get("dtype")
    for a in args[1:]:
        if isinstance(a, DType):
            dtype = a
    if isinstance(dtype, DType):
        if not dtype.is_floating_point:
            raise TorchError("TypeError", "nn.Module.to only accepts floating point or complex "
                             f"dtypes, but got desired dtype={dtype}")
        return _converted(args[0], dtype)
    return args[0]


def _as(dtype: DType) -> Callable[[Interpreter, Args, Kwargs], Value]:
    return lambda interp, args, kwargs: _converted(args[0], dtype)


MODULE_METHODS: dict[str, Builtin] = {n: Builtin(f"Module.{n}", f) for n, f in {
    "parameters": _parameters_method, "named_parameters": _named_parameters,
    "children": _children, "modules": _modules, "named_modules": _named_modules,
    "zero_grad": _zero_grad, "train": _train, "eval": _eval,
    "forward": _module_forward,
    "requires_grad_": _requires_grad_, "cpu": _itself, "to": _to,
    "double": _as(dtypes.float64), "float": _as(dtypes.float32),
}.items()}
MODULE_METHODS.update(module_state.METHODS)


# -- optimizers ---------------------------------------------------------------------------

class Optimizer:
    """torch.optim's SGD and Adam: parameter groups, per-parameter state, step()."""

    def __init__(self, interp: Interpreter, kind: str, params: Value,
                 defaults: dict[str, Value]) -> None:
        self.kind = kind
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TorchError("TypeError", "params argument given to the optimizer should be an "
                             "iterable of Tensors or dicts, but got "
                             f"torch.{op_errors.legacy_name(params.dtype)}Tensor")
        items = list(interp.iterate(params))
        if not items:
            raise TorchError("ValueError", "optimizer got an empty parameter list")
        groups = items if isinstance(items[0], dict) else [{"params": items}]
        self.param_groups: list[dict[str, Value]] = []
        self.state: dict[int, Any] = {}
        for group in groups:
            self.add_param_group(interp, group)

    def lab_method_owner(self, method: str) -> str:
        """The class that defines a bound method: SGD's or Adam's own step, the rest
        Optimizer's (`<bound method Optimizer.zero_grad of SGD (...)>`)."""
        return self.kind if method.endswith(".step") else "Optimizer"

    def add_param_group(self, interp: Interpreter, group: Value) -> None:
        """Optimizer.add_param_group: the program's own dict becomes the group, its
        params a list, the defaults filled in after its keys; PyTorch's checks."""
        if not isinstance(group, dict):
            raise TorchError("TypeError", f"param_group must be a dict, but got <class "
                             f"'{type_name(group)}'>")
        if "params" not in group:
            raise TorchError("KeyError", "'params'")
        given = group["params"]            # a group may hold one tensor (PyTorch lists it)
        group["params"] = [given] if isinstance(given, Tensor) else list(interp.iterate(given))
        if any(isinstance(p, tuple) for p in group["params"]):
            raise TorchError("UnsupportedError", "the lab's optimizers take parameters, not "
                             "named_parameters()")
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TorchError("TypeError", "optimizer can only optimize Tensors, but one "
                                 f"of the params is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise TorchError("ValueError", "can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        if any(p is q for g in self.param_groups for p in g["params"] for q in group["params"]):
            raise TorchError("ValueError", "some parameters appear in more than one parameter "
                             "group")
        self.param_groups.append(group)

    def state_dict(self, interp: Interpreter) -> dict[str, Value]:
        """Optimizer.state_dict(): each parameter by its index in the groups, the state
        (new tensors, as PyTorch's are not copies but the lab's state is numpy's)."""
        index: dict[int, int] = {}
        groups: list[dict[str, Value]] = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            start = len(index)
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        by_param = self.state_view(interp)
        state = {index[id(p)]: entry for p, entry in by_param.items()}
        return {"state": state, "param_groups": groups}

    @property
    def lab_type_name(self) -> str:
        return self.kind

    def step(self, shown: bool = True) -> list[ParamUpdate]:
        """One step of every parameter that has a gradient; what each update did, if the
        trace will show it (`shown`: the values are copied only then)."""
        updates: list[ParamUpdate] = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if shown:
                    before, grad = p.data.copy(), p.grad.data.copy()
                state = self.state.get(id(p))
                if self.kind == "SGD":
                    if state is None:
                        state = self.state[id(p)] = optim.SGDState()
                    optim.sgd_step(p, state, float(_hyper(group["lr"])), float(group["momentum"]),
                                   float(group["dampening"]), float(group["weight_decay"]),
                                   bool(group["nesterov"]), bool(group["maximize"]))
                else:
                    if state is None:
                        state = self.state[id(p)] = optim.AdamState(p.data)
                    beta1, beta2 = group["betas"]
                    optim.adam_step(p, state, float(_hyper(group["lr"])), float(_hyper(beta1)),
                                    float(_hyper(beta2)),
                                    float(group["eps"]), float(group["weight_decay"]),
                                    bool(group["amsgrad"]), bool(group["maximize"]))
                if shown:
                    updates.append(ParamUpdate(p.name, before, grad, p.data.copy(),
                                               _state_of(state, group)))
        return updates

    def state_view(self, interp: Interpreter) -> dict[Tensor, dict[str, Value]]:
        """`opt.state`: each stepped parameter's state as PyTorch keeps it, by parameter
        (read as it is now: new tensors at each read)."""
        ctx = interp.ctx
        out: dict[Tensor, dict[str, Value]] = defaultdict(dict)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state.get(id(p))
                if isinstance(state, optim.SGDState):   # a buffer only with momentum
                    buf = state.momentum_buffer
                    if buf is not None:
                        out[p] = {"momentum_buffer": Tensor(buf.copy(), ctx)}
                elif isinstance(state, optim.AdamState):
                    entry: dict[str, Value] = {
                        "step": Tensor(np.array(state.step, dtype=np.float32), ctx),
                        "exp_avg": Tensor(state.exp_avg.copy(), ctx),
                        "exp_avg_sq": Tensor(state.exp_avg_sq.copy(), ctx)}
                    if group["amsgrad"] and state.max_exp_avg_sq is not None:
                        entry["max_exp_avg_sq"] = Tensor(state.max_exp_avg_sq.copy(), ctx)
                    out[p] = entry
        return out

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        if name == "param_groups":
            return self.param_groups
        if name == "state":
            return self.state_view(interp)
        if name == "defaults":
            return self.defaults
        if name == "state_dict":
            return BoundMethod(self, Builtin("Optimizer.state_dict",
                                             lambda i, a, k: a[0].state_dict(i)))
        if name == "add_param_group":
            return BoundMethod(self, Builtin("Optimizer.add_param_group",
                                             lambda i, a, k: a[0].add_param_group(i, a[1])))
        if name in OPTIMIZER_METHODS:
            return BoundMethod(self, OPTIMIZER_METHODS[name])
        from app.language import pytorch_names
        from app.language.attributes import not_in_lab

        if pytorch_names.exists("Optimizer", name):
            raise not_in_lab(f"torch.optim.Optimizer.{name}")
        raise TorchError("AttributeError", f"'{self.kind}' object has no attribute '{name}'")

    def lab_repr(self, addresses: Any) -> str:
        lines = [f"{self.kind} ("]
        for i, group in enumerate(self.param_groups):
            if i:                          # each group's lines end in a newline, then one more
                lines.append("")
            lines.append(f"Parameter Group {i}")
            shown = {**group, **_REPR_DEFAULTS[self.kind]}
            for key in sorted(k for k in shown if k != "params"):
                value = group.get(key, shown[key])      # written as `f"{value}"` writes it
                lines.append(f"    {key}: {py_str(_hyper(value), addresses)}")
        return "\n".join(lines) + "\n)"


_REPR_DEFAULTS: dict[str, dict[str, Value]] = {
    "SGD": {"differentiable": False, "foreach": None, "fused": None},
    "Adam": {"capturable": False, "decoupled_weight_decay": False, "differentiable": False,
             "foreach": None, "fused": None},
}


def _state_of(state: Any, group: dict[str, Value]) -> dict[str, Any]:
    """The optimizer's state for one parameter after its step, as the views show it."""
    if isinstance(state, optim.SGDState):
        buf = state.momentum_buffer
        return {} if buf is None else {"momentum_buffer": buf.copy()}
    beta1, beta2 = (float(_hyper(b)) for b in group["betas"])
    out: dict[str, Any] = {"step": state.step, "exp_avg": state.exp_avg.copy(),
                           "exp_avg_sq": state.exp_avg_sq.copy(),
                           "bias_correction1": 1 - beta1 ** state.step,
                           "bias_correction2": 1 - beta2 ** state.step}
    if group["amsgrad"] and state.max_exp_avg_sq is not None:
        out["max_exp_avg_sq"] = state.max_exp_avg_sq.copy()
    return out


_HYPER = {"SGD": ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"),
          "Adam": ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize")}


def _step(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    kwargs.pop("__text__", None)
    optimizer = args[0]
    closure = args[1] if len(args) > 1 else kwargs.get("closure")
    loss: Value = None
    if closure is not None:                 # step(closure): the loss is evaluated first
        loss = interp.call(closure, [], {})
    mode = interp.ctx.grad_mode
    interp.ctx.grad_mode = False
    try:
        updates = optimizer.step(interp.keeps_next_update is None or interp.keeps_next_update())
    finally:
        interp.ctx.grad_mode = mode
    group = optimizer.param_groups[0]
    hyper = {key: _hyper(group[key]) for key in _HYPER[optimizer.kind] if key in group}
    interp.emit(OptimizerStepped(optimizer.kind, interp.ctx.line, list(interp.loops), hyper,
                                 updates))
    return loss


def _optimizer_zero_grad(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    kwargs.pop("__text__", None)
    set_to_none = kwargs.get("set_to_none", args[1] if len(args) > 1 else True)
    params = [p for g in args[0].param_groups for p in g["params"]]
    optim.zero_grad(params, bool(set_to_none))


OPTIMIZER_METHODS = {"step": Builtin("Optimizer.step", _step),
                     "zero_grad": Builtin("Optimizer.zero_grad", _optimizer_zero_grad)}


def _optimizer(kind: str, spec: str, check: Callable[[dict[str, Value]], None]) -> Builtin:
    signature = Signature(f"{kind}.__init__", "params, " + spec, python=True)

    def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        kwargs.pop("__text__", None)
        bound = signature.bind(args, kwargs)
        params = bound.pop("params")
        check(bound)
        bound = {k: bound[k] for k in _DEFAULTS[kind]}   # PyTorch's order, not the call's
        return Optimizer(interp, kind, params, bound)

    def is_instance(value: Value) -> bool:
        return isinstance(value, Optimizer) and value.kind == kind

    return ClassBuiltin(f"torch.optim.{kind}", call, f"torch.optim.{kind.lower()}.{kind}",
                        is_instance)


_DEFAULTS = {       # the order of each optimizer's `defaults` dict (and so of its groups)
    "SGD": ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
            "differentiable", "fused"),
    "Adam": ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
             "capturable", "differentiable", "fused", "decoupled_weight_decay")}


def _hyper(value: Value) -> Any:
    """A hyperparameter as a number: a 1-element tensor (`lr=torch.tensor(0.1)`, kept as
    such in the group) by its value, which is also how f-strings and the groups' repr
    write it."""
    return value.item() if isinstance(value, Tensor) else value


def _check_lr(lr: Value) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise TorchError("ValueError", "Tensor lr must be 1-element")
    try:                                # `if lr < 0.0:`, Python's TypeError for a str
        negative = _hyper(lr) < 0.0
    except TypeError as e:
        raise TorchError("TypeError", str(e)) from None
    if negative:
        raise TorchError("ValueError", f"Invalid learning rate: {_hyper(lr)}")


def _check_sgd(a: dict[str, Value]) -> None:
    _check_lr(a["lr"])
    if a["momentum"] < 0:
        raise TorchError("ValueError", f"Invalid momentum value: {a['momentum']}")
    if a["weight_decay"] < 0:
        raise TorchError("ValueError", f"Invalid weight_decay value: {a['weight_decay']}")
    if a["nesterov"] and (a["momentum"] <= 0 or a["dampening"] != 0):
        raise TorchError("ValueError", "Nesterov momentum requires a momentum and zero "
                         "dampening")


def _check_adam(a: dict[str, Value]) -> None:
    _check_lr(a["lr"])
    if a["eps"] < 0:
        raise TorchError("ValueError", f"Invalid epsilon value: {a['eps']}")
    if not isinstance(a["betas"], (tuple, list)):        # `betas[0]` of a number
        raise TorchError("TypeError", f"'{type_name(a['betas'])}' object is not subscriptable")
    beta1, beta2 = a["betas"]
    if not 0.0 <= _hyper(beta1) < 1.0:
        raise TorchError("ValueError", f"Invalid beta parameter at index 0: {_hyper(beta1)}")
    if not 0.0 <= _hyper(beta2) < 1.0:
        raise TorchError("ValueError", f"Invalid beta parameter at index 1: {_hyper(beta2)}")
    if a["weight_decay"] < 0:
        raise TorchError("ValueError", f"Invalid weight_decay value: {a['weight_decay']}")
    if not (all(isinstance(b, float) for b in (beta1, beta2)) or
            all(isinstance(b, Tensor) for b in (beta1, beta2))):     # (an int is neither)
        raise TorchError("ValueError", "betas must be either both floats or both Tensors")
    a["betas"] = (beta1, beta2)


OPTIM = Namespace("torch.optim", {
    "SGD": _optimizer("SGD", "lr=0.001, momentum=0, dampening=0, weight_decay=0, "
                      "nesterov=False, *, maximize=False, foreach=None, differentiable=False, "
                      "fused=None", _check_sgd),
    "Adam": _optimizer("Adam", "lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, "
                       "amsgrad=False, *, foreach=None, maximize=False, capturable=False, "
                       "differentiable=False, fused=None, decoupled_weight_decay=False",
                       _check_adam),
})


def _clip_grad_norm(interp: Interpreter, args: Args, kwargs: Kwargs) -> Tensor:
    """`nn.utils.clip_grad_norm_(params, max_norm)`: the total 2-norm, and each `.grad`
    scaled by max_norm / (norm + 1e-6) when that is below 1."""
    kwargs.pop("__text__", None)
    bound = Signature("clip_grad_norm_", "parameters, max_norm, norm_type=2.0, "
                      "error_if_nonfinite=False, foreach=None").bind(args, kwargs)
    params = bound["parameters"]
    items = [params] if isinstance(params, Tensor) else list(interp.iterate(params))
    grads = [p.grad for p in items if isinstance(p, Tensor) and p.grad is not None]
    if not grads:
        return Tensor(np.zeros((), dtype=np.float32), interp.ctx)
    norms = np.array([np.sqrt(np.sum(g.data.astype(np.float32) ** 2)) for g in grads],
                     dtype=np.float32)
    total = np.float32(np.sqrt(np.sum(norms ** 2)))
    coef = np.float32(bound["max_norm"]) / (total + np.float32(1e-6))
    if coef < 1:
        for g in grads:
            g.data[...] = g.data * coef
            g.bump_version()
    return Tensor(np.asarray(total), interp.ctx)


NN_MEMBERS["utils"] = Namespace("torch.nn.utils", {
    "clip_grad_norm_": Builtin("torch.nn.utils.clip_grad_norm_", _clip_grad_norm)})


def _init_functions() -> Namespace:
    from app.language.nn_init import MEMBERS

    return Namespace("torch.nn.init", MEMBERS)




def _as_classes(members: dict[str, Value]) -> None:
    """The layers' constructors as the classes they are in PyTorch (`print(nn.Linear)`,
    `isinstance(m, nn.Linear)`, `type(m) is nn.Linear`)."""
    for name, value in list(members.items()):
        if name[:1].isupper() and type(value) is Builtin:
            members[name] = ClassBuiltin(value.name, value.impl, _typename(value),
                                         _layer_check(name))


def _layer_check(kind: str) -> Callable[[Value], bool]:
    def check(value: Value) -> bool:
        return isinstance(value, Module) and not isinstance(value, UserModule) and \
            value.kind == kind

    return check


def module_class(module: Module) -> Value:
    """`type(module)`: the program's class, or the layer's."""
    if isinstance(module, UserModule):
        return module.cls
    return NN_MEMBERS.get(module.kind) or PyType(module.kind, lambda v: False, None)


def optimizer_class(optimizer: Optimizer) -> Value:
    return OPTIM.members[optimizer.kind]


_as_classes(NN_MEMBERS)
NN_MEMBERS["init"] = _init_functions()
NN = Namespace("torch.nn", NN_MEMBERS)
