"""The date translation task of lesson 05: lists of dates from English to French, character by character.

A source is one to ``max_dates`` dates written in a human format of a locale, joined as that
locale joins lists; the target is the same dates in the target locale (or ISO 8601)::

    "Saturday, February 15, 1969"                        -> "samedi 15 février 1969"
    "Monday, May 1, 2000 and Friday, July 4, 1986"       -> "lundi 1 mai 2000 et vendredi 4 juillet 1986"

Every string comes from babel's copy of the Unicode CLDR locale data (month and weekday names,
date patterns, list patterns), so the task is real and runs offline. The day and the month
change places between English and French: the alignment a model must learn crosses.

Examples are generated deterministically from a seed. Dates are split once (per seed) into
train / val / test sets of calendar days, so a test example only holds dates never seen in
training: a model must translate, not remember.
"""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass

import numpy as np
import torch
from babel.dates import format_date as _babel_format_date
from babel.lists import format_list

from course_lib._validate import boolean, non_negative_int, number, one_of, positive_int
from course_lib.corpora import BOS, EOS, PAD, SPLITS, Vocab

__all__ = [
    "FIRST_DAY",
    "LAST_DAY",
    "SPECIALS",
    "DatePairs",
    "format_dates",
    "split_dates",
    "make_pairs",
    "build_vocab",
    "encode",
    "decode",
    "batch",
]

FIRST_DAY = datetime.date(1900, 1, 1)
LAST_DAY = datetime.date(2099, 12, 31)
SPECIALS = (PAD, BOS, EOS)  # ids 0, 1, 2 of every date vocabulary: padding, start and end of a string
FORMATS = ("full", "long", "medium", "short")


@functools.cache
def _format_one(ordinal: int, locale: str, fmt: str) -> str:
    day = datetime.date.fromordinal(ordinal)
    if locale == "iso":
        return day.isoformat()
    return _babel_format_date(day, format=fmt, locale=locale)


def _check_locale(name: str, locale) -> None:
    if not isinstance(locale, str) or not locale:
        raise TypeError(f"{name} must be a locale name such as 'en_US' or 'fr_FR' (or 'iso'), got {locale!r}")
    if locale != "iso":
        from babel import Locale, UnknownLocaleError

        try:
            Locale.parse(locale)
        except (UnknownLocaleError, ValueError) as exc:
            raise ValueError(f"{name}={locale!r} is not a locale babel knows (e.g. 'en_US', 'fr_FR', 'de_DE')") from exc


def _check_format(fmt) -> None:
    one_of("format", fmt, FORMATS)


def format_dates(dates, locale: str = "en_US", format: str = "full") -> str:
    """The dates written in ``locale``'s ``format`` and joined as the locale joins lists.

    ``locale="iso"`` writes ISO 8601 (1969-02-15) joined with ", ".
    """
    _check_locale("locale", locale)
    _check_format(format)
    dates = list(dates)
    if not dates or not all(isinstance(d, datetime.date) for d in dates):
        raise ValueError(f"dates must be a non-empty sequence of datetime.date, got {dates!r}")
    parts = [_format_one(d.toordinal(), locale, format) for d in dates]
    if locale == "iso":
        return ", ".join(parts)
    return format_list(parts, locale=locale)


@functools.lru_cache(maxsize=8)
def _split_ordinals(seed: int, held_out: float) -> dict[str, np.ndarray]:
    days = np.arange(FIRST_DAY.toordinal(), LAST_DAY.toordinal() + 1)
    order = np.random.default_rng(seed).permutation(len(days))
    n_held = int(round(held_out * len(days)))
    parts = {"val": order[:n_held], "test": order[n_held : 2 * n_held], "train": order[2 * n_held :]}
    return {name: np.sort(days[idx]) for name, idx in parts.items()}


def split_dates(seed: int = 0, held_out: float = 0.1) -> dict[str, np.ndarray]:
    """Calendar days from FIRST_DAY to LAST_DAY (as ordinals), split into disjoint train / val / test.

    ``held_out`` is the share of days in val and the same share in test.
    """
    seed = non_negative_int("seed", seed)
    if not 0.0 < number("held_out", held_out) < 0.5:
        raise ValueError(
            f"held_out must be in (0, 0.5) (the share of days for val and for test each), got {held_out!r}"
        )
    return {k: v.copy() for k, v in _split_ordinals(int(seed), float(held_out)).items()}


