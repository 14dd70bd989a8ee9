# %% [markdown]
# # Lesson 05: attention, from the seq2seq bottleneck to heatmaps
#
# **Learning goals.** After this lesson you can
# 1. say why an encoder-decoder RNN that squeezes the whole input into one vector (the
#    **bottleneck**) fails on long inputs;
# 2. compute attention as a *weighted average* of values, with weights from a softmax over
#    query-key scores, and relate it to mean-pooling and to a soft table lookup;
# 3. write the score functions of the lectures (dot product, scaled dot product, bilinear
#    $s^\top W h$) and of Bahdanau et al. 2015 (additive, $v^\top \tanh(W_q s + W_k h)$);
# 4. train encoder-decoders with teacher forcing, decode greedily, and measure exact-match
#    accuracy against input length, with and without attention (the shape of Bahdanau's figure);
# 5. read an alignment heatmap, including alignments that cross, and say what it does not show;
# 6. compute self-attention by hand (the UKP lecture's "Thinking Machines"), give the shapes of
#    8-head attention with $d_{model} = 512$, and measure why the scores are divided by $\sqrt{d_k}$;
# 7. read the lectures' different notations side by side: row or column vectors, Fitzgibbon's GRU
#    and his attention without $W^V$, and which decoder state is the query (Bahdanau or Luong).
#
# In the exercises (`exercises/05_attention.ipynb`) you write the attention step of this
# lesson's decoder yourself, train it on the dates, and read your own model's heatmap.
#
# The task is a real translation that runs offline: lists of dates, from English to French,
# character by character, written with the Unicode CLDR locale data that the `babel` package
# ships. "Saturday, February 15, 1969" becomes "samedi 15 février 1969": weekday and month
# names change, and the day and the month swap places.

# %%
import math
import statistics

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import course_lib
from course_lib import dates
from course_lib.attention import MultiHeadAttention, scaled_dot_product_attention
from course_lib.dates import build_vocab, make_pairs, split_dates
from course_lib.notebook import viz
from course_lib.rnn import GRUCell
from course_lib.seq2seq import (
    Seq2Seq,
    Seq2SeqConfig,
    encode_pairs,
    exact_match_by_length,
    load_checkpoint,
    seq2seq_loss,
    translate,
)
from course_lib.train import evaluating, fit, make_batches

device = course_lib.setup(seed=0, threads=1)  # one thread: on small shared CPUs it is often the fastest

# %% [markdown]
# ## 1. Mean-pooling, weighted averaging, attention
#
# The lecture (CS224N) builds attention in three steps. Take a set of **value** vectors
# $h_1, \dots, h_n$, say the encoder's states for 4 input words, here in 2 dimensions so we can
# look at them.
#
# * **Mean-pooling** summarises them as $\frac{1}{n}\sum_j h_j$: every word counts the same.
# * **Weighted averaging**: $\sum_j \alpha_j h_j$ with $\alpha_j \ge 0$, $\sum_j \alpha_j = 1$.
# * **Attention** computes the weights from a **query** $q$: score each value (its **key**)
#   by similarity with $q$, and turn the scores into weights with a softmax:
#
# $$e_j = q \cdot h_j, \qquad \alpha_j = \mathrm{softmax}(e)_j = \frac{\exp(e_j)}{\sum_{j'} \exp(e_{j'})}, \qquad c = \sum_j \alpha_j h_j$$
#
# It is a *soft lookup* in a table: a hard lookup returns the one value whose key matches the
# query; attention returns a blend, mostly of the best matches, and it is differentiable.

# %%
words = ["date", "month", "day", "year"]
h = torch.tensor([[1.0, 0.2], [0.1, 1.2], [-1.0, 0.3], [0.3, -1.1]], device=device)  # h_j, one row per word
q = torch.tensor([0.2, 2.0], device=device)  # a query that looks for something like "month"

mean_pooled = h.mean(dim=0)
e = h @ q  # e_j = q . h_j
alpha = torch.softmax(e, dim=0)
c = alpha @ h  # c = sum_j alpha_j h_j
for word, score, weight in zip(words, e.tolist(), alpha.tolist()):
    print(f"{word:>6}: score e_j = {score:+.2f}   weight alpha_j = {weight:.3f}")
print("mean-pooling:", np.round(mean_pooled.tolist(), 3), "  attention output c:", np.round(c.tolist(), 3))
assert math.isclose(alpha.sum().item(), 1.0, rel_tol=1e-6)
assert words[int(alpha.argmax())] == "month"  # the best-matching key gets the largest weight

# %% [markdown]
# Galerne's lecture calls softmax a differentiable **selection mechanism**: a soft argmax. Multiply
# the scores by a growing factor $\beta$ and the weights concentrate on the best key, so $c$ moves
# from the mean towards the single best value. Move the slider.


# %%
def show_soft_lookup(beta):
    weights = torch.softmax(beta * e, dim=0)
    context = weights @ h
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.bar(words, weights.tolist())
    ax1.set_ylim(0, 1)
    ax1.set_title(f"weights softmax({beta:g} * e)")
    ax2.scatter(h[:, 0].cpu(), h[:, 1].cpu(), c="tab:blue")
    for word, (x, y) in zip(words, h.tolist()):
        ax2.annotate(word, (x, y), textcoords="offset points", xytext=(5, 5))
    ax2.annotate("", xy=q.tolist(), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "tab:green"})
    ax2.scatter(*mean_pooled.tolist(), marker="s", c="tab:gray", label="mean-pooling")
    ax2.scatter(*context.tolist(), marker="*", s=200, c="tab:red", label="attention output c")
    ax2.set_title("values h_j, query q (arrow), and c")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, borderaxespad=0)  # beside the plot, not on it
    # annotate() arrows do not widen the axes: set limits that hold the points and the query's tip
    every = torch.cat([h, q[None], torch.zeros(1, 2, device=h.device)]).cpu()
    low, high = every.min(0).values - 0.4, every.max(0).values + 0.4
    ax2.set_xlim(low[0].item(), high[0].item())
    ax2.set_ylim(low[1].item(), high[1].item())
    ax2.set_aspect("equal")
    (x0, x1), (y0, y1) = ax2.get_xlim(), ax2.get_ylim()
    assert x0 < q[0].item() < x1 and y0 < q[1].item() < y1  # the query arrow is drawn whole
    fig.tight_layout()
    best = words[int(weights.argmax())]
    viz.show(
        f"Left: bar chart of the attention weights over the 4 words for beta = {beta:g}, largest "
        f"{weights.max().item():.2f} on '{best}'. Right: the 4 value vectors as points, the query as an arrow, "
        f"the mean (square) and the attention output c (star) at ({context[0].item():.2f}, {context[1].item():.2f})."
    )
    return weights


