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
# # Lesson 05 exercises: attention
#
# You write the attention step of the lesson's encoder-decoder, train it on the dates task, and
# read your own model's attention. A warm-up first (Bahdanau's scorer), then the build (the
# decoder with attention, about 15 lines), then the experiment (your heatmap and a question on
# it). Each exercise is followed by a check that calls your function on fresh random inputs and
# says **passed**, **not implemented yet**, or **failed** with a hint about the likely mistake.
# Replace each `raise NotImplementedError(...)` with your code and run the cell below it. The
# lesson notebook `notebooks/05_attention.ipynb` explains everything used here.
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
# In every exercise but 5.3 (which may use any package), your functions may call Python's standard library, torch
# and numpy, and print, display, plot or show progress; a check refuses an answer that calls any
# other installed package, such as `pandas`, `sympy` or `nltk` (importing one is fine). 5.2 builds the masked
# softmax, so numpy's masked arrays (`numpy.ma`), `torch.masked` and torch's nested tensors are refused too.

# %%
import course_lib
from course_lib.checks import lesson05 as checks

device = course_lib.setup(seed=0, threads=1)  # one thread: on small shared CPUs it is often the fastest

# %% [markdown]
# ## Exercise 5.1: additive attention
#
# Bahdanau et al. (2015) scored with a small neural network instead of a dot product. With the
# decoder state $s$ (the query, shape `(B, d_q)`) and the encoder states $h_j$ (the keys,
# shape `(B, T, d_k)`):
#
# $$e_j = v^\top \tanh(W_q\, s + W_k\, h_j)$$
#
# where $W_q$ has shape `(a, d_q)`, $W_k$ shape `(a, d_k)` and $v$ shape `(a,)`. Return the
# `(B, T)` scores (the softmax comes after, as in exercise 5.2). Broadcasting computes every $j$
# at once: $W_q s$ is `(B, a)`, $W_k h_j$ for all $j$ is `(B, T, a)`. Write it with tensor
# operations: course_lib's `AdditiveScore` (the lesson's scorer) is out of reach while the check runs.

# %%
# Exercise 5.1: additive (Bahdanau) attention scores
import torch


def additive_scores(query, keys, W_q, W_k, v):
    """e_j = v . tanh(W_q s + W_k h_j): query (B, d_q), keys (B, T, d_k) -> scores (B, T)."""
    ### BEGIN SOLUTION
    projected_query = query @ W_q.T  # (B, a)
    projected_keys = keys @ W_k.T  # (B, T, a)
    return torch.tanh(projected_query.unsqueeze(1) + projected_keys) @ v  # (B, T, a) @ (a,) -> (B, T)
    ### END SOLUTION


# %%
result = checks.check_additive_scores(additive_scores)
### BEGIN HIDDEN TESTS
assert result.passed, result
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5.2: the decoder with attention (the build)
#
# The lesson's encoder reads the English characters and gives one state per position,
# `states` of shape `(B, T_in, H)` (padded sentences: position $j$ of sentence $b$ is real when
# `j < lengths[b]`; `lengths` counts the end marker). Write the decoder that reads them with
# **attention**, step by step, with teacher forcing. The lesson's equations, with the scaled dot
# product as the score (as in the transformer, lessons 06 and 07):
#
# $$h_0^d = h_n^e \quad\text{(the last real encoder state of each sentence)}$$
# $$e_{ij} = \frac{h_{i-1}^d \cdot h_j^e}{\sqrt{H}}, \qquad
#   \alpha_{ij} = \mathrm{softmax}_j(e_{ij}) \;\text{(padding } j \ge n \text{ gets } e_{ij} = -\infty), \qquad
#   c_i = \sum_j \alpha_{ij}\, h_j^e$$
# $$h_i^d = \mathrm{GRUCell}([y_{i-1}; c_i],\, h_{i-1}^d), \qquad \text{logits}_i = W_{out}\,[h_i^d; c_i]$$
#
# The model's parts you need: `model.tgt_embed` (the embedding of the previous character
# $y_{i-1}$, which is `tgt_in[:, i]`: BOS, then the target), `model.decoder` (an `nn.GRUCell`
# whose input is $[y_{i-1}; c_i]$) and `model.out` (the `nn.Linear` $W_{out}$ on $[h_i^d; c_i]$).
# Return the logits `(B, T_out, V)` and the weights `(B, T_out, T_in)`, row $i$ being $\alpha_i$.
# Write the attention yourself: torch's and course_lib's ready-made attention are out of reach
# while the check runs. Make the tensors you create (an `arange` for the padding, say) on
# `states.device`: the check runs on the CPU, but the training below runs on the GPU when there is one.

# %%
# Exercise 5.2: the decoder with attention
import math

import torch


