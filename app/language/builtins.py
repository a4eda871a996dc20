"""Python's builtins that tutorial code writes around autograd, and the `math` module.

Each is the lab's own function over the program's values: `len(t)` is a tensor's first
dimension, `sum(losses)` adds with the program's own `+` (so a list of tensors records
AddBackward0 nodes, as in PyTorch), `float(t)` is `t.item()` for a one-element tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from app.language.size import Size
from app.language.values import (
    Builtin,
    ClassBuiltin,
    Namespace,
    PyType,
    ReturnTypes,
    Value,
    py_repr,
    py_str,
    type_name,
)
from engine import functions, op_errors
from engine.dtypes import DType
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def _plain(kwargs: Kwargs) -> Kwargs:
    kwargs.pop("__text__", None)
    return kwargs


def _no_keywords(name: str, kwargs: Kwargs) -> None:
    if _plain(kwargs):
        raise TorchError("TypeError", f"{name}() takes no keyword arguments")


def _one(name: str, args: Args, kwargs: Kwargs) -> Value:
    """The one argument of abs, any and all, which CPython takes as `METH_O`: its errors."""
    _no_keywords(name, kwargs)
    if len(args) != 1:
        raise TorchError("TypeError", f"{name}() takes exactly one argument ({len(args)} given)")
    return args[0]


def _expected(name: str, args: Args, kwargs: Kwargs, count: int, keywords: bool = False
              ) -> None:
    """sorted, reversed, filter, divmod and staticmethod count their own positional
    arguments in CPython (and, but sorted, take no keywords): their errors."""
    if not keywords:
        _no_keywords(name, kwargs)
    if len(args) != count:
        raise TorchError("TypeError", f"{name} expected {count} argument"
                         f"{'s' if count > 1 else ''}, got {len(args)}")


def _parameters(name: str, args: Args, kwargs: Kwargs, names: tuple[str, ...], required: int,
                keyword_only: tuple[str, ...] = (), positional_only: int = 0) -> list[Value]:
    """The parameters of a builtin that CPython parses with Argument Clinic (sum, round,
    pow, math.isclose): `names` by position or keyword (the first `positional_only` by
    position only), the first `required` of them needed, then `keyword_only`; absent ones
    are None. The TypeErrors are _PyArg_UnpackKeywords' (Python 3.11), in its order."""
    kwargs = _plain(kwargs)
    most, given = len(names) + len(keyword_only), len(args) + len(kwargs)
    if given > most:
        raise TorchError("TypeError", f"{name}() takes at most {most} "
                         f"{'' if args else 'keyword '}argument{'s' * (most != 1)} "
                         f"({given} given)")
    if len(args) > len(names) or len(args) < positional_only:
        bound = len(names) if len(args) > len(names) else positional_only
        word = "exactly" if required == len(names) else ("at most" if bound == len(names)
                                                          else "at least")
        raise TorchError("TypeError", f"{name}() takes {word} {bound} positional "
                         f"argument{'s' * (bound != 1)} ({len(args)} given)")
    for i in range(len(args), required):
        if names[i] not in kwargs:
            raise TorchError("TypeError",
                             f"{name}() missing required argument '{names[i]}' (pos {i + 1})")
    for i, param in enumerate(names[positional_only:len(args)], positional_only):
        if param in kwargs:
            raise TorchError("TypeError", f"argument for {name}() given by name ('{param}') "
                             f"and position ({i + 1})")
    known = names[max(len(args), positional_only):] + keyword_only
    for key in kwargs:
        if key not in known:
            raise TorchError("TypeError", f"'{key}' is an invalid keyword argument for {name}()")
    return list(args) + [kwargs.get(n) for n in names[len(args):] + keyword_only]


