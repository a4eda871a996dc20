"""Tensors print as PyTorch 2.13 prints them (engine/printing.py): hypothesis-made arrays
of every lab dtype and of up to 4 dimensions compared with live torch's repr character for
character, and texts recorded from torch 2.13.0 pinned for runs without torch."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Final, Literal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.trace.values import Texts
from engine.printing import THRESHOLD, format_suffix, format_tensor, format_values, tensor_repr

try:
    import torch
except ImportError:
    torch = None  # type: ignore[assignment]

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed: the printing "
                                 "comparison with live PyTorch is skipped (pip install -e "
                                 "'.[torch]'); the texts recorded from torch still run")

# Recorded from torch 2.13.0: `repr(t)` of the tensor the comment names.
RECORDED: dict[str, tuple[Any, dict[str, Any], str]] = {
    "leaf": (  # torch.tensor([1., 2.], requires_grad=True)
        np.array([1.0, 2.0], np.float32), {"requires_grad": True},
        "tensor([1., 2.], requires_grad=True)"),
    "float64-non-leaf": (  # torch.tensor(1., dtype=torch.float64, requires_grad=True) * 2
        np.array(2.0), {"grad_fn": "MulBackward0", "requires_grad": True},
        "tensor(2., dtype=torch.float64, grad_fn=<MulBackward0>)"),
    "bool": (np.array([True, False]), {}, "tensor([ True, False])"),
    "int64": (np.array([1, 2], np.int64), {}, "tensor([1, 2])"),
    "empty-2d": (np.zeros((0, 3), np.float32), {}, "tensor([], size=(0, 3))"),
    "empty-int64": (np.array([], np.int64), {}, "tensor([], dtype=torch.int64)"),
    "parameter": (  # torch.nn.Parameter(torch.ones(2, 2))
        np.ones((2, 2), np.float32), {"requires_grad": True, "parameter": True},
        "Parameter containing:\ntensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"),
    "float64-wraps-its-dtype": (  # torch.arange(20, dtype=torch.float64) / 3
        np.arange(20, dtype=np.float64) / 3, {},
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
        "        6.0000, 6.3333], dtype=torch.float64)"),
    "specials": (np.array([1.5, np.nan, -0.0, -np.inf], np.float32), {},
                 "tensor([1.5000,    nan, -0.0000,   -inf])"),
    "summarised-ints": (  # torch.arange(2000).reshape(2, 1000)
        np.arange(2000, dtype=np.int64).reshape(2, 1000), {},
        "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
        "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])"),
    "ratio-1000-is-not-sci": (np.array([1.0, 1000.0], np.float32), {},
                              "tensor([   1., 1000.])"),
    "ratio-1001-is-sci": (np.array([1.0, 1001.0], np.float32), {},
                          "tensor([1.0000e+00, 1.0010e+03])"),
    "suffixes-wrap": (  # (torch.tensor([1e308, 5e-324, -0., nan], dtype=torch.float64,
        #                              requires_grad=True) * 1)
        np.array([1e308, 5e-324, -0.0, np.nan]), {"grad_fn": "MulBackward0"},
        "tensor([1.0000e+308, 4.9407e-324, -0.0000e+00,         nan],\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)"),
    "3d-sci": (np.array([[[1e-5, 1.0]], [[2.0, 1e3]]], np.float32), {},
               "tensor([[[1.0000e-05, 1.0000e+00]],\n\n        [[2.0000e+00, 1.0000e+03]]])"),
}


@pytest.mark.parametrize(("values", "facts", "text"), RECORDED.values(), ids=RECORDED.keys())
def test_recorded_texts(values: Any, facts: dict[str, Any], text: str) -> None:
    assert tensor_repr(values, **facts) == text


def test_format_tensor_reads_an_engine_tensor_duck_typed() -> None:
    values, _, text = RECORDED["float64-non-leaf"]
    t = SimpleNamespace(data=values, grad_fn=SimpleNamespace(type_name="MulBackward0"),
                        requires_grad=True)
    assert format_tensor(t) == text
    assert format_tensor(t, suffixes=False) == "tensor(2., dtype=torch.float64)"
    values, _, text = RECORDED["parameter"]
    p = SimpleNamespace(data=values, grad_fn=None, requires_grad=True, is_parameter=True)
    assert format_tensor(p) == text


# -- arrays as courses print them ---------------------------------------------------------

SPECIALS: Final = [np.nan, np.inf, -np.inf, -0.0, 0.0]


def _float_elements(draw: st.DrawFn, dtype: np.dtype[Any]) -> st.SearchStrategy[float]:
    """One array's values: integers stored as floats, mixed-sign decimals up to a bound or
    within a factor 100 of it, or any float at all (tiny, huge), with nan, infinities and
    signed zeros mixed in."""
    exact = dtype.type                  # (hypothesis wants values the dtype holds exactly)
    width: Literal[32, 64] = 32 if dtype.itemsize == 4 else 64
    e = draw(st.integers(-12, 12))
    bound, near = float(exact(10.0 ** e)), float(exact(10.0 ** e / 100))
    base = draw(st.sampled_from([
        st.integers(-(10 ** max(e, 1)), 10 ** max(e, 1)).map(lambda i: float(exact(i))),
        st.floats(-bound, bound, width=width),
        st.floats(near, bound, width=width) | st.floats(-bound, -near, width=width),
        st.floats(width=width),
    ]))
    return st.one_of(base, base, base, st.sampled_from(SPECIALS))


SHAPES = st.one_of(
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
    hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=40),
    st.sampled_from([(THRESHOLD + 1,), (1500,), (3, 400), (40, 40), (2, 3, 200), (6, 7, 5, 6),
                     (7, 1, 150), (0, 2000)]),
)


@st.composite
def arrays(draw: st.DrawFn, dtypes: tuple[str, ...] = ("float32", "float64", "int64", "bool"),
           ) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    elements: st.SearchStrategy[Any]
    if dtype.kind == "f":
        elements = _float_elements(draw, dtype)
    elif dtype.kind == "i":
        elements = draw(st.sampled_from([st.integers(-9, 99),
                                         st.integers(-(2 ** 63), 2 ** 63 - 1)]))
    else:
        elements = st.booleans()
    # fill: arrays over the threshold get one value everywhere except a few drawn ones
    return draw(hnp.arrays(dtype, SHAPES, elements=elements, fill=elements))


@needs_torch
@pytest.mark.torch
@settings(max_examples=600, deadline=None)
@given(arrays())
def test_arrays_print_as_pytorch_prints_them(values: np.ndarray) -> None:
    assert tensor_repr(values) == repr(torch.tensor(values))


@needs_torch
@pytest.mark.torch
@settings(max_examples=300, deadline=None)
@given(arrays(("float32", "float64")), st.sampled_from(["leaf", "non-leaf", "parameter"]))
def test_autograd_suffixes_print_as_pytorch_prints_them(values: np.ndarray, kind: str) -> None:
    leaf = torch.tensor(values, requires_grad=True)
    if kind == "leaf":
        assert tensor_repr(values, requires_grad=True) == repr(leaf)
    elif kind == "parameter":
        want = repr(torch.nn.Parameter(leaf))
        assert tensor_repr(values, requires_grad=True, parameter=True) == want
    else:
        y = leaf * 2
        name = type(y.grad_fn).__name__
        assert tensor_repr(y.detach().numpy(), grad_fn=name, requires_grad=True) == repr(y)


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("length", [40, 48, 49, 50, 60])
def test_a_long_grad_fn_name_goes_on_a_line_of_its_own_as_in_pytorch(length: int) -> None:
    """`_add_suffixes` wraps a suffix that would pass 80 columns (a custom Function's
    node is named after the class, so a long class name does it)."""
    fn: Any = type("F" * length, (torch.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2),
        "backward": staticmethod(lambda ctx, g: g)})
    for x in (torch.tensor(1.5, requires_grad=True), torch.arange(9.0, requires_grad=True) / 3):
        y = fn.apply(x)
        got = tensor_repr(y.detach().numpy(), grad_fn=type(y.grad_fn).__name__)
        assert got == repr(y)


@settings(max_examples=300, deadline=None)
@given(arrays(("float32",)))
def test_the_trace_texts_of_float32_values_are_whole_reprs(values: np.ndarray) -> None:
    """app/trace/values.py writes `tensor(` + format_values + format_suffix + `)`: for
    float32 (no `dtype=`; `size=` never wraps) that is the whole repr."""
    assert f"tensor({format_values(values)}{format_suffix(values)})" == tensor_repr(values)
    assert Texts().printed(values) == tensor_repr(values)


# -- the cases the lab's first printing was checked on ----------------------------------

RNG = np.random.RandomState(0)
CASES = {
    "wraps-at-80": np.arange(20, dtype=np.float32) * 1.5,
    "summarised-1d": np.arange(2000, dtype=np.float32) / 7,
    "summarised-2d": np.ones((50, 50), np.float32) * 0.5,
    "summarised-rows": np.arange(1200, dtype=np.float32).reshape(3, 400),
    "empty-2d": np.zeros((2, 0), np.float32),
    "empty-1d": np.array([], np.float32),
    "sci": np.array([1.5, 1e-5], np.float32),
    "2d": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
    "int64": np.arange(30, dtype=np.int64),
    "3d": RNG.randn(4, 5, 6).astype(np.float32),
    "huge-ints": np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 1e9,
    "specials": np.array([np.nan, np.inf, -np.inf, -0.0, 2.0], np.float32),
}
SCALARS = [0.0, -0.0, np.nan, np.inf, 28.0, 1e9, 0.1, 1e-5, 123456.7891, -3.25, 1e8, 0.7616]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_tensors_print_as_pytorch_prints_them(values: np.ndarray) -> None:
    want = repr(torch.from_numpy(values.copy()))
    assert "tensor(" + format_values(values) + format_suffix(values) + ")" == want
    assert tensor_repr(values) == want


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("value", SCALARS)
def test_scalars_print_as_pytorch_prints_them(value: float) -> None:
    want = repr(torch.tensor(value))
    assert f"tensor({format_values(np.float32(value))})" == want
    assert tensor_repr(np.float32(value)) == want
    assert tensor_repr(np.float64(value)) == repr(torch.tensor(value, dtype=torch.float64))


@needs_torch
@pytest.mark.torch
def test_a_trace_remembers_texts_without_mixing_up_signed_zeros() -> None:
    """`Texts` formats each value once per trace: printed twice, in any order, every value
    still reads as torch prints it (0.0 and -0.0 are one dict key, nan is never equal)."""
    texts = Texts()
    for value in [*SCALARS, *SCALARS[::-1]]:
        assert texts.printed(np.float32(value)) == repr(torch.tensor(value))
    assert texts.printed(None) is None
    assert texts.printed(CASES["2d"]) == repr(torch.from_numpy(CASES["2d"].copy()))
