"""The bad-input table's rows (test_bad_input.py), part two: CONTRACT §1b's Python and
autograd used wrongly, ending with Python's or PyTorch's own error, word for word as live
PyTorch 2.13 raises it. The rows' form is bad_input_rows.py's."""

from __future__ import annotations

from tests.bad_input_rows import T, raises

CONTEXT = "does not support the context manager protocol"

ERRORS = [
    # -- Python's own errors, as Python raises them --------------------------------------------
    raises("undefined-name", T + "b = c * 2\n", "NameError", 2, 5, "name 'c' is not defined"),
    raises("name-after-del", T + "x = torch.tensor(1.0)\ndel x\nprint(x)\n", "NameError", 4, 7,
           "name 'x' is not defined"),
    raises("numbers-only", "x = 1 + 2\n", "AttributeError", 1, 1,
           "'int' object has no attribute 'backward'"),
    raises("with-a-tensor", T + "x = torch.tensor([1.0, 2.0])\nwith x:\n    pass\n",
           "TypeError", 3, 1, "'Tensor' object " + CONTEXT),
    raises("with-no-grad-not-called",
           T + "x = torch.tensor(1.0, requires_grad=True)\nwith torch.no_grad:\n    y = x * 2\n",
           "TypeError", 3, 1, "'type' object " + CONTEXT),
    raises("if-on-a-vector", T + "x = torch.tensor([1.0, 2.0])\nif x > 1:\n    pass\n",
           "RuntimeError", 3, 1, "Boolean value of Tensor with more than one value is ambiguous"),
    raises("for-over-an-int", T + "for v in 5:\n    pass\n", "TypeError", 2, 1,
           "'int' object is not iterable"),
    raises("range-of-a-float", T + "for i in range(1.5):\n    pass\n", "TypeError", 2, 10,
           "'float' object cannot be interpreted as an integer"),
    raises("missing-argument", T + "def f(x):\n    return x\nf()\n", "TypeError", 4, 1,
           "f() missing 1 required positional argument: 'x'"),
    raises("too-many-arguments", T + "def f(x):\n    return x\nf(1, 2)\n", "TypeError", 4, 1,
           "f() takes 1 positional argument but 2 were given"),
    raises("unexpected-keyword", T + "def f(x):\n    return x\nf(1, y=2)\n", "TypeError", 4, 1,
           "f() got an unexpected keyword argument 'y'"),
    raises("keyword-only-given-positionally", T + "def f(*, k):\n    return k\nf(1)\n",
           "TypeError", 4, 1, "f() takes 0 positional arguments but 1 was given"),
    raises("star-of-an-int", T + "def f(x):\n    return x * 2\nv = f(*5)\n", "TypeError", 4, 5,
           "f() argument after * must be an iterable, not int"),
    raises("len-of-an-int", T + "n = len(5)\n", "TypeError", 2, 5,
           "object of type 'int' has no len()"),
    raises("list-index", T + "v = [1, 2][5]\n", "IndexError", 2, 5, "list index out of range"),
    raises("dict-key", T + 'd = {"a": 1}\nv = d["b"]\n', "KeyError", 3, 5, "'b'"),
    raises("unpack-too-many", T + "a, b = (1, 2, 3)\n", "ValueError", 2, 1,
           "too many values to unpack (expected 2)"),
    raises("unpack-too-few", T + "a, b, c = (1, 2)\n", "ValueError", 2, 1,
           "not enough values to unpack (expected 3, got 2)"),
    raises("compare-int-and-str", T + 'v = 1 < "a"\n', "TypeError", 2, 5,
           "'<' not supported between instances of 'int' and 'str'"),
    raises("round-of-a-str", T + 'v = round("a")\n', "TypeError", 2, 5,
           "type str doesn't define __round__ method"),
    raises("max-of-nothing", T + "v = max()\n", "TypeError", 2, 5,
           "max expected at least 1 argument, got 0"),
    raises("max-of-an-empty-list", T + "v = max([])\n", "ValueError", 2, 5,
           "max() arg is an empty sequence"),
    raises("sum-of-strings", T + 'v = sum([1, 2], start="a")\n', "TypeError", 2, 5,
           "sum() can't sum strings [use ''.join(seq) instead]"),
    raises("isinstance-of-an-int", T + "x = torch.tensor(1.0)\nisinstance(x, 5)\n", "TypeError",
           3, 1, "isinstance() arg 2 must be a type, a tuple of types, or a union"),
    raises("list-push", T + "x = [1, 2]\nx.push(3)\n", "AttributeError", 3, 1,
           "'list' object has no attribute 'push'"),
    raises("division-by-zero", T + "b = 1 / 0\n", "ZeroDivisionError", 2, 5,
           "division by zero"),
    raises("float-overflow", T + "x = 10.0 ** 400\n", "OverflowError", 2, 5,
           "(34, 'Numerical result out of range')"),
    raises("huge-integer-times-a-tensor",
           T + "x = torch.tensor(2.0, requires_grad=True)\ny = x * " + "9" * 100 + "\n",
           "OverflowError", 3, 5, "int too big to convert"),
    raises("math-domain", T + "import math\nv = math.sqrt(-1)\n", "ValueError", 3, 5,
           "math domain error"),
    raises("format-code", T + 'x = torch.tensor(2.0)\nprint(f"{x:.2q}")\n', "ValueError", 3, 7,
           "Unknown format code 'q' for object of type 'float'"),
    raises("tensor-called", T + "x = torch.tensor(1.0)\nx()\n", "TypeError", 3, 1,
           "'Tensor' object is not callable"),
    # -- autograd used wrongly: PyTorch's errors, word for word --------------------------------
    raises("tanh-of-a-float", T + "b = torch.tanh(2.0)\n", "TypeError", 2, 5,
           "tanh(): argument 'input' (position 1) must be Tensor, not float"),
    raises("method-on-a-float", T + "b = (2.0).tanh()\n", "AttributeError", 2, 5,
           "'float' object has no attribute 'tanh'"),
    raises("unknown-method", T + "x = torch.tensor(1.0)\ny = x.foo()\n", "AttributeError", 3, 5,
           "'Tensor' object has no attribute 'foo'"),
    raises("unknown-torch-function", T + "y = torch.foo(torch.ones(1))\n", "AttributeError", 2,
           5, "module 'torch' has no attribute 'foo'"),
    raises("integer-requires-grad", T + "a = torch.tensor(2, requires_grad=True)\n",
           "RuntimeError", 2, 5,
           "Only Tensors of floating point and complex dtype can require gradients"),
    raises("ragged-list", T + "b = torch.tensor([[1.0, 2.0], [3.0]])\n", "ValueError", 2, 5,
           "expected sequence of length 2 at dim 1 (got 1)"),
    raises("tensor-of-a-string", T + 'a = torch.tensor("abc")\n', "TypeError", 2, 5,
           "new(): invalid data type 'str'"),
    raises("grad-zero-before-backward",
           T + "x = torch.tensor(1.0, requires_grad=True)\nx.grad.zero_()\n", "AttributeError",
           3, 1, "'NoneType' object has no attribute 'zero_'"),
    raises("grad-assigned-an-int", T + "x = torch.tensor(1.0, requires_grad=True)\nx.grad = 5\n",
           "TypeError", 3, 1,
           "assigned grad expected to be a Tensor or None but got grad of type int"),
    raises("requires-grad-of-a-non-leaf",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * 2\ny.requires_grad = False\n",
           "RuntimeError", 4, 1,
           "you can only change requires_grad flags of leaf variables. If you want to use a "
           "computed variable in a subgraph that doesn't require differentiation use "
           "var_no_grad = var.detach()."),
    raises("item-of-a-vector", T + "x = torch.tensor([1.0, 2.0])\nv = x.item()\n",
           "RuntimeError", 3, 5, "a Tensor with 2 elements cannot be converted to Scalar"),
    raises("hook-on-a-tensor-without-grad",
           T + "x = torch.tensor(1.0)\nh = x.register_hook(lambda g: g)\n", "RuntimeError", 3,
           5, "cannot register a hook on a tensor that doesn't require gradient"),
    raises("hook-that-changes-the-size",
           T + "x = torch.tensor(2.0, requires_grad=True)\ny = x * 2\n"
           "h = y.register_hook(lambda g: torch.ones(3))\nz = y * 3\nz.backward()\n",
           "RuntimeError", 6, 1, "hook '<lambda>' has changed the size of value",
           kind="backward"),
    raises("in-place-on-a-leaf", T + "x = torch.tensor(1.0, requires_grad=True)\nx.add_(1)\n",
           "RuntimeError", 3, 1,
           "a leaf Variable that requires grad is being used in an in-place operation."),
    raises("augmented-assign-on-a-leaf",
           T + "x = torch.tensor(1.0, requires_grad=True)\nx += 1\n", "RuntimeError", 3, 1,
           "a leaf Variable that requires grad is being used in an in-place operation."),
    raises("modified-saved-tensor",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.backward()\n",
           "RuntimeError", 5, 1,
           "one of the variables needed for gradient computation has been modified by an "
           "inplace operation: [torch.FloatTensor []], which is output 0 of Exp, is at version "
           "1; expected version 0 instead. Hint: enable anomaly detection to find the operation "
           "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
           "check_nan=False).", kind="backward"),
    raises("second-backward",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * x\ny.backward()\ny.backward()\n",
           "RuntimeError", 5, 1,
           "Trying to backward through the graph a second time (or directly access saved "
           "tensors after they have already been freed). Saved intermediate values of the "
           "graph are freed when you call .backward() or autograd.grad(). Specify "
           "retain_graph=True if you need to backward through the graph a second time or if "
           "you need to access saved tensors after calling backward.", kind="backward"),
    raises("backward-of-a-vector",
           T + "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\ny.backward()\n",
           "RuntimeError", 4, 1, "grad can be implicitly created only for scalar outputs",
           kind="backward"),
    raises("backward-without-grad", T + "x = torch.tensor(1.0)\ny = x * 2\ny.backward()\n",
           "RuntimeError", 4, 1,
           "element 0 of tensors does not require grad and does not have a grad_fn",
           kind="backward"),
    raises("backward-after-no-grad",
           T + "x = torch.tensor(1.0, requires_grad=True)\nwith torch.no_grad():\n"
           "    y = x * 2\ny.backward()\n", "RuntimeError", 5, 1,
           "element 0 of tensors does not require grad and does not have a grad_fn",
           kind="backward"),
    raises("gradient-as-a-list", T + "a = torch.tensor(2.0, requires_grad=True)\nb = a * 2\n"
           "b.backward(gradient=[1.0])\n", "TypeError", 4, 1,
           "gradients can be either Tensors or None, but got float", kind="backward"),
    raises("gradient-of-another-shape",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * x\n"
           "y.backward(gradient=torch.tensor([1.0, 2.0]))\n", "RuntimeError", 4, 1,
           "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has "
           "a shape of torch.Size([]).", kind="backward"),
    raises("backward-misspelt-keyword",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * x\n"
           "y.backward(retain_grap=True)\n", "TypeError", 4, 1,
           "Tensor.backward() got an unexpected keyword argument 'retain_grap'", kind="backward"),
    raises("grad-of-an-unused-input",
           T + "x = torch.tensor(1.0, requires_grad=True)\nz = torch.tensor(1.0, "
           "requires_grad=True)\ny = x * 2\ng = torch.autograd.grad(y, [x, z])\n", "RuntimeError",
           5, 5, "The differentiated Tensor at index 1 appears to not have been used in the "
           "graph. Set allow_unused=True if this is the desired behavior.", kind="backward"),
    raises("grad-of-a-float",
           T + "x = torch.tensor(1.0, requires_grad=True)\ng = torch.autograd.grad(x * 2, 3.0)\n",
           "TypeError", 3, 5, "'float' object is not iterable", kind="backward"),
    raises("grad-unpacked-into-two",
           T + "x = torch.tensor(1.0, requires_grad=True)\n"
           "gx, gy = torch.autograd.grad(x * 2, x)\n",
           "ValueError", 3, 1, "not enough values to unpack (expected 2, got 1)"),
    raises("next-functions-index",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * x\n"
           "g = y.grad_fn.next_functions[5]\n", "IndexError", 4, 5, "tuple index out of range"),
    raises("grad-fn-name-with-an-argument",
           T + "x = torch.tensor(1.0, requires_grad=True)\ny = x * x\nv = y.grad_fn.name(1)\n",
           "TypeError", 4, 5, "MulBackward0.name() takes no arguments (1 given)"),
    raises("set-grad-enabled-without-a-mode",
           T + "x = torch.tensor(1.0, requires_grad=True)\nwith torch.set_grad_enabled():\n"
           "    y = x * 2\n", "TypeError", 3, 6,
           "set_grad_enabled.__init__() missing 1 required positional argument: 'mode'"),
    raises("inference-tensor-saved",
           T + "with torch.inference_mode():\n    x = torch.tensor(1.0)\n"
           "w = torch.tensor(2.0, requires_grad=True)\ny = w * x\ny.backward()\n",
           "RuntimeError", 5, 5,
           "Inference tensors cannot be saved for backward. Please do not use Tensors created "
           "in inference mode in computation tracked by autograd. To work around this, you can "
           "make a clone to get a normal tensor and use it in autograd, or use "
           "`torch.no_grad()` instead of `torch.inference_mode()`."),
    raises("sum-over-a-string-dim", T + 'x = torch.tensor(1.0)\ny = x.sum(dim="a")\n',
           "TypeError", 3, 5,
           "sum() received an invalid combination of arguments - got (dim=str, ), but expected "
           "one of:\n * (*, torch.dtype dtype = None)\n * (tuple of ints dim, bool keepdim = "
           "False, *, torch.dtype dtype = None)\n",
           xfail="the lab fails inside (an internal error: '<=' not supported between "
                 "instances of 'int' and 'str')"),
    # -- custom autograd.Functions --------------------------------------------------------------
    raises("function-returns-too-few-gradients",
           T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n"
           "        return x * y\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
           "a = torch.tensor(1.0, requires_grad=True)\nb = torch.tensor(2.0, requires_grad=True)\n"
           "F.apply(a, b).backward()\n", "RuntimeError", 11, 1,
           "function FBackward returned an incorrect number of gradients (expected 2, got 1)",
           kind="backward"),
    raises("function-called-as-an-instance",
           T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
           "a = torch.tensor(1.0, requires_grad=True)\ny = F()(a)\n", "RuntimeError", 10, 5,
           "Legacy autograd function with non-static forward method is deprecated. Please use "
           "new-style autograd function with static forward method. (Example: "
           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"),
    raises("function-without-backward",
           T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        return x * 2\na = torch.tensor(1.0, requires_grad=True)\n"
           "F.apply(a).backward()\n", "NotImplementedError", 7, 1,
           "You must implement either the backward or vjp method for your custom "
           "autograd.Function to use it with backward mode AD.", kind="backward"),
    raises("saved-tensors-unpacked-into-two",
           T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        ctx.save_for_backward(x)\n        return x * 2\n    @staticmethod\n"
           "    def backward(ctx, g):\n        x, y = ctx.saved_tensors\n        return g\n"
           "a = torch.tensor(1.0, requires_grad=True)\nF.apply(a).backward()\n", "ValueError",
           9, 9, "not enough values to unpack (expected 2, got 1)", kind="backward"),
    raises("save-for-backward-of-an-int",
           T + "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        ctx.save_for_backward(x * 2, 3)\n        return x * 2\n"
           "a = torch.tensor(1.0, requires_grad=True)\ny = F.apply(a)\n", "TypeError", 5, 9,
           "save_for_backward can only save variables, but argument 1 is of type int"),
    raises("gradcheck-in-float32",
           T + "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "ok = torch.autograd.gradcheck(lambda t: t * 2, (x,))\n", "GradcheckError", 3, 6,
           "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[1.9670, "
           "0.0000],\n        [0.0000, 1.9073]])\nanalytical:tensor([[2., 0.],\n        [0., "
           "2.]])\n"),
]
