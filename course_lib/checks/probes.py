"""Probes: properties every right answer has, whatever code computes it; each names a CLASS of mistake.

A reference comparison says *where* an answer differs; a probe says *which property* fails, so a mistake
no check anticipated still gets a hint that names it. Each probe is written once here and an exercise
declares which apply (``probes=("causal", "batch", ...)``):

- ``spec``: the parameters' names and shapes against what the exercise text states (a bias the text
  leaves out, a table with the wrong number of rows, a missing b^O);
- ``again`` (state across calls): the same input twice gives the same output;
- ``causal``: the output at position t does not change when only a later token changes;
- ``memory`` (state across steps): the output at step 1 changes when only step 0's input changes, as the
  reference's does (``memory_mistake``: judged against the reference on the same two inputs);
- ``batch``: a sequence's output does not depend on the other sequences of the batch, nor on their order;
- ``dtype``: the output keeps the input's dtype and device; ``float64_run``/``float64_mistake``: the module made
  float64 (``module.double()``) with float64 inputs and no state given runs in float64 (a zero state made
  float32 whatever x is meets the float64 weights);
- ``init``: the initial weights are random with both signs (not all zero, not all positive), and in the range
  the text states (``init_range_mistake``);
- ``dtype`` of a function's results (``dtype_mistake``): what it returns keeps the dtype of its inputs;
- ``shift`` (``overflow_mistake``): a softmax is unchanged when every logit moves by one constant, so an answer
  that is finite for small logits and not for the same logits shifted by 1000 overflows;
- ``sums to 1`` (``softmax_sum_mistake``): the rows of a softmax Jacobian sum to 0 (a y of ones, a softmax over
  an axis of length 1, is named);
- ``independent`` (``unchanged_mistake``): an output that must not move when only one input does (an LSTM's c_t
  when only the input gate moves and the candidate is zero; a sequence's output alone and beside others);
- ``bounded`` (``bound_mistake``): an output the formula keeps within a bound (a GRU's h_t mixes h_{t-1} with
  a tanh);
- ``layout`` (``rearranged_mistake``): the right numbers in the wrong places (a transpose or reshape that the
  shape cannot show).

The measuring half (``measure``) runs in the student's kernel, on small inputs derived from the case, and
returns plain data; the judging half (``property_mistake``, ``spec_mistake``, ``init_mistake``) runs where
the check judges. Each hint is one line and names the smallest input that shows the property failing.
"""

from __future__ import annotations

from course_lib.checks.plain import _is_tensor

PROPERTIES = ("again", "causal", "batch", "dtype")


def _first_tensor(out):
    """The output a property is about: the tensor itself, or the first of a tuple (logits of (logits, loss))."""
    if isinstance(out, (tuple, list)) and out:
        out = out[0]
    return out if _is_tensor(out) else None


def _take(a, axis: int, index):
    """``a`` with ``index`` (a slice or a list of positions) taken along ``axis``."""
    where = [slice(None)] * a.dim()
    where[axis] = index
    return a[tuple(where)]


