"""Operators' error messages (engine/op_errors.py), pinned word for word as test_errors.py
pins the engine's: every public name in PINNED, pinned by the reference's text, by
programs that end with it in the lab and in live PyTorch 2.13, or marked the lab's own.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engine import dtypes, op_errors
from engine.errors import TorchError
from tests.pinning import Case, case, check_table, lab_outcome, params, torch_outcome

# -- the reference's texts, verbatim (§5) ---------------------------------------------------

REF_GRADIENT_FLOAT = "'float' object is not iterable"
REF_TANH_OF_FLOAT = "tanh(): argument 'input' (position 1) must be Tensor, not float"
REF_FLOAT_TANH = "'float' object has no attribute 'tanh'"
REF_BUILT: dict[str, tuple[TorchError, str, str]] = {
    "not_iterable": (op_errors.not_iterable(2.0), "TypeError", REF_GRADIENT_FLOAT),
    "not_a_tensor": (op_errors.not_a_tensor("tanh", 2.0), "TypeError", REF_TANH_OF_FLOAT),
    "no_attribute": (op_errors.no_attribute(2.0, "tanh"), "AttributeError", REF_FLOAT_TANH),
}
REF_PROGRAMS = [   # lab shorthand, as §5 writes them
    ("gradient-float", "a = 2.0\ny = a * 2\ny.backward(gradient=2.0)\n", "TypeError",
     REF_GRADIENT_FLOAT),
    ("tanh-of-float", "a = 2.0\nb = torch.tanh(2.0)\n", "TypeError", REF_TANH_OF_FLOAT),
    ("float-tanh", "a = 2.0\nb = (2.0).tanh()\n", "AttributeError", REF_FLOAT_TANH),
]


def test_builders_give_the_reference_texts() -> None:
    for name, (built, type_, text) in REF_BUILT.items():
        assert (built.type_name, built.message, str(built)) == (type_, text, text), name


@pytest.mark.parametrize(("source", "type_", "message"), [p[1:] for p in REF_PROGRAMS],
                         ids=[p[0] for p in REF_PROGRAMS])
def test_programs_end_with_the_reference_error(source: str, type_: str, message: str) -> None:
    assert lab_outcome(source) == (type_, message)


def test_legacy_name() -> None:
    assert [op_errors.legacy_name(d) for d in (dtypes.float32, dtypes.float64, dtypes.int64,
                                               dtypes.bool_)] == ["Float", "Double", "Long", "Bool"]


# -- the table ------------------------------------------------------------------------------

PINNED = {
    "legacy_name": "helper", **dict.fromkeys(REF_BUILT, "reference"),
    **dict.fromkeys([
        "INTEGER_NEGATIVE_POWER", "MEAN_OF_INTEGERS", "NUMBER_NOT_LIST", "NOT_A_SEQUENCE",
        "INT_TOO_BIG", "ONLY_ONE_ELEMENT_TENSORS", "AMBIGUOUS_BOOL", "broadcast_mismatch",
        "ragged", "ARANGE_BOUNDS", "BAD_INDEX", "BAD_INDEX_TENSOR", "BITWISE_NOT_FLOAT",
        "CLAMP_NO_BOUNDS", "INPLACE_OVERLAP", "NEGATIVE_BOOL", "SUB_BOOL", "SUB_TWO_BOOLS",
        "NORM_OF_INTEGERS",
        "REPEAT_TOO_FEW", "SOFTMAX_NEEDS_DIM", "VIEW_STRIDES",
        "INDEX_0_DIM", "NLL_1D_TARGET", "bce_size", "bitwise_on_float",
        "cannot_cast", "cat_dims", "cat_sizes", "dot_dims", "dot_dtypes", "dot_sizes",
        "empty_reduction", "expand_mismatch", "expand_negative", "expand_too_few",
        "gelu_approximate", "index_out_of_bounds", "inplace_shape", "matmul_0d", "mean_of",
        "mixed_dtypes", "mm_shapes", "mv_shapes", "not_a_tensor_argument",
        "permute_length", "randint_range", "stack_sizes", "t_of", "target_size",
        "too_many_indices", "where_condition", "INPLACE_LEAKY_RELU_SLOPE",
        "INPLACE_ELU_SLOPE", "SLICE_0_DIM", "fill_dims", "index_put_dtypes",
        "index_put_shape"], "program"),
}

# -- programs ending with each message ------------------------------------------------------

A = "a = torch.tensor(2.0, requires_grad=True); "
V = "a = torch.tensor([1.0, 2.0], requires_grad=True); "
F32, F64, I64, BOOL = dtypes.float32, dtypes.float64, dtypes.int64, dtypes.bool_


def of(*kinds: dtypes.DType) -> list[Any]:
    """Tensors as mixed_dtypes reads them: only their dtypes."""
    return [SimpleNamespace(dtype=d) for d in kinds]


def ops(name: str, rows: list[tuple[Any, ...]], type_: str | None = None) -> list[Case]:
    """Cases of one name: (body, expected[, type[, xfail]]), `type_` their default type."""
    out = []
    for row in rows:
        body, expected, *rest = row
        out.append(case(name, body, expected, rest[0] if rest else type_,
                        rest[1] if len(rest) > 1 else None))
    return out


CASES = [
    *ops("INTEGER_NEGATIVE_POWER", [("a = torch.tensor(2); b = a ** -1",
                                     op_errors.INTEGER_NEGATIVE_POWER)], "RuntimeError"),
    *ops("MEAN_OF_INTEGERS", [("b = torch.tensor([1, 2]).mean()", op_errors.MEAN_OF_INTEGERS)],
         "RuntimeError"),
    *ops("NUMBER_NOT_LIST", [("a = torch.tensor([1.0, [2.0]])", op_errors.NUMBER_NOT_LIST)],
         "TypeError"),
    *ops("NOT_A_SEQUENCE", [("a = torch.tensor([[1.0], 2.0])", op_errors.NOT_A_SEQUENCE)],
         "TypeError"),
    *ops("INT_TOO_BIG", [(A + "b = a * 10 ** 30", op_errors.INT_TOO_BIG)], "OverflowError"),
    *ops("INPLACE_LEAKY_RELU_SLOPE", [
        (V + "b = torch.nn.functional.leaky_relu(a * 2, -0.1, inplace=True); "
             "b.sum().backward()", op_errors.INPLACE_LEAKY_RELU_SLOPE)], "RuntimeError"),
    *ops("INPLACE_ELU_SLOPE", [
        (V + "b = torch.nn.functional.elu(a * 2, -1.0, inplace=True); b.sum().backward()",
         op_errors.INPLACE_ELU_SLOPE)], "RuntimeError"),
    *ops("ONLY_ONE_ELEMENT_TENSORS", [
        ("a = torch.tensor([1.0, torch.tensor([1.0, 2.0])])", op_errors.ONLY_ONE_ELEMENT_TENSORS),
        ("b = float(torch.tensor([]))", op_errors.ONLY_ONE_ELEMENT_TENSORS),
        ("b = float(torch.tensor([1.0, 2.0]))", op_errors.ONLY_ONE_ELEMENT_TENSORS)],
        "ValueError"),
    *ops("AMBIGUOUS_BOOL", [("a = torch.tensor([1.0, 2.0])\nif a > 0:\n    b = 1",
                             op_errors.AMBIGUOUS_BOOL)], "RuntimeError"),
    *ops("broadcast_mismatch", [
        (V + "c = a * torch.tensor([1.0, 2.0, 3.0])", op_errors.broadcast_mismatch((2,), (3,))),
        ("c = torch.ones(2, 2) + torch.ones(1, 3, requires_grad=True)",
         op_errors.broadcast_mismatch((2, 2), (1, 3))),
        ("c = torch.ones(3, 1, 2) - torch.ones(4, 2, 1, 1)",
         op_errors.broadcast_mismatch((3, 1, 2), (4, 2, 1, 1)))]),
    *ops("ragged", [("a = torch.tensor([[1.0, 2.0], [3.0]])", op_errors.ragged(2, 1, 1)),
                    ("a = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0, 5.0]]])",
                     op_errors.ragged(2, 2, 3)),
                    ("a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0, 7.0]])",
                     op_errors.ragged(2, 1, 3))]),
    *ops("ARANGE_BOUNDS", [("a = torch.arange(5, 1)", op_errors.ARANGE_BOUNDS),
                           ("a = torch.arange(0, 5, -1)", op_errors.ARANGE_BOUNDS)],
         "RuntimeError"),
    # PyTorch's text ends with the index's type; the lab adds it in app/language/operators.py
    *ops("BAD_INDEX", [("b = torch.ones(2)[1.0]", op_errors.BAD_INDEX + " (got float)")],
         "IndexError"),
    *ops("BAD_INDEX_TENSOR", [("b = torch.ones(2)[torch.tensor([0.0])]",
                               op_errors.BAD_INDEX_TENSOR)], "IndexError"),
    *ops("BITWISE_NOT_FLOAT", [("b = ~torch.ones(2)", op_errors.BITWISE_NOT_FLOAT)],
         "TypeError"),
    *ops("CLAMP_NO_BOUNDS", [(V + "b = a.clamp()", op_errors.CLAMP_NO_BOUNDS)], "RuntimeError"),
    *ops("INPLACE_OVERLAP", [("b = torch.ones(2).expand(2, 2); b.add_(1)",
                              op_errors.INPLACE_OVERLAP)], "RuntimeError"),
    *ops("NEGATIVE_BOOL", [("b = -torch.tensor([True, False])", op_errors.NEGATIVE_BOOL)],
         "RuntimeError"),
    *ops("SUB_BOOL", [("b = torch.tensor([True]) - 1", op_errors.SUB_BOOL),
                      ("b = 1 - torch.tensor([True])", op_errors.SUB_BOOL),
                      ("b = torch.tensor([1, 2]) - True", op_errors.SUB_BOOL)], "RuntimeError"),
    *ops("SUB_TWO_BOOLS", [("m = torch.tensor([True]); b = m - m", op_errors.SUB_TWO_BOOLS),
                           ("m = torch.tensor([True]); m -= True", op_errors.SUB_TWO_BOOLS),
                           ("b = True - torch.tensor([False])", op_errors.SUB_TWO_BOOLS)],
         "RuntimeError"),
    *ops("NORM_OF_INTEGERS", [("b = torch.tensor([1, 2]).norm()", op_errors.NORM_OF_INTEGERS)],
         "RuntimeError"),
    *ops("REPEAT_TOO_FEW", [("b = torch.ones(2, 3).repeat(2)", op_errors.REPEAT_TOO_FEW)],
         "RuntimeError"),
    *ops("SOFTMAX_NEEDS_DIM", [(V + "b = torch.softmax(a)", op_errors.SOFTMAX_NEEDS_DIM)],
         "TypeError"),
    *ops("VIEW_STRIDES", [("b = torch.ones(2, 3).t().view(6)", op_errors.VIEW_STRIDES)],
         "RuntimeError"),
    *ops("where_condition", [("b = torch.where(torch.tensor([1, 0]), torch.ones(2), "
                              "torch.zeros(2))", op_errors.where_condition(I64)),
                             ("b = torch.where(torch.ones(2), torch.ones(2), torch.zeros(2))",
                              op_errors.where_condition(F32))], "RuntimeError"),
    *ops("INDEX_0_DIM", [
        ("b = torch.tensor(1.0)[0]", op_errors.INDEX_0_DIM),
        ("b = torch.ones(3).sum()[0]", op_errors.INDEX_0_DIM)], "IndexError"),
    *ops("NLL_1D_TARGET", [
        ("x = torch.ones(3, requires_grad=True); F.cross_entropy(x, torch.tensor([[0]]))",
         op_errors.NLL_1D_TARGET),
        ("x = torch.ones(3, requires_grad=True); F.nll_loss(x, torch.tensor([0, 1]))",
         "For 1D input, 1D target must have size 1, but got target size: 2", "ValueError")],
        "RuntimeError"),
]

# -- builders, each for two or more sets of values ------------------------------------------

CASES += [
    *ops("expand_mismatch", [       # addmm's bias, expanded to the product's shape
        ("y = F.linear(torch.ones(2, 3), torch.ones(4, 3), torch.ones(5))",
         op_errors.expand_mismatch(4, 5, 1, (2, 4), (5,))),
        ("y = torch.addmm(torch.ones(2, 5), torch.ones(2, 3), torch.ones(3, 4))",
         op_errors.expand_mismatch(4, 5, 1, (2, 4), (2, 5))),
        ("y = torch.addmm(torch.ones(3, 4), torch.ones(2, 3), torch.ones(3, 4))",
         op_errors.expand_mismatch(2, 3, 0, (2, 4), (3, 4)))], "RuntimeError"),
    *ops("bce_size", [
        (V + "F.binary_cross_entropy(torch.sigmoid(a), torch.ones(3))",
         op_errors.bce_size((3,), (2,))),
        ("x = torch.ones(1, 2, requires_grad=True); F.binary_cross_entropy(torch.sigmoid(x), "
         "torch.ones(2, 1))", op_errors.bce_size((2, 1), (1, 2)))], "ValueError"),
    *ops("bitwise_on_float", [
        (f"b = torch.ones(2) {op} {other}", op_errors.bitwise_on_float(name), "NotImplementedError")
        for op, other, name in [("&", "1", "and"), ("|", "1.5", "or"), ("^", "True", "xor")]]),
    *ops("cannot_cast", [
        ("a = torch.tensor([1, 2]); a += 1.5", op_errors.cannot_cast(F32, I64)),
        ("a = torch.tensor([True, False]); a += 1", op_errors.cannot_cast(I64, BOOL)),
        ("a = torch.tensor([1, 2]); a *= torch.ones(2, dtype=torch.float64)",
         op_errors.cannot_cast(F64, I64))], "RuntimeError"),
    *ops("cat_dims", [("c = torch.cat([torch.ones(2, 2), torch.ones(3)])",
                       op_errors.cat_dims(2, 1, 1)),
                      ("c = torch.cat([torch.ones(2), torch.ones(2, 2, 2)])",
                       op_errors.cat_dims(1, 1, 3))], "RuntimeError"),
    *ops("cat_sizes", [("c = torch.cat([torch.ones(2, 2), torch.ones(2, 3)])",
                        op_errors.cat_sizes(0, 2, 3, 1)),
                       ("c = torch.cat([torch.ones(2, 2), torch.ones(2, 2), torch.ones(3, 3)], "
                        "dim=1)", op_errors.cat_sizes(1, 2, 3, 2))], "RuntimeError"),
    *ops("dot_dims", [("c = torch.dot(torch.ones(2, 2), torch.ones(2))", op_errors.dot_dims(2, 1)),
                      ("c = torch.dot(torch.ones(3), torch.ones(2, 1))", op_errors.dot_dims(1, 2))],
         "RuntimeError"),
    *ops("dot_dtypes", [
        ("c = torch.dot(torch.ones(3), torch.ones(3, dtype=torch.float64))",
         op_errors.dot_dtypes(F32, F64)),
        ("c = torch.dot(torch.ones(2, dtype=torch.float64), torch.tensor([1, 2]))",
         op_errors.dot_dtypes(F64, I64)),
        ("c = torch.dot(torch.ones(3), torch.ones(2, dtype=torch.float64))",
         op_errors.dot_dtypes(F32, F64))], "RuntimeError"),
    *ops("dot_sizes", [
        ("c = torch.dot(torch.ones(3), torch.ones(4))", op_errors.dot_sizes((3,), (4,))),
        ("c = torch.dot(torch.ones(5), torch.ones(1))", op_errors.dot_sizes((5,), (1,)))],
        "RuntimeError"),
    *ops("empty_reduction", [("c = torch.tensor([]).max()", op_errors.empty_reduction("max")),
                             ("c = torch.tensor([]).min()", op_errors.empty_reduction("min"))],
         "RuntimeError"),
    *ops("expand_mismatch", [
        ("c = torch.ones(2, 3).expand(2, 4)", op_errors.expand_mismatch(4, 3, 1, (2, 4), (2, 3))),
        ("c = torch.ones(3, 1).expand(2, 2, 1)",
         op_errors.expand_mismatch(2, 3, 1, (2, 2, 1), (3, 1)))], "RuntimeError"),
    *ops("expand_negative", [("c = torch.ones(3).expand(-1, 3)", op_errors.expand_negative(0, -1)),
                             ("c = torch.ones(3).expand(2, -1, 3)",
                              op_errors.expand_negative(1, -1))], "RuntimeError"),
    *ops("expand_too_few", [
        ("c = torch.ones(2, 3).expand(3)", op_errors.expand_too_few((3,), (2, 3), F32)),
        ("c = torch.ones(2, 3, 1, dtype=torch.float64).expand(3, 1)",
         op_errors.expand_too_few((3, 1), (2, 3, 1), F64))], "RuntimeError"),
    *ops("gelu_approximate", [
        ('c = F.gelu(torch.ones(2), approximate="erf")', op_errors.gelu_approximate("erf")),
        ('c = F.gelu(torch.ones(2), approximate="none ")', op_errors.gelu_approximate("none "))],
         "RuntimeError"),
    *ops("index_out_of_bounds", [
        ("b = torch.ones(3)[3]", op_errors.index_out_of_bounds(3, 0, 3)),
        ("b = torch.ones(2, 4)[:, -5]", op_errors.index_out_of_bounds(-5, 1, 4)),
        ("b = torch.ones(2, 4)[torch.tensor([0, 2])]", op_errors.index_out_of_bounds(2, 0, 2)),
        # the index kernel numbers the dimension among the index tensors
        ("b = torch.ones(2, 4)[:, [1, 7]]", op_errors.index_out_of_bounds(7, 0, 4)),
        ("b = torch.ones(2, 4)[[0, 1], [0, 9]]", op_errors.index_out_of_bounds(9, 1, 4))],
        "IndexError"),
    *ops("SLICE_0_DIM", [
        ("b = torch.tensor(1.0)[1:]", op_errors.SLICE_0_DIM),
        ("a = torch.tensor(1.0); a[:] = 2.0", op_errors.SLICE_0_DIM)], "IndexError"),
    *ops("fill_dims", [
        ("a = torch.ones(3); a.fill_(torch.ones(1))", op_errors.fill_dims(1)),
        ("a = torch.ones(3); a.fill_(torch.ones(2, 2))", op_errors.fill_dims(2))],
        "RuntimeError"),
    *ops("index_put_dtypes", [
        ("a = torch.ones(3); a[[0, 1]] = torch.tensor(2)", op_errors.index_put_dtypes(
            "Float", "Long")),
        ("a = torch.ones(3, dtype=torch.float64); a[torch.tensor([1])] = torch.ones(1)",
         op_errors.index_put_dtypes("Double", "Float"))], "RuntimeError"),
    *ops("index_put_shape", [
        ("a = torch.ones(3); a[[0, 1]] = torch.ones(3)", op_errors.index_put_shape((3,), (2,))),
        ("a = torch.ones(2, 3); a[a > 0] = torch.ones(2, 1)",
         op_errors.index_put_shape((2, 1), (6,)))], "RuntimeError"),
    *ops("inplace_shape", [
        ("a = torch.ones(3); a.add_(torch.ones(2, 3))", op_errors.inplace_shape((3,), (2, 3))),
        ("a = torch.ones(2, 1); a.mul_(torch.ones(2, 3))",
         op_errors.inplace_shape((2, 1), (2, 3))),
        ("a = torch.ones(3); a.copy_(torch.ones(2, 3))", op_errors.inplace_shape((3,), (2, 3))),
        ("c = torch.ones(2, 3).masked_fill(torch.ones(2, 2, 3) > 0, 1.0)\nc.add_(1)\n"
         "d = torch.ones(2, 3).sub_(torch.ones(2, 2, 3))",
         op_errors.inplace_shape((2, 3), (2, 2, 3)))], "RuntimeError"),
    *ops("matmul_0d", [("c = torch.ones(2) @ torch.tensor(1.0)", op_errors.matmul_0d(1, 0)),
                       ("c = torch.tensor(1.0) @ torch.ones(2, 2)", op_errors.matmul_0d(0, 2)),
                       ("c = torch.tensor(1.0) @ torch.tensor(1.0)", op_errors.matmul_0d(0, 0))],
         "RuntimeError"),
    *ops("mean_of", [("c = torch.tensor([True, False]).mean()", op_errors.mean_of(BOOL)),
                     ("c = torch.tensor([1, 2]).mean()", op_errors.mean_of(I64))], "RuntimeError"),
    *ops("mixed_dtypes", [
        ("c = torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))",
         op_errors.mixed_dtypes("mm", of(F32, F64))),
        ("c = torch.mm(torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2))",
         op_errors.mixed_dtypes("mm", of(F64, F32))),
        ("c = torch.mv(torch.ones(2, 2), torch.ones(2, dtype=torch.float64))",
         op_errors.mixed_dtypes("addmv", of(F64, F32, F64))),
        ("c = torch.mm(torch.tensor([[1, 2]]), torch.ones(2, 2))",
         op_errors.mixed_dtypes("mm", of(I64, F32))),
        ("c = torch.addmm(torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2), "
         "torch.ones(2, 2))", op_errors.mixed_dtypes("addmm", of(F64, F32, F32))),
        ("y = nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.float64))",
         op_errors.mixed_dtypes("addmm", of(F32, F64, F32)))],
        "RuntimeError"),
    *ops("mm_shapes", [
        ("c = torch.mm(torch.ones(2, 3), torch.ones(2, 3))", op_errors.mm_shapes((2, 3), (2, 3))),
        ("c = torch.ones(4, 1) @ torch.ones(2, 5)", op_errors.mm_shapes((4, 1), (2, 5))),
        ("y = nn.Linear(3, 4)(torch.ones(2, 2))", op_errors.mm_shapes((2, 2), (3, 4)))],
        "RuntimeError"),
    *ops("mv_shapes", [
        ("c = torch.mv(torch.ones(2, 3), torch.ones(2))", op_errors.mv_shapes((2, 3), (2,))),
        ("c = torch.mv(torch.ones(4, 1), torch.ones(5))", op_errors.mv_shapes((4, 1), (5,))),
        ("c = torch.ones(2, 3) @ torch.ones(2)", op_errors.mv_shapes((2, 3), (2,))),
        ("c = torch.mv(torch.ones(3), torch.ones(3))", op_errors.mv_shapes((3,), (3,)))],
        "RuntimeError"),
    *ops("not_a_tensor_argument", [
        (A + "c = torch.maximum(a, 1.0)",
         op_errors.not_a_tensor_argument("maximum", "other", 2, 1.0)),
        (A + "c = torch.minimum(a, 2)", op_errors.not_a_tensor_argument("minimum", "other", 2, 2)),
        (A + "c = a.maximum(1.0)", op_errors.not_a_tensor_argument("maximum", "other", 1, 1.0))]),
    *ops("permute_length", [
        ("c = torch.ones(2, 3).permute(1, 0, 2)", op_errors.permute_length(2, 3)),
        ("c = torch.ones(2, 3, 4).permute(1, 0)", op_errors.permute_length(3, 2))],
        "RuntimeError"),
    *ops("randint_range", [
        ("torch.manual_seed(0); a = torch.randint(5, 3, (2,))", op_errors.randint_range(5, 3)),
        ("torch.manual_seed(0); a = torch.randint(3, 3, (2,))", op_errors.randint_range(3, 3)),
        ("a = torch.empty(2).random_(5, 2)", op_errors.randint_range(5, 2))], "RuntimeError"),
    *ops("stack_sizes", [("c = torch.stack([torch.ones(2), torch.ones(3)])",
                          op_errors.stack_sizes((2,), (3,), 1)),
                         ("c = torch.stack([torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 1)])",
                          op_errors.stack_sizes((2, 2), (2, 1), 2))], "RuntimeError"),
    *ops("t_of", [("c = torch.ones(2, 3, 4).t()", op_errors.t_of(3)),
                  ("c = torch.ones(2, 3, 4, 5).t()", op_errors.t_of(4))], "RuntimeError"),
    *ops("target_size", [
        (V + "F.binary_cross_entropy_with_logits(a, torch.ones(3))",
         op_errors.target_size((3,), (2,))),
        ("x = torch.ones(1, 2, requires_grad=True); F.binary_cross_entropy_with_logits(x, "
         "torch.ones(2))", op_errors.target_size((2,), (1, 2)))], "ValueError"),
    *ops("too_many_indices", [("b = torch.ones(2)[0, 1]", op_errors.too_many_indices(1, 2)),
                              ("b = torch.ones(2, 3)[0, 1, 2]", op_errors.too_many_indices(2, 3))],
         "IndexError"),
    # the reference's builders, for other values
    *ops("not_iterable", [(A + "torch.autograd.backward(3.0)", op_errors.not_iterable(3.0)),
                          (A + "torch.autograd.grad(a * 2, 2)", op_errors.not_iterable(2))]),
    *ops("not_a_tensor", [("a = torch.exp(2)", op_errors.not_a_tensor("exp", 2)),
                          ("a = torch.sigmoid([1.0])", op_errors.not_a_tensor("sigmoid", [1.0]))]),
    *ops("no_attribute", [("b = 3; b.backward()", op_errors.no_attribute(3, "backward")),
                          ("a = [1.0]; b = a.exp()", op_errors.no_attribute([1.0], "exp"))]),
]

# The lab's own refusals (a batched matmul, ...) are UnsupportedErrors, not PyTorch's
# messages: tests/test_bad_input.py has them.


def test_every_public_name_is_pinned() -> None:
    check_table(op_errors, PINNED, set(REF_BUILT), CASES)


@pytest.mark.parametrize("row", params(CASES, xfail=True))
def test_the_lab_ends_with_pytorchs_error(row: Case) -> None:
    assert lab_outcome(row.source) == row.outcome


@pytest.mark.torch
@pytest.mark.parametrize("row", params(CASES, xfail=False))
def test_pytorch_ends_with_that_error(row: Case, torch: Any) -> None:
    assert torch_outcome(row.source) == row.outcome
