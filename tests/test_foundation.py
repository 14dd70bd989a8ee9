"""The shared pieces every lesson module stands on: validation, evaluating(), Vocab, checkpoints."""

import json
import math
import struct

import pytest
import torch
from torch import nn

from course_lib import _validate as V
from course_lib import checkpoint
from course_lib.corpora import PAD, UNK, Vocab
from course_lib.train import evaluating


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True, None, float("nan")])
def test_positive_int_refuses_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        V.positive_int("n_heads", bad)


def test_positive_int_accepts_numpy_and_python_ints():
    import numpy as np

    assert V.positive_int("n", 3) == 3 and V.positive_int("n", np.int64(4)) == 4


@pytest.mark.parametrize("bad", ["False", "True", 0, 1, None])
def test_boolean_refuses_strings_and_ints(bad):
    with pytest.raises(TypeError, match="bias must be True or False"):
        V.boolean("bias", bad)


@pytest.mark.parametrize("bad", ["0.1", float("nan"), True, None])
def test_number_refuses_strings_nan_and_bools(bad):
    with pytest.raises(ValueError, match="dropout must be a number"):
        V.number("dropout", bad, 0, 1)


def test_number_ranges():
    assert V.number("p", 0, 0, 1) == 0.0
    with pytest.raises(ValueError, match=r"temperature must be in \(0"):
        V.number("temperature", 0, 0, None, open_low=True)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        V.number("p", 1.5, 0, 1)


def test_token_ids_outside_the_vocabulary_are_named():
    ids = torch.tensor([[0, 4, 5]])
    with pytest.raises(ValueError, match=r"idx holds token id 5, outside the vocabulary \[0, 5\)"):
        V.token_ids("idx", ids, 5)
    with pytest.raises(ValueError, match="token id -1"):
        V.token_ids("idx", torch.tensor([[-1, 0]]), 5)
    with pytest.raises(ValueError, match=r"\(B, T\) tensor of token ids"):
        V.token_ids("idx", torch.tensor([0.0, 1.0]), 5)
    assert V.token_ids("idx", ids, 6) is ids


def test_evaluating_restores_the_mode_even_when_the_block_raises():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)).train()
    with pytest.raises(RuntimeError):
        with evaluating(model):
            assert not model.training and not torch.is_grad_enabled()
            raise RuntimeError("boom")
    assert model.training and torch.is_grad_enabled()
    model.eval()
    with evaluating(model):
        pass
    assert not model.training


def test_vocab_round_trips_through_its_token_list():
    vocab = Vocab([["a", "b", "a"]], specials=(UNK, PAD))
    again = Vocab.from_itos(vocab.itos)
    assert again.itos == vocab.itos and again.encode(["a", "zzz"]) == vocab.encode(["a", "zzz"]) == [2, 0]


def test_a_closed_vocabulary_refuses_unknown_tokens():
    vocab = Vocab([list("abc")], specials=(PAD,))
    assert vocab.unk_id is None and vocab.encode(list("cab")) == [3, 1, 2]
    with pytest.raises(ValueError, match="'z', which is not in this closed vocabulary"):
        vocab.encode(list("az"))


class Tiny(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.head = nn.Linear(d_model, vocab_size)


def build(config):
    return Tiny(**config)


def test_checkpoint_round_trip_rebuilds_the_same_model(tmp_path):
    torch.manual_seed(0)
    model = Tiny(7, 3)
    path = checkpoint.save(
        tmp_path / "m.safetensors",
        model,
        kind="tiny",
        config={"vocab_size": 7, "d_model": 3},
        vocab=list("abcdefg"),
        info={"val_loss": 1.25},
    )
    loaded, ckpt = checkpoint.load(path, build, kind="tiny", vocab=list("abcdefg"))
    assert ckpt.info == {"val_loss": 1.25} and ckpt.shapes["embed.weight"] == (7, 3) and not loaded.training
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name])


def test_float16_storage_is_cast_back(tmp_path):
    model = Tiny(5, 2)
    path = checkpoint.save(
        tmp_path / "m.safetensors", model, kind="tiny", config={"vocab_size": 5, "d_model": 2}, dtype=torch.float16
    )
    loaded, _ = checkpoint.load(path, build, kind="tiny")
    assert loaded.head.weight.dtype == torch.float32
    torch.testing.assert_close(loaded.head.weight, model.head.weight, atol=1e-3, rtol=1e-3)


def test_a_config_that_does_not_match_the_weights_fails_before_allocating(tmp_path):
    path = checkpoint.save(tmp_path / "m.safetensors", Tiny(5, 2), kind="tiny", config={"vocab_size": 5, "d_model": 2})
    # Rewrite the header's config to ask for a 5-million-token vocabulary (a 1 KB file).
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    header["__metadata__"]["config"] = json.dumps({"vocab_size": 5_000_000, "d_model": 2})
    body = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(body)) + body + raw[8 + n :])
    with pytest.raises(ValueError, match=r"does not match the model its config describes: embed.weight: file \(5, 2\)"):
        checkpoint.load(path, build, kind="tiny")


def test_wrong_kind_vocab_and_non_checkpoints_are_named(tmp_path):
    path = checkpoint.save(
        tmp_path / "m.safetensors", Tiny(5, 2), kind="tiny", config={"vocab_size": 5, "d_model": 2}, vocab=list("abcde")
    )
    with pytest.raises(ValueError, match="holds a 'tiny' checkpoint, expected 'gpt'"):
        checkpoint.load(path, build, kind="gpt")
    with pytest.raises(ValueError, match="vocab differs"):
        checkpoint.load(path, build, kind="tiny", vocab=list("abcdx"))
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x00" * 3)
    with pytest.raises(ValueError, match="not a safetensors checkpoint"):
        checkpoint.read(junk)
    with pytest.raises(FileNotFoundError, match="is not a checkpoint file"):
        checkpoint.read(tmp_path / "absent.safetensors")
    assert math.isfinite(len(checkpoint.read(path).vocab))
