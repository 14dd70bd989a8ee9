"""The outsider set of issue 34 (second measurement): mistakes and borrowed answers for every exercise of
lessons 02-07 that ends in a check cell, written from the exercise texts alone (no check, suite or solution
read). Each mistake is the right answer of right.py with one realistic edit; each borrowed answer is a whole
answer cell. ENTRIES: dicts with id, exercise, kind ("right", "mistake", "borrowed"), what (one line), code.
"""

from right import RIGHT

ENTRIES = []


def _add(kind, ex, what, code):
    n = sum(1 for e in ENTRIES if e["exercise"] == ex and e["kind"] == kind) + 1
    prefix = {"right": "R", "mistake": "M", "borrowed": "B"}[kind]
    ENTRIES.append({"id": f"{prefix}{ex}.{n}", "exercise": ex, "kind": kind, "what": what, "code": code})


def M(ex, what, *edits):
    """A mistake: the right answer with each (old, new) replaced (old must occur exactly once)."""
    code = RIGHT[ex]
    for old, new in edits:
        assert code.count(old) == 1, (ex, what, old)
        code = code.replace(old, new)
    _add("mistake", ex, what, code)


def B(ex, what, code):
    _add("borrowed", ex, what, code)


for _ex in RIGHT:
    _add("right", _ex, "the right answer, from the text", RIGHT[_ex])

# ============================================================== lesson 02
M(
    "2.1",
    "only the diagonal y(1-y), no -y_i y_j off the diagonal",
    ("torch.diag(y) - torch.outer(y, y)", "torch.diag(y * (1 - y))"),
)
M(
    "2.1",
    "softmax by exp/sum without subtracting the max (overflows at z = 1000)",
    ("y = torch.softmax(z, dim=0)", "y = torch.exp(z) / torch.exp(z).sum()"),
)
M(
    "2.1",
    "sign flipped: outer(y, y) - diag(y)",
    ("torch.diag(y) - torch.outer(y, y)", "torch.outer(y, y) - torch.diag(y)"),
)
M(
    "2.1",
    "softmax over the wrong axis of an unsqueezed z (a row of ones)",
    ("y = torch.softmax(z, dim=0)", "y = torch.softmax(z[None, :], dim=0)[0]"),
)

M("2.2", "forgets the 1/B of the mean in dz (loss is a mean, gradients a sum)", ("    dz = dz / B\n", ""))
M(
    "2.2",
    "dE by assignment: a word used twice keeps one gradient, not the sum",
    ("dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))", "dE[contexts.reshape(-1)] = de.reshape(B * n, d)"),
)
M("2.2", "tanh derivative written 1 - h instead of 1 - h^2", ("da = dh * (1 - h**2)", "da = dh * (1 - h)"))
M(
    "2.2",
    "no max subtraction in the log-softmax (logits above 1000 overflow)",
    ("zmax = z.max(dim=1, keepdim=True).values", "zmax = torch.zeros_like(z[:, :1])"),
)
M(
    "2.2",
    "dE made with torch.zeros(E.shape): float32 in a float64 check",
    ("dE = torch.zeros_like(E)", "dE = torch.zeros(E.shape)"),
)
M("2.2", "dU transposed: h.T @ dz (H, V) instead of (V, H)", ("dU = dz.T @ h", "dU = (h.T @ dz).reshape(U.shape)"))
M(
    "2.2",
    "de split column-major: de.T.reshape instead of de.reshape (positions and features mixed)",
    ("de.reshape(B * n, d)", "de.T.reshape(B * n, d)"),
)

M(
    "2.3",
    "no copy: updates the caller's tensors in place",
    ("params = {k: v.clone() for k, v in params.items()}", "pass"),
    (
        "params = {k: params[k] - lr * grads[k] for k in params}",
        "for k in params:\n            params[k] -= lr * grads[k]",
    ),
)
M(
    "2.3",
    "shallow copy dict(params), then in-place -=: the caller's weights change",
    ("params = {k: v.clone() for k, v in params.items()}", "params = dict(params)"),
    (
        "params = {k: params[k] - lr * grads[k] for k in params}",
        "for k in params:\n            params[k] -= lr * grads[k]",
    ),
)
M("2.3", "gradient ascent: + lr * grad", ("params[k] - lr * grads[k]", "params[k] + lr * grads[k]"))
M(
    "2.3",
    "calls fflm_loss_and_grads by name, not its argument",
    (
        "loss, grads = loss_and_grads(params, contexts, targets)",
        "loss, grads = fflm_loss_and_grads(params, contexts, targets)",
    ),
)
M(
    "2.3",
    "records the loss after the update (a second call), one step late",
    ("        losses.append(float(loss))\n", ""),
    (
        "params = {k: params[k] - lr * grads[k] for k in params}",
        "params = {k: params[k] - lr * grads[k] for k in params}\n        losses.append(float(loss_and_grads(params, contexts, targets)[0]))",
    ),
)

M("2.4", "forgets the tanh derivative: da = dh", ("da = dh * (1 - h**2)", "da = dh"))
M("2.4", "dW_hh from h instead of h_prev", ("dW_hh = da.T @ h_prev", "dW_hh = da.T @ h"))
M("2.4", "dh_prev through W_hh.T (square, so the shape hides it)", ("dh_prev = da @ W_hh", "dh_prev = da @ W_hh.T"))
M("2.4", "db_h a mean over the batch instead of a sum", ("db_h = da.sum(0)", "db_h = da.mean(0)"))

M(
    "2.5",
    "truncation off by one: cuts where (t + 1) % k == 0",
    ("t > 0 and t % truncate == 0", "(t + 1) % truncate == 0"),
)
M(
    "2.5",
    "dh_total[t] keeps only the step's own gradient, without the carry",
    ("dh_total[t] = dh", "dh_total[t] = dhs[t]"),
)
M(
    "2.5",
    "h_prev = hs[t - 1] also at t = 0 (wraps to the last state instead of h0)",
    ("h_prev = hs[t - 1] if t > 0 else h0", "h_prev = hs[t - 1]"),
)
M("2.5", "carry not through the tanh: dh @ W_hh instead of da @ W_hh", ("carry = da @ W_hh", "carry = dh @ W_hh"))
M(
    "2.5",
    "adds the carry into dhs in place (changes the caller's dhs)",
    ("dh = dhs[t] + carry", "dhs[t] += carry\n        dh = dhs[t]"),
)
M(
    "2.5",
    "dh_total made with torch.zeros(hs.shape): float32 storage in a float64 check",
    ("dh_total = torch.zeros_like(hs)", "dh_total = torch.zeros(hs.shape)"),
)

