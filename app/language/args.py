"""Binding a call's arguments to a builtin's parameters, with Python's and PyTorch's errors.

Each builtin declares its parameters once, as text in Python's own syntax
(`"input, dim=None, keepdim=False, *, dtype=None"`); the defaults are the lab's own
literals, read once with `ast.literal_eval`, never the program's text.
"""

from __future__ import annotations

import ast
from typing import Any

from engine.errors import TorchError

_MISSING = object()
# PyTorch's argument parser (python_arg_parser.cpp) takes NumPy's names for these
# parameters of every native function: `x.sum(axis=1)`, `x.mean(0, keepdims=True)`.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input",
               "x1": "input", "x2": "other"}


class Signature:
    """A builtin's parameters: positional-or-keyword ones, then keyword-only after `*`;
    `*args` collects extra positional arguments (as `torch.zeros(2, 3)` takes sizes)."""

    __slots__ = ("name", "names", "defaults", "keyword_only", "varargs", "python", "numpy")

    def __init__(self, name: str, spec: str, python: bool = False,
                 numpy: bool = False) -> None:
        self.name = name
        self.python = python          # Python's wording of a missing argument, not ATen's
        self.numpy = numpy            # a native function's: NumPy's names are aliases
        self.names: list[str] = []
        self.defaults: dict[str, Any] = {}
        self.keyword_only: set[str] = set()
        self.varargs: str | None = None
        keyword_only = False
        for part in _split(spec):
            if part == "*":
                keyword_only = True
                continue
            if part.startswith("*"):
                self.varargs = part[1:]
                keyword_only = True
                continue
            name, _, default = part.partition("=")
            name = name.strip()
            self.names.append(name)
            if default:
                self.defaults[name] = ast.literal_eval(default.strip())
            if keyword_only:
                self.keyword_only.add(name)

    def bind(self, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The arguments by parameter name, defaults filled in, or a TypeError."""
        out: dict[str, Any] = {}
        positional = [n for n in self.names if n not in self.keyword_only]
        extra = args[len(positional):]
        for name, value in zip(positional, args):  # noqa: B905 (Note [Plain zip])
            out[name] = value
        if extra:
            if self.varargs is None and self.python:      # a method: self counts
                most = len(positional) + 1
                least = most - sum(1 for n in positional if n in self.defaults)
                takes = f"{most}" if least == most else f"from {least} to {most}"
                raise TorchError("TypeError", f"{self.name}() takes {takes} positional "
                                 f"argument{'s' if most != 1 else ''} but {len(args) + 1} "
                                 "were given")
            if self.varargs is None:
                raise TorchError("TypeError", f"{self.name}() takes {len(positional)} positional "
                                 f"argument{'s' if len(positional) != 1 else ''} but "
                                 f"{len(args)} were given")
            out[self.varargs] = extra
        elif self.varargs is not None:
            out[self.varargs] = []
        if self.numpy:                  # a native function's: PythonArgParser's order
            self._check_native_keywords(out, kwargs)
        for key, value in kwargs.items():
            if self.numpy and key not in self.names and NUMPY_NAMES.get(key) in self.names:
                key = NUMPY_NAMES[key]
            if key == self.varargs:                     # torch.randn(size=(), ...)
                if out[key]:
                    raise TorchError("TypeError", f"{self.name}() got multiple values for "
                                     f"argument '{key}'")
                out[key] = [value]
                continue
            if key not in self.names:
                raise TorchError("TypeError", f"{self.name}() got an unexpected keyword "
                                 f"argument '{key}'")
            if key in out:
                raise TorchError("TypeError", f"{self.name}() got multiple values for "
                                 f"argument '{key}'")
            out[key] = value
        for name in self.names:
            if name not in out:
                if name not in self.defaults:
                    if self.python:
                        raise TorchError("TypeError", f"{self.name}() missing 1 required "
                                         f"positional argument: '{name}'")
                    raise TorchError("TypeError", f'{self.name}() missing 1 required positional '
                                     f'arguments: "{name}"')
                out[name] = self.defaults[name]
        return out


    def _check_native_keywords(self, given: dict[str, Any], kwargs: dict[str, Any]) -> None:
        """PythonArgParser's order where a keyword is unknown (FunctionSignature::parse):
        a required argument that is missing comes first, listed with every required one
        after it (`transpose() missing 2 required positional argument: "dim0", "dim1"`,
        its wording); then the first keyword that is not a parameter's own name, a NumPy
        alias included (`keepdims`), is the unexpected one."""
        def known(key: str) -> bool:
            return key in self.names or key == self.varargs or (
                self.numpy and NUMPY_NAMES.get(key) in self.names)

        if all(known(key) for key in kwargs):
            return
        aliases = {NUMPY_NAMES[k] for k in kwargs if self.numpy and k in NUMPY_NAMES}
        for i, name in enumerate(self.names):
            if name in given or name in kwargs or name in aliases or name in self.defaults:
                continue
            missing = [f'"{n}"' for n in self.names[i:] if n not in self.defaults]
            raise TorchError("TypeError", f"{self.name}() missing {len(missing)} required "
                             f"positional argument{'s' if len(missing) == 1 else ''}: "
                             f"{', '.join(missing)}")
        key = next(k for k in kwargs if k not in self.names and k != self.varargs)
        raise TorchError("TypeError", f"{self.name}() got an unexpected keyword argument "
                         f"'{key}'")


def _split(spec: str) -> list[str]:
    """The parameters of a spec, split at the commas outside brackets."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, c in enumerate(spec + ","):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            if spec[start:i].strip():
                parts.append(spec[start:i].strip())
            start = i + 1
    return parts


def sizes(name: str, args: list[Any], keyword: Any = None) -> tuple[int, ...]:
    """The sizes `torch.zeros(2, 3)`, `torch.zeros((2, 3))` and `torch.zeros([2, 3])` take."""
    if keyword is not None:
        if args:                        # torch.zeros(2, size=(3,))
            raise TorchError("TypeError", f"{name}() got multiple values for argument 'size'")
        args = [keyword]
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = list(args[0])
    out: list[int] = []
    for i, a in enumerate(args):
        if isinstance(a, bool) or not isinstance(a, int):
            kind = type(a).__name__
            raise TorchError("TypeError", f"{name}(): argument 'size' failed to unpack the object "
                             f"at pos {i + 1} with error \"type must be tuple of ints,but got "
                             f"{kind}\"")
        out.append(a)
    return tuple(out)
