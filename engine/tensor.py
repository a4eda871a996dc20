"""Tensor: values in a numpy array, with PyTorch's autograd fields.

`requires_grad`, `grad_fn`, `is_leaf` and `.grad` mean what they mean in PyTorch: a leaf
is a tensor with no `grad_fn`, and `.grad` stays None until backward writes it.

# Note [Storage and versions]
A PyTorch tensor is a view of a storage, and several tensors can share one: `detach()`,
`.data` and every view op (`x[0]`, `x.t()`, `x.view(...)`). The lab keeps the values in a
numpy array, and shares storage exactly where PyTorch does by sharing the array (numpy
views of it for view ops), so an in-place write through any of them is seen by all. Each
tensor also has a version counter, bumped by every in-place op: `detach()` and views
share their source's counter, `.data` gets a new one. A node that saves a tensor records
its version, and raises PyTorch's error when backward finds it changed.

Views: see engine/views.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import dtypes, errors
from engine.dtypes import DType

if TYPE_CHECKING:
    from engine.accumulate_grad import AccumulateGrad
    from engine.context import AutogradContext
    from engine.node import Node

Number = int | float
Hook = Callable[[Any], Any]           # a tensor hook: grad -> new grad or None


class VersionCounter:
    """How many in-place changes a storage has seen (shared as Note [Storage and versions]
    says)."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = 0


class Tensor:
    """A tensor of one program run."""

    __slots__ = ("data", "dtype", "ctx", "_requires_grad", "_grad_fn", "output_nr", "grad",
                 "name", "is_wrapped_number", "version_counter", "base", "is_inference",
                 "is_parameter", "hooks", "post_accumulate_hooks", "retains_grad",
                 "_grad_accumulator", "untracked", "attr_version", "creation_meta")

    def __init__(self, data: np.ndarray, ctx: AutogradContext, *, requires_grad: bool = False,
                 grad_fn: Node | None = None, output_nr: int = 0,
                 is_wrapped_number: bool = False, base: Tensor | None = None) -> None:
        self.data = data
        self.dtype: DType = dtypes.from_numpy(data.dtype)
        self.ctx = ctx
        self.base = base                   # the tensor this one is a view of
        self.version_counter: VersionCounter = (base.version_counter if base is not None
                                                else VersionCounter())
        self.creation_meta = DEFAULT          # (engine/views.py)
        self._grad_fn = grad_fn
        self.attr_version = self.version_counter.version
        self.output_nr = output_nr
        self._requires_grad = requires_grad or grad_fn is not None
        self.grad: Tensor | None = None
        self.name: str | None = None       # the variable a grad-requiring leaf was named by
        self.is_wrapped_number = is_wrapped_number
        self.is_inference = ctx.inference_mode
        self.is_parameter = False
        # A leaf's tensor hooks (a non-leaf's are on grad_fn) and its post-accumulate
        # hooks: None until one is registered (Note [Hook lists made when needed]).
        self.hooks: list[Hook] | None = None
        self.post_accumulate_hooks: list[Hook] | None = None
        self.retains_grad = False
        self._grad_accumulator: AccumulateGrad | None = None
        # Why it is outside the graph though made from tensors that require grad:
        # "no_grad" (grad mode was off), "detach", "data". PyTorch keeps no such note;
        # the views show it.
        self.untracked: str | None = None

    # -- history ------------------------------------------------------------------------
    @property
    def grad_fn(self) -> Node | None:
        """`grad_fn()`: for a view whose base changed in place since, a regenerated node
        (engine/views.py); this read can record a node."""
        base = self.base
        if base is None or self.attr_version == self.version_counter.version:
            return self._grad_fn
        if self._grad_fn is None and not base.requires_grad:
            return None
        return regenerate_view_grad_fn(self)

    @grad_fn.setter
    def grad_fn(self, node: Node | None) -> None:
        self._grad_fn = node
        self.attr_version = self.version_counter.version      # set_gradient_edge

    @property
    def stored_grad_fn(self) -> Node | None:
        """The grad_fn as last set, never regenerated: what the lab's own bookkeeping
        (naming leaves and nodes after a statement) reads, so as to record nothing."""
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        """Its own flag or history, or (a view) its base's (engine/views.py)."""
        return self._requires_grad or (self.base is not None and self.base.requires_grad)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._requires_grad = flag

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape  # type: ignore[no-any-return]

    @property
    def ndim(self) -> int:
        return int(self.data.ndim)

    @property
    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    @property
    def version(self) -> int:
        return self.version_counter.version

    def numel(self) -> int:
        return int(self.data.size)

    def item(self) -> Number | bool:
        """The one value as a Python number (`.item()`), widened as PyTorch widens it."""
        if self.data.size != 1:
            raise errors.TorchError("RuntimeError", errors.item_of_many(self.data.size))
        return self.data.reshape(()).item()  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        return self.data.tolist()

    def grad_accumulator(self) -> AccumulateGrad:
        """The leaf's one AccumulateGrad node, shared by every use of the leaf."""
        if self._grad_accumulator is None:
            from engine.accumulate_grad import AccumulateGrad  # (a cycle: imported once)

            self._grad_accumulator = AccumulateGrad(self)
        return self._grad_accumulator

    def bump_version(self) -> None:
        """An in-place op changed the values (`torch.autograd.graph` calls it a bump)."""
        if not self.is_inference:
            self.version_counter.version += 1

    def __repr__(self) -> str:
        from engine.printing import format_tensor

        return format_tensor(self)

    # Python operators, as torch.Tensor defines them (see engine/functions/).
    def __add__(self, other: Tensor | Number) -> Tensor:
        return functions.add(self, other)

    def __radd__(self, other: Number) -> Tensor:
        return functions.add(self, other)

    def __sub__(self, other: Tensor | Number) -> Tensor:
        return functions.sub(self, other)

    def __rsub__(self, other: Number) -> Tensor:
        return functions.rsub(self, other)

    def __mul__(self, other: Tensor | Number) -> Tensor:
        return functions.mul(self, other)

    def __rmul__(self, other: Number) -> Tensor:
        return functions.mul(self, other)

    def __truediv__(self, other: Tensor | Number) -> Tensor:
        return functions.div(self, other)

    def __rtruediv__(self, other: Number) -> Tensor:
        # torch/_tensor.py: `__rdiv__` returns `self.reciprocal() * other`.
        return functions.mul(functions.reciprocal(self), other)

    def __pow__(self, exponent: Tensor | Number) -> Tensor:
        return functions.pow(self, exponent)

    def __rpow__(self, base: Number) -> Tensor:
        return functions.pow_scalar_base(base, self)

    def __neg__(self) -> Tensor:
        return functions.neg(self)

    def __matmul__(self, other: Tensor) -> Tensor:
        return functions.matmul(self, other)


