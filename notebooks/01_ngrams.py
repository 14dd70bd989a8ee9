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
# # Lesson 01: language models, n-grams and perplexity
#
# **Learning goals.** After this lesson you can
# 1. write a language model as $P(w_i \mid w_1, \dots, w_{i-1})$ and apply the chain rule;
# 2. estimate n-gram probabilities from counts (maximum likelihood) and explain why unseen
#    n-grams are a problem;
# 3. fix that with add-k (Laplace), interpolation and Kneser-Ney smoothing;
# 4. compute perplexity, in bits or in nats, and read it as an average branching factor;
# 5. generate text from a model, as Shannon did in 1948.
#
# We work on real text: 2 million tokens (words and punctuation marks) of U.S. State of the
# Union addresses (1790 to today, public domain), with a fixed split into training, validation
# and test addresses that later lessons reuse: lesson 02's neural model is scored on the same
# test words as these n-grams, and lesson 07's transformer on the same validation addresses
# at the character level, next to character n-grams built the same way.

# %%
import inspect
import math
import warnings

import ipywidgets as widgets
import numpy as np
from tqdm.auto import tqdm

import course_lib
from course_lib import smoothing
from course_lib.corpora import load_sotu
from course_lib.ngram import NGramLM, ZeroProbabilityWarning
from course_lib.notebook import viz

course_lib.setup(seed=0)

# %% [markdown]
# ## 1. A language model assigns probabilities to sequences
#
# A language model gives the probability of a sequence of words; Fitzgibbon's lectures put it as
# predicting the next word, $P(w_{i+1} \mid w_1, \dots, w_i)$. By the **chain rule** (as in the
# Penn CIS 7000 lecture) the probability of a whole sequence factorises into such next-word
# predictions:
#
# $$P(w_1, \dots, w_k) = \prod_{i=1}^{k} P(w_i \mid w_{1:i-1})$$
#
# The history $w_{1:i-1}$ grows without bound, and most long histories never occur twice. The
# **Markov assumption** keeps only the last $n-1$ words:
#
# $$P(w_i \mid w_{1:i-1}) \approx P(w_i \mid w_{i-n+1:i-1})$$
#
# $n = 1$ is a unigram model, $n = 2$ a bigram model, $n = 3$ a trigram model.
#
# ## 2. The corpus
#
# The text is the U.S. State of the Union addresses, in the public domain, as transcribed by the
# [American Presidency Project](https://www.presidency.ucsb.edu/) (Gerhard Peters and John T. Woolley,
# UC Santa Barbara) and packaged by the `sotu` package.

# %%
corpus = load_sotu(level="word")
print(corpus.summary())
total_words = sum(corpus.n_tokens(split) for split in ("train", "val", "test"))
print(f"{total_words:,} tokens in all")
assert total_words > 1.9e6  # "2 million tokens", as promised above
print()
for sentence in corpus.train[1000:1003]:
    print(" ".join(sentence))

# %% [markdown]
# Each sentence is a list of lower-cased tokens (punctuation marks are tokens too). The split
# is by address: every tenth address is validation, the next one test, so the held-out
# addresses span all eras. Words seen only once in training become `<UNK>`
# (`unk_cutoff=2`), so the model learns how likely an unknown word is, and test words it
# never saw get that probability instead of zero.
#
# ## 3. Maximum likelihood: probabilities from counts
#
# The Penn CIS 7000 lecture (Mayur Naik) trains a model $P_\theta$ on the pairs (history $h_i$,
# next word $w_i$) of the training text by **maximum likelihood**: choose $\theta$ to make the
# training data as probable as possible. Products of many numbers below 1 underflow, so take
# logs; maximising the log-likelihood is minimising the **negative log-likelihood** (NLL), the
# loss the neural models of the later lessons train with (also called cross-entropy):
#
# $$\theta^* = \arg\max_\theta \sum_{i=1}^{n} \log P_\theta(w_i \mid h_i)
#   = \arg\min_\theta \; -\frac{1}{n} \sum_{i=1}^{n} \log P_\theta(w_i \mid h_i)$$
#
# For an n-gram model the parameters are one distribution $P(\cdot \mid h)$ per context, and the
# minimiser has a closed form: the relative frequencies (counts divided by the context's count).
#
# First the tokens. Each sentence gets $n-1$ start symbols `<s>` on the left, as context only
# (never predicted), and **one** end symbol `</s>` on the right, which is predicted: the model
# must learn where sentences end. Every word and one `</s>` per sentence are scored, never
# `<s>`: the standard count of Jurafsky & Martin (ch. 3), SRILM and KenLM. (J&M pad $n-1$ `<s>`
# as we do; SRILM and KenLM write a single `<s>`, so a sentence's first word is predicted from
# it alone, and score the same tokens.) Then count and divide:
#
# $$P_{MLE}(w_i \mid w_{i-1}) = \frac{c(w_{i-1}\, w_i)}{c(w_{i-1})}$$
#
# Here $c(w_{i-1})$ counts $w_{i-1}$ as a context: how often a scored token follows it. For a word
# that is simply its count (a word or `</s>` always follows it); for `<s>` it is the number of
# sentences, although `bigram.count(("<s>",))` is 0 (`count` counts the n-grams that end at a
# scored token, and `<s>` never is one).