lookup_explorer = viz.interactive(
    show_soft_lookup, beta=widgets.FloatLogSlider(value=1.0, min=-2, max=1.5, description="beta")
)

# %%
flat, sharp = torch.softmax(0.01 * e, dim=0), torch.softmax(30 * e, dim=0)
print(f"beta = 0.01: weights {np.round(flat.tolist(), 3)} (almost mean-pooling)")
print(f"beta = 30:   weights {np.round(sharp.tolist(), 3)} (almost a hard lookup of '{words[int(e.argmax())]}')")
assert torch.allclose(flat @ h, mean_pooled, atol=0.02) and torch.allclose(sharp @ h, h[e.argmax()], atol=1e-3)

# %% [markdown]
# ## 2. The task: lists of dates, English to French
#
# `course_lib.dates` writes 1 to 3 random dates (1900 to 2099) in English and in French with
# babel, joining them as each language joins lists ("X, Y, and Z" / "X, Y et Z"). The calendar
# days are split once into training, validation and test days: the test sentences hold only
# dates the model never saw.

# %%
# The task the checkpoints of section 4 were trained on. Its "seed" is not a training seed: it fixes
# which calendar days are held out, so with another one some of the checkpoints' training days would be test days.
TASK = {"seed": 0, "max_dates": 3, "source_locale": "en_US", "target_locale": "fr_FR", "format": "full"}
vocab = build_vocab((TASK["source_locale"], TASK["target_locale"]), TASK["format"])
print(f"{len(vocab)} ids: {vocab.itos[:3]} then {''.join(vocab.itos[3:])!r}")
for source, target in make_pairs(4, "train", **TASK):
    print(f"{source}\n  -> {target}")

days = split_dates(TASK["seed"])
print({split: len(d) for split, d in days.items()}, "calendar days per split")
test = make_pairs(450, "test", **TASK)
train_days = set(days["train"].tolist())
assert not any(d.toordinal() in train_days for example in test.dates for d in example)  # held out
source_lengths = [len(s) for s in test.sources]
print(f"test sources: {min(source_lengths)} to {max(source_lengths)} characters")

# %% [markdown]
# ## 3. The encoder-decoder and its bottleneck
#
# The lecture (Penn CIS 7000, Mayur Naik) writes $c = h_n^e$, $h_0^d = c$,
# $h_i^d = g(\hat y_{i-1}, h_{i-1}^d, c)$ and $\hat y_i = \mathrm{softmax}(h_i^d)$, with $g$ "some flavor of
# RNN". Our model makes $g$ a GRU (lesson 04) whose input is $[\hat y_{i-1}; c]$ (in code, the
# embedding of the previous character: the true one in training, section 4, and the model's own
# most likely one when it decodes, section 5, not the distribution $\hat y_{i-1}$), and adds an output
# layer $W_{out}$ that reads $[h_i^d; c]$ (CS224N's last step: concatenate the attention output with the
# decoder state), since $h_i^d$ has `hidden_size` numbers, not one per character:
#
# $$h_j^e = \mathrm{GRU}_{enc}(x_j, h_{j-1}^e), \qquad c = h_n^e, \qquad h_0^d = c$$
# $$h_i^d = g([\hat y_{i-1}; c], h_{i-1}^d), \qquad \hat y_i = \mathrm{softmax}(W_{out} [h_i^d; c])$$
#
# Everything the decoder knows about the input is $c = h_n^e$, one vector of `hidden_size`
# numbers, however long the input. With **attention**, each decoding step $i$ gets its own context:
#
# $$e_{ij} = \mathrm{score}(h_{i-1}^d, h_j^e), \qquad \alpha_{ij} = \mathrm{softmax}_j(e_{ij}), \qquad c_i = \sum_j \alpha_{ij} h_j^e$$
#
# The query comes from one sequence (the decoder's state) and the keys and values from another
# (the encoder's states): CS224N calls this **cross-attention**, attention going *across* from the
# decoder back to the encoder. In lesson 06 and in lesson 07's GPT, queries, keys and values all
# come from the same sequence: **self-attention** (lesson 07b comes back to cross-attention, in a
# transformer encoder-decoder).
#
# CS224N names the bottleneck as the first of three issues of recurrent models. The other two:
# **linear interaction distance** (two positions $n$ steps apart meet only through $n$ applications of
# the recurrence, so distant dependencies are hard to learn: lessons 02b and 04 measure how the gradient
# fades over those steps) and the **lack of parallelizability** (step $t$ waits for step $t - 1$;
# lesson 07b counts and times it against a transformer). Attention as here shortens the path from each
# decoding step to every encoder state to one step; the encoder's own states are still computed one
# after another. Removing the recurrence as well is what self-attention does (lessons 06 and 07).
#
# `course_lib.seq2seq.Seq2Seq` is this model, and its parts carry the equations' names:
# `encoder` (an `nn.GRU`, giving every $h_j^e$), `tgt_embed` (the embedding of $y_{i-1}$),
# `decoder` (an `nn.GRUCell` whose input is $[y_{i-1}; c_i]$) and `out` ($W_{out}$ on
# $[h_i^d; c_i]$). How one decoding step computes $c_i$ is what you write in exercise 5.2, so
# the lesson does not print it; below we only call the model.

# %%
example_model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention="dot"), device=device)
for name, part in example_model.named_children():
    print(f"{name:>10}: {part}")

# %% [markdown]
# ### Score functions
#
# With $s = h_{i-1}^d$ the query and $h = h_j^e$ a key, and where each comes from (CS224N's
# "attention variants" slide is a figure that its notes do not transcribe, so it is not cited here):
#
# | name | score$(s, h)$ | parameters | source |
# | --- | --- | --- | --- |
# | dot product | $s^\top h$ | none (needs the same size) | CS224N, Penn, Fitzgibbon |
# | scaled dot product | $s^\top h / \sqrt{d}$ | none (the transformer's, `course_lib.attention`) | UKP, Galerne, CS224N (Vaswani et al. 2017) |
# | bilinear ("general") | $s^\top W h$ | $W$ | Penn ("more sophisticated": $h W h$) |
# | additive | $v^\top \tanh(W_q s + W_k h)$ | $W_q, W_k, v$ | Bahdanau et al. 2015 (no lecture writes it out) |
#
# All four are in `Seq2SeqConfig(attention=...)`. Below, one decoder state and the encoder states
# of a real sentence, scored by each (untrained) variant: each gives a distribution over the source.
# We also check the scaled path against PyTorch's fused `F.scaled_dot_product_attention`.

