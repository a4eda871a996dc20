"""The `torch` namespace a program sees: `torch.tensor`, `torch.zeros`, `torch.tanh`,
`torch.no_grad()`, `torch.autograd.grad`, `torch.nn.functional`..., and what `import`
binds. Every member is the lab's own function over engine tensors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.language.args import Signature, sizes
from app.language.overloads import FUNCTION_OVERLOADS, overload_error
from app.language.size import Size
from app.language.tensor_api import METHODS, SIGNATURES, dtype_arg, extreme, tensor_arg
from app.language.values import (
    Builtin,
    ContextManager,
    Namespace,
    PyType,
    Value,
    type_name,
)
from engine import dtypes, functions
from engine.dtypes import DType
from engine.errors import TorchError
from engine.functions import factories
from engine.functions.compare import masked_fill as _masked_fill
from engine.functions.joins import unbind as _unbind
from engine.tensor import Tensor, tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]
Impl = Callable[["Interpreter", Kwargs], Value]

TORCH_MEMBERS: dict[str, Value] = {}


def function(name: str, spec: str, into: dict[str, Value] | None = None,
             prefix: str = "torch", python_name: str | None = None) -> Callable[[Impl], Impl]:
    """Declare `torch.name(spec)`; the implementation gets the bound arguments. A function
    PyTorch writes in Python gives its `python_name` to Python's argument errors."""
    signature = Signature(python_name or name, spec, python=python_name is not None,
                          numpy=python_name is None and prefix == "torch")
    table = TORCH_MEMBERS if into is None else into
    overloads = FUNCTION_OVERLOADS.get(name) if prefix == "torch" and into is None else None

    def register(impl: Impl) -> Impl:
        def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
            text = kwargs.pop("__text__", None)
            try:
                bound = signature.bind(args, kwargs)
            except TorchError:
                if overloads is not None:     # PyTorch's parser weighs every overload
                    error = overload_error(name, overloads, args, kwargs)
                    if error is not None:
                        raise error from None
                raise
            if text is not None:
                bound["__text__"] = text
            return impl(interp, bound)

        table[name] = Builtin(f"{prefix}.{name}", call)
        return impl

    return register


def unbind(t: Tensor, dim: int) -> list[Tensor]:
    return _unbind(t, dim)


def masked_fill(t: Tensor, mask: Value, value: Value) -> Tensor:
    if isinstance(value, Tensor):
        value = value.item()
    return _masked_fill(t, tensor_arg(mask, "mask", "masked_fill"), value)


class Device:
    """`torch.device("cpu")`: the lab has one device."""

    lab_type_name = "device"

    def lab_repr(self, addresses: Any) -> str:
        return "device(type='cpu')"

    def lab_str(self) -> str:
        return "cpu"

    def lab_getattr(self, interp: Any, name: str) -> Value:
        if name == "type":
            return "cpu"
        if name == "index":
            return None
        from app.language.attributes import no_attribute

        raise no_attribute(self, name)


CPU = Device()


def check_device(device: Value) -> None:
    name = device if isinstance(device, str) else "cpu"
    if not isinstance(device, (str, Device)):
        raise TorchError("TypeError", f"expected a device, got {type_name(device)}")
    if name.split(":")[0] != "cpu":
        raise TorchError("AssertionError", "Torch not compiled with CUDA enabled")


# -- grad modes and other context managers -------------------------------------------------

def grad_mode_manager(kind: str) -> ContextManager:
    if kind == "inference_mode":
        return ContextManager("inference_mode", True, label="torch.autograd.grad_mode."
                              "inference_mode")
    return ContextManager("grad_mode", kind == "enable_grad",
                          label=f"torch.autograd.grad_mode.{kind}")


def enter(interp: Interpreter, manager: ContextManager) -> Value:
    ctx = interp.ctx
    if manager.kind == "grad_mode":
        manager.previous.append(ctx.grad_mode)
        ctx.grad_mode = manager.enabled
    elif manager.kind == "set_grad_enabled":
        return None
    elif manager.kind == "inference_mode":
        manager.previous.append((ctx.grad_mode, ctx.inference_mode))
        if manager.enabled:
            ctx.grad_mode, ctx.inference_mode = False, True
    elif manager.kind == "saved_tensors_hooks":
        ctx.saved_tensors_hooks.append(manager.hooks)
    elif manager.kind == "nothing":
        return None
    return None


