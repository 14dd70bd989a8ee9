"""The exercise notebook as released, and a submission put back in its released shape.

``release_notebook(lesson)`` finds the exercise notebook handed out for a lesson; ``release`` copies it
for the class; ``restore_checks`` gives a student's notebook its released setup cell and locked check
cells back (the graded version: a student's edits to those cells never count). Cells are recognised by
their nbgrader metadata (``grade_id``: ``ex-1-2`` for an answer, ``check-1-2`` for a locked check).
"""

from __future__ import annotations

import re
from pathlib import Path

from course_lib.instructor.ids import answer_exercise


def exercise_folders(root=None) -> list[Path]:
    """Where released exercise notebooks are looked for, in order: ``root/exercises`` when given; else the
    clone this package runs from, the current folder's ``exercises/``, and the copy installed with the
    package (``course_lib/released``, from the wheel), so ``course-lib release`` works without a clone."""
    import course_lib

    if root:
        return [Path(root) / "exercises"]
    package = Path(course_lib.__file__).resolve().parent
    return [package.parent / "exercises", Path.cwd() / "exercises", package / "released"]


def release_notebook(lesson: str, root=None) -> Path:
    """The exercise notebook as released for ``lesson`` ("01" or "01_ngrams")."""
    if not isinstance(lesson, str) or not re.fullmatch(r"\d\d(_\w+)?", lesson):
        raise ValueError(f"lesson must be two digits such as '01' (or '01_ngrams'), got {lesson!r}")
    folders = exercise_folders(root)
    for folder in folders:
        matches = sorted(folder.glob(f"{lesson[:2]}_*.ipynb")) if folder.is_dir() else []
        if matches:
            return matches[0]
    raise FileNotFoundError(
        f"no exercise notebook for lesson {lesson!r} in {', '.join(map(str, folders))}: pass --root CLONE, "
        "or --release path/to/NN_topic.ipynb (the exercise notebook you handed out)"
    )


def release(lesson: str, dest, root=None) -> Path:
    """Copy the exercise notebook of ``lesson`` into ``dest`` to hand out, with the course version and a fingerprint
    of every check in its metadata (:mod:`course_lib.instructor.fingerprint`); never overwrite a file there."""
    source = release_notebook(lesson, root)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    if target.exists():
        raise FileExistsError(f"{target} exists already (a student's work?); not overwriting it")
    import nbformat

    from course_lib.instructor import fingerprint

    nb = nbformat.read(source, as_version=4)
    fingerprint.stamp(nb, source.name[:2])  # the checks it was released with, so grading can tell a change
    with open(target, "x", encoding="utf-8") as f:  # "x": a file that appeared meanwhile is not overwritten
        nbformat.write(nb, f)
    return target


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata") or {}
    grader = meta.get("nbgrader") if isinstance(meta, dict) else None
    return grader if isinstance(grader, dict) else {}  # a student's metadata may say null, or anything


def _grade_id(cell) -> str | None:
    gid = _nbgrader(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def _is_locked_check(cell) -> bool:
    meta = _nbgrader(cell)
    return bool(meta.get("locked")) and bool(meta.get("grade")) and not meta.get("solution")


def _setup_cell(release_nb):
    """The release's first code cell (imports and ``course_lib.setup``), when it is not an exercise."""
    for cell in release_nb.cells:
        if cell.cell_type == "code":
            return None if _grade_id(cell) else cell
    return None


def lesson_of(nb) -> str | None:
    """The lesson an exercise notebook belongs to, from its answer cells' grade ids ("ex-1-2" -> "01")."""
    for exercise in expected_exercises(nb):
        return f"{int(exercise.split('.')[0]):02d}"
    return None


def expected_exercises(release_nb) -> list[str]:
    """The exercises with a code answer cell. One answered only in writing (markdown answer cells, such as
    lesson 07's 7.8) is for the instructor to read, as nbgrader leaves markdown answers to manual grading."""
    code_answers = (answer_exercise(_grade_id(c)) for c in release_nb.cells if c.get("cell_type") == "code")
    return list(dict.fromkeys(e for e in code_answers if e))


def restore_checks(student_nb, release_nb) -> tuple[object, list[str]]:
    """The student's notebook with the setup cell and every locked check cell as released; and the notes."""
    import nbformat

    released = {_grade_id(c): c for c in release_nb.cells if _is_locked_check(c)}
    order = [_grade_id(c) for c in release_nb.cells if _grade_id(c)]
    notes: list[str] = []
    cells = []
    for cell in student_nb.cells:
        gid = _grade_id(cell)
        if gid in released:
            if cell.get("source") != released[gid].source:
                notes.append(f"check cell {gid} was edited; graded with the released version")
            cell = nbformat.from_dict(dict(released[gid]))
        cells.append(cell)
    present = {_grade_id(c) for c in cells}
    for gid in released:
        if gid in present:
            continue
        notes.append(f"check cell {gid} was deleted; put back for grading")
        # right after the last cell that precedes it in the release (at the end if none is left)
        earlier = set(order[: order.index(gid)])
        positions = [i for i, c in enumerate(cells) if _grade_id(c) in earlier]
        cells.insert(positions[-1] + 1 if positions else len(cells), nbformat.from_dict(dict(released[gid])))
    setup = _setup_cell(release_nb)
    if setup is not None and not any(c.get("source") == setup.source for c in cells):
        notes.append("the setup cell was changed or deleted; the released one was run first")
        cells.insert(0, nbformat.from_dict(dict(setup)))
    submitted = [g for g in (_grade_id(c) for c in student_nb.cells) if g in order]
    if submitted != sorted(submitted, key=order.index):
        notes.append("cells were reordered: graded in the submitted order, which may break later cells")
    out = nbformat.from_dict(dict(student_nb))
    out.cells = cells
    return out, notes