def as_array(values: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """numpy output as an array of `dtype`: 0-d results come back from numpy as scalars."""
    if type(values) is np.ndarray and values.dtype == dtype:
        return values
    return np.asarray(values, dtype=dtype)


def filled(shape: tuple[int, ...], value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """`np.full(shape, value, dtype)` made with two of numpy's C calls: np.full is Python,
    and a loop's zero_() of every `.grad` and its backward's ones seed call it each step
    (a twentieth of the 1,000-step loop's trace, compiled)."""
    values = np.empty(shape, dtype=dtype)
    values.fill(value)
    return values


def new_tensor(values: Any, ctx: AutogradContext, dtype: DType | None = None,
               requires_grad: bool = False) -> Tensor:
    """A fresh leaf holding `values` (copied into an array of `dtype`)."""
    np_dtype = dtype.numpy if dtype is not None else np.asarray(values).dtype
    ctx.check_elements(np.shape(values))
    array = np.array(values, dtype=np_dtype)
    out = Tensor(array, ctx)
    if requires_grad:
        set_requires_grad(out, True)
    return out


def set_requires_grad(t: Tensor, flag: bool, message: str = errors.ONLY_FLOAT_REQUIRES_GRAD
                      ) -> None:
    """Make a leaf require grad (or not), with PyTorch's errors for non-leaves and integers;
    `requires_grad_()` words the integer case its own way."""
    if not t.is_leaf:
        if flag:
            return                      # a non-leaf already requires grad
        raise errors.TorchError("RuntimeError", errors.REQUIRES_GRAD_NON_LEAF)
    if flag and t.is_inference and not t.ctx.inference_mode:     # TensorImpl's check
        raise errors.TorchError("RuntimeError", errors.INFERENCE_REQUIRES_GRAD)
    if flag and not t.is_floating_point:
        raise errors.TorchError("RuntimeError", message)
    t.requires_grad = flag
    t.ctx.requires_grad_changed = True


def tensor(data: Any, ctx: AutogradContext, *, dtype: DType | None = None,
           requires_grad: bool = False) -> Tensor:
    """`torch.tensor(data, dtype=..., requires_grad=...)` for numbers, bools and nested
    lists of them, checked and typed as torch checks and types them."""
    shape, flat = shape_and_values(data)
    ctx.check_elements(shape)
    inferred = infer_dtype(flat)
    if dtype is None:
        dtype = inferred
    if requires_grad and not dtype.is_floating_point:
        raise errors.TorchError("RuntimeError", errors.ONLY_FLOAT_REQUIRES_GRAD)
    if inferred is dtypes.int64 and any(not -(2**63) <= v < 2**63 for v in flat):
        raise errors.TorchError("ValueError", errors.INT64_OVERFLOW)
    array = np.array(flat, dtype=np.float64 if dtype.is_floating_point else dtype.numpy)
    array = array.astype(dtype.numpy).reshape(shape)
    out = Tensor(array, ctx)
    if requires_grad:
        out.requires_grad = True
    return out


from engine import functions  # noqa: E402  (operators need the op table; it needs Tensor)
from engine.tensor_data import infer_dtype, shape_and_values  # noqa: E402
from engine.views import DEFAULT, regenerate_view_grad_fn  # noqa: E402