def exit_(interp: Interpreter, manager: ContextManager) -> None:
    ctx = interp.ctx
    if manager.kind in ("grad_mode", "set_grad_enabled") and manager.previous:
        ctx.grad_mode = manager.previous.pop()
    elif manager.kind == "inference_mode" and manager.previous:
        ctx.grad_mode, ctx.inference_mode = manager.previous.pop()
    elif manager.kind == "saved_tensors_hooks" and ctx.saved_tensors_hooks:
        ctx.saved_tensors_hooks.pop()


@function("no_grad", "")
def _no_grad(interp: Interpreter, a: Kwargs) -> Value:
    return grad_mode_manager("no_grad")


@function("enable_grad", "")
def _enable_grad(interp: Interpreter, a: Kwargs) -> Value:
    return grad_mode_manager("enable_grad")


@function("inference_mode", "mode=True")
def _inference_mode(interp: Interpreter, a: Kwargs) -> Value:
    return ContextManager("inference_mode", bool(a["mode"]),
                          label="torch.autograd.grad_mode.inference_mode")


@function("set_grad_enabled", "mode", python_name="set_grad_enabled.__init__")
def _set_grad_enabled(interp: Interpreter, a: Kwargs) -> Value:
    """Sets grad mode at once (as PyTorch's does when it is made), and restores it when a
    `with` block around it ends."""
    manager = ContextManager("set_grad_enabled", bool(a["mode"]),
                             label="torch.autograd.grad_mode.set_grad_enabled")
    manager.previous.append(interp.ctx.grad_mode)
    interp.ctx.grad_mode = bool(a["mode"])
    return manager


@function("is_grad_enabled", "")
def _is_grad_enabled(interp: Interpreter, a: Kwargs) -> bool:
    return interp.ctx.grad_mode


@function("is_inference_mode_enabled", "")
def _is_inference_mode_enabled(interp: Interpreter, a: Kwargs) -> bool:
    return interp.ctx.inference_mode


# -- making tensors ------------------------------------------------------------------------

def _data_of(value: Value) -> Value:
    """torch.tensor's data: numbers, bools, tensors and (nested) lists or tuples of them."""
    if isinstance(value, (list, tuple)):
        return [_data_of(v) for v in value]
    if isinstance(value, (bool, int, float, Tensor)):
        return value
    if isinstance(value, str):
        raise TorchError("TypeError", "new(): invalid data type 'str'")
    raise TorchError("TypeError", f"Could not infer dtype of {type_name(value)}")


@function("tensor", "data, *, dtype=None, device=None, requires_grad=False, pin_memory=False")
def _tensor(interp: Interpreter, a: Kwargs) -> Tensor:
    if not isinstance(a["requires_grad"], bool):
        raise TorchError("TypeError", "tensor(): argument 'requires_grad' must be bool, not "
                         f"{type_name(a['requires_grad'])}")
    if a["device"] is not None:
        check_device(a["device"])
    data = a["data"]
    if isinstance(data, Tensor):
        interp.ctx.warnings.append(COPY_CONSTRUCT_WARNING)
        out = Tensor(data.data.copy(), interp.ctx)
        if a["dtype"] is not None:
            out = functions.to_dtype(out, a["dtype"])
    else:
        out = tensor(_data_of(data), interp.ctx, dtype=dtype_arg(a["dtype"]))
    if a["requires_grad"]:
        from engine.tensor import set_requires_grad

        set_requires_grad(out, True)
    return out


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than "
    "torch.tensor(sourceTensor).")


def _legacy_tensor(interp: Interpreter, args: Args, kwargs: Kwargs) -> Tensor:
    """`torch.Tensor([...])` (the legacy constructor): float32 from data, or zeros of the
    given sizes (the lab fills the memory PyTorch would leave as it was)."""
    kwargs.pop("__text__", None)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tensor(_data_of(args[0]), interp.ctx, dtype=dtypes.float32)
    return factories.zeros(interp.ctx, sizes("Tensor", args))


TENSOR_TYPE = PyType("torch.Tensor", lambda v: isinstance(v, Tensor), _legacy_tensor)
TORCH_MEMBERS["Tensor"] = TENSOR_TYPE


@function("is_tensor", "obj")
def _is_tensor(interp: Interpreter, a: Kwargs) -> bool:
    return isinstance(a["obj"], Tensor)