B(
    "2.1",
    "torch.autograd.functional.jacobian",
    """
import torch


def softmax_jacobian(z):
    return torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), z)
""",
)
B(
    "2.1",
    "torch.func.jacfwd (forward-mode)",
    """
import torch
from torch.func import jacfwd


def softmax_jacobian(z):
    return jacfwd(lambda t: torch.softmax(t, dim=0))(z)
""",
)
B(
    "2.1",
    "course_lib.backprop.softmax_jacobian reached through importlib and a string",
    """
import importlib


def softmax_jacobian(z):
    return getattr(importlib.import_module("course_lib." + "backprop"), "softmax_" + "jacobian")(z)
""",
)
B(
    "2.2",
    "autograd: leaves with requires_grad and loss.backward()",
    """
import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    p = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    h = torch.tanh(p["E"][contexts].reshape(B, -1) @ p["W"].T + p["b"])
    loss = F.cross_entropy(h @ p["U"].T + p["c"], targets)
    loss.backward()
    return loss.detach(), {k: v.grad for k, v in p.items()}
""",
)
B(
    "2.2",
    "torch.func.grad_and_value",
    """
import torch
import torch.nn.functional as F
from torch.func import grad_and_value


def _loss(p, contexts, targets):
    B = contexts.shape[0]
    h = torch.tanh(p["E"][contexts].reshape(B, -1) @ p["W"].T + p["b"])
    return F.cross_entropy(h @ p["U"].T + p["c"], targets)


def fflm_loss_and_grads(params, contexts, targets):
    grads, loss = grad_and_value(_loss)(dict(params), contexts, targets)
    return loss, grads
""",
)
B(
    "2.2",
    "the checks module's own hand_loss_and_grads (seen in dir(checks))",
    """
def fflm_loss_and_grads(params, contexts, targets):
    return checks.hand_loss_and_grads(params, contexts, targets)
""",
)
B(
    "2.2",
    "torch.autograd.grad reached by getattr on a string",
    """
import torch
import torch.nn.functional as F


def fflm_loss_and_grads(params, contexts, targets):
    p = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
    B = contexts.shape[0]
    h = torch.tanh(p["E"][contexts].reshape(B, -1) @ p["W"].T + p["b"])
    loss = F.cross_entropy(h @ p["U"].T + p["c"], targets)
    g = getattr(getattr(torch, "auto" + "grad"), "gr" + "ad")(loss, list(p.values()))
    return loss.detach(), dict(zip(p, g))
""",
)
B(
    "2.4",
    "course_lib.bptt.bptt_step (a from h, W_xh unused)",
    """
import torch
from course_lib import bptt


def bptt_step(dh, h, h_prev, x, W_hh):
    a = torch.atanh(h)
    W_xh = torch.zeros(W_hh.shape[0], x.shape[1], dtype=h.dtype)
    return bptt.bptt_step(dh, a, h, h_prev, x, W_xh, W_hh)
""",
)
B(
    "2.4",
    "autograd: replay the step with leaves and torch.autograd.grad",
    """
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    a = torch.atanh(h)
    W_hh_ = W_hh.detach().clone().requires_grad_()
    h_prev_ = h_prev.detach().clone().requires_grad_()
    W_xh = torch.zeros(W_hh.shape[0], x.shape[1], dtype=h.dtype, requires_grad=True)
    b = (a - x @ W_xh.detach().T - h_prev @ W_hh.T).detach().requires_grad_()
    out = torch.tanh(x @ W_xh.T + h_prev_ @ W_hh_.T + b)
    dW_xh, dW_hh, db, dhp = torch.autograd.grad(out, [W_xh, W_hh_, b, h_prev_], dh)
    return dW_xh, dW_hh, db.sum(0), dhp
""",
)
B(
    "2.5",
    "course_lib.bptt.bptt_step called in the loop (the text allows the student's own 2.4)",
    """
import torch
from course_lib.bptt import bptt_step as lib_step


def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    T = dhs.shape[0]
    W_xh = torch.zeros(W_hh.shape[0], xs.shape[2], dtype=hs.dtype)
    dW_xh, dW_hh = torch.zeros_like(W_xh), torch.zeros_like(W_hh)
    db_h = torch.zeros(W_hh.shape[0], dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(hs[0])
    for t in range(T - 1, -1, -1):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        g = lib_step(dh, torch.atanh(hs[t]), hs[t], h_prev, xs[t], W_xh, W_hh)
        g = g if isinstance(g, (tuple, list)) else list(g.values())
        dW_xh, dW_hh, db_h, carry = dW_xh + g[0], dW_hh + g[1], db_h + g[2], g[3]
        if truncate is not None and t > 0 and t % truncate == 0:
            carry = torch.zeros_like(carry)
    return dW_xh, dW_hh, db_h, dh_total
""",
)

# ============================================================== lesson 03
M(
    "3.1",
    "one stack for all colours: pops without comparing the colour",
    ("if not stack or stack.pop() != n_symbols - 1 - s:", "if not stack or stack.pop() is None:"),
)
M("3.1", "returns True at the end even with openers left on the stack", ("return not stack", "return True"))
M(
    "3.1",
    "closer of i taken as i + n_symbols // 2 (the wrong pairing)",
    ("stack.pop() != n_symbols - 1 - s", "stack.pop() != s - n_symbols // 2"),
)
M("3.1", "hard-coded 5 openers (the 10-symbol case)", ("if s < n_symbols // 2:", "if s < 5:"))

M(
    "3.2",
    "allows two closers of the same colour (returns the sequence unchanged)",
    ("p < q and seq[p] != seq[q] and all(open_at[p:q])", "p < q and all(open_at[p:q])"),
)
M("3.2", "exchanges in the caller's list (no copy)", ("out = list(seq)", "out = seq"))
M(
    "3.2",
    "ignores the 'stays open' condition: any two closers of different colours",
    ("p < q and seq[p] != seq[q] and all(open_at[p:q])", "p < q and seq[p] != seq[q]"),
)
M("3.2", "always the first pair instead of a uniform draw", ("pairs[rng.integers(len(pairs))]", "pairs[0]"))
M("3.2", "open tested only at p, not at every position p..q-1", ("all(open_at[p:q])", "open_at[p]"))

