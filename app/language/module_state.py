"""The rest of nn.Module's surface that course code calls: registering buffers, parameters
and submodules by name, `named_children()`, `apply(fn)`, forward hooks, and the module's
state as a dict (`state_dict()`, `load_state_dict()`), each with PyTorch's checks and
messages (torch/nn/modules/module.py)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from app.language.values import Builtin, Value, py_repr, type_name
from engine.errors import TorchError
from engine.node import RemovableHandle
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter
    from app.language.nn_api import Module

Args = list[Value]
Kwargs = dict[str, Value]


def _bind(interp: Interpreter, name: str, spec: str, args: Args, kwargs: Kwargs
          ) -> dict[str, Value]:
    from app.language.args import Signature

    kwargs.pop("__text__", None)
    return Signature(f"Module.{name}", "self, " + spec, python=True).bind(args, kwargs)


def _has_attribute(interp: Interpreter, module: Module, name: str) -> bool:
    try:
        module.lab_getattr(interp, name)
    except TorchError:
        return False
    return True


def _check_name(interp: Interpreter, module: Module, what: str, name: Value,
                table: dict[str, Any]) -> str:
    """register_buffer / register_parameter / add_module's checks of the name."""
    from app.language.nn_api import _typename

    if not isinstance(name, str):
        raise TorchError("TypeError", f"{what} name should be a string. Got {_typename(name)}")
    if what == "module" and _has_attribute(interp, module, name) and name not in table:
        raise TorchError("KeyError", f"\"attribute '{name}' already exists\"")
    if "." in name:
        raise TorchError("KeyError", f"'{what} name can\\'t contain \".\"" +
                         (f", got: {name}'" if what == "module" else "'"))
    if name == "":
        raise TorchError("KeyError", f"'{what} name can\\'t be empty string \"\"'")
    if what != "module" and _has_attribute(interp, module, name) and name not in table:
        raise TorchError("KeyError", f"\"attribute '{name}' already exists\"")
    return name