def _factory(name: str, value: int) -> None:
    @function(name, "*sizes, size=None, out=None, dtype=None, layout=None, device=None, "
                    "requires_grad=False")
    def make(interp: Interpreter, a: Kwargs) -> Tensor:
        shape = sizes(name, a["sizes"], a["size"])       # zeros(2, 3) or zeros(size=(2, 3))
        dtype = dtype_arg(a["dtype"])
        if name == "empty":
            return factories.zeros(interp.ctx, shape, dtype, bool(a["requires_grad"]))
        return factories.filled(interp.ctx, shape, value, dtype or dtypes.DEFAULT_FLOAT,
                                bool(a["requires_grad"]))


_factory("zeros", 0)
_factory("ones", 1)
_factory("empty", 0)


def _like(name: str, value: int | None) -> None:
    spec = "input, *, dtype=None, layout=None, device=None, requires_grad=False, " \
           "memory_format=None"
    if value is None:
        spec = "input, fill_value, *, dtype=None, layout=None, device=None, " \
               "requires_grad=False, memory_format=None"

    @function(name, spec)
    def make(interp: Interpreter, a: Kwargs) -> Tensor:
        t = tensor_arg(a["input"], "input", name)
        fill = a["fill_value"] if value is None else value
        return factories.like(t, fill, dtype_arg(a["dtype"]), bool(a["requires_grad"]))


_like("zeros_like", 0)
_like("ones_like", 1)
_like("empty_like", 0)
_like("full_like", None)


@function("full", "size, fill_value, *, dtype=None, device=None, requires_grad=False")
def _full(interp: Interpreter, a: Kwargs) -> Tensor:
    value = a["fill_value"]
    if isinstance(value, Tensor):
        value = value.item()
    return factories.filled(interp.ctx, sizes("full", [a["size"]]), value,
                            dtype_arg(a["dtype"]), bool(a["requires_grad"]))


@function("arange", "start, end=None, step=1, *, dtype=None, device=None, requires_grad=False")
def _arange(interp: Interpreter, a: Kwargs) -> Tensor:
    return factories.arange(interp.ctx, a["start"], a["end"], a["step"], dtype_arg(a["dtype"]),
                            bool(a["requires_grad"]))


@function("linspace", "start, end, steps, *, dtype=None, device=None, requires_grad=False")
def _linspace(interp: Interpreter, a: Kwargs) -> Tensor:
    return factories.linspace(interp.ctx, a["start"], a["end"], a["steps"],
                              dtype_arg(a["dtype"]), bool(a["requires_grad"]))


@function("eye", "n, m=None, *, dtype=None, device=None, requires_grad=False")
def _eye(interp: Interpreter, a: Kwargs) -> Tensor:
    return factories.eye(interp.ctx, a["n"], a["m"], dtype_arg(a["dtype"]),
                         bool(a["requires_grad"]))


def _random_factory(name: str, make: Callable[..., Tensor]) -> None:
    @function(name, "*sizes, size=None, generator=None, dtype=None, device=None, "
                    "requires_grad=False")
    def draw(interp: Interpreter, a: Kwargs) -> Tensor:    # d2l: randn(size=(), ...)
        return make(interp.ctx, sizes(name, a["sizes"], a["size"]), dtype_arg(a["dtype"]),
                    bool(a["requires_grad"]))


_random_factory("rand", factories.rand)
_random_factory("randn", factories.randn)


NORMAL_OVERLOADS = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n")


@function("normal", "mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, "
                    "requires_grad=False")
def _normal(interp: Interpreter, a: Kwargs) -> Tensor:
    """d2l's `torch.normal(0, 0.01, size=(2, 1), requires_grad=True)`, and a tensor mean
    or std (factories.normal_around)."""
    mean, std, size = a["mean"], a["std"], a["size"]
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is None:
            return factories.normal_around(interp.ctx, mean, std)
    elif size is not None:
        return factories.normal(interp.ctx, float(mean), float(std), sizes("normal", [size]),
                                dtype_arg(a["dtype"]), bool(a["requires_grad"]))
    got = ", ".join(type(v).__name__ if not isinstance(v, Tensor) else "Tensor"
                    for v in (mean, std, size) if v is not None)
    raise TorchError("TypeError", "normal() received an invalid combination of arguments - "
                     f"got ({got}), but expected one of:\n{NORMAL_OVERLOADS}")


