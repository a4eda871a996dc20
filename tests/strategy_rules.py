"""Hypothesis strategies for CONTRACT §1b, part one: grad modes, in-place operations and
training loops (tests/strategy_autograd.py has autograd.grad, hooks and custom Functions).

Every program is valid PyTorch and deterministic. Shapes always fit: the tensors of one
program share one shape (0-d or (3,)), so any elementwise expression of them is valid.
PyTorch's errors still come on purpose, as a course meets them: a backward of something
that does not require grad, an in-place change of a saved tensor or of a leaf, the truth
value of a vector, an inference tensor saved for backward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from tests.program_parts import (
    RATES,
    SMALL,
    VALUES,
    Code,
    Draw,
    chance,
    pick,
    pointwise,
    tensor,
)

MODES = ("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)",
         "torch.set_grad_enabled(True)", "torch.inference_mode()")
GRAD_ON = ("torch.enable_grad()", "torch.set_grad_enabled(True)")
STATE = ("requires_grad", "grad_fn", "is_leaf")


def _opening(draw: Draw, code: Code, shape: tuple[int, ...]) -> bool:
    """`import torch` (plain PyTorch) or not (the lab's shorthand); w, b require grad and
    x does not. True when the program is plain."""
    plain = bool(draw(st.booleans()))
    if plain:
        code.add("import torch")
    code.add(f"x = {tensor(draw, shape)}")
    code.add(f"w = {tensor(draw, shape, grad=True)}")
    if not plain and not shape and draw(st.booleans()):
        code.add(f"b = {pick(draw, VALUES)}")               # the leaf shorthand
    else:
        code.add(f"b = {tensor(draw, shape, grad=True)}")
    return plain


def _print_state(draw: Draw, code: Code, names: list[str]) -> None:
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
    code.add("print(" + ", ".join(f"{n}.{pick(draw, STATE)}" for n in chosen) + ")")


def _mode_block(draw: Draw, code: Code, names: list[str], depth: int,
                inside_inference: bool = False) -> None:
    """A grad-mode block (maybe nested)."""
    # held back (KNOWN): enable_grad inside inference_mode, where PyTorch records nothing
    mode = pick(draw, [m for m in MODES if not (inside_inference and m in GRAD_ON)])
    inside_inference = inside_inference or mode == "torch.inference_mode()"
    with code.block(f"with {mode}"):
        for _ in range(draw(st.integers(1, 2))):
            name = f"s{len(names)}"
            code.add(f"{name} = {pointwise(draw, names)}")
            names.append(name)
        if depth < 2 and chance(draw, 3):
            _mode_block(draw, code, names, depth + 1, inside_inference)
        if chance(draw, 3):
            _print_state(draw, code, names)


@st.composite
def grad_mode_programs(draw: Draw) -> str:
    """no_grad / enable_grad / set_grad_enabled / inference_mode blocks (nested), detach,
    requires_grad_, then a backward of something that may or may not require grad."""
    code = Code()
    shape = pick(draw, [(), (3,)])
    plain = _opening(draw, code, shape)
    names = ["x", "w", "b"]
    code.add(f"h = {pointwise(draw, names)}")
    names.append("h")
    for _ in range(draw(st.integers(1, 3))):
        _mode_block(draw, code, names, 0)
    _print_state(draw, code, names)
    if draw(st.booleans()):
        source = pick(draw, names)
        again = draw(st.booleans())     # of an inference tensor, PyTorch refuses
        code.add(f"d = {source}.detach()" + (".requires_grad_()" if again else ""))
        names.append("d")
    if chance(draw, 4):
        code.add(f"{pick(draw, ['x', 'd'] if 'd' in names else ['x'])}.requires_grad_()")
    # mostly something that requires grad (w's product); now and then maybe not
    loss = pointwise(draw, names) if chance(draw, 5) else f"({pointwise(draw, names)}) * w"
    code.add(f"loss = ({loss}){'.sum()' if shape else ''}")
    if plain or draw(st.booleans()):
        code.add("loss.backward()")
    code.add("print(" + ", ".join(f"{n}.grad" for n in names if n in ("x", "w", "b", "d")) + ")")
    return code.text()


# -- in-place operations ------------------------------------------------------------------

SAVING = ("{a} * {b}", "{a}.sin()", "{a}.exp()", "{a} ** 2", "{a}.tanh()", "{a} + {b}",
          "{a}.sigmoid()", "{a} / 2.0", "{a}.relu()")
IN_PLACE = ("{t}.add_({k})", "{t}.sub_({o})", "{t}.mul_({k})", "{t}.div_(2.0)", "{t} += {k}",
            "{t} -= {o}", "{t} *= {o}", "{t} /= 4.0", "{t}.zero_()", "{t}.neg_()",
            "{t}[0] = {k}", "{t}[1] = {o}[0]", "{t}.copy_({o})", "{t}.div_({o})",
            "{t}.clamp_(min=-1.0, max=1.0)", "{t}.sin_()", "{t}.exp_()", "{t}.tanh_()",
            "{t}.abs_()", "{t}.sigmoid_()")


@dataclass
class _Tensors:
    """The in-place programs' tensors by name: which are leaves that require grad, which
    require grad at all, which a forward op has used (and may have saved)."""

    names: list[str]
    leaves: list[str]
    grads: set[str] = field(default_factory=set)
    used: list[str] = field(default_factory=list)


def _in_place_step(draw: Draw, code: Code, t: _Tensors) -> None:
    """One step: a forward op, an in-place change, a detach or a version printed."""
    kind = pick(draw, ["forward", "forward", "in_place", "in_place", "in_place", "detach",
                       "version"])
    if kind in ("forward", "detach"):
        a, b = pick(draw, t.names), pick(draw, t.names)
        name = f"{kind[0]}{len(t.names)}"
        text = pick(draw, SAVING).format(a=a, b=b) if kind == "forward" else f"{a}.detach()"
        code.add(f"{name} = {text}")
        t.names.append(name)
        if kind == "forward":
            t.used += [a, b]
            if t.grads & {a, b}:
                t.grads.add(name)
        return
    # mostly a tensor that a forward op used: maybe saved, so changing it breaks the
    # backward that needs it
    target = pick(draw, t.used if t.used and not chance(draw, 3) else t.names)
    if kind == "version":
        code.add(f"print({target}._version)")
        return
    # a leaf that requires grad only now and then: PyTorch refuses at once
    if target in t.leaves and not chance(draw, 4):
        target = pick(draw, [n for n in t.names if n not in t.leaves] or t.names)
    other = pick(draw, t.names)
    line = pick(draw, IN_PLACE)
    text = line.format(t=target, k=pick(draw, SMALL), o=other)
    if target in t.leaves and draw(st.booleans()):
        with code.block("with torch.no_grad()"):
            code.add(text)
    else:
        code.add(text)
    if other in t.grads and "{o}" in line:
        t.grads.add(target)


@st.composite
def in_place_programs(draw: Draw) -> str:
    """In-place changes of saved tensors, leaves, views and detached tensors, with version
    counters: PyTorch's errors at the pop of the node that saved them, or at once."""
    code = Code()
    if draw(st.booleans()):
        code.add("import torch")
    code.add(f"a = {tensor(draw, (3,), grad=True)}")
    code.add(f"c = {tensor(draw, (3,))}")
    t = _Tensors(["a", "c"], ["a"])
    if draw(st.booleans()):
        code.add(f"e = {tensor(draw, (3,), grad=True)}")
        t.names.append("e")
        t.leaves.append("e")
    t.grads = set(t.leaves)
    for _ in range(draw(st.integers(2, 5))):
        _in_place_step(draw, code, t)
    # every node made on the way, so that a saved tensor changed in place is met
    made = [n for n in t.names if n.startswith("f")] or t.names[-1:]
    code.add(f"loss = ({' + '.join(made)} + {pick(draw, t.leaves)}).sum()")
    code.add("loss.backward()")
    code.add("print(" + ", ".join(f"{n}.grad" for n in t.leaves) + ")")
    return code.text()


# -- loops, if/else and functions ---------------------------------------------------------

UPDATES = ("{p} -= lr * {p}.grad", "{p}.sub_(lr * {p}.grad)", "{p}.data -= lr * {p}.grad.data",
           "{p}.add_({p}.grad, alpha=-lr)")
CLEARS = ("{p}.grad.zero_()", "{p}.grad = None", "")
PREDICTIONS = ("w * xs + b", "torch.tanh(w * xs) + b", "(w * xs + b).sigmoid()",
               "w * xs * xs + b")
LOSSES = ("((pred - ys) ** 2).mean()", "(pred - ys).abs().mean()", "((pred - ys) ** 2).sum()")
CONDITIONS = ("loss > {k}", "loss.item() < {k}", "w.grad > 0", "{k} <= loss and b < 1.0",
              "not w.grad < 0", "pred > 0")   # the last: a vector's truth value, an error


def _training_step(draw: Draw, code: Code, function: bool, decorated: bool) -> None:
    code.add(f"pred = {'model(xs)' if function else pick(draw, PREDICTIONS)}")
    code.add(f"loss = {pick(draw, LOSSES)}")
    code.add("loss.backward()")
    if draw(st.booleans()):
        condition = CONDITIONS[-1] if chance(draw, 8) else pick(draw, CONDITIONS[:-1])
        with code.block(f"if {condition.format(k=pick(draw, (0.5, 1.0, 2.0)))}"):
            code.add('print(step, "high", loss)')
        if draw(st.booleans()):
            with code.block("else"):
                code.add("print(step, loss.item() > 1.0, w.grad)")
    if chance(draw, 3):
        code.add("print(step, loss.item(), w.grad.item())")
    if decorated:
        code.add("update(w)", "update(b)")
    else:
        update = pick(draw, UPDATES)
        with code.block("with torch.no_grad()"):
            for p in ("w", "b"):
                code.add(update.format(p=p))
    clear = pick(draw, CLEARS)
    for p in ("w", "b") if clear else ():
        code.add(clear.format(p=p))


@st.composite
def loop_programs(draw: Draw) -> str:
    """A few steps of gradient descent written out: for or while, a `def` model, if/else
    on tensors, no_grad updates (or an @torch.no_grad() function), zero_grad or None or
    accumulation."""
    code = Code()
    code.add("import torch")
    code.add(f"xs = {tensor(draw, (4,))}", f"ys = {tensor(draw, (4,))}")
    code.add(f"w = {tensor(draw, (), grad=True)}", f"b = {tensor(draw, (), grad=True)}")
    code.add(f"lr = {pick(draw, RATES)}")
    function = draw(st.booleans())
    if function:
        with code.block("def model(inputs)"):
            code.add(f"return {pick(draw, PREDICTIONS).replace('xs', 'inputs')}")
    decorated = chance(draw, 3)
    if decorated:
        code.add("@torch.no_grad()")
        with code.block("def update(p)"):
            code.add(pick(draw, UPDATES).format(p="p"))
    steps = draw(st.integers(1, 3))
    if draw(st.booleans()):
        with code.block(f"for step in range({steps})"):
            _training_step(draw, code, function, decorated)
    else:
        code.add("step = 0")
        with code.block(f"while step < {steps}"):
            _training_step(draw, code, function, decorated)
            code.add("step += 1")
    code.add("print(w, b, w.grad)")
    return code.text()
