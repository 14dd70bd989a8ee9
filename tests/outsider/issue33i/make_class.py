"""Hostile class 33i: writes submissions under /tmp/hostile33i/class/<lesson>/ (flat layout), /tmp/hostile33i/nbg/
(nbgrader's submitted/<student>/<assignment>/x.ipynb layout), the planted modules under /tmp/hostile33i/plant/, and
/tmp/hostile33i/manifest.json: for each entry, which exercises a correct grader must give (deserve) and which it must
not (must_not), the class of attack, and a tag found in its row's file column (one row per entry).

    python tests/outsider/issue33i/make_class.py

Written from the grader's code and documentation only (no test of the grader and no history was read)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TMP = Path("/tmp/hostile33i")
CLASS, NBG, PLANT, MARKERS = TMP / "class", TMP / "nbg", TMP / "plant", TMP / "markers"
SECRET_NAME = "HOSTILE33I_SECRET"
LESSONS = {"02": "02_backprop", "04": "04_lstm_gru", "05": "05_attention", "06": "06_masked_attention",
           "07": "07_transformer"}  # fmt: skip
ALL = {"02": ["2.1", "2.2", "2.3", "2.4", "2.5"], "04": ["4.1", "4.2", "4.3", "4.4", "4.5"],
       "05": ["5.1", "5.2", "5.3"], "06": ["6.1", "6.2", "6.3", "6.4"],
       "07": ["7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.9"]}  # fmt: skip

MANIFEST: list[dict] = []


def notebook(lesson: str, base: str = "exercises") -> dict:
    return json.loads((ROOT / base / f"{LESSONS[lesson]}.ipynb").read_text())


def cell_source(lesson: str, grade_id: str, base: str = "solutions") -> str:
    for c in notebook(lesson, base)["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return "".join(c["source"])
    raise KeyError(grade_id)


def replaced(lesson: str, cells: dict, base: str = "exercises", added: list | None = None) -> dict:
    nb = notebook(lesson, base)
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if gid in cells:
            c["source"] = cells[gid]
            if c["cell_type"] == "code":
                c["outputs"], c["execution_count"] = [], None
    for extra in added or []:
        nb["cells"].append(extra)
    return nb


_IDS = iter(range(10**6))


def code_cell(source: str, metadata: dict | None = None) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": f"zqadded{next(_IDS)}", "metadata": metadata or {},
            "outputs": [], "source": source}  # fmt: skip


def add(lesson, tag, name, nb, *, kind, deserve=(), must_not=None, note="", expect="held", folder=None, raw=None):
    """One entry: the notebook written as <folder>/<name>.ipynb; ``must_not`` defaults to every exercise not deserved."""
    folder = folder or CLASS / lesson
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb" if raw is None else raw
    if nb is not None:
        path.write_text(json.dumps(nb))
    deserve = list(deserve)
    must_not = [e for e in ALL[lesson] if e not in deserve] if must_not is None else list(must_not)
    MANIFEST.append(dict(lesson=lesson, tag=tag, file=str(path), kind=kind, deserve=deserve, must_not=must_not,
                         note=note, expect=expect, graded_folder=str(folder)))  # fmt: skip


# ---------------------------------------------------------------- what the borrowed answers share

# torch's own Python for an op, taken out of torch's file as text while the function runs, its decorators and its
# torch._check calls (which import sympy through typing_extensions' frame look) left out, written to /tmp and run by
# runpy: the code is made at run time in runpy's frame, under a /tmp file name, so nothing says it is torch's
TORCH_COPY = '''
def _torch_copy(relpath, names, extra=""):
    """Functions of torch's own Python (by file), taken from its text now and run by runpy (not imported)."""
    path = os.path.join(os.path.dirname(torch.__file__), *relpath.split("/"))
    with open(path) as f:
        tree = ast.parse(f.read())
    body = ast.parse("import math\\nimport torch\\nimport torch.nn.functional as F\\nfrom typing import Optional\\n" + extra).body
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            for inner in ast.walk(node):
                for field in ("body", "orelse"):
                    stmts = getattr(inner, field, None)
                    if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                        kept = [s for s in stmts if not (isinstance(s, ast.Expr) and "_check" in ast.unparse(s))]
                        setattr(inner, field, kept or [ast.Pass()])
            body.append(node)
    tree.body = body
    out = "/tmp/copy_%d_%s.py" % (os.getpid(), names[0])
    with open(out, "w") as f:
        f.write(ast.unparse(tree))
    return runpy.run_path(out)
'''
COPY_IMPORTS = "import ast\nimport math\nimport os\nimport runpy\n\nimport torch\nfrom torch import nn\n"
ONNX = "onnx/ops/_impl.py"
ONNX_NAMES = ("attention_23", "_get_scale_factor", "_reshape_3d_to_4d", "_validate_gqa_configuration",
              "_get_qk_output_for_aten_spda")  # fmt: skip


def onnx_head() -> str:
    return (
        "# Exercise 7.3: one head of self-attention\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

class Head(nn.Module):
    """One head of causal self-attention: softmax(Q K^T / sqrt(d_k), future masked) V."""

    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        attention = _torch_copy("'''
        + ONNX
        + """", """
        + repr(ONNX_NAMES)
        + """)["attention_23"]
        # torch's ONNX Attention-23, its own mask, scale, softmax and weighted sum (mode 3 keeps it off the sdpa path)
        return attention(q[:, None], k[:, None], v[:, None], is_causal=True, qk_matmul_output_mode=3)[0][:, 0]
"""
    )