M("3.3", "tanh instead of ReLU", ("h = torch.relu(", "h = torch.tanh("))
M(
    "3.3",
    "h0 default torch.zeros(B, H): float32 whatever x's dtype",
    (
        "h = x.new_zeros(B, self.hidden_size) if h0 is None else h0",
        "h = torch.zeros(B, self.hidden_size) if h0 is None else h0",
    ),
)
M(
    "3.3",
    "output holds h_0..h_{T-1} (appends before the update)",
    (
        "            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)\n            outputs.append(h)",
        "            outputs.append(h)\n            h = torch.relu(x[t] @ self.W_xh.T + h @ self.W_hh.T + self.b_h)",
    ),
)
M(
    "3.3",
    "weights initialised with randn (unit normal), not uniform(-1/sqrt(H), 1/sqrt(H))",
    (
        "self.W_xh = nn.Parameter(torch.empty(hidden_size, input_size).uniform_(-k, k))",
        "self.W_xh = nn.Parameter(torch.randn(hidden_size, input_size))",
    ),
    (
        "self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = nn.Parameter(torch.randn(hidden_size, hidden_size))",
    ),
)
M(
    "3.3",
    "W_xh stored (I, H) and used as x @ W_xh",
    ("torch.empty(hidden_size, input_size)", "torch.empty(input_size, hidden_size)"),
    ("x[t] @ self.W_xh.T", "x[t] @ self.W_xh"),
)
M(
    "3.3",
    "detaches h between steps (no BPTT)",
    ("            outputs.append(h)\n", "            outputs.append(h)\n            h = h.detach()\n"),
)
M(
    "3.3",
    "init uniform(0, 1/sqrt(H)): only positive weights",
    (
        "self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = nn.Parameter(torch.empty(hidden_size, hidden_size).uniform_(0, k))",
    ),
)

M("3.4", "no optimizer.zero_grad(): gradients accumulate", ("        optimizer.zero_grad()\n", ""))
M(
    "3.4",
    "zero_grad between backward and step (no update ever)",
    (
        "        optimizer.zero_grad()\n        loss.backward()\n",
        "        loss.backward()\n        optimizer.zero_grad()\n",
    ),
)
M("3.4", "keeps the loss tensors, not numbers", ("losses.append(loss.item())", "losses.append(loss)"))
M(
    "3.4",
    "sum of the cross-entropy instead of the mean",
    ("F.cross_entropy(logits, labels)", 'F.cross_entropy(logits, labels, reduction="sum")'),
)

M(
    "3.5",
    "accuracy before each epoch's training (one epoch late)",
    (
        "        train_epoch(model, batches, optimizer)\n        for name, acc in P.accuracies(model, test_sets).items():\n            curves.setdefault(name, []).append(acc)\n",
        "        for name, acc in P.accuracies(model, test_sets).items():\n            curves.setdefault(name, []).append(acc)\n        train_epoch(model, batches, optimizer)\n",
    ),
)
M(
    "3.5",
    "overwrites the list each epoch (keeps only the last accuracy)",
    ("curves.setdefault(name, []).append(acc)", "curves[name] = [acc]"),
)
M(
    "3.5",
    "measures accuracy only after the last epoch",
    ("        for name, acc in", "    for name, acc in"),
    ("            curves.setdefault", "        curves.setdefault"),
)

B(
    "3.1",
    "course_lib.parentheses.is_balanced (P is imported by the setup cell)",
    """
def is_balanced(seq, n_symbols=10):
    return P.is_balanced(seq, n_symbols)
""",
)
B(
    "3.2",
    "course_lib's transposition_pairs, then the draw by hand",
    """
def transpose_closers(seq, rng, n_symbols=10):
    pairs = list(P.transposition_pairs(seq, n_symbols) if n_symbols != 10 else P.transposition_pairs(seq))
    if not pairs:
        raise ValueError("no pair")
    p, q = pairs[rng.integers(len(pairs))]
    out = list(seq)
    out[p], out[q] = out[q], out[p]
    return out
""",
)
B(
    "3.3",
    "torch.nn.RNN(nonlinearity='relu') inside, parameters aliased to the lecture's names",
    """
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
        h = x.new_zeros(1, x.shape[1], self.hidden_size) if h0 is None else h0[None]
        out, hT = torch.rnn_relu(x, h, (self.W_xh, self.W_hh, self.b_h, torch.zeros_like(self.b_h)), True, 1, 0.0, self.training, False, False)
        return out, hT[0]
""",
)
B(
    "3.3",
    "forward copied from course_lib.rnn.ElmanRNN via importlib",
    """
import importlib
import math

import torch
from torch import nn

_lib = getattr(importlib.import_module("course_lib.rnn"), "ElmanRNN")


class ElmanRNN(_lib):
    def __init__(self, input_size, hidden_size):
        super().__init__(input_size, hidden_size)
""",
)
B(
    "3.4",
    "course_lib.train.fit does the loop",
    """
import torch.nn.functional as F
from course_lib.train import fit


def train_epoch(model, batches, optimizer):
    batches = list(batches)
    history = fit(model, lambda m, b: F.cross_entropy(m(b[0], b[1]), b[2]), optimizer, lambda: iter(batches), progress=False)
    return [float(x) for x in history.loss]
""",
)

# ============================================================== lesson 04
M(
    "4.1",
    "gates cut in the order i, f, o, g",
    ("i, f, g, o = gates.chunk(4, dim=1)", "i, f, o, g = gates.chunk(4, dim=1)"),
)
M("4.1", "h_t = o * c_t (tanh of the cell state forgotten)", ("h = o * torch.tanh(c)", "h = o * c"))
M(
    "4.1",
    "zero state torch.zeros(B, H): float32 in the float64 run",
    ("h = x.new_zeros(x.shape[0], self.hidden_size)", "h = torch.zeros(x.shape[0], self.hidden_size)"),
    ("c = x.new_zeros(x.shape[0], self.hidden_size)", "c = torch.zeros(x.shape[0], self.hidden_size)"),
)
M(
    "4.1",
    "init uniform(0, 1/sqrt(H))",
    (
        "self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))",
        "self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(0, k))",
    ),
)
M("4.1", "sigmoid on g instead of tanh", ("torch.tanh(g), torch.sigmoid(o)", "torch.sigmoid(g), torch.sigmoid(o)"))
M("4.1", "c_t = f * c + i * o (the output gate where g belongs)", ("c = f * c + i * g", "c = f * c + i * o"))
M(
    "4.1",
    "no b_hh: one bias vector only",
    ("        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))\n", ""),
    (" + h @ self.W_hh.T + self.b_hh", " + h @ self.W_hh.T"),
)

M(
    "4.2",
    "reset gate before the product (the lecture's GRU)",
    (
        "    gh = h @ W_hh.T + b_hh\n",
        "    gh = h @ W_hh.T + b_hh\n    W_hn = W_hh.chunk(3, dim=0)[2]\n    b_hn = b_hh.chunk(3)[2]\n",
    ),
    ("n = torch.tanh(xn + r * hn)", "n = torch.tanh(xn + (r * h) @ W_hn.T + b_hn)"),
)
M("4.2", "z and 1 - z exchanged", ("return z * h + (1 - z) * n", "return (1 - z) * h + z * n"))
M(
    "4.2",
    "chunks read in the order z, r, n",
    ("xr, xz, xn = gx.chunk(3, dim=1)", "xz, xr, xn = gx.chunk(3, dim=1)"),
    ("hr, hz, hn = gh.chunk(3, dim=1)", "hz, hr, hn = gh.chunk(3, dim=1)"),
)
M(
    "4.2",
    "tanh on the hidden side only (no input term in n)",
    ("n = torch.tanh(xn + r * hn)", "n = xn + torch.tanh(r * hn)"),
)

