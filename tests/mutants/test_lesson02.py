"""Lesson 02 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import FAILED
from course_lib.checks import lesson02 as checks

from .mutate import lesson_suite, solution

LESSON = "02_backprop"
EXERCISES = {
    "softmax_jacobian": checks.check_softmax_jacobian,
    "cross_entropy_grad": checks.check_cross_entropy_grad,
    "linear_backward": checks.check_linear_backward,
    "embedding_backward": checks.check_embedding_backward,
    "bptt_step": checks.check_bptt_step,
}

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
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
    ("cross_entropy_grad", "(y_hat - y)", "(y - y_hat)", "sign flipped"),
    ("cross_entropy_grad", "torch.softmax(z, dim=1)", "torch.softmax(z, dim=0)", "wrong axis"),
    ("cross_entropy_grad", "(y_hat - y) / z.shape[0]", "(y_hat - y)", "mean over the batch"),
    ("cross_entropy_grad", "(y_hat - y) / z.shape[0]", "(y_hat - y) / z.shape[1]", "not by the number of classes"),
    ("cross_entropy_grad", "(y_hat - y) / z.shape[0]", "y_hat / z.shape[0]", "subtract the one-hot"),
    ("cross_entropy_grad", "torch.softmax(z, dim=1)", "torch.log_softmax(z, dim=1)", "not log_softmax"),
    ("linear_backward", "dW = dz.T @ x", "dW = x.T @ dz", "transposed"),
    ("linear_backward", "dx = dz @ W", "dx = dz @ W.T", "you used W^T"),
    ("linear_backward", "db = dz.sum(dim=0)", "db = dz.mean(dim=0)", "not mean"),
    ("linear_backward", "db = dz.sum(dim=0)", "db = dz.sum(dim=1)", "batch axis (dim=0)"),
    ("linear_backward", "dW = dz.T @ x", "dW = dz.T @ x / x.shape[0]", "not an average"),
    ("embedding_backward", "dE[i] += row", "dE[i] = row", "must accumulate"),
    (
        "embedding_backward",
        "    for i, row in zip(ids.reshape(-1).tolist(), de.reshape(-1, d)):\n"
        "        dE[i] += row  # += : a repeated word accumulates the gradient of every use\n",
        "    dE[ids.reshape(-1)] += de.reshape(-1, d)\n",
        "must accumulate",
    ),
    ("embedding_backward", "    return dE\n", "    return de.reshape(-1, d)\n", "shape of E"),
    ("embedding_backward", "dE[i] += row", "dE[i] += row / (ids == i).sum()", "do not average"),
    ("bptt_step", "da = dh * (1 - h ** 2)", "da = dh", "forgot the derivative of tanh"),
    ("bptt_step", "da = dh * (1 - h ** 2)", "da = dh * (1 - h)", "squared"),
    ("bptt_step", "dW_hh = da.T @ h_prev", "dW_hh = da.T @ h", "h_prev"),
    ("bptt_step", "dh_prev = da @ W_hh", "dh_prev = da @ W_hh.T", "transposed"),
    ("bptt_step", "dh_prev = da @ W_hh", "dh_prev = dh @ W_hh", "before W_hh"),
    ("bptt_step", "da = dh * (1 - h ** 2)", "dh *= 1 - h ** 2\n    da = dh", "in place"),
    ("bptt_step", "dW_xh = da.T @ x", "dW_xh = da.T @ x / x.shape[0]", "not an average"),
    ("bptt_step", "(1 - h ** 2)", "(1 - h_prev ** 2)", "this step's output"),
    ("bptt_step", "db_h = da.sum(dim=0)", "db_h = da.mean(dim=0)", "not the mean"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "z -= z.max()\n    y = torch.exp(z)", "in place"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "y = torch.sigmoid(z)", "not a sigmoid"),
    (
        "softmax_jacobian",
        "return torch.diag(y) - torch.outer(y, y)",
        "return (torch.diag(y) - torch.outer(y, y)).numpy()",
        "torch tensor",
    ),
    ("cross_entropy_grad", "one_hot(targets, z.shape[1])", "one_hot(targets)", "num_classes"),
    (
        "cross_entropy_grad",
        "y_hat = torch.softmax(z, dim=1)",
        "z -= z.max()\n    y_hat = torch.softmax(z, dim=1)",
        "in place",
    ),
    ("linear_backward", "dx = dz @ W", "W.transpose_(0, 1)\n    dx = dz @ W.T\n    W = W.T", "in place"),
    ("linear_backward", "return dx, dW, db", "return dx.numpy(), dW, db", "torch tensor"),
    ("embedding_backward", "dE[i] += row", "row += dE[i]\n        dE[i] = row", "in place"),
    ("embedding_backward", "torch.zeros(vocab_size, d,", "torch.zeros(int(ids.max()) + 1, d,", "largest id"),
    ("embedding_backward", "d = de.shape[-1]", "d = 3", "do not hard-code"),
]

ALTERNATIVES = [
    ("softmax_jacobian", "torch.diag(y) - torch.outer(y, y)", "torch.diag_embed(y) - y[:, None] * y[None, :]"),
    ("softmax_jacobian", "y = torch.exp(z - z.max())", "y = torch.exp((z - z.max()).float())"),
    (
        "cross_entropy_grad",
        "y = torch.nn.functional.one_hot(targets, z.shape[1]).to(z.dtype)",
        "y = torch.zeros_like(z)\n    y[torch.arange(len(targets)), targets] = 1",
    ),
    ("linear_backward", "db = dz.sum(dim=0)", "db = dz.new_ones(dz.shape[0]) @ dz"),
    ("embedding_backward", "torch.zeros(vocab_size, d, dtype=de.dtype)", "torch.zeros(vocab_size, d)"),
    (
        "embedding_backward",
        "    for i, row in zip(ids.reshape(-1).tolist(), de.reshape(-1, d)):\n"
        "        dE[i] += row  # += : a repeated word accumulates the gradient of every use\n",
        "    dE.index_add_(0, ids.reshape(-1), de.reshape(-1, d))\n",
    ),
    ("bptt_step", "da = dh * (1 - h ** 2)", "da = dh * (1 - h) * (1 + h)"),
]

# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))


def test_a_shape_error_in_student_code_is_reported_not_raised():
    def broken(*args):
        import torch

        return torch.ones(2, 3) @ torch.ones(2, 3)  # a shape error inside the student's code

    result = checks.check_linear_backward(broken, quiet=True)
    assert result.status == FAILED and "RuntimeError" in result.message


def test_in_place_changes_to_inputs_are_caught():
    def in_place(z, targets):
        z -= z.max()  # changes the caller's tensor
        return solution(LESSON, "cross_entropy_grad")(z, targets)

    result = checks.check_cross_entropy_grad(in_place, quiet=True)
    assert result.status == FAILED and "in place" in result.message
