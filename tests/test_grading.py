"""Grading a folder of good, partial, broken and hostile submissions.

The class is of lesson 06, the cheapest lesson to grade (about half of lesson 01's time per submission):
what it checks (one row each, limits, forgery, sabotage) does not depend on the lesson; every lesson's own
grading is checked by test_every_lesson_is_graded_outside_the_kernel below."""

import csv
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import checks
from course_lib.instructor import cli, gradebook, grading, sandbox, submission
from course_lib.instructor.release import lesson_of

ROOT = Path(__file__).resolve().parents[1]
LESSON = "06"
RELEASE = ROOT / "exercises" / "06_masked_attention.ipynb"
SOLUTION = ROOT / "solutions" / "06_masked_attention.ipynb"
RELEASE_01 = ROOT / "exercises" / "01_ngrams.ipynb"  # the unit tests below that need no grading
SOLUTION_01 = ROOT / "solutions" / "01_ngrams.ipynb"
EXERCISES = ["6.1", "6.2", "6.3", "6.4"]


def exercise_cell(nb, exercise):
    return next(
        c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == f"ex-{exercise.replace('.', '-')}"
    )


def solved(nb, *exercises):
    """The released notebook with the given exercises' cells replaced by the solutions' (of its own lesson)."""
    name = grading.release_notebook(lesson_of(nb), ROOT).name
    solution = nbformat.read(ROOT / "solutions" / name, as_version=4)
    for e in exercises:
        exercise_cell(nb, e).source = exercise_cell(solution, e).source
    return nb


def lesson_exercises():
    """Every exercise of the lesson: the grader decides each verdict itself (draw / run / judge)."""
    return set(checks.exercises(LESSON))