# %%
bigram = NGramLM(2, smoothing="mle", unk_cutoff=2).fit(corpus.train)
print(bigram)
c_pair, c_prev = bigram.count(("united", "states")), bigram.count(("united",))
print(f"c(united states) = {c_pair:,}   c(united) = {c_prev:,}")
print(
    f"P(states | united) = {c_pair} / {c_prev} = {c_pair / c_prev:.4f}; the model says {bigram.prob('states', ['united']):.4f}"
)
assert math.isclose(bigram.prob("states", ["united"]), c_pair / c_prev)
print("most likely words after 'the':", [bigram.vocab[i] for i in np.argsort(-bigram.next_distribution(["the"]))[:8]])

# %% [markdown]
# Are the relative frequencies really the maximum-likelihood choice? Take every word that
# follows "united" in training: compare the NLL of those words under the counts' distribution
# with their NLL under that distribution moved 1%, 10% and 50% of the way toward the uniform
# one. The moved ones are never lower (by Gibbs' inequality this holds for any other
# distribution; the cell checks these three).

# %%
after = bigram.next_distribution(["united"])  # the MLE: c(united w) / c(united)
seen = np.flatnonzero(after)
counts_after = np.array([bigram.count(("united", bigram.vocab[i])) for i in seen])


def nll(q):
    """-1/n sum_i ln q(w_i) over the n training words that follow 'united' (nats per word)."""
    return -np.sum(counts_after * np.log(q[seen])) / counts_after.sum()


uniform = np.where(np.arange(len(after)) == bigram.vocab.index("<s>"), 0, 1 / bigram.vocab_size)
for mix in (0.0, 0.01, 0.1, 0.5):
    q = (1 - mix) * after + mix * uniform
    print(f"{mix:.0%} of the mass moved to uniform: NLL {nll(q):.4f} nats per word")
    assert nll(q) >= nll(after) - 1e-12  # Gibbs' inequality: the counts' distribution is the minimum

# %% [markdown]
# ## 4. Perplexity
#
# How good is a model on text it has not seen? The Penn lecture starts from the Shannon Game
# (guess the next word of "I always order pizza with cheese and ..."): a good model gives the
# word that actually occurs a high probability. Its measure is the cross-entropy $J$
# of the model on a test set of $N$ predicted tokens (the NLL above, on test text), and the
# **perplexity** $2^J$. The lecture writes $\log$ without a base; $2^J$ is the perplexity only
# when $J$ is in bits, so we write $\log_2$:
#
# $$J = -\frac{1}{N} \sum_{i=1}^{N} \log_2 P(w_i \mid h_i), \qquad \mathrm{PP} = 2^{J} = P(w_1 \dots w_N)^{-1/N}$$
#
# Lower is better; a model that is certain and right has $\mathrm{PP} = 1$. With the standard
# count, the $N$ predicted tokens are every word and one `</s>` per sentence:
# $N$ = words + sentences, the same for every order $n$, so perplexities of different orders
# compare. We compute $J$ for the MLE bigram on training sentences (where it has seen every
# bigram), and see why the product form is not computed directly. PyTorch and NumPy give natural
# logarithms (nats), not bits: getting the same perplexity from them is Exercise 1.4.

# %%
some = corpus.train[:200]
grams = bigram.ngrams(some)
N = sum(map(len, some)) + len(some)
assert len(grams) == N  # every word and one </s> per sentence
probs = np.array([bigram.prob(g[-1], g[:-1]) for g in grams])
J_bits = -np.mean(np.log2(probs))
print(f"N = {N:,} tokens; J = {J_bits:.4f} bits;  2^J = {2**J_bits:.2f}")
print(f"P(w_1 ... w_N) as a product of the {N:,} probabilities: {math.prod(probs)} (it underflows: hence logs)")
assert math.prod(probs) == 0.0  # the product form underflows in floating point; the sum of logs does not
assert math.isclose(2**J_bits, bigram.perplexity(some), rel_tol=1e-9)

