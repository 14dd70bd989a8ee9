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
# # Lesson 01 exercises: n-grams and perplexity
#
# You build an n-gram language model yourself: count its n-grams, smooth them with add-$k$,
# measure its perplexity the standard way (Exercises 1.1 and 1.2), then choose $k$ on
# held-out text and read the curve (Exercise 1.3). Two short exercises follow: perplexity
# from natural logs, and sampling with a temperature.
#
# Each exercise is followed by a check. A check calls your function on fresh inputs and says
# **passed**, **not implemented yet**, or **failed** with a hint about the likely mistake.
# Replace each `raise NotImplementedError(...)` with your code and run the cell below it. Write
# them yourself, with Python's own tools (lists, dicts, `collections.Counter`, `math`) and numpy: the checks of
# 1.1, 1.2, 1.4 and 1.5 refuse an answer that calls `course_lib` or `nltk`, whose counts, smoothing and models
# are what you build.
# The lesson notebook `notebooks/01_ngrams.ipynb` explains everything used here.
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
# In every exercise but 1.3 (which may use any package), your functions may call Python's standard library, torch
# and numpy, and print, display, plot or show progress; a check refuses an answer that calls any
# other installed package, such as `pandas`, `sympy` or `nltk` (importing one is fine).

# %%
import course_lib
from course_lib.checks import lesson01 as checks
from course_lib.notebook import viz

course_lib.setup(seed=0)

# %% [markdown]
# ## Exercise 1.1: the n-grams of the standard count (warm-up)
#
# An n-gram model predicts each token from the $n-1$ tokens before it. The standard count
# (Jurafsky & Martin ch. 3; SRILM and KenLM score the same tokens, though they write a single
# `<s>`, as the lesson says) pads each sentence with $n-1$ start symbols `<s>` on the left, which
# are context only and never predicted, and **one** end symbol `</s>` on the right, which is
# predicted. Every word and the `</s>` is then the last token of one
# n-gram: a sentence of $L$ words gives $L + 1$ n-grams, whatever $n$ is.
#
# Leave `sentence` unchanged (pad a copy). `count_ngrams(["the", "union"], 3)` gives
# `Counter({("<s>", "<s>", "the"): 1, ("<s>", "the", "union"): 1, ("the", "union", "</s>"): 1})`.

# %%
# Exercise 1.1: the n-grams of the standard count
from collections import Counter


def count_ngrams(sentence, n):
    """Counter of the n-grams (tuples) that end at each word and at the one </s> of `sentence`."""
    ### BEGIN SOLUTION
    padded = ["<s>"] * (n - 1) + list(sentence) + ["</s>"]
    return Counter(tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded)))
    ### END SOLUTION


# %%
result = checks.check_count_ngrams(count_ngrams)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.2: an add-k n-gram model and its perplexity
#
# Write the whole model in one function: train it on `train`, measure it on `test` (both are
# lists of sentences, each a list of tokens), return the perplexity.
#
# 1. **Vocabulary.** $V$ holds every token the model can predict: the training words, `</s>`
#    and `<UNK>`. A test word never seen in training becomes `<UNK>`. `<s>` is not in $V$:
#    it is never predicted.
# 2. **Counts.** Pad every training sentence as in Exercise 1.1 and count, for each n-gram
#    $h\,w$ that ends at a word or at `</s>`, $c(h\,w)$ and its context $c(h)$.
# 3. **Add-k.** $P(w \mid h) = \dfrac{c(h\,w) + k}{c(h) + kV}$ (an unseen context has $c(h) = 0$).
# 4. **Perplexity.** Pad each test sentence the same way and score every word and every `</s>`:
#    $N$ = the number of words plus the number of sentences (one `</s>` each),
#    $J = -\frac{1}{N}\sum_i \log_2 P(w_i \mid h_i)$, return $2^J$.

# %%
# Exercise 1.2: an add-k n-gram model and its perplexity
import math
from collections import Counter


def add_k_perplexity(train, test, n, k):
    """Perplexity on `test` of an add-k n-gram model trained on `train` (the standard count)."""
    ### BEGIN SOLUTION
    vocab = {w for sentence in train for w in sentence} | {"</s>", "<UNK>"}
    V = len(vocab)

    def pad(sentence):
        return ["<s>"] * (n - 1) + [w if w in vocab else "<UNK>" for w in sentence] + ["</s>"]

    counts, context_counts = Counter(), Counter()
    for sentence in train:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            counts[tuple(padded[i - n + 1 : i + 1])] += 1
            context_counts[tuple(padded[i - n + 1 : i])] += 1
    log_prob, N = 0.0, 0
    for sentence in test:
        padded = pad(sentence)
        for i in range(n - 1, len(padded)):
            ngram = tuple(padded[i - n + 1 : i + 1])
            p = (counts[ngram] + k) / (context_counts[ngram[:-1]] + k * V)
            log_prob += math.log2(p)
            N += 1
    return 2 ** (-log_prob / N)
    ### END SOLUTION


# %%
result = checks.check_add_k_perplexity(add_k_perplexity)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# Now on real text: the lesson's State of the Union addresses (a slice of them, so that your
# pure-Python model runs in a second). `course_lib`'s `NGramLM` counts the same way, so once
# your function passes, the two numbers agree.

# %%
from course_lib.corpora import load_sotu
from course_lib.ngram import NGramLM

corpus = load_sotu(level="word")
train, val = corpus.train[:2000], corpus.val[:500]
print(f"{sum(map(len, train)):,} training words, {sum(map(len, val)):,} validation words")
try:
    yours = add_k_perplexity(train, val, 2, 0.01)
    library = NGramLM(2, "add-k", k=0.01).fit(train).perplexity(val)
    print(f"add-k bigram (k = 0.01), validation perplexity: yours {yours:.2f}, NGramLM {library:.2f}")
