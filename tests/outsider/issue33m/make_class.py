"""Hostile class 33m: writes /tmp/hostile33m/class/<lesson>/<student>.ipynb and manifest.json.

Each submission is the released exercise notebook with the solutions' answers filled in, except for the attack
(one answer cell replaced, or cells added, or a file name). `deserves` lists the exercises the submission
deserves to pass: every solved exercise, plus an attacked one only when the attack is the student's own honest
(if clever) code. Run: python tests/outsider/issue33m/make_class.py [--root CLONE] [--out /tmp/hostile33m]
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import textwrap
import unicodedata
from pathlib import Path

LESSONS = {
    "02": "02_backprop",
    "03": "03_parentheses",
    "04": "04_lstm_gru",
    "05": "05_attention",
    "06": "06_masked_attention",
    "07": "07_transformer",
}

MANIFEST: list[dict] = []


def gid(cell):
    meta = cell.get("metadata") or {}
    return (meta.get("nbgrader") or {}).get("grade_id")


def load(root: Path, lesson: str):
    name = LESSONS[lesson]
    ex = json.loads((root / "exercises" / f"{name}.ipynb").read_text())
    sol = json.loads((root / "solutions" / f"{name}.ipynb").read_text())
    answers = {gid(c): "".join(c["source"]) for c in sol["cells"] if (gid(c) or "").startswith("ex-")}
    exercises = [
        gid(c)[3:].replace("-", ".")
        for c in ex["cells"]
        if c["cell_type"] == "code" and (gid(c) or "").startswith("ex-")
    ]
    return ex, answers, exercises


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def notebook(root, lesson, *, override=None, solved=None, extra=None, slim=True, untouched=False):
    """The exercise notebook; answer cells from the solutions (those in ``solved``, default all) except
    ``override`` {ex-id: source}; ``extra``: cells appended (dicts); ``slim``: drop the experiment's code cells
    (no grade id, not the setup cell) to keep the kernel run short (the grade never reads them)."""
    ex, answers, exercises = load(root, lesson)
    nb = copy.deepcopy(ex)
    override = override or {}
    cells = []
    first_code = True
    for cell in nb["cells"]:
        g = gid(cell)
        if cell["cell_type"] == "code" and g is None:
            if first_code:
                first_code = False
                cells.append(cell)
                continue
            if slim:
                continue
        if cell["cell_type"] == "code" and g and g.startswith("ex-"):
            first_code = False
            number = g[3:].replace("-", ".")
            if g in override:
                cell["source"] = override[g]
            elif not untouched and (solved is None or number in solved):
                cell["source"] = answers[g]
        cells.append(cell)
    for i, e in enumerate(extra or []):
        cell = {
            "cell_type": "code",
            "execution_count": None,
            "id": f"h33m{i:04d}",
            "metadata": e.get("metadata", {}),
            "outputs": [],
            "source": e["source"],
        }
        if e.get("after") is not None:
            idx = next(k for k, c in enumerate(cells) if gid(c) == e["after"]) + 1
            cells.insert(idx, cell)
        else:
            cells.append(cell)
    nb["cells"] = cells
    return nb, exercises


def add(
    out: Path,
    lesson: str,
    student: str,
    intent: str,
    deserves,
    nb=None,
    *,
    folder=None,
    raw: bytes | None = None,
    expect_row=True,
    path=None,
):
    folder = folder or lesson
    target = Path(path) if path else out / "class" / folder / f"{student}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        target.write_bytes(raw)
    else:
        target.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    MANIFEST.append(
        {
            "lesson": lesson,
            "folder": folder,
            "student": student,
            "file": str(target),
            "intent": intent,
            "deserves": sorted(deserves),
            "expect_row": expect_row,
        }
    )


# --------------------------------------------------------------------------------------------- the attacks

GRU_RICHARDSON = 'import torch\n\n\ndef gru_step(x, h, W_xh, W_hh, b_xh, b_hh):\n    q = getattr(torch.ops, "quant" + "ized")\n    cell = getattr(q, "quantized_" + "gru" + "_cell_dynamic")\n    pack = q.linear_prepack_fp16\n    f = torch.float32\n    x, h, W_xh, W_hh, b_xh, b_hh = (t.to(f) for t in (x, h, W_xh, W_hh, b_xh, b_hh))\n    H = h.shape[1]\n    rz, n = slice(0, 2 * H), slice(2 * H, 3 * H)\n\n    def split(W):\n        hi = W.half().float()\n        return hi, (W - hi).half().float()\n\n    ax, lx = split(W_xh)\n    ah, lh = split(W_hh)\n    zero = torch.zeros_like\n    # r and z: every linear term on the input side, split hi + lo (near exact in fp16)\n    Wi = torch.cat([torch.cat([ax[rz], lx[rz], ah[rz], lh[rz]], 1), torch.cat([ax[n], lx[n], zero(ah[n]), zero(lh[n])], 1)])\n    bi = torch.cat([b_xh[rz] + b_hh[rz], b_xh[n]])\n    xin = torch.cat([x, x, h, h], 1)\n    pi = pack(Wi, bi)\n    Wn = W_hh[n]\n    Wa = Wn.half()\n    away = torch.where(Wn >= Wa.float(), torch.full_like(Wn, 60000.0), torch.full_like(Wn, -60000.0)).half()\n    Wb = torch.nextafter(Wa, away)  # the fp16 neighbour on the other side of Wn\n    outs, deltas = [], []\n    for Wq in (Wa, Wb):\n        Wq = Wq.float()\n        ph = pack(torch.cat([zero(W_hh[rz]), Wq]), torch.cat([zero(b_hh[rz]), b_hh[n]]))\n        outs.append(cell(xin, h, pi, ph, bi, b_hh))\n        deltas.append(h @ (Wq - Wn).T)  # the error fp16 put in W_hn h, known exactly\n    (ha, hb), (da, db) = outs, deltas\n    step = db - da\n    safe = step.abs() > 0\n    slope = torch.where(safe, (hb - ha) / torch.where(safe, step, torch.ones_like(step)), torch.zeros_like(step))\n    return ha - slope * da\n'


LEAK_FN = '''
def _hunt():
    """Anything that looks like the instructor's secret, from every environment this process can read."""
    import os
    found = []
    for k, v in os.environ.items():
        if "HOSTILE33M" in k or "HOSTILE33M" in v:
            found.append(f"{k}={v}")
    for pid in ["self", "1", "2", "3", str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()][:64]:
        for leaf in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{leaf}", "rb") as f:
                    data = f.read()
            except Exception:
                continue
            if b"HOSTILE33M" in data:
                found.append(f"/proc/{pid}/{leaf}: " + data.decode("latin-1").replace("\\x00", " ")[:300])
    for path in ("/tmp/hostile33m/cwd/secrets.py", "/work/wt/hostile33m/tests/outsider/issue33m/run_class.sh"):
        try:
            with open(path) as f:
                text = f.read()
            if "HOSTILE33M" in text:
                found.append(path + ": " + text[:200])
        except Exception:
            pass
    return found
