"""PyTorch's overloaded native functions, and the error its argument parser gives when a
call matches none of the overloads (`x.sum(dims=0)`):

    sum() received an invalid combination of arguments - got (dims=int, ), but expected one of:
     * (*, torch.dtype dtype = None)
     * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)

The lab declares each method with one signature (args.py), the union of its overloads; when
that signature refuses a call, this module says what PyTorch's PythonArgParser would:
`print_error` (python_arg_parser.cpp) and `format_invalid_args` (invalid_arguments.cpp),
ported as they are, quirks included. The overload lists are PyTorch 2.13's own, recorded
from it (the signatures its message lists, which are the non-hidden ones), never written by
hand.
"""

from __future__ import annotations

from typing import Any

from app.language.args import NUMPY_NAMES
from app.language.size import Size
from app.language.values import type_name
from engine.errors import TorchError

# The overloads that PyTorch 2.13 lists for the lab's Tensor methods (`x.sum`) and torch
# functions (`torch.sum`) that have more than one; recorded by calling each with twelve
# unknown keywords, which no overload takes, so that the message lists them all.
METHOD_OVERLOADS: dict[str, tuple[str, ...]] = {
    "bernoulli_": (
        "(Tensor p, *, torch.Generator generator = None)",
        "(float p = 0.5, *, torch.Generator generator = None)",
    ),
    "clamp": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "clamp_": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "clamp_max": (
        "(Tensor max)",
        "(Number max)",
    ),
    "clamp_min": (
        "(Tensor min)",
        "(Number min)",
    ),
    "clip": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "clip_": (
        "(Tensor min = None, Tensor max = None)",
        "(Number min = None, Number max = None)",
    ),
    "div": (
        "(Tensor other)",
        "(Tensor other, *, str rounding_mode)",
        "(Number other, *, str rounding_mode)",
    ),
    "div_": (
        "(Tensor other)",
        "(Tensor other, *, str rounding_mode)",
        "(Number other, *, str rounding_mode)",
    ),
    "divide": (
        "(Tensor other)",
        "(Tensor other, *, str rounding_mode)",
        "(Number other)",
        "(Number other, *, str rounding_mode)",
    ),
    "eq": (
        "(Tensor other)",
        "(Number other)",
    ),
    "fill_": (
        "(Tensor value)",
        "(Number value)",
    ),
    "ge": (
        "(Tensor other)",
        "(Number other)",
    ),
    "greater": (
        "(Tensor other)",
        "(Number other)",
    ),
    "gt": (
        "(Tensor other)",
        "(Number other)",
    ),
    "le": (
        "(Tensor other)",
        "(Number other)",
    ),
    "less": (
        "(Tensor other)",
        "(Number other)",
    ),
    "lt": (
        "(Tensor other)",
        "(Number other)",
    ),
    "masked_fill": (
        "(Tensor mask, Tensor value)",
        "(Tensor mask, Number value)",
    ),
    "max": (
        "()",
        "(Tensor other)",
        "(int dim, bool keepdim = False)",
    ),
    "mean": (
        "(*, torch.dtype dtype = None)",
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "min": (
        "()",
        "(Tensor other)",
        "(int dim, bool keepdim = False)",
    ),
    "multiply": (
        "(Tensor other)",
        "(Number other)",
    ),
    "ne": (
        "(Tensor other)",
        "(Number other)",
    ),
    "pow": (
        "(Tensor exponent)",
        "(Number exponent)",
    ),
    "pow_": (
        "(Tensor exponent)",
        "(Number exponent)",
    ),
    "prod": (
        "(*, torch.dtype dtype = None)",
        "(int dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "random_": (
        "(*, torch.Generator generator = None)",
        "(int from, int to, *, torch.Generator generator = None)",
        "(int to, *, torch.Generator generator = None)",
    ),
    "round": (
        "()",
        "(*, int decimals)",
    ),
    "round_": (
        "()",
        "(*, int decimals)",
    ),
    "squeeze": (
        "()",
        "(int dim)",
        "(tuple of ints dim)",
    ),
    "std": (
        "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
        "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
        "(bool unbiased = True)",
    ),
    "subtract": (
        "(Tensor other, *, Number alpha = 1)",
        "(Number other, Number alpha = 1)",
    ),
    "sum": (
        "(*, torch.dtype dtype = None)",
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)",
    ),
    "to": (
        "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
        "bool copy = False, *, torch.memory_format memory_format = None)",
        "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)",
        "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)",
    ),
    "true_divide": (
        "(Tensor other)",
        "(Number other)",
    ),
    "var": (
        "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
        "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
        "(bool unbiased = True)",
    ),
    "view": (
        "(torch.dtype dtype)",
        "(tuple of ints size)",
    ),
    "where": (
        "(Tensor condition, Tensor other)",
        "(Tensor condition, Number other)",
    ),
}
FUNCTION_OVERLOADS: dict[str, tuple[str, ...]] = {
    "addmm": (
        "(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, "
        "Tensor out = None)",
        "(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
        "Number alpha = 1, Tensor out = None)",
    ),
    "arange": (
        "(Number end, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
        "(Number start, Number end, Number step = 1, *, Tensor out = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
    ),
    "clamp": (
        "(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
        "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)",
    ),
    "clamp_max": (
        "(Tensor input, Tensor max, *, Tensor out = None)",
        "(Tensor input, Number max, *, Tensor out = None)",
    ),
    "clamp_min": (
        "(Tensor input, Tensor min, *, Tensor out = None)",
        "(Tensor input, Number min, *, Tensor out = None)",
    ),
    "clip": (
        "(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)",
        "(Tensor input, Number min = None, Number max = None, *, Tensor out = None)",
    ),
    "div": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
        "(Tensor input, Number other, *, str rounding_mode)",
    ),
    "divide": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
        "(Tensor input, Number other)",
        "(Tensor input, Number other, *, str rounding_mode)",
    ),
    "eq": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "eye": (
        "(int n, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
        "(int n, int m, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "ge": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "gt": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "le": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "linspace": (
        "(Tensor start, Tensor end, int steps, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(Number start, Tensor end, int steps, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(Tensor start, Number end, int steps, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(Number start, Number end, int steps, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "lt": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "masked_fill": (
        "(Tensor input, Tensor mask, Tensor value)",
        "(Tensor input, Tensor mask, Number value)",
    ),
    "max": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ),
    "mean": (
        "(Tensor input, *, torch.dtype dtype = None, Tensor out = None)",
        "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)",
    ),
    "min": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
    ),
    "mm": (
        "(Tensor input, Tensor mat2, *, Tensor out = None)",
        "(Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None)",
    ),
    "multiply": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other)",
    ),
    "ne": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other, *, Tensor out = None)",
    ),
    "normal": (
        "(Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
        "(Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)",
        "(float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
        "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
        "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
    ),
    "pow": (
        "(Tensor input, Tensor exponent, *, Tensor out = None)",
        "(Number self, Tensor exponent, *, Tensor out = None)",
        "(Tensor input, Number exponent, *, Tensor out = None)",
    ),
    "prod": (
        "(Tensor input, *, torch.dtype dtype = None)",
        "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)",
    ),
    "rand": (
        "(tuple of ints size, *, torch.Generator generator, Tensor out = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
        "(tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "rand_like": (
        "(Tensor input, *, torch.Generator generator, torch.memory_format memory_format = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
        "(Tensor input, *, torch.memory_format memory_format = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "randint": (
        "(int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
        "(int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(int low, int high, tuple of ints size, *, torch.Generator generator, "
        "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
        "(int low, int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "randn": (
        "(tuple of ints size, *, torch.Generator generator, Tensor out = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
        "(tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "randn_like": (
        "(Tensor input, *, torch.Generator generator, torch.memory_format memory_format = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)",
        "(Tensor input, *, torch.memory_format memory_format = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
    ),
    "randperm": (
        "(int n, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, "
        "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
        "bool requires_grad = False)",
        "(int n, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
        "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
    ),
    "result_type": (
        "(Tensor tensor, Tensor other)",
        "(Number scalar, Tensor tensor)",
        "(Tensor tensor, Number other)",
        "(Number scalar1, Number scalar2)",
    ),
    "round": (
        "(Tensor input, *, Tensor out = None)",
        "(Tensor input, *, int decimals, Tensor out = None)",
    ),
    "squeeze": (
        "(Tensor input)",
        "(Tensor input, int dim)",
        "(Tensor input, tuple of ints dim)",
    ),
    "std": (
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, "
        "Tensor out = None)",
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, "
        "bool keepdim = False, Tensor out = None)",
        "(Tensor input, bool unbiased = True)",
    ),
    "subtract": (
        "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
        "(Tensor input, Number other, Number alpha = 1)",
    ),
    "sum": (
        "(Tensor input, *, torch.dtype dtype = None)",
        "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)",
    ),
    "true_divide": (
        "(Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor input, Number other)",
    ),
    "var": (
        "(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, "
        "Tensor out = None)",
        "(Tensor input, tuple of ints dim = None, *, Number correction = None, "
        "bool keepdim = False, Tensor out = None)",
        "(Tensor input, bool unbiased = True)",
    ),
    "where": (
        "(Tensor condition)",
        "(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
        "(Tensor condition, Number self, Tensor other)",
        "(Tensor condition, Tensor input, Number other)",
        "(Tensor condition, Number self, Number other)",
    ),
}