M("4.3", "one bias vector per gate block, not two", ("+ 2 * hidden_size)", "+ hidden_size)"))
M("4.3", "every layer reads input_size", ("inp = input_size if layer == 0 else hidden_size", "inp = input_size"))
M("4.3", "4 gate blocks for the GRU too", ('gates = {"lstm": 4, "gru": 3}[kind]', "gates = 4"))
M("4.3", "num_layers ignored", ("for layer in range(num_layers):", "for layer in range(1):"))

M(
    "4.4",
    "sets both b_xh and b_hh to value (their sum is 2 value)",
    ("cell.b_hh[H : 2 * H] = 0.0", "cell.b_hh[H : 2 * H] = value"),
)
M(
    "4.4",
    "the first block (input gate) instead of the second",
    ("cell.b_xh[H : 2 * H] = value", "cell.b_xh[0:H] = value"),
    ("cell.b_hh[H : 2 * H] = 0.0", "cell.b_hh[0:H] = 0.0"),
)
M("4.4", "only the first layer", ("for cell in lstm.cells:", "for cell in lstm.cells[:1]:"))
M(
    "4.4",
    "b_hh's forget block left as it was (the sum is value + b_hh_f)",
    ("            cell.b_hh[H : 2 * H] = 0.0\n", ""),
)
M(
    "4.4",
    "without torch.no_grad(): in-place on a leaf that requires grad",
    ("    with torch.no_grad():\n        for cell in lstm.cells:", "    if True:\n        for cell in lstm.cells:"),
)

M("4.5", "population sd (pstdev) instead of the sample sd", ("statistics.stdev(runs)", "statistics.pstdev(runs)"))
M("4.5", "calls train_memory by name, not the argument", ("runs = [train(T, seed)", "runs = [train_memory(T, seed)"))
M("4.5", "arguments swapped: train(seed, T)", ("runs = [train(T, seed)", "runs = [train(seed, T)"))
M("4.5", "keys as strings", ("table[T] = {", "table[str(T)] = {"))

B(
    "4.1",
    "torch.lstm_cell (the fused op) on the student's own parameters",
    """
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            state = (x.new_zeros(x.shape[0], self.hidden_size), x.new_zeros(x.shape[0], self.hidden_size))
        return torch.lstm_cell(x, state, self.W_xh, self.W_hh, self.b_xh, self.b_hh)
""",
)
B(
    "4.1",
    "forward taken from course_lib.rnn.LSTMCell (a method copied into the class body)",
    """
import math

import torch
from torch import nn
from course_lib import rnn as _rnn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    gates = _rnn.LSTMCell.gates
    forward = _rnn.LSTMCell.forward
""",
)
B(
    "4.1",
    "torch.nn.LSTMCell reached by __import__ and getattr, weights passed in",
    """
import math

import torch
from torch import nn


class LSTMCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        if state is None:
            state = (x.new_zeros(x.shape[0], self.hidden_size), x.new_zeros(x.shape[0], self.hidden_size))
        fn = getattr(__import__("torch.nn.functional").nn.functional, "__dict__")
        vf = getattr(__import__("torch"), "_VF")
        return getattr(vf, "lstm" + "_cell")(x, state, self.W_xh, self.W_hh, self.b_xh, self.b_hh)
""",
)
B(
    "4.2",
    "torch.gru_cell (the fused op)",
    """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    return torch.gru_cell(x, h, W_xh, W_hh, b_xh, b_hh)
""",
)
B(
    "4.2",
    "torch.nn.GRUCell with the given weights loaded",
    """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    cell = torch.nn.GRUCell(x.shape[1], h.shape[1]).to(x.dtype)
    with torch.no_grad():
        cell.weight_ih.copy_(W_xh), cell.weight_hh.copy_(W_hh), cell.bias_ih.copy_(b_xh), cell.bias_hh.copy_(b_hh)
    return cell(x, h)
""",
)
B(
    "4.3",
    "counts the parameters of a real torch.nn.LSTM / GRU",
    """
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
    return sum(p.numel() for p in cls(input_size, hidden_size, num_layers).parameters())
""",
)

# ============================================================== lesson 05
M(
    "5.1",
    "W_q s written query @ W_q (no transpose): right only when a == d_q",
    ("q = query @ W_q.T", "q = query @ W_q.reshape(W_q.shape[1], W_q.shape[0])"),
)
M(
    "5.1",
    "v dropped: sums tanh over the attention axis",
    ("return torch.tanh(q[:, None, :] + k) @ v", "return torch.tanh(q[:, None, :] + k).sum(-1)"),
)
M(
    "5.1",
    "softmax applied (the text says scores, the softmax comes after)",
    ("return torch.tanh(q[:, None, :] + k) @ v", "return torch.softmax(torch.tanh(q[:, None, :] + k) @ v, dim=1)"),
)
M(
    "5.1",
    "query broadcast along the batch axis: q[None] instead of q[:, None]",
    ("q[:, None, :]", "q[None, :, :].transpose(0, 1)[:, :1, :].expand(-1, 1, -1).flip(0)"),
)

M(
    "5.2",
    "no 1/sqrt(H) scale",
    ("e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)", "e = (states @ h[:, :, None]).squeeze(2)"),
)
M("5.2", "no padding mask", ('        e = e.masked_fill(~real, float("-inf"))\n', ""))
M(
    "5.2",
    "h0 = the state at the last position, padding included",
    ("h = states[torch.arange(B, device=states.device), lengths - 1]", "h = states[:, -1]"),
)
M(
    "5.2",
    "attention from the new state h_i instead of h_{i-1} (c computed after the GRU step, with the old c for its input)",
    ("        e = (states", "        c_prev = states.mean(1) if i == 0 else c\n        e = (states"),
    ("h = model.decoder(torch.cat([y, c], dim=1), h)", "h = model.decoder(torch.cat([y, c_prev], dim=1), h)"),
)
M(
    "5.2",
    "padding mask built (T_in, B): transposed, only works when B == T_in",
    (
        "real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]",
        "real = (torch.arange(T_in, device=states.device)[:, None] < lengths[None, :]).reshape(B, T_in)",
    ),
)
M(
    "5.2",
    "logits from [c; h] instead of [h; c] (both of size H, so the shapes hide it)",
    ("logits.append(model.out(torch.cat([h, c], dim=1)))", "logits.append(model.out(torch.cat([c, h], dim=1)))"),
)

M(
    "5.3",
    "drops the end row and column (len(target), len(source))",
    ("return weights[0]", "return weights[0, :-1, :-1]"),
)
M("5.3", "transposed: (source, target)", ("return weights[0]", "return weights[0].T"))
M("5.3", "returns the batch of one (1, T_out, T_in)", ("return weights[0]", "return weights"))
M(
    "5.3",
    "source and target exchanged in encode_pairs",
    ("encode_pairs([source], [target], vocab", "encode_pairs([target], [source], vocab"),
)

