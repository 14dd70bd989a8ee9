"""Issue 25: no grading without a sandbox unless the instructor says so, and a second hostile class.

Each test is one finding: the refusal (bubblewrap missing, or failing its trial run), --no-sandbox
(graded, warned, marked), no privileges as root, the disk, widget floods, text that reaches the grader's
files, names, links, and a check that crashes.
"""

import contextlib
import csv
import io
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import cli, grading, sandbox

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grading import RELEASE_01 as RELEASE  # noqa: E402
from test_grading import exercise_cell, solved  # noqa: E402

needs_sandbox = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no working bubblewrap sandbox here")


def release():
    return nbformat.read(RELEASE, as_version=4)


@pytest.fixture
def fresh_detect():
    """detect() caches its answer per process: start and end each test that changes PATH with a fresh one."""
    sandbox.detect.cache_clear()
    yield
    sandbox.detect.cache_clear()


def marker_submission(folder: Path, marker: Path) -> Path:
    """A notebook that solves 1.1 and writes a file at ``marker`` (a host path) if its code ever runs there."""
    nb = solved(release(), "1.1")
    exercise_cell(nb, "1.2").source = f"open({str(marker)!r}, 'w').write('student code ran here')"
    nbformat.write(nb, folder / "mallory.ipynb")
    return folder / "mallory.ipynb"


def grade_args(subs: Path, out: Path, *extra: str) -> list[str]:
    return ["grade", str(subs), "--lesson", "01", "--out", str(out), "--root", str(ROOT)] + list(extra)


# --------------------------------------------------------------------------- the refusal


def test_without_bubblewrap_grade_refuses_writes_nothing_and_runs_nothing(tmp_path, monkeypatch, capsys, fresh_detect):
    subs, marker = tmp_path / "subs", tmp_path / "marker"
    subs.mkdir()
    marker_submission(subs, marker)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # bubblewrap hidden
    out = tmp_path / "grades" / "g.csv"
    assert cli.main(grade_args(subs, out)) == 2
    err = capsys.readouterr().err
    assert "not installed" in err and "apt-get install bubblewrap" in err and "--no-sandbox" in err
    assert "at your own risk" in err and err.count("\n") == 1  # one message
    assert not (tmp_path / "grades").exists() and not marker.exists()


def test_a_bubblewrap_that_fails_its_trial_run_is_refused_with_its_reason(tmp_path, monkeypatch, capsys, fresh_detect):
    subs, marker = tmp_path / "subs", tmp_path / "marker"
    subs.mkdir()
    marker_submission(subs, marker)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    out = tmp_path / "g.csv"
    assert cli.main(grade_args(subs, out)) == 2
    err = capsys.readouterr().err
    assert "failed its trial run" in err and "setting up uid map: Permission denied" in err and "--no-sandbox" in err
    assert not out.exists() and not marker.exists()


def test_doctor_fails_and_names_the_sandbox_when_grading_would_refuse(tmp_path, monkeypatch, capsys, fresh_detect):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["doctor", "--for", "instructor"]) == 1
    out = capsys.readouterr().out
    assert "NO SANDBOX" in out and "would refuse" in out and "bubblewrap" in out


def test_no_sandbox_grades_warns_at_start_and_end_and_marks_the_output(tmp_path, monkeypatch, capsys, fresh_detect):
    subs, marker = tmp_path / "subs", tmp_path / "marker"
    subs.mkdir()
    marker_submission(subs, marker)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    out = tmp_path / "g.csv"
    assert cli.main(grade_args(subs, out, "--no-sandbox", "--timeout", "60", "--budget", "200")) == 0
    printed = capsys.readouterr().out.splitlines()
    # at the start and again at the end, before "wrote" (a note on the checks' fingerprints may stand beside it)
    assert any("WITHOUT the sandbox" in line for line in printed[:2])
    assert any("WITHOUT the sandbox" in line for line in printed[-4:-1])
    assert marker.exists()  # unconfined, as the instructor asked
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert [r["student"] for r in rows] == ["mallory"] and rows[0]["ex 1.1"] == "passed"
    assert list(rows[0]) == grading._header(["1.1", "1.2", "1.3", "1.4", "1.5"])  # the CSV an LMS reads is as ever
    sidecar = (tmp_path / "g.UNSANDBOXED.txt").read_text()
    assert "--no-sandbox" in sidecar and sidecar.splitlines()[-1] == "mallory"
    assert "graded without the sandbox" in (tmp_path / "g_feedback" / "mallory.md").read_text()