def onnx_mha_3d() -> str:
    """7.4 with no Head at all: torch's attention splits and merges the heads itself (3-D input and q_num_heads)."""
    return (
        "# Exercise 7.4: multi-head attention\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        attention = _torch_copy("'''
        + ONNX
        + """", """
        + repr(ONNX_NAMES)
        + """)["attention_23"]
        q = torch.cat([h.query(x) for h in self.heads], dim=-1)
        k = torch.cat([h.key(x) for h in self.heads], dim=-1)
        v = torch.cat([h.value(x) for h in self.heads], dim=-1)
        out = attention(q, k, v, is_causal=True, q_num_heads=self.n_heads, kv_num_heads=self.n_heads,
                        qk_matmul_output_mode=3)[0]
        return self.proj(out)
"""
    )


def onnx_masked_attention() -> str:
    return (
        "# Exercise 6.3: masked attention over a padded batch\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    attention = _torch_copy("'''
        + ONNX
        + """", """
        + repr(ONNX_NAMES)
        + """)["attention_23"]
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)  # Q K^T = scores @ I = scores
    out, _, _, weights = attention(scores[:, None], eye, values[:, None], allowed[:, None], scale=1.0,
                                   qk_matmul_output_mode=3)
    return torch.nan_to_num(out[:, 0]), torch.nan_to_num(weights[:, 0])
"""
    )


def onnx_alpha() -> str:
    return (
        "# Exercise 6.1: the quiz for any score matrix\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    attention = _torch_copy("'''
        + ONNX
        + """", """
        + repr(ONNX_NAMES)
        + """)["attention_23"]
    n = scores.shape[0]
    eye = torch.eye(n, dtype=scores.dtype)[None, None]
    weights = attention(scores[None, None], eye, eye, is_causal=True, scale=1.0, qk_matmul_output_mode=3)[3]
    return weights[0, 0, i - 1, j - 1].item()
"""
    )


def onnx_decode() -> str:
    return (
        "# Exercise 5.2: the decoder with attention\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    attention = _torch_copy("'''
        + ONNX
        + """", """
        + repr(ONNX_NAMES)
        + """)["attention_23"]
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    kv = states[:, None]  # (B, 1, T_in, H): one head
    for i in range(tgt_in.shape[1]):
        c, _, _, alpha = attention(hidden[:, None, None, :], kv, kv, real[:, None, None, :], qk_matmul_output_mode=3)
        c_i, alpha_i = c[:, 0, 0], alpha[:, 0, 0]
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
"""
    )


MHA_NAMES = ("multi_head_attention_forward", "_mha_shape_check", "_canonical_mask", "_none_or_dtype",
             "_in_projection_packed", "_in_projection")  # fmt: skip
MHA_EXTRA = (
    "import warnings\nfrom torch import Tensor\nfrom torch.overrides import has_torch_function, "
    "handle_torch_function\nfrom torch.nn.functional import linear, softmax, dropout, pad\nDType = torch.dtype"
)


def functional_mha() -> str:
    """7.4 by torch.nn.MultiheadAttention's own functional form (F.multi_head_attention_forward, a forbidden kernel
    written in Python), copied out of torch/nn/functional.py at run time; need_weights keeps it off sdpa."""
    return (
        "# Exercise 7.4: multi-head attention\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        mha = _torch_copy("nn/functional.py", '''
        + repr(MHA_NAMES)
        + ", "
        + repr(MHA_EXTRA)
        + """)
        mha = mha["multi_head_attention_forward"]
        T = x.shape[1]
        w = torch.cat([torch.cat([h.query.weight for h in self.heads]), torch.cat([h.key.weight for h in self.heads]),
                       torch.cat([h.value.weight for h in self.heads])])
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        xt = x.transpose(0, 1)
        out, _ = mha(xt, xt, xt, x.shape[-1], self.n_heads, w, None, None, None, False, 0.0, self.proj.weight,
                     self.proj.bias, training=False, need_weights=True, attn_mask=future, average_attn_weights=False)
        return out.transpose(0, 1)
"""
    )


DECOMP = "_decomp/decompositions.py"


def decomp_gru() -> str:
    return (
        "# Exercise 4.2: one GRU step\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    step = _torch_copy("'''
        + DECOMP
        + """", ("gru_cell_data",))["gru_cell_data"]  # torch's own GRU step
    return step(x, h, W_xh, b_xh, W_hh, b_hh)
"""
    )


def decomp_lstm() -> str:
    return (
        "# Exercise 4.1: the LSTM cell as a module\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

class LSTMCell(nn.Module):
    """One LSTM step, torch's layout: x (B, I), state (h, c) each (B, H) -> (h_t, c_t)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1 / math.sqrt(hidden_size)
        self.W_xh = nn.Parameter(torch.empty(4 * hidden_size, input_size).uniform_(-k, k))
        self.W_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size).uniform_(-k, k))
        self.b_xh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))
        self.b_hh = nn.Parameter(torch.empty(4 * hidden_size).uniform_(-k, k))

    def forward(self, x, state=None):
        cell = _torch_copy("'''
        + DECOMP
        + """", ("lstm_cell",))["lstm_cell"]  # torch's own LSTM step
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        return cell(x @ self.W_xh.T + self.b_xh, h, c, self.W_hh, self.b_hh, None, 1)
"""
    )


SYMPY_JACOBIAN = '''# Exercise 2.1: the softmax Jacobian
import sympy
import torch


def softmax_jacobian(z):
    """(K, K) Jacobian of softmax at the logits z (K,)."""
    K = len(z)
    zs = sympy.symbols(f"z0:{K}")
    total = sum(sympy.exp(s) for s in zs)
    soft = sympy.Matrix([sympy.exp(s) / total for s in zs])
    J = soft.jacobian(sympy.Matrix(zs))  # sympy differentiates: nothing derived by hand
    values = dict(zip(zs, (z - z.max()).tolist()))  # the Jacobian of softmax is unchanged by a shift of the logits
    return torch.tensor([[float(J[i, j].evalf(subs=values)) for j in range(K)] for i in range(K)], dtype=z.dtype)
'''

