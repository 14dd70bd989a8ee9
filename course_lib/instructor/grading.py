"""Grade a folder of exercise submissions: run each in a fresh kernel, collect every check.

    course-lib grade submissions/*.ipynb --lesson 01 --out grades.csv

For each submission the grader

1. reads it (a file that is not a notebook is reported as such, and the grader goes on);
2. works on a copy in a temporary folder, never on the submission itself (its bytes are
   hashed before and after to prove it);
3. puts back every locked check cell from the released exercise notebook, so an edited,
   deleted or moved check still runs as released (and says so in the feedback);
4. executes the copy in a fresh kernel with a time limit per cell (a cell that loops forever
   is interrupted and the rest still runs) and a cap on output size;
5. reads the result of every check (``course_lib.checks`` appends them to the file named by
   ``COURSE_LIB_RESULTS``) and writes one CSV row per student and one feedback file each.

Like nbgrader, the grader runs the students' code in the students' kernel: a determined student
could forge check results from their own cells. It catches mistakes and accidents, and leaves
cheating to be caught the way it always is (reading the code, oral checks).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course_lib.checks import FAILED, NOT_IMPLEMENTED, PASSED, RESULTS_ENV

NOT_RUN = "not run"
MAX_OUTPUT_BYTES = 2_000_000


@dataclass
class Submission:
    """The outcome of grading one student's notebook."""

    student: str
    path: str
    exercises: dict[str, dict] = field(default_factory=dict)  # id -> {"status", "message", "title"}
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> int:
        return sum(e["status"] == PASSED for e in self.exercises.values())


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def release_notebook(lesson: str, root: Path) -> Path:
    """The exercise notebook as released for ``lesson`` ("01" or "01_ngrams")."""
    if not re.fullmatch(r"\d\d(_\w+)?", lesson):
        raise ValueError(f"lesson must be two digits such as '01' (or '01_ngrams'), got {lesson!r}")
    matches = sorted((root / "exercises").glob(f"{lesson[:2]}_*.ipynb"))
    if not matches:
        raise FileNotFoundError(f"no exercise notebook for lesson {lesson!r} in {root / 'exercises'}")
    return matches[0]


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_locked_check(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("locked")) and bool(meta.get("grade")) and not meta.get("solution")


def restore_checks(student_nb, release_nb) -> tuple[object, list[str]]:
    """The student's notebook with every locked check cell as released; and what had to be restored."""
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
    submitted = [g for g in (_grade_id(c) for c in student_nb.cells) if g in order]
    if submitted != sorted(submitted, key=order.index):
        notes.append("cells were reordered: graded in the submitted order, which may break later cells")
    out = nbformat.from_dict(dict(student_nb))
    out.cells = cells
    return out, notes