# -- the argument parser's error ---------------------------------------------------------

class _Param:
    """One parameter of an overload as PythonArgParser sees it: `bool keepdim = False`."""

    __slots__ = ("name", "optional", "keyword_only")

    def __init__(self, name: str, optional: bool, keyword_only: bool) -> None:
        self.name = name
        self.optional = optional
        self.keyword_only = keyword_only


def _params(option: str) -> list[_Param]:
    """An overload's parameters, with their defaults and the `*` taken into account."""
    out: list[_Param] = []
    keyword_only = False
    for part in option[1:-1].split(", "):
        if not part:
            continue
        if part == "*":
            keyword_only = True
            continue
        declaration, _, default = part.partition(" = ")
        out.append(_Param(declaration.rsplit(" ", 1)[-1], bool(default), keyword_only))
    return out


def _given(param: _Param, kwargs: dict[str, Any], numpy: bool) -> str | None:
    """The keyword that gives a parameter, its own name or NumPy's (`axis` for `dim`)."""
    if param.name in kwargs:
        return param.name
    if numpy:
        for alias, name in NUMPY_NAMES.items():
            if name == param.name and alias in kwargs:
                return alias
    return None


def _accepts(params: list[_Param], args: list[Any], kwargs: dict[str, Any],
             numpy: bool) -> bool:
    """Whether an overload takes the call by its arguments' names and number alone."""
    positional = [p for p in params if not p.keyword_only]
    if len(args) > len(positional):
        return False
    used: set[str] = set()
    for i, p in enumerate(params):
        key = _given(p, kwargs, numpy)
        if key is not None:
            if i < len(args):
                return False
            used.add(key)
        elif i >= len(args) and not p.optional:
            return False
    return used == set(kwargs)