# %% [markdown]
# ### Why zeros happen
#
# On test text it is another story. Language is creative: many bigrams of the test addresses
# never occur in training. MLE gives each of them probability zero, so the probability of the
# whole test set is zero and its perplexity is infinite.

# %%
unseen_share = {}
for n in (2, 3, 4):  # (every test word is in the vocabulary or is <UNK>, so no unigram is unseen)
    model = NGramLM(n, smoothing="mle", unk_cutoff=2).fit(corpus.train)
    sample = model.ngrams(corpus.test[:3000])
    unseen_share[n] = np.mean([model.count(g) == 0 for g in sample])
    print(f"{n}-grams of the first 3,000 test sentences never seen in training: {unseen_share[n]:.1%}")
assert unseen_share[2] < unseen_share[3] < unseen_share[4]
mle_ppl = bigram.perplexity(corpus.test)
print("MLE bigram test perplexity:", mle_ppl)
assert math.isinf(mle_ppl)

# %% [markdown]
# ### Perplexity as a branching factor
#
# Perplexity is the number of equally likely choices that would be as hard to predict.
# The lecture's two examples:
#
# 1. a sequence of random digits: 10 equally likely choices at each step, perplexity 10;
# 2. a switchboard where callers ask for the operator, sales or tech support (1 in 4 each)
#    or one of 30,000 names (1 in 120,000 each): perplexity about 53.
#
# For the first, we train a unigram model on random digits (sentences of 50) and measure it on
# new ones. The lecture counts the digits only; the standard count also predicts one `</s>`
# per sentence, so the ideal unigram here gives `</s>` probability 1/51 and each digit
# (50/51)/10: its perplexity is a little above 10, and the trained model is close to it. For the
# second we compute $2^{H}$ with $H = -\sum_w p_w \log_2 p_w$.

# %%
digits = np.random.default_rng(1).integers(0, 10, size=(2000, 50)).astype(str).tolist()
digit_model = NGramLM(1, smoothing="laplace").fit(digits[:1000])
digit_ppl = digit_model.perplexity(digits[1000:])
ideal = 2 ** -((50 * math.log2(50 / 51 / 10) + math.log2(1 / 51)) / 51)
print(f"random digits: perplexity {digit_ppl:.3f} (ideal model {ideal:.3f}; the digits alone: 10)")
assert abs(digit_ppl - ideal) < 0.1  # 50,000 training digits: the estimate is within 1% for any seed

p_switchboard = np.array([1 / 4] * 3 + [1 / 120_000] * 30_000)
assert math.isclose(p_switchboard.sum(), 1.0)
H = -np.sum(p_switchboard * np.log2(p_switchboard))
switchboard_ppl = 2**H
print(f"switchboard: H = {H:.3f} bits, perplexity {switchboard_ppl:.1f}")
assert round(switchboard_ppl) == 53

# %% [markdown]
# ### Which tokens are counted: nltk's padding is another convention
#
# `nltk.lm`'s usual recipe (`padded_everygram_pipeline` to train, `pad_both_ends` to score)
# pads $n-1$ `<s>` on the left and $n-1$ `</s>` on the right (one for a bigram, none for a
# unigram, which then never predicts the end of a sentence), and scores every `</s>`. Then $N$
# grows with the order (words $+ (n-1) \times$ sentences), so the orders no longer score the
# same tokens. And the
# extra `</s>` are cheap: in training only `</s>` ever follows `</s>`, so after a context seen
# often (such as `. </s>`) a model gives it a high probability, far above an average token's
# (even add-one does: printed below), a small term in the sum while $N$ grows, which can lower
# the perplexity of the orders that score more of them (we measure it for one model only: the
# Laplace trigram below, in this run). Both counts on the same slice of the corpus (nltk is
# slow, so a slice):

# %%
small_train, small_test = corpus.train[:1500], corpus.test[:200]
words_test = sum(map(len, small_test))
for n in (1, 2, 3, 4):
    print(
        f"{n}-gram: tokens scored, standard {words_test + len(small_test):,}, "
        f"nltk's pad_both_ends {words_test + (n - 1) * len(small_test):,}"
    )
