"""Issue 33: the student's process computes, the grader's process decides.

The grade comes from the answer cells alone, loaded and called in a fresh sandboxed process; nothing the
rest of the notebook does reaches it. Each attack is a submission: an untouched notebook (every stub left)
with added cells must score 0, and a borrowed answer is refused however it is reached. The class is lesson
06 (the cheapest to grade: about two thirds of lesson 01's time per submission); the rules of what an answer cell may do at top level are tested on text.
"""

import csv
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import grading, sandbox
from course_lib.instructor.harness import refusal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grading import RELEASE, exercise_cell, solved  # noqa: E402

needs_sandbox = pytest.mark.skipif(not sandbox.detect().bwrap, reason="no working bubblewrap sandbox here")
SECRET = "course-lib-instructor-token-7f3a"


def release():
    return nbformat.read(RELEASE, as_version=4)


def added(nb, source, at=None):
    """The notebook with one more (non-answer) cell, after the setup cell by default."""
    nb.cells.insert(2 if at is None else at, nbformat.v4.new_code_cell(source))
    return nb


# Cells added to an untouched notebook: each tries to make the grader see "passed".
ADDED = {
    # replace the check's run path so that the grader's calls go to the library's references
    "run_replaced": """
from course_lib.checks import protocol as _p, lesson06 as _l
_original = _p.Exercise.run
_references = {"masked_attention": _l._reference_attention_fn}
def _run(self, fn, cases):
    return _original(self, _references.get(fn.__name__, fn), cases)
_p.Exercise.run = _run
_p.Exercise.judge = lambda self, cases, records: ("passed", "")
""",
    # an IPython hook after every cell (the grader's own included) rewriting whatever the grader reads
    "post_run_hook": """
import glob, json
def _forge(*args):
    for _path in glob.glob("/run/grader/*") + glob.glob("/home/student/.records-*"):
        try:
            open(_path, "w").write(json.dumps({"records": [{"returned": 1}]}))
        except Exception:
            pass
get_ipython().events.register("post_run_cell", _forge)
""",
    # a thread that keeps rewriting the results files
    "results_rewriter": """
import glob, json, threading, time
def _loop():
    for _ in range(4000):
        for _path in glob.glob("/run/grader/*"):
            try:
                open(_path, "w").write(json.dumps({"records": []}))
            except Exception:
                pass
        time.sleep(0.02)
threading.Thread(target=_loop, daemon=True).start()
""",
    # the functions bound in a later (non-answer) cell, to the library's own
    "bound_later": """
from course_lib.checks import lesson06 as _l
masked_attention = _l.reference_masked_attention
alpha = lambda scores, i, j: 0.5
""",
}

# Answer cells (the exercise 6.3 cell) that borrow the check's reference, each another way.
BORROWED = {
    "direct": """
def masked_attention(scores, values, lengths):
    from course_lib.checks import lesson06
    return lesson06.reference_masked_attention(scores, values, lengths)
""",
    "through_a_thread": """
def masked_attention(scores, values, lengths):
    import threading
    from course_lib.checks import lesson06
    out = []
    t = threading.Thread(target=lambda: out.append(lesson06.reference_masked_attention(scores, values, lengths)))
    t.start()
    t.join()
    return out[0]
""",
    "observer_off": """
def masked_attention(scores, values, lengths):
    import sys
    from course_lib.checks import lesson06
    sys.setprofile(None)
    return lesson06.reference_masked_attention(scores, values, lengths)
""",
    "exec_encoded": """
import base64


def masked_attention(scores, values, lengths):
    scope = {"args": (scores, values, lengths)}
    exec(base64.b64decode(CODE).decode(), scope)
    return scope["out"]


CODE = "ZnJvbSBjb3Vyc2VfbGliLmNoZWNrcyBpbXBvcnQgbGVzc29uMDYKb3V0ID0gbGVzc29uMDYucmVmZXJlbmNlX21hc2tlZF9hdHRlbnRpb24oKmFyZ3Mp"
""",
    "exec_at_load": """
import base64
exec(base64.b64decode("ZnJvbSBjb3Vyc2VfbGliLmNoZWNrcyBpbXBvcnQgbGVzc29uMDYgYXMgTA==").decode())
masked_attention = L.reference_masked_attention
""",
}