# %%
example_src, example_len = dates.batch(vocab, ["Saturday, February 15, 1969"], device=device)
INITS = range(5)  # five random initialisations of each untrained model
largest = {}
for attention in ("dot", "scaled", "bilinear", "additive"):
    largest[attention] = []
    for init in INITS:
        torch.manual_seed(init)
        model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention=attention), device=device)
        with evaluating(model):
            states, last, mask = model.encode(example_src, example_len)
            context, weights = model.context(last, states, mask, last)  # the first step's query: h_0^d = h_n^e
        assert math.isclose(weights.sum().item(), 1.0, rel_tol=1e-5)  # a distribution over the source
        largest[attention].append(weights.max().item())
        if attention == "scaled":  # the same operation as PyTorch's fused kernel and course_lib.attention's
            fused = F.scaled_dot_product_attention(last[:, None], states, states, attn_mask=mask[:, None])[:, 0]
            explicit = scaled_dot_product_attention(last[:, None], states, states, mask=mask[:, None])[0][:, 0]
            assert torch.allclose(context, fused, atol=1e-5) and torch.allclose(context, explicit, atol=1e-5)
    n_params = sum(p.numel() for p in model.score.parameters())
    print(
        f"{attention:>9}: {n_params:5d} score parameters; largest weight over {len(INITS)} initialisations: "
        f"mean {np.mean(largest[attention]):.3f}, min {min(largest[attention]):.3f}, max {max(largest[attention]):.3f}"
    )
uniform = 1 / example_len.item()
print(f"uniform weight over the {example_len.item()} source positions: {uniform:.3f}")

# %% [markdown]
# Compare the largest weight of "dot" and "scaled" (over the five initialisations, min to max):
# this is the evidence for scaling. The plain dot product of two 128-dimensional states puts far
# more weight on its favourite position before any training (the softmax is closer to
# saturated), while the scaled one, the same scores divided by $\sqrt{128}$, stays
# much nearer the uniform weight (printed last) over all five initialisations. Section 7 measures why: the spread of $q \cdot k$ grows with the
# dimension.
#
# ## 4. Training: teacher forcing, live and from a checkpoint
#
# The decoder is trained with **teacher forcing**: at step $i$ it reads the *true* previous
# character $y_{i-1}$ (not its own guess), and the loss is the mean cross-entropy of each next
# character. `course_lib.train.fit` (the course's one training loop) runs it. Live, for a few
# seconds each, we train both kinds of model on single dates and plot the loss (one run each,
# so read it as this run only).

# %%
live = make_pairs(2000, "train", n_dates=1, **{k: v for k, v in TASK.items() if k != "max_dates"})
live_tensors = encode_pairs(live.sources, live.targets, vocab, device=device)
live_runs = {}
for attention in ("none", "dot"):
    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig.for_vocab(vocab, attention=attention), device=device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = make_batches(*live_tensors, batch_size=64, generator=torch.Generator().manual_seed(0))
    live_runs[attention] = fit(
        model, seq2seq_loss, optimizer, batches, epochs=5, max_seconds=12, clip_grad_norm=1.0, desc=f"live: {attention}"
    )

# %%
fig, ax = plt.subplots(figsize=(6.5, 4))
for attention, history in live_runs.items():
    ax.plot(history.step, history.smoothed_loss(5), label=f"attention = {attention}")
ax.axhline(math.log(len(vocab)), color="gray", linestyle=":", label="uniform guess, ln |V|")
ax.set(xlabel="step", ylabel="cross-entropy per character (nats)", title="A few seconds of live training")
ax.set_ylim(bottom=0)
ax.legend()
ends = {attention: history.smoothed_loss(5)[-1] for attention, history in live_runs.items()}
viz.show(
    "Training loss (cross-entropy per character) against step for a few seconds of live training, "
    + ", ".join(f"attention = {a}: {live_runs[a].loss[0]:.2f} to {ends[a]:.2f}" for a in live_runs)
    + f"; the dotted line is the uniform guess, {math.log(len(vocab)):.2f}."
)
for attention, history in live_runs.items():
    print(
        f"{attention:>5} (in this run): {len(history.step)} steps in {history.seconds:.0f} s, "
        f"loss {history.loss[0]:.2f} -> {history.smoothed_loss(5)[-1]:.2f}"
    )

# %% [markdown]
# A few seconds of training is short. `scripts/train_seq2seq.py` runs the same
# loop for longer on lists of 1 to 3 dates and saves small checkpoints (`course_lib.checkpoint`
# files: weights without pickle, with the config, the vocabulary and what the run measured in
# the header); we load them. The model without attention saw as many training examples as the
# one with attention (checked below), so any advantage of attention does not come from more
# examples. The two were not trained alike otherwise: the model without attention ran once, while
# the attention model's training was continued twice, each time from a lower learning rate (its
# runs, batch sizes and learning rates are printed below), and took more CPU minutes. In every run
# the script decays the learning rate linearly from the printed value to a tenth of it.
# Each checkpoint is **one model from one seed**: what sections 4 to 6 measure on them is
# what these two models do, not an average over seeds (three seeds of each would
# cost three times the CPU minutes printed below, per model; that is not done here).
#
# How well does each fit the training distribution? We measure it the same way for both: the
# teacher-forced loss (mean cross-entropy per character) on the same 300 sentences of 3 dates
# each, drawn afresh from the training days (not taken from the training set, which the script
# draws separately with 1 to 3 dates per sentence).

# %%
models, infos = {}, {}
for name in ("none", "dot"):
    models[name], ckpt, ckpt_vocab = load_checkpoint(name, device=device)
    infos[name] = info = ckpt.info
    if info["task"] != TASK or ckpt_vocab.itos != vocab.itos:
        raise ValueError(
            f"the checkpoint {name!r} was trained on the task {info['task']}, not on this TASK {TASK}. "
            "Keep TASK as in section 2 to use the shipped checkpoints (with another seed, some of their "
            "training days would be your test days)."
        )
    print(
        f"attention = {name:>4}: hidden size {models[name].config.hidden_size}, "
        f"{info['examples_seen']:,} training examples in {len(info['runs'])} run(s), {info['train_minutes']} CPU minutes"
    )
    for run in info["runs"]:
        print(
            f"    {run['steps']} steps of batch {run['batch_size']}, learning rate {run['lr']} decaying to {run['lr'] / 10:g}"
        )
print(
    "the model without attention saw at least as many examples:",
    infos["none"]["examples_seen"] >= infos["dot"]["examples_seen"],
)

three = make_pairs(300, "train", n_dates=3, **{k: v for k, v in TASK.items() if k != "max_dates"})
three_batch = encode_pairs(three.sources, three.targets, vocab, device=device)
fit_loss = {}
for name, model in models.items():
    with evaluating(model):
        fit_loss[name] = seq2seq_loss(model, three_batch).item()
    print(
        f"attention = {name:>4}: teacher-forced loss on 3-date sentences of training days {fit_loss[name]:.3f} nats/char"
    )
