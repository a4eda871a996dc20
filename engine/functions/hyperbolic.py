"""cosh and sinh. The language has no spelling for them: they are recorded because
gelu(approximate="tanh")'s double backward calls `cosh` (FunctionsManual.cpp
`gelu_double_backward`), and a derivative of the next order differentiates that."""

from __future__ import annotations

import numpy as np

from engine.functions.arithmetic import mul
from engine.functions.pointwise import _Pointwise, unary
from engine.tensor import Tensor


class CoshBackward0(_Pointwise):
    """cosh: grad * sinh(self)."""

    name = "CoshBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, sinh(saved))


class SinhBackward0(_Pointwise):
    """sinh: grad * cosh(self)."""

    name = "SinhBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, cosh(saved))


cosh = unary(CoshBackward0, np.cosh)
sinh = unary(SinhBackward0, np.sinh)