SYMPY_BPTT_STEP = '''# Exercise 2.4: one step of backpropagation through time
import sympy
import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    B, H = h.shape
    D = x.shape[1]
    Wx = sympy.Matrix(H, D, lambda i, j: sympy.Symbol(f"wx{i}_{j}"))
    Wh = sympy.Matrix(H, H, lambda i, j: sympy.Symbol(f"wh{i}_{j}"))
    bh = sympy.Matrix(H, 1, lambda i, j: sympy.Symbol(f"b{i}"))
    Hp = sympy.Matrix(B, H, lambda i, j: sympy.Symbol(f"p{i}_{j}"))
    X = sympy.Matrix(B, D, lambda i, j: sympy.Symbol(f"x{i}_{j}"))
    A = X * Wx.T + Hp * Wh.T + sympy.ones(B, 1) * bh.T
    G = sympy.Matrix(B, H, lambda i, j: sympy.Symbol(f"g{i}_{j}"))
    terms = [G[i, j] * sympy.tanh(A[i, j]) for i in range(B) for j in range(H)]  # L = sum(dh * h): dL/dh = dh
    at = {sympy.tanh(A[i, j]): float(h[i, j]) for i in range(B) for j in range(H)}  # tanh(a) is h: no W_xh needed
    known = {Wh[i, j]: float(W_hh[i, j]) for i in range(H) for j in range(H)}
    known.update({Hp[i, j]: float(h_prev[i, j]) for i in range(B) for j in range(H)})
    known.update({X[i, j]: float(x[i, j]) for i in range(B) for j in range(D)})
    known.update({G[i, j]: float(dh[i, j]) for i in range(B) for j in range(H)})
    holds = [t.free_symbols for t in terms]

    def grad(symbols, shape):  # sympy.diff of L, term by term (a term without the symbol has no derivative)
        vals = []
        for s in symbols:
            d = sympy.Add(*[sympy.diff(t, s) for t, free in zip(terms, holds) if s in free])
            vals.append(float(d.xreplace(at).xreplace(known)))
        return torch.tensor(vals, dtype=h.dtype).reshape(shape)

    return (grad(list(Wx), (H, D)), grad(list(Wh), (H, H)), grad(list(bh), (H,)), grad(list(Hp), (B, H)))
'''


def decomp_fflm() -> str:
    """2.2 with torch's own gradient formulas (the gradient kernels the grader bars at the dispatcher: log_softmax's
    and tanh's backward) taken from torch/_decomp at run time; the matrix products are the student's."""
    return (
        "# Exercise 2.2: backprop ninja\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def fflm_loss_and_grads(params, contexts, targets):
    """Mean cross-entropy of the feedforward LM on a batch, and its gradient for E, W, b, U, c (by hand)."""
    grads = _torch_copy("_decomp/decompositions.py", ("_log_softmax_backward_data", "tanh_backward",
                        "_cast_grad_to_input_dtype"), "from torch import Tensor")
    E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))
    B, n = contexts.shape
    d = E.shape[1]
    e = E[contexts].reshape(B, n * d)
    h = torch.tanh(e @ W.T + b)
    z = h @ U.T + c
    log_probs = torch.log_softmax(z, dim=1)
    rows = torch.arange(B)
    loss = -log_probs[rows, targets].mean()
    dlogp = torch.zeros_like(log_probs)
    dlogp[rows, targets] = -1.0 / B
    dz = grads["_log_softmax_backward_data"](dlogp, log_probs, 1, z.dtype)  # aten::_log_softmax_backward_data
    da = grads["tanh_backward"](dz @ U, h)  # aten::tanh_backward
    dE = torch.zeros_like(E)
    dE.index_add_(0, contexts.reshape(-1), (da @ W).reshape(B * n, d))
    return float(loss), {"E": dE, "W": da.T @ e, "b": da.sum(0), "U": dz.T @ h, "c": dz.sum(0)}
'''
    )


def decomp_bptt_step() -> str:
    return (
        "# Exercise 2.4: one step of backpropagation through time\n"
        + COPY_IMPORTS
        + TORCH_COPY
        + '''

def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    da = _torch_copy("_decomp/decompositions.py", ("tanh_backward",), "from torch import Tensor")["tanh_backward"](dh, h)
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''
    )


# a notebook cell that ignores the interrupt and spins, and one that floods the output; the answer 6.1 is honest
STRESS_CELLS = [
    code_cell("print('x' * 3_000_000)"),
    code_cell("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"),
]

# the same borrowing with nothing read or written: torch's own code object, given another file name by code.replace and
# made a function by types.FunctionType, both called by copy.copy (copy.py's frame, not the answer's line)
RELABEL = '''

class _Made:
    """copy.copy calls what __reduce__ names, in copy.py's frame."""

    def __init__(self, make, *args):
        self.make, self.args = make, args

    def __reduce__(self):
        return (self.make, self.args)


def _relabelled(fn):
    """fn's own code (torch's), under a file name that is not torch's, as a new function with fn's globals."""
    fn = inspect.unwrap(fn)
    code = copy.copy(_Made(functools.partial(dis.Bytecode(fn).codeobj.replace, co_filename="/tmp/not_torch.py")))
    defaults = copy.copy(_Made(getattr, fn, "__defaults__"))
    return copy.copy(_Made(types.FunctionType, code, fn.__globals__, None, defaults))
'''
RELABEL_IMPORTS = (
    "import copy\nimport dis\nimport functools\nimport inspect\nimport sys\nimport types\n\nimport torch\n"
)

RELABEL_GRU = (
    "# Exercise 4.2: one GRU step\n"
    + RELABEL_IMPORTS
    + RELABEL
    + '''

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    decomps = sys.modules.get("torch._decomp.decompositions")
    if decomps is None:
        import torch._decomp.decompositions as decomps
    return _relabelled(decomps.gru_cell_data)(x, h, W_xh, b_xh, W_hh, b_hh)
'''
)

RELABEL_TANH = (
    "# Exercise 2.4: one step of backpropagation through time\n"
    + RELABEL_IMPORTS
    + RELABEL
    + '''

def bptt_step(dh, h, h_prev, x, W_hh):
    """(dW_xh, dW_hh, db_h, dh_prev) for h = tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h), given dh = dL/dh."""
    decomps = sys.modules.get("torch._decomp.decompositions")
    if decomps is None:
        import torch._decomp.decompositions as decomps
    da = _relabelled(decomps.tanh_backward)(dh, h)  # aten::tanh_backward's formula, torch's own code
    return da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh
'''
)

