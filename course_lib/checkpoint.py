"""One checkpoint format for every model the course ships: safetensors weights plus what rebuilds the model.

A checkpoint is a ``.safetensors`` file: the tensors (no pickle, so loading never runs code)
and, in the file's metadata, the ``kind`` of model, its ``config`` (a JSON object: the
arguments that rebuild it), its ``vocab`` (the token list, or null) and free-form ``info``
(what the training script measured). ``load`` reads the header first and builds the model
on PyTorch's ``meta`` device (no memory) to compare every name and shape with the file
before it allocates anything: a file whose config asks for a huge model fails at once.

    save(path, model, kind="gpt", config=asdict(cfg), vocab=vocab.itos, info={"val_loss": 1.0})
    model, ckpt = load(path, build=lambda config: GPT(GPTConfig(**config)), kind="gpt")
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

FORMAT = "course_lib/1"
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"


@dataclass
class Checkpoint:
    """What a checkpoint's header says, read without loading its tensors."""

    path: Path
    kind: str
    config: dict
    vocab: list[str] | None
    info: dict = field(default_factory=dict)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)


def refuse_to_replace_shipped(path, *, replace_shipped: bool, option: str = "--out") -> None:
    """Stop a training script before it overwrites what the course ships: the lessons load those files.

    ``path`` is the file or folder the script will write. Retraining a shipped file on purpose (the
    course's maintainers) takes the scripts' ``--replace-shipped``."""
    path, shipped = Path(path).resolve(), WEIGHTS_DIR.resolve()
    if replace_shipped or not (path == shipped or shipped in path.parents) or not path.exists():
        return
    raise SystemExit(
        f"{option} {path} would overwrite the course's shipped weights, which the lessons load: give "
        f"{option} a path of your own, or pass --replace-shipped to retrain the course's files on purpose"
    )


def weights_path(name: str) -> Path:
    """The path of a checkpoint shipped with the course, e.g. ``weights_path("gpt_sotu_char")``."""
    path = WEIGHTS_DIR / f"{name}.safetensors"
    if not path.is_file():
        known = sorted(p.stem for p in WEIGHTS_DIR.glob("*.safetensors"))
        raise FileNotFoundError(f"no shipped checkpoint named {name!r}; known: {known}")
    return path


def save(
    path: str | os.PathLike,
    model: torch.nn.Module | Mapping[str, torch.Tensor],
    *,
    kind: str,
    config: Mapping,
    vocab: list[str] | None = None,
    info: Mapping | None = None,
    dtype: torch.dtype | None = None,
) -> Path:
    """Write ``model``'s state dict (or a dict of tensors) with what rebuilds it.

    ``dtype`` (e.g. torch.float16) stores floating-point tensors smaller; ``load`` casts
    them back to the model's own dtype.
    """
    state = model.state_dict() if isinstance(model, torch.nn.Module) else dict(model)
    tensors = {}
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"model's state {name!r} must be a tensor, got {type(tensor).__name__}")
        tensor = tensor.detach().to("cpu")
        if dtype is not None and tensor.is_floating_point():
            tensor = tensor.to(dtype)
        tensors[name] = tensor.contiguous()
    if vocab is not None and not all(isinstance(t, str) for t in vocab):
        raise TypeError("vocab must be a list of str (the tokens in id order)")
    metadata = {
        "format": FORMAT,
        "kind": str(kind),
        "config": json.dumps(dict(config)),
        "vocab": json.dumps(list(vocab) if vocab is not None else None),
        "info": json.dumps(dict(info or {})),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata=metadata)
    return path


def read(path: str | os.PathLike) -> Checkpoint:
    """The header of a checkpoint: kind, config, vocab, info and every tensor's shape (no tensor is read)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} is not a checkpoint file")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            shapes = {name: tuple(f.get_slice(name).get_shape()) for name in f.keys()}
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f"path {str(path)!r} is not a safetensors checkpoint: {err}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"path {str(path)!r} is not a course_lib checkpoint (format {meta.get('format')!r})")
    try:
        config, vocab, info = (json.loads(meta[k]) for k in ("config", "vocab", "info"))
    except (KeyError, json.JSONDecodeError) as err:
        raise ValueError(f"path {str(path)!r} has a damaged header: {err}") from None
    if not isinstance(config, dict) or not (vocab is None or isinstance(vocab, list)) or not isinstance(info, dict):
        raise ValueError(f"path {str(path)!r} has a damaged header: config, vocab or info has the wrong type")
    return Checkpoint(path, meta.get("kind", ""), config, vocab, info, shapes)


def load(
    path: str | os.PathLike,
    build: Callable[[dict], torch.nn.Module],
    *,
    kind: str,
    vocab: list[str] | None = None,
    device: str | torch.device = "cpu",
) -> tuple[torch.nn.Module, Checkpoint]:
    """Rebuild a model from a checkpoint: ``build(config)`` makes it, the weights fill it.

    Checks, before any memory is allocated: the file's ``kind``; the vocabulary, when
    ``vocab`` is given; that the model ``build`` makes (on the meta device) has exactly the
    file's tensor names and shapes. Returns the model in eval mode on ``device`` and the header.
    """
    ckpt = read(path)
    if ckpt.kind != kind:
        raise ValueError(f"path {str(path)!r} holds a {ckpt.kind!r} checkpoint, expected {kind!r}")
    if vocab is not None and list(vocab) != ckpt.vocab:
        raise ValueError(f"vocab differs from the checkpoint's ({len(vocab)} vs {len(ckpt.vocab or [])} tokens)")
    with torch.device("meta"):
        skeleton = build(dict(ckpt.config))
    expected = {name: tuple(t.shape) for name, t in skeleton.state_dict().items()}
    problems = [f"missing {n}" for n in expected if n not in ckpt.shapes]
    problems += [f"unexpected {n}" for n in ckpt.shapes if n not in expected]
    problems += [
        f"{n}: file {ckpt.shapes[n]}, model {shape}"
        for n, shape in expected.items()
        if n in ckpt.shapes and ckpt.shapes[n] != shape
    ]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise ValueError(f"path {str(path)!r} does not match the model its config describes: {shown}")
    with torch.device(device):
        model = build(dict(ckpt.config))
    state = load_file(str(ckpt.path), device=str(device))
    own = model.state_dict()
    model.load_state_dict({n: t.to(own[n].dtype) for n, t in state.items()})
    return model.eval(), ckpt
