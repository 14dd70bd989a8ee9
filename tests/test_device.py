"""Device selection without a GPU: patch what torch reports and check the choice."""

import random

import numpy as np
import pytest
import torch

import course_lib
from course_lib import device as dev
from course_lib.notebook import setup as nbsetup


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(dev.DEVICE_ENV, raising=False)


def fake(monkeypatch, cuda=False, mps=False):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2 if cuda else 0)
    monkeypatch.setattr(dev, "_mps_available", lambda: mps)


@pytest.mark.parametrize("cuda,mps,expected", [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")])
def test_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    fake(monkeypatch, cuda, mps)
    assert course_lib.get_device().type == expected


def test_env_override_and_prefer_argument(monkeypatch):
    fake(monkeypatch, cuda=True)
    monkeypatch.setenv(dev.DEVICE_ENV, "cpu")
    assert course_lib.get_device().type == "cpu"
    assert course_lib.get_device("cuda:1") == torch.device("cuda", 1)  # prefer beats the environment


def test_absent_device_is_a_clear_error(monkeypatch):
    fake(monkeypatch, cuda=False)
    with pytest.raises(RuntimeError, match="'cuda'.*not available"):
        course_lib.get_device("cuda")
    monkeypatch.setenv(dev.DEVICE_ENV, "mps")
    with pytest.raises(RuntimeError, match="COURSE_LIB_DEVICE.*'mps'"):
        course_lib.get_device()


def test_cuda_index_out_of_range(monkeypatch):
    fake(monkeypatch, cuda=True)
    with pytest.raises(RuntimeError, match="only 2 CUDA"):
        course_lib.get_device("cuda:5")


@pytest.mark.parametrize("bad", ["tpu", "gpu", ""])
def test_unknown_device_names_the_argument(monkeypatch, bad):
    fake(monkeypatch)
    if bad == "":
        monkeypatch.setenv(dev.DEVICE_ENV, "   ")  # blank means unset
        assert course_lib.get_device().type == "cpu"
        return
    with pytest.raises(ValueError, match="prefer must be one of"):
        course_lib.get_device(bad)


def test_set_seed_makes_python_numpy_and_torch_repeat():
    def draw():
        return random.random(), np.random.rand(), torch.rand(3).tolist()

    course_lib.set_seed(123)
    first = draw()
    course_lib.set_seed(123)
    assert draw() == first
    course_lib.set_seed(124)
    assert draw() != first


@pytest.mark.parametrize("bad", [1.5, "1", True, -1, 2**32])
def test_set_seed_rejects_bad_seeds(bad):
    with pytest.raises((TypeError, ValueError), match="seed must be"):
        course_lib.set_seed(bad)


def test_setup_prints_device_versions_and_seed(capsys, monkeypatch):
    fake(monkeypatch)
    threads = torch.get_num_threads()
    try:
        device = course_lib.setup(seed=7, threads=1)
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert device.type == "cpu"
    assert "seed 7" in out and f"torch {torch.__version__}" in out and "device: cpu" in out
    with pytest.raises(ValueError, match="threads"):
        course_lib.setup(threads=0)


def test_import_is_light():
    """`import course_lib` must not drag in matplotlib or ipywidgets (lessons stay headless-fast)."""
    import subprocess
    import sys

    code = (
        "import sys, course_lib, course_lib.corpora, course_lib.checks; "
        "print(any(m.split('.')[0] in ('matplotlib', 'ipywidgets') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    "where,expected",
    [("python", "no widgets"), ("ipython", "do not render"), ("vscode", "Jupyter extension"), ("colab", "pip install")],
)
def test_environment_notes_say_what_will_not_render(where, expected):
    assert any(expected in note for note in nbsetup.environment_notes(where))


def test_environment_notes_for_jupyter_with_everything_installed():
    assert nbsetup.environment_notes("jupyter") == []


def test_where_am_i_outside_ipython():
    assert nbsetup.where_am_i() in ("python", "vscode")  # pytest is not a kernel


@pytest.mark.parametrize("value", ["cpu:1", "cuda:abc", "cuda:-1", "mps:0", ":", "gpu"])
def test_a_malformed_device_variable_is_named(monkeypatch, value):
    monkeypatch.setenv("COURSE_LIB_DEVICE", value)
    with pytest.raises(ValueError, match="COURSE_LIB_DEVICE must be one of cpu, cuda, mps"):
        course_lib.get_device()


@pytest.mark.parametrize("cores, expected", [(2, 1), (1, 1)])
def test_setup_uses_one_thread_on_small_machines(monkeypatch, capsys, cores, expected):
    before = torch.get_num_threads()
    monkeypatch.setattr(nbsetup.os, "cpu_count", lambda: cores)
    try:
        torch.set_num_threads(2)
        nbsetup.setup(seed=0)
        assert torch.get_num_threads() == expected
        nbsetup.setup(seed=0, threads=2)  # an explicit choice wins
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_setup_keeps_torchs_default_on_larger_machines(monkeypatch, capsys):
    before = torch.get_num_threads()
    monkeypatch.setattr(nbsetup.os, "cpu_count", lambda: 8)
    try:
        torch.set_num_threads(3)
        nbsetup.setup(seed=0)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
