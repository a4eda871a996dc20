"""The bad-input table's rows (test_bad_input.py), part one: text that is not Python, CONTRACT
§1 and §1b's language used beyond its whitelist, and a row just past each of the lab's limits
(app/limits.py). Part two is bad_input_errors.py, part three bad_input_network.py.

A row is a program, the kind and type of error it must end with, where (line, column, and
the end where it says something), and what the message must say: a fragment of the lab's
advice, or PyTorch's (Python's) message in full, recorded from live PyTorch 2.13 and held
to it by test_pytorch_raises_what_the_row_says. A row the lab does not yet meet is a strict
xfail whose reason says what the lab does instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

T = "import torch\n"          # a plain-PyTorch program (CONTRACT §1) starts so
LEAF = "a = 2.0\n"            # a shorthand leaf


@dataclass(frozen=True)
class Bad:
    id: str
    source: str
    type: str                  # SyntaxError, UnsupportedError, or PyTorch's/Python's type
    kind: str                  # rejected, forward, backward, limit
    line: int
    col: int
    says: str                  # the advice (a fragment), or PyTorch's whole message
    end: tuple[int, int] | None = None
    limits: tuple[tuple[str, float], ...] = ()      # a Limits override, as (name, value)
    xfail: str | None = None   # what the lab does instead, while it does

    @property
    def plain(self) -> bool:
        """Whether the program imports torch, so that it runs as it is in PyTorch."""
        return any(line.startswith(("import torch", "from torch")) for line in
                   self.source.splitlines())


def syntax(id: str, source: str, line: int, col: int, says: str, **kw: Any) -> Bad:
    return Bad(id, source, "SyntaxError", "rejected", line, col, says, **kw)


def rejected(id: str, source: str, line: int, col: int, says: str, **kw: Any) -> Bad:
    return Bad(id, source, "UnsupportedError", "rejected", line, col, says, **kw)


def limit(id: str, source: str, line: int, col: int, says: str, **kw: Any) -> Bad:
    return Bad(id, source, "UnsupportedError", "limit", line, col, says, **kw)


def raises(id: str, source: str, type: str, line: int, col: int, message: str,
           kind: str = "forward", **kw: Any) -> Bad:
    return Bad(id, source, type, kind, line, col, message, **kw)


LAMBDA = "a `lambda` is only allowed as an argument that PyTorch calls"
CLASS = "a class must subclass `torch.autograd.Function`"
DECORATOR = "other decorators are not supported"
STRING = "a string here does nothing for autograd"
DUNDER = "attributes with double underscores are not available"
PRIVATE = "of the attributes that start with an underscore the lab has only"
IMPORT = "other modules are not available"
HOOK_BACKWARD = "a hook that calls backward() or autograd.grad() is not supported"
LOOPS = "loops ran more than 200000 iterations in all"
NOT_IN_LAB = "the lab has no such function, so its AttributeError says what PyTorch does not"


def _elements(n: int) -> str:
    return ", ".join(["1.0"] * n)


SYNTAX = [
    syntax("unclosed-paren", LEAF + "b = (a +\n", 2, 5, "never closed"),
    syntax("invalid-syntax", LEAF + "b = a +* 2\n", 2, 8, "syntax"),
    syntax("unexpected-indent", LEAF + "  b = a\n", 2, 3, "indent"),
    syntax("invalid-character", LEAF + "b = a × 2\n", 2, 7, "U+00D7"),
    syntax("nul-byte", LEAF + "b = a\0 * 2\n", 2, 6, "NUL"),
    syntax("lone-surrogate", T + "# \udcff\nx = torch.tensor(1.0)\n", 2, 3, "lone surrogate"),
    syntax("10000-nested-parens", LEAF + "b = " + "(" * 10_000 + "a" + ")" * 10_000 + "\n",
           2, 205, "nested parentheses"),
    syntax("missing-colon", T + "for i in range(3)\n    pass\n", 2, 18, "Expected ':'"),
    syntax("break-outside-loop", T + "break\n", 2, 1, "'break' outside loop"),
    syntax("continue-outside-loop", T + "def f():\n    continue\n", 3, 5, "'continue'"),
    syntax("return-outside-function", T + "return 1\n", 2, 1, "'return' outside function"),
    # -- a word that cannot be a name: the lab's advice, the word underlined -------------------
    syntax("keyword-as-a-name", LEAF + "for = a * 2\n", 2, 1, "`for` is a Python keyword",
           end=(2, 4)),
    syntax("hyphen-in-a-name", LEAF + "my-var = a * 2\n", 2, 1, "write `my_var`", end=(2, 7)),
    syntax("digit-first-name", LEAF + "2b = a * 2\n", 2, 1, "cannot start with a digit, so "
           "write `b2`", end=(2, 3)),
]

LANGUAGE = [
    # -- lambdas: only as an argument that PyTorch calls (a hook, saved_tensors_hooks, ...) ----
    rejected("lambda-assigned", LEAF + "f = lambda x: x\n", 2, 5, LAMBDA, end=(2, 16)),
    rejected("lambda-in-a-list", T + "fs = [lambda x: x]\n", 2, 7, LAMBDA),
    rejected("lambda-as-a-default", T + "def f(g=lambda v: v):\n    return g\n", 2, 9, LAMBDA),
    rejected("lambda-returned", T + "def f():\n    return lambda v: v\n", 3, 12, LAMBDA),
    rejected("lambda-to-an-own-function",
             T + "def apply(g, v):\n    return g(v)\ny = apply(lambda v: v * 2, 3.0)\n",
             4, 11, LAMBDA),
    rejected("lambda-printed", T + "print(lambda v: v)\n", 2, 7, LAMBDA),
    # -- classes: an autograd.Function or an nn.Module ----------------------------------------
    rejected("class", LEAF + "class C:\n    pass\n", 2, 1, CLASS),
    rejected("class-of-object", T + "class C(object):\n    pass\n", 2, 9, CLASS),
    rejected("class-of-exception", T + "class E(Exception):\n    pass\n", 2, 9, CLASS),
    rejected("class-of-two-bases",
             T + "import torch.nn as nn\nclass C(nn.Module, torch.autograd.Function):\n"
             "    pass\n", 3, 1, CLASS),
    rejected("class-with-a-metaclass",
             T + "class F(torch.autograd.Function, metaclass=type):\n    pass\n", 2, 1, CLASS),
    rejected("class-body-with-a-loop",
             T + "class F(torch.autograd.Function):\n    for i in range(3):\n        pass\n",
             3, 5, "a class body holds its methods"),
    # -- decorators: @staticmethod in a Function, grad modes on functions ---------------------
    rejected("own-decorator", T + "def deco(f):\n    return f\n@deco\ndef g(x):\n    return x\n",
             4, 2, DECORATOR),
    rejected("staticmethod-outside-a-class", T + "@staticmethod\ndef g(x):\n    return x\n",
             2, 2, DECORATOR),
    rejected("classmethod-in-a-function",
             T + "class F(torch.autograd.Function):\n    @classmethod\n"
             "    def forward(cls, ctx, x):\n        return x\n", 3, 6, DECORATOR),
    rejected("property-in-a-module",
             T + "import torch.nn as nn\nclass Net(nn.Module):\n    @property\n"
             "    def size(self):\n        return 1\n", 4, 6, DECORATOR),
    rejected("decorated-class",
             T + "import torch.nn as nn\n@torch.no_grad()\nclass Net(nn.Module):\n    pass\n",
             3, 2, DECORATOR),
    # -- strings: in print, f-strings, comparisons and PyTorch's string arguments --------------
    rejected("string-assigned", T + 's = "hello"\n', 2, 5, STRING, end=(2, 12)),
    rejected("string-operand", T + 'x = torch.tensor(1.0)\ny = x + "1"\n', 3, 9, STRING),
    rejected("string-returned", T + 'def f():\n    return "done"\n', 3, 12, STRING),
    rejected("string-in-a-conditional", T + 'a = 1 if True else "no"\n', 2, 20, STRING),
    rejected("string-line-in-a-function", T + 'def f():\n    x = 1\n    "a note"\n    return x\n',
             4, 5, "use a `#` comment"),
    rejected("bytes", T + 'a = b"bytes"\n', 2, 5, "bytes and complex numbers"),
    rejected("complex", LEAF + "b = a * 1j\n", 2, 9, "complex"),
    raises("assert-with-a-message", T + 'assert 1 > 2, "one is not more than two"\n',
           "AssertionError", 2, 1, "one is not more than two"),
    # -- attributes: dunders and private names are not the lab's -----------------------------
    rejected("ctx-dict",
             T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
             "        print(ctx.__dict__)\n        return x\n", 5, 15, DUNDER),
    rejected("dunder-class", LEAF + "b = a.__class__.__dict__\n", 2, 5, "`.__dict__`"),
    rejected("class-bases", LEAF + "b = ().__class__.__bases__\n", 2, 5, DUNDER),
    rejected("tensor-dict", T + "x = torch.tensor(1.0)\nd = x.__dict__\n", 3, 5, DUNDER),
    rejected("assign-dunder-class",
             T + "x = torch.tensor(1.0, requires_grad=True)\nx.__class__ = int\n", 3, 1, DUNDER),
    rejected("module-dict", T + "import math\nv = math.__dict__\n", 3, 5, DUNDER),
    rejected("method-self", T + "f = print.__self__\n", 2, 5, DUNDER),
    rejected("torch-file", T + "v = torch.__file__\n", 2, 5, DUNDER),
    rejected("private-grad", T + "x = torch.tensor(1.0, requires_grad=True)\ng = x._grad\n",
             3, 5, PRIVATE),
    rejected("private-parameters", T + "import torch.nn as nn\nm = nn.Linear(2, 1)\n"
             "p = m._parameters\n", 4, 5, PRIVATE),
    rejected("torch-c", T + "c = torch._C\n", 2, 5, PRIVATE),
    rejected("set-an-attribute-on-a-tensor", T + "x = torch.tensor(1.0)\nx.foo = 1\n", 3, 1,
             "the lab does not set attribute 'foo'"),
    rejected("delete-grad-fn",
             T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * 2\ndel y.grad_fn\n",
             4, 1, "the lab deletes names and items only"),
    rejected("torch-os", T + "o = torch.os\n", 2, 5, "torch.os"),
    rejected("torch-save", T + 'torch.save(torch.tensor(1.0), "x.pt")\n', 2, 1, "torch.save"),
    rejected("torch-fft", T + "y = torch.fft.fft(torch.ones(2))\n", 2, 5, "torch.fft"),
    # -- names that run code, read files or reach Python's internals ---------------------------
    rejected("eval-call", LEAF + "b = eval('a')\n", 2, 5, "`eval` is not available"),
    rejected("exec-statement", LEAF + "exec('import os')\n", 2, 1, "`exec` is not available"),
    rejected("compile-call", T + 'code = compile("1", "f", "eval")\n', 2, 8, "`compile`"),
    rejected("dunder-import", LEAF + "b = __import__('os')\n", 2, 5, "`__import__`"),
    rejected("open-call", T + 'f = open("/etc/passwd")\n', 2, 5, "cannot read or write files"),
    rejected("with-open", T + 'with open("data.txt") as f:\n    pass\n', 2, 6,
             "cannot read or write files"),
    rejected("getattr", T + 'x = torch.tensor(1.0)\ng = getattr(x, "grad")\n', 3, 5,
             "write the attribute out"),
    rejected("setattr", T + 'x = torch.tensor(1.0)\nsetattr(x, "grad", None)\n', 3, 1,
             "`setattr` is not available"),
    rejected("globals", T + "g = globals()\n", 2, 5, "`globals` is not available"),
    rejected("input", T + "v = input()\n", 2, 5, "put the value in the program"),
    rejected("breakpoint", T + "breakpoint()\n", 2, 1, "`breakpoint` is not available"),
    rejected("dunder-builtins", T + "b = __builtins__\n", 2, 5, "names with double underscores"),
    rejected("dunder-file", T + "f = __file__\n", 2, 5, "`__file__`"),
    # -- imports: torch, torch.nn, torch.nn.functional, torch.optim, torch.autograd, math ------
    rejected("import-os", "import os\n" + LEAF, 1, 1, IMPORT, end=(1, 10)),
    rejected("import-numpy", T + "import numpy as np\n", 2, 1, IMPORT),
    rejected("import-sys", T + "import sys\n", 2, 1, IMPORT),
    rejected("import-functools", T + "import functools\n", 2, 1, IMPORT),
    rejected("from-os-import", T + "from os import path\n", 2, 1, IMPORT),
    rejected("import-torch-utils", T + "import torch.utils.data\n", 2, 1, IMPORT),
    rejected("relative-import", T + "from . import models\n", 2, 1, IMPORT),
    rejected("from-torch-import-star", "from torch import *\n" + LEAF, 1, 1, "`import *`"),
    rejected("from-math-import-star", T + "from math import *\n", 2, 1, "`import *`"),
    # -- statements and expressions outside the language ---------------------------------------
    rejected("try", LEAF + "try:\n    b = a\nexcept Exception:\n    pass\n", 2, 1, "`try`",
             end=(5, 9)),
    rejected("raise", T + 'raise ValueError("no")\n', 2, 1, "use `assert condition"),
    rejected("global", T + "x = 1\ndef f():\n    global x\n    x = 2\n", 4, 5, "`global`"),
    rejected("nonlocal", T + "def f():\n    x = 1\n    def g():\n        nonlocal x\n"
             "        x = 2\n", 5, 9, "`nonlocal`"),
    rejected("yield", T + "def f():\n    yield 1\n", 3, 5, "`yield` is not supported"),
    rejected("yield-from", T + "def f():\n    yield from [1]\n", 3, 5, "`yield from`"),
    rejected("async-def", T + "async def f():\n    return 1\n", 2, 1, "`async def`"),
    rejected("await", T + "x = await f()\n", 2, 5, "`await` is not supported"),
    rejected("async-for", T + "def f():\n    async for x in g():\n        pass\n", 3, 5,
             "`async for`"),
    rejected("async-with", T + "def f():\n    async with g():\n        pass\n", 3, 5,
             "`async with`"),
    rejected("async-comprehension", T + "x = [v async for v in g()]\n", 2, 23,
             "async comprehensions"),
    rejected("match", T + "x = 1\nmatch x:\n    case 1:\n        pass\n", 3, 1, "`match`"),
    rejected("walrus", LEAF + "b = (c := a)\n", 2, 6, ":="),
    rejected("walrus-in-if", T + "x = torch.tensor(1.0)\nif (y := x * 2) > 1:\n    pass\n",
             3, 5, ":="),
    rejected("set-literal", T + "s = {1, 2}\n", 2, 5, "sets are not supported"),
    rejected("bit-shift", T + "y = 1 << 3\n", 2, 5, "the `<<` operator"),
    # -- what never ends, or grows without end -------------------------------------------------
    limit("recursion-without-end", T + "def f(x):\n    return f(x)\nf(1)\n", 3, 12,
          "calls nested more than 40 deep"),
    limit("range-of-10-to-the-12", T + "for i in range(10**12):\n    pass\n", 2, 1, LOOPS,
          end=(3, 9)),
    limit("nested-loops-past-the-limit",
          T + "for i in range(1000):\n    for j in range(1000):\n        pass\n", 3, 5, LOOPS),
    limit("while-true-without-break", T + "n = 0\nwhile True:\n    n = n + 1\n", 3, 1,
          "loops ran more than 1000 iterations", limits=(("max_iterations", 1000),)),
    rejected("hook-that-calls-backward",
             T + "def hook(g):\n    y.backward()\nx = torch.tensor(2.0, requires_grad=True)\n"
             "y = x * 2\nh = y.register_hook(hook)\nz = y * 3\nz.backward()\n", 3, 5,
             HOOK_BACKWARD),
    rejected("hook-that-calls-autograd-grad",
             T + "def hook(g):\n    return torch.autograd.grad(y, x)[0]\n"
             "x = torch.tensor(2.0, requires_grad=True)\ny = x * 2\nh = y.register_hook(hook)\n"
             "z = y * 3\nz.backward()\n", 3, 12, HOOK_BACKWARD),
    rejected("lambda-hook-that-calls-backward",
             T + "x = torch.tensor(2.0, requires_grad=True)\ny = x * x\nz = x * 3\n"
             "h = y.register_hook(lambda g: z.backward())\ny.backward()\n", 5, 31, HOOK_BACKWARD),
]


def exactly_bytes(n: int) -> str:
    head = "a = 2.0\nb = a * a\n# "
    return head + "x" * (n - len(head) - 1) + "\n"


HOOKS = "x = torch.tensor(1.0, requires_grad=True)\nfor i in range(17):\n"
KEEP_EVERY_GRAPH = T + "b = torch.tensor(1.0, requires_grad=True)\nfor i in range({}):\n" \
                       "    b = b * 1.0\n"
QUICK = "the lab's limit keeps every program quick for everyone"

LIMITS = [
    limit("64001-bytes", exactly_bytes(64_001), 1, 1, "64001 bytes long; the lab accepts at "
          "most 64000"),
    limit("one-megabyte", LEAF + "# " + "x" * 1_000_000 + "\n", 1, 1, "bytes long"),
    limit("2001-lines", LEAF * 2001, 2001, 1, "the program has 2001 lines"),
    limit("61-levels-deep", LEAF + "b = a" + " * 1.0" * 60 + "\n", 2, 9,
          "nested more than 60 levels deep"),
    limit("5000-term-sum", LEAF + "b = " + " + ".join(["a"] * 5000) + "\n", 2, 1,
          "nested more than 60 levels deep"),
    limit("5000-unary-minus", LEAF + "b = " + "-" * 5000 + "a\n", 2, 1, "nested more than 60"),
    limit("50001-nodes", KEEP_EVERY_GRAPH.format(50_000), 4, 9,
          "more than 50000 backward nodes: " + QUICK),
    limit("101-nodes", KEEP_EVERY_GRAPH.format(100), 4, 9, "more than 100 backward nodes",
          limits=(("max_nodes", 100),)),
    limit("100001-item-list", T + "l = [0] * 100001\n", 2, 5, "100001 items; the lab allows "
          "100000"),
    limit("list-of-10-to-the-9", LEAF + "b = torch.tensor([1.0] * 10**9)\n", 2, 18,
          "1000000000 items"),
    limit("comprehension-past", T + "l = [i for i in range(100001)]\n", 2, 5,
          "a list of 100001 items is longer than the lab allows (100000)"),
    limit("list-doubled-past", T + "x = [1] * 10 ** 5\ny = x + x\n", 3, 5, "200000 items"),
    limit("257-bit-number", T + "n = 2 ** 256\n", 2, 5, "larger than 256 bits"),
    limit("product-past-256-bits", T + "n = 2 ** 200\nm = n * n\n", 3, 5, "larger than 256 bits"),
    limit("power-tower", LEAF + "b = 2 ** 10 ** 10\n", 2, 5, "256-bit numbers"),
    limit("201-statements", T + "for i in range(199):\n    a = i\n", 2, 1,
          "more than 200 statements", limits=(("max_statements", 200),)),
    limit("101-iterations", T + "for i in range(10):\n    for j in range(10):\n        pass\n",
          3, 5, "loops ran more than 100 iterations", limits=(("max_iterations", 100),)),
    limit("41-calls-deep", T + "def f(n):\n    if n == 1:\n        return 1\n    return f(n - 1)\n"
          "v = f(41)\n", 5, 12, "calls nested more than 40 deep"),
    limit("17-hooks", T + HOOKS + "    h = x.register_hook(lambda g: g)\n", 4, 9,
          "a tensor may have at most 16 hooks"),
    limit("17-node-hooks", T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * 2\n"
          "for i in range(17):\n    h = y.grad_fn.register_prehook(lambda go: go)\n", 5, 9,
          "a node may have at most 16 hooks"),
    limit("past-max-seconds", T + "for i in range(100000):\n    a = i * 2\n", 2, 1,
          "ran for more than 0.05 seconds", limits=(("max_seconds", 0.05),)),
]
