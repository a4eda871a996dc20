"""Operators on the program's values, as Python dispatches them and torch.Tensor defines
them: a tensor on either side makes it a tensor op (`2 * a` is `a.__rmul__(2)`), two
Python values take Python's own operator, with the lab's limits on how big a number, a
list or a string may grow."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from app.language.size import Size
from app.language.values import ReturnTypes, Value, py_str, type_name
from app.limits import LimitExceeded
from engine import functions
from engine.errors import TorchError
from engine.functions import inplace, setitem
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

_PY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "@": operator.matmul,
}
_PLAIN = (bool, int, float, str, list, tuple, type(None), range)


def _tensor_binary(op: str, a: Value, b: Value) -> Tensor:
    """`a op b` with a tensor on at least one side, as torch/_tensor.py defines it."""
    if isinstance(a, Tensor):
        if not isinstance(b, (Tensor, bool, int, float)):
            raise _unsupported(op, a, b)
        if op == "+":
            return functions.add(a, b)
        if op == "-":
            return functions.sub(a, b)
        if op == "*":
            return functions.mul(a, b)
        if op == "/":
            return functions.div(a, b)
        if op == "**":
            return functions.pow(a, b)
        if op == "@":
            if not isinstance(b, Tensor):
                raise _unsupported(op, a, b)
            return functions.matmul(a, b)
        if op in ("&", "|", "^"):
            return functions.logical({"&": "and", "|": "or", "^": "xor"}[op], a, b)
        if op in ("//", "%"):
            return _rounding(op, a, b)
        raise _unsupported(op, a, b)
    assert isinstance(b, Tensor)
    if not isinstance(a, (bool, int, float)):
        raise _unsupported(op, a, b)
    if op == "+":
        return functions.add(b, a)
    if op == "-":
        return functions.rsub(b, a)
    if op == "*":
        return functions.mul(b, a)
    if op == "/":
        return functions.mul(functions.reciprocal(b), a)     # Tensor.__rdiv__
    if op == "**":
        return functions.pow_scalar_base(a, b)
    if op in ("&", "|", "^"):
        return functions.logical({"&": "and", "|": "or", "^": "xor"}[op], b, a)
    if op in ("//", "%"):
        from engine.functions._record import wrap

        return _rounding(op, wrap(a, b), b, reflected=True)
    raise _unsupported(op, a, b)


def _rounding(op: str, a: Tensor, b: Value, reflected: bool = False) -> Tensor:
    """`//` and `%` on tensors (`reflected`: `number op tensor`, the number wrapped as a)."""
    from engine.functions import rounding
    from engine.functions._record import result_type, wrap

    other = wrap(b, a)
    if not result_type(a, other).is_floating_point and not np.all(other.data):
        raise TorchError("RuntimeError", "ZeroDivisionError")    # ATen's integer kernels
    if op == "//":
        return rounding.floor_divide(a, other)
    return rounding.remainder(a, other, b_is_number=not isinstance(b, Tensor),
                              a_is_number=reflected)


def _unsupported(op: str, a: Value, b: Value) -> TorchError:
    return TorchError("TypeError", f"unsupported operand type(s) for {op}: "
                      f"'{type_name(a)}' and '{type_name(b)}'")


def binary(interp: Interpreter, op: str, a: Value, b: Value) -> Value:
    if op == "+" and isinstance(a, Size) and not isinstance(b, tuple):
        # torch.Size.__add__ raises itself, before the other operand's __radd__
        raise TorchError("TypeError", f"can only concatenate tuple (not {type_name(b)}) to "
                         "torch.Size")
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _tensor_binary(op, a, b)
    if not isinstance(a, _PLAIN) or not isinstance(b, _PLAIN):
        raise _unsupported(op, a, b)
    _check_growth(interp, op, a, b)
    try:
        result = _PY[op](a, b)
    except (ArithmeticError, TypeError, ValueError) as e:
        message = str(e)
        if isinstance(a, Size) or isinstance(b, Size):  # Python names the C type's tp_name
            message = message.replace("'Size'", "'torch.Size'").replace('"Size"',
                                                                        '"torch.Size"')
        raise TorchError(type(e).__name__, message) from None
    if isinstance(result, complex):
        raise TorchError("UnsupportedError", "this gives a complex number, which the lab does "
                         "not support")
    if isinstance(result, int) and not isinstance(result, bool) and \
            result.bit_length() > interp.limits.max_number_bits:
        raise LimitExceeded(f"this number is larger than {interp.limits.max_number_bits} bits, "
                            "the most the lab computes")
    if (isinstance(a, Size) or isinstance(b, Size)) and isinstance(result, tuple):
        return Size(result)             # torch.Size's __add__, __radd__, __mul__, __rmul__
    return result


def _check_growth(interp: Interpreter, op: str, a: Value, b: Value) -> None:
    """Refuse `2 ** 10 ** 10` and `[0] * 10**9` before Python spends the memory on them."""
    bits = interp.limits.max_number_bits
    if (op == "**" and isinstance(a, int) and isinstance(b, int) and b > 0
            and abs(a) > 1 and b * math.log2(abs(a)) > bits):
        raise LimitExceeded(f"this power is larger than {bits}-bit numbers, the most the lab "
                            "computes")
    if op == "*":
        for seq, n in ((a, b), (b, a)):
            if isinstance(seq, (list, tuple, str)) and isinstance(n, int) and \
                    len(seq) * n > interp.limits.max_elements:
                raise LimitExceeded(f"this makes a {type(seq).__name__} of {len(seq) * n} "
                                    f"items; the lab allows {interp.limits.max_elements}")
    if op == "+" and isinstance(a, (list, tuple, str)) and isinstance(b, (list, tuple, str)):
        interp.check_length(len(a) + len(b))


def unary(interp: Interpreter, op: str, value: Value) -> Value:
    if op == "not":
        return not interp.truth(value)
    if isinstance(value, Tensor):
        if op == "-":
            return functions.neg(value)
        if op == "+":
            return value
        return functions.logical("not", value)
    if isinstance(value, (bool, int, float)):
        if op == "-":
            return -value
        if op == "+":
            return +value
        if isinstance(value, float):
            raise TorchError("TypeError", "bad operand type for unary ~: 'float'")
        return ~value
    raise TorchError("TypeError", f"bad operand type for unary {op}: '{type_name(value)}'")


_COMPARE = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_PY_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}


def compare(interp: Interpreter, op: str, a: Value, b: Value) -> Value:
    if op == "is":
        return a is b
    if op == "is not":
        return a is not b
    if op in ("in", "not in"):
        found = contains(interp, b, a)
        return found if op == "in" else not found
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if a is None or b is None:
            return op == "!="                  # Tensor.__eq__(None) is False
        tensor, other, flipped = (a, b, False) if isinstance(a, Tensor) else (b, a, True)
        if not isinstance(other, (Tensor, bool, int, float)):
            if op in ("==", "!="):
                return op == "!="
            raise TorchError("TypeError", f"'{op}' not supported between instances of "
                             f"'{type_name(a)}' and '{type_name(b)}'")
        name = _COMPARE[op]
        if flipped:
            name = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(name, name)
        return functions.compare(name, tensor, other)
    if (not isinstance(a, (*_PLAIN, dict)) or not isinstance(b, (*_PLAIN, dict))) and \
            op in ("==", "!="):
        return (a is b) == (op == "==")
    try:
        return _PY_COMPARE[op](a, b)
    except TypeError as e:
        raise TorchError("TypeError", str(e)) from None


def contains(interp: Interpreter, container: Value, item: Value) -> bool:
    if isinstance(container, (list, tuple)):
        return any(x is item or interp.truth(compare(interp, "==", x, item))
                   for x in container)
    if isinstance(container, dict):
        return item in container
    if isinstance(container, str):
        if not isinstance(item, str):
            raise TorchError("TypeError", "'in <string>' requires string as left operand, not "
                             f"{type_name(item)}")
        return item in container
    if isinstance(container, range):
        return item in container
    if isinstance(container, Tensor):          # torch/_tensor.py `__contains__`
        if not isinstance(item, (Tensor, int, float)):
            raise TorchError("RuntimeError", "Tensor.__contains__ only supports Tensor or "
                             f"scalar, but you passed in a <class '{type_name(item)}'>.")
        return bool(functions.compare("eq", container, item).data.any())
    test = getattr(container, "lab_contains", None)
    if callable(test):
        return bool(test(interp, item))
    raise TorchError("TypeError", f"argument of type '{type_name(container)}' is not iterable")


_INPLACE: dict[str, Callable[[Tensor, Any], Tensor]] = {
    "+": functions.add, "-": functions.sub, "*": functions.mul, "/": functions.div,
}


def inplace_binary(interp: Interpreter, op: str, current: Value, value: Value) -> Value:
    """`x op= value`: in place for a tensor (`x += 1` is `x.add_(1)`) and a list; for
    everything else Python rebinds the name to the result."""
    if isinstance(current, Tensor):
        kernel = _INPLACE.get(op)
        if kernel is None:
            if op == "**":
                return inplace.inplace(current, lambda before: functions.pow(before, value))
            raise TorchError("TypeError", f"unsupported operand type(s) for {op}=: 'Tensor' "
                             f"and '{type_name(value)}'")
        if not isinstance(value, (Tensor, bool, int, float)):
            raise _unsupported(op + "=", current, value)
        return inplace.inplace(current, lambda before: kernel(before, value))
    if isinstance(current, list) and op == "+":
        items = list(interp.iterate(value))
        interp.check_length(len(current) + len(items))
        current.extend(items)
        return current
    return binary(interp, op, current, value)


def index_parts(interp: Interpreter, index: Value) -> Value:
    """A tensor's index as the engine takes it (a range is a list of ints)."""
    parts = index if isinstance(index, tuple) else (index,)
    out: list[Value] = []
    for p in parts:
        if isinstance(p, range):         # a sequence of ints, as a list (d2l's y_hat[range(n), y])
            p = list(p)
        if isinstance(p, (bool, int, slice, Tensor, list)) or p is None or p is Ellipsis:
            if isinstance(p, list) and any(not isinstance(v, int) for v in p):
                raise TorchError("UnsupportedError", "the lab indexes tensors with lists of ints")
            out.append(p)
        elif isinstance(p, str):         # PyTorch tries to make an index tensor of it
            raise TorchError("TypeError", "new(): invalid data type 'str'")
        else:
            raise TorchError("IndexError", "only integers, slices (`:`), ellipsis (`...`), "
                             "None and long or byte Variables are valid indices (got "
                             f"{type_name(p)})")
    return tuple(out) if isinstance(index, tuple) else out[0]


