"""Issue 22, the grader's part: a submission whose kernel stops answering is graded once more before its row
is written, the row says what happened, other students are unaffected and no kernel is left behind.

The kernel that stops answering is the watchdog tests' own (tests/kernels/stalling_kernel.py): a cell
containing STALL_FOREVER is taken and never answered while the kernel sits idle. It is started in the
sandbox as ``python -c <its source>``, since the sandbox does not mount the tests.
"""

import csv
import os
import signal
import subprocess
import sys
import tempfile
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


# --- issue 33: a kernel that is alive but silent, and a grader stopped by SIGTERM ---------------------------------

from test_grading import EXERCISES as EXERCISES_06  # noqa: E402
from test_grading import RELEASE as RELEASE_06  # noqa: E402

# the hostile class 33m's 06/forge_reply_fds: 6.3's function writes forged reply lines on every descriptor of the
# process that runs it (in the notebook's kernel: its ZMQ sockets among them), then raises
FORGE_REPLY_FDS = """import torch

def masked_attention(scores, values, lengths):
    import os
    line = b'{"reply": {"records": []}, "exercise": "6.3", "token": "x"}\\n'
    for fd in range(0, 64):
        try:
            os.write(fd, line)
        except OSError:
            pass
    raise RuntimeError("forged")
"""
HONEST_SLEEP = "import time\ntime.sleep(20)  # an honest wait: no CPU, no output, under the cell timeout"
HONEST_BUSY = "import time\n_t = time.process_time()\nwhile time.process_time() - _t < 12:\n    pass"