# Each attack from issue 16 is a submission that solves exercise 6.1 honestly (so its row shows that its
# own work still counts) and tries its trick on the others; comments say what it tries.
ATTACKS = {
    # forgery: rebind the checks' machinery so every check says "passed"
    "monkeypatcher": """
import course_lib.checks as _c
from course_lib.checks import protocol as _p
_c._run = lambda body, fn, eid, title: _c.CheckResult(eid, title, "passed", "")
for _name in dir(_p):
    _obj = getattr(_p, _name)
    if isinstance(_obj, type):
        for _attr in ("judge", "run"):
            if hasattr(_obj, _attr):
                try:
                    setattr(_obj, _attr, lambda self, *a, **k: ("passed", ""))
                except Exception:
                    pass
""",
    # forgery: write "passed" lines into the results channel, now, at exit and from a thread
    "channel_writer": """
import atexit, json, os, threading, time
def _forge():
    path = os.environ.get("COURSE_LIB_RESULTS")
    if path:
        with open(path, "a") as f:
            for e in EXERCISES[1:]:
                f.write(json.dumps({"exercise": e, "title": "", "status": "passed", "message": ""}) + "\\n")
_forge()
atexit.register(_forge)
threading.Thread(target=lambda: [time.sleep(0.5) or _forge() for _ in range(100)], daemon=True).start()
def _overwrite():  # wait for the grader's records files and replace them with "passed"
    import glob
    for _ in range(2000):
        for _path in glob.glob(os.path.expanduser("~/.records-*")) + glob.glob(".records-*"):
            try:
                open(_path, "w").write(json.dumps({"records": [{"status": "passed", "message": ""}]}))
            except Exception:
                pass
        time.sleep(0.05)
threading.Thread(target=_overwrite, daemon=True).start()
""",
    # forgery: copy the answers from the grader's solutions/ folder (by path, or via /proc/<pid>/cwd)
    "solution_reader": """
import glob, json
for _path in [SOLUTIONS] + glob.glob("/proc/*/cwd/solutions/06_masked_attention.ipynb"):
    try:
        for _cell in json.load(open(_path))["cells"]:
            _src = "".join(_cell["source"])
            if "def by_hand" in _src or "def masked_attention" in _src:
                exec(_src.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
    except Exception:
        pass
""",
    # forgery: copy the answers out of another student's submission
    "peer_reader": """
import glob, json
for _path in glob.glob(SUBMISSIONS + "/*.ipynb"):
    try:
        for _cell in json.load(open(_path))["cells"]:
            if "def masked_attention" in "".join(_cell["source"]) and "NotImplementedError" not in "".join(_cell["source"]):
                exec("".join(_cell["source"]))
    except Exception:
        pass
""",
    # sabotage: overwrite every other submission and the grades CSV
    "saboteur": """
import glob
for _path in glob.glob(SUBMISSIONS + "/*.ipynb") + glob.glob(GRADES + "/*"):
    try:
        open(_path, "w").write("sabotaged")
    except Exception:
        pass
""",
    # denial of service: fill the process table (each child sleeps, so the machine is not burnt)
    "fork_bomb": """
import os, time
for _ in range(100000):
    try:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
    except OSError:
        break
""",
    # denial of service: eat all memory
    "memory_bomb": """
_hog = [b"x" * (256 * 2**20) for _ in range(64)]
""",
    # a process left running after the notebook ends (a child and a detached grandchild)
    "lingerer": """
import subprocess
subprocess.Popen(["sleep", "4321"])
subprocess.Popen(["setsid", "sleep", "4321"], start_new_session=True)
""",
    # a loop that ignores the interrupt: must be killed, not interrupted forever
    "sigint_ignorer": """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
""",
    # kill the grader
    "parent_killer": """
import os, signal
for _pid in (os.getppid(), 1):
    try:
        os.kill(_pid, signal.SIGKILL)
    except Exception:
        pass
""",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    grades = tmp_path_factory.mktemp("grades")
    release = lambda: nbformat.read(RELEASE, as_version=4)  # noqa: E731

    nbformat.write(solved(release(), *EXERCISES), subs / "good.ipynb")
    nbformat.write(release(), subs / "untouched.ipynb")
    # three kinds in one submission (each grade is a sandboxed kernel and an answers process): partly solved, a
    # name that is a spreadsheet formula, and a notebook that tries to overwrite itself on disk
    nb = solved(release(), "6.1", "6.3")
    nb.cells.insert(1, nbformat.v4.new_code_cell("open('self.ipynb', 'w').write('gone')"))
    nbformat.write(nb, subs / "=1+2.ipynb")

    nb = solved(release(), "6.1")
    exercise_cell(nb, "6.2").source = "def by_hand()\n    return 0"  # syntax error
    nbformat.write(nb, subs / "broken.ipynb")

    nb = solved(release(), "6.1", "6.2")
    exercise_cell(nb, "6.3").source = "while True:\n    pass"
    nbformat.write(nb, subs / "loops.ipynb")

    nb = solved(release(), "6.3")
    exercise_cell(nb, "6.4").source += "\nfor _ in range(50):\n    print('spam ' * 20_000)"
    nbformat.write(nb, subs / "spammer.ipynb")

    nb = solved(release(), "6.1", "6.2")  # one print bigger than the grader reads in one message
    exercise_cell(nb, "6.3").source = "print('x' * 100_000_000)\n1 / 0"
    nbformat.write(nb, subs / "shouter.ipynb")

    nb = solved(release(), *EXERCISES)
    checks_cells = [c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("grade_id", "").startswith("check-")]
    checks_cells[0].source = "result = 'passed'  # I promise"  # an edited check
    nb.cells.remove(checks_cells[1])  # a deleted check
    nb.cells.remove(next(c for c in nb.cells if "import course_lib" in c.source))  # the setup cell, deleted
    nb.cells[0].metadata["nbgrader"] = None  # metadata that says null
    nbformat.write(nb, subs / "tamperer.ipynb")

    nb = solved(release(), "6.1", "6.2")
    i, j = nb.cells.index(exercise_cell(nb, "6.1")), nb.cells.index(exercise_cell(nb, "6.2"))
    nb.cells[i], nb.cells[j] = nb.cells[j], nb.cells[i]
    nbformat.write(nb, subs / "reordered.ipynb")

    where = f"SOLUTIONS = {str(SOLUTION)!r}\nSUBMISSIONS = {str(subs)!r}\nGRADES = {str(grades)!r}\n"
    for name, attack in ATTACKS.items():
        nb = solved(release(), "6.1")
        exercise_cell(nb, "6.2").source = where + attack
        nbformat.write(nb, subs / f"{name}.ipynb")

    (subs / "notes.ipynb").write_text("these are my notes, not a notebook", encoding="utf-8")
    (subs / "empty.ipynb").write_bytes(b"")
    (subs / "passwd.ipynb").symlink_to("/etc/passwd")
    os.mkfifo(subs / "fifo.ipynb")

    hashes = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in subs.iterdir() if p.is_file()}
    out = grades / "grades.csv"
    # a 45 s cell timeout: lesson 06's cells take a second or two on a quiet machine, but an honest 6.1 ran past 20 s
    # beside a loaded machine's other work (twice seen); the looping submission pays it, the others do not
    code = cli.main(
        ["grade", str(subs), "--lesson", LESSON, "--out", str(out), "--timeout", "45", "--budget", "150"]
        + ["--jobs", "2", "--memory", "1500", "--root", str(ROOT)]
    )
    assert code == 0
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    feedback = {p.stem: p.read_text(encoding="utf-8") for p in (out.parent / "grades_feedback").iterdir()}
    return subs, hashes, rows, feedback


PARTIAL = "'=1+2"  # the row of the partly solved submission (its name, a formula, is written as text)


def statuses(row):
    return [row[f"ex {e}"] for e in EXERCISES]


def test_one_row_per_student_and_a_feedback_file_each(graded):
    subs, _, rows, feedback = graded
    assert set(rows) == {grading.safe_cell(p.stem) for p in subs.iterdir()}
    assert len(feedback) == len(rows)


def test_good_and_untouched(graded):
    _, _, rows, feedback = graded
    n = len(EXERCISES)
    assert set(EXERCISES) == lesson_exercises() and [k for k in rows["good"] if k.startswith("ex ")] == [
        f"ex {e}" for e in EXERCISES
    ]  # a column for every exercise of the lesson (test_every_lesson_is_graded_outside_the_kernel leaves 06 here)
    assert (
        rows["good"]["score"] == str(n) and statuses(rows["good"]) == ["passed"] * n and rows["good"]["problems"] == ""
    )
    assert statuses(rows["untouched"]) == ["not implemented yet"] * n and rows["untouched"]["score"] == "0"
    assert f"Score: {n} of {n}" in feedback["good"]


