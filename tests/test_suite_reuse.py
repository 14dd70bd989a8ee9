"""The local reuse of notebook executions (conftest.py): keyed by every input, never across executors, never in CI."""

import importlib.util
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("course_root_conftest", ROOT / "conftest.py")
suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(suite)


class Item:
    """What the reuse code reads of a pytest item: its node id, a notebook_run marker, user properties."""

    def __init__(self, nodeid, notebook_run=None):
        self.nodeid, self._run, self.user_properties = nodeid, notebook_run, []

    def get_closest_marker(self, name):
        return SimpleNamespace(args=(self._run,)) if name == "notebook_run" and self._run else None


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    shutil.copytree(ROOT / "course_lib", root / "course_lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "constraints.txt", root / "constraints.txt")
    (root / "notebooks" / "06_x.ipynb").write_text('{"cells": []}')
    return root


def test_nbval_and_another_executor_keep_records_of_their_own(repo):
    nbval = Item("notebooks/06_x.ipynb::Cell 0")
    headless = Item("tests/test_headless.py::test_lesson[06_x]", notebook_run="notebooks/06_x.ipynb")
    other = Item("tests/test_ngram.py::test_counts")
    assert suite._notebook_of(nbval) == "notebooks/06_x.ipynb"
    assert suite._notebook_of(headless) == "notebooks/06_x.ipynb (test_headless)"
    assert suite._notebook_of(other) is None
    records = {suite._record(repo, suite._notebook_of(i)) for i in (nbval, headless)}
    assert len(records) == 2 and all(r.parent == repo / ".pytest_cache" / "course-notebooks" for r in records)


def test_a_record_changes_with_the_notebook_the_package_and_the_constraints(repo):
    key = "notebooks/06_x.ipynb (test_headless)"
    first = suite._record(repo, key)
    (repo / "notebooks" / "06_x.ipynb").write_text('{"cells": [], "metadata": {}}')
    second = suite._record(repo, key)
    (repo / "course_lib" / "ngram.py").write_text((repo / "course_lib" / "ngram.py").read_text() + "\n# changed\n")
    third = suite._record(repo, key)
    (repo / "constraints.txt").write_text("torch==2.13.0\n")
    assert len({first, second, third, suite._record(repo, key)}) == 4


def test_passed_executions_are_left_out_locally_and_never_in_ci(repo, monkeypatch):
    items = [
        Item("notebooks/06_x.ipynb::Cell 0"),
        Item("tests/test_headless.py::test_lesson[06_x]", notebook_run="notebooks/06_x.ipynb"),
        Item("tests/test_ngram.py::test_counts"),
    ]
    record = suite._record(repo, "notebooks/06_x.ipynb (test_headless)")
    record.parent.mkdir(parents=True)
    record.touch()  # the headless run passed with these inputs; nbval's cells have no record
    deselected = []
    config = SimpleNamespace(
        rootpath=repo, hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    )
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REUSE", raising=False)
    kept = list(items)
    suite._reuse_passed_notebooks(config, kept)
    assert [i.nodeid for i in deselected] == [items[1].nodeid] and kept == [items[0], items[2]]
    for env in ({"CI": "1"}, {"REUSE": "0"}):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            kept = list(items)
            suite._reuse_passed_notebooks(config, kept)
            assert kept == items, env


# --- every other test: left out locally when it passed on the same tree ---


@pytest.fixture
def tree(tmp_path):
    """A git repository with one test file and one notebook, as the key sees a clone."""
    import subprocess

    root = tmp_path / "tree"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_one():\n    pass\n")
    (root / "06_x.ipynb").write_text('{"cells": []}')
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "tests"], check=True)  # tracked, and untracked files too
    return root


def _config(root, deselected):
    return SimpleNamespace(
        rootpath=root, hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    )


def test_the_tree_key_changes_with_any_file_tracked_or_not_but_not_with_ignored_ones(tree):
    first = suite._tree_key(tree)
    (tree / "build").mkdir()
    (tree / "build" / "site.html").write_text("ignored output")
    assert suite._tree_key(tree) == first
    (tree / "06_x.ipynb").write_text('{"cells": [], "metadata": {}}')  # untracked, not ignored
    second = suite._tree_key(tree)
    (tree / "tests" / "test_a.py").write_text("def test_one():\n    assert True\n")  # tracked
    third = suite._tree_key(tree)
    (tree / "new_module.py").write_text("x = 1\n")  # a new file
    assert len({first, second, third, suite._tree_key(tree)}) == 4
    assert suite._tree_key(tree.parent) is None or suite._tree_key(tree.parent) != first  # not this tree


def test_the_tree_key_is_the_same_whatever_else_the_process_has_on_its_path(tree, monkeypatch, tmp_path):
    """The run records its passes under the key its controller computes at the end, and the next run's workers
    look them up under the key they compute at collection: packages that only some processes have on sys.path
    (setuptools' vendored ones once setuptools is imported, an *.egg-info in the current folder) must not count."""
    first = suite._tree_key(tree)
    extra = tmp_path / "vendored"
    (extra / "zipp-9.9.9.dist-info").mkdir(parents=True)
    (extra / "zipp-9.9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: zipp\nVersion: 9.9.9\n")
    monkeypatch.syspath_prepend(str(extra))
    assert suite._tree_key(tree) == first


def test_passed_tests_are_left_out_on_the_same_tree_only_and_never_in_ci(tree, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REUSE", raising=False)
    monkeypatch.setattr(suite, "_passed_tests", set())
    monkeypatch.setattr(suite, "_not_passed_tests", set())
    items = [Item(n) for n in ("tests/test_a.py::test_one", "tests/test_a.py::test_two", "tests/test_a.py::test_new")]
    config = _config(tree, [])
    for nodeid, outcome in (("tests/test_a.py::test_one", "passed"), ("tests/test_a.py::test_two", "failed")):
        suite._note_test_result(SimpleNamespace(nodeid=nodeid, when="call", failed=outcome == "failed", skipped=False))
    suite._record_passed_items(config)

    deselected = []
    kept = list(items)
    suite._reuse_passed_items(_config(tree, deselected), kept)
    assert [i.nodeid for i in deselected] == ["tests/test_a.py::test_one"] and kept == items[1:]
    for env in ({"CI": "1"}, {"REUSE": "0"}):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            kept = list(items)
            suite._reuse_passed_items(_config(tree, []), kept)
            assert kept == items, env
    (tree / "tests" / "test_a.py").write_text("def test_one():\n    assert 0\n")  # an edit: nothing is reused
    kept = list(items)
    suite._reuse_passed_items(_config(tree, []), kept)
    assert kept == items


def test_a_notebooks_cells_are_left_out_only_all_together(tree, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REUSE", raising=False)
    monkeypatch.setattr(suite, "_passed_tests", {"06_x.ipynb::Cell 0", "06_x.ipynb::Cell 1"})
    monkeypatch.setattr(suite, "_not_passed_tests", {"06_x.ipynb::Cell 2"})
    suite._record_passed_items(_config(tree, []))
    items = [Item(f"06_x.ipynb::Cell {i}") for i in range(3)]
    kept = list(items)
    suite._reuse_passed_items(_config(tree, []), kept)
    assert kept == items  # Cell 2 failed: Cells 0 and 1 run again, for Cell 2 needs them
