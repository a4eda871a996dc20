"""engine/init.py initialises as torch.nn.init and nn.Linear do, to the bit.

The `torch` tests build nn.Linear and call torch.nn.init after the same seed as the engine and
compare the parameters' bits, then one more randn to see that both generators are in the same
state afterwards. The others check what needs no torch: shapes, fills, the bound, the order.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from engine import init
from engine import random as rnd
from engine.errors import TorchError
from tests.test_random import same_bits

LAYERS = [(3, 2, True), (1, 1, True), (10, 7, False), (64, 32, True), (0, 3, True),
          (5, 40, True), (17, 16, False), (784, 10, True)]


def test_linear_weight_first_then_bias_within_the_bound() -> None:
    """The weight is kaiming_uniform_(a=sqrt(5)), which is uniform(-1/sqrt(in), 1/sqrt(in));
    the bias is drawn after it, from the same bound."""
    weight, bias = init.linear_parameters(rnd.Generator(0), 20, 5)
    alone = init.kaiming_uniform_(rnd.Generator(0), (5, 20), a=math.sqrt(5))
    assert same_bits(weight, alone) and bias is not None and bias.shape == (5,)
    assert np.abs(weight).max() < 1 / math.sqrt(20) and np.abs(bias).max() < 1 / math.sqrt(20)
    generator = rnd.Generator(0)
    init.kaiming_uniform_(generator, (5, 20), a=math.sqrt(5))
    assert same_bits(bias, rnd.uniform_(generator, (5,), -1 / math.sqrt(20), 1 / math.sqrt(20)))


def test_linear_without_bias_draws_only_the_weight() -> None:
    generator = rnd.Generator(3)
    weight, bias = init.linear_parameters(generator, 4, 2, bias=False)
    assert bias is None and weight.shape == (2, 4) and weight.dtype == np.float32
    reference = rnd.Generator(3)
    reference.random(8)
    assert np.array_equal(generator.random(5), reference.random(5))


def test_fills() -> None:
    assert same_bits(init.zeros_((2, 3)), np.zeros((2, 3), np.float32))
    assert same_bits(init.ones_((4,), np.float64), np.ones(4))
    assert same_bits(init.constant_((2, 2), 0.1), np.full((2, 2), np.float32(0.1)))


def test_fan_needs_two_dimensions() -> None:
    assert init.calculate_fan_in_and_fan_out((8, 3, 5, 5)) == (75, 200)
    with pytest.raises(TorchError) as raised:
        init.xavier_uniform_(rnd.Generator(), (5,))
    assert raised.value.type_name == "ValueError"


# --- against live PyTorch ------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nn_linear_parameters(torch_avx2: Any, dtype: str) -> None:
    torch, bad = torch_avx2, []
    for seed in range(150):
        for in_features, out_features, bias in LAYERS:
            torch.manual_seed(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")                 # zero-element weight: a no-op
                layer = torch.nn.Linear(in_features, out_features, bias,
                                        dtype=getattr(torch, dtype))
            after = torch.randn(3).numpy()
            generator = rnd.Generator(seed)
            weight, b = init.linear_parameters(generator, in_features, out_features, bias, dtype)
            ok = same_bits(weight, layer.weight.detach().numpy())
            ok = ok and (b is None if layer.bias is None else
                         b is not None and same_bits(b, layer.bias.detach().numpy()))
            if not (ok and same_bits(rnd.randn(generator, (3,)), after)):
                bad.append((seed, in_features, out_features, bias))
    assert not bad


@pytest.mark.torch
def test_two_layers_then_data(torch_avx2: Any) -> None:
    """A model's layers draw one after the other, and the data after them."""
    torch = torch_avx2
    for seed in range(50):
        torch.manual_seed(seed)
        first, second = torch.nn.Linear(3, 8), torch.nn.Linear(8, 1)
        x = torch.randn(4, 3)
        generator = rnd.Generator(seed)
        ours = [*init.linear_parameters(generator, 3, 8), *init.linear_parameters(generator, 8, 1),
                rnd.randn(generator, (4, 3))]
        theirs = [first.weight, first.bias, second.weight, second.bias, x]
        assert all(same_bits(a, b.detach().numpy()) for a, b in zip(ours, theirs, strict=True))