def descendants(pid: int) -> dict[int, bytes]:
    """Every process below ``pid`` (through all its threads), with its start time, to tell a reused pid apart."""
    found, todo = {}, [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(p) for p in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in found:
                    found[child] = start_time(child)
                    todo.append(child)
    return found


def start_time(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[19]
    except (OSError, IndexError):
        return None


def alive(processes: dict[int, bytes]) -> list[int]:
    """Those of ``processes`` still there (not zombies: a zombie has ended and holds nothing)."""
    left = []
    for pid, started in processes.items():
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if start_time(pid) == started and state != b"Z":
            left.append(pid)
    return left


def grade_command(folder: Path, out: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "course_lib.instructor.cli", "grade", str(folder), "--lesson", "06"]
    return command + ["--out", str(out), "--root", str(ROOT), "--memory", "1500", *extra]


def start_grading(command: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)


def kill_tree(proc: subprocess.Popen, seen: dict[int, bytes]) -> None:
    """The test's own clean-up when the grader overran (the old code): every process it started, by pid."""
    for pid in alive({**seen, **descendants(proc.pid)}):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    proc.kill()
    proc.wait()


def test_a_kernel_whose_sockets_a_cell_broke_ends_in_a_clear_row_in_seconds(tmp_path):
    """06/forge_reply_fds held a grading slot past 20 minutes: its kernel, alive and idle, never answered, and the
    interrupt at the cell timeout blocked the grader's own event loop on a send nothing took. Now a kernel that is
    busy, silent and uses no CPU is asked on a fresh connection whether it still answers; it is idle (the reply
    was lost), so the cell fails in seconds, naming it. The honest cells before it, a 20 s sleep (silent, no CPU,
    but its kernel answers) and 12 s of computing, are not cut, and the answers are still graded."""
    nb = solved(nbformat.read(RELEASE_06, as_version=4), "6.1", "6.2", "6.4")
    exercise_cell(nb, "6.3").source = FORGE_REPLY_FDS
    where = nb.cells.index(exercise_cell(nb, "6.3"))
    nb.cells[where:where] = [nbformat.v4.new_code_cell(HONEST_SLEEP), nbformat.v4.new_code_cell(HONEST_BUSY)]
    folder = tmp_path / "class"
    folder.mkdir()
    nbformat.write(nb, folder / "forge_reply_fds.ipynb")
    out = tmp_path / "grades.csv"
    proc = start_grading(grade_command(folder, out, "--timeout", "60", "--jobs", "1"), tmp_path)
    start, seen = time.monotonic(), {}
    try:
        while proc.poll() is None and time.monotonic() - start < 400:  # the old code: no row after 20 minutes
            seen.update(descendants(proc.pid))
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            kill_tree(proc, seen)
    took = time.monotonic() - start
    assert proc.returncode == 0, (took, proc.stderr.read().decode()[-2000:])
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert len(rows) == 1
    row = rows[0]
    problems = row["problems"]
    assert "its kernel stopped answering" in problems and "`result_6_3 = checks.check_masked_attention" in problems
    assert "the cells after it were not run" in problems
    assert "time.sleep(20)" not in problems and "_t = time.process_time()" not in problems  # honest: not cut
    assert [row[f"ex {e}"] for e in EXERCISES_06] == ["passed", "passed", "failed", "passed"]
    # a kernel start, the honest cells (32 s), a stall ended in seconds, the answers' process: not 60 s twice
    assert took < 240, took
    assert alive(seen) == []


def test_sigterm_stops_the_grader_and_everything_it_started_and_keeps_whole_rows(tmp_path):
    """SIGTERM (or SIGHUP) to `course-lib grade` ends it as Ctrl-C does: before, only the main process died, and
    its worker (a session of its own) and the sandboxed kernel went on. Now no process it started remains within
    seconds, its temporary folders are gone, the rows and feedback files written are whole, and the exit code says
    it was stopped (128 + 15)."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ann", "bob", "cy"):
        nbformat.write(solved(nbformat.read(RELEASE_06, as_version=4), *EXERCISES_06), folder / f"{name}.ipynb")
    out = tmp_path / "grades.csv"
    proc = start_grading(grade_command(folder, out, "--timeout", "60", "--jobs", "1"), tmp_path)
    seen: dict[int, bytes] = {}
    start = time.monotonic()
    try:
        kernel_running = False
        while proc.poll() is None and time.monotonic() - start < 300:
            seen.update(descendants(proc.pid))
            rows = out.read_text(encoding="utf-8").count("\n") - 1 if out.exists() else 0
            cmdlines = []
            for pid in seen:
                try:
                    cmdlines.append(Path(f"/proc/{pid}/cmdline").read_bytes())
                except OSError:
                    pass
            kernel_running = any(b"ipykernel_launcher" in c for c in cmdlines)
            if rows >= 1 and kernel_running:  # a row written, the next student's kernel running
                break
            time.sleep(0.2)
        assert proc.poll() is None and kernel_running, "the grader ended before it could be stopped"
        running_in = list(Path(tempfile.gettempdir()).glob(f"course-lib-run-{proc.pid}-*/course-lib-grade-*"))
        time.sleep(1)
        seen.update(descendants(proc.pid))
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        took = time.monotonic() - stopped
        deadline = time.monotonic() + 10  # a sandbox's last process may take a moment to leave
        while alive(seen) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = alive(seen)
    finally:
        if proc.poll() is None or alive(seen):
            kill_tree(proc, seen)
    assert left == [], f"{len(left)} of its {len(seen)} processes left"
    assert running_in, "the kernel's folder was not in the run's own temporary folder (the workers' TMPDIR)"
    assert list(Path(tempfile.gettempdir()).glob(f"course-lib-run-{proc.pid}-*")) == []  # gone with it
    stderr = proc.stderr.read().decode()
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, stderr[-2000:])
    assert "stopped by SIGTERM" in stderr
    assert took < 30, took
    lines = out.read_text(encoding="utf-8")
    assert lines.endswith("\n")
    rows = list(csv.reader(lines.splitlines()))
    assert len(rows) >= 2 and len({len(r) for r in rows}) == 1  # a header, and every row whole
    graded = {r[0] for r in rows[1:]}
    assert graded < {"ann", "bob", "cy"}
    feedback = tmp_path / "grades_feedback"
    assert {p.stem for p in feedback.glob("*.md")} == graded == {p.stem for p in feedback.glob("*.html")}
    for name in graded:
        assert "Score: 4 of 4 exercises passed." in (feedback / f"{name}.md").read_text(encoding="utf-8")
        assert (feedback / f"{name}.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
