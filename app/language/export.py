"""What kind of program this is, where the lab's shorthand acts, and the program written
out as plain PyTorch ("Copy as PyTorch").

CONTRACT §1: a program that imports torch is plain PyTorch and runs as written; one that
does not is in the lab's shorthand, where `w = 3.0` in the opening block means
`torch.tensor(3.0, requires_grad=True)` and a program without backward() ends with one
on its last assignment. The page shows both where they act, and the script below is
what a student pastes into Python to get the same numbers.
"""

from __future__ import annotations

from app.language.program import ShorthandLeaf


def leaf_expansion(number: int | float) -> str:
    """The constructor the shorthand stands for: exactly `torch.tensor(float(NUMBER),
    requires_grad=True)`, with the float written as Python writes it."""
    return f"torch.tensor({float(number)!r}, requires_grad=True)"


def as_pytorch(source: str, shorthand: list[ShorthandLeaf], implicit_output: str | None,
               leaves: list[str]) -> str:
    """The program as a runnable PyTorch script: `import torch` first, each shorthand
    leaf written in full, the implicit `backward()` written out, and a `print` of every
    leaf's `.grad` at the end, so that running it shows the lab's numbers.

    A plain program is already PyTorch: only the prints are added."""
    lines = source.splitlines()
    for leaf in sorted(shorthand, key=lambda s: (s.span.line, s.span.col), reverse=True):
        span = leaf.span
        if span.line != span.end_line:
            continue                  # a leaf line split over several lines: kept as is
        text = lines[span.line - 1]
        lines[span.line - 1] = (text[:span.col - 1] + f"{leaf.name} = {leaf.expanded}"
                                + text[span.end_col - 1:])
    out = list(lines)
    if not any(line.strip() == "import torch" for line in lines):
        out.insert(0, "import torch")
        if lines and lines[0].strip():
            out.insert(1, "")
    while out and not out[-1].strip():
        out.pop()
    if implicit_output is not None:
        out.append(f"{implicit_output}.backward()")
    if leaves:
        out.append("")
        out.extend(f'print("{name}.grad =", {name}.grad)' for name in leaves
                   if name.isidentifier())
    return "\n".join(out) + "\n"
