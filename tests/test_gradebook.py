"""Grades into the gradebooks instructors use: nbgrader's (through its own API), Canvas's and Moodle's CSV,
and feedback as escaped HTML. The Submissions are made by hand: what is tested is the writing, not grading."""

import csv
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import cli, gradebook
from course_lib.instructor.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "exercises" / "01_ngrams.ipynb"

pytest.importorskip("nbgrader")


def _meta(nb):
    return {
        c.metadata["nbgrader"]["grade_id"]: (c, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata
    }


def _sub(student, passed):
    exercises = {
        e: {
            "status": "passed" if e in passed else "failed",
            "message": "" if e in passed else "Hint: <b>k</b>",
            "title": "",
        }
        for e in ("1.1", "1.2", "1.3", "1.4", "1.5")
    }
    return Submission(student=student, path=f"{student}.ipynb", exercises=exercises)


def test_marks_land_in_nbgraders_gradebook_and_written_answers_wait_for_the_instructor(tmp_path):
    from nbgrader.api import Gradebook

    release = nbformat.read(RELEASE, as_version=4)
    cells = _meta(release)
    checks = {g: m["points"] for g, (c, m) in cells.items() if g.startswith("check-")}
    written = [g for g, (c, m) in cells.items() if c.cell_type == "markdown" and m.get("grade")]
    assert written, "lesson 01 has a written experiment answer"
    gradebook.to_nbgrader(tmp_path, "ps1", release, "01_ngrams", _sub("alice", {"1.1", "1.2"}), "alice", "passed")
    gradebook.to_nbgrader(tmp_path, "ps1", release, "01_ngrams", _sub("bob", set()), "bob", "passed")
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        alice = gb.find_submission_notebook("01_ngrams", "ps1", "alice")
        assert {g.name: g.auto_score for g in alice.grades if g.name.startswith("check-")} == {
            g: (p if g in ("check-1-1", "check-1-2") else 0) for g, p in checks.items()
        }
        # the maximum nbgrader reports is the release's points, written answers included
        assert gb.find_notebook("01_ngrams", "ps1").max_score == sum(
            m["points"] for _, m in cells.values() if m["grade"]
        )
        for g in written:
            grade = gb.find_grade(g, "01_ngrams", "ps1", "alice")
            assert grade.needs_manual_grade and grade.auto_score is None
        assert alice.needs_manual_grade  # formgrader lists it for the written answer
        # the instructor grades the written answer by hand; grading again keeps that mark
        gb.find_grade(written[0], "01_ngrams", "ps1", "alice").manual_score = 1.0
        gb.db.commit()
    gradebook.to_nbgrader(tmp_path, "ps1", release, "01_ngrams", _sub("alice", {"1.1", "1.2"}), "alice", "passed")
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        alice = gb.find_submission_notebook("01_ngrams", "ps1", "alice")
        assert alice.score == checks["check-1-1"] + checks["check-1-2"] + 1.0 and not alice.needs_manual_grade
        assert gb.find_submission_notebook("01_ngrams", "ps1", "bob").score == 0
        assert gb.find_comment("ex-1-3", "01_ngrams", "ps1", "bob").auto_comment.startswith("failed: Hint")


def test_feedback_html_escapes_what_the_student_wrote():
    page = gradebook.feedback_html("ps1: <alice>", "1.2 failed: Hint: <script>alert(1)</script> & more")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    assert "<title>ps1: &lt;alice&gt;</title>" in page


def _grades(tmp_path, rows):
    path = tmp_path / "grades.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "file", "score", "points", "max points", "problems"])
        writer.writerows(rows)
    return path


def _roster(tmp_path, rows):
    path = tmp_path / "roster.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "id", "name"])
        writer.writerows(rows)
    return path


def test_canvas_and_moodle_files_have_the_lms_id_points_and_maximum(tmp_path):
    grades = _grades(tmp_path, [["alice", "a.ipynb", "2", "6", "9", ""], ["'=1+2", "x.ipynb", "1", "1.5", "9", ""]])
    roster = _roster(tmp_path, [["alice", "1001", "Alice A."], ["=1+2", "1002", "=HYPERLINK()"]])
    assert gradebook.lms_csv(grades, roster, tmp_path / "canvas.csv", lms="canvas", assignment="Lesson 01") == 2
    canvas = list(csv.reader(open(tmp_path / "canvas.csv", encoding="utf-8")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lesson 01"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "9"]
    assert canvas[2:] == [["'=HYPERLINK()", "1002", "", "", "", "1.5"], ["Alice A.", "1001", "", "", "", "6"]]
    gradebook.lms_csv(grades, roster, tmp_path / "moodle.csv", lms="moodle", assignment="Lesson 01")
    moodle = list(csv.reader(open(tmp_path / "moodle.csv", encoding="utf-8")))
    assert moodle == [
        ["ID number", "Full name", "Lesson 01", "Maximum"],
        ["1002", "'=HYPERLINK()", "1.5", "9"],
        ["1001", "Alice A.", "6", "9"],
    ]


def test_a_student_missing_from_either_side_is_named_never_dropped(tmp_path):
    grades = _grades(tmp_path, [["alice", "a.ipynb", "2", "6", "9", ""], ["bob", "b.ipynb", "0", "0", "9", ""]])
    roster = _roster(tmp_path, [["alice", "1001", ""], ["cy", "1003", ""]])
    with pytest.raises(ValueError, match="graded but not in the roster: bob; in the roster but not graded: cy"):
        gradebook.lms_csv(grades, roster, tmp_path / "x.csv", lms="canvas", assignment="L1")
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    "roster_rows,match",
    [([["alice", "", ""]], "student and id must not be empty"), ([["alice", "1", ""], ["alice", "2", ""]], "twice")],
)
def test_a_bad_roster_is_named(tmp_path, roster_rows, match):
    grades = _grades(tmp_path, [["alice", "a.ipynb", "2", "6", "9", ""]])
    with pytest.raises(ValueError, match=match):
        gradebook.lms_csv(grades, _roster(tmp_path, roster_rows), tmp_path / "x.csv", lms="canvas", assignment="L1")


def test_the_lms_command_refuses_an_unknown_format_and_never_overwrites(tmp_path, capsys):
    grades = _grades(tmp_path, [["alice", "a.ipynb", "2", "6", "9", ""]])
    roster = _roster(tmp_path, [["alice", "1001", ""]])
    with pytest.raises(ValueError, match="lms must be one of canvas, moodle"):
        gradebook.lms_csv(grades, roster, tmp_path / "x.csv", lms="blackboard", assignment="L1")
    (tmp_path / "taken.csv").write_text("mine")
    args = ["lms", str(grades), "--roster", str(roster), "--format", "moodle", "--assignment", "L1"]
    assert cli.main(args + ["--out", str(tmp_path / "taken.csv")]) == 2
    assert (tmp_path / "taken.csv").read_text() == "mine" and "not overwriting" in capsys.readouterr().err
    assert cli.main(args + ["--out", str(tmp_path / "m.csv")]) == 0


def test_formgraders_copy_never_follows_a_link_nor_leaves_nbgraders_folders(tmp_path):
    (tmp_path / "secret.txt").write_text("the instructor's")
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "secret.txt")
    gradebook.write_autograded(tmp_path / "course", "ps1", "01_ngrams", "alice", tmp_path / "link.ipynb", "fine")
    assert not (tmp_path / "course" / "autograded" / "alice" / "ps1" / "01_ngrams.ipynb").exists()
    assert "fine" in (tmp_path / "course" / "feedback" / "alice" / "ps1" / "01_ngrams.html").read_text()
    for bad in ("..", "a/b", ""):
        with pytest.raises(ValueError, match="student must be a plain folder or file name"):
            gradebook.write_autograded(tmp_path / "course", "ps1", "01_ngrams", bad, None, "x")