def _random_like(name: str, make: Callable[..., Tensor]) -> None:
    @function(name, "input, *, dtype=None, device=None, requires_grad=False")
    def draw(interp: Interpreter, a: Kwargs) -> Tensor:
        t = tensor_arg(a["input"], "input", name)
        return make(interp.ctx, t.shape, dtype_arg(a["dtype"]) or t.dtype,
                    bool(a["requires_grad"]))


_random_like("rand_like", factories.rand)
_random_like("randn_like", factories.randn)


@function("randint", "*args, size=None, generator=None, dtype=None, device=None, "
                     "requires_grad=False")
def _randint(interp: Interpreter, a: Kwargs) -> Tensor:
    args = list(a["args"])
    shape = a["size"]
    if shape is None and args and isinstance(args[-1], (tuple, list)):
        shape = args.pop()
    if shape is None:
        raise TorchError("TypeError", "randint() missing 1 required positional arguments: "
                         "\"size\"")
    low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    return factories.randint(interp.ctx, low, high, sizes("randint", [shape]),
                             dtype_arg(a["dtype"]), bool(a["requires_grad"]))


@function("randperm", "n, *, generator=None, dtype=None, device=None, requires_grad=False")
def _randperm(interp: Interpreter, a: Kwargs) -> Tensor:
    return factories.randperm(interp.ctx, a["n"], dtype_arg(a["dtype"]),
                              bool(a["requires_grad"]))


@function("manual_seed", "seed")
def _manual_seed(interp: Interpreter, a: Kwargs) -> Value:
    seed = a["seed"]
    if isinstance(seed, Tensor):
        seed = int(seed.item())
    if isinstance(seed, float) or not isinstance(seed, int):
        raise TorchError("TypeError", f"manual_seed expected a long, but got "
                         f"{type_name(seed)}")
    interp.ctx.generator.manual_seed(seed)
    return GENERATOR


@function("initial_seed", "")
def _initial_seed(interp: Interpreter, a: Kwargs) -> int:
    return int(interp.ctx.generator.initial_seed())


@function("seed", "")
def _seed(interp: Interpreter, a: Kwargs) -> int:
    from engine.context import fresh_seed

    fresh = fresh_seed()
    interp.ctx.generator.manual_seed(fresh)
    return int(fresh)


class _DefaultGenerator:
    lab_type_name = "Generator"

    def lab_repr(self, addresses: Any) -> str:
        return f"<torch._C.Generator object at {addresses.of(self)}>"


GENERATOR = _DefaultGenerator()


# -- functions of tensors ------------------------------------------------------------------

def _method_as_function(name: str, method_name: str | None = None) -> None:
    """`torch.tanh(x)` is `x.tanh()`: the same node, the same arguments; an argument error
    that the method's signature finds is the function's overloads' (`torch.sum(x, dims=0)`
    lists `(Tensor input, ...)`)."""
    method = METHODS[method_name or name]
    signature = SIGNATURES.get(method_name or name)     # None for an alias (`clip`)
    overloads = FUNCTION_OVERLOADS.get(name) if signature is not None else None

    def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        if "input" in kwargs:
            args = [kwargs.pop("input"), *args]
        if not args:
            raise TorchError("TypeError", f"{name}() missing 1 required positional arguments: "
                             "\"input\"")
        if not isinstance(args[0], Tensor):
            raise TorchError("TypeError", f"{name}(): argument 'input' (position 1) must be "
                             f"Tensor, not {type_name(args[0])}")
        if name == "norm":
            return _norm_function(interp, method, args, kwargs)
        if overloads is None or signature is None:
            return method.impl(interp, args, kwargs)
        try:
            return method.impl(interp, args, kwargs)
        except TorchError:
            given = {k: v for k, v in kwargs.items() if k != "__text__"}
            try:                              # was it the arguments? (only on this path)
                signature.bind(args[1:], dict(given))
            except TorchError:
                error = overload_error(name, overloads, args, given)
                if error is not None:
                    raise error from None
            raise

    TORCH_MEMBERS[name] = Builtin(f"torch.{name}", call)


