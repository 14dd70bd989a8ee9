"""course_lib.instructor.build: building notebooks, generating exercises, never overwriting work.

Every test builds a tiny synthetic course in tmp_path, so it does not depend on the real lessons.
"""

import json
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from course_lib.instructor import build as notebooks
from course_lib.instructor.build import build, exercise_ids, main, make_exercise

LESSON = """\
# %% [markdown]
# # Lesson 1: counting
#
# We count things.

# %%
counts = {"a": 2, "b": 1}
print(counts)

# %% tags=["raises-exception"]
raise RuntimeError("shown on purpose")
"""

SOLUTION = '''\
# %% [markdown]
# ## Exercise 1.1: Add two numbers
#
# Write `add(a, b)`.

# %%
def add(a, b):
    """Return a + b."""
    ### BEGIN SOLUTION
    # the obvious way
    total = a + b

    return total
    ### END SOLUTION


# %%
check_add(add)
### BEGIN HIDDEN TESTS
assert add(40, 2) == 42  # secret
### END HIDDEN TESTS

# %%
def scale(xs, k):
    # Exercise 1.2: Scale a list
    ### BEGIN SOLUTION
    return [k * x for x in xs]
    ### END SOLUTION

# %% [markdown]
# ### Exercise 1.3: Explain
#
# Why is addition commutative?
#
# ### BEGIN SOLUTION
# Because the counts of the two piles do not depend on the order.
# ### END SOLUTION

# %% [markdown]
# ## What to try
'''

STUDENT_EDIT = "def add(a, b):\n    return a + b  # my answer"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def course(tmp_path):
    """A course with one lesson and one solution, not built yet."""
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path / "notebooks" / "01_counting.py", LESSON)
    write(tmp_path / "solutions" / "01_counting.py", SOLUTION)
    return tmp_path


@pytest.fixture
def built(course):
    results = build(course)
    assert [r.status for r in results] == ["built"] * 3, results
    return course


BUILT = ["notebooks/01_counting.ipynb", "solutions/01_counting.ipynb", "exercises/01_counting.ipynb"]


def read(root: Path, rel: str):
    return nbformat.read(root / rel, as_version=4)


def snapshot(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in BUILT}


def solution_nb(text: str, name="solutions/99_test.py", tmp_path=None):
    """The notebook a solution source gives, read from a temporary file."""
    path = Path(tmp_path) / "99_test.py"
    write(path, text)
    return notebooks.read_source(path, name)


def cell_with(nb, fragment: str):
    (cell,) = [c for c in nb.cells if fragment in c.source]
    return cell


# --------------------------------------------------------------------------- building


def test_build_gives_valid_notebooks_without_outputs(built):
    for rel in BUILT:
        nb = read(built, rel)
        nbformat.validate(nb)
        assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
        assert nb.metadata.kernelspec.name == "python3"
        assert nb.metadata.course_lib.generated_from == rel.replace("exercises", "solutions").replace(".ipynb", ".py")
        for cell in nb.cells:
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cell.id)
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None
    lesson = read(built, "notebooks/01_counting.ipynb")
    assert [c.cell_type for c in lesson.cells] == ["markdown", "code", "code"]
    assert lesson.cells[0].source.startswith("# Lesson 1: counting")
    assert lesson.cells[2].metadata == {"tags": ["raises-exception"]}  # jupytext layout keys dropped


def test_rebuild_is_byte_identical_and_check_passes(built):
    before = snapshot(built)
    assert [r.status for r in build(built)] == ["unchanged"] * 3
    assert snapshot(built) == before
    assert all(r.ok and r.status == "unchanged" for r in build(built, check=True))


def test_cell_ids_are_stable_when_a_cell_is_inserted(built):
    ids = [c.id for c in read(built, "notebooks/01_counting.ipynb").cells]
    write(built / "notebooks" / "01_counting.py", "# %%\nimport math\n\n" + LESSON)
    build(built)
    assert [c.id for c in read(built, "notebooks/01_counting.ipynb").cells][1:] == ids


def test_identical_cells_get_distinct_ids(tmp_path):
    nb = solution_nb("# %%\nx = 1\n\n# %%\nx = 1\n", tmp_path=tmp_path)
    assert len({c.id for c in nb.cells}) == 2