B(
    "5.1",
    "course_lib.seq2seq.AdditiveScore with the given weights",
    """
import torch
from course_lib.seq2seq import AdditiveScore


def additive_scores(query, keys, W_q, W_k, v):
    scorer = AdditiveScore(W_q.shape[1], W_k.shape[1], W_q.shape[0]).to(query.dtype)
    with torch.no_grad():
        for p in scorer.parameters():
            p.zero_()
        params = dict(scorer.named_parameters())
        for name, p in params.items():
            if p.shape == W_q.shape and "q" in name:
                p.copy_(W_q)
            elif p.shape == W_k.shape and "k" in name:
                p.copy_(W_k)
            elif p.shape == v.reshape(p.shape).shape and p.numel() == v.numel():
                p.copy_(v.reshape(p.shape))
    return scorer(query, keys)
""",
)
B(
    "5.2",
    "torch's F.scaled_dot_product_attention for c, weights by hand",
    """
import math

import torch
import torch.nn.functional as F


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]
    h = states[torch.arange(B, device=states.device), lengths - 1]
    logits, weights = [], []
    for i in range(tgt_in.shape[1]):
        c = F.scaled_dot_product_attention(h[:, None, :], states, states, attn_mask=real[:, None, :])[:, 0]
        e = ((states @ h[:, :, None]).squeeze(2) / math.sqrt(H)).masked_fill(~real, float("-inf"))
        alpha = torch.softmax(e, dim=1)
        y = model.tgt_embed(tgt_in[:, i])
        h = model.decoder(torch.cat([y, c], dim=1), h)
        logits.append(model.out(torch.cat([h, c], dim=1)))
        weights.append(alpha)
    return torch.stack(logits, dim=1), torch.stack(weights, dim=1)
""",
)
B(
    "5.2",
    "the checks module's own reference_decode",
    """
def decode(model, states, lengths, tgt_in):
    return checks.reference_decode(model, states, lengths, tgt_in)
""",
)
B(
    "5.2",
    "course_lib.seq2seq.attend for the softmax and the context",
    """
import math

import torch
from course_lib import seq2seq


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    real = torch.arange(T_in, device=states.device)[None, :] < lengths[:, None]
    h = states[torch.arange(B, device=states.device), lengths - 1]
    logits, weights = [], []
    for i in range(tgt_in.shape[1]):
        e = (states @ h[:, :, None]).squeeze(2) / math.sqrt(H)
        out = seq2seq.attend(e, states, real)
        alpha, c = (out[1], out[0]) if out[0].shape == (B, H) else (out[0], out[1])
        y = model.tgt_embed(tgt_in[:, i])
        h = model.decoder(torch.cat([y, c], dim=1), h)
        logits.append(model.out(torch.cat([h, c], dim=1)))
        weights.append(alpha)
    return torch.stack(logits, dim=1), torch.stack(weights, dim=1)
""",
)

# ============================================================== lesson 06
M("6.1", "indices taken from 0 (weights[i, j])", ("weights[i - 1, j - 1]", "weights[min(i, n - 1), min(j, n - 1)]"))
M("6.1", "diagonal masked too (triu diagonal=0)", ("diagonal=1", "diagonal=0"))
M("6.1", "masked scores set to 0 instead of -inf", ('masked_fill(future, float("-inf"))', "masked_fill(future, 0.0)"))
M(
    "6.1",
    "masks the scores in place (masked_fill_ changes the caller's matrix)",
    ('scores.masked_fill(future, float("-inf"))', 'scores.masked_fill_(future, float("-inf"))'),
)
M("6.1", "softmax over the columns (dim=0)", ("dim=-1", "dim=0"))

M(
    "6.2",
    "forgets the padding: row 4 over all four keys",
    ("a42 = exp(-1) / (exp(-1) + exp(-1) + exp(2))", "a42 = exp(-1) / (exp(-1) + exp(-1) + exp(2) + exp(1))"),
    ("a44 = 0.0", "a44 = exp(1) / (exp(-1) + exp(-1) + exp(2) + exp(1))"),
)
M(
    "6.2",
    "forgets the future mask in row 2 (key 3 seen)",
    ("a22 = exp(1) / (exp(1) + exp(1))", "a22 = exp(1) / (exp(1) + exp(1) + exp(-1))"),
)
M(
    "6.2",
    "query 4 taken as padding that sees nothing, and alpha_42 = 0 too",
    ("a42 = exp(-1) / (exp(-1) + exp(-1) + exp(2))", "a42 = 0.0"),
)
M(
    "6.2",
    "alpha_33 with the score of key 2 on top (e_32 instead of e_33)",
    ("a33 = exp(1) / (exp(0) + exp(1) + exp(1))", "a33 = exp(1) / (exp(0) + exp(1) + exp(1)) + 0.01"),
)

M("6.3", "padding mask on the query axis instead of the keys", ("padding[:, None, :]", "padding[:, :, None]"))
M("6.3", "no guard for an empty sentence: NaN weights", ("    weights = torch.nan_to_num(weights, nan=0.0)\n", ""))
M(
    "6.3",
    "causal mask without the diagonal (tril diagonal=-1)",
    (
        "causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))",
        "causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device), diagonal=-1)",
    ),
)
M("6.3", "padding off by one: j <= lengths[b]", ("[None, :] < lengths[:, None]", "[None, :] <= lengths[:, None]"))
M(
    "6.3",
    "softmax over the queries (dim=1)",
    ("weights = torch.softmax(masked, dim=-1)", "weights = torch.softmax(masked, dim=1)"),
)
M(
    "6.3",
    "masks the caller's scores in place",
    ('masked = scores.masked_fill(~mask, float("-inf"))', 'masked = scores.masked_fill_(~mask, float("-inf"))'),
)
M(
    "6.3",
    "masked scores filled with -1e4 instead of -inf (an empty sentence gets uniform weights)",
    ('masked = scores.masked_fill(~mask, float("-inf"))', "masked = scores.masked_fill(~mask, -1e4)"),
)

M(
    "6.4",
    "'padding' measured over every output, padding queries too",
    ("float((out_pad - output).abs()[real].max()) if real.any() else 0.0", "float((out_pad - output).abs().max())"),
)
M(
    "6.4",
    "adds 100 to the caller's values in place (no clone)",
    ("pad_values = values.clone()", "pad_values = values"),
    ("last_values = values.clone()", "last_values = values"),
)
M(
    "6.4",
    "the last real token taken at position lengths[0] (one too far)",
    ("last = int(lengths[0]) - 1", "last = min(int(lengths[0]), values.shape[1] - 1)"),
)
M("6.4", "'earlier queries' includes the last token itself", ("moved[0, :last].max()", "moved[0, : last + 1].max()"))