def decode(model, states, lengths, tgt_in):
    """Teacher-forced decoding with scaled dot-product attention: (logits (B, T_out, V), weights (B, T_out, T_in))."""
    ### BEGIN SOLUTION
    B, T_in, H = states.shape
    device = states.device  # new tensors go where the states are (the GPU, when training runs there)
    real = torch.arange(T_in, device=device)[None, :] < lengths[:, None].to(device)  # (B, T_in): real positions
    hidden = states[torch.arange(B, device=device), lengths - 1]  # h_0^d = h_n^e, each sentence's last real state
    embedded = model.tgt_embed(tgt_in)  # (B, T_out, E): y_{i-1} for every step, known in advance
    outputs, weights = [], []
    for i in range(tgt_in.shape[1]):
        e_i = (states * hidden[:, None, :]).sum(-1) / math.sqrt(H)  # e_ij = h_{i-1}^d . h_j^e / sqrt(H)
        e_i = e_i.masked_fill(~real, float("-inf"))  # padding gets weight exp(-inf) = 0
        alpha_i = torch.softmax(e_i, dim=-1)  # over the source positions j
        c_i = (alpha_i[:, :, None] * states).sum(1)  # c_i = sum_j alpha_ij h_j^e, (B, H)
        hidden = model.decoder(torch.cat([embedded[:, i], c_i], dim=-1), hidden)  # h_i^d
        outputs.append(torch.cat([hidden, c_i], dim=-1))  # [h_i^d; c_i]
        weights.append(alpha_i)
    logits = model.out(torch.stack(outputs, dim=1))  # W_out [h_i^d; c_i] for every step at once
    return logits, torch.stack(weights, dim=1)
    ### END SOLUTION


# %%
result_5_2 = checks.check_decode(decode)
### BEGIN HIDDEN TESTS
assert result_5_2.passed, result_5_2
### END HIDDEN TESTS

# %% [markdown]
# ### Your decoder in the lesson's model, trained
#
# The lesson's `Seq2Seq` with `attention="none"` has every part your decoder uses (an encoder,
# `tgt_embed`, `decoder`, `out`); the class below keeps its encoder and replaces its decoding
# loop by yours. Then `course_lib.train.fit`, the course's training loop, trains it on single
# dates, English to French, with teacher forcing. (It runs once your decoder passes its check,
# and prints how long it took.) It stops after 250 steps or `MAX_SECONDS`, whichever comes
# first: on a busy machine the time cap may stop it early, before the attention has learnt
# to align, and the cell then says so: raise `MAX_SECONDS` and run it again before you read
# your heatmap.

# %%
from course_lib.dates import build_vocab, make_pairs
from course_lib.seq2seq import Seq2Seq, Seq2SeqConfig, encode_pairs, seq2seq_loss
from course_lib.train import fit, make_batches


class AttentionSeq2Seq(Seq2Seq):
    """The lesson's encoder, your decoder."""

    def forward(self, src, src_lengths, tgt_in):
        states, _, _ = self.encode(src, src_lengths)
        return decode(self, states, src_lengths.to(src.device), tgt_in)


TASK = {"seed": 0, "source_locale": "en_US", "target_locale": "fr_FR", "format": "full"}
vocab = build_vocab((TASK["source_locale"], TASK["target_locale"]), TASK["format"])
train_pairs = make_pairs(4000, "train", n_dates=1, **TASK)
batches = make_batches(
    *encode_pairs(train_pairs.sources, train_pairs.targets, vocab, device=device),
    batch_size=64,
    generator=torch.Generator().manual_seed(0),
)
MAX_SECONDS = 45  # the time cap: raise it if the cell says the training was cut short
torch.manual_seed(0)
model = AttentionSeq2Seq(Seq2SeqConfig.for_vocab(vocab, attention="none", hidden_size=64), device=device)
if result_5_2.passed:
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = fit(
        model,
        seq2seq_loss,
        optimizer,
        batches,
        epochs=5,
        max_steps=250,
        max_seconds=MAX_SECONDS,
        clip_grad_norm=1.0,
        desc="your decoder",
    )
    print(
        f"in this run: {len(history.step)} steps in {history.seconds:.0f} s, loss {history.loss[0]:.2f} -> "
        f"{history.smoothed_loss(10)[-1]:.3f} nats per character"
    )
    if len(history.step) < 250:
        print(
            f"the time cap stopped the training after {len(history.step)} of 250 steps (a busy machine): the "
            f"attention may not align yet; set MAX_SECONDS = {int(MAX_SECONDS * 250 / len(history.step)) + 10} "
            "and run this cell again before you read your heatmap"
        )
else:
    print("Exercise 5.2 does not pass yet: the model is not trained (come back once it does).")