def measure(forward, args: list, probes: tuple, *, x_at: int = 0, vocab: int | None = None, batch_axis: int = 0,
            time_axis: int = 1) -> dict:  # fmt: skip
    """In the student's kernel: the outputs the properties are judged from, as plain tensors.

    ``forward(*args)`` is the module's call; ``args[x_at]`` is the sequence input (token ids when ``vocab`` is
    given); the other arguments with the same batch and time sizes (GPT's targets) are cut alongside. The
    output is read with the same axes (``batch_axis``, ``time_axis``)."""
    x = args[x_at]
    B, T = x.shape[batch_axis], x.shape[time_axis]

    def run(rows, steps=slice(None), last_changed=False, first_changed=False):
        def cut(a):
            if not _is_tensor(a) or a.dim() < 2 or a.shape[batch_axis] != B or a.shape[time_axis] != T:
                return a
            return _take(_take(a, batch_axis, rows), time_axis, steps)

        new_x = cut(x).clone()
        if last_changed:  # only the last position changes: the next token id, or every feature + 1
            last = _take(new_x, time_axis, slice(-1, None))
            last.copy_((last + 1) % vocab if vocab is not None else last + 1.0)
        if first_changed:  # only the first position changes
            first = _take(new_x, time_axis, slice(0, 1))
            first.copy_((first + 1) % vocab if vocab is not None else first + 1.0)
        call = [new_x if i == x_at else cut(a) for i, a in enumerate(args)]
        out = _first_tensor(forward(*call))
        return None if out is None else out.detach().clone()

    every = slice(None)
    got = {}
    if "again" in probes:
        got["again"] = [run(every), run(every)]
    if "causal" in probes and T >= 2:  # the smallest input that can show it: one sequence of two steps
        got["causal"] = [run(slice(0, 1), slice(0, 2)), run(slice(0, 1), slice(0, 2), last_changed=True)]
    if "memory" in probes and T >= 2:  # the same two steps, the first one changed
        got["memory"] = [run(slice(0, 1), slice(0, 2)), run(slice(0, 1), slice(0, 2), first_changed=True)]
    if "batch" in probes and B >= 2:  # two sequences, the first alone, the two swapped
        got["batch"] = [run(slice(0, 2)), run(slice(0, 1)), run([1, 0])]
    if "dtype" in probes:
        out = run(every)
        got["dtype"] = [str(x.dtype), str(x.device), str(getattr(out, "dtype", "")), str(getattr(out, "device", ""))]
    return got


def _differ(a, b) -> bool:
    from course_lib.checks.protocol import matches

    if a is None or b is None:
        return False
    return tuple(a.shape) != tuple(b.shape) or not matches(a, b)


def property_mistake(cls: str, got: dict, shape: tuple, *, time_axis: int = 1, batch_axis: int = 0, ids=False) -> str:
    """The first property the measured outputs break, as a one-line hint ("" when none does).

    ``got`` is :func:`measure`'s record; ``shape`` the input's shape (named in the hint)."""
    if not isinstance(got, dict):
        return ""
    what = "token ids" if ids else "x"
    if "dtype" in got and isinstance(got["dtype"], list) and len(got["dtype"]) == 4:
        x_dtype, x_device, out_dtype, out_device = got["dtype"]
        want = "torch.float32" if ids else x_dtype
        if out_dtype and out_dtype != want:
            return (
                f"{cls}: dtype: for {what} of dtype {x_dtype} your forward returns {out_dtype}, not {want}: make new "
                "tensors like the input (x.new_zeros, torch.zeros(..., dtype=x.dtype)), do not convert"
            )
        if out_device and out_device != x_device:
            return f"{cls}: device: for {what} on {x_device} your forward returns a tensor on {out_device}"
    pair = got.get("again")
    if isinstance(pair, list) and len(pair) == 2 and _differ(*pair):
        return (
            f"{cls}: state across calls: forward on the same {what} of shape {tuple(shape)} twice gave two different "
            "outputs: forward must not change the module (its parameters, buffers or attributes) nor draw random numbers"
        )
    triple = got.get("batch")
    if isinstance(triple, list) and len(triple) == 3 and all(t is not None for t in triple):
        both, alone, swapped = triple
        if _differ(_take(both, batch_axis, slice(0, 1)), alone) or _differ(_take(both, batch_axis, [1, 0]), swapped):
            return (
                f"{cls}: batch independence: sequence 0's output changes when it is run alone (B = 1) instead of "
                "beside another (B = 2), or when the two swap places: something mixes the batch axis "
                f"(axis {batch_axis}); each sequence must be computed on its own"
            )
    pair = got.get("causal")
    if isinstance(pair, list) and len(pair) == 2 and pair[0] is not None and pair[1] is not None:
        first = [_take(o, time_axis, slice(0, 1)) for o in pair]
        if _differ(*first):
            small = ("1 sequence of 2 tokens" if ids else "x of 1 sequence of 2 steps") + " (B = 1, T = 2)"
            return (
                f"{cls}: causality: on {small}, the output at position 0 changed when only the token at position 1 "
                "changed: the future leaks into the past (position t may only read positions <= t)"
            )
    return ""


