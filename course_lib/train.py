"""One training loop for every lesson: batches, device placement, progress bar, history.

    history = fit(model, loss_fn, optimizer, make_batches(X, y, batch_size=64), epochs=3,
                  evaluate=lambda m: {"val_acc": accuracy(m, X_val, y_val)})

``loss_fn(model, batch) -> scalar tensor`` decides what a batch is, so the same loop
trains a classifier (lesson 03) and a language model (lesson 07).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import torch

from course_lib._validate import token_ids


@dataclass
class History:
    """What happened during training: a loss per step and the evaluations along the way."""

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)  # each has "step" plus the metrics
    seconds: float = 0.0

    def smoothed_loss(self, window: int = 50) -> list[float]:
        """Running mean of the loss over the last ``window`` steps (for plots)."""
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        out, total = [], 0.0
        for i, value in enumerate(self.loss):
            total += value
            if i >= window:
                total -= self.loss[i - window]
            out.append(total / min(i + 1, window))
        return out

    def last(self, metric: str):
        """The latest value of an evaluation metric."""
        for record in reversed(self.evals):
            if metric in record:
                return record[metric]
        raise KeyError(f"metric {metric!r} was never evaluated; known: {sorted({k for e in self.evals for k in e})}")


def to_device(batch, device: torch.device):
    """Move every tensor in a (nested) tuple, list or dict to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def make_batches(
    *tensors: torch.Tensor, batch_size: int, shuffle: bool = True, generator: torch.Generator | None = None
) -> Callable[[], Iterable[tuple]]:
    """A function that yields one epoch of aligned minibatches of ``tensors``.

    The last batch may be smaller; no example is dropped.
    """
    if not tensors:
        raise ValueError("tensors: give at least one tensor")
    n = len(tensors[0])
    for i, t in enumerate(tensors):
        if len(t) != n:
            raise ValueError(f"tensors[{i}] has {len(t)} rows but tensors[0] has {n}: they must align")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")

    def epoch():
        order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)  # cpu: indices into CPU data
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            yield tuple(t[idx] for t in tensors)

    return epoch


def fit(
    model: torch.nn.Module,
    loss_fn: Callable,
    optimizer: torch.optim.Optimizer,
    batches: Callable[[], Iterable],
    *,
    epochs: int = 1,
    max_steps: int | None = None,
    max_seconds: float | None = None,
    device: torch.device | None = None,
    evaluate: Callable[[torch.nn.Module], dict] | None = None,
    eval_every: int | None = None,
    clip_grad_norm: float | None = None,
    progress: bool = True,
    desc: str = "training",
    history: History | None = None,
) -> History:
    """Train ``model`` and return its :class:`History`.

    Stops after ``epochs`` passes over ``batches()``, or earlier at ``max_steps`` steps or
    ``max_seconds`` seconds (a time budget keeps notebooks within theirs on slow machines).
    ``evaluate(model)`` runs every ``eval_every`` steps and at the end, in eval mode and
    without gradients. Pass ``history`` to continue a previous run's record.
    """
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be >= 1 or None, got {max_steps}")
    if eval_every is not None and eval_every < 1:
        raise ValueError(f"eval_every must be >= 1 or None, got {eval_every}")
    if not callable(batches):
        raise TypeError("batches must be a function that returns one epoch of batches (see make_batches)")
    from tqdm.auto import tqdm

    device = device or next(model.parameters()).device
    history = history or History()
    start_step = history.step[-1] + 1 if history.step else 0
    step = start_step
    started = time.perf_counter()
    total = max_steps if max_steps is not None else None
    bar = tqdm(total=total, desc=desc, disable=not progress, leave=True)

    def run_eval():
        if evaluate is None:
            return
        with evaluating(model):
            metrics = dict(evaluate(model))
        history.evals.append({"step": step, **metrics})
        bar.set_postfix({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()})

    model.train()
    done = False
    for _ in range(epochs):
        for batch in batches():
            batch = to_device(batch, device)
            loss = loss_fn(model, batch)
            if not torch.isfinite(loss):
                raise FloatingPointError(
                    f"the loss became {loss.item()} at step {step}: lower the learning rate "
                    "or clip the gradients (clip_grad_norm=1.0)"
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
            optimizer.step()
            history.step.append(step)
            history.loss.append(loss.item())
            step += 1
            bar.update(1)
            if eval_every and (step - start_step) % eval_every == 0:
                run_eval()
            if (max_steps is not None and step - start_step >= max_steps) or (
                max_seconds is not None and time.perf_counter() - started >= max_seconds
            ):
                done = True
                break
        if done:
            break
    if evaluate is not None and (not history.evals or history.evals[-1]["step"] != step):
        run_eval()
    bar.close()
    history.seconds += time.perf_counter() - started
    if not history.loss:
        raise ValueError("batches() yielded no batch: nothing was trained")
    return history


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Share of rows whose arg-max class equals the target."""
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"logits must have shape targets.shape + (classes,), got {tuple(logits.shape)} "
            f"and targets {tuple(targets.shape)}"
        )
    return (logits.argmax(-1) == targets).float().mean().item()


def perplexity(mean_nll_nats: float) -> float:
    """Perplexity e^J from a mean negative log-likelihood in nats (= 2^J with J in bits)."""
    return math.exp(mean_nll_nats)


def check_token_ids(ids, name: str = "idx", vocab_size: int | None = None) -> None:
    """A clear error naming ``name`` unless ``ids`` is a (B, T) tensor of token ids (torch.long),
    each in [0, vocab_size) when ``vocab_size`` is given."""
    token_ids(name, ids, vocab_size)


@contextlib.contextmanager
def evaluating(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """``with evaluating(model):`` runs the block in eval mode without gradients, then puts back
    the mode the model had, even when the block raises (dropout must come back on for training)."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was_training)


def next_token_loss(logits: torch.Tensor, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """A language model's loss: the mean cross-entropy (nats) of every next-token prediction,
    logits (B, T, V) for the inputs ``idx`` (B, T) against ``targets`` (B, T), idx shifted by one."""
    if not isinstance(targets, torch.Tensor) or targets.shape != idx.shape:
        got = tuple(targets.shape) if isinstance(targets, torch.Tensor) else type(targets).__name__
        raise ValueError(f"targets must have the shape of idx {tuple(idx.shape)}, got {got}")
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