standard_lm = NGramLM(3, "laplace").fit(small_train)
standard_ppl = standard_lm.perplexity(small_test)
try:
    from nltk.lm import Laplace
    from nltk.lm.preprocessing import pad_both_ends, padded_everygram_pipeline
    from nltk.util import ngrams

    nltk_lm = Laplace(3)
    nltk_lm.fit(*padded_everygram_pipeline(3, small_train))
    nltk_ppl = nltk_lm.perplexity([g for s in small_test for g in ngrams(pad_both_ends(s, n=3), 3)])
    print(f"Laplace trigram, test perplexity: standard count {standard_ppl:.1f}, nltk's padding {nltk_ppl:.1f}")
    print(f"in this run nltk's count reads {'lower' if nltk_ppl < standard_ppl else 'higher'} than the standard one")
    print(
        f"nltk's P(</s> | . </s>) = {nltk_lm.score('</s>', ['.', '</s>']):.3f}; "
        f"an average token's (1 / perplexity) = {1 / nltk_ppl:.5f}"
    )
    # nltk's own model, scored on the standard n-grams only: drop each sentence's last trigram (w, </s>, </s>)
    std_grams = [g for s in small_test for g in list(ngrams(pad_both_ends(s, n=3), 3))[:-1]]
    assert len(std_grams) == words_test + len(small_test)
    nltk_std = nltk_lm.perplexity(std_grams)
    print(
        f"nltk's model on the {len(std_grams):,} standard n-grams only: {nltk_std:.1f} "
        f"({nltk_std / standard_ppl - 1:+.2%} from ours; vocabularies: nltk {len(nltk_lm.vocab):,} "
        f"with <s>, ours {standard_lm.vocab_size:,})"
    )
except ImportError:
    print(f"Laplace trigram, test perplexity with the standard count: {standard_ppl:.1f} (install nltk for its number)")

# %% [markdown]
# We report the standard count, the one of Jurafsky & Martin, SRILM and KenLM: it scores the
# same tokens for every order, so the table below compares orders fairly, and it is the count
# that neural models (lessons 02 and 07) are measured with, so their numbers sit next to n-gram
# numbers counted the same way (lesson 02's next to these, lesson 07's next to character n-grams).
# On the standard n-grams, nltk's Laplace trigram differs from ours only in keeping `<s>` in its
# vocabulary (one more word for add-one to spread its mass over). Scored on those n-grams only,
# it gives nearly our number (the last line above, printed when nltk is installed: it comes with
# the course's `dev` extra, or `pip install nltk`): the gap between the two counts comes from
# the extra `</s>` that nltk's padding scores, not from its model.

# %% [markdown]
# ## 5. Smoothing
#
# Smoothing moves a little probability from seen n-grams to unseen ones.
#
# * **Add-k** (Laplace for $k = 1$): $P(w \mid h) = \dfrac{c(h\,w) + k}{c(h) + kV}$, with $V$
#   the vocabulary size. Simple, but with $V$ this large (the `|V|` printed in section 3)
#   every context hands out $kV$ pseudo-counts, far too much mass for unseen words when $k = 1$.
# * **Interpolation** (Jelinek-Mercer): mix the estimates of every order,
#   $P(w \mid h) = \sum_{j=1}^{n} \lambda_j P_j(w \mid h_j)$ with $h_j$ the last $j-1$ words and
#   $\sum_j \lambda_j = 1$. Two details make it work on real text (the function is printed below):
#   the unigram $P_1$ is add-one smoothed, so an unseen word keeps some probability, and a
#   context $h_j$ never seen in training drops out, its weight shared among the others:
#   $P(w \mid h) = \sum_j \lambda_j [c(h_j) > 0]\, P_j(w \mid h_j) \,/\, \sum_j \lambda_j [c(h_j) > 0]$.
#   The weights $\lambda_j$ are chosen on the validation set (below).
# * **Interpolated Kneser-Ney**: subtract a discount $d = 0.75$ from every seen count and give
#   the freed mass to a lower-order model built from *continuation counts* (in how many
#   different contexts a word appears: in these addresses "states" is frequent but mostly
#   follows "united" (printed below), so its count overstates how readily it follows a context
#   the model has not seen it after):
#
# $$P_{KN}(w \mid h) = \frac{\max(c(h\,w) - d, 0)}{c(h)} + \frac{d\, N_{1+}(h\,\bullet)}{c(h)}\, P_{KN}(w \mid h')$$
#
# where $h'$ is $h$ without its first word and $N_{1+}(h\,\bullet)$ counts the distinct words seen after $h$.
# Written with raw counts $c$, this is the model's highest order only. In $P_{KN}(w \mid h')$ and
# every order below it ($h$ now standing for the shorter context), $c(h\,w)$ becomes the
# continuation count $N_{1+}(\bullet\, h\,w)$, the number of distinct words seen just before
# $h\,w$, and $c(h)$ the sum of those over $w$. The recursion ends at the uniform $1/|V|$, and a
# context never seen in training passes all its mass down: $P_{KN}(w \mid h) = P_{KN}(w \mid h')$
# (the docstring of `smoothing.kneser_ney`).
#
# Each smoothing is one short function of `course_lib.smoothing`, with its formula in its
# docstring; `NGramLM(n, smoothing="interpolated")` calls this one:

# %%
c_states = bigram.count(("states",))
print(f"c(states) = {c_states:,}, of which after 'united': {c_pair:,} ({c_pair / c_states:.0%})\n")
print(inspect.getsource(smoothing.interpolated))

# %% [markdown]
# Add-k's $k$ and interpolation's $\lambda$s are choices we make on the **validation** set, never
# on the test set. Choosing $k$ is Exercise 1.3 (with your own add-k model), so the table below
# has no add-k row with a tuned $k$, only Laplace ($k = 1$). For the $\lambda$s, `tune_lambdas` tries every
# $(\lambda_1, \dots, \lambda_n)$ on a grid of steps of 0.1 that sums to 1 with $\lambda_1 > 0$
# (the add-one unigram is what keeps unseen words possible).

# %%
ORDERS = [1, 2, 3, 4]
lambdas = {1: (1.0,)}
for n in ORDERS[1:]:
    lambdas[n] = NGramLM(n, smoothing="interpolated", unk_cutoff=2).fit(corpus.train).tune_lambdas(corpus.val)
    default = smoothing.default_lambdas(n)
    print(
        f"interpolated {n}-gram: lambdas tuned on validation {lambdas[n]}  (default 2^(j-1) weights: "
        f"{tuple(round(x, 3) for x in default)})"
    )

# %% [markdown]
# ### The lecture's table, on our corpus
#
# The Penn lecture shows (the table is Jurafsky and Martin's, ch. 3), for models trained on 38 million words of
# the Wall Street Journal and tested on 1.5 million, perplexities of 962 (unigram), 170 (bigram)
# and 109 (trigram). We train every order from 1 to 4 under every smoothing on our training
# addresses and measure on the test addresses, with the $\lambda$s chosen for each order on
# validation. (MLE's infinite
# perplexities raise a `ZeroProbabilityWarning`, which we silence here: we know why.)

# %%
SMOOTHINGS = ["mle", "laplace", "interpolated", "kneser-ney"]
models, test_ppl = {}, {}
warnings.simplefilter("ignore", ZeroProbabilityWarning)
for name in tqdm(SMOOTHINGS, desc="smoothing"):
    for n in ORDERS:
        model = NGramLM(n, smoothing=name, lambdas=lambdas[n], unk_cutoff=2).fit(corpus.train)
        models[n, name] = model
        test_ppl[n, name] = model.perplexity(corpus.test)

names = {"interpolated": "interpolated (tuned lambdas)"}
print(
    viz.table(
        [[names.get(s, s)] + [test_ppl[n, s] for n in ORDERS] for s in SMOOTHINGS],
        header=["test perplexity"] + [f"{n}-gram" for n in ORDERS],
    )
)

# %%
ax = viz.line_plot(
    ORDERS,
    {names.get(s, s): [test_ppl[n, s] for n in ORDERS] for s in SMOOTHINGS if s != "mle"},
    xlabel="order n",
    ylabel="test perplexity (log scale)",
    logy=True,
    title="Perplexity of n-gram models on held-out addresses (MLE, infinite from n = 2, not drawn)",
)
ax.set_xticks(ORDERS)
viz.show(
    "Test perplexity (log scale) against n-gram order 1 to 4, one line per smoothing except MLE (infinite from "
    "the bigram on, so left out): "
    + "; ".join(
        f"{names.get(s, s)} " + ", ".join(f"{test_ppl[n, s]:.0f}" for n in ORDERS) for s in SMOOTHINGS if s != "mle"
    )
)

