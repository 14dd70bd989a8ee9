"""The course's rules for exercises, over every lesson (issue 24: students build, no spoilers, no repeats).

- No exercise repeats another: no function name, and no check (its draw or judge), in two lessons.
- No lesson notebook (``notebooks/NN*.py``) shows an answer before its exercise: no
  ``inspect.getsource``, ``??`` or ``%psource`` of a course_lib name that an exercise of this or a
  later lesson forbids (nor of a method of a forbidden class, a class holding a forbidden method, or,
  printed, the module that holds one).
- Every forbidden name is importable, and autograd is forbidden whole (``torch.Tensor.backward``,
  ``torch.autograd.backward`` and ``torch.autograd.grad`` together: each reaches the same gradients).
- Every lesson has a **build** exercise: its solution blocks add up to 12 or more lines (the size the
  generated stub announces, "about N lines": lines that are neither blank nor comments), and every build
  exercise has a check that declares ``forbidden`` names.
- Every lesson has an **experiment** exercise: a written answer (a solution block in a markdown cell,
  nbgrader's manually graded answer ``ex-N-M``) after at least one code cell of the same exercise
  (below its ``Exercise N.M`` heading), where the student runs what they built and reads the result.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from functools import cache
from pathlib import Path

import pytest

from course_lib import checks
from course_lib.checks.borrowed import resolve

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py"))
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]*.py"))
AUTOGRAD = ("torch.Tensor.backward", "torch.autograd.backward", "torch.autograd.grad")
BUILD_LINES = 12
_STUB = re.compile(r"NotImplementedError\(\"Exercise (\d+\.\d+)[^\"]*\(about (\d+) lines?\)\"\)")
_HEADING = re.compile(r"^\s*#+\s*Exercise\s+(\d+\.\d+)\b", re.MULTILINE)


@cache
def exercises_of(lesson: str) -> dict:
    return checks.exercises(lesson[:2])


@cache
def generated(lesson: str):
    """The lesson's exercises notebook as the builder generates it from solutions/ (stubs, nbgrader metadata)."""
    from course_lib.instructor.build import read_source
    from course_lib.instructor.exercises import make_exercise

    return make_exercise(read_source(ROOT / "solutions" / f"{lesson}.py"))


def solution_lines(nb) -> dict[str, int]:
    """Exercise id -> lines of its code solution blocks, summed (what the stubs announce)."""
    sizes: dict[str, int] = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for exercise, n in _STUB.findall(cell.source):
                sizes[exercise] = sizes.get(exercise, 0) + int(n)
    return sizes


def experiments(nb) -> list[str]:
    """Exercises with a written answer that comes after a code cell of the same exercise."""
    found, section, code_seen = [], None, set()
    for cell in nb.cells:
        headings = _HEADING.findall(cell.source) if cell.cell_type == "markdown" else []
        if headings:
            section = headings[-1]
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if cell.cell_type == "code" and section:
            code_seen.add(section)
        if cell.cell_type == "markdown" and meta.get("solution") and grade_id.startswith("ex-"):
            exercise = grade_id[3:].split("-")
            exercise = f"{exercise[0]}.{exercise[1]}"
            if exercise in code_seen:
                found.append(exercise)
    return found


# ---------------------------------------------------------------- no repeats


def test_no_exercise_repeats_another():
    seen: dict = {}
    repeats = []
    for lesson in LESSONS:
        for exercise_id, ex in exercises_of(lesson).items():
            for key, what in ((("function", ex.function), f"the function `{ex.function}`"),
                              (("draw", id(ex.draw)), "the same check's inputs (draw)"),
                              (("body", id(ex.body)), "the same check's judge")):  # fmt: skip
                if key in seen and seen[key] != exercise_id:
                    repeats.append(f"Exercise {exercise_id} repeats Exercise {seen[key]}: {what}")
                seen.setdefault(key, exercise_id)
    assert not repeats, "\n".join(repeats)


