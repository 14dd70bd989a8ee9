"""From ``course-lib grade`` to the gradebooks instructors already use: nbgrader's, Canvas's and Moodle's.

- :func:`to_nbgrader` writes a graded submission into an nbgrader course folder through nbgrader's own API
  (``nbgrader.api.Gradebook``, the course's ``gradebook.db``): the assignment's notebook and cells as the
  release declares them (as ``nbgrader generate_assignment`` records them), the student, and for every check
  cell its autograded score (its points when the exercise passed, else 0). Written answers (markdown answer
  cells) stay "needs manual grade", so they are graded by hand in formgrader beside the autograded marks, and
  ``nbgrader export`` / ``generate_feedback`` / ``release_feedback`` work as for nbgrader's own autograde. A copy
  of the submission goes to ``autograded/<student>/<assignment>/`` (formgrader shows it; the submission itself
  is never modified) and the grader's feedback, as HTML, to ``feedback/<student>/<assignment>/``.
- :func:`lms_csv` turns the grades CSV into a file Canvas or Moodle imports: the student's LMS id from a roster
  (a CSV with the columns ``student``, the name the grader gave, and ``id``), the points and the maximum.
- :func:`feedback_html` is a student's feedback as one escaped HTML page.
"""

from __future__ import annotations

import contextlib
import csv
import html
import math
import os
import sys
from pathlib import Path

FORMATS = ("canvas", "moodle")


def feedback_html(title: str, text: str) -> str:
    """The feedback text (plain, from ``feedback_text``) as a self-contained HTML page, every character escaped."""
    body = html.escape(text)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        + html.escape(title)
        + '</title></head>\n<body><pre style="white-space: pre-wrap">'
        + body
        + "</pre></body></html>\n"
    )


def _nbgrader_meta(cell) -> dict:
    meta = (cell.get("metadata") or {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def _record_assignment(gb, assignment: str, notebook: str, release_nb) -> None:
    """The assignment, its notebook and its graded, solution and locked cells, as the release declares them."""
    gb.update_or_create_assignment(assignment)
    gb.update_or_create_notebook(notebook, assignment)
    for cell in release_nb.cells:
        meta = _nbgrader_meta(cell)
        name = meta.get("grade_id")
        if not name:
            continue
        if meta.get("grade"):
            gb.update_or_create_grade_cell(
                name, notebook, assignment, max_score=float(meta.get("points", 0)), cell_type=cell.cell_type
            )
        if meta.get("solution"):
            gb.update_or_create_solution_cell(name, notebook, assignment)
        if meta.get("grade") or meta.get("solution") or meta.get("locked"):
            gb.update_or_create_source_cell(
                name,
                notebook,
                assignment,
                cell_type=cell.cell_type,
                locked=bool(meta.get("locked")),
                source=cell.source,
                checksum=meta.get("checksum"),
            )


@contextlib.contextmanager
def _alembic_on_path():
    """nbgrader creates or upgrades gradebook.db by running the ``alembic`` command installed beside this Python,
    which is not on PATH when the venv is not activated: put its folder first while the gradebook opens."""
    before = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), before])
    try:
        yield
    finally:
        os.environ["PATH"] = before


def to_nbgrader(course, assignment: str, release_nb, notebook: str, sub, student_id: str, passed: str) -> None:
    """Write one graded submission (a :class:`~course_lib.instructor.submission.Submission`) into the nbgrader
    course folder ``course`` as student ``student_id``'s submission of ``assignment`` (notebook ``notebook``,
    without ``.ipynb``). Grading again replaces the autograded scores and leaves manual grades as they are."""
    from nbgrader.api import Gradebook, MissingEntry

    from course_lib.instructor.ids import exercise_of

    course = Path(course)
    course.mkdir(parents=True, exist_ok=True)  # nbgrader's course folder: gradebook.db is created in it
    with _alembic_on_path(), Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        _record_assignment(gb, assignment, notebook, release_nb)
        gb.update_or_create_student(student_id)
        try:
            gb.find_submission(assignment, student_id)
        except MissingEntry:
            gb.add_submission(assignment, student_id)
        for cell in release_nb.cells:
            meta = _nbgrader_meta(cell)
            name = meta.get("grade_id")
            if not (meta.get("grade") and name):
                continue
            grade = gb.find_grade(name, notebook, assignment, student_id)
            if meta.get("solution"):  # a written answer: for the instructor, in formgrader
                grade.auto_score = None
                grade.needs_manual_grade = grade.manual_score is None
                continue
            status = (sub.exercises.get(exercise_of(name)) or {}).get("status")
            grade.auto_score = float(meta.get("points", 0)) if status == passed else 0.0
            grade.needs_manual_grade = False
        for exercise, result in sub.exercises.items():  # the grader's hint, beside the answer cell
            try:
                comment = gb.find_comment(f"ex-{exercise.replace('.', '-')}", notebook, assignment, student_id)
            except MissingEntry:
                continue
            comment.auto_comment = f"{result.get('status', '')}: {result.get('message', '')}".strip(": ")
        gb.db.commit()


