"""Answer-cell sources of the hostile class 33n (imported by make_class.py). Plain text only: nothing here runs."""

# ------------------------------------------------------------------------------------------------------------------
# "Later": a torch function mode the student's call pushes and leaves on. It hands the check back placeholder
# tensors (the check's _plainify clones them through TensorBase.clone, which the mode answers with the placeholder
# itself, sharing its storage), and fills them in place the first time the check clones anything else once the
# observer is gone (for autograd exercises: once the observer's dispatch mode is off the stack).
LATER = r"""
from torch.overrides import TorchFunctionMode

_LATER = {"held": [], "pending": [], "mode": [], "cloned": [], "errors": []}


def _later_fire():
    depth = torch._C._len_torch_dispatch_stack()
    for job in list(_LATER["pending"]):
        compute, outs, at = job
        if at > 0 and depth >= at:
            continue
        if not all(o.data_ptr() in _LATER["cloned"] for o in outs):
            continue
        _LATER["pending"].remove(job)
        try:
            results = compute()
            for o, r in zip(outs, results):
                o.copy_(r.detach().to(o.dtype).reshape(o.shape))
        except Exception as exc:
            _LATER["errors"].append(repr(exc)[:200])


def _later_install():
    if _LATER["mode"]:
        return

    class _Later(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__name__", "") == "clone" and args and type(args[0]) is torch.Tensor:
                ptr = args[0].data_ptr()
                if ptr and any(ptr == h.data_ptr() for h in _LATER["held"]):
                    if ptr not in _LATER["cloned"]:
                        _LATER["cloned"].append(ptr)
                    return args[0]
            if _LATER["pending"]:
                _later_fire()
            return func(*args, **kwargs)

    mode = _Later()
    mode.__enter__()
    _LATER["mode"].append(mode)


def _later(compute, outs):
    _later_install()
    for o in outs:
        _LATER["held"].append(o)
    _LATER["pending"].append((compute, outs, torch._C._len_torch_dispatch_stack()))
    return outs
"""

# autograd's engine reached C to C (map), recording switched on C to C: no profile event for either
ENGINE = r"""
def _engine_grads(loss_of, tensors):
    was = torch.is_grad_enabled()
    if not was:
        list(map(torch._C._set_grad_enabled, [True]))
    try:
        leaves = []
        for t in tensors:
            leaf = t.detach().clone()
            leaf.requires_grad = True
            leaves.append(leaf)
        loss = loss_of(*leaves)
        engine = getattr(getattr(torch, "auto" + "grad").Variable, "_execution" + "_engine")
        ones = torch.ones_like(loss)
        return list(
            map(engine.run_backward, [(loss,)], [(ones,)], [False], [False], [tuple(leaves)], [True], [False])
        )[0]
    finally:
        if not was:
            list(map(torch._C._set_grad_enabled, [False]))
"""

# the FFLM loss from ops whose backward formulas call no op named *backward* (tanh through exp, log-softmax
# through exp/log/sum, the embedding as a one-hot product)
FFLM_LOSS = r"""
def _fflm_loss(E, W, b, U, c, contexts, targets):
    B, n = contexts.shape
    V, d = E.shape
    onehot = torch.nn.functional.one_hot(contexts.reshape(-1), V).to(E.dtype)
    e = (onehot @ E).reshape(B, n * d)
    a = e @ W.T + b
    h = 1 - 2 / (torch.exp(2 * a) + 1)
    z = h @ U.T + c
    m = z.detach().max(dim=1, keepdim=True).values
    lse = torch.log(torch.exp(z - m).sum(dim=1, keepdim=True)) + m
    picked = torch.nn.functional.one_hot(targets, z.shape[1]).to(z.dtype)
    return -((z - lse) * picked).sum() / B
"""

A = {}

