# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 06 exercises: masked self-attention
#
# A warm-up (the lecture's quiz for any matrix), then the build: padding and the future masked
# together, first by hand on the quiz's matrix, then in code for a whole batch, and the two
# matched; then an experiment with what you built. Each exercise is followed by a check that
# calls your function (on fresh inputs, where it takes any) and says **passed**, **not implemented yet**, or **failed** with a hint about
# the likely mistake. Replace each `raise NotImplementedError(...)` with your code and
# run the cell below it. The lesson notebook `notebooks/06_masked_attention.ipynb`
# explains everything used here.
#
# As in the lecture, positions count from 1: query $i$ and key $j$ run over $1, \dots, n$,
# and masked self-attention lets query $i$ see the keys $j \le i$:
#
# $$e_{i,j} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{d_k}} \text{ for } j \le i, \qquad
#   e_{i,j} = -\infty \text{ for } j > i, \qquad \alpha_i = \operatorname{softmax}(\mathbf{e}_i)$$
#
# When your notebook is graded, only the answer cells (the ones you edit) are loaded, in a namespace of their own:
# none of the setup cell's names or of any other cell's, nor a file a cell wrote (a `%%writefile` module), is
# there, so import what you use in them. Keep them to imports (a `try:` holding only imports, with
# `except ImportError:`, too), functions (a `lambda` bound to a name too), classes whose bases are plain names,
# names set to literals (numbers, strings, `True`, `False`, `None`, lists, tuples, sets or dicts of these, or
# `float("inf")` on its own) or to a module's attribute (`LOG2 = math.log2`, with `import math` above it in the
# same cell), simple annotations (names, `X[...]`), and a demo under `if __name__ == "__main__":` (not run when
# graded). Decorators: `@staticmethod`, `@classmethod`, `@property` and a property's `.setter`, and a few
# wrappers such as `@functools.lru_cache`, `@functools.cache`, `@dataclasses.dataclass` and `@torch.no_grad()`,
# named through an import above them in the same cell and given literal arguments only. A value computed by a
# call or arithmetic (`LN2 = math.log(2)`, `X = 1 / 3`), a default that is not a literal (a dataclass's
# `field(default_factory=list)` is fine), any other decorator, a test or a `print` at top level, or a `%magic` or `!command` anywhere in the cell fails that
# exercise, and any other exercise that uses a name the cell defines. Put such code inside your function. Your
# functions may start no thread or process and may not use `torch.compile` or `torch.jit` (the grader watches what
# they call).
#
# In every exercise, your functions may call Python's standard library, torch and numpy, and print, display, plot
# (plain labels) or show progress; a check refuses an answer that calls any other installed package, such as
# `pandas`, `sympy` or `nltk` (importing one is fine). The masking is what these exercises build, so numpy's masked
# arrays (`numpy.ma`), `torch.masked` and torch's nested tensors are refused too.

# %%
import course_lib
from course_lib.checks import lesson06 as checks

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 6.1: the quiz, for any score matrix (warm-up)
#
# The lecture's quiz gives the $n \times n$ matrix of scores $e_{i,j}$ and asks for one
# weight $\alpha_{i,j}$ of masked attention. Write the function that answers every variant
# of it: `alpha(scores, i, j)` with $i$ and $j$ counted from 1, returning a Python float. Mask
# the whole matrix at once (without changing `scores`), take the softmax of each row, then pick
# the entry.

# %%
# Exercise 6.1: the quiz for any score matrix
import torch


def alpha(scores, i, j):
    """alpha_{i,j} of masked self-attention from the (n, n) scores e (i, j counted from 1)."""
    ### BEGIN SOLUTION
    n = scores.shape[0]
    allowed = torch.ones(n, n, dtype=torch.bool, device=scores.device).tril()
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # each row sums to 1
    return weights[i - 1, j - 1].item()
    ### END SOLUTION


# %%
result = checks.check_alpha(alpha)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 6.2: padding and the future, by hand
#
# In a batch, the quiz's sentence is shorter than the others: it has **3 real tokens**, and
# position 4 is **padding** (`<pad>`). A decoder's self-attention now masks two things: the
# future (key $j > i$) and the padding (key $j$ beyond the sentence's length). A weight is
# allowed only where *both* masks allow it. The scores are the lecture's:
#
# ```
#  1   0  -1  -1
#  1   1  -1   0
#  0   1   1  -1
# -1  -1   2   1
# ```
#
# By hand (with `math.exp`, no tensors): write $\alpha_{2,2}$, $\alpha_{3,3}$, $\alpha_{4,2}$ and
# $\alpha_{4,4}$, each as the softmax of row $i$'s kept scores. Position 4 is padding both as
# a key (column 4) and as a query (row 4): what does query 4 see?