def spec_mistake(cls: str, shapes: dict, spec: dict, *, optional: tuple = (), free: tuple = ()) -> str:
    """The parameters against the exercise text: ``shapes`` is the student's {name: shape}, ``spec`` the text's
    {name: (shape, "how the text writes it")}; ``optional`` names may be left out, names under a ``free`` prefix
    are the student's choice. A hint for a shape that differs, a bias the text leaves out (nn.Linear keeps one
    by default), a bias the text states that is missing, or a parameter the text does not have; else "".
    Parameters the text names but the student lacks are left to the reference, whose hints say where they go."""
    for name, (want, how) in spec.items():
        have = shapes.get(name)
        if have is not None and tuple(have) != tuple(want):
            return f"{cls}: {name} has shape {tuple(have)}, the text asks for {how} = {tuple(want)}"
    for name in shapes:
        if name in spec or name in optional or any(name.startswith(f) for f in free):
            continue
        if name.endswith(".bias") and name[: -len("bias")] + "weight" in spec:
            layer = name[: -len(".bias")]
            return (
                f"{cls}: {name} should not be there: the text asks for {layer} without a bias "
                "(nn.Linear(..., bias=False); nn.Linear keeps a bias by default)"
            )
        return f"{cls}: the text's module has no parameter {name} (its parameters: {', '.join(list(spec)[:6])}, ...)"
    for name, (_, how) in spec.items():
        layer = name[: -len(".bias")]
        if name.endswith(".bias") and name not in shapes and name not in optional and f"{layer}.weight" in shapes:
            return f"{cls}: {layer} has no bias: the text states {how} (nn.Linear's default bias=True)"
    return ""


def init_mistake(cls: str, ranges: dict, sizes: dict) -> str:
    """The initial weights: ``ranges`` is {name: (min, max)} and ``sizes`` {name: number of entries} of every
    matrix as the constructor made it. A matrix all zero (every unit the same, so their gradients are too) or of
    one sign (torch.rand, not randn) is named."""
    for name, (low, high) in ranges.items():
        if low == 0 and high == 0:
            return (
                f"{cls}: initial weights: {name} starts all zero, so every unit computes the same and learns the same: "
                "initialise it at random (nn.Linear does; or torch.randn(...) * k, uniform_(-k, k))"
            )
        if (low >= 0 or high <= 0) and sizes.get(name, 0) >= 32:  # 32 draws around 0 of one sign: 1 in 2^31
            return (
                f"{cls}: initial weights: {name} starts with one sign only ({low:.3g} .. {high:.3g}): draw it "
                "around 0 (torch.randn, or uniform_(-k, k)), not from torch.rand's [0, 1)"
            )
    return ""


def init_ranges(module) -> tuple[dict, dict]:
    """In the student's kernel, right after the constructor: (min, max) and size of every parameter of 2 or more
    axes (biases and layer-norm gains may start at 0 or 1)."""
    from course_lib.checks import tensors  # read as the module keeps them (see tensors), not through its methods

    ranges, sizes = {}, {}
    for name, p in tensors.parameters(module).items():
        lo, hi, _, size = tensors.extent(p, name)
        if len(tensors.shape(p, name)) >= 2 and size > 1:
            ranges[name], sizes[name] = (lo, hi), size
    return ranges, sizes


def crash_mistake(record: dict) -> str:
    """A crash that names a property: two dtypes met (torch's raw "Float vs Double" error), as one line."""
    message = record.get("message")
    message = message if isinstance(message, str) else ""  # the record crossed from the student's kernel
    types = ("Float", "Double", "float", "double", "Half", "Long")
    if record.get("raised") == "RuntimeError" and "type" in message and any(t in message for t in types):
        return (
            "dtype: tensors of two dtypes met (float32 and float64): make every new tensor in the dtype of the ones "
            "you are given (torch.zeros_like(E), or torch.zeros(..., dtype=E.dtype))"
        )
    return ""


def dtype_mistake(outputs: dict, want: str) -> str:
    """The results against the inputs' dtype: ``outputs`` is {name: tensor} of what the function returned, ``want``
    the inputs' dtype (e.g. "torch.float64"). An accumulator made with torch.zeros(...) is float32, and adding into
    it in place silently rounds every gradient to float32; "" when every result has ``want``."""
    for name, value in outputs.items():
        have = str(getattr(value, "dtype", want))
        if have != want:
            return (
                f"dtype: your {name} is {have} while the inputs are {want}: make every new tensor in the inputs' "
                "dtype (torch.zeros_like(...), or torch.zeros(..., dtype=x.dtype)); an in-place += into a "
                f"{have} tensor rounds silently"
            )
    return ""