# ---------------------------------------------------------------- lesson 02
A["ex-2-2 later engine"] = (
    "# Exercise 2.2: backprop ninja\nimport torch\n"
    + LATER
    + ENGINE
    + FFLM_LOSS
    + r'''

def fflm_loss_and_grads(params, contexts, targets):
    """Placeholders now; autograd's gradients written into them once the observer is gone."""
    names = ("E", "W", "b", "U", "c")
    values = [params[k] for k in names]
    loss = float(_fflm_loss(*values, contexts, targets))
    outs = [torch.zeros_like(v) for v in values]

    def compute():
        return _engine_grads(lambda *leaves: _fflm_loss(*leaves, contexts, targets), values)

    _later(compute, outs)
    return loss, dict(zip(names, outs))
'''
)

A["ex-2-2 engine in call"] = (
    "# Exercise 2.2: backprop ninja\nimport torch\n"
    + ENGINE
    + FFLM_LOSS
    + r'''

def fflm_loss_and_grads(params, contexts, targets):
    """Autograd's engine by map, recording switched on by map, inside the call."""
    names = ("E", "W", "b", "U", "c")
    values = [params[k] for k in names]
    loss = float(_fflm_loss(*values, contexts, targets))
    grads = _engine_grads(lambda *leaves: _fflm_loss(*leaves, contexts, targets), values)
    return loss, {k: g.detach().clone() for k, g in zip(names, grads)}
'''
)

A["ex-2-1 later engine"] = (
    "# Exercise 2.1: the softmax Jacobian\nimport torch\n"
    + LATER
    + ENGINE
    + r'''

def softmax_jacobian(z):
    """A placeholder now; each row by autograd's engine once the observer is gone."""
    K = z.shape[0]
    out = torch.zeros(K, K, dtype=z.dtype)

    def compute():
        rows = []
        for i in range(K):
            pick = torch.nn.functional.one_hot(torch.tensor(i), K).to(z.dtype)

            def f(leaf, pick=pick):
                y = torch.exp(leaf - leaf.detach().max())
                y = y / y.sum()
                return (y * pick).sum()

            (g,) = _engine_grads(f, [z])
            rows.append(g)
        return [torch.stack(rows)]

    _later(compute, [out])
    return out
'''
)

A["ex-2-1 complex step"] = r'''# Exercise 2.1: the softmax Jacobian
import torch


def softmax_jacobian(z):
    """The complex step: column j is Im(softmax(z + i h e_j)) / h, exact to rounding (the student's arithmetic)."""
    K = z.shape[0]
    h = 1e-20
    zc = z.to(torch.complex128)
    shift = float(z.max())
    cols = []
    for j in range(K):
        bump = torch.zeros(K, dtype=torch.complex128)
        bump[j] = 1j * h
        y = torch.exp(zc + bump - shift)
        y = y / y.sum()
        cols.append(y.imag / h)
    return torch.stack(cols, dim=1).to(z.dtype)
'''

A["ex-2-4 later decomp"] = (
    "# Exercise 2.4: one step of backpropagation through time\nimport torch\n"
    + LATER
    + r'''

def bptt_step(dh, h, h_prev, x, W_hh):
    """Placeholders now; tanh's backward from torch._decomp once the observer is gone."""
    H, D = dh.shape[1], x.shape[1]
    outs = [
        torch.zeros(H, D, dtype=dh.dtype),
        torch.zeros(H, H, dtype=dh.dtype),
        torch.zeros(H, dtype=dh.dtype),
        torch.zeros(h_prev.shape, dtype=dh.dtype),
    ]

    def compute():
        from torch._decomp import decompositions as dd

        da = dd.tanh_backward(dh, h)
        return [da.T @ x, da.T @ h_prev, da.sum(dim=0), da @ W_hh]

    _later(compute, outs)
    return tuple(outs)
'''
)