'''


def attacks_06(root, out):
    L = "06"
    _, _, ex = load(root, L)
    everything = set(ex)
    # the three honest controls (full notebook, every cell kept)
    add(out, L, "ctl_full", "control: every exercise solved", everything, notebook(root, L, slim=False)[0])
    add(
        out,
        L,
        "ctl_none",
        "control: the exercise notebook untouched",
        set(),
        notebook(root, L, slim=False, untouched=True)[0],
    )
    add(
        out,
        L,
        "ctl_half",
        "control: 6.1 and 6.2 solved, 6.3 and 6.4 left as stubs",
        {"6.1", "6.2"},
        notebook(root, L, slim=False, solved={"6.1", "6.2"})[0],
    )
    ex_nb, answers, _ = load(root, L)

    # untouched notebook with the solutions added as plain cells (no nbgrader id): 0
    extra = [{"source": answers[g]} for g in sorted(answers)]
    add(
        out,
        L,
        "added_plain_cells",
        "untouched answer cells; the solutions added as extra cells without nbgrader ids",
        set(),
        notebook(root, L, untouched=True, extra=extra)[0],
    )
    # the solution in an added cell that carries the answer's id (after the stub): the student's own answer, deserves
    extra = [
        {
            "source": answers["ex-6-3"],
            "metadata": {
                "nbgrader": {
                    "grade_id": "ex-6-3",
                    "solution": True,
                    "grade": False,
                    "locked": False,
                    "schema_version": 3,
                }
            },
            "after": "check-6-3",
        }
    ]
    add(
        out,
        L,
        "dup_answer_id",
        "6.3 stub kept, its answer in an added cell carrying id ex-6-3 (honest: the student's own answer)",
        {"6.3"},
        notebook(root, L, untouched=True, extra=extra)[0],
    )
    # the answer in a cell claiming a check cell's id: the grader puts the released check back
    extra = [
        {
            "source": answers["ex-6-1"] + "\nresult = checks.check_alpha(alpha)\n",
            "metadata": {
                "nbgrader": {
                    "grade_id": "check-6-1",
                    "grade": True,
                    "locked": True,
                    "points": 1,
                    "solution": False,
                    "schema_version": 3,
                }
            },
        }
    ]
    add(
        out,
        L,
        "answer_in_check_id",
        "untouched; the 6.1 answer placed in a cell claiming id check-6-1",
        set(),
        notebook(root, L, untouched=True, extra=extra)[0],
    )

    base6 = "import torch\nimport functools\nimport itertools\n\n"
    masks = """
def _allowed(scores, lengths):
    B, T, _ = scores.shape
    pos = torch.arange(T)
    causal = pos[None, :] <= pos[:, None]
    real = pos[None, :] < lengths[:, None]
    return causal[None] & real[:, None, :]
"""
    v = {}
    v["sparse_softmax_map"] = (
        "6.3: the masked softmax by torch.sparse.softmax of a sparse tensor holding only the allowed scores, called through map (C calling C)",
        base6
        + masks
        + """
def masked_attention(scores, values, lengths):
    allowed = _allowed(scores, lengths)
    idx = allowed.nonzero().T
    sp = torch.sparse_coo_tensor(idx, scores[allowed], scores.shape)
    (w,) = list(map(torch.sparse.softmax, [sp], [-1]))
    w = w.to_dense()
    return w @ values, w
""",
    )
    v["sdpa_map"] = (
        "6.3: masks written by hand, the attention by F.scaled_dot_product_attention reached through map with the scores as queries and an identity as keys",
        base6
        + masks
        + """
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, _ = scores.shape
    allowed = _allowed(scores, lengths)
    eye = torch.eye(T, dtype=scores.dtype).expand(B, T, T)
    (out,) = list(map(functools.partial(F.scaled_dot_product_attention, scale=1.0), [scores], [eye], [values], [allowed]))
    (w,) = list(map(functools.partial(F.scaled_dot_product_attention, scale=1.0), [scores], [eye], [torch.eye(T, dtype=scores.dtype).expand(B, T, T).contiguous()], [allowed]))
    return torch.nan_to_num(out), torch.nan_to_num(w)
""",
    )
    v["maskedtensor_softmax"] = (
        "6.3: torch.masked.MaskedTensor's softmax does the masking (a ready-made masked softmax)",
        base6
        + masks
        + """
def masked_attention(scores, values, lengths):
    from torch.masked import masked_tensor
    allowed = _allowed(scores, lengths)
    mt = masked_tensor(scores.clone(), allowed)
    w = mt.softmax(-1).get_data().masked_fill(~allowed, 0.0)
    return w @ values, w
""",
    )
    v["mha_forward_fn"] = (
        "6.3: F.multi_head_attention_forward (need_weights=True: bmm + softmax, no fused kernel) with identity projections, scores as queries",
        base6
        + masks
        + """
import torch.nn.functional as F


def masked_attention(scores, values, lengths):
    B, T, d = values.shape
    allowed = _allowed(scores, lengths)
    outs, ws = [], []
    for b in range(B):
        q = scores[b].unsqueeze(1) * T ** 0.5  # (T, 1, T): embed dim T, MHA divides by sqrt(T)
        k = torch.eye(T, dtype=scores.dtype).unsqueeze(1)
        vv = torch.zeros(T, 1, T, dtype=scores.dtype)
        vv[:, 0, :d] = values[b] if d <= T else values[b][:, :T]
        W = torch.eye(T, dtype=scores.dtype).repeat(3, 1)
        mask = (~allowed[b]).float().masked_fill(~allowed[b], float("-inf"))
        o, w = F.multi_head_attention_forward(q, k, vv, T, 1, W, None, None, None, False, 0.0,
                                              torch.eye(T, dtype=scores.dtype), None, need_weights=True,
                                              attn_mask=mask)
        outs.append(w[0] @ values[b])
        ws.append(w[0])
    w = torch.nan_to_num(torch.stack(ws))
    return w @ values, w
""",
    )
    v["finalizer_masked_softmax"] = (
        "6.3: returns zeros; a weakref.finalize (a functools.partial, all C) on the input copy fills the weights in place with course_lib.attention.masked_softmax after the student's function returned",
        base6
        + masks
        + """
import weakref

from course_lib import attention


def _fill(w, out, scores, allowed, values):
    w.copy_(torch.nan_to_num(attention.masked_softmax(scores, allowed)))
    out.copy_(w @ values)


def masked_attention(scores, values, lengths):
    allowed = _allowed(scores, lengths)
    w = torch.zeros_like(scores)
    out = torch.zeros(values.shape, dtype=values.dtype)
    weakref.finalize(scores, functools.partial(_fill, w, out, scores.detach().clone(), allowed, values.detach().clone()))
    return out, w
""",
    )
    v["finalizer_masked_kernel"] = (
        "6.3: the same, the finalizer calls torch._masked_softmax (a fused masked-softmax kernel) by map from C",
        base6
        + masks
        + """
import weakref


def masked_attention(scores, values, lengths):
    allowed = _allowed(scores, lengths)
    w = torch.zeros_like(scores)
    out = torch.zeros(values.shape, dtype=values.dtype)
    s, vals = scores.detach().clone(), values.detach().clone()
    job = functools.partial(map, torch._masked_softmax, [s], [~allowed], [-1], [0])
    weakref.finalize(scores, functools.partial(map, w.copy_, map(torch.nan_to_num, job())))
    weakref.finalize(values, functools.partial(map, out.copy_, [w @ vals]))
    return out, w
""",
    )
    v["forge_reply_fds"] = (
        "6.3: writes forged grader replies (records that pass) on every open descriptor, then raises",
        base6
        + """
def masked_attention(scores, values, lengths):
    import os
    line = b'{"reply": {"records": []}, "exercise": "6.3", "token": "x"}\\n'
    for fd in range(0, 64):
        try:
            os.write(fd, line)
        except OSError:
            pass
    raise RuntimeError("forged")
""",
    )
    v["forge_then_exit"] = (
        "6.3: writes a forged reply on every descriptor, then os._exit(0)",
        base6
        + """
def masked_attention(scores, values, lengths):
    import os
    line = b'{"reply": {"records": [{"returned": null}]}, "token": "0", "passed": true}\\n'
    for fd in range(0, 64):
        try:
            os.write(fd, line)
        except OSError:
            pass
    os._exit(0)
""",
    )
    for name, (intent, source) in v.items():
        add(out, L, name, intent, everything - {"6.3"}, notebook(root, L, override={"ex-6-3": source})[0])

    # the secret: looked for in the answers' process (6.1's function raises with what it found) and the kernel
    leak_alpha = (
        "import torch\n"
        + LEAK_FN
        + """

def alpha(scores, i, j):
    found = _hunt()
    if found:
        raise ValueError("LEAK " + " | ".join(found))
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return weights[i - 1, j - 1].item()
"""
    )
    extra = [
        {
            "source": LEAK_FN
            + "\nfound = _hunt()\nprint(found)\nif found:\n    raise ValueError('LEAK ' + ' | '.join(found))\n"
        }
    ]
    add(
        out,
        L,
        "secret_hunt",
        "looks for HOSTILE33M_SECRET in os.environ, /proc/*/environ, the grader's files; raises it (kernel cell and 6.1's function)",
        everything,
        notebook(root, L, override={"ex-6-1": leak_alpha}, extra=extra)[0],
    )


def attacks_02(root, out):
    L = "02"
    _, _, ex = load(root, L)
    everything = set(ex)
    v = {}
    v["complex_step"] = (
        "2.1",
        True,
        "2.1 by the complex step (the student's own arithmetic on complex logits; honest, numerical, the threat model lets it pass)",
        """
import torch


def softmax_jacobian(z):
    K = z.shape[0]
    h = 1e-30
    zc = z.to(torch.complex128)
    cols = []
    for j in range(K):
        p = zc.clone()
        p[j] = p[j] + 1j * h
        e = torch.exp(p - z.max())
        y = e / e.sum()
        cols.append(y.imag / h)
    return torch.stack(cols, dim=1).to(z.dtype)
""",
    )
    v["sympy_diff"] = (
        "2.1",
        False,
        "2.1 by sympy's symbolic differentiation (a library differentiates for the student), evaluated with subs/evalf, no code compiled",
        """
import torch


def softmax_jacobian(z):
    import sympy
    K = z.shape[0]
    zs = sympy.symbols(f"z0:{K}")
    m = float(z.max())
    es = [sympy.exp(s) for s in zs]
    total = sum(es)
    ys = [e / total for e in es]
    point = {s: float(v) - m for s, v in zip(zs, z.tolist())}
    J = [[float(sympy.diff(ys[i], zs[j]).subs(point).evalf(30)) for j in range(K)] for i in range(K)]
    return torch.tensor(J, dtype=z.dtype)
""",
    )
    v["jacrev_map"] = (
        "2.1",
        False,
        "2.1 by torch.func.jacrev(torch.softmax) reached through map (C calling C)",
        """
import functools

import torch


def softmax_jacobian(z):
    f = functools.partial(torch.softmax, dim=0)
    (J,) = list(map(torch.func.jacrev(f), [z]))
    return J
""",
    )
    v["vjp_reduce"] = (
        "2.4",
        False,
        "2.4 by torch.func.vjp of the step, applied through functools.reduce / map (C)",
        """
import functools

import torch


def bptt_step(dh, h, h_prev, x, W_hh):
    da = dh * (1 - h ** 2)
    # the weights' gradients by autograd: a = x W_xh^T + h_prev W_hh^T + b
    H, D = h.shape[1], x.shape[1]
    W_xh0 = torch.zeros(H, D, dtype=h.dtype)
    b0 = torch.zeros(H, dtype=h.dtype)
    lin = lambda Wx, Wh, b, hp: x @ Wx.T + hp @ Wh.T + b
    _, back = torch.func.vjp(lin, W_xh0, W_hh, b0, h_prev)
    (grads,) = list(map(back, [da]))
    return grads[0], grads[1], grads[2], grads[3]
""",
    )
    v["finalizer_autograd"] = (
        "2.4",
        False,
        "2.4 returns zeros; a weakref.finalize on the input copy (a partial: C) runs torch.autograd.functional.vjp after return and fills them in place",
        """
import functools
import weakref

import torch


def _fill(outs, dh, h, h_prev, x, W_hh):
    H, D = h.shape[1], x.shape[1]
    def f(Wx, Wh, b, hp):
        return torch.tanh(x @ Wx.T + hp @ Wh.T + b)
    # a W_xh that reproduces h is not known; use the pre-activation's inverse
    a = torch.atanh(h.clamp(-0.999999, 0.999999))
    lin = lambda Wx, Wh, b, hp: torch.tanh(x @ Wx.T + hp @ Wh.T + b + (a - x @ Wx.T - hp @ Wh.T - b).detach())
    _, g = torch.autograd.functional.vjp(lin, (torch.zeros(H, D, dtype=h.dtype), W_hh, torch.zeros(H, dtype=h.dtype), h_prev), dh)
    for o, v in zip(outs, g):
        o.copy_(v)


def bptt_step(dh, h, h_prev, x, W_hh):
    H, D = h.shape[1], x.shape[1]
    outs = (torch.zeros(H, D, dtype=h.dtype), torch.zeros(H, H, dtype=h.dtype), torch.zeros(H, dtype=h.dtype), torch.zeros_like(h_prev))
    weakref.finalize(dh, functools.partial(_fill, outs, dh.clone(), h.clone(), h_prev.clone(), x.clone(), W_hh.clone()))
    return outs
""",
    )
    v["functional_sgd"] = (
        "2.3",
        False,
        "2.3: the update by torch.distributed.optim's _FunctionalSGD (another class than torch.optim.SGD, same update)",
        """
def train_sgd(params, batches, lr, loss_and_grads):
    from torch.distributed.optim.functional_sgd import _FunctionalSGD
    names = list(params)
    opt = _FunctionalSGD([params[n] for n in names], lr=lr, _allow_empty_param_list=True)
    losses = []
    for contexts, targets in batches:
        loss, grads = loss_and_grads(params, contexts, targets)
        opt.step([grads[n] for n in names])
        losses.append(float(loss))
    return losses
""",
    )
    for name, (target, honest, intent, source) in v.items():
        g = "ex-" + target.replace(".", "-")
        add(
            out,
            L,
            name,
            intent,
            everything if honest else everything - {target},
            notebook(root, L, override={g: src(source)})[0],
        )


def attacks_03(root, out):
    L = "03"
    _, _, ex = load(root, L)
    everything = set(ex)
    v = {}
    v["elman_rnn_tanh_map"] = (
        "3.3",
        "3.3: the recurrence by torch's fused rnn_tanh... here relu: torch._VF.rnn_relu through map",
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
        T, B, _ = x.shape
        h = x.new_zeros(1, B, self.hidden_size) if h0 is None else h0[None]
        zero = torch.zeros_like(self.b_h)
        params = [self.W_xh, self.W_hh, self.b_h, zero]
        (res,) = list(map(torch._VF.rnn_relu, [x], [h], [params], [True], [1], [0.0], [False], [False], [False]))
        out, hn = res
        return out, hn[0]
""",
    )
    v["elman_quantized_cell"] = (
        "3.3",
        "3.3: quantized::quantized_rnn_relu_cell_dynamic (a non-aten RNN kernel) with fp16-packed weights",
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
        T, B, _ = x.shape
        h = x.new_zeros(B, self.hidden_size) if h0 is None else h0
        q = torch.ops.quantized
        pi = q.linear_prepack_fp16(self.W_xh.detach().float(), self.b_h.detach().float())
        ph = q.linear_prepack_fp16(self.W_hh.detach().float(), torch.zeros_like(self.b_h).float())
        outs = []
        for t in range(T):
            h = q.quantized_rnn_relu_cell_dynamic(x[t].float(), h.float(), pi, ph, self.b_h.detach().float(), torch.zeros_like(self.b_h).float()).to(x.dtype)
            outs.append(h)
        return torch.stack(outs), h
""",
    )
    v["train_epoch_fit"] = (
        "3.4",
        "3.4: course_lib.train's loop reached through a functools.partial called by map",
        """
import functools

import torch.nn.functional as F


def train_epoch(model, batches, optimizer):
    from course_lib import train
    step = getattr(train, "train_step", None) or getattr(train, "fit")
    losses = []
    for tokens, lengths, labels in batches:
        def closure(tokens=tokens, lengths=lengths, labels=labels):
            return F.cross_entropy(model(tokens, lengths), labels)
        (loss,) = list(map(lambda c: (optimizer.zero_grad(), c().backward(), optimizer.step(), c)[3], [closure]))
        losses.append(float(loss()))
    return losses
""",
    )
    v["balanced_generator_helper"] = (
        "3.1",
        "3.1: is_balanced read off course_lib.parentheses_generators' own helpers (another lesson function that knows balance)",
        """
def is_balanced(seq, n_symbols=10):
    from course_lib import parentheses_generators as g
    for name in dir(g):
        fn = getattr(g, name)
        if callable(fn) and "balanc" in name.lower():
            try:
                return bool(fn(seq, n_symbols))
            except TypeError:
                continue
    from course_lib import parentheses_symbols as s
    return bool(s.is_balanced(seq, n_symbols))
""",
    )
    for name, (target, intent, source) in v.items():
        g = "ex-" + target.replace(".", "-")
        add(out, L, name, intent, everything - {target}, notebook(root, L, override={g: src(source)})[0])


def attacks_04(root, out):
    L = "04"
    _, _, ex = load(root, L)
    everything = set(ex)
    v = {}
    v["gru_quantized_cell"] = (
        "4.2",
        "4.2: quantized::quantized_gru_cell_dynamic (a GRU step outside aten, not barred) with fp16-packed weights",
        """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    q = torch.ops.quantized
    pi = q.linear_prepack_fp16(W_xh.float(), b_xh.float())
    ph = q.linear_prepack_fp16(W_hh.float(), b_hh.float())
    return q.quantized_gru_cell_dynamic(x.float(), h.float(), pi, ph, b_xh.float(), b_hh.float()).to(x.dtype)
""",
    )
    v["gru_quantized_richardson"] = (
        "4.2",
        "4.2: quantized::quantized_gru_cell_dynamic (a GRU step outside aten: not barred, not named) made exact: r, z's terms split hi+lo on the input side, W_hn's fp16 error removed by extrapolating between its two fp16 neighbours",
        GRU_RICHARDSON,
    )
    v["gru_quantized_richardson_plain"] = (
        "4.2",
        "4.2: the same, the op named plainly (torch.ops.quantized.quantized_gru_cell_dynamic) for the source reader",
        GRU_RICHARDSON.replace('getattr(torch.ops, "quant" + "ized")', "torch.ops.quantized").replace(
            'getattr(q, "quantized_" + "gru" + "_cell_dynamic")', "q.quantized_gru_cell_dynamic"
        ),
    )
    v["gru_cell_map"] = (
        "4.2",
        "4.2: torch.gru_cell via map and a partial (C calling C)",
        """
import functools

import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    (out,) = list(map(functools.partial(torch._VF.gru_cell), [x], [h], [W_xh], [W_hh], [b_xh], [b_hh]))
    return out
""",
    )
    v["gru_decomp"] = (
        "4.2",
        "4.2: torch._decomp's gru_cell decomposition (torch's Python GRU step)",
        """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    import torch._decomp.decompositions as d
    gi = x @ W_xh.T + b_xh
    return d.gru_cell(gi, h[None], None, None, W_hh, b_hh)[0]
""",
    )
    v["gru_op_by_handle"] = (
        "4.2",
        "4.2: aten::gru_cell found by name in the JIT's operator table and called by its handle",
        """
import torch


def gru_step(x, h, W_xh, W_hh, b_xh, b_hh):
    op = torch._C._jit_get_operation("aten::gru_cell")
    op = op[0] if isinstance(op, tuple) else op
    return op(x, h, W_xh, W_hh, b_xh, b_hh)
""",
    )
    v["lstm_cell_ao"] = (
        "4.1",
        "4.1: forward by torch.ao.nn.quantizable.LSTMCell's float path (an LSTM step in Python)",
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
        from torch.ao.nn.quantizable.modules.rnn import LSTMCell as Q
        cell = Q(self.input_size, self.hidden_size)
        with torch.no_grad():
            cell.igates.weight.copy_(self.W_xh)
            cell.igates.bias.copy_(self.b_xh)
            cell.hgates.weight.copy_(self.W_hh)
            cell.hgates.bias.copy_(self.b_hh)
        if state is None:
            z = x.new_zeros(x.shape[0], self.hidden_size)
            state = (z, z)
        return cell(x, state)
""",
    )
    v["param_count_rnnbase"] = (
        "4.3",
        "4.3: the count read off torch.nn.RNNBase('GRU'/'LSTM', ...) on the meta device (RNNBase is not the forbidden nn.GRU/nn.LSTM)",
        """
import torch


def param_count(kind, input_size, hidden_size, num_layers=1):
    m = torch.nn.RNNBase(kind.upper(), input_size, hidden_size, num_layers=num_layers, device="meta")
    return sum(int(p.numel()) for p in m._flat_weights)
""",
    )
    for name, (target, intent, source) in v.items():
        g = "ex-" + target.replace(".", "-")
        add(out, L, name, intent, everything - {target}, notebook(root, L, override={g: src(source)})[0])


def attacks_05(root, out):
    L = "05"
    _, _, ex = load(root, L)
    everything = set(ex)
    decode_head = """
import functools
import math

import torch
"""
    v = {}
    v["bilinear_score"] = (
        "5.2",
        False,
        "5.2: the scores by course_lib.seq2seq.BilinearScore with W = I / sqrt(H) (a course class not on 5.2's list)",
        decode_head
        + """

def decode(model, states, lengths, tgt_in):
    from course_lib.seq2seq import BilinearScore
    B, T_in, H = states.shape
    score = BilinearScore(H, H)
    with torch.no_grad():
        for p in score.parameters():
            if p.dim() == 2:
                p.copy_(torch.eye(H) / math.sqrt(H))
            else:
                p.zero_()
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e = score(hidden, states).masked_fill(~real, float("-inf"))
        a = torch.softmax(e, dim=-1)
        c = (a[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c], dim=-1))
        weights.append(a)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
""",
    )
    v["mask_from_model_encode"] = (
        "5.2",
        False,
        "5.2: the padding mask taken from the handed-in model's own encode (which calls course_lib.attention.padding_mask); the rest by hand",
        decode_head
        + """

def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    dummy = torch.full((B, T_in), 3, dtype=torch.long)
    with torch.no_grad():
        real = model.encode(dummy, lengths)[2]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e = ((states * hidden[:, None, :]).sum(-1) / math.sqrt(H)).masked_fill(~real, float("-inf"))
        a = torch.softmax(e, dim=-1)
        c = (a[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c], dim=-1))
        weights.append(a)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
""",
    )
    v["sdpa_partial_attr"] = (
        "5.2",
        False,
        "5.2: each step's attention by F.scaled_dot_product_attention held as a partial on the module object (C calling C)",
        decode_head
        + """
import torch.nn.functional as F


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    attn = functools.partial(F.scaled_dot_product_attention)
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    eye = torch.eye(T_in)
    for i in range(tgt_in.shape[1]):
        (c,) = list(map(attn, [hidden[:, None, :]], [states], [states], [real[:, None, :]]))
        (a,) = list(map(attn, [hidden[:, None, :]], [states], [eye.expand(B, T_in, T_in)], [real[:, None, :]]))
        c, a = c[:, 0], a[:, 0]
        hidden = model.decoder(torch.cat([embedded[:, i], c], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c], dim=-1))
        weights.append(a)
    return model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1)
""",
    )
    v["reference_decode_finalizer"] = (
        "5.2",
        False,
        "5.2: returns zeros; a finalizer (partial: C) runs the check's reference_decode after return and fills the tensors in place",
        decode_head
        + """
import weakref


def _fill(outs, model, states, lengths, tgt_in):
    from course_lib.checks import lesson05
    logits, w = lesson05.reference_decode(model, states, lengths, tgt_in)
    outs[0].copy_(logits.detach())
    outs[1].copy_(w.detach())


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    V = model.out.out_features
    outs = (torch.zeros(B, tgt_in.shape[1], V), torch.zeros(B, tgt_in.shape[1], T_in))
    weakref.finalize(tgt_in, functools.partial(_fill, outs, model, states.detach().clone(), lengths.clone(), tgt_in.clone()))
    return outs
""",
    )
    v["greedy_via_model"] = (
        "5.2",
        False,
        "5.2: swaps in a DotScore-like score on the handed-in model (score = a lambda) and calls its own forward",
        decode_head
        + """

def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    class _Scaled(torch.nn.Module):
        def forward(self, query, keys, projected=None):
            return (keys * query[:, None, :]).sum(-1) / math.sqrt(H)
    model.score = _Scaled()
    src = torch.full((B, T_in), 3, dtype=torch.long)
    model.encode = lambda s, l: (states, states[torch.arange(B), lengths - 1], torch.arange(T_in)[None, :] < lengths[:, None])
    return model(src, lengths, tgt_in)
""",
    )
    v["additive_module"] = (
        "5.1",
        False,
        "5.1: course_lib.seq2seq.AdditiveScore's forward called unbound on a SimpleNamespace carrying the weights",
        """
import types

import torch


def additive_scores(query, keys, W_q, W_k, v):
    from course_lib.seq2seq import AdditiveScore
    lin = lambda W: (lambda t: t @ W.T)
    ns = types.SimpleNamespace(W_q=lin(W_q), W_k=lin(W_k), v=lambda t: t @ v[:, None])
    ns.precompute = lambda k: ns.W_k(k)
    return AdditiveScore.forward(ns, query, keys)
""",
    )
    v["namedtuple_return"] = (
        "5.2",
        False,
        "5.2: the right answer returned as a typing.NamedTuple (a tuple subclass whose fields the check reads)",
        decode_head
        + """
from typing import NamedTuple


class Decoded(NamedTuple):
    logits: object
    weights: object


def decode(model, states, lengths, tgt_in):
    B, T_in, H = states.shape
    real = torch.arange(T_in)[None, :] < lengths[:, None]
    hidden = states[torch.arange(B), lengths - 1]
    embedded = model.tgt_embed(tgt_in)
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e = ((states * hidden[:, None, :]).sum(-1) / math.sqrt(H)).masked_fill(~real, float("-inf"))
        a = torch.softmax(e, dim=-1)
        c = (a[:, :, None] * states).sum(1)
        hidden = model.decoder(torch.cat([embedded[:, i], c], dim=-1), hidden)
        outputs.append(torch.cat([hidden, c], dim=-1))
        weights.append(a)
    return Decoded(model.out(torch.stack(outputs, dim=1)), torch.stack(weights, dim=1))
""",
    )
    for name, (target, honest, intent, source) in v.items():
        g = "ex-" + target.replace(".", "-")
        deserves = everything if honest else everything - {target}
        add(out, L, name, intent, deserves, notebook(root, L, override={g: src(source)})[0])
    # the secret, from 5.1's function
    ex_nb, answers, _ = load(root, L)
    leak = (
        answers["ex-5-1"].replace("def additive_scores(", "def _real_additive(")
        + "\n"
        + LEAK_FN
        + """

def additive_scores(query, keys, W_q, W_k, v):
    found = _hunt()
    if found:
        raise ValueError("LEAK " + " | ".join(found))
    return _real_additive(query, keys, W_q, W_k, v)
"""
    )
    add(
        out,
        L,
        "secret_hunt_05",
        "5.1's function looks for HOSTILE33M_SECRET and raises with it",
        everything,
        notebook(root, L, override={"ex-5-1": leak})[0],
    )


def attacks_07(root, out):
    L = "07"
    _, _, ex = load(root, L)
    everything = set(ex)
    head = """
import functools
import math

import torch
import torch.nn.functional as F
from torch import nn
"""
    head_init = """
    def __init__(self, d_model, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
"""
    v = {}
    v["head_sdpa_partial"] = (
        "7.3",
        False,
        "7.3: Head.forward by F.scaled_dot_product_attention(is_causal=True) held as a partial and called by map",
        head
        + """

class Head(nn.Module):
"""
        + head_init
        + """
        self._attn = functools.partial(F.scaled_dot_product_attention, is_causal=True)

    def forward(self, x):
        (out,) = list(map(self._attn, [self.query(x)], [self.key(x)], [self.value(x)]))
        return out
""",
    )
    v["head_sdpa_math_op"] = (
        "7.3",
        False,
        "7.3: aten::_scaled_dot_product_attention_math through torch.ops' overload packet",
        head
        + """

class Head(nn.Module):
"""
        + head_init
        + """

    def forward(self, x):
        op = torch.ops.aten._scaled_dot_product_attention_math
        out, _ = op(self.query(x), self.key(x), self.value(x), None, 0.0, True)
        return out
""",
    )
    v["head_flex_attention"] = (
        "7.3",
        False,
        "7.3: torch.nn.attention.flex_attention with a causal score_mod",
        head
        + """

class Head(nn.Module):
"""
        + head_init
        + """

    def forward(self, x):
        from torch.nn.attention.flex_attention import flex_attention
        def causal(score, b, h, q, k):
            return torch.where(q >= k, score, -float("inf"))
        q, k, v = (t[:, None] for t in (self.query(x), self.key(x), self.value(x)))
        return flex_attention(q, k, v, score_mod=causal)[:, 0]
""",
    )
    v["mha_fn_need_weights"] = (
        "7.4",
        False,
        "7.4: MultiHeadAttention.forward by F.multi_head_attention_forward (need_weights=True: bmm and softmax), heads' weights stacked",
        head
        + """

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.heads = nn.ModuleList(Head(d_model, d_model // n_heads, block_size) for _ in range(n_heads))
        self.proj = nn.Linear(d_model, d_model)
        self.n_heads = n_heads

    def forward(self, x):
        B, T, C = x.shape
        W = torch.cat([torch.cat([h.query.weight for h in self.heads]), torch.cat([h.key.weight for h in self.heads]),
                       torch.cat([h.value.weight for h in self.heads])])
        mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        out, _ = F.multi_head_attention_forward(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), C,
                                                self.n_heads, W, None, None, None, False, 0.0, self.proj.weight,
                                                self.proj.bias, need_weights=True, attn_mask=mask)
        return out.transpose(0, 1)
""",
    )
    v["block_encoder_layer_fwd"] = (
        "7.6",
        False,
        "7.6: torch._transformer_encoder_layer_fwd (the encoder layer's fast path) with the student's weights",
        head
        + """

class Block(nn.Module):
    def __init__(self, d_model, n_heads, block_size):
        super().__init__()
        self.sa = MultiHeadAttention(d_model, n_heads, block_size)
        self.ffwd = FeedForward(d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.n_heads = n_heads

    def forward(self, x):
        B, T, C = x.shape
        hs = self.sa.heads
        W = torch.cat([torch.cat([h.query.weight for h in hs]), torch.cat([h.key.weight for h in hs]), torch.cat([h.value.weight for h in hs])])
        lin = [m for m in self.ffwd.modules() if isinstance(m, nn.Linear)]
        mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        return torch._transformer_encoder_layer_fwd(
            x, C, self.n_heads, W, torch.zeros(3 * C), self.sa.proj.weight, self.sa.proj.bias, False, True,
            self.ln1.eps, self.ln1.weight, self.ln1.bias, self.ln2.weight, self.ln2.bias,
            lin[0].weight, lin[0].bias, lin[1].weight, lin[1].bias, mask, 0)
""",
    )
    v["gpt_buildup_reduce"] = (
        "7.7",
        True,
        "7.7: GPT's blocks run by functools.reduce, course_lib.transformer imported and its GPT.forward fetched by map(getattr) [as written the course function is only fetched, never called: the GPT is the student's own code, so it deserves 7.7]",
        head
        + """

class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, block_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.blocks = nn.Sequential(*(Block(d_model, n_heads, block_size) for _ in range(n_layers)))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        import course_lib.transformer as tr
        B, T = idx.shape
        x = self.token_embedding(idx) + self.position_embedding(torch.arange(T))
        x = functools.reduce(lambda h, blk: blk(h), self.blocks, x)
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        if hasattr(tr, "GPT"):
            list(map(getattr, [tr.GPT], ["forward"]))
        return logits, loss
""",
    )
    v["posenc_sinusoidal_reduce"] = (
        "7.1",
        False,
        "7.1: course_lib.transformer.sinusoidal_positions reached through functools.reduce (C calling C)",
        """
import functools

import torch


def positional_encoding(T, d):
    from course_lib import transformer
    return functools.reduce(lambda acc, f: f(T, d), [transformer.sinusoidal_positions], None)
""",
    )
    v["posenc_polar"] = (
        "7.1",
        True,
        "7.1 by complex exponentials (torch.polar): honest, the student's own formula",
        """
import torch


def positional_encoding(T, d):
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    z = torch.polar(torch.ones(T, d // 2, dtype=torch.float64), pos * freq)
    pe = torch.stack([z.imag, z.real], dim=-1).reshape(T, d)
    return pe.float()
""",
    )
    v["split_heads_unflatten"] = (
        "7.2",
        True,
        "7.2 by Tensor.unflatten and movedim: honest, plain torch",
        """
def split_heads(x, n_head):
    return x.unflatten(-1, (n_head, -1)).movedim(-2, 1)
""",
    )
    v["head_tied_value"] = (
        "7.3",
        False,
        "7.3: value shares the query's Parameter (tied weights: a wrong Head that registers one tensor twice)",
        head
        + """

class Head(nn.Module):
"""
        + head_init
        + """
        self.value.weight = self.query.weight

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = (q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        return torch.softmax(s, -1) @ v
""",
    )
    v["top_k_sample_next"] = (
        "7.9",
        False,
        "7.9: course_lib.lm.sample_next's top-k rule reached through a partial stored in a default-less closure and map",
        """
import functools

import torch


def top_k_probs(logits, k, temperature=1.0):
    from course_lib import lm
    helper = [getattr(lm, n) for n in dir(lm) if "top" in n.lower() and callable(getattr(lm, n))]
    if helper:
        (p,) = list(map(functools.partial(helper[0]), [logits], [k]))
        return torch.softmax(p / temperature, -1) if p.dtype.is_floating_point else p
    return torch.softmax(logits / temperature, -1)
""",
    )
    for name, (target, honest, intent, source) in v.items():
        g = "ex-" + target.replace(".", "-")
        deserves = everything if honest else everything - {target}
        add(out, L, name, intent, deserves, notebook(root, L, override={g: src(source)})[0])


def rows_and_names(root, out):
    """The row/feedback side: odd names in the flat layout (06flat) and nbgrader's layout (06nb/submitted)."""
    L = "06"
    _, _, ex = load(root, L)
    everything = set(ex)
    full = notebook(root, L)[0]
    cheap = b"{ not a notebook"  # a row saying it is not a notebook: no kernel needed, rows still tested
    flat = "06flat"
    names = {
        '=HYPERLINK("x","y")': "a formula-looking name",
        "-x": "a name starting with -",
        "'-x": "the same, already quoted: must not share -x's cell",
        "o'neil": "o'neil beside o_neil: feedback names must differ",
        "o_neil": "o_neil beside o'neil",
        "CON": "a name Windows reserves",
        "Ab": "Ab beside ab: differ only by case",
        "ab": "ab beside Ab",
        "tab\there": "a tab in the name",
        unicodedata.normalize("NFC", "ren\u00e9e"): "renee, composed",
        unicodedata.normalize("NFD", "ren\u00e9e"): "renee, decomposed (looks the same)",
        "x.md": "a student named like a feedback file",
        "x": "beside x.md",
    }
    for name, intent in names.items():
        add(out, L, name, f"{intent} (not a notebook: its row says so)", set(), folder=flat, raw=cheap)
    add(out, L, "graded_flat", "a solved notebook among the odd names", everything, full, folder=flat)
    # nbgrader's layout: course/submitted/<student>/<assignment>/<notebook>.ipynb, with nbgrader's own files
    course = out / "class" / "06nb"
    (course / "submitted").mkdir(parents=True, exist_ok=True)
    (course / "gradebook.db").write_bytes(b"")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    sub = course / "submitted"
    nbname = "06_masked_attention.ipynb"
    add(
        out,
        L,
        "alice",
        "nbgrader: alice/ps1/<release>.ipynb solved",
        everything,
        full,
        folder="06nb",
        path=sub / "alice" / "ps1" / nbname,
    )
    add(
        out,
        L,
        "Alice",
        "nbgrader: Alice beside alice (case)",
        everything,
        full,
        folder="06nb",
        path=sub / "Alice" / "ps1" / nbname,
    )
    add(
        out,
        L,
        ".ipynb_checkpoints",
        "nbgrader: a student folder named .ipynb_checkpoints holding ps1/<release>.ipynb (a student id, not Jupyter's autosave: Jupyter never nests an assignment folder there)",
        everything,
        full,
        folder="06nb",
        path=sub / ".ipynb_checkpoints" / "ps1" / nbname,
    )
    add(
        out,
        L,
        "bob",
        "nbgrader: bob with two assignments, ps1/<release>.ipynb (graded) and ps2/05_attention.ipynb",
        everything,
        full,
        folder="06nb",
        path=sub / "bob" / "ps1" / nbname,
    )
    ex5 = json.loads((root / "exercises" / "05_attention.ipynb").read_text())
    (sub / "bob" / "ps2").mkdir(parents=True, exist_ok=True)
    (sub / "bob" / "ps2" / "05_attention.ipynb").write_text(json.dumps(ex5))
    add(
        out,
        L,
        "carol",
        "nbgrader: carol's notebook saved as .IPYNB (upper case): a notebook a student handed in",
        everything,
        full,
        folder="06nb",
        path=sub / "carol" / "ps1" / "06_masked_attention.IPYNB",
    )
    add(
        out,
        L,
        "dave",
        "nbgrader: dave's notebook plus Jupyter's autosave beside it",
        everything,
        full,
        folder="06nb",
        path=sub / "dave" / "ps1" / nbname,
    )
    (sub / "dave" / "ps1" / ".ipynb_checkpoints").mkdir(parents=True, exist_ok=True)
    (sub / "dave" / "ps1" / ".ipynb_checkpoints" / "06_masked_attention-checkpoint.ipynb").write_text(json.dumps(full))
    add(
        out,
        L,
        ".ipynb",
        "nbgrader: a student whose id is '.ipynb' (a folder holding ps1/<release>.ipynb)",
        everything,
        full,
        folder="06nb",
        path=sub / ".ipynb" / "ps1" / nbname,
    )
    add(
        out,
        L,
        "submitted",
        "nbgrader: a student whose id is 'submitted'",
        everything,
        full,
        folder="06nb",
        path=sub / "submitted" / "ps1" / nbname,
    )


def plant_cwd(out: Path) -> None:
    """The folder the grader is started from: modules that leave a marker if anything imports them."""
    cwd = out / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    markers = out / "markers"
    markers.mkdir(parents=True, exist_ok=True)
    template = """
import os as _os, sys as _sys
try:
    with open({marker!r} + "-" + str(_os.getpid()), "w") as _f:
        _f.write(" ".join(_sys.argv))
except Exception:
    pass
# step aside for the real module
_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
del _sys.modules[__name__]
import importlib as _il
try:
    _real = _il.import_module(__name__)
    _sys.modules[__name__] = _real
    globals().update(_real.__dict__)
except ImportError:
    pass
"""
    for name in (
        "json",
        "sitecustomize",
        "usercustomize",
        "secrets",
        "nbclient",
        "nbformat",
        "jupyter_client",
        "zmq",
        "torch",
        "numpy",
        "course_lib",
        "csv",
        "tempfile",
        "subprocess_helper",
        "dask",
        "bwrap_probe",
        "shutil",
        "hashlib",
        "unicodedata",
        "traitlets",
        "ipykernel_launcher",
        "typing_extensions",
    ):
        (cwd / f"{name}.py").write_text(template.format(marker=str(markers / name)))
    (cwd / "secrets.py").write_text(
        "HOSTILE33M_SECRET_FILE = 'grader-cwd-secret'\n" + template.format(marker=str(markers / "secrets"))
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[3]))
    ap.add_argument("--out", default="/tmp/hostile33m")
    args = ap.parse_args()
    root, out = Path(args.root), Path(args.out)
    if (out / "class").exists():
        shutil.rmtree(out / "class")
    attacks_02(root, out)
    attacks_03(root, out)
    attacks_04(root, out)
    attacks_05(root, out)
    attacks_06(root, out)
    attacks_07(root, out)
    rows_and_names(root, out)
    plant_cwd(out)
    (out / "class" / "manifest.json").write_text(json.dumps(MANIFEST, indent=1))
    by = {}
    for m in MANIFEST:
        by[m["folder"]] = by.get(m["folder"], 0) + 1
    print(f"{len(MANIFEST)} submissions:", by)


if __name__ == "__main__":
    main()
