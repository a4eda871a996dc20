"""`torch.Tensor`'s attributes and methods, as a program reaches them: `x.grad`, `x.shape`,
`x.detach()`, `x.sum(dim=0)`, `x.add_(1)`, `x.register_hook(fn)`...

Each method is declared once with PyTorch's parameter names; its work is the engine's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from app.language.args import Signature, sizes
from app.language.overloads import METHOD_OVERLOADS, overload_error
from app.language.size import Size
from app.language.values import BoundMethod, Builtin, Value, function_name, type_name
from engine import dtypes, functions, hooks, op_errors
from engine import errors as torch_errors
from engine.backward import backward
from engine.dtypes import DType
from engine.errors import TorchError
from engine.functions import inplace
from engine.tensor import Tensor, set_requires_grad

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


# -- attributes ----------------------------------------------------------------------------

def data_alias(t: Tensor) -> Tensor:
    """`x.data`: the same values, outside the graph, with a version counter of its own."""
    out = Tensor(t.data, t.ctx)
    out.is_inference = t.is_inference
    out.untracked = "data" if t.requires_grad else t.untracked
    return out


def detach(t: Tensor) -> Tensor:
    """`x.detach()`: the same values and version counter, no history."""
    out = Tensor(t.data, t.ctx)
    out.version_counter = t.version_counter
    out.is_inference = t.is_inference
    out.untracked = "detach" if t.requires_grad else t.untracked
    return out


def get(interp: Interpreter, t: Tensor, name: str) -> Value:
    method = METHODS.get(name)
    if method is not None:
        return BoundMethod(t, method)
    if name == "grad":
        if not t.is_leaf and not t.retains_grad and t.grad is None:
            t.ctx.warnings.append(NON_LEAF_GRAD_WARNING)
        return t.grad
    if name == "grad_fn":
        return t.grad_fn
    if name == "requires_grad":
        return t.requires_grad
    if name == "is_leaf":
        return t.is_leaf
    if name == "shape":
        return Size(t.shape)
    if name == "data":
        return data_alias(t)
    if name == "dtype":
        return t.dtype
    if name == "T":
        return functions.numpy_t(t)
    if name == "mT":
        return functions.transpose(t, -2, -1)
    if name == "ndim":
        return t.ndim
    if name == "_version":
        return t.version
    if name == "retains_grad":
        return t.retains_grad
    if name == "is_cuda":
        return False
    if name == "device":
        from app.language.torch_api import CPU

        return CPU
    if name == "_base":
        return t.base
    if name == "itemsize":
        return int(t.data.itemsize)
    from app.language import pytorch_names
    from app.language.attributes import not_in_lab

    if pytorch_names.exists("Tensor", name):
        raise not_in_lab(f"Tensor.{name}")
    raise TorchError("AttributeError", f"'{type_name(t)}' object has no attribute '{name}'")


_CPP_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}


def _assigned_grad(grad: Tensor, t: Tensor) -> str:
    """`t.grad = g` refused (THPVariable_set_grad): the dtype is checked before the size."""
    if grad.dtype is not t.dtype:
        return (f"attempting to assign a gradient with dtype '{_CPP_NAMES[grad.dtype.name]}' "
                f"to a tensor with grad_dtype '{op_errors.legacy_name(t.dtype)}'. The gradient "
                "must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                "set the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                "its gradient may break downstream systems that assume they match.")
    return (f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
            f"'{list(t.shape)}'. Please ensure that the gradient and the tensor are the same "
            "size")


def set(interp: Interpreter, t: Tensor, name: str, value: Value) -> None:
    if name == "grad":
        if value is not None and not isinstance(value, Tensor):
            raise TorchError("TypeError", f"assigned grad expected to be a Tensor or None but "
                             f"got grad of type {type_name(value)}")
        if value is not None and (value.dtype is not t.dtype or value.shape != t.shape):
            raise TorchError("RuntimeError", _assigned_grad(value, t))
        t.grad = value
    elif name == "requires_grad":
        if not isinstance(value, bool):
            raise TorchError("TypeError", "requires_grad must be a bool")
        if value and not t.is_leaf:     # the setter refuses a non-leaf even True, which
            raise TorchError("RuntimeError",  # requires_grad_() lets pass
                             torch_errors.REQUIRES_GRAD_NON_LEAF_TRUE)
        set_requires_grad(t, value, "only Tensors of floating point and complex dtype can "
                          "require gradients")
        interp.requires_grad_changed()
    elif name == "data":
        if not isinstance(value, Tensor):
            raise TorchError("TypeError", "Variable data has to be a tensor, but got "
                             f"{type_name(value)}")
        t.data = value.data
        t.dtype = value.dtype
    else:
        raise TorchError("UnsupportedError", f"the lab does not set attribute '{name}' on a "
                         "tensor")


# -- methods -------------------------------------------------------------------------------

Impl = Callable[["Interpreter", Tensor, dict[str, Value]], Value]
METHODS: dict[str, Builtin] = {}
SIGNATURES: dict[str, Signature] = {}
PYTHON_METHODS = frozenset({"backward", "register_hook", "register_post_accumulate_grad_hook",
                            "detach_", "retain_grad", "norm"})


def method(name: str, spec: str) -> Callable[[Impl], Impl]:
    """Declare `Tensor.name(spec)`; the implementation gets the tensor and its arguments."""
    # Methods written in Python (torch/_tensor.py) are named by their qualified name in
    # Python's argument errors; ATen's by their own.
    signature = Signature(f"Tensor.{name}" if name in PYTHON_METHODS else name, spec,
                          numpy=name not in PYTHON_METHODS and name != "norm")
    overloads = METHOD_OVERLOADS.get(name)
    SIGNATURES[name] = signature

    def register(impl: Impl) -> Impl:
        def call(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
            text = kwargs.pop("__text__", None)
            try:
                bound = signature.bind(args[1:], kwargs)
            except TorchError:
                if name == "backward":        # the backward() call is what failed
                    interp.backward_failed = True
                if overloads is not None:     # PyTorch's parser weighs every overload
                    error = overload_error(name, overloads, args[1:], kwargs)
                    if error is not None:
                        raise error from None
                raise
            if text is not None:
                bound["__text__"] = text
            return impl(interp, args[0], bound)

        METHODS[name] = Builtin(f"Tensor.{name}", call)
        return impl

    return register


def tensor_arg(value: Value, name: str, function: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TorchError("TypeError", f"{function}(): argument '{name}' must be Tensor, not "
                         f"{type_name(value)}")
    return value


def dtype_arg(value: Value) -> DType | None:
    if value is None or isinstance(value, DType):
        return value
    raise TorchError("TypeError", f"argument 'dtype' must be torch.dtype, not "
                     f"{type_name(value)}")


def _dims(value: Value) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


@method("backward", "gradient=None, retain_graph=None, create_graph=False, inputs=None")
def _backward(interp: Interpreter, t: Tensor, a: Kwargs) -> None:
    from app.language.autograd_api import implicit_seeds  # (a cycle: torch_api needs us)

    keep = bool(a["create_graph"]) if a["retain_graph"] is None else bool(a["retain_graph"])
    events = backward(t, a["gradient"], a["retain_graph"], a["create_graph"], a["inputs"])
    interp.run_pass("backward", a.get("__text__", "") or "tensor", events, keep,
                    bool(a["create_graph"]), seeds=implicit_seeds(t, a["gradient"]))


@method("detach", "")
def _detach(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return detach(t)


@method("detach_", "")
def _detach_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    if t.base is not None:                # every view, whatever its base requires
        raise TorchError("RuntimeError", torch_errors.DETACH_VIEW_INPLACE)
    if t.requires_grad:
        t.untracked = "detach"
    t.grad_fn = None
    t.requires_grad = False
    return t


@method("requires_grad_", "requires_grad=True")
def _requires_grad_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    set_requires_grad(t, bool(a["requires_grad"]), "only Tensors of floating point dtype can "
                      "require gradients")
    interp.requires_grad_changed()
    return t


@method("retain_grad", "")
def _retain_grad(interp: Interpreter, t: Tensor, a: Kwargs) -> None:
    hooks.retain_grad(t)


def check_hook_count(interp: Interpreter, count: int, what: str = "a tensor") -> None:
    """`max_hooks`: a hook registered in a loop would otherwise pile up without end."""
    if count >= interp.limits.max_hooks:
        from app.limits import LimitExceeded

        raise LimitExceeded(f"{what} may have at most {interp.limits.max_hooks} hooks in "
                            "the lab (were hooks registered inside a loop?)")


@method("register_hook", "hook")
def _register_hook(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    fn = a["hook"]
    existing = t.hooks if t.grad_fn is None else (t.grad_fn.tensor_pre_hooks or {}).get(
        t.output_nr)
    check_hook_count(interp, len(existing or ()))

    def hook(grad: Tensor) -> Any:
        return interp.call_hook(fn, [grad])

    return hooks.register_hook(t, hooks.Hook(hook, function_name(fn)))


@method("register_post_accumulate_grad_hook", "hook")
def _post_accumulate(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    fn = a["hook"]
    check_hook_count(interp, len(t.post_accumulate_hooks or ()))

    def hook(tensor: Tensor) -> Any:
        return interp.call_hook(fn, [tensor])

    return hooks.register_post_accumulate_grad_hook(t, hook)


@method("item", "")
def _item(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    return t.item()


@method("tolist", "")
def _tolist(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    return t.tolist()


@method("numel", "")
def _numel(interp: Interpreter, t: Tensor, a: Kwargs) -> int:
    return t.numel()


@method("dim", "")
def _dim(interp: Interpreter, t: Tensor, a: Kwargs) -> int:
    return t.ndim


METHODS["ndimension"] = METHODS["dim"]


@method("size", "dim=None")
def _size(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    if a["dim"] is None:
        return Size(t.shape)
    from engine.functions.reduction import normalize_dim

    return t.shape[normalize_dim(a["dim"], t.ndim)]


@method("is_floating_point", "")
def _is_floating_point(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    return t.is_floating_point


@method("is_inference", "")
def _is_inference(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    return t.is_inference


@method("is_contiguous", "")
def _is_contiguous(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    return bool(t.data.flags.c_contiguous)


@method("_is_view", "")
def _is_view(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    return t.base is not None


@method("clone", "*, memory_format=None")
def _clone(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.clone(t)


@method("contiguous", "memory_format=None")
def _contiguous(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.contiguous(t)


@method("view", "*size")  # ATen's names, for x.view(size=...), expand(size=), repeat(repeats=)
def _view(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    if len(a["size"]) == 1 and isinstance(a["size"][0], DType):
        raise TorchError("UnsupportedError", "the lab does not reinterpret a tensor's bytes as "
                         "another dtype (view(dtype))")
    return functions.view(t, sizes("view", a["size"]))


@method("reshape", "*shape")
def _reshape(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.reshape(t, sizes("reshape", a["shape"]))


@method("view_as", "other")
def _view_as(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.view(t, tensor_arg(a["other"], "other", "view_as").shape)


@method("reshape_as", "other")
def _reshape_as(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.reshape(t, tensor_arg(a["other"], "other", "reshape_as").shape)


@method("flatten", "start_dim=0, end_dim=-1")
def _flatten(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.flatten(t, a["start_dim"], a["end_dim"])


@method("squeeze", "dim=None")
def _squeeze(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.squeeze(t, _dims(a["dim"]))


@method("unsqueeze", "dim")
def _unsqueeze(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.unsqueeze(t, a["dim"])


@method("transpose", "dim0, dim1")
def _transpose(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.transpose(t, a["dim0"], a["dim1"])


METHODS["swapaxes"] = METHODS["transpose"]


@method("t", "")
def _t(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.t(t)


@method("flip", "*dims")
def _flip(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    if not a["dims"]:
        raise TorchError("TypeError", 'flip() missing 1 required positional arguments: "dims"')
    return functions.flip(t, sizes("flip", a["dims"]))


@method("permute", "*dims")
def _permute(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.permute(t, sizes("permute", a["dims"]))


@method("expand", "*size")
def _expand(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.expand(t, sizes("expand", a["size"]))


@method("expand_as", "other")
def _expand_as(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.expand(t, tensor_arg(a["other"], "other", "expand_as").shape)


@method("repeat", "*repeats")
def _repeat(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.repeat(t, sizes("repeat", a["repeats"]))


@method("unbind", "dim=0")
def _unbind(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    from app.language.torch_api import unbind

    return tuple(unbind(t, a["dim"]))


def _reduction(name: str, impl: Callable[..., Tensor]) -> None:
    @method(name, "dim=None, keepdim=False, *, dtype=None")
    def reduce(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        from engine.functions.conversion import to_dtype

        source = to_dtype(t, a["dtype"]) if a["dtype"] is not None else t
        return impl(source, _dims(a["dim"]), bool(a["keepdim"]))


_reduction("sum", functions.sum)
_reduction("mean", functions.mean)


def extreme(interp: Interpreter, t: Tensor, largest: bool, dim: Value, keepdim: bool) -> Value:
    """`x.max()`, `x.max(dim)` (values and indices) or `x.max(other)` (maximum)."""
    from app.language.values import ReturnTypes

    if isinstance(dim, Tensor):
        return functions.maximum(t, dim) if largest else functions.minimum(t, dim)
    if dim is None:
        return functions.max(t) if largest else functions.min(t)
    values, indices = functions.max(t, dim, keepdim) if largest else functions.min(
        t, dim, keepdim)
    return ReturnTypes("max" if largest else "min", values, indices)


@method("max", "dim=None, keepdim=False")
def _max(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    return extreme(interp, t, True, a["dim"], bool(a["keepdim"]))


@method("min", "dim=None, keepdim=False")
def _min(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    return extreme(interp, t, False, a["dim"], bool(a["keepdim"]))


@method("amax", "dim=(), keepdim=False")
def _amax(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.amax(t, _dims(a["dim"]), bool(a["keepdim"]))


@method("amin", "dim=(), keepdim=False")
def _amin(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.amin(t, _dims(a["dim"]), bool(a["keepdim"]))


@method("argmax", "dim=None, keepdim=False")
def _argmax(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.argmax(t, a["dim"], bool(a["keepdim"]))


@method("argmin", "dim=None, keepdim=False")
def _argmin(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.argmin(t, a["dim"], bool(a["keepdim"]))


@method("logsumexp", "dim, keepdim=False")
def _logsumexp(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.logsumexp(t, _dims(a["dim"]), bool(a["keepdim"]))


@method("norm", "p=2, dim=None, keepdim=False")
def _norm(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    p = a["p"]
    if p == "fro":
        p = 2
    return functions.norm(t, p, _dims(a["dim"]), bool(a["keepdim"]))


@method("prod", "dim=None, keepdim=False")
def _prod(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    if a["dim"] is not None:
        raise TorchError("UnsupportedError", "the lab takes prod() of a whole tensor")
    return functions.prod(t)


def _spread(name: str, std: bool) -> None:
    @method(name, "dim=None, unbiased=None, keepdim=False, *, correction=None")
    def spread(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        # PyTorch's overloads: with `unbiased`, or a dim and no `correction`, the
        # correction is 1 or 0; otherwise it is `correction` as given, None included
        # (which grad_fn._saved_correction shows)
        dim: Any = a["dim"]
        unbiased: Any = a["unbiased"]
        correction: Any = a["correction"]
        if isinstance(dim, bool):            # `x.var(False)`: the `unbiased` overload
            dim, unbiased = None, dim
        if unbiased is not None or (correction is None and dim is not None):
            correction = 1 if unbiased in (None, True) else 0
        return functions.var(t, _dims(dim), correction, bool(a["keepdim"]), std)


_spread("var", False)
_spread("std", True)


@method("cumsum", "dim")
def _cumsum(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.cumulative_sum(t, a["dim"])


def _unary(name: str, impl: Callable[[Tensor], Tensor]) -> None:
    @method(name, "")
    def apply(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        return impl(t)

    @method(name + "_", "")
    def apply_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        return inplace.inplace(t, impl)


for _name in ("abs", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sigmoid",
              "relu", "sqrt", "rsqrt", "neg", "reciprocal", "floor", "ceil", "round", "sign",
              "erf"):
    _unary(_name, getattr(functions, _name))
METHODS["negative"] = METHODS["neg"]
METHODS["absolute"] = METHODS["abs"]


@method("square", "")
def _square(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.pow(t, 2)


def _binary(name: str, impl: Callable[[Tensor, Any], Tensor], with_alpha: bool = False) -> None:
    spec = "other, *, alpha=1" if with_alpha else "other"

    def compute(t: Tensor, a: Kwargs) -> Tensor:
        other = a["other"]
        if with_alpha and a["alpha"] != 1:
            other = functions.mul(other, a["alpha"]) if isinstance(other, Tensor) \
                else other * a["alpha"]
        if not isinstance(other, (Tensor, bool, int, float)):
            raise TorchError("TypeError", f"{name}(): argument 'other' (position 1) must be "
                             f"Tensor, not {type_name(other)}")
        return impl(t, other)

    @method(name, spec)
    def apply(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        return compute(t, a)

    @method(name + "_", spec)
    def apply_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        return inplace.inplace(t, lambda before: compute(before, a))


_binary("add", functions.add, True)
_binary("sub", functions.sub, True)
_binary("mul", functions.mul)
_binary("div", functions.div)
_binary("pow", functions.pow)
METHODS["subtract"] = METHODS["sub"]
METHODS["multiply"] = METHODS["mul"]
METHODS["divide"] = METHODS["div"]
METHODS["true_divide"] = METHODS["div"]


def _comparison(name: str, op: str) -> None:
    @method(name, "other")
    def apply(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        return functions.compare(op, t, a["other"])


for _name, _op in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                   ("ge", "ge"), ("greater", "gt"), ("less", "lt")):
    _comparison(_name, _op)


@method("equal", "other")
def _equal(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    other = tensor_arg(a["other"], "other", "equal")
    return t.shape == other.shape and bool(np.array_equal(t.data, other.data))


@method("allclose", "other, rtol=1e-05, atol=1e-08, equal_nan=False")
def _allclose(interp: Interpreter, t: Tensor, a: Kwargs) -> bool:
    other = tensor_arg(a["other"], "other", "allclose")
    return bool(np.allclose(t.data, other.data, rtol=a["rtol"], atol=a["atol"],
                            equal_nan=bool(a["equal_nan"])))


@method("clamp", "min=None, max=None")
def _clamp(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.clamp(t, a["min"], a["max"])


@method("clamp_", "min=None, max=None")
def _clamp_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return inplace.inplace(t, lambda before: functions.clamp(before, a["min"], a["max"]))


METHODS["clip"] = METHODS["clamp"]
METHODS["clip_"] = METHODS["clamp_"]


@method("clamp_min", "min")
def _clamp_min(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.clamp_min(t, a["min"])


@method("clamp_max", "max")
def _clamp_max(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.clamp_max(t, a["max"])


def _other_tensor(function: str, value: Value) -> Tensor:
    """A method's `other` must be a tensor; it is the method's first argument."""
    if not isinstance(value, Tensor):
        raise op_errors.not_a_tensor_argument(function, "other", 1, value)
    return value


@method("maximum", "other")
def _maximum(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.maximum(t, _other_tensor("maximum", a["other"]))


@method("minimum", "other")
def _minimum(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.minimum(t, _other_tensor("minimum", a["other"]))


@method("where", "condition, other")
def _where(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.where(tensor_arg(a["condition"], "condition", "where"), t, a["other"])


@method("masked_fill", "mask, value")
def _masked_fill(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from app.language.torch_api import masked_fill

    return masked_fill(t, a["mask"], a["value"])


@method("matmul", "other")
def _matmul(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.matmul(t, tensor_arg(a["other"], "other", "matmul"))


@method("mm", "mat2")
def _mm(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.mm(t, tensor_arg(a["mat2"], "mat2", "mm"))


@method("mv", "vec")
def _mv(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.mv(t, tensor_arg(a["vec"], "vec", "mv"))


@method("dot", "tensor")
def _dot(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.dot(t, tensor_arg(a["tensor"], "tensor", "dot"))


@method("outer", "vec2")
def _outer(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.outer(t, tensor_arg(a["vec2"], "vec2", "outer"))


def softmax_input(t: Tensor, dtype: Value) -> Tensor:
    """softmax's `dtype=`: ATen casts the input first (a ToCopyBackward0 when it differs)."""
    target = dtype_arg(dtype)
    return t if target is None else functions.to_dtype(t, target)


