"""scripts/run_lessons_seed.py moves every seed a lesson sets (issue 23: lessons run with other seeds)."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("run_lessons_seed", ROOT / "scripts" / "run_lessons_seed.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)

LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.py"))


def test_moves_each_kind_of_seed_and_nothing_else():
    source = (
        "course_lib.setup(seed=0, threads=1)\n"
        "g = torch.Generator().manual_seed(3)\n"
        "torch.manual_seed(0)\n"
        "SEEDS = (0, 1, 2)\n"
        "x = f(seed=widgets.IntSlider(value=0))  # not a literal seed\n"
        "y = 10 * seed + 0\n"
    )
    shifted, count = script.shift_seeds(source, 5)
    assert count == 4
    assert "setup(seed=5, threads=1)" in shifted
    assert "manual_seed(8)" in shifted and "torch.manual_seed(5)" in shifted
    assert "SEEDS = (5, 6, 7)" in shifted
    assert shifted.splitlines()[4:] == source.splitlines()[4:]


def test_rejects_a_shift_that_moves_nothing():
    with pytest.raises(ValueError, match="shift"):
        script.shift_seeds("torch.manual_seed(0)", 0)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_sets_its_seed_where_the_script_moves_it(lesson):
    source = lesson.read_text(encoding="utf-8")
    shifted, count = script.shift_seeds(source, 7)
    assert count >= 1 and shifted != source
    compile(shifted, lesson.name, "exec")  # still Python (the percent format is)
    assert re.search(r"setup\(seed=7\b", shifted), "course_lib.setup(seed=0) is where a student changes the seed"