# --------------------------------------------------------------------------- privileges, disk, widgets

PRIVILEGES = """
import os
findings = [f"uid={os.getuid()}", f"euid={os.geteuid()}"]
caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')]
findings.append(f"caps={caps[0]}")
for path in ("/proc/sys/vm/swappiness", "/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"):
    try:
        with open(path, "w") as f:
            f.write("61" if "swappiness" in path else "|/bin/true")
        findings.append(f"WROTE:{path.split('/')[-1]}")
    except OSError as exc:
        findings.append(f"refused:{path.split('/')[-1]}")
import ctypes
findings.append(f"unshare={ctypes.CDLL(None, use_errno=True).unshare(0)}")  # seccomp: -1 (EPERM), else 0
raise RuntimeError(" ".join(findings))
"""


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="the grader is not root here")
def test_graded_as_root_a_submission_is_not_root_and_cannot_change_host_settings(tmp_path):
    before = Path("/proc/sys/vm/swappiness").read_text()
    nb = solved(release(), "1.1")
    exercise_cell(nb, "1.2").source = PRIVILEGES
    nbformat.write(nb, tmp_path / "root.ipynb")
    sub = grading.grade_submission(tmp_path / "root.ipynb", RELEASE, cell_timeout=60, budget=200)
    found = next(p for p in sub.problems if "uid=" in p)
    assert "uid=0" not in found and "euid=0" not in found and "caps=0000000000000000" in found
    assert "WROTE" not in found and found.count("refused") == 3
    if sandbox.seccomp_filter():
        assert "unshare=-1" in found
    assert Path("/proc/sys/vm/swappiness").read_text() == before
    assert sub.exercises["1.1"]["status"] == "passed"


DISK_FILLER = """
import os, sys
chunk = b"x" * (1 << 20)
wrote = {}
first_error = None
targets = [".", "/tmp", "/dev/shm", "/run/grader", os.path.dirname(sys.argv[sys.argv.index("-f") + 1]), "/", "/dev", "/opt"]
for folder in targets:
    wrote[folder] = 0
    for i in range(400):  # 400 MB per folder at most
        try:
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                for _ in range(8):
                    f.write(chunk)
                    wrote[folder] += 1
        except OSError as exc:
            first_error = first_error or exc
            break
    try:  # the results files are the only host files it may write: to the file-size limit
        with open("/run/grader/1.3.json", "wb") as f:
            for _ in range(400):
                f.write(chunk)
    except OSError:
        pass
print(wrote)
raise first_error
"""


def _usage(folder: Path) -> int:
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
            except OSError:
                pass
    return total


@needs_sandbox
def test_a_disk_filler_ends_in_a_clear_row_and_the_disk_is_untouched_beyond_the_limit(tmp_path, monkeypatch):
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="course-lib-scratch-"))  # where the grader keeps its folders here
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    nb = solved(release(), "1.1")
    exercise_cell(nb, "1.2").source = DISK_FILLER
    nbformat.write(nb, tmp_path / "filler.ipynb")
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _usage(scratch))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    limits = sandbox.Limits(disk_mb=16, file_mb=8, memory_mb=1500)
    try:
        sub = grading.grade_submission(tmp_path / "filler.ipynb", RELEASE, cell_timeout=90, budget=240, limits=limits)
    finally:
        done.set()
        watcher.join()
    problems = "; ".join(sub.problems)
    assert "filled its disk" in problems and "16 MB each" in problems, problems
    assert sub.exercises["1.1"]["status"] == "passed"
    # on the host: the submission's copy, the font list and the results files (at most 8 MB each), nothing else
    assert peak[0] < 5 * 8 * 2**20 + 4 * 2**20, peak[0]
    assert _usage(scratch) == 0  # and nothing is left behind
    shutil.rmtree(scratch)