# %%
# Exercise 6.2: padding and the future, by hand
import math


def by_hand():
    """alpha_22, alpha_33, alpha_42, alpha_44 for the quiz's scores, with token 4 padding."""
    exp = math.exp
    ### BEGIN SOLUTION
    return {
        "alpha_22": exp(1) / (exp(1) + exp(1)),  # row 2 keeps keys 1, 2: scores 1, 1
        "alpha_33": exp(1) / (exp(0) + exp(1) + exp(1)),  # row 3 keeps keys 1, 2, 3: scores 0, 1, 1
        "alpha_42": exp(-1) / (exp(-1) + exp(-1) + exp(2)),  # row 4 keeps keys 1, 2, 3 (key 4 is padding)
        "alpha_44": 0.0,  # key 4 is padding: masked for every query
    }
    ### END SOLUTION


# %%
result = checks.check_by_hand(by_hand)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 6.3: masked attention over a padded batch (the build)
#
# Now in code, for a whole batch. `scores` has shape `(B, T, T)` (row $i$, column $j$: the
# scaled score $e_{i,j}$ of sentence $b$), `values` shape `(B, T, d_v)`, and `lengths` shape
# `(B,)`: sentence $b$ holds `lengths[b]` real tokens, then padding (a sentence may be empty,
# `lengths[b] = 0`: its queries see no key at all; give them weights 0 and output 0, not NaN, as
# `F.scaled_dot_product_attention` does in the torch pinned here; older releases gave NaN, and
# section 3 of the lesson shows why a plain softmax does). Build the two masks
# (True = may attend): the causal one, `(T, T)`, true where $j \le i$, and the padding one,
# `(B, T)`, true at the real keys; combine them into one `(B, T, T)` mask (broadcasting: which
# axis does the padding mask belong on?); give the masked scores $-\infty$; take the softmax
# over the keys; and return `(output, weights)` with $\mathbf{h}_i = \sum_j \alpha_{i,j} \mathbf{v}_j$.
# Write the masks yourself: course_lib's and torch's masking helpers are out of reach while the
# check runs.

# %%
# Exercise 6.3: masked attention over a padded batch
import torch


def masked_attention(scores, values, lengths):
    """Causal and padding masks together: (output (B, T, d_v), weights (B, T, T))."""
    ### BEGIN SOLUTION
    B, T, _ = scores.shape
    positions = torch.arange(T, device=scores.device)  # 0 .. T-1 in Python (the lecture's 1 .. T)
    i, j = positions[:, None], positions[None, :]  # queries down the rows, keys along the columns
    causal = j <= i  # (T, T): no future
    real_keys = positions[None, :] < lengths[:, None].to(scores.device)  # (B, T): key j is a real token
    allowed = causal[None, :, :] & real_keys[:, None, :]  # (B, T, T): both must allow; padding masks keys
    e = scores.masked_fill(~allowed, float("-inf"))  # exp(-inf) = 0
    empty = ~allowed.any(dim=-1, keepdim=True)  # (B, T, 1): a query with no key at all (an empty sentence)
    e = e.masked_fill(empty, 0.0)  # the softmax of a row of -inf would be 0/0 = NaN
    weights = torch.softmax(e, dim=-1)  # over the keys j: each row sums to 1
    weights = weights.masked_fill(empty, 0.0)  # no key: weights 0 and output 0 (torch 2.5 and later do the same)
    output = weights @ values  # h_i = sum_j alpha_ij v_j
    return output, weights
    ### END SOLUTION


# %%
result_6_3 = checks.check_masked_attention(masked_attention)
### BEGIN HIDDEN TESTS
assert result_6_3.passed, result_6_3
### END HIDDEN TESTS

# %% [markdown]
# ### Your code against your hand computation (and the quiz)
#
# The quiz's matrix as a batch of one sentence of length 3, through your `masked_attention`;
# then the four weights you computed by hand, side by side. The quiz's answer, $\alpha_{2,2}$
# (lesson 06, section 2; the lecture notes give the question, not its answer), must come out of
# both: padding a *later* token changes nothing for query 2.

# %%
import math