def _print(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    kwargs = _plain(kwargs)
    sep, end = kwargs.pop("sep", " "), kwargs.pop("end", "\n")
    kwargs.pop("flush", None)
    if kwargs.pop("file", None) is not None:
        raise TorchError("UnsupportedError",
                         "the lab's print writes to the console only (no file=)")
    if kwargs:
        raise TorchError("TypeError", f"'{next(iter(kwargs))}' is an invalid keyword argument "
                         "for print()")
    sep = " " if sep is None else sep
    end = "\n" if end is None else end
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TorchError("TypeError", "sep must be None or a string")
    interp.print(args, sep, end)


def as_index(value: Value) -> int:
    """`operator.index`: ints, bools and one-element integer tensors."""
    if isinstance(value, Tensor) and value.numel() == 1 and not value.is_floating_point:
        return int(value.item())
    if isinstance(value, int):
        return int(value)
    raise TorchError("TypeError", f"'{type_name(value)}' object cannot be interpreted as an "
                     "integer")


def _range(interp: Interpreter, args: Args, kwargs: Kwargs) -> range:
    _no_keywords("range", kwargs)
    if not 1 <= len(args) <= 3:
        raise TorchError("TypeError", f"range expected at most 3 arguments, got {len(args)}"
                         if args else "range expected at least 1 argument, got 0")
    bounds = [as_index(a) for a in args]
    try:
        return range(*bounds)
    except ValueError as e:
        raise TorchError("ValueError", str(e)) from None


def _len(interp: Interpreter, args: Args, kwargs: Kwargs) -> int:
    _no_keywords("len", kwargs)
    if len(args) != 1:
        raise TorchError("TypeError", f"len() takes exactly one argument ({len(args)} given)")
    value = args[0]
    if isinstance(value, Tensor):
        if value.ndim == 0:
            raise TorchError("TypeError", "len() of a 0-d tensor")
        return value.shape[0]
    if isinstance(value, (list, tuple, str, dict, range)):
        return len(value)
    if isinstance(value, ReturnTypes):
        return 2
    length = getattr(value, "lab_len", None)
    if callable(length):
        return int(length())
    raise TorchError("TypeError", f"object of type '{type_name(value)}' has no len()")


def _zip(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`zip(...)`: Python's own lazy zip object over the arguments' iterators (`next(zip(a,
    b))` works, `len(zip(a, b))` does not); `strict=True` lists them first to compare."""
    strict = bool(_plain(kwargs).pop("strict", False))
    iterators = [interp.iterate(a) for a in args]
    if not strict:
        return zip(*iterators, strict=False)
    lists = [list(i) for i in iterators]
    for n, items in enumerate(lists[1:], 2):
        if len(items) != len(lists[0]):
            shorter = "shorter" if len(items) < len(lists[0]) else "longer"
            raise TorchError("ValueError", f"zip() argument {n} is {shorter} than "
                             + ("argument 1" if n == 2 else f"arguments 1-{n - 1}"))
    return zip(*lists, strict=False)


def _enumerate(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """enumerate(iterable, start=0), its arguments checked as CPython 3.11's
    enum_vectorcall checks them: each keyword must be the parameter at its place."""
    kwargs = _plain(kwargs)
    given = len(args) + len(kwargs)
    if given > 2 or not given:
        raise TorchError("TypeError", f"enumerate() takes at most 2 arguments ({given} given)"
                         if args else "enumerate() missing required argument 'iterable'")
    order = ("iterable", "start")
    if len(kwargs) == 2 and next(iter(kwargs)) == "start":
        order = ("start", "iterable")               # both by name: either order
    for i, key in enumerate(kwargs):
        if key != order[len(args) + i]:
            raise TorchError("TypeError", f"'{key}' is an invalid keyword argument for "
                             "enumerate()")
    values = [*args, *(kwargs[name] for name in ("iterable", "start") if name in kwargs)]
    start = as_index(values[1]) if given == 2 else 0         # before the iterable, as Python
    return enumerate(interp.iterate(values[0]), start)


def _extreme(largest: bool) -> Callable[[Interpreter, Args, Kwargs], Value]:
    name = "max" if largest else "min"

    def impl(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        from app.language.operators import compare

        kwargs = _plain(kwargs)
        key = kwargs.pop("key", None)
        has_default = "default" in kwargs
        default = kwargs.pop("default", None)
        if not args:
            raise TorchError("TypeError", f"{name} expected at least 1 argument, got 0")
        items = list(interp.iterate(args[0])) if len(args) == 1 else list(args)
        if not items:
            if has_default:
                return default
            raise TorchError("ValueError", f"{name}() arg is an empty sequence")   # 3.11
        best = items[0]
        best_key = interp.call(key, [best], {}) if key is not None else best
        for item in items[1:]:
            k = interp.call(key, [item], {}) if key is not None else item
            if interp.truth(compare(interp, ">" if largest else "<", k, best_key)):
                best, best_key = item, k
        return best

    return impl


def _sum(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.operators import binary

    _, start = _parameters("sum", args, kwargs, ("iterable", "start"), 1, positional_only=1)
    total = 0 if start is None else start
    if isinstance(total, str):
        raise TorchError("TypeError", "sum() can't sum strings [use ''.join(seq) instead]")
    for item in interp.iterate(args[0]):
        total = binary(interp, "+", total, item)
    return total


def _abs(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from engine import functions

    value = _one("abs", args, kwargs)
    if isinstance(value, Tensor):
        return functions.abs(value)
    # An int and a float apart: the compiled build (mypyc) narrows `isinstance(v, (int,
    # float))` to a float, and abs(-2) would be 2.0.
    if isinstance(value, int):
        return abs(value)
    if isinstance(value, float):
        return abs(value)
    raise TorchError("TypeError", f"bad operand type for abs(): '{type_name(value)}'")


def _round(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    value, digits = _parameters("round", args, kwargs, ("number", "ndigits"), 1)
    if isinstance(value, int):          # apart from float, as in _abs: round(3, 2) is 3
        return round(value) if digits is None else round(value, as_index(digits))
    if not isinstance(value, float):
        raise TorchError("TypeError", f"type {type_name(value)} doesn't define __round__ method")
    return round(value) if digits is None else round(value, as_index(digits))


def to_number(value: Value, kind: str) -> Value:
    """`float(x)` / `int(x)`: a one-element tensor gives its value (`Tensor.__float__`)."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise TorchError("ValueError", op_errors.ONLY_ONE_ELEMENT_TENSORS)
        value = value.item()
    if isinstance(value, (bool, int, float)):
        return float(value) if kind == "float" else int(value)
    if isinstance(value, str):
        try:
            return float(value) if kind == "float" else int(value)
        except ValueError as e:
            raise TorchError("ValueError", str(e)) from None
    raise TorchError("TypeError", f"{kind}() argument must be a string or a real number, not "
                     f"'{type_name(value)}'")


def _float(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return to_number(args[0], "float") if args else 0.0


def _int(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return to_number(args[0], "int") if args else 0


def _bool(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return interp.truth(args[0]) if args else False


def _str(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return py_str(args[0], interp.addresses) if args else ""


def _repr(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`repr(x)`: what `print` and `f"{x!r}"` show (a tensor's repr is its str)."""
    if kwargs:
        raise TorchError("TypeError", "repr() takes no keyword arguments")
    if len(args) != 1:
        raise TorchError("TypeError",
                         f"repr() takes exactly one argument ({len(args)} given)")
    return py_repr(args[0], interp.addresses)


def _list(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    items = list(interp.iterate(args[0])) if args else []
    interp.check_length(len(items))
    return items


def _tuple(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    return tuple(interp.iterate(args[0])) if args else ()


def _dict(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    out: dict[Value, Value] = {}
    if args:
        source = args[0]
        pairs = source.items() if isinstance(source, dict) else interp.iterate(source)
        for pair in pairs:
            k, v = list(interp.iterate(pair))
            out[interp.hashable(k)] = v
    out.update(_plain(kwargs))
    return out


def sorted_values(interp: Interpreter, items: list[Value], key: Value, reverse: bool
                  ) -> list[Value]:
    """A stable insertion sort with the program's `<` (lists are short here)."""
    from app.language.operators import compare

    keyed = [(interp.call(key, [x], {}) if key is not None else x, x) for x in items]
    out: list[tuple[Value, Value]] = []
    for pair in keyed:
        i = len(out)
        while i > 0 and interp.truth(compare(interp, ">" if reverse else "<", pair[0],
                                             out[i - 1][0])):
            i -= 1
        out.insert(i, pair)
    return [x for _, x in out]


def _sorted(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    kwargs = _plain(kwargs)
    _expected("sorted", args, kwargs, 1, keywords=True)
    items = list(interp.iterate(args[0]))
    for key in kwargs:
        if key not in ("key", "reverse"):       # list.sort's own check, once listed
            raise TorchError("TypeError", f"'{key}' is an invalid keyword argument for sort()")
    return sorted_values(interp, items, kwargs.get("key"),
                         bool(kwargs.get("reverse", False)))


def _reversed(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`reversed(x)`; a tensor's `__reversed__` is `x.flip(0)` (a 0-d one is itself)."""
    _expected("reversed", args, kwargs, 1)
    value = args[0]
    if isinstance(value, Tensor):
        return functions.flip(value, (0,)) if value.ndim else value
    if isinstance(value, (list, tuple, range, str, dict)):
        return reversed(value)                  # Python's own reverse iterators
    return reversed(list(interp.iterate(value)))


def _iter(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`iter(x)`: Python's iterator over the lab's iteration of x."""
    _no_keywords("iter", kwargs)
    if len(args) != 1:              # (iter(callable, sentinel) is not in the language)
        raise TorchError("TypeError", "iter expected at least 1 argument, got 0" if not args
                         else f"iter expected at most 1 argument, got {len(args)}")
    return interp.iterate(args[0])


def _next(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`next(iterator[, default])`: tutorials' `next(model.parameters())`."""
    _no_keywords("next", kwargs)
    if not 1 <= len(args) <= 2:
        raise TorchError("TypeError", f"next expected at least 1 argument, got {len(args)}"
                         if not args else f"next expected at most 2 arguments, got {len(args)}")
    step = getattr(args[0], "lab_next", None)
    if not callable(step) and not isinstance(args[0], Iterator):
        raise TorchError("TypeError", f"'{type_name(args[0])}' object is not an iterator")
    try:
        return step() if callable(step) else next(args[0])
    except StopIteration:
        if len(args) == 2:
            return args[1]
        raise TorchError("StopIteration", "") from None


def _any(interp: Interpreter, args: Args, kwargs: Kwargs) -> bool:
    return any(interp.truth(x) for x in interp.iterate(_one("any", args, kwargs)))


def _all(interp: Interpreter, args: Args, kwargs: Kwargs) -> bool:
    return all(interp.truth(x) for x in interp.iterate(_one("all", args, kwargs)))


def _map(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`map(f, *iterables)`: Python's lazy map object, f called as each item is drawn."""
    if kwargs:
        raise TorchError("TypeError", "map() takes no keyword arguments")
    if len(args) < 2:
        raise TorchError("TypeError", "map() must have at least two arguments.")
    f = args[0]
    return map(lambda *items: interp.call(f, list(items), {}),
               *[interp.iterate(a) for a in args[1:]])


def _filter(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`filter(f, iterable)`: Python's lazy filter object."""
    _expected("filter", args, kwargs, 2)
    f = args[0]
    return filter(lambda x: interp.truth(x if f is None else interp.call(f, [x], {})),
                  interp.iterate(args[1]))


def _isinstance(interp: Interpreter, args: Args, kwargs: Kwargs) -> bool:
    if len(args) != 2:
        raise TorchError("TypeError", f"isinstance expected 2 arguments, got {len(args)}")
    value, kinds = args
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        check = _instance_check(kind)
        if check is None:
            raise TorchError("TypeError", "isinstance() arg 2 must be a type, a tuple of types, "
                             "or a union")
        if check(value):
            return True
    return False


def _instance_check(kind: Value) -> Callable[[Value], bool] | None:
    """What isinstance() tests for a class: Python's and torch's types, the layers and
    optimizers (classes in PyTorch, functions here) and the program's `nn.Module` classes."""
    from app.language.nn_api import ModuleClass, UserModule

    if isinstance(kind, (PyType, ClassBuiltin)):
        return kind.check
    if isinstance(kind, ModuleClass):
        return lambda v: isinstance(v, UserModule) and v.cls is kind
    return None


def _type(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    if len(args) != 1:
        raise TorchError("UnsupportedError", "type() takes 1 argument in the lab")
    return type_of(args[0])


def _pow(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.operators import binary

    base, exp, mod = _parameters("pow", args, kwargs, ("base", "exp", "mod"), 2)
    if mod is None:
        return binary(interp, "**", base, exp)
    # Three-argument pow: only Python's ints take it (a tensor's __pow__ takes no modulus).
    operands = (base, exp, mod)
    if all(isinstance(v, int) for v in operands):
        try:
            return pow(base, exp, mod)  # type: ignore[misc]
        except ValueError as e:
            raise TorchError("ValueError", str(e)) from None
    if all(_is_number(v) for v in operands):
        raise TorchError("TypeError",
                         "pow() 3rd argument not allowed unless all arguments are integers")
    raise TorchError("TypeError", "unsupported operand type(s) for ** or pow(): "
                     + ", ".join(f"'{type_name(v)}'" for v in operands))


def _is_number(value: Value) -> bool:
    """A Python int or float (bools too). A function, so that the compiled build (mypyc)
    does not narrow its caller's value to a float, as `isinstance(v, (int, float))`
    would, and divmod(7, 2) would be (3.0, 1.0)."""
    return isinstance(value, (int, float))


def _divmod(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """Python's divmod of two numbers; a tensor has no __divmod__, so divmod refuses it."""
    _expected("divmod", args, kwargs, 2)
    a, b = args
    if _is_number(a) and _is_number(b):     # not narrowed: see _is_number
        try:
            return divmod(a, b)
        except ZeroDivisionError as e:
            raise TorchError("ZeroDivisionError", str(e)) from None
    raise TorchError("TypeError", "unsupported operand type(s) for divmod(): "
                     f"'{type_name(a)}' and '{type_name(b)}'")


def _super(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.classes import super_of

    return super_of(interp)


def _staticmethod(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _expected("staticmethod", args, kwargs, 1)
    return args[0]


def _simple_type(name: str, kind: type | tuple[type, ...],
                 make: Callable[[Interpreter, Args, Kwargs], Value]) -> PyType:
    def check(v: Value) -> bool:
        if kind is int and isinstance(v, bool):
            return True
        return isinstance(v, kind) and not (kind is int and isinstance(v, Tensor))

    return PyType(name, check, make)


INT = _simple_type("int", int, _int)
FLOAT = _simple_type("float", float, _float)
BOOL = _simple_type("bool", bool, _bool)
STR = _simple_type("str", str, _str)
LIST = _simple_type("list", list, _list)
TUPLE = PyType("tuple", lambda v: isinstance(v, (tuple, ReturnTypes)), _tuple)
DICT = _simple_type("dict", dict, _dict)
NONE_TYPE = PyType("NoneType", lambda v: v is None, None)


def type_of(value: Value) -> Value:
    """`type(x)`: the lab's type object for x, comparable with `is` and `==`."""
    from app.language.nn_api import NN_MEMBERS, Module, Optimizer, module_class, optimizer_class
    from app.language.torch_api import TENSOR_TYPE, TORCH_MEMBERS

    if isinstance(value, Size):                 # before tuple, whose subclass it is
        return TORCH_MEMBERS["Size"]
    if isinstance(value, ReturnTypes):          # a tuple's subclass too (a structseq)
        kind = RETURN_TYPES.get(value.kind)
        if kind is None:
            kind = RETURN_TYPES[value.kind] = PyType(f"torch.return_types.{value.kind}",
                                                     lambda v: False, None)
        return kind
    for kind in (BOOL, INT, FLOAT, STR, LIST, TUPLE, DICT, NONE_TYPE):
        if kind.check(value) and (kind is not INT or not isinstance(value, bool)):
            return kind
    if isinstance(value, Tensor):
        return NN_MEMBERS["Parameter"] if value.is_parameter else TENSOR_TYPE
    if isinstance(value, Module):
        return module_class(value)
    if isinstance(value, Optimizer):
        return optimizer_class(value)
    if isinstance(value, DType):
        return DTYPE_TYPE
    return PyType(type_name(value), lambda v: False, None)


# One type object per kind, so that `type(x.max(0)) is type(x.max(1))` as in PyTorch.
RETURN_TYPES: dict[str, PyType] = {}
DTYPE_TYPE = PyType("torch.dtype", lambda v: isinstance(v, DType), None)


def _b(name: str, impl: Callable[[Interpreter, Args, Kwargs], Value]) -> Builtin:
    return Builtin(name, impl)


BUILTINS: dict[str, Value] = {
    "print": _b("print", _print), "range": _b("range", _range), "len": _b("len", _len),
    "zip": _b("zip", _zip), "enumerate": _b("enumerate", _enumerate),
    "min": _b("min", _extreme(False)), "max": _b("max", _extreme(True)),
    "sum": _b("sum", _sum), "abs": _b("abs", _abs), "round": _b("round", _round),
    "isinstance": _b("isinstance", _isinstance), "type": _b("type", _type),
    "sorted": _b("sorted", _sorted), "reversed": _b("reversed", _reversed),
    "any": _b("any", _any), "all": _b("all", _all), "map": _b("map", _map),
    "filter": _b("filter", _filter), "pow": _b("pow", _pow), "divmod": _b("divmod", _divmod),
    "super": _b("super", _super), "staticmethod": _b("staticmethod", _staticmethod),
    "repr": _b("repr", _repr), "next": _b("next", _next), "iter": _b("iter", _iter),
    "int": INT, "float": FLOAT, "bool": BOOL, "str": STR, "list": LIST, "tuple": TUPLE,
    "dict": DICT, "True": True, "False": False, "None": None,
}


# -- math ---------------------------------------------------------------------------------

def _real(value: Value) -> float | int:
    if isinstance(value, Tensor):
        return to_number(value, "float")  # type: ignore[no-any-return]
    if isinstance(value, (bool, int, float)):
        return value
    raise TorchError("TypeError", f"must be real number, not {type_name(value)}")


def _math(name: str, arity: int | tuple[int, int] = 1, limit: int | None = None) -> Builtin:
    function = getattr(math, name)
    low, high = (arity, arity) if isinstance(arity, int) else arity

    def impl(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        _no_keywords(f"math.{name}", kwargs)
        if not low <= len(args) <= high:
            takes = "exactly one argument" if low == 1 == high else f"{low} arguments"
            raise TorchError("TypeError", f"{name}() takes {takes} ({len(args)} given)")
        values = [_real(a) for a in args]
        if limit is not None and any(abs(v) > limit for v in values):
            from app.limits import LimitExceeded

            raise LimitExceeded(f"math.{name} of numbers above {limit} is more than the lab "
                                "computes")
        try:
            return function(*values)
        except (ValueError, OverflowError, TypeError, ZeroDivisionError) as e:
            raise TorchError(type(e).__name__, str(e)) from None

    return Builtin(f"math.{name}", impl)


def _isclose(interp: Interpreter, args: Args, kwargs: Kwargs) -> bool:
    a, b, rel_tol, abs_tol = _parameters("isclose", args, kwargs, ("a", "b"), 2,
                                         ("rel_tol", "abs_tol"))
    return math.isclose(_real(a), _real(b),
                        rel_tol=1e-9 if rel_tol is None else float(_real(rel_tol)),
                        abs_tol=0.0 if abs_tol is None else float(_real(abs_tol)))


MATH = Namespace("math", {
    "pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan,
    **{n: _math(n) for n in ("sqrt", "exp", "log2", "log10", "log1p", "expm1", "sin", "cos",
                             "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor",
                             "ceil", "trunc", "fabs", "isnan", "isinf", "isfinite", "erf",
                             "erfc", "gamma", "lgamma", "degrees", "radians")},
    "log": _math("log", (1, 2)), "pow": _math("pow", 2), "atan2": _math("atan2", 2),
    "hypot": _math("hypot", 2), "copysign": _math("copysign", 2), "fmod": _math("fmod", 2),
    "factorial": _math("factorial", 1, limit=1000), "comb": _math("comb", 2, limit=1000),
    "perm": _math("perm", 2, limit=1000), "gcd": _math("gcd", 2),
    "isclose": Builtin("math.isclose", _isclose),
})

_UNUSED: Any = Size