def _python_index(value: Value) -> Value:
    if isinstance(value, Tensor):
        if value.numel() == 1 and not value.is_floating_point:
            return int(value.item())
        raise TorchError("TypeError", "only integer tensors of a single element can be "
                         "converted to an index")
    return value


def get_item(interp: Interpreter, obj: Value, index: Value) -> Value:
    if isinstance(obj, Tensor):
        return functions.getitem(obj, index_parts(interp, index))
    if isinstance(obj, ReturnTypes):
        obj = obj.items()
    if isinstance(obj, (list, tuple, str, range)):
        key = _python_index(index)
        try:
            result = obj[key]
        except (IndexError, TypeError) as e:
            raise TorchError(type(e).__name__, str(e)) from None
        if isinstance(obj, Size) and isinstance(key, slice):
            return Size(result)  # type: ignore[arg-type]
        return result
    if isinstance(obj, dict):
        try:
            return obj[index]
        except KeyError:
            raise TorchError("KeyError", py_str(repr(index) if isinstance(index, str) else
                                                index, interp.addresses)) from None
        except TypeError as e:
            raise TorchError("TypeError", str(e)) from None
    getitem = getattr(obj, "lab_getitem", None)
    if callable(getitem):
        return getitem(interp, index)
    raise TorchError("TypeError", f"'{type_name(obj)}' object is not subscriptable")


