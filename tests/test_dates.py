"""course_lib.dates: babel (CLDR) is the oracle for every string; splits hold dates out; vocab round-trips."""

import datetime

import numpy as np
import pytest
import torch
from babel.dates import format_date
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import dates
from course_lib.corpora import BOS, EOS, PAD, Vocab
from course_lib.dates import FIRST_DAY, LAST_DAY, build_vocab, format_dates, make_pairs, split_dates

MOON = datetime.date(1969, 7, 20)
DAYS = st.dates(min_value=FIRST_DAY, max_value=LAST_DAY)


def test_the_lessons_example_by_hand():
    d = datetime.date(1969, 2, 15)
    assert format_dates([d], "en_US") == "Saturday, February 15, 1969"
    assert format_dates([d], "fr_FR") == "samedi 15 février 1969"
    assert format_dates([d], "iso") == "1969-02-15"


def test_lists_are_joined_as_each_locale_joins_them():
    a, b, c = datetime.date(1969, 2, 15), MOON, datetime.date(2000, 1, 1)
    assert format_dates([a, b], "en_US") == "Saturday, February 15, 1969 and Sunday, July 20, 1969"
    assert (
        format_dates([a, b, c], "fr_FR") == "samedi 15 février 1969, dimanche 20 juillet 1969 et samedi 1 janvier 2000"
    )
    assert format_dates([a, b, c], "en_US").endswith(", and Saturday, January 1, 2000")  # the serial comma


@given(
    st.lists(DAYS, min_size=1, max_size=3),
    st.sampled_from(["en_US", "fr_FR", "de_DE"]),
    st.sampled_from(["full", "long", "medium", "short"]),
)
@settings(max_examples=60, deadline=None)
def test_every_date_is_written_as_babel_writes_it(days, locale, fmt):
    text = format_dates(days, locale, fmt)
    pieces = [format_date(d, format=fmt, locale=locale) for d in days]
    positions = [text.find(p) for p in pieces]
    assert all(p >= 0 for p in positions)
    if len(set(pieces)) == len(pieces):
        assert positions == sorted(positions)  # in order


@given(st.lists(DAYS, min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_iso_targets_parse_back_to_the_dates(days):
    assert [datetime.date.fromisoformat(s) for s in format_dates(days, "iso").split(", ")] == days


@given(st.integers(0, 2**31))
@settings(max_examples=10, deadline=None)
def test_splits_are_disjoint_and_cover_every_day(seed):
    parts = split_dates(seed)
    everything = np.concatenate(list(parts.values()))
    assert len(everything) == len(set(everything.tolist())) == LAST_DAY.toordinal() - FIRST_DAY.toordinal() + 1
    assert len(parts["val"]) == len(parts["test"]) == round(0.1 * len(everything))


def test_test_examples_hold_only_dates_never_seen_in_training():
    train_days = set(split_dates(0)["train"].tolist())
    for split in ("val", "test"):
        pairs = make_pairs(300, split, seed=0)
        assert all(d.toordinal() not in train_days for example in pairs.dates for d in example)
    train = make_pairs(300, "train", seed=0)
    assert all(d.toordinal() in train_days for example in train.dates for d in example)


def test_pairs_are_deterministic_and_match_their_dates():
    a, b = make_pairs(50, "train", seed=3), make_pairs(50, "train", seed=3)
    assert a == b
    assert a.sources != make_pairs(50, "train", seed=4).sources
    for (src, tgt), days in zip(a, a.dates):
        assert 1 <= len(days) <= 3
        assert src == format_dates(days, "en_US") and tgt == format_dates(days, "fr_FR")
    assert {len(d) for d in make_pairs(200, max_dates=3).dates} == {1, 2, 3}
    assert {len(d) for d in make_pairs(20, n_dates=2).dates} == {2}


def test_vocab_covers_every_split_and_round_trips():
    vocab = build_vocab()
    for split in ("train", "val", "test"):
        pairs = make_pairs(500, split)
        for text in pairs.sources + pairs.targets:
            assert dates.decode(vocab, dates.encode(vocab, text)) == text
    assert set("éû") <= set(vocab.itos)  # février, août
    assert vocab.itos[:3] == [PAD, BOS, EOS] and vocab.unk_id is None  # a closed vocabulary: no UNK


def test_vocab_batch_pads_on_the_right_and_reports_lengths():
    vocab = Vocab.from_itos([PAD, BOS, EOS, "a", "b", "c"])
    ids, lengths = dates.batch(vocab, ["ab", "c"], bos=True)
    assert ids.tolist() == [[1, 3, 4, 2], [1, 5, 2, 0]]
    assert lengths.tolist() == [4, 3]
    assert dates.decode(vocab, ids[1]) == "c" and dates.decode(vocab, torch.tensor([3, 2, 4])) == "a"


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: make_pairs(0), "n must be a positive int"),
        (lambda: make_pairs(5, split="dev"), "split must be one of"),
        (lambda: make_pairs(5, max_dates=0), "max_dates"),
        (lambda: make_pairs(5, n_dates=0), "n_dates"),
        (lambda: make_pairs(5, target_locale="xx_QQ"), "target_locale='xx_QQ'"),
        (lambda: make_pairs(5, format="huge"), "format must be one of"),
        (lambda: format_dates([]), "non-empty sequence of datetime.date"),
        (lambda: format_dates(["1969-02-15"]), "datetime.date"),
        (lambda: split_dates(0, held_out=0.6), "held_out"),
        (lambda: dates.encode(build_vocab(), "15. März"), "outside the vocabulary"),
        (lambda: dates.encode(build_vocab(), "15", eos="False"), "eos must be True or False"),
        (lambda: Vocab.from_itos(["a", "a"]), "distinct"),
        (lambda: make_pairs(5, seed=-1), "seed must be a non-negative integer"),
    ],
)
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()