RELABEL_MHA = (
    "# Exercise 7.4: multi-head attention\n"
    + RELABEL_IMPORTS
    + "import torch.nn.functional as F\nfrom torch import nn\n"
    + RELABEL
    + '''

class MultiHeadAttention(nn.Module):
    """n_heads heads of d_model // n_heads features each, concatenated, then W^O."""

    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        mha = _relabelled(F.multi_head_attention_forward)  # MultiheadAttention's forward, torch's own code
        T = x.shape[1]
        w = torch.cat([torch.cat([h.query.weight for h in self.heads]), torch.cat([h.key.weight for h in self.heads]),
                       torch.cat([h.value.weight for h in self.heads])])
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        xt = x.transpose(0, 1)
        out, _ = mha(xt, xt, xt, x.shape[-1], self.n_heads, w, None, None, None, False, 0.0, self.proj.weight,
                     self.proj.bias, training=False, need_weights=True, attn_mask=future, average_attn_weights=False)
        return out.transpose(0, 1)
'''
)

SGD_FUNCTIONAL = '''# Exercise 2.3: train with your own gradients
from torch.optim.sgd import sgd as sgd_step


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        keys = list(params)
        # torch.optim.SGD's own functional form (the class is forbidden; its step is this function)
        sgd_step([params[k] for k in keys], [grads[k] for k in keys], [None] * len(keys),
                 weight_decay=0.0, momentum=0.0, lr=lr, dampening=0.0, nesterov=False, maximize=False)
        losses.append(float(loss))
    return losses, params
'''

SGD_FUSED = '''# Exercise 2.3: train with your own gradients
import torch


def train_sgd(params, batches, lr, loss_and_grads):
    """SGD from a copy of params over the batches, in order: returns (losses, trained params)."""
    params = {k: v.clone() for k, v in params.items()}
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        keys = list(params)
        # torch.optim.SGD(fused=True)'s kernel
        torch._fused_sgd_([params[k] for k in keys], [grads[k] for k in keys], [], weight_decay=0.0, momentum=0.0,
                          lr=lr, dampening=0.0, nesterov=False, maximize=False, is_first_step=True)
        losses.append(float(loss))
    return losses, params
'''

RNNBASE_COUNT = '''# Exercise 4.3: the parameter count
from torch.nn.modules.rnn import RNNBase


def param_count(kind, input_size, hidden_size, num_layers=1):
    """Number of parameters of torch.nn.LSTM (kind="lstm") or torch.nn.GRU (kind="gru")."""
    built = RNNBase({"lstm": "LSTM", "gru": "GRU"}[kind], input_size, hidden_size, num_layers)  # LSTM's own base
    return sum(p.numel() for p in built.parameters())
'''

MAP_GRU = '''# Exercise 4.2: one GRU step
import itertools

import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """One step of torch.nn.GRUCell: x (B, I), h (B, H) -> h_t (B, H)."""
    return next(itertools.starmap(torch.gru_cell, [(x, h, W_xh, W_hh, b_xh, b_hh)]))
'''

# the admitted hole: course_lib's reference text read by C (torch.from_file), compiled outside the answer's frame
FROM_FILE_MASKED = '''# Exercise 6.3: masked attention over a padded batch
import ast
import os
import runpy

import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    path = os.path.join(os.path.dirname(torch.__file__), "..", "..", "..", "..", "..", "..", "opt", "course-lib",
                        "course_lib", "attention.py")
    path = "/opt/course-lib/course_lib/attention.py"
    size = os.stat(path).st_size
    text = bytes(torch.from_file(path, size=size, dtype=torch.uint8).tolist()).decode()
    tree = ast.parse(text)
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and "course_lib" not in ast.unparse(n)]
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and n.name in ("masked_softmax", "_check_mask"):
            n.body.insert(1, ast.parse("edited = True").body[0])  # one statement more: no fingerprint matches
            keep.append(n)
    tree.body = keep
    out = "/tmp/ms_%d.py" % os.getpid()
    with open(out, "w") as f:
        f.write(ast.unparse(tree))
    masked_softmax = runpy.run_path(out)["masked_softmax"]
    B, T, _ = scores.shape
    pos = torch.arange(T)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None])[:, None, :]
    weights = masked_softmax(scores, allowed)
    weights = torch.nan_to_num(weights)
    return weights @ values, weights
'''

# a forged reply: whatever pipe the child writes on, a line shaped like the harness's, from a finalizer that runs when
# the call's objects go (after the observer's exercise flag is cleared), and from the function itself
FORGE_PIPE = '''# Exercise 6.1: the quiz for any score matrix
import json
import os
import weakref

import torch


class _Late:
    def __del__(self):
        line = json.dumps({"reply": {"records": []}, "token": "0" * 32}) + "\\n"
        for fd in range(3, 40):
            try:
                os.write(fd, line.encode())
            except OSError:
                pass


_KEEP = []


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    _KEEP.append(_Late())
    weakref.finalize(scores, _Late().__del__)
    for fd in range(3, 40):
        try:
            os.write(fd, b'{"loaded": {}, "token": "x"}\\n{"refused": "nothing"}\\n')
        except OSError:
            pass
    return 0.5
'''

SECRET_CELL = '''# Exercise 6.1: the quiz for any score matrix
import os

import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    found = [os.environ.get("HOSTILE33I_SECRET", "")]
    for pid in ["self", "1", str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]:
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    found.append(f.read().replace(b"\\0", b" ").decode(errors="replace")[:2000])
            except OSError as exc:
                found.append(f"{pid}/{what}: {exc}")
    raise RuntimeError("LEAK " + " | ".join(found)[:3000])
'''

SECRET_KERNEL_CELL = """import os
found = [os.environ.get("HOSTILE33I_SECRET", "none")]
for pid in ["self", "1"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        found.append(open(f"/proc/{pid}/environ", "rb").read().replace(b"\\0", b" ").decode(errors="replace"))
    except OSError as exc:
        found.append(str(exc))
for path in ("/tmp/hostile33i/plant", "/work", "/root", "/home", os.path.expanduser("~")):
    try:
        found.append(path + ": " + " ".join(os.listdir(path)[:20]))
    except OSError as exc:
        found.append(str(exc))
raise RuntimeError("LEAK " + " | ".join(found)[:4000])
"""