quiz_scores = torch.tensor([[[1.0, 0, -1, -1], [1, 1, -1, 0], [0, 1, 1, -1], [-1, -1, 2, 1]]])
try:
    _, code_weights = masked_attention(quiz_scores, torch.eye(4)[None], torch.tensor([3]))
    hand = by_hand()
    for name, value in hand.items():
        i, j = int(name[-2]), int(name[-1])
        print(f"{name}: by hand {value:.4f}, by your code {code_weights[0, i - 1, j - 1].item():.4f}")
    print(f"the quiz's answer alpha_22 = 0.5: by hand {hand['alpha_22']:.4f}")
except NotImplementedError:
    print("Exercises 6.2 and 6.3 are not done yet.")

# %% [markdown]
# ## Exercise 6.4: what leaks (the experiment)
#
# Run your `masked_attention` on a batch, then change, by adding **100.0** to every entry, the
# values a real query should not see or not all see, and measure how far the outputs
# $\mathbf{h}_i$ of the *real* tokens move (the largest absolute change of any entry). Return
# a dict of three numbers (Python floats):
#
# * `'padding'`: add 100.0 to the values at every **padding** position (`j >= lengths[b]`, in
#   every sentence); the largest change of the real outputs (`i < lengths[b]`);
# * `'last token'`: add 100.0 to the value of the **last real token** of sentence 1 (`values[0]`,
#   position `lengths[0] - 1`); the largest change of that token's own output;
# * `'last token, earlier queries'`: the same change; the largest change of the outputs of
#   sentence 1's earlier real tokens (positions before `lengths[0] - 1`).
#
# Then answer the question below from your numbers: a quiz (its cell's code is collapsed, since it
# holds the feedback of every option: open it only after you have answered), then in words.

# %%
# Exercise 6.4: what leaks
import torch


def leak_test(masked_attention, scores, values, lengths):
    """{'padding': ..., 'last token': ..., 'last token, earlier queries': ...}: how far the real outputs move."""
    output, _ = masked_attention(scores, values, lengths)
    ### BEGIN SOLUTION
    positions = torch.arange(scores.shape[1], device=values.device)
    real = positions[None, :] < lengths[:, None].to(values.device)  # (B, T): the real queries
    padded = values.clone()
    padded[~real] += 100.0  # change every padding value
    moved_padding = (masked_attention(scores, padded, lengths)[0] - output).abs()[real].max().item()
    last = lengths[0].item() - 1  # sentence 1's last real token
    changed = values.clone()
    changed[0, last] += 100.0
    moved = (masked_attention(scores, changed, lengths)[0] - output).abs()[0]  # (T, d_v)
    return {
        "padding": moved_padding,
        "last token": moved[last].max().item(),
        "last token, earlier queries": moved[:last].max().item(),
    }
    ### END SOLUTION


# %%
result_6_4 = checks.check_leak_test(leak_test)
### BEGIN HIDDEN TESTS
assert result_6_4.passed, result_6_4
### END HIDDEN TESTS

# %% jupyter={"source_hidden": true}
from course_lib.notebook import quiz

g = torch.Generator().manual_seed(0)
batch_scores, batch_values = torch.randn(3, 6, 6, generator=g), torch.randn(3, 6, 4, generator=g)
batch_lengths = torch.tensor([6, 3, 4])
try:
    moved = leak_test(masked_attention, batch_scores, batch_values, batch_lengths)
    for change, amount in moved.items():
        print(f"change the {change:<28}: the real outputs move by at most {amount:.3g}")
    options = {"A": "only the last token's own output", "B": "every real output", "C": "no real output"}
    answer = "A"  # what a right mask does; the numbers above are your own, for the feedback
    quiz.MultipleChoice(
        "Change the value of sentence 1's last real token: which real outputs move?",
        options,
        answer=answer,
        feedback={
            "A": "Your numbers: only the last query sees the last key (every earlier query has it in its future).",
            "B": "Look at 'last token, earlier queries': the earlier queries cannot see it (the causal mask).",
            "C": "Look at 'last token': the last query attends to itself.",
        },
        key="06 what leaks",
    ).show()
except NotImplementedError:
    print("Exercise 6.3 or 6.4 is not done yet.")

# %% [markdown]
# **Your answer** (replace the text below, from your numbers): which changes moved which real
# outputs, and why? Which mask stops each leak?
#
# ### BEGIN SOLUTION
# Changing the padding moved no real output (0): the padding mask gives every padded key the
# score $-\infty$, so its weight is exactly 0 for every query. Changing sentence 1's last real
# token moved only that token's own output: it attends to itself, while every earlier query has
# it in its future and the causal mask hides it from them (their change is 0 as well).
# ### END SOLUTION

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="06"))