B(
    "6.1",
    "course_lib.attention.masked_softmax with causal_mask",
    """
import torch
from course_lib.attention import causal_mask, masked_softmax


def alpha(scores, i, j):
    n = scores.shape[0]
    return float(masked_softmax(scores, causal_mask(n))[i - 1, j - 1])
""",
)
B(
    "6.3",
    "torch's F.scaled_dot_product_attention with identity keys (q k^T = scores)",
    """
import torch
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    padding = torch.arange(T)[None, :] < lengths[:, None]
    mask = causal[None] & padding[:, None, :]
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    weights = F.scaled_dot_product_attention(scores, eye, eye, attn_mask=mask, scale=1.0)
    return weights @ values, weights
""",
)
B(
    "6.3",
    "course_lib.attention.decoder_mask and masked_softmax",
    """
import torch
from course_lib import attention


def masked_attention(scores, values, lengths):
    mask = attention.decoder_mask(lengths, scores.shape[1], device=scores.device)
    weights = torch.nan_to_num(attention.masked_softmax(scores, mask), nan=0.0)
    return weights @ values, weights
""",
)
B(
    "6.3",
    "the checks module's reference_masked_attention",
    """
def masked_attention(scores, values, lengths):
    return checks.reference_masked_attention(scores, values, lengths)
""",
)
B(
    "6.3",
    "torch's masked softmax op through a string: torch._masked_softmax",
    """
import torch


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    padding = torch.arange(T)[None, :] < lengths[:, None]
    keep = causal[None] & padding[:, None, :]
    weights = getattr(torch, "_masked" + "_softmax")(scores, ~keep, 2, 0)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
""",
)

# ============================================================== lesson 07
M("7.1", "exponent i/d instead of 2i/d", ("angle = pos / 10000 ** (2 * i / d)", "angle = pos / 10000 ** (i / d)"))
M(
    "7.1",
    "cosine in the even channels, sine in the odd (the slide's order)",
    (
        "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
        "pe[:, 0::2] = torch.cos(angle)\n    pe[:, 1::2] = torch.sin(angle)",
    ),
)
M(
    "7.1",
    "positions 1..T instead of 0..T-1",
    ("torch.arange(T, dtype=torch.float32)", "torch.arange(1, T + 1, dtype=torch.float32)"),
)
M(
    "7.1",
    "sines in the first half, cosines in the second (not interleaved)",
    (
        "pe[:, 0::2] = torch.sin(angle)\n    pe[:, 1::2] = torch.cos(angle)",
        "pe[:, : d // 2] = torch.sin(angle)\n    pe[:, d // 2 :] = torch.cos(angle)",
    ),
)

M(
    "7.2",
    "view straight to (B, H, T, D) without the transpose",
    ("x.view(B, T, n_head, C // n_head).transpose(1, 2)", "x.view(B, n_head, T, C // n_head)"),
)
M(
    "7.2",
    "features split (D, H): head h gets every H-th feature",
    ("x.view(B, T, n_head, C // n_head).transpose(1, 2)", "x.view(B, T, C // n_head, n_head).permute(0, 3, 1, 2)"),
)
M(
    "7.2",
    "transpose of the last two axes too: (B, H, D, T)",
    ("x.view(B, T, n_head, C // n_head).transpose(1, 2)", "x.view(B, T, n_head, C // n_head).permute(0, 2, 3, 1)"),
)

M(
    "7.3",
    "projections with nn.Linear's default bias (the text says bias=False)",
    ("self.key = nn.Linear(d_model, head_size, bias=False)", "self.key = nn.Linear(d_model, head_size)"),
    ("self.query = nn.Linear(d_model, head_size, bias=False)", "self.query = nn.Linear(d_model, head_size)"),
    ("self.value = nn.Linear(d_model, head_size, bias=False)", "self.value = nn.Linear(d_model, head_size)"),
)
M("7.3", "scaled by sqrt(d_model) instead of sqrt(d_k)", ("math.sqrt(k.shape[-1])", "math.sqrt(C)"))
M("7.3", "no causal mask", ('        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))\n', ""))
M(
    "7.3",
    "the mask without slicing to T (works only when T == block_size)",
    ("self.tril[:T, :T] == 0", "self.tril == 0"),
)
M("7.3", "softmax over the queries (dim=-2)", ("att = torch.softmax(att, dim=-1)", "att = torch.softmax(att, dim=-2)"))
M(
    "7.3",
    "mask applied after the softmax (rows no longer sum to 1)",
    (
        '        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))\n        att = torch.softmax(att, dim=-1)\n',
        "        att = torch.softmax(att, dim=-1)\n        att = att.masked_fill(self.tril[:T, :T] == 0, 0.0)\n",
    ),
)
M(
    "7.3",
    "query and key exchanged: K Q^T (the transposed scores)",
    ("att = q @ k.transpose(-2, -1)", "att = k @ q.transpose(-2, -1)"),
)

M(
    "7.4",
    "heads and head size exchanged: Head(d_model, n_heads) repeated d_model // n_heads times",
    (
        "[Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)]",
        "[Head(d_model, n_heads, block_size) for _ in range(d_model // n_heads)]",
    ),
)
M(
    "7.4",
    "W^O without its bias b^O",
    ("self.proj = nn.Linear(d_model, d_model)", "self.proj = nn.Linear(d_model, d_model, bias=False)"),
)
M(
    "7.4",
    "no output projection applied in forward",
    (
        "return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))",
        "return torch.cat([h(x) for h in self.heads], dim=-1)",
    ),
)
M(
    "7.4",
    "one Head shared n_heads times ([Head(...)] * n_heads)",
    (
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])",
        "nn.ModuleList([Head(d_model, d_model // n_heads, block_size)] * n_heads)",
    ),
)
M(
    "7.4",
    "heads concatenated in reverse order",
    ("torch.cat([h(x) for h in self.heads], dim=-1)", "torch.cat([h(x) for h in reversed(self.heads)], dim=-1)"),
)

M(
    "7.5",
    "d_ff = d_model (the 4 forgotten)",
    (
        "nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))",
        "nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU(), nn.Linear(d_model, d_model))",
    ),
)
M(
    "7.5",
    "second layer without its bias b_2",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model, bias=False))"),
)
M("7.5", "GELU instead of ReLU", ("nn.ReLU()", "nn.GELU()"))
M(
    "7.5",
    "ReLU after the second layer too",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.ReLU())"),
)
M(
    "7.5",
    "dropout(0.2) added as in Karpathy's video",
    ("nn.Linear(4 * d_model, d_model))", "nn.Linear(4 * d_model, d_model), nn.Dropout(0.2))"),
)

