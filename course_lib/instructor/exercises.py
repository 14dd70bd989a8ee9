"""From a solutions notebook to the exercises notebook students get, with nbgrader metadata on both.

Solution markers (nbgrader-compatible)
--------------------------------------
In ``solutions/*.py``, each marker is a line of its own (indentation allowed)::

    ### BEGIN SOLUTION        ...    ### END SOLUTION
    ### BEGIN HIDDEN TESTS    ...    ### END HIDDEN TESTS

The exercises notebook is the solutions notebook with, cell for cell:

- in code cells, each solution block (markers included) replaced by one line at the indentation
  of ``### BEGIN SOLUTION``::

      raise NotImplementedError("Exercise 1.2: Laplace smoothing (about 3 lines)")

  where 3 counts the block's lines that are neither blank nor comments;
- in markdown cells, each solution block replaced by ``YOUR ANSWER HERE``;
- each hidden-test block dropped entirely (markers included).

Markers must be balanced and cannot nest; a line that mentions ``BEGIN SOLUTION``,
``END SOLUTION``, ``BEGIN HIDDEN TESTS`` or ``END HIDDEN TESTS`` without being exactly the
marker is a mistake too (nbgrader would treat it as one). Hidden tests go in a cell of their
own (usually the check cell), never in a cell with a solution block. Every solution block must
contain at least one line of code or text. Violations raise ``ValueError`` naming the source
file and the cell index (0-based, as in ``nb.cells[i]``).

Exercise ids
------------
Every solution block belongs to an exercise ``N.M``, named by the nearest line above its
``### BEGIN SOLUTION`` that reads ``Exercise N.M: title`` after one or more ``#``:

1. first in the same cell: a comment ``# Exercise 1.2: Laplace smoothing`` in a code cell, or a
   heading ``### Exercise 1.2: Laplace smoothing`` in a markdown cell;
2. otherwise in a markdown cell above: the latest heading ``## Exercise 1.2: Laplace smoothing``
   (any level). Such a heading stays in force until a markdown heading of the same or a higher
   level (fewer ``#``) that is not an exercise heading.

The title is optional (``# Exercise 1.2``). A solution block with no exercise is a
``ValueError``. Several blocks may share an exercise (e.g. two holes in one function).

nbgrader metadata (schema version 3)
------------------------------------
Set on the same cells of both the solutions and the exercises notebook, so nbgrader can take
either (``grade_id`` is unique in the notebook; a repeat gets ``-2``, ``-3``, ...):

- code cell with a solution block ("autograded answer")::

      {"grade": false, "grade_id": "ex-1-2", "locked": false, "schema_version": 3, "solution": true}

- markdown cell with a solution block ("manually graded answer"; nbgrader requires ``grade``)::

      {"grade": true, "grade_id": "ex-1-3", "locked": false, "points": 1, "schema_version": 3,
       "solution": true}

- any other code cell that calls a check (``check(...)``, ``check_laplace(...)``) or holds hidden
  tests ("autograder tests"); its id names the latest exercise above it::

      {"grade": true, "grade_id": "check-1-2", "locked": true, "points": 1, "schema_version": 3,
       "solution": false}

  ``points`` is :func:`course_lib.instructor.points.default_points` of the exercise's code solution
  (a point per 4 lines, started; 1 to 5), on its first check cell; a further check cell of the
  same exercise gets 0.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from nbformat import NotebookNode

from course_lib.instructor.ids import answer_exercise
from course_lib.instructor.points import default_points

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
MARKERS = {BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN}
_MARKER_WORDS = re.compile(r"(BEGIN|END)\s+(SOLUTION|HIDDEN\s+TESTS)", re.IGNORECASE)
MARKDOWN_STUB = "YOUR ANSWER HERE"

_EXERCISE_LINE = re.compile(r"^\s*(#+)\s*Exercise\s+(\d+\.\d+)\b\s*(?::\s*(.*?))?\s*$")
_HEADING = re.compile(r"^(#{1,6})\s")
_CHECK_CALL = re.compile(r"\bcheck(?:_\w+)?\s*\(")  # check(...), check_laplace(...); not checkpoint(
_STUB_ID = re.compile(r"NotImplementedError\(\s*[\"']Exercise\s+(\d+\.\d+)")


# --------------------------------------------------------------------------- exercises


@dataclass
class _Exercise:
    id: str  # "1.2"
    title: str
    level: int  # number of '#' in the heading that named it

    def stub(self, n_lines: int) -> str:
        label = f"Exercise {self.id}: {self.title}" if self.title else f"Exercise {self.id}"
        plural = "line" if n_lines == 1 else "lines"
        message = f"{label} (about {n_lines} {plural})"
        escaped = message.replace("\\", "\\\\").replace('"', '\\"')
        return f'raise NotImplementedError("{escaped}")'


@dataclass
class _CellPlan:
    """How one solution cell becomes an exercise cell."""

    exercise_source: str
    solution_ids: list[str]  # exercise ids of its solution blocks, in order
    has_hidden_tests: bool
    nbgrader: dict | None = None
    lines: dict[str, int] = field(default_factory=dict)  # exercise id -> lines of its solution blocks here


def _notebook_name(nb: NotebookNode, name: str | None) -> str:
    return name or nb.get("metadata", {}).get("course_lib", {}).get("generated_from") or "<notebook>"


def _plan_cell(cell, index: int, context: _Exercise | None, where: str) -> tuple[_CellPlan, _Exercise | None]:
    """Replace the marked blocks of one cell; return the plan and the exercise context after it.

    In markdown cells exercise headings persist into later cells; in code cells an
    ``# Exercise N.M`` comment only applies to the rest of that cell.
    """
    is_markdown = cell.cell_type == "markdown"
    out: list[str] = []
    ids: list[str] = []
    lines: dict[str, int] = {}
    has_hidden = False
    open_marker = None  # BEGIN_SOLUTION or BEGIN_HIDDEN while inside a block
    open_line = 0
    indent = ""
    block: list[str] = []
    exercise = None  # the exercise of the open solution block

    def fail(lineno: int, problem: str) -> ValueError:
        first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
        return ValueError(
            f"{where}, cell index {index} (starting {first[:60]!r}), line {lineno} of the cell: {problem}"
        )

    for lineno, line in enumerate(cell.source.split("\n"), start=1):
        stripped = line.strip()
        if stripped not in MARKERS and _MARKER_WORDS.search(line):
            raise fail(lineno, f"{stripped!r} looks like a marker but is not exactly one of {sorted(MARKERS)}")

        if stripped in (BEGIN_SOLUTION, BEGIN_HIDDEN):
            if open_marker:
                raise fail(lineno, f"{stripped} inside the {open_marker} of line {open_line}; markers cannot nest")
            open_marker, open_line, indent, block = stripped, lineno, line[: len(line) - len(line.lstrip())], []
            if stripped == BEGIN_SOLUTION:
                if context is None:
                    raise fail(
                        lineno,
                        f"{BEGIN_SOLUTION} with no exercise id: put '# Exercise N.M: title' "
                        "above it in the cell, or '### Exercise N.M: title' in a markdown cell above",
                    )
                exercise = context
            continue

        if stripped in (END_SOLUTION, END_HIDDEN):
            expected = END_SOLUTION if open_marker == BEGIN_SOLUTION else END_HIDDEN
            if open_marker is None or stripped != expected:
                raise fail(lineno, f"{stripped} without a matching {stripped.replace('END', 'BEGIN')}")
            if open_marker == BEGIN_SOLUTION:
                n_lines = sum(1 for b in block if b.strip() and not b.strip().startswith("#"))
                if is_markdown:
                    n_lines = sum(1 for b in block if b.strip())
                if n_lines == 0:
                    raise fail(open_line, f"empty solution block for Exercise {exercise.id}")
                out.append(indent + (MARKDOWN_STUB if is_markdown else exercise.stub(n_lines)))
                ids.append(exercise.id)
                lines[exercise.id] = lines.get(exercise.id, 0) + n_lines
            else:
                has_hidden = True
            open_marker = None
            continue

        if open_marker:
            block.append(line)
            continue

        out.append(line)
        named = _EXERCISE_LINE.match(line)
        if named:
            context = _Exercise(named.group(2), named.group(3) or "", len(named.group(1)))
        elif is_markdown and context is not None:
            heading = _HEADING.match(line)
            if heading and len(heading.group(1)) <= context.level:
                context = None  # a new section of the same or higher level ends the exercise

    if open_marker:
        raise fail(open_line, f"{open_marker} has no matching {open_marker.replace('BEGIN', 'END')}")
    if ids and has_hidden:
        raise fail(1, "hidden tests must go in a cell of their own (the check cell), not with a solution block")
    source = "\n".join(out).rstrip() if (ids or has_hidden) else cell.source
    return _CellPlan(source, ids, has_hidden, lines=lines), context


def _plan_notebook(nb: NotebookNode, where: str) -> list[_CellPlan]:
    """Plan every cell: exercise sources, exercise ids and nbgrader metadata."""
    plans = []
    markdown_context = None
    last_exercise = None  # for naming check cells
    used_ids: set[str] = set()
    lines: dict[str, int] = {}  # exercise id -> its code solution's lines, for its default points
    pointed: set[str] = set()  # exercises whose check cell has its points already

    def unique(grade_id: str) -> str:
        candidate, n = grade_id, 1
        while candidate in used_ids:
            n += 1
            candidate = f"{grade_id}-{n}"
        used_ids.add(candidate)
        return candidate

    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "raw":
            plans.append(_CellPlan(cell.source, [], False))
            continue
        plan, after = _plan_cell(cell, index, markdown_context, where)
        if cell.cell_type == "markdown":
            markdown_context = after
        if cell.cell_type == "code":
            for exercise_id, n in plan.lines.items():
                lines[exercise_id] = lines.get(exercise_id, 0) + n
        if plan.solution_ids:
            last_exercise = plan.solution_ids[-1]
            grade_id = unique("ex-" + plan.solution_ids[0].replace(".", "-"))
            if cell.cell_type == "markdown":
                plan.nbgrader = _nbgrader(grade_id, grade=True, solution=True, locked=False, points=1)
            else:
                plan.nbgrader = _nbgrader(grade_id, grade=False, solution=True, locked=False)
        elif cell.cell_type == "code" and (plan.has_hidden_tests or _calls_check(cell.source)):
            suffix = last_exercise.replace(".", "-") if last_exercise else f"cell-{index}"
            # the exercise's points on its first check cell (a further one adds none: nbgrader sums them)
            points = 0 if last_exercise in pointed else default_points(lines.get(last_exercise, 0))
            pointed.add(last_exercise)
            plan.nbgrader = _nbgrader(unique("check-" + suffix), grade=True, solution=False, locked=True, points=points)
        plans.append(plan)
    return plans


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        meta["points"] = points
    return meta


def _calls_check(source: str) -> bool:
    return any(_CHECK_CALL.search(line) for line in source.splitlines() if not line.lstrip().startswith("#"))


def _with_nbgrader(nb: NotebookNode, plans: list[_CellPlan]) -> NotebookNode:
    nb = copy.deepcopy(nb)
    for cell, plan in zip(nb.cells, plans):
        cell.metadata.pop("nbgrader", None)
        if plan.nbgrader:
            cell.metadata["nbgrader"] = dict(plan.nbgrader)
    return nb


def solution_notebook(solution_nb: NotebookNode, name: str | None = None) -> NotebookNode:
    """The solutions notebook: markers kept, nbgrader metadata set. Validates the markers."""
    return _with_nbgrader(solution_nb, _plan_notebook(solution_nb, _notebook_name(solution_nb, name)))


def make_exercise(solution_nb: NotebookNode, name: str | None = None) -> NotebookNode:
    """The exercises notebook generated from a solutions notebook (see the module docstring).

    Cells correspond one to one (same ids, same nbgrader metadata); solution blocks become
    stubs and hidden tests disappear. ``name`` is used in error messages (default: the
    notebook's ``metadata.course_lib.generated_from``). Raises ``ValueError`` on bad markers.
    """
    plans = _plan_notebook(solution_nb, _notebook_name(solution_nb, name))
    exercise = _with_nbgrader(solution_nb, plans)
    for cell, plan in zip(exercise.cells, plans):
        cell.source = plan.exercise_source
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return exercise


def exercise_ids(nb: NotebookNode) -> list[str]:
    """The exercise ids in a notebook, in order of first appearance, e.g. ``["1.1", "1.2"]``.

    Works on a solutions notebook (from its solution blocks), on a freshly generated exercises
    notebook (from its stubs) and on a student's submission (from the nbgrader ``grade_id`` of
    its answer cells, which survives the student replacing the stub). Never raises on bad
    markers (a student may type anything): those cells count by their stubs and metadata only.
    """
    found: list[str] = []
    try:
        plans = _plan_notebook(nb, _notebook_name(nb, None))
    except ValueError:  # e.g. a student's text that looks like a marker: use stubs and metadata
        plans = [_CellPlan(cell.source, [], False) for cell in nb.cells]
    for cell, plan in zip(nb.cells, plans):
        found += plan.solution_ids
        found += _STUB_ID.findall(cell.source) if cell.cell_type == "code" else []
        grader = cell.get("metadata", {}).get("nbgrader") or {}  # a student's metadata may say null
        exercise = answer_exercise(grader.get("grade_id")) if grader.get("solution") else None
        if exercise:
            found.append(exercise)
    return list(dict.fromkeys(found))