# %% [markdown]
# What the table shows (each claim is checked in the next cell):
#
# * A well-smoothed model gets better with every order, as in the lecture's table: for
#   interpolation and Kneser-Ney, 4-gram < trigram < bigram < unigram.
# * MLE is infinite from the bigram on: the test set contains bigrams never seen in training.
# * Laplace gets *worse* as $n$ grows: with $V$ words, every context hands out $V$ pseudo-counts,
#   drowning the real counts of the sparse higher-order contexts.
# * Kneser-Ney is the best at every order above 1, even against interpolation with weights tuned
#   on validation.
# * Tuning pays: the interpolated models with tuned $\lambda$s beat the default $2^{j-1}$ weights.

# %%
kn = {n: test_ppl[n, "kneser-ney"] for n in ORDERS}
assert kn[4] < kn[3] < kn[2] < kn[1], kn
interp = [test_ppl[n, "interpolated"] for n in ORDERS]
assert interp == sorted(interp, reverse=True) and len(set(interp)) == len(ORDERS), interp
assert all(math.isinf(test_ppl[n, "mle"]) for n in (2, 3, 4))
laplace = [test_ppl[n, "laplace"] for n in ORDERS]
assert laplace == sorted(laplace) and len(set(laplace)) == len(ORDERS), laplace
assert all(kn[n] <= min(test_ppl[n, s] for s in SMOOTHINGS) for n in (2, 3, 4))
default_ppl = {n: NGramLM(n, "interpolated", unk_cutoff=2).fit(corpus.train).perplexity(corpus.test) for n in (2, 3, 4)}
print(
    "interpolated, default lambdas:",
    {n: round(p, 1) for n, p in default_ppl.items()},
    " tuned:",
    {n: round(test_ppl[n, "interpolated"], 1) for n in (2, 3, 4)},
)
assert all(test_ppl[n, "interpolated"] < default_ppl[n] for n in (2, 3, 4))
print(
    f"Kneser-Ney: unigram {kn[1]:.0f}, bigram {kn[2]:.0f}, trigram {kn[3]:.0f}, 4-gram {kn[4]:.0f}  "
    f"(WSJ in the lecture: 962, 170, 109)"
)

# %% [markdown]
# How do our numbers compare with the WSJ's? Only the ordering carries over (each order
# lowers the perplexity). The values differ, and so do the ratios between orders (next cell):
# the corpora differ (our training text is the presidents' annual messages to Congress, spoken
# or, for most of the 19th century, sent in writing, with far fewer tokens than J&M's 38 million
# words of newspaper text: printed below), the
# vocabularies differ (ours keeps words seen at least twice in training, J&M used a fixed
# 19,979-word one), and the lecture does not say which smoothing produced its table. We have not
# measured how much each of these contributes, so we claim no cause for the gap.

# %%
wsj = {1: 962, 2: 170, 3: 109}
ratio_wsj, ratio_ours = wsj[1] / wsj[2], kn[1] / kn[2]
n_train = corpus.n_tokens("train")
print(f"training text: {n_train:,} tokens vs WSJ 38 million words ({38e6 / n_train:.0f} times more)")
print(f"vocabulary: {models[1, 'kneser-ney'].vocab_size:,} tokens (words, <UNK> and </s>) vs WSJ 19,979")
print(
    f"unigram / bigram perplexity: WSJ {ratio_wsj:.1f}, ours {ratio_ours:.1f}; "
    f"bigram / trigram: WSJ {wsj[2] / wsj[3]:.2f}, ours {kn[2] / kn[3]:.2f}"
)
assert all(kn[n] < wsj[n] for n in (1, 2, 3))  # ours are lower at every order ...
assert abs(ratio_ours - ratio_wsj) > 1  # ... and the ratios do not carry over

# %% [markdown]
# ## 6. Intrinsic and extrinsic evaluation, and when perplexity misleads
#
# The Penn lecture separates two ways of judging a language model. **Extrinsic** evaluation puts
# each model inside a task (a spelling corrector, a speech recogniser, a translation system), runs
# the task and compares accuracies: the best comparison, but slow. **Intrinsic** evaluation scores
# the model alone, and its usual measure is perplexity: quick, but, in the lecture's words, a bad
# approximation unless the test data looks just like the training data and generally only useful
# in pilot experiments, though helpful to think about as long as extrinsic evaluation is also done.
#
# A real extrinsic evaluation needs a system (a recogniser, a translator) that this course does not
# build. A small task in its spirit, the kind a grammar checker faces: **word order**. Take a test
# sentence, swap two neighbouring words, and ask the model which of the two versions is the real
# one (the one it gives the higher probability; both have the same length, so the lower
# perplexity). The score is the share of sentences it gets right: an accuracy on a task, not a
# perplexity. Which two words are swapped is drawn at random, so we draw the swaps 5 times
# (seeds 0 to 4) and print the mean and the range over the draws.

