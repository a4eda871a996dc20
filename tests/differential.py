"""The lab against live PyTorch, one program at a time: what test_differential.py asserts.

`differences` (tests/matching.py) applies the conformance README's rules. `rounding_only`
is the escape hatch of the random tests, for differences that float32 rounding alone
decides: a grad outside the tolerance only where PyTorch's own float64 run of the
program is too (an ill-conditioned program); printed numbers within the grads'
tolerance or one unit of their last printed digit (numpy's float32 kernels differ from
PyTorch's by an ulp now and then), or any, on a line that PyTorch's own float64 run
prints with numbers far from its float32 run's. The text around the numbers must match
exactly, and so must the sign of a zero, but for the known family that
SIGNED_ZEROS_KNOWN names.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from app.trace import run_source
from tests.matching import differences, printed_text
from tests.torch_recorder import record

NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")


def lab(source: str) -> dict[str, Any]:
    return run_source(source).model_dump(mode="json")


def assert_same_as_torch(source: str) -> None:
    """The lab's trace of `source` equals live PyTorch's (tests/matching.py's rules)."""
    diffs = differences(lab(source), record(source))
    assert not diffs, report(source, diffs)


def _unit(text: str) -> float:
    """One unit in the last written digit of a number's text."""
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return 10.0 ** exponent if isinstance(exponent, int) else 0.0


# The lab's zeros once differed in sign from PyTorch's in two ways that many programs
# meet: a matrix product whose terms are all -0 (Note [Signs of zero products]) and relu
# of -0; both now agree (test_differential_known.py pins them), but for addmm with a bias
# of -0. Set this to False to see every difference of sign.
SIGNED_ZEROS_KNOWN = True


def _close(x: str, y: str) -> bool:
    """Within one unit of the last written digit, or within the grads' tolerance."""
    a, b = float(x), float(y)
    return abs(a - b) <= max(1.01 * max(_unit(x), _unit(y)), 1e-5 + 1e-4 * abs(b))


def _rounded(pairs: list[tuple[str, str]]) -> bool:
    """Numbers of a line that differ as float32 rounding makes them differ: each by no
    more than _close allows, in its form too (0.99999994 prints as 1.0000, 1.0 as 1.,
    and one value's noise prints a whole tensor in e-notation); but not a zero's sign,
    unless SIGNED_ZEROS_KNOWN. (How a value prints is test_printing.py's to check.)"""
    return all(_close(x, y) and (SIGNED_ZEROS_KNOWN or float(x) != 0 or float(y) != 0
                                 or x.startswith("-") == y.startswith("-"))
               for x, y in pairs)


def _skeleton(text: str) -> list[str]:
    return [" ".join(part.split()) for part in NUMBER.split(text)]


def _pairs(a: str, b: str) -> list[tuple[str, str]]:
    """The numbers of two lines of the same text, pair by pair, where they differ."""
    return [(x, y) for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True)
            if x != y]


def rounding_line(got: str, want: str, wide: str | None) -> bool:
    """A printed line that differs from PyTorch's only in digits that rounding decides:
    each number as _rounded allows, or any, where PyTorch's float64 run of the program
    (`wide`) prints numbers far from its float32 run's (an ill-conditioned line)."""
    got, want = printed_text(got), printed_text(want)
    if got == want:
        return True
    if _skeleton(got) != _skeleton(want):
        return False
    if _rounded(_pairs(got, want)):
        return True
    wide = printed_text(wide) if wide is not None else want
    return _skeleton(wide) == _skeleton(want) and not all(
        _close(x, y) for x, y in _pairs(wide, want))


def rounding_only(source: str, got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Only grads and printed numbers differ, each as float32 rounding alone can make
    them differ (see the module's docstring)."""
    diffs = differences(got, want)
    if not diffs or not all(d.startswith(("grads[", "printed:")) for d in diffs):
        return False
    wide = record(source, float64=True)
    if any(d.startswith("grads[") for d in diffs) and not differences(
            {**want, "grads": wide["grads"]}, want):
        return False
    printed, wanted = got.get("printed") or [], want.get("printed", [])
    widened = wide.get("printed", [])
    return len(printed) == len(wanted) and all(
        rounding_line(g, w, widened[i] if i < len(widened) else None)
        for i, (g, w) in enumerate(zip(printed, wanted, strict=True)))


def report(source: str, diffs: list[str]) -> str:
    return "\n".join([source.rstrip(), "----", *diffs, f"(source: {json.dumps(source)})"])