# ---------------------------------------------------------------- forbidden names


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_forbidden_name_is_importable_and_autograd_is_forbidden_whole(lesson):
    problems = []
    for exercise_id, ex in exercises_of(lesson).items():
        for name in ex.forbidden:
            try:
                resolve(name)
            except ValueError as exc:
                problems.append(f"Exercise {exercise_id}: {exc}")
        if any(n in ex.forbidden for n in AUTOGRAD) and not all(n in ex.forbidden for n in AUTOGRAD):
            missing = [n for n in AUTOGRAD if n not in ex.forbidden]
            problems.append(f"Exercise {exercise_id} forbids part of autograd: also forbid {missing}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_build_exercise_declares_what_it_forbids(lesson):
    found = exercises_of(lesson)
    problems = []
    for exercise_id, n in solution_lines(generated(lesson)).items():
        if n < BUILD_LINES:
            continue
        if exercise_id not in found:
            problems.append(f"build Exercise {exercise_id} ({n} lines) has no check in course_lib.checks")
        elif not found[exercise_id].forbidden:
            problems.append(
                f"build Exercise {exercise_id} ({n} lines) declares no forbidden=(...): name what would answer it "
                "without the student writing it (course_lib's version, autograd, torch's ready-made module)"
            )
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- every lesson builds and experiments


def build_runs(lesson: str) -> dict[tuple[str, ...], int]:
    """Runs of consecutive exercises that each declare ``forbidden`` (a build the student writes, in one
    exercise or over several cells, such as lesson 07's Head, MultiHeadAttention, ... GPT) -> their lines."""
    from course_lib import checks
    from course_lib.instructor.ids import sort_key

    sizes = solution_lines(generated(lesson))
    declared = checks.exercises(lesson[:2])
    runs, run = {}, ()
    for exercise in sorted(sizes, key=sort_key):
        run = run + (exercise,) if exercise in declared and declared[exercise].forbidden else ()
        if run:
            runs[run] = sum(sizes[e] for e in run)
    return runs


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_has_a_build_exercise_of_12_or_more_lines(lesson):
    runs = build_runs(lesson)
    assert max(runs.values(), default=0) >= BUILD_LINES, (
        f"{lesson}: no build (an exercise, or consecutive exercises, that declare forbidden names) whose "
        f"solution blocks add up to {BUILD_LINES} lines or more; the largest: "
        f"{sorted(runs.items(), key=lambda kv: -kv[1])[:3]}"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_has_an_experiment_exercise(lesson):
    assert experiments(generated(lesson)), (
        f"{lesson}: no experiment exercise (a code cell that runs what the student built, then a markdown "
        "cell with ### BEGIN SOLUTION / ### END SOLUTION where they explain the result, under one Exercise heading)"
    )


# ---------------------------------------------------------------- no spoilers


def _imports(tree) -> dict[str, str]:
    """Name -> dotted name, from the notebook's imports (``from course_lib import parentheses as P``)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node, names: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])


def _value(dotted: str):
    try:
        return resolve(dotted)[2]
    except ValueError:
        import importlib

        try:
            return importlib.import_module(dotted)
        except ImportError:
            return None


def _loop_values(tree) -> dict[str, list]:
    """``for piece in (a.B, a.C):`` -> {"piece": [a.B node, a.C node]}: what a loop variable stands for."""
    loops: dict[str, list] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, (ast.Tuple, ast.List))
        ):
            loops.setdefault(node.target.id, []).extend(node.iter.elts)
    return loops


def _shown(source: str) -> list[tuple[int, str, bool]]:
    """(line, dotted name, printed) for each place the notebook shows a name's source."""
    tree = ast.parse(source)
    names, loops = _imports(tree), _loop_values(tree)
    for node in ast.walk(tree):  # x = P.is_balanced: x is an alias
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            dotted = _dotted(node.value, names)
            if dotted:
                names.setdefault(node.targets[0].id, dotted)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    shown = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if func not in ("getsource", "getsourcelines", "getsourcefile", "getfile"):
            continue
        up, printed = parents.get(node), False
        while up is not None and not isinstance(up, ast.stmt):
            called = getattr(up, "func", None)
            printed |= isinstance(up, ast.Call) and getattr(called, "id", getattr(called, "attr", "")) in (
                "print", "display", "Code", "Markdown", "HTML")  # fmt: skip
            up = parents.get(up)
        printed |= isinstance(up, ast.Expr)  # the cell's value is displayed
        targets = loops.get(node.args[0].id, [node.args[0]]) if isinstance(node.args[0], ast.Name) else [node.args[0]]
        for target in targets:
            dotted = _dotted(target, names)
            shown.append((node.lineno, dotted or ast.unparse(target), printed))
    for lineno, line in enumerate(source.splitlines(), start=1):  # IPython's ?? and %psource, as jupytext keeps them
        m = re.match(r"^\s*#?\s*(?:%(?:psource|pfile|pinfo2)\s+([\w.]+)|\?\?([\w.]+)|([\w.]+)\?\?)\s*$", line)
        if m:
            name = next(g for g in m.groups() if g)
            head, _, rest = name.partition(".")
            shown.append((lineno, names[head] + (f".{rest}" if rest else "") if head in names else name, True))
    return shown


def _reveals(shown, forbidden) -> bool:
    """Showing ``shown``'s source shows ``forbidden``'s: the same object, a part of it, or what holds it."""
    if shown is forbidden:
        return True
    if isinstance(shown, types.ModuleType):
        return getattr(forbidden, "__module__", None) == shown.__name__
    module, qualname = getattr(shown, "__module__", None), getattr(shown, "__qualname__", "")
    f_module, f_qualname = getattr(forbidden, "__module__", None), getattr(forbidden, "__qualname__", "")
    if not (module and module == f_module and qualname and f_qualname):
        return False
    return qualname.startswith(f_qualname + ".") or f_qualname.startswith(qualname + ".")


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_no_lesson_shows_an_answer_before_its_exercise(notebook):
    lesson = int(notebook[:2])
    answers = {
        name: f"Exercise {exercise_id}"
        for later in LESSONS
        if int(later[:2]) >= lesson
        for exercise_id, ex in exercises_of(later).items()
        for name in ex.forbidden
        if name.startswith("course_lib.")
    }
    problems = []
    for lineno, dotted, printed in _shown((ROOT / "notebooks" / notebook).read_text(encoding="utf-8")):
        value = _value(dotted) if dotted.startswith("course_lib") else None
        if value is None:
            if not dotted.startswith(("course_lib", "torch", "numpy", "nltk")):
                problems.append(f"line {lineno}: shows the source of {dotted!r}, which this test cannot resolve")
            continue
        for name, exercise in answers.items():
            if (printed or not isinstance(value, types.ModuleType)) and _reveals(value, resolve(name)[2]):
                problems.append(f"line {lineno}: shows the source of {dotted}, the answer to {exercise} ({name})")
    assert not problems, f"notebooks/{notebook}:\n" + "\n".join(problems)


# ---------------------------------------------------------------- the rules' own machinery


def test_the_spoiler_finder_sees_getsource_loops_aliases_and_magics():
    source = (
        "import inspect\nfrom course_lib import parentheses as P\nfrom course_lib.rnn import LSTMCell\n"
        "import course_lib.attention\n"
        "print(inspect.getsource(P.is_balanced))\n"
        "for piece in (LSTMCell, P.batch_loss):\n    print(inspect.getsource(piece))\n"
        "f = P.is_balanced\ninspect.getsource(f)\n"
        "n = len(inspect.getsource(P).splitlines())\n"
        "# LSTMCell.gates??\n# %psource course_lib.attention.causal_mask\n"
    )
    shown = _shown(source)
    assert (5, "course_lib.parentheses.is_balanced", True) in shown
    assert (7, "course_lib.rnn.LSTMCell", True) in shown and (7, "course_lib.parentheses.batch_loss", True) in shown
    assert (9, "course_lib.parentheses.is_balanced", True) in shown
    assert (10, "course_lib.parentheses", False) in shown  # counted, not shown
    assert (11, "course_lib.rnn.LSTMCell.gates", True) in shown
    assert (12, "course_lib.attention.causal_mask", True) in shown
    from course_lib import parentheses, rnn

    assert _reveals(rnn.LSTMCell.gates, rnn.LSTMCell) and _reveals(rnn.LSTMCell, rnn.LSTMCell.gates)
    home = inspect.getmodule(parentheses.is_balanced)  # where it is written (course_lib.parentheses re-exports it)
    assert _reveals(home, parentheses.is_balanced) and not _reveals(rnn.GRUCell, rnn.LSTMCell.gates)


def test_the_build_and_experiment_finders_read_the_generated_notebook():
    import nbformat

    from course_lib.instructor.exercises import make_exercise

    cells = [
        nbformat.v4.new_markdown_cell("## Exercise 9.1: build it"),
        nbformat.v4.new_code_cell(
            "def f(x):\n    ### BEGIN SOLUTION\n" + "".join(f"    y{i} = {i}\n" for i in range(12)) + "    # why\n"
            "    ### END SOLUTION\n"
        ),
        nbformat.v4.new_markdown_cell("## Exercise 9.2: an experiment"),
        nbformat.v4.new_code_cell("print(f(1))"),
        nbformat.v4.new_markdown_cell("What do you see?\n\n### BEGIN SOLUTION\nIt falls.\n### END SOLUTION"),
        nbformat.v4.new_markdown_cell("## Exercise 9.3: a written answer with nothing run"),
        nbformat.v4.new_markdown_cell("### BEGIN SOLUTION\nSo.\n### END SOLUTION"),
    ]
    nb = make_exercise(nbformat.v4.new_notebook(cells=cells), "test")
    assert solution_lines(nb) == {"9.1": 12} and experiments(nb) == ["9.2"]
