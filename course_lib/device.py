"""Devices, seeds and the first cell of every notebook.

``get_device`` picks CUDA, then Apple's MPS, then the CPU, so the same notebook
runs on a laptop and on a GPU machine. ``COURSE_LIB_DEVICE=cpu|cuda|mps``
overrides the choice; asking for a device that is not there is an error, never a
silent fall-back (a student who asked for the GPU must know they are not on it).
"""

from __future__ import annotations

import os
import platform
import random
import re

import numpy as np
import torch

DEVICE_ENV = "COURSE_LIB_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "mps")


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def _available(kind: str) -> bool:
    if kind == "cpu":
        return True
    if kind == "cuda":
        return torch.cuda.is_available()
    return _mps_available()


def get_device(prefer: str | None = None) -> torch.device:
    """Return the device lessons should use.

    Order of precedence: ``prefer`` (e.g. "cpu", "cuda", "cuda:1", "mps"), then the
    environment variable ``COURSE_LIB_DEVICE``, then the best available device
    (CUDA, then MPS, then CPU).
    """
    requested, source = prefer, "prefer"
    if requested is None and os.environ.get(DEVICE_ENV, "").strip():
        requested, source = os.environ[DEVICE_ENV].strip(), DEVICE_ENV
    if requested is None:
        for kind in ("cuda", "mps"):
            if _available(kind):
                return torch.device(kind)
        return torch.device("cpu")

    if not isinstance(requested, str):
        raise TypeError(f"{source} must be a string such as 'cpu' or 'cuda', got {type(requested).__name__}")
    match = re.fullmatch(r"(cpu|mps|cuda)(?::(\d+))?", requested.lower())
    if match is None or (match.group(2) is not None and match.group(1) != "cuda"):
        raise ValueError(f"{source} must be one of {', '.join(KNOWN_DEVICES)} (optionally 'cuda:N'), got {requested!r}")
    kind = match.group(1)
    if not _available(kind):
        raise RuntimeError(
            f"{source} asks for device {requested!r}, but it is not available on this machine "
            f"(torch {torch.__version__}, cuda available: {torch.cuda.is_available()}, "
            f"mps available: {_mps_available()}). Use 'cpu' or unset {DEVICE_ENV}."
        )
    device = torch.device(requested.lower())
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise RuntimeError(
            f"{source} asks for {requested!r}, but only {torch.cuda.device_count()} CUDA device(s) exist"
        )
    return device


def set_seed(seed: int) -> None:
    """Seed Python's, NumPy's and PyTorch's generators (on every device) for reproducible runs."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def describe(device: torch.device | None = None) -> str:
    """One human-readable paragraph: device, versions and threads."""
    device = device or get_device()
    parts = [f"device: {device}"]
    if device.type == "cuda":
        parts[0] += f" ({torch.cuda.get_device_name(device)})"
    parts.append(f"python {platform.python_version()}, torch {torch.__version__}, numpy {np.__version__}")
    parts.append(f"CPU threads used by torch: {torch.get_num_threads()} of {os.cpu_count()} cores")
    return "\n".join(parts)
