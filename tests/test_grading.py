"""Grading a folder of good, partial, broken and hostile submissions (lesson 01)."""

import csv
import hashlib
import json
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import cli, grading

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "exercises" / "01_ngrams.ipynb"
SOLUTION = ROOT / "solutions" / "01_ngrams.ipynb"


def exercise_cell(nb, exercise):
    return next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"ex-{exercise.replace('.', '-')}"
    )


def solved(nb, *exercises):
    """The released notebook with the given exercises' cells replaced by the solutions'."""
    solution = nbformat.read(SOLUTION, as_version=4)
    for e in exercises:
        exercise_cell(nb, e).source = exercise_cell(solution, e).source
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    release = lambda: nbformat.read(RELEASE, as_version=4)  # noqa: E731

    nbformat.write(solved(release(), "1.1", "1.2", "1.3", "1.4", "1.5"), subs / "good.ipynb")
    nbformat.write(release(), subs / "untouched.ipynb")
    nbformat.write(solved(release(), "1.1", "1.3"), subs / "partial.ipynb")

    nb = solved(release(), "1.1")
    exercise_cell(nb, "1.2").source = "def mle_prob(counts, context, word)\n    return 0"  # syntax error
    nbformat.write(nb, subs / "broken.ipynb")

    nb = solved(release(), "1.1", "1.2")
    exercise_cell(nb, "1.3").source = "while True:\n    pass"
    nbformat.write(nb, subs / "loops.ipynb")

    nb = solved(release(), "1.4")
    exercise_cell(nb, "1.5").source += "\nprint('spam ' * 1_000_000)"
    nbformat.write(nb, subs / "spammer.ipynb")

    nb = solved(release(), "1.1", "1.2", "1.3", "1.4", "1.5")
    checks = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("check-")]
    checks[0].source = "result = 'passed'  # I promise"  # an edited check
    nb.cells.remove(checks[1])  # a deleted check
    nbformat.write(nb, subs / "tamperer.ipynb")

    nb = solved(release(), "1.1", "1.2")
    i, j = nb.cells.index(exercise_cell(nb, "1.1")), nb.cells.index(exercise_cell(nb, "1.2"))
    nb.cells[i], nb.cells[j] = nb.cells[j], nb.cells[i]
    nbformat.write(nb, subs / "reordered.ipynb")

    nb = solved(release(), "1.2")  # a notebook that tries to overwrite itself on disk
    nb.cells.insert(1, nbformat.v4.new_code_cell("open('self.ipynb', 'w').write('gone')"))
    nbformat.write(nb, subs / "selfwriter.ipynb")

    (subs / "notes.ipynb").write_text("these are my notes, not a notebook", encoding="utf-8")
    (subs / "empty.ipynb").write_bytes(b"")

    hashes = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in subs.iterdir()}
    out = tmp_path_factory.mktemp("grades") / "grades.csv"
    code = cli.main(["grade", str(subs), "--lesson", "01", "--out", str(out), "--timeout", "15", "--root", str(ROOT)])
    assert code == 0
    rows = {r["student"]: r for r in csv.DictReader(open(out, encoding="utf-8"))}
    feedback = {p.stem: p.read_text(encoding="utf-8") for p in (out.parent / "grades_feedback").iterdir()}
    return subs, hashes, rows, feedback


def statuses(row):
    return [row[f"ex 1.{i}"] for i in range(1, 6)]


def test_one_row_per_student_and_a_feedback_file_each(graded):
    subs, _, rows, feedback = graded
    assert set(rows) == {p.stem for p in subs.iterdir()} == set(feedback)


def test_good_and_untouched(graded):
    _, _, rows, feedback = graded
    assert rows["good"]["score"] == "5" and statuses(rows["good"]) == ["passed"] * 5 and rows["good"]["problems"] == ""
    assert statuses(rows["untouched"]) == ["not implemented yet"] * 5 and rows["untouched"]["score"] == "0"
    assert "Score: 5 of 5" in feedback["good"]


def test_partial(graded):
    _, _, rows, _ = graded
    assert statuses(rows["partial"]) == [
        "passed",
        "not implemented yet",
        "passed",
        "not implemented yet",
        "not implemented yet",
    ]


def test_broken_cell_is_reported_and_the_rest_still_graded(graded):
    _, _, rows, feedback = graded
    row = rows["broken"]
    assert row["ex 1.1"] == "passed" and row["ex 1.2"] != "passed" and "SyntaxError" in row["problems"]
    assert "SyntaxError" in feedback["broken"]


def test_infinite_loop_is_interrupted_and_grading_goes_on(graded):
    _, _, rows, _ = graded
    row = rows["loops"]
    assert "time limit" in row["problems"]
    assert row["ex 1.1"] == "passed" and row["ex 1.2"] == "passed" and row["ex 1.4"] == "not implemented yet"


def test_megabytes_of_output_are_reported(graded):
    _, _, rows, _ = graded
    assert "MB of output" in rows["spammer"]["problems"] and rows["spammer"]["ex 1.4"] == "passed"


def test_edited_and_deleted_checks_are_restored(graded):
    _, _, rows, feedback = graded
    row = rows["tamperer"]
    assert statuses(row) == ["passed"] * 5  # every check ran as released
    assert "check-1-1 was edited" in row["problems"] and "was deleted" in row["problems"]
    assert "was deleted; put back" in feedback["tamperer"]


def test_reordered_cells_are_reported(graded):
    _, _, rows, _ = graded
    assert "reordered" in rows["reordered"]["problems"]


def test_not_a_notebook(graded):
    _, _, rows, _ = graded
    assert "not a notebook" in rows["notes"]["problems"] and "not a notebook" in rows["empty"]["problems"]
    assert statuses(rows["notes"]) == ["not run"] * 5


def test_submissions_are_never_modified(graded):
    subs, hashes, rows, _ = graded
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in subs.iterdir()} == hashes
    assert rows["selfwriter"]["ex 1.2"] == "passed"  # it wrote into the grader's scratch copy, not here


def test_restore_checks_without_any_metadata_appends_checks_at_the_end():
    release = nbformat.read(RELEASE, as_version=4)
    bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    restored, notes = grading.restore_checks(bare, release)
    assert restored.cells[0].source == "x = 1" and len(notes) == 5
    assert all("deleted" in n for n in notes)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="lesson must be two digits"):
        grading.release_notebook("one", ROOT)
    with pytest.raises(FileNotFoundError, match="no exercise notebook"):
        grading.release_notebook("99", ROOT)
    with pytest.raises(ValueError, match="no notebooks found"):
        grading.grade([tmp_path], "01", tmp_path / "g.csv", root=ROOT)


def test_release_copies_and_never_overwrites(tmp_path, capsys):
    assert cli.main(["release", "01", str(tmp_path), "--root", str(ROOT)]) == 0
    copied = tmp_path / "01_ngrams.ipynb"
    assert json.loads(copied.read_text()) == json.loads(RELEASE.read_text())
    copied.write_text("{}")  # a student's work in progress
    assert cli.main(["release", "01", str(tmp_path), "--root", str(ROOT)]) == 2
    assert "not overwriting" in capsys.readouterr().err and copied.read_text() == "{}"


def test_doctor_reports(capsys):
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert "torch" in out and "device:" in out and code in (0, 1)