WIDGET_FLOOD = """
from comm import create_comm
blob = "x" * 10_000_000
for i in range(60):  # 600 MB of widget state, each under the 64 MB message limit
    create_comm(target_name="jupyter.widget", data={"state": {f"v{i}": blob}, "buffer_paths": []})
"""

DISPLAY_FLOOD = """
from IPython.display import display
handles = [display("x", display_id=True) for _ in range(50)]
for handle in handles:  # 500 MB of updates to outputs already shown
    handle.update("y" * 10_000_000)
"""

_MEASURE = """
import json, resource, sys
from course_lib.instructor import grading, sandbox
limits = sandbox.Limits(widget_mb=5, memory_mb=2000)
for path in sys.argv[2:]:
    sub = grading.grade_submission(path, sys.argv[1], cell_timeout=120, budget=300, limits=limits)
    print(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "problems": sub.problems,
                      "ex11": sub.exercises["1.1"]["status"]}), flush=True)
"""


@needs_sandbox
def test_a_widget_or_display_update_flood_does_not_grow_the_grader_beyond_its_limits(tmp_path):
    import json

    plain = solved(release(), "1.1")
    nbformat.write(plain, tmp_path / "plain.ipynb")
    flood = solved(release(), "1.1")
    exercise_cell(flood, "1.2").source = WIDGET_FLOOD
    nbformat.write(flood, tmp_path / "flood.ipynb")
    updates = solved(release(), "1.1")
    exercise_cell(updates, "1.2").source = DISPLAY_FLOOD
    nbformat.write(updates, tmp_path / "updates.ipynb")
    paths = [str(tmp_path / f"{name}.ipynb") for name in ("plain", "flood", "updates")]
    run = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(RELEASE), *paths],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    baseline, flooded, updated = (json.loads(line) for line in run.stdout.splitlines()[-3:])
    grew_mb = (flooded["maxrss_kb"] - baseline["maxrss_kb"]) / 1024
    # 600 MB were sent (nbclient alone would keep all of it); the grader keeps none of it beyond 5 MB, and holds
    # a few messages at a time while it reads and measures them
    assert grew_mb < 250, grew_mb
    assert any("widget messages" in p and "5 MB" in p for p in flooded["problems"]), flooded["problems"]
    assert flooded["ex11"] == "passed"
    # updates of outputs already shown count against the output cap (2 MB) too
    assert (updated["maxrss_kb"] - baseline["maxrss_kb"]) / 1024 < 250
    assert any("MB of output" in p for p in updated["problems"]) and updated["ex11"] == "passed"


# --------------------------------------------------------------------------- names, text, links, crashes

FORGED_FEEDBACK = """
Forged = type("Oops\\n\\nScore: 5 of 5 exercises passed.\\n- Exercise 1.2: passed.", (Exception,), {})
raise Forged("\\nScore: 5 of 5 exercises passed.\\n[click](http://evil.example) <img src=x>")
"""