def write_autograded(course, assignment: str, notebook: str, student_id: str, submitted: Path, feedback: str) -> None:
    """A copy of the submission where formgrader looks (a regular file only, never through a link), and the
    feedback page where release_feedback looks."""
    from course_lib.instructor.submission import MAX_NOTEBOOK_BYTES, read_regular

    for what, name in (("student", student_id), ("assignment", assignment), ("notebook", notebook)):
        if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"{what} must be a plain folder or file name for nbgrader's folders, got {name!r}")
    course = Path(course)
    graded = course / "autograded" / student_id / assignment
    graded.mkdir(parents=True, exist_ok=True)
    try:
        data = read_regular(submitted, MAX_NOTEBOOK_BYTES) if submitted is not None else None
    except ValueError:  # its row says what it is; formgrader gets no copy
        data = None
    if data is not None:
        (graded / f"{notebook}.ipynb").write_bytes(data)
    folder = course / "feedback" / student_id / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{notebook}.html").write_text(feedback_html(f"{assignment}: {student_id}", feedback), "utf-8")


def read_roster(path) -> dict[str, dict]:
    """The roster: the grader's student name -> its row (``id`` the LMS's student id; ``name`` optional)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows or not {"student", "id"} <= set(rows[0]):
        raise ValueError(f"roster {path}: expected a CSV with the columns student and id (and optionally name)")
    roster: dict[str, dict] = {}
    for i, row in enumerate(rows, start=2):
        if not row["student"] or not row["id"]:
            raise ValueError(f"roster {path}, line {i}: student and id must not be empty")
        if row["student"] in roster:
            raise ValueError(f"roster {path}, line {i}: student {row['student']!r} appears twice")
        roster[row["student"]] = row
    return roster


def _unquoted(cell: str) -> str:
    """A grades-CSV cell as it was before ``safe_cell`` put a quote before a leading = + - @ (or tab, CR, quote)."""
    from course_lib.instructor.grading import QUOTED

    return cell[1:] if cell[:1] == "'" and cell[1:2] in QUOTED else cell


def lms_csv(grades, roster, out, *, lms: str, assignment: str) -> int:
    """Write ``out``, an import file for ``lms`` ("canvas" or "moodle"), from the grades CSV; return its rows.

    Every graded student must be in the roster and the other way round (a student graded without an LMS id, or
    enrolled without a grade, is named in the ValueError: nothing is dropped silently). Cells are made safe
    for spreadsheets as in the grades CSV.
    """
    from course_lib.instructor.grading import safe_cell

    if lms not in FORMATS:
        raise ValueError(f"lms must be one of {', '.join(FORMATS)}, got {lms!r}")
    if not isinstance(assignment, str) or not assignment.strip():
        raise ValueError(f"assignment must be the assignment's name in the LMS, got {assignment!r}")
    people = read_roster(roster)
    with open(grades, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"student", "points", "max points"} <= set(rows[0]):
        raise ValueError(f"{grades}: not a grades CSV with points (columns student, points, max points)")
    graded = {_unquoted(r["student"]): r for r in rows}
    unknown = sorted(set(graded) - set(people))
    missing = sorted(set(people) - set(graded))
    if unknown or missing:
        raise ValueError(
            "the roster and the grades differ: "
            + "; ".join(
                p
                for p in (
                    f"graded but not in the roster: {', '.join(unknown)}" if unknown else "",
                    f"in the roster but not graded: {', '.join(missing)}" if missing else "",
                )
                if p
            )
        )
    maxima = {r["max points"] for r in rows}
    if len(maxima) > 1:
        raise ValueError(f"{grades}: rows with different maxima ({', '.join(sorted(maxima))}): graded twice?")
    maximum = next(iter(maxima), "0")
    for r in rows:
        if not math.isfinite(float(r["points"])):
            raise ValueError(f"{grades}: {r['student']}: points {r['points']!r} is not a number")
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        if lms == "canvas":  # Canvas's gradebook import: these columns, then a "Points Possible" row
            writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
            writer.writerow(["Points Possible", "", "", "", "", maximum])
            for student in sorted(graded):
                p = people[student]
                cells = [
                    p.get("name") or student,
                    p["id"],
                    p.get("sis_id", ""),
                    p.get("login", ""),
                    "",
                    graded[student]["points"],
                ]
                writer.writerow([safe_cell(c) for c in cells])
        else:  # Moodle's "Import grades from CSV": an identifier column to map, the grade, the maximum
            writer.writerow(["ID number", "Full name", assignment, "Maximum"])
            for student in sorted(graded):
                p = people[student]
                cells = [p["id"], p.get("name") or student, graded[student]["points"], maximum]
                writer.writerow([safe_cell(c) for c in cells])
    return len(graded)
