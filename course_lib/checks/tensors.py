"""The tensors a student's object holds, read and written by the checks with nothing of the student's running.

A check reads the parameters a student's module holds (their initial range, their values as it drew them, whether
the forward changed them) and writes the values it draws into them. Asked of the tensors themselves that is the
student's code: an instance attribute hides a method (a tensor has a ``__dict__``: ``p.detach = ...``),
``torch.Tensor`` and ``nn.Parameter`` are Python classes whose methods can be replaced, a subclass's
``__torch_function__`` or a mode answers any op, and a module's ``named_parameters`` or ``state_dict`` is its
class's. Hostile class 33t forged lesson 07's reference (the drawn weights read back as zeros), 4.1's and 3.3's
initial range and 4.4's state so. Here: exact ``torch.Tensor`` and ``nn.Parameter`` only, found in the dicts
``nn.Module`` keeps them in, through torch's C methods bound when the checks are imported (before any student
code), with torch's function handlers and dispatch modes off while they run.
"""

from __future__ import annotations

import torch

from course_lib.checks.plain import NotATensor  # defined there: this module defines no class (see plain)

_BASE = torch._C.TensorBase  # a C type: its methods cannot be replaced (torch.Tensor's and nn.Parameter's can)
_DETACH, _CLONE, _COPY, _CPU, _ITEM = _BASE.detach, _BASE.clone, _BASE.copy_, _BASE.cpu, _BASE.item
_SIZE, _NUMEL, _ABS, _MIN, _MAX = _BASE.size, _BASE.numel, _BASE.abs, _BASE.min, _BASE.max
_EQUAL = torch._C._VariableFunctions.equal
_NO_FUNCTION, _NO_DISPATCH = torch._C.DisableTorchFunction, torch._C._DisableTorchDispatch
_GRAD_ENABLED, _SET_GRAD = torch._C.is_grad_enabled, torch._C._set_grad_enabled
_TENSOR, _PARAMETER, _MODULE = torch.Tensor, torch.nn.Parameter, torch.nn.Module
# (no comprehension here: this module may be first imported while a check observes a call, see plain.NotATensor)
_TYPE_NAME, _MRO = type.__dict__["__name__"].__get__, type.__dict__["__mro__"].__get__
_CLASS_DICT = type.__dict__["__dict__"].__get__
_GET, _ITEMS, _IN_SET = object.__getattribute__, dict.items, set.__contains__
# what nn.Module keeps its tensors and submodules in: a class that defines one of these names answers for them
_STORES = ("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set")


def _exact(p, name: str):
    kind = type(p)
    if kind is not _TENSOR and kind is not _PARAMETER:
        raise NotATensor(
            f"{name} is a {_TYPE_NAME(kind)}, not a torch.Tensor or nn.Parameter: the check reads torch's own only"
        )
    return p


def read(p, name: str = "a parameter") -> torch.Tensor:
    """A copy of ``p``'s values (on the CPU, outside any graph)."""
    _exact(p, name)
    with _NO_FUNCTION(), _NO_DISPATCH():
        return _CLONE(_CPU(_DETACH(p)))


def write(p, value: torch.Tensor, name: str = "a parameter") -> None:
    """``p``'s values set to ``value`` in place (recorded by no graph)."""
    _exact(p, name)
    was = _GRAD_ENABLED()
    _SET_GRAD(False)
    try:
        with _NO_FUNCTION(), _NO_DISPATCH():
            _COPY(p, value)
    finally:
        _SET_GRAD(was)


def shape(p, name: str = "a parameter") -> tuple:
    _exact(p, name)
    with _NO_FUNCTION(), _NO_DISPATCH():
        return tuple(_SIZE(p))


def equal(a, b) -> bool:
    """Do two tensors hold the same values (read as :func:`read` does)?"""
    a, b = read(a, "a tensor"), read(b, "a tensor")
    with _NO_FUNCTION(), _NO_DISPATCH():
        return bool(_EQUAL(a, b))


def extent(p, name: str = "a parameter") -> tuple[float, float, float, int]:
    """(min, max, max |value|, number of values) of ``p`` (zeros for an empty tensor)."""
    values = read(p, name)
    with _NO_FUNCTION(), _NO_DISPATCH():
        size = int(_NUMEL(values))
        if not size:
            return 0.0, 0.0, 0.0, 0
        return float(_ITEM(_MIN(values))), float(_ITEM(_MAX(values))), float(_ITEM(_MAX(_ABS(values)))), size


def _stores(module) -> dict:
    """The dicts ``module`` keeps its parameters, buffers and submodules in, read from the instance."""
    for klass in _MRO(type(module)):
        if klass is not _MODULE and any(name in _CLASS_DICT(klass) for name in _STORES):
            raise NotATensor(
                f"{_TYPE_NAME(klass)} defines how nn.Module keeps its parameters: the check cannot read them"
            )
    return {name: _GET(module, name) for name in _STORES}


def parameters(module, buffers: bool = False) -> dict:
    """Every parameter (and with ``buffers``, every buffer ``state_dict`` keeps) registered in ``module`` and its
    submodules, by name, in ``named_parameters``' order, each once: read from the dicts ``nn.Module`` keeps them
    in, so no method of the student's class is asked (an override of ``named_parameters`` or ``state_dict`` could
    show other tensors than the ones forward uses)."""
    found, seen = {}, set()

    def walk(m, prefix):
        if id(m) in seen or not any(klass is _MODULE for klass in _MRO(type(m))):  # no metaclass's __eq__
            return
        seen.add(id(m))
        stores = _stores(m)
        kept = list(_ITEMS(stores["_parameters"]))
        if buffers:
            skipped = stores["_non_persistent_buffers_set"]
            kept += [(n, b) for n, b in _ITEMS(stores["_buffers"]) if not _IN_SET(skipped, n)]
        for name, p in kept:
            if p is not None and id(p) not in seen:  # a tensor shared under two names: its first name
                seen.add(id(p))
                found[prefix + name] = _exact(p, prefix + name)
        for name, sub in _ITEMS(stores["_modules"]):
            if sub is not None:
                walk(sub, f"{prefix}{name}.")

    walk(module, "")
    return found


def state(module) -> dict:
    """What ``state_dict`` holds (parameters and persistent buffers), each read as :func:`read` does."""
    return {name: read(p, name) for name, p in parameters(module, buffers=True).items()}