except NotImplementedError:
    print("(finish Exercise 1.2 to see this)")

# %% [markdown]
# ## Exercise 1.3: choose k on held-out text
#
# $k$ is a choice we make on **validation** text, never on the test set. Write `tune_k`: for
# each $k$ in `ks` compute the validation perplexity with `perplexity(train, val, n, k)` (the
# check hands you a correct one; below you pass yours), and return the pair
# `(best_k, perplexities)`: the $k$ with the lowest validation perplexity, and the list of
# perplexities in the order of `ks` (which need not be sorted).

# %%
# Exercise 1.3: tuning k on held-out text
import numpy as np


def tune_k(train, val, n, ks, perplexity):
    """(best k, [validation perplexity for each k in ks]) of add-k n-gram models."""
    ### BEGIN SOLUTION
    perplexities = [perplexity(train, val, n, k) for k in ks]
    best_k = ks[int(np.argmin(perplexities))]
    return best_k, perplexities
    ### END SOLUTION


# %%
result = checks.check_tune_k(tune_k)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# Run it with your own model on the slice above, for the bigram and the trigram, and plot
# validation perplexity against $k$ (log scales).

# %%
ks = [0.001, 0.003, 0.01, 0.03, 0.1, 1.0]
try:
    tuned = {n: tune_k(train, val, n, ks, add_k_perplexity) for n in (2, 3)}
    for n, (best_k, ppl) in tuned.items():
        print(f"{n}-gram: best k = {best_k} (validation perplexity {min(ppl):.1f}); at k = 1: {ppl[-1]:.1f}")
    ax = viz.line_plot(
        ks,
        {f"{n}-gram": ppl for n, (_, ppl) in tuned.items()},
        xlabel="k (pseudo-count added to every n-gram)",
        ylabel="validation perplexity",
        logy=True,
        title="Add-k: validation perplexity against k",
    )
    ax.set_xscale("log")
    viz.show(
        "Validation perplexity of add-k models against k, log scales: "
        + "; ".join(
            f"{n}-gram from {ppl[0]:.0f} at k = {ks[0]} to a minimum of {min(ppl):.0f} at k = {b} and {ppl[-1]:.0f} at k = 1"
            for n, (b, ppl) in tuned.items()
        )
    )
except NotImplementedError:
    print("(finish Exercises 1.2 and 1.3 to see this)")

# %% [markdown]
# **Question.** Read your output. Which $k$ is best for the bigram and which for the trigram?
# Why does the validation perplexity rise when $k$ grows past the best value, and why does it
# rise when $k$ shrinks below it? Why is the trigram's curve above the bigram's at every $k$?

# %% [markdown]
# ### BEGIN SOLUTION
# Both curves are U-shaped, with their minimum at a small $k$ (the printed best $k$ of this
# slice): the trigram's best $k$ is the smaller of the two. Past the best $k$, every context hands $kV$ pseudo-counts
# to its $V$ possible next words ($V$ is several thousand here), which swamps the real counts
# and spreads the probability almost uniformly; $k = 1$ (Laplace) is far on that side. Below
# the best $k$, the model trusts its counts too much: the n-grams of the validation text never
# seen in training get almost no probability, and each costs many bits. The trigram's contexts
# are much rarer than the bigram's (most are seen once or never): their counts $c(h)$ are small,
# so the same $k$ is a larger share of each, and the trigram's best $k$ is smaller. Far more of
# its validation n-grams are unseen and fall back on the pseudo-counts alone, so its curve is
# higher at every $k$: even tuned, add-k gets worse with the order, which is why the lesson
# moves on to interpolation and Kneser-Ney, which fall back on the shorter context instead.
# ### END SOLUTION

# %% [markdown]
# ## Exercise 1.4: perplexity from log-probabilities
#
# The lecture defines perplexity as $2^J$ with $J = -\frac{1}{n}\sum_i \log P(w_i \mid h_i)$ (it
# does not write the base; for $2^J$ the log is $\log_2$, $J$ in bits, as in the lesson). PyTorch
# and NumPy give **natural** logarithms (nats). Given the natural log of
# the probability of each predicted token, return the perplexity.

# %%
# Exercise 1.4: perplexity from log-probabilities
import math


def perplexity(log_probs):
    """Perplexity from a sequence of natural-log probabilities, one per predicted token."""
    ### BEGIN SOLUTION
    log_probs = list(log_probs)
    J = -sum(log_probs) / len(log_probs)  # cross-entropy in nats
    return math.exp(J)
    ### END SOLUTION


# %%
result = checks.check_perplexity(perplexity)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 1.5: sampling the next word
#
# To generate text, draw the next word from $P(w \mid h)$. A temperature $T$ reshapes the
# distribution: $q_w \propto p_w^{1/T}$ (below 1 sharper, above 1 flatter). Sample by the
# inverse of the cumulative distribution: given a uniform number $u \in [0, 1)$, return the
# first index $i$ with $q_0 + \dots + q_i > u$ (strictly greater: when $u$ equals a cumulative
# sum exactly, the answer is the next index). `probs` may be a list or a NumPy array; leave it
# unchanged.

# %%
# Exercise 1.5: sampling the next word with a temperature
import numpy as np


def sample_next(probs, temperature, u):
    """Index of the next word, drawn from probs ** (1 / temperature) with the uniform number u."""
    ### BEGIN SOLUTION
    q = np.asarray(probs, dtype=float) ** (1.0 / temperature)
    q = q / q.sum()
    index = int(np.searchsorted(np.cumsum(q), u, side="right"))
    return min(index, len(q) - 1)  # guards against rounding when u is within 1e-16 of 1
    ### END SOLUTION


# %%
result = checks.check_sample_next(sample_next)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="01"))