def test_partial(graded):
    _, _, rows, _ = graded
    assert statuses(rows[PARTIAL]) == ["passed", "not implemented yet", "passed", "not implemented yet"]


def test_broken_cell_is_reported_and_the_rest_still_graded(graded):
    _, _, rows, feedback = graded
    row = rows["broken"]
    assert row["ex 6.1"] == "passed" and row["ex 6.2"] != "passed" and "SyntaxError" in row["problems"]
    assert "SyntaxError" in feedback["broken"]


def test_infinite_loop_is_interrupted_and_grading_goes_on(graded):
    _, _, rows, _ = graded
    row = rows["loops"]
    assert "time limit" in row["problems"]
    assert row["ex 6.1"] == "passed" and row["ex 6.2"] == "passed" and row["ex 6.4"] == "not implemented yet"


def test_megabytes_of_output_are_reported(graded):
    _, _, rows, _ = graded
    assert "MB of output" in rows["spammer"]["problems"] and rows["spammer"]["ex 6.3"] == "passed"


def test_an_output_too_big_for_one_message_is_reported_and_the_rest_still_graded(graded):
    _, _, rows, _ = graded
    row = rows["shouter"]
    assert "never reached the grader" in row["problems"] and "over 64 MB" in row["problems"]
    assert row["ex 6.1"] == row["ex 6.2"] == "passed" and row["ex 6.3"] == "failed"


def test_edited_and_deleted_checks_are_restored(graded):
    _, _, rows, feedback = graded
    row = rows["tamperer"]
    assert statuses(row) == ["passed"] * len(EXERCISES)  # every check ran as released, after the released setup cell
    assert "check-6-1 was edited" in row["problems"] and "was deleted" in row["problems"]
    assert "setup cell was changed or deleted" in row["problems"]
    assert "was deleted; put back" in feedback["tamperer"]


def test_reordered_cells_are_reported(graded):
    _, _, rows, _ = graded
    assert "reordered" in rows["reordered"]["problems"]


def test_not_a_notebook(graded):
    _, _, rows, _ = graded
    assert "not a notebook" in rows["notes"]["problems"] and "not a notebook" in rows["empty"]["problems"]
    assert statuses(rows["notes"]) == ["not run"] * len(EXERCISES)


def test_submissions_are_never_modified(graded):
    subs, hashes, rows, _ = graded
    files = [p for p in subs.iterdir() if p.is_file()]
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files} == hashes
    assert rows[PARTIAL]["ex 6.3"] == "passed"  # it wrote self.ipynb into the grader's scratch copy, not here


def test_restore_checks_without_any_metadata_appends_checks_at_the_end():
    release = nbformat.read(RELEASE_01, as_version=4)
    bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    restored, notes = grading.restore_checks(bare, release)
    assert "import course_lib" in restored.cells[0].source and restored.cells[1].source == "x = 1"
    assert len(notes) == 6 and all("deleted" in n for n in notes)  # five checks and the setup cell


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="lesson must be two digits"):
        grading.release_notebook("one", ROOT)
    with pytest.raises(FileNotFoundError, match="no exercise notebook"):
        grading.release_notebook("99", ROOT)
    with pytest.raises(ValueError, match="no notebooks found$"):
        grading.grade([tmp_path], "01", tmp_path / "g.csv", root=ROOT)
    # nbgrader's course folder given one level too high (submitted/<student>/<assignment>/<notebook>.ipynb below it)
    course = tmp_path / "course"
    (course / "submitted" / "alice" / "01").mkdir(parents=True)
    (course / "submitted" / "alice" / "01" / "01_ngrams.ipynb").write_text("{}")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")  # what `nbgrader quickstart` writes
    with pytest.raises(ValueError, match="course holds nbgrader's submitted/ folder; pass that folder itself"):
        grading.grade([course], "01", tmp_path / "g.csv", root=ROOT)