@method("softmax", "dim, dtype=None")
def _softmax(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.softmax(softmax_input(t, a["dtype"]), a["dim"])


@method("log_softmax", "dim, dtype=None")
def _log_softmax(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return functions.log_softmax(softmax_input(t, a["dtype"]), a["dim"])


def _conversion(name: str, dtype: DType | None) -> None:
    @method(name, "")
    def convert(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
        if dtype is None:
            raise TorchError("UnsupportedError", f"the lab's tensors are float32, float64, int64 "
                             f"or bool; `.{name}()` makes another dtype")
        return functions.to_dtype(t, dtype)


for _name, _dtype in (("float", dtypes.float32), ("double", dtypes.float64),
                      ("long", dtypes.int64), ("bool", dtypes.bool_), ("int", None),
                      ("half", None)):
    _conversion(_name, _dtype)


@method("to", "*args, dtype=None, copy=False, non_blocking=False, device=None")
def _to(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    target: DType | None = a["dtype"]
    for arg in a["args"]:
        if isinstance(arg, DType):
            target = arg
        elif isinstance(arg, Tensor):
            target = arg.dtype
        elif isinstance(arg, str) or getattr(arg, "lab_type_name", None) == "device":
            from app.language.torch_api import check_device

            check_device(arg)
        else:
            raise TorchError("TypeError", f"to() received an invalid combination of arguments "
                             f"- got ({type_name(arg)})")
    if a["device"] is not None:
        from app.language.torch_api import check_device

        check_device(a["device"])
    out = t if target is None else functions.to_dtype(t, target)
    return functions.clone(out) if a["copy"] and out is t else out


@method("type", "dtype=None")
def _type(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    if a["dtype"] is None:
        return f"torch.{t.dtype.legacy}"
    return functions.to_dtype(t, dtype_arg(a["dtype"]) or t.dtype)


@method("cpu", "")
def _cpu(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return t


@method("numpy", "")
def _numpy(interp: Interpreter, t: Tensor, a: Kwargs) -> Value:
    raise TorchError("UnsupportedError", "numpy arrays are not part of the lab: use `.tolist()` or "
                     "`.item()`")


@method("zero_", "")
def _zero_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return inplace.zero_(t)


@method("fill_", "value")
def _fill_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return inplace.fill_(t, a["value"])


@method("copy_", "src, non_blocking=False")
def _copy_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    return inplace.copy_(t, tensor_arg(a["src"], "src", "copy_"))


@method("uniform_", "from_=0.0, to=1.0, *, generator=None")
def _uniform_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine import random

    values = random.uniform_(t.ctx.generator, t.shape, a["from_"], a["to"], t.data.dtype)
    return inplace.random_fill(t, values)


@method("normal_", "mean=0.0, std=1.0, *, generator=None")
def _normal_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine import random

    values = random.normal_(t.ctx.generator, t.shape, a["mean"], a["std"], t.data.dtype)
    return inplace.random_fill(t, values)


@method("random_", "*args, generator=None")
def _random_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine import random

    bounds = a["args"]
    low, high = (0, bounds[0]) if len(bounds) == 1 else (*bounds, 0, None)[:2]
    values = random.random_(t.ctx.generator, t.shape, t.data.dtype, low, high)
    return inplace.random_fill(t, values)


@method("bernoulli_", "p=0.5, *, generator=None")
def _bernoulli_(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine import random

    values = random.bernoulli_(t.ctx.generator, t.shape, float(a["p"]), t.data.dtype)
    return inplace.random_fill(t, values)


@method("new_zeros", "*size, dtype=None, requires_grad=False")
def _new_zeros(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine.functions import factories

    return factories.zeros(t.ctx, sizes("new_zeros", a["size"]), a["dtype"] or t.dtype,
                           bool(a["requires_grad"]))


@method("new_ones", "*size, dtype=None, requires_grad=False")
def _new_ones(interp: Interpreter, t: Tensor, a: Kwargs) -> Tensor:
    from engine.functions import factories

    return factories.ones(t.ctx, sizes("new_ones", a["size"]), a["dtype"] or t.dtype,
                          bool(a["requires_grad"]))


@method("element_size", "")
def _element_size(interp: Interpreter, t: Tensor, a: Kwargs) -> int:
    return int(t.data.itemsize)


__all__ = ["METHODS", "NON_LEAF_GRAD_WARNING", "SIGNATURES", "data_alias", "detach", "get", "set",
           "torch_errors"]