@pytest.fixture(scope="module")
def answers_class(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("grades") / "grades.csv"
    for name, source in ADDED.items():
        nbformat.write(added(release(), source), subs / f"{name}.ipynb")
    for name, source in BORROWED.items():
        nb = solved(release(), "6.1")
        exercise_cell(nb, "6.3").source = source
        nbformat.write(nb, subs / f"borrow_{name}.ipynb")
    # a fully solved notebook that leaves Python between cells: every answer is still its own
    nb = solved(release(), "6.1", "6.2", "6.3", "6.4")
    nbformat.write(added(nb, "exit()", at=len(nb.cells) // 2), subs / "exits.ipynb")
    # an answer cell that imports pyplot: matplotlib needs its font list, which it would build with a process
    nb = solved(release(), "6.1")
    exercise_cell(nb, "6.1").source = "import matplotlib.pyplot as plt\n\n" + exercise_cell(nb, "6.1").source
    nbformat.write(nb, subs / "plots.ipynb")
    # reads the grader's environment from inside, and sends it back in an exception (its feedback shows it)
    nb = solved(release(), "6.1")
    exercise_cell(nb, "6.3").source = (
        "def masked_attention(scores, values, lengths):\n"
        "    text = open('/proc/1/environ', 'rb').read() + b'|' + open('/proc/self/environ', 'rb').read()\n"
        "    raise ValueError(text.decode(errors='replace').replace(chr(0), ' ')[-280:])\n"
    )
    nbformat.write(added(nb, "raise ValueError(open('/proc/1/environ', 'rb').read())"), subs / "env_reader.ipynb")
    env = {"COURSE_LIB_TEST_SECRET": SECRET}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        grading.grade([subs], "06", out, root=ROOT, jobs=2, cell_timeout=60, budget=300, progress=None)
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    feedback = {p.stem: p.read_text(encoding="utf-8") for p in (out.parent / "grades_feedback").iterdir()}
    return rows, feedback, out


def columns(row):
    return [row[f"ex 6.{i}"] for i in range(1, 5)]


@needs_sandbox
@pytest.mark.parametrize("name", sorted(ADDED))
def test_an_untouched_notebook_with_added_cells_scores_0(answers_class, name):
    rows, _, _ = answers_class
    assert rows[name]["score"] == "0", rows[name]
    assert columns(rows[name]) == ["not implemented yet"] * 4, rows[name]


@needs_sandbox
@pytest.mark.parametrize("name", sorted(BORROWED))
def test_the_checks_reference_is_refused_however_it_is_reached(answers_class, name):
    rows, feedback, _ = answers_class
    row = rows[f"borrow_{name}"]
    assert columns(row)[0] == "passed" and columns(row)[2] == "failed", row  # 6.1 is the student's own and counts
    assert row["score"] == "1"
    said = next(line for line in feedback[f"borrow_{name}"].splitlines() if line.startswith("- Exercise 6\\.3"))
    assert "write it yourself" in said or "may only import, define" in said, said  # refused, not a wrong answer


@needs_sandbox
def test_exit_between_cells_keeps_every_answer(answers_class):
    rows, _, _ = answers_class
    assert columns(rows["exits"]) == ["passed"] * 4, rows["exits"]
    assert "ended Python (exit(), quit() or sys.exit())" in rows["exits"]["problems"], rows["exits"]


@needs_sandbox
def test_an_answer_cell_may_import_pyplot(answers_class):
    """Importing pyplot in the answers' sandbox reads the grader's font list (building it would start fc-list, a
    process, which that sandbox refuses: an honest plot of hostile class 33q failed to load)."""
    rows, _, _ = answers_class
    assert columns(rows["plots"])[0] == "passed", rows["plots"]


@needs_sandbox
def test_no_environment_variable_of_the_grader_is_readable_in_the_sandbox(answers_class):
    rows, feedback, out = answers_class
    log = out.with_suffix(".log")
    text = out.read_text(encoding="utf-8") + "".join(feedback.values()) + (log.read_text() if log.exists() else "")
    assert "PATH=" in rows["env_reader"]["problems"]  # the environ files were read, and their text reached the row
    assert SECRET not in text and "COURSE_LIB_TEST_SECRET" not in text


def test_an_answer_cell_may_only_import_define_and_set_constants():
    allowed = [
        "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n",
        "from course_lib import parentheses as P\n",
        '"""doc"""\nK = 3\nNAMES: tuple = ("a", -1.5)\n\n\ndef f(x, k=2, *, s: str = "t") -> int:\n    return x\n',
        "class M(nn.Module):\n    SIZE = 4\n\n    @property\n    def n(self):\n        return 1\n\n    @n.setter\n"
        "    def n(self, v):\n        pass\n",
    ]
    for source in allowed:
        assert refusal(source) == "", source
    refused = {
        "print('hi')": "line 1: code that runs",
        "x = compute()": "line 1",
        "exec('import os')": "line 1",
        "get_ipython().events.register('post_run_cell', print)": "line 1",
        "def f(x=open('/etc/passwd').read()):\n    pass": "default value",
        "def f(x: print('now')):\n    pass": "annotation",
        "@register\ndef f():\n    pass": "decorator",
        "class A(make_base()):\n    pass": "bases",
        "class A:\n    import os\n    os.system('x')": "line 3",
        "from torch import *": "import *",
        "from . import x": "relative import",
        "for i in range(3):\n    pass": "line 1",
        "def f(:\n": "does not parse",
        "(" * 500 + ")" * 500: "",
    }
    for source, why in refused.items():
        said = refusal(source)
        assert said and why in said, (source[:40], said)


def test_the_grader_imports_nothing_from_the_current_folder(tmp_path):
    """`course-lib grade .` from inside a submissions folder holding json.py, secrets.py and nbclient.py: none
    is imported by the grader, its workers or the launcher (each would leave a marker file)."""
    subs = tmp_path / "subs"
    subs.mkdir()
    marker = tmp_path / "imported"
    for module in ("json", "secrets", "nbclient", "nbformat", "select"):
        (subs / f"{module}.py").write_text(f"open({str(marker)!r}, 'a').write({module!r} + '\\n')\n")
    nbformat.write(solved(release(), "6.1"), subs / "alice.ipynb")
    script = Path(sys.executable).parent / "course-lib"
    cmd = [str(script)] if script.exists() else [sys.executable, "-I", "-m", "course_lib.instructor.cli"]
    flags = ["--timeout", "30", "--budget", "200", "--root", str(ROOT)]
    if not sandbox.detect().bwrap:
        flags.append("--no-sandbox")
    done = subprocess.run(
        cmd + ["grade", ".", "--lesson", "06", "--out", str(tmp_path / "g.csv")] + flags,
        cwd=subs,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not marker.exists(), marker.read_text()
    rows = list(csv.DictReader(open(tmp_path / "g.csv", encoding="utf-8")))
    assert [r["ex 6.1"] for r in rows] == ["passed"]


# --------------------------------------------------------------------------- rows and names


def test_every_submission_in_either_layout_gets_exactly_one_row(tmp_path):
    """Links and special files named like notebooks, at the top level and in nbgrader's layout, several
    notebooks for one student, a student folder that cannot be read: each gets its row (no notebook runs)."""
    import os

    from course_lib.instructor.roster import collect, unique_names

    top = tmp_path / "subs"
    (top / "submitted" / "bob" / "ps1").mkdir(parents=True)
    (top / "submitted" / "bob" / "ps1" / "02.ipynb").symlink_to("/etc/passwd")  # nbgrader layout, a link
    (top / "carol" / "ps1").mkdir(parents=True)
    os.mkfifo(top / "carol" / "ps1" / "02.ipynb")
    (top / "dave").mkdir()
    (top / "dave" / "a.ipynb").write_text("{}")
    (top / "dave" / "b.ipynb").write_text("{}")
    (top / "erin").mkdir()
    (top / "erin" / "x.ipynb").write_text("{}")
    (top / "alice.ipynb").symlink_to("/etc/passwd")
    (top / "alice#").mkdir()  # a name that looks like a renamed one
    (top / "alice#" / "n.ipynb").write_text("{}")
    (top / "frank.ipynb").mkdir()  # a folder named like a notebook, nothing in it
    entries, warnings = collect([top, top / "submitted"])
    entries = unique_names(entries)
    students = [e.student for e in entries]
    assert len(students) == len(set(students))
    assert {"alice", "bob", "carol", "dave", "erin", "alice#", "frank"} <= set(students), students
    assert "submitted" not in students  # nbgrader's folder read as a student's: its links are too deep to be his
    by = {e.student: e for e in entries}
    assert "2 notebooks for one student" in by["dave"].problem
    assert "a folder named like a notebook" in by["frank"].problem
    with pytest.raises(ValueError, match="symbolic link"):
        grading.read_regular(by["bob"].path, 100)
    if os.geteuid() != 0:  # root reads any folder
        (top / "erin").chmod(0)
        try:
            again = {e.student: e for e in collect([top])[0]}
            assert "could not be read" in again["erin"].problem
        finally:
            (top / "erin").chmod(0o755)


def test_feedback_names_are_unique_and_valid_whatever_the_student_names():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from course_lib.instructor.roster import Entry, _digest, _file_name, feedback_names, unique_names

    # Microsoft's "Naming Files, Paths, and Namespaces": reserved whatever the extension (COM0 and LPT0 included)
    WINDOWS_RESERVED = (
        {"con", "prn", "aux", "nul"} | {f"com{d}" for d in "0123456789"} | {f"lpt{d}" for d in "0123456789"}
    )

    def derived(names):  # names a student could pick to collide with what the grader derives from others'
        out = list(names)
        for s in names:
            out += [f"{_file_name(s)[:80]}-{_digest(s)}", _file_name(s), s.upper(), f"{s}#{_digest('p/' + s)}"]
        return out

    valid = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=12))
    def check(names):
        fixed = ["CON", "nul.txt", "com0", "LPT0.md", "Lpt9", "a" * 400, "é" * 200, "."]
        students = list(dict.fromkeys(derived(names) + fixed))
        files = feedback_names(students)
        assert len({f.lower() for f in files.values()}) == len(students)
        for name in files.values():
            assert len((name + ".md").encode()) <= 255 and set(name) <= valid, name
            assert not name.startswith((".", "-")) and name.split(".")[0].lower() not in WINDOWS_RESERVED
        entries = unique_names([Entry(s, f"p/{s}") for s in names] + [Entry(s, f"q/{s}") for s in derived(names)])
        assert len({e.student for e in entries}) == len(entries)

    check()