def _norm_function(interp: Interpreter, method: Builtin, args: Args, kwargs: Kwargs) -> Value:
    """`torch.norm` is a Python function of its own (torch/functional.py), which
    `Tensor.norm` calls: its argument errors name `norm()`, the method's `Tensor.norm()`."""
    try:
        return method.impl(interp, args, kwargs)
    except TorchError as e:
        if e.message.startswith("Tensor.norm()"):
            raise TorchError(e.type_name, e.message.replace("Tensor.norm()", "norm()", 1)
                             ) from None
        raise


for _name in ("abs", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sigmoid",
              "relu", "sqrt", "rsqrt", "neg", "reciprocal", "floor", "ceil", "round", "sign",
              "erf", "square", "sum", "mean", "amax", "amin", "argmax", "argmin", "logsumexp",
              "norm", "prod", "var", "std", "cumsum", "clamp", "clip", "clamp_min",
              "clamp_max", "matmul", "mm", "mv", "dot", "outer",
              "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "t", "permute",
              "softmax", "log_softmax", "pow", "add", "sub", "mul", "div", "eq", "ne", "lt",
              "le", "gt", "ge", "equal", "allclose", "clone", "detach", "numel", "unbind",
              "masked_fill", "flip", "abs_", "exp_", "sin_", "cos_", "tanh_", "sigmoid_", "relu_",
              "sqrt_", "log_", "neg_"):
    _method_as_function(_name)
for _alias, _name in (("negative", "neg"), ("subtract", "sub"), ("multiply", "mul"),
                      ("divide", "div"), ("true_divide", "div"), ("absolute", "abs"),
                      ("swapaxes", "transpose")):
    _method_as_function(_alias, _name)
_TENSOR_POW = TORCH_MEMBERS["pow"].impl


