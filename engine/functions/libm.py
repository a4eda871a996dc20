"""exp, log, tanh and the other transcendental functions, rounded as PyTorch's are.

# Note [Float32 functions]
PyTorch computes exp, log, tanh, sin, pow, ... of a float32 tensor with glibc's float
functions (a tensor of fewer than 32 elements, or the tail of a longer one) or with
SLEEF's and MKL's vector functions: all of them give the correctly rounded float32 but
for a last bit now and then (about one input in a hundred, on this AVX512 CPU). numpy's
float32 loops trade accuracy for speed: `np.exp` of a float32 is an ulp off for about
four inputs in ten, `np.tanh` three, `np.log` two, so a loss printed in full
(`loss.item()`) differed from PyTorch's in its last digits. The lab computes a float32
function in float64 and rounds once, which is the correctly rounded float32 (but where
the float64 value sits within 2**-29 of a float32 rounding boundary). MEASURED on 42
programs printing `.tolist()` of each function's values and gradients: 22 differed from
PyTorch before, 5 after (softmax's and gelu's vector kernels, a cos). Other dtypes are
computed as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

_FLOAT32: Final = np.dtype(np.float32)
_FLOAT64: Final = np.dtype(np.float64)


def _rounded(function: Callable[..., Any], *args: Any) -> Any:
    """The ufunc `function` of float32 arrays or scalars computed in float64 (the ufunc
    widens its inputs itself), then rounded. MEASURED: tanh of a 0-d float32 array took
    8 us with each input widened by `np.asarray` first, 3 us so (pure Python). One 0-d
    value goes through a Python float (Note [One value as a Python float])."""
    x = args[0]
    if getattr(x, "dtype", None) == _FLOAT32:
        if len(args) == 1 and x.ndim == 0:
            return _FLOAT32.type(function(float(x)))
        return function(*args, dtype=_FLOAT64).astype(_FLOAT32)
    return function(*args)


# Note [One value as a Python float]
# A float32 value widened by `float()` is the float64 that `dtype=float64` makes, and the
# ufunc runs the same float64 loop on it, so the bits are the same (checked on 200,000
# values per function, infinities, nan and subnormals among them); the ufunc's `dtype=`
# and a numpy float64's `astype` cost more than the function itself on one value.
# MEASURED (pure Python, best of 5 x 100,000): tanh of a 0-d float32 1.30 us, 0.54 us so;
# bench/programs.py's recurrence computes 10,000 of them.


def exp(x: Any) -> Any:
    return _rounded(np.exp, x)


def log(x: Any) -> Any:
    return _rounded(np.log, x)


def log1p(x: Any) -> Any:
    return _rounded(np.log1p, x)


def expm1(x: Any) -> Any:
    return _rounded(np.expm1, x)


def tanh(x: Any) -> Any:
    return _rounded(np.tanh, x)


def sin(x: Any) -> Any:
    return _rounded(np.sin, x)


def cos(x: Any) -> Any:
    return _rounded(np.cos, x)


def tan(x: Any) -> Any:
    return _rounded(np.tan, x)


def power(x: Any, y: Any) -> Any:
    return _rounded(np.power, x, y)


VECTOR_BLOCK: Final = 32      # cpu_kernel_vec's stride with AVX512: two vectors of 16 floats


def vector_exp(x: Any) -> Any:
    """exp inside PyTorch's vectorized float32 kernels (sigmoid, silu and their backward):
    `Vectorized<float>::exp` is SLEEF's expf (softmax_kernel.expf), on each whole block of
    32 elements in memory order; the elements left over take std::exp, correctly rounded
    here. (torch.exp itself calls another vector library, which rounds correctly but for
    about one value in a hundred: `exp` above.) MEASURED: 1 / (1 + vector_exp(-x)) gives
    torch.sigmoid's bits for all of 320,000 random floats; with `exp`, 4% differed."""
    if getattr(x, "dtype", None) != _FLOAT32 or np.size(x) < VECTOR_BLOCK:
        return exp(x)
    from engine.functions.softmax_kernel import exp_each

    flat = np.asarray(x).reshape(-1)
    cut = flat.size - flat.size % VECTOR_BLOCK
    return np.concatenate([exp_each(flat[:cut]), exp(flat[cut:])]).reshape(np.shape(x))


def pow_tensor_scalar(base: Any, exponent: float) -> Any:
    """pow(float32 tensor, number) as `pow_tensor_scalar_optimized_kernel` computes it:
    the vector kernel, on each whole block of 32 elements, raises to the exponent cast to
    float; `std::pow(float, double)`, on the elements left over, to the exponent as
    written (`x ** 0.7` of a 31st element is not that of a 32nd). Both round once."""
    if getattr(base, "dtype", None) != _FLOAT32:
        return np.power(base, exponent)
    flat = np.asarray(base).reshape(-1)
    cut = flat.size - flat.size % VECTOR_BLOCK
    out = np.concatenate([power(flat[:cut], np.float32(exponent)),
                          power(flat[cut:], exponent)])
    return out.reshape(np.shape(base))


def fma(a: Any, b: Any, c: Any) -> Any:
    """`a * b + c` rounded once to float32, as the fused multiply-add that GCC makes of it
    in PyTorch's scalar kernels: the float32 product is exact in float64, and the sum
    rounds twice only within 2**-29 of a float32 tie. Other dtypes: as written."""
    if getattr(c, "dtype", None) != _FLOAT32:
        return a * b + c
    wide = np.asarray(a, _FLOAT64) * np.asarray(b, _FLOAT64) + np.asarray(c, _FLOAT64)
    return wide.astype(_FLOAT32)
