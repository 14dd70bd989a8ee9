"""Lesson 05 checks: pass the solution, report the stub, reject realistic mistakes with the right hint."""

from course_lib.checks import FAILED
from course_lib.checks import lesson05 as checks

from .mutate import lesson_suite

LESSON = "05_attention"
EXERCISES = {
    "attention_scores": checks.check_attention_scores,
    "attention_weights": checks.check_attention_weights,
    "context_vector": checks.check_context_vector,
    "additive_scores": checks.check_additive_scores,
}

# (function, edit from, edit to, words the hint must contain)
MUTANTS = [
    ("attention_scores", "Q @ K.transpose(-2, -1)", "K @ Q.transpose(-2, -1)", "swapped"),
    ("attention_scores", " / math.sqrt(d)", "", "divide by sqrt(d)"),
    ("attention_scores", "/ math.sqrt(d)", "/ d", "not by d itself"),
    ("attention_scores", "d = Q.shape[-1]", "d = K.shape[-2]", "not the number of keys"),
    ("attention_scores", "/ math.sqrt(d)", "* math.sqrt(d)", "not by sqrt(d) (multiply)"),
    ("attention_scores", "Q @ K.transpose(-2, -1)", "Q @ K", "transpose K"),
    ("attention_weights", "torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)", "wrong axis"),
    ("attention_weights", "torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=0)", "wrong axis"),
    ("attention_weights", "masked_fill(~mask,", "masked_fill(mask,", "inverted"),
    ("attention_weights", 'float("-inf")', "0.0", "-inf"),
    (
        "attention_weights",
        '        scores = scores.masked_fill(~mask, float("-inf"))',
        "        pass",
        "ignored the mask",
    ),
    (
        "attention_weights",
        'if mask is not None:\n        scores = scores.masked_fill(~mask, float("-inf"))',
        "if mask is not None:\n        return torch.softmax(scores, dim=-1) * mask",
        "before the softmax",
    ),
    ("context_vector", "(weights.unsqueeze(-1) * values).sum(dim=1)", "values.mean(dim=1)", "mean-pooling"),
    ("context_vector", ".sum(dim=1)", ".sum(dim=-1)", "not over the features"),
    ("context_vector", ".sum(dim=1)", ".mean(dim=1)", "divides by T again"),
    (
        "context_vector",
        "(weights.unsqueeze(-1) * values).sum(dim=1)",
        "values[torch.arange(len(values)), weights.argmax(-1)]",
        "hard attention",
    ),
    ("context_vector", "(weights.unsqueeze(-1) * values).sum(dim=1)", "weights.unsqueeze(-1) * values", "shape (B, d)"),
    (
        "additive_scores",
        "torch.tanh(projected_query.unsqueeze(1) + projected_keys) @ v",
        "(projected_query.unsqueeze(1) + projected_keys) @ v",
        "forgot the tanh",
    ),
    (
        "additive_scores",
        "torch.tanh(projected_query.unsqueeze(1) + projected_keys) @ v",
        "torch.tanh((projected_query.unsqueeze(1) + projected_keys) @ v)",
        "before the dot product",
    ),
    (
        "additive_scores",
        "projected_query = query @ W_q.T  # (B, a)\n    projected_keys = keys @ W_k.T",
        "projected_query = query @ W_k.T  # (B, a)\n    projected_keys = keys @ W_q.T",
        "swapped",
    ),
    ("additive_scores", "projected_keys) @ v", "projected_keys).sum(-1)", "learned vector v"),
    ("additive_scores", "torch.tanh(", "torch.relu(", "not ReLU"),
    ("additive_scores", "torch.tanh(", "torch.sigmoid(", "not the sigmoid"),
    (
        "attention_scores",
        "return Q @ K.transpose(-2, -1) / math.sqrt(d)",
        "Q /= math.sqrt(d)\n    return Q @ K.transpose(-2, -1)",
        "in place",
    ),
    ("attention_weights", "scores = scores.masked_fill(~mask,", "scores = scores.masked_fill_(~mask,", "in place"),
    (
        "context_vector",
        "(weights.unsqueeze(-1) * values).sum(dim=1)",
        "values.mul_(weights.unsqueeze(-1)).sum(dim=1)",
        "in place",
    ),
    (
        "context_vector",
        "(weights.unsqueeze(-1) * values).sum(dim=1)",
        "values[range(values.shape[0]), weights.argmax(-1)]",
        "hard attention",
    ),
]

# (function, edit from, edit to): different but right code that must pass
ALTERNATIVES = [
    (
        "attention_scores",
        "return Q @ K.transpose(-2, -1) / math.sqrt(d)",
        'return torch.einsum("...qd,...kd->...qk", Q, K) / d**0.5',
    ),
    (
        "attention_weights",
        'scores = scores.masked_fill(~mask, float("-inf"))',
        'scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))',
    ),
    ("context_vector", "(weights.unsqueeze(-1) * values).sum(dim=1)", "(weights[:, None, :] @ values)[:, 0, :]"),
    ("additive_scores", "projected_query.unsqueeze(1)", "projected_query[:, None, :]"),
]


# pytest collects the suite's tests (solution, stub, mutants, alternatives, random state) here.
globals().update(lesson_suite(LESSON, EXERCISES, MUTANTS, ALTERNATIVES, solution_repeats=3, mutant_repeats=5))


def test_a_non_tensor_answer_gets_a_clear_hint():
    result = checks.check_attention_weights(lambda scores, mask=None: scores.tolist(), quiet=True)
    assert result.status == FAILED and "torch.Tensor" in result.message
