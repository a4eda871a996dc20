"""`module.register_full_backward_hook(hook)` (and `register_full_backward_pre_hook`), as
torch/utils/hooks.py `BackwardHook` builds it: the module's tensor inputs and outputs pass
through a BackwardHookFunction (an identity custom Function, node
`BackwardHookFunctionBackward`), whose post-hooks see the gradients of the outputs (the
pre-hooks may replace them) and then of the inputs, and call the user's hook with both.
Forward hooks and pre-hooks run around forward as `nn.Module._call_impl` runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.language.values import Value
from engine import custom_function, hooks
from engine.errors import TorchError
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

NO_INPUT_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")


def _identity_forward(ctx: custom_function.FunctionNode, args: list[Value]) -> Value:
    ctx.non_differentiable.extend(a for a in args if isinstance(a, Tensor)
                                  and not a.requires_grad)
    return tuple(args)


def _identity_backward(ctx: custom_function.FunctionNode, grads: list[Tensor]) -> Value:
    return tuple(grads)


def call_with_hooks(interp: Interpreter, module: Any, args: list[Value],
                    kwargs: dict[str, Value]) -> Value:
    """`module(*args)` with hooks, in nn.Module._call_impl's order: forward pre-hooks
    (a result replaces the inputs), the backward hook's input wiring, forward, forward
    hooks (a result replaces the output), the backward hook's output wiring."""
    for pre in list(module.forward_pre_hooks):
        result = interp.call(pre, [module, tuple(args)], {})
        if result is not None:
            args = list(result) if isinstance(result, tuple) else [result]
    hook = None
    if module.backward_hooks or module.backward_pre_hooks:
        hook = BackwardHook(interp, module, module.backward_hooks, module.backward_pre_hooks)
        args = hook.setup_input_hook(args)
    result = module.forward(interp, args, kwargs)
    for post in list(module.forward_hooks):
        replaced = interp.call(post, [module, tuple(args), result], {})
        if replaced is not None:
            result = replaced
    return result if hook is None else hook.setup_output_hook(result)


class BackwardHook:
    """One call's wiring between a module and its full backward hooks and pre-hooks."""

    def __init__(self, interp: Interpreter, module: Any, user_hooks: list[Value],
                 user_pre_hooks: list[Value] | None = None) -> None:
        self.interp = interp
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks or []
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def _apply_on_tensors(self, args: tuple[Value, ...]) -> tuple[
            tuple[Value, ...], list[int] | None, custom_function.FunctionNode | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and self.interp.ctx.grad_mode):
            return args, None, None
        wrapped = custom_function.apply(self.interp.ctx, "BackwardHookFunction", tensors,
                                        _identity_forward, _identity_backward)
        node = next(t.grad_fn for t in wrapped if isinstance(t, Tensor)
                    and isinstance(t.grad_fn, custom_function.FunctionNode))
        out = list(args)
        for i, t in zip(index, wrapped, strict=True):
            out[i] = t
        return tuple(out), index, node

    def _pack(self, index: list[int], values: tuple[Any, ...], size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for i, v in zip(index, values, strict=True):
            res[i] = v
        return tuple(res)

    def setup_input_hook(self, args: list[Value]) -> list[Value]:
        wrapped, index, node = self._apply_on_tensors(tuple(args))
        self.n_inputs = len(args)
        self.input_index = index
        if node is not None:
            hooks.register_node_hook(node, self._input_hook)
        return list(wrapped)

    def _input_hook(self, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        if self.grad_outputs is None or self.input_index is None:
            return None
        res = self._pack(self.input_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            out = self.interp.call_hook(hook, [self.module, res, self.grad_outputs])
            if out is None:
                continue
            if len(out) != len(res):
                raise TorchError("RuntimeError", f"Backward hook returned an invalid number of "
                                 f"grad_input, got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def setup_output_hook(self, result: Value) -> Value:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        wrapped, index, node = self._apply_on_tensors(args)
        self.n_outputs = len(args)
        self.output_index = index
        if node is not None:
            hooks.register_node_hook(node, self._output_hook)
        return wrapped if is_tuple else wrapped[0]

    def _output_hook(self, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        assert self.output_index is not None
        self.grad_outputs = self._pack(self.output_index, grad_outputs, self.n_outputs)
        for pre in self.user_pre_hooks:        # a result replaces the gradients that flow
            out = self.interp.call_hook(pre, [self.module, self.grad_outputs])
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise TorchError("RuntimeError", "Backward pre hook returned an invalid number "
                                 f"of grad_output, got {len(out)}, but expected "
                                 f"{len(self.grad_outputs)}")
            self.grad_outputs = tuple(out)
        local = self.grad_outputs
        if self.input_index is None:
            self.interp.ctx.warnings.append(NO_INPUT_WARNING)
            grad_inputs_none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = self.interp.call_hook(hook, [self.module, grad_inputs_none,
                                                   self.grad_outputs])
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise TorchError("RuntimeError", "Backward hook for Modules where no input "
                                     "requires gradient should always return None or None "
                                     "for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)