def _pow(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`torch.pow(2, x)` too: pow.Scalar, the node of `2 ** x` (PowBackward2)."""
    if (len(args) == 2 and not kwargs and isinstance(args[0], (int, float))
            and isinstance(args[1], Tensor)):
        return functions.pow_scalar_base(args[0], args[1])
    return _TENSOR_POW(interp, args, kwargs)


TORCH_MEMBERS["pow"] = Builtin("torch.pow", _pow)


@function("maximum", "input, other")
def _maximum(interp: Interpreter, a: Kwargs) -> Value:
    return functions.maximum(tensor_arg(a["input"], "input", "maximum"), a["other"])


@function("minimum", "input, other")
def _minimum(interp: Interpreter, a: Kwargs) -> Value:
    return functions.minimum(tensor_arg(a["input"], "input", "minimum"), a["other"])


@function("max", "input, dim=None, keepdim=False")
def _max(interp: Interpreter, a: Kwargs) -> Value:
    return extreme(interp, tensor_arg(a["input"], "input", "max"), True, a["dim"],
                   bool(a["keepdim"]))


@function("min", "input, dim=None, keepdim=False")
def _min(interp: Interpreter, a: Kwargs) -> Value:
    return extreme(interp, tensor_arg(a["input"], "input", "min"), False, a["dim"],
                   bool(a["keepdim"]))


@function("where", "condition, input=None, other=None")
def _where(interp: Interpreter, a: Kwargs) -> Value:
    condition = tensor_arg(a["condition"], "condition", "where")
    if a["input"] is None and a["other"] is None:
        raise TorchError("UnsupportedError", "the lab takes torch.where(condition, x, y)")
    return functions.where(condition, a["input"], a["other"])


def _tensor_list(value: Value, name: str) -> list[Tensor]:
    if not isinstance(value, (list, tuple)):
        raise TorchError("TypeError", f"{name}(): argument 'tensors' (position 1) must be tuple "
                         f"of Tensors, not {type_name(value)}")
    for i, t in enumerate(value):
        if not isinstance(t, Tensor):
            raise TorchError("TypeError", f"expected Tensor as element {i} in argument 0, but "
                             f"got {type_name(t)}")
    return list(value)


@function("cat", "tensors, dim=0")
def _cat(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.cat(_tensor_list(a["tensors"], "cat"), a["dim"])


TORCH_MEMBERS["concat"] = TORCH_MEMBERS["cat"]
TORCH_MEMBERS["concatenate"] = TORCH_MEMBERS["cat"]


@function("stack", "tensors, dim=0")
def _stack(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.stack(_tensor_list(a["tensors"], "stack"), a["dim"])


@function("addmm", "input, mat1, mat2")
def _addmm(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.addmm(tensor_arg(a["input"], "input", "addmm"),
                           tensor_arg(a["mat1"], "mat1", "addmm"),
                           tensor_arg(a["mat2"], "mat2", "addmm"))


@function("result_type", "tensor, other")
def _result_type(interp: Interpreter, a: Kwargs) -> DType:
    from engine.functions._record import result_type, wrap

    t = tensor_arg(a["tensor"], "tensor", "result_type")
    return result_type(t, wrap(a["other"], t))


@function("device", "type")
def _device(interp: Interpreter, a: Kwargs) -> Value:
    check_device(a["type"])
    return CPU


for _dtype_name, _dtype in dtypes.ALIASES.items():
    TORCH_MEMBERS[_dtype_name] = _dtype


def _get_default_dtype(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """The lab has no set_default_dtype: the default dtype is always float32."""
    kwargs.pop("__text__", None)
    if args or kwargs:          # a C function of no arguments: CPython's own message
        raise TorchError("TypeError", "torch.get_default_dtype() takes no arguments "
                         f"({len(args) + len(kwargs)} given)")
    return dtypes.DEFAULT_FLOAT


TORCH_MEMBERS["get_default_dtype"] = Builtin("torch.get_default_dtype", _get_default_dtype)

def _make_size(interp: Interpreter, args: list[Value], kwargs: dict[str, Value]) -> Size:
    """`torch.Size(iterable)`: tuple's own argument rules, then each item an int (a bool,
    or an integer tensor of one element, which converts through __index__)."""
    if kwargs:
        raise TorchError("TypeError", "tuple() takes no keyword arguments")
    if len(args) > 1:
        raise TorchError("TypeError", f"tuple expected at most 1 argument, got {len(args)}")
    dims: list[int] = []
    for i, item in enumerate(interp.iterate(args[0]) if args else ()):
        if isinstance(item, Tensor) and not item.is_floating_point and item.numel() == 1:
            item = int(item.data.reshape(()))
        if not isinstance(item, int):
            raise TorchError("TypeError", "torch.Size() takes an iterable of 'int' (item "
                             f"{i} is '{type_name(item)}')")
        dims.append(int(item))
    return Size(dims)


TORCH_MEMBERS["Size"] = PyType("torch.Size", lambda v: type_name(v) == "torch.Size", _make_size)
TORCH_MEMBERS["cuda"] = Namespace("torch.cuda", {
    "is_available": Builtin("torch.cuda.is_available", lambda interp, args, kwargs: False),
    "device_count": Builtin("torch.cuda.device_count", lambda interp, args, kwargs: 0),
})
TORCH_MEMBERS["pi"] = 3.141592653589793
TORCH_MEMBERS["inf"] = float("inf")
TORCH_MEMBERS["nan"] = float("nan")
TORCH_MEMBERS["default_generator"] = GENERATOR
TORCH_MEMBERS["__version__"] = "2.13.0+cpu"          # the CPU build the lab reproduces


def _namespaces() -> Namespace:
    from app.language import autograd_api, functional_api, nn_api

    torch_ns = Namespace("torch", TORCH_MEMBERS)
    TORCH_MEMBERS["autograd"] = autograd_api.AUTOGRAD
    TORCH_MEMBERS["nn"] = nn_api.NN
    TORCH_MEMBERS["optim"] = nn_api.OPTIM
    nn_api.NN.members["functional"] = functional_api.F
    return torch_ns


TORCH = _namespaces()


def module(path: str) -> Namespace:
    """The namespace at a dotted path: `torch.nn.functional`, `math`."""
    if path == "math":
        from app.language.builtins import MATH

        return MATH
    current: Value = TORCH
    for part in path.split(".")[1:]:
        current = current.members[part]
    assert isinstance(current, Namespace)
    return current


def import_name(path: str, attribute: str | None) -> Value:
    """What `import path` (attribute None) or `from path import attribute` binds."""
    namespace = module(path)
    if attribute is None:
        return namespace
    if attribute not in namespace.members:
        raise TorchError("ImportError", f"cannot import name '{attribute}' from '{path}'")
    return namespace.members[attribute]


__all__ = ["CPU", "TENSOR_TYPE", "TORCH", "enter", "exit_", "grad_mode_manager",
           "import_name", "masked_fill", "unbind"]
