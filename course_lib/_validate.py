"""One check per kind of argument, so every model boundary says the same thing in the same words.

Each function returns the value it accepted and raises an error that names the argument
and what was expected. Booleans are not integers here and strings are not booleans:
``bias="False"`` is a mistake, not a false value.
"""

from __future__ import annotations

import math
import numbers

import torch


def positive_int(name: str, value) -> int:
    """``value`` if it is an int >= 1 (not a bool), else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def non_negative_int(name: str, value) -> int:
    """``value`` if it is an int >= 0 (not a bool), else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def boolean(name: str, value) -> bool:
    """``value`` if it is a bool, else TypeError naming ``name`` (the string "False" is truthy)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def number(name: str, value, low: float | None = None, high: float | None = None, *, open_low: bool = False) -> float:
    """``value`` as a float if it is a real number (not a bool, a string or NaN) in [low, high].

    ``open_low=True`` excludes ``low`` itself (for quantities that must be > 0).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    too_low = low is not None and (value <= low if open_low else value < low)
    if too_low or (high is not None and value > high):
        lo = "(" if open_low else "["
        raise ValueError(f"{name} must be in {lo}{low}, {high}], got {value!r}")
    return value


def one_of(name: str, value, options) -> object:
    """``value`` if it is one of ``options``, else ValueError listing them."""
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def token_ids(name: str, ids, vocab_size: int | None = None, dim: int | None = 2) -> torch.Tensor:
    """``ids`` if it is an integer tensor of ``dim`` dimensions (``None``: any) with every id in
    [0, vocab_size): an id outside the vocabulary is refused here, before it reaches an embedding
    (where it would be an index error on the CPU and a device-side assert on a GPU)."""
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or (dim is not None and ids.dim() != dim):
        got = f"shape {tuple(ids.shape)}, dtype {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        shape = {1: "a (T,)", 2: "a (B, T)"}.get(dim, f"a {dim}-dimensional") if dim is not None else "a"
        raise ValueError(f"{name} must be {shape} tensor of token ids (torch.long), got {got}")
    if vocab_size is not None and ids.numel() and ids.device.type != "meta":
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab_size:
            bad = low if low < 0 else high
            raise ValueError(f"{name} holds token id {bad}, outside the vocabulary [0, {vocab_size})")
    return ids