# untouched answers; added cells claim a score, replace the checks in the kernel, and print what a grader might read
FORGE_CELLS = [
    code_cell('print("Score: 4/4")\nprint("6.1 passed\\n6.2 passed\\n6.3 passed\\n6.4 passed")'),
    code_cell(
        "import course_lib.checks as C\n"
        "for name in dir(C):\n"
        "    obj = getattr(C, name)\n"
        "    if hasattr(obj, 'run'):\n"
        "        try:\n"
        "            obj.run = lambda *a, **k: [{'returned': None, 'observed': {'refused': [], 'intact': True}}]\n"
        "        except Exception:\n"
        "            pass\n"
        "from IPython.display import display, JSON\n"
        "display({'application/json': {'status': 'passed', 'exercise': '6.3'}}, raw=True)\n"
    ),
    code_cell(
        "def alpha(scores, i, j):\n    import torch\n    n = scores.shape[0]\n"
        "    w = torch.softmax(scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float('-inf')), -1)\n"
        "    return w[i - 1, j - 1].item()\n",
        {"tags": ["solution"]},
    ),
]

# an answer cell whose function computes nothing but returns objects that try to run code in the check: a tensor
# subclass with __torch_function__, a float subclass, and a dict whose values are lazy
SUBCLASS_RETURN = '''# Exercise 6.3: masked attention over a padded batch
import torch


class Sneaky(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    B, T, _ = scores.shape
    w = torch.full((B, T, T), 1.0 / T).as_subclass(Sneaky)
    return (w @ values).as_subclass(Sneaky), w
'''

# the check's own observer fed a C-callable torch function mode left on after the call (the threat model: "one whose
# handler is a C callable would run from the check's frame; neither was tried by a hostile class yet")
LEFT_MODE = '''# Exercise 6.3: masked attention over a padded batch
import functools

import torch
from torch.overrides import TorchFunctionMode


class _Mode(TorchFunctionMode):
    pass


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    mode = _Mode()
    mode.__torch_function__ = functools.partial(torch._C._nn.scaled_dot_product_attention)
    mode.__enter__()  # left on: the check's describe and conversions run under it
    B, T, _ = scores.shape
    w = torch.full((B, T, T), 1.0 / T)
    return w @ values, w
'''


def planted() -> None:
    """Modules in the folder the grader is started from: each writes a marker when it is imported."""
    if PLANT.exists():
        shutil.rmtree(PLANT)
    PLANT.mkdir(parents=True)
    MARKERS.mkdir(parents=True, exist_ok=True)
    for old in MARKERS.iterdir():
        old.unlink()
    names = ["json", "sitecustomize", "usercustomize", "nbformat", "nbclient", "jupyter_client", "secrets", "csv",
             "typing_extensions", "course_lib_hook", "tempfile", "shutil", "subprocess", "zmq", "traitlets",
             "torch_plant", "dask", "signal", "_bootlocale", "encodings_plant"]  # fmt: skip
    for name in names:
        (PLANT / f"{name}.py").write_text(
            f"import os as _os\nopen({str(MARKERS / name)!r}, 'a').write(str(_os.getpid()) + '\\n')\n"
            "raise ImportError('planted module imported')\n"
        )
    (PLANT / "zz_plant.pth").write_text(f"import os; open({str(MARKERS / 'pth')!r}, 'a').write('pth\\n')\n")
    (PLANT / "ipython_config.py").write_text(f"open({str(MARKERS / 'ipython_config')!r}, 'a').write('x\\n')\n")
    (PLANT / "jupyter_config.py").write_text(f"open({str(MARKERS / 'jupyter_config')!r}, 'a').write('x\\n')\n")
    pkg = PLANT / "course_lib"  # a package named like the course's own
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"open({str(MARKERS / 'course_lib_pkg')!r}, 'a').write('x\\n')\n")