def _parse_error(name: str, params: list[_Param], args: list[Any], kwargs: dict[str, Any],
                 numpy: bool) -> str | None:
    """FunctionSignature::parse's error for its one plausible overload, where the names and
    number of the arguments decide it: a missing argument (before an unknown keyword), an
    unknown keyword, a keyword given positionally too. None when those are all right."""
    if len(args) > sum(1 for p in params if not p.keyword_only):
        return None
    for i, p in enumerate(params):
        if i >= len(args) and not p.optional and _given(p, kwargs, numpy) is None:
            missing = [f'"{q.name}"' for q in params[i:] if not q.optional]
            plural = "s" if len(missing) == 1 else ""       # sic: python_arg_parser.cpp
            return (f"{name}() missing {len(missing)} required positional argument{plural}: "
                    f"{', '.join(missing)}")
    names = [p.name for p in params]
    for key in kwargs:                  # extra_kwargs: NumPy's names are no parameter's
        if key not in names:
            return f"{name}() got an unexpected keyword argument '{key}'"
        if names.index(key) < len(args):
            return f"{name}() got multiple values for argument '{key}'"
    return None


def overload_error(name: str, options: tuple[str, ...], args: list[Any],
                   kwargs: dict[str, Any], numpy: bool = True) -> TorchError | None:
    """PythonArgParser::print_error for a call that the lab's signature refused, or None
    where PyTorch would take the call (the lab's own error then stands). With one plausible
    overload (by the number of arguments) PyTorch gives that overload's parse error;
    otherwise the listing of all of them (only with one keyword at most: PyTorch lists
    several in the order of a C++ unordered_map, which the lab does not reproduce)."""
    count = len(args) + len(kwargs)
    parsed = [_params(o) for o in options]
    if any(_accepts(p, args, kwargs, numpy) for p in parsed):
        return None
    plausible = [p for p in parsed
                 if sum(1 for q in p if not q.optional) <= count <= len(p)]
    if len(plausible) == 1:
        message = _parse_error(name, plausible[0], args, kwargs, numpy)
        return None if message is None else TorchError("TypeError", message)
    if len(kwargs) > 1:
        return None
    message = format_invalid_args(name, options, args, kwargs)
    return None if message is None else TorchError("TypeError", message)


