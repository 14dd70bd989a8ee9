"""Lesson 03 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson03 as checks

from .mutate import lesson_suite

LESSON = "03_parentheses"
EXERCISES = {
    "is_balanced": checks.check_is_balanced,
    "transpose_closers": checks.check_transpose_closers,
    "elman_step": checks.check_elman_step,
    "gated_step": checks.check_gated_step,
}

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    # 3.1: ignoring colour, a closer on an empty stack, counting colours instead of a stack, ...
    (
        "is_balanced",
        "elif not stack or stack.pop() != n_symbols - 1 - s:",
        "elif not stack or not stack.pop() + 1:",
        "the colours matter",
    ),
    (
        "is_balanced",
        "elif not stack or stack.pop() != n_symbols - 1 - s:",
        "elif stack and stack.pop() != n_symbols - 1 - s:",
        "nothing is open",
    ),
    ("is_balanced", "    return not stack\n", "    return True\n", "left open"),
    (
        "is_balanced",
        "stack.pop() != n_symbols - 1 - s",
        "stack.pop() != s - n_symbols // 2",
        "not by i + n_symbols / 2",
    ),
    ("is_balanced", "if s < n_symbols // 2:", "if s < 5:", "the n_symbols you are given"),
    (
        "is_balanced",
        "    stack = []\n    for s in seq:\n        if s < n_symbols // 2:\n            stack.append(s)\n"
        "        elif not stack or stack.pop() != n_symbols - 1 - s:\n            return False\n    return not stack\n",
        "    counts, depth = [0] * (n_symbols // 2), 0\n    for s in seq:\n        c = min(s, n_symbols - 1 - s)\n"
        "        counts[c] += 1 if s < n_symbols // 2 else -1\n        depth += 1 if s < n_symbols // 2 else -1\n"
        "        if counts[c] < 0 or depth < 0:\n            return False\n    return not any(counts)\n",
        "counting each colour is not enough",
    ),
    # 3.2: no stack condition, same colours, not random, in place, colour swap, openers
    ("transpose_closers", " and opener_of[q] < p", "", "per-colour counter rejects"),
    ("transpose_closers", "seq[p] != seq[q] and ", "", "changes nothing"),
    ("transpose_closers", "p, q = pairs[rng.integers(len(pairs))]", "p, q = pairs[0]", "at random"),
    ("transpose_closers", "out = list(seq)", "out = seq", "in place"),
    (
        "transpose_closers",
        "pairs[rng.integers(len(pairs))]",
        'pairs[__import__("random").randrange(len(pairs))]',
        "seeded alike",
    ),
    (
        "transpose_closers",
        "pairs[rng.integers(len(pairs))]",
        'pairs[__import__("numpy").random.default_rng().integers(len(pairs))]',
        "seeded alike",
    ),
    (
        "transpose_closers",
        "pairs[rng.integers(len(pairs))]",
        "pairs[rng.integers(len(pairs) - 1)]",
        "uniformly among all",
    ),
    ("transpose_closers", "out[p], out[q] = out[q], out[p]", "out[p] = out[q]", "colour swap"),
    (
        "transpose_closers",
        "out[p], out[q] = out[q], out[p]",
        "out[opener_of[p]], out[opener_of[q]] = out[opener_of[q]], out[opener_of[p]]",
        "leave the openers",
    ),
    (
        "transpose_closers",
        '        raise ValueError(f"no hard transposition exists in {seq}")\n',
        "        return None\n",
        "raise ValueError",
    ),
    # 3.3: tanh for ReLU, no bias, weights not transposed, ReLU in the wrong place, no recurrence
    ("elman_step", "torch.relu(", "torch.tanh(", "not tanh"),
    ("elman_step", " + b_h)", ")", "bias"),
    ("elman_step", "x_t @ W_xh.T", "x_t @ W_xh", "x_t @ W_xh.T"),
    (
        "elman_step",
        "torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)",
        "torch.relu(x_t @ W_xh.T + b_h) + h_prev @ W_hh.T",
        "whole sum",
    ),
    ("elman_step", " + h_prev @ W_hh.T", "", "previous state"),
    # 3.4: z and 1 - z swapped, no sigmoid, tanh candidate, the candidate alone
    ("gated_step", "return z_t * h_prev + (1 - z_t) * h_bar", "return (1 - z_t) * h_prev + z_t * h_bar", "swapped"),
    (
        "gated_step",
        "z_t = torch.sigmoid(x_t @ W_xz.T + h_prev @ W_hz.T + b_z)",
        "z_t = x_t @ W_xz.T + h_prev @ W_hz.T + b_z",
        "sigmoid",
    ),
    ("gated_step", "h_bar = torch.relu(", "h_bar = torch.tanh(", "ReLU"),
    ("gated_step", "return z_t * h_prev + (1 - z_t) * h_bar", "return h_bar", "candidate alone"),
    ("gated_step", "return z_t * h_prev + (1 - z_t) * h_bar", "return z_t * h_bar", "previous state"),
    (
        "gated_step",
        "return z_t * h_prev + (1 - z_t) * h_bar",
        "return h_prev.mul_(z_t).add_((1 - z_t) * h_bar)",
        "in place",
    ),
    (
        "gated_step",
        "h_bar = torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)",
        "h_bar = torch.relu(x_t @ W_xz.T + h_prev @ W_hz.T + b_z)",
        "own weights W_xh",
    ),
    (
        "elman_step",
        "return torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)",
        "h_prev[:] = torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)\n    return h_prev",
        "in place",
    ),
    ("elman_step", "x_t @ W_xh.T + h_prev @ W_hh.T", "x_t @ W_hh.T + h_prev @ W_xh.T", "exchanged them"),
    ("is_balanced", "for s in seq:", "while seq:\n        s = seq.pop(0)", "in place"),
]

# (function, edit from, edit to): different but right code that must pass
ALTERNATIVES = [
    (
        "transpose_closers",
        "p, q = pairs[rng.integers(len(pairs))]",
        "p, q = pairs[int(rng.choice(len(pairs)))]",
    ),
    (
        "is_balanced",
        "elif not stack or stack.pop() != n_symbols - 1 - s:\n            return False",
        "elif stack and stack[-1] == n_symbols - 1 - s:\n            stack.pop()\n        else:\n            return False",
    ),
    (
        "elman_step",
        "torch.relu(x_t @ W_xh.T + h_prev @ W_hh.T + b_h)",
        "torch.clamp(torch.nn.functional.linear(x_t, W_xh, b_h) + torch.nn.functional.linear(h_prev, W_hh), min=0)",
    ),
    ("gated_step", "return z_t * h_prev + (1 - z_t) * h_bar", "return h_bar + z_t * (h_prev - h_bar)"),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))
