"""`torch.nn.init`: the initialisers, writing into a tensor in place (under no_grad, as
PyTorch's do) with the values engine/init.py draws from the run's generator."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.language.args import Signature
from app.language.values import Builtin, Value
from engine import init
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter


def _in_place(name: str, spec: str, draw: Callable[[Any, Tensor, dict[str, Value]], Any]
              ) -> Builtin:
    signature = Signature(name, "tensor, " + spec)

    def call(interp: Interpreter, args: list[Value], kwargs: dict[str, Value]) -> Value:
        kwargs.pop("__text__", None)
        bound = signature.bind(args, kwargs)
        t = bound.pop("tensor")
        if not isinstance(t, Tensor):
            raise TorchError("TypeError", f"{name}() expects a tensor")
        values = draw(interp.ctx.generator, t, bound)
        t.data[...] = values
        t.bump_version()
        return t

    return Builtin(f"torch.nn.init.{name}", call)


MEMBERS: dict[str, Value] = {
    "uniform_": _in_place("uniform_", "a=0.0, b=1.0, generator=None", lambda g, t, a:
                          init.uniform_(g, t.shape, a["a"], a["b"], t.data.dtype)),
    "normal_": _in_place("normal_", "mean=0.0, std=1.0, generator=None", lambda g, t, a:
                         init.normal_(g, t.shape, a["mean"], a["std"], t.data.dtype)),
    "zeros_": _in_place("zeros_", "", lambda g, t, a: init.zeros_(t.shape, t.data.dtype)),
    "ones_": _in_place("ones_", "", lambda g, t, a: init.ones_(t.shape, t.data.dtype)),
    "constant_": _in_place("constant_", "val", lambda g, t, a:
                           init.constant_(t.shape, a["val"], t.data.dtype)),
    "xavier_uniform_": _in_place("xavier_uniform_", "gain=1.0, generator=None",
                                 lambda g, t, a: init.xavier_uniform_(g, t.shape, a["gain"],
                                                                      t.data.dtype)),
    "xavier_normal_": _in_place("xavier_normal_", "gain=1.0, generator=None",
                                lambda g, t, a: init.xavier_normal_(g, t.shape, a["gain"],
                                                                    t.data.dtype)),
    "kaiming_uniform_": _in_place("kaiming_uniform_", "a=0, mode='fan_in', "
                                  "nonlinearity='leaky_relu', generator=None",
                                  lambda g, t, a: init.kaiming_uniform_(
                                      g, t.shape, a["a"], a["mode"], a["nonlinearity"],
                                      t.data.dtype)),
    "kaiming_normal_": _in_place("kaiming_normal_", "a=0, mode='fan_in', "
                                 "nonlinearity='leaky_relu', generator=None",
                                 lambda g, t, a: init.kaiming_normal_(
                                     g, t.shape, a["a"], a["mode"], a["nonlinearity"],
                                     t.data.dtype)),
}
