"""Hypothesis strategies for CONTRACT §1b, part two: torch.autograd.grad (create_graph,
allow_unused, grad_outputs), hooks (tensor hooks that scale or print, retain_grad,
post-accumulate hooks, node pre/post hooks, remove) and custom autograd.Functions.

As in tests/strategy_rules.py the tensors of one program share one shape, so every
expression fits; PyTorch's errors come on purpose now and then (an unused input without
allow_unused, a second pass through a freed graph).
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.program_parts import SMALL, Code, Draw, chance, pick, pointwise, tensor


def _leaves(draw: Draw, code: Code, shape: tuple[int, ...], names: list[str]) -> None:
    code.add("import torch")
    for name in names:
        code.add(f"{name} = {tensor(draw, shape, grad=name != 'k')}")


# Held back until the lab gets them right (KNOWN in test_differential_known.py): an
# input on the path to another input (`(x, h)` with h made from x), a leaf input whose
# graphs are all gone (PyTorch makes an Identity node for it, as for a leaf never used,
# which the lab does too; the lab keeps an accumulator once made), and a grad of outputs
# that reach no input (PyTorch runs no node). So h and z always use x, and u has a graph.
INPUTS = ("x", "[x, y]", "(y, h)", "[h]", "[x, u]", "(y, k)")


@st.composite
def autograd_grad_programs(draw: Draw) -> str:
    """torch.autograd.grad of a scalar or (with grad_outputs) a vector, with respect to
    leaves or an intermediate, then maybe a second derivative or a backward."""
    code = Code()
    shape = pick(draw, [(), (3,)])
    _leaves(draw, code, shape, ["x", "y", "k"])
    code.add(f"h = ({pointwise(draw, ['x', 'k'])}) * x")
    code.add(f"z = ({pointwise(draw, ['h', 'x', 'y'])}) * (h + y) * x")
    vector = bool(shape) and draw(st.booleans())
    if shape and not vector:
        code.add("z = z.sum()")
    inputs = pick(draw, INPUTS[:-1]) if not chance(draw, 6) else "(y, k)"   # k: an error
    if "u" in inputs:
        code.add(f"u = {tensor(draw, shape, grad=True)}", "unused = u * 1.5")
    keywords = []
    if vector:
        keywords.append("grad_outputs=torch.ones_like(z)")
    then_backward = draw(st.booleans())
    if not chance(draw, 6 if then_backward else 2):   # else the freed graph's error, later
        keywords.append("retain_graph=True")
    for keyword in ("create_graph=True", "allow_unused=True"):
        if draw(st.booleans()):
            keywords.append(keyword)
    if "u" in inputs and not chance(draw, 4) and "allow_unused=True" not in keywords:
        keywords.append("allow_unused=True")
    code.add(f"g = torch.autograd.grad(z, {', '.join([inputs, *keywords])})")
    code.add("print(g)")
    first = "g[0].sum()" if shape else "g[0]"
    if "create_graph=True" in keywords and draw(st.booleans()):
        code.add(f"g2, = torch.autograd.grad({first}, x, allow_unused=True)")
        code.add("print(g2)")
    elif "create_graph=True" in keywords and draw(st.booleans()):
        code.add(f"({first} * 1.0).backward()")
    if then_backward:
        code.add("z.backward()" if not vector else "z.sum().backward()")
    code.add("print(x.grad, y.grad)")
    return code.text()


TENSOR_HOOKS = ("lambda g: g * {k}", "lambda g: g + {k}", 'lambda g: print("{n}", g)',
                "lambda g: g.clamp(min=-0.5, max=0.5)", "lambda g: None")
NODE_HOOKS = ('{n}.grad_fn.register_prehook(lambda grad_outputs: print("pre {n}", '
              'grad_outputs))',
              '{n}.grad_fn.register_hook(lambda grad_inputs, grad_outputs: print("post {n}", '
              'grad_inputs, grad_outputs))',
              "{n}.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * {k},))")


def _hook(draw: Draw, code: Code, names: list[str], leaves: list[str],
          handles: list[str]) -> None:
    kind = pick(draw, ["tensor", "tensor", "retain", "accumulate", "node", "remove"])
    n = pick(draw, names)
    if kind == "tensor":
        hook = pick(draw, TENSOR_HOOKS).format(k=pick(draw, SMALL), n=n)
        handles.append(f"h{len(handles)}")
        code.add(f"{handles[-1]} = {n}.register_hook({hook})")
    elif kind == "retain" and n not in leaves:
        code.add(f"{n}.retain_grad()")
    elif kind == "accumulate":
        leaf = pick(draw, leaves)
        code.add(f'{leaf}.register_post_accumulate_grad_hook(lambda p: print("acc {leaf}", '
                 "p.grad))")
    elif kind == "node" and n not in leaves:
        code.add(pick(draw, NODE_HOOKS).format(n=n, k=pick(draw, SMALL)))
    elif kind == "remove" and handles:
        code.add(f"{pick(draw, handles)}.remove()")


@st.composite
def hook_programs(draw: Draw) -> str:
    """Hooks on tensors and nodes, registered and removed in a random order, then a
    backward (twice, now and then) and the grads printed."""
    code = Code()
    shape = pick(draw, [(), (2,)])
    _leaves(draw, code, shape, ["a", "b", "k"])
    names, leaves = ["a", "b"], ["a", "b"]
    for i in range(draw(st.integers(2, 4))):
        name = f"y{i}"
        code.add(f"{name} = {pointwise(draw, [*names, 'k'], 2)} * {pick(draw, names)}")
        names.append(name)
    handles: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        _hook(draw, code, names, leaves, handles)
    out = names[-1] + (".sum()" if shape else "")
    again = chance(draw, 4)
    retain = "retain_graph=True" if again and not chance(draw, 3) else ""  # else an error
    code.add(f"{out}.backward({retain})")
    if again:
        code.add(f"{out}.backward()")
    code.add("print(" + ", ".join(f"{n}.grad" for n in names) + ")")
    return code.text()


FORWARDS = (("{x} * {x} * {x}", "{g} * 3 * {x} ** 2"), ("{x}.exp()", "{g} * {x}.exp()"),
            ("{x}.clamp(min=-1.0, max=1.0)", "{g}"), ("{x} * 2.0", "{g} * 0.5"),
            ("{x}.tanh()", "{g} * (1 - {x}.tanh() ** 2)"), ("{x}.relu()", "{g} * ({x} > 0)"))


@st.composite
def custom_function_programs(draw: Draw) -> str:
    """A custom autograd.Function with save_for_backward (of an input, or of the result)
    and ctx attributes; its backward is the user's own formula, right or deliberately
    not, with None for a non-tensor argument."""
    code = Code()
    shape = pick(draw, [(), (3,)])
    _leaves(draw, code, shape, ["w", "v", "k"])
    forward, backward = pick(draw, FORWARDS)
    scaled = draw(st.booleans())
    with code.block("class Op(torch.autograd.Function)"):
        code.add("@staticmethod")
        with code.block("def forward(ctx, t" + (", scale" if scaled else "") + ")"):
            code.add("ctx.save_for_backward(t)")
            if scaled:
                code.add("ctx.scale = scale")
            code.add("return " + forward.format(x="t") + (" * scale" if scaled else ""))
        code.add("@staticmethod")
        with code.block("def backward(ctx, grad_output)"):
            code.add("t, = ctx.saved_tensors")
            formula = backward.format(x="t", g="grad_output")
            if chance(draw, 3):
                formula = f"({formula}) * {pick(draw, SMALL)}"   # a wrong one is allowed
            if scaled and not chance(draw, 8):
                code.add(f"return ({formula}) * ctx.scale, None")
            elif scaled:        # one gradient for two inputs: PyTorch's error at the pop
                code.add(f"return ({formula}) * ctx.scale")
            else:
                code.add(f"return {formula}")
    argument = " ".join([pick(draw, ["w", "v"]), pick(draw, ["*", "+", "-"]),
                         pick(draw, ["w", "v", "k"])])
    code.add(f"y = Op.apply({argument}" + (f", {pick(draw, SMALL)})" if scaled else ")"))
    code.add("print(y.grad_fn.name(), y.requires_grad)")
    code.add(f"loss = ({pointwise(draw, ['y', 'w', 'v'], 2)} * y){'.sum()' if shape else ''}")
    code.add("loss.backward()")
    code.add("print(w.grad, v.grad, k.grad)")
    return code.text()