SHAPES = [(3, 5), (16, 16), (4, 6, 3), (2, 3, 3, 3), (30, 1)]


def init_calls(torch: Any, shape: tuple[int, ...], dtype: str) -> list[tuple[Any, Any]]:
    """(ours, theirs) pairs of initialisers: each a function of a generator / of nothing."""
    nn_init, tdt = torch.nn.init, getattr(torch, dtype)

    def empty() -> Any:
        return torch.empty(shape, dtype=tdt)
    return [
        (lambda g: init.kaiming_uniform_(g, shape, dtype=dtype),
         lambda: nn_init.kaiming_uniform_(empty())),
        (lambda g: init.kaiming_uniform_(g, shape, a=0.2, mode="fan_out", dtype=dtype),
         lambda: nn_init.kaiming_uniform_(empty(), a=0.2, mode="fan_out")),
        (lambda g: init.kaiming_normal_(g, shape, mode="fan_out", nonlinearity="relu", dtype=dtype),
         lambda: nn_init.kaiming_normal_(empty(), mode="fan_out", nonlinearity="relu")),
        (lambda g: init.xavier_uniform_(g, shape, gain=init.calculate_gain("tanh"), dtype=dtype),
         lambda: nn_init.xavier_uniform_(empty(), gain=nn_init.calculate_gain("tanh"))),
        (lambda g: init.xavier_normal_(g, shape, dtype=dtype),
         lambda: nn_init.xavier_normal_(empty())),
        (lambda g: init.normal_(g, shape, 0.0, 0.02, dtype),
         lambda: nn_init.normal_(empty(), 0, 0.02)),
        (lambda g: init.uniform_(g, shape, -0.1, 0.1, dtype),
         lambda: nn_init.uniform_(empty(), -0.1, 0.1)),
    ]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_nn_init_functions(torch_avx2: Any, shape: tuple[int, ...], dtype: str) -> None:
    torch, bad = torch_avx2, []
    for seed in range(30):
        torch.manual_seed(seed)
        generator = rnd.Generator(seed)
        for i, (ours, theirs) in enumerate(init_calls(torch, shape, dtype)):
            if not same_bits(ours(generator), theirs().numpy()):
                bad.append((seed, i))
    assert not bad


@pytest.mark.torch
@pytest.mark.parametrize(("nonlinearity", "param"), [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", math.sqrt(5)), ("leaky_relu", 0), ("selu", None)])
def test_calculate_gain(torch: Any, nonlinearity: str, param: float | None) -> None:
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity,
                                                                                      param)


BAD_CALLS: list[tuple[Callable[[rnd.Generator], Any], Callable[[Any], Any]]] = [
    (lambda g: init.xavier_uniform_(g, (5,)), lambda t: t.nn.init.xavier_uniform_(t.empty(5))),
    (lambda g: init.kaiming_uniform_(g, (2, 2), mode="fan_avg"),
     lambda t: t.nn.init.kaiming_uniform_(t.empty(2, 2), mode="fan_avg")),
    (lambda g: init.kaiming_normal_(g, (2, 2), nonlinearity="swish"),
     lambda t: t.nn.init.kaiming_normal_(t.empty(2, 2), nonlinearity="swish")),
]


@pytest.mark.torch
@pytest.mark.parametrize("index", range(len(BAD_CALLS)))
def test_errors_are_pytorchs_word_for_word(torch: Any, index: int) -> None:
    ours, theirs = BAD_CALLS[index]
    with pytest.raises(Exception) as expected:
        theirs(torch)
    with pytest.raises(TorchError) as raised:
        ours(rnd.Generator())
    assert (raised.value.type_name, raised.value.message) == (type(expected.value).__name__,
                                                             str(expected.value))
