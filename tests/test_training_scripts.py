"""The training scripts never overwrite the files the course ships (the lessons load them) unless asked."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib import checkpoint

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = {  # each script as a student would first run it: output left at its default
    "train_fflm": ["--minutes", "60"],
    "train_fflm --rescore": ["--rescore"],
    "train_gpt": ["--minutes", "60"],
    "train_gpt --record": ["--record"],
    "train_seq2seq": ["--attention", "dot"],
    "train_parentheses": ["--models", "lstm"],
    "train_buildup": ["--tiny"],
    "ngram_orders": ["--orders", "1"],
}


def shipped() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in checkpoint.WEIGHTS_DIR.iterdir() if p.is_file()}


@pytest.mark.parametrize("case", DEFAULT_OUTPUT)
def test_a_training_script_stops_before_overwriting_the_shipped_files(case):
    before = shipped()
    script = ROOT / "scripts" / f"{case.split()[0]}.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # a script without the guard would start training here: the timeout turns that into a failure
    run = subprocess.run(
        [sys.executable, str(script), *DEFAULT_OUTPUT[case]], capture_output=True, text=True, timeout=120, env=env
    )
    assert run.returncode != 0 and "--replace-shipped" in run.stderr, run.stderr[-2000:]
    assert shipped() == before


def test_the_guard_lets_other_paths_and_a_deliberate_retraining_through(tmp_path):
    name = next(p for p in checkpoint.WEIGHTS_DIR.iterdir() if p.suffix == ".safetensors")
    with pytest.raises(SystemExit, match="--out .* shipped"):
        checkpoint.refuse_to_replace_shipped(name, replace_shipped=False)
    with pytest.raises(SystemExit, match="--out-dir"):
        checkpoint.refuse_to_replace_shipped(checkpoint.WEIGHTS_DIR, replace_shipped=False, option="--out-dir")
    checkpoint.refuse_to_replace_shipped(name, replace_shipped=True)  # the maintainers' retraining
    checkpoint.refuse_to_replace_shipped(tmp_path / "mine.safetensors", replace_shipped=False)
    checkpoint.refuse_to_replace_shipped(tmp_path, replace_shipped=False)
    checkpoint.refuse_to_replace_shipped(checkpoint.WEIGHTS_DIR / "not_shipped.safetensors", replace_shipped=False)