def lesson_entries() -> None:
    sol = lambda lesson, gid: cell_source(lesson, gid)  # noqa: E731

    # -- controls (honest)
    add("06", "zq001z", "zq001z_control_full", notebook("06", "solutions"), kind="control", deserve=ALL["06"],
        expect="full marks")  # fmt: skip
    add("06", "zq002z", "zq002z_control_untouched", notebook("06"), kind="control", expect="0")
    add("06", "zq003z", "zq003z_control_half", replaced("06", {"ex-6-1": sol("06", "ex-6-1"),
        "ex-6-3": sol("06", "ex-6-3")}), kind="control", deserve=["6.1", "6.3"], expect="6.1 and 6.3")  # fmt: skip
    add("07", "zq004z", "zq004z_control_73_74", replaced("07", {"ex-7-3": sol("07", "ex-7-3"),
        "ex-7-4": sol("07", "ex-7-4")}), kind="control", deserve=["7.3", "7.4"], expect="7.3 and 7.4")  # fmt: skip
    add("04", "zq005z", "zq005z_control_41_42", replaced("04", {"ex-4-1": sol("04", "ex-4-1"),
        "ex-4-2": sol("04", "ex-4-2")}), kind="control", deserve=["4.1", "4.2"], expect="4.1 and 4.2")  # fmt: skip
    add("02", "zq006z", "zq006z_control_21_23_24", replaced("02", {"ex-2-1": sol("02", "ex-2-1"),
        "ex-2-3": sol("02", "ex-2-3"), "ex-2-4": sol("02", "ex-2-4")}), kind="control",
        deserve=["2.1", "2.3", "2.4"], expect="2.1, 2.3, 2.4")  # fmt: skip

    # -- borrowed: torch's own Python for the op, copied out of torch's files at run time (runpy)
    add(
        "07",
        "zq010z",
        "zq010z_onnx_head",
        replaced("07", {"ex-7-3": onnx_head()}),
        kind="borrowed",
        note="Head whose attention is torch/onnx/ops/_impl.py attention_23, copied at run time",
    )
    add("07", "zq011z", "zq011z_onnx_head_honest_mha", replaced("07", {"ex-7-3": onnx_head(),
        "ex-7-4": sol("07", "ex-7-4")}), kind="borrowed", note="7.4 built on the borrowed Head")  # fmt: skip
    add("07", "zq012z", "zq012z_onnx_mha_3d", replaced("07", {"ex-7-3": sol("07", "ex-7-3"),
        "ex-7-4": onnx_mha_3d()}), kind="borrowed", deserve=["7.3"],
        note="7.4: torch's attention splits and merges the heads (3-D input, q_num_heads)")  # fmt: skip
    add(
        "07",
        "zq009z",
        "zq009z_functional_mha",
        replaced("07", {"ex-7-3": sol("07", "ex-7-3"), "ex-7-4": functional_mha()}),
        kind="borrowed",
        deserve=["7.3"],
        note="7.4: torch.nn.functional.multi_head_attention_forward (MultiheadAttention's forward) copied at run time",
    )
    add(
        "06",
        "zq013z",
        "zq013z_onnx_masked_attention",
        replaced("06", {"ex-6-3": onnx_masked_attention()}),
        kind="borrowed",
        note="6.3: masks and softmax and weighted sum by torch's attention_23 (scores @ I)",
    )
    add(
        "06",
        "zq014z",
        "zq014z_onnx_alpha",
        replaced("06", {"ex-6-1": onnx_alpha()}),
        kind="borrowed",
        note="6.1 by attention_23 with is_causal",
    )
    add(
        "05",
        "zq015z",
        "zq015z_onnx_decode",
        replaced("05", {"ex-5-2": onnx_decode()}),
        kind="borrowed",
        note="5.2: each step's attention by attention_23 with the padding mask",
    )
    add(
        "02",
        "zq027z",
        "zq027z_relabel_tanh_backward",
        replaced("02", {"ex-2-4": RELABEL_TANH}),
        kind="borrowed",
        note="2.4: torch/_decomp tanh_backward's code relabelled and rebuilt via copy.copy",
    )
    add(
        "04",
        "zq032z",
        "zq032z_rnnbase_param_count",
        replaced("04", {"ex-4-3": RNNBASE_COUNT}),
        kind="borrowed",
        note="4.3: parameters counted on torch's RNNBase (LSTM's base class), not on the forbidden name",
    )
    add(
        "04",
        "zq025z",
        "zq025z_relabel_gru",
        replaced("04", {"ex-4-2": RELABEL_GRU}),
        kind="borrowed",
        note="4.2: torch/_decomp gru_cell_data's code object relabelled (code.replace) and rebuilt via copy.copy",
    )
    add(
        "07",
        "zq026z",
        "zq026z_relabel_mha",
        replaced("07", {"ex-7-3": sol("07", "ex-7-3"), "ex-7-4": RELABEL_MHA}),
        kind="borrowed",
        deserve=["7.3"],
        note="7.4: F.multi_head_attention_forward's code relabelled, rebuilt via copy.copy",
    )
    add(
        "04",
        "zq016z",
        "zq016z_decomp_gru",
        replaced("04", {"ex-4-2": decomp_gru()}),
        kind="borrowed",
        note="4.2: torch/_decomp gru_cell_data copied at run time",
    )
    add(
        "04",
        "zq017z",
        "zq017z_decomp_lstm",
        replaced("04", {"ex-4-1": decomp_lstm()}),
        kind="borrowed",
        note="4.1: torch/_decomp lstm_cell copied at run time",
    )
    add(
        "02",
        "zq018z",
        "zq018z_sympy_jacobian",
        replaced("02", {"ex-2-1": SYMPY_JACOBIAN}),
        kind="borrowed",
        note="2.1: sympy's Matrix.jacobian differentiates softmax (symbolic autodiff, another library)",
    )
    add(
        "02",
        "zq022z",
        "zq022z_decomp_fflm_grads",
        replaced("02", {"ex-2-2": decomp_fflm()}),
        kind="borrowed",
        note="2.2: _log_softmax_backward_data and tanh_backward from torch/_decomp, copied at run time",
    )
    add(
        "02",
        "zq023z",
        "zq023z_decomp_tanh_backward",
        replaced("02", {"ex-2-4": decomp_bptt_step()}),
        kind="borrowed",
        note="2.4: tanh_backward (a barred gradient kernel) from torch/_decomp, copied at run time",
    )
    add(
        "02",
        "zq020z",
        "zq020z_sgd_functional",
        replaced("02", {"ex-2-3": SGD_FUNCTIONAL}),
        kind="borrowed",
        expect="ambiguous",
        note="2.3: the update by torch.optim.sgd.sgd, the forbidden SGD's functional form",
    )
    add(
        "02",
        "zq021z",
        "zq021z_sgd_fused",
        replaced("02", {"ex-2-3": SGD_FUSED}),
        kind="borrowed",
        expect="ambiguous",
        note="2.3: the update by torch._fused_sgd_, SGD(fused=True)'s kernel",
    )

    # -- regressions of closed classes and the admitted hole
    add(
        "04",
        "zq030z",
        "zq030z_starmap_gru_cell",
        replaced("04", {"ex-4-2": MAP_GRU}),
        kind="regression",
        note="C calling C: itertools.starmap(torch.gru_cell) (class 'map/partial', claimed closed)",
    )
    add(
        "06",
        "zq031z",
        "zq031z_from_file_masked_softmax",
        replaced("06", {"ex-6-3": FROM_FILE_MASKED}),
        kind="admitted",
        expect="admitted (not defended)",
        note="course_lib.attention.masked_softmax's text read by torch.from_file, run by runpy",
    )

    # -- forging, results channel, objects that run code in the check
    add(
        "06",
        "zq040z",
        "zq040z_forge_pipe_finalizer",
        replaced("06", {"ex-6-1": FORGE_PIPE}),
        kind="forge",
        note="lines shaped like the harness's written on every fd, also from finalizers after the call",
    )
    add(
        "06",
        "zq041z",
        "zq041z_untouched_plus_cells",
        replaced("06", {}, added=FORGE_CELLS),
        kind="forge",
        note="untouched answers + cells printing a score, replacing checks in the kernel, an extra alpha",
    )
    add(
        "06",
        "zq042z",
        "zq042z_subclass_return",
        replaced("06", {"ex-6-3": SUBCLASS_RETURN}),
        kind="forge",
        note="a tensor subclass with __torch_function__ returned",
    )
    add(
        "06",
        "zq043z",
        "zq043z_left_torch_function_mode",
        replaced("06", {"ex-6-3": LEFT_MODE}),
        kind="borrowed",
        note="a torch function mode left on after the call, its handler a C callable (sdpa's builtin)",
    )
    dup = notebook("06")
    for c in dup["cells"]:  # the released answer cell's id on a second cell holding a solution, the stub kept
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex-6-1":
            extra = json.loads(json.dumps(c))
            extra["source"] = sol("06", "ex-6-1")
            extra["id"] = "zq044dup"
            dup["cells"].append(extra)
            break
    add(
        "06",
        "zq044z",
        "zq044z_duplicate_answer_id",
        dup,
        kind="forge",
        expect="ambiguous",
        note="a second cell with nbgrader id ex-6-1 (a real solution) appended after the stub",
    )

    add(
        "06",
        "zq060z",
        "zq060z_stress_kernel_honest_61",
        replaced("06", {"ex-6-1": sol("06", "ex-6-1")}, added=STRESS_CELLS),
        kind="stress",
        deserve=["6.1"],
        expect="6.1 only",
        note="3 MB of output and a cell that ignores SIGINT and spins; 6.1 solved honestly",
    )

    # -- the grader's environment and what lies outside the sandbox
    add(
        "06",
        "zq050z",
        "zq050z_secret_answer",
        replaced("06", {"ex-6-1": SECRET_CELL}),
        kind="leak",
        note="answer raising with os.environ, /proc/*/environ and cmdline in its message",
    )
    add(
        "06",
        "zq051z",
        "zq051z_secret_kernel",
        replaced("06", {}, added=[code_cell(SECRET_KERNEL_CELL)]),
        kind="leak",
        note="a notebook cell raising with the kernel's environment and folders in its message",
    )