def _register_buffer(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    from app.language.nn_api import _typename

    a = _bind(interp, "register_buffer", "name, tensor, persistent=True", args, kwargs)
    module: Module = a["self"]
    if not module.initialized:
        raise TorchError("AttributeError", "cannot assign buffer before Module.__init__() call")
    name = _check_name(interp, module, "buffer", a["name"], module.buffers)
    tensor = a["tensor"]
    if tensor is not None and not isinstance(tensor, Tensor):
        raise TorchError("TypeError", f"cannot assign '{_typename(tensor)}' object to buffer "
                         f"'{name}' (torch Tensor or None required)")
    module.buffers[name] = tensor
    if a["persistent"]:
        module.non_persistent.discard(name)
    else:
        module.non_persistent.add(name)


def _register_parameter(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    from app.language.nn_api import _typename

    a = _bind(interp, "register_parameter", "name, param", args, kwargs)
    module: Module = a["self"]
    if not module.initialized:
        raise TorchError("AttributeError", "cannot assign parameter before Module.__init__() "
                         "call")
    name = _check_name(interp, module, "parameter", a["name"], module.parameters)
    param = a["param"]
    if param is not None and not (isinstance(param, Tensor) and param.is_parameter):
        raise TorchError("TypeError", f"cannot assign '{_typename(param)}' object to parameter "
                         f"'{name}' (torch.nn.Parameter or None required)")
    module.parameters[name] = param
    interp.requires_grad_changed()


def add_module(interp: Interpreter, module: Module, name: Value, child: Value) -> None:
    from app.language.nn_api import Module, _typename

    if not isinstance(child, Module) and child is not None:
        raise TorchError("TypeError", f"{_typename(child)} is not a Module subclass")
    name = _check_name(interp, module, "module", name, module.modules)
    module.modules[name] = child
    interp.requires_grad_changed()


def _add_module(interp: Interpreter, args: Args, kwargs: Kwargs) -> None:
    a = _bind(interp, "add_module", "name, module", args, kwargs)
    add_module(interp, a["self"], a["name"], a["module"])


def _named_children(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.nn_api import _Parameters

    return _Parameters(list(args[0].named_children_list()), "named_children")


def _buffers(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.nn_api import _Parameters

    return _Parameters([b for _, b in args[0].named_parameters_list(table="buffers")],
                       "buffers")


def _named_buffers(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    from app.language.nn_api import _Parameters

    return _Parameters(list(args[0].named_parameters_list(table="buffers")), "named_buffers")


def _apply(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    """`model.apply(fn)`: fn on every submodule, children before their parent."""
    a = _bind(interp, "apply", "fn", args, kwargs)
    module: Module = a["self"]
    for child in module.children_list():
        _apply(interp, [child, a["fn"]], {})
    interp.call(a["fn"], [module], {})
    return module


def _hook_registrar(name: str, table: str, spec: str) -> Builtin:
    """`register_forward_hook(hook)` and its kin: the hook joins the module's list (at
    its front with prepend=True); the handle takes it out."""

    def register(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
        a = _bind(interp, name, spec, args, kwargs)
        if a.get("with_kwargs") or a.get("always_call"):
            raise TorchError("UnsupportedError", f"the lab's {name} takes the hook and "
                             "prepend= only")
        hooks: list[Value] = getattr(a["self"], table)
        hooks.insert(0, a["hook"]) if a["prepend"] else hooks.append(a["hook"])
        return RemovableHandle(hooks, a["hook"])

    return Builtin(f"Module.{name}", register)


# -- the state as a dict -----------------------------------------------------------------------

def _state(module: Module, prefix: str, keep_vars: bool, out: OrderedDict[str, Value]
           ) -> None:
    """Module._save_to_state_dict, then each child's under its name (a module held twice
    is saved twice, as PyTorch does)."""
    from app.language.tensor_api import detach

    module.check_initialized("_version")
    for table in (module.parameters, {k: v for k, v in module.buffers.items()
                                      if k not in module.non_persistent}):
        for key, t in table.items():
            if t is not None:
                out[prefix + key] = t if keep_vars else detach(t)
    for key, child in module.modules.items():
        if child is not None:
            _state(child, f"{prefix}{key}.", keep_vars, out)


def _state_dict(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    a = _bind(interp, "state_dict", "*, destination=None, prefix='', keep_vars=False",
              args, kwargs)
    out: OrderedDict[str, Value] = OrderedDict() if a["destination"] is None \
        else a["destination"]
    _state(a["self"], str(a["prefix"]), bool(a["keep_vars"]), out)
    return out


class IncompatibleKeys:
    """What load_state_dict returns: a namedtuple of the missing and the unexpected keys,
    which prints `<All keys matched successfully>` when both are empty."""

    lab_type_name = "_IncompatibleKeys"

    def __init__(self, missing: list[str], unexpected: list[str]) -> None:
        self.missing_keys = missing
        self.unexpected_keys = unexpected

    def lab_iter(self) -> list[Value]:
        return [self.missing_keys, self.unexpected_keys]

    def lab_len(self) -> int:
        return 2

    def lab_repr(self, addresses: Any) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={py_repr(self.missing_keys, addresses)}, "
                f"unexpected_keys={py_repr(self.unexpected_keys, addresses)})")

    def lab_getattr(self, interp: Interpreter, name: str) -> Value:
        if name in ("missing_keys", "unexpected_keys"):
            return self.missing_keys if name == "missing_keys" else self.unexpected_keys
        raise TorchError("AttributeError", f"'_IncompatibleKeys' object has no attribute "
                         f"'{name}'")


def _load(interp: Interpreter, module: Module, given: dict[str, Value], prefix: str,
          missing: list[str], unexpected: list[str], errors: list[str]) -> None:
    """Module._load_from_state_dict for one module, then its children."""
    from app.language.size import Size
    from engine.functions import inplace

    local = {k: v for k, v in [*module.parameters.items(), *module.buffers.items()]
             if v is not None and k not in module.non_persistent}
    for name, param in local.items():
        key = prefix + name
        if key not in given:
            missing.append(key)
            continue
        value = given[key]
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received <class "
                          f"'{type_name(value)}'>")
            continue
        if param.ndim == 0 and value.shape == (1,):
            value = Tensor(value.data.reshape(()), interp.ctx)
        if value.shape != param.shape:
            errors.append(f"size mismatch for {key}: copying a param with shape "
                          f"{py_repr(Size(value.shape), interp.addresses)} from checkpoint, the "
                          f"shape in current model is "
                          f"{py_repr(Size(param.shape), interp.addresses)}.")
            continue
        mode, interp.ctx.grad_mode = interp.ctx.grad_mode, False
        try:
            inplace.copy_(param, value)
        finally:
            interp.ctx.grad_mode = mode
    for key in given:            # listed even when not strict (PyTorch passes strict=True)
        if key.startswith(prefix):
            parts = key[len(prefix):].split(".", 1)
            if (len(parts) > 1 and parts[0] not in module.modules) or \
                    (len(parts) == 1 and parts[0] not in local):
                unexpected.append(key)
    for name, child in module.modules.items():
        if child is not None:
            inner = f"{prefix}{name}."
            _load(interp, child, {k: v for k, v in given.items() if k.startswith(inner)},
                  inner, missing, unexpected, errors)


def _load_state_dict(interp: Interpreter, args: Args, kwargs: Kwargs) -> Value:
    a = _bind(interp, "load_state_dict", "state_dict, strict=True, assign=False", args, kwargs)
    module: Module = a["self"]
    given = a["state_dict"]
    if not isinstance(given, dict):
        raise TorchError("TypeError", f"Expected state_dict to be dict-like, got <class "
                         f"'{type_name(given)}'>.")
    if a["assign"]:
        raise TorchError("UnsupportedError", "the lab's load_state_dict copies values in "
                         "place; it does not take assign=True")
    missing: list[str] = []
    unexpected: list[str] = []
    errors: list[str] = []
    strict = bool(a["strict"])
    _load(interp, module, dict(given), "", missing, unexpected, errors)
    if strict and unexpected:
        errors.insert(0, "Unexpected key(s) in state_dict: " +
                      ", ".join(f'"{k}"' for k in unexpected) + ". ")
    if strict and missing:
        errors.insert(0, "Missing key(s) in state_dict: " +
                      ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise TorchError("RuntimeError", f"Error(s) in loading state_dict for {module.kind}:"
                         "\n\t" + "\n\t".join(errors))
    return IncompatibleKeys(missing, unexpected)


METHODS: dict[str, Builtin] = {n: Builtin(f"Module.{n}", f) for n, f in {
    "register_buffer": _register_buffer, "register_parameter": _register_parameter,
    "add_module": _add_module, "register_module": _add_module,
    "named_children": _named_children, "buffers": _buffers, "named_buffers": _named_buffers,
    "apply": _apply, "state_dict": _state_dict, "load_state_dict": _load_state_dict,
}.items()}
METHODS.update({
    name: _hook_registrar(name, table, spec) for name, table, spec in (
        ("register_forward_hook", "forward_hooks",
         "hook, *, prepend=False, with_kwargs=False, always_call=False"),
        ("register_forward_pre_hook", "forward_pre_hooks",
         "hook, *, prepend=False, with_kwargs=False"),
        ("register_full_backward_pre_hook", "backward_pre_hooks", "hook, prepend=False"),
        ("register_full_backward_hook", "backward_hooks", "hook, prepend=False"))})
