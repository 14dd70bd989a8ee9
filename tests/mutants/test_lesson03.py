"""Lesson 03 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import lesson03 as checks

from .mutate import lesson_suite

LESSON = "03_parentheses"
EXERCISES = {
    "is_balanced": checks.check_is_balanced,
    "transpose_closers": checks.check_transpose_closers,
    "ElmanRNN": checks.check_elman_rnn,
    "train_epoch": checks.check_train_epoch,
    "accuracy_over_epochs": checks.check_accuracy_over_epochs,
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
    # 3.2: no stack condition, same colours, not random, in place, colour swap, openness checked at p only,
    # the narrower rule "q's opener before p"
    ("transpose_closers", " and all(open_after[t][b] >= 1 for t in range(p, q))", "", "per-colour counter rejects"),
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
        "all(open_after[t][b] >= 1 for t in range(p, q))",
        "open_after[p][b] >= 1",
        "stay open from p until q",
    ),
    (
        "transpose_closers",
        "all(open_after[t][b] >= 1 for t in range(p, q))",
        "all(open_after[t][b] >= open_after[q - 1][b] >= 1 for t in range(p, q))",  # q's opener before p
        "Keep every pair the counts allow",
    ),
    (
        "transpose_closers",
        '        raise ValueError(f"no hard transposition exists in {seq}")\n',
        "        return None\n",
        "raise ValueError",
    ),
    ("is_balanced", "for s in seq:", "while seq:\n        s = seq.pop(0)", "in place"),
    # 3.3: tanh for ReLU, forgotten bias, transposed W_hh, detached state, h_{t-1} stored, h0 ignored, ...
    ("ElmanRNN", "h = torch.relu(x[t]", "h = torch.tanh(x[t]", "not tanh"),
    # found by the probes (course_lib/checks/probes.py): causality, initial weights of one sign, dtype
    ("ElmanRNN", "for t in range(T):", "for t in reversed(range(T)):", "causality"),
    (
        "ElmanRNN",
        "torch.empty(hidden_size, input_size).uniform_(-k, k)",
        "torch.empty(hidden_size, input_size).uniform_(0, k)",
        "one sign",
    ),
    ("ElmanRNN", "return torch.stack(outputs), h", "return torch.stack(outputs).double(), h.double()", "dtype"),
    ("ElmanRNN", " + self.b_h)", ")", "bias"),
    # issue 34: the text states the range of b_h too; and the zero state in x's dtype (the float64 run)
    (
        "ElmanRNN",
        "self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))",
        "self.b_h = nn.Parameter(torch.zeros(hidden_size))",
        "b_h starts all zero",
    ),
    (
        "ElmanRNN",
        "x.new_zeros(B, self.hidden_size)",
        "torch.zeros(B, self.hidden_size)",
        "dtype: with the module in float64",
    ),
    # the state not carried: every step reads h0 (the state the loop started from), not h_{t-1}
    (
        "ElmanRNN",
        "h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)",
        "h = torch.relu(x[t] @ self.W_xh.T + (x.new_zeros(B, self.hidden_size) if h0 is None else h0) @ self.W_hh.T + self.b_h)",
        "state across steps",
    ),
    ("ElmanRNN", "h @ self.W_hh.T", "h @ self.W_hh", "transpose W_hh"),
    ("ElmanRNN", "outputs.append(h)", "outputs.append(h)\n            h = h.detach()", "detached"),
    (
        "ElmanRNN",
        "h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n            outputs.append(h)",
        "outputs.append(h)\n            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)",
        "state before it",
    ),
    ("ElmanRNN", " if h0 is None else h0", "", "use h0"),
    ("ElmanRNN", "x[t] @ self.W_xh.T + h @ self.W_hh.T", "x[t] @ self.W_hh.T + h @ self.W_xh.T", "exchanged"),
    ("ElmanRNN", "return torch.stack(outputs), h", "return torch.stack(outputs), outputs[0]", "last state"),
    (
        "ElmanRNN",
        "self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = torch.empty(hidden_size, hidden_size).uniform_(-k, k)",
        "nn.Parameter",
    ),
    ("ElmanRNN", "x[t] @ self.W_xh.T", "x[t] @ self.W_xh", "transpose W_xh"),
    (
        "ElmanRNN",
        "self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = nn.Parameter(torch.zeros(hidden_size, hidden_size))",
        "at random",
    ),
    (
        "ElmanRNN",
        "        self.input_size, self.hidden_size = input_size, hidden_size\n",
        "        self.hidden_size = hidden_size\n",
        "self.input_size",
    ),
    # 3.4: no zero_grad, lengths forgotten, zero_grad in the wrong place, no step, step first, sum, one loss
    ("train_epoch", "        optimizer.zero_grad()\n", "", "zero_grad() before"),
    ("train_epoch", "model(tokens, lengths)", "model(tokens)", "pass the lengths"),
    (
        "train_epoch",
        "        optimizer.zero_grad()\n        loss.backward()\n",
        "        loss.backward()\n        optimizer.zero_grad()\n",
        "never change",
    ),
    ("train_epoch", "        optimizer.step()\n", "", "never change"),
    (
        "train_epoch",
        "        loss.backward()\n        optimizer.step()\n",
        "        optimizer.step()\n        loss.backward()\n",
        "never change",
    ),
    (
        "train_epoch",
        "F.cross_entropy(model(tokens, lengths), labels)",
        'F.cross_entropy(model(tokens, lengths), labels, reduction="sum")',
        "not the sum",
    ),
    ("train_epoch", "    return losses\n", "    return sum(losses) / len(losses)\n", "one loss (a number) per batch"),
    ("train_epoch", "model(tokens, lengths)", "model(tokens, lengths).detach()", "no graph"),
    # 3.5: measured before training, no training, one number instead of a curve, a set left out
    (
        "accuracy_over_epochs",
        "        train_epoch(model, batches, optimizer)\n        for name, acc in P.accuracies(model, test_sets).items():",
        "        for name, acc in P.accuracies(model, test_sets).items():",
        "train in every epoch",
    ),
    (
        "accuracy_over_epochs",
        "        train_epoch(model, batches, optimizer)\n        for name, acc in P.accuracies(model, test_sets).items():\n"
        "            curves[name].append(acc)\n",
        "        for name, acc in P.accuracies(model, test_sets).items():\n            curves[name].append(acc)\n"
        "        train_epoch(model, batches, optimizer)\n",
        "after each epoch",
    ),
    ("accuracy_over_epochs", "curves[name].append(acc)", "curves[name] = acc", "one accuracy per epoch"),
    ("accuracy_over_epochs", "for _ in range(epochs):", "for _ in range(1):", "one accuracy per epoch"),
    ("accuracy_over_epochs", "curves = {name: [] for name in test_sets}", "curves = {}", "KeyError"),
    (
        "accuracy_over_epochs",
        "for name, acc in P.accuracies(model, test_sets).items():",
        "for name, acc in list(P.accuracies(model, test_sets).items())[:1]:",
        "one accuracy per epoch",
    ),
    (
        "transpose_closers",
        "    p, q = pairs[rng.integers(len(pairs))]",
        "    ps = sorted({p for p, _ in pairs})\n    p = ps[rng.integers(len(ps))]\n"
        "    qs = [q for p2, q in pairs if p2 == p]\n    q = qs[rng.integers(len(qs))]",
        "uniformly among ALL pairs",
    ),
    (
        "ElmanRNN",
        "torch.empty(hidden_size, hidden_size).uniform_(-k, k)",
        "torch.randn(hidden_size, hidden_size)",
        "uniformly in (-1/sqrt(H), 1/sqrt(H))",
    ),
    ("train_epoch", "losses.append(loss.item())", "losses.append(loss)", "append loss.item()"),
    # round 2 of the students: the middle symbol as an opener, a batch-first reading of x (caught by its
    # shape only when T != B: the draw keeps T > B), a loop over the batch, k from the input size, nll_loss
    ("is_balanced", "if s < n_symbols // 2:", "if s <= n_symbols // 2:", "is a closer"),
    (
        "ElmanRNN",
        "        T, B, _ = x.shape\n",
        "        B, T, _ = x.shape\n        x = x.transpose(0, 1)\n",
        "the output should be (T, B, H)",
    ),
    ("ElmanRNN", "for t in range(T):", "for t in range(B):", "the output should be (T, B, H)"),
    ("ElmanRNN", "k = 1 / math.sqrt(hidden_size)", "k = input_size**-0.5", "not the input size"),
    (
        "train_epoch",
        "F.cross_entropy(model(tokens, lengths), labels)",
        "F.nll_loss(model(tokens, lengths), labels)",
        "F.nll_loss expects log-probabilities",
    ),
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
        "ElmanRNN",
        "        outputs = []\n        for t in range(T):\n            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n",
        "        outputs = []\n        xw = x @ self.W_xh.T + self.b_h  # all steps in one product\n"
        "        for xw_t in xw.unbind(0):\n            h = torch.clamp(xw_t + torch.nn.functional.linear(h, self.W_hh), min=0)\n",
    ),
    (
        "train_epoch",
        "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n",
        "        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n",
    ),
    (
        "accuracy_over_epochs",
        "        for name, acc in P.accuracies(model, test_sets).items():\n            curves[name].append(acc)\n",
        "        accs = P.accuracies(model, test_sets)\n        curves = {n: c + [accs[n]] for n, c in curves.items()}\n",
    ),
]


# (function, edit from, edit to, the forbidden name it calls): answers borrowed from course_lib or torch,
# which the check refuses with "write it yourself"
BORROWED = [
    (
        "is_balanced",
        "    stack = []\n",
        "    return __import__('course_lib').parentheses.is_balanced(seq, n_symbols)\n",
        "course_lib.parentheses_symbols.is_balanced",
    ),
    (
        "transpose_closers",
        "    closers = [",
        "    return __import__('course_lib').parentheses.transpose_closers(seq, rng, n_symbols)\n    closers = [",
        "course_lib.parentheses_generators.transpose_closers",
    ),
    (
        "ElmanRNN",
        "        T, B, _ = x.shape\n",
        "        rnn = nn.RNN(self.input_size, self.hidden_size, nonlinearity='relu')\n"
        "        rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 = self.W_xh, self.W_hh, self.b_h\n"
        "        rnn.bias_hh_l0 = nn.Parameter(torch.zeros_like(self.b_h), requires_grad=False)\n"
        "        output, h_n = rnn(x, None if h0 is None else h0[None])\n"
        "        return output, h_n[0]\n",
        "torch.nn.RNN",
    ),
    (
        "train_epoch",
        "    losses = []\n",
        "    from course_lib import parentheses as P\n    from course_lib.train import fit\n"
        "    return fit(model, P.batch_loss, optimizer, lambda: batches, progress=False).loss\n",
        "course_lib.train.fit",
    ),
    # refused by what runs, whatever name reached it: routes that no list of forbidden names covers
    (  # a method of a forbidden class taken in the class body (the check replaces the class's, not this alias)
        "ElmanRNN",
        "    def forward(self, x, h0=None):",
        "    forward = __import__('course_lib.rnn', fromlist=['ElmanRNN']).ElmanRNN.forward\n\n    def _unused(self, x, h0=None):",
        "course_lib.rnn.unroll",
    ),
    (  # the aten kernel, reached through torch.ops
        "ElmanRNN",
        "        T, B, _ = x.shape\n",
        "        zero = torch.zeros_like(self.b_h)\n        h = x.new_zeros(1, x.shape[1], self.hidden_size) if h0 is None else h0[None]\n        out, h_n = torch.ops.aten.rnn_relu.input(x, h, [self.W_xh, self.W_hh, self.b_h, zero], True, 1, 0.0, False, False, False)\n        return out, h_n[0]\n",
        "torch.ops.aten.rnn_relu.input",
    ),
]

# pytest collects the suite's tests (solution, stub, mutants, alternatives, borrowed answers, random state) here.
globals().update(
    lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, borrowed=BORROWED, solution_repeats=3, mutant_repeats=5)
)