A["ex-2-5 later engine"] = (
    "# Exercise 2.5: backpropagation through time over a sequence, truncated\nimport torch\n"
    + LATER
    + ENGINE
    + r'''

def bptt_backward(dhs, xs, hs, h0, W_hh, truncate=None):
    """Placeholders now; later, autograd's engine on a surrogate: zero perturbations P (of W_xh), Q (of W_hh), r (of
    b_h) added to the recomputed pre-activations atanh(h_t), the chunks cut by detach; dh_total from the h_t's
    gradients (retained through identity leaves S_t)."""
    T, H, D = hs.shape[0], hs.shape[2], xs.shape[2]
    outs = [torch.zeros(H, D, dtype=hs.dtype), torch.zeros(H, H, dtype=hs.dtype), torch.zeros(H, dtype=hs.dtype),
            torch.zeros_like(hs)]

    def compute():
        def loss(P, Q, r, S):
            total = 0
            prev_true, prev = h0, h0
            for t in range(T):
                if truncate is not None and t > 0 and t % truncate == 0:
                    prev = prev.detach()
                a = torch.atanh(hs[t]).detach() + xs[t] @ P.T + (prev - prev_true.detach()) @ W_hh.T + prev_true @ Q.T + r
                sel = torch.zeros(T, 1, 1, dtype=hs.dtype)
                sel[t] = 1.0
                ht = 1 - 2 / (torch.exp(2 * a) + 1) + (S * sel).sum(0)
                total = total + (dhs[t] * ht).sum()
                prev_true, prev = hs[t], ht
            return total

        zeros = [torch.zeros(H, D, dtype=hs.dtype), torch.zeros(H, H, dtype=hs.dtype), torch.zeros(H, dtype=hs.dtype),
                 torch.zeros_like(hs)]
        gP, gQ, gr, gS = _engine_grads(loss, zeros)
        return [gP, gQ, gr, gS]

    _later(compute, outs)
    return tuple(outs)
'''
)

# ---------------------------------------------------------------- lesson 04
HOLDER = r'''
def _shapes_from(base_name, *args):
    """Build torch's class ``base_name`` on a stand-in for nn.Module (put between it and Module in the MRO), so
    that no method of nn.Module runs; return the parameters its __init__ made."""
    nn_ = getattr(torch, "nn")
    base = getattr(nn_, base_name)
    top = base.__mro__[-2]

    class Holder(top):
        def __init__(self, *a, **k):
            object.__setattr__(self, "_found", [])

        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)
            if type(value).__name__ == "Parameter":
                self._found.append(value)

        def __getattr__(self, name):
            raise AttributeError(name)

        def parameters(self, recurse=True):
            return iter(list(self._found))

        def register_parameter(self, name, value):
            object.__setattr__(self, name, value)

    class Made(base, Holder):
        pass

    return Made(*args)._found
'''

A["ex-4-3 rnnbase"] = (
    "# Exercise 4.3: the parameter count\nimport torch\n"
    + HOLDER
    + r'''

def param_count(kind, input_size, hidden_size, num_layers=1):
    """torch's RNNBase.__init__ (inherited by nn.LSTM and nn.GRU, so not their own code) counts for me."""
    return int(sum(p.numel() for p in _shapes_from("RNN" + "Base", kind.upper(), input_size, hidden_size, num_layers)))
'''
)

A["ex-4-3 cellbase"] = (
    "# Exercise 4.3: the parameter count\nimport torch\n"
    + HOLDER
    + r'''

def param_count(kind, input_size, hidden_size, num_layers=1):
    """torch's RNNCellBase.__init__ (the base of nn.LSTMCell and nn.GRUCell), one layer at a time."""
    chunks = {"lstm": 4, "gru": 3}[kind]
    total = 0
    for layer in range(num_layers):
        found = _shapes_from("RNNCell" + "Base", input_size if layer == 0 else hidden_size, hidden_size, True, chunks)
        total += sum(p.numel() for p in found)
    return int(total)
'''
)

A["ex-4-3 meta lstm"] = r'''# Exercise 4.3: the parameter count
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    """torch's own module on the meta device (no memory), counted."""
    cls = getattr(torch.nn, kind.upper())
    return int(sum(p.numel() for p in cls(input_size, hidden_size, num_layers, device="meta").parameters()))
'''

A["ex-4-2 later decomp"] = (
    "# Exercise 4.2: one GRU step\nimport torch\n"
    + LATER
    + r'''

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """A placeholder now; torch._decomp's gru_cell_data once the observer is gone."""
    out = torch.zeros_like(h)

    def compute():
        from torch._decomp import decompositions as dd

        return [dd.gru_cell_data(x, h, W_xh, b_xh, W_hh, b_hh)]

    _later(compute, [out])
    return out
'''
)