def test_solution_and_exercise_cells_correspond(built):
    solution, exercise = read(built, BUILT[1]), read(built, BUILT[2])
    assert [c.id for c in solution.cells] == [c.id for c in exercise.cells]
    assert [c.metadata for c in solution.cells] == [c.metadata for c in exercise.cells]


def test_unmanaged_files_are_left_alone(built):
    write(built / "notebooks" / "scratch.ipynb", "{}")
    write(built / "notebooks" / "helpers.py", "x = 1\n")
    assert [r.path for r in build(built, check=True)] == BUILT


# --------------------------------------------------------------------------- check mode


def edit_source(root):
    write(root / "notebooks" / "01_counting.py", LESSON.replace("We count things.", "We count words."))
    return "notebooks/01_counting.ipynb", "out of date"


def edit_built(root):
    nb = read(root, "solutions/01_counting.ipynb")
    nb.cells[0].source += "\n\nA hand edit."
    nbformat.write(nb, root / "solutions" / "01_counting.ipynb")
    return "solutions/01_counting.ipynb", "edited by hand"


def delete_built(root):
    (root / "exercises" / "01_counting.ipynb").unlink()
    return "exercises/01_counting.ipynb", "missing"


def add_orphan(root):
    write(root / "exercises" / "02_gone.ipynb", (root / "exercises" / "01_counting.ipynb").read_text())
    return "exercises/02_gone.ipynb", "orphan: no source solutions/02_gone.py"


def add_outputs(root):
    nb = read(root, "notebooks/01_counting.ipynb")
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="{'a': 2}\n")]
    nbformat.write(nb, root / "notebooks" / "01_counting.ipynb")
    return "notebooks/01_counting.ipynb", "saved with outputs"


@pytest.mark.parametrize("change", [edit_source, edit_built, delete_built, add_orphan, add_outputs])
def test_check_fails_naming_the_file(built, change, capsys):
    rel, reason = change(built)
    on_disk = {p: p.read_bytes() for p in built.glob("*/*.ipynb")}
    drift = [r for r in build(built, check=True) if not r.ok]
    assert [(r.path, r.status) for r in drift] == [(rel, "drift")]
    assert reason in drift[0].detail
    assert main(["build", "--check", "--root", str(built)]) == 1
    assert f"drift     {rel}" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in built.glob("*/*.ipynb")} == on_disk  # check mode writes nothing


def test_check_ignores_line_endings(built):
    path = built / "notebooks" / "01_counting.ipynb"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert all(r.ok for r in build(built, check=True))


def test_orphans_fail_the_build_but_are_not_deleted(built):
    add_orphan(built)
    results = build(built)
    assert [(r.path, r.status) for r in results if not r.ok] == [("exercises/02_gone.ipynb", "orphan")]
    assert (built / "exercises" / "02_gone.ipynb").exists()


# --------------------------------------------------------------------------- exercises


def test_solution_block_becomes_a_stub_with_id_title_and_size(built):
    exercise = read(built, "exercises/01_counting.ipynb")
    add = cell_with(exercise, "def add")
    assert add.source == (
        "def add(a, b):\n"
        '    """Return a + b."""\n'
        '    raise NotImplementedError("Exercise 1.1: Add two numbers (about 2 lines)")'
    )
    scale = cell_with(exercise, "def scale")
    assert '    raise NotImplementedError("Exercise 1.2: Scale a list (about 1 line)")' in scale.source
    text = json.dumps(exercise)
    for leaked in ("total = a + b", "the obvious way", "k * x", "BEGIN SOLUTION", "END SOLUTION"):
        assert leaked not in text


def test_hidden_tests_are_dropped_from_exercises_only(built):
    exercise, solution = read(built, BUILT[2]), read(built, BUILT[1])
    assert cell_with(exercise, "check_add").source == "check_add(add)"
    assert "secret" not in json.dumps(exercise) and "HIDDEN" not in json.dumps(exercise)
    assert "### BEGIN HIDDEN TESTS\nassert add(40, 2) == 42" in cell_with(solution, "check_add").source


def test_markdown_solution_becomes_your_answer_here(built):
    exercise = read(built, BUILT[2])
    cell = cell_with(exercise, "Exercise 1.3")
    assert cell.source.endswith("Why is addition commutative?\n\nYOUR ANSWER HERE")
    assert "Because" not in json.dumps(exercise)


def test_solutions_keep_markers(built):
    solution = read(built, BUILT[1])
    assert "    ### BEGIN SOLUTION\n    # the obvious way" in cell_with(solution, "def add").source