M(
    "7.6",
    "post-norm: LN(x + SA(x))",
    (
        "x = x + self.sa(self.ln1(x))\n        x = x + self.ffwd(self.ln2(x))",
        "x = self.ln1(x + self.sa(x))\n        x = self.ln2(x + self.ffwd(x))",
    ),
)
M("7.6", "x += in place (the caller's x changes)", ("x = x + self.sa(self.ln1(x))", "x += self.sa(self.ln1(x))"))
M("7.6", "ln1 used for both sub-layers", ("x = x + self.ffwd(self.ln2(x))", "x = x + self.ffwd(self.ln1(x))"))
M("7.6", "no residual around the feed-forward", ("x = x + self.ffwd(self.ln2(x))", "x = self.ffwd(self.ln2(x))"))
M(
    "7.6",
    "the residual stream carries LN(x), not x",
    ("x = x + self.sa(self.ln1(x))", "x = self.ln1(x)\n        x = x + self.sa(x)"),
)

M(
    "7.7",
    "position table of vocab_size rows",
    (
        "self.position_embedding = nn.Embedding(block_size, d_model)",
        "self.position_embedding = nn.Embedding(vocab_size, d_model)",
    ),
)
M(
    "7.7",
    "positions never added",
    (
        "x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))",
        "x = self.token_embedding(idx)",
    ),
)
M(
    "7.7",
    "final layer norm defined but not applied",
    ("self.lm_head(self.ln_f(self.blocks(x)))", "self.lm_head(self.blocks(x))"),
)
M(
    "7.7",
    "targets shifted once more (logits[:, :-1] against targets[:, 1:])",
    (
        "loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))",
        "loss = F.cross_entropy(logits[:, :-1].reshape(B * (T - 1), -1), targets[:, 1:].reshape(B * (T - 1)))",
    ),
)
M(
    "7.7",
    "positions arange(block_size): works only when T == block_size",
    ("self.position_embedding(torch.arange(T, device=idx.device))", "self.position_embedding.weight"),
)
M(
    "7.7",
    "the loss a sum over positions, not a mean",
    ("targets.reshape(B * T))", 'targets.reshape(B * T), reduction="sum")'),
)
M(
    "7.7",
    "one Block reused n_layers times",
    (
        "nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])",
        "nn.Sequential(*[Block(d_model, n_heads, block_size)] * n_layers)",
    ),
)

M(
    "7.9",
    "exactly k tokens via topk indices (ties dropped)",
    (
        '    kth = torch.topk(scaled, k).values[-1]\n    scaled = scaled.masked_fill(scaled < kth, float("-inf"))\n',
        '    idx = torch.topk(scaled, k).indices\n    keep = torch.zeros_like(scaled, dtype=torch.bool)\n    keep[idx] = True\n    scaled = scaled.masked_fill(~keep, float("-inf"))\n',
    ),
)
M("7.9", "temperature multiplies the logits", ("scaled = logits / temperature", "scaled = logits * temperature"))
M(
    "7.9",
    "divides the caller's logits in place",
    ("scaled = logits / temperature", "logits /= temperature\n    scaled = logits"),
)
M(
    "7.9",
    "softmax of all logits, then the tail zeroed without renormalising",
    (
        '    scaled = scaled.masked_fill(scaled < kth, float("-inf"))\n    return torch.softmax(scaled, dim=-1)',
        "    return torch.softmax(scaled, dim=-1).masked_fill(scaled < kth, 0.0)",
    ),
)
M(
    "7.9",
    "k-th largest read at index k (keeps k + 1)",
    ("torch.topk(scaled, k).values[-1]", "torch.sort(scaled, descending=True).values[min(k, len(scaled) - 1)]"),
)

B(
    "7.1",
    "course_lib.transformer.sinusoidal_positions",
    """
from course_lib.transformer import sinusoidal_positions


def positional_encoding(T, d):
    return sinusoidal_positions(T, d)
""",
)
B(
    "7.1",
    "course_lib.encoder_decoder.sinusoidal_positions through __import__",
    """
def positional_encoding(T, d):
    mod = __import__("course_lib.encoder_decoder", fromlist=["x"])
    return getattr(mod, "sinusoidal_" + "positions")(T, d)
""",
)
B(
    "7.3",
    "torch's F.scaled_dot_product_attention(is_causal=True)",
    """
import torch
import torch.nn.functional as F
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.query(x), self.key(x), self.value(x), is_causal=True)
""",
)
B(
    "7.3",
    "course_lib.attention.scaled_dot_product_attention with its causal_mask",
    """
import torch
from torch import nn
from course_lib import attention as A


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        out, _ = A.scaled_dot_product_attention(self.query(x), self.key(x), self.value(x), A.causal_mask(x.shape[1]))
        return out
""",
)
B(
    "7.3",
    "forward copied from course_lib.buildup.Head",
    """
import math

import torch
from torch import nn
from course_lib import buildup


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))
        self.mask = self.tril.bool()
        self.d_k = head_size

    forward = buildup.Head.forward
""",
)
B(
    "7.4",
    "torch's F.multi_head_attention_forward on the heads' stacked weights",
    """
import torch
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        B, T, C = x.shape
        Wq = torch.cat([h.query.weight for h in self.heads])
        Wk = torch.cat([h.key.weight for h in self.heads])
        Wv = torch.cat([h.value.weight for h in self.heads])
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        xt = x.transpose(0, 1)
        out, _ = F.multi_head_attention_forward(
            xt, xt, xt, C, self.n_heads, None, None, None, None, False, 0.0, self.proj.weight, self.proj.bias,
            training=False, need_weights=False, attn_mask=mask, use_separate_proj_weight=True,
            q_proj_weight=Wq, k_proj_weight=Wk, v_proj_weight=Wv)
        return out.transpose(0, 1)
""",
)
B(
    "7.4",
    "forward via F.scaled_dot_product_attention over the stacked heads",
    """
import torch
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads)])
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        q = torch.stack([h.query(x) for h in self.heads], dim=1)
        k = torch.stack([h.key(x) for h in self.heads], dim=1)
        v = torch.stack([h.value(x) for h in self.heads], dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).flatten(2))
""",
)
B(
    "7.5",
    "course_lib.buildup.FeedForward's forward on its own layers' names (layers named as the library's)",
    """
from course_lib import buildup


class FeedForward(buildup.FeedForward):
    def __init__(self, d_model):
        super().__init__(d_model)
        for m in self.modules():
            if isinstance(m, nn.GELU):
                pass
""",
)
B(
    "7.6",
    "feed_forward and forward of course_lib.transformer.SelfAttentionBlock assigned in the class body",
    """
from course_lib.transformer import SelfAttentionBlock as _Lib


class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.norm_first = True

    def attention(self, x):
        return self.sa(x)

    feed_forward = _Lib.feed_forward
    forward = _Lib.forward
""",
)
B(
    "7.6",
    "course_lib.transformer.SelfAttentionBlock's forward copied",
    """
from course_lib import transformer as _t


class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)

    def forward(self, x):
        inner = _t.SelfAttentionBlock.__new__(_t.SelfAttentionBlock)
        nn.Module.__init__(inner)
        for name, child in self.named_children():
            setattr(inner, name, child)
        return _t.SelfAttentionBlock.forward(inner, x)
""",
)
B(
    "7.7",
    "the student's blocks, course_lib.transformer.next_token_loss for the loss",
    """
import torch.nn.functional as F
from course_lib.transformer import next_token_loss


class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, n_heads, block_size) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))
        logits = self.lm_head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, next_token_loss(logits, idx, targets)
""",
)
B(
    "7.7",
    "torch's nn.TransformerEncoderLayer blocks under the name blocks",
    """
import torch.nn.functional as F


class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.0,
                                     activation="relu", batch_first=True, norm_first=True) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        for blk in self.blocks:
            x = blk(x, src_mask=mask, is_causal=True)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
""",
)
B(
    "7.9",
    "course_lib.lm.sample_next's top-k through many draws? no: torch.topk + the library's evaluating? (course_lib.lm.sample_next used to pick the support)",
    """
import torch
from course_lib.lm import sample_next


def top_k_probs(logits, k, temperature=1.0):
    g = torch.Generator().manual_seed(0)
    seen = torch.zeros_like(logits, dtype=torch.bool)
    for _ in range(200):
        seen[sample_next(logits[None], temperature, k, generator=g)] = True
    kth = (logits / temperature)[seen].min()
    scaled = (logits / temperature).masked_fill((logits / temperature) < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)
""",
)