A["ex-4-2 later VF"] = (
    "# Exercise 4.2: one GRU step\nimport torch\n"
    + LATER
    + r'''

def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """A placeholder now; torch's fused kernel (by the _VF name) once the observer is gone."""
    out = torch.zeros_like(h)

    def compute():
        vf = getattr(torch, "_" + "VF")
        return [getattr(vf, "gru" + "_cell")(x, h, W_xh, W_hh, b_xh, b_hh)]

    _later(compute, [out])
    return out
'''
)

A["ex-4-2 honest lerp"] = r'''# Exercise 4.2: one GRU step
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    """Honest and terse: addmm for both projections, r and z from one sigmoid, and lerp for the mix."""
    H = h.shape[1]
    gx = torch.addmm(b_xh, x, W_xh.T)
    gh = torch.addmm(b_hh, h, W_hh.T)
    rz = torch.sigmoid(gx[:, : 2 * H] + gh[:, : 2 * H])
    r, z = rz[:, :H], rz[:, H:]
    n = torch.tanh(gx[:, 2 * H :] + r * gh[:, 2 * H :])
    return torch.lerp(n, h, z)
'''

# ---------------------------------------------------------------- lesson 05
DECODE_HEAD = r"""# Exercise 5.2: the decoder with attention
import math

import torch


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    device = states.device
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)
    hidden = states[torch.arange(B, device=device), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)
"""
DECODE_TAIL = r"""        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c_i], dim=-1))
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))
    return logits, torch.stack(weights, dim=1)
"""

A["ex-5-2 masked softmax"] = (
    DECODE_HEAD
    + r"""        alpha_i = torch.masked.softmax(e_i, -1, mask=real)  # torch's masked softmax: fill and normalise in one call
        c_i = (alpha_i[:, :, None] * states).sum(1)
"""
    + DECODE_TAIL
)

A["ex-5-2 sparse softmax"] = (
    DECODE_HEAD
    + r"""        sp = torch.sparse_coo_tensor(real.nonzero().T, e_i[real], e_i.shape)  # what is not stored counts as -inf
        alpha_i = torch.sparse.softmax(sp, 1).to_dense()
        c_i = (alpha_i[:, :, None] * states).sum(1)
"""
    + DECODE_TAIL
)

A["ex-5-2 mha forward"] = (
    DECODE_HEAD.replace("        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)\n", "")
    + r"""        eye = torch.eye(H, dtype=states.dtype)
        f = getattr(torch.nn.functional, "multi_head_attention" + "_forward")
        kv = states.transpose(0, 1)
        out, w = f(hidden[None], kv, kv, H, 1, torch.cat([eye, eye, eye]), None, None, None, False, 0.0, eye,
                   torch.zeros(H, dtype=states.dtype), training=False, key_padding_mask=~real, need_weights=True)
        c_i, alpha_i = out[0], w[:, 0, :]
"""
    + DECODE_TAIL
)

A["ex-5-1 einsum honest"] = r'''# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """Honest: three einsums."""
    pq = torch.einsum("ad,bd->ba", W_q, query)
    pk = torch.einsum("ak,btk->bta", W_k, keys)
    return torch.einsum("bta,a->bt", torch.tanh(pq[:, None, :] + pk), v)
'''

A["ex-5-1 later course"] = (
    "# Exercise 5.1: additive (Bahdanau) attention scores\nimport torch\n"
    + LATER
    + r'''

def additive_scores(query, keys, W_q, W_k, v):
    """A placeholder now; course_lib's AdditiveScore once the observer is gone."""
    out = torch.zeros(keys.shape[0], keys.shape[1], dtype=keys.dtype)

    def compute():
        import importlib

        mod = importlib.import_module("course_lib." + "seq2seq")
        score = getattr(mod, "Additive" + "Score")(W_q.shape[1], W_k.shape[1], W_q.shape[0])
        with torch.no_grad():
            score.W_q.weight.copy_(W_q)
            score.W_k.weight.copy_(W_k)
            score.v.weight.copy_(v[None])
        return [score(query, keys)]

    _later(compute, [out])
    return out
'''
)

