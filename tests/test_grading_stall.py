"""Issue 22, the grader's part: a submission whose kernel stops answering is graded once more before its row
is written, the row says what happened, other students are unaffected and no kernel is left behind.

The kernel that stops answering is the watchdog tests' own (tests/kernels/stalling_kernel.py): a cell
containing STALL_FOREVER is taken and never answered while the kernel sits idle. It is started in the
sandbox as ``python -c <its source>``, since the sandbox does not mount the tests.
"""

import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import grading, kernel, sandbox

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grading import RELEASE, exercise_cell, solved  # noqa: E402

STALLING = (Path(__file__).parent / "kernels" / "stalling_kernel.py").read_text()
pytestmark = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no working bubblewrap sandbox here")


def stalling_argv(connection_file):
    return [sys.executable, "-c", STALLING, "-f", connection_file]


def stalls_in_1_2(folder: Path, name: str) -> Path:
    nb = solved(nbformat.read(RELEASE, as_version=4), "1.1", "1.2")
    exercise_cell(nb, "1.2").source += "\n# STALL_FOREVER"
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder / f"{name}.ipynb"


def kernels_left() -> list[str]:
    left = []
    for proc in Path("/proc").iterdir():
        try:
            if b"StallingKernel" in (proc / "cmdline").read_bytes():
                left.append(proc.name)
        except OSError:
            pass
    return left


def test_a_kernel_that_never_answers_is_graded_again_then_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "kernel_argv", stalling_argv)
    path = stalls_in_1_2(tmp_path, "stuck")
    start = time.monotonic()
    sub = grading.grade_submission(path, RELEASE, cell_timeout=20, budget=300)
    took = time.monotonic() - start
    problems = "; ".join(sub.problems)
    assert "its kernel stopped answering" in problems and "graded once more from the start" in problems
    assert "on the second try too" in problems and "cell 6 (`# Exercise 1.2" in problems  # the cell, its first line
    assert set(s["status"] for s in sub.exercises.values()) == {"not run"}
    assert took < 200, took  # two stall timeouts of 20 s, two kernel starts, not the 900 s budget
    assert kernels_left() == []


def test_a_kernel_that_stalls_once_is_graded_on_the_retry_and_others_are_unaffected(tmp_path, monkeypatch):
    calls, real = [], kernel.kernel_argv

    def stalls_first_time(connection_file):
        calls.append(connection_file)
        return stalling_argv(connection_file) if len(calls) == 1 else real(connection_file)

    monkeypatch.setattr(kernel, "kernel_argv", stalls_first_time)
    unlucky = grading.grade_submission(stalls_in_1_2(tmp_path, "unlucky"), RELEASE, cell_timeout=20, budget=300)
    assert len(calls) == 2
    assert unlucky.exercises["1.1"]["status"] == unlucky.exercises["1.2"]["status"] == "passed"
    problems = "; ".join(unlucky.problems)
    assert "graded once more from the start" in problems and "second try" not in problems
    other = grading.grade_submission(stalls_in_1_2(tmp_path, "other"), RELEASE, cell_timeout=20, budget=300)
    assert other.score == 2 and other.problems == []
    assert kernels_left() == []