# %%
order_test = [s for s in corpus.test if len(s) >= 4][:1000]
SWAP_SEEDS = range(5)


def swap_neighbours(sentences, seed):
    """Each sentence with two neighbouring words, drawn at random, swapped."""
    rng = np.random.default_rng(seed)
    swapped = []
    for s in sentences:
        i = int(rng.integers(0, len(s) - 1))
        s = list(s)
        s[i], s[i + 1] = s[i + 1], s[i]
        swapped.append(s)
    return swapped


swapped_sets = [swap_neighbours(order_test, seed) for seed in SWAP_SEEDS]
right, tied = {}, {}  # per order: the share right and the share tied, one value per draw of the swaps
for n in (1, 2, 3):
    m = models[n, "kneser-ney"]
    real = m.sentence_perplexities(order_test)  # each sentence's own perplexity, m.perplexity([s])
    right[n], tied[n] = [], []
    for swapped in swapped_sets:
        fake = m.sentence_perplexities(swapped)
        right[n].append(np.mean(real < fake))
        tied[n].append(np.mean(np.isclose(real, fake, rtol=1e-12)))
    print(
        f"Kneser-Ney {n}-gram: test perplexity {kn[n]:.0f}; picks the real order in {np.mean(right[n]):.1%} of "
        f"{len(order_test):,} sentences (range over {len(SWAP_SEEDS)} draws {min(right[n]):.1%} to {max(right[n]):.1%}), "
        f"cannot tell them apart in {np.mean(tied[n]):.1%}"
    )
trigram_ahead = sum(r3 > r2 for r2, r3 in zip(right[2], right[3]))
print(f"the trigram scores higher than the bigram in {trigram_ahead} of the {len(SWAP_SEEDS)} draws")
assert max(right[1]) == 0 and min(tied[1]) > 0.99  # a unigram model ignores word order entirely
assert min(right[2]) > 0.9 and min(right[3]) > 0.9
assert 0 < trigram_ahead < len(SWAP_SEEDS)  # the draws disagree on the order of the two
assert abs(np.mean(right[3]) - np.mean(right[2])) < 0.01 and kn[3] < 0.9 * kn[2]  # close scores, far perplexities

# the bigram's ties: a swap of two equal words, or a swap among bigrams never seen in training
m = models[2, "kneser-ney"]
real = m.sentence_perplexities(order_test)
n_ties = equal_words = unseen_only = 0
for swapped in swapped_sets:
    fake = m.sentence_perplexities(swapped)
    for j in np.flatnonzero(np.isclose(real, fake, rtol=1e-12)):
        changed = set(m.ngrams([order_test[j]])) ^ set(m.ngrams([swapped[j]]))  # bigrams in one version only
        n_ties += 1
        equal_words += not changed
        unseen_only += bool(changed) and all(m.count(g) == 0 for g in changed)
print(
    f"the bigram's {n_ties} ties over the {len(SWAP_SEEDS)} draws: {equal_words} swap two equal words, "
    f"{unseen_only} swap two words whose bigrams, in both versions, were never seen in training"
)
assert 0 < unseen_only == n_ties - equal_words  # every other tie: back-off on both sides


# %% [markdown]
# The unigram model has a perplexity, like every other model, yet on this task it is useless: it
# scores each word alone, so a sentence and its swapped version get the same probability (its
# ties in the printout). The bigram ties too, rarely, and (in this run, last line of the printout)
# not because the swapped words are equal: when none of the bigrams around the swap was seen in
# training, Kneser-Ney backs off, and both versions get the same back-off weights and unigram
# probabilities, multiplied in another order. One number on held-out text does not say which task
# a model can do. Nor does a lower perplexity promise a better score on it: the trigram's test
# perplexity is far below the bigram's, yet on this task the two are within a point of each other,
# and which of them scores higher changes from one draw of the swaps to the next (the line "the
# trigram scores higher than the bigram in ... of the 5 draws").
#
# **Perplexities are comparable only over the same vocabulary and the same tokens.** Every model
# above maps the words seen fewer than twice in training to `<UNK>` and predicts `<UNK>` like a
# word. Make the vocabulary smaller (keep only words seen at least 100 or 1,000 times) and more
# test words become `<UNK>`, an easy, frequent "word" to predict: the perplexity falls, although
# the model now tells fewer words apart.