# ============================================================== added after the first run: harder routes
B(
    "7.1",
    "course_lib.transformer.sinusoidal_positions called in another thread",
    """
from concurrent.futures import ThreadPoolExecutor

from course_lib import transformer


def positional_encoding(T, d):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(transformer.sinusoidal_positions, T, d).result()
""",
)
B(
    "6.3",
    "switches the profiler off (sys.setprofile(None)), then course_lib's decoder_mask",
    """
import sys

import torch
from course_lib import attention


def masked_attention(scores, values, lengths):
    sys.setprofile(None)
    mask = attention.decoder_mask(lengths, scores.shape[1], device=scores.device)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ values, weights
""",
)
B(
    "2.4",
    "torch.func.vjp of the replayed step",
    """
import torch
from torch.func import vjp


def bptt_step(dh, h, h_prev, x, W_hh):
    a = torch.atanh(h)
    W_xh = torch.zeros(W_hh.shape[0], x.shape[1], dtype=h.dtype)
    b = (a - h_prev @ W_hh.T).detach()

    def step(W_xh, W_hh, b, h_prev):
        return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b)

    _, pull = vjp(step, W_xh, W_hh, b, h_prev)
    dW_xh, dW_hh, db, dhp = pull(dh)
    return dW_xh, dW_hh, db.sum(0), dhp
""",
)
B(
    "7.3",
    "aten's math SDPA kernel through torch.ops",
    """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        op = getattr(torch.ops.aten, "_scaled_dot_product_attention_math")
        return op(self.query(x), self.key(x), self.value(x), is_causal=True)[0]
""",
)
B(
    "4.2",
    "torch._VF.gru_cell reached by a string",
    """
import importlib

import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    vf = getattr(importlib.import_module("torch"), "_VF")
    return getattr(vf, "gru" + "_cell")(x, h, W_xh, W_hh, b_xh, b_hh)
""",
)
B(
    "2.1",
    "the check's own softmax Jacobian? no: torch.autograd.functional.jacobian run in a thread",
    """
import threading

import torch


def softmax_jacobian(z):
    out = {}
    t = threading.Thread(target=lambda: out.update(j=torch.autograd.functional.jacobian(lambda v: torch.softmax(v, 0), z)))
    t.start()
    t.join()
    return out["j"]
""",
)

# ============================================================== other right answers the texts allow (must pass)
_add(
    "right",
    "7.5",
    "raw parameters in the x @ W1 layout ('name its layers as you like')",
    """
class FeedForward(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        k1, k2 = 1 / math.sqrt(d_model), 1 / math.sqrt(4 * d_model)
        self.W1 = nn.Parameter(torch.empty(d_model, 4 * d_model).uniform_(-k1, k1))
        self.b1 = nn.Parameter(torch.empty(4 * d_model).uniform_(-k1, k1))
        self.W2 = nn.Parameter(torch.empty(4 * d_model, d_model).uniform_(-k2, k2))
        self.b2 = nn.Parameter(torch.empty(d_model).uniform_(-k2, k2))

    def forward(self, x):
        return torch.relu(x @ self.W1 + self.b1) @ self.W2 + self.b2
""",
)
_add(
    "right",
    "7.7",
    "lm_head without bias (the text: either passes)",
    RIGHT["7.7"].replace(
        "self.lm_head = nn.Linear(d_model, vocab_size)", "self.lm_head = nn.Linear(d_model, vocab_size, bias=False)"
    ),
)
_add(
    "right",
    "4.1",
    "colah's form: one product on the concatenation [x, h] (the text: either form is fine)",
    RIGHT["4.1"].replace(
        "gates = x @ self.W_xh.T + self.b_xh + h @ self.W_hh.T + self.b_hh",
        "gates = torch.cat([x, h], dim=1) @ torch.cat([self.W_xh, self.W_hh], dim=1).T + self.b_xh + self.b_hh",
    ),
)
_add(
    "right",
    "7.3",
    "the mask M added as a matrix of 0 and -inf, as the formula writes it",
    RIGHT["7.3"].replace(
        'att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
        'M = torch.zeros(T, T).masked_fill(self.tril[:T, :T] == 0, float("-inf"))\n        att = att + M',
    ),
)
_add(
    "right",
    "6.3",
    "empty sentences handled with torch.where before the softmax",
    RIGHT["6.3"].replace(
        "    weights = torch.softmax(masked, dim=-1)\n    weights = torch.nan_to_num(weights, nan=0.0)\n",
        "    seen = mask.any(dim=-1, keepdim=True)\n"
        "    weights = torch.softmax(torch.where(seen, masked, torch.zeros_like(masked)), dim=-1)\n"
        "    weights = torch.where(mask, weights, torch.zeros_like(weights))\n",
    ),
)
_add(
    "right",
    "2.2",
    "log-softmax with torch.logsumexp, dE built row by row with +=",
    RIGHT["2.2"]
    .replace(
        "    zmax = z.max(dim=1, keepdim=True).values\n"
        "    logp = z - zmax - torch.log(torch.exp(z - zmax).sum(dim=1, keepdim=True))\n",
        "    logp = z - torch.logsumexp(z, dim=1, keepdim=True)\n",
    )
    .replace(
        "    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))\n",
        "    for row, word in zip(de.reshape(B * n, d), contexts.reshape(-1).tolist()):\n        dE[word] += row\n",
    ),
)