def test_a_temporary_folder_too_long_for_a_kernels_sockets_stops_the_run_before_anyone_is_graded(tmp_path, monkeypatch):
    """A kernel's sockets are files under the workers' temporary folder and Linux caps such a path at 107 bytes:
    a long TMPDIR is the instructor's to fix, said before any student is graded (not a row per student with
    ZeroMQ's "File name too long")."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(RELEASE, subs / "alice.ipynb")
    long_tmp = tmp_path / ("t" * 60)
    long_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long_tmp))
    out = tmp_path / "g.csv"
    with pytest.raises(grading.InstructorError, match="too long a path for a kernel's sockets.*set TMPDIR"):
        grading.grade([subs], LESSON, out, root=ROOT, progress=None)
    assert not out.exists() and list(long_tmp.iterdir()) == []


def test_a_stray_gradebook_beside_a_student_named_submitted_in_a_flat_folder_stops_no_one(tmp_path):
    """nbgrader's course folder (its gradebook.db beside submitted/, no notebook of its own) passed one level too
    high stops the run with the folder to pass instead; a flat folder of students' notebooks that also holds an
    upload named gradebook.db and a student folder named submitted/ is students, every one of them (hostile class
    33n: three students got no row)."""
    flat = tmp_path / "flat"
    (flat / "submitted" / "ps6").mkdir(parents=True)
    shutil.copy(RELEASE, flat / "submitted" / "ps6" / RELEASE.name)
    shutil.copy(RELEASE, flat / "alice.ipynb")
    shutil.copy(RELEASE, flat / "bob.ipynb")
    (flat / "gradebook.db").write_text("a stray upload named gradebook.db\n")
    assert not grading._nbgrader_course(flat)
    entries, _ = grading.collect([flat], RELEASE.name)
    assert sorted(e.student for e in entries) == ["alice", "bob", "submitted"]
    course = tmp_path / "course"
    (course / "submitted" / "alice" / "06").mkdir(parents=True)
    shutil.copy(RELEASE, course / "submitted" / "alice" / "06" / RELEASE.name)
    (course / "gradebook.db").write_text("")
    assert grading._nbgrader_course(course)


def test_release_copies_and_never_overwrites(tmp_path, capsys):
    assert cli.main(["release", "01", str(tmp_path), "--root", str(ROOT)]) == 0
    copied = tmp_path / "01_ngrams.ipynb"
    released = json.loads(copied.read_text())
    stamp = released["metadata"]["course_lib"].pop("release")  # the checks' fingerprints (test_fingerprint.py)
    assert released == json.loads(RELEASE_01.read_text()) and set(stamp) == {"version", "versions", "checks"}
    copied.write_text("{}")  # a student's work in progress
    assert cli.main(["release", "01", str(tmp_path), "--root", str(ROOT)]) == 2
    assert "not overwriting" in capsys.readouterr().err and copied.read_text() == "{}"


def test_doctor_reports(capsys):
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert "torch" in out and "device:" in out and "kernel:" in out and code in (0, 1)
    assert "pytest" not in out and "nbclient" not in out  # a student does not need them
    cli.main(["doctor", "--for", "contributor"])
    out = capsys.readouterr().out
    assert "pytest" in out and "nbclient" in out and "grading isolation:" in out


def test_a_file_name_cannot_become_an_option(tmp_path, capsys):
    (tmp_path / "bob.ipynb").write_text("bob's work")
    argv = ["grade", str(tmp_path / "bob.ipynb"), "--out=bob.ipynb", "--lesson", "01", "--out", "g.csv"]
    assert cli.main(argv) == 2 and "looks like an option" in capsys.readouterr().err
    assert (tmp_path / "bob.ipynb").read_text() == "bob's work"


# --------------------------------------------------------------------------- the attacks of issue 16


def honest_part_only(row):
    """The row of an attack that solved 6.1 itself: 6.1 passed, none of what it tried to steal or forge."""
    return row["ex 6.1"] == "passed" and all(row[f"ex {e}"] != "passed" for e in EXERCISES[1:])


def test_forging_through_the_results_channel_gets_nothing(graded):
    _, _, rows, _ = graded
    row = rows["channel_writer"]  # its thread may also overwrite the records of its own honest 6.1
    assert all(row[f"ex {e}"] != "passed" for e in EXERCISES[1:]) and row["score"] in ("0", "1")


def test_forging_by_monkeypatching_the_checks(graded):
    _, _, rows, feedback = graded
    row = rows["monkeypatcher"]
    # it rebound the kernel's own run machinery, so even its honest 6.1 comes back malformed: what it earned
    forged = [e for e in lesson_exercises() if e != "6.1"]
    if not forged:
        pytest.xfail("no check of the lesson is split into draw / run / judge yet: the kernel still judges")
    assert all(row[f"ex {e}"] != "passed" for e in forged)
    # exactly what its answer cells earn: its own 6.1; 6.2, whose cell rebinds the checks at top level, refused
    # when loaded; the stubs of 6.3 and 6.4 (lesson 06's case of test_every_lesson_is_graded_outside_the_kernel)
    assert statuses(row) == ["passed", "failed", "not implemented yet", "not implemented yet"], row
    assert "was not loaded" in feedback["monkeypatcher"], feedback["monkeypatcher"]


@pytest.mark.skipif(not sandbox.detect().bwrap, reason="no bubblewrap sandbox on this machine")
def test_reading_the_solutions_or_another_submission_finds_nothing(graded):
    _, _, rows, _ = graded
    assert honest_part_only(rows["solution_reader"]) and honest_part_only(rows["peer_reader"])


@pytest.mark.skipif(not sandbox.detect().bwrap, reason="no bubblewrap sandbox on this machine")
def test_sabotage_reaches_no_other_row_and_no_file(graded):
    subs, hashes, rows, _ = graded
    assert honest_part_only(rows["saboteur"])
    assert statuses(rows["good"]) == ["passed"] * len(EXERCISES)  # the victims keep their grade
    assert all(hashlib.sha256((subs / n).read_bytes()).hexdigest() == h for n, h in hashes.items())
    assert len(rows) == len(list(subs.iterdir()))  # the CSV was not rewritten


def test_fork_bomb_memory_bomb_and_killers_cost_only_their_own_rows(graded):
    _, _, rows, _ = graded
    for name in ("fork_bomb", "memory_bomb", "parent_killer", "sigint_ignorer"):
        assert rows[name]["ex 6.1"] in ("passed", "not run"), name  # the kernel may die before the grader asks
        assert all(rows[name][f"ex {e}"] != "passed" for e in EXERCISES[1:]), name
    assert "kernel" in rows["memory_bomb"]["problems"]  # it died: out of memory
    assert "ignored the interrupt" in rows["sigint_ignorer"]["problems"]
    assert rows["good"]["score"] == str(len(EXERCISES)) and rows[PARTIAL]["score"] == "2"


def test_no_process_outlives_its_submission(graded):
    left = []
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", b"4321"]:
                left.append(proc.name)
        except OSError:
            pass
    assert left == []


def test_symlinks_and_fifos_are_not_followed(graded):
    _, _, rows, feedback = graded
    assert "symbolic link" in rows["passwd"]["problems"] and "root:" not in json.dumps(rows)
    assert "regular file" in rows["fifo"]["problems"]
    assert "root:" not in feedback["passwd"]


def test_a_name_that_is_a_spreadsheet_formula_stays_text(graded):
    _, _, rows, _ = graded
    assert PARTIAL in rows and rows[PARTIAL]["score"] == "2"
    assert grading.safe_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and grading.safe_cell("-1") == "'-1"
    assert grading.safe_cell("@x") == "'@x" and grading.safe_cell("+1") == "'+1" and grading.safe_cell("ok") == "ok"


def test_no_kernel_is_the_instructors_error(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipykernel" else real(name, *a))
    nbformat.write(nbformat.read(RELEASE_01, as_version=4), tmp_path / "alice.ipynb")
    out = tmp_path / "g.csv"
    assert cli.main(["grade", str(tmp_path / "alice.ipynb"), "--lesson", "01", "--out", str(out)]) == 2
    assert "no Jupyter kernel" in capsys.readouterr().err
    assert not out.exists() or "alice" not in out.read_text()


def test_instructor_errors_stop_before_any_row(tmp_path, capsys):
    (tmp_path / "alice.ipynb").write_text("not a notebook")
    # a notebook name in --out (as a shell glob can produce) is refused, and the notebook is untouched
    assert cli.main(["grade", str(tmp_path), "--lesson", "01", "--out", str(tmp_path / "alice.ipynb")]) == 2
    assert (
        tmp_path / "alice.ipynb"
    ).read_text() == "not a notebook" and "--out must end in .csv" in capsys.readouterr().err
    no_exercises = tmp_path / "rel.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), no_exercises)
    out = tmp_path / "g.csv"
    code = cli.main(
        ["grade", str(tmp_path / "alice.ipynb"), "--lesson", "01", "--out", str(out), "--release", str(no_exercises)]
    )
    assert code == 2 and "has no exercises" in capsys.readouterr().err and not out.exists()
    blocked = tmp_path / "file"
    blocked.write_text("")
    code = cli.main(["grade", str(tmp_path / "alice.ipynb"), "--lesson", "01", "--out", str(blocked / "g.csv")])
    assert code == 2 and "cannot write the grades" in capsys.readouterr().err


def interrupted_at_the_second(run_all):
    """``grading._run_all`` stopped by Ctrl-C while the second submission is being graded."""

    def interrupted(entries, *a):
        for i, sub in enumerate(run_all(entries, *a)):
            if i == 1:
                raise KeyboardInterrupt
            yield sub

    return interrupted


def test_rows_are_kept_and_a_second_run_resumes(tmp_path, monkeypatch, capsys):
    for name in ("ann", "bob", "cy"):
        (tmp_path / f"{name}.ipynb").write_text("not a notebook: graded at once")
    out = tmp_path / "out" / "g.csv"
    real = grading._run_all
    monkeypatch.setattr(grading, "_run_all", interrupted_at_the_second(real))
    args = ["grade", str(tmp_path), "--lesson", "01", "--out", str(out), "--root", str(ROOT)]
    assert cli.main(args) == 130
    assert "stopped by you" in capsys.readouterr().err
    first = list(csv.DictReader(open(out, encoding="utf-8")))
    assert [r["student"] for r in first] == ["ann"]  # kept; the interrupted student got no row
    monkeypatch.setattr(grading, "_run_all", real)
    assert cli.main(args) == 0
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert [r["student"] for r in rows] == ["ann", "bob", "cy"]
    assert "resuming: 1 student" in capsys.readouterr().out


def test_names_that_once_collided_or_stopped_the_run_get_one_row_each(tmp_path, monkeypatch, capsys):
    """Hostile class 33l: a student named like another once quoted ("-=x" and "'-=x" were both written "'-=x": one
    was taken as done on resume), a student named ``submitted`` (nbgrader's layout) or a link of that name (a flat
    folder) stopped everyone's grading, and Jupyter's autosave folder in a flat folder was a student."""
    flat = tmp_path / "flat"
    flat.mkdir()
    for name in ("'-=x", "-=x", "ok"):
        (flat / f"{name}.ipynb").write_text("not a notebook: graded at once")
    (flat / "submitted").symlink_to(tmp_path)
    (flat / ".ipynb_checkpoints").mkdir()  # the instructor opened ok.ipynb in Jupyter: no student of that name
    (flat / ".ipynb_checkpoints" / "ok-checkpoint.ipynb").write_text("not a notebook")
    out = tmp_path / "out" / "g.csv"
    real = grading._run_all
    monkeypatch.setattr(grading, "_run_all", interrupted_at_the_second(real))
    args = ["grade", str(flat), "--lesson", "01", "--out", str(out), "--root", str(ROOT)]
    assert cli.main(args) == 130
    monkeypatch.setattr(grading, "_run_all", real)
    assert cli.main(args) == 0
    rows = [r["student"] for r in csv.DictReader(open(out, encoding="utf-8"))]
    assert sorted(gradebook._unquoted(r) for r in rows) == sorted(["'-=x", "-=x", "ok", "submitted"]), rows
    assert len(set(rows)) == len(rows) == len(list((out.parent / "g_feedback").glob("*.md")))
    capsys.readouterr()

    nbg = tmp_path / "submitted"  # nbgrader's layout, a student named submitted among the others
    for student in ("submitted", "ivy"):
        (nbg / student / "ps06").mkdir(parents=True)
        (nbg / student / "ps06" / "06_masked_attention.ipynb").write_text("not a notebook")
    out = tmp_path / "nbg.csv"
    assert cli.main(["grade", str(nbg), "--lesson", "06", "--out", str(out), "--root", str(ROOT)]) == 0
    assert sorted(r["student"] for r in csv.DictReader(open(out, encoding="utf-8"))) == ["ivy", "submitted"]


NAMES = st.text(alphabet=st.sampled_from("=+-@'\t\rab "), max_size=4) | st.text(max_size=6)


@given(NAMES, NAMES)
def test_a_cell_made_safe_is_one_to_one_and_read_back(a, b):
    assert gradebook._unquoted(grading.safe_cell(a)) == a
    assert (grading.safe_cell(a) == grading.safe_cell(b)) == (a == b)
    assert grading.safe_cell(a)[:1] not in ("=", "+", "-", "@", "\t", "\r")


def test_nbgrader_layout_and_one_student_per_folder(tmp_path):
    for student in ("alice", "bob"):
        (tmp_path / student / "ps1").mkdir(parents=True)
        (tmp_path / student / "ps1" / "01_ngrams.ipynb").write_text("{}")
    (tmp_path / "carol.ipynb").write_text("{}")
    (tmp_path / "dave" / "ps1" / "deep" / "x").mkdir(parents=True)
    (tmp_path / "dave" / "ps1" / "deep" / "x" / "01_ngrams.ipynb").write_text("{}")
    (tmp_path / "erin" / "ps1").mkdir(parents=True)  # nbgrader's layout, the assignment folder a link
    (tmp_path / "erin" / "ps1" / "ps1").symlink_to(tmp_path / "alice" / "ps1")
    (tmp_path / "frank").mkdir()  # nothing handed in: no row
    (tmp_path / "gina" / "ps1").mkdir(parents=True)  # her notebook has no name before .ipynb: the folder names her
    (tmp_path / "gina" / "ps1" / ".ipynb").write_text("{}")
    (tmp_path / ".ipynb").write_text("{}")  # a notebook with no name: a row that says so
    (tmp_path / "hal" / "ps1" / ".ipynb_checkpoints").mkdir(parents=True)  # only Jupyter's autosave: a row says so
    (tmp_path / "hal" / "ps1" / ".ipynb_checkpoints" / "01_ngrams-checkpoint.ipynb").write_text("{}")
    (tmp_path / "gina" / "ps1" / ".ipynb_checkpoints").mkdir()  # beside a notebook: the notebook is graded
    (tmp_path / "gina" / "ps1" / ".ipynb_checkpoints" / "-checkpoint.ipynb").write_text("{}")
    entries, warnings = grading.collect([tmp_path])
    assert sorted((e.student, e.path.name, e.problem[:60]) for e in entries) == [
        (".ipynb", ".ipynb", "not graded: the notebook has no name before .ipynb"),
        ("alice", "01_ngrams.ipynb", ""),
        ("bob", "01_ngrams.ipynb", ""),
        ("carol", "carol.ipynb", ""),
        ("dave", "dave", "not graded: the notebook ps1/deep/x/01_ngrams.ipynb is too d"),
        ("erin", "erin", "not graded: ps1/ps1 is a symbolic link (links are not follow"),
        ("gina", ".ipynb", ""),
        ("hal", "hal", "not graded: only Jupyter's autosaved copy ps1/.ipynb_checkpo"),
    ]
    assert any("too deep" in w for w in warnings) and any("frank: no notebook" in w for w in warnings)


def test_odd_student_names_and_suffixes_in_either_layout_get_their_row(tmp_path):
    """Hostile class 33m: in nbgrader's layout a student named ``.ipynb_checkpoints`` was taken for Jupyter's
    autosave (no row), one named ``.ipynb`` got "no name before .ipynb" instead of a grade, and a notebook saved
    as ``.IPYNB`` (in either layout) got no row at all."""
    nbg = tmp_path / "submitted"
    for student, name in ((".ipynb_checkpoints", "06_masked_attention.ipynb"), (".ipynb", "06_masked_attention.ipynb"),
                          ("carol", "06_masked_attention.IPYNB")):  # fmt: skip
        (nbg / student / "ps1").mkdir(parents=True)
        (nbg / student / "ps1" / name).write_text("{}")
    (nbg / "dan" / "ps1" / ".ipynb_checkpoints").mkdir(parents=True)  # Jupyter's autosave inside a student's folder
    (nbg / "dan" / "ps1" / ".ipynb_checkpoints" / "06_masked_attention-checkpoint.ipynb").write_text("{}")
    (nbg / "dan" / "ps1" / "06_masked_attention.ipynb").write_text("{}")
    entries, warnings = grading.collect([nbg], "06_masked_attention.ipynb")
    rows = {e.student: (e.path.relative_to(nbg).as_posix(), e.problem) for e in entries}
    assert rows == {
        ".ipynb_checkpoints": (".ipynb_checkpoints/ps1/06_masked_attention.ipynb", ""),
        ".ipynb": (".ipynb/ps1/06_masked_attention.ipynb", ""),
        "carol": ("carol/ps1/06_masked_attention.IPYNB", ""),
        "dan": ("dan/ps1/06_masked_attention.ipynb", ""),
    }, (rows, warnings)
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "erin.IPYNB").write_text("{}")
    (flat / ".ipynb_checkpoints").mkdir()  # the instructor opened erin's notebook: files only, no student
    (flat / ".ipynb_checkpoints" / "erin-checkpoint.ipynb").write_text("{}")
    entries, warnings = grading.collect([flat])
    assert [(e.student, e.path.name) for e in entries] == [("erin", "erin.IPYNB")], (entries, warnings)
    assert any("autosaved copies" in w for w in warnings), warnings


def test_a_course_with_several_assignments_grades_each_students_notebook_of_this_lesson(tmp_path):
    # nbgrader's submitted/ of a course with several assignments: one folder per assignment (hostile class 33k:
    # every such student got "not graded: 2 notebooks"); the released notebook's name picks the one to grade
    for student in ("ann", "bob"):
        for assignment, name in (("ps05", "05_attention.ipynb"), ("ps06", "06_masked_attention.ipynb")):
            (tmp_path / student / assignment).mkdir(parents=True)
            (tmp_path / student / assignment / name).write_text("{}")
    (tmp_path / "cy" / "ps06").mkdir(parents=True)  # two copies of this lesson's notebook: which one is unclear
    (tmp_path / "cy" / "ps06" / "06_masked_attention.ipynb").write_text("{}")
    (tmp_path / "cy" / "old").mkdir()
    (tmp_path / "cy" / "old" / "06_masked_attention.ipynb").write_text("{}")
    entries, warnings = grading.collect([tmp_path], "06_masked_attention.ipynb")
    rows = {e.student: (e.path.relative_to(tmp_path).as_posix(), e.problem[:30]) for e in entries}
    assert rows == {
        "ann": ("ann/ps06/06_masked_attention.ipynb", ""),
        "bob": ("bob/ps06/06_masked_attention.ipynb", ""),
        "cy": ("cy", "not graded: 2 notebooks for on"),
    }
    assert any("ann: graded 06_masked_attention.ipynb; not ps05/05_attention.ipynb" in w for w in warnings), warnings
    entries, _ = grading.collect([tmp_path])  # no release named: two notebooks are two notebooks
    assert all(e.problem.startswith("not graded: 2 notebooks") for e in entries)


def test_a_malformed_reply_from_the_kernel_fails_that_exercise_and_nothing_else():
    from course_lib.instructor import submission

    exercise = checks.exercises("01")["1.4"]
    cases = exercise.draw(7)
    for reply in (b"[1, 2]", b'{"records": "passed"}', b'{"records": [{"status": "passed"}]}', b"\xff\xfe", b"!"):
        judged = submission._judge(exercise, cases, reply, "t")
        assert judged["status"] == "failed" and judged["title"] == "t", (reply, judged)
    assert submission._judge(exercise, cases, None, "t")["status"] == "not run"
    stub = submission._judge(exercise, cases, b'{"error": "NotImplementedError"}', "t")
    assert stub["status"] == "not implemented yet"
    right = exercise.run(solved_function("1.4"), checks.from_plain(checks.to_plain(cases)))
    reply = json.dumps({"records": checks.to_plain(right)}).encode()
    assert submission._judge(exercise, cases, reply, "t")["status"] == "passed"


def solved_function(exercise):
    """The solution's function for an exercise of lesson 01, defined from its answer cell."""
    namespace = {}
    exec(exercise_cell(nbformat.read(SOLUTION_01, as_version=4), exercise).source, namespace)
    return namespace[checks.exercises("01")[exercise].function]