# %% [markdown]
# ## Exercise 5.3: your model's attention on one sentence (the experiment)
#
# Write `alignment(model, source, target, vocab)`: the attention matrix of the model (yours,
# trained above) for one English `source` and its French `target`, teacher-forced, as a tensor
# of shape `(len(target) + 1, len(source) + 1)`: one row per decoding step (the characters of
# the target, then the end), one column per source character (then the end marker). Use
# `encode_pairs([source], [target], vocab, device=...)` (it gives `src, src_lengths, tgt_in, tgt_out`)
# and the model itself: `model(src, src_lengths, tgt_in)` returns your decoder's `(logits, weights)`.
# Give `encode_pairs` the model's device, `next(model.parameters()).device`: the check runs on the
# CPU, but your trained model is on the GPU when there is one, and the heatmap below uses it.

# %%
# Exercise 5.3: the attention matrix of one sentence
import torch

from course_lib.seq2seq import encode_pairs


def alignment(model, source, target, vocab):
    """The model's weights alpha for one sentence: (len(target) + 1, len(source) + 1)."""
    ### BEGIN SOLUTION
    device = next(model.parameters()).device
    src, src_lengths, tgt_in, _ = encode_pairs([source], [target], vocab, device=device)
    with torch.no_grad():
        _, weights = model(src, src_lengths, tgt_in)  # (1, T_out, T_in)
    return weights[0]  # the one sentence: (T_out, T_in)
    ### END SOLUTION


# %%
result_5_3 = checks.check_alignment(alignment)
### BEGIN HIDDEN TESTS
assert result_5_3.passed, result_5_3
### END HIDDEN TESTS

# %% [markdown]
# ### Read it
#
# Your trained model on a date it never saw (a test date). Look at the heatmap, then answer:
# while it writes the **French day number** (the digits after the weekday), where does the
# decoder look most in the English sentence? The answer the quiz accepts is read from *your*
# model's weights, so it is the one your heatmap shows.

# %%
import matplotlib.pyplot as plt

from course_lib.notebook import quiz, viz

test_pairs = make_pairs(20, "test", n_dates=1, **TASK)
source, target = test_pairs[3]
if result_5_2.passed and result_5_3.passed:
    w = alignment(model, source, target, vocab)
    fig, ax = plt.subplots(figsize=(0.24 * len(source) + 2.5, 0.24 * len(target) + 2))
    viz.attention_heatmap(
        w,
        keys=list(source) + ["⏎"],
        queries=list(target) + ["⏎"],
        annotate=False,
        ax=ax,
        title="your decoder's attention weights (one colour scale, 0 to the largest weight)",
    )
    ax.set(xlabel="English source character j (⏎ = end)", ylabel="French output character i")
    day = str(test_pairs.dates[3][0].day)
    day_row = target.index(f" {day} ") + 1  # the first digit of the French day
    looked = int(w[day_row].argmax())
    words = {"the English weekday": source.index(","), "the English month": source.index(" ", source.index(",") + 2)}
    words["the English day number"] = source.index(",", words["the English month"])
    words["the year"] = len(source)
    words["the end marker ⏎"] = len(source) + 1
    part = next(name for name, end in words.items() if looked < end)  # the word that holds the argmax column
    viz.show(  # the text says what is drawn, not where the day looks: that is the quiz's question below
        f"Heatmap of your decoder's attention for {source!r} -> {target!r}: rows are the French characters "
        f"(row {day_row} writes the first digit of the day {day!r}), columns the English ones, then the end marker."
    )
    question = quiz.MultipleChoice(
        f"Writing the first digit of the French day ({day!r}), where does your decoder look most?",
        {chr(65 + k): name for k, name in enumerate(words)},
        answer=chr(65 + list(words).index(part)),
        feedback={chr(65 + k): f"Your heatmap: row {day_row} puts its largest weight in {part}." for k in range(5)},
        key="05 your heatmap: the French day",
    )
    question.show()
else:
    print("Exercises 5.2 and 5.3 do not pass yet: no model to read.")

# %% [markdown]
# **Your answer** (replace the text below, in two or three sentences, from your heatmap): section 6
# of the lesson read the course's checkpoint; does your own model read the sentence the same way?
# Does its French day look at the English day although it stands elsewhere in the sentence (does
# the alignment **cross**)? Where do its weekday's letters look? Try another test sentence
# (`test_pairs[k]`) before you answer.
#
# ### BEGIN SOLUTION
# Reading the heatmap of the trained decoder: the French day's digits put their largest weight on
# the English day's digits, which come *after* the month in English and *before* it in French,
# so the alignment crosses; the month and the year look at their English counterparts. The
# weekday's letters are spread out or sit on the end marker: the French weekday is not a copy of
# one English word's letters, and the encoder's last state has read the whole date. (What a
# given run shows can differ: the quiz above reads the answer from your own weights.)
# ### END SOLUTION

# %% [markdown]
# ## Your results
#
# One line per exercise, the latest result of each.

# %%
from course_lib.checks import summary

print(summary(lesson="05"))