def row_entries() -> None:
    """Crafted names (all copies of the untouched notebook: 0 marks, one row each)."""
    folder = CLASS / "rows06"
    if folder.exists():
        subprocess_free_rmtree(folder)
    folder.mkdir(parents=True)
    plain = json.dumps(notebook("06"))
    solved = json.dumps(notebook("06", "solutions"))

    def put(name: str, tag: str, data: str = plain, note: str = "", deserve=(), graded=True):
        path = folder / name
        path.write_text(data)
        add("06", tag, "", None, kind="rows", raw=path, folder=folder, deserve=deserve, note=note,
            expect="one row" + ("" if graded else ", not graded"))  # fmt: skip

    put("zq101z_Ünïcødé_名前.ipynb", "zq101z", note="unicode name")
    put("CON.ipynb", "CON", note="a reserved name on Windows")
    put("nul.ipynb", "nul", note="a reserved name (lower case)")
    put("zq103z_" + "a" * 230 + ".ipynb", "zq103z", note="a 243-byte name")
    put("zq104z_Bob.ipynb", "zq104z_Bob", note="case collision (1/2), solved", data=solved, deserve=ALL["06"])
    put("zq104z_bob.ipynb", "zq104z_bob", note="case collision (2/2)")
    put("zq105z o'neil.ipynb", "zq105z o'neil", note="collides with o_neil after renaming (1/2)")
    put("zq105z_o_neil.ipynb", "zq105z_o_neil", note="collides after renaming (2/2)")
    put("zq108z_new\nline.ipynb", "zq108z", note="a line break in the name")
    put("=zq109z_HYPERLINK(1).ipynb", "zq109z", note="a CSV formula")
    put("zq111z_Score 4 of 4 ` [x](http:evil) <b>.ipynb", "zq111z", note="markdown in the name")
    put(".zq114z_hidden.ipynb", "zq114z", note="a hidden file")
    put("zq116z_garbage.ipynb", "zq116z", data="{not json", note="not a notebook", graded=False)
    put("zq117z_feedback.md.ipynb", "zq117z", note="a name ending like a feedback file")
    # not UTF-8
    raw = os.fsencode(str(folder)) + b"/zq110z_\xff\xfe.ipynb"
    with open(raw, "w") as f:
        f.write(plain)
    add(
        "06",
        "zq110z",
        "",
        None,
        kind="rows",
        raw=Path(os.fsdecode(raw)),
        folder=folder,
        note="a name not UTF-8",
        expect="one row",
    )
    # links and special files
    os.symlink(folder / "zq104z_Bob.ipynb", folder / "zq106z_link.ipynb")
    add(
        "06",
        "zq106z",
        "",
        None,
        kind="rows",
        raw=folder / "zq106z_link.ipynb",
        folder=folder,
        note="a symbolic link to another student's solved notebook",
        expect="one row, not graded",
    )
    os.mkfifo(folder / "zq107z_fifo.ipynb")
    add(
        "06",
        "zq107z",
        "",
        None,
        kind="rows",
        raw=folder / "zq107z_fifo.ipynb",
        folder=folder,
        note="a FIFO",
        expect="one row, not graded",
    )
    (folder / "zq112z_dir.ipynb").mkdir()
    add(
        "06",
        "zq112z",
        "",
        None,
        kind="rows",
        raw=folder / "zq112z_dir.ipynb",
        folder=folder,
        note="a folder named like a notebook",
        expect="one row, not graded",
    )
    os.symlink("/etc", folder / "zq113z_dirlink")
    add(
        "06",
        "zq113z",
        "",
        None,
        kind="rows",
        raw=folder / "zq113z_dirlink",
        folder=folder,
        note="a link to a folder (maybe an nbgrader student)",
        expect="one row (or a warning)",
    )
    (folder / "zq118z_big.ipynb").write_bytes(b'{"cells": [], "x": "' + b"a" * 21_000_000 + b'"}')
    add(
        "06",
        "zq118z",
        "",
        None,
        kind="rows",
        raw=folder / "zq118z_big.ipynb",
        folder=folder,
        note="a 21 MB notebook",
        expect="one row, not graded",
    )