def overflow_mistake(finite_before: bool, finite_shifted: bool, what: str) -> str:
    """``shift``: right-sized logits gave finite results, the same logits + 1000 (same softmax) did not."""
    if finite_before and not finite_shifted:
        return (
            f"stable for large inputs: {what} with every logit shifted up by 1000 (the softmax does not change) "
            "your results are inf or NaN: exp(z) overflows, so subtract each row's max(z) before exp "
            "(softmax(z - c) = softmax(z) for any constant c; torch.log_softmax does it)"
        )
    return ""


def init_range_mistake(cls: str, ranges: dict, bound: float, how: str) -> str:
    """Every parameter named in ``ranges`` ({name: (min, max)}, biases included) drawn from U(-bound, bound) as the
    text states (``how``): one that starts all zero or reaches outside the range is named."""
    for name, (low, high) in ranges.items():
        if low == 0 and high == 0:
            return f"{cls}: initial weights: {name} starts all zero; the text asks for {how}, biases included"
        if low < -bound * (1 + 1e-6) or high > bound * (1 + 1e-6):
            return f"{cls}: initial weights: {name} reaches {max(-low, high):.3g}, outside {how} (k = {bound:.3g})"
    return ""


def float64_run(module, forward) -> list:
    """In the student's kernel: ``forward(copy)`` on a float64 copy of the module (``forward`` hands it float64
    inputs and no state): ``[the output's dtype, ""]`` or ``["", the crash]``, plain data."""
    import copy

    import torch

    try:
        with torch.no_grad():
            out = _first_tensor(forward(copy.deepcopy(module).double()))
        return [str(out.dtype) if out is not None else "", ""]
    except Exception as exc:  # noqa: BLE001 - judged: a crash where two dtypes meet names the property
        return ["", f"{type(exc).__name__}: {str(exc)[:200]}"]


def float64_mistake(cls: str, measured, what: str) -> str:
    """The float64 run's record against the property: a float64 module on float64 ``what`` stays float64."""
    if not (isinstance(measured, list) and len(measured) == 2 and all(isinstance(m, str) for m in measured)):
        return ""
    dtype, crash = measured
    crashed = crash_mistake({"raised": crash.split(":")[0], "message": crash}) if crash else ""
    if crashed or (dtype and dtype != "torch.float64"):
        how = "raised torch's dtype error" if crashed else f"returned {dtype}"
        return (
            f"{cls}: dtype: with the module in float64 (module.double()) and {what} float64, state None, your "
            f"forward {how}: make the zero state like x (x.new_zeros(B, H): x's dtype and device), not torch.zeros"
        )
    return ""


def memory_mistake(cls: str, got, reference, *, time_axis: int = 1) -> str:
    """``memory``: ``got`` is measure's pair (outputs for B = 1, T = 2, then with step 0's input changed),
    ``reference`` the right answer's pair on the same inputs. Step 1 ignores step 0 when the reference's output
    there moves and the answer's does not: the state is not carried from one step to the next."""
    if not (isinstance(got, list) and len(got) == 2 and all(_is_tensor(g) for g in got)):
        return ""
    second = [_take(o, time_axis, slice(1, 2)) for o in (*got, *reference)]
    if _differ(second[2], second[3]) and not _differ(second[0], second[1]):
        return (
            f"{cls}: state across steps: on x of 1 sequence of 2 steps (B = 1, T = 2), the output at step 1 did not "
            "change when only x at step 0 changed: step t must read h_{t-1}, the state the step before computed"
        )
    return ""


