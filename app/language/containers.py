"""The methods of Python's lists, dicts, tuples and strings that tutorial code calls
around autograd (`losses.append(loss.item())`, `", ".join(names)`), each written out so
that no method is looked up on a Python object by name."""

from __future__ import annotations

import string
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from app.language.size import Size
from app.language.values import Builtin, Value, py_str, type_name
from engine.errors import TorchError

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Args = list[Value]
Kwargs = dict[str, Value]


def _no_kwargs(name: str, kwargs: Kwargs) -> None:
    kwargs.pop("__text__", None)
    if kwargs:
        raise TorchError("TypeError", f"{name}() takes no keyword arguments")


def _count(name: str, args: Args, low: int, high: int) -> None:
    n = len(args) - 1
    if not low <= n <= high:
        takes = "exactly one argument" if low == high == 1 else f"from {low} to {high} arguments"
        raise TorchError("TypeError", f"{name}() takes {takes} ({n} given)")


def _python(call: Any) -> Any:
    try:
        return call()
    except (IndexError, KeyError, ValueError, TypeError) as e:
        raise TorchError(type(e).__name__, str(e) if not isinstance(e, KeyError)
                         else repr(e.args[0])) from None


# -- list --------------------------------------------------------------------------------

def _append(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    _no_kwargs("append", kwargs)
    _count("list.append", args, 1, 1)
    lst = args[0]
    interp.check_length(len(lst) + 1)
    lst.append(args[1])


def _extend(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    _no_kwargs("extend", kwargs)
    _count("list.extend", args, 1, 1)
    items = list(interp.iterate(args[1]))
    interp.check_length(len(args[0]) + len(items))
    args[0].extend(items)


def _pop(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("pop", kwargs)
    if isinstance(args[0], dict):
        return _python(lambda: args[0].pop(*args[1:]))
    return _python(lambda: args[0].pop(*args[1:]))


def _insert(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    _no_kwargs("insert", kwargs)
    _count("insert", args, 2, 2)
    interp.check_length(len(args[0]) + 1)
    args[0].insert(args[1], args[2])


def _index_of(interp: Interpreter, args: Args, kwargs: Kwargs) -> int:
    from app.language.operators import compare

    _no_kwargs("index", kwargs)
    seq, item = args[0], args[1]
    for i, x in enumerate(seq):
        if x is item or interp.truth(compare(interp, "==", x, item)):
            return i
    raise TorchError("ValueError", f"{py_str(item, interp.addresses)} is not in list"
                     if isinstance(seq, list) else "tuple.index(x): x not in tuple")


def _count_of(interp: Interpreter, args: Args, kwargs: Kwargs) -> int:
    from app.language.operators import compare

    _no_kwargs("count", kwargs)
    return sum(1 for x in args[0]
               if x is args[1] or interp.truth(compare(interp, "==", x, args[1])))


def _remove(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    args[0].pop(_index_of(interp, args, kwargs))


def _clear(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    _no_kwargs("clear", kwargs)
    args[0].clear()


def _copy(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("copy", kwargs)
    return args[0].copy()


def _reverse(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    _no_kwargs("reverse", kwargs)
    args[0].reverse()


def _sort(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    from app.language.builtins import sorted_values

    kwargs.pop("__text__", None)
    args[0][:] = sorted_values(interp, args[0], kwargs.get("key"),
                               bool(kwargs.get("reverse", False)))


# -- dict --------------------------------------------------------------------------------

class DictView:
    """`d.keys()`, `d.values()`, `d.items()`: live views of the dict, which print as
    Python's (`dict_keys(['a'])`, and a state_dict's `odict_keys([...])`), not as lists."""

    def __init__(self, mapping: dict[Any, Value], kind: str) -> None:
        self.mapping = mapping
        self.kind = kind

    @property
    def lab_type_name(self) -> str:
        return ("odict_" if isinstance(self.mapping, OrderedDict) else "dict_") + self.kind

    def lab_iter(self) -> list[Value]:
        if self.kind == "keys":
            return list(self.mapping.keys())
        if self.kind == "values":
            return list(self.mapping.values())
        return list(self.mapping.items())

    def lab_len(self) -> int:
        return len(self.mapping)

    def lab_contains(self, interp: Interpreter, item: Value) -> bool:
        if self.kind == "keys":
            return interp.hashable(item) in self.mapping
        from app.language.operators import contains

        return contains(interp, self.lab_iter(), item)

    def lab_repr(self, addresses: Any) -> str:
        from app.language.values import py_repr

        return f"{self.lab_type_name}({py_repr(self.lab_iter(), addresses)})"


def _items(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("items", kwargs)
    return DictView(args[0], "items")


def _keys(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("keys", kwargs)
    return DictView(args[0], "keys")


def _values(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("values", kwargs)
    return DictView(args[0], "values")


def _get(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("get", kwargs)
    _count("get", args, 1, 2)
    return args[0].get(interp.hashable(args[1]), args[2] if len(args) > 2 else None)


def _update(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    kwargs.pop("__text__", None)
    if len(args) > 1:
        other = args[1]
        args[0].update(other if isinstance(other, dict) else dict(interp.iterate(other)))
    args[0].update(kwargs)


def _setdefault(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    _no_kwargs("setdefault", kwargs)
    return args[0].setdefault(interp.hashable(args[1]), args[2] if len(args) > 2 else None)


# -- str ---------------------------------------------------------------------------------

def _join(interp: Interpreter, args: Args, kwargs: Kwargs) -> str:
    _no_kwargs("join", kwargs)
    parts = list(interp.iterate(args[1]))
    for i, p in enumerate(parts):
        if not isinstance(p, str):
            raise TorchError("TypeError", f"sequence item {i}: expected str instance, "
                             f"{type_name(p)} found")
    interp.check_length(sum(len(p) for p in parts))
    return str(args[0]).join(parts)


def _format(interp: Interpreter, args: Args, kwargs: Kwargs) -> str:
    """`"{} {:.3f}".format(a, b)`: fields by position or keyword only (no `{0.attr}`)."""
    from app.language.operators import format_value

    kwargs.pop("__text__", None)
    text, values = args[0], args[1:]
    out: list[str] = []
    auto = 0
    for literal, field, spec, conversion in string.Formatter().parse(text):
        out.append(literal)
        if field is None:
            continue
        if field == "":
            key: Any = auto
            auto += 1
        elif field.isdigit():
            key = int(field)
        elif field.isidentifier():
            key = field
        else:
            raise TorchError("UnsupportedError", "the lab's str.format takes `{}`, `{0}` "
                             "and `{name}` fields only")
        try:
            value = values[key] if isinstance(key, int) else kwargs[key]
        except (IndexError, KeyError):
            raise TorchError("IndexError" if isinstance(key, int) else "KeyError",
                             f"Replacement index {key} out of range for positional args tuple"
                             if isinstance(key, int) else repr(key)) from None
        if conversion == "r":
            from app.language.values import py_repr

            value = py_repr(value, interp.addresses)
        elif conversion == "s":
            value = py_str(value, interp.addresses)
        out.append(format_value(interp, value, spec or ""))
    return "".join(out)


def _string_method(name: str) -> Builtin:
    """A str method whose arguments are all strings or ints: Python's own is safe."""

    def impl(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        _no_kwargs(name, kwargs)
        for a in args[1:]:
            if not isinstance(a, (str, int)) or isinstance(a, bool):
                raise TorchError("TypeError", f"{name}() argument must be str, not "
                                 f"{type_name(a)}")
        result = _python(lambda: getattr(str, name)(*args))
        if isinstance(result, str):
            interp.check_length(len(result))
        return result

    return Builtin(f"str.{name}", impl)


_STR_METHODS = ("split", "strip", "lstrip", "rstrip", "lower", "upper", "startswith",
                "endswith", "replace", "ljust", "rjust", "center", "title", "capitalize",
                "count", "find", "zfill")


def _numel(interp: Interpreter, args: Args, kwargs: Kwargs) -> int:
    _no_kwargs("numel", kwargs)
    return int(Size(args[0]).numel())


LIST: dict[str, Builtin] = {n: Builtin(f"list.{n}", f) for n, f in {
    "append": _append, "extend": _extend, "pop": _pop, "insert": _insert, "index": _index_of,
    "count": _count_of, "remove": _remove, "clear": _clear, "copy": _copy,
    "reverse": _reverse, "sort": _sort}.items()}
DICT: dict[str, Builtin] = {n: Builtin(f"dict.{n}", f) for n, f in {
    "items": _items, "keys": _keys, "values": _values, "get": _get, "pop": _pop,
    "update": _update, "setdefault": _setdefault, "copy": _copy, "clear": _clear}.items()}
TUPLE: dict[str, Builtin] = {"index": Builtin("tuple.index", _index_of),
                             "count": Builtin("tuple.count", _count_of)}
SIZE: dict[str, Builtin] = {**TUPLE, "numel": Builtin("Size.numel", _numel)}
STR: dict[str, Builtin] = {"join": Builtin("str.join", _join),
                           "format": Builtin("str.format", _format),
                           **{n: _string_method(n) for n in _STR_METHODS}}


def method(obj: Value, name: str) -> Builtin | None:
    """The container method `name` of obj, or None."""
    if isinstance(obj, list):
        return LIST.get(name)
    if isinstance(obj, dict):
        return DICT.get(name)
    if isinstance(obj, Size):
        return SIZE.get(name)
    if isinstance(obj, tuple):
        return TUPLE.get(name)
    if isinstance(obj, str):
        return STR.get(name)
    return None
