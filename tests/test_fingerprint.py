"""Grades that do not drift: the fingerprint of a check, written at release and compared when grading."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import fingerprint, grading

ROOT = Path(__file__).resolve().parents[1]

# A check module of our own, loaded as a course_lib module (only course_lib's code is followed and hashed):
# its judge reaches a helper, a module constant and a closure made by a factory.
CHECK = '''
"""A check written for this test."""

from course_lib.checks import Mistake
from course_lib.checks.protocol import Exercise

TOL = 1e-6


def _reference(a, b):
    """The answer."""
    return a + b


def _judge_with(scale):
    def judge(cases, records):
        for case, r in zip(cases, records):
            if abs(r["returned"] - scale * _reference(*case)) > TOL:
                raise Mistake("add the two numbers")
    return judge


check_add = Exercise(
    "9.1", "adding", "add", ("a", "b"), lambda seed: [[seed % 7, 2]], _judge_with(1)
)
'''


def _fp(tmp_path, source: str, name: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    # one module name for every version (names are part of what is hashed), each from its own file
    spec = importlib.util.spec_from_file_location("course_lib.checks._fp_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # inspect finds the source through it
    try:
        spec.loader.exec_module(module)
        return fingerprint.of_exercise(module.check_add)
    finally:
        del sys.modules[spec.name]


@pytest.mark.parametrize(
    "edit,changes",
    [
        # layout, comments and docstrings do not decide a grade
        (("    return a + b", "    return a + b  # the sum"), False),
        (('    """The answer."""', '    """The sum of the two."""'), False),
        (("                raise Mistake", "\n                raise Mistake"), False),
        # what the judge reaches does: its helper, a module constant, a closure's value, the draw, the hint
        (("    return a + b", "    return a - b"), True),
        (("TOL = 1e-6", "TOL = 1e-3"), True),
        (("_judge_with(1)", "_judge_with(2)"), True),
        (("[[seed % 7, 2]]", "[[seed % 5, 2]]"), True),
        (('"add the two numbers"', '"add them"'), True),
        (('("a", "b")', '("x", "y")'), True),
    ],
)
def test_the_fingerprint_follows_what_decides_the_grade(tmp_path, edit, changes):
    before = _fp(tmp_path, CHECK, "before")
    assert _fp(tmp_path, CHECK, "again") == before  # the same code, loaded again: the same fingerprint
    old, new = edit
    assert old in CHECK
    after = _fp(tmp_path, CHECK.replace(old, new), "after")
    assert (after != before) is changes


def test_the_fingerprint_is_the_same_in_another_process_hash_seed_and_import_order():
    here = fingerprint.of_lesson("01")
    code = (
        "import json; from course_lib import checks; checks.exercises('07'); checks.exercises('03');"
        "from course_lib.instructor import fingerprint; print(json.dumps(fingerprint.of_lesson('01')))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == here
    assert len(set(here.values())) == len(here)  # every exercise its own


def test_release_stamps_the_version_and_every_checks_fingerprint(tmp_path):
    import course_lib

    target = grading.release("01", tmp_path / "handout", root=ROOT)
    stamped = fingerprint.recorded(nbformat.read(target, as_version=4))
    assert stamped["version"] == course_lib.__version__
    assert stamped["checks"] == fingerprint.of_lesson("01")
    # the handed-out notebook is otherwise the exercise notebook, cell for cell
    original = nbformat.read(ROOT / "exercises" / target.name, as_version=4)
    assert [c.source for c in nbformat.read(target, as_version=4).cells] == [c.source for c in original.cells]


def _stamped(tmp_path, tamper=None):
    target = grading.release("01", tmp_path / "handout", root=ROOT)
    nb = nbformat.read(target, as_version=4)
    if tamper:
        nb.metadata["course_lib"]["release"]["checks"][tamper] = "0" * 16
        nbformat.write(nb, target)
    return target, nb


def test_compare_names_the_changed_check_and_refuses_unless_accepted(tmp_path):
    _, nb = _stamped(tmp_path, tamper="1.3")
    exercises = ["1.1", "1.2", "1.3", "1.4", "1.5"]
    with pytest.raises(fingerprint.ChecksChanged, match=r"the check of exercise\(s\) 1\.3 changed.*--accept"):
        fingerprint.compare(nb, "01", exercises)
    mark, message = fingerprint.compare(nb, "01", exercises, accept=True)
    assert mark == "changed since release: 1.3 (accepted)" and "1.3" in message


def test_compare_says_when_nothing_changed_or_nothing_was_recorded(tmp_path):
    _, nb = _stamped(tmp_path)
    assert fingerprint.compare(nb, "01", ["1.1", "1.2"]) == (fingerprint.AS_RELEASED, "")
    plain = nbformat.read(ROOT / "exercises" / "01_ngrams.ipynb", as_version=4)  # the builder's: no stamp
    mark, message = fingerprint.compare(plain, "01", ["1.1"])
    assert mark == fingerprint.NOT_RECORDED and "cannot be detected" in message


def test_grade_refuses_changed_checks_before_any_row(tmp_path):
    release, nb = _stamped(tmp_path, tamper="1.2")
    (tmp_path / "subs").mkdir()
    nbformat.write(nb, tmp_path / "subs" / "alice.ipynb")
    out = tmp_path / "grades.csv"
    with pytest.raises(grading.InstructorError, match=r"exercise\(s\) 1\.2 changed"):
        grading.grade([tmp_path / "subs"], "01", out, release=release, sandboxed=False, progress=None)
    assert not out.exists() or out.read_text() == ""  # no row written, no student graded
