"""Plain data across a process boundary: a strict JSON encoding of what checks exchange.

Only these values are encoded: None, bool, int, float (NaN and infinities too), str, list,
tuple, dict (keys may be any encodable scalar or tuple), NumPy arrays (and NumPy scalars, as
0-d arrays) and torch tensors. Anything else, an object with its own ``__eq__`` above all, is
refused with a TypeError, so what a grader compares is data, never code.

Every JSON value is either a JSON scalar (null, true/false, an integer, a finite float, a
string), a JSON list (a Python list) or an object with exactly one tag:

- ``{"float": "nan" | "inf" | "-inf"}``
- ``{"tuple": [...]}``
- ``{"dict": [[key, value], ...]}``
- ``{"ndarray": {"dtype": ..., "shape": [...], "data": base64 of the little-endian bytes}}``
- ``{"tensor": {...the same three fields...}}``

so ``from_plain(json.loads(json.dumps(to_plain(x))))`` gives back ``x`` bit for bit.
"""

from __future__ import annotations

import base64
import math

import numpy as np

_NUMPY_DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
}
_TORCH_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"}
MAX_DEPTH = 64


class NotATensor(TypeError):
    """A tensor the checks read is not exactly a ``torch.Tensor`` or ``nn.Parameter``; the message says which.
    (Defined here, not in :mod:`course_lib.checks.tensors`, which may be first imported while a check observes a
    call: a class body of the checks' own run then would be refused as an entry into them.)"""


def _is_tensor(x) -> bool:
    cls = type(x)
    return any(c.__module__.startswith("torch") and c.__name__ == "Tensor" for c in cls.__mro__)


def _array(a: np.ndarray) -> dict:
    dtype = a.dtype.name
    if dtype not in _NUMPY_DTYPES:
        raise TypeError(f"arrays of dtype {dtype} cannot be sent; use one of {sorted(_NUMPY_DTYPES)}")
    a = np.asarray(a, dtype=a.dtype.newbyteorder("<")).copy(order="C")
    return {"dtype": dtype, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode("ascii")}


def _tensor(t) -> dict:
    import torch

    t = t.detach().cpu().contiguous()
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in _TORCH_DTYPES:
        raise TypeError(f"tensors of dtype {dtype} cannot be sent; use one of {sorted(_TORCH_DTYPES)}")
    if dtype == "bfloat16":  # NumPy has no bfloat16: send its bits
        raw = t.view(torch.int16).numpy()
    else:
        raw = t.numpy()
    raw = np.asarray(raw, dtype=raw.dtype.newbyteorder("<")).copy(order="C")
    return {"dtype": dtype, "shape": list(t.shape), "data": base64.b64encode(raw.tobytes()).decode("ascii")}


def to_plain(obj, _depth: int = 0):
    """Encode ``obj`` as JSON-ready data (see the module docstring); TypeError for anything else."""
    if _depth > MAX_DEPTH:
        raise TypeError(f"data nested deeper than {MAX_DEPTH} levels cannot be sent")
    if obj is None or type(obj) in (bool, int, str):
        return obj
    if type(obj) is float:
        return obj if math.isfinite(obj) else {"float": repr(obj)}
    if type(obj) is list:
        return [to_plain(x, _depth + 1) for x in obj]
    if type(obj) is tuple:
        return {"tuple": [to_plain(x, _depth + 1) for x in obj]}
    if type(obj) is dict:
        return {"dict": [[to_plain(k, _depth + 1), to_plain(v, _depth + 1)] for k, v in obj.items()]}
    if type(obj) is np.ndarray:
        return {"ndarray": _array(obj)}
    if isinstance(obj, np.generic) and type(obj).__module__ == "numpy":
        return {"ndarray": _array(np.asarray(obj))}
    if _is_tensor(obj) and type(obj).__name__ in ("Tensor", "Parameter"):
        return {"tensor": _tensor(obj)}
    raise TypeError(f"{type(obj).__module__}.{type(obj).__qualname__} is not plain data and cannot be sent")


def _decode_buffer(spec, numpy_dtypes) -> tuple[np.ndarray, str]:
    if not (isinstance(spec, dict) and set(spec) == {"dtype", "shape", "data"}):
        raise ValueError("an array must have exactly dtype, shape and data")
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if dtype not in numpy_dtypes:
        raise ValueError(f"unknown dtype {dtype!r}")
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"an array's shape must be a list of sizes, got {shape!r}")
    if not isinstance(data, str):
        raise ValueError("an array's data must be a base64 string")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    np_dtype = np.dtype("<i2") if dtype == "bfloat16" else np.dtype(dtype).newbyteorder("<")
    if len(raw) != math.prod(shape) * np_dtype.itemsize:
        raise ValueError(f"an array of shape {shape} and dtype {dtype} cannot hold {len(raw)} bytes")
    array = np.frombuffer(raw, dtype=np_dtype).reshape(shape)
    return array.astype(array.dtype.newbyteorder("="), copy=True), dtype


def from_plain(data, _depth: int = 0):
    """Decode what :func:`to_plain` made; ValueError for anything it could not have made."""
    if _depth > MAX_DEPTH:
        raise ValueError(f"data nested deeper than {MAX_DEPTH} levels")
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is float:
        if not math.isfinite(data):
            raise ValueError("non-finite floats must be tagged")
        return data
    if type(data) is list:
        return [from_plain(x, _depth + 1) for x in data]
    if type(data) is not dict or len(data) != 1:
        raise ValueError(f"not plain data: {type(data).__name__}")
    ((tag, value),) = data.items()
    if tag == "float":
        if value not in ("nan", "inf", "-inf"):
            raise ValueError(f"unknown float {value!r}")
        return float(value)
    if tag == "tuple" and type(value) is list:
        return tuple(from_plain(x, _depth + 1) for x in value)
    if tag == "dict" and type(value) is list:
        out = {}
        for item in value:
            if not (type(item) is list and len(item) == 2):
                raise ValueError("a dict is a list of [key, value] pairs")
            key = from_plain(item[0], _depth + 1)
            try:
                hash(key)
            except TypeError:
                raise ValueError(f"a dict key must be hashable, got {type(key).__name__}") from None
            out[key] = from_plain(item[1], _depth + 1)
        return out
    if tag == "ndarray":
        return _decode_buffer(value, _NUMPY_DTYPES)[0]
    if tag == "tensor":
        import torch

        array, dtype = _decode_buffer(value, _TORCH_DTYPES)
        tensor = torch.from_numpy(array)
        return tensor.view(torch.bfloat16) if dtype == "bfloat16" else tensor
    raise ValueError(f"unknown tag {tag!r}")


def same(a, b) -> bool:
    """Exact structural equality of plain data (tensors and arrays: dtype, shape and every bit)."""
    if _is_tensor(a) or _is_tensor(b):
        if not (_is_tensor(a) and _is_tensor(b)) or a.dtype != b.dtype or a.shape != b.shape:
            return False
        return _tensor(a)["data"] == _tensor(b)["data"]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b