def test_nbgrader_metadata(built):
    for rel in BUILT[1:]:
        grader = {
            c.metadata["nbgrader"]["grade_id"]: (c.cell_type, c.metadata["nbgrader"])
            for c in read(built, rel).cells
            if "nbgrader" in c.metadata
        }
        assert grader == {
            "ex-1-1": ("code", dict(grade=False, grade_id="ex-1-1", locked=False, schema_version=3, solution=True)),
            "check-1-1": (
                "code",
                dict(grade=True, grade_id="check-1-1", locked=True, points=1, schema_version=3, solution=False),
            ),
            "ex-1-2": ("code", dict(grade=False, grade_id="ex-1-2", locked=False, schema_version=3, solution=True)),
            "ex-1-3": (
                "markdown",
                dict(grade=True, grade_id="ex-1-3", locked=False, points=1, schema_version=3, solution=True),
            ),
        }
        assert_nbgrader_v3(read(built, rel))


def assert_nbgrader_v3(nb):
    """The rules of nbgrader's cell metadata schema, version 3 (nbgraderformat/v3)."""
    keys = {"schema_version", "grade", "locked", "solution", "task", "grade_id", "points", "checksum", "cell_type"}
    ids = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        assert set(meta) <= keys and {"schema_version", "grade", "locked", "solution"} <= set(meta)
        assert meta["schema_version"] == 3
        if meta["grade"] or meta["solution"] or meta["locked"]:
            assert re.fullmatch(r"[a-zA-Z0-9_\-]+", meta["grade_id"])
            ids.append(meta["grade_id"])
        if meta["grade"]:
            assert meta["points"] >= 0
        if cell.cell_type == "markdown":
            assert meta["grade"] == meta["solution"]
    assert len(ids) == len(set(ids))


def test_grade_ids_stay_unique(tmp_path):
    source = textwrap.dedent("""\
        # %%
        # Exercise 2.1: first half
        def f():
            ### BEGIN SOLUTION
            return 1
            ### END SOLUTION

        # %%
        # Exercise 2.1: second half
        def g():
            ### BEGIN SOLUTION
            return 2
            ### END SOLUTION

        # %%
        check_f(f)

        # %%
        check_g(g)
        """)
    exercise = make_exercise(solution_nb(source, tmp_path=tmp_path))
    assert [c.metadata["nbgrader"]["grade_id"] for c in exercise.cells] == [
        "ex-2-1",
        "ex-2-1-2",
        "check-2-1",
        "check-2-1-2",
    ]
    assert_nbgrader_v3(exercise)


@pytest.mark.parametrize(
    "source,expected",
    [
        # an in-cell comment wins over the markdown heading above
        (
            "# %% [markdown]\n# ## Exercise 3.1: outer\n\n# %%\n# Exercise 3.2: inner\n"
            "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n",
            'raise NotImplementedError("Exercise 3.2: inner (about 1 line)")',
        ),
        # the title is optional; comments and blank lines are not counted; indentation is kept
        (
            "# %%\n# Exercise 3.3\nclass A:\n    def f(self):\n        ### BEGIN SOLUTION\n        a = 1\n\n"
            "        # why\n        b = 2\n        return a + b\n        ### END SOLUTION\n",
            '        raise NotImplementedError("Exercise 3.3 (about 3 lines)")',
        ),
        # quotes in a title are escaped
        (
            '# %%\n# Exercise 3.4: the "best" answer\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n',
            r'raise NotImplementedError("Exercise 3.4: the \"best\" answer (about 1 line)")',
        ),
        # a markdown exercise heading stays in force past lower-level headings
        (
            "# %% [markdown]\n# ## Exercise 3.5: deep\n# ### Hint\n\n# %%\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n",
            'raise NotImplementedError("Exercise 3.5: deep (about 1 line)")',
        ),
    ],
)
def test_exercise_id_rules(tmp_path, source, expected):
    exercise = make_exercise(solution_nb(source, tmp_path=tmp_path))
    assert expected in exercise.cells[-1].source.split("\n")


def test_a_stub_string_is_valid_python(tmp_path):
    source = '# %%\n# Exercise 3.4: the "best" \\ answer\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n'
    stub = make_exercise(solution_nb(source, tmp_path=tmp_path)).cells[0].source.splitlines()[-1]
    with pytest.raises(NotImplementedError, match=r'Exercise 3.4: the "best" \\ answer \(about 1 line\)'):
        exec(stub)