print(
    f"in this run the bottleneck model's loss is {fit_loss['none'] / fit_loss['dot']:.1f} times the attention model's"
)

# %% [markdown]
# ## 5. Accuracy against input length (Bahdanau et al.'s figure)
#
# Bahdanau et al. plotted translation quality (BLEU) against sentence length, for models trained on
# sentences of up to 30 or 50 words (the Penn notes show these results): without attention
# ("RNNenc-30", "RNNenc-50") it falls as sentences grow; with attention ("RNNsearch", whose scores
# were *additive*) it falls much less, and RNNsearch-50 does not fall even past 50 words. Our
# attention model uses plain dot-product scores and a one-directional GRU encoder, while
# RNNsearch's encoder was bidirectional (each $h_j$ joins a forward and a backward state, so it
# has read the whole sentence), built of the gated units of Cho et al. 2014, the GRU (Galerne's
# notes say an LSTM). So ours is not RNNsearch, only its idea. We decode
# the held-out test sentences greedily (each step feeds back the most likely character) and count
# a translation as right only if every character is.
#
# The sources come in three groups of lengths, one per number of dates, with gaps between them
# where no sentence exists. We cut each group in two at its median length; the lines of the plot
# stop at the gaps.

# %%
groups = {k: [n for n, d in zip(source_lengths, test.dates) if len(d) == k] for k in (1, 2, 3)}
EDGES = sorted({e for g in groups.values() for e in (min(g), int(statistics.median(g)), max(g) + 1)})
predictions, weights, by_length = {}, {}, {}
for name, model in models.items():
    predictions[name], weights[name] = translate(model, test.sources, vocab)
    by_length[name] = exact_match_by_length(test.sources, predictions[name], test.targets, EDGES)
in_bin = [[n for n in source_lengths if low <= n < high] for low, high in zip(EDGES, EDGES[1:])]
labels = [f"{min(b)}-{max(b)}" if b else "" for b in in_bin]  # the lengths that occur in each bin
full = [i for i, b in enumerate(in_bin) if b]  # the bins between the groups are empty
assert all(not in_bin[i] for i in range(len(in_bin)) if i not in full) and len(full) == 6
rows = [[labels[i], len(in_bin[i])] + [by_length[name][i][2] for name in models] for i in full]
print(viz.table(rows, header=["source length", "examples", "without attention", "with attention"], floatfmt="{:.1%}"))
overall = {name: np.mean([p == t for p, t in zip(predictions[name], test.targets)]) for name in models}
print({name: f"{acc:.1%}" for name, acc in overall.items()}, "exact match on all", len(test), "test sentences")

# %%
# NaN in an empty bin: matplotlib breaks the line there instead of joining lengths no sentence has
centres = [np.mean(b) if b else np.nan for b in in_bin]
ax = viz.line_plot(
    centres,
    {
        "without attention (like Bahdanau's RNNenc)": [r[2] for r in by_length["none"]],
        "with dot-product attention (RNNsearch used additive scores)": [r[2] for r in by_length["dot"]],
    },
    xlabel="source length (characters)",
    ylabel="exact-match accuracy",
    title="Held-out dates: accuracy against input length",
)
for k, g in groups.items():
    ax.axvspan(min(g) - 0.5, max(g) + 0.5, color="gray", alpha=0.08)
    ax.text(  # above the plot, where it hides no point
        (min(g) + max(g)) / 2,
        1.01,
        f"{k} date{'s' if k > 1 else ''}",
        ha="center",
        va="bottom",
        fontsize=8,
        transform=ax.get_xaxis_transform(),
    )
ax.set_ylim(-0.02, 1.02)
ax.set_title(ax.get_title(), pad=16)  # room for the band labels
# where both models score the same the points coincide: hollow circles around filled squares keep both visible
ax.lines[0].set(marker="o", markersize=11, markerfacecolor="none", markeredgewidth=1.5)
ax.lines[1].set(marker="s", markersize=5)
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, borderaxespad=0)  # beside the plot, not on it
viz.show(
    "Exact-match accuracy on held-out dates against source length, for the two checkpoints: without attention "
    + ", ".join(f"{r[2]:.0%}" for r in by_length["none"] if r[3])
    + "; with attention "
    + ", ".join(f"{r[2]:.0%}" for r in by_length["dot"] if r[3])
    + " (shortest to longest bin; grey bands: 1, 2 and 3 dates; without attention hollow circles, with attention"
    " filled squares)."
)

# %% [markdown]
# The Penn lecture's claims (Bahdanau et al.'s results), against these two checkpoints (one
# model each; the numbers are in the table above and printed below):
#
# * without attention, accuracy falls with the length of the input: this model's single vector
#   $h_n^e$ carries one date well, not two or three (whether a wider $h_n^e$ would carry more is
#   not measured here: see "What to try");
# * with attention it falls much less, and here it is better than without attention at every
#   length beyond a single date, with no more training examples.
#
# Our attention model does not *hold* on the longest inputs as Bahdanau's RNNsearch-50 did. It is
# small (the hidden size printed in section 4) and was trained for the CPU minutes printed there;
# whether longer training would close the gap is not measured here. Try it: `python
# scripts/train_seq2seq.py --attention dot --init dot --out
# course_lib/weights/seq2seq_dot_longer.safetensors` continues its training (without `--out` the
# script stops rather than overwrite the checkpoint this lesson loads), from the script's default
# learning rate 0.003 unless you pass a lower `--lr`; read it back with `load_checkpoint("dot_longer")`.

# %%
acc = {name: [by_length[name][i][2] for i in full] for name in models}
labels, counts = [labels[i] for i in full], [len(in_bin[i]) for i in full]
longer = [i for i in range(2, len(labels)) if counts[i] >= 20]  # the bins beyond one date
print(f"without attention: {acc['none'][0]:.1%} on the shortest inputs, {acc['none'][-1]:.1%} on the longest")
print(f"with attention:    {acc['dot'][0]:.1%} on the shortest inputs, {acc['dot'][-1]:.1%} on the longest")
print(
    "with minus without attention, by length:", [f"{labels[i]}: {acc['dot'][i] - acc['none'][i]:+.1%}" for i in longer]
)
print(
    "with attention better in every bin beyond one date (in this run):",
    all(acc["dot"][i] > acc["none"][i] for i in longer),
)

