"""Headless executors never stall on the course's notebooks (issue 31).

nbclient (so nbconvert, papermill, nbgrader autograde, nbmake, myst-nb) answers every change of an Output
widget with a message on the shell socket it awaits the cell's reply on, and the reply can then sit unread
until the client's per-cell timeout (scripts/upstream/README.md). The course's explorers draw into an HTML
widget's value instead. Here every lesson with an explorer runs under a PLAIN nbclient (no watchdog), beside
a process spinning on the CPU (the race shows under load), and any idle wait between two cells longer than
STALL seconds fails: a stall costs the whole per-cell timeout, far above any honest gap (under a second).

This is the one execution of each lesson in `make test` (nbval runs the lessons again in `make test-more`): a
cell that raises fails it as it fails nbval. Each lesson's executed copy is kept where the site build looks for
it (course_lib.instructor.site), so the site's tests reuse this execution instead of running the lesson again.
"""

import sys
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from headless_stall import idle_gaps, spinning  # noqa: E402

from course_lib.instructor import site  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb") if "viz.interactive(" in p.read_text())
STALL = 30.0  # seconds; the client's timeout per cell is TIMEOUT, so a stall shows as a gap of about TIMEOUT
# per cell, as nbval's in the Makefile: lesson 02's checkpoint cell took over 180 s beside a loaded machine's other
# work (a stall still shows: any idle gap over STALL fails, and a stalled cell costs this whole timeout)
TIMEOUT = 600


def run_plain(nb, path: Path, timeout: float) -> list[tuple[int, float]]:
    """Execute ``nb`` in place with nbclient's own client, nothing of the course's; return the idle gaps."""
    nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path)}}
    ).execute()
    return idle_gaps(nb)


def test_idle_gaps_are_measured_between_a_reply_and_the_next_cell():
    cells = [nbformat.v4.new_code_cell(s) for s in ("x = 1", "# markdown-like comment", "import time; time.sleep(1)")]
    nb = nbformat.v4.new_notebook(cells=cells)
    gaps = run_plain(nb, ROOT, timeout=60)
    assert [cell for cell, _ in gaps] == [0, 1]
    assert all(0 <= gap < 5 for _, gap in gaps)
    # a stall, as the kernel stamps it: the next cell started 40 s after the reply
    nb.cells[1].metadata.execution["iopub.execute_input"] = "2030-01-01T00:00:40.000000Z"
    nb.cells[0].metadata.execution["shell.execute_reply"] = "2030-01-01T00:00:00.000000Z"
    assert idle_gaps(nb)[0] == (0, 40.0)


def test_a_failed_assert_fails_the_run_as_under_nbval(tmp_path):
    """make test executes each lesson once, here (nbval runs them again in make test-more): a cell that raises
    must fail the lesson's test exactly as it fails nbval --nbval-lax."""
    cells = [nbformat.v4.new_code_cell(s) for s in ("x = 1", "assert x == 2, 'the lesson says otherwise'", "y = 3")]
    nb = nbformat.v4.new_notebook(cells=cells)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="the lesson says otherwise"):
        run_plain(nb, tmp_path, timeout=60)
    assert "outputs" in nb.cells[1] and not nb.cells[2].get("execution_count")  # it stopped there


def test_many_explorers_under_load_never_leave_a_reply_unread(tmp_path):
    """40 explorer cells (the course's viz.interactive, a print and a figure each) beside two spinning processes.
    ipywidgets.interactive, with its Output widget, stalled in 5 of 5 such runs (scripts/upstream/README.md)."""
    setup = (
        "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nimport ipywidgets as widgets\n"
        "from course_lib.notebook import viz\n\n"
        "def explore(x):\n    print('x =', x)\n    plt.plot([0, x])\n    viz.show(f'A line from 0 to {x} over two points.')"
    )
    cells = [setup] + [f"viz.interactive(explore, x=widgets.IntSlider(value={i % 10}, max=9))" for i in range(40)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in cells])
    load = spinning(2)
    try:
        gaps = run_plain(nb, tmp_path, timeout=60)
    finally:
        for p in load:
            p.terminate()
    stalls = [(cell, round(gap, 1)) for cell, gap in gaps if gap > STALL]
    assert not stalls, f"replies left unread (cell, seconds idle): {stalls}"
    assert all("application/vnd.jupyter.widget-view+json" in c.outputs[0]["data"] for c in nb.cells[1:])


@pytest.mark.parametrize(
    "lesson", [pytest.param(p, id=p.stem, marks=pytest.mark.notebook_run(f"notebooks/{p.name}")) for p in LESSONS]
)
def test_lesson_runs_under_a_plain_nbclient_without_a_stall(lesson):
    nb = nbformat.read(lesson, as_version=4)
    # The load: the other worker's tests, and where that worker is idle this spinner. At niceness 19 it takes only
    # what nobody else wants, so the lesson never runs beside less than one busy core and the suite is not
    # slowed down by it.
    load = spinning(1, niceness=19)
    try:
        gaps = run_plain(nb, lesson.parent, timeout=TIMEOUT)
    finally:
        for p in load:
            p.terminate()
    stalls = [(cell, round(gap, 1)) for cell, gap in gaps if gap > STALL]
    assert not stalls, f"{lesson.name}: idle waits between cells (cell, seconds): {stalls}"
    site.remember(lesson, nb, site.DEFAULT_CACHE)  # the site's tests reuse this execution


def test_the_base_install_keeps_the_kernel_below_7_for_students_too():
    """Students' kernels run the lessons: the bound is in the base dependencies, not only the instructor extra."""
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [kernel] = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "ipykernel"]
    assert not kernel.specifier.contains("7.4.0") and kernel.specifier.contains("6.31.0")
    assert kernel.specifier.contains("5.5.6"), "no lower bound: Colab's own older kernel must stay"