# ---------------------------------------------------------------- lesson 06
A["ex-6-3 masked logsumexp"] = r'''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """The masks by hand; the normaliser by torch.masked.logsumexp (a masked reduction, not on the list)."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    causal = pos[None, :] <= pos[:, None]
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = causal[None] & real[:, None, :]
    lse = torch.masked.logsumexp(scores, -1, keepdim=True, mask=allowed)
    weights = torch.where(allowed, torch.exp(scores - lse), torch.zeros((), dtype=scores.dtype))
    return weights @ values, weights
'''

A["ex-6-3 later torch masks"] = (
    "# Exercise 6.3: masked attention over a padded batch\nimport torch\n"
    + LATER
    + r'''

def masked_attention(scores, values, lengths):
    """Placeholders now; torch's causal mask helper and masked softmax once the observer is gone."""
    B, T, _ = scores.shape
    outs = [torch.zeros(B, T, values.shape[2], dtype=values.dtype), torch.zeros(B, T, T, dtype=scores.dtype)]

    def compute():
        tr = getattr(getattr(torch.nn, "modules"), "trans" + "former")
        causal = getattr(tr, "_generate_square" + "_subsequent_mask")(T) == 0
        real = torch.arange(T)[None, :] < lengths[:, None]
        allowed = causal[None] & real[:, None, :]
        w = getattr(torch.masked, "soft" + "max")(scores, -1, mask=allowed)
        w = torch.where(allowed.any(-1, keepdim=True), torch.nan_to_num(w, nan=0.0), torch.zeros((), dtype=w.dtype))
        return [w @ values, w]

    _later(compute, outs)
    return tuple(outs)
'''
)

A["ex-6-1 leak env"] = r'''# Exercise 6.1: the quiz for any score matrix
import os


def alpha(scores, i, j):
    """Not an answer: whatever of the instructor the sandbox shows, carried out in an exception message."""
    found = []
    for k, v in os.environ.items():
        found.append(f"{k}={v}")
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline", "/proc/self/mountinfo"):
        try:
            with open(path, "rb") as f:
                found.append(path + ":" + f.read(3000).decode("latin-1").replace("\x00", " "))
        except Exception as exc:
            found.append(path + ": " + type(exc).__name__)
    for d in ("/", "/home", "/tmp", "/opt", os.getcwd()):
        try:
            found.append(d + ":" + ",".join(sorted(os.listdir(d))[:40]))
        except Exception as exc:
            found.append(d + ": " + type(exc).__name__)
    raise RuntimeError(" | ".join(found)[:290])
'''

# ---------------------------------------------------------------- lesson 07
HEAD_INIT = r"""# Exercise 7.3: one head of self-attention
import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))
"""

A["ex-7-3 mha forward"] = (
    HEAD_INIT
    + r'''
    def forward(self, x):
        """torch's functional multi-head attention (one head, identity projections, need_weights: no fused kernel)."""
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        hs = q.shape[-1]
        eye = torch.eye(hs, dtype=x.dtype)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        f = getattr(torch.nn.functional, "multi_head_attention" + "_forward")
        out, _ = f(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), hs, 1, torch.cat([eye, eye, eye]), None,
                   None, None, False, 0.0, eye, torch.zeros(hs, dtype=x.dtype), training=False, need_weights=True,
                   attn_mask=mask)
        return out.transpose(0, 1)
'''
)

A["ex-7-3 later sdpa"] = (
    "# Exercise 7.3: one head of self-attention\nimport math\n\nimport torch\nfrom torch import nn\n"
    + LATER
    + HEAD_INIT.split("from torch import nn\n", 1)[1]
    + r'''
    def forward(self, x):
        """A placeholder now; torch's fused attention once the observer is gone."""
        q, k, v = self.query(x), self.key(x), self.value(x)
        out = torch.zeros(v.shape, dtype=v.dtype)

        def compute():
            f = getattr(torch.nn.functional, "scaled_dot_product" + "_attention")
            return [f(q.detach(), k.detach(), v.detach(), is_causal=True)]

        _later(compute, [out])
        return out
'''
)

