"""torch.optim's update rules, as PyTorch's single-tensor implementations compute them
(torch/optim/sgd.py `_single_tensor_sgd`, adam.py `_single_tensor_adam`), on CPU tensors.

Each step changes the parameters in place under no_grad, bumping their versions as
PyTorch's in-place ops do. PyTorch's kernels compute `a + alpha * b` with one fused
multiply-add; the lab computes it in float64 and rounds once (`_fma`), which gives the
same float32 result.

# Note [Adam in C]
The compiled build also compiles optim_kernels.c beside this file: `adam_step`'s update
of a float32 parameter, operation for operation, an element at a time, with C's own fmaf
where `_fma` and `_fma_product` round a double (they differ only where a double lands on
a float32 tie: see libm.fma). MEASURED (compiled build, best of 5 x 500): one step of
bench.courses' nn.Sequential MLP's four parameters (512, 32, 128 and 4 values) took
100 us with numpy's fifteen operations a parameter and 23 us in C, about 15 ms of that
program's 200-step trace.
The pure build, and a parameter or state that is not C-contiguous float32, take numpy's
way here; tests/test_optim_kernels.py checks the two against each other.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from engine.tensor import Tensor


def _fma(a: np.ndarray, alpha: float, b: np.ndarray) -> np.ndarray:
    """`a + alpha * b` rounded once to a's dtype (alpha taken in that dtype first). The
    float64 scalar widens b, and the product a, exactly (numpy's promotion)."""
    dt = a.dtype
    scale = np.float64(dt.type(alpha))
    wide: np.ndarray = scale * b + a
    return wide.astype(dt)


def _fma_product(x: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """`x * y + c` rounded once to c's dtype: addcmul's `self + value * t1 * t2` is one
    fused multiply-add of the rounded `value * t1` with t2 (checked against torch). The
    product is taken in float64 (its inputs widened exactly), and widens c."""
    wide: np.ndarray = np.multiply(x, y, dtype=np.float64) + c
    return wide.astype(c.dtype)


def _write(param: Tensor, values: np.ndarray) -> None:
    param.data[...] = values
    param.bump_version()


class SGDState:
    """One parameter's momentum buffer (None until the first step with momentum)."""

    __slots__ = ("momentum_buffer",)

    def __init__(self) -> None:
        self.momentum_buffer: np.ndarray | None = None


def sgd_step(param: Tensor, state: SGDState, lr: float, momentum: float, dampening: float,
             weight_decay: float, nesterov: bool, maximize: bool) -> None:
    assert param.grad is not None
    grad = param.grad.data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = _fma(grad, weight_decay, param.data)
    if momentum != 0:
        buf = state.momentum_buffer
        if buf is None:
            buf = np.array(grad, copy=True)
        else:
            buf = _fma(buf * buf.dtype.type(momentum), 1 - dampening, grad)
        state.momentum_buffer = buf
        grad = _fma(grad, momentum, buf) if nesterov else buf
    _write(param, _fma(param.data, -lr, grad))


class AdamState:
    """One parameter's step count and moment estimates (the maximum only with amsgrad)."""

    __slots__ = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(self, like: np.ndarray) -> None:
        self.step = 0.0
        self.exp_avg = np.zeros_like(like)
        self.exp_avg_sq = np.zeros_like(like)
        self.max_exp_avg_sq: np.ndarray | None = None


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """`start.lerp_(end, weight)` as ATen's lerp computes it (two forms, for accuracy)."""
    w = start.dtype.type(weight)
    if abs(weight) < 0.5:
        return _fma(start, float(w), end - start)
    return _fma(end, -(1.0 - float(w)), end - start)


def adam_step(param: Tensor, state: AdamState, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              in_c: bool = True) -> None:
    """One Adam step; `in_c=False` takes numpy's way in any build (tests compare them)."""
    assert param.grad is not None
    state.step += 1
    step = state.step
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad and state.max_exp_avg_sq is None:
        state.max_exp_avg_sq = np.zeros_like(state.exp_avg_sq)
    if in_c and NATIVE is not None and _in_c(param, state):          # Note [Adam in C]
        w = float(np.float32(1 - beta1))
        from_start = abs(1 - beta1) < 0.5                    # `_lerp`'s two forms
        NATIVE.adam(param.data, param.grad.data, state.exp_avg, state.exp_avg_sq,
                    state.max_exp_avg_sq if amsgrad else None, float(maximize),
                    float(weight_decay != 0), float(from_start), weight_decay,
                    w if from_start else -(1.0 - w), beta2, 1 - beta2,
                    bias_correction2_sqrt, eps, -step_size)
        param.bump_version()
        return
    grad = param.grad.data
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = _fma(grad, weight_decay, param.data)
    dt = grad.dtype.type
    state.exp_avg = _lerp(state.exp_avg, grad, 1 - beta1)
    scaled = state.exp_avg_sq * dt(beta2)
    state.exp_avg_sq = _fma_product(grad * dt(1 - beta2), grad, scaled)
    second = state.exp_avg_sq
    if amsgrad:
        assert state.max_exp_avg_sq is not None
        state.max_exp_avg_sq = second = np.maximum(state.max_exp_avg_sq, state.exp_avg_sq)
    denom = np.sqrt(second) / dt(bias_correction2_sqrt) + dt(eps)
    # addcdiv_'s `self + value * t1 / t2`: (value * t1) / t2, then the sum (checked on torch)
    _write(param, param.data + (state.exp_avg * dt(-step_size)) / denom)


def _optim_kernels() -> Any:
    """The compiled build's C Adam step (Note [Adam in C]), or None."""
    try:
        import engine.optim_kernels as optim_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return optim_kernels


NATIVE: Final[Any] = _optim_kernels()
_F32: Final = np.dtype(np.float32)


def _in_c(param: Tensor, state: AdamState) -> bool:
    """Whether the C step takes this parameter: float32 arrays of one shape, C-contiguous
    (the states are made like the parameter, the gradient is PyTorch's own layout)."""
    assert param.grad is not None
    written = [param.data, state.exp_avg, state.exp_avg_sq]
    if state.max_exp_avg_sq is not None:
        written.append(state.max_exp_avg_sq)
    return all(a.dtype == _F32 and a.flags.c_contiguous and a.shape == param.data.shape
               for a in [*written, param.grad.data]) and all(a.flags.writeable
                                                               for a in written)


def zero_grad(params: list[Tensor], set_to_none: bool) -> None:
    """`optimizer.zero_grad()` / `model.zero_grad()`: `.grad` set to None (the default) or
    zeroed in place."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.grad_fn = None
            p.grad.requires_grad = False
            p.grad.data[...] = 0
            p.grad.bump_version()


__all__: list[Any] = ["AdamState", "SGDState", "adam_step", "sgd_step", "zero_grad"]