# %% [markdown]
# ## 6. Heatmaps: what the decoder looks at
#
# Row $i$ of $\alpha$ is a distribution over the source characters: where decoding step $i$
# looks. Bahdanau et al. drew these matrices for English-French sentences; here is the one of
# our attention checkpoint (one model) for a test sentence. What it shows is computed in
# the code cell after it, for this model: the year's digits look inside
# the English year; the month's letters mostly look inside the English month name; the day and the month
# **cross** (French writes the day first); but the weekday is mostly *not* read where it stands:
# more of its letters put their largest weight on the end marker ⏎, whose encoder state has read
# the whole sentence, than inside the English weekday. Attention is a soft pointer the model may
# use or not, not a guaranteed alignment.


# %%
def show(ch):
    return "␣" if ch == " " else ch


def draw_alignment(i, step=None, ax=None):
    """Heatmap of example i's attention weights; ``step`` highlights one decoding step."""
    source, output, w = test.sources[i], predictions["dot"][i], weights["dot"][i]
    out_chars = list(output) + ["</s>"]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(0.22 * len(source) + 2, 18), min(0.22 * len(out_chars) + 1.5, 14)))
    viz.attention_heatmap(
        w,
        keys=[show(c) for c in source + "⏎"],
        queries=[show(c) for c in out_chars],
        annotate=False,
        ax=ax,
        title=f"test sentence {i}: attention weights",
    )
    ax.set_xlabel("source character j (English; ⏎ = end)")
    ax.set_ylabel("output character i (French)")
    if step is not None:
        ax.axhline(step - 0.5, color="white", linestyle="--")
        ax.axhline(step + 0.5, color="white", linestyle="--")
    return ax


one_date = next(i for i, d in enumerate(test.dates) if len(d) == 1 and predictions["dot"][i] == test.targets[i])
print(test.sources[one_date], "->", predictions["dot"][one_date])
draw_alignment(one_date)
viz.show(
    f"Heatmap of the attention checkpoint's weights for test sentence {one_date}, {test.sources[one_date]!r}: "
    "rows are the French output characters plus the end </s>, columns the English source characters plus "
    "the end marker; "
    "the bright cells show where each output character looks (what it shows is counted in the next cell)."
)

# %% [markdown]
# The crossing, checked: in the source the month comes before the day; the French output writes
# the day first, and the decoder looks at the day's first digit to write it, then back at the month
# (the cell checks where the first character of the day and of the month look; the other
# characters need not look at the one they write, as the heatmap's rows show).


# %%
def argmax_source(i, out_pos):
    return int(weights["dot"][i][out_pos].argmax())


def crossing(i):
    """True when the French day is read after the English month position and the month before the day."""
    d = test.dates[i][0]
    source, output = test.sources[i], predictions["dot"][i]
    day_out, month_out = output.index(f" {d.day} ") + 1, output.index(" ", output.index(f" {d.day} ") + 1) + 1
    looks_day, looks_month = argmax_source(i, day_out), argmax_source(i, month_out)
    return (
        looks_month < looks_day,
        (day_out, looks_day, source[looks_day]),
        (month_out, looks_month, source[looks_month]),
    )


def where_it_looks(i, word_out, word_src):
    """For each character of ``word_out`` in the output: does it look inside ``word_src`` of the source?"""
    source, output = test.sources[i], predictions["dot"][i]
    o, s_ = output.index(word_out), source.index(word_src)
    return [s_ <= argmax_source(i, o + k) < s_ + len(word_src) for k in range(len(word_out))]


d = test.dates[one_date][0]
source_end = len(test.sources[one_date])  # the end marker's column
english = {"weekday": d.strftime("%A"), "month": d.strftime("%B"), "year": str(d.year)}
french = dict(zip(english, predictions["dot"][one_date].split(" ")[0:1] + predictions["dot"][one_date].split(" ")[2:4]))
looks = {part: where_it_looks(one_date, french[part], english[part]) for part in english}
weekday_out = predictions["dot"][one_date].index(french["weekday"])
on_end = [argmax_source(one_date, weekday_out + k) == source_end for k in range(len(french["weekday"]))]
for part in english:
    print(f"{part:>7}: {french[part]!r} looks inside {english[part]!r} for {sum(looks[part])} of {len(looks[part])}")
print(f"weekday: {sum(on_end)} of its {len(on_end)} letters look most at the end marker")

crosses, day_info, month_info = crossing(one_date)
print(
    f"output position {day_info[0]} (the day) looks most at source position {day_info[1]} ({day_info[2]!r}); "
    f"output position {month_info[0]} (the month) at source position {month_info[1]} ({month_info[2]!r})"
)
correct_single = [i for i, d in enumerate(test.dates) if len(d) == 1 and predictions["dot"][i] == test.targets[i]]
share = np.mean([crossing(i)[0] for i in correct_single])
print(f"crossing alignments in {share:.0%} of the {len(correct_single)} correctly translated single dates")

# %% [markdown]
# Explore: pick a test sentence and a decoding step. The bar chart is row `step` of the heatmap:
# the weights $\alpha_{ij}$ that step spreads over the source characters, each bar under its
# heatmap column (the two share the x axis and its labels).


# %%
def explore(example, step):
    source, output = test.sources[example], predictions["dot"][example]
    step = min(step, len(output))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 9), gridspec_kw={"height_ratios": [3, 1]})
    draw_alignment(example, step, ax=ax1)
    ax1.set_aspect("auto")  # the image fills its axes' width, so column j sits at x = j in both panels
    ax1.tick_params(labelsize=7)  # one label per character: at the default size, neighbours overlap
    ax2.bar(range(len(source) + 1), weights["dot"][example][step].tolist(), width=0.8)
    ax2.set_xticks(range(len(source) + 1), [show(c) for c in source + "⏎"], fontsize=7)
    ax2.set_xlim(ax1.get_xlim())  # the heatmap's columns run from -0.5 to len + 0.5: the same x range
    written = (output + "⏎")[step]
    ax2.set_title(f"step {step}: writing {show(written)!r} after {output[:step]!r}")
    ax2.set_ylabel("alpha")
    fig.tight_layout()
    top_box, bottom_box = ax1.get_position(), ax2.get_position()  # the heatmap's colour bar narrowed ax1:
    ax2.set_position([top_box.x0, bottom_box.y0, top_box.width, bottom_box.height])  # give ax2 the same width
    top = int(weights["dot"][example][step].argmax())
    viz.show(
        f"Top: the attention heatmap of test sentence {example}, step {step} marked by dashed lines. Bottom: "
        f"the weights of step {step} (writing {show(written)!r}) over the source characters, largest "
        f"{weights['dot'][example][step].max().item():.2f} at position {top} ({show((source + '⏎')[top])!r})."
    )
    print("without attention this model wrote:", predictions["none"][example])
    print("the reference is:                   ", test.targets[example])


