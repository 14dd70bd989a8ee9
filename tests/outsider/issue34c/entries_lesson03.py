"""Lesson 03 entries."""

LESSON = "03"

BAL_RIGHT = """
def is_balanced(seq, n_symbols=10):
    stack = []
    for s in seq:
        if s < n_symbols // 2:
            stack.append(s)
        elif not stack or stack.pop() != n_symbols - 1 - s:
            return False
    return not stack
"""

TRANS_RIGHT = """
def transpose_closers(seq, rng, n_symbols=10):
    half = n_symbols // 2
    opened = [0] * half
    open_at = []  # open_at[t][colour]: colour opened more than closed after position t
    for s in seq:
        if s < half:
            opened[s] += 1
        else:
            opened[n_symbols - 1 - s] -= 1
        open_at.append(list(opened))
    counts_before = [[0] * half]
    for t in range(len(seq)):
        counts_before.append(open_at[t])
    closers = [t for t, s in enumerate(seq) if s >= half]
    pairs = []
    for a, p in enumerate(closers):
        for q in closers[a + 1:]:
            if seq[p] == seq[q]:
                continue
            colour = n_symbols - 1 - seq[q]
            if all(counts_before[t + 1][colour] > 0 if t < p else open_at[t][colour] > 0 for t in range(p, q)):
                pairs.append((p, q))
    if not pairs:
        raise ValueError("no pair of closers can be exchanged")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
"""

ELMAN_RIGHT = """
import math

import torch
from torch import nn


class ElmanRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))
        self.b_h = nn.Parameter(torch.empty(hidden_size).uniform_(-k, k))

    def forward(self, x, h0=None):
        h = x.new_zeros(x.shape[1], self.hidden_size) if h0 is None else h0
        outputs = []
        for t in range(x.shape[0]):
            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
            outputs.append(h)
        return torch.stack(outputs), h
"""

EPOCH_RIGHT = """
import torch.nn.functional as F


def train_epoch(model, batches, optimizer):
    losses = []
    for tokens, lengths, labels in batches:
        loss = F.cross_entropy(model(tokens, lengths), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""

ACC_RIGHT = """
from course_lib import parentheses as P


def accuracy_over_epochs(model, optimizer, batches, test_sets, epochs, train_epoch):
    table = {name: [] for name in test_sets}
    for _ in range(epochs):
        train_epoch(model, batches, optimizer)
        for name, acc in P.accuracies(model, test_sets).items():
            table[name].append(acc)
    return table
"""

RIGHT = {"3.1": BAL_RIGHT, "3.2": TRANS_RIGHT, "3.3": ELMAN_RIGHT, "3.4": EPOCH_RIGHT, "3.5": ACC_RIGHT}
PREREQ = {}


def sub(src, old, new):
    assert old in src, old
    return src.replace(old, new, 1)


ENTRIES = [
    dict(id="03-3.1-right", ex="3.1", kind="right", desc="stack", code=BAL_RIGHT),
    dict(
        id="03-3.1-m-counter",
        ex="3.1",
        kind="mistake",
        desc="one counter per colour (no stack)",
        code="""
def is_balanced(seq, n_symbols=10):
    half = n_symbols // 2
    c = [0] * half
    for s in seq:
        if s < half:
            c[s] += 1
        else:
            c[n_symbols - 1 - s] -= 1
            if c[n_symbols - 1 - s] < 0:
                return False
    return all(v == 0 for v in c)
""",
    ),
    dict(
        id="03-3.1-m-leftover",
        ex="3.1",
        kind="mistake",
        desc="returns True even when openers remain at the end",
        code=sub(BAL_RIGHT, "return not stack", "return True"),
    ),
    dict(
        id="03-3.1-m-closer-index",
        ex="3.1",
        kind="mistake",
        desc="closer of i taken as n_symbols - i (off by one)",
        code=sub(BAL_RIGHT, "n_symbols - 1 - s", "n_symbols - s"),
    ),
    dict(
        id="03-3.1-b-courselib",
        ex="3.1",
        kind="borrowed",
        desc="course_lib.parentheses.is_balanced",
        code="""
import course_lib.parentheses as P


def is_balanced(seq, n_symbols=10):
    return P.is_balanced(seq, n_symbols)
""",
    ),
    dict(id="03-3.3-right", ex="3.3", kind="right", desc="loop", code=ELMAN_RIGHT),
    dict(
        id="03-3.3-m-tanh",
        ex="3.3",
        kind="mistake",
        desc="tanh instead of the lecture's ReLU",
        code=sub(ELMAN_RIGHT, "torch.relu(", "torch.tanh("),
    ),
    dict(
        id="03-3.3-m-h0-ignored",
        ex="3.3",
        kind="mistake",
        desc="h0 argument ignored (always zeros)",
        code=sub(
            ELMAN_RIGHT,
            "x.new_zeros(x.shape[1], self.hidden_size) if h0 is None else h0",
            "x.new_zeros(x.shape[1], self.hidden_size)",
        ),
    ),
    dict(
        id="03-3.3-m-output-includes-h0",
        ex="3.3",
        kind="mistake",
        desc="output holds h_0..h_{T-1} (off by one in time)",
        code=sub(
            sub(
                ELMAN_RIGHT, "            h = torch.relu(", "            outputs.append(h)\n            h = torch.relu("
            ),
            "            outputs.append(h)\n        return",
            "        return",
        ),
    ),
    dict(
        id="03-3.3-m-detach",
        ex="3.3",
        kind="mistake",
        desc="h detached between steps (no BPTT)",
        code=sub(ELMAN_RIGHT, "outputs.append(h)", "outputs.append(h)\n            h = h.detach()"),
    ),
    dict(
        id="03-3.3-m-batch-first-T",
        ex="3.3",
        kind="mistake",
        desc="zeros of shape (x.shape[0], H): uses T as the batch size",
        code=sub(ELMAN_RIGHT, "x.new_zeros(x.shape[1], self.hidden_size)", "x.new_zeros(x.shape[0], self.hidden_size)"),
    ),
    dict(
        id="03-3.3-b-rnn-tanh-cell",
        ex="3.3",
        kind="borrowed",
        desc="torch.rnn_relu_cell (the op behind nn.RNNCell)",
        code=sub(
            ELMAN_RIGHT,
            "h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)",
            "h = torch.rnn_relu_cell(x[t], h, self.W_xh, self.W_hh, self.b_h, None)",
        ),
    ),
    dict(id="03-3.4-right", ex="3.4", kind="right", desc="loop", code=EPOCH_RIGHT),
    dict(
        id="03-3.4-m-no-zero-grad",
        ex="3.4",
        kind="mistake",
        desc="optimizer.zero_grad() missing (gradients accumulate)",
        code=sub(EPOCH_RIGHT, "        optimizer.zero_grad()\n", ""),
    ),
    dict(
        id="03-3.4-m-zero-after-backward",
        ex="3.4",
        kind="mistake",
        desc="zero_grad between backward and step",
        code=sub(
            sub(
                EPOCH_RIGHT,
                "        optimizer.zero_grad()\n        loss.backward()\n",
                "        loss.backward()\n        optimizer.zero_grad()\n",
            ),
            "",
            "",
        ),
    ),
    dict(
        id="03-3.4-b-fit",
        ex="3.4",
        kind="borrowed",
        desc="course_lib.train.fit",
        code="""
from course_lib import train


def train_epoch(model, batches, optimizer):
    history = train.fit(model, batches, optimizer=optimizer, epochs=1)
    return list(getattr(history, "losses", history))
""",
    ),
]