def test_read_regular_refuses_links_fifos_and_big_files(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2000)
    (tmp_path / "link").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ValueError, match="symbolic link"):
        grading.read_regular(tmp_path / "link", 100)
    with pytest.raises(ValueError, match="regular file"):
        grading.read_regular(tmp_path / "fifo", 100)
    with pytest.raises(ValueError, match="over the limit"):
        grading.read_regular(tmp_path / "big", 100)
    assert grading.read_regular(tmp_path / "big", 2000) == b"x" * 2000


FORGER = """
import course_lib.checks as _c
from course_lib.checks import protocol as _p
_p.Exercise.judge = lambda self, cases, records: ("passed", "")
_p.Exercise.check = lambda self, fn, **kw: _c.CheckResult(self.id, self.title, "passed", "")
"""


@pytest.mark.parametrize("lesson", ["02", "03", "04", "05", "07"])
def test_every_lesson_is_graded_outside_the_kernel(lesson, tmp_path):
    """A solved notebook of each lesson gets full marks from the grader; an unsolved one whose first answer
    cell rebinds the checks' judge to say "passed" gets what its functions earn: nothing (and that cell,
    code that runs when it is loaded, is refused). Lesson 06 is not graded again here: the class above has
    both cases (test_good_and_untouched: "good", every column passed; test_forging_by_monkeypatching_the_checks:
    an answer cell that rebinds the checks, refused, with the stubs after it not implemented). Lesson 01's
    are in test_grading_answers.py (exits: every exercise passed; the untouched notebooks score 0)."""
    release_path = grading.release_notebook(lesson, ROOT)
    solution = nbformat.read(ROOT / "solutions" / release_path.name, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells if c.metadata.get("nbgrader")}
    answer_ids = [
        c.metadata["nbgrader"]["grade_id"] for c in solution.cells if (c.metadata.get("nbgrader") or {}).get("solution")
    ]
    subs = tmp_path / "subs"
    subs.mkdir()
    solved_nb = nbformat.read(release_path, as_version=4)
    for cell in solved_nb.cells:
        gid = (cell.metadata.get("nbgrader") or {}).get("grade_id")
        if gid in answer_ids:
            cell.source = answers[gid]
    nbformat.write(solved_nb, subs / "solved.ipynb")
    forger = nbformat.read(release_path, as_version=4)
    first = next(c for c in forger.cells if (c.metadata.get("nbgrader") or {}).get("grade_id") == answer_ids[0])
    first.source += "\n" + FORGER
    nbformat.write(forger, subs / "forger.ipynb")

    out = tmp_path / "grades.csv"
    # the grader's own limits (120 s a cell, 900 s a notebook): lesson 03's 3.2 runs about 850 calls under the
    # observer (20 s alone), and with 60 s and 300 s it failed twice when other grading shared the 2 cores
    grading.grade([subs], lesson, out, root=ROOT, jobs=2, progress=None)
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    columns = [k for k in rows["solved"] if k.startswith("ex ")]
    assert len(columns) == len(checks.exercises(lesson))
    assert [rows["solved"][k] for k in columns] == ["passed"] * len(columns), str(rows["solved"])
    # its first answer cell rebinds at top level: refused, so that exercise fails; the others are stubs
    forged = [rows["forger"][k] for k in columns]
    assert forged == ["failed"] + ["not implemented yet"] * (len(columns) - 1), str(rows["forger"])  # says why