def set_item(interp: Interpreter, obj: Value, index: Value, value: Value) -> None:
    if isinstance(obj, Tensor):
        if not isinstance(value, (Tensor, bool, int, float)):
            raise TorchError("TypeError", f"can't assign a {type_name(value)} to a Tensor")
        setitem.setitem(obj, index_parts(interp, index), value)
        return
    if isinstance(obj, list):
        try:
            obj[_python_index(index)] = value
        except (IndexError, TypeError) as e:
            raise TorchError(type(e).__name__, str(e)) from None
        return
    if isinstance(obj, dict):
        obj[interp.hashable(index)] = value
        return
    setitem_of = getattr(obj, "lab_setitem", None)
    if callable(setitem_of):
        setitem_of(interp, index, value)
        return
    raise TorchError("TypeError", f"'{type_name(obj)}' object does not support item "
                     "assignment")


def format_value(interp: Interpreter, value: Value, spec: str) -> str:
    """`format(value, spec)` inside an f-string: a 0-d tensor formats its `.item()`."""
    if isinstance(value, Tensor):
        if value.ndim == 0:
            value = value.item()
        elif spec:
            raise TorchError("TypeError", "unsupported format string passed to "
                             "Tensor.__format__")
        else:
            return py_str(value, interp.addresses)
    if isinstance(value, (bool, int, float, str)):
        try:
            return format(value, spec)
        except ValueError as e:
            raise TorchError("ValueError", str(e)) from None
    if spec:
        raise TorchError("TypeError", f"unsupported format string passed to "
                         f"{type_name(value)}.__format__")
    return py_str(value, interp.addresses)