def constant_factor(got: list, expected: list) -> float | None:
    """``scale``: every answer is its expected value times one constant (per case, not 1): case 1's constant, else
    None. Names a scale that should not be there (or is missing) whatever the formula that made it."""
    import numpy as np

    from course_lib.checks.protocol import as_array, matches

    factors = []
    for g, e in zip(got, expected):
        g, e = as_array(g), as_array(e)
        if g is None or e is None or g.shape != e.shape or not np.all(np.isfinite(g)) or np.abs(e).max() == 0:
            return None
        c = float((g * e).sum() / (e * e).sum())  # the least-squares factor
        if not matches(g, c * e) or abs(c - 1) < 1e-3:
            return None
        factors.append(c)
    return factors[0] if factors else None


def softmax_sum_mistake(jacobians: list, logits: list) -> str:
    """``sums to 1``: y = softmax(z) sums to 1 whatever z, so moving every logit by one amount changes nothing and
    each row of J = diag(y) - y y^T sums to 0 (J 1 = y (1 - sum y)). A y of ones (a softmax over an axis of
    length 1: z unsqueezed) gives J = I - 1 1^T, zero on the diagonal and -1 elsewhere, although the logits
    differ. The first case that breaks it (the smallest shows it best), as a one-line hint; "" when none does."""
    import numpy as np

    from course_lib.checks.protocol import as_array

    for J, z in sorted(zip(jacobians, logits), key=lambda pair: len(pair[1])):
        J, z = as_array(J), as_array(z)
        if J is None or z is None or z.ndim != 1 or J.shape != (len(z), len(z)) or not np.all(np.isfinite(J)):
            continue
        K = len(z)
        sums = J.sum(1)
        if K < 2 or np.allclose(sums, 0, atol=1e-5):
            continue
        shown = "[" + ", ".join(f"{v:.3g}" for v in z) + "]"
        off = J[~np.eye(K, dtype=bool)]
        if np.allclose(np.diag(J), 0, atol=1e-6) and np.allclose(off, -1, atol=1e-6) and np.ptp(z) > 0:
            return (
                f"for z = {shown} every probability y_i came out 1 (J = I - 1 1^T): the softmax ran over an axis of "
                f"length 1 (an unsqueezed z, or the wrong dim); take it over the K = {K} logits, "
                "torch.softmax(z, dim=0), so that y sums to 1"
            )
        return (
            f"each row of J sums to 0 (y sums to 1, so adding one constant to every logit changes nothing): for "
            f"z = {shown} your rows sum to {', '.join(f'{v:.3g}' for v in sums)}"
        )
    return ""


def unchanged_mistake(pair, changed: str, because: str, what: str = "output") -> str:
    """``independent``: ``pair`` is the answer's ``what`` on two inputs that differ only where ``changed`` says;
    a right answer gives the same (``because`` says why). Names the property when they differ."""
    if isinstance(pair, list) and len(pair) == 2 and all(_is_tensor(p) for p in pair) and _differ(*pair):
        return f"{changed}, your {what} changed: {because}"
    return ""


def bound_mistake(got, bound, what: str, because: str) -> str:
    """``bounded``: every entry of ``got`` lies within +-``bound`` (a tensor of the same shape, or a number), as
    the formula forces (a tanh is in (-1, 1), a gate mixes two values); the first entry beyond it is named."""
    import torch

    if not (_is_tensor(got) and got.is_floating_point()):
        return ""
    bound = torch.as_tensor(bound, dtype=torch.float64).expand(got.shape)
    over = got.detach().double().abs() > bound + 1e-5
    if not bool(over.any()):
        return ""
    where = tuple(int(i) for i in over.nonzero()[0])
    return f"{what} at index {list(where)} is {float(got[where]):.4g}, outside +-{float(bound[where]):.4g}: {because}"


def rearranged_mistake(name: str, got: list, expected: list, how: str) -> str:
    """``layout``: every answer holds exactly the expected numbers, in other places (a transpose, or a reshape of
    another layout, that the shape cannot show); ``how`` says how the text lays ``name`` out. "" otherwise."""
    import numpy as np

    from course_lib.checks.protocol import as_array

    for g, e in zip(got, expected):
        g, e = as_array(g), as_array(e)
        if g is None or e is None or g.shape != e.shape or e.size < 2:
            return ""
        if not np.allclose(np.sort(g, axis=None), np.sort(e, axis=None), rtol=1e-4, atol=1e-6):
            return ""
    return f"{name} holds the right numbers in the wrong places (transposed, or reshaped from another layout): {how}"
