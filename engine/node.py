"""Node: one backward function of the graph, with its edges, saved values and hooks.

Every op that records creates one Node, which takes the next sequence number
(node.h: `Node(edge_list&&)` calls `sequence_number::get_and_increment()`).
`next_edges` lists, in argument order, where each input's gradient goes: the input's
`grad_fn` (at the output it came from) or its AccumulateGrad; an input that needs no
gradient has the edge None, as `next_functions` shows `(None, 0)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from engine import errors
from engine.context import UINT64_MAX

if TYPE_CHECKING:
    from engine.context import AutogradContext


class Edge:
    """`(function, input_nr)`: the node a gradient flows to, and which of its inputs."""

    __slots__ = ("function", "input_nr")

    def __init__(self, function: Node, input_nr: int = 0) -> None:
        self.function = function
        self.input_nr = input_nr


class InputMetadata:
    """What a node knows of one forward output: the gradient it receives must have this
    shape and dtype (`validate_outputs` sums a broadcast gradient back and casts it)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype


class RemovableHandle:
    """What `register_hook` returns: `remove()` takes the hook out of its list."""

    __slots__ = ("hooks", "hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self.hooks = hooks
        self.hook = hook

    def remove(self) -> None:
        for i, h in enumerate(self.hooks):
            if h is self.hook:
                del self.hooks[i]
                return


class SavedVariable:
    """A tensor (or number, or sizes) saved for backward.

    Tensors are freed after the node runs unless the graph is kept; reading a freed one
    raises "backward through the graph a second time". A tensor records its version when
    saved, and reading it after an in-place change raises PyTorch's version error.

    An output of the node that saves it (tanh's `result`) is kept without its grad_fn,
    which would be that very node, as saved_variable.cpp does: node -> saved -> tensor ->
    node would be a cycle. `unpack(saved_for)` gives the output its grad_fn back.
    Under `saved_tensors_hooks(pack, unpack)` only what `pack` returned is kept.
    """

    __slots__ = ("value", "is_tensor", "is_output", "released", "saved_version",
                 "version_counter", "output_nr", "packed", "unpack_hook", "for_message")

    def __init__(self, value: Any, is_tensor: bool, is_output: bool = False) -> None:
        self.is_tensor = is_tensor
        self.is_output = is_output
        self.released = False
        self.packed: Any = None
        self.unpack_hook: Callable[[Any], Any] | None = None
        self.for_message: Any = None      # the tensor a packed value came from
        if not is_tensor:
            self.value = value
            self.saved_version = 0
            self.version_counter: Any = None
            self.output_nr = 0
            return
        t: Tensor = value
        self.saved_version = t.version
        self.version_counter = t.version_counter
        self.output_nr = t.output_nr
        if t.is_inference:
            raise errors.TorchError("RuntimeError", errors.INFERENCE_SAVED)
        hooks = t.ctx.saved_tensors_hooks
        if hooks:
            pack, unpack = hooks[-1]
            self.value = None
            mode, t.ctx.grad_mode = t.ctx.grad_mode, False     # saved_variable.cpp packs
            try:                                               # under a NoGradGuard
                self.packed = pack(t)
            finally:
                t.ctx.grad_mode = mode
            self.unpack_hook = unpack
        elif is_output:
            self.value = Tensor(t.data, t.ctx)
            self.value.version_counter = t.version_counter
        else:
            self.value = t
        self.for_message = t if self.value is None else None

    def unpack(self, saved_for: Node | None = None) -> Any:
        if self.released:
            raise errors.TorchError("RuntimeError", errors.FREED_GRAPH)
        if not self.is_tensor:
            return self.value
        if self.version_counter.version != self.saved_version:
            raise errors.modified_by_inplace(self._message_tensor(saved_for),
                                             self.version_counter.version, self.saved_version)
        if self.unpack_hook is not None:
            return self.unpack_hook(self.packed)
        if self.is_output and saved_for is not None:
            return Tensor(self.value.data, self.value.ctx, grad_fn=saved_for,
                          output_nr=self.output_nr)
        return self.value

    def _message_tensor(self, saved_for: Node | None) -> tuple[Any, str | None, int]:
        """The saved tensor's legacy type and sizes, and the node the message names: the
        node that saved an output, else the tensor's grad_fn as it is now."""
        t = self.value if self.value is not None else self.for_message
        node = saved_for if self.is_output else (t.grad_fn if t is not None else None)
        # as PyTorch 2.13 writes it: ExpBackward0 is "Exp", PowBackward1 "Pow1", a custom
        # SqBackward "Sq"; CopyBackwards stays as it is
        name = None if node is None else re.sub(r"Backward(0$)?(?=\d*$)", "", node.node_name)
        return t, name, self.output_nr

    def release(self) -> None:
        if self.is_tensor and not self.released:
            self.released = True
            self.value = None
            self.packed = None


class Node:
    """A backward function. Subclasses give `name`, save values and implement `apply`.

    `apply` takes one gradient per forward output (None where none arrived) and returns
    one per input, None where that input's edge is None."""

    name: ClassVar[str] = "Node"
    # The `_saved_*` attributes this node type has (a None one was not needed).
    saved_names: ClassVar[tuple[str, ...]] = ()
    # True for a custom Function's node, whose `apply` fills in missing gradients itself.
    materializes_own_grads: ClassVar[bool] = False
    # True for a custom Function's node too: what its backward returned for an input that
    # needs no gradient still reaches its post-hooks (validate_outputs skips an edge that
    # is not valid; it does not clear its gradient). The lab's own nodes compute gradients
    # for every input, so theirs are cleared, as PyTorch's never computes them.
    keeps_unneeded_grads: ClassVar[bool] = False
    __slots__ = ("ctx", "id", "sequence_nr", "next_edges", "saved", "input_metadata",
                 "pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad_hooks",
                 "bound_to", "line", "scope", "unpacked", "__weakref__")

    def __init__(self, ctx: AutogradContext, inputs: list[Tensor | None],
                 sequence_nr: int | None = None) -> None:
        self.ctx = ctx
        self.line = ctx.line                  # the program's line that recorded it
        self.scope = ctx.scope                # the module whose forward recorded it, if any
        self.sequence_nr = ctx.take_sequence_nr() if sequence_nr is None else sequence_nr
        self.id = ctx.take_node_id()
        self.next_edges: list[Edge | None] = [gradient_edge(t) for t in inputs]
        self.saved: dict[str, SavedVariable] = {}
        self.input_metadata: list[InputMetadata] = []
        # None until a hook is registered (Note [Hook lists made when needed])
        self.pre_hooks: list[Callable[[Any], Any]] | None = None
        self.post_hooks: list[Callable[[Any, Any], Any]] | None = None
        self.tensor_pre_hooks: dict[int, list[Callable[[Any], Any]]] | None = None
        self.retains_grad_hooks: dict[int, Callable[[Any], Any]] | None = None
        self.bound_to: str | None = None      # the program variable its output was bound to
        self.unpacked: dict[str, Any] | None = None   # see Note [Saving order]
        if self.id == ctx.keep_node_id:
            ctx.kept = (self, [None if t is None else Tensor(t.data.copy(), ctx,
                        is_wrapped_number=t.is_wrapped_number) for t in inputs])

    @property
    def node_name(self) -> str:
        """`grad_fn.name()`: the node class's name (a custom Function's node overrides it
        with `NameBackward`)."""
        return self.name

    @property
    def type_name(self) -> str:
        """The class name its repr shows (`<AccumulateGrad object at ...>`)."""
        return self.node_name.rsplit("::", 1)[-1]

    # Note [Saving order]
    # PyTorch's generated code saves a node's inputs in the alphabetical order of their
    # names, then its outputs (MulBackward0: other, self; PowBackward1: exponent, self,
    # result), and its apply unpacks all of them first, in the same order: what a
    # `saved_tensors_hooks` pack or unpack hook that prints shows (recorded from 2.13).
    # Ops call `save` in that order; `saved_value` unpacks hooked values in it.
    def save(self, name: str, value: Any) -> None:
        """Save a value for backward (`_saved_<name>`): a tensor, a number or sizes."""
        if isinstance(value, Tensor):
            self.saved[name] = SavedVariable(value, True, value.grad_fn is self)
        else:
            self.saved[name] = SavedVariable(value, False)

    def saved_value(self, name: str) -> Any:
        """One saved value: freed-graph and version errors are raised here. Values packed
        by hooks are unpacked together, in saving order (see Note [Saving order])."""
        var = self.saved[name]
        if var.unpack_hook is not None and not self.unpacked:
            self.unpacked = {n: v.unpack(self) for n, v in self.saved.items()
                             if v.unpack_hook is not None}
        if self.unpacked and name in self.unpacked:
            return self.unpacked.pop(name)
        return var.unpack(self)

    def needs_input_grad(self, i: int) -> bool:
        """`should_compute_output(i)`: input i has somewhere to send its gradient; while
        this node is applied for `autograd.grad`, `task_should_compute_output(i)`: and
        that somewhere leads to an input (exec_info)."""
        edge = self.next_edges[i]
        if edge is None:
            return False
        ctx = self.ctx
        if ctx.applying is self and ctx.exec_info:
            info = ctx.exec_info.get(edge.function)
            return info is not None and bool(info.should_execute())
        return True

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise NotImplementedError

    def release_variables(self) -> list[str]:
        """Free saved tensors (`release_variables()`); returns the names freed."""
        freed = []
        for name, var in self.saved.items():
            if var.is_tensor and not var.released:
                var.release()
                freed.append(name)
        return freed

    def next_functions(self) -> list[tuple[Node | None, int]]:
        return [(e.function, e.input_nr) if e else (None, 0) for e in self.next_edges]

    @property
    def num_outputs(self) -> int:
        """How many forward outputs feed gradients into this node (`num_inputs()` in C++,
        where a node's inputs are gradients)."""
        return max(1, len(self.input_metadata))

    def __repr__(self) -> str:
        seq = "MAX" if self.sequence_nr == UINT64_MAX else self.sequence_nr
        return f"<{self.node_name} #{seq}>"


def gradient_edge(t: Tensor | None) -> Edge | None:
    """Where t's gradient goes: its grad_fn, its AccumulateGrad if a leaf, else nowhere."""
    if t is None or not t.requires_grad:
        return None
    node = t.grad_fn
    if node is not None:
        return Edge(node, t.output_nr)
    if not t._requires_grad:        # a view made under no_grad of a base that requires grad
        return None
    return Edge(t.grad_accumulator())


from engine.tensor import Tensor  # noqa: E402  (tensor.py's ops need Node first)