def format_invalid_args(name: str, options: tuple[str, ...], args: list[Any],
                        kwargs: dict[str, Any]) -> str | None:
    """invalid_arguments.cpp's listing, for a function with several overloads. Its option
    parser splits an overload at ", " and names each argument by its last word, so `*` is an
    argument and `bool keepdim = False` one named `False`; the counts and keyword matches
    below follow it, as do its messages."""
    keys = list(kwargs)
    text = [f"{name}() received an invalid combination of arguments - got "
            f"{_arg_desc(args, kwargs, keys)}, but expected one of:\n"]
    for option in options:
        text.append(f" * {option}\n")
        arguments = option[1:-1].split(", ")
        if len(arguments) != len(args) + len(kwargs):       # _argcountMatch
            continue
        start = max(0, len(arguments) - len(kwargs))
        names = [a.rsplit(" ", 1)[-1] for a in arguments[start:]]
        unmatched = [k for k in keys if k not in names]
        if unmatched:
            text.append("      didn't match because some of the keywords were incorrect: "
                        f"{', '.join(unmatched)}\n")
            continue
        described = _formatted_arg_desc(arguments, args, kwargs)
        if described is None:
            return None
        text.append("      didn't match because some of the arguments have invalid types: "
                    f"{described}\n")
    return "".join(text)


def _arg_desc(args: list[Any], kwargs: dict[str, Any], keys: list[str]) -> str:
    """`_argDesc`: `(int, dims=int)`, or `(dims=int, )` without positional arguments (the
    trailing comma is only taken off after one)."""
    parts = [type_name(a) + ", " for a in args] + [f"{k}={type_name(kwargs[k])}, " for k in keys]
    text = "".join(parts)
    return "(" + (text[:-2] if args else text) + ")"


def _matches(declaration: str, value: Any) -> bool:
    """invalid_arguments.cpp's type match: the type is the text before the last space."""
    kind = declaration.rsplit(" ", 1)[0] if " " in declaration else ""
    got = type_name(value)
    if kind == "float":
        return got in ("float", "int")
    if kind == "int":
        return got == "int"
    return got == kind


def _formatted_arg_desc(arguments: list[str], args: list[Any],
                        kwargs: dict[str, Any]) -> str | None:
    """`_formattedArgDesc`, without a terminal's colours: a mismatched argument `!int!`.
    None where PyTorch's own code would fail (a keyword not at its argument's place)."""
    parts: list[str] = []
    for i in range(len(args) + len(kwargs)):
        is_kwarg = i >= len(args)
        label = ""
        if is_kwarg:
            label = arguments[i].rsplit(" ", 1)[-1]
            if label not in kwargs:
                return None
            value = kwargs[label]
            label += "="
        else:
            value = args[i]
        if isinstance(value, (tuple, list)) and not isinstance(value, Size):
            inner = ", ".join(type_name(v) for v in value)
            if isinstance(value, tuple):
                inner = "(" + inner + ("," if len(value) == 1 else "") + ")"
            else:
                inner = "[" + inner + "]"
            desc = f"{type_name(value)} of {inner}"
        else:
            desc = type_name(value)
        mark = "" if _matches(arguments[i], value) else "!"
        parts.append(f"{mark}{label}{desc}{mark}, ")
    text = "".join(parts)
    return "(" + (text[:-2] if args else text) + ")"