def grade_submission(
    path: str | os.PathLike,
    release: str | os.PathLike,
    *,
    cell_timeout: int = 120,
    kernel_name: str = "python3",
    max_output_bytes: int = MAX_OUTPUT_BYTES,
) -> Submission:
    """Grade one submission against the released exercise notebook; never raises for a bad submission."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    path = Path(path)
    result = Submission(student=path.stem, path=str(path))
    release_nb = nbformat.read(release, as_version=4)
    expected = [
        _grade_id(c)[len("ex-") :].replace("-", ".") for c in release_nb.cells if (_grade_id(c) or "").startswith("ex-")
    ]
    for exercise in dict.fromkeys(expected):
        result.exercises[exercise] = {"status": NOT_RUN, "message": "", "title": ""}
    started = time.perf_counter()
    if not path.is_file():
        result.problems.append("not a file")
        return result
    before = _sha256(path)
    try:
        student_nb = nbformat.read(path, as_version=4)
        nbformat.validate(student_nb)
    except Exception as exc:  # any unreadable file: report and go on
        result.problems.append(f"not a notebook ({type(exc).__name__}: {str(exc)[:200]})")
        return result

    graded, notes = restore_checks(student_nb, release_nb)
    result.problems.extend(notes)
    with tempfile.TemporaryDirectory(prefix="course-lib-grade-") as workdir:
        results_file = Path(workdir) / "results.jsonl"
        # The grader's own first cell: where the checks write their results.
        setup = nbformat.v4.new_code_cell(f"import os\nos.environ[{RESULTS_ENV!r}] = {str(results_file)!r}")
        graded.cells.insert(0, setup)
        client = NotebookClient(
            graded,
            timeout=cell_timeout,
            kernel_name=kernel_name,
            allow_errors=True,
            interrupt_on_timeout=True,
            resources={"metadata": {"path": workdir}},
        )
        try:
            client.execute()
        except DeadKernelError:
            result.problems.append("the kernel died (out of memory, or the notebook exited Python)")
        except CellExecutionError as exc:  # pragma: no cover - allow_errors makes this rare
            result.problems.append(f"execution stopped: {str(exc)[:200]}")
        except Exception as exc:
            result.problems.append(f"could not execute: {type(exc).__name__}: {str(exc)[:200]}")
        _collect_problems(graded, result, max_output_bytes)
        if results_file.exists():
            for line in results_file.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                result.exercises[record["exercise"]] = {k: record.get(k, "") for k in ("status", "message", "title")}
    if _sha256(path) != before:  # cannot happen (we only read it), but a grader must prove it
        result.problems.append("the submission changed on disk while grading: its notebook wrote to it")
    result.seconds = time.perf_counter() - started
    return result


def _collect_problems(nb, result: Submission, max_output_bytes: int) -> None:
    total = 0
    for index, cell in enumerate(nb.cells[1:]):  # skip the grader's own first cell
        for output in cell.get("outputs", []):
            total += len(json.dumps(output))
            if output.get("output_type") == "error":
                name = output.get("ename", "Error")
                if name == "KeyboardInterrupt":
                    result.problems.append(f"cell {index} ran past the time limit and was interrupted")
                elif name != "NotImplementedError":
                    result.problems.append(f"cell {index} raised {name}: {output.get('evalue', '')[:150]}")
    if total > max_output_bytes:
        result.problems.append(
            f"the notebook printed {total / 1e6:.1f} MB of output (limit {max_output_bytes / 1e6:.1f} MB)"
        )


def feedback_text(sub: Submission) -> str:
    """What a student reads: every exercise with its status and hint, then any problem."""
    lines = [f"# Feedback for {sub.student}", "", f"Score: {sub.score} of {len(sub.exercises)} exercises passed.", ""]
    for exercise, info in sorted(sub.exercises.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]):
        title = f" ({info['title']})" if info.get("title") else ""
        lines.append(f"- Exercise {exercise}{title}: {info['status']}. {info.get('message', '')}".rstrip())
    if sub.problems:
        lines += ["", "Problems found while running your notebook:"] + [f"- {p}" for p in sub.problems]
    return "\n".join(lines) + "\n"


def grade(
    submissions,
    lesson: str,
    out: str | os.PathLike,
    root: str | os.PathLike | None = None,
    feedback_dir: str | os.PathLike | None = None,
    cell_timeout: int = 120,
    progress=print,
) -> list[Submission]:
    """Grade every submission, write ``out`` (CSV, one row per student) and a feedback file each."""
    from course_lib.instructor.build import find_root

    root = Path(root) if root else find_root()
    release = release_notebook(lesson, root)
    out = Path(out)
    if out.exists() and out.is_dir():
        raise ValueError(f"out must be a CSV file path, got the folder {str(out)!r}")
    feedback_dir = Path(feedback_dir) if feedback_dir else out.with_name(out.stem + "_feedback")
    paths = []
    for item in submissions:
        item = Path(item)
        paths += sorted(item.glob("*.ipynb")) if item.is_dir() else [item]
    if not paths:
        raise ValueError("submissions: no notebooks found")
    stems = [p.stem for p in paths]
    duplicates = sorted({s for s in stems if stems.count(s) > 1})
    if duplicates:
        raise ValueError(f"submissions: two files would share the student name(s) {duplicates}; rename them")
    results = []
    for path in paths:
        sub = grade_submission(path, release, cell_timeout=cell_timeout)
        results.append(sub)
        if progress:
            progress(
                f"{sub.student}: {sub.score}/{len(sub.exercises)} passed"
                + (f"; {len(sub.problems)} problem(s)" if sub.problems else "")
                + f" ({sub.seconds:.0f} s)"
            )
    exercises = sorted({e for s in results for e in s.exercises}, key=lambda e: [int(x) for x in e.split(".")])
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "file", "score", "total"] + [f"ex {e}" for e in exercises] + ["problems"])
        for s in results:
            writer.writerow(
                [s.student, s.path, s.score, len(exercises)]
                + [s.exercises.get(e, {}).get("status", NOT_RUN) for e in exercises]
                + ["; ".join(s.problems)]
            )
    feedback_dir.mkdir(parents=True, exist_ok=True)
    for s in results:
        (feedback_dir / f"{s.student}.md").write_text(feedback_text(s), encoding="utf-8")
    return results


def release(lesson: str, dest: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """Copy the exercise notebook of ``lesson`` into ``dest`` to hand out; never overwrite a file there."""
    from course_lib.instructor.build import find_root

    root = Path(root) if root else find_root()
    source = release_notebook(lesson, root)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / source.name
    if target.exists():
        raise FileExistsError(f"{target} exists already (a student's work?); not overwriting it")
    shutil.copyfile(source, target)
    return target


__all__ = [
    "grade",
    "grade_submission",
    "release",
    "restore_checks",
    "feedback_text",
    "Submission",
    "PASSED",
    "FAILED",
    "NOT_IMPLEMENTED",
    "NOT_RUN",
]