A["ex-7-3 masked softmax honest"] = (
    HEAD_INIT
    + r'''
    def forward(self, x):
        """Honest: the student's own tril mask, torch.masked.softmax to normalise over what it keeps."""
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        weights = torch.masked.softmax(scores, -1, mask=self.tril[:T, :T])
        return weights @ v
'''
)

A["ex-7-5 te ff block"] = r'''# Exercise 7.5: the feed-forward layer
class FeedForward(nn.Module):
    """torch's TransformerEncoderLayer._ff_block, run on this module's own layers."""

    def __init__(self, d_model):
        super().__init__()
        self.linear1 = nn.Linear(d_model, 4 * d_model)
        self.linear2 = nn.Linear(4 * d_model, d_model)
        self.activation = nn.ReLU()
        self.dropout = nn.Identity()
        self.dropout2 = nn.Identity()

    def forward(self, x):
        layer = getattr(nn, "TransformerEncoder" + "Layer")
        return getattr(layer, "_ff" + "_block")(self, x)
'''

A["ex-7-9 honest sort"] = r'''# Exercise 7.9: top-k sampling
import torch


def top_k_probs(logits, k, temperature=1.0):
    """Honest: sort, keep the first k, scatter the softmax back."""
    z = logits / temperature
    values, order = torch.sort(z, descending=True)
    kept = torch.softmax(values[:k], dim=-1)
    out = torch.zeros_like(z)
    out[order[:k]] = kept
    return out
'''

A["ex-7-4 later course mha"] = (
    "# Exercise 7.4: multi-head attention\n"
    + LATER
    + r'''

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        """A placeholder now; the heads and W^O computed by the heads once the observer is gone, through torch's
        own MultiheadAttention with these weights copied in."""
        out = torch.zeros(x.shape, dtype=x.dtype)
        heads = [(h.query.weight.detach(), h.key.weight.detach(), h.value.weight.detach()) for h in self.heads]
        W_o, b_o = self.proj.weight.detach(), self.proj.bias.detach()

        def compute():
            C = x.shape[-1]
            mha = getattr(nn, "Multihead" + "Attention")(C, len(heads), batch_first=True, dtype=x.dtype)
            with torch.no_grad():
                mha.in_proj_weight.copy_(torch.cat([torch.cat([h[0] for h in heads]), torch.cat([h[1] for h in heads]),
                                                    torch.cat([h[2] for h in heads])]))
                mha.in_proj_bias.zero_()
                mha.out_proj.weight.copy_(W_o)
                mha.out_proj.bias.copy_(b_o)
                T = x.shape[1]
                mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
                return [mha(x, x, x, attn_mask=mask, need_weights=False)[0]]

        _later(compute, [out])
        return out
'''
)

A["ex-7-1 later course"] = (
    "# Exercise 7.1: sinusoidal position encodings\nimport torch\n"
    + LATER
    + r"""

def positional_encoding(T, d):
    # a placeholder now; course_lib's sinusoidal_positions once the observer is gone
    out = torch.zeros(T, d)

    def compute():
        import importlib

        mod = importlib.import_module("course_lib." + "transformer")
        return [getattr(mod, "sinusoidal" + "_positions")(T, d)]

    _later(compute, [out])
    return out
"""
)

# ---------------------------------------------------------------- torch.onnx.ops.attention: torch's own ONNX attention
# (a custom op onnx::Attention.opset23 whose Python kernel computes softmax(QK^T * scale + mask) V; with
# qk_matmul_output_mode=3 it takes its manual path, no fused kernel, and also returns the weights)
A["ex-6-3 onnx attention"] = r'''# Exercise 6.3: masked attention over a padded batch
import torch
import torch.onnx.ops


def masked_attention(scores, values, lengths):
    """The masks by hand; the masked softmax and the weighted sum by torch.onnx.ops.attention (keys = identity, scale 1:
    Q K^T is the scores)."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    causal = pos[None, :] <= pos[:, None]
    real = pos[None, :] < lengths[:, None].to(scores.device)
    allowed = causal[None] & real[:, None, :]
    eye = torch.eye(T, dtype=scores.dtype).expand(B, 1, T, T)
    ops = getattr(torch.onnx, "ops")
    out, _, _, w = ops.attention(scores[:, None], eye, values[:, None], attn_mask=allowed[:, None], scale=1.0,
                                 qk_matmul_output_mode=3)
    return torch.nan_to_num(out[:, 0], nan=0.0), torch.nan_to_num(w[:, 0], nan=0.0)
'''