@dataclass(frozen=True)
class DatePairs:
    """Source and target strings, and the dates each example holds."""

    sources: list[str]
    targets: list[str]
    dates: list[tuple[datetime.date, ...]]

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, i):
        return self.sources[i], self.targets[i]


def make_pairs(
    n: int,
    split: str = "train",
    seed: int = 0,
    max_dates: int = 3,
    source_locale: str = "en_US",
    target_locale: str = "fr_FR",
    format: str = "full",
    n_dates: int | None = None,
) -> DatePairs:
    """``n`` examples of ``split``, each with 1 to ``max_dates`` dates (or exactly ``n_dates``).

    Deterministic: the same arguments give the same examples. Different splits draw their
    dates from disjoint sets of days (:func:`split_dates` with the same seed).
    """
    n = positive_int("n", n)
    one_of("split", split, SPLITS)
    seed = non_negative_int("seed", seed)
    positive_int("max_dates", max_dates)
    if n_dates is not None:
        positive_int("n_dates", n_dates)
    _check_locale("source_locale", source_locale)
    _check_locale("target_locale", target_locale)
    _check_format(format)
    days = _split_ordinals(int(seed), 0.1)[split]
    # One stream per (seed, split): the train examples do not change when val or test are drawn.
    rng = np.random.default_rng([seed, SPLITS.index(split), 5])
    counts = np.full(n, n_dates) if n_dates is not None else rng.integers(1, max_dates + 1, size=n)
    picks = rng.choice(days, size=int(counts.sum()))
    sources, targets, dates = [], [], []
    start = 0
    for count in counts:
        example = tuple(datetime.date.fromordinal(int(o)) for o in picks[start : start + count])
        start += count
        sources.append(format_dates(example, source_locale, format))
        targets.append(format_dates(example, target_locale, format))
        dates.append(example)
    return DatePairs(sources, targets, dates)


def encode(vocab: Vocab, text: str, bos: bool = False, eos: bool = True) -> list[int]:
    """The ids of ``text``'s characters in ``vocab``, after a BOS and before an EOS if asked."""
    boolean("bos", bos)
    boolean("eos", eos)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    unknown = sorted({c for c in text if c not in vocab})
    if unknown:
        raise ValueError(f"text {text!r} has characters outside the vocabulary: {unknown}")
    return [vocab.stoi[BOS]] * bos + vocab.encode(list(text)) + [vocab.stoi[EOS]] * eos


def decode(vocab: Vocab, ids) -> str:
    """The characters of ``ids`` up to the first EOS (PAD and BOS are skipped)."""
    skip = {vocab.stoi[PAD], vocab.stoi[BOS]}
    out = []
    for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
        if i == vocab.stoi[EOS]:
            break
        if i not in skip:
            out.append(vocab.itos[i])
    return "".join(out)


def batch(vocab: Vocab, texts, bos: bool = False, eos: bool = True, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, T) ids padded with PAD on the right, and the (B,) lengths (on the CPU)."""
    if isinstance(texts, str) or not len(texts):
        raise ValueError("texts must be a non-empty list of strings")
    rows = [encode(vocab, t, bos=bos, eos=eos) for t in texts]
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), vocab.stoi[PAD], dtype=torch.long, device=device)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long, device=device)
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long, device="cpu")  # cpu: read by Python code
    return ids, lengths


def build_vocab(locales=("en_US", "fr_FR"), format: str = "full") -> Vocab:
    """A closed vocabulary (no UNK): the specials PAD = 0, BOS = 1, EOS = 2, then every character
    these locales use to write dates and lists of dates (sorted, so deterministic).

    The dates of the leap year 2000 hold every month and weekday name and every digit.
    """
    chars = set("0123456789-, ")  # ISO dates and their separator
    year = range(datetime.date(2000, 1, 1).toordinal(), datetime.date(2000, 12, 31).toordinal() + 1)
    for locale in locales:
        _check_locale("locales", locale)
        if locale == "iso":
            continue
        for o in year:
            chars |= set(_format_one(o, locale, format))
        chars |= set(format_list(["1", "2", "3"], locale=locale))
    return Vocab.from_itos(list(SPECIALS) + sorted(chars))