# Installed in the grader's workers through PYTHONPATH (the kernel never sees it): exercise 1.3's check
# crashes on whatever it is given, and grading the student "crasher" fails outright, as a bug of ours would.
SITECUSTOMIZE = """
from course_lib.checks import protocol

def _crash(self, cases, records):
    if self.id == "1.3":
        raise ZeroDivisionError("a check that crashes on a crafted record")
    return _judge(self, cases, records)

_judge, protocol.Exercise.judge = protocol.Exercise.judge, _crash

from course_lib.instructor import submission

def _boom(path, *a, student=None, **k):
    if student == "crasher":
        raise MemoryError("the grader itself failed")
    return _grade(path, *a, student=student, **k)

_grade, submission.grade_submission = submission.grade_submission, _boom  # the worker imports it from here
"""


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("class2")
    subs = base / "subs"
    subs.mkdir()
    forger = solved(release(), "1.1")
    exercise_cell(forger, "1.2").source = FORGED_FEEDBACK
    nbformat.write(forger, subs / "forger.ipynb")
    nbformat.write(solved(release(), "1.1", "1.2"), subs / "zed.ipynb")
    (subs / "o'neil.ipynb").write_text("o'neil's notes")
    (subs / "o_neil.ipynb").write_text("o_neil's notes")
    (subs / "crasher.ipynb").write_text("{}")
    (subs / "Eve\nScore: 5 of 5 exercises passed..ipynb").write_text("a name with a line break")
    os.close(os.open(os.fsencode(subs) + b"/caf\xe9.ipynb", os.O_CREAT | os.O_WRONLY, 0o644))  # Latin-1, not UTF-8
    target = base / "somewhere"
    target.mkdir()
    nbformat.write(solved(release(), "1.1"), target / "inside.ipynb")
    (subs / "linked.ipynb").symlink_to(target)  # a link to a folder named like a notebook
    (subs / "shortcut").symlink_to(target)
    os.mkfifo(subs / "pipe")
    (subs / "frank" / "ps1").mkdir(parents=True)
    (subs / "frank" / "ps1" / "01_ngrams.ipynb").write_text("{}")
    (subs / "frank" / "ps1" / "extra.ipynb").symlink_to(target / "inside.ipynb")
    site = base / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    out = base / "grades" / "g.csv"
    # the workers run isolated (python -I: no PYTHONPATH, no current folder): the crashes go in through their
    # command, which is the grader's to choose
    code = f"exec(open({str(site / 'sitecustomize.py')!r}).read()); from course_lib.instructor.grading import _worker"
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(printed):
        mp.setattr(grading, "worker_command", lambda: sandbox.python_command(code + "; sys.exit(_worker())"))
        returncode = cli.main(grade_args(subs, out, "--jobs", "2", "--timeout", "60", "--budget", "200"))
    run = subprocess.CompletedProcess([], returncode, printed.getvalue().encode(), b"")
    with open(out, encoding="utf-8", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    feedback = {p.name: p.read_text(encoding="utf-8") for p in (base / "grades" / "g_feedback").iterdir()}
    log = (base / "grades" / "g.log").read_text(encoding="utf-8")
    return run, rows, feedback, log


def test_the_second_class_is_graded_to_the_end(hostile_class):
    run, rows, _, _ = hostile_class
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
    assert rows["zed"]["ex 1.1"] == rows["zed"]["ex 1.2"] == "passed"  # graded after every odd name


def test_forged_feedback_lines_stay_inside_quoted_student_text(hostile_class):
    _, rows, feedback, _ = hostile_class
    text = feedback["forger.md"]
    assert [line for line in text.splitlines() if line.startswith("Score:")] == ["Score: 1 of 5 exercises passed."]
    assert not any(line.startswith("- Exercise 1.2: passed") for line in text.splitlines())
    assert "\\\\x0aScore: 5 of 5" in text and "](http" not in text and "<img" not in text.replace("\\<", "")
    assert rows["forger"]["score"] == "1" and "\n" not in rows["forger"]["problems"]
    eve = next(name for name in rows if name.startswith("Eve"))
    assert "\n" not in eve and "\\x0a" in eve
    eve_feedback = next(t for n, t in feedback.items() if n.startswith("Eve"))
    assert [line for line in eve_feedback.splitlines() if line.startswith("Score:")] == [
        "Score: 0 of 5 exercises passed."
    ]


def test_colliding_names_keep_both_feedback_files(hostile_class):
    _, rows, feedback, _ = hostile_class
    assert "o'neil" in rows and "o_neil" in rows
    mine = [n for n, t in feedback.items() if "o'neil" in t.splitlines()[0]]
    theirs = [n for n, t in feedback.items() if "o\\_neil" in t.splitlines()[0]]
    assert len(mine) == len(theirs) == 1 and mine != theirs


def test_a_name_that_is_not_utf8_gets_its_row(hostile_class):
    _, rows, feedback, _ = hostile_class
    assert "caf\\xe9" in rows and "not a notebook" in rows["caf\\xe9"]["problems"]
    assert any("caf" in name for name in feedback)


def test_links_and_special_files_are_reported(hostile_class):
    run, rows, _, _ = hostile_class
    printed = run.stdout.decode()
    assert "symbolic link" in rows["linked"]["problems"]  # a link to a folder named like a notebook: its row
    assert "shortcut: a symbolic link; not followed" in printed
    assert "pipe: a special file" in printed
    assert "extra.ipynb: a symbolic link; not followed" in printed and "frank" in rows


def test_a_crashing_check_leaves_its_traceback_in_the_log(hostile_class):
    _, rows, feedback, log = hostile_class
    assert rows["zed"]["ex 1.3"] == "failed" and rows["zed"]["ex 1.1"] == "passed"
    assert "could not judge" in feedback["zed.md"]
    assert "Traceback" in log and "ZeroDivisionError: a check that crashes" in log and "zed:" in log
    assert "not graded" in rows["crasher"]["problems"] and "g.log" in rows["crasher"]["problems"]
    assert "MemoryError: the grader itself failed" in log and "crasher:" in log


def test_shown_escapes_what_could_start_a_line_or_hide_text():
    from course_lib.instructor.submission import shown

    assert shown("a\nb\r\u2028c\u202ed\\e") == "a\\x0ab\\x0d\\u2028c\\u202ed\\\\e"
    assert shown(os.fsdecode(b"caf\xe9")) == "caf\\xe9" and shown("plain name") == "plain name"


def test_feedback_names_are_unique_and_stable():
    names = grading.feedback_names(["o'neil", "o_neil", "Bob", "bob", "ann"])
    assert len({n.lower() for n in names.values()}) == 5
    assert names["ann"] == "ann" and names["o_neil"] == "o_neil" and names["o'neil"].startswith("o_neil-")
    assert grading.feedback_names(["o'neil"])["o'neil"] == names["o'neil"]  # the same whatever the class


@needs_sandbox
def test_cpu_time_ends_in_a_row_that_names_it(tmp_path):
    nb = solved(release(), "1.1")
    exercise_cell(nb, "1.2").source = "while True:\n    pass"
    nbformat.write(nb, tmp_path / "spinner.ipynb")
    limits = sandbox.Limits(cpu_seconds=8)  # the kernel's start and the setup cell take a few of them
    sub = grading.grade_submission(tmp_path / "spinner.ipynb", RELEASE, cell_timeout=300, budget=400, limits=limits)
    problems = "; ".join(sub.problems)
    assert "used up its CPU time (8 s)" in problems, problems


@pytest.mark.parametrize("lesson", ["03", "05", "06"])
def test_a_pass_is_refused_when_the_submission_code_uses_a_forbidden_name(lesson):
    """The kernel's refusal of borrowed answers can be undone by the student's own code; the grader's look at
    the submission's text, in its own process, cannot."""
    from course_lib import checks
    from course_lib.checks import FAILED, PASSED
    from course_lib.instructor import submission

    exercise = next(e for e in checks.exercises(lesson).values() if e.forbidden)
    module, attr = exercise.forbidden[0].rsplit(".", 1)
    borrowed = f"import {module}\n\ndef {exercise.function}(*args):\n    return {module}.{attr}(*args)\n"
    honest = f"def {exercise.function}(*args):\n    return sum(len(str(a)) for a in args)\n"
    passed = {"status": PASSED, "message": "", "title": exercise.title}
    refused = submission._refuse_borrowed(exercise, passed, ["import course_lib", borrowed])
    assert refused["status"] == FAILED and "may not call" in refused["message"]
    assert f"`{exercise.forbidden[0]}`" in refused["message"]
    assert submission._refuse_borrowed(exercise, passed, ["import course_lib", honest]) == passed
    failed = {"status": FAILED, "message": "Hint: wrong sign", "title": exercise.title}
    assert submission._refuse_borrowed(exercise, failed, [borrowed]) == failed  # its own hint stays