A["ex-6-1 onnx attention"] = r'''# Exercise 6.1: the quiz for any score matrix
import torch
import torch.onnx.ops


def alpha(scores, i, j):
    """torch.onnx.ops.attention with is_causal, keys = identity and scale 1: its weights are the masked softmax."""
    n = scores.shape[0]
    eye = torch.eye(n, dtype=scores.dtype)[None, None]
    ops = getattr(torch.onnx, "ops")
    _, _, _, w = ops.attention(scores[None, None], eye, eye, is_causal=True, scale=1.0, qk_matmul_output_mode=3)
    return w[0, 0, i - 1, j - 1].item()
'''

A["ex-7-3 onnx attention"] = (
    HEAD_INIT.replace("import torch\n", "import torch\nimport torch.onnx.ops\n", 1)
    + r'''
    def forward(self, x):
        """torch.onnx.ops.attention, causal, one head (its manual path: no fused kernel)."""
        q, k, v = self.query(x), self.key(x), self.value(x)
        ops = getattr(torch.onnx, "ops")
        return ops.attention(q[:, None], k[:, None], v[:, None], is_causal=True, qk_matmul_output_mode=3)[0][:, 0]
'''
)

A["ex-7-4 onnx attention"] = r'''# Exercise 7.4: multi-head attention
import torch.onnx.ops


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        """The heads' projections side by side, then torch.onnx.ops.attention with q_num_heads = n_heads (3-D input:
        it splits and merges the heads itself), then W^O."""
        q = torch.cat([h.query(x) for h in self.heads], dim=-1)
        k = torch.cat([h.key(x) for h in self.heads], dim=-1)
        v = torch.cat([h.value(x) for h in self.heads], dim=-1)
        H = len(self.heads)
        ops = getattr(torch.onnx, "ops")
        out = ops.attention(q, k, v, is_causal=True, q_num_heads=H, kv_num_heads=H, qk_matmul_output_mode=3)[0]
        return self.proj(out)
'''

# ---------------------------------------------------------------- wave 2: torch.masked's reductions beside the
# refused torch.masked.softmax / log_softmax / softmin
A["ex-6-3 masked amax sum"] = r'''# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """The masks by hand; the normalisation by torch.masked.amax and torch.masked.sum (masked reductions)."""
    B, T, _ = scores.shape
    pos = torch.arange(T, device=scores.device)
    allowed = (pos[None, :] <= pos[:, None])[None] & (pos[None, :] < lengths[:, None].to(scores.device))[:, None, :]
    top = torch.masked.amax(scores, -1, keepdim=True, mask=allowed)
    top = torch.where(torch.isfinite(top), top, torch.zeros((), dtype=scores.dtype))
    num = torch.where(allowed, torch.exp(scores - top), torch.zeros((), dtype=scores.dtype))
    den = torch.masked.sum(num, -1, keepdim=True, mask=allowed)
    weights = torch.where(den > 0, num / torch.where(den > 0, den, torch.ones((), dtype=den.dtype)), 0.0)
    return weights @ values, weights
'''

A["ex-6-1 masked logsumexp"] = r'''# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """torch.masked.logsumexp over the causal mask: the masked log-softmax in two calls."""
    n = scores.shape[0]
    keep = torch.ones(n, n, dtype=torch.bool).tril()
    lse = torch.masked.logsumexp(scores, -1, keepdim=True, mask=keep)
    return float(torch.exp(scores[i - 1, j - 1] - lse[i - 1, 0])) if keep[i - 1, j - 1] else 0.0
'''