# The default sentence: the first one of more than one date that the model without attention gets wrong
# and the one with attention gets right.
first_40 = range(40)
wrong_without = [i for i in first_40 if predictions["none"][i] != test.targets[i]]
start_with = next(
    (i for i in wrong_without if len(test.dates[i]) > 1 and predictions["dot"][i] == test.targets[i]), 0
)  # (sentence 0 if there is none)
print(f"without attention, {len(wrong_without)} of the {len(first_40)} sentences below are wrong")
explorer = viz.interactive(
    explore,
    example=widgets.Dropdown(
        options=[(s[:60], i) for i, s in enumerate(test.sources[:40])], value=start_with, description="sentence"
    ),
    step=widgets.IntSlider(value=2, min=0, max=90, description="step"),
)

# %% [markdown]
# ## 7. `course_lib.attention`: the same operation, for transformers
#
# Lessons 06 and 07 use attention without an RNN: queries, keys and values are all projections
# of the inputs, the scores are scaled by $\sqrt{d_k}$, and several heads run side by side.
# `course_lib.attention` has an explicit path (what the equations say) and a fast path through
# PyTorch's fused kernel; both must agree with `torch.nn.MultiheadAttention`.
#
# ### Self-attention by hand: "Thinking Machines" (UKP Lab)
#
# The UKP lecture's example (its figure comes from Jay Alammar's *Illustrated Transformer*):
# two words, "Thinking" and "Machines", each projected to a query, a key and a value of
# $d_k = 64$ numbers. The lecture notes keep only the result, "the output vector for the word
# 'Thinking' ... is $0.88\,v_1 + 0.12\,v_2$"; the scores behind it are in Alammar's figure, which
# the notes do not transcribe: for the query of "Thinking", the dot products with the two keys are
# $q_1 \cdot k_1 = 112$ and $q_1 \cdot k_2 = 96$; divided by $\sqrt{d_k} = 8$ they are 14 and 12,
# and the softmax gives 0.88 and 0.12.

# %%
qk = torch.tensor([112.0, 96.0])  # q_1 . k_1, q_1 . k_2 (the figure's numbers)
d_k = 64
e_thinking = qk / math.sqrt(d_k)  # scaled scores
alpha_thinking = torch.softmax(e_thinking, dim=0)
v_words = torch.randn(2, d_k, generator=torch.Generator().manual_seed(0))  # v_1, v_2 (any values)
z_thinking = alpha_thinking @ v_words  # z_1 = sum_j alpha_1j v_j
rounded = [round(a, 2) for a in alpha_thinking.tolist()]
print("scores", qk.tolist(), "-> divided by sqrt(d_k):", e_thinking.tolist(), "-> softmax:", rounded)
assert e_thinking.tolist() == [14.0, 12.0] and rounded == [0.88, 0.12]
assert torch.allclose(z_thinking, alpha_thinking[0] * v_words[0] + alpha_thinking[1] * v_words[1])

# %% [markdown]
# ### The shapes: $d_{model} = 512$, $d_k = 64$, 8 heads
#
# The UKP lecture's dimensions ("in the previous example, $d_1 = 512$, $d_q = d_k = d_v = 64$,
# $m = 8$"): each head projects the 512 numbers of a word to 64 for its query, key and value;
# the 8 heads' outputs (8 x 64 = 512) are concatenated and projected by $W^O$ (512 x 512).
# `course_lib.attention.MultiHeadAttention` (a drop-in for torch's, so its arguments keep torch's
# names: `embed_dim` is $d_{model}$, `num_heads` is $m$) stores the 8 heads' $W^Q, W^K, W^V$ stacked.

# %%
d_model, n_heads = 512, 8
mha = MultiHeadAttention(d_model, n_heads, batch_first=True, device=device)
X_words = torch.randn(1, 2, d_model, device=device)  # (B, T, d_model): "Thinking Machines"
W_Q, W_K, W_V = mha.in_proj_weight.split(d_model)  # each (d_model, d_model) = 8 heads of (d_k, d_model)
head = 0
W_Q_head = W_Q[head * mha.head_dim : (head + 1) * mha.head_dim].T  # (512, 64): the UKP lecture's W^Q of head 0
q_head = X_words @ W_Q_head  # (1, 2, 64)
out, w_heads = mha(X_words, X_words, X_words, average_attn_weights=False)
shapes = {  # the 2 words' vectors stacked as rows: x_1, x_2 -> X; q_1, q_2 -> Q
    "X = [x_1; x_2]": tuple(X_words.shape[1:]),
    "W^Q (one head)": tuple(W_Q_head.shape),
    "Q = [q_1; q_2] (one head)": tuple(q_head.shape[1:]),
    "weights (8 heads of 2 x 2)": tuple(w_heads.shape[1:]),
    "W^O": tuple(mha.out_proj.weight.shape),
    "output (2 words)": tuple(out.shape[1:]),
}
for name, shape in shapes.items():
    print(f"{name:>27}: {shape}")
assert mha.head_dim == 64 and shapes["W^Q (one head)"] == (512, 64) and shapes["Q = [q_1; q_2] (one head)"] == (2, 64)
assert shapes["weights (8 heads of 2 x 2)"] == (8, 2, 2) and shapes["W^O"] == (512, 512)
assert shapes["output (2 words)"] == (2, 512)
n_mha = sum(p.numel() for p in mha.parameters())
print(f"parameters: 4 x 512 x 512 weights + 4 x 512 biases = {n_mha:,}")
assert n_mha == 4 * d_model * d_model + 4 * d_model

# %% [markdown]
# ### Why scale by $\sqrt{d_k}$?
#
# The UKP lecture: "to avoid the dot product to become too large for larger $d_k$" (CS224N: the
# scores are "scaled down by a function of the dimension and the number of heads"; with
# $d_k = d_{model} / m$ the two say the same). Measured: for
# query and key components drawn independently with mean 0 and variance 1, $q \cdot k$ is a sum
# of $d_k$ terms of variance 1, so its variance is $d_k$. The softmax of such scores
# **saturates**: one weight near 1, the others near 0, and its gradient (which is
# $\alpha_j(\delta_{jk} - \alpha_k)$) nearly vanishes. Dividing by $\sqrt{d_k}$ brings the
# variance back to 1 whatever $d_k$.

# %%
g = torch.Generator().manual_seed(0)
scaling_rows = []
for d in (4, 16, 64, 256, 1024):
    q_s, k_s = torch.randn(2000, 1, d, generator=g), torch.randn(2000, 10, d, generator=g)  # 2000 queries, 10 keys
    raw = (q_s * k_s).sum(-1)  # (2000, 10): q . k
    row = [d, raw.var().item()]
    for scores in (raw, raw / math.sqrt(d)):
        scores = scores.clone().requires_grad_(True)
        a = torch.softmax(scores, dim=-1)
        a[:, 0].sum().backward()  # how much the first weight can still move with the scores
        row += [a.max(-1).values.mean().item(), scores.grad.abs().mean().item()]  # largest weight per query, averaged
    scaling_rows.append(row)