# %%
vocab_rows = []
test_tokens = [w for s in corpus.test for w in s]
for cutoff in (2, 100, 1000):
    m = models[3, "kneser-ney"] if cutoff == 2 else NGramLM(3, "kneser-ney", unk_cutoff=cutoff).fit(corpus.train)
    known = set(m.vocab)
    vocab_rows.append([cutoff, m.vocab_size, np.mean([w not in known for w in test_tokens]), m.perplexity(corpus.test)])
print(
    viz.table(
        [[c, f"{v:,}", f"{u:.1%}", f"{p:.1f}"] for c, v, u, p in vocab_rows],
        header=["unk_cutoff", "vocabulary", "test words that are <UNK>", "Kneser-Ney trigram test perplexity"],
    )
)
assert vocab_rows[0][3] > vocab_rows[1][3] > vocab_rows[2][3]  # smaller vocabulary, lower perplexity

# %% [markdown]
# So a lower perplexity is evidence of a better model only when the two models predict the same
# tokens from the same vocabulary, on the same test text. That is why this lesson keeps one
# `<UNK>` rule for every model, why section 4 counts the same tokens for every order, and why a
# character-level perplexity (lesson 07) is never compared with a word-level one. For more on
# evaluation, Jurafsky and Martin's chapter 3 (the source of the lecture's WSJ table) discusses
# both kinds and the vocabulary question.

# %% [markdown]
# ## 7. Shannon's approximations, from our models
#
# Galerne's slides quote Shannon (1948), who generated English from word frequencies alone (a
# "first-order word approximation": a unigram model) and from word-to-word transitions
# ("second-order word approximation": a bigram model). His second-order sample begins "THE HEAD
# AND IN FRONTAL ATTACK ON AN ENGLISH WRITER THAT THE CHARACTER OF THIS POINT IS THEREFORE
# ANOTHER METHOD FOR THE LETTERS ...". We do the same with our models (Kneser-Ney smoothed,
# trained on the addresses), and add a third order.

# %%
for n, label in [
    (1, "First-order word approximation (unigram)"),
    (2, "Second-order word approximation (bigram)"),
    (3, "Third order (trigram, Kneser-Ney)"),
]:
    words = models[n, "kneser-ney"].generate(n_words=30, seed=3)
    print(f"{label}:\n  {' '.join(words).upper()}\n")

# %% [markdown]
# Try it yourself: change the order, the smoothing, the temperature ($q_w \propto p_w^{1/T}$,
# the sampling temperature of Fitzgibbon's lectures: below 1 the model plays safe, above 1 it
# takes risks) and the seed.


# %%
def show_generation(order, smoothing, temperature, seed):
    model = models[order, smoothing]
    for s in range(seed, seed + 3):
        print("-", " ".join(model.generate(n_words=25, temperature=temperature, seed=s)))


explorer = viz.interactive(
    show_generation,
    order=widgets.Dropdown(options=ORDERS, value=2, description="order"),
    smoothing=widgets.Dropdown(
        options=["laplace", "interpolated", "kneser-ney"], value="kneser-ney", description="smoothing"
    ),
    temperature=widgets.FloatSlider(value=1.0, min=0.2, max=2.0, step=0.1, description="temperature"),
    seed=widgets.IntSlider(value=0, min=0, max=50, description="seed"),
)

# %% [markdown]
# ## What to try
#
# * Character-level models: `load_sotu(level="char")` and orders up to 6. How does the best
#   character perplexity compare with the word one, and why can you not compare them directly?
# * Change Kneser-Ney's `discount` (0.5, 0.9) and look at the validation perplexity.
# * Lesson 02 trains Bengio et al.'s feedforward neural language model on these addresses,
#   mixes it with the Kneser-Ney 4-gram (they mixed theirs with a trigram), and compares both
#   with these numbers.
# * Train on the addresses before 1900 only (`load_sotu(last_year=1899).train`) and test on modern
#   ones (`load_sotu(first_year=1900).test`).
# * Fit your own text with `course_lib.corpora.load_text_file("my.txt")`.
# * Then do the exercises: `exercises/01_ngrams.ipynb`.