BAD_SOURCES = {
    "no end": (
        "# %%\n# Exercise 1.1: x\ndef f():\n    ### BEGIN SOLUTION\n    return 1\n",
        "### BEGIN SOLUTION has no matching ### END SOLUTION",
    ),
    "no begin": ("# %%\nx = 1\n### END SOLUTION\n", "### END SOLUTION without a matching ### BEGIN SOLUTION"),
    "nested": (
        "# %%\n# Exercise 1.1: x\n### BEGIN SOLUTION\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n### END SOLUTION\n",
        "cannot nest",
    ),
    "hidden in solution": (
        "# %%\n# Exercise 1.1: x\n### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION\n",
        "cannot nest",
    ),
    "crossed": (
        "# %%\n# Exercise 1.1: x\n### BEGIN SOLUTION\nx = 1\n### END HIDDEN TESTS\n",
        "### END HIDDEN TESTS without a matching ### BEGIN HIDDEN TESTS",
    ),
    "near miss": ("# %%\n# Exercise 1.1: x\n## BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", "looks like a marker"),
    "no exercise id": (
        "# %%\ndef f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n",
        "no exercise id",
    ),
    "exercise section ended": (
        "# %% [markdown]\n# ## Exercise 1.1: x\n# ## Summary\n\n# %%\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n",
        "no exercise id",
    ),
    "empty block": (
        "# %%\n# Exercise 1.1: x\n### BEGIN SOLUTION\n# only a comment\n### END SOLUTION\n",
        "empty solution block",
    ),
    "hidden tests beside a solution": (
        "# %%\n# Exercise 1.1: x\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"
        "### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS\n",
        "own",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_bad_markers_raise_naming_file_and_cell(tmp_path, case):
    source, problem = BAD_SOURCES[case]
    nb = solution_nb("# %%\nimport math\n\n" + source, name="solutions/07_bad.py", tmp_path=tmp_path)
    bad_index = len(nb.cells) - 1
    with pytest.raises(ValueError, match=re.escape(problem)) as error:
        make_exercise(nb)
    assert f"solutions/07_bad.py, cell index {bad_index}" in str(error.value)


def test_build_reports_a_bad_source_before_writing_anything(course, capsys):
    write(course / "solutions" / "02_bad.py", BAD_SOURCES["no end"][0])
    with pytest.raises(ValueError, match="solutions/02_bad.py, cell index 0"):
        build(course)
    assert not list(course.glob("*/*.ipynb"))
    assert main(["build", "--root", str(course)]) == 1
    assert "error: solutions/02_bad.py, cell index 0" in capsys.readouterr().err


def test_exercise_ids(built, tmp_path):
    solution, exercise = read(built, BUILT[1]), read(built, BUILT[2])
    assert exercise_ids(solution) == exercise_ids(exercise) == ["1.1", "1.2", "1.3"]
    cell_with(exercise, "def add").source = STUDENT_EDIT  # a submission: the stub is gone
    assert exercise_ids(exercise) == ["1.1", "1.2", "1.3"]
    assert exercise_ids(read(built, BUILT[0])) == []


def test_exercises_run_until_a_stub_is_called(tmp_path):
    """Defining a function with a stub is fine; calling it raises NotImplementedError."""
    nbclient = pytest.importorskip("nbclient")
    source = (
        "# %%\n# Exercise 1.1: double\ndef double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
        "    ### END SOLUTION\n\n# %%\nprint('defined')\n\n# %%\ndouble(3)\n"
    )
    exercise = make_exercise(solution_nb(source, tmp_path=tmp_path))
    nbclient.NotebookClient(exercise, timeout=60, allow_errors=True).execute()
    defined, printed, called = exercise.cells
    assert [o.output_type for o in defined.outputs] == []
    assert printed.outputs[0].text == "defined\n"
    (error,) = called.outputs
    assert (error.ename, error.evalue) == ("NotImplementedError", "Exercise 1.1: double (about 1 line)")


# --------------------------------------------------------------------------- never overwrite


def save_as_student(root, rel):
    nb = read(root, rel)
    cell_with(nb, "def add").source = STUDENT_EDIT
    nbformat.write(nb, root / rel)
    return (root / rel).read_bytes()


def test_student_changes_to_exercises_are_never_overwritten(built, capsys):
    rel = "exercises/01_counting.ipynb"
    mine = save_as_student(built, rel)
    write(built / "solutions" / "01_counting.py", SOLUTION.replace("Write `add(a, b)`.", "Write `add`."))
    results = {r.path: r for r in build(built)}
    assert results[rel].status == "refused"
    assert results[rel].detail == (
        f"{rel} was changed since it was generated (by a student?); not overwriting. Move it away or use --force"
    )
    assert results["solutions/01_counting.ipynb"].status == "built"
    assert (built / rel).read_bytes() == mine
    assert main(["build", "--root", str(built)]) == 1
    assert f"refused   {rel}" in capsys.readouterr().out
    assert (built / rel).read_bytes() == mine
    assert build(built, force=True)[2].status == "built"
    assert "my answer" not in (built / rel).read_text()
    assert all(r.status == "unchanged" for r in build(built))


def test_outputs_saved_in_an_exercise_count_as_a_change(built):
    rel = "exercises/01_counting.ipynb"
    nb = read(built, rel)
    nb.cells[1].execution_count = 1
    nbformat.write(nb, built / rel)
    mine = (built / rel).read_bytes()
    write(built / "solutions" / "01_counting.py", SOLUTION + "\n# %%\nprint('new cell')\n")
    assert build(built)[2].status == "refused"
    assert (built / rel).read_bytes() == mine


def test_a_lesson_run_in_jupyter_is_rebuilt_and_says_so(built):
    add_outputs(built)
    (result, *_) = build(built)
    assert (result.status, result.detail) == ("built", "discarded the outputs it was saved with")
    assert all(r.status == "unchanged" for r in build(built, check=True))


def test_hand_edits_to_lessons_and_solutions_are_not_overwritten(built):
    for rel in BUILT[:2]:
        nb = read(built, rel)
        nb.cells.append(nbformat.v4.new_markdown_cell("my notes"))
        nbformat.write(nb, built / rel)
    before = snapshot(built)
    results = build(built)
    assert [r.status for r in results] == ["refused", "refused", "unchanged"]
    assert "Edit notebooks/01_counting.py instead" in results[0].detail
    assert snapshot(built) == before


def test_a_notebook_not_written_by_the_builder_is_not_overwritten(course):
    write(course / "notebooks" / "01_counting.ipynb", nbformat.writes(nbformat.v4.new_notebook()))
    (result, *_) = build(course)
    assert result.status == "refused" and "not generated by course_lib.instructor.build" in result.detail


# --------------------------------------------------------------------------- command line


def test_main_prints_one_line_per_file(course, capsys, monkeypatch):
    monkeypatch.chdir(course / "notebooks")  # the root is found from pyproject.toml upwards
    assert main(["build"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"built     {rel}" for rel in BUILT]
    assert main(["build", "--check"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"unchanged {rel}" for rel in BUILT]


def test_find_root_without_pyproject_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="pyproject.toml"):
        notebooks.find_root(tmp_path / "nowhere")


def test_the_repository_notebooks_match_their_sources():
    """The committed .ipynb files are exactly what their jupytext sources give (CI's sync check)."""
    root = notebooks.find_root(Path(__file__).resolve().parent)
    results = notebooks.build(root, check=True)
    assert results, "no notebooks found in the repository"
    bad = [f"{r.path}: {r.status} {r.detail}" for r in results if not r.ok]
    assert not bad, "run `make notebooks`:\n" + "\n".join(bad)


def test_builder_and_grader_read_exercise_ids_alike():
    """A second answer cell of exercise 1.2 is named ex-1-2-2: still exercise 1.2 for both (issue 13)."""
    from course_lib.instructor import grading, ids

    assert ids.exercise_of("ex-1-2-2") == ids.exercise_of("ex-1-2") == ids.exercise_of("check-1-2") == "1.2"
    assert (
        ids.exercise_of("ex-x") is None and ids.exercise_of(None) is None and ids.answer_exercise("check-1-2") is None
    )
    meta = lambda gid: {"nbgrader": {"grade": False, "grade_id": gid, "locked": False, "solution": True}}  # noqa: E731
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1", metadata=meta(g)) for g in ("ex-1-2", "ex-1-2-2", "ex-1-3")]
    )
    assert exercise_ids(nb) == grading.expected_exercises(nb) == ["1.2", "1.3"]