header = ["d_k", "var(q.k)", "mean largest weight", "mean |grad|", "mean largest, scaled", "mean |grad|, scaled"]
print(viz.table(scaling_rows, header=header, floatfmt="{:.3f}"))
for d, var, *_ in scaling_rows:
    assert 0.85 * d < var < 1.15 * d  # the variance grows like d_k
assert scaling_rows[-1][2] > 0.9 and scaling_rows[-1][3] < scaling_rows[0][3] / 3  # saturated, small gradients
assert max(r[4] for r in scaling_rows) - min(r[4] for r in scaling_rows) < 0.05  # scaled: the same at every d_k

# %% [markdown]
# ### The library's two paths

# %%
torch.manual_seed(0)
x = torch.randn(2, 10, 32, device=device)  # (B, T, C)
theirs = nn.MultiheadAttention(32, 4, batch_first=True, device=device).eval()
ours = MultiHeadAttention.from_torch(theirs).eval()
out_theirs, w_theirs = theirs(x, x, x)
out_ours, w_ours = ours(x, x, x)  # need_weights=True: the explicit path
out_fused, _ = ours(x, x, x, need_weights=False)  # torch's fused kernel
print(
    "largest difference, ours vs torch:",
    (out_ours - out_theirs).abs().max().item(),
    "  explicit vs fused:",
    (out_ours - out_fused).abs().max().item(),
)
assert torch.allclose(out_ours, out_theirs, atol=1e-5) and torch.allclose(w_ours, w_theirs, atol=1e-5)
assert torch.allclose(out_ours, out_fused, atol=1e-5)
q_, k_, v_ = torch.randn(3, 2, 4, 128, 16, device=device)
assert torch.allclose(
    scaled_dot_product_attention(q_, k_, v_)[0], F.scaled_dot_product_attention(q_, k_, v_), atol=1e-5
)

# %% [markdown]
# How much faster is the fused path? `python benchmarks/bench_attention.py` times both at
# T = 128 and 512 and writes the ratios to `benchmarks/RESULTS.md`.
#
# ## 8. The lectures' notations, side by side
#
# The lecture notes write the same operations in different ways. Four differences matter when
# you read them next to this code.
#
# ### Row vectors or column vectors
#
# The UKP lecture (like Vaswani et al.) writes **row** vectors: $\mathbf{q}_i = \mathbf{x}_i W^Q$ with
# $W^Q$ of shape $(d_{model}, d_k)$, and notes that the column form is also common. Fitzgibbon writes
# **column** vectors: $Q \mathbf{h}_t$ with $Q$ of shape $(d_k, d_{model})$, and so does Galerne's
# lecture ($Q = W_Q X$, with $X$ of shape $(d_{in}, T)$, one column per token, and $W_Q$ of shape
# $(k, d_{in})$). One is the transpose of the other.
# `torch.nn.Linear` stores Fitzgibbon's matrix (`weight` is `(out, in)`) and computes the row form
# `x @ weight.T`, so `weight.T` is the UKP lecture's $W^Q$.

# %%
torch.manual_seed(0)
project = nn.Linear(6, 3, bias=False)  # d_model = 6 -> d_k = 3
x_row = torch.randn(1, 6)  # one token as a row vector x_i
W_Q_ukp = project.weight.T  # (d_model, d_k): the UKP lecture's W^Q
Q_fitzgibbon = project.weight  # (d_k, d_model): Fitzgibbon's Q
q_rows = x_row @ W_Q_ukp  # q_i = x_i W^Q, a row (1, 3)
q_column = Q_fitzgibbon @ x_row.T  # Q h_t, a column (3, 1)
for name, result in (("x_i W^Q", q_rows), ("Q h_t", q_column), ("nn.Linear(x_i)", project(x_row))):
    print(f"{name:>14}, shape {tuple(result.shape)}: {np.round(result.tolist(), 4).tolist()}")
assert torch.allclose(q_rows, q_column.T) and torch.allclose(q_rows, project(x_row))

# %% [markdown]
# ### Fitzgibbon's attention layer: no $W^V$
#
# Fitzgibbon's lectures project the hidden states to queries and keys only:
#
# $$a_{t,k} = (Q \mathbf{h}_t + \mathbf{b}_Q) \cdot (K \mathbf{h}_k + \mathbf{b}_K), \qquad
#   \mathbf{y}_t = \sum_k \mathrm{softmax}_k(a_{t,k})\, \mathbf{h}_k$$
#
# The values are the hidden states themselves (no $W^V$; in his layered transformer, the
# normalised states $\hat{\mathbf{h}}_k^l$) and the scores are not divided by $\sqrt{d}$. It is
# the UKP lecture's attention with $W^V$ the identity and the scale 1, and with biases
# $\mathbf{b}_Q, \mathbf{b}_K$ on the query and key projections (the UKP lecture's
# $\mathbf{x}_i \mathbf{W}^Q$ has none): below, his formula written out, against PyTorch's
# fused attention given $V = H$ and `scale=1.0`.

# %%
torch.manual_seed(0)
T_f, d_f, d_qk = 5, 6, 4
H_f = torch.randn(T_f, d_f)  # h_1 .. h_T as rows
to_query, to_key = nn.Linear(d_f, d_qk), nn.Linear(d_f, d_qk)  # Q, b_Q and K, b_K
with torch.no_grad():
    a_f = to_query(H_f) @ to_key(H_f).T  # a_{t,k} = (Q h_t + b_Q) . (K h_k + b_K)
    Y_f = torch.softmax(a_f, dim=-1) @ H_f  # y_t = sum_k softmax(a_t)_k h_k: the values are the h_k
    fused_f = F.scaled_dot_product_attention(to_query(H_f), to_key(H_f), H_f, scale=1.0)
print(
    f"y_t has the width of h_t ({tuple(Y_f.shape)}); largest difference from torch's fused path: "
    f"{(Y_f - fused_f).abs().max().item():.1e}"
)
assert Y_f.shape == H_f.shape and torch.allclose(Y_f, fused_f, atol=1e-5)

