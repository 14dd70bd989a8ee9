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
from test_grading import RELEASE_01 as RELEASE  # noqa: E402
from test_grading import exercise_cell, solved  # noqa: E402

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


def test_a_kernel_that_stops_answering_ends_in_a_clear_row_in_seconds(tmp_path, monkeypatch):
    """The notebook's run only shows problems (issue 33: the grade comes from the answer cells, called in a
    process of their own), so a kernel that stops answering is reported once, not run again, and the
    answers are still graded."""
    monkeypatch.setattr(kernel, "kernel_argv", stalling_argv)
    path = stalls_in_1_2(tmp_path, "stuck")
    start = time.monotonic()
    sub = grading.grade_submission(path, RELEASE, cell_timeout=60, budget=300)
    took = time.monotonic() - start
    problems = "; ".join(sub.problems)
    assert "its kernel stopped answering" in problems and "cell 6 (`# Exercise 1.2" in problems  # the cell, its line
    assert "the cells after it were not run" in problems and "once more" not in problems
    assert [sub.exercises[e]["status"] for e in ("1.1", "1.2")] == ["passed", "passed"]
    assert took < 120, took  # one stall of 15 s, one kernel start, one harness: not the 60 s cell limit twice
    assert kernels_left() == []