def test_an_exercise_answered_only_in_writing_is_left_to_the_instructor():
    """Lesson 07's 7.8 is a written answer (a markdown answer cell, no check): grading must not refuse the release."""
    from course_lib.instructor.release import expected_exercises

    def cell(kind, grade_id):
        made = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)("x")
        made.metadata["nbgrader"] = {"grade_id": grade_id, "solution": True}
        return made

    nb = nbformat.v4.new_notebook()
    nb.cells = [cell("code", "ex-7-7"), cell("code", "check-7-7"), cell("markdown", "ex-7-8"), cell("code", "ex-7-9")]
    assert expected_exercises(nb) == ["7.7", "7.9"]


def test_an_answer_id_carried_by_two_cells_is_reported():
    """A copied cell keeps its nbgrader id (JupyterLab copies metadata), and an added cell can be given one: the
    grader loads each in order and says so in the row, never silently."""
    import copy

    nb = nbformat.read(RELEASE, as_version=4)
    expected = list(checks.exercises(LESSON))
    assert submission.duplicated_answers(nb, expected) == []
    nb.cells.append(copy.deepcopy(exercise_cell(nb, "6.4")))
    [note] = submission.duplicated_answers(nb, expected)
    assert "ex-6-4 appears 2 times" in note and "last definition" in note


def test_a_local_worker_adopts_its_graders_sandbox_check(monkeypatch):
    """grade() hands its own sandbox.detect() to the workers it starts: a worker runs no trial sandbox of its own."""

    def no_trial(*args, **kwargs):
        raise AssertionError("a trial sandbox was started")

    given = sandbox.Support(bwrap="/usr/bin/bwrap", cgroup=None, own_uid=False)
    monkeypatch.setattr(sandbox, "_trial", no_trial)
    try:
        sandbox.adopt(given)
        assert sandbox.detect() is given and sandbox.host_uid() is None  # own_uid False: no uid of its own
    finally:
        sandbox._adopted.clear()
        sandbox.detect.cache_clear()