# %% [markdown]
# ### Fitzgibbon's GRU, and torch's
#
# Our encoder and decoder are torch's GRU. Fitzgibbon writes a gated unit with two gates:
# $\mathbf{a}_f = \sigma(W_{xf}\mathbf{x} + \mathbf{b}_{hf} + W_{hf}\mathbf{h}_{prev})$ scales the
# previous state, $\tilde{\mathbf{h}} = \mathbf{a}_f * \mathbf{h}_{prev}$, before the candidate
# $\tilde{\mathbf{h}}' = \phi(W_x \mathbf{x} + W_h \tilde{\mathbf{h}} + \mathbf{b}_h)$, and
# $\mathbf{a}_o$ blends: $\mathbf{h}' = \mathrm{gate}(\mathbf{a}_o, \mathbf{h}_{prev}, \tilde{\mathbf{h}}')$.
# His notes do not define $\mathrm{gate}$; reading it as $\mathrm{gate}(a, u, v) = a * u + (1 - a) * v$
# (our reading, not his notes'), his $\mathbf{a}_f$ is torch's reset gate $r$, his $\mathbf{a}_o$ torch's
# update gate $z$, and his last line is torch's $h' = z * h + (1 - z) * n$.
# One difference remains: he multiplies by the reset gate *before* the matrix $W_h$ (as Cho et
# al. 2014 did), torch *after* it, $n = \tanh(W_{in} x + b_{in} + r * (W_{hn} h + b_{hn}))$.
# With the same weights the two give different states (lesson 04 compares them in depth); the
# one `nn.GRUCell` computes is torch's. The gates below come from `course_lib.rnn.GRUCell.gates`
# (torch's equations; lesson 04's exercise 4.2 has you write that step yourself), and only the
# candidate is recomputed in Fitzgibbon's order:

# %%
torch.manual_seed(0)
cell = nn.GRUCell(3, 4)
ours_cell = GRUCell.from_torch(cell)
x_g, h_g = torch.randn(1, 3), torch.randn(1, 4)
W_in, W_hn = cell.weight_ih.chunk(3)[2], cell.weight_hh.chunk(3)[2]  # the candidate's block (order r, z, n)
b_in, b_hn = cell.bias_ih.chunk(3)[2], cell.bias_hh.chunk(3)[2]
with torch.no_grad():
    g = ours_cell.gates(ours_cell.input_projection(x_g), h_g)  # {"r", "z", "n", "h"}: torch's step
    a_f_gate, a_o_gate = g["r"], g["z"]  # Fitzgibbon's a_f = torch's r, his a_o = torch's z
    n_fitzgibbon = torch.tanh(x_g @ W_in.T + b_in + (a_f_gate * h_g) @ W_hn.T + b_hn)  # reset before W_h
    h_fitzgibbon = a_o_gate * h_g + (1 - a_o_gate) * n_fitzgibbon  # gate(a_o, h_prev, candidate)
    h_cell = cell(x_g, h_g)
print(
    f"torch's order (GRUCell.gates) vs nn.GRUCell: {(g['h'] - h_cell).abs().max().item():.1e}; "
    f"Fitzgibbon's order vs nn.GRUCell: {(h_fitzgibbon - h_cell).abs().max().item():.3f}"
)
assert torch.allclose(g["h"], h_cell, atol=1e-6)

# %% [markdown]
# ### Which decoder state asks: Bahdanau or Luong
#
# | attention | query of step $i$ | order | output |
# | --- | --- | --- | --- |
# | Bahdanau et al. 2015 (this lesson, exercise 5.2) | $h_{i-1}^d$, the state *before* step $i$ | attend, then update $h_i^d = g([y_{i-1}; c_i], h_{i-1}^d)$ | from $y_{i-1}$, $h_i^d$ and $c_i$ (this lesson: $[h_i^d; c_i]$) |
# | Luong et al. 2015 | $h_i^d$, the state *after* step $i$'s update | update $h_i^d = g(y_{i-1}, h_{i-1}^d)$, then attend | from $\tilde h_i = \tanh(W_c [c_i; h_i^d])$ |
#
# (Luong's "input feeding" variant also gives the update the previous step's $\tilde h_{i-1}$
# beside $y_{i-1}$.) Of the lectures, the Penn notes write Bahdanau's order, scoring
# $h_{i-1}^d$ against $h_j^e$, and so does Galerne's ($c_t$ from $s_{t-1}$, then
# $s_t = f(s_{t-1}, y_{t-1}, c_t)$). CS224N's equations are figures that its notes do not
# transcribe, but its text reads as Luong's order (our reading of the notes; its "we then pass
# this attention output into the decoder RNN to generate the sequence" goes straight on to
# $\hat y_1$, the output distribution, so we read it as the output step): only "sometimes"
# is the attention output fed "into the decoder to generate a new query vector, in addition to
# the regular input" (Luong's input feeding; by default the update does not read it), and the
# last step concatenates "the attention output with the decoder hidden state" (Luong's
# $[c_i; h_i^d]$). So the lectures differ here; this lesson takes the Penn notes' and Galerne's
# order, Bahdanau's, and its $W_{out}$ reads $[h_i^d; c_i]$ as in CS224N's last step.
#
# > **Left out: Luong's decoder in code.** The checkpoint was trained in Bahdanau's order, and a
# > Luong-order step on Bahdanau-trained weights would only show a broken model, not Luong's
# > method. Exercise 5.2 writes Bahdanau's order; its check names Luong's order when you mix the
# > two. Luong et al. also introduced the "general" (bilinear) score of section 3's table.

# %% [markdown]
# ## Closing note: accuracy by length
#
# On held-out dates, exact-match accuracy of greedy decoding, by length of the English input,
# for the two checkpoints (one model each, one seed: what these two models do, not an average;
# computed above, printed again here):

# %%
print(viz.table(rows, header=["source length", "examples", "without attention", "with attention"], floatfmt="{:.1%}"))

# %% [markdown]
# ## What to try
#
# * Train the other variants: `python scripts/train_seq2seq.py --attention additive` (or
#   `bilinear`, `scaled`; at the default 3000 steps each takes CPU minutes like those printed
#   in section 4), then load them with `load_checkpoint("additive")` and compare the heatmaps.
#   Which one is sharpest in your runs? With one run of each, a difference may not survive
#   another seed.
# * Give the model without attention a bigger bottleneck: `python scripts/train_seq2seq.py
#   --attention none --hidden 512 --out course_lib/weights/seq2seq_none512.safetensors` (without
#   `--out` the script stops rather than overwrite the checkpoint this lesson loads), then
#   `load_checkpoint("none512")`.
#   Does the curve flatten?
# * Translate into ISO dates (`target_locale="iso"` in `make_pairs`) or from German
#   (`source_locale="de_DE"`: `build_vocab` must see both locales).
# * Decode sentences of 4 dates (`make_pairs(..., n_dates=4)`), one date more than any training
#   sentence held. Which model degrades, and where do the attention weights go?
# * Then do the exercises: `exercises/05_attention.ipynb`.