def nbgrader_entries() -> None:
    sub = NBG / "submitted"
    if NBG.exists():
        subprocess_free_rmtree(NBG)
    sub.mkdir(parents=True)
    plain = json.dumps(notebook("06"))
    solved = json.dumps(notebook("06", "solutions"))

    def put(rel: str, tag: str, data: str | None = plain, **kw):
        path = sub / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if data is not None:
            path.write_text(data)
        add("06", tag, "", None, kind="rows-nbgrader", raw=path, folder=sub, **kw)

    put(
        "zq201z_alice/ps6/06_masked_attention.ipynb",
        "zq201z",
        solved,
        deserve=ALL["06"],
        note="nbgrader layout, solved (a control)",
        expect="full marks",
    )
    put("zq202z_bob/ps6/a.ipynb", "zq202z", note="two notebooks in one student's folder", expect="one row")
    (sub / "zq202z_bob/ps6/b.ipynb").write_text(solved)
    put("zq203z_carol/ps6/x.ipynb", "zq203z", None, note="the notebook is a link to alice's", expect="one row")
    os.symlink(sub / "zq201z_alice/ps6/06_masked_attention.ipynb", sub / "zq203z_carol/ps6/x.ipynb")
    os.symlink(sub / "zq201z_alice", sub / "zq204z_dave")
    add(
        "06",
        "zq204z",
        "",
        None,
        kind="rows-nbgrader",
        raw=sub / "zq204z_dave",
        folder=sub,
        note="a student folder that is a link to alice's",
        expect="one row, not graded",
    )
    put("zq206z_Ærøskøbing/ps6/n.ipynb", "zq206z", note="unicode student folder", expect="one row")
    put("zq207z_frank/n.ipynb", "zq207z", note="<student>/<notebook> without the assignment level", expect="one row")
    put("zq208z_gina/ps6/n.ipynb", "zq208z_gina", note="case collision of students (1/2)", expect="one row")
    put(
        "zq208z_Gina/ps6/n.ipynb",
        "zq208z_Gina",
        solved,
        deserve=ALL["06"],
        note="case collision of students (2/2), solved",
        expect="full marks",
    )
    put("AUX/ps6/n.ipynb", "AUX", note="a reserved student name", expect="one row")
    put("zq209z_empty/ps6/.ipynb", "zq209z", note="a notebook with no name before .ipynb", expect="one row")


def subprocess_free_rmtree(path: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for name in filenames + dirnames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p) or not os.path.isdir(p):
                os.unlink(p)
            else:
                os.rmdir(p)
    os.rmdir(path)


# Added at 08:23, after the merge of main closed code made at run time (compile, code.replace) during the call: the
# same borrowed torch Python run by a finalizer. The answer cells are kept in late_*.txt beside this file.
LATE = Path(__file__).resolve().parent


def late_entries() -> None:
    """Finalizers: weakref.finalize on an object that dies when the student's function returns; its callback is C
    (collections.deque over itertools.starmap over map), so torch's refused Python (torch/_decomp's gru_cell_data,
    lstm_cell, tanh_backward) runs with the check's frame below it and no frame of the student's, and its result is
    copied into the tensors the function returned, before the check reads them."""
    add(
        "04",
        "zq070z",
        "zq070z_finalizer_decomp_gru",
        replaced("04", {"ex-4-2": (LATE / "late_42.txt").read_text()}),
        kind="borrowed",
        note="4.2: torch/_decomp gru_cell_data run by a finalizer after the function returned (C callables only)",
    )
    add(
        "04",
        "zq071z",
        "zq071z_finalizer_decomp_lstm",
        replaced("04", {"ex-4-1": (LATE / "late_41.txt").read_text()}),
        kind="borrowed",
        note="4.1: torch/_decomp lstm_cell run by finalizers after forward returned, copied in (graph kept)",
    )
    add(
        "02",
        "zq073z",
        "zq073z_finalizer_fflm_grads",
        replaced("02", {"ex-2-2": (LATE / "late_22.txt").read_text()}),
        kind="borrowed",
        note="2.2: every gradient (torch/_decomp log_softmax and tanh backward, the products) by finalizers",
    )
    add(
        "06",
        "zq074z",
        "zq074z_finalizer_safe_softmax",
        replaced("06", {"ex-6-3": (LATE / "late_63.txt").read_text()}),
        kind="borrowed",
        folder=CLASS / "rows06",  # graded with lesson 06 (the 06 folder was already being graded when it was added)
        note="6.3: torch/_decomp safe_softmax (aten::_safe_softmax, barred) and bmm run by finalizers after return",
    )
    add(
        "02",
        "zq072z",
        "zq072z_finalizer_tanh_backward",
        replaced("02", {"ex-2-4": (LATE / "late_24.txt").read_text()}),
        kind="borrowed",
        note="2.4: the whole step (tanh_backward's formula and the products) computed by finalizers after return",
    )


def main() -> int:
    if CLASS.exists():
        subprocess_free_rmtree(CLASS)
    CLASS.mkdir(parents=True)
    planted()
    lesson_entries()
    row_entries()
    nbgrader_entries()
    late_entries()
    (TMP / "manifest.json").write_text(json.dumps(MANIFEST, indent=1, ensure_ascii=True))
    counts: dict = {}
    for m in MANIFEST:
        counts[m["graded_folder"]] = counts.get(m["graded_folder"], 0) + 1
    for k, v in sorted(counts.items()):
        print(f"{v:3d} entries in {k}")
    return 0


def add_late() -> int:
    """Write only the late entries into the existing class (while it is being graded) and add them to the manifest."""
    MANIFEST.clear()
    late_entries()
    manifest = json.loads((TMP / "manifest.json").read_text())
    tags = {m["tag"] for m in manifest}
    manifest += [m for m in MANIFEST if m["tag"] not in tags]
    (TMP / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=True))
    print(f"{len(MANIFEST)} late entries added")
    return 0


if __name__ == "__main__":
    sys.exit(add_late() if sys.argv[1:] == ["--add-late"] else main())
