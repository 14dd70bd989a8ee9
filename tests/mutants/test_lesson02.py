"""Lesson 02 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

import torch

from course_lib.checks import FAILED
from course_lib.checks import lesson02 as checks

from .mutate import lesson_suite, mutant, solution

LESSON = "02_backprop"
EXERCISES = {
    "softmax_jacobian": checks.check_softmax_jacobian,
    "fflm_loss_and_grads": checks.check_fflm_backward,
    "train_sgd": checks.check_train_sgd,
    "bptt_step": checks.check_bptt_step,
    "bptt_backward": checks.check_bptt_loop,
}

# the 2.5 solution between its first accumulator and the first update (one edit can change both)
LOOP_START = """
    dW_hh = torch.zeros(H, H, dtype=hs.dtype)
    db_h = torch.zeros(H, dtype=hs.dtype)
    dh_total = torch.zeros_like(hs)
    carry = torch.zeros_like(h0)  # the gradient step t+1 sends back to h_t
    for t in reversed(range(T)):
        dh = dhs[t] + carry
        dh_total[t] = dh
        h_prev = hs[t - 1] if t > 0 else h0
        da = dh * (1 - hs[t] ** 2)  # back through the tanh
"""

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    # BPTT over a sequence (2.5): the carry, the cut, h0, the shared weights
    ("bptt_backward", "dh = dhs[t] + carry", "dh = dhs[t]", "gradient from step t+1 is missing"),
    ("bptt_backward", "if truncate is not None and t > 0 and t % truncate == 0:", "if False:", "truncate is ignored"),
    (
        "bptt_backward",
        "if truncate is not None and t > 0 and t % truncate == 0:",
        "if truncate is not None and t > 0 and (t + 1) % truncate == 0:",
        "one step off",
    ),
    ("bptt_backward", "h_prev = hs[t - 1] if t > 0 else h0", "h_prev = hs[t - 1]", "previous state is h0"),
    ("bptt_backward", "carry = da @ W_hh", "carry = dh @ W_hh", "back through the tanh"),
    ("bptt_backward", "carry = da @ W_hh", "carry = da @ W_hh.T", "transposed in the carry"),
    ("bptt_backward", "dW_hh = dW_hh + da.T @ h_prev", "dW_hh = da.T @ h_prev", "shared by every step"),
    ("bptt_backward", "for t in reversed(range(T)):", "for t in range(T):", "backward in time"),
    # issue 34: chunks counted from the end (caught only when T is not a multiple of k: every truncated draw is so)
    (
        "bptt_backward",
        "if truncate is not None and t > 0 and t % truncate == 0:",
        "if truncate is not None and t > 0 and (T - t) % truncate == 0:",
        "the cut is in the wrong place",
    ),
    # float32 accumulators, added to in place: every gradient silently rounded (the dtype property names it)
    # (out of place, dW_xh + ... would promote to float64 and be right: the edit spans both)
    (
        "bptt_backward",
        "dW_xh = torch.zeros(H, D, dtype=hs.dtype)" + LOOP_START + "        dW_xh = dW_xh + da.T @ xs[t]",
        "dW_xh = torch.zeros(H, D)" + LOOP_START + "        dW_xh += da.T @ xs[t]",
        "dtype: your dW_xh is torch.float32",
    ),
    (
        "softmax_jacobian",
        "torch.diag(y) - torch.outer(y, y)",
        "torch.diag(y * (1 - y))",
        "off-diagonal entries are missing",
    ),
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "torch.diag(y) + torch.outer(y, y)", "signs"),
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "-torch.outer(y, y)", "diagonal is missing"),
    ("softmax_jacobian", "    y = y / y.sum()\n", "", "normalise"),
    (
        "softmax_jacobian",
        "y = torch.exp(z - z.max())  # subtracting the max changes nothing and avoids overflow\n    y = y / y.sum()",
        "y = z",
        "not the logits",
    ),
    ("softmax_jacobian", "torch.exp(z - z.max())", "torch.exp(z)", "subtract max(z)"),
    ("bptt_step", "da = dh * (1 - h**2)", "da = dh", "forgot the derivative of tanh"),
    ("bptt_step", "da = dh * (1 - h**2)", "da = dh * (1 - h)", "squared"),
    ("bptt_step", "dW_hh = da.T @ h_prev", "dW_hh = da.T @ h", "h_prev"),
    ("bptt_step", "dh_prev = da @ W_hh", "dh_prev = da @ W_hh.T", "transposed"),
    ("bptt_step", "dh_prev = da @ W_hh", "dh_prev = dh @ W_hh", "before W_hh"),
    ("bptt_step", "da = dh * (1 - h**2)", "dh *= 1 - h**2\n    da = dh", "in place"),
    ("bptt_step", "dW_xh = da.T @ x", "dW_xh = da.T @ x / x.shape[0]", "not an average"),
    ("bptt_step", "(1 - h**2)", "(1 - h_prev ** 2)", "this step's output"),
    ("bptt_step", "db_h = da.sum(dim=0)", "db_h = da.mean(dim=0)", "not the mean"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "z -= z.max()\n    y = torch.exp(z)", "in place"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "y = torch.sigmoid(z)", "not a sigmoid"),
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "torch.diag(y) - y * y", "outer product"),
    (
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "return (torch.diag(y) - torch.outer(y, y)).numpy()",
        "torch tensor",
    ),
    # backprop ninja (2.2): the hint names the first wrong gradient and the mistake
    ("fflm_loss_and_grads", "dU = dz.T @ h", "dU = h.T @ dz", "dU is transposed"),
    ("fflm_loss_and_grads", "dW = da.T @ e", "dW = e.T @ da", "dW is transposed"),
    ("fflm_loss_and_grads", "da = dh * (1 - h**2)", "da = dh", "dW differs: go back through the tanh"),
    ("fflm_loss_and_grads", "da = dh * (1 - h**2)", "da = dh * (1 - h)", "dW differs: tanh'(a) = 1 - tanh(a)^2"),
    ("fflm_loss_and_grads", "    dz[rows, targets] -= 1  # y_hat - y\n", "", "dU differs: subtract the one-hot"),
    (
        "fflm_loss_and_grads",
        "    dz = dz / B  # the loss is a mean over the batch\n",
        "",
        "dU differs: the loss is a mean",
    ),
    (
        "fflm_loss_and_grads",
        "dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))",
        "dE[contexts.reshape(-1)] = de.reshape(B * n, d)",
        "dE differs: a word used twice must get the SUM",
    ),
    (
        "fflm_loss_and_grads",
        "dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))",
        "dE[contexts.reshape(-1)] += de.reshape(B * n, d)",
        "dE differs: a word used twice must get the SUM",
    ),
    ("fflm_loss_and_grads", "db = da.sum(dim=0)", "db = da", "db sums over the batch"),
    ("fflm_loss_and_grads", "dc = dz.sum(dim=0)", "dc = dz.mean(dim=0)", "dc differs: dc sums dz"),
    ("fflm_loss_and_grads", "db = da.sum(dim=0)", "db = da.mean(dim=0)", "db differs: db sums da"),
    ("fflm_loss_and_grads", "dz[rows, targets] -= 1", "dz[rows, targets] -= 1\n    dz = -dz", "sign is flipped"),
    ("fflm_loss_and_grads", "dU = dz.T @ h", "dU = dz.T @ (e @ W.T + b)", "not the pre-activation"),
    (
        "fflm_loss_and_grads",
        "loss = -log_probs[rows, targets].mean()",
        "loss = -log_probs[rows, targets].sum()",
        "the loss differs",
    ),
    ("fflm_loss_and_grads", "d = E.shape[1]", "d = 4", "shape"),
    # issue 34: a naive softmax, right for small logits: the shifted case (same softmax) names the property
    (
        "fflm_loss_and_grads",
        "log_probs = torch.log_softmax(z, dim=1)",
        "log_probs = torch.log(torch.exp(z) / torch.exp(z).sum(1, keepdim=True))",
        "stable for large inputs",
    ),
    # torch.zeros' default float32 against the check's float64 parameters: the dtype is named, not torch's error
    ("fflm_loss_and_grads", "dE = torch.zeros_like(E)", "dE = torch.zeros(E.shape[0], d)", "dtype"),
    ("fflm_loss_and_grads", "dz = log_probs.exp()  # y_hat", "dz = log_probs  # y_hat", "dU differs"),
    (
        "fflm_loss_and_grads",
        "dE = torch.zeros_like(E)",
        "dE = torch.zeros(int(contexts.max()) + 1, d, dtype=E.dtype)",
        "dE must have shape",
    ),
    # training with them (2.3)
    ("train_sgd", "params[k] = params[k] - lr * grads[k]", "params[k] = params[k] + lr * grads[k]", "uphill"),
    ("train_sgd", "params[k] = params[k] - lr * grads[k]", "params[k] = params[k] - grads[k]", "learning rate"),
    (
        "train_sgd",
        "        losses.append(float(loss))\n",
        "        losses.append(float(loss_and_grads(params, contexts, targets)[0]))\n",
        "before the update",
    ),
    ("fflm_loss_and_grads", "db = da.sum(dim=0)", "db = dh.sum(dim=0)", "before the tanh"),
    (
        "fflm_loss_and_grads",
        "dE.index_add_(0, contexts.reshape(-1),",
        "dE.index_add_(0, contexts.T.reshape(-1),",
        "position by position",
    ),
    ("train_sgd", "params = {k: v.clone() for k, v in params.items()}", "params = params", "changed its input"),
    (
        "train_sgd",
        "params = {k: v.clone() for k, v in params.items()}  # the caller's weights stay as they were\n"
        "    losses = []\n"
        "    for contexts, targets in batches:\n"
        "        loss, grads = loss_and_grads(params, contexts, targets)\n"
        "        for k in params:\n"
        "            params[k] = params[k] - lr * grads[k]",
        "params = dict(params)  # a new dict, but the same tensors\n"
        "    losses = []\n"
        "    for contexts, targets in batches:\n"
        "        loss, grads = loss_and_grads(params, contexts, targets)\n"
        "        for k in params:\n"
        "            params[k] -= lr * grads[k]  # in place: the caller's tensors",
        "changed its input",
    ),
    (
        "train_sgd",
        "for contexts, targets in batches:",
        "for contexts, targets in batches[1:]:",
        "one step (and one loss) per batch",
    ),
    ("train_sgd", "loss_and_grads(params, contexts, targets)", "loss_and_grads(params, *batches[0])", "its own batch"),
    ("train_sgd", "for k in params:", 'for k in ("W", "U"):', "never changed"),
    ("train_sgd", "lr * grads[k]", "lr / len(targets) * grads[k]", "already averaged"),
    ("train_sgd", "    return losses, params\n", "    return losses\n", "return (losses, params)"),
    (
        "fflm_loss_and_grads",
        "dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))",
        "dE.index_add_(0, contexts[:, 0], de[:, :d])",
        "every one of the n context words",
    ),
    # W_hh is square: its transposed gradient has the right shape, so only the targeted hint names it
    ("bptt_step", "dW_hh = da.T @ h_prev", "dW_hh = h_prev.T @ da", "dW_hh differs: dW_hh is transposed"),
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "torch.outer(y, y) - torch.diag(y)", "sign is flipped"),
    # issue 34: a softmax over an axis of length 1 (every y_i = 1): the rows-sum-to-0 property names the axis
    (
        "softmax_jacobian",
        "y = torch.exp(z - z.max())  # subtracting the max changes nothing and avoids overflow\n    y = y / y.sum()",
        "y = torch.softmax(z[None, :], dim=0)[0]",
        "axis of length 1",
    ),
    # issue 34: dU computed (H, V) and reshaped to U's shape: the right numbers in the wrong places (the layout
    # property), which no shape shows
    ("fflm_loss_and_grads", "dU = dz.T @ h", "dU = (h.T @ dz).reshape(U.shape)", "right numbers in the wrong places"),
]

AUTOGRAD_FORWARD = (
    "leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}\n"
    "    B = contexts.shape[0]\n"
    "    h = torch.tanh(leaves['E'][contexts].reshape(B, -1) @ leaves['W'].T + leaves['b'])\n"
    "    loss = torch.nn.functional.cross_entropy(h @ leaves['U'].T + leaves['c'], targets)\n"
)
FIRST_LINE = 'E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))'

# (function, edit from, edit to, the forbidden name the refusal must name)
BORROWED = [
    (
        "bptt_backward",
        "    return dW_xh, dW_hh, db_h, dh_total\n",
        "    import course_lib.bptt as cb\n    W_xh = torch.zeros(H, D, dtype=hs.dtype)\n"
        "    _, cache = cb.rnn_forward(xs, h0, W_xh, W_hh, torch.zeros(H, dtype=hs.dtype))\n"
        "    g = cb.rnn_backward(dhs, cache, truncate)\n    return dW_xh, dW_hh, db_h, g['dh_total']\n",
        "course_lib.bptt.rnn_backward",
    ),
    (
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "return torch.autograd.functional.jacobian(lambda v: torch.softmax(v, 0), z)",
        "torch.autograd.functional.jacobian",
    ),
    (
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "from course_lib.backprop import softmax_jacobian as jacobian\n    return jacobian(z)",
        "course_lib.backprop.softmax_jacobian",
    ),
    (
        "bptt_step",
        "da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2",
        "from course_lib.backprop import activation_backward\n    da = activation_backward(dh, h, h)",
        "course_lib.backprop.activation_backward",
    ),
    (
        "fflm_loss_and_grads",
        FIRST_LINE,
        AUTOGRAD_FORWARD + "    loss.backward()\n    return float(loss), {k: v.grad for k, v in leaves.items()}",
        "torch.Tensor.backward",
    ),
    (
        "fflm_loss_and_grads",
        FIRST_LINE,
        AUTOGRAD_FORWARD
        + "    grads = torch.autograd.grad(loss, list(leaves.values()))\n"
        + "    return float(loss), dict(zip(leaves, grads))",
        "torch.autograd.grad",
    ),
    (
        "fflm_loss_and_grads",
        FIRST_LINE,
        "from course_lib.fflm import FeedForwardLM\n"
        "    V, d = params['E'].shape\n"
        "    model = FeedForwardLM(V, contexts.shape[1], d, params['W'].shape[0], dtype=params['E'].dtype)\n"
        "    model.params = {k: v.clone() for k, v in params.items()}\n"
        "    return model.loss_and_grads(contexts, targets)",
        "course_lib.fflm.FeedForwardLM.loss_and_grads",
    ),
    (
        "train_sgd",
        "loss, grads = loss_and_grads(params, contexts, targets)",
        "leaves = {k: v.detach().requires_grad_() for k, v in params.items()}\n"
        "        B = contexts.shape[0]\n"
        "        h = (leaves['E'][contexts].reshape(B, -1) @ leaves['W'].T + leaves['b']).tanh()\n"
        "        loss = (h @ leaves['U'].T + leaves['c']).log_softmax(1)[range(B), targets].mean().neg()\n"
        "        loss.backward()\n"
        "        grads = {k: v.grad for k, v in leaves.items()}\n"
        "        loss = float(loss)",
        "torch.Tensor.backward",
    ),
    # refused by what runs, whatever name reached it: routes that no list of forbidden names covers
    (  # torch.func.jacrev (refused where it calls torch.autograd.grad)
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "return torch.func.jacrev(lambda v: torch.softmax(v, 0))(z)",
        "torch.autograd.grad",
    ),
    (  # forward mode: torch.func.jvp, one column at a time
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "return torch.stack([torch.func.jvp(lambda v: torch.softmax(v, 0), (z,), (e,))[1] for e in torch.eye(len(z), dtype=z.dtype)], 1)",
        "torch._functorch.eager_transforms.jvp",
    ),
    (  # torch.func.vjp, one row at a time (refused where it calls torch.autograd.grad)
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "_, pull = torch.func.vjp(lambda v: torch.softmax(v, 0), z)\n    return torch.stack([pull(e)[0] for e in torch.eye(len(z), dtype=z.dtype)])",
        "torch.autograd.grad",
    ),
    (  # forward-mode autograd by hand (torch.autograd.forward_ad)
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "import torch.autograd.forward_ad as fwAD\n    cols = []\n    for e in torch.eye(len(z), dtype=z.dtype):\n        with fwAD.dual_level():\n            cols.append(fwAD.unpack_dual(torch.softmax(fwAD.make_dual(z, e), 0)).tangent)\n    return torch.stack(cols, 1)",
        "torch.autograd.forward_ad.dual_level.__enter__",
    ),
    (  # the aten kernel of softmax's backward
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "out = torch.softmax(z, 0)\n    return torch.ops.aten._softmax_backward_data(torch.eye(len(z), dtype=z.dtype), out[None].expand(len(z), -1), 1, z.dtype)",
        "torch.ops.aten._softmax_backward_data.default",
    ),
    (  # the check's own gradients, not the loss_and_grads it is given (not forbidden by name here)
        "train_sgd",
        "loss, grads = loss_and_grads(params, contexts, targets)",
        "from course_lib.checks.lesson02 import hand_loss_and_grads\n\n"
        "        loss, grads = hand_loss_and_grads(params, contexts, targets)",
        "course_lib.checks.lesson02.hand_loss_and_grads",
    ),
    (  # autograd's engine, called directly
        "fflm_loss_and_grads",
        'E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))',
        "leaves = {k: v.detach().clone().requires_grad_() for k, v in params.items()}\n    B = contexts.shape[0]\n    h = torch.tanh(leaves['E'][contexts].reshape(B, -1) @ leaves['W'].T + leaves['b'])\n    loss = torch.nn.functional.cross_entropy(h @ leaves['U'].T + leaves['c'], targets)\n    grads = torch.autograd.Variable._execution_engine.run_backward(\n        (loss,), (torch.ones_like(loss),), False, False, tuple(leaves.values()), False)\n    return float(loss), dict(zip(leaves, grads))",
        "torch._C._EngineBase.run_backward",
    ),
    (  # torch.func.grad_and_value (refused where it calls torch.autograd.grad)
        "fflm_loss_and_grads",
        'E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))',
        "def loss_of(p):\n        B = contexts.shape[0]\n        h = torch.tanh(p['E'][contexts].reshape(B, -1) @ p['W'].T + p['b'])\n        return torch.nn.functional.cross_entropy(h @ p['U'].T + p['c'], targets)\n    grads, loss = torch.func.grad_and_value(loss_of)(dict(params))\n    return float(loss), grads",
        "torch.autograd.grad",
    ),
    (  # the aten kernel of tanh's backward
        "bptt_step",
        "da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2",
        "da = __import__('torch').ops.aten.tanh_backward(dh, h)",
        "torch.ops.aten.tanh_backward.default",
    ),
    (  # the observer switched off
        "bptt_step",
        "da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2",
        "__import__('sys').setprofile(None)\n    da = dh * (1 - h**2)",
        "sys.setprofile",
    ),
    (  # torch's dispatch mode popped
        "bptt_step",
        "da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2",
        "from torch.utils._python_dispatch import _pop_mode\n    _pop_mode()\n    da = dh * (1 - h**2)",
        "torch._C._pop_torch_dispatch_stack",
    ),
    (  # the observer of new threads switched off
        "bptt_step",
        "da = dh * (1 - h**2)  # back through tanh: tanh'(a) = 1 - tanh(a)^2 = 1 - h^2",
        "import threading\n    threading.setprofile(None)\n    da = dh * (1 - h**2)",
        "threading.setprofile",
    ),
    (  # the engine, in the training loop
        "train_sgd",
        "loss, grads = loss_and_grads(params, contexts, targets)",
        "leaves = {k: v.detach().requires_grad_() for k, v in params.items()}\n        B = contexts.shape[0]\n        h = (leaves['E'][contexts].reshape(B, -1) @ leaves['W'].T + leaves['b']).tanh()\n        loss = (h @ leaves['U'].T + leaves['c']).log_softmax(1)[range(B), targets].mean().neg()\n        grads = dict(zip(leaves, __import__('torch').autograd.Variable._execution_engine.run_backward(\n            (loss,), (loss.new_ones(()),), False, False, tuple(leaves.values()), False)))\n        loss = float(loss)",
        "torch._C._EngineBase.run_backward",
    ),
]

ALTERNATIVES = [
    (  # the loop written with bptt_step-like pieces, in-place sums on its own tensors
        "bptt_backward",
        "        dW_xh = dW_xh + da.T @ xs[t]\n        dW_hh = dW_hh + da.T @ h_prev\n        db_h = db_h + da.sum(dim=0)\n",
        "        dW_xh += da.T @ xs[t]\n        dW_hh += da.T @ h_prev\n        db_h += da.sum(0)\n",
    ),
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "torch.diag_embed(y) - y[:, None] * y[None, :]"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "y = torch.exp((z - z.max()).float())"),
    ("bptt_step", "da = dh * (1 - h**2)", "da = dh * (1 - h) * (1 + h)"),
    # a student's usual backward: softmax written out, one-hot target, embedding rows added one at a time
    (
        "fflm_loss_and_grads",
        "    dz = log_probs.exp()  # y_hat\n    dz[rows, targets] -= 1  # y_hat - y\n",
        "    y = torch.zeros_like(z)\n    y[rows, targets] = 1\n    dz = torch.softmax(z, dim=1) - y\n",
    ),
    (
        "fflm_loss_and_grads",
        "    dE.index_add_(0, contexts.reshape(-1), de.reshape(B * n, d))  # repeated words add up\n",
        "    for i, w in enumerate(contexts.reshape(-1).tolist()):\n        dE[w] += de.reshape(B * n, d)[i]\n",
    ),
    (
        "fflm_loss_and_grads",
        'E, W, b, U, c = (params[k] for k in ("E", "W", "b", "U", "c"))',
        'E, W, b, U, c = (params[k].float() for k in ("E", "W", "b", "U", "c"))',
    ),
    (
        "train_sgd",
        "        for k in params:\n            params[k] = params[k] - lr * grads[k]\n",
        "        for k, g in grads.items():\n            params[k].sub_(lr * g)\n",
    ),
    ("train_sgd", "losses.append(float(loss))", "losses = losses + [loss]"),
]

# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(
    lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, borrowed=BORROWED, solution_repeats=3, mutant_repeats=5)
)


def test_a_shape_error_in_student_code_is_reported_not_raised():
    def broken(*args):

        return torch.ones(2, 3) @ torch.ones(2, 3)  # a shape error inside the student's code

    result = checks.check_fflm_backward(broken, quiet=True)
    assert result.status == FAILED and "shape mismatch" in result.message


def test_in_place_changes_to_inputs_are_caught():
    def in_place(params, contexts, targets):
        params["E"] *= 1.0  # the same values, but the caller's tensor was written: that is refused too
        params["E"][0, 0] += 1.0
        return solution(LESSON, "fflm_loss_and_grads")(params, contexts, targets)

    result = checks.check_fflm_backward(in_place, quiet=True)
    assert result.status == FAILED and "in place" in result.message


def test_hints_name_the_first_wrong_gradient_in_backward_order():
    """A mistake at the tanh leaves dU and dc right and is named at dW, never later (db, dE)."""
    wrong = mutant(LESSON, "fflm_loss_and_grads", "da = dh * (1 - h**2)", "da = dh")
    result = checks.check_fflm_backward(wrong, quiet=True)
    assert result.message.startswith("Hint: dW differs"), result.message


def test_a_loop_that_calls_its_own_gradients_instead_of_the_argument_is_caught():
    """train_sgd calling the notebook's fflm_loss_and_grads by name (right gradients, wrong function): the check
    gives a penalised loss_and_grads, so the loop is told apart on every draw, with its own hint."""
    wrong = mutant(
        LESSON,
        "train_sgd",
        "loss_and_grads(params, contexts, targets)",
        "fflm_loss_and_grads(params, contexts, targets)",
    )
    wrong.__globals__["fflm_loss_and_grads"] = solution(LESSON, "fflm_loss_and_grads")  # the notebook's, by name
    for _ in range(5):
        result = checks.check_train_sgd(wrong, quiet=True)
        assert result.status == FAILED and "call the loss_and_grads your function is given" in result.message
